"""The command watchdog: notices when commands stop coming."""

from __future__ import annotations

import math


class Watchdog:
    """Expires ``timeout`` seconds after the last :meth:`feed`.

    Times are the manager's clock (monotonic seconds); nothing here reads a clock.
    A timeout of 0 (or less) disables it.

    Args:
        timeout: seconds without a feed before :meth:`expired` is True.
    """

    def __init__(self, timeout: float) -> None:
        if math.isnan(timeout):
            raise ValueError("watchdog timeout is NaN")
        self.timeout = timeout
        self._last: float | None = None
        self._tripped = False

    @property
    def enabled(self) -> bool:
        """Whether the watchdog can expire at all."""
        return self.timeout > 0

    @property
    def tripped(self) -> bool:
        """Whether :meth:`poll` reported an expiry since the last feed."""
        return self._tripped

    def feed(self, now: float) -> None:
        """A command arrived at ``now``; also clears :attr:`tripped`."""
        self._last = now
        self._tripped = False

    def disarm(self) -> None:
        """Stop watching until the next :meth:`feed` (torque off, nothing to guard)."""
        self._last = None
        self._tripped = False

    def expired(self, now: float) -> bool:
        """Whether ``timeout`` has passed since the last feed (False when disarmed)."""
        return self.enabled and self._last is not None and now - self._last >= self.timeout

    def poll(self, now: float) -> bool:
        """True exactly once per expiry: the cycle on which the safe state must be applied."""
        if self._tripped or not self.expired(now):
            return False
        self._tripped = True
        return True
