"""SKEL (DART XML) reader building exactly the model DART 6.20 builds.

One ``_parse_<element>`` function per element. The rules (defaults, DOF names,
build order, implicit ``root`` joints, composite inertia, name de-duplication)
are those of ``shared/spec/skel-semantics.md``; where DART would crash, hang or
abort, a :class:`~skel_ros.model.errors.SkelError` is raised instead, and where
DART silently drops something that is almost surely a mistake, a warning with
file:line is recorded.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from skel_ros.model import inertia as inertia_mod
from skel_ros.model.errors import (
    Location,
    SkelError,
    SkelLegacyFormatError,
    SkelMissingElementError,
    SkelReferenceError,
    SkelSyntaxError,
    SkelUnsupportedError,
    SkelValueError,
)
from skel_ros.model.meshes import MeshReadError, mesh_bounds
from skel_ros.model.transforms import (
    RIGID_IDENTITY,
    Rigid,
    rigid_from_skel,
    rigid_inverse,
    rigid_mul,
    rigid_to_matrix,
)
from skel_ros.model.types import (
    IDENTITY4,
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
from skel_ros.model.xmlread import Element, XmlReader, frozen_maker

if TYPE_CHECKING:
    from collections.abc import Sequence

_MAX_BYTES = 256 * 1024 * 1024
_ASCII_INT = re.compile(r"[+-]?[0-9]+\Z")
_MAX_INDEX_DIGITS = 9  # checked before int(): Python refuses > 4300 digits, std::stoi > 2**31
_LEGACY_START = re.compile(rb"dofs\s*\{")

_WORLD_TAGS = frozenset({"physics", "skeleton"})
_PHYSICS_TAGS = frozenset({"time_step", "gravity", "collision_detector"})
_SKELETON_TAGS = frozenset({"transformation", "mobile", "body", "joint"})
_SKELETON_KNOWN = _SKELETON_TAGS | {"immobile", "self_collide"}
_BODY_TAGS = frozenset(
    {
        "gravity",
        "transformation",
        "inertia",
        "visualization_shape",
        "collision_shape",
        "marker",
        "soft_shape",
    }
)
_BODY_KNOWN = _BODY_TAGS | {"self_collide"}
_INERTIA_TAGS = frozenset({"mass", "offset", "moment_of_inertia"})
_INERTIA_KNOWN = _INERTIA_TAGS | {"transformation"}
_MOMENT_TAGS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")
_MOMENT_KNOWN = frozenset(_MOMENT_TAGS)
_VISUAL_KNOWN = frozenset({"transformation", "geometry", "color"})
_COLLISION_KNOWN = frozenset({"transformation", "geometry", "collidable"})
_JOINT_COMMON = frozenset({"parent", "child", "transformation", "init_pos", "init_vel", "dof"})
_AXIS_TAGS = frozenset({"xyz", "pitch", "limit", "dynamics", "damping"})
_DYNAMICS_TAGS = frozenset({"damping", "friction", "spring_rest_position", "spring_stiffness"})
_DOF_TAGS = frozenset({"position", "velocity", "acceleration", "force"}) | _DYNAMICS_TAGS
_SOFT_SHAPE_TAGS = frozenset({"total_mass", "transformation", "geometry", "kv", "ke", "damp"})
_RGB, _RGBA = 3, 4  # numbers in a <color>
_PARALLEL = 1e-9  # |a1 x a2| below which a plane's translation axes are parallel
_PLANAR_ROTATION_DOF = 2  # DART names it "default"
# <axis*> children read, by whether the joint type reads <xyz> and <pitch> there.
_AXIS_KNOWN = {
    (xyz, pitch): frozenset(
        t for t in _AXIS_TAGS if (xyz or t != "xyz") and (pitch or t != "pitch")
    )
    for xyz in (False, True)
    for pitch in (False, True)
}
_AXIS_TAGS_BY_INDEX = ("axis", "axis2", "axis3")
_AXIS_ELEMENTS = frozenset(_AXIS_TAGS_BY_INDEX)

_GEOMETRY_ORDER = (
    "sphere",
    "box",
    "ellipsoid",
    "cylinder",
    "capsule",
    "cone",
    "pyramid",
    "plane",
    "multi_sphere",
    "mesh",
)

# Which <axisN> elements each joint type reads, and whether <xyz> is read there.
_AXES_READ: dict[JointType, int] = {
    JointType.WELD: 0,
    JointType.REVOLUTE: 1,
    JointType.PRISMATIC: 1,
    JointType.SCREW: 1,
    JointType.UNIVERSAL: 2,
    JointType.BALL: 0,
    JointType.EULER: 3,
    JointType.TRANSLATIONAL: 3,
    JointType.TRANSLATIONAL2D: 2,
    JointType.PLANAR: 3,
    JointType.FREE: 0,
}
_XYZ_AXES: dict[JointType, int] = {
    JointType.REVOLUTE: 1,
    JointType.PRISMATIC: 1,
    JointType.SCREW: 1,
    JointType.UNIVERSAL: 2,
}
_Z_AXIS = frozen_array([0.0, 0.0, 1.0])
_DEFAULT_AXES: dict[JointType, tuple[Array, ...]] = {
    JointType.REVOLUTE: (_Z_AXIS,),
    JointType.PRISMATIC: (_Z_AXIS,),
    JointType.SCREW: (_Z_AXIS,),
    JointType.UNIVERSAL: (frozen_array([1.0, 0.0, 0.0]), frozen_array([0.0, 1.0, 0.0])),
}
_DEFAULT_SCREW_PITCH = 0.1

# Enum lookups by value without the Enum call machinery.
_JOINT_TYPES = {t.value: t for t in JointType}
_ACTUATOR_TYPES = {a.value: a for a in ActuatorType}

# Child elements each joint type reads (ball and free joints ignore <axis*>, with a warning).
_JOINT_KNOWN: dict[JointType, frozenset[str]] = {
    t: _JOINT_COMMON
    | (_AXIS_ELEMENTS if t not in (JointType.BALL, JointType.FREE) else frozenset())
    | ({"axis_order"} if t is JointType.EULER else set())
    | ({"plane"} if t in (JointType.PLANAR, JointType.TRANSLATIONAL2D) else set())
    for t in JointType
}

_PLANE_AXES = {
    PlaneType.XY: ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
    PlaneType.YZ: ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    PlaneType.ZX: ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)),
}
_PLANE_SUFFIXES = {
    PlaneType.XY: ("_x", "_y"),
    PlaneType.YZ: ("_y", "_z"),
    PlaneType.ZX: ("_z", "_x"),
    PlaneType.ARBITRARY: ("_1", "_2"),
}

_ZERO3 = frozen_array(np.zeros(3))

# The model's objects, made without their frozen __init__ (see frozen_maker): the
# parser makes thousands, and the fields go positionally, in the classes' order.
_new_dof = frozen_maker(Dof)
_new_joint = frozen_maker(Joint)
_new_body = frozen_maker(Body)
_new_inertia = frozen_maker(Inertia)
_new_shape = frozen_maker(Shape)

_SHAPE_KINDS = (
    ("visualization_shape", ShapeRole.VISUAL, " - visual shape"),
    ("collision_shape", ShapeRole.COLLISION, " - collision shape"),
)

_LEGACY_HINT = (
    "this is DART's legacy pre-XML .skel text format (dofs { ... }), which DART 6 "
    "cannot load either; convert it to SKEL XML (<skel><world>...)"
)


# --------------------------------------------------------------------------- public API


def load_skel(source: str | os.PathLike[str], *, name: str | None = None) -> World:
    """Read a SKEL world.

    Args:
        source: A path to a ``.skel`` file, or a string of SKEL XML (anything
            starting with ``<`` after optional whitespace / BOM; a blank string
            is an empty document).
        name: Name used in messages for an XML string (default ``<string>``);
            for a string it is also the base for relative mesh paths when it
            names an existing file or directory.

    Returns:
        The immutable world model.

    Raises:
        SkelError: For anything that prevents loading; the message names the
            file, the line and the element path. Nothing else escapes.
    """
    try:
        return _load(source, name)
    except SkelError:
        raise
    except RecursionError:
        raise SkelSyntaxError(
            "document is nested too deeply", Location(_source_name(source, name))
        ) from None
    except MemoryError:
        raise SkelSyntaxError(
            "document is too large", Location(_source_name(source, name))
        ) from None
    except Exception as exc:  # the API promises SkelError only
        raise SkelError(
            f"internal error while reading ({type(exc).__name__}: {exc}); please report this",
            Location(_source_name(source, name)),
        ) from exc


def _source_name(source: object, name: str | None) -> str:
    if name is not None:
        return name
    if isinstance(source, os.PathLike):
        return os.fsdecode(source)
    if isinstance(source, str) and not _looks_like_xml(source):
        return source
    return "<string>"


def _looks_like_xml(text: str) -> bool:
    # A blank string is an empty document, not a path ("" would name the current directory).
    stripped = text.lstrip("\ufeff \t\r\n")
    return not stripped or stripped.startswith("<")


def _load(source: str | os.PathLike[str], name: str | None) -> World:
    base_dir: Path | None
    if isinstance(source, str) and _looks_like_xml(source):
        label = name or "<string>"
        data = source.encode("utf-8", "surrogatepass")
        base_dir = None
        if name:
            candidate = Path(name)
            base_dir = candidate if candidate.is_dir() else candidate.parent
    else:
        path = Path(os.fspath(source))
        label = name or str(path)
        try:
            if path.is_dir():
                raise SkelSyntaxError("is a directory, not a SKEL file", Location(label))
            if path.exists() and not path.is_file():
                # A FIFO or a device such as /dev/zero would block or never end.
                raise SkelSyntaxError("is not a regular file", Location(label))
            size = path.stat().st_size
            if size > _MAX_BYTES:
                raise SkelSyntaxError(f"file is too large ({size} bytes)", Location(label))
            data = path.read_bytes()
        except OSError as exc:
            raise SkelSyntaxError(
                f"cannot read file: {exc.strerror or exc}", Location(label)
            ) from None
        except ValueError as exc:  # e.g. "embedded null byte": not a possible file name
            raise SkelSyntaxError(
                f"cannot read file: {exc}", Location(label),
                "XML text must start with '<' to be read as a string, not as a path",
            ) from None
        base_dir = path.resolve().parent
    return _parse_document(data, label, base_dir)


def _parse_document(data: bytes, label: str, base_dir: Path | None) -> World:
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise SkelSyntaxError("the document is empty", Location(label, 1),
                              "a SKEL file is <skel><world>...</world></skel>")
    if not stripped.startswith(b"<"):
        # Every legacy file starts with its "dofs {" block; anything else (binary data,
        # JSON, ...) is just not XML.
        if _LEGACY_START.match(stripped):
            raise SkelLegacyFormatError("not an XML file", Location(label, 1), _LEGACY_HINT)
        raise SkelSyntaxError(
            "not an XML file (SKEL files start with <skel>)", Location(label, 1)
        )
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
        remove_comments=True, remove_pis=True, remove_blank_text=True,
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or 0
        raise SkelSyntaxError(f"malformed XML: {exc.msg}", Location(label, line)) from None
    except ValueError as exc:
        raise SkelSyntaxError(f"malformed XML: {exc}", Location(label)) from None
    reader = XmlReader(label)
    if root.tag != "skel":
        raise SkelSyntaxError(
            f"root element is <{root.tag}>, not <skel>", reader.loc(root),
            "a SKEL file is <skel><world>...</world></skel>",
        )
    world_el = reader.child(root, "world")
    if world_el is None:
        hint = ""
        if reader.child(root, "skeleton") is not None:
            hint = "this looks like a single-skeleton file; wrap the <skeleton> in <world>"
        raise SkelMissingElementError("<skel> has no <world> element", reader.loc(root), hint)
    for extra in list(reader.children(root, "world"))[1:]:
        reader.warn("only the first <world> is read by DART; this one is ignored", extra)
    reader.check_children(root, frozenset({"world"}))
    # Huge but finite numbers (1e308) can overflow in the transforms and inertias built
    # from them; numpy's overflow warnings are silenced here and the results are checked
    # with _require_finite where they are made.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _parse_world(world_el, reader, base_dir)


def _require_finite(value: Array, what: str, r: XmlReader, el: Element) -> None:
    """Raise if a value computed from finite input overflowed to inf / NaN."""
    if not np.all(np.isfinite(value)):
        raise SkelValueError(
            f"{what} is not finite (inf/NaN from extremely large or small input values)",
            r.loc(el),
            "DART would build a model with inf/NaN values from this; use realistic magnitudes",
        )


def _unit_vector(v: Sequence[float], what: str, r: XmlReader, el: Element) -> Array:
    """``v`` normalised as DART does; a zero or overflowing norm is an error."""
    x, y, z = (float(c) for c in v)
    norm = math.sqrt(x * x + y * y + z * z)
    if norm == 0.0:
        raise SkelValueError(f"{what} is the zero vector", r.loc(el))
    if not math.isfinite(norm):
        raise SkelValueError(
            f"{what} is too large to normalise", r.loc(el),
            "its squared length overflows, and DART's normalisation gives a zero vector",
        )
    return frozen_array((x / norm, y / norm, z / norm))


# --------------------------------------------------------------------------- world


def _parse_world(el: Element, r: XmlReader, base_dir: Path | None) -> World:
    r.check_children(el, _WORLD_TAGS)
    time_step = 0.001
    gravity = [0.0, 0.0, -9.81]
    detector = CollisionDetector.FCL
    physics = r.child(el, "physics")
    if physics is not None:
        r.check_children(physics, _PHYSICS_TAGS)
        ts = r.child(physics, "time_step")
        if ts is not None:
            time_step = r.number(ts, positive=True)
        g = r.child(physics, "gravity")
        if g is not None:
            gravity = r.vector(g, 3)
        cd = r.child(physics, "collision_detector")
        if cd is not None:
            text = (cd.text or "").strip()
            try:
                detector = CollisionDetector(text)
            except ValueError:
                r.warn(
                    f"unknown collision detector {text[:40]!r} (fcl, fcl_mesh, dart, bullet, ode);"
                    " DART uses FCL",
                    cd,
                )
    names = _NameManager()
    skeletons = [_parse_skeleton(s, r, base_dir, names) for s in r.children(el, "skeleton")]
    return World(
        time_step=time_step,
        gravity=frozen_array(gravity),
        collision_detector=detector,
        skeletons=tuple(skeletons),
        source=r.source,
        warnings=tuple(r.warnings),
    )


class _NameManager:
    """DART's NameManager: a repeated name gets ``(1)``, ``(2)``, ... appended."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        # Next count to try per base name: names are never released, so every lower
        # count is still taken (this keeps many repeats linear, not quadratic).
        self._next: dict[str, int] = {}

    def issue(self, name: str) -> str:
        new = name
        count = self._next.get(name, 1)
        if new in self._used:
            new = f"{name}({count})"
            count += 1
            while new in self._used:
                new = f"{name}({count})"
                count += 1
            self._next[name] = count
        self._used.add(new)
        return new


# --------------------------------------------------------------------------- skeleton


@dataclass
class _BodyDraft:
    el: Element
    kids: dict[str, Element]  # first child element per tag
    name: str
    rest: Array
    rest_rigid: Rigid
    mass: float
    com: Array
    moment: Array | None
    has_inertia: bool
    gravity: bool
    markers: list[tuple[str, Array]]
    soft: SoftShape | None


@dataclass
class _DofDraft:
    name: str | None = None
    position_lower: float = -math.inf
    position_upper: float = math.inf
    velocity_lower: float = -math.inf
    velocity_upper: float = math.inf
    acceleration_lower: float = -math.inf
    acceleration_upper: float = math.inf
    force_lower: float = -math.inf
    force_upper: float = math.inf
    initial_position: float = 0.0
    initial_velocity: float = 0.0
    damping: float = 0.0
    coulomb_friction: float = 0.0
    spring_stiffness: float = 0.0
    rest_position: float = 0.0


@dataclass
class _JointDraft:
    el: Element
    name: str
    type: JointType
    actuator: ActuatorType
    parent: str | None
    child: str
    t_parent: Array
    t_child: Array
    axes: list[Array]
    pitch: float
    euler_order: EulerOrder | None
    plane: PlaneType | None
    plane_axes: list[Array]
    dofs: list[_DofDraft] = field(default_factory=list)
    implicit: bool = False


def _parse_skeleton(
    el: Element, r: XmlReader, base_dir: Path | None, world_names: _NameManager
) -> Skeleton:
    kids = r.index(el, _SKELETON_KNOWN)
    raw_name = el.get("name")
    if raw_name is None:
        r.warn('<skeleton> has no "name" attribute; DART names it ""', el)
        raw_name = ""
    name = world_names.issue(raw_name)
    if name != raw_name:
        r.warn(f"skeleton name {raw_name!r} is used twice; DART renames it {name!r}", el)
    frame_rigid = _transform(kids, r)
    frame = IDENTITY4 if frame_rigid is None else rigid_to_matrix(frame_rigid)
    mobile = True
    mobile_el = kids.get("mobile")
    if mobile_el is not None:
        mobile = r.flag(mobile_el)
    immobile = kids.get("immobile")
    if immobile is not None:
        r.warn(
            "<immobile> is ignored by DART (it reads <mobile>); use <mobile>false</mobile>",
            immobile,
        )

    bodies: dict[str, _BodyDraft] = {}
    for body_el in r.children(el, "body"):
        draft = _parse_body(body_el, r, frame_rigid or RIGID_IDENTITY)
        if draft.name in bodies:
            raise SkelReferenceError(
                f"body name {draft.name!r} is used twice in skeleton {name!r}",
                r.loc(body_el),
                "DART drops the second body but attaches its shapes to the first",
            )
        bodies[draft.name] = draft

    joints: dict[str, _JointDraft] = {}  # by child body name, in file order
    for joint_el in r.children(el, "joint"):
        joint = _parse_joint(joint_el, r, bodies)
        if joint is None:
            continue
        if joint.child in joints:
            r.warn(
                f"body {joint.child!r} already has parent joint {joints[joint.child].name!r};"
                f" DART discards joint {joint.name!r}",
                joint_el,
            )
            continue
        joints[joint.child] = joint

    order = _assembly_order(joints, bodies, r)
    return _build_skeleton(
        el, r, name, mobile=mobile, frame=frame, bodies=bodies, order=order, base_dir=base_dir
    )


def _transform(kids: dict[str, Element], r: XmlReader) -> Rigid | None:
    """The ``<transformation>`` among ``kids``, or None when there is none (identity)."""
    t = kids.get("transformation")
    if t is None:
        return None
    return rigid_from_skel(r.vector(t, 6))


def _optional_transform(kids: dict[str, Element], r: XmlReader) -> Array:
    """The ``<transformation>`` among ``kids`` as a read-only 4x4 matrix (identity if none)."""
    t = _transform(kids, r)
    return IDENTITY4 if t is None else rigid_to_matrix(t)


def _finite(values: Sequence[float]) -> bool:
    """True when every value is finite (one sum; an overflowing sum is checked one by one)."""
    total = sum(values)
    return total - total == 0.0 or all(map(math.isfinite, values))


def _assembly_order(
    joints: dict[str, _JointDraft],
    bodies: dict[str, _BodyDraft],
    r: XmlReader,
) -> list[_JointDraft]:
    """DART's build order: file order, but every joint after its ancestors.

    A body that is some joint's parent but no joint's child gets an implicit
    free joint named ``root``. A loop in the parent chain (DART hangs) raises.
    """
    # DART takes the earliest joint not yet built; if its parent body is not built
    # yet it moves up to the joint building that body, builds the top-most one and
    # starts again from the earliest joint. That is the same order as building,
    # for each joint in file order, its unbuilt ancestors top-down and then itself,
    # which is what is done here, in linear time (a literal restart loop is
    # quadratic or worse on long chains written leaf first).
    created: set[str] = set()
    order: list[_JointDraft] = []
    for first in joints.values():
        if first.child in created:
            continue
        chain, rootless = _unbuilt_chain(first, joints, created, r)
        if rootless is not None:
            # The parent body exists but no joint has it as child: DART adds a
            # free joint named "root" that holds it at its rest pose.
            parent_body = bodies[rootless]
            r.warn(
                f"body {rootless!r} is the parent of joint {chain[-1].name!r} but the child of"
                " no joint; DART gives it a free joint named 'root'",
                parent_body.el,
            )
            order.append(_implicit_root(parent_body))
            created.add(rootless)
        for built in reversed(chain):
            order.append(built)
            created.add(built.child)
    for body in bodies.values():
        if body.name in created:
            continue
        if (body.has_inertia and body.moment is None) or _has_shapes(body):
            raise SkelUnsupportedError(
                f"body {body.name!r} is not attached by any joint but has shapes or a mass-only"
                " inertia",
                r.loc(body.el),
                "DART crashes (segfault) on this; attach it with a joint (e.g. weld to world)"
                " or remove it",
            )
        r.warn(f"body {body.name!r} is not attached by any joint; DART drops it", body.el)
    return order


def _unbuilt_chain(
    first: _JointDraft, joints: dict[str, _JointDraft], created: set[str], r: XmlReader
) -> tuple[list[_JointDraft], str | None]:
    """``first``, the joint of its parent body, ... up to the top-most unbuilt joint.

    Returns the chain and, when the top-most joint's parent body is the child of
    no joint, that body's name (it needs an implicit root joint), else None.
    """
    chain: list[_JointDraft] = []
    on_chain: set[str] = set()
    joint = first
    while True:
        if joint.child in on_chain:
            names = [*(j.child for j in chain), joint.child]
            raise SkelReferenceError(
                "joints form a loop: " + " -> ".join(repr(c) for c in names),
                r.loc(joint.el),
                "DART hangs on this file; every body needs exactly one path to the world",
            )
        chain.append(joint)
        on_chain.add(joint.child)
        if joint.parent is None or joint.parent in created:
            return chain, None
        parent_joint = joints.get(joint.parent)
        if parent_joint is None:
            return chain, joint.parent
        joint = parent_joint


def _implicit_root(body: _BodyDraft) -> _JointDraft:
    return _JointDraft(
        el=body.el,
        name="root",
        type=JointType.FREE,
        actuator=ActuatorType.FORCE,
        parent=None,
        child=body.name,
        t_parent=body.rest,
        t_child=IDENTITY4,
        axes=[],
        pitch=0.0,
        euler_order=None,
        plane=None,
        plane_axes=[],
        dofs=[_DofDraft() for _ in range(6)],
        implicit=True,
    )


def _has_shapes(body: _BodyDraft) -> bool:
    return "visualization_shape" in body.kids or "collision_shape" in body.kids


# --------------------------------------------------------------------------- body


def _parse_body(el: Element, r: XmlReader, frame: Rigid) -> _BodyDraft:
    kids = r.index(el, _BODY_KNOWN)
    name = r.attribute(el, "name")
    gravity = True
    g = kids.get("gravity")
    if g is not None:
        gravity = r.flag(g)
    # DART multiplies by the skeleton frame even when it is the identity (zero signs).
    rest_rigid = rigid_mul(frame, _transform(kids, r) or RIGID_IDENTITY)
    if not _finite(rest_rigid):
        _require_finite(np.array(rest_rigid), f"the rest pose of body {name!r}", r, el)
    rest = rigid_to_matrix(rest_rigid)
    mass, com, moment = 1.0, _ZERO3, None
    has_inertia = False
    inertia_el = kids.get("inertia")
    if inertia_el is not None:
        has_inertia = True
        ikids = r.index(inertia_el, _INERTIA_KNOWN)
        tr = ikids.get("transformation")
        if tr is not None:
            r.warn("<inertia><transformation> is ignored by DART; use <offset> for the COM", tr)
        mass = r.number(
            r.need(ikids, inertia_el, "mass", "DART aborts the load without it"), nonneg=True
        )
        moi = ikids.get("moment_of_inertia")
        if moi is not None:
            mkids = r.index(moi, _MOMENT_KNOWN)
            ixx, iyy, izz, ixy, ixz, iyz = (
                r.number(r.need(mkids, moi, tag)) for tag in _MOMENT_TAGS
            )
            moment = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        off = ikids.get("offset")
        if off is not None:
            com = frozen_array(r.vector(off, 3))
    markers = []
    if "marker" in kids:
        for m in r.children(el, "marker"):
            m_name = r.attribute(m, "name")
            off = r.child(m, "offset")
            markers.append(
                (m_name, frozen_array(r.vector(off, 3) if off is not None else np.zeros(3)))
            )
    soft = None
    soft_el = kids.get("soft_shape")
    if soft_el is not None:
        soft = _parse_soft_shape(soft_el, r)
    return _BodyDraft(
        el=el,
        kids=kids,
        name=name,
        rest=rest,
        rest_rigid=rest_rigid,
        mass=mass,
        com=com,
        moment=moment,
        has_inertia=has_inertia,
        gravity=gravity,
        markers=markers,
        soft=soft,
    )


def _parse_soft_shape(el: Element, r: XmlReader) -> SoftShape:
    r.check_children(el, _SOFT_SHAPE_TAGS)
    total_mass = r.number(r.require(el, "total_mass"), nonneg=True)
    transform = _optional_transform(r.first_children(el), r)
    geom = r.require(el, "geometry")
    size = np.zeros(3)
    radius = height = 0.0
    frags = (0, 0, 0)
    slices = stacks = rings = 0
    kind = ""
    for tag in ("sphere", "box", "ellipsoid", "cylinder"):
        g = r.child(geom, tag)
        if g is None:
            continue
        kind = tag
        if tag == "sphere":
            radius = r.number(r.require(g, "radius"), positive=True)
        elif tag == "box":
            size = np.array(r.vector(r.require(g, "size"), 3, positive=True))
            f = r.integers(r.require(g, "frags", "soft boxes need <frags>i j k</frags>"), 3)
            frags = (f[0], f[1], f[2])
        elif tag == "ellipsoid":
            size = np.array(r.vector(r.require(g, "size"), 3, positive=True))
        else:
            radius = r.number(r.require(g, "radius"), positive=True)
            height = r.number(r.require(g, "height"), positive=True)
            rings = r.integers(r.require(g, "num_rings"), 1)[0]
        if tag != "box":
            slices = r.integers(r.require(g, "num_slices"), 1)[0]
            stacks = r.integers(r.require(g, "num_stacks"), 1)[0]
        break
    if not kind:
        raise SkelUnsupportedError(
            "<soft_shape><geometry> has none of sphere, box, ellipsoid, cylinder",
            r.loc(geom),
            "DART builds an empty soft body from this",
        )

    def opt(tag: str) -> float | None:
        e = r.child(el, tag)
        return None if e is None else r.number(e)

    return SoftShape(
        kind=kind,
        total_mass=total_mass,
        transform=transform,
        size=frozen_array(size),
        radius=radius,
        height=height,
        frags=frags,
        num_slices=slices,
        num_stacks=stacks,
        num_rings=rings,
        kv=opt("kv"),
        ke=opt("ke"),
        damp=opt("damp"),
    )


# --------------------------------------------------------------------------- shapes


def _parse_geometry(
    kids: dict[str, Element], el: Element, r: XmlReader, base_dir: Path | None
) -> Geometry:
    geom = r.need(kids, el, "geometry", "DART crashes on a shape without geometry")
    gkids = r.first_children(geom)
    if len(gkids) == 1:  # the usual case: one kind of child
        ((tag, g),) = gkids.items()
        parse = _GEOMETRY_PARSERS.get(tag)
        if parse is not None:
            return parse(g, r, base_dir)
    for tag in _GEOMETRY_ORDER:
        g = gkids.get(tag)
        if g is not None:
            return _GEOMETRY_PARSERS[tag](g, r, base_dir)
    found = [c.tag for c in r.children(geom)]
    raise SkelUnsupportedError(
        f"<geometry> holds {', '.join(f'<{t}>' for t in found) or 'nothing'}; expected one of "
        + ", ".join(_GEOMETRY_ORDER),
        r.loc(geom),
        "DART crashes on an unknown geometry",
    )


def _dim(g: Element, r: XmlReader, tag: str) -> float:
    hint = ""
    if tag == "height" and r.child(g, "length") is not None:
        hint = "SKEL uses <height>, not <length> (the old docs are wrong)"
    return r.number(r.require(g, tag, hint), positive=True)


def _geom_sphere(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    return Sphere(_dim(g, r, "radius"))


def _geom_box(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    size_el = r.require(g, "size")
    size = r.vector(size_el, 3, finite=False)  # never NaN
    if not (min(size) > 0.0 and max(size) < math.inf):
        # DART's BoxShape::setSize ignores such a size, leaving its default 1 x 1 x 1.
        r.warn(f"box size {size} is not positive and finite; DART uses 1 1 1", size_el)
        size = [1.0, 1.0, 1.0]
    return Box(frozen_array(size))


def _geom_ellipsoid(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    return Ellipsoid(frozen_array(r.vector(r.require(g, "size"), 3, positive=True)))


def _geom_cylinder(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    return Cylinder(_dim(g, r, "radius"), _dim(g, r, "height"))


def _geom_capsule(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    return Capsule(_dim(g, r, "radius"), _dim(g, r, "height"))


def _geom_cone(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    return Cone(_dim(g, r, "radius"), _dim(g, r, "height"))


def _geom_pyramid(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    return Pyramid(_dim(g, r, "base_width"), _dim(g, r, "base_depth"), _dim(g, r, "height"))


def _geom_plane(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    normal = _unit_vector(r.vector(r.require(g, "normal"), 3), "plane <normal>", r, g)
    off = r.child(g, "offset")
    if off is not None:
        offset = r.number(off)
    else:
        point = r.child(g, "point")
        if point is not None:
            r.warn("<point> of <plane> is deprecated; use <offset>", point)
            offset = float(normal @ np.array(r.vector(point, 3)))
        else:
            r.warn("<plane> has no <offset>; DART uses 0", g)
            offset = 0.0
    return Plane(frozen_array(normal), offset)


def _geom_multi_sphere(g: Element, r: XmlReader, _: Path | None) -> Geometry:
    spheres = []
    for s in r.children(g, "sphere"):
        radius = _dim(s, r, "radius")
        pos = frozen_array(r.vector(r.require(s, "position"), 3))
        spheres.append((radius, pos))
    if not spheres:
        raise SkelValueError("<multi_sphere> has no <sphere>", r.loc(g))
    return MultiSphere(tuple(spheres))


def _geom_mesh(g: Element, r: XmlReader, base_dir: Path | None) -> Geometry:
    file_name = r.text(r.require(g, "file_name"))
    scale = frozen_array(r.vector(r.require(g, "scale", "DART requires <scale> for meshes"), 3))
    rel = file_name[len("file://"):] if file_name.startswith("file://") else file_name
    if "://" in rel:
        raise SkelUnsupportedError(
            f"mesh URI {file_name!r} has a scheme other than file://", r.loc(g),
            "give a path relative to the .skel file",
        )
    path = Path(rel)
    if not path.is_absolute():
        if base_dir is None:
            raise SkelUnsupportedError(
                f"mesh {file_name!r} is relative, but the XML string has no base directory",
                r.loc(g),
                "load the file by path, or pass name= with the file's path",
            )
        path = base_dir / path
    try:
        lo, hi = mesh_bounds(path)
    except MeshReadError as exc:
        raise SkelUnsupportedError(
            str(exc), r.loc(g), "DART crashes when a mesh cannot be loaded"
        ) from None
    s = np.asarray(scale)
    corners = np.stack([lo * s, hi * s])
    _require_finite(corners, f"the scaled bounds of mesh {file_name!r}", r, g)
    bounds = (frozen_array(corners.min(axis=0)), frozen_array(corners.max(axis=0)))
    return Mesh(file_name=file_name, path=path, scale=scale, bounds=bounds)


_GEOMETRY_PARSERS = {
    "sphere": _geom_sphere,
    "box": _geom_box,
    "ellipsoid": _geom_ellipsoid,
    "cylinder": _geom_cylinder,
    "capsule": _geom_capsule,
    "cone": _geom_cone,
    "pyramid": _geom_pyramid,
    "plane": _geom_plane,
    "multi_sphere": _geom_multi_sphere,
    "mesh": _geom_mesh,
}


def _parse_shape(
    el: Element, r: XmlReader, role: ShapeRole, name: str, base_dir: Path | None
) -> Shape:
    visual = role is ShapeRole.VISUAL
    kids = r.index(el, _VISUAL_KNOWN if visual else _COLLISION_KNOWN)
    geometry = _parse_geometry(kids, el, r, base_dir)
    transform = _optional_transform(kids, r)
    color = None
    collidable = True
    if visual:
        c = kids.get("color")
        if c is not None:
            values = [r._number(t, c) for t in r.tokens(c)]  # noqa: SLF001
            if len(values) == _RGB:
                color = frozen_array([*values, 1.0])
            elif len(values) == _RGBA:
                color = frozen_array(values)
            else:
                r.warn(f"<color> has {len(values)} numbers (3 or 4 expected); DART ignores it", c)
    else:
        c = kids.get("collidable")
        if c is not None:
            text = (c.text or "").strip().lower()
            if text in ("true", "false"):
                raise SkelValueError(
                    f"<collidable> is {text!r}", r.loc(c), "DART reads a number here: use 1 or 0"
                )
            collidable = r.number(c) != 0.0
    return _new_shape(name, role, geometry, transform, color, collidable, r.loc(el))


# --------------------------------------------------------------------------- joints


def _parse_joint(el: Element, r: XmlReader, bodies: dict[str, _BodyDraft]) -> _JointDraft | None:
    name = r.attribute(el, "name")
    jtype = _joint_type(el, r, name)
    if jtype is None:
        return None
    kids = r.first_children(el)
    _check_joint_children(el, r, jtype, kids)
    actuator = _joint_actuator(el, r)
    ends = _joint_bodies(el, r, kids, name, bodies)
    if ends is None:
        return None
    parent, child = ends
    t_parent, t_child = _joint_frames(el, r, kids, name, bodies=bodies, ends=ends)

    dofs = [_DofDraft() for _ in range(jtype.num_dofs)]
    euler_order = _parse_euler_order(el, r, name) if jtype is JointType.EULER else None
    plane: PlaneType | None = None
    plane_axes: list[Array] = []
    if jtype in (JointType.PLANAR, JointType.TRANSLATIONAL2D):
        plane, plane_axes = _parse_plane(el, r, name)
    axes, pitch = _parse_axes(el, r, kids, name, jtype=jtype, dofs=dofs)
    _parse_init(kids.get("init_pos"), r, "init_pos", jtype, dofs, attr="initial_position")
    _parse_init(kids.get("init_vel"), r, "init_vel", jtype, dofs, attr="initial_velocity")
    if "dof" in kids:
        for dof_el in r.children(el, "dof"):
            _parse_dof(dof_el, r, dofs, name)

    return _JointDraft(
        el=el,
        name=name,
        type=jtype,
        actuator=actuator,
        parent=parent,
        child=child,
        t_parent=t_parent,
        t_child=t_child,
        axes=axes,
        pitch=pitch,
        euler_order=euler_order,
        plane=plane,
        plane_axes=plane_axes,
        dofs=dofs,
    )


def _joint_type(el: Element, r: XmlReader, name: str) -> JointType | None:
    """The joint's type; None (with a warning) for a type DART discards."""
    type_text = r.attribute(el, "type")
    jtype = _JOINT_TYPES.get(type_text)
    if jtype is None:
        r.warn(
            f"unknown joint type {type_text!r} ({', '.join(t.value for t in JointType)});"
            f" DART discards joint {name!r}",
            el,
        )
        return None
    if not jtype.dart_builds:
        r.warn(
            f"{jtype.value} joint {name!r}: DART 6 reads this type but cannot build it, so it"
            " drops this joint and every joint not yet built (assembly stops there);"
            " skel_ros keeps it",
            el,
        )
    return jtype


def _check_joint_children(
    el: Element, r: XmlReader, jtype: JointType, kids: dict[str, Element]
) -> None:
    known = _JOINT_KNOWN[jtype]
    if jtype in (JointType.BALL, JointType.FREE) and not kids.keys().isdisjoint(_AXIS_ELEMENTS):
        extra = set(known)
        for ax in (*r.children(el, "axis"), *r.children(el, "axis2"), *r.children(el, "axis3")):
            r.warn(f"<{ax.tag}> is ignored by DART for {jtype.value} joints; use <dof>", ax)
            extra.add(str(ax.tag))
        known = frozenset(extra)
    if not kids.keys() <= known:
        r.check_children(el, known)


def _joint_actuator(el: Element, r: XmlReader) -> ActuatorType:
    act = el.get("actuator")
    if act is None:
        return ActuatorType.FORCE
    actuator = _ACTUATOR_TYPES.get(act)
    if actuator is None:
        hint = " ('torque' is spelled 'force' in SKEL)" if act.lower() == "torque" else ""
        r.warn(
            f"unknown actuator {act!r} (force, passive, servo, acceleration, velocity,"
            f" locked){hint}; DART keeps 'force'",
            el,
        )
        return ActuatorType.FORCE
    return actuator


def _joint_bodies(
    el: Element, r: XmlReader, kids: dict[str, Element], name: str, bodies: dict[str, _BodyDraft]
) -> tuple[str | None, str] | None:
    """(parent body or None for the world, child body); None when DART discards the joint."""
    parent_el = kids.get("parent")
    parent: str | None
    if parent_el is None:
        r.warn(f"joint {name!r} has no <parent>; DART attaches it to the world", el)
        parent = None
    else:
        parent = r.text(parent_el)
        if parent == "world" and "world" not in bodies:
            parent = None
        elif parent not in bodies:
            r.warn(f"parent body {parent!r} does not exist; DART discards joint {name!r}",
                   parent_el)
            return None
    child_el = kids.get("child")
    if child_el is None:
        r.warn(f"joint {name!r} has no <child>; DART discards it", el)
        return None
    child = r.text(child_el)
    if child not in bodies:
        r.warn(f"child body {child!r} does not exist; DART discards joint {name!r}", child_el)
        return None
    if parent == child:
        raise SkelReferenceError(
            f"joint {name!r} has body {child!r} as both parent and child",
            r.loc(el),
            "DART hangs on this",
        )
    return parent, child


def _joint_frames(
    el: Element,
    r: XmlReader,
    kids: dict[str, Element],
    name: str,
    *,
    bodies: dict[str, _BodyDraft],
    ends: tuple[str | None, str],
) -> tuple[Array, Array]:
    """``T_parent_to_joint`` and ``T_child_to_joint`` (read-only 4x4)."""
    # DART: parentWorld.inverse() * childWorld * childToJoint, identities included.
    parent, child = ends
    child_to_joint = _transform(kids, r)
    t_child = IDENTITY4 if child_to_joint is None else rigid_to_matrix(child_to_joint)
    parent_world = bodies[parent].rest_rigid if parent is not None else RIGID_IDENTITY
    t_parent = rigid_mul(
        rigid_mul(rigid_inverse(parent_world), bodies[child].rest_rigid),
        child_to_joint or RIGID_IDENTITY,
    )
    if not _finite(t_parent):
        _require_finite(np.array(t_parent), f"the parent-side transform of joint {name!r}", r, el)
    return rigid_to_matrix(t_parent), t_child


def _parse_axes(
    el: Element,
    r: XmlReader,
    kids: dict[str, Element],
    name: str,
    *,
    jtype: JointType,
    dofs: list[_DofDraft],
) -> tuple[list[Array], float]:
    """The joint's unit axes and screw pitch; ``<axis*>`` dynamics go into ``dofs``."""
    axes = list(_DEFAULT_AXES.get(jtype, ()))
    pitch = _DEFAULT_SCREW_PITCH if jtype is JointType.SCREW else 0.0
    with_xyz = _XYZ_AXES.get(jtype, 0)
    for i in range(_AXES_READ[jtype]):
        tag = _AXIS_TAGS_BY_INDEX[i]
        ax = kids.get(tag)
        if ax is None:
            if i < with_xyz:
                r.warn(f"{jtype.value} joint {name!r} has no <{tag}>; DART uses"
                       f" {tuple(axes[i].tolist())}", el)
            continue
        if i < with_xyz:
            xyz = r.vector(r.require(ax, "xyz"), 3)
            axes[i] = _unit_vector(xyz, "joint axis <xyz>", r, ax)
            if jtype is JointType.SCREW:
                p = r.child(ax, "pitch")
                if p is not None:
                    pitch = r.number(p)
        _parse_axis_dynamics(ax, r, dofs[i], jtype)
    return axes, pitch


def _parse_euler_order(el: Element, r: XmlReader, name: str) -> EulerOrder:
    order_el = r.require(el, "axis_order", "euler joints need <axis_order>xyz</axis_order> or zyx")
    text = r.text(order_el)
    try:
        return EulerOrder(text)
    except ValueError:
        r.warn(f"euler joint {name!r}: axis_order {text!r} is not xyz or zyx; DART uses xyz",
               order_el)
        return EulerOrder.XYZ


def _parse_plane(el: Element, r: XmlReader, name: str) -> tuple[PlaneType, list[Array]]:
    plane_el = r.child(el, "plane")
    if plane_el is None:
        r.warn(f"joint {name!r} has no <plane>; DART uses the XY plane", el)
        return PlaneType.XY, [np.array(a) for a in _PLANE_AXES[PlaneType.XY]]
    text = plane_el.get("type", "")
    try:
        ptype = PlaneType(text)
    except ValueError:
        r.warn(f"joint {name!r}: plane type {text!r} is not xy, yz, zx or arbitrary;"
               " DART uses the XY plane", plane_el)
        ptype = PlaneType.XY
    if ptype is not PlaneType.ARBITRARY:
        return ptype, [np.array(a) for a in _PLANE_AXES[ptype]]
    axes = []
    for tag in ("translation_axis1", "translation_axis2"):
        v = r.vector(r.require(r.require(plane_el, tag), "xyz"), 3)
        axes.append(_unit_vector(v, f"<{tag}>", r, plane_el))
    if float(np.linalg.norm(np.cross(axes[0], axes[1]))) < _PARALLEL:
        raise SkelValueError("the two translation axes of the plane are parallel", r.loc(plane_el))
    return ptype, axes


def _parse_axis_dynamics(ax: Element, r: XmlReader, dof: _DofDraft, jtype: JointType) -> None:
    kids = r.index(ax, _AXIS_KNOWN[jtype in _XYZ_AXES, jtype is JointType.SCREW])
    damping = kids.get("damping")
    if damping is not None:
        r.warn("<damping> directly under <axis> is deprecated; put it in <dynamics>", damping)
        dof.damping = r.number(damping)
    dyn = kids.get("dynamics")
    if dyn is not None:
        _read_dynamics(dyn, r, dof)
    limit = kids.get("limit")
    if limit is not None:
        _parse_limit(limit, r, dof)


def _parse_limit(limit: Element, r: XmlReader, dof: _DofDraft) -> None:
    for child in r.children(limit):
        if child.tag in ("effort", "velocity"):
            r.warn(
                f"<limit><{child.tag}> is ignored by DART; set it with"
                f' <dof><{"force" if child.tag == "effort" else "velocity"}'
                ' lower=".." upper=".."/></dof>',
                child,
            )
        elif child.tag not in ("lower", "upper"):
            r.warn(f"unknown element <{child.tag}> in <limit> is ignored by DART", child)
    lo = r.child(limit, "lower")
    if lo is not None:
        dof.position_lower = r.number(lo, finite=False)
    hi = r.child(limit, "upper")
    if hi is not None:
        dof.position_upper = r.number(hi, finite=False)


def _read_dynamics(el: Element, r: XmlReader, dof: _DofDraft) -> None:
    for child in r.children(el):
        if child.tag == "sprint_stiffness":
            r.warn("<sprint_stiffness> is ignored by DART; did you mean <spring_stiffness>?", child)
        elif child.tag not in _DYNAMICS_TAGS and el.tag == "dynamics":
            r.warn(f"unknown element <{child.tag}> in <dynamics> is ignored by DART", child)
    for tag, attr in (
        ("damping", "damping"),
        ("friction", "coulomb_friction"),
        ("spring_rest_position", "rest_position"),
        ("spring_stiffness", "spring_stiffness"),
    ):
        e = r.child(el, tag)
        if e is not None:
            setattr(dof, attr, r.number(e))


def _parse_init(
    e: Element | None, r: XmlReader, tag: str, jtype: JointType, dofs: list[_DofDraft], *,
    attr: str,
) -> None:
    if e is None or jtype.num_dofs == 0:
        if e is not None:
            r.warn(f"<{tag}> of a weld joint is ignored", e)
        return
    n = jtype.num_dofs
    if n == 1:
        values = [r.number(e)]
    else:
        toks = r.tokens(e)
        if len(toks) < n:
            raise SkelValueError(
                f"<{tag}> holds {len(toks)} number(s) but the {jtype.value} joint has {n} DOFs",
                r.loc(e),
                "DART leaves the missing components undefined; give all of them",
            )
        values = r.vector(e, n)
    for dof, v in zip(dofs, values, strict=True):
        setattr(dof, attr, v)


def _dof_index(el: Element, r: XmlReader, n: int, joint_name: str) -> int | None:
    """The DOF a ``<dof>`` element addresses, or None when DART ignores the element."""
    raw = el.get("local_index")
    if raw is None:
        if n == 1:
            return 0
        r.warn(
            f"<dof> of joint {joint_name!r}, which has no DOFs, is ignored by DART" if n == 0 else
            f"<dof> of joint {joint_name!r} ({n} DOFs) has no local_index; DART ignores it",
            el,
        )
        return None
    text = raw.strip()
    if not _ASCII_INT.match(text):
        r.warn(f'<dof> local_index="{raw[:20]}" is not an integer; DART ignores it', el)
        return None
    if len(text.lstrip("+-").lstrip("0")) > _MAX_INDEX_DIGITS:
        raise SkelValueError(
            f"<dof> local_index {text[:20]}... is out of range", r.loc(el),
            "DART's std::stoi throws on this and aborts the load",
        )
    index = int(text)
    if index >= n:
        r.warn(f"<dof> local_index {index} is out of range (joint has {n} DOFs);"
               " DART ignores it", el)
        return None
    if index == -1 and n > 1:
        r.warn("<dof> local_index -1 is ignored by DART", el)
        return None
    if index < 0 and not (index == -1 and n == 1):
        raise SkelValueError(
            f"<dof> local_index {index} is negative", r.loc(el),
            "DART writes outside the joint's memory on this",
        )
    return max(index, 0)


def _parse_dof(el: Element, r: XmlReader, dofs: list[_DofDraft], joint_name: str) -> None:
    r.check_children(el, _DOF_TAGS)
    index = _dof_index(el, r, len(dofs), joint_name)
    if index is None:
        return
    dof = dofs[index]
    dof_name = el.get("name")
    if dof_name is not None:
        dof.name = dof_name
    for kind in ("position", "velocity", "acceleration", "force"):
        e = r.child(el, kind)
        if e is not None:
            _parse_dof_bounds(e, r, dof, kind)
    _read_dynamics(el, r, dof)


def _parse_dof_bounds(e: Element, r: XmlReader, dof: _DofDraft, kind: str) -> None:
    """``<position|velocity|acceleration|force lower=.. upper=.. initial=..>`` of a ``<dof>``."""
    for bound, attr in (("lower", f"{kind}_lower"), ("upper", f"{kind}_upper")):
        v = r.number_attribute(e, bound)
        if v is not None:
            setattr(dof, attr, v)
    init = r.number_attribute(e, "initial")
    if init is not None:
        if kind == "position":
            dof.initial_position = init
        elif kind == "velocity":
            dof.initial_velocity = init
    for attr_name in e.attrib:
        if attr_name not in ("lower", "upper", "initial"):
            r.warn(f'attribute {attr_name}="..." of <{kind}> is ignored by DART', e)


# --------------------------------------------------------------------------- assembly


_DOF_SUFFIXES: dict[JointType, tuple[str, ...]] = {
    JointType.WELD: (),
    JointType.REVOLUTE: ("",),
    JointType.PRISMATIC: ("",),
    JointType.SCREW: ("",),
    JointType.UNIVERSAL: ("_1", "_2"),
    JointType.BALL: ("_x", "_y", "_z"),
    JointType.TRANSLATIONAL: ("_x", "_y", "_z"),
    JointType.FREE: ("_rot_x", "_rot_y", "_rot_z", "_pos_x", "_pos_y", "_pos_z"),
}


def _dof_suffixes(joint: _JointDraft) -> tuple[str, ...]:
    t = joint.type
    if t is JointType.EULER:
        return ("_x", "_y", "_z") if joint.euler_order is EulerOrder.XYZ else ("_z", "_y", "_x")
    if t is JointType.PLANAR or t is JointType.TRANSLATIONAL2D:
        # _parse_joint always sets the plane of these types.
        return _PLANE_SUFFIXES[joint.plane or PlaneType.XY]
    return _DOF_SUFFIXES[t]


def _build_skeleton(
    el: Element,
    r: XmlReader,
    name: str,
    *,
    mobile: bool,
    frame: Array,
    bodies: dict[str, _BodyDraft],
    order: list[_JointDraft],
    base_dir: Path | None,
) -> Skeleton:
    joint_names = _NameManager()
    dof_names = _NameManager()
    shape_names = _NameManager()
    marker_names = _NameManager()
    joints: list[Joint] = []
    out_bodies: list[Body] = []
    dofs: list[Dof] = []
    for index, jd in enumerate(order):
        jname = joint_names.issue(jd.name)
        if jname != jd.name and not jd.implicit:
            r.warn(f"joint name {jd.name!r} is used twice; DART renames it {jname!r}", jd.el)
        first = len(dofs)
        dof_list = []
        suffixes = _dof_suffixes(jd)
        for k, draft in enumerate(jd.dofs):
            if draft.name is not None:
                base, preserved = draft.name, True
            elif jd.type is JointType.PLANAR and k == _PLANAR_ROTATION_DOF:
                base, preserved = "default", False
            else:
                base, preserved = jname + suffixes[k], False
            dname = dof_names.issue(base)
            dofs.append(
                _new_dof(  # the fields of Dof, in order
                    dname, len(dofs), jname, k,
                    draft.position_lower, draft.position_upper,
                    draft.velocity_lower, draft.velocity_upper,
                    draft.acceleration_lower, draft.acceleration_upper,
                    draft.force_lower, draft.force_upper,
                    draft.initial_position, draft.initial_velocity,
                    draft.damping, draft.coulomb_friction, draft.spring_stiffness,
                    draft.rest_position,
                    preserved,
                )
            )
            dof_list.append(dname)
            _check_dof(draft, dname, r, jd.el)
        joints.append(
            _new_joint(  # the fields of Joint, in order
                jname, jd.type, index, jd.parent, jd.child, jd.actuator,
                jd.t_parent, jd.t_child,
                tuple(jd.axes),  # read-only already
                jd.pitch, jd.euler_order, jd.plane,
                tuple(frozen_array(a) for a in jd.plane_axes),
                tuple(dof_list), first, jd.implicit, r.loc(jd.el),
            )
        )
        out_bodies.append(
            _build_body(
                bodies[jd.child], index, jname, r,
                base_dir=base_dir, shape_names=shape_names, marker_names=marker_names,
            )
        )
    return Skeleton(
        name=name,
        mobile=mobile,
        frame=frame,
        joints=tuple(joints),
        bodies=tuple(out_bodies),
        dofs=tuple(dofs),
        location=r.loc(el),
    )


def _check_dof(dof: _DofDraft, name: str, r: XmlReader, el: Element) -> None:
    if (
        dof.position_lower > dof.position_upper
        or dof.velocity_lower > dof.velocity_upper
        or dof.acceleration_lower > dof.acceleration_upper
        or dof.force_lower > dof.force_upper
    ):
        for kind in ("position", "velocity", "acceleration", "force"):
            lo, hi = getattr(dof, f"{kind}_lower"), getattr(dof, f"{kind}_upper")
            if lo > hi:
                r.warn(f"DOF {name!r}: {kind} lower limit {lo} is above upper limit {hi}", el)
    if not dof.position_lower <= dof.initial_position <= dof.position_upper:
        r.warn(
            f"DOF {name!r}: initial position {dof.initial_position} is outside its limits"
            f" [{dof.position_lower}, {dof.position_upper}]",
            el,
        )


def _build_body(
    draft: _BodyDraft,
    index: int,
    parent_joint: str,
    r: XmlReader,
    *,
    base_dir: Path | None,
    shape_names: _NameManager,
    marker_names: _NameManager,
) -> Body:
    shapes: list[Shape] = []
    for tag, role, suffix in _SHAPE_KINDS:
        if tag in draft.kids:
            for shape_el in r.children(draft.el, tag):
                name = shape_names.issue(draft.name + suffix)
                shapes.append(_parse_shape(shape_el, r, role, name, base_dir))
    moment, from_shapes = _body_moment(draft, shapes, r)
    markers = tuple(
        Marker(marker_names.issue(m_name), offset) for m_name, offset in draft.markers
    )
    return _new_body(  # the fields of Body, in order
        draft.name, index, parent_joint,
        _new_inertia(draft.mass, draft.com, frozen_array(moment), from_shapes),
        draft.gravity, draft.rest, tuple(shapes), markers, draft.soft, r.loc(draft.el),
    )


def _body_moment(draft: _BodyDraft, shapes: list[Shape], r: XmlReader) -> tuple[Array, bool]:
    """The body's moment of inertia, and whether it was computed from its shapes."""
    moment = draft.moment
    from_shapes = False
    if moment is None and draft.has_inertia:
        try:
            computed = inertia_mod.moment_from_shapes(
                draft.mass, draft.com, [(s.geometry, s.transform) for s in shapes]
            )
        except (OverflowError, ZeroDivisionError):  # float ** on a huge size, 0 volume
            computed = np.full((3, 3), math.nan)
        if computed is not None:
            if not _finite(computed.ravel().tolist()):
                _require_finite(
                    computed,
                    f"the moment of inertia computed from the shapes of body {draft.name!r}",
                    r, draft.el,
                )
            for shape in shapes:
                if isinstance(shape.geometry, Pyramid):
                    r.warn(
                        f"body {draft.name!r} has a mass but no <moment_of_inertia>, and DART"
                        f" 6.20 counts its pyramid {shape.name!r} as an identity moment of"
                        " inertia (pyramid inertia is not implemented); give"
                        " <moment_of_inertia>",
                        draft.el,
                    )
            moment, from_shapes = computed, True
    if moment is None:
        moment = np.eye(3)
    return moment, from_shapes
