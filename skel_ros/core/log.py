"""Where the robot core's log lines go: a protocol, and one over :mod:`logging`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import logging

__all__ = ["CoreLog", "LoggingLog"]


class CoreLog(Protocol):
    """Where the core's log lines go (a node's logger, throttled per key)."""

    def info(self, message: str) -> None:
        """Something worth saying once (a trajectory starts, a command took over)."""
        ...

    def warning(self, message: str, key: str) -> None:
        """Something wrong; ``key`` is stable across repeats (for throttling)."""
        ...

    def error(self, message: str, key: str) -> None:
        """Something that stopped motion; ``key`` as for :meth:`warning`."""
        ...


class LoggingLog:
    """A :class:`CoreLog` over a :mod:`logging` logger (keys ignored)."""

    def __init__(self, logger: logging.Logger) -> None:
        self.logger = logger

    def info(self, message: str) -> None:
        """Log at INFO."""
        self.logger.info("%s", message)

    def warning(self, message: str, key: str) -> None:  # noqa: ARG002 - protocol
        """Log at WARNING."""
        self.logger.warning("%s", message)

    def error(self, message: str, key: str) -> None:  # noqa: ARG002 - protocol
        """Log at ERROR."""
        self.logger.error("%s", message)
