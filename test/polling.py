"""Waiting for a condition in hardware tests (emulators run in their own threads or
processes, on their own clocks)."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO


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


def wait_for_line(stream: IO[str], text: str, lines: list[str]) -> None:
    """Read ``stream`` until a line holds ``text`` (a process logs it once it runs).

    Every line read is appended to ``lines``; the stream's end first: AssertionError.
    """
    for line in stream:
        lines.append(line)
        if text in line:
            return
    raise AssertionError(f"the process ended before logging {text!r}:\n{''.join(lines)}")
