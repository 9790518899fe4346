"""Warnings throttled per problem (rclpy throttles per call site), and the core's log on a node."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["NodeLog", "Throttle"]

_MAX_KEYS = 1000  # distinct warnings remembered by a Throttle


class Throttle:
    """Warnings that repeat at most once per ``period`` seconds each, counting the rest.

    rclpy's ``throttle_duration_sec`` throttles per call site, so one helper logging
    different problems would hide all but the first; this one keys on the text.

    Args:
        log: Called with the line to log (e.g. ``node.get_logger().warning``).
        period: Seconds between two lines with the same key.
        clock: Monotonic seconds (injected for tests).
    """

    def __init__(self, log: Callable[[str], Any], period: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log = log
        self._period = float(period)
        self._clock = clock
        self._last: dict[str, tuple[float, int]] = {}

    def __call__(self, message: str, key: str | None = None) -> bool:
        """Log ``message`` unless one with the same key was logged less than a period ago.

        Returns:
            True if it was logged.
        """
        key = message if key is None else key
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last[0] < self._period:
            self._last[key] = (last[0], last[1] + 1)
            return False
        if len(self._last) > _MAX_KEYS:  # every message different: forget the old ones
            self._last.clear()
        suppressed = last[1] if last is not None else 0
        self._last[key] = (now, 0)
        self._log(message + (f" ({suppressed} more like this suppressed)" if suppressed else ""))
        return True


class NodeLog:
    """A robot core's log lines (:class:`~skel_ros.core.CoreLog`) on a node's logger.

    Warnings and errors are throttled per key (:class:`Throttle`); info lines are not.

    Args:
        logger: The node's logger (``node.get_logger()``).
    """

    def __init__(self, logger: Any) -> None:  # noqa: ANN401 - rclpy's RcutilsLogger
        self._info = logger.info
        self._warn = Throttle(logger.warning)
        self._error = Throttle(logger.error)

    def info(self, message: str) -> None:
        """Log at INFO."""
        self._info(message)

    def warning(self, message: str, key: str) -> None:
        """Log at WARN, at most once a second per ``key``."""
        self._warn(message, key=key)

    def error(self, message: str, key: str) -> None:
        """Log at ERROR, at most once a second per ``key``."""
        self._error(message, key=key)
