"""Where a CAN emulator opens its bus: by default a python-can ``virtual`` channel of its own."""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["can_arguments"]

_COUNTER = itertools.count()


def can_arguments(transport: Mapping[str, Any], protocol: str) -> dict[str, Any]:
    """The python-can arguments a ``protocol`` emulator opens its bus with.

    ``transport`` as given; without an ``interface``, python-can's ``virtual`` one. On a
    ``virtual`` interface without a ``channel``, a new channel no other emulator uses (in
    this process, where virtual channels live), and the emulator does not receive its own
    frames.
    """
    arguments = dict(transport)
    arguments.setdefault("interface", "virtual")
    if arguments["interface"] == "virtual":
        arguments.setdefault("channel",
                             f"skel_ros-{protocol}-{os.getpid()}-{next(_COUNTER)}")
        arguments.setdefault("receive_own_messages", False)
    return arguments
