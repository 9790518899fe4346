"""URDF export of the model, for robot_state_publisher and RViz.

The URDF has the same kinematics as the model: with the URDF joint positions
from :func:`urdf_joint_values`, URDF forward kinematics gives every body link
the world transform :class:`~skel_ros.model.kinematics.Kinematics` gives the
body.

Links and joints:

* One link per body, named as the body (with ``frame_prefix``), with the body's
  mass, centre of mass and moment of inertia. A root link (``world`` unless
  ``world_link`` says otherwise; it is the world frame itself, so it is not
  prefixed) carries the skeleton's root joints.
* weld -> ``fixed``; revolute -> ``revolute`` when both position limits are
  finite, else ``continuous``; prismatic -> ``prismatic``.
* Every other type becomes its chain of single-DOF motions (its entry of the
  joint-type table, :mod:`skel_ros.model.joint_types`, the chain the model's forward
  kinematics multiplies), one URDF joint each, through massless links named
  ``<dof>__link`` after the DOF whose motion they follow (no ``<inertial>``;
  :func:`urdf_chain_links` names them for each motion): a rotation is a ``revolute``
  (``continuous`` without finite limits or when its position is an Euler angle), a
  translation a ``prismatic``, and a screw's translation a ``prismatic`` ``<mimic>``
  of its rotation with multiplier pitch / 2 pi.
* The first URDF joint of a joint has the origin ``T_parent_to_joint``. When
  ``T_child_to_joint`` is not the identity, the last moving joint ends in a
  massless link, the joint frame, named after the child body
  ``<body>__joint_frame``, and a fixed joint ``<joint>__fixed`` with the origin
  ``T_child_to_joint^-1`` leads to the body, so link frames are body frames.
* Every link name is built from one model name (a body's or a DOF's, which are
  unique in a skeleton): never a joint's name and its DOF's, which are often the
  same.
* A URDF joint that carries a DOF is named as the DOF, so the names of
  ``sensor_msgs/JointState`` are the model's DOF names. Weld joints keep the
  joint name. Any name that would repeat gets ``(1)``, ``(2)``, ... appended.

Joint values: ball and free joints use exponential coordinates (a rotation
vector), which no fixed chain of revolute joints reproduces. Their three
revolute URDF joints therefore take the XYZ Euler angles (a, b, c with
R = Rx(a) Ry(b) Rz(c)) of the joint rotation; :func:`urdf_joint_values` does that
conversion (and is the identity for every other DOF). Position limits of these
DOFs are limits on rotation-vector components and cannot be carried over: the
URDF joints are ``continuous``.

Limits: ``<limit>`` takes the finite position limits, ``effort`` from the force
upper limit and ``velocity`` from the velocity upper limit. URDF requires numbers
where the model has none (infinite effort or velocity, and the bounds of a
prismatic joint): :data:`UNBOUNDED` is written and an XML comment says so.

Geometry: box, sphere, cylinder and mesh map to URDF directly (meshes as
``file://`` URIs of the resolved file, with the scale). Ellipsoid, capsule,
cone, pyramid and multi-sphere shapes (and soft ellipsoids) are tessellated into
binary STL files in ``mesh_dir`` (default :func:`default_mesh_dir`), named by a
hash of their content, so exporting the same model twice gives the same URDF.
A plane (infinite in DART) becomes a thin box of :data:`PLANE_SIZE` by
:data:`PLANE_SIZE` by :data:`PLANE_THICKNESS` whose top face is the plane. A soft
body's soft geometry becomes a visual and a collision element named
``<body>_SoftMeshShape`` (DART's shape-node name). No shape is ever dropped.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from skel_ros.model.kinematics import ChainMotion, joint_chain
from skel_ros.model.transforms import exp_rot, inverse
from skel_ros.model.transforms import matrix_to_euler_xyz as euler_xyz_angles
from skel_ros.model.types import (
    Array,
    Body,
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Geometry,
    Joint,
    Mesh,
    MultiSphere,
    Plane,
    Pyramid,
    Shape,
    ShapeRole,
    Skeleton,
    SoftShape,
    Sphere,
    World,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "DEFAULT_VISUAL_RGBA",
    "PLANE_SIZE",
    "PLANE_THICKNESS",
    "UNBOUNDED",
    "UrdfChainLink",
    "UrdfCoordinates",
    "UrdfExportError",
    "UrdfJoint",
    "UrdfValuePlan",
    "default_mesh_dir",
    "euler_coordinates",
    "euler_xyz_angles",
    "skeleton_namespace",
    "skeleton_to_urdf",
    "urdf_chain_links",
    "urdf_joint_map",
    "urdf_joint_values",
    "urdf_value_plan",
    "world_joint_values",
    "world_to_urdf",
]

UNBOUNDED = 1.0e9
"""Written where URDF requires a number but the model has no limit."""

PLANE_SIZE = 100.0
"""Edge length (m) of the box that stands for an infinite plane."""

PLANE_THICKNESS = 0.001
"""Thickness (m) of the box that stands for an infinite plane."""

DEFAULT_VISUAL_RGBA = (0.5, 0.5, 1.0, 1.0)
"""DART's colour for a visual shape that gives none (meshes keep their own)."""

_SLICES = 32  # multiple of 4: the tessellations reach the exact extent along x and y
_STACKS = 16  # even: an equator ring (exact extent of spheres along x and y)
_STL_HEADER = b"skel_ros tessellated shape (binary STL)".ljust(80, b" ")
_STL_DTYPE = np.dtype([("normal", "<f4", (3,)), ("vertices", "<f4", (3, 3)), ("attr", "<u2")])
_IDENTITY = np.eye(4)


class UrdfExportError(ValueError):
    """The model cannot be written as URDF (a name clash, an unwritable mesh directory)."""


class UrdfCoordinates(enum.Enum):
    """How a URDF joint position relates to the DOF position it carries."""

    SAME = "same"
    """The URDF joint position is the DOF position."""

    EULER_XYZ = "euler_xyz"
    """XYZ Euler angle of a ball / free joint's rotation (see :func:`euler_xyz_angles`)."""


@dataclass(frozen=True)
class UrdfJoint:
    """Which URDF joint carries one DOF of the model.

    Attributes:
        dof: The DOF name.
        dof_index: Index of the DOF in the skeleton.
        joint: Name of the model joint the DOF belongs to.
        urdf_joint: Name of the URDF joint carrying it.
        coordinates: Whether the URDF position is the DOF position or an Euler angle.
        mimic_joints: URDF joints that mimic ``urdf_joint`` (a screw's translation).
    """

    dof: str
    dof_index: int
    joint: str
    urdf_joint: str
    coordinates: UrdfCoordinates
    mimic_joints: tuple[str, ...] = ()


# --------------------------------------------------------------------------- public API


def skeleton_to_urdf(
    skeleton: Skeleton,
    *,
    robot_name: str | None = None,
    frame_prefix: str = "",
    joint_prefix: str = "",
    mesh_dir: str | os.PathLike[str] | None = None,
    world_link: str = "world",
) -> str:
    """URDF of one skeleton.

    Args:
        skeleton: The skeleton.
        robot_name: ``<robot name>``; default the skeleton name.
        frame_prefix: Put before every body and intermediate link name (not
            before ``world_link``).
        joint_prefix: Put before every URDF joint name (pass the same to
            :func:`urdf_joint_map` and :func:`urdf_joint_values`).
        mesh_dir: Directory for generated STL meshes (default
            :func:`default_mesh_dir`); created when a mesh is needed.
        world_link: Name of the root link, the world frame.

    Returns:
        The URDF document.

    Raises:
        UrdfExportError: A body link would be called ``world_link``, or a mesh
            cannot be written.
    """
    plan = _plan_skeleton(skeleton, frame_prefix, joint_prefix, world_link)
    writer = _Writer(
        robot_name if robot_name is not None else skeleton.name,
        f"skeleton {skeleton.name!r} of {skeleton.location.file}, exported by skel_ros",
        mesh_dir,
        world_link,
    )
    writer.skeleton(skeleton, plan)
    return writer.finish()


def world_to_urdf(
    world: World,
    *,
    skeleton: str | None = None,
    robot_name: str | None = None,
    frame_prefix: str = "",
    mesh_dir: str | os.PathLike[str] | None = None,
    world_link: str = "world",
) -> str:
    """URDF of one skeleton of ``world``, or of all its skeletons under one root link.

    With ``skeleton`` given this is :func:`skeleton_to_urdf` of that skeleton.
    Without it, every skeleton is exported under the one root link
    ``world_link`` (handy for RViz). When the world has several skeletons with
    bodies, names are kept apart by :func:`skeleton_namespace`: each skeleton's
    link names get ``frame_prefix + "<skeleton>/"`` and its joint names
    ``"<skeleton>/"`` in front, e.g. ``arm/link 1`` and ``arm/j1``; a world with
    one skeleton keeps the plain names. :func:`world_joint_values` gives the
    joint positions with the matching names.

    Args:
        world: The world.
        skeleton: Name of the one skeleton to export; None for all of them.
        robot_name: ``<robot name>``; default the skeleton name (the name of the world's
            one skeleton with bodies), else the stem of the world's source file.
        frame_prefix: Put before every link name (not before ``world_link``).
        mesh_dir: Directory for generated STL meshes (see :func:`skeleton_to_urdf`).
        world_link: Name of the root link, the world frame.

    Returns:
        The URDF document.

    Raises:
        UrdfExportError: No skeleton has that name, names of different
            skeletons clash, or a mesh cannot be written.
    """
    if skeleton is not None:
        try:
            skel = world.skeleton(skeleton)
        except KeyError:
            names = ", ".join(repr(s.name) for s in world.skeletons) or "none"
            raise UrdfExportError(
                f"{world.source}: no skeleton named {skeleton!r} (skeletons: {names})"
            ) from None
        return skeleton_to_urdf(
            skel,
            robot_name=robot_name,
            frame_prefix=frame_prefix,
            mesh_dir=mesh_dir,
            world_link=world_link,
        )
    if robot_name is None:  # the robot's own name where the world holds one robot
        robots = [s for s in world.skeletons if s.bodies]
        robot_name = robots[0].name if len(robots) == 1 else Path(world.source).stem or "world"
    plans = [
        (
            skel,
            _plan_skeleton(
                skel,
                frame_prefix + skeleton_namespace(world, skel),
                skeleton_namespace(world, skel),
                world_link,
            ),
        )
        for skel in world.skeletons
    ]
    _check_disjoint(world, plans, world_link)
    header = f"world {world.source}, exported by skel_ros"
    writer = _Writer(robot_name, header, mesh_dir, world_link)
    for skel, plan in plans:
        writer.skeleton(skel, plan)
    return writer.finish()


def skeleton_namespace(world: World, skeleton: Skeleton) -> str:
    """The prefix ``world_to_urdf(world)`` puts before the joint (and link) names of ``skeleton``.

    Args:
        world: The world.
        skeleton: One of its skeletons.

    Returns:
        ``""`` when at most one skeleton of the world has bodies, else
        ``"<skeleton name>/"``.
    """
    if sum(1 for s in world.skeletons if s.bodies) <= 1:
        return ""
    return f"{skeleton.name}/"


def world_joint_values(
    world: World, positions: Mapping[str, Sequence[float] | Array] | None = None
) -> dict[str, float]:
    """URDF joint positions for ``world_to_urdf(world)`` (all skeletons).

    Args:
        world: The world.
        positions: Skeleton name -> DOF positions; a skeleton left out is at its
            initial positions.

    Returns:
        URDF joint name -> position, for every non-fixed joint.

    Raises:
        ValueError: Positions of the wrong length.
    """
    positions = positions or {}
    out: dict[str, float] = {}
    for skel in world.skeletons:
        out.update(
            urdf_joint_values(
                skel, positions.get(skel.name), joint_prefix=skeleton_namespace(world, skel)
            )
        )
    return out


def urdf_joint_map(skeleton: Skeleton, *, joint_prefix: str = "") -> list[UrdfJoint]:
    """For every DOF of ``skeleton`` (in DOF order), the URDF joint that carries it.

    Args:
        skeleton: The skeleton.
        joint_prefix: The ``joint_prefix`` the URDF was written with.

    Returns:
        One entry per DOF.
    """
    return list(_joint_plan(skeleton, joint_prefix).joint_map)


def urdf_joint_values(
    skeleton: Skeleton, q: Sequence[float] | Array | None = None, *, joint_prefix: str = ""
) -> dict[str, float]:
    """URDF joint positions for DOF positions ``q``: every non-fixed URDF joint.

    DOFs of ball and free joints turn into XYZ Euler angles of the joint
    rotation; a screw's mimic joint gets its position too (pitch / 2 pi times the
    rotation); every other URDF joint position is its DOF position.

    Args:
        skeleton: The skeleton.
        q: DOF positions in DOF order (default: the initial positions).
        joint_prefix: The ``joint_prefix`` the URDF was written with.

    Returns:
        URDF joint name -> position (the order of :func:`urdf_value_plan`).

    Raises:
        ValueError: ``q`` does not have one entry per DOF.
    """
    positions = np.asarray(skeleton.initial_positions if q is None else q, dtype=float).reshape(-1)
    if positions.shape[0] != skeleton.num_dofs:
        raise ValueError(
            f"skeleton {skeleton.name!r} has {skeleton.num_dofs} DOFs, got {positions.shape[0]}"
            " positions"
        )
    plan = urdf_value_plan(skeleton, joint_prefix=joint_prefix)
    values = euler_coordinates(positions, plan.euler_starts)
    triples = zip(plan.names, plan.dofs, plan.multipliers, strict=True)
    return {name: values[i] * m for name, i, m in triples}


@dataclass(frozen=True)
class UrdfValuePlan:
    """How :func:`urdf_joint_values` gets every URDF joint position from the DOF positions.

    The position of URDF joint ``names[k]`` is ``c[dofs[k]] * multipliers[k]``,
    where ``c`` is the DOF positions with each ball / free joint's rotation vector
    (the three DOFs from each of ``euler_starts``) replaced by its XYZ Euler angles
    (:func:`euler_coordinates`). The multiplier is 1 but for a screw's mimic joint.
    Lets callers evaluate many configurations with array operations.
    """

    names: tuple[str, ...]
    dofs: tuple[int, ...]
    multipliers: tuple[float, ...]
    euler_starts: tuple[int, ...]


@functools.lru_cache(maxsize=64)
def urdf_value_plan(skeleton: Skeleton, *, joint_prefix: str = "") -> UrdfValuePlan:
    """The :class:`UrdfValuePlan` of ``skeleton`` exported with ``joint_prefix``."""
    plan = _joint_plan(skeleton, joint_prefix)
    names = [e.urdf_joint for e in plan.joint_map]
    dofs = [e.dof_index for e in plan.joint_map]
    multipliers = [1.0] * len(names)
    index = {name: k for k, name in enumerate(names)}
    for name, (source, multiplier) in plan.mimics.items():
        names.append(name)
        dofs.append(dofs[index[source]])
        multipliers.append(multiplier)
    starts = tuple(j.first_dof for j in skeleton.joints if j.type.spec.rotation_vector)
    return UrdfValuePlan(tuple(names), tuple(dofs), tuple(multipliers), starts)


@dataclass(frozen=True)
class UrdfChainLink:
    """The URDF joint and link written for one chain motion of the model.

    Attributes:
        joint: Index of the model joint in ``skeleton.joints``.
        index: Position of the motion in the joint's chain
            (:func:`~skel_ros.model.kinematics.joint_chain`); the URDF joint's transform
            is :attr:`~skel_ros.model.kinematics.LocalFrames.links` of that motion.
        urdf_joint: Name of the URDF joint.
        parent_link: The link before it: the parent body's (or the root link) for a
            joint's first motion, the previous motion's link otherwise.
        link: The link after it: a massless intermediate link, or the child body's.
        intermediate: Whether ``link`` is an intermediate link (not a body's).
    """

    joint: int
    index: int
    urdf_joint: str
    parent_link: str
    link: str
    intermediate: bool


def urdf_chain_links(
    skeleton: Skeleton, *, link_prefix: str = "", joint_prefix: str = "", world_link: str = "world"
) -> tuple[UrdfChainLink, ...]:
    """Every chain motion's URDF joint and links, in the order of ``Kinematics.links``.

    Args:
        skeleton: The skeleton.
        link_prefix: What the URDF puts before the skeleton's link names (the
            ``frame_prefix`` of :func:`skeleton_to_urdf`; with :func:`world_to_urdf`,
            ``frame_prefix + skeleton_namespace(world, skeleton)``).
        joint_prefix: What it puts before its joint names.
        world_link: The root link's name.
    """
    plan = _plan_skeleton(skeleton, link_prefix, joint_prefix, world_link, check_world=False)
    out = []
    for j, (ulinks, ujoints) in enumerate(plan.parts):
        body_link = ulinks[-1].name
        moving = [uj for uj in ujoints if uj.motion is not None]
        out += [UrdfChainLink(j, k, uj.name, uj.parent, uj.child, uj.child != body_link)
                for k, uj in enumerate(moving)]
    return tuple(out)


def euler_coordinates(
    positions: Sequence[float] | Array, euler_starts: Sequence[int]
) -> list[float]:
    """``positions`` with the rotation vector at each of ``euler_starts`` as XYZ Euler angles."""
    q = np.asarray(positions, dtype=float).reshape(-1)
    values: list[float] = q.tolist()
    for start in euler_starts:
        values[start : start + 3] = euler_xyz_angles(exp_rot(q[start : start + 3]))
    return values


def default_mesh_dir() -> Path:
    """``$XDG_CACHE_HOME/skel_ros/meshes``, or ``~/.cache/skel_ros/meshes``."""
    cache = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(cache) if cache and Path(cache).is_absolute() else Path.home() / ".cache"
    return base / "skel_ros" / "meshes"


# --------------------------------------------------------------------------- planning


@dataclass(frozen=True)
class _UJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: Array
    joint: Joint
    motion: ChainMotion | None = None
    mimic_of: str | None = None


@dataclass(frozen=True)
class _ULink:
    name: str
    body: Body | None


@dataclass(frozen=True)
class _Plan:
    # Per model joint: the links and joints it contributes (the body link last).
    parts: tuple[tuple[tuple[_ULink, ...], tuple[_UJoint, ...]], ...]
    joint_map: tuple[UrdfJoint, ...]
    mimics: dict[str, tuple[str, float]]


class _Names:
    """Hands out names, appending ``(1)``, ``(2)``... to one already taken."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self._taken = set(taken)

    def take(self, base: str) -> str:
        name, k = base, 0
        while name in self._taken:
            k += 1
            name = f"{base}({k})"
        self._taken.add(name)
        return name


@functools.lru_cache(maxsize=64)
def _joint_plan(skel: Skeleton, joint_prefix: str) -> _Plan:
    """The plan for joint names only (they never depend on link names)."""
    return _plan_skeleton(skel, "", joint_prefix, "world", check_world=False)


def _plan_skeleton(
    skel: Skeleton,
    link_prefix: str,
    joint_prefix: str,
    world_link: str,
    *,
    check_world: bool = True,
) -> _Plan:
    for body in skel.bodies if check_world else ():
        if link_prefix + body.name == world_link:
            raise UrdfExportError(
                f"{skel.location}: body {body.name!r} would be the link {world_link!r}, the name"
                " of the root link; pass another world_link or a frame_prefix"
            )
    links = _Names([world_link, *(link_prefix + b.name for b in skel.bodies)])
    # DOF names first: they are what joint_states carry.
    joints = _Names(joint_prefix + d.name for d in skel.dofs)
    weld_names = {j.name: joints.take(joint_prefix + j.name) for j in skel.joints if not j.dofs}
    parts: list[tuple[tuple[_ULink, ...], tuple[_UJoint, ...]]] = []
    joint_map: list[UrdfJoint] = []
    mimics: dict[str, tuple[str, float]] = {}
    for joint in skel.joints:
        body_link = _ULink(link_prefix + joint.child, skel.body(joint.child))
        parent = world_link if joint.parent is None else link_prefix + joint.parent
        t_parent = np.asarray(joint.T_parent_to_joint)
        t_child = np.asarray(joint.T_child_to_joint)
        motions = joint_chain(joint)
        if not motions:
            fixed = _UJoint(
                weld_names[joint.name],
                "fixed",
                parent,
                body_link.name,
                t_parent @ inverse(t_child),
                joint,
            )
            parts.append(((body_link,), (fixed,)))
            continue
        closing = not np.array_equal(t_child, _IDENTITY)
        ulinks: list[_ULink] = []
        ujoints: list[_UJoint] = []
        dof_joint: dict[int, str] = {}
        for k, motion in enumerate(motions):
            dof_name = joint.dofs[motion.dof]
            last = k == len(motions) - 1
            if last and not closing:
                child = body_link.name
            else:
                child = links.take(
                    link_prefix + _intermediate_link(joint, dof_name, motion, last=last))
                ulinks.append(_ULink(child, None))
            if motion.screw_pitch is None:
                name = joint_prefix + dof_name
                mimic_of = None
                dof_joint[motion.dof] = name
            else:
                name = joints.take(f"{joint_prefix}{dof_name}__screw_translation")
                mimic_of = dof_joint[motion.dof]
                mimics[name] = (mimic_of, motion.screw_pitch / (2.0 * math.pi))
            origin = t_parent if k == 0 else _IDENTITY
            ujoints.append(
                _UJoint(name, motion.kind, parent, child, origin, joint, motion, mimic_of)
            )
            parent = child
        if closing:
            ujoints.append(
                _UJoint(
                    joints.take(f"{joint_prefix}{joint.name}__fixed"),
                    "fixed",
                    parent,
                    body_link.name,
                    inverse(t_child),
                    joint,
                )
            )
        parts.append(((*ulinks, body_link), tuple(ujoints)))
        euler = {m.dof for m in motions if m.euler}
        for i, dof_name in enumerate(joint.dofs):
            urdf_name = dof_joint[i]
            joint_map.append(
                UrdfJoint(
                    dof=dof_name,
                    dof_index=joint.first_dof + i,
                    joint=joint.name,
                    urdf_joint=urdf_name,
                    coordinates=UrdfCoordinates.EULER_XYZ if i in euler else UrdfCoordinates.SAME,
                    mimic_joints=tuple(n for n, (src, _) in mimics.items() if src == urdf_name),
                )
            )
    joint_map.sort(key=lambda e: e.dof_index)
    return _Plan(tuple(parts), tuple(joint_map), mimics)


def _intermediate_link(joint: Joint, dof_name: str, motion: ChainMotion, *, last: bool) -> str:
    """The name of the massless link after ``motion`` of ``joint`` (before any prefix).

    After the last motion it is the joint frame, fixed in the child body:
    ``<body>__joint_frame``. Between the motions of a multi-DOF joint it is named after
    the DOF that moved it: ``<dof>__link`` (``<dof>__translation__link`` after a screw's
    translation). Each name holds one model name (the joint's name is often its DOF's).
    """
    if last:
        return f"{joint.child}__joint_frame"
    suffix = "__translation__link" if motion.screw_pitch is not None else "__link"
    return f"{dof_name}{suffix}"


def _check_disjoint(world: World, plans: Sequence[tuple[Skeleton, _Plan]], world_link: str) -> None:
    seen_links: dict[str, str] = {world_link: ""}
    seen_joints: dict[str, str] = {}
    for skel, plan in plans:
        for ulinks, ujoints in plan.parts:
            for kind, seen, names in (
                ("link", seen_links, [lk.name for lk in ulinks]),
                ("joint", seen_joints, [uj.name for uj in ujoints]),
            ):
                for name in names:
                    if name in seen:
                        other = f"skeleton {seen[name]!r}" if seen[name] else "the root link"
                        raise UrdfExportError(
                            f"{world.source}: {kind} name {name!r} of skeleton {skel.name!r}"
                            f" clashes with {other}; export the skeletons one by one"
                        )
                    seen[name] = skel.name


# --------------------------------------------------------------------------- writing


def _num(x: float) -> str:
    return repr(float(x) + 0.0)  # + 0.0 turns -0.0 into 0.0


def _vec(values: Iterable[float]) -> str:
    return " ".join(_num(v) for v in values)


def _rpy(rot: Array) -> tuple[float, float, float]:
    # URDF: R = Rz(yaw) Ry(pitch) Rx(roll), so R^T = Rx(-roll) Ry(-pitch) Rz(-yaw).
    a, b, c = euler_xyz_angles(np.asarray(rot).T)
    return -a, -b, -c


def _safe_comment(text: str) -> str:
    # XML comments may not contain "--" nor end in "-".
    text = text.replace("--", "- -")
    return text + " " if text.endswith("-") else text


class _Writer:
    """Builds the ``<robot>`` element."""

    def __init__(
        self,
        robot_name: str,
        header: str,
        mesh_dir: str | os.PathLike[str] | None,
        world_link: str,
    ) -> None:
        self.robot = etree.Element("robot", name=robot_name)
        self.robot.append(etree.Comment(_safe_comment(f" {header} ")))
        self._mesh_dir = Path(mesh_dir) if mesh_dir is not None else None
        self._materials = _Names()
        self._mesh_cache: dict[bytes, str] = {}
        etree.SubElement(self.robot, "link", name=world_link)

    def finish(self) -> str:
        body: str = etree.tostring(self.robot, pretty_print=True, encoding="unicode")
        return '<?xml version="1.0"?>\n' + body

    # ---------------------------------------------------------------- structure

    def skeleton(self, skel: Skeleton, plan: _Plan) -> None:
        for ulinks, ujoints in plan.parts:
            for ulink in ulinks:
                self._link(ulink)
            for ujoint in ujoints:
                self._joint(skel, ujoint)

    def _link(self, ulink: _ULink) -> None:
        el = etree.SubElement(self.robot, "link", name=ulink.name)
        body = ulink.body
        if body is None:
            return
        inertial = etree.SubElement(el, "inertial")
        etree.SubElement(inertial, "origin", xyz=_vec(body.inertia.com), rpy="0.0 0.0 0.0")
        etree.SubElement(inertial, "mass", value=_num(body.inertia.mass))
        m = np.asarray(body.inertia.moment)
        etree.SubElement(
            inertial,
            "inertia",
            ixx=_num(m[0, 0]),
            ixy=_num(m[0, 1]),
            ixz=_num(m[0, 2]),
            iyy=_num(m[1, 1]),
            iyz=_num(m[1, 2]),
            izz=_num(m[2, 2]),
        )
        for shape in body.shapes:
            self._shape(el, ulink.name, shape)
        if body.soft is not None:
            for role in (ShapeRole.VISUAL, ShapeRole.COLLISION):
                self._soft_shape(el, ulink.name, body, body.soft, role)

    def _joint(self, skel: Skeleton, uj: _UJoint) -> None:
        el = etree.SubElement(self.robot, "joint", name=uj.name, type=uj.type)
        motion = uj.motion
        if uj.type != "fixed" and motion is not None:
            kind = "continuous"
            if motion.kind == "prismatic":
                kind = "prismatic"
            elif not motion.euler:
                dof = skel.dof(uj.joint.dofs[motion.dof])
                if math.isfinite(dof.position_lower) and math.isfinite(dof.position_upper):
                    kind = "revolute"
            el.set("type", kind)
        etree.SubElement(el, "parent", link=uj.parent)
        etree.SubElement(el, "child", link=uj.child)
        self._origin(el, uj.origin)
        if motion is None:
            return
        etree.SubElement(el, "axis", xyz=_vec(motion.axis))
        dof = skel.dof(uj.joint.dofs[motion.dof])
        scale = 1.0
        if uj.mimic_of is not None and motion.screw_pitch is not None:
            scale = motion.screw_pitch / (2.0 * math.pi)
            etree.SubElement(el, "mimic", joint=uj.mimic_of, multiplier=_num(scale), offset="0.0")
        elif dof.mimic is not None:  # a follower of the model: URDF's own notion
            leader = uj.name[: len(uj.name) - len(dof.name)] + dof.mimic.leader
            etree.SubElement(el, "mimic", joint=leader, multiplier=_num(dof.mimic.multiplier),
                             offset=_num(dof.mimic.offset))
        self._limit(
            el,
            el.get("type", ""),
            (dof.position_lower * scale, dof.position_upper * scale),
            effort=dof.force_upper if scale == 1.0 else math.inf,
            velocity=dof.velocity_upper * abs(scale),
            euler=motion.euler,
        )
        if uj.mimic_of is None and (dof.damping != 0.0 or dof.coulomb_friction != 0.0):
            etree.SubElement(
                el, "dynamics", damping=_num(dof.damping), friction=_num(dof.coulomb_friction)
            )

    @staticmethod
    def _limit(
        el: etree._Element,
        kind: str,
        position: tuple[float, float],
        *,
        effort: float,
        velocity: float,
        euler: bool,
    ) -> None:
        notes = []
        attrs: dict[str, str] = {}
        if kind in ("revolute", "prismatic"):
            lo, hi = min(position), max(position)  # a negative mimic multiplier swaps them
            if not math.isfinite(lo):
                notes.append("lower")
                lo = -UNBOUNDED
            if not math.isfinite(hi):
                notes.append("upper")
                hi = UNBOUNDED
            attrs["lower"], attrs["upper"] = _num(lo), _num(hi)
        if math.isfinite(effort):
            attrs["effort"] = _num(abs(effort))
        else:
            notes.append("effort")
            attrs["effort"] = _num(UNBOUNDED)
        if math.isfinite(velocity):
            attrs["velocity"] = _num(abs(velocity))
        else:
            notes.append("velocity")
            attrs["velocity"] = _num(UNBOUNDED)
        if euler:
            el.append(
                etree.Comment(
                    " position is an XYZ Euler angle of the ball/free joint rotation (see"
                    " skel_ros.model.urdf.urdf_joint_values); its rotation-vector limits"
                    " do not apply "
                )
            )
        if notes:
            el.append(
                etree.Comment(
                    f" no {', '.join(notes)} limit in the model: {UNBOUNDED:g} written because URDF"
                    " requires a number "
                )
            )
        etree.SubElement(el, "limit", attrib=attrs)

    @staticmethod
    def _origin(el: etree._Element, transform: Array) -> None:
        t = np.asarray(transform)
        etree.SubElement(el, "origin", xyz=_vec(t[:3, 3]), rpy=_vec(_rpy(t[:3, :3])))

    # ---------------------------------------------------------------- shapes

    def _shape(self, link_el: etree._Element, link: str, shape: Shape) -> None:
        tag = "visual" if shape.role is ShapeRole.VISUAL else "collision"
        el = etree.SubElement(link_el, tag, name=shape.name)
        transform = np.asarray(shape.transform)
        geometry = shape.geometry
        if isinstance(geometry, Plane):
            el.append(
                etree.Comment(
                    _safe_comment(
                        f" infinite plane (normal {_vec(geometry.normal)},"
                        f" offset {_num(geometry.offset)}) drawn as a {PLANE_SIZE:g} m x"
                        f" {PLANE_SIZE:g} m x {PLANE_THICKNESS:g} m box whose top face is"
                        " the plane "
                    )
                )
            )
            transform = transform @ _plane_box_pose(geometry)
        if shape.role is ShapeRole.COLLISION and not shape.collidable:
            el.append(etree.Comment(" not collidable in the model (collidable 0) "))
        self._origin(el, transform)
        self._geometry(etree.SubElement(el, "geometry"), geometry)
        if shape.role is ShapeRole.VISUAL:
            if shape.color is not None:
                given = [float(c) for c in shape.color]
                self._material(el, link, [*given, 1.0, 1.0, 1.0, 1.0][:4])  # RGB: opaque
            elif not isinstance(geometry, Mesh):
                self._material(el, link, DEFAULT_VISUAL_RGBA)

    def _soft_shape(
        self, link_el: etree._Element, link: str, body: Body, soft: SoftShape, role: ShapeRole
    ) -> None:
        el = etree.SubElement(link_el, role.value, name=f"{body.name}_SoftMeshShape")
        el.append(
            etree.Comment(
                f" soft body ({soft.kind}): its rest shape; DART deforms it during simulation "
            )
        )
        geometry: Geometry
        transform = _IDENTITY
        if soft.kind == "box":
            geometry = Box(soft.size)
            transform = np.asarray(soft.transform)  # DART uses the transformation for boxes only
        elif soft.kind == "sphere":
            geometry = Sphere(soft.radius)
        elif soft.kind == "ellipsoid":
            geometry = Ellipsoid(soft.size)
        else:
            geometry = Cylinder(soft.radius, soft.height)
        self._origin(el, transform)
        self._geometry(etree.SubElement(el, "geometry"), geometry)
        if role is ShapeRole.VISUAL:
            self._material(el, link, DEFAULT_VISUAL_RGBA)

    def _material(self, el: etree._Element, link: str, rgba: Sequence[float]) -> None:
        name = self._materials.take(f"{link}__material")
        mat = etree.SubElement(el, "material", name=name)
        etree.SubElement(mat, "color", rgba=_vec(rgba))

    def _geometry(self, el: etree._Element, geometry: Geometry) -> None:
        if isinstance(geometry, Sphere):
            etree.SubElement(el, "sphere", radius=_num(geometry.radius))
        elif isinstance(geometry, Box):
            etree.SubElement(el, "box", size=_vec(geometry.size))
        elif isinstance(geometry, Cylinder):
            etree.SubElement(
                el, "cylinder", radius=_num(geometry.radius), length=_num(geometry.height)
            )
        elif isinstance(geometry, Plane):
            etree.SubElement(el, "box", size=_vec((PLANE_SIZE, PLANE_SIZE, PLANE_THICKNESS)))
        elif isinstance(geometry, Mesh):
            if geometry.path is not None:
                filename = Path(geometry.path).resolve().as_uri()
            else:
                el.addprevious(
                    etree.Comment(
                        " mesh file could not be resolved (model read from a string): the name is"
                        " written as in the SKEL file "
                    )
                )
                filename = geometry.file_name
            etree.SubElement(el, "mesh", filename=filename, scale=_vec(geometry.scale))
        else:
            vertices, faces = _tessellate(geometry)
            etree.SubElement(el, "mesh", filename=self._stl(geometry.kind, vertices, faces))

    def _stl(self, kind: str, vertices: Array, faces: Array) -> str:
        data = _stl_bytes(vertices, faces)
        if data in self._mesh_cache:
            return self._mesh_cache[data]
        directory = self._mesh_dir if self._mesh_dir is not None else default_mesh_dir()
        directory = directory.expanduser().resolve()
        path = directory / f"{kind}-{hashlib.sha256(data).hexdigest()[:24]}.stl"
        try:
            if not path.is_file() or path.stat().st_size != len(data):
                directory.mkdir(parents=True, exist_ok=True)
                # Write then rename: a concurrent export never sees half a file.
                fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                Path(tmp).chmod(0o644)  # mkstemp makes it private; viewers run as anyone
                Path(tmp).replace(path)
        except OSError as exc:
            raise UrdfExportError(
                f"cannot write the mesh for a {kind} shape to {path}: {exc.strerror or exc}"
            ) from None
        uri = path.as_uri()
        self._mesh_cache[data] = uri
        return uri


def _plane_box_pose(plane: Plane) -> Array:
    """Pose of the plane's box in the shape frame: z along the normal, top face on the plane."""
    n = np.asarray(plane.normal, dtype=float)
    n = n / np.linalg.norm(n)
    # Any orthonormal frame with z = n; pick x from the axis least aligned with n.
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    x = np.cross(helper, n)
    x /= np.linalg.norm(x)
    y = np.cross(n, x)
    t = np.eye(4)
    t[:3, :3] = np.column_stack([x, y, n])
    t[:3, 3] = n * (plane.offset - PLANE_THICKNESS / 2.0)
    return t


# --------------------------------------------------------------------------- tessellation


def _lathe(profile: Sequence[tuple[float, float]], slices: int = _SLICES) -> tuple[Array, Array]:
    """Surface of revolution about z of ``profile`` [(r, z)], top to bottom, r = 0 at both ends."""
    phi = 2.0 * math.pi * np.arange(slices) / slices
    cos, sin = np.cos(phi), np.sin(phi)
    # Exact zeros and ones at the quarter turns, so the extent along x and y is exact.
    quarter = np.arange(slices) % (slices // 4) == 0
    cos[quarter], sin[quarter] = np.round(cos[quarter]), np.round(sin[quarter])
    rings = profile[1:-1]
    verts = [np.array([[0.0, 0.0, profile[0][1]]])]
    for r, z in rings:
        verts.append(np.column_stack([r * cos, r * sin, np.full(slices, z)]))
    verts.append(np.array([[0.0, 0.0, profile[-1][1]]]))
    vertices = np.concatenate(verts)
    j = np.arange(slices)
    jn = (j + 1) % slices
    bottom = len(vertices) - 1
    faces = [np.column_stack([np.zeros(slices, int), 1 + j, 1 + jn])]
    for k in range(len(rings) - 1):
        a, b = 1 + k * slices, 1 + (k + 1) * slices
        faces.append(np.column_stack([a + j, b + j, b + jn]))
        faces.append(np.column_stack([a + j, b + jn, a + jn]))
    last = 1 + (len(rings) - 1) * slices
    faces.append(np.column_stack([np.full(slices, bottom), last + jn, last + j]))
    return vertices, np.concatenate(faces)


def _unit_sphere_profile(stacks: int = _STACKS) -> list[tuple[float, float]]:
    theta = math.pi * np.arange(stacks + 1) / stacks
    r, z = np.sin(theta), np.cos(theta)
    r[0] = r[-1] = 0.0
    z[0], z[-1] = 1.0, -1.0
    r[stacks // 2], z[stacks // 2] = 1.0, 0.0
    return [(float(a), float(b)) for a, b in zip(r, z, strict=True)]


def _tessellate(geometry: Geometry) -> tuple[Array, Array]:
    """Triangle mesh (vertices, faces) of a shape URDF has no element for."""
    if isinstance(geometry, Ellipsoid):
        vertices, faces = _lathe(_unit_sphere_profile())
        return vertices * np.asarray(geometry.radii)[None], faces
    if isinstance(geometry, Capsule):
        r, h = geometry.radius, geometry.height / 2.0
        prof = _unit_sphere_profile()
        half = len(prof) // 2
        upper = [(r * a, r * b + h) for a, b in prof[: half + 1]]
        lower = [(r * a, r * b - h) for a, b in prof[half:]]
        return _lathe(upper + lower)
    if isinstance(geometry, Cone):
        r, h = geometry.radius, geometry.height / 2.0
        return _lathe([(0.0, h), (r, -h), (0.0, -h)])
    if isinstance(geometry, Pyramid):
        w, d, h = geometry.base_width / 2.0, geometry.base_depth / 2.0, geometry.height / 2.0
        vertices = np.array([[0.0, 0.0, h], [w, d, -h], [-w, d, -h], [-w, -d, -h], [w, -d, -h]])
        faces = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1], [1, 3, 2], [1, 4, 3]])
        return vertices, faces
    if isinstance(geometry, MultiSphere):
        return _sphere_hull(geometry)
    raise TypeError(f"no tessellation for {type(geometry).__name__}")


def _sphere_hull(geometry: MultiSphere) -> tuple[Array, Array]:
    """Convex hull of spheres, sampled through its support points.

    Each vertex of a tessellated unit sphere is a direction d; the hull's point
    furthest along d is c + r d for the sphere maximising c.d + r. The sphere's
    triangles then connect points of the hull surface in the same order, which
    gives a closed, outward-facing approximation of the hull (exact at the six
    axis directions, so the bounding box is exact).
    """
    directions, faces = _lathe(_unit_sphere_profile())
    centres = np.array([np.asarray(p, dtype=float) for _, p in geometry.spheres]).reshape(-1, 3)
    radii = np.array([float(r) for r, _ in geometry.spheres])
    support = directions @ centres.T + radii[None]
    best = np.argmax(support, axis=1)
    return centres[best] + radii[best, None] * directions, faces


def _stl_bytes(vertices: Array, faces: Array) -> bytes:
    tri = np.asarray(vertices, dtype=float)[np.asarray(faces)]
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    lengths = np.linalg.norm(normals, axis=1)
    normals = np.divide(
        normals, lengths[:, None], out=np.zeros_like(normals), where=lengths[:, None] > 0
    )
    records = np.zeros(len(tri), dtype=_STL_DTYPE)
    records["normal"] = normals
    records["vertices"] = tri
    count: bytes = np.array([len(tri)], dtype="<u4").tobytes()
    return _STL_HEADER + count + records.tobytes()
