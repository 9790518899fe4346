"""Waiting for a condition in hardware tests (emulators run in their own threads or
processes, on their own clocks)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

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


def spin_until(executor: Any, done: Callable[[], bool], what: str, timeout: float, *,
               step: float = 0.02, check: Callable[[], None] | None = None) -> None:
    """Spin ``executor`` until ``done()``; AssertionError naming ``what`` after ``timeout`` s.

    ``check``: called before each spin (raises to stop early: a node that exited).
    """
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if check is not None:
            check()
        executor.spin_once(timeout_sec=step)
