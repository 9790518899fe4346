"""The errors of :mod:`skel_ros.sweep`."""

from __future__ import annotations

__all__ = ["SpecError", "SweepError"]


class SweepError(RuntimeError):
    """A sweep that cannot go on (an output folder that cannot be written, a backend)."""


class SpecError(ValueError):
    """A sweep spec that cannot be used, ``spec.yaml:12: message``.

    Attributes:
        source: the file (or the name given to the text).
        line: 1-based line, 0 when unknown.
        message: the problem, without the location.
    """

    def __init__(self, message: str, source: str = "", line: int = 0) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if source and line else source
        super().__init__(f"{where}: {message}" if where else message)
