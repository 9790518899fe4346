"""Waiting for a condition in hardware tests (emulators run in their own threads or
processes, on their own clocks)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


def wait_until(predicate: Callable[[], bool], seconds: float = 10.0) -> bool:
    """Whether ``predicate`` became true within ``seconds`` (polled every 5 ms)."""
    event = threading.Event()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        event.wait(0.005)
    return predicate()
