"""SKEL (DART XML) reader building exactly the model DART 6.20 builds.

One ``_parse_<element>`` function per element. The rules (defaults, DOF names,
build order, implicit ``root`` joints, composite inertia, name de-duplication)
are those of DART 6.20's ``SkelParser`` (docs/model.md); where DART would crash, hang or
abort, a :class:`~skel_ros.model.errors.SkelError` is raised instead, and where
DART silently drops something that is almost surely a mistake, a warning with
file:line is recorded.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

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
from skel_ros.model.joint_types import JOINT_TYPES, PLANE_AXES, JointTypeSpec
from skel_ros.model.lenient_xml import parse_document
from skel_ros.model.meshes import MeshReadError, mesh_bounds
from skel_ros.model.mimic import mimic_problem
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
    Mimic,
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
from skel_ros.model.xmlread import Element, XmlReader, parse_stod

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

_MAX_BYTES = 256 * 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
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
# <mimic> is this package's (DART 6.20's SkelParser ignores it): docs/model.md, "Mimic joints".
_JOINT_COMMON = frozenset({"parent", "child", "transformation", "init_pos", "init_vel", "dof",
                           "mimic"})
_AXIS_TAGS = frozenset({"xyz", "pitch", "limit", "dynamics", "damping"})
_DYNAMICS_TAGS = frozenset({"damping", "friction", "spring_rest_position", "spring_stiffness"})
_DOF_TAGS = frozenset({"position", "velocity", "acceleration", "force"}) | _DYNAMICS_TAGS
_SOFT_SHAPE_TAGS = frozenset({"total_mass", "transformation", "geometry", "kv", "ke", "damp"})
_RGB, _RGBA = 3, 4  # numbers in a <color>
_PARALLEL = 1e-9  # |a1 x a2| below which a plane's translation axes are parallel
# How far from 1 the length of a universal joint's axis may be. DART uses these axes
# as written, and from about 2.5e-7 its joint rotation fails DART's own check at
# some angles (it then uses the identity: the joint stops turning).
_UNIT_LENGTH_TOL = 1e-7
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

# Enum members by their SKEL text.
_ACTUATOR_TYPES = {a.value: a for a in ActuatorType}
_EULER_ORDERS = {o.value: o for o in EulerOrder}


class _Kind(NamedTuple):
    """What the parser needs to know of a joint type, found by the ``type`` text.

    Everything here is derived from the type's :class:`JointTypeSpec` (the one table);
    only the SKEL element names are the parser's.
    """

    spec: JointTypeSpec
    type: JointType
    num_dofs: int
    known: frozenset[str]  # the child elements read
    axes_read: int  # how many <axis*> elements are read
    with_xyz: int  # how many of them have an <xyz>
    default_axes: tuple[Array, ...]
    axis_known: frozenset[str]  # the children of <axis*> read
    pitch: float  # default screw pitch (0 for other types)
    suffixes: tuple[str | None, ...]  # DOF name suffixes (empty: decided by euler order / plane)
    builds: bool  # JointType.dart_builds


def _kind(spec: JointTypeSpec) -> _Kind:
    # Ball and free joints ignore <axis*>, with a warning (_check_joint_children).
    known = (_JOINT_COMMON
             | (frozenset() if spec.ignores_axis_elements else _AXIS_ELEMENTS)
             | ({"axis_order"} if spec.euler_order else set())
             | ({"plane"} if spec.plane else set()))
    return _Kind(
        spec=spec,
        type=spec.type,
        num_dofs=spec.num_dofs,
        known=frozenset(known),
        axes_read=spec.axis_elements,
        with_xyz=spec.axes,
        default_axes=tuple(frozen_array(a) for a in spec.default_axes),
        axis_known=_AXIS_KNOWN[spec.axes > 0, spec.pitch],
        pitch=spec.default_pitch,
        suffixes=spec.dof_suffixes,
        builds=spec.dart_builds,
    )


_KINDS: dict[str, _Kind] = {spec.name: _kind(spec) for spec in JOINT_TYPES.values()}
_FREE_KIND = _KINDS[JointType.FREE.value]

_ZERO3 = frozen_array(np.zeros(3))
_IDENTITY3 = frozen_array(np.eye(3))

_LEGACY_HINT = (
    "this is DART's legacy pre-XML .skel text format (dofs { ... }), which DART 6 "
    "cannot load either; convert it to SKEL XML (<skel><world>...)"
)


class _SkelReader(XmlReader):
    """An :class:`XmlReader` with the SKEL-specific readings of texts."""

    # DART 6.20 reads names and keywords (getValueString) and booleans (toBool) from
    # the element's text as written: tinyxml2 keeps surrounding whitespace, so
    # "<child> b </child>" names no body b and " true " is no bool. Numbers and
    # vectors are read past it (std::stod, a trimmed split).

    def as_written(self, el: Element) -> str:
        """The text of ``el`` as DART compares it, surrounding whitespace kept."""
        self.text(el)  # an empty text is an error, as before
        return str(el.text)

    def flag(self, el: Element) -> bool:
        """A SKEL bool as DART's ``toBool`` reads it.

        ``1`` or ``true`` / ``0`` or ``false`` (any letter case), exactly as written;
        anything else is false, with a warning.
        """
        text = el.text or ""
        low = text.lower()
        if low in ("1", "true"):
            return True
        if low in ("0", "false"):
            return False
        spaced = " (DART does not strip spaces)" if low.strip() in ("1", "true") else ""
        self.warn(f"<{el.tag}> {text[:40]!r} is not a bool (1/true/0/false){spaced};"
                  " DART reads false", el)
        return False

    def pose(self, el: Element) -> Rigid:
        """A ``<transformation>``: ``x y z a b c`` as a :data:`Rigid`."""
        return rigid_from_skel(self.vector(el, 6))

    def box(self, size_el: Element) -> Box:
        """The box of a ``<size>``; a size DART ignores gives 1 x 1 x 1, with a warning."""
        size = self.vector(size_el, 3, finite=False)  # never NaN
        if min(size) > 0.0 and max(size) < math.inf:
            return Box(frozen_array(size))
        # DART's BoxShape::setSize ignores such a size, leaving its default 1 x 1 x 1.
        self.warn(f"box size {size} is not positive and finite; DART uses 1 1 1", size_el)
        return Box(frozen_array([1.0, 1.0, 1.0]))

    def point(self, el: Element) -> Array:
        """The finite 3-vector in ``el`` (an ``<offset>``), read-only."""
        return frozen_array(self.vector(el, 3))

    def axis(self, xyz_el: Element, what: str, el: Element) -> Array:
        """The unit vector of an ``<xyz>`` (``what`` and ``el`` for errors about it)."""
        return _unit_vector(self.vector(xyz_el, 3), what, self, el)


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
    if isinstance(source, str) and _looks_like_xml(source):
        label = name or "<string>"
        data = source.encode("utf-8", "surrogatepass")
        base_dir = _string_base_dir(name)
    else:
        path = Path(os.fspath(source))
        label = name or str(path)
        data = _read_file(path, label)
        base_dir = path.resolve().parent  # symlinks and ".." resolved
    return _parse_document(data, label, base_dir)


def _string_base_dir(name: str | None) -> Path | None:
    """Where relative mesh paths of an XML string start (None without a name).

    The directory ``name`` names, or its parent when it names no directory.
    """
    if not name:
        return None
    candidate = Path(name)
    return candidate if candidate.is_dir() else candidate.parent


def _read_file(file_name: Path, label: str) -> bytes:
    """The bytes of the file, or a SkelSyntaxError saying why they cannot be read."""
    try:
        # Opened without blocking (a FIFO would wait for a writer), then checked and read
        # through that one descriptor. O_NONBLOCK does not change reads of regular files.
        fd = os.open(file_name, _OPEN_FLAGS)
        try:
            problem = _not_readable(os.fstat(fd))
            data = b"" if problem else _read_to_end(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise SkelSyntaxError(
            f"cannot read file: {exc.strerror or exc}", Location(label)
        ) from None
    except ValueError as exc:  # e.g. "embedded null byte": not a possible file name
        raise SkelSyntaxError(
            f"cannot read file: {exc}", Location(label),
            "XML text must start with '<' to be read as a string, not as a path",
        ) from None
    if problem:
        raise SkelSyntaxError(problem, Location(label))
    if len(data) > _MAX_BYTES:  # it grew after the check
        raise SkelSyntaxError(f"file is too large ({len(data)} bytes)", Location(label))
    return data


def _not_readable(st: os.stat_result) -> str:
    """Why a file of this status is not read as a SKEL file ("" when it is read)."""
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a SKEL file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"  # a FIFO or /dev/zero would block or never end
    if st.st_size > _MAX_BYTES:
        return f"file is too large ({st.st_size} bytes)"
    return ""


def _read_to_end(fd: int) -> bytes:
    """All bytes of the open regular file ``fd`` (which stays open)."""
    with os.fdopen(fd, "rb", closefd=False) as f:
        return f.read()


def _parse_document(data: bytes, label: str, base_dir: Path | None) -> World:
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        raise SkelSyntaxError("the document is empty", Location(label, 1),
                              "a SKEL file is <skel><world>...</world></skel>")
    if not stripped.startswith(b"<") and b"<skel" not in stripped:
        # Every legacy file starts with its "dofs {" block; anything else (binary data,
        # JSON, ...) is just not XML. (DART skips text before the <skel> element.)
        if _LEGACY_START.match(stripped):
            raise SkelLegacyFormatError("not an XML file", Location(label, 1), _LEGACY_HINT)
        raise SkelSyntaxError(
            "not an XML file (SKEL files start with <skel>)", Location(label, 1)
        )
    # Strict XML, or what DART's tinyxml2 also accepts (with warnings): lenient_xml.
    root, xml_warnings = parse_document(data, label)
    reader = _SkelReader(label)
    reader.warnings.extend(xml_warnings)
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
    for extra in reader.children(root, "world")[1:]:
        reader.warn("only the first <world> is read by DART; this one is ignored", extra)
    reader.check_children(root, frozenset({"world"}))
    # Huge but finite numbers (1e308) can overflow in the transforms and inertias built
    # from them; numpy's overflow warnings are silenced here and the results are checked
    # with _require_finite where they are made.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        return _parse_world(world_el, reader, base_dir)


def _require_finite(values: Iterable[float], what: str, r: _SkelReader, el: Element) -> None:
    """Raise if values computed from finite input overflowed to inf / NaN."""
    if not all(map(math.isfinite, values)):
        raise SkelValueError(
            f"{what} is not finite (inf/NaN from extremely large or small input values)",
            r.loc(el),
            "DART would build a model with inf/NaN values from this; use realistic magnitudes",
        )


def _unit_vector(v: Sequence[float], what: str, r: _SkelReader, el: Element) -> Array:
    """``v`` normalised as DART does; a zero or overflowing norm is an error."""
    x, y, z = v
    norm = math.sqrt(x * x + y * y + z * z)
    if norm == 0.0:
        raise SkelValueError(f"{what} is the zero vector", r.loc(el))
    if not math.isfinite(norm):
        raise SkelValueError(
            f"{what} is too large to normalise", r.loc(el),
            "its squared length overflows, and DART's normalisation gives a zero vector",
        )
    return frozen_array([x / norm, y / norm, z / norm])


# --------------------------------------------------------------------------- world


def _parse_world(el: Element, r: _SkelReader, base_dir: Path | None) -> World:
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
            text = cd.text or ""
            try:
                detector = CollisionDetector(text)
            except ValueError:
                r.warn(
                    f"unknown collision detector {text[:40]!r} (fcl, fcl_mesh, dart, bullet, ode);"
                    " DART uses FCL",
                    cd,
                )
    names = _NameManager()
    world_path = r.path(el)
    skeletons = [
        _parse_skeleton(s, r, base_dir, names, r.child_path(world_path, s))
        for s in r.children(el, "skeleton")
    ]
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
        self.used: set[str] = set()
        # Next count to try per base name: names are never released, so every lower
        # count is still taken (this keeps many repeats linear, not quadratic).
        self._next: dict[str, int] = {}

    def issue(self, name: str) -> str:
        used = self.used
        if name not in used:
            used.add(name)
            return name
        count = self._next.get(name, 1)
        new = f"{name}({count})"
        count += 1
        while new in used:
            new = f"{name}({count})"
            count += 1
        self._next[name] = count
        used.add(new)
        return new


# --------------------------------------------------------------------------- skeleton


@dataclass(slots=True)
class _BodyDraft:
    el: Element
    visual: list[Element]  # <visualization_shape> elements
    collision: list[Element]  # <collision_shape> elements
    name: str
    path: str  # element path
    rest: Array
    rest_rigid: Rigid
    mass: float
    com: Array
    moment: Array | None
    has_inertia: bool
    gravity: bool
    markers: list[tuple[str, Array]]
    soft: SoftShape | None


@dataclass(slots=True)
class _DofDraft:
    """A DOF while its joint is read: the name and the settings the file gives.

    ``settings`` maps :class:`Dof` field names (``damping``, ``position_lower``, ...)
    to the values read; the fields the file does not set keep ``Dof``'s defaults.
    """

    name: str | None
    settings: dict[str, float]


def _dof_drafts(n: int) -> list[_DofDraft]:
    """``n`` DOF drafts with nothing set yet."""
    return [_DofDraft(None, {}) for _ in range(n)]


@dataclass(slots=True)
class _JointDraft:
    el: Element
    path: str  # element path
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
    dofs: list[_DofDraft]
    suffixes: tuple[str | None, ...]  # DOF name suffixes, None for "default"
    implicit: bool = False
    mimic: Element | None = None  # its <mimic>, resolved when every joint is built


def _parse_skeleton(
    el: Element, r: _SkelReader, base_dir: Path | None, world_names: _NameManager, path: str
) -> Skeleton:
    """The skeleton ``el``, whose element path is ``path``."""
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
        draft = _parse_body(body_el, r, frame_rigid or RIGID_IDENTITY, path)
        if draft.name in bodies:
            raise SkelReferenceError(
                f"body name {draft.name!r} is used twice in skeleton {name!r}",
                r.loc(body_el),
                "DART drops the second body but attaches its shapes to the first",
            )
        bodies[draft.name] = draft

    joints: dict[str, _JointDraft] = {}  # by child body name, in file order
    for joint_el in r.children(el, "joint"):
        joint = _parse_joint(joint_el, r, bodies, path)
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
        el, r, name, mobile=mobile, frame=frame, bodies=bodies, order=order, base_dir=base_dir,
        path=path,
    )


def _transform(kids: dict[str, Element], r: _SkelReader) -> Rigid | None:
    """The ``<transformation>`` among ``kids``, or None when there is none (identity)."""
    t = kids.get("transformation")
    return None if t is None else r.pose(t)


def _optional_transform(kids: dict[str, Element], r: _SkelReader) -> Array:
    """The ``<transformation>`` among ``kids`` as a read-only 4x4 matrix (identity if none)."""
    t = kids.get("transformation")
    return IDENTITY4 if t is None else rigid_to_matrix(r.pose(t))


def _assembly_order(
    joints: dict[str, _JointDraft],
    bodies: dict[str, _BodyDraft],
    r: _SkelReader,
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
    first: _JointDraft, joints: dict[str, _JointDraft], created: set[str], r: _SkelReader
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
        path=body.path,
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
        dofs=_dof_drafts(6),
        suffixes=_FREE_KIND.suffixes,
        implicit=True,
    )


def _has_shapes(body: _BodyDraft) -> bool:
    return bool(body.visual or body.collision)


# --------------------------------------------------------------------------- body


def _parse_body(el: Element, r: _SkelReader, frame: Rigid, skel_path: str) -> _BodyDraft:
    kids = r.index(el, _BODY_KNOWN)
    name = r.attribute(el, "name")
    g = kids.get("gravity")
    gravity = True if g is None else r.flag(g)
    # DART multiplies by the skeleton frame even when it is the identity (zero signs).
    t = kids.get("transformation")
    rest_rigid = rigid_mul(frame, RIGID_IDENTITY if t is None else r.pose(t))
    _require_finite(rest_rigid, f"the rest pose of body {name!r}", r, el)
    inertia_el = kids.get("inertia")
    if inertia_el is None:
        mass, com, moment = 1.0, _ZERO3, None
    else:
        mass, com, moment = _parse_inertia(inertia_el, r)
    soft_el = kids.get("soft_shape")
    return _BodyDraft(
        el=el,
        visual=_all_children(el, r, kids, "visualization_shape"),
        collision=_all_children(el, r, kids, "collision_shape"),
        name=name,
        path=r.child_path(skel_path, el),
        rest=rigid_to_matrix(rest_rigid),
        rest_rigid=rest_rigid,
        mass=mass,
        com=com,
        moment=moment,
        has_inertia=inertia_el is not None,
        gravity=gravity,
        markers=_parse_markers(_all_children(el, r, kids, "marker"), r),
        soft=None if soft_el is None else _parse_soft_shape(soft_el, r),
    )


def _parse_inertia(el: Element, r: _SkelReader) -> tuple[float, Array, Array | None]:
    """Mass, COM and moment of inertia (None when not given) of an ``<inertia>``."""
    kids = r.index(el, _INERTIA_KNOWN)
    tr = kids.get("transformation")
    if tr is not None:
        r.warn("<inertia><transformation> is ignored by DART; use <offset> for the COM", tr)
    mass_el = kids.get("mass")
    if mass_el is None:
        mass_el = r.need(kids, el, "mass", "DART aborts the load without it")  # raises
    mass = r.number(mass_el)
    if mass < 0.0:
        # Deliberately stricter than DART (docs/model.md, "Negative mass").
        raise SkelValueError(
            f"<mass> must not be negative, got {mass}",
            r.loc(mass_el),
            "DART 6.20 builds such a body with only a warning; its dynamics are not"
            " physical and its URDF and MJCF exports would not load: give the real mass",
        )
    moment = None
    moi = kids.get("moment_of_inertia")
    if moi is not None:
        mkids = r.index(moi, _MOMENT_KNOWN)
        ixx, iyy, izz, ixy, ixz, iyz = (r.number(r.need(mkids, moi, tag)) for tag in _MOMENT_TAGS)
        moment = frozen_array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    off = kids.get("offset")
    com = _ZERO3 if off is None else r.point(off)
    return mass, com, moment


def _all_children(el: Element, r: _SkelReader, kids: dict[str, Element], tag: str) -> list[Element]:
    """Every child ``tag`` of ``el``, whose first child of each tag is ``kids``."""
    return r.children(el, tag) if tag in kids else []


def _parse_markers(marker_els: list[Element], r: _SkelReader) -> list[tuple[str, Array]]:
    markers = []
    for m in marker_els:
        m_name = r.attribute(m, "name")
        off = r.child(m, "offset")
        markers.append((m_name, frozen_array(r.vector(off, 3) if off is not None else np.zeros(3))))
    return markers


def _parse_soft_shape(el: Element, r: _SkelReader) -> SoftShape:
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


def _parse_geometry(geom: Element, r: _SkelReader, base_dir: Path | None) -> Geometry:
    gkids = r.first_children(geom)
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


def _dim(g: Element, r: _SkelReader, tag: str) -> float:
    hint = ""
    if tag == "height" and r.child(g, "length") is not None:
        hint = "SKEL uses <height>, not <length> (the old docs are wrong)"
    return r.number(r.require(g, tag, hint), positive=True)


def _geom_sphere(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return Sphere(_dim(g, r, "radius"))


def _geom_box(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return r.box(r.require(g, "size"))


def _geom_ellipsoid(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return Ellipsoid(frozen_array(r.vector(r.require(g, "size"), 3, positive=True)))


def _geom_cylinder(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return Cylinder(_dim(g, r, "radius"), _dim(g, r, "height"))


def _geom_capsule(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return Capsule(_dim(g, r, "radius"), _dim(g, r, "height"))


def _geom_cone(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return Cone(_dim(g, r, "radius"), _dim(g, r, "height"))


def _geom_pyramid(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    return Pyramid(_dim(g, r, "base_width"), _dim(g, r, "base_depth"), _dim(g, r, "height"))


def _geom_plane(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    normal = _unit_vector(r.vector(r.require(g, "normal"), 3), "plane <normal>", r, g)
    off = r.child(g, "offset")
    if off is not None:
        offset = r.number(off)
    else:
        point = r.child(g, "point")
        if point is not None:
            r.warn("<point> of <plane> is deprecated; use <offset>", point)
            px, py, pz = r.vector(point, 3)
            # As DART (Eigen's dot of two 3-vectors): products summed left to right, in
            # double precision. numpy's ``@`` goes to BLAS, whose kernels may fuse a
            # multiply and an add and round differently (a last bit off: 1e-15 here).
            nx, ny, nz = (float(c) for c in normal)
            offset = (nx * px + ny * py) + nz * pz
        else:
            r.warn("<plane> has no <offset>; DART uses 0", g)
            offset = 0.0
    return Plane(frozen_array(normal), offset)


def _geom_multi_sphere(g: Element, r: _SkelReader, _: Path | None) -> Geometry:
    spheres = []
    for s in r.children(g, "sphere"):
        radius = _dim(s, r, "radius")
        pos = frozen_array(r.vector(r.require(s, "position"), 3))
        spheres.append((radius, pos))
    if not spheres:
        raise SkelValueError("<multi_sphere> has no <sphere>", r.loc(g))
    return MultiSphere(tuple(spheres))


def _geom_mesh(g: Element, r: _SkelReader, base_dir: Path | None) -> Geometry:
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
    _require_finite(corners.ravel().tolist(), f"the scaled bounds of mesh {file_name!r}", r, g)
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
    el: Element, r: _SkelReader, role: ShapeRole, name: str, *, base_dir: Path | None, path: str
) -> tuple[Shape, Rigid]:
    """The shape ``el``, whose element path is ``path``, and its pose in the body."""
    visual = role is ShapeRole.VISUAL
    kids = r.index(el, _VISUAL_KNOWN if visual else _COLLISION_KNOWN)
    geom = r.need(kids, el, "geometry", "DART crashes on a shape without geometry")
    geometry = _parse_geometry(geom, r, base_dir)
    pose = _transform(kids, r)
    color = None
    collidable = True
    if visual and "color" in kids:
        color = _shape_color(kids["color"], r)
    if not visual and "collidable" in kids:
        collidable = _collidable(kids["collidable"], r)
    shape = Shape(
        name=name,
        role=role,
        geometry=geometry,
        transform=IDENTITY4 if pose is None else rigid_to_matrix(pose),
        color=color,
        collidable=collidable,
        location=r.loc(el, path),
    )
    return shape, RIGID_IDENTITY if pose is None else pose


def _shape_color(c: Element, r: _SkelReader) -> Array | None:
    """RGBA of a ``<color>``; None (with a warning) when DART ignores it."""
    values = [r._number(t, c) for t in r.tokens(c)]  # noqa: SLF001
    if len(values) == _RGB:
        return frozen_array([*values, 1.0])
    if len(values) == _RGBA:
        return frozen_array(values)
    r.warn(f"<color> has {len(values)} numbers (3 or 4 expected); DART ignores it", c)
    return None


def _collidable(c: Element, r: _SkelReader) -> bool:
    text = (c.text or "").strip().lower()
    if text in ("true", "false"):
        raise SkelValueError(
            f"<collidable> is {text!r}", r.loc(c), "DART reads a number here: use 1 or 0"
        )
    return r.number(c) != 0.0


# --------------------------------------------------------------------------- joints


def _parse_joint(
    el: Element, r: _SkelReader, bodies: dict[str, _BodyDraft], skel_path: str
) -> _JointDraft | None:
    name = r.attribute(el, "name")
    kind = _KINDS.get(el.get("type", ""))
    if kind is None or not kind.builds:
        kind = _odd_joint_kind(el, r, name)
        if kind is None:
            return None
    jtype = kind.type
    kids = r.first_children(el)
    if not kids.keys() <= kind.known:
        _check_joint_children(el, r, kind, kids)
    actuator = _ACTUATOR_TYPES.get(el.get("actuator", "force"))
    if actuator is None:
        actuator = _joint_actuator(el, r)  # warns
    ends = _joint_bodies(el, r, kids, name, bodies)
    if ends is None:
        return None
    parent, child = ends
    t_parent, t_child = _joint_frames(
        el, r, kids.get("transformation"), name, bodies=bodies, ends=ends
    )

    n = kind.num_dofs
    dofs = _dof_drafts(n)
    euler_order, plane, plane_axes, suffixes = _joint_layout(el, r, name, kind)
    if kind.with_xyz or (kind.axes_read and not kids.keys().isdisjoint(_AXIS_ELEMENTS)):
        axes, pitch = _parse_axes(el, r, kids, name, kind=kind, dofs=dofs)
    else:
        axes, pitch = list(kind.default_axes), kind.pitch
    if "init_pos" in kids or "init_vel" in kids or "dof" in kids:
        _parse_dof_settings(el, r, kids, name, kind=kind, dofs=dofs)

    return _JointDraft(
        el=el,
        path=r.child_path(skel_path, el),
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
        suffixes=suffixes,
        mimic=kids.get("mimic"),
    )


def _joint_layout(
    el: Element, r: _SkelReader, name: str, kind: _Kind
) -> tuple[EulerOrder | None, PlaneType | None, list[Array], tuple[str | None, ...]]:
    """Euler order, plane, plane axes and DOF name suffixes of a joint of ``kind``."""
    spec = kind.spec
    if spec.euler_order:
        euler_order = _parse_euler_order(el, r, name)
        return euler_order, None, [], spec.dof_name_suffixes(euler_order=euler_order)
    if spec.plane:
        plane, plane_axes = _parse_plane(el, r, name)
        return None, plane, plane_axes, spec.dof_name_suffixes(plane=plane)
    return None, None, [], kind.suffixes


def _odd_joint_kind(el: Element, r: _SkelReader, name: str) -> _Kind | None:
    """The kind of a joint whose type is missing, unknown (None) or not built by DART."""
    type_text = r.attribute(el, "type")  # raises when missing
    kind = _KINDS.get(type_text)
    if kind is None:
        r.warn(
            f"unknown joint type {type_text!r} ({', '.join(_KINDS)}); DART discards joint"
            f" {name!r}",
            el,
        )
        return None
    if not kind.builds:
        r.warn(
            f"{type_text} joint {name!r}: DART 6 reads this type but cannot build it, so it"
            " drops this joint and every joint not yet built (assembly stops there);"
            " skel_ros keeps it",
            el,
        )
    return kind


def _check_joint_children(
    el: Element, r: _SkelReader, kind: _Kind, kids: dict[str, Element]
) -> None:
    known = kind.known
    if kind.spec.ignores_axis_elements and not kids.keys().isdisjoint(_AXIS_ELEMENTS):
        extra = set(known)
        for ax in (*r.children(el, "axis"), *r.children(el, "axis2"), *r.children(el, "axis3")):
            r.warn(f"<{ax.tag}> is ignored by DART for {kind.type.value} joints; use <dof>", ax)
            extra.add(str(ax.tag))
        known = frozenset(extra)
    if not kids.keys() <= known:
        r.check_children(el, known)


def _joint_actuator(el: Element, r: _SkelReader) -> ActuatorType:
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


def _spaces_note(name: str) -> str:
    return " (DART compares names as written, spaces included)" if name != name.strip() else ""


def _joint_bodies(
    el: Element, r: _SkelReader, kids: dict[str, Element], name: str, bodies: dict[str, _BodyDraft]
) -> tuple[str | None, str] | None:
    """(parent body or None for the world, child body); None when DART discards the joint."""
    parent_el = kids.get("parent")
    parent: str | None
    if parent_el is None:
        r.warn(f"joint {name!r} has no <parent>; DART attaches it to the world", el)
        parent = None
    else:
        parent = r.as_written(parent_el)
        if parent == "world" and "world" not in bodies:
            parent = None
        elif parent not in bodies:
            r.warn(f"parent body {parent!r} does not exist{_spaces_note(parent)}; DART "
                   f"discards joint {name!r}", parent_el)
            return None
    child_el = kids.get("child")
    if child_el is None:
        r.warn(f"joint {name!r} has no <child>; DART discards it", el)
        return None
    child = r.as_written(child_el)
    if child not in bodies:
        r.warn(f"child body {child!r} does not exist{_spaces_note(child)}; DART discards "
               f"joint {name!r}", child_el)
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
    r: _SkelReader,
    t: Element | None,
    name: str,
    *,
    bodies: dict[str, _BodyDraft],
    ends: tuple[str | None, str],
) -> tuple[Array, Array]:
    """``T_parent_to_joint`` and ``T_child_to_joint`` (read-only 4x4); ``t`` the transformation."""
    # DART: parentWorld.inverse() * childWorld * childToJoint, identities included (they
    # change the signs of zeros).
    parent, child = ends
    child_to_joint = RIGID_IDENTITY if t is None else r.pose(t)
    parent_world = bodies[parent].rest_rigid if parent is not None else RIGID_IDENTITY
    t_parent = rigid_mul(
        rigid_mul(rigid_inverse(parent_world), bodies[child].rest_rigid), child_to_joint
    )
    _require_finite(t_parent, f"the parent-side transform of joint {name!r}", r, el)
    return rigid_to_matrix(t_parent), IDENTITY4 if t is None else rigid_to_matrix(child_to_joint)


def _parse_axes(
    el: Element,
    r: _SkelReader,
    kids: dict[str, Element],
    name: str,
    *,
    kind: _Kind,
    dofs: list[_DofDraft],
) -> tuple[list[Array], float]:
    """The joint's unit axes and screw pitch; ``<axis*>`` dynamics go into ``dofs``."""
    jtype = kind.type
    axes = list(kind.default_axes)
    pitch = kind.pitch
    with_xyz = kind.with_xyz
    for i in range(kind.axes_read):
        tag = _AXIS_TAGS_BY_INDEX[i]
        ax = kids.get(tag)
        if ax is None:
            if i < with_xyz:
                r.warn(f"{jtype.value} joint {name!r} has no <{tag}>; DART uses"
                       f" {tuple(axes[i].tolist())}", el)
            continue
        if i < with_xyz:
            if kind.spec.normalises_axes:
                axes[i] = r.axis(r.require(ax, "xyz"), "joint axis <xyz>", ax)
            else:
                axes[i] = _unnormalised_axis(r.require(ax, "xyz"), r, name, tag, jtype)
            if kind.spec.pitch:
                p = r.child(ax, "pitch")
                if p is not None:
                    pitch = r.number(p)
        _parse_axis_dynamics(ax, r, dofs[i], kind.axis_known)
    return axes, pitch


def _unnormalised_axis(
    xyz_el: Element, r: _SkelReader, name: str, tag: str, jtype: JointType
) -> Array:
    """An axis DART 6.20 takes as written, without normalising it (a universal joint's).

    Revolute, prismatic and screw axes go through ``setAxis`` (normalised); a
    universal joint's ``mAxis`` is taken as is, and a non-unit axis turns DART's
    joint into one that does not move, so it is refused.
    """
    x, y, z = r.vector(xyz_el, 3)
    length = math.sqrt(x * x + y * y + z * z)
    if not abs(length - 1.0) <= _UNIT_LENGTH_TOL:
        raise SkelValueError(
            f"{jtype.value} joint {name!r}: <{tag}> <xyz> ({x!r}, {y!r}, {z!r}) is not a unit"
            f" vector (length {length!r})",
            r.loc(xyz_el),
            f"DART 6.20 uses a {jtype.value} joint's axes as written, and with a non-unit axis "
            "the joint's rotation is no rotation: DART logs an error at every update and "
            "keeps the joint at the identity; write the unit vector"
            + (f" {x / length!r} {y / length!r} {z / length!r}"
               if 0.0 < length < math.inf else ""),
        )
    return frozen_array([x, y, z])


def _parse_euler_order(el: Element, r: _SkelReader, name: str) -> EulerOrder:
    order_el = r.require(el, "axis_order", "euler joints need <axis_order>xyz</axis_order> or zyx")
    text = r.as_written(order_el)
    order = _EULER_ORDERS.get(text)
    if order is not None:
        return order
    r.warn(f"euler joint {name!r}: axis_order {text!r} is not xyz or zyx; DART uses xyz", order_el)
    return EulerOrder.XYZ


def _parse_plane(el: Element, r: _SkelReader, name: str) -> tuple[PlaneType, list[Array]]:
    plane_el = r.child(el, "plane")
    if plane_el is None:
        r.warn(f"joint {name!r} has no <plane>; DART uses the XY plane", el)
        return PlaneType.XY, [np.array(a) for a in PLANE_AXES[PlaneType.XY]]
    text = plane_el.get("type", "")
    try:
        ptype = PlaneType(text)
    except ValueError:
        r.warn(f"joint {name!r}: plane type {text!r} is not xy, yz, zx or arbitrary;"
               " DART uses the XY plane", plane_el)
        ptype = PlaneType.XY
    if ptype is not PlaneType.ARBITRARY:
        return ptype, [np.array(a) for a in PLANE_AXES[ptype]]
    axes = []
    for tag in ("translation_axis1", "translation_axis2"):
        v = r.vector(r.require(r.require(plane_el, tag), "xyz"), 3)
        axes.append(_unit_vector(v, f"<{tag}>", r, plane_el))
    if float(np.linalg.norm(np.cross(axes[0], axes[1]))) < _PARALLEL:
        raise SkelValueError("the two translation axes of the plane are parallel", r.loc(plane_el))
    return ptype, axes


def _parse_axis_dynamics(
    ax: Element, r: _SkelReader, dof: _DofDraft, known: frozenset[str]
) -> None:
    kids = r.index(ax, known)
    damping = kids.get("damping")
    if damping is not None:
        r.warn("<damping> directly under <axis> is deprecated; put it in <dynamics>", damping)
        dof.settings["damping"] = r.number(damping)
    dyn = kids.get("dynamics")
    if dyn is not None:
        _read_dynamics(dyn, r, dof)
    limit = kids.get("limit")
    if limit is not None:
        _parse_limit(limit, r, dof)


def _parse_limit(limit: Element, r: _SkelReader, dof: _DofDraft) -> None:
    lo = hi = None
    for child in limit:
        tag = child.tag
        if tag == "lower":
            if lo is None:
                lo = child
        elif tag == "upper":
            if hi is None:
                hi = child
        elif tag in ("effort", "velocity"):
            r.warn(
                f"<limit><{tag}> is ignored by DART; set it with"
                f' <dof><{"force" if tag == "effort" else "velocity"}'
                ' lower=".." upper=".."/></dof>',
                child,
            )
        elif isinstance(tag, str):
            r.warn(f"unknown element <{tag}> in <limit> is ignored by DART", child)
    if lo is not None:
        dof.settings["position_lower"] = r.number(lo, finite=False)
    if hi is not None:
        dof.settings["position_upper"] = r.number(hi, finite=False)


# The children of <dynamics> (and of <dof>) read, and the DOF setting each one gives.
_DYNAMICS_FIELDS = (
    ("damping", "damping"),
    ("friction", "coulomb_friction"),
    ("spring_rest_position", "rest_position"),
    ("spring_stiffness", "spring_stiffness"),
)


def _read_dynamics(el: Element, r: _SkelReader, dof: _DofDraft) -> None:
    warn_unknown = el.tag == "dynamics"
    first: dict[str, Element] = {}
    for child in el:
        tag = child.tag
        if tag in _DYNAMICS_TAGS:
            if tag not in first:
                first[tag] = child
        elif tag == "sprint_stiffness":
            r.warn("<sprint_stiffness> is ignored by DART; did you mean <spring_stiffness>?", child)
        elif warn_unknown and isinstance(tag, str):
            r.warn(f"unknown element <{tag}> in <dynamics> is ignored by DART", child)
    if first:
        for tag, attr in _DYNAMICS_FIELDS:
            e = first.get(tag)
            if e is not None:
                dof.settings[attr] = r.number(e)


def _parse_dof_settings(
    el: Element, r: _SkelReader, kids: dict[str, Element], name: str, *, kind: _Kind,
    dofs: list[_DofDraft],
) -> None:
    """``<init_pos>``, ``<init_vel>`` and the ``<dof>`` elements of a joint, into ``dofs``."""
    if "init_pos" in kids:
        _parse_init(kids["init_pos"], r, "init_pos", kind, dofs, attr="initial_position")
    if "init_vel" in kids:
        _parse_init(kids["init_vel"], r, "init_vel", kind, dofs, attr="initial_velocity")
    if "dof" in kids:
        for dof_el in r.children(el, "dof"):
            _parse_dof(dof_el, r, dofs, name)


def _parse_init(
    e: Element, r: _SkelReader, tag: str, kind: _Kind, dofs: list[_DofDraft], *, attr: str
) -> None:
    n = kind.num_dofs
    if n == 0:
        r.warn(f"<{tag}> of a {kind.type.value} joint is ignored", e)
        return
    if n == 1:
        values = [r.number(e)]
    else:
        toks = r.tokens(e)
        if len(toks) < n:
            raise SkelValueError(
                f"<{tag}> holds {len(toks)} number(s) but the {kind.type.value} joint has"
                f" {n} DOFs",
                r.loc(e),
                "DART leaves the missing components undefined; give all of them",
            )
        values = r.vector(e, n)
    for dof, v in zip(dofs, values, strict=True):
        dof.settings[attr] = v


def _dof_index(el: Element, r: _SkelReader, n: int, joint_name: str) -> int | None:
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


def _parse_dof(el: Element, r: _SkelReader, dofs: list[_DofDraft], joint_name: str) -> None:
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


def _parse_dof_bounds(e: Element, r: _SkelReader, dof: _DofDraft, kind: str) -> None:
    """``<position|velocity|acceleration|force lower=.. upper=.. initial=..>`` of a ``<dof>``."""
    for bound, attr in (("lower", f"{kind}_lower"), ("upper", f"{kind}_upper")):
        v = r.number_attribute(e, bound)
        if v is not None:
            dof.settings[attr] = v
    init = r.number_attribute(e, "initial")
    if init is not None:
        if kind == "position":
            dof.settings["initial_position"] = init
        elif kind == "velocity":
            dof.settings["initial_velocity"] = init
    for attr_name in e.attrib:
        if attr_name not in ("lower", "upper", "initial"):
            r.warn(f'attribute {attr_name}="..." of <{kind}> is ignored by DART', e)


# --------------------------------------------------------------------------- assembly


def _build_skeleton(
    el: Element,
    r: _SkelReader,
    name: str,
    *,
    mobile: bool,
    frame: Array,
    bodies: dict[str, _BodyDraft],
    order: list[_JointDraft],
    base_dir: Path | None,
    path: str,
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
        for k, draft in enumerate(jd.dofs):
            if draft.name is not None:
                base, preserved = draft.name, True
            else:
                suffix = jd.suffixes[k]
                base = "default" if suffix is None else jname + suffix
                preserved = False
            dof = Dof(
                name=dof_names.issue(base),
                index=len(dofs),
                joint=jname,
                index_in_joint=k,
                name_preserved=preserved,
                **draft.settings,
            )
            dofs.append(dof)
            dof_list.append(dof.name)
            if draft.settings:  # DART's defaults are in order
                _check_dof(dof, r, jd.el)
        joints.append(
            Joint(
                name=jname,
                type=jd.type,
                index=index,
                parent=jd.parent,
                child=jd.child,
                actuator=jd.actuator,
                T_parent_to_joint=jd.t_parent,
                T_child_to_joint=jd.t_child,
                axes=tuple(jd.axes),
                pitch=jd.pitch,
                euler_order=jd.euler_order,
                plane=jd.plane,
                plane_axes=tuple(frozen_array(a) for a in jd.plane_axes),
                dofs=tuple(dof_list),
                first_dof=first,
                implicit=jd.implicit,
                location=r.loc(jd.el, jd.path),
            )
        )
        out_bodies.append(
            _build_body(
                bodies[jd.child], index, jname, r,
                base_dir=base_dir, shape_names=shape_names, marker_names=marker_names,
            )
        )
    mimics = [(joints[i], jd.mimic) for i, jd in enumerate(order) if jd.mimic is not None]
    if mimics:
        dofs = _with_mimics(dofs, joints, mimics, r)
    return Skeleton(
        name=name,
        mobile=mobile,
        frame=frame,
        joints=tuple(joints),
        bodies=tuple(out_bodies),
        dofs=tuple(dofs),
        location=r.loc(el, path),
    )


def _with_mimics(dofs: list[Dof], joints: list[Joint], mimics: list[tuple[Joint, Element]],
                 r: _SkelReader) -> list[Dof]:
    """``dofs`` with each follower's :class:`Mimic` (``<mimic joint= multiplier= offset=>``)."""
    by_name = {j.name: j for j in joints}
    followers = {joint.name for joint, _ in mimics}
    for joint, el in mimics:
        leader = r.attribute(el, "joint")
        mimic = Mimic(leader=leader,
                      multiplier=_mimic_number(el, "multiplier", 1.0, r),
                      offset=_mimic_number(el, "offset", 0.0, r))
        problem = mimic_problem(joint, leader, by_name, mimic)
        if problem is None and leader in followers:
            problem = (f"joint {joint.name!r} mimics joint {leader!r}, which mimics another;"
                       " make both mimic the same leader")
        if problem is not None:
            raise SkelValueError(problem, r.loc(el))
        lead_dof = by_name[leader].first_dof
        index = joint.first_dof
        dofs[index] = dataclasses.replace(
            dofs[index], mimic=dataclasses.replace(mimic, leader=dofs[lead_dof].name))
    return dofs


def _mimic_number(el: Element, name: str, default: float, r: _SkelReader) -> float:
    raw = el.get(name)
    if raw is None:
        return default
    value = parse_stod(raw.strip())
    if value is None or not math.isfinite(value):
        raise SkelValueError(f'<mimic> {name}="{raw[:40]}" is not a finite number', r.loc(el))
    return value


def _check_dof(dof: Dof, r: _SkelReader, el: Element) -> None:
    """Warn about limits in the wrong order and an initial position outside its limits."""
    name = dof.name
    for kind, lo, hi in (
        ("position", dof.position_lower, dof.position_upper),
        ("velocity", dof.velocity_lower, dof.velocity_upper),
        ("acceleration", dof.acceleration_lower, dof.acceleration_upper),
        ("force", dof.force_lower, dof.force_upper),
    ):
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
    r: _SkelReader,
    *,
    base_dir: Path | None,
    shape_names: _NameManager,
    marker_names: _NameManager,
) -> Body:
    shapes: list[Shape] = []
    poses: list[Rigid] = []  # of the shapes, in the body
    for shape_els, role, suffix in (
        (draft.visual, ShapeRole.VISUAL, " - visual shape"),
        (draft.collision, ShapeRole.COLLISION, " - collision shape"),
    ):
        for shape_el in shape_els:
            name = shape_names.issue(draft.name + suffix)
            shape_path = r.child_path(draft.path, shape_el)
            shape, pose = _parse_shape(shape_el, r, role, name, base_dir=base_dir, path=shape_path)
            shapes.append(shape)
            poses.append(pose)
    moment, from_shapes = _body_moment(draft, shapes, poses, r)
    markers = tuple(Marker(marker_names.issue(m_name), offset) for m_name, offset in draft.markers)
    return Body(
        name=draft.name,
        index=index,
        parent_joint=parent_joint,
        inertia=Inertia(
            mass=draft.mass, com=draft.com, moment=moment, moment_from_shapes=from_shapes
        ),
        gravity_mode=draft.gravity,
        rest_transform=draft.rest,
        shapes=tuple(shapes),
        markers=markers,
        soft=draft.soft,
        location=r.loc(draft.el, draft.path),
    )


def _body_moment(
    draft: _BodyDraft, shapes: list[Shape], poses: list[Rigid], r: _SkelReader
) -> tuple[Array, bool]:
    """The body's read-only moment of inertia, and whether it was computed from its shapes.

    ``poses`` are the shapes' poses in the body.
    """
    if draft.moment is not None:
        return draft.moment, False
    if not draft.has_inertia:
        return _IDENTITY3, False
    try:
        computed = inertia_mod.moment_from_shapes(
            draft.mass,
            draft.com.tolist(),
            [(shape.geometry, pose) for shape, pose in zip(shapes, poses, strict=True)],
        )
    except (OverflowError, ZeroDivisionError):  # float ** on a huge size, 0 volume
        computed = np.full((3, 3), math.nan)
    if computed is None:
        return _IDENTITY3, False
    _require_finite(
        computed.ravel().tolist(),
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
    computed.setflags(write=False)
    return computed, True
