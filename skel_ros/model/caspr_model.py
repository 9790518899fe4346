"""CASPR models: ``bodies.xml`` into the model, ``cables.xml`` into a typed cable structure.

CASPR (the cable-driven parallel robot platform, github.com/darwinlau/CASPR)
describes a robot in XML files (``data/model_config`` of its repository). This module
reads what the model can hold and CASPR's own reading code
(``src/Model/Bodies/RigidBody/BodyModelRigid.m``, ``JointBase.m``,
``src/Model/Cables/CableModels/*.m``) defines.

**Bodies.** ``<bodies_system><links><link_rigid num name>`` -- one body per link,
its frame the CASPR link frame (origin at the joint P_i). Link ``num`` must count
1, 2, ... in file order (CASPR asserts it); ``<parent><num>`` 0 is the base
(the world); ``<parent><location>`` is the joint position in the parent link
frame, so ``T_parent_to_joint`` is that translation and ``T_child_to_joint`` is
the identity. ``<physical>``: ``mass``, ``com_location``, ``inertia ref="com"``
(about the COM) or ``ref="joint"`` (about the joint, moved to the COM with the
parallel-axis theorem as CASPR does); ``end_location`` is kept in
:class:`CasprLink`. ``q_initial`` / ``q_min`` / ``q_max`` become initial
positions and position limits; ``actuated="true"`` makes the joint's actuator
``force``, otherwise it is ``passive`` (cables drive CASPR robots). Gravity is
(0, 0, -9.81), CASPR's ``GRAVITY_CONSTANT`` along -z of the base frame.

**Joint types** are CASPR's ``JointType`` enum (``src/Model/Bodies/Joints/JointType.m``):

=================== ======================================================
``R_X R_Y R_Z``      revolute about x / y / z
``R_AXIS``           revolute about the ``axis`` attribute
``P_X`` ``P_AXIS``   prismatic along x / ``axis``
``U_XY U_YZ U_XZ``   universal, axes (x, y) / (y, z) / (x, z)
``P_XY P_XZ``        two prismatic joints ``<name>_x`` -> ``<name>_y`` / ``_z`` through a
                     massless body ``<name>__x`` (DART cannot build a
                     translational2d joint)
``PLANAR_XY/YZ``     planar xy / yz, same q order
``PLANAR_XZ``        planar zx; DOF order (z, x, theta) where CASPR's q is (x, z, theta)
``S_EULER_XYZ``      euler xyz (R = Rx Ry Rz)
``S_FIXED_XYZ``      euler zyx (R = Rz(g) Ry(b) Rx(a)); DOF order (g, b, a), CASPR's (a, b, g)
``T_XYZ``            translational
``SPATIAL_EULER_XYZ`` translational ``<name>_translation`` -> virtual body
                     ``<name>__translation`` -> euler xyz ``<name>_rotation``
=================== ======================================================

Virtual bodies have :data:`VIRTUAL_MASS` (1e-9 kg) and no shapes. Every enum value
is supported; anything else (the enum's commented-out
``S_QUATERNION`` and ``SPATIAL_QUATERNION``, typos) is a :class:`CasprError`.
:attr:`CasprLink.dofs` lists the model DOF names in CASPR's q order and
:attr:`CasprBodies.q_dofs` the whole robot's: the mapping CASPR trajectories are
played with, since the DOF order differs for ``PLANAR_XZ`` and ``S_FIXED_XYZ``.

**Operational spaces** (``<operational_spaces>`` inside ``bodies_system``, or the
separate ``*_operational_spaces.xml`` of newer CASPR releases) become markers
on their links (named frames, oriented as the link) and
:class:`OperationalMarker` records.

**Cables.** ``<cables default_cable_set><cable_set id>`` with ``cable_ideal``,
``cable_linear_spring``, ``cable_passive_linear_spring``,
``cable_vsd_torsion_spring``, ``cable_vsd_flexure_linear`` (and
``cable_vsd_polynomial``): name, ``attachment_reference`` (com or joint), the
properties (force limits, stiffnesses, ...), and the attachments (link number,
location; ``base_rotating_pulley`` too), read into :class:`CasprCables`.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

from skel_ros.model import draft
from skel_ros.model.errors import Location, SkelError, SkelWarning
from skel_ros.model.interchange_errors import CasprError
from skel_ros.model.joint_types import PLANE_AXES
from skel_ros.model.types import (
    ActuatorType,
    Array,
    Body,
    Dof,
    EulerOrder,
    Inertia,
    Joint,
    JointType,
    Marker,
    PlaneType,
    World,
    frozen_array,
)
from skel_ros.model.xmlread import Element, XmlReader, parse_number

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "CASPR_JOINT_TYPES",
    "Cable",
    "CableAttachment",
    "CableSet",
    "CableType",
    "CasprBodies",
    "CasprCables",
    "CasprLink",
    "OperationalMarker",
    "load_caspr_bodies",
    "load_caspr_cables",
]

CASPR_JOINT_TYPES = (
    "R_X", "R_Y", "R_Z", "R_AXIS", "U_XY", "U_YZ", "U_XZ", "P_X", "P_XY", "P_XZ", "P_AXIS",
    "PLANAR_XY", "PLANAR_YZ", "PLANAR_XZ", "S_EULER_XYZ", "S_FIXED_XYZ", "T_XYZ",
    "SPATIAL_EULER_XYZ",
)
_NUM_VARS = {"R_X": 1, "R_Y": 1, "R_Z": 1, "R_AXIS": 1, "P_X": 1, "P_AXIS": 1, "U_XY": 2,
             "U_YZ": 2, "U_XZ": 2, "P_XY": 2, "P_XZ": 2, "PLANAR_XY": 3, "PLANAR_YZ": 3,
             "PLANAR_XZ": 3, "S_EULER_XYZ": 3, "S_FIXED_XYZ": 3, "T_XYZ": 3,
             "SPATIAL_EULER_XYZ": 6}
_NOT_IN_ENUM = {
    "S_QUATERNION": "commented out of CASPR's JointType enum (quaternion coordinates)",
    "SPATIAL_QUATERNION": "commented out of CASPR's JointType enum (quaternion coordinates)",
}
_X, _Y, _Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
_MAX_BYTES = 64 * 1024 * 1024
_GRAVITY = (0.0, 0.0, -9.81)
_SEPARATORS = re.compile(r"[\s,;]+")


# =========================================================================== types


@dataclass(frozen=True, eq=False)
class CasprLink:
    """One ``<link_rigid>`` as CASPR defines it.

    Attributes:
        num: CASPR link number (1-based; 0 is the base).
        name: Link (and body) name.
        joint_type: CASPR ``JointType`` name, e.g. ``"S_EULER_XYZ"``.
        q_initial: Initial joint coordinates, CASPR's order.
        q_min: Lower bounds, CASPR's order.
        q_max: Upper bounds, CASPR's order.
        actuated: ``actuated="true"``.
        axis: Unit axis of ``R_AXIS`` / ``P_AXIS`` joints, else None.
        mass: Mass (kg).
        com: Centre of mass in the link frame.
        end: ``end_location`` in the link frame.
        inertia_ref: ``com`` or ``joint``, as written.
        inertia_com: Moment of inertia about the COM (converted from ``joint``).
        parent_num: Parent link number (0 = base).
        parent_location: Joint position in the parent link frame.
        dofs: Model DOF names, in CASPR's q order.
        location: Where the element is.
    """

    num: int
    name: str
    joint_type: str
    q_initial: Array
    q_min: Array
    q_max: Array
    actuated: bool
    axis: Array | None
    mass: float
    com: Array
    end: Array
    inertia_ref: str
    inertia_com: Array
    parent_num: int
    parent_location: Array
    dofs: tuple[str, ...]
    location: Location


@dataclass(frozen=True, eq=False)
class OperationalMarker:
    """One operational-space marker (``position``, ``orientation_euler_xyz``, ``pose_euler_xyz``).

    Attributes:
        set_id: The ``operational_set`` it belongs to.
        kind: Its element name.
        marker_id: ``marker_id``.
        name: ``name`` (also the model marker's name, made unique per skeleton).
        link: Link number it is attached to.
        offset: Position in the link frame (zero for orientation markers).
        active_axes: ``active_axes`` (``x y z`` translations, ``a b g`` rotations).
        location: Where the element is.
    """

    set_id: str
    kind: str
    marker_id: int
    name: str
    link: int
    offset: Array
    active_axes: str
    location: Location


@dataclass(frozen=True, eq=False)
class CasprBodies:
    """A CASPR ``bodies.xml`` read.

    Attributes:
        world: The model (one skeleton).
        links: The links in ``num`` order.
        operational_sets: Markers per operational set id, in file order.
        default_operational_set: ``default_operational_set``, or ``""``.
        display_range: ``display_range`` (6 numbers) or None.
        view_angle: ``view_angle`` (2 numbers) or None.
    """

    world: World
    links: tuple[CasprLink, ...]
    operational_sets: Mapping[str, tuple[OperationalMarker, ...]]
    default_operational_set: str
    display_range: Array | None
    view_angle: Array | None

    @property
    def q_dofs(self) -> tuple[str, ...]:
        """The model DOF each entry of CASPR's ``q`` vector moves, in CASPR's ``q`` order.

        CASPR's ``q`` stacks the links' joint coordinates in link ``num`` order, each
        joint's in its own order (``SystemModelBodies``, ``src/Model/Bodies/Joints/*.m``).
        The model's DOF order differs where DART cannot keep CASPR's (``PLANAR_XZ``,
        ``S_FIXED_XYZ``): this list, not the DOF order, says which DOF ``q[i]`` moves.
        """
        return tuple(name for link in self.links for name in link.dofs)

    def link(self, num: int) -> CasprLink:
        """The link numbered ``num`` (KeyError if none)."""
        for link in self.links:
            if link.num == num:
                return link
        raise KeyError(num)


class CableType(enum.Enum):
    """CASPR cable models (the element names in a ``cable_set``)."""

    IDEAL = "cable_ideal"
    LINEAR_SPRING = "cable_linear_spring"
    PASSIVE_LINEAR_SPRING = "cable_passive_linear_spring"
    VSD_TORSION_SPRING = "cable_vsd_torsion_spring"
    VSD_FLEXURE_LINEAR = "cable_vsd_flexure_linear"
    VSD_POLYNOMIAL = "cable_vsd_polynomial"


# Property elements each cable type requires (CASPR's LoadXmlObj of each model);
# ``diameter`` is optional for all.
_REQUIRED_PROPS: dict[CableType, tuple[str, ...]] = {
    CableType.IDEAL: ("force_min", "force_max"),
    CableType.LINEAR_SPRING: ("force_min", "force_max", "K"),
    CableType.PASSIVE_LINEAR_SPRING: ("K", "l0"),
    CableType.VSD_TORSION_SPRING: ("force_min", "force_max", "K_cable", "num_torsion_springs",
                                   "torsion_spring_stiffness", "torsion_spring_length"),
    CableType.VSD_FLEXURE_LINEAR: ("force_min", "force_max", "K_cable",
                                   "vsd_force_deformation_relation"),
    CableType.VSD_POLYNOMIAL: ("force_min", "force_max", "K_cable",
                               "num_stiffness_polynomial_coeff"),
}


@dataclass(frozen=True, eq=False)
class CableAttachment:
    """One cable attachment.

    Attributes:
        kind: ``attachment`` or ``base_rotating_pulley``.
        link: Link number (0 = base).
        link_name: Model body name, or None for the base.
        location: The location as written (relative to the COM or the joint).
        point: The point in the link frame (the base frame for link 0).
        values: Other numbers of the element (pulley radius, entry vector, ...).
        location_in_file: Where the element is.
    """

    kind: str
    link: int
    link_name: str | None
    location: Array
    point: Array
    values: Mapping[str, Array]
    location_in_file: Location


@dataclass(frozen=True, eq=False)
class Cable:
    """One cable of a set.

    Attributes:
        name: Cable name.
        type: Cable model.
        attachment_reference: ``com`` or ``joint``.
        force_min: Minimum tension (N); 0 for a passive spring.
        force_max: Maximum tension (N); inf for a passive spring.
        properties: Every property element's numbers (``K``, ``l0``, ``diameter``, ...).
        attachments: Attachments in order, base first.
        location: Where the element is.
    """

    name: str
    type: CableType
    attachment_reference: str
    force_min: float
    force_max: float
    properties: Mapping[str, Array]
    attachments: tuple[CableAttachment, ...]
    location: Location


@dataclass(frozen=True, eq=False)
class CableSet:
    """A ``cable_set``."""

    id: str
    cables: tuple[Cable, ...]
    location: Location


@dataclass(frozen=True, eq=False)
class CasprCables:
    """A CASPR ``cables.xml`` read.

    Attributes:
        default_set: ``default_cable_set``.
        sets: The cable sets in file order.
        source: File name.
    """

    default_set: str
    sets: tuple[CableSet, ...]
    source: str

    def set(self, set_id: str | None = None) -> CableSet:
        """The set ``set_id`` (default: the default set); KeyError if none."""
        wanted = self.default_set if set_id is None else set_id
        for s in self.sets:
            if s.id == wanted:
                return s
        raise KeyError(wanted)


# =========================================================================== reading helpers


class _Xml:
    def __init__(self, label: str) -> None:
        self.r = XmlReader(label)
        self.label = label
        self.warnings: list[SkelWarning] = []

    def loc(self, el: Element) -> Location:
        return self.r.loc(el)

    def fail(self, reason: str, el: Element, hint: str = "") -> CasprError:
        return CasprError(reason, self.loc(el), hint)

    def warn(self, message: str, el: Element) -> None:
        self.warnings.append(SkelWarning(message, self.loc(el)))

    def child(self, el: Element, tag: str) -> Element:
        found = self.r.child(el, tag)
        if found is None:
            raise self.fail(f"<{el.tag}> needs a <{tag}> element", el)
        return found

    def attr(self, el: Element, name: str) -> str:
        value = el.get(name)
        if value is None or not value.strip():
            raise self.fail(f'<{el.tag}> needs a "{name}" attribute', el)
        return str(value).strip()

    def numbers(self, text: str | None, el: Element, what: str, n: int | None = None,
                *, finite: bool = True) -> list[float]:
        toks = [t for t in _SEPARATORS.split((text or "").strip().strip("[]")) if t]
        values = []
        for tok in toks:
            v = parse_number(tok)
            if v is None or math.isnan(v) or (finite and math.isinf(v)):
                raise self.fail(f"{what}: {tok[:40]!r} is not a finite number" if finite
                                else f"{what}: {tok[:40]!r} is not a number", el)
            values.append(v)
        if n is not None and len(values) != n:
            raise self.fail(f"{what} holds {len(values)} number(s) where {n} are required", el)
        if not values:
            raise self.fail(f"{what} is empty", el)
        return values

    def vec3(self, el: Element, tag: str) -> list[float]:
        e = self.child(el, tag)
        return self.numbers(e.text, e, f"<{tag}>", 3)

    def number(self, el: Element, tag: str, *, nonneg: bool = False) -> float:
        e = self.child(el, tag)
        v = self.numbers(e.text, e, f"<{tag}>", 1)[0]
        if nonneg and v < 0.0:
            raise self.fail(f"<{tag}> must not be negative, got {v}", e)
        return v

    def integer(self, el: Element, tag: str) -> int:
        e = self.child(el, tag)
        text = (e.text or "").strip()
        if not re.fullmatch(r"\+?\d{1,9}", text):
            raise self.fail(f"<{tag}> {text[:40]!r} is not a non-negative integer", e)
        return int(text)


def _read(source: str | os.PathLike[str], name: str | None, root_tags: Sequence[str]
          ) -> tuple[_Xml, Element, Path | None]:
    text_input = isinstance(source, str) and source.lstrip("\ufeff \t\r\n").startswith("<")
    label = name or ("<string>" if text_input else os.fspath(source))
    base: Path | None = None
    if text_input:
        data = str(source).encode("utf-8", "surrogatepass")
        if name:
            base = Path(name).parent
    else:
        path = Path(os.fspath(source))
        try:
            if not path.is_file():
                raise CasprError("not a readable file", Location(label))
            if path.stat().st_size > _MAX_BYTES:
                raise CasprError("file is too large", Location(label))
            data = path.read_bytes()
        except OSError as exc:
            raise CasprError(f"cannot read file: {exc.strerror or exc}", Location(label)) from None
        except ValueError as exc:
            raise CasprError(f"cannot read file: {exc}", Location(label)) from None
        base = path.resolve().parent
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise CasprError(f"malformed XML: {exc.msg}", Location(label, exc.lineno or 0)) from None
    except ValueError as exc:
        raise CasprError(f"malformed XML: {exc}", Location(label)) from None
    x = _Xml(label)
    if root.tag not in root_tags:
        raise x.fail(f"root element is <{root.tag}>, not <{'> or <'.join(root_tags)}>", root)
    return x, root, base


# =========================================================================== bodies


def load_caspr_bodies(source: str | os.PathLike[str], *,
                      operational_spaces: str | os.PathLike[str] | None = None,
                      name: str | None = None, model_name: str | None = None) -> CasprBodies:
    """Read a CASPR ``bodies.xml`` (path or XML text) into the model.

    Args:
        source: The bodies file, or its XML text.
        operational_spaces: A separate ``<operational_spaces>`` file (newer CASPR
            models keep them in ``<model>_operational_spaces.xml``), optional.
        name: Name used in messages for XML text.
        model_name: Skeleton name (default: the file name without ``_bodies.xml``).

    Raises:
        CasprError: (or another SkelError) with file:line and element path.
    """
    label = name or (os.fspath(source) if not _is_xml(source) else "<string>")
    try:
        return _load_bodies(source, operational_spaces, name, model_name)
    except SkelError:
        raise
    except RecursionError:
        raise CasprError("document is nested too deeply", Location(label)) from None
    except Exception as exc:
        raise CasprError(f"internal error while reading ({type(exc).__name__}: {exc});"
                         " please report this", Location(label)) from exc


def _is_xml(source: object) -> bool:
    return isinstance(source, str) and source.lstrip("\ufeff \t\r\n").startswith("<")


def _load_bodies(source: str | os.PathLike[str], ops: str | os.PathLike[str] | None,  # noqa: C901, PLR0912, PLR0915
                 name: str | None, model_name: str | None) -> CasprBodies:
    x, root, _ = _read(source, name, ("bodies_system",))
    links_el = x.child(root, "links")
    link_els = list(x.r.children(links_el, "link_rigid"))
    if not link_els:
        raise x.fail("<links> needs at least one <link_rigid>", links_el)
    for other in x.r.children(links_el):
        if other.tag != "link_rigid":
            raise x.fail(f"unknown link type <{other.tag}> (CASPR reads link_rigid)", other)
    display = _opt_numbers(x, links_el, "display_range", 6)
    view = _opt_numbers(x, links_el, "view_angle", 2)

    links: list[CasprLink] = []
    names: dict[str, Element] = {}
    parsed = []
    for k, el in enumerate(link_els, start=1):
        num_text = x.attr(el, "num")
        if not re.fullmatch(r"\+?\d{1,9}", num_text) or int(num_text) != k:
            raise x.fail(f"link num {num_text[:20]!r} does not match its order ({k})", el,
                         "CASPR numbers links 1, 2, ... in file order")
        lname = x.attr(el, "name")
        if lname in names:
            raise x.fail(f"link name {lname!r} is used twice", el)
        names[lname] = el
        parsed.append((k, lname, el))
    nums = {k: lname for k, lname, _ in parsed}

    bodies: list[Body] = []
    joints: list[Joint] = []
    dofs: list[Dof] = []
    for k, lname, el in parsed:
        link, jl, dl, extra_bodies = _link(x, el, k, lname, nums)
        links.append(link)
        joints.extend(jl)
        dofs.extend(dl)
        bodies.extend(extra_bodies)
    _check_links_tree(x, links, link_els)

    op_sets: dict[str, list[OperationalMarker]] = {}
    default_set = ""
    op_root = x.r.child(root, "operational_spaces")
    op_x = x
    if ops is not None:
        if op_root is not None:
            x.warn("operational spaces are given in this file and in a separate file; the"
                   " separate file's are used", op_root)
        op_x, op_root, _ = _read(ops, None, ("operational_spaces",))
    if op_root is not None:
        default_set = op_root.get("default_operational_set", "")
        for set_el in op_x.r.children(op_root, "operational_set"):
            set_id = op_x.attr(set_el, "id")
            if set_id in op_sets:
                raise op_x.fail(f"operational set {set_id!r} is defined twice", set_el)
            op_sets[set_id] = [_marker(op_x, m, set_id, nums) for m in op_x.r.children(set_el)]
        if default_set and default_set not in op_sets:
            x.warn(f"default_operational_set {default_set!r} is not defined", op_root)

    markers: dict[str, list[Marker]] = {}
    for marks in op_sets.values():
        for m in marks:
            markers.setdefault(nums[m.link], []).append(Marker(m.name, m.offset))
    inertia_of = {link.name: link for link in links}
    link_bodies = []
    for body in bodies:
        found = inertia_of.get(body.name)
        if found is not None:
            inertia = Inertia(mass=found.mass, com=found.com, moment=found.inertia_com)
            body = Body(name=body.name, index=0, parent_joint="", inertia=inertia,  # noqa: PLW2901
                        gravity_mode=True, rest_transform=body.rest_transform, shapes=(),
                        markers=tuple(markers.get(body.name, [])), soft=None,
                        location=body.location)
        link_bodies.append(body)

    seen_joints: set[str] = set()
    for j in joints:
        if j.name in seen_joints:
            raise x.fail(f"two links make a joint named {j.name!r}", x.r.child(root, "links")
                         or root, "rename one of the links")
        seen_joints.add(j.name)
    label = x.label
    skel_name = model_name or _model_name(label)
    # Bodies in the order their joints are built (virtual bodies right before their link).
    order = {j.child: i for i, j in enumerate(joints)}
    link_bodies.sort(key=lambda b: order[b.name])
    skel = draft.skeleton(skel_name, joints, link_bodies, dofs, location=x.loc(root))
    world = draft.canonical(draft.world([skel], label, gravity=_GRAVITY), label, CasprError,
                            x.warnings + (op_x.warnings if op_x is not x else []))
    skel_out = world.skeletons[0]
    resolved = []
    for link in links:
        dof_names: list[str] = []
        for key in link.dofs:
            jname, idx = key.split("\x00")
            dof_names.append(skel_out.joint(jname).dofs[int(idx)])
        resolved.append(dataclasses.replace(link, dofs=tuple(dof_names)))
    return CasprBodies(
        world=world, links=tuple(resolved),
        operational_sets={k: tuple(v) for k, v in op_sets.items()},
        default_operational_set=default_set, display_range=display, view_angle=view,
    )


def _model_name(label: str) -> str:
    stem = Path(label).name
    for suffix in (".xml", "_bodies"):
        stem = stem.removesuffix(suffix)
    return stem if stem and not stem.startswith("<") else "caspr"


def _opt_numbers(x: _Xml, el: Element, attr: str, n: int) -> Array | None:
    raw = el.get(attr)
    if raw is None:
        return None
    return frozen_array(x.numbers(raw, el, f'"{attr}"', n))


def _check_links_tree(x: _Xml, links: Sequence[CasprLink], els: Sequence[Element]) -> None:
    parent = {link.num: link.parent_num for link in links}
    for link, el in zip(links, els, strict=True):
        seen = {link.num}
        p = link.parent_num
        while p != 0:
            if p in seen:
                raise x.fail(f"link {link.name!r}: the parent links form a loop", el,
                             "every link needs one path to the base (num 0)")
            seen.add(p)
            p = parent[p]


def _axis_matrix(axis: Sequence[float]) -> tuple[float, float, float]:
    return (float(axis[0]), float(axis[1]), float(axis[2]))


def _link(x: _Xml, el: Element, k: int, lname: str, nums: Mapping[int, str]  # noqa: C901, PLR0915
          ) -> tuple[CasprLink, list[Joint], list[Dof], list[Body]]:
    joint_el = x.child(el, "joint")
    jtype = x.attr(joint_el, "type")
    if jtype not in _NUM_VARS:
        why = _NOT_IN_ENUM.get(jtype, "not in CASPR's JointType enum")
        raise x.fail(f"joint type {jtype!r} is {why}", joint_el,
                     "supported: " + " ".join(CASPR_JOINT_TYPES))
    n = _NUM_VARS[jtype]
    q0 = x.numbers(x.attr(joint_el, "q_initial"), joint_el, '"q_initial"', n)
    qmin = x.numbers(x.attr(joint_el, "q_min"), joint_el, '"q_min"', n, finite=False)
    qmax = x.numbers(x.attr(joint_el, "q_max"), joint_el, '"q_max"', n, finite=False)
    for i in range(n):
        if qmin[i] > qmax[i]:
            x.warn(f"q_min[{i}] = {qmin[i]} is above q_max[{i}] = {qmax[i]}", joint_el)
    actuated = joint_el.get("actuated", "").strip() == "true"
    axis = None
    raw_axis = joint_el.get("axis")
    if raw_axis is not None and raw_axis.strip():
        if jtype not in ("R_AXIS", "P_AXIS"):
            raise x.fail("an axis is only allowed for R_AXIS / P_AXIS joints", joint_el)
        v = x.numbers(raw_axis, joint_el, '"axis"', 3)
        norm = math.sqrt(sum(c * c for c in v))
        if norm == 0.0 or not math.isfinite(norm):
            raise x.fail("the axis must not be the zero vector", joint_el)
        axis = [c / norm for c in v]
    elif jtype in ("R_AXIS", "P_AXIS"):
        raise x.fail(f'a {jtype} joint needs an "axis" attribute', joint_el)

    phys = x.child(el, "physical")
    mass = x.number(phys, "mass", nonneg=True)
    com = x.vec3(phys, "com_location")
    end = x.vec3(phys, "end_location")
    inertia_el = x.child(phys, "inertia")
    ref = x.attr(inertia_el, "ref")
    if ref not in ("com", "joint"):
        raise x.fail(f'inertia ref {ref[:20]!r} is not "com" or "joint"', inertia_el)
    ixx, iyy, izz, ixy, ixz, iyz = (x.number(inertia_el, t)
                                    for t in ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"))
    moment = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if ref == "joint":  # BodyModelRigid.m: I_G = I_O - m (r.r I - r r^T)
        r = np.asarray(com)
        moment = moment - mass * (float(r @ r) * np.eye(3) - np.outer(r, r))
    if not np.all(np.isfinite(moment)):
        raise x.fail("the inertia is not finite", inertia_el)
    parent_el = x.child(el, "parent")
    pnum = x.integer(parent_el, "num")
    if pnum != 0 and pnum not in nums:
        raise x.fail(f"parent link {pnum} does not exist", parent_el)
    if pnum == k:
        raise x.fail("a link cannot be its own parent", parent_el)
    ploc = x.vec3(parent_el, "location")
    parent_body = None if pnum == 0 else nums[pnum]

    t_parent = np.eye(4)
    t_parent[:3, 3] = ploc
    actuator = ActuatorType.FORCE if actuated else ActuatorType.PASSIVE
    jl, dl, extra, dof_order = _joints_for(jtype, lname, parent_body, t_parent, axis, q0, qmin,
                                           qmax, actuator, x.loc(joint_el))
    link = CasprLink(
        num=k, name=lname, joint_type=jtype, q_initial=frozen_array(q0),
        q_min=frozen_array(qmin), q_max=frozen_array(qmax), actuated=actuated,
        axis=None if axis is None else frozen_array(axis), mass=mass, com=frozen_array(com),
        end=frozen_array(end), inertia_ref=ref, inertia_com=frozen_array(moment),
        parent_num=pnum, parent_location=frozen_array(ploc),
        dofs=tuple(f"{j}\x00{i}" for j, i in dof_order),  # resolved after loading
        location=x.loc(el),
    )
    body = Body(name=lname, index=0, parent_joint="", inertia=draft.default_inertia(),
                gravity_mode=True, rest_transform=frozen_array(np.eye(4)), shapes=(),
                markers=(), soft=None, location=x.loc(el))
    return link, jl, dl, [*extra, body]


# The bodies between the joints of P_XY / P_XZ / SPATIAL_EULER_XYZ carry nothing; DART
# warns that a zero mass "can cause invalid physical behavior or segfault", so they get
# a negligible one (the link's own mass is at least grams).
VIRTUAL_MASS = 1e-9
VIRTUAL_MOMENT = 1e-12


def _massless(name: str, where: Location) -> Body:
    zero = frozen_array(np.zeros(3))
    return Body(name=name, index=0, parent_joint="",
                inertia=Inertia(mass=VIRTUAL_MASS, com=zero,
                                moment=frozen_array(VIRTUAL_MOMENT * np.eye(3))),
                gravity_mode=True, rest_transform=frozen_array(np.eye(4)), shapes=(),
                markers=(), soft=None, location=where)


def _joints_for(jtype: str, name: str, parent: str | None, t_parent: Array,  # noqa: C901, PLR0911, PLR0917
                axis: list[float] | None, q0: list[float], qmin: list[float],
                qmax: list[float], actuator: ActuatorType, where: Location
                ) -> tuple[list[Joint], list[Dof], list[Body], list[tuple[str, int]]]:
    """Model joints (and massless bodies) for one CASPR joint; DOF names in CASPR q order."""

    def dofs_for(jname: str, idx: Sequence[int], preserved_names: Sequence[str] | None = None
                 ) -> list[Dof]:
        out = []
        for k, i in enumerate(idx):
            dname = preserved_names[k] if preserved_names else f"{jname}#{k}"
            out.append(draft.make_dof(dname, jname, k, preserved=bool(preserved_names),
                                      position=(qmin[i], qmax[i]), initial_position=q0[i]))
        return out

    def joint(jname: str, t: JointType, par: str | None, child: str, tp: Array,  # noqa: PLR0917
              dl: list[Dof], **kw: object) -> Joint:
        return draft.make_joint(jname, t, par, child, t_parent=tp, dofs=[d.name for d in dl],
                                actuator=actuator, location=where, **kw)  # type: ignore[arg-type]

    one = {"R_X": (JointType.REVOLUTE, _X), "R_Y": (JointType.REVOLUTE, _Y),
           "R_Z": (JointType.REVOLUTE, _Z), "P_X": (JointType.PRISMATIC, _X)}
    if jtype in one or jtype in ("R_AXIS", "P_AXIS"):
        if jtype in one:
            t, ax = one[jtype]
        else:
            t = JointType.REVOLUTE if jtype == "R_AXIS" else JointType.PRISMATIC
            assert axis is not None  # noqa: S101 - checked by the caller
            ax = _axis_matrix(axis)
        dl = dofs_for(name, [0])
        return [joint(name, t, parent, name, t_parent, dl, axes=[ax])], dl, [], [(name, 0)]
    if jtype.startswith("U_"):
        axes = {"U_XY": [_X, _Y], "U_YZ": [_Y, _Z], "U_XZ": [_X, _Z]}[jtype]
        dl = dofs_for(name, [0, 1])
        return ([joint(name, JointType.UNIVERSAL, parent, name, t_parent, dl, axes=axes)], dl, [],
                [(name, 0), (name, 1)])
    if jtype in ("P_XY", "P_XZ"):
        second = "y" if jtype == "P_XY" else "z"
        mid = f"{name}__x"
        j1, j2 = f"{name}_x", f"{name}_{second}"
        d1 = dofs_for(j1, [0])
        d2 = dofs_for(j2, [1])
        return ([joint(j1, JointType.PRISMATIC, parent, mid, t_parent, d1, axes=[_X]),
                 joint(j2, JointType.PRISMATIC, mid, name, np.eye(4), d2,
                       axes=[_Y if second == "y" else _Z])],
                d1 + d2, [_massless(mid, where)], [(j1, 0), (j2, 0)])
    if jtype.startswith("PLANAR_"):
        plane, perm = {
            "PLANAR_XY": (PlaneType.XY, [0, 1, 2]),
            "PLANAR_YZ": (PlaneType.YZ, [0, 1, 2]),
            "PLANAR_XZ": (PlaneType.ZX, [1, 0, 2]),
        }[jtype]
        plane_axes = list(PLANE_AXES[plane])
        # DART's names for the translations; the rotational DOF would be called
        # "default": name it after the joint.
        sx, sy, _ = JointType.PLANAR.spec.dof_name_suffixes(plane=plane)
        dl = dofs_for(name, perm, [f"{name}{sx}", f"{name}{sy}", f"{name}_theta"])
        caspr_order = [(name, perm.index(i)) for i in range(3)]
        return ([joint(name, JointType.PLANAR, parent, name, t_parent, dl, plane=plane,
                       plane_axes=plane_axes)], dl, [], caspr_order)
    if jtype in ("S_EULER_XYZ", "S_FIXED_XYZ"):
        if jtype == "S_EULER_XYZ":
            dl = dofs_for(name, [0, 1, 2])
            return ([joint(name, JointType.EULER, parent, name, t_parent, dl,
                           euler_order=EulerOrder.XYZ)], dl, [],
                    [(name, 0), (name, 1), (name, 2)])
        dl = dofs_for(name, [2, 1, 0])  # Rz(g) Ry(b) Rx(a) = euler zyx with q = (g, b, a)
        return ([joint(name, JointType.EULER, parent, name, t_parent, dl,
                       euler_order=EulerOrder.ZYX)], dl, [],
                [(name, 2), (name, 1), (name, 0)])
    if jtype == "T_XYZ":
        dl = dofs_for(name, [0, 1, 2])
        return ([joint(name, JointType.TRANSLATIONAL, parent, name, t_parent, dl)], dl, [],
                [(name, 0), (name, 1), (name, 2)])
    # SPATIAL_EULER_XYZ: translation, then XYZ euler rotation (SpatialEulerXYZ.m).
    mid = f"{name}__translation"
    jt, jr = f"{name}_translation", f"{name}_rotation"
    dt = dofs_for(jt, [0, 1, 2])
    dr = dofs_for(jr, [3, 4, 5])
    return ([joint(jt, JointType.TRANSLATIONAL, parent, mid, t_parent, dt),
             joint(jr, JointType.EULER, mid, name, np.eye(4), dr, euler_order=EulerOrder.XYZ)],
            dt + dr, [_massless(mid, where)],
            [(jt, 0), (jt, 1), (jt, 2), (jr, 0), (jr, 1), (jr, 2)])


_MARKER_KINDS = ("position", "orientation_euler_xyz", "pose_euler_xyz")


def _marker(x: _Xml, el: Element, set_id: str, nums: Mapping[int, str]) -> OperationalMarker:
    if el.tag not in _MARKER_KINDS:
        raise x.fail(f"unknown operational space <{el.tag}> ({', '.join(_MARKER_KINDS)})", el)
    mid_text = x.attr(el, "marker_id")
    if not re.fullmatch(r"[+-]?\d{1,9}", mid_text):
        raise x.fail(f"marker_id {mid_text[:20]!r} is not an integer", el)
    mname = x.attr(el, "name")
    link = x.integer(el, "link")
    if link not in nums:
        raise x.fail(f"operational space {mname!r} is on link {link}, which does not exist", el)
    offset = [0.0, 0.0, 0.0] if el.tag == "orientation_euler_xyz" else x.vec3(el, "offset")
    axes_el = x.child(el, "axes")
    active = x.attr(axes_el, "active_axes")
    if not set(active) <= set("xyzabg"):
        raise x.fail(f"active_axes {active[:20]!r} may only hold x y z a b g", axes_el)
    return OperationalMarker(set_id=set_id, kind=str(el.tag), marker_id=int(mid_text), name=mname,
                             link=link, offset=frozen_array(offset), active_axes=active,
                             location=x.loc(el))


# =========================================================================== cables


def load_caspr_cables(source: str | os.PathLike[str], bodies: CasprBodies | None = None, *,
                      name: str | None = None) -> CasprCables:
    """Read a CASPR ``cables.xml`` (path or XML text).

    Args:
        source: The cables file, or its XML text.
        bodies: The robot's bodies; when given, every attachment's link must
            exist and ``point`` is computed in the link frame (COM-referenced
            locations are moved by the link's COM). Without it, ``point`` is
            the location as written.
        name: Name used in messages for XML text.

    Raises:
        CasprError: (or another SkelError) with file:line and element path.
    """
    label = name or (os.fspath(source) if not _is_xml(source) else "<string>")
    try:
        return _load_cables(source, bodies, name)
    except SkelError:
        raise
    except RecursionError:
        raise CasprError("document is nested too deeply", Location(label)) from None
    except Exception as exc:
        raise CasprError(f"internal error while reading ({type(exc).__name__}: {exc});"
                         " please report this", Location(label)) from exc


def _load_cables(source: str | os.PathLike[str], bodies: CasprBodies | None,
                 name: str | None) -> CasprCables:
    x, root, _ = _read(source, name, ("cables",))
    default = x.attr(root, "default_cable_set")
    sets: list[CableSet] = []
    for set_el in x.r.children(root):
        if set_el.tag != "cable_set":
            raise x.fail(f"unknown element <{set_el.tag}> in <cables>", set_el)
        sid = x.attr(set_el, "id")
        if any(s.id == sid for s in sets):
            raise x.fail(f"cable set {sid!r} is defined twice", set_el)
        cables = [_cable(x, c, bodies) for c in x.r.children(set_el)]
        if not cables:
            raise x.fail(f"cable set {sid!r} has no cables", set_el)
        sets.append(CableSet(id=sid, cables=tuple(cables), location=x.loc(set_el)))
    if not sets:
        raise x.fail("<cables> needs at least one <cable_set>", root)
    if default not in {s.id for s in sets}:
        raise x.fail(f"default_cable_set {default!r} is not defined", root)
    return CasprCables(default_set=default, sets=tuple(sets), source=x.label)


def _cable(x: _Xml, el: Element, bodies: CasprBodies | None) -> Cable:  # noqa: C901
    try:
        ctype = CableType(el.tag)
    except ValueError:
        raise x.fail(f"unknown cable type <{el.tag}>", el,
                     "CASPR cables: " + ", ".join(t.value for t in CableType)) from None
    cname = x.attr(el, "name")
    ref = x.attr(el, "attachment_reference")
    if ref not in ("com", "joint"):
        raise x.fail(f'attachment_reference {ref[:20]!r} is not "com" or "joint"', el)
    props_el = x.child(el, "properties")
    props: dict[str, Array] = {}
    for p in x.r.children(props_el):
        props[str(p.tag)] = frozen_array(x.numbers(p.text, p, f"<{p.tag}>"))
    for tag in _REQUIRED_PROPS[ctype]:
        if tag not in props:
            raise x.fail(f"a {ctype.value} needs <{tag}> in <properties>", props_el)
    for tag in ("force_min", "force_max", "K", "K_cable", "l0", "diameter"):
        if tag in props and (props[tag].size != 1 or props[tag][0] < 0.0):
            raise x.fail(f"<{tag}> must be one non-negative number", props_el)
    fmin = float(props["force_min"][0]) if "force_min" in props else 0.0
    fmax = float(props["force_max"][0]) if "force_max" in props else math.inf
    if fmin > fmax:
        raise x.fail(f"force_min {fmin} is above force_max {fmax}", props_el)
    att_el = x.child(el, "attachments")
    attachments = []
    for i, a in enumerate(x.r.children(att_el)):
        attachments.append(_attachment(x, a, i, ref, bodies))
    if len(attachments) < 2:  # noqa: PLR2004
        raise x.fail(f"cable {cname!r} needs at least two attachments", att_el)
    return Cable(name=cname, type=ctype, attachment_reference=ref, force_min=fmin,
                 force_max=fmax, properties=props, attachments=tuple(attachments),
                 location=x.loc(el))


def _attachment(x: _Xml, el: Element, index: int, ref: str,
                bodies: CasprBodies | None) -> CableAttachment:
    if el.tag not in ("attachment", "base_rotating_pulley"):
        raise x.fail(f"unknown attachment <{el.tag}> (attachment, base_rotating_pulley)", el)
    if el.tag == "base_rotating_pulley" and index != 0:
        raise x.fail("base_rotating_pulley can only be the first (base) attachment", el)
    values: dict[str, Array] = {}
    if el.tag == "attachment":
        link = x.integer(el, "link")
        location = x.vec3(el, "location")
    else:
        link = 0
        location = x.vec3(el, "fixed_location")
        values["pulley_radius"] = frozen_array([x.number(el, "pulley_radius", nonneg=True)])
        values["cable_entry_vector"] = frozen_array(x.vec3(el, "cable_entry_vector"))
    link_name = None
    point = np.asarray(location, dtype=float)
    if bodies is not None and link != 0:
        try:
            clink = bodies.link(link)
        except KeyError:
            raise x.fail(f"attachment on link {link}, which the bodies file does not have",
                         el) from None
        link_name = clink.name
        if ref == "com":
            point = point + np.asarray(clink.com)
    return CableAttachment(kind=str(el.tag), link=link, link_name=link_name,
                           location=frozen_array(location), point=frozen_array(point),
                           values=values, location_in_file=x.loc(el))
