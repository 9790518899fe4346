"""The command timeout rule, written once for every backend.

A robot that stops hearing from whoever drives it must not go on with the last command
for ever. :class:`CommandTimeout` says when: ``timeout`` seconds (of the core's time
base: simulated time, or the hardware clock) after the last command, a trajectory being
followed counting as a command every cycle. What happens then is the backend's safe
state (:meth:`skel_ros.core.RobotBackend.on_timeout`): the simulation drops its
commands, the hardware holds or switches torque off.
"""

from __future__ import annotations

import math

__all__ = ["CommandTimeout"]


class CommandTimeout:
    """Expires ``timeout`` seconds after the last :meth:`feed`.

    Nothing here reads a clock: the caller says what time it is. A timeout of 0 (or
    less) never expires.

    Args:
        timeout: Seconds without a feed before :meth:`expired` is True.

    Raises:
        ValueError: ``timeout`` is NaN.
    """

    def __init__(self, timeout: float) -> None:
        if math.isnan(timeout):
            raise ValueError("command timeout is NaN")
        self.timeout = float(timeout)
        self._last: float | None = None
        self._tripped = False

    @property
    def enabled(self) -> bool:
        """Whether it can expire at all."""
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
        """Stop watching until the next :meth:`feed` (torque off: nothing to guard)."""
        self._last = None
        self._tripped = False

    @property
    def expiry(self) -> float | None:
        """When it expires: the last feed + ``timeout``.

        None when it cannot: not enabled, disarmed, or already reported by :meth:`poll`
        since the last feed.
        """
        if not self.enabled or self._last is None or self._tripped:
            return None
        return self._last + self.timeout

    def expired(self, now: float) -> bool:
        """Whether ``timeout`` has passed since the last feed (False when disarmed)."""
        return self.enabled and self._last is not None and now - self._last >= self.timeout

    def poll(self, now: float) -> bool:
        """True exactly once per expiry: the cycle on which the safe state is applied."""
        if self._tripped or not self.expired(now):
            return False
        self._tripped = True
        return True
