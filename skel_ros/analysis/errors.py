"""The analysis layer's exceptions."""

from __future__ import annotations


class AnalysisError(ValueError):
    """A recording or series that cannot be compared (empty, no common joints, ...)."""


class RecordingError(AnalysisError):
    """A recording file that cannot be read; the message names the file."""
