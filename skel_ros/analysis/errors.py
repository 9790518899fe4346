"""The analysis layer's exceptions."""

from __future__ import annotations


class AnalysisError(ValueError):
    """A recording or series that cannot be compared (empty, no common joints, ...)."""


class RecordingError(AnalysisError):
    """A recording file that cannot be read; the message names the file."""


class CriteriaError(ValueError):
    """A criteria file that cannot be used; the message names the file and line.

    Not an :class:`AnalysisError`: a mistake in the criteria is a configuration error,
    not a run that cannot be judged.
    """
