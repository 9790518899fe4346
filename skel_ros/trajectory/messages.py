"""Command messages read without ROS: the one JointTrajectory / JointState parser.

A ``trajectory_msgs/JointTrajectory`` and a ``sensor_msgs/JointState`` are read here from
their fields alone (duck-typed: an rclpy message, a message decoded from an MCAP file, or
any object with the same field names), so the nodes, the FollowJointTrajectory server and
the recording analysis read them the same way without this module importing ROS:

* :func:`read_joint_trajectory`: the fields as plain data (:class:`TrajectoryFields`),
  nothing checked; the FollowJointTrajectory server checks them by its own (JTC's) rules;
* :func:`build_trajectory`: the :class:`~skel_ros.trajectory.points.PointTrajectory` to
  follow from those points;
* :func:`parse_joint_trajectory` and :func:`parse_joint_command`: the ``joint_trajectory``
  and ``joint_commands`` topics' rules: a message is taken whole or rejected whole, with a
  :class:`~skel_ros.trajectory.errors.MessageError` naming the joint, the point or
  the field.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from skel_ros.model.limits import CommandKind
from skel_ros.trajectory.errors import MessageError, TrajectoryError
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "JointCommand",
    "PointFields",
    "TrajectoryCommand",
    "TrajectoryFields",
    "build_trajectory",
    "parse_joint_command",
    "parse_joint_trajectory",
    "read_joint_trajectory",
    "stamp_to_seconds",
]

Vector = npt.NDArray[np.float64]


def stamp_to_seconds(stamp: Any) -> float:  # noqa: ANN401 - any message with sec/nanosec
    """Seconds of a ``builtin_interfaces/Time`` or ``Duration`` (its ``sec``, ``nanosec``)."""
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


class PointFields(NamedTuple):
    """One ``trajectory_msgs/JointTrajectoryPoint`` as given (an empty field: absent)."""

    time_from_start: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] = ()
    accelerations: tuple[float, ...] = ()
    effort: tuple[float, ...] = ()


class TrajectoryFields(NamedTuple):
    """A ``trajectory_msgs/JointTrajectory`` as given.

    Attributes:
        joint_names: ``joint_names``.
        points: ``points``, times in seconds.
        stamp: ``header.stamp`` in seconds; 0: "start on receipt".
    """

    joint_names: tuple[str, ...]
    points: tuple[PointFields, ...]
    stamp: float


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


def read_joint_trajectory(msg: Any) -> TrajectoryFields:  # noqa: ANN401 - any JointTrajectory
    """The fields of a ``JointTrajectory`` as plain data; nothing is checked."""
    points = tuple(PointFields(stamp_to_seconds(p.time_from_start),
                               *(tuple(float(x) for x in values) for values in (
                                   p.positions, p.velocities, p.accelerations, p.effort)))
                   for p in msg.points)
    return TrajectoryFields(tuple(msg.joint_names), points, stamp_to_seconds(msg.header.stamp))


def build_trajectory(names: Sequence[str], points: Sequence[PointFields],
                     start_positions: Sequence[float]) -> PointTrajectory:
    """The trajectory through ``points`` (velocities and accelerations where given).

    The first segment starts at ``start_positions`` at ``t = 0`` (unless the first point
    is at 0).

    Raises:
        TrajectoryError: Times not increasing, or a point's size not the joints'.
    """
    return PointTrajectory(
        names, [TrajectoryPoint(p.time_from_start, p.positions, p.velocities or None,
                                p.accelerations or None) for p in points],
        [float(q) for q in start_positions])


def _check_names(topic: str, names: Sequence[object], known: Mapping[str, int]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise MessageError(topic, f"name[{i}] is {name!r}, not a joint name")
        if name in seen:
            raise MessageError(topic, f"joint {name!r} appears twice (name[{seen[name]}]"
                                             f" and name[{i}])")
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=3, cutoff=0.6)
            hint = (f"; did you mean {', '.join(map(repr, close))}?" if close else
                    f"; the joints are {_list(list(known))}")
            raise MessageError(topic, f"unknown joint {name!r}{hint}")
        seen[name] = i
    return tuple(seen)


def _list(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _finite(topic: str, what: str, values: Sequence[float], names: Sequence[str]) -> Vector:
    arr = np.asarray(values, dtype=float).reshape(-1)
    if arr.size != len(names):
        raise MessageError(topic, f"{len(names)} names but {arr.size} {what} values")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        j = int(bad[0])
        raise MessageError(topic, f"{what} of joint {names[j]!r} is {arr[j]}, not a"
                                         " finite number")
    arr.setflags(write=False)
    return arr


def parse_joint_command(msg: Any, known: Mapping[str, int], *,  # noqa: ANN401 - a JointState
                        topic: str = "joint_commands") -> JointCommand:
    """Check a ``sensor_msgs/JointState`` command.

    Exactly one of ``position``, ``velocity`` and ``effort`` must be filled, with one
    finite value per name; every name must be a known joint, once.

    Args:
        msg: The message (its ``name``, ``position``, ``velocity``, ``effort``).
        known: Public joint name -> index (any mapping of the known names).
        topic: For messages.

    Raises:
        MessageError: The message is rejected whole; the reason names the problem.
    """
    names = _check_names(topic, list(msg.name), known)
    given = [(kind, field) for kind, field in ((CommandKind.POSITION, msg.position),
                                                (CommandKind.VELOCITY, msg.velocity),
                                                (CommandKind.EFFORT, msg.effort)) if len(field)]
    if not names:
        raise MessageError(topic, "no joint names")
    if len(given) != 1:
        filled = ", ".join(k.value for k, _ in given) or "none"
        raise MessageError(topic, "fill exactly one of position, velocity, effort"
                                         f" (filled: {filled})")
    kind, values = given[0]
    return JointCommand(kind, names, _finite(topic, kind.value, values, names))


def parse_joint_trajectory(msg: Any, known: Mapping[str, int],  # noqa: ANN401 - a JointTrajectory
                           start_positions: Callable[[Sequence[str]], Sequence[float]],
                           *, topic: str = "joint_trajectory") -> TrajectoryCommand:
    """Check a ``trajectory_msgs/JointTrajectory`` and build the trajectory to follow.

    The first segment starts at ``start_positions(names)`` at ``t = 0`` (unless the
    first point is at 0). A zero header stamp means "start on receipt"; any other stamp
    is the start time. No points: "stop following" (``trajectory`` None).

    Raises:
        MessageError: The message is rejected whole; the reason names the point,
            the field or the joint.
    """
    fields = read_joint_trajectory(msg)
    start = None if fields.stamp == 0.0 else fields.stamp
    if not fields.points:
        return TrajectoryCommand(None, start)
    names = _check_names(topic, fields.joint_names, known)
    if not names:
        raise MessageError(topic, "no joint names")
    points = []
    for i, p in enumerate(fields.points):
        if not p.positions:
            raise MessageError(topic, f"point {i} has no positions")
        checked = [tuple(float(x) for x in _finite(topic, f"point {i} {what}", values, names))
                   if values else () for what, values in (("positions", p.positions),
                                                          ("velocities", p.velocities),
                                                          ("accelerations", p.accelerations))]
        if p.effort:
            raise MessageError(topic, f"point {i}: effort trajectories are not supported;"
                                      " give positions")
        points.append(PointFields(p.time_from_start, *checked))
    try:
        trajectory = build_trajectory(names, points, start_positions(names))
    except TrajectoryError as exc:
        raise MessageError(topic, str(exc)) from None
    return TrajectoryCommand(trajectory, start)
