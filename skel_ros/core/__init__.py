"""The robot core: what a robot is commanded to do, the same for every backend.

No ROS, no engine, no bus here: :class:`RobotCore` (command arbitration, the limits
gate, trajectory following, the command timeout, power refusals) drives a
:class:`RobotBackend` (the DART world in :mod:`skel_ros.sim.backend`, the hardware
buses in :mod:`skel_ros.hardware.backend`, or anything else that implements it). The
nodes are thin shells over a core. docs/architecture.md shows where it sits.
"""

from skel_ros.core.backend import ALL_KINDS, Capabilities, RobotBackend, RobotState, gate
from skel_ros.core.errors import CommandRefused, CoreError
from skel_ros.core.follower import FollowOutcome, Trajectory, TrajectoryObserver
from skel_ros.core.robot import ActiveTrajectory, CommandResult, CoreLog, LoggingLog, RobotCore
from skel_ros.core.timeout import CommandTimeout

__all__ = [
    "ALL_KINDS",
    "ActiveTrajectory",
    "Capabilities",
    "CommandRefused",
    "CommandResult",
    "CommandTimeout",
    "CoreError",
    "CoreLog",
    "FollowOutcome",
    "LoggingLog",
    "RobotBackend",
    "RobotCore",
    "RobotState",
    "Trajectory",
    "TrajectoryObserver",
    "gate",
]
