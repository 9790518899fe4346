"""The command messages a robot node takes, as the node's errors report them.

``joint_commands`` (sensor_msgs/JointState) and ``joint_trajectory``
(trajectory_msgs/JointTrajectory) are read and checked by the one parser,
:mod:`skel_ros.trajectory.messages` (no ROS in it: the recording analysis uses it too);
here a rejected message becomes the nodes' :class:`~skel_ros.nodes.errors.
CommandMessageError`, naming the joint, the point or the field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skel_ros.nodes.errors import CommandMessageError
from skel_ros.trajectory import messages
from skel_ros.trajectory.errors import MessageError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

__all__ = ["parse_joint_command", "parse_joint_trajectory"]


def parse_joint_command(msg: JointState, known: Mapping[str, int], *,
                        topic: str = "joint_commands") -> messages.JointCommand:
    """Check a ``joint_commands`` message (:func:`skel_ros.trajectory.parse_joint_command`).

    Raises:
        CommandMessageError: The message is rejected whole; the reason names the problem.
    """
    try:
        return messages.parse_joint_command(msg, known, topic=topic)
    except MessageError as exc:
        raise CommandMessageError(exc.topic, exc.reason) from None


def parse_joint_trajectory(msg: JointTrajectory, known: Mapping[str, int],
                           start_positions: Callable[[Sequence[str]], Sequence[float]],
                           *, topic: str = "joint_trajectory") -> messages.TrajectoryCommand:
    """Check a ``joint_trajectory`` message and build the trajectory to follow.

    See :func:`skel_ros.trajectory.parse_joint_trajectory`.

    Raises:
        CommandMessageError: The message is rejected whole; the reason names the point,
            the field or the joint.
    """
    try:
        return messages.parse_joint_trajectory(msg, known, start_positions, topic=topic)
    except MessageError as exc:
        raise CommandMessageError(exc.topic, exc.reason) from None
