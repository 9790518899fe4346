"""Write the model back to SKEL XML that DART's ``SkelParser`` (and ``load_skel``) reads.

The file is written so that both readers build the same model again:

* ``<physics>`` holds the time step, gravity and collision detector;
* each skeleton gets its frame S as ``<transformation>`` and ``<mobile>``;
* each body gets ``S^-1 W`` (``W`` its rest pose) as ``<transformation>``, so the
  reader's ``W = S T_body`` and ``T_parent_to_joint = W(p)^-1 W(c) T_child_to_joint``
  give the model's transforms back (to rounding: angles go through ``atan2``);
* each joint gets ``T_child_to_joint`` as ``<transformation>``, its axes, pitch,
  euler order or plane, and one ``<dof local_index=..>`` per DOF with every limit,
  initial value and dynamics parameter that differs from DART's default;
* a follower's coupling is a ``<mimic joint= multiplier= offset=>`` child of its joint,
  which ``load_skel`` reads and DART 6.20's ``SkelParser`` ignores (DART alone builds
  the follower as an independent joint: docs/model.md, "Mimic joints");
* a DOF name is written only when the model marks it preserved (``<dof name>``),
  so the reader derives the other names (``J_x``, ``default(1)``, ...) as DART does;
* a moment of inertia computed from the shapes is left out (the reader computes it
  again from the same shapes), any other is written;
* an implicit ``root`` joint (one DART adds itself) is left out when it still has
  DART's defaults, so the reader adds it again in the same place.

Joints are written in the model's order, which is a valid DART build order, and
bodies in the model's order, so indices, names and de-duplicated names come back
the same. Numbers are written with ``repr`` (shortest text that reads back to the
same double).

Mesh file names are kept as written when they still resolve to the same file from
the directory the SKEL file is written to; otherwise a path relative to that
directory (or an absolute one) is written.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from lxml import etree

from skel_ros.model.errors import Location
from skel_ros.model.interchange_errors import ExportError
from skel_ros.model.transforms import inverse, matrix_to_euler_xyz
from skel_ros.model.types import (
    Array,
    Body,
    Box,
    Capsule,
    Cone,
    Cylinder,
    Dof,
    Ellipsoid,
    Geometry,
    Joint,
    JointType,
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
)

__all__ = ["world_to_skel", "write_skel"]

_AXIS_TAGS = ("axis", "axis2", "axis3")
# (attribute of Dof, SKEL element, SKEL attribute, DART's default)
_DOF_BOUNDS = (
    ("position", "lower", -math.inf),
    ("position", "upper", math.inf),
    ("velocity", "lower", -math.inf),
    ("velocity", "upper", math.inf),
    ("acceleration", "lower", -math.inf),
    ("acceleration", "upper", math.inf),
    ("force", "lower", -math.inf),
    ("force", "upper", math.inf),
)
_DOF_DYNAMICS = (
    ("damping", "damping"),
    ("coulomb_friction", "friction"),
    ("spring_rest_position", None),
    ("spring_stiffness", "spring_stiffness"),
)


def world_to_skel(world: World, *, base_dir: str | os.PathLike[str] | None = None) -> str:
    """The SKEL XML text of ``world``.

    Args:
        world: The model.
        base_dir: Directory the text will be saved in (mesh paths are written
            relative to it). None writes meshes with absolute paths, so the text
            loads from anywhere.

    Returns:
        The document, starting with an XML declaration.

    Raises:
        ExportError: When a name cannot be written in XML (control characters)
            or refers to something SKEL would read differently.
    """
    base = None if base_dir is None else Path(os.fspath(base_dir)).resolve()
    root = etree.Element("skel", version="1.0")
    w = etree.SubElement(root, "world", name="world")
    physics = etree.SubElement(w, "physics")
    _text(physics, "time_step", _num(world.time_step))
    _text(physics, "gravity", _vec(world.gravity))
    _text(physics, "collision_detector", world.collision_detector.value)
    for skel in world.skeletons:
        _write_skeleton(w, skel, base, world.source)
    etree.indent(root, space="  ")
    body = str(etree.tostring(root, encoding="unicode"))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def write_skel(world: World, path: str | os.PathLike[str]) -> Path:
    """Write ``world`` as a SKEL file at ``path`` (meshes relative to its directory).

    Returns:
        The path written.

    Raises:
        ExportError: As :func:`world_to_skel`, or when the file cannot be written.
    """
    out = Path(os.fspath(path))
    text = world_to_skel(world, base_dir=out.resolve().parent)
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write file: {exc.strerror or exc}", Location(str(out))) from None
    return out


# --------------------------------------------------------------------------- helpers


def _num(x: float) -> str:
    return repr(float(x))


def _vec(values: object) -> str:
    return " ".join(_num(v) for v in np.asarray(values, dtype=float).ravel())


def _text(parent: etree._Element, tag: str, text: str) -> etree._Element:
    el = etree.SubElement(parent, tag)
    el.text = text
    return el


def _set(el: etree._Element, key: str, value: str, where: Location) -> None:
    try:
        el.set(key, value)
    except ValueError as exc:  # control characters, NUL: not representable in XML 1.0
        raise ExportError(f"{key} {value[:40]!r} cannot be written in XML: {exc}", where) from None


def _name_el(parent: etree._Element, tag: str, text: str, where: Location) -> None:
    try:
        _text(parent, tag, text)
    except ValueError as exc:
        raise ExportError(f"<{tag}> {text[:40]!r} cannot be written in XML: {exc}", where) from None


def _is_identity(t: Array) -> bool:
    return bool(np.array_equal(np.asarray(t), np.eye(4)))


def _transformation(parent: etree._Element, t: Array) -> None:
    """``<transformation>x y z a b c</transformation>``, left out for the exact identity."""
    if _is_identity(t):
        return
    m = np.asarray(t, dtype=float)
    a, b, c = matrix_to_euler_xyz(m)
    _text(parent, "transformation", _vec([m[0, 3], m[1, 3], m[2, 3], a, b, c]))


# --------------------------------------------------------------------------- skeleton


def _write_skeleton(w: etree._Element, skel: Skeleton, base: Path | None, source: str) -> None:
    el = etree.SubElement(w, "skeleton")
    where = skel.location if skel.location.file else Location(source)
    _set(el, "name", skel.name, where)
    _transformation(el, skel.frame)
    _text(el, "mobile", "true" if skel.mobile else "false")
    s_inv = inverse(np.asarray(skel.frame, dtype=float))
    body_names = {b.name for b in skel.bodies}
    for body in skel.bodies:
        _write_body(el, body, s_inv, base)
    for joint in skel.joints:
        if joint.implicit and _default_root(joint, skel):
            continue
        if joint.parent is None and "world" in body_names:
            raise ExportError(
                f"joint {joint.name!r} hangs from the world, but skeleton {skel.name!r} has a"
                " body named 'world', which SKEL's <parent>world</parent> would mean",
                joint.location,
                "rename the body",
            )
        _write_joint(el, joint, skel)


def _default_root(joint: Joint, skel: Skeleton) -> bool:
    """True when the implicit root joint is exactly the one DART would add again."""
    if joint.type is not JointType.FREE or joint.name != "root" or joint.parent is not None:
        return False
    if not _is_identity(joint.T_child_to_joint) or joint.actuator.value != "force":
        return False
    body = skel.body(joint.child)
    if not np.array_equal(np.asarray(joint.T_parent_to_joint), np.asarray(body.rest_transform)):
        return False
    dofs = [skel.dof(d) for d in joint.dofs]
    return all(not _dof_changes(d) and not d.name_preserved for d in dofs)


def _dof_changes(dof: Dof) -> list[tuple[str, str, float]]:
    out = []
    for kind, bound, default in _DOF_BOUNDS:
        v = getattr(dof, f"{kind}_{bound}")
        if v != default:
            out.append((kind, bound, v))
    for kind, attr in (("position", "initial_position"), ("velocity", "initial_velocity")):
        v = getattr(dof, attr)
        if v != 0.0:
            out.append((kind, "initial", v))
    return out


# --------------------------------------------------------------------------- body


def _write_body(parent: etree._Element, body: Body, s_inv: Array, base: Path | None) -> None:
    el = etree.SubElement(parent, "body")
    _set(el, "name", body.name, body.location)
    _text(el, "gravity", "1" if body.gravity_mode else "0")
    _transformation(el, s_inv @ np.asarray(body.rest_transform, dtype=float))
    inertia = etree.SubElement(el, "inertia")
    _text(inertia, "mass", _num(body.inertia.mass))
    _text(inertia, "offset", _vec(body.inertia.com))
    if not body.inertia.moment_from_shapes:
        m = np.asarray(body.inertia.moment, dtype=float)
        moi = etree.SubElement(inertia, "moment_of_inertia")
        for tag, (i, j) in (("ixx", (0, 0)), ("iyy", (1, 1)), ("izz", (2, 2)),
                            ("ixy", (0, 1)), ("ixz", (0, 2)), ("iyz", (1, 2))):
            _text(moi, tag, _num(m[i, j]))
    for shape in body.shapes:
        _write_shape(el, shape, base)
    for marker in body.markers:
        m_el = etree.SubElement(el, "marker")
        _set(m_el, "name", marker.name, body.location)
        _text(m_el, "offset", _vec(marker.offset))
    if body.soft is not None:
        _write_soft(el, body.soft)


def _write_shape(parent: etree._Element, shape: Shape, base: Path | None) -> None:
    visual = shape.role is ShapeRole.VISUAL
    el = etree.SubElement(parent, "visualization_shape" if visual else "collision_shape")
    _transformation(el, shape.transform)
    _write_geometry(etree.SubElement(el, "geometry"), shape.geometry, base, shape.location)
    if visual and shape.color is not None:
        _text(el, "color", _vec(shape.color))
    if not visual and not shape.collidable:
        _text(el, "collidable", "0")


def _write_geometry(g: etree._Element, geometry: Geometry, base: Path | None,
                    where: Location) -> None:
    if isinstance(geometry, Sphere):
        _text(etree.SubElement(g, "sphere"), "radius", _num(geometry.radius))
    elif isinstance(geometry, (Box, Ellipsoid)):
        _text(etree.SubElement(g, geometry.kind), "size", _vec(geometry.size))
    elif isinstance(geometry, (Cylinder, Capsule, Cone)):
        e = etree.SubElement(g, geometry.kind)
        _text(e, "radius", _num(geometry.radius))
        _text(e, "height", _num(geometry.height))
    elif isinstance(geometry, Pyramid):
        e = etree.SubElement(g, "pyramid")
        _text(e, "base_width", _num(geometry.base_width))
        _text(e, "base_depth", _num(geometry.base_depth))
        _text(e, "height", _num(geometry.height))
    elif isinstance(geometry, Plane):
        e = etree.SubElement(g, "plane")
        _text(e, "normal", _vec(geometry.normal))
        _text(e, "offset", _num(geometry.offset))
    elif isinstance(geometry, MultiSphere):
        e = etree.SubElement(g, "multi_sphere")
        for radius, position in geometry.spheres:
            s = etree.SubElement(e, "sphere")
            _text(s, "radius", _num(radius))
            _text(s, "position", _vec(position))
    elif isinstance(geometry, Mesh):
        e = etree.SubElement(g, "mesh")
        _name_el(e, "file_name", _mesh_file_name(geometry, base), where)
        _text(e, "scale", _vec(geometry.scale))
    else:  # pragma: no cover - every Geometry is handled above
        raise ExportError(f"unknown geometry {type(geometry).__name__}", where)


def _mesh_file_name(mesh: Mesh, base: Path | None) -> str:
    if mesh.path is None:
        return mesh.file_name
    target = Path(mesh.path).resolve()
    if base is None:
        return str(target)
    rel = mesh.file_name
    if rel.startswith("file://"):
        rel = rel[len("file://"):]
    written = Path(rel)
    if (written if written.is_absolute() else base / written).resolve() == target:
        return mesh.file_name
    try:
        return os.path.relpath(target, base)
    except ValueError:  # another drive (Windows)
        return str(target)


def _write_soft(parent: etree._Element, soft: SoftShape) -> None:
    el = etree.SubElement(parent, "soft_shape")
    _text(el, "total_mass", _num(soft.total_mass))
    _transformation(el, soft.transform)
    g = etree.SubElement(etree.SubElement(el, "geometry"), soft.kind)
    if soft.kind == "sphere":
        _text(g, "radius", _num(soft.radius))
    elif soft.kind in ("box", "ellipsoid"):
        _text(g, "size", _vec(soft.size))
        if soft.kind == "box":
            _text(g, "frags", " ".join(str(int(f)) for f in soft.frags))
    else:  # cylinder
        _text(g, "radius", _num(soft.radius))
        _text(g, "height", _num(soft.height))
        _text(g, "num_rings", str(int(soft.num_rings)))
    if soft.kind != "box":
        _text(g, "num_slices", str(int(soft.num_slices)))
        _text(g, "num_stacks", str(int(soft.num_stacks)))
    for tag in ("kv", "ke", "damp"):
        value = getattr(soft, tag)
        if value is not None:
            _text(el, tag, _num(value))


# --------------------------------------------------------------------------- joint


def _write_joint(parent: etree._Element, joint: Joint, skel: Skeleton) -> None:
    el = etree.SubElement(parent, "joint")
    _set(el, "type", joint.type.value, joint.location)
    _set(el, "name", joint.name, joint.location)
    _set(el, "actuator", joint.actuator.value, joint.location)
    _name_el(el, "parent", joint.parent if joint.parent is not None else "world", joint.location)
    _name_el(el, "child", joint.child, joint.location)
    _transformation(el, joint.T_child_to_joint)
    spec = joint.type.spec
    for i in range(spec.axes):
        ax = etree.SubElement(el, _AXIS_TAGS[i])
        _text(ax, "xyz", _vec(joint.axes[i]))
        if spec.pitch:
            _text(ax, "pitch", _num(joint.pitch))
    if spec.euler_order and joint.euler_order is not None:
        _text(el, "axis_order", joint.euler_order.value)
    if spec.plane and joint.plane is not None:
        plane = etree.SubElement(el, "plane", type=joint.plane.value)
        if joint.plane is PlaneType.ARBITRARY:
            for k, axis in enumerate(joint.plane_axes[:2], start=1):
                _text(etree.SubElement(plane, f"translation_axis{k}"), "xyz", _vec(axis))
    for k, dof_name in enumerate(joint.dofs):
        _write_dof(el, skel.dof(dof_name), k, joint)
    _write_mimic(el, joint, skel)


def _write_mimic(el: etree._Element, joint: Joint, skel: Skeleton) -> None:
    """A follower's ``<mimic>`` (load_skel reads it; DART 6.20's SkelParser ignores it)."""
    mimic = skel.dof(joint.dofs[0]).mimic if joint.num_dofs == 1 else None
    if mimic is None:
        return
    etree.SubElement(el, "mimic", joint=skel.dof(mimic.leader).joint,
                     multiplier=_num(mimic.multiplier), offset=_num(mimic.offset))


def _write_dof(parent: etree._Element, dof: Dof, k: int, joint: Joint) -> None:
    el = etree.SubElement(parent, "dof", local_index=str(k))
    if dof.name_preserved:
        _set(el, "name", dof.name, joint.location)
    by_kind: dict[str, etree._Element] = {}
    for kind, bound, value in _dof_changes(dof):
        if kind not in by_kind:
            by_kind[kind] = etree.SubElement(el, kind)
        by_kind[kind].set(bound, _num(value))
    for attr, tag in _DOF_DYNAMICS:
        value = getattr(dof, "rest_position" if attr == "spring_rest_position" else attr)
        if value != 0.0:
            _text(el, tag or "spring_rest_position", _num(value))
