"""The robot core: what a robot is commanded to do, the same for every backend.

No ROS, no engine, no bus here: :class:`RobotCore` (command arbitration, the one limits
gate, trajectory following, the command timeout, power refusals) drives a
:class:`RobotBackend` (the DART or MuJoCo world in :mod:`skel_ros.sim.backend`, the
hardware buses in :mod:`skel_ros.hardware.backend`, or anything else that implements
it), and a :class:`Runner` owns the loop that cycles both (sense -> core -> actuate, at
the pace of a :class:`GridPacer` or a :class:`RealTimePacer`) and their lifecycle. The
nodes are thin shells over a runner. docs/architecture.md shows where it sits.
"""

from skel_ros.core.backend import ALL_KINDS, Capabilities, CoreLink, RobotBackend, RobotState
from skel_ros.core.commanders import Commanders, Conflict, Source
from skel_ros.core.errors import CommandRefused, CoreError
from skel_ros.core.follower import FollowOutcome, Trajectory, TrajectoryObserver
from skel_ros.core.lock import ContendedLock
from skel_ros.core.robot import ActiveTrajectory, CommandResult, CoreLog, LoggingLog, RobotCore
from skel_ros.core.runner import (
    GridPacer,
    LoopListener,
    Pacer,
    RealTimePacer,
    Runner,
)
from skel_ros.core.timeout import CommandTimeout

__all__ = [
    "ALL_KINDS",
    "ActiveTrajectory",
    "Capabilities",
    "CommandRefused",
    "CommandResult",
    "CommandTimeout",
    "Commanders",
    "Conflict",
    "ContendedLock",
    "CoreError",
    "CoreLink",
    "CoreLog",
    "FollowOutcome",
    "GridPacer",
    "LoggingLog",
    "LoopListener",
    "Pacer",
    "RealTimePacer",
    "RobotBackend",
    "RobotCore",
    "RobotState",
    "Runner",
    "Source",
    "Trajectory",
    "TrajectoryObserver",
]
