"""Joint trajectories without ROS: timed points, file readers, limit checks.

``PointTrajectory`` holds named joints and timed points and samples them as
ros2_control's joint_trajectory_controller interpolates (quintic, cubic or
linear per segment). The simulation and hardware nodes use it to follow a
``trajectory_msgs/JointTrajectory`` in their own clock.

Example::

    from skel_ros.trajectory import PointTrajectory, TrajectoryPoint

    traj = PointTrajectory(["shoulder", "elbow"],
                           [TrajectoryPoint(2.0, (0.5, -0.3))],
                           start_positions=(0.0, 0.0))
    positions, velocities, accelerations = traj.sample(1.0)
"""

from skel_ros.trajectory.errors import (
    TrajectoryError,
    TrajectoryFileError,
    TrajectoryLimitError,
    TrajectoryMappingError,
)
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

__all__ = [
    "PointTrajectory",
    "TrajectoryError",
    "TrajectoryFileError",
    "TrajectoryLimitError",
    "TrajectoryMappingError",
    "TrajectoryPoint",
]
