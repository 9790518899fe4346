"""The robot core's exceptions.

::

    CoreError
    └── CommandRefused     a command or trajectory the core will not take (nothing changed)
"""

from __future__ import annotations

__all__ = ["CommandRefused", "CoreError"]


class CoreError(Exception):
    """Base of the robot core's exceptions."""


class CommandRefused(CoreError):  # noqa: N818 - the name the action server uses
    """A command or a trajectory is refused whole; nothing was changed.

    Args:
        reason: What is wrong, as one log line (the joint, the limit, the state...).
        key: A stable key for throttling the log line (the reason may hold values);
            the reason itself when empty.
    """

    def __init__(self, reason: str, key: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.key = key or reason
