"""A lock that knows whether another thread waits for it (the loop lets it go then)."""

from __future__ import annotations

import threading

__all__ = ["ContendedLock"]


class ContendedLock:
    """A re-entrant lock (a context manager) that knows whether a thread waits for it.

    The loop lets go of it between batches and yields the processor to a waiting thread
    only when there is one: a yield (``time.sleep(0)``) can cost a scheduler time
    slice, milliseconds, on a loaded machine.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._waiting: list[None] = []  # one entry per waiting thread (append, pop: atomic)

    @property
    def contended(self) -> bool:
        """Whether another thread waits for the lock."""
        return bool(self._waiting)

    def acquire(self) -> None:
        """Take the lock (waiting as long as needed)."""
        if not self._lock.acquire(blocking=False):
            self._waiting.append(None)
            try:
                self._lock.acquire()
            finally:
                self._waiting.pop()

    def release(self) -> None:
        """Let go of the lock."""
        self._lock.release()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
