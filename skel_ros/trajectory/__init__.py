"""Joint trajectories without ROS: timed points, file readers, limit checks.

``load_trajectory`` reads a CASPR ``trajectories.xml`` (sampled as CASPR
interpolates it, ``q`` columns mapped to the model's DOFs) or a
trajectory_msgs-style YAML file; ``check_limits`` checks it against the model.

``PointTrajectory`` holds named joints and timed points and samples them as
ros2_control's joint_trajectory_controller interpolates (quintic, cubic or
linear per segment). The simulation and hardware nodes use it to follow a
``trajectory_msgs/JointTrajectory`` in their own clock; ``parse_joint_trajectory``
(:mod:`skel_ros.trajectory.messages`) reads and checks such a message from its
fields alone, for the nodes and for recordings analysed without ROS.

Example::

    from skel_ros.trajectory import PointTrajectory, TrajectoryPoint

    traj = PointTrajectory(["shoulder", "elbow"],
                           [TrajectoryPoint(2.0, (0.5, -0.3))],
                           start_positions=(0.0, 0.0))
    positions, velocities, accelerations = traj.sample(1.0)
"""

from skel_ros.trajectory.caspr import (
    CasprKind,
    CasprPoint,
    CasprSamples,
    CasprTrajectory,
    TimeDefinition,
    caspr_trajectory_ids,
    parse_caspr,
    read_caspr,
    select_caspr,
)
from skel_ros.trajectory.errors import (
    MessageError,
    TrajectoryError,
    TrajectoryFileError,
    TrajectoryLimitError,
    TrajectoryMappingError,
)
from skel_ros.trajectory.limits import DofLimits, check_limits, model_limits
from skel_ros.trajectory.loader import (
    TrajectoryModel,
    load_trajectory,
    load_trajectory_model,
    sniff_format,
)
from skel_ros.trajectory.mapping import (
    DofMapping,
    MappedColumn,
    load_mapping,
    parse_mapping,
    q_mapping_path,
    resolve_columns,
)
from skel_ros.trajectory.messages import (
    JointCommand,
    PointFields,
    TrajectoryCommand,
    TrajectoryFields,
    build_trajectory,
    parse_joint_command,
    parse_joint_trajectory,
    read_joint_trajectory,
    stamp_to_seconds,
)
from skel_ros.trajectory.points import (
    MAX_PLAY_RATE,
    PointTrajectory,
    TrajectoryPoint,
    duration_parts,
)
from skel_ros.trajectory.yaml_file import parse_trajectory_yaml, read_trajectory_yaml

__all__ = [
    "MAX_PLAY_RATE",
    "CasprKind",
    "CasprPoint",
    "CasprSamples",
    "CasprTrajectory",
    "DofLimits",
    "DofMapping",
    "JointCommand",
    "MappedColumn",
    "MessageError",
    "PointFields",
    "PointTrajectory",
    "TimeDefinition",
    "TrajectoryCommand",
    "TrajectoryError",
    "TrajectoryFields",
    "TrajectoryFileError",
    "TrajectoryLimitError",
    "TrajectoryMappingError",
    "TrajectoryModel",
    "TrajectoryPoint",
    "build_trajectory",
    "caspr_trajectory_ids",
    "check_limits",
    "duration_parts",
    "load_mapping",
    "load_trajectory",
    "load_trajectory_model",
    "model_limits",
    "parse_caspr",
    "parse_joint_command",
    "parse_joint_trajectory",
    "parse_mapping",
    "parse_trajectory_yaml",
    "q_mapping_path",
    "read_caspr",
    "read_joint_trajectory",
    "read_trajectory_yaml",
    "resolve_columns",
    "select_caspr",
    "sniff_format",
    "stamp_to_seconds",
]
