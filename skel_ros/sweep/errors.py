"""The errors of :mod:`skel_ros.sweep`."""

from __future__ import annotations

from skel_ros.model.errors import FileLineError

__all__ = ["SpecError", "SweepError"]


class SweepError(RuntimeError):
    """A sweep that cannot go on (an output folder that cannot be written, a backend)."""


class SpecError(FileLineError):
    """A sweep spec that cannot be used, ``spec.yaml:12: message``."""
