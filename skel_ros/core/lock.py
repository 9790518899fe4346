"""A lock that knows whether another thread waits for it (the loop lets it go then)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ContendedLock"]


class ContendedLock:
    """A re-entrant lock (a context manager) that knows whether a thread waits for it.

    The loop lets go of it between batches and yields the processor to a waiting thread
    only when there is one: a yield (``time.sleep(0)``) can cost a scheduler time
    slice, milliseconds, on a loaded machine.

    A callback bound with :meth:`bind_on_take` runs whenever a thread takes the lock
    (not when the holder takes it again inside): the runner of an engine uses it to
    bring the world up to the present before another thread's work (a command, a
    service, a parameter) touches it, so that its loop may sleep between publications.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._waiting: list[None] = []  # one entry per waiting thread (append, pop: atomic)
        self._depth = 0  # how many times the holder has taken it (0: free)
        self._on_take: Callable[[], None] | None = None

    @property
    def contended(self) -> bool:
        """Whether another thread waits for the lock."""
        return bool(self._waiting)

    def bind_on_take(self, callback: Callable[[], None] | None) -> None:
        """Run ``callback`` each time a thread takes the lock (None: nothing).

        It runs in the taking thread, holding the lock, before the taker's own work; an
        exception from it lets go of the lock and reaches the taker.
        """
        self._on_take = callback

    def acquire(self, timeout: float = -1) -> bool:
        """Take the lock, waiting at most ``timeout`` seconds (-1: as long as needed).

        Returns:
            Whether it was taken.
        """
        if not self._lock.acquire(blocking=False):
            self._waiting.append(None)
            try:
                if not self._lock.acquire(timeout=timeout):
                    return False
            finally:
                self._waiting.pop()
        self._depth += 1
        if self._depth == 1 and self._on_take is not None:
            try:
                self._on_take()
            except BaseException:
                self.release()
                raise
        return True

    def release(self) -> None:
        """Let go of the lock."""
        self._depth -= 1
        self._lock.release()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
