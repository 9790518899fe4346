"""The command messages a robot node takes, checked and turned into ROS-free commands.

``joint_commands`` (sensor_msgs/JointState) becomes a :class:`JointCommand`,
``joint_trajectory`` (trajectory_msgs/JointTrajectory) a :class:`TrajectoryCommand`;
the caller hands them to its core object. A message is taken whole or rejected whole,
with a :class:`~skel_ros.nodes.errors.CommandMessageError` naming the joint, the point
or the field.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from skel_ros.model.limits import CommandKind
from skel_ros.nodes.errors import CommandMessageError
from skel_ros.nodes.names import stamp_to_seconds
from skel_ros.trajectory.errors import TrajectoryError
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

__all__ = ["JointCommand", "TrajectoryCommand", "parse_joint_command", "parse_joint_trajectory"]

Vector = npt.NDArray[np.float64]


@dataclass(frozen=True)
class JointCommand:
    """A ``joint_commands`` message, checked: one kind of value for named joints.

    Attributes:
        kind: Position, velocity or effort.
        names: Public joint names, unique.
        values: One finite value per name (read-only).
    """

    kind: CommandKind
    names: tuple[str, ...]
    values: Vector


@dataclass(frozen=True)
class TrajectoryCommand:
    """A ``joint_trajectory`` message, checked.

    Attributes:
        trajectory: The points to follow, or None: an empty message, "stop following".
        start: When the trajectory starts, in the clock of the stamps (seconds), or
            None for "on receipt" (a zero header stamp).
    """

    trajectory: PointTrajectory | None
    start: float | None


def _check_names(topic: str, names: Sequence[object], known: Mapping[str, int]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise CommandMessageError(topic, f"name[{i}] is {name!r}, not a joint name")
        if name in seen:
            raise CommandMessageError(topic, f"joint {name!r} appears twice (name[{seen[name]}]"
                                             f" and name[{i}])")
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
            hint = (f"; did you mean {', '.join(map(repr, close))}?" if close else
                    f"; the joints are {_list(list(known))}")
            raise CommandMessageError(topic, f"unknown joint {name!r}{hint}")
        seen[name] = i
    return tuple(seen)


def _list(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _finite(topic: str, what: str, values: Sequence[float], names: Sequence[str]) -> Vector:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size != len(names):
        raise CommandMessageError(topic, f"{len(names)} names but {arr.size} {what} values")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        j = int(bad[0])
        raise CommandMessageError(topic, f"{what} of joint {names[j]!r} is {arr[j]}, not a"
                                         " finite number")
    arr.setflags(write=False)
    return arr


def parse_joint_command(msg: JointState, known: Mapping[str, int], *,
                        topic: str = "joint_commands") -> JointCommand:
    """Check a ``sensor_msgs/JointState`` command.

    Exactly one of ``position``, ``velocity`` and ``effort`` must be filled, with one
    finite value per name; every name must be a known joint, once.

    Args:
        msg: The message.
        known: Public joint name -> index (any mapping of the known names).
        topic: For messages.

    Raises:
        CommandMessageError: The message is rejected whole; the reason names the problem.
    """
    names = _check_names(topic, list(msg.name), known)
    given = [(kind, field) for kind, field in ((CommandKind.POSITION, msg.position),
                                                (CommandKind.VELOCITY, msg.velocity),
                                                (CommandKind.EFFORT, msg.effort)) if len(field)]
    if not names:
        raise CommandMessageError(topic, "no joint names")
    if len(given) != 1:
        filled = ", ".join(k.value for k, _ in given) or "none"
        raise CommandMessageError(topic, "fill exactly one of position, velocity, effort"
                                         f" (filled: {filled})")
    kind, values = given[0]
    return JointCommand(kind, names, _finite(topic, kind.value, values, names))


def parse_joint_trajectory(msg: JointTrajectory, known: Mapping[str, int],
                           start_positions: Callable[[Sequence[str]], Sequence[float]],
                           *, topic: str = "joint_trajectory") -> TrajectoryCommand:
    """Check a ``trajectory_msgs/JointTrajectory`` and build the trajectory to follow.

    The first segment starts at ``start_positions(names)`` at ``t = 0`` (unless the
    first point is at 0). A zero header stamp means "start on receipt"; any other stamp
    is the start time. No points: "stop following" (``trajectory`` None).

    Raises:
        CommandMessageError: The message is rejected whole; the reason names the point,
            the field or the joint.
    """
    stamp = stamp_to_seconds(msg.header.stamp)
    start = None if stamp == 0.0 else stamp
    if not msg.points:
        return TrajectoryCommand(None, start)
    names = _check_names(topic, list(msg.joint_names), known)
    if not names:
        raise CommandMessageError(topic, "no joint names")
    points = []
    for i, p in enumerate(msg.points):
        fields = {"positions": p.positions, "velocities": p.velocities,
                  "accelerations": p.accelerations}
        checked: dict[str, tuple[float, ...] | None] = {}
        for what, values in fields.items():
            checked[what] = (tuple(_finite(topic, f"point {i} {what}", values, names))
                             if len(values) else None)
        if checked["positions"] is None:
            raise CommandMessageError(topic, f"point {i} has no positions")
        if len(p.effort):
            raise CommandMessageError(topic, f"point {i}: effort trajectories are not"
                                             " supported; give positions")
        positions = checked["positions"]
        points.append(TrajectoryPoint(stamp_to_seconds(p.time_from_start), positions,
                                      checked["velocities"], checked["accelerations"]))
    try:
        start_q = [float(x) for x in start_positions(names)]
        trajectory = PointTrajectory(names, points, start_q)
    except TrajectoryError as exc:
        raise CommandMessageError(topic, str(exc)) from None
    return TrajectoryCommand(trajectory, start)
