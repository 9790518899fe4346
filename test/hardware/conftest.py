"""The fixture the hardware backend's test files share: one emulated CiA 402 drive."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from cia402_rig import Rig

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def rig() -> Iterator[Rig]:
    """The backend on one emulated CiA 402 drive, a manual clock and a bus analyser
    (:class:`cia402_rig.Rig`), closed after the test. (The CAN tests' own ``rig`` fixtures,
    under test/hardware/can/, are other rigs of the same name.)"""
    r = Rig()
    try:
        yield r
    finally:
        r.close()
