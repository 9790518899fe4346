"""Errors of the simulation layer.

The tree::

    SimError
    ├── SimBuildError        the model cannot be turned into a DART world
    │   └── SimUnsupportedError   dartpy 6.20 offers no way to build this part
    ├── CommandError         a command that is rejected whole (NaN, unknown joint, ...)
    └── GainsError           controller gains that cannot be used (file, key)
"""

from __future__ import annotations


class SimError(Exception):
    """Any problem of the simulation layer."""


class SimBuildError(SimError):
    """The model cannot be built as a DART world (the message names the part and its file/line)."""


class SimUnsupportedError(SimBuildError):
    """The model needs something that neither dartpy's API nor a DART factory can build."""


class GainsError(SimError, ValueError):
    """Gains that cannot be used: a malformed file, a negative / non-finite gain, an unknown DOF."""


class CommandError(SimError, ValueError):
    """A joint command that is rejected whole; nothing of it was applied.

    Attributes:
        reason: Why, naming the joint.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
