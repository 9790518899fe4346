"""Trajectory following: what a follower reports, and the observer that may decide its end.

The robot core (:class:`~skel_ros.core.RobotCore`) samples the active trajectory once per
control cycle of its backend (the simulation: every step, in simulated time; the
hardware: every read cycle, on its clock) and writes the sample as position targets. An
optional :class:`TrajectoryObserver` (the FollowJointTrajectory action server's goal)
sees every cycle and may end the trajectory; it is told once how it ended.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import numpy.typing as npt

__all__ = ["FollowOutcome", "Trajectory", "TrajectoryObserver"]


class FollowOutcome(enum.Enum):
    """How a trajectory ended."""

    SUCCEEDED = "succeeded"
    """The observer said so; without an observer, its last point was reached."""
    ABORTED = "aborted"
    """The observer said so (a tolerance violated), or a sample could not be used; the
    joints hold where they are."""
    PREEMPTED = "preempted"
    """A newer trajectory (from any source) replaced it."""
    CANCELED = "canceled"
    """:meth:`RobotCore.cancel_trajectory` (an empty ``joint_trajectory``): the joints hold."""
    TAKEN_OVER = "taken_over"
    """A ``joint_commands`` command for one of its joints."""
    STOPPED = "stopped"
    """E-stop, disable, reset, a fault, the command timeout, the backend lost."""


class Trajectory(Protocol):
    """What the core samples: :class:`skel_ros.trajectory.points.PointTrajectory` is one."""

    @property
    def joint_names(self) -> Sequence[str]:
        """The DOFs it moves (backend names), in the order of the sampled arrays."""
        ...

    @property
    def duration(self) -> float:
        """Seconds from its start to its last point."""
        ...

    def sample(self, t: float) -> Sequence[Any]:
        """``(positions, velocities, accelerations)`` ``t`` seconds after its start."""
        ...


class TrajectoryObserver(Protocol):
    """Watches a trajectory being followed and may decide when it ends.

    Both methods are called in the core's thread (the backend's control loop, or the
    thread that ended the trajectory), under the core's lock: they must be quick, must
    not block and must not call back into the core.
    """

    def on_cycle(self, now: float, elapsed: float, names: Sequence[str],
                 desired: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
                 actual: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None],
                 ) -> tuple[FollowOutcome, str] | None:
        """One control cycle while the trajectory is active.

        Args:
            now: The core's time.
            elapsed: Seconds since the trajectory's start (negative before it starts).
            names: The trajectory's joints.
            desired: Positions and velocities sampled at ``elapsed``.
            actual: Measured positions and velocities (velocities None: unknown);
                NaN where a DOF has no fresh measurement.

        Returns:
            None to go on, or ``(SUCCEEDED, message)`` / ``(ABORTED, message)`` to end
            it. After the last point the core holds it and keeps asking until the
            observer decides; ``ABORTED`` makes the joints hold where they are.
        """
        ...

    def on_end(self, now: float, outcome: FollowOutcome, message: str) -> None:
        """Called exactly once when the trajectory ends, for whatever reason."""
        ...
