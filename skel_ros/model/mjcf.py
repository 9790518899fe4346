"""MJCF (MuJoCo XML) export of the model: :func:`world_to_mjcf`, :func:`write_mjcf`.

Writes text only: no MuJoCo, DART or ROS here (``docs/interchange.md``, section MJCF,
has the whole mapping and what is refused or dropped).

Frames. A MuJoCo joint turns its body about the body's own origin, so each SKEL body
``c`` is written as a MuJoCo body whose frame is the *joint frame on the child side*,
``W(c) . T_child_to_joint``; its geoms, inertial and sites are re-expressed in that
frame, and its pose in its parent's MuJoCo frame is ``T_child_to_joint(parent)^-1 .
T_parent_to_joint`` at q = 0. The joint motion ``M(q)`` of :mod:`skel_ros.model.kinematics` is
then the MuJoCo joints of the body, applied one after the other as MuJoCo does (each
in the body frame left by the previous ones), which is exactly the chain of single-DOF
motions :func:`~skel_ros.model.kinematics.joint_chain` gives:

* revolute -> hinge, prismatic -> slide; universal, euler, translational,
  translational2d and planar -> their chain of hinges and slides, one per DOF;
* screw -> a hinge (the DOF) and a slide tied to it by a joint equality
  ``slide = pitch / 2pi * hinge``;
* ball -> ball (MuJoCo quaternion ``= exp(q)``, q DART's rotation vector);
* free -> free joint for a skeleton's root (MuJoCo requires free joints at the top);
  three slides and a ball elsewhere. A root's free joint moves the SKEL body frame
  itself (no offset): MuJoCo integrates a free body's origin along its velocity, as
  DART does with the child body's, so the two integrate the same point.

Masses. MuJoCo moves no body that neither has nor has welded to it a mass and an
inertia; :mod:`skel_ros.model.mjcf_masses` decides what happens to such a body: folded
(no MuJoCo body; its joints go, placed where they act, into its child's MuJoCo body
before the child's own), bounded (a small mass and inertia, with a warning) or refused.

:class:`MjcfExport` keeps that correspondence: which MuJoCo joint each DOF drives, and
:meth:`MjcfExport.qpos` / :meth:`MjcfExport.qvel` turn SKEL positions and velocities
into MuJoCo's ``qpos`` / ``qvel``.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from skel_ros.model.errors import Location, SkelWarning
from skel_ros.model.interchange_errors import ExportError
from skel_ros.model.kinematics import Kinematics, joint_chain, joint_motion
from skel_ros.model.mimic import couplings, leader_bounds
from skel_ros.model.mjcf_masses import MASS_BOUND_RATIO, mass_plan
from skel_ros.model.transforms import adjoint, exp_rot, inverse, matrix_to_quaternions
from skel_ros.model.types import (
    ActuatorType,
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
    ShapeRole,
    Sphere,
)
from skel_ros.model.urdf import skeleton_namespace

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from skel_ros.model.mjcf_masses import Bound, Fold
    from skel_ros.model.types import Array, Body, Dof, Geometry, Joint, Shape, Skeleton, World

__all__ = ["FreeFrames", "MjcfBody", "MjcfExport", "MjcfJoint", "world_to_mjcf", "write_mjcf"]

# Mesh formats MuJoCo reads; a visual mesh of another format is dropped with a warning.
MESH_SUFFIXES = (".stl", ".obj", ".msh")
# Sides of the polygon a cone's base becomes (MuJoCo has no cone).
CONE_SIDES = 64
# Geom groups, as MuJoCo Menagerie uses them: visual 2 (shown), collision 3 (hidden).
VISUAL_GROUP = "2"
COLLISION_GROUP = "3"
# A mimic equality's solref time constant, in time steps (MuJoCo's stable minimum is 2)
# and its solimp (dmin, dmax, width): nearly hard (docs/mujoco.md, "Mimic joints").
MIMIC_TIMECONST_STEPS = 2.0
MIMIC_SOLIMP = (0.9999, 0.9999, 0.001)
# Names a warning lists before "and N more".
_NAMES_SHOWN = 5
# contype/conaffinity bits: one per colliding skeleton (MuJoCo's masks are 32-bit ints).
_MAX_SKELETON_BITS = 31
# MuJoCo reads MJCF with tinyxml2, which refuses elements nested 500 deep
# (XML_ELEMENT_DEPTH_EXCEEDED). Below <mujoco> and <worldbody>, and with the deepest
# body's own <inertial> inside it, that leaves 496 nested bodies (measured with MuJoCo
# 4.0: 496 compile, 497 do not).
MAX_BODY_DEPTH = 496


@dataclass(frozen=True)
class FreeFrames:
    """A SKEL free joint as the MJCF export needs it for coordinates.

    Attributes:
        parent: ``T_parent_to_joint``.
        child: ``T_child_to_joint``.
        dofs: Its six DOF indices in the skeleton (rotation vector, then translation).
    """

    parent: Array
    child: Array
    dofs: tuple[int, ...]

    def motion(self, q: Array) -> Array:
        """The joint motion ``[exp(q0:3) | q3:6]`` (the MuJoCo body in ``parent``)."""
        m = np.eye(4)
        m[:3, :3] = exp_rot(q[:3])
        m[:3, 3] = q[3:6]
        return m

    def relative(self, q: Array) -> Array:
        """The child body in the parent body: ``T_parent_to_joint M(q) T_child_to_joint^-1``."""
        out: Array = (np.asarray(self.parent) @ self.motion(q)
                      @ inverse(np.asarray(self.child)))
        return out

    def child_twist(self, q: Array, v: Array) -> Array:
        """The child body's twist relative to its parent, (angular, linear), in its frame.

        DART 6's free-joint velocity ``v`` maps to it through ``diag(R^T, R^T)
        Ad(T_child_to_joint)``, R the rotation of :meth:`relative` (its
        ``getRelativeJacobian``; test/sim/test_engine_agreement.py checks the result
        against dartpy's body velocities).
        """
        to_child = np.zeros((6, 6))
        to_child[:3, :3] = to_child[3:, 3:] = self.relative(q)[:3, :3].T
        twist: Array = to_child @ adjoint(np.asarray(self.child)) @ np.asarray(v)
        return twist

    def twist(self, q: Array, v: Array) -> tuple[Array, Array]:
        """(angular, linear) velocity of the joint frame, in that frame.

        The joint frame is the child body's times ``T_child_to_joint``.
        """
        joint = adjoint(inverse(np.asarray(self.child))) @ self.child_twist(q, v)
        return joint[:3], joint[3:]


@dataclass(frozen=True)
class MjcfJoint:
    """One MuJoCo joint of the export, in ``qpos`` order.

    Attributes:
        name: The MuJoCo joint name.
        kind: ``"hinge"``, ``"slide"``, ``"ball"`` or ``"free"``.
        skeleton: Its skeleton's name.
        joint: The SKEL joint it comes from.
        dofs: The skeleton DOF indices that drive it: one for a hinge or slide, three
            (the rotation vector) for a ball, six for a free joint.
        scale: Its position per unit of the DOF's (``pitch / 2pi`` for a screw's slide,
            1 otherwise).
        free: For a MuJoCo joint that stands for a SKEL free joint (all of it at a root;
            its translation slides or its rotation ball below one), that joint's frames
            and DOFs: a free ``qpos`` is the body's world pose, and every such ``qvel``
            is converted from DART's free-joint velocity. None otherwise.
    """

    name: str
    kind: str
    skeleton: str
    joint: str
    dofs: tuple[int, ...]
    scale: float = 1.0
    free: FreeFrames | None = None

    @property
    def nq(self) -> int:
        """Its number of ``qpos`` entries."""
        return {"ball": 4, "free": 7}.get(self.kind, 1)

    @property
    def nv(self) -> int:
        """Its number of ``qvel`` entries."""
        return {"ball": 3, "free": 6}.get(self.kind, 1)


@dataclass(frozen=True)
class MjcfBody:
    """One SKEL body of the export and the MuJoCo body that holds it.

    Attributes:
        name: The MuJoCo body name.
        skeleton: Its skeleton's name.
        body: The SKEL body.
        frame: The MuJoCo body frame in the SKEL body frame (``T_child_to_joint``):
            the SKEL body's world pose is MuJoCo's ``xpos``/``xmat`` times its inverse.
            For a folded body (massless, its joints carried by the MuJoCo body of a
            descendant: :mod:`skel_ros.model.mjcf_masses`), the MuJoCo body frame in the
            frame of the last body of :attr:`through`.
        through: For a folded body, the joints between it and the body whose MuJoCo body
            holds it, parent side first (:meth:`pose` undoes their motion); empty otherwise.
    """

    name: str
    skeleton: str
    body: str
    frame: Array
    through: tuple[Joint, ...] = ()

    def pose(self, mujoco_pose: Array, positions: Sequence[float] | Array = ()) -> Array:
        """The SKEL body's world pose from MuJoCo's pose of body :attr:`name`.

        Args:
            mujoco_pose: MuJoCo's ``xpos``/``xmat`` of :attr:`name` as a 4x4 transform.
            positions: The skeleton's DOF positions; read for a folded body only.
        """
        out: Array = np.asarray(mujoco_pose, dtype=float) @ inverse(np.asarray(self.frame))
        if not self.through:
            return out
        q = np.asarray(positions, dtype=float)
        below = np.eye(4)  # the folded body -> the last body of `through`
        for joint in self.through:
            motion = joint_motion(joint, q[joint.first_dof:joint.first_dof + joint.num_dofs])
            below = (below @ np.asarray(joint.T_parent_to_joint) @ motion[0]
                     @ inverse(np.asarray(joint.T_child_to_joint)))
        folded: Array = out @ inverse(below)
        return folded


@dataclass(frozen=True)
class MjcfExport:
    """The MJCF text of a world and how its coordinates map to MuJoCo's.

    Attributes:
        xml: The MJCF document.
        joints: Every MuJoCo joint, in ``qpos`` order.
        bodies: Every SKEL body (of a skeleton with bodies), in the document order of
            the MuJoCo bodies that hold them (a folded body before the one holding it).
        warnings: What was dropped or approximated, with the element's location.
    """

    xml: str
    joints: tuple[MjcfJoint, ...]
    bodies: tuple[MjcfBody, ...]
    warnings: tuple[SkelWarning, ...]

    @property
    def nq(self) -> int:
        """Length of MuJoCo's ``qpos``."""
        return sum(j.nq for j in self.joints)

    @property
    def nv(self) -> int:
        """Length of MuJoCo's ``qvel``."""
        return sum(j.nv for j in self.joints)

    def qpos(self, positions: Mapping[str, Sequence[float] | Array]) -> Array:
        """MuJoCo ``qpos`` for SKEL DOF positions.

        Args:
            positions: Skeleton name -> all its DOF positions (DART's coordinates: a
                ball's or free joint's rotation vector, a free joint's translation).

        Returns:
            ``qpos`` (``nq``): hinge and slide values, ball quaternions ``(w, x, y, z)``
            of ``exp(q)``, free joints' body positions and quaternions in the world.
        """
        out: list[float] = []
        for j in self.joints:
            q = np.asarray(positions[j.skeleton], dtype=float)[list(j.dofs)]
            if j.kind == "ball":
                out.extend(_wxyz(exp_rot(q)))
            elif j.kind == "free" and j.free is not None:  # the body's pose in the world
                pose = j.free.relative(q)
                out.extend(float(v) for v in pose[:3, 3])
                out.extend(_wxyz(pose[:3, :3]))
            else:
                out.append(float(q[0]) * j.scale)
        return np.array(out)

    def qvel(self, positions: Mapping[str, Sequence[float] | Array],
             velocities: Mapping[str, Sequence[float] | Array]) -> Array:
        """MuJoCo ``qvel`` for SKEL DOF velocities (at those positions).

        A ball's velocity is the angular velocity in the joint frame in both engines.
        DART's free-joint velocity is converted (:meth:`FreeFrames.twist`) to MuJoCo's:
        a free joint's ``qvel`` is the linear velocity in the world and the angular in
        the body; below a root, the slides take the translation's rate along the parent
        joint frame's axes and the ball the angular velocity in the body.
        """
        out: list[float] = []
        for j in self.joints:
            v = np.asarray(velocities[j.skeleton], dtype=float)[list(j.dofs)]
            if j.free is None:
                out.extend(float(x) * j.scale for x in v)
                continue
            free = j.free
            q = np.asarray(positions[j.skeleton], dtype=float)[list(free.dofs)]
            six = np.asarray(velocities[j.skeleton], dtype=float)[list(free.dofs)]
            if j.kind == "free":  # the body frame's: linear in the world, angular in the body
                twist = free.child_twist(q, six)
                out.extend(float(x) for x in free.relative(q)[:3, :3] @ twist[3:])
                out.extend(float(x) for x in twist[:3])
                continue
            angular, linear = free.twist(q, six)
            motion = free.motion(q)
            if j.kind == "ball":
                out.extend(float(x) for x in angular)
            else:  # one of the slides: the translation's rate along the parent joint axes
                out.append(float((motion[:3, :3] @ linear)[j.dofs[0] - free.dofs[3]]))
        return np.array(out)


def _wxyz(rot: Array) -> list[float]:
    x, y, z, w = (float(v) for v in matrix_to_quaternions(rot))
    return [w, x, y, z]


# --------------------------------------------------------------------------- writing


def _num(v: float) -> str:
    """Shortest text that reads back as the same float (17 significant digits at most)."""
    text = repr(float(v))
    return "0" if text in ("0.0", "-0.0") else text.removesuffix(".0")


def _vec(values: Iterable[float]) -> str:
    return " ".join(_num(v) for v in values)


def _pose(el: etree._Element, transform: Array) -> None:
    """``pos`` and ``quat`` of a 4x4 transform (left out when zero / identity)."""
    t = np.asarray(transform, dtype=float)
    if np.any(t[:3, 3] != 0.0):
        el.set("pos", _vec(t[:3, 3]))
    if not np.array_equal(t[:3, :3], np.eye(3)):
        el.set("quat", _vec(_wxyz(t[:3, :3])))


def _translate(p: Sequence[float] | Array) -> Array:
    t = np.eye(4)
    t[:3, 3] = np.asarray(p, dtype=float)
    return t


class _Writer:
    """Builds one MJCF document from a world (one use)."""

    def __init__(self, world: World, base_dir: Path | None,
                 armature: Mapping[tuple[str, str], float] | None = None) -> None:
        self.world = world
        self.base_dir = base_dir
        self.armature = _checked_armature(world, armature or {})
        self.armature_written: set[tuple[str, str]] = set()
        self.warnings: list[SkelWarning] = []
        # kind -> (message, first location, count): repeats are given once (_flush_warnings)
        self._grouped: dict[str, tuple[str, Location, int]] = {}
        self.joints: list[MjcfJoint] = []  # in qpos order, once built
        self.bodies: list[MjcfBody] = []
        self.by_body: dict[str, list[MjcfJoint]] = {}
        self.joints_here: list[MjcfJoint] = []  # the joints of the body being written
        self.body_moves = False  # whether the body being written moves
        self.root = etree.Element("mujoco", model=_model_name(world))
        self.asset = etree.Element("asset")  # placed before <worldbody> when not empty
        self.equality: etree._Element | None = None
        self.contact: etree._Element | None = None
        self.names: dict[tuple[str, str], Location] = {}
        self.meshes: dict[tuple[str, str], str] = {}
        self.masks = self._collision_masks()

    # -- names ----------------------------------------------------------------------
    def _claim(self, kind: str, name: str, location: Location) -> str:
        """Reserve a MuJoCo name of a kind (body, joint, geom, mesh, site)."""
        if (kind, name) in self.names:
            raise ExportError(
                f"MJCF {kind} name {name!r} is used twice (also at {self.names[kind, name]})",
                location, hint="rename one of them")
        self.names[kind, name] = location
        return name

    def _unique(self, kind: str, name: str, location: Location) -> str:
        """``name``, or ``name(2)``, ``name(3)``... for names that are only labels (geoms)."""
        candidate, n = name, 1
        while (kind, candidate) in self.names:
            n += 1
            candidate = f"{name}({n})"
        return self._claim(kind, candidate, location)

    def _warn(self, message: str, location: Location, *, kind: str | None = None) -> None:
        """A warning that may repeat (one per shape, DOF...): counted, given once.

        Repeats of one ``kind`` (by default the message itself) become one line with the
        count and the first location, as the URDF reader groups its own.
        """
        key = message if kind is None else kind
        known = self._grouped.get(key)
        self._grouped[key] = ((message, location, 1) if known is None
                              else (known[0], known[1], known[2] + 1))

    def _flush_warnings(self) -> None:
        for message, location, count in self._grouped.values():
            more = f" ({count} times; the first is here)" if count > 1 else ""
            self.warnings.append(SkelWarning(message + more, location))
        self._grouped.clear()

    # -- world ----------------------------------------------------------------------
    def build(self) -> str:
        world = self.world
        self.root.append(etree.Comment(
            f" Written by skel-ros from {Path(world.source).name}: one MuJoCo body per SKEL"
            " body (a massless one's joints may be folded into its child's), its frame at"
            " the body's joint (docs/interchange.md, MJCF). "))
        etree.SubElement(self.root, "compiler", angle="radian", inertiafromgeom="false",
                         autolimits="true")
        # DART integrates with semi-implicit Euler, as MuJoCo's "Euler".
        etree.SubElement(self.root, "option", timestep=_num(world.time_step),
                         gravity=_vec(world.gravity), integrator="Euler")
        self.root.append(self.asset)
        worldbody = etree.SubElement(self.root, "worldbody")
        for skeleton in world.skeletons:
            if skeleton.bodies:
                self._skeleton(worldbody, skeleton)
        # MuJoCo numbers bodies depth first through the document, and qpos follows.
        order = [str(el.get("name")) for el in worldbody.iter("body")]
        self.joints = [j for name in order for j in self.by_body[name]]
        position = {name: k for k, name in enumerate(order)}
        self.bodies.sort(key=lambda b: position[b.name])  # stable: folded ones stay first
        if len(self.asset) == 0:
            self.root.remove(self.asset)
        for element in (self.contact, self.equality):
            if element is not None:
                self.root.append(element)
        self._unwritten_armature()
        self._keyframe()
        self._summary_warnings()
        self._flush_warnings()
        etree.indent(self.root, space="  ")
        return str(etree.tostring(self.root, encoding="unicode", pretty_print=True))

    def _unwritten_armature(self) -> None:
        """Refuse an armature given for a DOF that got no hinge or slide of its own."""
        for skeleton_name, dof_name in self.armature.keys() - self.armature_written:
            skeleton = self.world.skeleton(skeleton_name)
            joint = next(j for j in skeleton.joints
                         if j.first_dof <= skeleton.dof_index(dof_name) < j.first_dof + j.num_dofs)
            raise ExportError(
                f"an armature is given for DOF {dof_name!r}, but its {joint.type.value} joint"
                f" {joint.name!r} becomes no MJCF hinge or slide of its own"
                f"{'' if skeleton.mobile else ' (the skeleton is immobile)'}", joint.location,
                hint="armature is written on hinge and slide joints only")

    def _keyframe(self) -> None:
        """A keyframe ``initial`` when some DOF starts away from zero or moving."""
        world = self.world
        if not self.joints or not any(np.any(s.initial_positions) or np.any(s.initial_velocities)
                                      for s in world.skeletons if s.mobile):
            return
        export = MjcfExport("", tuple(self.joints), (), ())
        positions = {s.name: s.initial_positions for s in world.skeletons}
        velocities = {s.name: s.initial_velocities for s in world.skeletons}
        keyframe = etree.SubElement(self.root, "keyframe")
        etree.SubElement(keyframe, "key", name="initial",
                         qpos=_vec(export.qpos(positions)),
                         qvel=_vec(export.qvel(positions, velocities)))

    def _summary_warnings(self) -> None:
        """One line per world for the DOF limits MJCF has no place for."""
        dropped = [
            f"{skeleton_namespace(self.world, s)}{d.name}"
            for s in self.world.skeletons if s.mobile
            for d in s.dofs
            if any(math.isfinite(v) for v in (d.velocity_lower, d.velocity_upper,
                                              d.acceleration_lower, d.acceleration_upper))
        ]
        if dropped:
            shown = ", ".join(dropped[:_NAMES_SHOWN]) + (
                f" and {len(dropped) - _NAMES_SHOWN} more" if len(dropped) > _NAMES_SHOWN else "")
            self._warn(f"velocity/acceleration limits of {len(dropped)} DOF(s) are not written"
                       f" (MJCF has none; commands are clamped to them before any engine):"
                       f" {shown}", Location(self.world.source))

    def _collision_masks(self) -> dict[str, tuple[int, int]]:
        """contype/conaffinity per skeleton: bodies of one skeleton never touch each other.

        DART checks no collisions inside a skeleton (self-collision off, SkelParser's
        default), only between skeletons: skeleton i gets bit i, and an affinity for every
        other skeleton's bit.
        """
        colliding = [s.name for s in self.world.skeletons
                     if any(sh.role is ShapeRole.COLLISION and sh.collidable
                            for b in s.bodies for sh in b.shapes)]
        if len(colliding) > _MAX_SKELETON_BITS:
            raise ExportError(
                f"{len(colliding)} skeletons have collision shapes; the MJCF export keeps"
                f" them from colliding with themselves with one contact bit each, and MuJoCo"
                f" has {_MAX_SKELETON_BITS}", Location(self.world.source),
                hint="merge skeletons or make the shapes of some not collidable")
        everyone = (1 << len(colliding)) - 1
        return {name: (1 << i, everyone & ~(1 << i)) for i, name in enumerate(colliding)}

    # -- skeletons and bodies ---------------------------------------------------------
    def _skeleton(self, worldbody: etree._Element, skeleton: Skeleton) -> None:
        if any(b.soft is not None for b in skeleton.bodies):
            soft = next(b for b in skeleton.bodies if b.soft is not None)
            raise ExportError(
                f"body {soft.name!r} is a soft body; MJCF has no equivalent of DART's soft"
                " point masses", soft.location,
                hint="make it rigid (remove <soft_shape>) to export the model")
        ns = skeleton_namespace(self.world, skeleton)
        # Immobile skeletons are written as static bodies, at their initial configuration.
        static = not skeleton.mobile
        world_poses = Kinematics(skeleton).body_transforms() if static else None
        elements: dict[str, etree._Element] = {}
        frames: dict[str, Array] = {}
        moves: dict[str, bool] = {}  # the body or one of its ancestors has a MuJoCo joint
        depth: dict[str, int] = {}  # bodies from the world down to this one, itself included
        # Moving bodies MuJoCo would refuse for want of mass: folded, bounded or refused.
        plan = None if static else mass_plan(skeleton)
        # A body this light is a placeholder (a URDF's dummy base link): its moment of
        # inertia, if no rigid body can have it, is left out (_inertial).
        negligible = MASS_BOUND_RATIO * sum(b.inertia.mass for b in skeleton.bodies)
        for i, (joint, body) in enumerate(zip(skeleton.joints, skeleton.bodies, strict=True)):
            # A root's free joint moves the body frame itself (MuJoCo's and DART's free
            # joints both integrate the body origin's position linearly): no offset.
            root_free = joint.type is JointType.FREE and joint.parent is None and not static
            frame = np.eye(4) if root_free else np.asarray(joint.T_child_to_joint, dtype=float)
            frames[body.name] = frame
            if plan is not None and plan.folded(body.name) is not None:
                # No MuJoCo body: its joints go into the one of the body it is folded into.
                depth[body.name] = 0 if joint.parent is None else depth[joint.parent]
                continue
            depth[body.name] = 1 if joint.parent is None else depth[joint.parent] + 1
            if depth[body.name] > MAX_BODY_DEPTH:
                raise ExportError(
                    f"body {body.name!r} is nested {depth[body.name]} bodies deep; MuJoCo reads"
                    f" at most {MAX_BODY_DEPTH} nested bodies (its XML parser stops at 500"
                    " nested elements)", body.location,
                    hint="MJCF cannot hold a chain this long; simulate it with DART")
            fold = None if plan is None else plan.carrier(body.name)
            # The joint from the MuJoCo parent: the first folded body's, if any.
            top = joint if fold is None else skeleton.joint(
                skeleton.body(fold.bodies[0]).parent_joint)
            parent_el = worldbody if top.parent is None else elements[top.parent]
            if world_poses is not None:
                own = world_poses[i] @ frame
                parent = (np.eye(4) if joint.parent is None else
                          world_poses[skeleton.bodies.index(skeleton.body(joint.parent))]
                          @ frames[joint.parent])
                relative = inverse(parent) @ own
            else:
                # F_parent^-1 F_child at q = 0, F = W(body) frame, W(c) = W(p) Tpj Tcj^-1
                # (a fold's first joint, then E: Fold.placement).
                parent_frame = np.eye(4) if top.parent is None else frames[top.parent]
                relative = inverse(parent_frame) @ (
                    np.asarray(joint.T_parent_to_joint)
                    @ inverse(np.asarray(joint.T_child_to_joint)) @ frame
                    if fold is None else fold.placement(skeleton))
            name = self._claim("body", f"{ns}{body.name}", body.location)
            el = etree.SubElement(parent_el, "body", name=name)
            _pose(el, relative)
            if not body.gravity_mode and not static:
                el.set("gravcomp", "1")  # weight cancelled: DART's gravity off for the body
            elements[body.name] = el
            self.joints_here = self.by_body[name] = []
            if fold is not None:
                self._folded(el, skeleton, fold, frame, ns)
            self.bodies.append(MjcfBody(name, skeleton.name, body.name, frame))
            if not static:
                self._joint(el, skeleton, joint, ns)
            moves[body.name] = bool(self.joints_here) or (
                top.parent is not None and moves[top.parent])
            self.body_moves = moves[body.name]
            bound = None if plan is None else plan.bounds.get(body.name)
            self._inertial(el, body, frame, bound, negligible)
            self._shapes(el, skeleton, body, frame, ns)
        if not static:
            self._mimics(skeleton, ns)

    def _folded(self, el: etree._Element, skeleton: Skeleton, fold: Fold, frame: Array,
                ns: str) -> None:
        """The bodies folded into MuJoCo body ``el``: their joints, then their entries.

        The joints go before the body's own, each placed as ``E^-1 M E``
        (:mod:`~skel_ros.model.mjcf_masses`); each folded body gets its :class:`MjcfBody`.
        """
        name = str(el.get("name"))
        for folded, offset in zip(fold.bodies, fold.offsets, strict=True):
            self.bodies.append(MjcfBody(name, skeleton.name, folded, frame,
                                        fold.below(skeleton, folded)))
            start = len(el)
            self._joint(el, skeleton, skeleton.joint(skeleton.body(folded).parent_joint), ns)
            for j in el[start:]:
                _place_joint(j, offset)

    def _bounded(self, body: Body, bound: Bound) -> Body:
        """``body`` with the mass and inertia a bound adds (:mod:`~skel_ros.model.mjcf_masses`)."""
        self._warn(bound.message, body.location)
        return dataclasses.replace(body, inertia=bound.inertia)

    def _inertial(self, el: etree._Element, body: Body, frame: Array,
                  bound: Bound | None = None, negligible: float = 0.0) -> None:
        """``body``'s ``<inertial>``, with what ``bound`` adds to it.

        A body of mass <= ``negligible`` whose moment of inertia no rigid body can have is
        written as a point mass, with a warning (unless bounded: then the bound's); a
        heavier one is refused.
        """
        if bound is not None:
            body, negligible = self._bounded(body, bound), 0.0
        to_mj = inverse(frame)
        com = to_mj[:3, :3] @ np.asarray(body.inertia.com) + to_mj[:3, 3]
        principal = np.linalg.eigvalsh(np.asarray(body.inertia.moment, dtype=float))
        # MuJoCo compiles only inertias a rigid body can have: positive principal moments,
        # none larger than the sum of the other two (its own tolerance, mjEPS = 1e-14).
        valid = principal[0] > 0.0 and principal[0] + principal[1] >= principal[2] - 1e-14
        if np.any(body.inertia.moment) and not valid and body.inertia.mass <= negligible:
            self._warn(f"body {body.name!r}: its moment of inertia (principal moments"
                       f" {_vec(principal)}) is not one a rigid body can have, and MuJoCo"
                       f" refuses it; with a mass of {body.inertia.mass:g} kg (at most"
                       f" {MASS_BOUND_RATIO:g} of its skeleton's) it is written as a point"
                       " mass", body.location)
            body = dataclasses.replace(body, inertia=dataclasses.replace(
                body.inertia, moment=np.zeros((3, 3))))
        if not np.any(body.inertia.moment):
            # A point mass, or nothing: MuJoCo takes it (a moving body needs a body welded
            # to it with inertia: mjcf_masses folds or bounds the others).
            etree.SubElement(el, "inertial", pos=_vec(com), mass=_num(body.inertia.mass),
                             diaginertia="0 0 0")
            return
        if not valid:
            raise ExportError(
                f"body {body.name!r}: its moment of inertia (principal moments"
                f" {_vec(principal)}) is not one a rigid body can have, and MuJoCo refuses it",
                body.location, hint="give the body a positive-definite inertia whose"
                " principal moments satisfy the triangle inequality (each at most the sum of"
                " the other two)")
        rot = to_mj[:3, :3]
        moment = rot @ np.asarray(body.inertia.moment) @ rot.T
        m = moment
        etree.SubElement(el, "inertial", pos=_vec(com), mass=_num(body.inertia.mass),
                         fullinertia=_vec((m[0, 0], m[1, 1], m[2, 2],
                                           m[0, 1], m[0, 2], m[1, 2])))

    # -- joints -----------------------------------------------------------------------
    def _joint(self, el: etree._Element, skeleton: Skeleton, joint: Joint, ns: str) -> None:
        t = joint.type
        dofs = [skeleton.dofs[joint.first_dof + k] for k in range(joint.num_dofs)]
        if t is JointType.WELD:
            return
        if joint.actuator is ActuatorType.LOCKED and t in (JointType.BALL, JointType.FREE):
            raise ExportError(f"locked {t.value} joint {joint.name!r}: the MJCF export locks"
                              " hinges and slides only", joint.location)
        if t is JointType.BALL:
            self._multi_dof(joint, dofs, "ball")
            name = self._claim("joint", f"{ns}{joint.name}", joint.location)
            j = etree.SubElement(el, "joint", name=name, type="ball")
            self._dynamics(j, dofs[0])
            self.joints_here.append(MjcfJoint(name, "ball", skeleton.name, joint.name,
                                         tuple(range(joint.first_dof, joint.first_dof + 3))))
            return
        if t is JointType.FREE and joint.parent is None:
            self._multi_dof(joint, dofs, "free")
            name = self._claim("joint", f"{ns}{joint.name}", joint.location)
            j = etree.SubElement(el, "joint", name=name, type="free")
            self._dynamics(j, dofs[0])
            six = tuple(range(joint.first_dof, joint.first_dof + 6))
            self.joints_here.append(MjcfJoint(name, "free", skeleton.name, joint.name, six,
                                              free=_free_frames(joint, six)))
            return
        if t is JointType.FREE:
            # MuJoCo allows free joints only at the top: three slides along the joint frame's
            # axes (DART's translation comes first), then a ball. Same motion.
            self._multi_dof(joint, dofs, "free")
            six = tuple(range(joint.first_dof, joint.first_dof + 6))
            for k in range(3):
                dof = dofs[3 + k]
                axis = tuple(float(k == i) for i in range(3))
                self._single(el, skeleton, joint, kind="slide", axis=axis, dof=dof,
                             name=f"{ns}{dof.name}", free=_free_frames(joint, six))
            name = self._claim("joint", f"{ns}{joint.name}", joint.location)
            j = etree.SubElement(el, "joint", name=name, type="ball")
            self._dynamics(j, dofs[0])
            self.joints_here.append(MjcfJoint(name, "ball", skeleton.name, joint.name, six[:3],
                                              free=_free_frames(joint, six)))
            return
        for motion in joint_chain(joint):
            dof = dofs[motion.dof]
            kind = "hinge" if motion.kind == "revolute" else "slide"
            if motion.screw_pitch is None:
                self._single(el, skeleton, joint, kind=kind, axis=motion.axis, dof=dof,
                             name=f"{ns}{dof.name}")
                continue
            # A screw's translation: a slide bound to the hinge (the DOF) by an equality.
            scale = motion.screw_pitch / (2.0 * math.pi)
            name = self._claim("joint", f"{ns}{dof.name}/screw_translation", joint.location)
            etree.SubElement(el, "joint", name=name, type="slide", axis=_vec(motion.axis))
            self.joints_here.append(MjcfJoint(name, "slide", skeleton.name, joint.name,
                                         (joint.first_dof + motion.dof,), scale=scale))
            eq = self._section("equality")
            etree.SubElement(eq, "joint", joint1=name, joint2=f"{ns}{dof.name}",
                             polycoef=_vec((0.0, scale, 0.0, 0.0, 0.0)))

    def _mimics(self, skeleton: Skeleton, ns: str) -> None:
        """Each follower as a joint equality ``follower = offset + multiplier * leader``.

        ``solref`` is the stiffest MuJoCo integrates stably at the world's time step
        (time constant 2 dt, critically damped) and ``solimp`` leaves almost none of the
        constraint soft, so the follower tracks its leader instead of lagging on a spring
        of MuJoCo's default 0.02 s (docs/mujoco.md, "Mimic joints"). It is a constraint,
        not a controller: the follower takes no command and adds no stiffness to the
        leader's own drive. The follower's position range moves to its leader
        (:func:`~skel_ros.model.mimic.leader_bounds`), so no limit fights the equality.
        """
        pairs = couplings(skeleton)
        if pairs:
            # A follower's own range would fight the equality: its limits bound the leader.
            joints = {str(j.get("name")): j for j in self.root.iter("joint")}
            for dof, mimic in pairs:
                joints[f"{ns}{dof.name}"].attrib.pop("range", None)
                lower, upper = leader_bounds(skeleton, mimic.leader)
                if math.isfinite(lower) and math.isfinite(upper):
                    joints[f"{ns}{mimic.leader}"].set("range", _vec((lower, upper)))
        for dof, mimic in pairs:
            etree.SubElement(
                self._section("equality"), "joint", name=f"{ns}{dof.name}/mimic",
                joint1=f"{ns}{dof.name}", joint2=f"{ns}{mimic.leader}",
                polycoef=_vec((mimic.offset, mimic.multiplier, 0.0, 0.0, 0.0)),
                solref=_vec((MIMIC_TIMECONST_STEPS * self.world.time_step, 1.0)),
                solimp=_vec(MIMIC_SOLIMP))

    def _section(self, tag: str) -> etree._Element:
        if tag == "equality":
            if self.equality is None:
                self.equality = etree.Element("equality")
            return self.equality
        if self.contact is None:
            self.contact = etree.Element("contact")
        return self.contact

    def _single(self, el: etree._Element, skeleton: Skeleton, joint: Joint, *,
                kind: str, axis: Sequence[float], dof: Dof, name: str,
                free: FreeFrames | None = None) -> None:
        name = self._claim("joint", name, joint.location)
        j = etree.SubElement(el, "joint", name=name, type=kind, axis=_vec(axis))
        lo, hi = dof.position_lower, dof.position_upper
        if math.isfinite(lo) and math.isfinite(hi):
            j.set("range", _vec((lo, hi)))
        elif math.isfinite(lo) or math.isfinite(hi):
            raise ExportError(
                f"DOF {dof.name!r} has a one-sided position limit ({lo}, {hi}); an MJCF range"
                " has two finite ends", joint.location, hint="give both limits")
        self._dynamics(j, dof)
        if (skeleton.name, dof.name) in self.armature and free is None:
            j.set("armature", _num(self.armature[skeleton.name, dof.name]))
            self.armature_written.add((skeleton.name, dof.name))
        if math.isfinite(dof.force_lower) and math.isfinite(dof.force_upper):
            # Bounds whatever actuator drives the joint, as DART clamps its commands.
            j.set("actuatorfrcrange", _vec((dof.force_lower, dof.force_upper)))
        elif math.isfinite(dof.force_lower) or math.isfinite(dof.force_upper):
            self._warn(f"a one-sided force limit is not written (MJCF's actuatorfrcrange has"
                       f" two finite ends): DOF {dof.name!r}", joint.location,
                       kind="one-sided force limit")
        self.joints_here.append(MjcfJoint(name, kind, skeleton.name, joint.name,
                                     (skeleton.dof_index(dof.name),), free=free))
        if joint.actuator is ActuatorType.LOCKED:
            eq = self._section("equality")
            etree.SubElement(eq, "joint", joint1=name,
                             polycoef=_vec((dof.initial_position, 0.0, 0.0, 0.0, 0.0)))

    @staticmethod
    def _dynamics(j: etree._Element, dof: Dof) -> None:
        if dof.damping:
            j.set("damping", _num(dof.damping))
        if dof.spring_stiffness:
            j.set("stiffness", _num(dof.spring_stiffness))
            if dof.rest_position and j.get("type") in ("hinge", "slide"):
                j.set("springref", _num(dof.rest_position))
        if dof.coulomb_friction:
            j.set("frictionloss", _num(dof.coulomb_friction))

    @staticmethod
    def _multi_dof(joint: Joint, dofs: Sequence[Dof], kind: str) -> None:
        """Refuse what one MuJoCo ball / free joint cannot hold of DART's per-DOF values."""
        rotation = dofs[:3]
        for d in (dofs if kind == "free" else rotation):
            if math.isfinite(d.position_lower) or math.isfinite(d.position_upper):
                raise ExportError(
                    f"{kind} joint {joint.name!r} has position limits on {d.name!r}: DART limits"
                    " each coordinate of the rotation vector, MuJoCo a ball's cone angle",
                    joint.location, hint="remove the limits or use an euler joint")
        for attribute in ("damping", "coulomb_friction", "spring_stiffness"):
            if len({getattr(d, attribute) for d in dofs}) > 1:
                raise ExportError(
                    f"{kind} joint {joint.name!r} has different {attribute.replace('_', ' ')}"
                    f" per DOF; one MuJoCo {kind} joint has one value", joint.location)
        if any(d.spring_stiffness for d in dofs) and (
                kind == "free" or any(d.rest_position for d in rotation)):
            raise ExportError(
                f"{kind} joint {joint.name!r} has a spring MuJoCo cannot express (a free"
                " joint's, or a ball's with a rest position away from 0)", joint.location)

    # -- shapes -----------------------------------------------------------------------
    def _shapes(self, el: etree._Element, skeleton: Skeleton, body: Body, frame: Array,
                ns: str) -> None:
        to_mj = inverse(frame)
        contype, conaffinity = self.masks.get(skeleton.name, (0, 0))
        for shape in body.shapes:
            visual = shape.role is ShapeRole.VISUAL
            attrs: dict[str, str] = {"group": VISUAL_GROUP if visual else COLLISION_GROUP}
            if visual or not shape.collidable:
                attrs.update(contype="0", conaffinity="0")
            else:
                attrs.update(contype=str(contype), conaffinity=str(conaffinity))
            if visual and shape.color is not None:
                attrs["rgba"] = _vec(shape.color)
            pose = to_mj @ np.asarray(shape.transform, dtype=float)
            for geom_pose, geom in self._geoms(shape, ns):
                g = etree.SubElement(el, "geom",
                                     name=self._unique("geom", f"{ns}{shape.name}",
                                                       shape.location))
                g.attrib.update(geom)
                g.attrib.update(attrs)
                _pose(g, pose @ geom_pose)

    def _geoms(self, shape: Shape, ns: str) -> list[tuple[Array, dict[str, str]]]:  # noqa: PLR0911 - one return per geometry kind
        """(pose in the shape frame, attributes) of the geoms that stand for a shape."""
        g = shape.geometry
        collision = shape.role is ShapeRole.COLLISION
        eye = np.eye(4)
        primitive = _primitive(g)
        if primitive is not None:
            return [(eye, primitive)]
        if isinstance(g, MultiSphere):
            if collision and len(g.spheres) > 1:
                self._warn("multi_sphere written as its spheres: MuJoCo collides with their"
                           " union, DART with their convex hull", shape.location)
            return [(_translate(p), {"type": "sphere", "size": _num(r)}) for r, p in g.spheres]
        if isinstance(g, Plane):
            if self.body_moves:
                message = "MuJoCo allows planes only on bodies that never move"
                if collision and shape.collidable:
                    raise ExportError(f"plane on a moving body: {message}", shape.location,
                                      hint="use a thin box")
                self._warn(f"plane left out: {message}", shape.location)
                return []
            return [(_plane_pose(g), {"type": "plane", "size": "0 0 1"})]
        if isinstance(g, Cone):
            self._warn(f"cone written as a {CONE_SIDES}-sided pyramid (MuJoCo has no cone)",
                       shape.location)
            angles = np.arange(CONE_SIDES) * (2.0 * math.pi / CONE_SIDES)
            ring = [(g.radius * math.cos(a), g.radius * math.sin(a), -g.height / 2.0)
                    for a in angles]
            return [(eye, self._vertex_mesh(shape, ns, [*ring, (0.0, 0.0, g.height / 2.0)]))]
        if isinstance(g, Pyramid):
            w, d, h = g.base_width / 2.0, g.base_depth / 2.0, g.height / 2.0
            base = [(sx * w, sy * d, -h) for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
            return [(eye, self._vertex_mesh(shape, ns, [*base, (0.0, 0.0, h)]))]
        if isinstance(g, Mesh):
            return self._mesh(shape, g, ns)
        raise ExportError(f"no MJCF geom for a {g.kind} shape", shape.location)

    def _vertex_mesh(self, shape: Shape, ns: str,
                     vertices: Sequence[Sequence[float]]) -> dict[str, str]:
        name = self._unique("mesh", f"{ns}{shape.name}", shape.location)
        etree.SubElement(self.asset, "mesh", name=name,
                         vertex=_vec(v for p in vertices for v in p))
        return {"type": "mesh", "mesh": name}

    def _mesh(self, shape: Shape, g: Mesh, ns: str) -> list[tuple[Array, dict[str, str]]]:
        path = Path(g.file_name) if g.path is None else g.path
        unreadable = _unreadable_mesh(path)
        if unreadable is not None:
            if shape.role is ShapeRole.COLLISION and shape.collidable:
                raise ExportError(f"mesh {g.file_name!r}: {unreadable}; a collision shape"
                                  " cannot be left out", shape.location,
                                  hint="convert the mesh to binary STL or OBJ")
            self._warn(f"visual mesh left out ({unreadable}): {g.file_name!r}", shape.location,
                       kind=f"visual mesh left out ({unreadable})")
            return []
        if shape.role is ShapeRole.COLLISION and shape.collidable:
            self._warn("collision mesh: MuJoCo collides with its convex hull", shape.location)
        file = self._file(path)
        key = (file, _vec(g.scale))
        if key not in self.meshes:
            name = self._unique("mesh", f"{ns}{path.stem}", shape.location)
            m = etree.SubElement(self.asset, "mesh", name=name, file=file)
            if not np.array_equal(np.asarray(g.scale), np.ones(3)):
                m.set("scale", key[1])
            self.meshes[key] = name
        return [(np.eye(4), {"type": "mesh", "mesh": self.meshes[key]})]

    def _file(self, path: Path) -> str:
        if self.base_dir is None or not path.is_absolute():
            return str(path)
        try:
            return os.path.relpath(path, self.base_dir)
        except ValueError:  # another drive
            return str(path)


def _unreadable_mesh(path: Path) -> str | None:
    """Why MuJoCo cannot read the mesh file at ``path`` (None when it can, or it is absent).

    MuJoCo reads STL, OBJ and MSH files, and of STL only the binary form: an ASCII STL
    (``solid ...`` text, of a size no binary STL has) fails to compile.
    """
    if path.suffix.lower() not in MESH_SUFFIXES:
        return f"MuJoCo reads {', '.join(MESH_SUFFIXES)} meshes only"
    if path.suffix.lower() != ".stl":
        return None
    header = 84  # binary STL: an 80-byte header, the triangle count, 50 bytes a triangle
    try:
        with path.open("rb") as f:
            head = f.read(header)
        size = path.stat().st_size
    except OSError:  # a missing file: the reader has said so; MuJoCo will too
        return None
    binary_size = (header + 50 * int.from_bytes(head[80:header], "little")
                   if len(head) == header else -1)
    if head.lstrip().startswith(b"solid") and size != binary_size:
        return "an ASCII STL file; MuJoCo reads binary STL only"
    return None


def _primitive(g: Geometry) -> dict[str, str] | None:
    """The geom of a shape MuJoCo has as a primitive (None for the others)."""
    if isinstance(g, Sphere):
        return {"type": "sphere", "size": _num(g.radius)}
    if isinstance(g, Box):
        return {"type": "box", "size": _vec(np.asarray(g.size) / 2.0)}
    if isinstance(g, Ellipsoid):
        return {"type": "ellipsoid", "size": _vec(g.radii)}
    if isinstance(g, (Cylinder, Capsule)):  # DART's height is the cylinder's, caps apart
        return {"type": g.kind, "size": _vec((g.radius, g.height / 2.0))}
    return None


def _place_joint(j: etree._Element, offset: Array) -> None:
    """Move a hinge or slide written in its joint frame to a frame ``offset`` (``E``) away.

    In the body frame, ``E^-1 M E`` is a hinge about ``E^-1`` of the origin along
    ``R_E^T axis``, or a slide along ``R_E^T axis``. (Ball joints are never folded: their
    quaternion would turn in another frame.)
    """
    rot = np.asarray(offset, dtype=float)[:3, :3]
    axis = np.array(str(j.get("axis")).split(), dtype=float)
    j.set("axis", _vec(rot.T @ axis))
    if j.get("type") == "hinge":
        pos = -(rot.T @ np.asarray(offset, dtype=float)[:3, 3])
        if np.any(pos != 0.0):
            j.set("pos", _vec(pos))


def _free_frames(joint: Joint, dofs: tuple[int, ...]) -> FreeFrames:
    return FreeFrames(np.asarray(joint.T_parent_to_joint), np.asarray(joint.T_child_to_joint),
                      dofs)


def _plane_pose(g: Plane) -> Array:
    """MuJoCo's plane (z up through its origin) on ``normal . x = offset``."""
    n = np.asarray(g.normal, dtype=float)
    n = n / np.linalg.norm(n)
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, n)
    s, c = float(np.linalg.norm(axis)), float(np.dot(z, n))
    pose = np.eye(4)
    if s > 0.0:
        pose[:3, :3] = exp_rot(axis / s * math.atan2(s, c))
    elif c < 0.0:
        pose[:3, :3] = np.diag([1.0, -1.0, -1.0])
    pose[:3, 3] = n * g.offset
    return pose


def _checked_armature(world: World, armature: Mapping[tuple[str, str], float]
                      ) -> dict[tuple[str, str], float]:
    """``armature`` as a dict, every key a (skeleton, DOF) of ``world``, every value >= 0.

    Raises:
        ValueError: an unknown skeleton or DOF, or a value that is not a finite number >= 0.
    """
    dofs = {(s.name, d.name) for s in world.skeletons for d in s.dofs}
    out = {}
    for key, value in armature.items():
        if key not in dofs:
            raise ValueError(f"armature for {key!r}: {world.source} has no such (skeleton, DOF)")
        if isinstance(value, bool) or not math.isfinite(value) or value < 0.0:
            raise ValueError(f"armature of {key!r} must be a finite number >= 0, got {value!r}")
        if value:
            out[key] = float(value)
    return out


def _model_name(world: World) -> str:
    named = [s.name for s in world.skeletons if s.bodies]
    if len(named) == 1:
        return named[0]
    return Path(world.source).stem or "world"


def world_to_mjcf(world: World, *, base_dir: str | os.PathLike[str] | None = None,
                  armature: Mapping[tuple[str, str], float] | None = None) -> MjcfExport:
    """The MJCF document of a world, with its joint and body correspondence.

    Args:
        world: The world.
        base_dir: Directory the text will be saved in (mesh paths are written relative
            to it); None writes them as the model holds them.
        armature: (skeleton name, DOF name) -> rotor inertia at the DOF (kg m^2, kg for a
            slide), written as its joint's ``armature``: a value no SKEL or URDF file
            carries (``skel-ros identify`` measures it). Hinges and slides only.

    Returns:
        The export; ``.xml`` is the text, ``.warnings`` what was dropped or approximated.

    Raises:
        ExportError: The model holds something MJCF cannot express (a soft body, limits
            on a ball joint, an armature on a ball joint, ...), with the element's file:line.
        ValueError: An armature for a DOF the world does not have, or not a number >= 0.
    """
    base = None if base_dir is None else Path(os.fspath(base_dir)).resolve()
    writer = _Writer(world, base, armature)
    xml = writer.build()
    return MjcfExport(xml, tuple(writer.joints), tuple(writer.bodies), tuple(writer.warnings))


def write_mjcf(world: World, path: str | os.PathLike[str], *,
               armature: Mapping[tuple[str, str], float] | None = None) -> MjcfExport:
    """Write ``world`` as MJCF to ``path`` (mesh paths relative to its directory).

    ``armature``: as :func:`world_to_mjcf`'s. Nothing is written when the export fails.
    """
    out = Path(os.fspath(path))
    export = world_to_mjcf(world, base_dir=out.resolve().parent, armature=armature)
    out.write_text(export.xml, encoding="utf-8")
    return export
