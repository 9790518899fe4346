"""Errors raised while building, reading or checking trajectories.

Every error is a :class:`ValueError` (bad input, never a crash). Errors about a
file carry its :class:`~skel_ros.model.errors.Location` (file, line, element
path). The tree::

    TrajectoryError(ValueError)
    ├── TrajectoryFileError     a trajectory or mapping file that cannot be read
    ├── TrajectoryMappingError  trajectory columns that do not map to the model's DOFs
    ├── TrajectoryLimitError    a sample outside a DOF's position limits
    └── MessageError            a command message rejected whole (unknown joint, NaN, ...)
"""

from __future__ import annotations

from skel_ros.model.errors import Location

__all__ = [
    "Location",
    "MessageError",
    "TrajectoryError",
    "TrajectoryFileError",
    "TrajectoryLimitError",
    "TrajectoryMappingError",
]


class TrajectoryError(ValueError):
    """A trajectory that cannot be built, read or played.

    Attributes:
        reason: The message without the location.
        location: Where the problem is in a file, or None when no file is involved.
    """

    def __init__(self, reason: str, location: Location | None = None) -> None:
        self.reason = reason
        self.location = location
        super().__init__(f"{location}: {reason}" if location is not None else reason)


class TrajectoryFileError(TrajectoryError):
    """A trajectory or mapping file that is missing, malformed or inconsistent."""


class TrajectoryMappingError(TrajectoryError):
    """Trajectory columns that do not map onto the model's DOFs (unknown name, wrong count)."""


class TrajectoryLimitError(TrajectoryError):
    """A trajectory sample outside a DOF's position limits.

    Attributes:
        joint: The DOF name.
        time: Seconds from the trajectory start of the first offending sample.
        value: The position there.
    """

    def __init__(self, reason: str, joint: str, time: float, value: float) -> None:
        self.joint = joint
        self.time = time
        self.value = value
        super().__init__(reason)


class MessageError(TrajectoryError):
    """A ``joint_commands`` / ``joint_trajectory`` message that is rejected whole.

    Attributes:
        topic: The topic the message came on.
        reason: Why, naming the joint, the point or the field.
    """

    def __init__(self, topic: str, reason: str) -> None:
        super().__init__(f"{topic}: {reason}")
        self.topic = topic
        self.reason = reason
