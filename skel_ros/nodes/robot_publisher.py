"""What a robot node publishes, shared by the simulation and the hardware node.

No dartpy and no simulator here: :class:`RobotPublisher` is given a node, the model
(:class:`~skel_ros.model.types.World`) and a frame prefix, and publishes for joint
positions handed to it. Names follow :mod:`skel_ros.nodes.names`, QoS profiles
:mod:`skel_ros.nodes.qos`. Messages are rclpy messages, filled in place from
templates made once (names and frame ids are set at start; a publish writes the stamp
and the numbers).

What ``joint_states`` carries
-----------------------------
One entry per DOF, in model order, with the DOF's position, velocity and effort in
the model's coordinates: what ``joint_commands`` takes. A follower (a mimic joint's
DOF) is there too, as joint_state_broadcaster publishes it: its position and velocity
are its leader's through the rule (:func:`skel_ros.model.mimic.with_followers`), known
when its leader is, and its effort is the backend's (NaN when unknown). That is also
what robot_state_publisher computes for a follower missing from ``joint_states`` (it
takes a follower's published value when there is one), so its ``/tf`` and this node's
agree either way. For every DOF but those of
*ball* and *free* joints this is also the position of the URDF joint of that name.
Ball and free joints are rotation vectors in the model, but three revolute URDF
joints (XYZ Euler angles) in the URDF; a robot_state_publisher fed ``joint_states``
would draw those wrong. When the model has such joints, ``~/urdf_joint_states``
carries every URDF joint (Euler angles, screw mimic joints) for robot_state_publisher
(remap its ``joint_states`` there). RViz needs neither: ``/tf`` is published here.

``/tf`` and ``/tf_static``
--------------------------
One transform per joint of ``robot_description``, its parent link -> its child link,
as robot_state_publisher sends them: the moving URDF joints on ``/tf``, the fixed ones
(weld joints, and the fixed joint that closes a model joint whose child frame is not
its joint frame) on ``/tf_static`` once. So the TF tree is the URDF's, link for link,
including the massless intermediate links the export adds inside a joint (a body's
joint frame ``<body>__joint_frame``, and ``<dof>__link`` between the motions of a
multi-DOF joint: :func:`skel_ros.model.urdf.urdf_chain_links`), and a
robot_state_publisher run on the same description (a ros2_control stack) sends the
same transforms, not a second parent for a frame.
The moving ones come from one evaluation of the model's forward kinematics
(:meth:`skel_ros.model.kinematics.Kinematics.link_frames`), whose joint chains are the
ones the URDF export writes: each is one chain motion's transform, so it depends on the
DOFs of one joint only (:meth:`RobotPublisher.publish_measured` uses that).
"""

from __future__ import annotations

import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from geometry_msgs.msg import TransformStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from skel_ros.mesh_uris import generated_mesh_dirs, portable_mesh_uris
from skel_ros.model.kinematics import Kinematics
from skel_ros.model.mimic import follower_velocities, followers, with_followers
from skel_ros.model.transforms import inverse, matrix_to_quaternions
from skel_ros.model.urdf import skeleton_namespace, urdf_chain_links, urdf_value_plan, world_to_urdf
from skel_ros.nodes.markers import shape_markers
from skel_ros.nodes.names import public_dof_names, public_frame_names
from skel_ros.nodes.qos import CLOCK_QOS, LATCHED_QOS, STATE_QOS, TF_QOS, quiet_publisher_events

if TYPE_CHECKING:
    from collections.abc import Sequence

    from builtin_interfaces.msg import Time
    from rclpy.node import Node
    from rclpy.publisher import Publisher

    from skel_ros.model.types import Skeleton, World

__all__ = ["ROBOT_SPACING", "ClockPublisher", "RobotPublisher", "float64_array",
           "robot_description", "side_by_side"]

Vector = npt.NDArray[np.float64]

ROBOT_SPACING = 0.6
"""m between two robots shown side by side (``launch/sim_to_real.launch.py``'s ``spacing``)."""


class ClockPublisher:
    """Publishes ``/clock`` (:data:`~skel_ros.nodes.qos.CLOCK_QOS`) through ``node``.

    Args:
        node: The node to publish through.
    """

    def __init__(self, node: Node) -> None:
        self._pub = node.create_publisher(Clock, "/clock", CLOCK_QOS,
                                          event_callbacks=quiet_publisher_events())
        self._msg = Clock()

    def publish(self, stamp: Time) -> None:
        """Publish ``stamp`` on ``/clock``."""
        self._msg.clock = stamp
        self._pub.publish(self._msg)


@dataclass(frozen=True)
class _SkeletonFrames:
    """One skeleton's part of ``/tf``."""

    skeleton: Skeleton
    namespace: str
    kinematics: Kinematics
    dofs: slice  # its DOFs in the world's positions vector
    link_frames: tuple[tuple[str, str], ...]  # (TF parent, frame) of each chain motion
    # (TF parent, body frame, joint index) of each fixed joint that closes a model joint
    # (its chain ends in an intermediate link; the body is T_child_to_joint^-1 from it)
    closing: tuple[tuple[str, str, int], ...]
    urdf_joints: tuple[str, ...]  # the URDF joint of each chain motion


class RobotPublisher:
    """Publishes a robot's state, frames, description and shapes through ``node``.

    Creates the publishers ``joint_states``, ``/tf``, ``/tf_static``,
    ``robot_description``, ``~/markers`` (and ``~/urdf_joint_states`` for models with
    ball or free joints), and publishes the latched ones (description, static
    transforms, markers) at once.

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
        self.urdf = robot_description(world, frame_prefix)
        """The ``robot_description`` document."""
        self.initial_positions = np.array(
            [d.initial_position for s in world.skeletons for d in s.dofs], dtype=float)
        self._joint_states_pub = node.create_publisher(JointState, "joint_states", STATE_QOS,
                                                       event_callbacks=quiet_publisher_events())
        self._tf_pub = node.create_publisher(TFMessage, "/tf", TF_QOS,
                                             event_callbacks=quiet_publisher_events())
        self._tf_static_pub = node.create_publisher(TFMessage, "/tf_static", LATCHED_QOS,
                                                    event_callbacks=quiet_publisher_events())
        self._description_pub = node.create_publisher(String, "robot_description", LATCHED_QOS,
                                                      event_callbacks=quiet_publisher_events())
        self._markers_pub = node.create_publisher(MarkerArray, "~/markers", LATCHED_QOS,
                                                  event_callbacks=quiet_publisher_events())
        self._joint_states = JointState()
        self._joint_states.name = list(self.joint_names)
        starts = np.cumsum([0] + [s.num_dofs for s in world.skeletons])
        self._skeletons = [self._plan_skeleton(skel, int(start))
                           for skel, start in zip(world.skeletons, starts, strict=False)]
        # Per skeleton: the positions of the last forward kinematics and its link frames
        # and motion positions.
        self._last_frames: list[tuple[bytes, tuple[Vector, Vector]] | None] = [None] * len(
            self._skeletons)
        # (TF parent, frame) and the DOFs each /tf transform depends on: every chain
        # motion (moving URDF joint).
        frames: list[tuple[str, str]] = []
        depends: list[tuple[int, ...]] = []
        for s in self._skeletons:
            frames += s.link_frames
            depends += [tuple(s.dofs.start + d for d in link.dofs)
                        for link in s.kinematics.links]
        self._tf_frames = tuple(frames)
        self._tf_depends = np.zeros((len(frames), self.initial_positions.size), dtype=bool)
        for f, dofs in enumerate(depends):
            self._tf_depends[f, list(dofs)] = True
        self._tf = TFMessage(transforms=[_transform_msg(p, c) for p, c in frames])
        self._tf_parts = [(m.header, m.transform.translation, m.transform.rotation)
                          for m in self._tf.transforms]
        # ~/urdf_joint_states: every URDF joint of urdf_value_plan's order, its position
        # taken from the chain motions' positions (all skeletons', in order).
        motion_index = {name: k for k, name in enumerate(
            name for s in self._skeletons for name in s.urdf_joints)}
        plan_names = [name for s in self._skeletons
                      for name in urdf_value_plan(s.skeleton, joint_prefix=s.namespace).names]
        self._urdf_take = np.array([motion_index[n] for n in plan_names], dtype=np.intp)
        self._urdf_pub: Publisher[JointState] | None = None
        self._urdf_states = JointState()
        if any(lk.motion.euler for s in self._skeletons for lk in s.kinematics.links):
            self._urdf_pub = node.create_publisher(JointState, "~/urdf_joint_states", STATE_QOS,
                                                   event_callbacks=quiet_publisher_events())
            self._urdf_states.name = plan_names
        self._urdf_names = tuple(plan_names)
        # Per skeleton with followers: its DOFs, its follower DOFs and their leaders (flat).
        self._coupled = [(s.skeleton, s.dofs,
                          np.array([s.dofs.start + d.index for d in followers(s.skeleton)],
                                   dtype=np.intp),
                          np.array([s.dofs.start + s.skeleton.dof_index(d.mimic.leader)
                                    for d in followers(s.skeleton) if d.mimic is not None],
                                   dtype=np.intp))
                         for s in self._skeletons if followers(s.skeleton)]
        # publish_measured with some joints unknown: (mask, known joints, their templates).
        self._partial: tuple[bytes, npt.NDArray[np.intp], JointState, npt.NDArray[np.intp],
                             TFMessage] | None = None
        self.markers = shape_markers(world, frame_prefix, collision=collision_markers)
        self.publish_latched()

    # ---------------------------------------------------------------- setup

    def _plan_skeleton(self, skel: Skeleton, start: int) -> _SkeletonFrames:
        ns = skeleton_namespace(self.world, skel)
        kinematics = Kinematics(skel)
        # The URDF's joints of the chain motions, in the order of kinematics.links.
        chain = urdf_chain_links(skel, link_prefix=self.frame_prefix + ns, joint_prefix=ns,
                                 world_link=self.world_frame)
        last = {c.joint: c for c in chain}  # each model joint's last chain motion
        return _SkeletonFrames(
            skeleton=skel, namespace=ns, kinematics=kinematics,
            dofs=slice(start, start + skel.num_dofs),
            link_frames=tuple((c.parent_link, c.link) for c in chain),
            closing=tuple((c.link, self.frame_prefix + ns + skel.joints[j].child, j)
                          for j, c in last.items() if c.intermediate),
            urdf_joints=tuple(c.urdf_joint for c in chain))

    def _parent_frame(self, skel: Skeleton, ns: str, joint_index: int) -> str:
        parent = skel.joints[joint_index].parent
        return self.world_frame if parent is None else self.frame_prefix + ns + parent

    def _static_transforms(self, stamp: Time) -> TFMessage:
        """The fixed URDF joints: weld joints, and the fixed joints closing a model joint."""
        out = TFMessage()
        for s in self._skeletons:
            joints = s.skeleton.joints
            welds = [i for i, j in enumerate(joints) if not j.num_dofs]
            msgs = [_transform_msg(self._parent_frame(s.skeleton, s.namespace, i),
                                   self.frame_prefix + s.namespace + joints[i].child)
                    for i in welds]
            mats = [s.kinematics.local_frames(np.asarray(s.skeleton.initial_positions)
                                              ).joints[welds]] if welds else []
            if s.closing:
                msgs += [_transform_msg(parent, child) for parent, child, _ in s.closing]
                mats.append(np.array([inverse(np.asarray(joints[j].T_child_to_joint))
                                      for _, _, j in s.closing]))
            if msgs:
                _fill(msgs, _rows(np.concatenate(mats)), stamp)
                out.transforms.extend(msgs)
        return out

    # ---------------------------------------------------------------- kinematics

    def _positions(self, positions: npt.ArrayLike) -> Vector:
        q: Vector = np.asarray(positions, dtype=float).reshape(-1)
        if q.size != len(self.joint_names):
            raise ValueError(f"expected {len(self.joint_names)} positions, got {q.size}")
        return q

    def _kinematics(self, q: Vector) -> tuple[npt.NDArray[np.float64], Vector]:
        """Every ``/tf`` transform and every chain motion's (URDF joint's) position.

        Returns:
            (nframes, 7) rows x, y, z, qx, qy, qz, qw of the ``/tf`` transforms, and the
            positions of the chain motions of all skeletons.
        """
        frames = [self._link_frames(k, q[s.dofs]) for k, s in enumerate(self._skeletons)]
        mats = [links for links, _ in frames]
        rows = _rows(np.concatenate(mats)) if mats else np.zeros((0, 7))
        values = np.concatenate([v for _, v in frames]) if frames else np.zeros(0)
        return rows, values

    def _link_frames(self, k: int, q: Vector) -> tuple[Vector, Vector]:
        """Skeleton ``k``'s link frames and motion positions at ``q``, kept for the next call.

        (:meth:`Kinematics.link_frames <skel_ros.model.kinematics.Kinematics.link_frames>`.)
        A skeleton whose positions are bit for bit those of the last call (an immobile
        ground, a robot at rest) is not evaluated again: the frames are a function of
        the positions alone, so the kept ones are the same numbers.
        """
        key = q.tobytes()  # the same bits give the same frames (a copy: q may change)
        last = self._last_frames[k]
        if last is not None and last[0] == key:
            return last[1]
        frames = self._skeletons[k].kinematics.link_frames(q)
        self._last_frames[k] = (key, frames)
        return frames

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
        msg = self._joint_states
        msg.header.stamp = stamp or self.now()
        msg.position = float64_array(positions)
        msg.velocity = float64_array(velocities)
        msg.effort = float64_array(efforts)
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
        rows, _ = self._kinematics(self._positions(positions))
        _fill(self._tf.transforms, rows, stamp or self.now(), self._tf_parts)
        return list(self._tf.transforms)

    def _publish_tf(self, rows: npt.NDArray[np.float64], stamp: Time) -> None:
        if self._tf.transforms:
            _fill(self._tf.transforms, rows, stamp, self._tf_parts)
            self._tf_pub.publish(self._tf)

    def publish_tf(self, positions: npt.ArrayLike, stamp: Time | None = None) -> None:
        """Publish ``/tf`` (every moving frame) for ``positions`` (every DOF, model order)."""
        rows, _ = self._kinematics(self._positions(positions))
        self._publish_tf(rows, stamp or self.now())

    def publish_measured(self, positions: npt.ArrayLike, velocities: npt.ArrayLike,
                         efforts: npt.ArrayLike, known: npt.ArrayLike,
                         stamp: Time | None = None, *, joint_states: bool = True,
                         tf: bool = True) -> None:
        """``joint_states`` and ``/tf`` with only the joints whose values are ``known``.

        A joint that is not known (a hardware bus that is down, a joint no actuator
        drives) is left out of ``joint_states``, and every ``/tf`` transform that depends
        on it is left out of ``/tf``, as robot_state_publisher leaves out the transform of
        a joint it has no state for: listeners see it go stale (or never see it) instead of
        standing still. With every joint known this is :meth:`publish_joint_states` plus
        :meth:`publish_kinematics` (``~/urdf_joint_states`` too, which needs every joint).

        Args:
            positions: One value per joint of :attr:`joint_names`.
            velocities: One value per joint.
            efforts: One value per joint.
            known: One bool per joint.
            stamp: When the values were measured (default: now).
            joint_states: Publish ``joint_states``.
            tf: Publish ``/tf`` (and ``~/urdf_joint_states``).
        """
        stamp = stamp or self.now()
        mask = np.asarray(known, dtype=bool).reshape(-1)
        q = self._positions(positions)
        if self._coupled:
            q, velocities, mask = self._with_followers(q, velocities, mask)
        if mask.all():
            if joint_states:
                self.publish_joint_states(q, velocities, efforts, stamp)
            if tf:
                self.publish_kinematics(q, stamp)
            return
        if not mask.any():
            return
        keep, msg, frames, tf_msg = self._part(mask)
        if joint_states:
            msg.header.stamp = stamp
            msg.position = float64_array(q[keep])
            msg.velocity = float64_array(np.asarray(velocities, dtype=float).reshape(-1)[keep])
            msg.effort = float64_array(np.asarray(efforts, dtype=float).reshape(-1)[keep])
            self._joint_states_pub.publish(msg)
        if not tf or not frames.size or not np.isfinite(q[mask]).all():
            return
        filled = np.where(mask, q, self.initial_positions)  # unknown joints: never published
        rows, _ = self._kinematics(filled)
        _fill(tf_msg.transforms, rows[frames], stamp)
        self._tf_pub.publish(tf_msg)

    def _with_followers(self, q: Vector, velocities: npt.ArrayLike,
                        mask: npt.NDArray[np.bool_]) -> tuple[Vector, Vector,
                                                              npt.NDArray[np.bool_]]:
        """Followers' positions and velocities from their leaders'; known where those are."""
        q = q.copy()
        v = np.array(velocities, dtype=float).reshape(-1)
        mask = mask.copy()
        for skel, dofs, follower, leader in self._coupled:
            q[dofs] = with_followers(skel, q[dofs])
            if v.size:
                v[dofs] = follower_velocities(skel, v[dofs])
            mask[follower] = mask[leader]
        return q, v, mask

    def _part(self, mask: npt.NDArray[np.bool_]) -> tuple[
            npt.NDArray[np.intp], JointState, npt.NDArray[np.intp], TFMessage]:
        """The known joints, their ``joint_states`` and ``/tf`` templates (kept per mask).

        The same joints stay unknown from one message to the next (the joints no actuator
        drives, a bus that stays down): the templates are made once for them.
        """
        key = mask.tobytes()
        if self._partial is None or self._partial[0] != key:
            keep = np.flatnonzero(mask)
            msg = JointState()
            msg.name = [self.joint_names[i] for i in keep]
            frames = np.flatnonzero(~(self._tf_depends & ~mask).any(axis=1))
            tf_msg = TFMessage(transforms=[_transform_msg(*self._tf_frames[f]) for f in frames])
            self._partial = (key, keep, msg, frames, tf_msg)
        return self._partial[1:]

    def publish_kinematics(self, positions: npt.ArrayLike, stamp: Time | None = None) -> None:
        """:meth:`publish_tf` and :meth:`publish_urdf_joint_states`, sharing the work."""
        stamp = stamp or self.now()
        rows, values = self._kinematics(self._positions(positions))
        self._publish_tf(rows, stamp)
        self._publish_urdf_states(values, stamp)

    def urdf_joint_values(self, positions: npt.ArrayLike) -> dict[str, float]:
        """URDF joint name -> position for ``positions`` (every DOF, model order)."""
        _, values = self._kinematics(self._positions(positions))
        return dict(zip(self._urdf_names, values[self._urdf_take].tolist(), strict=True))

    def publish_urdf_joint_states(self, positions: npt.ArrayLike,
                                  stamp: Time | None = None) -> None:
        """Publish ``~/urdf_joint_states`` (only models with ball / free joints have it)."""
        if self._urdf_pub is not None:
            _, values = self._kinematics(self._positions(positions))
            self._publish_urdf_states(values, stamp or self.now())

    def _publish_urdf_states(self, values: Vector, stamp: Time) -> None:
        """Publish ``~/urdf_joint_states`` from every chain motion's position."""
        if self._urdf_pub is None:
            return
        msg = self._urdf_states
        msg.header.stamp = stamp
        msg.position = float64_array(values[self._urdf_take])
        self._urdf_pub.publish(msg)

    def full_positions(self, names: Sequence[str], values: npt.ArrayLike) -> Vector:
        """Every DOF's position: ``values`` for ``names``, the initial position for the rest."""
        q: Vector = self.initial_positions.copy()
        q[[self.joint_index[n] for n in names]] = np.asarray(values, dtype=float)
        return q


def robot_description(world: World, frame_prefix: str = "") -> str:
    """The ``robot_description`` of ``world``: its URDF, every frame under ``frame_prefix``.

    The root link is ``frame_prefix + "world"``. Mesh URIs are ``package://`` wherever
    the ament index resolves them to the same file (:mod:`skel_ros.mesh_uris`), so RViz
    on another machine with the same packages installed loads them.

    Raises:
        skel_ros.model.urdf.UrdfExportError: The model cannot be exported as URDF.
    """
    urdf = world_to_urdf(world, frame_prefix=frame_prefix, world_link=frame_prefix + "world")
    return portable_mesh_uris(urdf, generated_mesh_dirs(world.source))


def _transform_msg(parent: str, child: str) -> TransformStamped:
    msg = TransformStamped()
    msg.header.frame_id = parent
    msg.child_frame_id = child
    return msg


def side_by_side(namespaces: Sequence[str], spacing: float = ROBOT_SPACING) -> TFMessage:
    """Static transforms from ``world`` to each robot's ``<namespace>/world``, in a row.

    The robots stand ``spacing`` m apart along y, the first at ``-spacing / 2`` (``real``
    then ``sim`` gives the launch file's -0.3 / +0.3 m), so one fixed frame shows them
    all: RViz, or one 3D panel of Foxglove or Lichtblick opening a recording.
    """
    out = TFMessage()
    for k, ns in enumerate(namespaces):
        msg = _transform_msg("world", f"{ns}/world")
        msg.transform.translation.y = (k - 0.5) * spacing
        msg.transform.rotation.w = 1.0
        out.transforms.append(msg)
    return out


def float64_array(values: npt.ArrayLike) -> array.array[float]:
    """A ``float64[]`` field's value: rclpy takes an ``array('d')`` without a per-item check."""
    return array.array("d", np.ascontiguousarray(values, dtype=np.float64).tobytes())


def _rows(mats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(n, 4, 4) transforms -> (n, 7) rows x, y, z, qx, qy, qz, qw."""
    return np.concatenate([mats[:, :3, 3], matrix_to_quaternions(mats[:, :3, :3])], axis=1)


def _fill(messages: Sequence[TransformStamped], rows: npt.NDArray[np.float64], stamp: Time,
          parts: Sequence[tuple[Any, Any, Any]] | None = None) -> None:
    """Write (n, 7) rows (:func:`_rows`) and the stamp into the messages.

    ``parts`` may give each message's (header, translation, rotation) sub-messages, as
    kept with the message templates.
    """
    if parts is None:
        parts = [(m.header, m.transform.translation, m.transform.rotation) for m in messages]
    for (header, t, r), (x, y, z, qx, qy, qz, qw) in zip(parts, rows.tolist(), strict=True):
        header.stamp = stamp
        t.x, t.y, t.z = x, y, z
        r.x, r.y, r.z, r.w = qx, qy, qz, qw
