"""Phobos robot dictionaries (YAML or JSON): export the model to one and import it back.

Phobos (the Blender robot editor) keeps robots in a format-independent
dictionary: ``links`` (pose, visual,
collision, inertial), ``joints`` (type, axis, limits with velocity and effort),
``motors``, ... This module writes and reads that dictionary.

**Conventions (standard keys).** As in Phobos and URDF, a link's frame is its
joint frame: ``pose`` is ``[x, y, z, qw, qx, qy, qz]`` relative to the parent
link at zero joint positions, the joint turns about ``axis`` through the link
origin, and ``visual`` / ``collision`` / ``inertial`` poses are in the link
frame. A model body whose joint is not at its origin (``T_child_to_joint`` not
the identity) therefore has link-frame poses that differ from its body-frame
ones; the export converts, the import converts back. Inertia is
``[ixx, ixy, ixz, iyy, iyz, izz]`` about the COM in the axes of the inertial
pose (the spec's ``iyx`` is a typo for ``iyy``). Joint types: ``fixed``,
``revolute`` (both position limits finite), ``continuous``, ``prismatic``,
``floating``, ``planar`` (and ``hinge`` / ``linear`` on import). Collision
``bitmask`` 0 means not collidable.

**What standard Phobos keys cannot hold** is written under a ``skel`` key of
the element it belongs to (Phobos dictionaries are open: tools keep keys they
do not know), and read back when present, so SKEL -> Phobos -> model gives the
original model. Without ``skel`` keys (a dictionary written by Phobos itself)
the import uses the standard keys only; ``docs/interchange.md`` lists what is
then lost: multi-DOF joint types (ball, euler, universal, translational,
translational2d, screw are written with their SKEL type name, which Phobos
does not know), ``T_child_to_joint`` (the body frame is the link frame),
asymmetric velocity / force limits and acceleration limits, initial positions
and velocities, damping, friction, springs, actuator types, gravity modes,
markers, soft bodies, plane equations, the skeleton frame, ``<mobile>`` and the
world's physics.

**Worlds.** A world with one skeleton is one Phobos model dictionary (the
world's physics under its ``skel`` key). Any other number of skeletons gives
``{"skel": {"world": ...}, "models": [model, ...]}``, one Phobos model per
skeleton.

**Motors** come from a hardware mapping (:class:`PhobosMotor`, e.g. built from
the hardware YAML by ``skel-ros convert --hardware``): ``motors:
{name: {name, joint, type, maxSpeed, maxEffort, ...}}``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from skel_ros.model import draft
from skel_ros.model.errors import Location, SkelError, SkelWarning
from skel_ros.model.interchange_errors import ExportError, PhobosError
from skel_ros.model.joint_types import JOINT_TYPES, plane_from_normal
from skel_ros.model.transforms import inverse, matrix_to_quaternions
from skel_ros.model.types import (
    ActuatorType,
    Array,
    Body,
    Box,
    Capsule,
    CollisionDetector,
    Cone,
    Cylinder,
    Dof,
    Ellipsoid,
    EulerOrder,
    Geometry,
    Inertia,
    Joint,
    JointType,
    Marker,
    Mesh,
    MultiSphere,
    Plane,
    PlaneType,
    Pyramid,
    Shape,
    ShapeRole,
    Skeleton,
    SoftShape,
    Sphere,
    World,
    frozen_array,
)
from skel_ros.model.yamlread import compose_yaml, construct_yaml, dump_yaml

__all__ = [
    "PHOBOS_JOINT_TYPES",
    "PhobosMotor",
    "dump_phobos",
    "load_phobos",
    "looks_like_phobos",
    "parse_phobos_text",
    "phobos_motors",
    "phobos_to_world",
    "world_to_phobos",
    "write_phobos",
]

# Phobos joint types (URDF's, from the joint-type table, and two Phobos aliases) and the
# SKEL type each means.
_TYPES: dict[str, JointType] = {
    **{name: spec.type for spec in JOINT_TYPES.values() for name in spec.urdf_names},
    "hinge": JointType.REVOLUTE,
    "linear": JointType.PRISMATIC,
}
PHOBOS_JOINT_TYPES = tuple(_TYPES)
PLANE_SIZE = 100.0  # side of the finite Phobos plane written for DART's infinite one
_MAX_BYTES = 256 * 1024 * 1024
_PHOBOS_GEOMETRY = {Sphere: "sphere", Box: "box", Cylinder: "cylinder", Plane: "plane",
                    Mesh: "mesh", Capsule: "capsule"}


@dataclass(frozen=True)
class PhobosMotor:
    """A motor of the Phobos ``motors`` list: which actuator drives which DOF.

    Attributes:
        name: Motor name (the key in ``motors``).
        dof: The DOF it drives (a model DOF name).
        type: Phobos motor type; here the bus protocol (``dynamixel``, ``canopen``, ``mit``).
        model: Actuator model name, or ``""``.
        bus: Bus name, or ``""``.
        id: Id on the bus (-1 when unknown).
        mode: Control mode (``position``, ``velocity``, ``effort``, ``mit``), or ``""``.
        gear_ratio: Actuator turns per DOF turn.
        direction: 1 or -1.
        zero_offset: Actuator position when the DOF is at 0.
        max_speed: ``maxSpeed`` (the DOF's velocity limit), inf when none.
        max_effort: ``maxEffort`` (the DOF's force limit), inf when none.
    """

    name: str
    dof: str
    type: str = ""
    model: str = ""
    bus: str = ""
    id: int = -1
    mode: str = ""
    gear_ratio: float = 1.0
    direction: int = 1
    zero_offset: float = 0.0
    max_speed: float = math.inf
    max_effort: float = math.inf
    extra: Mapping[str, Any] = field(default_factory=dict)


# =========================================================================== poses


def _quat_from_matrix(r: Array) -> list[float]:
    """Unit quaternion (w, x, y, z), w >= 0, of a rotation matrix."""
    x, y, z, w = matrix_to_quaternions(np.asarray(r, dtype=float)[:3, :3]).tolist()
    return [w, x, y, z]


def _matrix_from_quat(q: Sequence[float]) -> Array:
    w, x, y, z = q
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _pose(t: Array) -> list[float]:
    m = np.asarray(t, dtype=float)
    return [float(m[0, 3]), float(m[1, 3]), float(m[2, 3]), *_quat_from_matrix(m)]


def _pose_matrix(p: Sequence[float]) -> Array:
    out = np.eye(4)
    out[:3, :3] = _matrix_from_quat(p[3:7])
    out[:3, 3] = p[:3]
    return out


def _translation(v: Sequence[float]) -> Array:
    out = np.eye(4)
    out[:3, 3] = v
    return out


# =========================================================================== export


def world_to_phobos(world: World, *, motors: Sequence[PhobosMotor] = (),
                    base_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The Phobos dictionary of ``world`` (plain dicts, lists, floats, strings).

    Args:
        world: The model.
        motors: Motors to list (each DOF must exist in the world).
        base_dir: Directory the dictionary will be saved in (mesh file names are
            written relative to it); None writes absolute mesh paths.

    Raises:
        ExportError: When a motor names a DOF the world does not have.
    """
    base = None if base_dir is None else Path(os.fspath(base_dir)).resolve()
    physics = {
        "time_step": float(world.time_step),
        "gravity": [float(g) for g in world.gravity],
        "collision_detector": world.collision_detector.value,
    }
    by_skeleton: dict[int, list[PhobosMotor]] = {}
    for motor in motors:
        for i, skel in enumerate(world.skeletons):
            if motor.dof in {d.name for d in skel.dofs}:
                by_skeleton.setdefault(i, []).append(motor)
                break
        else:
            raise ExportError(f"motor {motor.name!r} drives DOF {motor.dof!r}, which the model"
                              " does not have", Location(world.source))
    models = [_skeleton_to_phobos(s, by_skeleton.get(i, []), base)
              for i, s in enumerate(world.skeletons)]
    if len(models) == 1:
        models[0]["skel"]["world"] = physics
        return models[0]
    return {"skel": {"world": physics}, "models": models}


def _skeleton_to_phobos(skel: Skeleton, motors: Sequence[PhobosMotor],
                        base: Path | None) -> dict[str, Any]:
    t_child = {j.child: np.asarray(j.T_child_to_joint, dtype=float) for j in skel.joints}
    links: dict[str, Any] = {}
    for body in skel.bodies:
        links[body.name] = _link(body, skel, t_child, base)
    joints = {j.name: _joint(j, skel, t_child) for j in skel.joints}
    out: dict[str, Any] = {
        "name": skel.name,
        "links": links,
        "joints": joints,
        "motors": {m.name: _motor(m, skel) for m in motors},
        "skel": {"frame": _pose(skel.frame), "mobile": skel.mobile},
    }
    return out


def _link(body: Body, skel: Skeleton, t_child: dict[str, Array],
          base: Path | None) -> dict[str, Any]:
    joint = skel.joint(body.parent_joint)
    t_cj = t_child[body.name]
    t_parent_link = np.eye(4) if joint.parent is None else t_child[joint.parent]
    pose = inverse(t_parent_link) @ np.asarray(joint.T_parent_to_joint, dtype=float)
    to_link = inverse(t_cj)  # body frame -> link (joint) frame
    visual: dict[str, Any] = {}
    collision: dict[str, Any] = {}
    for shape in body.shapes:
        entry: dict[str, Any] = {
            "name": shape.name,
            "pose": _pose(to_link @ np.asarray(shape.transform, dtype=float)),
            "geometry": _geometry(shape.geometry, base),
        }
        if shape.role is ShapeRole.VISUAL:
            if shape.color is not None:
                entry["material"] = {"name": f"{shape.name} material",
                                     "diffuseColor": [float(c) for c in shape.color]}
            visual[shape.name] = entry
        else:
            entry["bitmask"] = 1 if shape.collidable else 0
            collision[shape.name] = entry
    m = np.asarray(body.inertia.moment, dtype=float)
    inertial = {
        "mass": float(body.inertia.mass),
        "inertia": [float(m[0, 0]), float(m[0, 1]), float(m[0, 2]),
                    float(m[1, 1]), float(m[1, 2]), float(m[2, 2])],
        "pose": _pose(to_link @ _translation([float(c) for c in body.inertia.com])),
    }
    ext: dict[str, Any] = {
        "gravity_mode": body.gravity_mode,
        "moment_from_shapes": body.inertia.moment_from_shapes,
        "markers": {mk.name: [float(v) for v in mk.offset] for mk in body.markers},
    }
    if body.soft is not None:
        ext["soft"] = _soft(body.soft)
    return {
        "name": body.name,
        "parent": joint.parent,
        "children": [j.child for j in skel.joints if j.parent == body.name],
        "pose": _pose(pose),
        "inertial": inertial,
        "visual": visual,
        "collision": collision,
        "skel": ext,
    }


def _geometry(g: Geometry, base: Path | None) -> dict[str, Any]:  # noqa: C901
    kind = _PHOBOS_GEOMETRY.get(type(g), g.kind)
    out: dict[str, Any] = {"type": kind}
    if isinstance(g, Sphere):
        out["radius"] = g.radius
    elif isinstance(g, Box):
        out["size"] = [float(v) for v in g.size]
    elif isinstance(g, Ellipsoid):
        out["size"] = [float(v) for v in g.size]  # diameters, as SKEL
    elif isinstance(g, (Cylinder, Capsule, Cone)):
        out["radius"], out["height"] = g.radius, g.height
        if isinstance(g, (Cylinder, Capsule)):
            out["length"] = g.height  # Phobos' own name for it
    elif isinstance(g, Pyramid):
        out.update(base_width=g.base_width, base_depth=g.base_depth, height=g.height)
    elif isinstance(g, Plane):
        out["size"] = [PLANE_SIZE, PLANE_SIZE]
        out["skel"] = {"normal": [float(v) for v in g.normal], "offset": g.offset}
    elif isinstance(g, MultiSphere):
        out["spheres"] = [{"radius": r, "position": [float(v) for v in p]} for r, p in g.spheres]
    elif isinstance(g, Mesh):
        out["filename"] = _mesh_name(g, base)
        out["scale"] = [float(v) for v in g.scale]
        if g.bounds is not None:
            out["size"] = [float(v) for v in np.asarray(g.bounds[1]) - np.asarray(g.bounds[0])]
    return out


def _mesh_name(g: Mesh, base: Path | None) -> str:
    if g.path is None:
        return g.file_name
    target = Path(g.path).resolve()
    if base is None:
        return str(target)
    try:
        return os.path.relpath(target, base)
    except ValueError:
        return str(target)


def _soft(s: SoftShape) -> dict[str, Any]:
    return {
        "kind": s.kind, "total_mass": s.total_mass, "pose": _pose(s.transform),
        "size": [float(v) for v in s.size], "radius": s.radius, "height": s.height,
        "frags": list(s.frags), "num_slices": s.num_slices, "num_stacks": s.num_stacks,
        "num_rings": s.num_rings, "kv": s.kv, "ke": s.ke, "damp": s.damp,
    }


def _phobos_type(j: Joint, dof: Dof | None) -> str:
    names = j.type.spec.urdf_names
    if not names:
        return j.type.value  # no Phobos type: the SKEL name (see the module docstring)
    if names[0] == "revolute" and not (
        dof is not None and math.isfinite(dof.position_lower) and math.isfinite(dof.position_upper)
    ):
        return "continuous"
    return names[0]


def _dof_ext(d: Dof) -> dict[str, Any]:
    return {
        "name": d.name, "preserved": d.name_preserved,
        "position": [d.position_lower, d.position_upper],
        "velocity": [d.velocity_lower, d.velocity_upper],
        "acceleration": [d.acceleration_lower, d.acceleration_upper],
        "force": [d.force_lower, d.force_upper],
        "initial_position": d.initial_position, "initial_velocity": d.initial_velocity,
        "damping": d.damping, "coulomb_friction": d.coulomb_friction,
        "spring_stiffness": d.spring_stiffness, "rest_position": d.rest_position,
    }


def _joint(j: Joint, skel: Skeleton, t_child: dict[str, Array]) -> dict[str, Any]:
    dofs = [skel.dof(n) for n in j.dofs]
    one = dofs[0] if len(dofs) == 1 else None
    out: dict[str, Any] = {
        "name": j.name,
        "parent": j.parent,
        "child": j.child,
        "type": _phobos_type(j, one),
    }
    if len(j.axes) == 1:
        out["axis"] = [float(v) for v in j.axes[0]]
    elif out["type"] == "planar":  # its axis is the plane's normal
        a1, a2 = (np.asarray(a, dtype=float) for a in j.plane_axes)
        n = np.cross(a1, a2)
        out["axis"] = [float(v) for v in n / np.linalg.norm(n)]
    if one is not None:
        limits: dict[str, float] = {}
        if math.isfinite(one.position_lower) and math.isfinite(one.position_upper):
            limits["lower"], limits["upper"] = one.position_lower, one.position_upper
        if math.isfinite(one.velocity_upper):
            limits["velocity"] = one.velocity_upper
        if math.isfinite(one.force_upper):
            limits["effort"] = one.force_upper
        if limits:
            out["limits"] = limits
    out["skel"] = {
        "type": j.type.value,
        "actuator": j.actuator.value,
        "implicit": j.implicit,
        "joint_pose": _pose(t_child[j.child]),
        "axes": [[float(v) for v in a] for a in j.axes],
        "pitch": j.pitch,
        "euler_order": None if j.euler_order is None else j.euler_order.value,
        "plane": None if j.plane is None else j.plane.value,
        "plane_axes": [[float(v) for v in a] for a in j.plane_axes],
        "dofs": [_dof_ext(d) for d in dofs],
    }
    return out


def _motor(m: PhobosMotor, skel: Skeleton) -> dict[str, Any]:
    dof = skel.dof(m.dof)
    speed = m.max_speed if math.isfinite(m.max_speed) else dof.velocity_upper
    effort = m.max_effort if math.isfinite(m.max_effort) else dof.force_upper
    out: dict[str, Any] = {"name": m.name, "joint": dof.joint, "dof": m.dof, "type": m.type}
    if math.isfinite(speed):
        out["maxSpeed"] = float(speed)
    if math.isfinite(effort):
        out["maxEffort"] = float(effort)
    out["hardware"] = {"model": m.model, "bus": m.bus, "id": m.id, "mode": m.mode,
                       "gear_ratio": m.gear_ratio, "direction": m.direction,
                       "zero_offset": m.zero_offset, **dict(m.extra)}
    return out


def _plain(value: Any, *, json_safe: bool) -> Any:  # noqa: ANN401, PLR0911
    """Numpy scalars to floats; for JSON, non-finite numbers to "inf" / "-inf" / "nan"."""
    if isinstance(value, dict):
        return {str(k): _plain(v, json_safe=json_safe) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, json_safe=json_safe) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if json_safe and not math.isfinite(x):
            return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
        return x
    return str(value)


def dump_phobos(doc: Mapping[str, Any], fmt: str = "yaml") -> str:
    """The text of a Phobos dictionary: ``fmt`` is ``yaml`` or ``json``."""
    if fmt == "json":
        return json.dumps(_plain(dict(doc), json_safe=True), indent=1, allow_nan=False) + "\n"
    if fmt == "yaml":
        return dump_yaml(_plain(dict(doc), json_safe=False), sort_keys=False,
                         default_flow_style=None, width=100)
    raise ValueError(f"unknown Phobos format {fmt!r} (yaml or json)")


def write_phobos(world: World, path: str | os.PathLike[str], *, fmt: str | None = None,
                 motors: Sequence[PhobosMotor] = ()) -> Path:
    """Write ``world`` as a Phobos YAML (``.yml``/``.yaml``) or JSON (``.json``) file."""
    out = Path(os.fspath(path))
    kind = fmt or ("json" if out.suffix.lower() == ".json" else "yaml")
    text = dump_phobos(world_to_phobos(world, motors=motors, base_dir=out.resolve().parent), kind)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write file: {exc.strerror or exc}", Location(str(out))) from None
    return out


# =========================================================================== import: reading


class _Doc:
    """Typed access to a parsed dictionary: every failure is a PhobosError with a key path."""

    def __init__(self, label: str, lines: Mapping[str, int]) -> None:
        self.label = label
        self.lines = lines
        self.warnings: list[SkelWarning] = []

    def loc(self, path: str) -> Location:
        line = 0
        probe = path
        while probe:
            line = self.lines.get(probe, 0)
            if line:
                break
            probe = probe.rsplit("/", 1)[0]
        return Location(self.label, line, path or "/")

    def fail(self, reason: str, path: str, hint: str = "") -> PhobosError:
        return PhobosError(reason, self.loc(path), hint)

    def warn(self, message: str, path: str) -> None:
        self.warnings.append(SkelWarning(message, self.loc(path)))

    def mapping(self, value: Any, path: str) -> Mapping[str, Any]:  # noqa: ANN401
        if not isinstance(value, Mapping):
            raise self.fail(f"expected a mapping, got {_kind(value)}", path)
        return value

    def opt_mapping(self, parent: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
        value = parent.get(key)
        if value is None:
            return {}
        return self.mapping(value, f"{path}/{key}")

    def number(self, value: Any, path: str, *, finite: bool = True,  # noqa: ANN401, C901
               positive: bool = False, nonneg: bool = False) -> float:
        if isinstance(value, bool) or value is None:
            raise self.fail(f"expected a number, got {_kind(value)}", path)
        if isinstance(value, str):
            text = value.strip().lower().lstrip("+")
            if text in ("inf", "-inf", ".inf", "-.inf", "infinity", "-infinity", "nan", ".nan"):
                x = float(text.replace(".", ""))
            else:
                try:
                    x = float(text)
                except ValueError:
                    raise self.fail(f"{value[:40]!r} is not a number", path) from None
        elif isinstance(value, (int, float)):
            try:
                x = float(value)
            except OverflowError:
                raise self.fail("number is too large", path) from None
        else:
            raise self.fail(f"expected a number, got {_kind(value)}", path)
        if math.isnan(x):
            raise self.fail("is NaN", path)
        if finite and math.isinf(x):
            raise self.fail(f"must be finite, got {x}", path)
        if positive and not x > 0.0:
            raise self.fail(f"must be positive, got {x}", path)
        if nonneg and x < 0.0:
            raise self.fail(f"must not be negative, got {x}", path)
        return x

    def vector(self, value: Any, n: int, path: str, *, finite: bool = True,  # noqa: ANN401
               positive: bool = False) -> list[float]:
        if not isinstance(value, (list, tuple)):
            raise self.fail(f"expected a list of {n} numbers, got {_kind(value)}", path)
        if len(value) != n:
            raise self.fail(f"expected {n} numbers, got {len(value)}", path)
        return [self.number(v, f"{path}[{i}]", finite=finite, positive=positive)
                for i, v in enumerate(value)]

    def text(self, value: Any, path: str) -> str:  # noqa: ANN401
        if not isinstance(value, str) or not value:
            raise self.fail(f"expected a non-empty string, got {_kind(value)}", path)
        return value

    def flag(self, value: Any, path: str) -> bool:  # noqa: ANN401
        if not isinstance(value, bool):
            raise self.fail(f"expected true or false, got {_kind(value)}", path)
        return value

    def pose(self, value: Any, path: str) -> Array:  # noqa: ANN401
        """``[x, y, z, qw, qx, qy, qz]`` or Phobos' ``{translation, rotation_quaternion}``."""
        if value is None:
            return np.eye(4)
        if isinstance(value, Mapping):
            t = self.vector(value.get("translation", [0.0, 0.0, 0.0]), 3, f"{path}/translation")
            if "rotation_quaternion" in value:
                q = self.vector(value["rotation_quaternion"], 4, f"{path}/rotation_quaternion")
            elif "rotation_euler" in value:
                r, p, y = self.vector(value["rotation_euler"], 3, f"{path}/rotation_euler")
                from skel_ros.model.transforms import rot_x, rot_y, rot_z

                q = _quat_from_matrix(rot_z(y) @ rot_y(p) @ rot_x(r))
            else:
                q = [1.0, 0.0, 0.0, 0.0]
            values = [*t, *q]
        else:
            values = self.vector(value, 7, path)
        if math.sqrt(sum(v * v for v in values[3:])) < 1e-9:  # noqa: PLR2004
            raise self.fail("the quaternion of this pose is zero", path)
        return _pose_matrix(values)

    def integer(self, value: Any, path: str) -> int:  # noqa: ANN401
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:  # noqa: PLR2004
            raise self.fail(f"expected a non-negative integer, got {_kind(value)}", path)
        return int(value)


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"the string {value[:30]!r}"
    return f"a {type(value).__name__}"


def _yaml_lines(node: yaml.Node | None, label: str) -> dict[str, int]:
    """Key path -> 1-based line of every node of a composed document.

    Raises:
        PhobosError: A node reached twice: a YAML alias (not used by Phobos; aliases
            allow blow-ups), at the line where the document repeats it.
    """
    out: dict[str, int] = {}
    # (node, its key path or None for a mapping key, the line it is used at: its key's),
    # visited in document order. An alias node has its anchor's marks, not its own.
    stack: list[tuple[Any, str | None, int]] = [(node, "", 1)]
    seen: set[int] = set()
    while stack:
        n, path, line = stack.pop()
        if n is None:
            continue
        if id(n) in seen:
            raise PhobosError("YAML aliases are not supported in Phobos dictionaries",
                              Location(label, line))
        seen.add(id(n))
        if path is None:  # a mapping key: checked for aliases only
            continue
        out.setdefault(path, n.start_mark.line + 1)
        children: list[tuple[Any, str | None, int]] = []
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else "?"
                key_line = k.start_mark.line + 1
                out.setdefault(f"{path}/{key}", key_line)
                children += [(k, None, key_line), (v, f"{path}/{key}", key_line)]
        elif isinstance(n, yaml.SequenceNode):  # an alias item: reported at the list's line
            children = [(v, f"{path}[{i}]", line) for i, v in enumerate(n.value)]
        stack.extend(reversed(children))
    return out


def parse_phobos_text(text: str, label: str) -> tuple[Any, dict[str, int]]:
    """Parse YAML or JSON text; returns the value and a key-path -> line index.

    The YAML is read once (:func:`~skel_ros.model.yamlread.compose_yaml`): its node graph
    gives the line index, the alias check and the value.

    Raises:
        PhobosError: Text that is neither (with the line of the syntax error), or
            YAML with aliases / tags (not used by Phobos; they allow blow-ups).
    """
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith(("{", "[")):
        try:
            value = json.loads(stripped, parse_constant=lambda c: c)
        except json.JSONDecodeError as exc:
            raise PhobosError(f"malformed JSON: {exc.msg}", Location(label, exc.lineno)) from None
        except (RecursionError, ValueError) as exc:
            raise PhobosError(f"malformed JSON: {exc}", Location(label)) from None
        try:  # JSON is YAML: its lines, where YAML reads it too
            return value, _yaml_lines(compose_yaml(text), label)
        except (yaml.YAMLError, RecursionError, ValueError, PhobosError):
            return value, {}
    try:
        node = compose_yaml(text)
        lines = _yaml_lines(node, label)
        value = construct_yaml(node)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark is not None else 0
        raise PhobosError(f"malformed YAML: {exc.problem or exc}", Location(label, line)) from None
    except yaml.YAMLError as exc:
        raise PhobosError(f"malformed YAML: {exc}", Location(label)) from None
    except RecursionError:
        raise PhobosError("document is nested too deeply", Location(label)) from None
    return value, lines


def _is_name(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def looks_like_phobos(value: object) -> bool:
    """True for a mapping with Phobos' ``links`` (and ``joints``) or our ``models`` envelope."""
    if not isinstance(value, Mapping):
        return False
    if "links" in value and ("joints" in value or "name" in value):
        return True
    return isinstance(value.get("models"), list) and isinstance(value.get("skel"), Mapping)


# =========================================================================== import: building


def load_phobos(source: str | os.PathLike[str], *, name: str | None = None) -> World:
    """Read a Phobos dictionary file (YAML or JSON), or its text, into the model.

    Args:
        source: A file path, or the text itself (anything with a newline or
            starting with ``{``).
        name: Name used in messages for text (and base for relative mesh paths).

    Raises:
        PhobosError: For anything that prevents loading (file:line and key path).
    """
    label = name or (os.fspath(source) if not _is_text(source) else "<string>")
    try:
        if _is_text(source):
            text = str(source)
            base = Path(name).parent if name else None
        else:
            path = Path(os.fspath(source))
            if not path.is_file():
                raise PhobosError("not a readable file", Location(label))  # noqa: TRY301
            if path.stat().st_size > _MAX_BYTES:
                raise PhobosError("file is too large", Location(label))  # noqa: TRY301
            text = path.read_bytes().decode("utf-8", "replace")
            base = path.resolve().parent
        value, lines = parse_phobos_text(text, label)
        return phobos_to_world(value, source=label, base_dir=base, lines=lines)
    except SkelError:
        raise
    except OSError as exc:
        raise PhobosError(f"cannot read file: {exc.strerror or exc}", Location(label)) from None
    except RecursionError:
        raise PhobosError("document is nested too deeply", Location(label)) from None
    except Exception as exc:
        raise PhobosError(f"internal error while reading ({type(exc).__name__}: {exc});"
                          " please report this", Location(label)) from exc


def _is_text(source: object) -> bool:
    return isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))


def phobos_to_world(doc: Any, *, source: str = "<dict>",  # noqa: ANN401 - parsed YAML / JSON
                    base_dir: str | os.PathLike[str] | None = None,
                    lines: Mapping[str, int] | None = None) -> World:
    """Build the model from a parsed Phobos dictionary.

    Raises:
        PhobosError: With the key path (and line, when ``lines`` is given).
    """
    d = _Doc(source, lines or {})
    base = None if base_dir is None else Path(os.fspath(base_dir))
    root = d.mapping(doc, "")
    if "models" in root and "links" not in root:
        models_value = root["models"]
        if not isinstance(models_value, list):
            raise d.fail(f"expected a list of models, got {_kind(models_value)}", "/models")
        models = [(d.mapping(m, f"/models[{i}]"), f"/models[{i}]")
                  for i, m in enumerate(models_value)]
        ext = d.opt_mapping(root, "skel", "")
        world_path = "/skel/world"
    else:
        models = [(root, "")]
        ext = d.opt_mapping(root, "skel", "")
        world_path = "/skel/world"
    physics = d.opt_mapping(ext, "world", "/skel")
    time_step = d.number(physics.get("time_step", 0.001), f"{world_path}/time_step", positive=True)
    gravity = d.vector(physics.get("gravity", [0.0, 0.0, -9.81]), 3, f"{world_path}/gravity")
    det_text = physics.get("collision_detector", "fcl")
    try:
        detector = CollisionDetector(det_text)
    except ValueError:
        raise d.fail(f"unknown collision detector {det_text!r}",
                     f"{world_path}/collision_detector") from None
    skeletons = [_model(m, path, d, base) for m, path in models]
    draft_world = draft.world(skeletons, source, time_step=time_step, gravity=gravity,
                              detector=detector)
    return draft.canonical(draft_world, source, PhobosError, d.warnings)


def _model(m: Mapping[str, Any], path: str, d: _Doc, base: Path | None) -> Skeleton:  # noqa: C901, PLR0912, PLR0915
    name = m.get("name", "")
    if not isinstance(name, str):
        raise d.fail(f"model name must be a string, got {_kind(name)}", f"{path}/name")
    links = d.mapping(m.get("links"), f"{path}/links")
    if not links:
        raise d.fail("a Phobos model needs at least one link", f"{path}/links")
    joints_raw = d.opt_mapping(m, "joints", path)
    ext = d.opt_mapping(m, "skel", path)
    frame = d.pose(ext.get("frame"), f"{path}/skel/frame")
    mobile = d.flag(ext.get("mobile", True), f"{path}/skel/mobile")

    # Joints by child link; each link at most one parent joint.
    by_child: dict[str, tuple[str, Mapping[str, Any], str]] = {}
    for jname, jval in joints_raw.items():
        jpath = f"{path}/joints/{jname}"
        j = d.mapping(jval, jpath)
        if not _is_name(jname):
            raise d.fail("joint names must be non-empty strings", jpath)
        child = d.text(j.get("child"), f"{jpath}/child")
        if child not in links:
            raise d.fail(f"child link {child!r} does not exist", f"{jpath}/child")
        parent = j.get("parent")
        if parent is not None:
            parent = d.text(parent, f"{jpath}/parent")
            if parent not in links:
                raise d.fail(f"parent link {parent!r} does not exist", f"{jpath}/parent")
            if parent == child:
                raise d.fail(f"joint {jname!r} has link {child!r} as parent and child", jpath)
        if child in by_child:
            raise d.fail(f"link {child!r} is the child of joints {by_child[child][0]!r} and"
                         f" {jname!r}", jpath, "every link has at most one parent joint")
        by_child[child] = (jname, j, jpath)
    _check_tree(by_child, d)

    # Joint frames on the child side (the link frame is the joint frame).
    t_cj: dict[str, Array] = {}
    for child, (_, j, jpath) in by_child.items():
        jext = d.opt_mapping(j, "skel", jpath)
        t_cj[child] = d.pose(jext.get("joint_pose"), f"{jpath}/skel/joint_pose")

    bodies: list[Body] = []
    joints: list[Joint] = []
    dofs: list[Dof] = []
    for lname, lval in links.items():
        lpath = f"{path}/links/{lname}"
        if not _is_name(lname):
            raise d.fail("link names must be non-empty strings", lpath)
        link = d.mapping(lval, lpath)
        pose = d.pose(link.get("pose"), f"{lpath}/pose")
        body_to_link = t_cj.get(lname, np.eye(4))
        bodies.append(_body(lname, link, lpath, body_to_link, d, base))
        if lname in by_child:
            jname, j, jpath = by_child[lname]
            parent = j.get("parent")
            parent_link = np.eye(4) if parent is None else t_cj.get(parent, np.eye(4))
            # T_parent_to_joint: root joints carry the skeleton frame too.
            t_parent = parent_link @ pose
            joint, jdofs = _joint_from(jname, j, jpath, parent, lname, t_parent,
                                       t_cj[lname], d)
        else:
            if link.get("parent") not in (None, ""):
                d.warn(f"link {lname!r} names parent {link.get('parent')!r} but no joint has it"
                       " as child; it gets a free joint to the world", lpath)
            joint = draft.make_joint("root", JointType.FREE, None, lname, t_parent=pose,
                                     dofs=[f"{lname}#root{k}" for k in range(6)],
                                     location=d.loc(lpath))
            jdofs = [draft.make_dof(f"{lname}#root{k}", "root", k) for k in range(6)]
        joints.append(joint)
        dofs.extend(jdofs)
    if not np.array_equal(frame, np.eye(4)):
        # Root poses are world poses; the skeleton frame is only remembered for SKEL.
        pass
    return draft.skeleton(name, joints, bodies, dofs, frame=frame, mobile=mobile,
                          location=d.loc(path or "/"))


def _check_tree(by_child: Mapping[str, tuple[str, Mapping[str, Any], str]], d: _Doc) -> None:
    for start in by_child:
        seen = {start}
        link = start
        while link in by_child:
            parent = by_child[link][1].get("parent")
            if parent is None:
                break
            if parent in seen:
                raise d.fail("joints form a loop through link " + repr(parent),
                             by_child[link][2], "every link needs one path to the world")
            seen.add(parent)
            link = parent


def _joint_from(name: str, j: Mapping[str, Any], path: str, parent: str | None, child: str,  # noqa: C901, PLR0912, PLR0915, PLR0917
                t_parent: Array, t_child: Array, d: _Doc) -> tuple[Joint, list[Dof]]:
    ext = d.opt_mapping(j, "skel", path)
    if "type" in ext:
        try:
            jtype = JointType(ext["type"])
        except ValueError:
            raise d.fail(f"unknown SKEL joint type {ext['type']!r}", f"{path}/skel/type") from None
    else:
        raw = j.get("type")
        if raw not in _TYPES:
            raise d.fail(
                f"joint type {raw!r} is not one of " + ", ".join(PHOBOS_JOINT_TYPES),
                f"{path}/type",
                "multi-DOF SKEL joints need the 'skel' keys written by skel-ros convert",
            )
        jtype = _TYPES[str(raw)]
    actuator = ActuatorType.FORCE
    if "actuator" in ext:
        try:
            actuator = ActuatorType(ext["actuator"])
        except ValueError:
            raise d.fail(f"unknown actuator {ext['actuator']!r}", f"{path}/skel/actuator") from None
    implicit = d.flag(ext.get("implicit", False), f"{path}/skel/implicit")

    spec = jtype.spec
    axes: list[list[float]] = []
    n_axes = spec.axes
    if "axes" in ext:
        raw_axes = ext["axes"]
        if not isinstance(raw_axes, list) or len(raw_axes) != n_axes:
            raise d.fail(f"a {jtype.value} joint needs {n_axes} axes", f"{path}/skel/axes")
        axes = [_unit(d.vector(a, 3, f"{path}/skel/axes[{i}]"), f"{path}/skel/axes[{i}]", d)
                for i, a in enumerate(raw_axes)]
    elif n_axes == 1:  # URDF's default axis is x
        axes = [_unit(d.vector(j.get("axis", [1.0, 0.0, 0.0]), 3, f"{path}/axis"),
                      f"{path}/axis", d)]
    else:
        axes = [list(a) for a in spec.default_axes]
    pitch = d.number(ext.get("pitch", spec.default_pitch), f"{path}/skel/pitch")
    euler = None
    if spec.euler_order:
        try:
            euler = EulerOrder(ext.get("euler_order", "xyz"))
        except ValueError:
            raise d.fail("euler_order must be xyz or zyx", f"{path}/skel/euler_order") from None
    plane = None
    plane_axes: list[list[float]] = []
    if spec.plane:
        if ext.get("plane") is not None:
            try:
                plane = PlaneType(ext["plane"])
            except ValueError:
                raise d.fail("unknown plane type", f"{path}/skel/plane") from None
            raw_pa = ext.get("plane_axes")
            if not isinstance(raw_pa, list) or len(raw_pa) != 2:  # noqa: PLR2004
                raise d.fail("plane_axes needs two axes", f"{path}/skel/plane_axes")
            plane_axes = [_unit(d.vector(a, 3, f"{path}/skel/plane_axes[{i}]"),
                                f"{path}/skel/plane_axes[{i}]", d) for i, a in enumerate(raw_pa)]
            if np.linalg.norm(np.cross(plane_axes[0], plane_axes[1])) < 1e-9:  # noqa: PLR2004
                raise d.fail("the plane axes are parallel", f"{path}/skel/plane_axes")
        else:
            normal = _unit(d.vector(j.get("axis", [0.0, 0.0, 1.0]), 3, f"{path}/axis"),
                           f"{path}/axis", d)
            plane, plane_axes = plane_from_normal(normal)

    n = spec.num_dofs
    dofs: list[Dof] = []
    raw_dofs = ext.get("dofs")
    if raw_dofs is not None:
        if not isinstance(raw_dofs, list) or len(raw_dofs) != n:
            raise d.fail(f"a {jtype.value} joint has {n} DOFs", f"{path}/skel/dofs")
        for k, raw in enumerate(raw_dofs):
            dofs.append(_dof_from(name, k, raw, f"{path}/skel/dofs[{k}]", d))
    else:
        limits = d.opt_mapping(j, "limits", path)
        for k in range(n):
            kw: dict[str, Any] = {}
            if n == 1 and limits:
                lp = f"{path}/limits"
                if "lower" in limits or "upper" in limits:
                    kw["position"] = (
                        d.number(limits.get("lower", -math.inf), f"{lp}/lower", finite=False),
                        d.number(limits.get("upper", math.inf), f"{lp}/upper", finite=False))
                if j.get("type") == "continuous":
                    kw.pop("position", None)
                if "velocity" in limits:
                    v = d.number(limits["velocity"], f"{lp}/velocity", finite=False, nonneg=True)
                    kw["velocity"] = (-v, v)
                if "effort" in limits:
                    e = d.number(limits["effort"], f"{lp}/effort", finite=False, nonneg=True)
                    kw["force"] = (-e, e)
            dofs.append(draft.make_dof(f"{name}#{k}", name, k, **kw))
    joint = draft.make_joint(
        name, jtype, parent, child, t_parent=t_parent, t_child=t_child, axes=axes, pitch=pitch,
        euler_order=euler, plane=plane, plane_axes=plane_axes, dofs=[x.name for x in dofs],
        actuator=actuator, implicit=implicit, location=d.loc(path),
    )
    return joint, dofs


def _unit(v: Sequence[float], path: str, d: _Doc) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v))
    if norm == 0.0 or not math.isfinite(norm):
        raise d.fail("axis must be a non-zero, finite vector", path)
    return [x / norm for x in v]


def _dof_from(joint: str, k: int, raw: Any, path: str, d: _Doc) -> Dof:  # noqa: ANN401
    m = d.mapping(raw, path)

    def pair(key: str) -> tuple[float, float]:
        if key not in m:
            return (-math.inf, math.inf)
        lo, hi = d.vector(m[key], 2, f"{path}/{key}", finite=False)
        return lo, hi

    def num(key: str) -> float:
        return d.number(m.get(key, 0.0), f"{path}/{key}")

    preserved = d.flag(m.get("preserved", False), f"{path}/preserved")
    name = d.text(m["name"], f"{path}/name") if preserved else f"{joint}#{k}"
    return draft.make_dof(
        name, joint, k, preserved=preserved, position=pair("position"),
        velocity=pair("velocity"), acceleration=pair("acceleration"), force=pair("force"),
        initial_position=num("initial_position"), initial_velocity=num("initial_velocity"),
        damping=num("damping"), coulomb_friction=num("coulomb_friction"),
        spring_stiffness=num("spring_stiffness"), rest_position=num("rest_position"),
    )


def _body(name: str, link: Mapping[str, Any], path: str, t_cj: Array, d: _Doc,  # noqa: PLR0917
          base: Path | None) -> Body:
    ext = d.opt_mapping(link, "skel", path)
    shapes: list[Shape] = []
    for role, key in ((ShapeRole.VISUAL, "visual"), (ShapeRole.COLLISION, "collision")):
        group = d.opt_mapping(link, key, path)
        for sname, sval in group.items():
            spath = f"{path}/{key}/{sname}"
            shapes.append(_shape(str(sname), role, d.mapping(sval, spath), spath, t_cj, d, base))
    inertial = link.get("inertial")
    if inertial is None:
        inertia = draft.default_inertia()
    else:
        ipath = f"{path}/inertial"
        im = d.mapping(inertial, ipath)
        mass = d.number(im.get("mass", 1.0), f"{ipath}/mass", nonneg=True)
        ipose = t_cj @ d.pose(im.get("pose"), f"{ipath}/pose")
        if "inertia" in im:
            ixx, ixy, ixz, iyy, iyz, izz = d.vector(im["inertia"], 6, f"{ipath}/inertia")
            local = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        else:
            local = np.eye(3)
        rot = ipose[:3, :3]
        moment = local if np.array_equal(rot, np.eye(3)) else rot @ local @ rot.T
        if not np.all(np.isfinite(moment)):
            raise d.fail("the inertia is not finite", ipath)
        inertia = Inertia(
            mass=mass, com=frozen_array(ipose[:3, 3]), moment=frozen_array(moment),
            moment_from_shapes=d.flag(ext.get("moment_from_shapes", False),
                                      f"{path}/skel/moment_from_shapes"),
        )
    markers = []
    for mname, offset in d.opt_mapping(ext, "markers", f"{path}/skel").items():
        markers.append(Marker(str(mname), frozen_array(
            d.vector(offset, 3, f"{path}/skel/markers/{mname}"))))
    soft = None
    if ext.get("soft") is not None:
        soft = _soft_from(d.mapping(ext["soft"], f"{path}/skel/soft"), f"{path}/skel/soft", d)
    return Body(
        name=name, index=0, parent_joint="", inertia=inertia,
        gravity_mode=d.flag(ext.get("gravity_mode", True), f"{path}/skel/gravity_mode"),
        rest_transform=frozen_array(np.eye(4)), shapes=tuple(shapes), markers=tuple(markers),
        soft=soft, location=d.loc(path),
    )


def _soft_from(m: Mapping[str, Any], path: str, d: _Doc) -> SoftShape:
    kind = m.get("kind")
    if kind not in ("sphere", "box", "ellipsoid", "cylinder"):
        raise d.fail(f"unknown soft shape kind {kind!r}", f"{path}/kind")
    frags = m.get("frags", [0, 0, 0])
    if not isinstance(frags, list) or len(frags) != 3:  # noqa: PLR2004
        raise d.fail("frags needs three integers", f"{path}/frags")

    def opt(key: str) -> float | None:
        return None if m.get(key) is None else d.number(m[key], f"{path}/{key}")

    return SoftShape(
        kind=str(kind), total_mass=d.number(m.get("total_mass"), f"{path}/total_mass",
                                            nonneg=True),
        transform=frozen_array(d.pose(m.get("pose"), f"{path}/pose")),
        size=frozen_array(d.vector(m.get("size", [0.0, 0.0, 0.0]), 3, f"{path}/size")),
        radius=d.number(m.get("radius", 0.0), f"{path}/radius", nonneg=True),
        height=d.number(m.get("height", 0.0), f"{path}/height", nonneg=True),
        frags=(d.integer(frags[0], f"{path}/frags[0]"), d.integer(frags[1], f"{path}/frags[1]"),
               d.integer(frags[2], f"{path}/frags[2]")),
        num_slices=d.integer(m.get("num_slices", 0), f"{path}/num_slices"),
        num_stacks=d.integer(m.get("num_stacks", 0), f"{path}/num_stacks"),
        num_rings=d.integer(m.get("num_rings", 0), f"{path}/num_rings"),
        kv=opt("kv"), ke=opt("ke"), damp=opt("damp"),
    )


def _shape(name: str, role: ShapeRole, m: Mapping[str, Any], path: str, t_cj: Array, d: _Doc,  # noqa: PLR0917
           base: Path | None) -> Shape:
    transform = t_cj @ d.pose(m.get("pose"), f"{path}/pose")
    geometry = _geometry_from(d.mapping(m.get("geometry"), f"{path}/geometry"),
                              f"{path}/geometry", d, base)
    color = None
    collidable = True
    if role is ShapeRole.VISUAL:
        material = m.get("material")
        if isinstance(material, Mapping) and material.get("diffuseColor") is not None:
            raw = material["diffuseColor"]
            cpath = f"{path}/material/diffuseColor"
            if isinstance(raw, list) and len(raw) == 3:  # noqa: PLR2004
                color = frozen_array([*d.vector(raw, 3, cpath), 1.0])
            else:
                color = frozen_array(d.vector(raw, 4, cpath))
    else:
        collidable = d.integer(m.get("bitmask", 1), f"{path}/bitmask") != 0
    return Shape(name=name, role=role, geometry=geometry, transform=frozen_array(transform),
                 color=color, collidable=collidable, location=d.loc(path))


def _geometry_from(g: Mapping[str, Any], path: str, d: _Doc,  # noqa: C901, PLR0911, PLR0912
                   base: Path | None) -> Geometry:
    kind = g.get("type")

    def pos(key: str, *alts: str) -> float:
        for k in (key, *alts):
            if k in g:
                return d.number(g[k], f"{path}/{k}", positive=True)
        raise d.fail(f"{kind} geometry needs {key!r}", path)

    if kind == "sphere":
        return Sphere(pos("radius"))
    if kind == "box":
        return Box(frozen_array(d.vector(g.get("size"), 3, f"{path}/size", positive=True)))
    if kind == "ellipsoid":
        return Ellipsoid(frozen_array(d.vector(g.get("size"), 3, f"{path}/size", positive=True)))
    if kind in ("cylinder", "capsule", "cone"):
        radius, height = pos("radius"), pos("height", "length")
        if kind == "cylinder":
            return Cylinder(radius, height)
        return Capsule(radius, height) if kind == "capsule" else Cone(radius, height)
    if kind == "pyramid":
        return Pyramid(pos("base_width"), pos("base_depth"), pos("height"))
    if kind == "plane":
        ext = d.opt_mapping(g, "skel", path)
        normal = _unit(d.vector(ext.get("normal", [0.0, 0.0, 1.0]), 3, f"{path}/skel/normal"),
                       f"{path}/skel/normal", d)
        return Plane(frozen_array(normal), d.number(ext.get("offset", 0.0), f"{path}/skel/offset"))
    if kind == "multi_sphere":
        spheres = g.get("spheres")
        if not isinstance(spheres, list) or not spheres:
            raise d.fail("multi_sphere needs a non-empty 'spheres' list", path)
        out = []
        for i, s in enumerate(spheres):
            sm = d.mapping(s, f"{path}/spheres[{i}]")
            out.append((d.number(sm.get("radius"), f"{path}/spheres[{i}]/radius", positive=True),
                        frozen_array(d.vector(sm.get("position"), 3,
                                              f"{path}/spheres[{i}]/position"))))
        return MultiSphere(tuple(out))
    if kind == "mesh":
        file_name = d.text(g.get("filename"), f"{path}/filename")
        scale = d.vector(g.get("scale", [1.0, 1.0, 1.0]), 3, f"{path}/scale")
        rel = file_name[len("file://"):] if file_name.startswith("file://") else file_name
        if "://" in rel:
            raise d.fail(f"mesh URI {file_name!r} has a scheme other than file://",
                         f"{path}/filename")
        p = Path(rel)
        if not p.is_absolute():
            if base is None:
                raise d.fail(f"mesh {file_name!r} is relative and the dictionary has no directory",
                             f"{path}/filename")
            p = base / p
        if not p.is_file():
            raise d.fail(f"mesh file {str(p)!r} does not exist", f"{path}/filename")
        return Mesh(file_name=str(p.resolve()), path=p.resolve(), scale=frozen_array(scale))
    raise d.fail(f"unknown geometry type {kind!r}", f"{path}/type",
                 "box, sphere, cylinder, capsule, plane, mesh (and SKEL's ellipsoid, cone,"
                 " pyramid, multi_sphere)")


def phobos_motors(doc: Any, *, source: str = "<dict>") -> tuple[PhobosMotor, ...]:  # noqa: ANN401
    """The ``motors`` of a parsed Phobos dictionary (all models), as typed records."""
    d = _Doc(source, {})
    root = d.mapping(doc, "")
    models = root.get("models") if "models" in root and "links" not in root else [root]
    out = []
    for i, m in enumerate(models if isinstance(models, list) else []):
        mpath = f"/models[{i}]" if models is not None and "links" not in root else ""
        for name, raw in d.opt_mapping(d.mapping(m, mpath), "motors", mpath).items():
            p = f"{mpath}/motors/{name}"
            mm = d.mapping(raw, p)
            hw = d.opt_mapping(mm, "hardware", p)
            known = {"model", "bus", "id", "mode", "gear_ratio", "direction", "zero_offset"}
            out.append(PhobosMotor(
                name=str(name), dof=d.text(mm.get("dof", mm.get("joint")), f"{p}/dof"),
                type=str(mm.get("type", "")), model=str(hw.get("model", "")),
                bus=str(hw.get("bus", "")), id=int(d.number(hw.get("id", -1), f"{p}/hardware/id")),
                mode=str(hw.get("mode", "")),
                gear_ratio=d.number(hw.get("gear_ratio", 1.0), f"{p}/hardware/gear_ratio"),
                direction=int(d.number(hw.get("direction", 1), f"{p}/hardware/direction")),
                zero_offset=d.number(hw.get("zero_offset", 0.0), f"{p}/hardware/zero_offset"),
                max_speed=d.number(mm.get("maxSpeed", math.inf), f"{p}/maxSpeed", finite=False),
                max_effort=d.number(mm.get("maxEffort", math.inf), f"{p}/maxEffort",
                                    finite=False),
                extra={k: v for k, v in hw.items() if k not in known},
            ))
    return tuple(out)
