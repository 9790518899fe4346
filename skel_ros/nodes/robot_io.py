"""What a robot node publishes and takes, shared by the simulation and the hardware node.

No dartpy and no simulator here: :class:`RobotPublisher` is given a node, the model
(:class:`~skel_ros.model.types.World`) and a frame prefix, and publishes for joint
positions handed to it; the command parsers turn ROS messages into ROS-free command
objects (:class:`JointCommand`, :class:`TrajectoryCommand`) the caller hands to its
core object (``SimEngine``, ``HardwareManager``).

Names
-----
*Joint names* are the model's DOF names, made unique across skeletons by the rule of
the URDF export (:func:`~skel_ros.model.urdf.skeleton_namespace`): a world in which at
most one skeleton has bodies uses the SKEL names; otherwise every name is
``"<skeleton>/<dof>"``. The URDF joint that carries a DOF has the DOF's name, so the
names of ``joint_states``, of ``robot_description``'s joints and of
``joint_commands`` are one set.

*Frame names* are ``frame_prefix + <public body name>`` (the URDF link names); the
root of every skeleton hangs under ``frame_prefix + "world"``.

What ``joint_states`` carries
-----------------------------
One entry per DOF, in model order, with the DOF's position, velocity and effort in
the model's coordinates: what ``joint_commands`` takes. For every DOF but those of
*ball* and *free* joints this is also the position of the URDF joint of that name.
Ball and free joints are rotation vectors in the model, but three revolute URDF
joints (XYZ Euler angles) in the URDF; a robot_state_publisher fed ``joint_states``
would draw those wrong. When the model has such joints, ``~/urdf_joint_states``
carries every URDF joint (Euler angles, screw mimic joints) for robot_state_publisher
(remap its ``joint_states`` there). RViz needs neither: ``/tf`` is published here.

``/tf`` and ``/tf_static``
--------------------------
One transform per body, parent body -> child body (root bodies under the world
frame), computed by :class:`skel_ros.model.kinematics.Kinematics` from the given
positions; bodies attached by weld joints go to ``/tf_static`` once. The massless
intermediate links the URDF export adds for multi-DOF joints
(``<joint>__<dof>__link``) are published too, as children of their URDF parent, so
RViz's RobotModel finds a transform for every link of ``robot_description``.

QoS
---
:data:`LATCHED_QOS` (transient local, reliable, depth 1) for ``/tf_static``,
``robot_description`` and ``~/markers``, so late subscribers get them (they must be
reliable and transient local too); volatile streams otherwise (:data:`TF_QOS`,
:data:`STATE_QOS`, :data:`COMMAND_QOS`, :data:`CLOCK_QOS`).
"""

from __future__ import annotations

import array
import copy
import difflib
import math
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, TransformStamped
from lxml import etree
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA, String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import Marker, MarkerArray

from skel_ros.model.kinematics import Kinematics
from skel_ros.model.limits import CommandKind
from skel_ros.model.transforms import exp_rot
from skel_ros.model.types import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    JointType,
    Mesh,
    MultiSphere,
    Plane,
    Pyramid,
    Shape,
    ShapeRole,
    Sphere,
)
from skel_ros.model.urdf import (
    DEFAULT_VISUAL_RGBA,
    PLANE_SIZE,
    PLANE_THICKNESS,
    UrdfCoordinates,
    UrdfValuePlan,
    euler_xyz_angles,
    skeleton_namespace,
    urdf_joint_map,
    urdf_value_plan,
    world_to_urdf,
)
from skel_ros.nodes.errors import CommandMessageError
from skel_ros.trajectory.errors import TrajectoryError
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from rclpy.node import Node
    from rclpy.publisher import Publisher
    from trajectory_msgs.msg import JointTrajectory

    from skel_ros.model.types import Body, Skeleton, SoftShape, World

__all__ = [
    "CLOCK_QOS",
    "COMMAND_QOS",
    "LATCHED_QOS",
    "STATE_QOS",
    "TF_QOS",
    "ClockPublisher",
    "JointCommand",
    "RobotPublisher",
    "Throttle",
    "TrajectoryCommand",
    "parse_joint_command",
    "parse_joint_trajectory",
    "public_dof_names",
    "public_frame_names",
    "stamp_from_seconds",
    "stamp_to_seconds",
]

Vector = npt.NDArray[np.float64]

LATCHED_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL,
                         reliability=ReliabilityPolicy.RELIABLE)
"""``/tf_static``, ``robot_description``, ``~/markers``: late subscribers get the last one."""

TF_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                    durability=DurabilityPolicy.VOLATILE, reliability=ReliabilityPolicy.RELIABLE)
"""``/tf``: tf2_ros's dynamic broadcaster profile."""

STATE_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                       durability=DurabilityPolicy.VOLATILE,
                       reliability=ReliabilityPolicy.RELIABLE)
"""``joint_states``, ``~/urdf_joint_states``."""

COMMAND_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                         durability=DurabilityPolicy.VOLATILE,
                         reliability=ReliabilityPolicy.RELIABLE)
"""``joint_commands``, ``joint_trajectory`` subscriptions."""

CLOCK_QOS = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST,
                       durability=DurabilityPolicy.VOLATILE,
                       reliability=ReliabilityPolicy.RELIABLE)
"""``/clock`` (rclpy's time source subscribes best effort, which a reliable writer serves)."""

_NANO = 1_000_000_000
_MAX_KEYS = 1000  # distinct warnings remembered by a Throttle
_MARKER_SLICES = 48


# --------------------------------------------------------------------------- names and time


def public_dof_names(world: World) -> tuple[str, ...]:
    """Joint names of ``joint_states`` / ``joint_commands``: every DOF, model order."""
    return tuple(skeleton_namespace(world, s) + d.name for s in world.skeletons for d in s.dofs)


def public_frame_names(world: World, frame_prefix: str = "") -> tuple[str, ...]:
    """TF frame of every body (the URDF link names), model order."""
    return tuple(frame_prefix + skeleton_namespace(world, s) + b.name
                 for s in world.skeletons for b in s.bodies)


def stamp_from_seconds(seconds: float) -> Time:
    """``builtin_interfaces/Time`` of ``seconds`` (>= 0), rounded to the nanosecond."""
    total = round(seconds * _NANO)
    return Time(sec=total // _NANO, nanosec=total % _NANO)


def stamp_to_seconds(stamp: Any) -> float:  # noqa: ANN401 - any message with sec/nanosec
    """Seconds of a ``builtin_interfaces/Time`` or ``Duration``."""
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


class Throttle:
    """Warnings that repeat at most once per ``period`` seconds each, counting the rest.

    rclpy's ``throttle_duration_sec`` throttles per call site, so one helper logging
    different problems would hide all but the first; this one keys on the text.

    Args:
        log: Called with the line to log (e.g. ``node.get_logger().warning``).
        period: Seconds between two lines with the same key.
        clock: Monotonic seconds (injected for tests).
    """

    def __init__(self, log: Callable[[str], Any], period: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._log = log
        self._period = float(period)
        self._clock = clock
        self._last: dict[str, tuple[float, int]] = {}

    def __call__(self, message: str, key: str | None = None) -> bool:
        """Log ``message`` unless one with the same key was logged less than a period ago.

        Returns:
            True if it was logged.
        """
        key = message if key is None else key
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last[0] < self._period:
            self._last[key] = (last[0], last[1] + 1)
            return False
        if len(self._last) > _MAX_KEYS:  # every message different: forget the old ones
            self._last.clear()
        suppressed = last[1] if last is not None else 0
        self._last[key] = (now, 0)
        self._log(message + (f" ({suppressed} more like this suppressed)" if suppressed else ""))
        return True


# --------------------------------------------------------------------------- commands


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


# --------------------------------------------------------------------------- geometry


# Shepperd's cases (k = which of 4x^2, 4y^2, 4z^2, 4w^2 is largest): the quaternion
# x, y, z, w as columns of [sx, sy, sz, dx, dy, dz] * s and the largest one ("big", 6).
_QUATERNION_CASES = np.array([[6, 0, 1, 3], [0, 6, 2, 4], [1, 2, 6, 5], [3, 4, 5, 6]],
                             dtype=np.intp)
_DIAGONAL_SIGNS = np.array([[1.0, -1.0, -1.0, 1.0], [-1.0, 1.0, -1.0, 1.0],
                            [-1.0, -1.0, 1.0, 1.0]])
# The off-diagonal sums sx, sy, sz (m01 + m10, m02 + m20, m12 + m21) and differences
# dx, dy, dz (m21 - m12, m02 - m20, m10 - m01), by flat row-major index of the 3x3 block.
_PAIR_FIRST = np.array([1, 2, 5, 7, 2, 3], dtype=np.intp)
_PAIR_SECOND = np.array([3, 6, 7, 5, 6, 1], dtype=np.intp)
_PAIR_SIGNS = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])
# The differences alone (dx, dy, dz), for the w-first formulas.
_DIFF_FIRST = np.array([7, 2, 3], dtype=np.intp)
_DIFF_SECOND = np.array([5, 6, 1], dtype=np.intp)
_W_FIRST_MIN = 0.5  # 4 w^2 = 1 + trace above this for all: w >= 0.35, the w-first formulas


def _quaternions(rot: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(n, 3, 3) rotation matrices -> (n, 4) unit quaternions x, y, z, w (w >= 0).

    Shepperd's method: the largest of the four components comes from the diagonal,
    the others from the off-diagonal sums and differences divided by it. Batched as
    a few whole-array operations (this runs at the /tf rate); multiplying by +-1 and
    adding a negated term are exact, so every case is computed as written.
    """
    n = rot.shape[0]
    flat = rot.reshape(n, 9)
    # Common case first: every rotation under ~139 degrees, so w is not small and
    # x, y, z = (dx, dy, dz) / 4w, w = sqrt(1 + trace) / 2 are as exact as Shepperd's
    # (which would pick these very formulas for most of them): a third of the work.
    four_w2 = flat[:, ::4].sum(axis=1)
    four_w2 += 1.0
    if n and four_w2.min() > _W_FIRST_MIN:
        two_w = np.sqrt(four_w2)
        out = np.empty((n, 4))
        np.divide(flat[:, _DIFF_FIRST] - flat[:, _DIFF_SECOND], 2.0 * two_w[:, None],
                  out=out[:, :3])
        np.multiply(two_w, 0.5, out=out[:, 3])
        return out
    # t = 1 +- m00 +- m11 +- m22, the four candidates 4x^2, 4y^2, 4z^2, 4w^2.
    t = 1.0 + flat[:, 0:1] * _DIAGONAL_SIGNS[0]
    t += flat[:, 4:5] * _DIAGONAL_SIGNS[1]
    t += flat[:, 8:9] * _DIAGONAL_SIGNS[2]
    k = np.argmax(t, axis=1)
    rows = np.arange(n)
    s = 0.5 / np.sqrt(t[rows, k])
    parts = np.empty((n, 7))
    np.multiply(flat[:, _PAIR_FIRST] + flat[:, _PAIR_SECOND] * _PAIR_SIGNS, s[:, None],
                out=parts[:, :6])
    parts[:, 6] = 0.25 / s
    q: npt.NDArray[np.float64] = parts[rows[:, None], _QUATERNION_CASES[k]]
    q *= np.where(q[:, 3:4] < 0.0, -1.0, 1.0)
    q /= np.sqrt(np.add.reduce(q * q, axis=1, keepdims=True))  # np.linalg.norm's own sum
    return q


def _rpy_matrix(rpy: Sequence[float]) -> npt.NDArray[np.float64]:
    """URDF ``rpy``: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), \
        math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


@dataclass(frozen=True)
class _UrdfJoint:
    """One joint of the exported URDF, as the frame solver needs it."""

    name: str
    kind: str
    parent: str
    child: str
    origin: npt.NDArray[np.float64]
    axis: npt.NDArray[np.float64]


def _urdf_joints(urdf: str) -> list[_UrdfJoint]:
    """The joints of a URDF document (ours: every element is there)."""
    root = etree.fromstring(urdf.encode())
    out = []
    for joint in root.iterfind("joint"):
        origin = np.eye(4)
        o = joint.find("origin")
        if o is not None:
            origin[:3, 3] = [float(v) for v in o.get("xyz", "0 0 0").split()]
            origin[:3, :3] = _rpy_matrix([float(v) for v in o.get("rpy", "0 0 0").split()])
        a = joint.find("axis")
        axis = np.array([float(v) for v in (a.get("xyz", "1 0 0") if a is not None
                                            else "1 0 0").split()])
        parent, child = joint.find("parent"), joint.find("child")
        out.append(_UrdfJoint(joint.get("name", ""), joint.get("type", "fixed"),
                              "" if parent is None else parent.get("link", ""),
                              "" if child is None else child.get("link", ""),
                              origin, axis / (np.linalg.norm(axis) or 1.0)))
    return out



class _UrdfValues:
    """Every URDF joint position for every DOF's position: :func:`urdf_value_plan` as arrays.

    The same numbers as :func:`skel_ros.model.urdf.urdf_joint_values` (the same
    Euler-angle functions for ball and free joints, the same products), from one
    gather and one multiply instead of a loop over the joints.

    Args:
        plans: Every skeleton's value plan with the index of its first DOF in the
            positions vector.
    """

    def __init__(self, plans: Sequence[tuple[UrdfValuePlan, int]]) -> None:
        names: list[str] = []
        sources: list[int] = []
        multipliers: list[float] = []
        starts: list[int] = []
        for plan, first in plans:
            names += plan.names
            sources += [first + d for d in plan.dofs]
            multipliers += plan.multipliers
            starts += [first + s for s in plan.euler_starts]
        self.names = tuple(names)
        """URDF joint names, in the order of :meth:`values`."""
        self._sources = np.array(sources, dtype=np.intp)
        self._multipliers = (None if all(m == 1.0 for m in multipliers)
                             else np.array(multipliers, dtype=float))
        self._starts = tuple(starts)

    def values(self, q: Vector) -> Vector:
        """The URDF joint positions (:attr:`names` order) for DOF positions ``q`` (a vector)."""
        if self._starts:
            q = q.copy()
            for start in self._starts:
                q[start:start + 3] = euler_xyz_angles(exp_rot(q[start:start + 3]))
        out: Vector = q[self._sources]
        if self._multipliers is not None:
            out *= self._multipliers
        return out


class _FrameSolver:
    """Parent -> frame transforms of many frames at once, through the URDF joint chains.

    Every frame's transform is the product of the URDF joints between its TF parent
    and it (``origin @ motion(value)`` each). All joint transforms of a configuration
    come from a few batched numpy operations, and the chains are multiplied level by
    level: the frames are kept sorted by chain length, longest first, so the frames
    that have a joint at a level are a leading slice and only they are multiplied. A
    few dozen numpy calls for a whole robot, where evaluating joint by joint costs
    that per joint.

    Args:
        joints: The URDF's joints.
        frames: (frame, TF parent) of every frame to solve; each parent must be an
            ancestor of its frame in the URDF tree.
        value_names: The order of the values given to :meth:`solve_vector` (URDF joints
            left out of it are at 0).
    """

    def __init__(self, joints: Sequence[_UrdfJoint], frames: Sequence[tuple[str, str]],
                 value_names: Sequence[str] = ()) -> None:
        by_child = {j.child: j for j in joints}
        used: dict[str, int] = {}
        chains: list[list[int]] = []
        for frame, parent in frames:
            chain, link = [], frame
            while link != parent:
                joint = by_child[link]
                chain.append(used.setdefault(joint.name, len(used)))
                link = joint.parent
            chains.append(chain[::-1])
        specs = {j.name: j for j in joints}

        def kind_rank(name: str) -> int:
            kind = specs[name].kind
            return 0 if kind in ("revolute", "continuous") else 1 if kind == "prismatic" else 2

        # Revolute joints first, then prismatic, then the rest (whose transforms do not
        # change): a configuration's joint transforms are then three stacked blocks.
        names = sorted(used, key=kind_rank)
        new_index = {used[name]: k for k, name in enumerate(names)}
        chains = [[new_index[i] for i in chain] for chain in chains]
        order = [specs[name] for name in names]
        n = len(order)
        self.names = names
        self._zeros = [0.0] * n  # the value of a joint ``values`` leaves out
        position = {name: k for k, name in enumerate(value_names)}
        # solve_vector's values, extended by a 0, gathered into this order (index n: 0).
        self._take = np.array([position.get(name, len(value_names)) for name in self.names]
                              + [len(value_names)], dtype=np.intp)
        origins = np.array([j.origin for j in order] + [np.eye(4)]).reshape(n + 1, 4, 4)
        axes = np.array([j.axis for j in order] + [np.zeros(3)]).reshape(n + 1, 3)
        ranks = [kind_rank(name) for name in names]
        n_rev, n_pri = ranks.count(0), ranks.count(1)
        self._revolute = slice(0, n_rev)
        self._prismatic = slice(n_rev, n_rev + n_pri)
        # What does not change with the joint values is computed here, once. Revolute
        # (Rodrigues): origin @ (I + sin(v) K + (1 - cos(v)) K^2) = origin + sin(v) OK
        # + (1 - cos(v)) OK2, with K the axis' cross-product matrix, as 4x4 blocks.
        a = axes[self._revolute]
        k = np.zeros((n_rev, 3, 3))
        k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
        k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
        rot = origins[self._revolute, :3, :3]
        self._revolute_origins = origins[self._revolute]
        self._sin_part = np.zeros((n_rev, 4, 4))
        self._sin_part[:, :3, :3] = rot @ k
        self._cos_part = np.zeros((n_rev, 4, 4))
        self._cos_part[:, :3, :3] = rot @ (k @ k)
        # Prismatic: origin + v * (origin's rotation @ axis) in the translation column.
        self._prismatic_origins = origins[self._prismatic]
        self._shift = np.zeros((n_pri, 4, 4))
        self._shift[:, :3, 3] = np.einsum("nij,nj->ni", origins[self._prismatic, :3, :3],
                                          axes[self._prismatic])
        self._constant = origins[n_rev + n_pri:]  # the other joints, then the identity
        # Frames longest chain first (stable); level L > 0 multiplies the first
        # ``count`` of them, those with more than L joints.
        by_length = sorted(range(len(chains)), key=lambda f: -len(chains[f]))
        self._unsort = np.argsort(np.array(by_length, dtype=np.intp)).astype(np.intp)
        sorted_chains = [chains[f] for f in by_length]
        depth = max((len(c) for c in chains), default=0)
        self._first = np.array([c[0] if c else n for c in sorted_chains], dtype=np.intp)
        self._levels = []
        for level in range(1, depth):
            count = sum(1 for c in sorted_chains if len(c) > level)
            self._levels.append(
                (count, np.array([c[level] for c in sorted_chains[:count]], dtype=np.intp)))

    def solve(self, values: Mapping[str, float]) -> npt.NDArray[np.float64]:
        """(nframes, 4, 4) parent -> frame transforms for URDF joint positions ``values``."""
        v = np.array([*map(values.get, self.names, self._zeros), 0.0])
        return self._solve(v)

    def solve_vector(self, values: Vector) -> npt.NDArray[np.float64]:
        """:meth:`solve` for the values in ``value_names`` order (a vector)."""
        return self._solve(np.append(values, 0.0)[self._take])

    def _solve(self, v: Vector) -> npt.NDArray[np.float64]:
        angle = v[self._revolute][:, None, None]
        shift = v[self._prismatic][:, None, None]
        t = np.concatenate((
            self._revolute_origins + np.sin(angle) * self._sin_part
            + (1.0 - np.cos(angle)) * self._cos_part,
            self._prismatic_origins + shift * self._shift,
            self._constant))
        out: npt.NDArray[np.float64] = t[self._first]
        for count, joints in self._levels:
            out[:count] = out[:count] @ t[joints]
        return out[self._unsort]


# --------------------------------------------------------------------------- wire format

_CDR_LE = b"\x00\x01\x00\x00"  # encapsulation header: plain CDR, little-endian
_STAMP = struct.Struct("<iI")  # builtin_interfaces/Time: int32 sec, uint32 nanosec


class _CdrTemplate:
    """A message laid out once in CDR (the ROS 2 wire format); stamps and doubles patched.

    Publishing a Python message makes rclpy convert every field of it, the joint names
    and frame ids included, on every publish. For the streams sent every step only
    the stamps and the numbers change, so their messages are serialized here once
    and each publish writes the new stamps and doubles into the bytes and hands them
    to the middleware as a serialized message (``Publisher.publish(bytes)``): the
    same message on the wire, for a fraction of the conversion. Users check a
    template against the middleware's own deserializer (:func:`_decodes_as`) and fall
    back to publishing messages when it does not read back.

    Build with :meth:`stamp`, :meth:`string`, :meth:`strings`, :meth:`doubles`, then
    :meth:`finish`.
    """

    def __init__(self) -> None:
        self._buf = bytearray(_CDR_LE)
        self._stamp_words: list[int] = []
        self.values: npt.NDArray[np.float64] = np.zeros(0)
        """The doubles of the message, a view of its bytes (after :meth:`finish`)."""
        self._sec: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._nanosec: npt.NDArray[np.uint32] = np.zeros(0, dtype=np.uint32)
        self._stamp_index: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)

    def _align(self, size: int) -> None:
        # CDR aligns every primitive to its size, counted from the end of the header.
        self._buf += bytes(-(len(self._buf) - len(_CDR_LE)) % size)

    def uint32(self, value: int) -> None:
        """A ``uint32`` (a sequence or string length)."""
        self._align(4)
        self._buf += value.to_bytes(4, "little")

    def stamp(self) -> None:
        """A ``builtin_interfaces/Time``, written by :meth:`set_stamp`."""
        self._align(4)
        self._stamp_words.append(len(self._buf) // 4)
        self._buf += bytes(8)

    def string(self, text: str) -> None:
        """A ``string``: its length with the terminating NUL, the UTF-8 bytes, the NUL."""
        data = text.encode()
        self.uint32(len(data) + 1)
        self._buf += data + b"\0"

    def strings(self, texts: Sequence[str]) -> None:
        """A ``string[]``."""
        self.uint32(len(texts))
        for text in texts:
            self.string(text)

    def doubles(self, count: int, *, sequence: bool = True) -> int:
        """Room for ``count`` doubles: a ``float64[]`` (length first) or fixed fields.

        Returns:
            The index of the first of them in :attr:`values`.
        """
        if sequence:
            self.uint32(count)
        if count:
            self._align(8)
        first = (len(self._buf) - len(_CDR_LE)) // 8
        self._buf += bytes(8 * count)
        return first

    def finish(self) -> None:
        """End the layout; :attr:`values` and :meth:`set_stamp` write into the bytes."""
        buf = self._buf
        self.values = np.frombuffer(buf, dtype="<f8", offset=len(_CDR_LE),
                                    count=(len(buf) - len(_CDR_LE)) // 8)
        self._sec = np.frombuffer(buf, dtype="<i4", count=len(buf) // 4)
        self._nanosec = np.frombuffer(buf, dtype="<u4", count=len(buf) // 4)
        self._stamp_index = np.array(self._stamp_words, dtype=np.intp)

    def set_stamp(self, stamp: Time) -> None:
        """Write ``stamp`` into every stamp of the message."""
        if len(self._stamp_words) == 1:
            _STAMP.pack_into(self._buf, 4 * self._stamp_words[0], stamp.sec, stamp.nanosec)
        else:
            self._sec[self._stamp_index] = stamp.sec
            self._nanosec[self._stamp_index + 1] = stamp.nanosec

    def data(self) -> bytes:
        """The serialized message as it is now."""
        return bytes(self._buf)


def _decodes_as(data: bytes, expected: Any) -> bool:  # noqa: ANN401 - any message
    """Whether the middleware reads ``data`` back as ``expected`` (a template's check)."""
    try:
        return bool(deserialize_message(data, type(expected)) == expected)
    except Exception:  # noqa: BLE001 - any failure to read it back means "do not use it"
        return False


class _JointStateWire:
    """``sensor_msgs/JointState`` for fixed names and field lengths, as CDR bytes."""

    def __init__(self, names: Sequence[str], sizes: tuple[int, int, int]) -> None:
        self._cdr = _CdrTemplate()
        self._cdr.stamp()
        self._cdr.string("")  # frame_id
        self._cdr.strings(names)
        self._fields = [(self._cdr.doubles(n), n) for n in sizes]
        self._cdr.finish()

    def serialize(self, stamp: Time, *fields: npt.ArrayLike) -> bytes | None:
        """The message with ``stamp`` and the position, velocity and effort ``fields``.

        Returns:
            None when a field's length is not the template's (publish a message then).
        """
        values = self._cdr.values
        for (first, n), field in zip(self._fields, fields, strict=True):
            if type(field) is not np.ndarray or field.shape != (n,):
                field = np.asarray(field, dtype=np.float64)  # noqa: PLW2901 - same, converted
                if field.size != n:
                    return None
                field = field.reshape(n)  # noqa: PLW2901
            values[first:first + n] = field
        self._cdr.set_stamp(stamp)
        return self._cdr.data()


class _TfWire:
    """``tf2_msgs/TFMessage`` for fixed (parent, child) frames, as CDR bytes."""

    def __init__(self, frames: Sequence[tuple[str, str]]) -> None:
        self._cdr = _CdrTemplate()
        self._cdr.uint32(len(frames))
        firsts = []
        for parent, child in frames:
            self._cdr.stamp()
            self._cdr.string(parent)
            self._cdr.string(child)
            firsts.append(self._cdr.doubles(7, sequence=False))  # translation, rotation
        self._index = np.array(firsts, dtype=np.intp).reshape(-1, 1) + np.arange(7)
        self._cdr.finish()

    def serialize(self, stamp: Time, rows: npt.NDArray[np.float64]) -> bytes:
        """The message with ``stamp`` and (n, 7) rows x, y, z, qx, qy, qz, qw."""
        self._cdr.values[self._index] = rows
        self._cdr.set_stamp(stamp)
        return self._cdr.data()


class _ClockWire:
    """``rosgraph_msgs/Clock`` as CDR bytes."""

    def __init__(self) -> None:
        self._cdr = _CdrTemplate()
        self._cdr.stamp()
        self._cdr.finish()

    def serialize(self, stamp: Time) -> bytes:
        self._cdr.set_stamp(stamp)
        return self._cdr.data()


class ClockPublisher:
    """Publishes ``/clock`` (:data:`CLOCK_QOS`) through ``node``, as serialized bytes.

    Args:
        node: The node to publish through.
    """

    def __init__(self, node: Node) -> None:
        self._pub = node.create_publisher(Clock, "/clock", CLOCK_QOS)
        self._msg = Clock()
        probe = Time(sec=1_234_567, nanosec=890_123_456)
        wire = _ClockWire()
        self._wire = wire if _decodes_as(wire.serialize(probe), Clock(clock=probe)) else None
        self.serialized = self._wire is not None
        """True when messages go out as serialized bytes (the template read back right)."""

    def publish(self, stamp: Time) -> None:
        """Publish ``stamp`` on ``/clock``."""
        if self._wire is not None:
            self._pub.publish(self._wire.serialize(stamp))
            return
        self._msg.clock = stamp
        self._pub.publish(self._msg)


# --------------------------------------------------------------------------- publisher


@dataclass
class _SkeletonTf:
    skeleton: Skeleton
    namespace: str
    kinematics: Kinematics
    dofs: slice
    moving: npt.NDArray[np.intp]  # indices of the joints (= child bodies) published on /tf
    euler: bool  # has ball / free joints: URDF joint values differ from DOF values


class RobotPublisher:
    """Publishes a robot's state, frames, description and shapes through ``node``.

    Creates the publishers ``joint_states``, ``/tf``, ``/tf_static``,
    ``robot_description``, ``~/markers`` (and ``~/urdf_joint_states`` for models with
    ball or free joints), and publishes the latched ones (description, static
    transforms, markers) at once. Messages are filled from templates made here, so a
    publish costs little more than the middleware's copy.

    Args:
        node: The node to publish through (its clock stamps messages when no stamp is
            given).
        world: The model.
        frame_prefix: Put before every frame name, the world frame included
            (``"sim/"`` -> ``sim/world``, ``sim/base``).
        collision_markers: Also publish the collision shapes (namespace ``collision``).

    Raises:
        skel_ros.model.urdf.UrdfExportError: The model cannot be exported as URDF.
    """

    def __init__(self, node: Node, world: World, *, frame_prefix: str = "",
                 collision_markers: bool = False) -> None:
        self.node = node
        self.world = world
        self.frame_prefix = frame_prefix
        self.world_frame = frame_prefix + "world"
        self.joint_names = public_dof_names(world)
        """Joint names of ``joint_states``, model order."""
        self.frame_names = public_frame_names(world, frame_prefix)
        """TF frame of every body, model order."""
        self.joint_index = {n: i for i, n in enumerate(self.joint_names)}
        self.urdf = world_to_urdf(world, frame_prefix=frame_prefix, world_link=self.world_frame)
        """The ``robot_description`` document."""
        self.initial_positions = np.array(
            [d.initial_position for s in world.skeletons for d in s.dofs], dtype=float)
        self._joint_states_pub = node.create_publisher(JointState, "joint_states", STATE_QOS)
        self._tf_pub = node.create_publisher(TFMessage, "/tf", TF_QOS)
        self._tf_static_pub = node.create_publisher(TFMessage, "/tf_static", LATCHED_QOS)
        self._description_pub = node.create_publisher(String, "robot_description", LATCHED_QOS)
        self._markers_pub = node.create_publisher(MarkerArray, "~/markers", LATCHED_QOS)
        self._joint_states = JointState()
        self._joint_states.name = list(self.joint_names)
        self._skeletons = [self._plan_skeleton(skel, start) for skel, start in zip(
            world.skeletons, np.cumsum([0] + [s.num_dofs for s in world.skeletons]), strict=False)]
        frames = self._dynamic_frames()
        self._tf = TFMessage()
        self._tf.transforms = [self._transform_msg(parent, child) for child, parent in frames]
        self._tf_parts = [(m.header, m.transform.translation, m.transform.rotation)
                          for m in self._tf.transforms]
        self._urdf_values = _UrdfValues([
            (urdf_value_plan(sk.skeleton, joint_prefix=sk.namespace), sk.dofs.start)
            for sk in self._skeletons])
        self._solver = _FrameSolver(_urdf_joints(self.urdf), frames, self._urdf_values.names)
        self._num_bodies = sum(s.moving.size for s in self._skeletons)
        self.solver_exact = self._check_solver()
        """True when the fast frame solver matches :class:`Kinematics` (else Kinematics is used)."""
        self._urdf_pub: Publisher[JointState] | None = None
        self._urdf_states = JointState()
        if any(s.euler for s in self._skeletons):
            self._urdf_pub = node.create_publisher(JointState, "~/urdf_joint_states", STATE_QOS)
            self._urdf_states.name = list(self.urdf_joint_values(self.initial_positions))
        self._joint_states_wire, self._tf_wire, self._urdf_wire = self._wires()
        self.serialized = self._joint_states_wire is not None
        """True when the per-step streams go out as serialized bytes (:class:`_CdrTemplate`)."""
        self._tf_deps: npt.NDArray[np.bool_] | None = None
        self.markers = self._markers(collision=collision_markers)
        self.publish_latched()

    # ---------------------------------------------------------------- setup

    def _plan_skeleton(self, skel: Skeleton, start: int) -> _SkeletonTf:
        ns = skeleton_namespace(self.world, skel)
        moving = np.array([i for i, j in enumerate(skel.joints) if j.type is not JointType.WELD],
                          dtype=np.intp)
        euler = any(e.coordinates is UrdfCoordinates.EULER_XYZ
                    for e in urdf_joint_map(skel, joint_prefix=ns))
        dofs = slice(int(start), int(start) + skel.num_dofs)
        return _SkeletonTf(skel, ns, Kinematics(skel), dofs, moving, euler)

    def _dynamic_frames(self) -> list[tuple[str, str]]:
        """(frame, TF parent) of every frame on /tf: moving bodies, then intermediate links."""
        frames = [(self.frame_prefix + s.namespace + s.skeleton.bodies[i].name,
                   self._parent_frame(s.skeleton, s.namespace, i))
                  for s in self._skeletons for i in s.moving]
        known = set(self.frame_names) | {self.world_frame}
        frames += [(j.child, j.parent) for j in _urdf_joints(self.urdf) if j.child not in known]
        return frames

    def _check_solver(self) -> bool:
        """Compare the frame solver with our kinematics at two configurations."""
        if not self._num_bodies:
            return True
        q0 = self.initial_positions
        for q in (q0, q0 + 0.3 * np.sin(np.arange(q0.size) + 1.0)):
            fast = self._solver.solve_vector(self._urdf_values.values(q))[: self._num_bodies]
            if not np.allclose(fast, self._body_transforms(q), rtol=0.0, atol=1e-9):
                self.node.get_logger().warning(
                    "the URDF frame solver disagrees with the model's kinematics; /tf uses"
                    " the (slower) model kinematics for body frames")
                return False
        return True

    def _wires(self) -> tuple[_JointStateWire | None, _TfWire | None, _JointStateWire | None]:
        """CDR templates of joint_states, /tf and ~/urdf_joint_states (None: messages).

        Each is checked by reading a sample back through the middleware.
        """
        probe = Time(sec=1_234_567, nanosec=890_123_456)
        n = len(self.joint_names)
        sample = [np.arange(n) * 0.5 + 0.25, np.arange(n) * -0.75 - 1.0, np.arange(n) + 1e-3]
        js: _JointStateWire | None = _JointStateWire(self.joint_names, (n, n, n))
        expected = JointState(name=list(self.joint_names), position=sample[0].tolist(),
                              velocity=sample[1].tolist(), effort=sample[2].tolist())
        expected.header.stamp = probe
        if js is not None and not _decodes_as(js.serialize(probe, *sample) or b"", expected):
            js = None
        frames = [(m.header.frame_id, m.child_frame_id) for m in self._tf.transforms]
        tf: _TfWire | None = _TfWire(frames)
        rows = np.arange(7.0 * len(frames)).reshape(-1, 7) * 0.125 - 2.0
        expected_tf = copy.deepcopy(self._tf)
        _fill_rows(expected_tf.transforms, rows, probe)
        if tf is not None and not _decodes_as(tf.serialize(probe, rows), expected_tf):
            tf = None
        urdf: _JointStateWire | None = None
        if self._urdf_pub is not None:
            m = len(self._urdf_states.name)
            urdf = _JointStateWire(self._urdf_states.name, (m, 0, 0))
            values = np.arange(m) * 0.5 - 3.0
            expected = JointState(name=list(self._urdf_states.name), position=values.tolist())
            expected.header.stamp = probe
            if not _decodes_as(urdf.serialize(probe, values, (), ()) or b"", expected):
                urdf = None
        if js is None or tf is None or (self._urdf_pub is not None and urdf is None):
            self.node.get_logger().warning(
                "serialized joint_states / tf templates do not read back through this "
                "middleware: publishing messages (slower)")
        return js, tf, urdf

    def _body_transforms(self, q: Vector) -> Vector:
        """Parent -> body transforms of the moving bodies by :class:`Kinematics`."""
        parts = [s.kinematics.joint_local_transforms(q[s.dofs])[s.moving]
                 for s in self._skeletons if s.moving.size]
        return np.concatenate(parts) if parts else np.zeros((0, 4, 4))

    def _parent_frame(self, skel: Skeleton, ns: str, joint_index: int) -> str:
        parent = skel.joints[joint_index].parent
        return self.world_frame if parent is None else self.frame_prefix + ns + parent

    @staticmethod
    def _transform_msg(parent: str, child: str) -> TransformStamped:
        msg = TransformStamped()
        msg.header.frame_id = parent
        msg.child_frame_id = child
        return msg

    def _static_transforms(self, stamp: Time) -> TFMessage:
        out = TFMessage()
        for s in self._skeletons:
            welds = [i for i, j in enumerate(s.skeleton.joints) if j.type is JointType.WELD]
            if not welds:
                continue
            local = s.kinematics.joint_local_transforms(s.skeleton.initial_positions)
            msgs = [self._transform_msg(self._parent_frame(s.skeleton, s.namespace, i),
                                        self.frame_prefix + s.namespace + s.skeleton.bodies[i].name)
                    for i in welds]
            _fill(msgs, local[welds], stamp)
            out.transforms.extend(msgs)
        return out

    # ---------------------------------------------------------------- publishing

    def now(self) -> Time:
        """The node clock's time as a message stamp."""
        return self.node.get_clock().now().to_msg()

    def publish_latched(self, stamp: Time | None = None) -> None:
        """Publish ``robot_description``, ``/tf_static`` and ``~/markers`` (transient local)."""
        stamp = stamp or self.now()
        self._description_pub.publish(String(data=self.urdf))
        static = self._static_transforms(stamp)
        if static.transforms:
            self._tf_static_pub.publish(static)
        self._markers_pub.publish(self.markers)

    def publish_joint_states(self, positions: npt.ArrayLike, velocities: npt.ArrayLike,
                             efforts: npt.ArrayLike, stamp: Time | None = None) -> None:
        """Publish ``joint_states``: one value per joint of :attr:`joint_names` in each array.

        Pass an empty array for a field that is not known (it is then left empty).
        """
        stamp = stamp or self.now()
        if self._joint_states_wire is not None:
            data = self._joint_states_wire.serialize(stamp, positions, velocities, efforts)
            if data is not None:
                self._joint_states_pub.publish(data)
                return
        msg = self._joint_states
        msg.header.stamp = stamp
        msg.position = _doubles(positions)
        msg.velocity = _doubles(velocities)
        msg.effort = _doubles(efforts)
        self._joint_states_pub.publish(msg)

    def transforms(self, positions: npt.ArrayLike,
                   stamp: Time | None = None) -> list[TransformStamped]:
        """Fill the ``/tf`` transforms for ``positions`` (every DOF, model order); no publish.

        Args:
            positions: Every DOF's position, model order.
            stamp: The stamp (default: now).

        Returns:
            The transforms (templates owned by this object; copy to keep them).
        """
        q = self._positions(positions)
        rows = self._frame_rows(q, self._urdf_values.values(q))
        _fill_rows(self._tf.transforms, rows, stamp or self.now(), self._tf_parts)
        return list(self._tf.transforms)

    def _positions(self, positions: npt.ArrayLike) -> Vector:
        q: Vector = np.asarray(positions, dtype=float).reshape(-1)
        if q.size != len(self.joint_names):
            raise ValueError(f"expected {len(self.joint_names)} positions, got {q.size}")
        return q

    def _frame_rows(self, q: Vector, urdf_values: Vector) -> npt.NDArray[np.float64]:
        """(nframes, 7) x, y, z, qx, qy, qz, qw of every ``/tf`` transform."""
        mats = self._solver.solve_vector(urdf_values)
        if not self.solver_exact:
            mats[: self._num_bodies] = self._body_transforms(q)
        return _rows(mats)

    def _publish_tf(self, q: Vector, urdf_values: Vector, stamp: Time) -> None:
        if not self._tf.transforms:
            return
        rows = self._frame_rows(q, urdf_values)
        if self._tf_wire is not None:
            self._tf_pub.publish(self._tf_wire.serialize(stamp, rows))
        else:
            _fill_rows(self._tf.transforms, rows, stamp, self._tf_parts)
            self._tf_pub.publish(self._tf)

    def publish_tf(self, positions: npt.ArrayLike, stamp: Time | None = None) -> None:
        """Publish ``/tf`` (every moving frame) for ``positions`` (every DOF, model order)."""
        q = self._positions(positions)
        self._publish_tf(q, self._urdf_values.values(q), stamp or self.now())

    def publish_measured(self, positions: npt.ArrayLike, velocities: npt.ArrayLike,
                         efforts: npt.ArrayLike, known: npt.ArrayLike,
                         stamp: Time | None = None) -> None:
        """``joint_states`` and ``/tf`` with only the joints whose values are ``known``.

        A joint that is not known (a hardware bus that is down) is left out of
        ``joint_states``, and every ``/tf`` transform that depends on it is left out of
        ``/tf``: listeners see it go stale instead of standing still. With every joint
        known this is :meth:`publish_joint_states` plus :meth:`publish_tf`.

        Args:
            positions, velocities, efforts: one value per joint of :attr:`joint_names`.
            known: one bool per joint.
            stamp: when the values were measured (default: now).
        """
        stamp = stamp or self.now()
        mask = np.asarray(known, dtype=bool).reshape(-1)
        q = self._positions(positions)
        if mask.all():
            self.publish_joint_states(q, velocities, efforts, stamp)
            self.publish_tf(q, stamp)
            return
        if not mask.any():
            return
        keep = np.flatnonzero(mask)
        msg = JointState()
        msg.header.stamp = stamp
        msg.name = [self.joint_names[i] for i in keep]
        msg.position = _doubles(q[keep])
        msg.velocity = _doubles(np.asarray(velocities, dtype=float).reshape(-1)[keep])
        msg.effort = _doubles(np.asarray(efforts, dtype=float).reshape(-1)[keep])
        self._joint_states_pub.publish(msg)
        if not self._tf.transforms:
            return
        frames = np.flatnonzero(~(self._tf_dependencies() & ~mask).any(axis=1))
        if not frames.size or not np.isfinite(q[mask]).all():
            return
        filled = np.where(mask, q, self.initial_positions)  # unknown joints: never published
        rows = self._frame_rows(filled, self._urdf_values.values(filled))
        transforms = [copy.deepcopy(self._tf.transforms[i]) for i in frames]
        _fill_rows(transforms, rows[frames], stamp)
        self._tf_pub.publish(TFMessage(transforms=transforms))

    def _tf_dependencies(self) -> npt.NDArray[np.bool_]:
        """(frames, joints): whether a ``/tf`` transform moves with a joint's value."""
        if self._tf_deps is None:
            q0 = self.initial_positions.copy()
            base = self._frame_rows(q0, self._urdf_values.values(q0))
            deps = np.zeros((base.shape[0], q0.size), dtype=bool)
            for j in range(q0.size):
                for delta in (0.3, -0.7):  # two sizes: no joint is blind to both
                    q = q0.copy()
                    q[j] += delta
                    rows = self._frame_rows(q, self._urdf_values.values(q))
                    deps[:, j] |= ~np.isclose(rows, base, rtol=0.0, atol=1e-12).all(axis=1)
            self._tf_deps = deps
        return self._tf_deps

    def publish_kinematics(self, positions: npt.ArrayLike, stamp: Time | None = None) -> None:
        """:meth:`publish_tf` and :meth:`publish_urdf_joint_states`, sharing the work."""
        stamp = stamp or self.now()
        q = self._positions(positions)
        values = self._urdf_values.values(q)
        self._publish_tf(q, values, stamp)
        self._publish_urdf_states(values, stamp)

    def urdf_joint_values(self, positions: npt.ArrayLike) -> dict[str, float]:
        """URDF joint name -> position for ``positions`` (every DOF, model order)."""
        values = self._urdf_values.values(self._positions(positions))
        return dict(zip(self._urdf_values.names, values.tolist(), strict=True))

    def publish_urdf_joint_states(self, positions: npt.ArrayLike,
                                  stamp: Time | None = None) -> None:
        """Publish ``~/urdf_joint_states`` (only models with ball / free joints have it)."""
        if self._urdf_pub is not None:
            values = self._urdf_values.values(self._positions(positions))
            self._publish_urdf_states(values, stamp or self.now())

    def _publish_urdf_states(self, values: Vector, stamp: Time) -> None:
        if self._urdf_pub is None:
            return
        if self._urdf_wire is not None:
            data = self._urdf_wire.serialize(stamp, values, (), ())
            if data is not None:
                self._urdf_pub.publish(data)
                return
        msg = self._urdf_states
        msg.header.stamp = stamp
        msg.position = _doubles(values)
        self._urdf_pub.publish(msg)

    def full_positions(self, names: Sequence[str], values: npt.ArrayLike) -> Vector:
        """Every DOF's position: ``values`` for ``names``, the initial position for the rest."""
        q: Vector = self.initial_positions.copy()
        q[[self.joint_index[n] for n in names]] = np.asarray(values, dtype=float)
        return q

    # ---------------------------------------------------------------- markers

    def _markers(self, *, collision: bool) -> MarkerArray:
        out = MarkerArray()
        ids = {"visual": 0, "collision": 0}
        for skel in self.world.skeletons:
            ns = skeleton_namespace(self.world, skel)
            for body in skel.bodies:
                frame = self.frame_prefix + ns + body.name
                for shape in body.shapes:
                    if shape.role is ShapeRole.COLLISION and not collision:
                        continue
                    for marker in _shape_markers(shape):
                        _finish_marker(marker, frame, shape.role.value, ids)
                        out.markers.append(marker)
                if body.soft is not None:
                    for marker in _soft_markers(body, body.soft):
                        _finish_marker(marker, frame, "visual", ids)
                        out.markers.append(marker)
        return out


def _doubles(values: npt.ArrayLike) -> array.array[float]:
    arr = np.ascontiguousarray(values, dtype=np.float64)
    return array.array("d", arr.tobytes())


def _rows(mats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(n, 4, 4) transforms -> (n, 7) rows x, y, z, qx, qy, qz, qw."""
    return np.concatenate([mats[:, :3, 3], _quaternions(mats[:, :3, :3])], axis=1)


def _fill(messages: Sequence[TransformStamped], mats: npt.NDArray[np.float64], stamp: Time,
          parts: Sequence[tuple[Any, Any, Any]] | None = None) -> None:
    """Write the (n, 4, 4) transforms and the stamp into the messages.

    ``parts`` may give each message's (header, translation, rotation) sub-messages,
    saving the attribute lookups on a hot path.
    """
    if len(messages):
        _fill_rows(messages, _rows(mats), stamp, parts)


def _fill_rows(messages: Sequence[TransformStamped], rows: npt.NDArray[np.float64],
               stamp: Time, parts: Sequence[tuple[Any, Any, Any]] | None = None) -> None:
    """Write (n, 7) rows (:func:`_rows`) and the stamp into the messages."""
    if not len(messages):
        return
    if parts is None:
        parts = [(m.header, m.transform.translation, m.transform.rotation) for m in messages]
    for (header, t, r), (x, y, z, qx, qy, qz, qw) in zip(parts, rows.tolist(), strict=True):
        header.stamp = stamp
        t.x, t.y, t.z = x, y, z
        r.x, r.y, r.z, r.w = qx, qy, qz, qw


def _pose(marker: Marker, transform: npt.NDArray[np.float64]) -> None:
    q = _quaternions(np.asarray(transform, dtype=float)[None, :3, :3])[0].tolist()
    p = np.asarray(transform, dtype=float)[:3, 3].tolist()
    pose = marker.pose
    pose.position.x, pose.position.y, pose.position.z = p
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q


def _finish_marker(marker: Marker, frame: str, namespace: str, ids: dict[str, int]) -> None:
    marker.header.frame_id = frame
    marker.ns = namespace
    marker.id = ids[namespace]
    ids[namespace] += 1
    marker.action = Marker.ADD
    marker.frame_locked = True  # follows its body frame as /tf moves it


def _color(shape: Shape) -> ColorRGBA:
    if shape.role is ShapeRole.COLLISION:
        return ColorRGBA(r=1.0, g=0.55, b=0.0, a=0.4)
    if shape.color is None:
        if isinstance(shape.geometry, Mesh):
            return ColorRGBA()  # all zero: RViz uses the mesh's own materials
        return ColorRGBA(r=DEFAULT_VISUAL_RGBA[0], g=DEFAULT_VISUAL_RGBA[1],
                         b=DEFAULT_VISUAL_RGBA[2], a=DEFAULT_VISUAL_RGBA[3])
    c = [float(v) for v in shape.color] + [1.0]
    return ColorRGBA(r=c[0], g=c[1], b=c[2], a=c[3])


def _primitive(kind: int, transform: npt.NDArray[np.float64], scale: npt.ArrayLike,
               color: ColorRGBA) -> Marker:
    m = Marker()
    m.type = kind
    _pose(m, transform)
    m.scale.x, m.scale.y, m.scale.z = (float(s) for s in np.asarray(scale, dtype=float))
    m.color = color
    return m


def _triangles(transform: npt.NDArray[np.float64], vertices: npt.NDArray[np.float64],
               faces: Sequence[Sequence[int]], color: ColorRGBA) -> Marker:
    m = _primitive(Marker.TRIANGLE_LIST, transform, (1.0, 1.0, 1.0), color)
    m.points = [Point(x=float(vertices[i][0]), y=float(vertices[i][1]), z=float(vertices[i][2]))
                for face in faces for i in face]
    return m


def _cone_mesh(radius: float, height: float) -> tuple[npt.NDArray[np.float64], list[list[int]]]:
    """Cone along z, base at -h/2, apex at +h/2 (DART's), outward triangles."""
    n = _MARKER_SLICES
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a), np.full(n, -height / 2)])
    apex, centre = n, n + 1
    vertices = np.vstack([ring, [[0.0, 0.0, height / 2]], [[0.0, 0.0, -height / 2]]])
    faces = [[i, (i + 1) % n, apex] for i in range(n)]
    faces += [[(i + 1) % n, i, centre] for i in range(n)]
    return vertices, faces


def _pyramid_mesh(width: float, depth: float,
                  height: float) -> tuple[npt.NDArray[np.float64], list[list[int]]]:
    """Pyramid along z, rectangular base at -h/2, apex at +h/2 (DART's)."""
    w, d, h = width / 2, depth / 2, height / 2
    vertices = np.array([[-w, -d, -h], [w, -d, -h], [w, d, -h], [-w, d, -h], [0.0, 0.0, h]])
    faces = [[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4], [0, 2, 1], [0, 3, 2]]
    return vertices, faces


def _plane_pose(plane: Plane) -> npt.NDArray[np.float64]:
    """Pose of the thin box drawn for an infinite plane: top face on the plane (as the URDF)."""
    n = np.asarray(plane.normal, dtype=float)
    n = n / np.linalg.norm(n)
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    x = np.cross(helper, n)
    x /= np.linalg.norm(x)
    t = np.eye(4)
    t[:3, :3] = np.column_stack([x, np.cross(n, x), n])
    t[:3, 3] = n * (plane.offset - PLANE_THICKNESS / 2.0)
    return t


def _shape_markers(shape: Shape) -> list[Marker]:  # noqa: C901, PLR0911 - one case per geometry
    """The markers drawing one shape exactly (in its body frame)."""
    g = shape.geometry
    t = np.asarray(shape.transform, dtype=float)
    color = _color(shape)
    if isinstance(g, Sphere):
        return [_primitive(Marker.SPHERE, t, [2 * g.radius] * 3, color)]
    if isinstance(g, Box):
        return [_primitive(Marker.CUBE, t, np.asarray(g.size, dtype=float), color)]
    if isinstance(g, Ellipsoid):
        return [_primitive(Marker.SPHERE, t, np.asarray(g.size, dtype=float), color)]
    if isinstance(g, Cylinder):
        return [_primitive(Marker.CYLINDER, t, (2 * g.radius, 2 * g.radius, g.height), color)]
    if isinstance(g, Capsule):
        out = [_primitive(Marker.CYLINDER, t, (2 * g.radius, 2 * g.radius, g.height), color)]
        for z in (-g.height / 2, g.height / 2):
            cap = np.eye(4)
            cap[2, 3] = z
            out.append(_primitive(Marker.SPHERE, t @ cap, [2 * g.radius] * 3, color))
        return out
    if isinstance(g, Cone):
        return [_triangles(t, *_cone_mesh(g.radius, g.height), color)]
    if isinstance(g, Pyramid):
        return [_triangles(t, *_pyramid_mesh(g.base_width, g.base_depth, g.height), color)]
    if isinstance(g, Plane):
        return [_primitive(Marker.CUBE, t @ _plane_pose(g),
                           (PLANE_SIZE, PLANE_SIZE, PLANE_THICKNESS), color)]
    if isinstance(g, MultiSphere):
        # RViz has no convex hull primitive: the spheres themselves.
        out = []
        for radius, position in g.spheres:
            at = np.eye(4)
            at[:3, 3] = np.asarray(position, dtype=float)
            out.append(_primitive(Marker.SPHERE, t @ at, [2 * radius] * 3, color))
        return out
    if isinstance(g, Mesh):
        m = _primitive(Marker.MESH_RESOURCE, t, np.asarray(g.scale, dtype=float), color)
        m.mesh_resource = g.path.resolve().as_uri() if g.path is not None else g.file_name
        m.mesh_use_embedded_materials = shape.color is None
        return [m]
    return []  # type: ignore[unreachable]  # pragma: no cover - every geometry is above


def _soft_markers(body: Body, soft: SoftShape) -> list[Marker]:
    """A soft body's rest shape (DART deforms it while simulating)."""
    color = ColorRGBA(r=DEFAULT_VISUAL_RGBA[0], g=DEFAULT_VISUAL_RGBA[1],
                      b=DEFAULT_VISUAL_RGBA[2], a=DEFAULT_VISUAL_RGBA[3])
    eye = np.eye(4)
    if soft.kind == "box":
        return [_primitive(Marker.CUBE, np.asarray(soft.transform, dtype=float),
                           np.asarray(soft.size, dtype=float), color)]
    if soft.kind == "sphere":
        return [_primitive(Marker.SPHERE, eye, [2 * soft.radius] * 3, color)]
    if soft.kind == "ellipsoid":
        return [_primitive(Marker.SPHERE, eye, np.asarray(soft.size, dtype=float), color)]
    del body
    return [_primitive(Marker.CYLINDER, eye, (2 * soft.radius, 2 * soft.radius, soft.height),
                       color)]
