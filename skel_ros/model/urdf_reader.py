"""Read URDF (and xacro) into the shared model.

:func:`load_urdf` reads a URDF file, a ``.urdf.xacro`` file (expanded by the
``xacro`` package with ``name:=value`` arguments) or URDF text, and builds the
model DART's ``SkelParser`` would build from the equivalent SKEL file (through
:func:`skel_ros.model.draft.canonical`), so every node and every writer works on
it. ``docs/interchange.md`` has the full mapping table; in short:

* ``<link>`` -> a body whose frame is the link frame; ``<inertial>`` gives mass,
  centre of mass (the inertial origin) and the moment rotated into link axes. A
  link without ``<inertial>`` has mass 0 (the URDF specification's default).
* ``<joint>`` -> a joint whose frame is the child link frame
  (``T_parent_to_joint`` = ``<origin>``, ``T_child_to_joint`` = identity):
  revolute and continuous -> revolute (continuous without position limits),
  prismatic -> prismatic, fixed -> weld, floating -> free, planar -> planar
  (``<axis>`` is the plane normal). ``<limit>`` gives position, velocity and
  effort limits (symmetric: ``-velocity..velocity``); ``<dynamics>`` gives
  damping and Coulomb friction. A limit of magnitude
  :data:`~skel_ros.model.urdf.UNBOUNDED` or more (what the URDF writer puts where
  the model has no limit) is no limit; a velocity or effort of 0 is read as no
  limit, with a warning.
* ``<mimic joint multiplier offset>`` makes the joint's DOF a follower of the
  named joint's (:class:`~skel_ros.model.types.Mimic`, docs/model.md "Mimic
  joints"); a coupling :func:`~skel_ros.model.mimic.mimic_problem` refuses, or a
  chain of mimics, is an error at the ``<mimic>`` element.
* The root link: a link named ``world`` is the world frame itself (joints from
  it are attached to the world, as in Gazebo and DART's URDF loader). Any other
  root link gets a floating (free) joint named ``floating_base``, or a weld when
  ``fixed_base`` is true.
* ``<visual>`` / ``<collision>``: box, cylinder, sphere, capsule and mesh (with
  ``scale``); materials' ``rgba`` (inline, or by name from the top level or another
  link) become the visual colour. Mesh URIs: ``package://<pkg>/<path>`` through the ament index
  (:func:`find_package`), ``file://<absolute path>``, or a path relative to the
  URDF file. A mesh that cannot be found is an error naming the URI.
* ``<transmission>``, ``<gazebo>``, ``<ros2_control>``, ``<safety_controller>``,
  ``<calibration>``, textures and every unknown element or attribute are ignored
  with one warning per kind (file, line of the first one, how many).

xacro evaluates the Python expressions its file holds (``${...}``): load xacro files
you would run.
"""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from lxml import etree

from skel_ros.model import draft
from skel_ros.model.errors import Location, SkelWarning
from skel_ros.model.interchange_errors import UrdfError
from skel_ros.model.joint_types import JOINT_TYPES, plane_from_normal
from skel_ros.model.mimic import mimic_problem
from skel_ros.model.transforms import rot_x, rot_y, rot_z
from skel_ros.model.types import (
    Array,
    Body,
    Box,
    Capsule,
    Cylinder,
    Dof,
    Geometry,
    Inertia,
    Joint,
    JointType,
    Mesh,
    Mimic,
    Shape,
    ShapeRole,
    Sphere,
    World,
    frozen_array,
)
from skel_ros.model.urdf import UNBOUNDED
from skel_ros.resources import PACKAGE, package_share, share_dirs

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.model.xmlread import Element

__all__ = ["FLOATING_BASE", "find_package", "is_xacro", "load_urdf", "parse_xacro_args",
           "resolve_uri", "urdf_to_world"]

FLOATING_BASE = "floating_base"
"""Name of the free joint given to a root link that is not ``world``."""

WORLD_LINK = "world"
# URDF joint type -> model type, from the joint-type table.
_URDF_TYPES = {name: spec.type for spec in JOINT_TYPES.values() for name in spec.urdf_names}
_XACRO_NS = b"http://www.ros.org/wiki/xacro"
_INF = math.inf

# Elements of <robot> that carry nothing the model holds: what they are, for the warning.
_IGNORED_TOP = {
    "transmission": "transmissions (ros_control wiring) are not part of the model",
    "gazebo": "Gazebo extensions are not part of the model",
    "ros2_control": "ros2_control hardware descriptions are not part of the model;"
                    " the hardware node reads its own YAML (skel-ros init-hardware)",
}
# The attributes of each URDF element this reader reads; any other is a warning.
_ATTRIBUTES: dict[str, frozenset[str]] = {tag: frozenset(names.split()) for tag, names in {
    "robot": "name version", "link": "name", "joint": "name type", "inertial": "",
    "origin": "xyz rpy", "mass": "value", "inertia": "ixx ixy ixz iyy iyz izz",
    "visual": "name", "collision": "name", "geometry": "", "box": "size",
    "cylinder": "radius length", "sphere": "radius", "capsule": "radius length",
    "mesh": "filename scale", "material": "name", "color": "rgba", "texture": "filename",
    "parent": "link", "child": "link", "axis": "xyz",
    "limit": "lower upper effort velocity", "dynamics": "damping friction",
    "mimic": "joint multiplier offset",
}.items()}
_IGNORED_JOINT = {
    "safety_controller": "soft limits of the safety controller are not read; the position"
                         " limits of <limit> apply",
    "calibration": "calibration references are not read",
}


# --------------------------------------------------------------------------- package lookup


def find_package(package: str, search_path: Sequence[str | os.PathLike[str]] = ()) -> Path | None:
    """The share directory of ROS package ``package``, or None.

    Looks in ``search_path`` first (directories that hold package directories, or a
    package directory itself), then in the ament index
    (:func:`skel_ros.resources.package_share`: the first prefix on
    ``AMENT_PREFIX_PATH`` whose resource index lists the package, as
    ``ament_index_python`` does), then in ``ROS_PACKAGE_PATH`` (directories holding
    package directories).
    """
    for entry in search_path:
        root = Path(os.fspath(entry))
        if root.name == package and root.is_dir():
            return root
        if (root / package).is_dir():
            return root / package
    share = package_share(package)
    if share is not None:
        return share
    if package == PACKAGE:  # this package, from a checkout or an install
        dirs = share_dirs()
        return dirs[0] if dirs else None
    for entry in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep):
        if entry and Path(entry, package).is_dir():
            return Path(entry, package)
    return None


def resolve_uri(uri: str, base_dir: Path | None,
                search_path: Sequence[str | os.PathLike[str]] = ()) -> Path | None:
    """The file a URDF ``filename`` names, or None when it cannot be found.

    ``package://pkg/rest`` -> :func:`find_package` of ``pkg``, then ``rest``;
    ``file:///abs`` -> ``/abs``; anything else is a path, relative to ``base_dir``.
    """
    if uri.startswith("package://"):
        package, _, rest = uri[len("package://"):].partition("/")
        share = find_package(package, search_path) if package and rest else None
        path = None if share is None else share / rest
    elif uri.startswith("file://"):
        path = Path(uri[len("file://"):])
    elif "://" in uri:
        return None
    else:
        path = Path(uri)
        if not path.is_absolute():
            path = (base_dir or Path.cwd()) / path
    return path if path is not None and path.is_file() else None


# --------------------------------------------------------------------------- entry points


def parse_xacro_args(words: str | Sequence[str]) -> dict[str, str]:
    """The xacro arguments in ``NAME:=VALUE`` words (a string is split at white space).

    ``"a:=1 b:=x"`` and ``["a:=1", "b:=x"]`` give ``{"a": "1", "b": "x"}``.

    Raises:
        ValueError: A word that is not ``NAME:=VALUE``.
    """
    out: dict[str, str] = {}
    for word in words.split() if isinstance(words, str) else words:
        name, sep, value = word.partition(":=")
        if not sep or not name:
            raise ValueError(f"{word!r} is not a xacro argument NAME:=VALUE")
        out[name] = value
    return out


def is_xacro(data: bytes, name: str = "") -> bool:
    """True for a xacro document: a ``.xacro`` file name or the xacro XML namespace."""
    return name.endswith(".xacro") or _XACRO_NS in data[:65536]


def load_urdf(source: str | os.PathLike[str], *, name: str | None = None,
              xacro_args: Mapping[str, str] | None = None, fixed_base: bool = False,
              package_path: Sequence[str | os.PathLike[str]] = ()) -> World:
    """Read a URDF or xacro file (or URDF / xacro text) into the model.

    Args:
        source: A file path, or the document text.
        name: Name used in messages for text; its directory is the base of relative
            mesh paths.
        xacro_args: ``name:=value`` arguments of a xacro document.
        fixed_base: Weld the root link to the world instead of a floating joint
            (ignored when the root link is ``world``).
        package_path: Directories searched for ``package://`` packages before the
            ament index (:func:`find_package`).

    Raises:
        UrdfError: With file, line and element path.
    """
    text_input = isinstance(source, str) and source.lstrip().startswith("<")
    if text_input:
        data = str(source).encode("utf-8")
        label = name or "<string>"
        base = Path(name).resolve().parent if name else None
    else:
        path = Path(os.fspath(source))
        label = name or os.fspath(source)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise UrdfError(f"cannot read file: {exc.strerror or exc}", Location(label)) from None
        base = path.resolve().parent
    return urdf_to_world(data, label=label, base_dir=base, xacro_args=xacro_args,
                         fixed_base=fixed_base, package_path=package_path)


def urdf_to_world(data: bytes, *, label: str, base_dir: Path | None,
                  xacro_args: Mapping[str, str] | None = None, fixed_base: bool = False,
                  package_path: Sequence[str | os.PathLike[str]] = ()) -> World:
    """The model of URDF (or xacro) bytes; see :func:`load_urdf`."""
    where = label
    if is_xacro(data, label):
        data = _expand_xacro(data, label, xacro_args or {})
        where = f"{label} (xacro output)"
    elif xacro_args:
        raise UrdfError(f"xacro arguments ({', '.join(xacro_args)}) given for a plain URDF",
                        Location(label), "drop the arguments, or load the .xacro file")
    parser = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True,
                             huge_tree=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        line = exc.lineno or 0
        raise UrdfError(f"not well-formed XML: {exc.msg}", Location(where, line)) from None
    if root.tag != "robot":
        raise UrdfError(f"the root element is <{root.tag}>, not <robot>",
                        Location(where, root.sourceline or 0))
    reader = _Reader(where, base_dir, package_path)
    return reader.world(root, fixed_base=fixed_base)


def _expand_xacro(data: bytes, label: str, args: Mapping[str, str]) -> bytes:
    try:
        import xacro  # type: ignore[import-untyped]  # optional: only for .xacro input
    except ImportError:
        raise UrdfError(
            "this is a xacro document and the xacro package is not installed",
            Location(label), "pip install xacro (or skel_ros[urdf]); on ROS:"
            " apt install ros-$ROS_DISTRO-xacro") from None
    path = Path(label)
    try:
        if path.is_file():  # includes resolve against the including file's directory
            doc = xacro.process_file(str(path), mappings=dict(args))
        else:
            doc = xacro.parse(data.decode("utf-8"), None)
            xacro.process_doc(doc, mappings=dict(args))
        # What the xacro command prints (its _process writes this), so that the lines
        # of messages are the lines of `xacro FILE`'s output.
        text = str(doc.toprettyxml(indent="  "))
    except Exception as exc:  # noqa: BLE001 - xacro raises many kinds; all are input errors
        raise UrdfError(f"xacro failed: {exc}", Location(label),
                        "run `xacro FILE` to see the expansion; pass arguments as"
                        " name:=value") from None
    return text.encode("utf-8")


# --------------------------------------------------------------------------- the reader


def _rpy_matrix(rpy: Sequence[float]) -> Array:
    r, p, y = rpy
    return rot_z(y) @ rot_y(p) @ rot_x(r)


class _Reader:
    """One URDF document: helpers that fail with a location, and the warnings."""

    def __init__(self, label: str, base_dir: Path | None,
                 package_path: Sequence[str | os.PathLike[str]]) -> None:
        self.label = label
        self.base_dir = base_dir
        self.package_path = package_path
        self.warnings: list[SkelWarning] = []
        self._grouped: dict[tuple[str, ...], tuple[str, Element, int]] = {}
        self.materials: dict[str, Array | None] = {}
        self.mimics: list[tuple[Joint, Element]] = []  # (follower, its <mimic>)

    # ------------------------------------------------------------ helpers

    @staticmethod
    def path(el: Element) -> str:
        parts = []
        node: Element | None = el
        while node is not None:
            name = node.get("name")
            parts.append(f"{node.tag}[@name='{name}']" if name is not None else str(node.tag))
            node = node.getparent()
        return "/" + "/".join(reversed(parts))

    def loc(self, el: Element) -> Location:
        return Location(self.label, el.sourceline or 0, self.path(el))

    def fail(self, reason: str, el: Element, hint: str = "") -> UrdfError:
        return UrdfError(reason, self.loc(el), hint)

    def warn(self, message: str, el: Element) -> None:
        self.warnings.append(SkelWarning(message, self.loc(el)))

    def ignore(self, el: Element, why: str) -> None:
        """An ignored element: one warning per (parent, tag), see :meth:`flush_grouped`."""
        parent = el.getparent()
        ptag = str(parent.tag) if parent is not None else ""
        self.group(("ignored", ptag, str(el.tag)), why, el)

    def group(self, key: tuple[str, ...], message: str, el: Element) -> None:
        """A warning that may repeat: counted, and given once with its first location.

        Links and joints are read in tree order, not file order, so the first
        location is the one with the lowest line (the first one met on a line).
        """
        known = self._grouped.get(key)
        if known is None:
            self._grouped[key] = (message, el, 1)
            return
        first_message, first, count = known
        if (el.sourceline or 0) < (first.sourceline or 0):
            first_message, first = message, el
        self._grouped[key] = (first_message, first, count + 1)

    def flush_grouped(self) -> None:
        for key, (message, first, count) in self._grouped.items():
            if key[0] == "ignored":
                _, parent, tag = key
                head = (f"{count} <{tag}> elements of <{parent}> ignored (the first is here)"
                        if count > 1 else f"<{tag}> ignored")
                self.warn(f"{head}: {message}", first)
            else:
                more = f" ({count} times; the first is here)" if count > 1 else ""
                self.warn(message + more, first)

    def attr(self, el: Element, name: str) -> str:
        value = el.get(name)
        if value is None:
            raise self.fail(f"<{el.tag}> needs the attribute {name!r}", el)
        return str(value)

    def numbers(self, el: Element, name: str, n: int, default: Sequence[float] | None = None,
                ) -> list[float]:
        raw = el.get(name)
        if raw is None:
            if default is None:
                raise self.fail(f"<{el.tag}> needs the attribute {name!r}", el)
            return list(default)
        tokens = raw.split()
        try:
            values = [float(t) for t in tokens]
        except ValueError:
            raise self.fail(f"{name}={raw!r} is not {n} number(s)", el) from None
        if len(values) != n or not all(math.isfinite(v) for v in values):
            raise self.fail(f"{name}={raw!r} is not {n} finite number(s)", el)
        return values

    def number(self, el: Element, name: str, default: float | None = None, *,
               nonneg: bool = False, positive: bool = False) -> float:
        value = self.numbers(el, name, 1, None if default is None else [default])[0]
        if nonneg and value < 0:
            raise self.fail(f"{name}={value:g} must not be negative", el)
        if positive and value <= 0:
            raise self.fail(f"{name}={value:g} must be positive", el)
        return value

    def origin(self, el: Element) -> Array:
        """The 4x4 pose of ``el``'s ``<origin>`` (identity without one)."""
        t = np.eye(4)
        o = el.find("origin")
        if o is not None:
            t[:3, :3] = _rpy_matrix(self.numbers(o, "rpy", 3, [0.0, 0.0, 0.0]))
            t[:3, 3] = self.numbers(o, "xyz", 3, [0.0, 0.0, 0.0])
        return t

    def check_children(self, el: Element, known: frozenset[str]) -> None:
        for child in el:
            if not isinstance(child.tag, str):
                continue  # processing instructions
            if child.tag not in known:
                self.ignore(child, f"<{child.tag}> is not a URDF element this reader knows")

    # ------------------------------------------------------------ document

    def world(self, root: Element, *, fixed_base: bool) -> World:
        robot_name = self.attr(root, "name")  # urdfdom refuses a robot without one
        if not robot_name.strip():
            robot_name = Path(self.label).stem
            self.warn(f"<robot> has an empty name; the skeleton is named {robot_name!r} after"
                      " the file", root)
        self.check_attributes(root)
        self.read_materials(root)
        links, joints = self.top_level(root)
        by_child = self.joint_tree(joints, links)
        roots = [n for n in links if n not in by_child]
        if len(roots) != 1:
            raise self.fail(
                f"a URDF robot has exactly one root link; this one has {len(roots)}"
                f" ({', '.join(repr(r) for r in roots[:5])})", root,
                "every link but the root must be the child of one joint")
        root_link = roots[0]
        world_root = root_link == WORLD_LINK
        bodies: list[Body] = []
        model_joints: list[Joint] = []
        dofs: list[Dof] = []
        if world_root:
            if links[WORLD_LINK].find("inertial") is not None:
                self.warn("the link 'world' is the world frame; its <inertial> is ignored",
                          links[WORLD_LINK])
        else:
            joint, jdofs = self.root_joint(root_link, links[root_link], joints, fixed_base)
            model_joints.append(joint)
            dofs.extend(jdofs)
        for link in self.tree_order(root_link, joints):
            if world_root and link == WORLD_LINK:
                continue
            bodies.append(self.body(links[link]))
            if link in by_child:
                joint, jdofs = self.joint(by_child[link], world_root)
                model_joints.append(joint)
                dofs.extend(jdofs)
        dofs = self.with_mimics(model_joints, dofs)
        self.warn_massless(bodies, model_joints, links)
        self.flush_grouped()
        skel = draft.skeleton(robot_name, model_joints, bodies, dofs, location=self.loc(root))
        return draft.canonical(draft.world([skel], self.label), self.label, UrdfError,
                               self.warnings)

    def check_attributes(self, root: Element) -> None:
        """Warn (once per element and attribute) about attributes URDF does not have.

        Elements are visited in document order, so a grouped warning's location is the
        first occurrence.
        """
        stack = [root]
        while stack:
            el = stack.pop()
            allowed = _ATTRIBUTES.get(str(el.tag))
            if allowed is None:
                continue  # an ignored element: reported as a whole
            for attr in el.attrib:
                if "}" not in attr and attr not in allowed:  # namespaced ones are others'
                    self.group(("attribute", str(el.tag), attr),
                               f"attribute {attr!r} of <{el.tag}> is not URDF's; ignored", el)
            # Reversed onto the stack, so that the first child is popped first.
            stack.extend(reversed([c for c in el if isinstance(c.tag, str)]))

    def read_materials(self, root: Element) -> None:
        """Named materials with a colour, wherever defined (top level or a link's visual)."""
        for material in root.iter("material"):
            mname = material.get("name")
            has_color = material.find("color") is not None
            if mname is not None and (has_color or material.find("texture") is not None) \
                    and (has_color or mname not in self.materials):
                self.materials[mname] = self.material_color(material)

    def top_level(self, root: Element) -> tuple[dict[str, Element], list[Element]]:
        """Links by name and joints, in file order; everything else is a warning."""
        links: dict[str, Element] = {}
        joints: list[Element] = []
        for el in root:
            if not isinstance(el.tag, str):
                continue
            if el.tag == "link":
                name = self.attr(el, "name")
                if name in links:
                    raise self.fail(f"link {name!r} is defined twice (first at line"
                                    f" {links[name].sourceline})", el)
                links[name] = el
            elif el.tag == "joint":
                joints.append(el)
            elif el.tag == "material":
                self.attr(el, "name")
            elif el.tag in _IGNORED_TOP:
                self.ignore(el, _IGNORED_TOP[el.tag])
            else:
                self.ignore(el, f"<{el.tag}> is not a URDF element this reader knows")
        if not links:
            raise self.fail("a URDF robot needs at least one <link>", root)
        return links, joints

    def root_joint(self, root_link: str, el: Element, joints: Sequence[Element],
                   fixed_base: bool) -> tuple[Joint, list[Dof]]:  # noqa: FBT001
        """The joint that attaches a root link other than ``world`` to the world."""
        taken = {j.get("name") for j in joints}
        name, k = FLOATING_BASE, 1
        while name in taken:
            name, k = f"{FLOATING_BASE}_{k}", k + 1
        jtype = JointType.WELD if fixed_base else JointType.FREE
        names = [f"{name}#{i}" for i in range(jtype.num_dofs)]
        joint = draft.make_joint(name, jtype, None, root_link, t_parent=np.eye(4), dofs=names,
                                 location=self.loc(el))
        return joint, [draft.make_dof(n, name, i) for i, n in enumerate(names)]

    def tree_order(self, root_link: str, joints: Sequence[Element]) -> list[str]:
        """Links depth first from the root, siblings in file order (parents first)."""
        children: dict[str, list[str]] = {}
        for j in joints:
            children.setdefault(self.attr(j.find("parent"), "link"), []).append(
                self.attr(j.find("child"), "link"))
        order: list[str] = []
        pending = [root_link]
        while pending:
            link = pending.pop()
            order.append(link)
            pending.extend(reversed(children.get(link, [])))
        return order

    def joint_tree(self, joints: Sequence[Element], links: Mapping[str, Element],
                   ) -> dict[str, Element]:
        """Joints by child link, after checking names, references and loops."""
        names: dict[str, Element] = {}
        by_child: dict[str, Element] = {}
        for j in joints:
            name = self.attr(j, "name")
            if name in names:
                raise self.fail(f"joint {name!r} is defined twice (first at line"
                                f" {names[name].sourceline})", j)
            names[name] = j
            ends = []
            for tag in ("parent", "child"):
                el = j.find(tag)
                if el is None:
                    raise self.fail(f"joint {name!r} has no <{tag}>", j)
                link = self.attr(el, "link")
                if link not in links:
                    raise self.fail(f"joint {name!r} names {tag} link {link!r}, which is not"
                                    " defined", el)
                ends.append(link)
            parent, child = ends
            if child == WORLD_LINK:
                raise self.fail(
                    f"joint {name!r} has link {WORLD_LINK!r} as its child; the link named"
                    f" {WORLD_LINK!r} is the world frame, which no joint can move", j,
                    f"make {WORLD_LINK!r} the joint's parent, or rename the link")
            if parent == child:
                raise self.fail(f"joint {name!r} has link {child!r} as parent and child", j)
            if child in by_child:
                raise self.fail(
                    f"link {child!r} is the child of joints {by_child[child].get('name')!r}"
                    f" and {name!r}", j,
                    "URDF describes trees: every link has at most one parent joint")
            by_child[child] = j
        self.check_loops(by_child)
        return by_child

    def check_loops(self, by_child: Mapping[str, Element]) -> None:
        """Raise at the first joint whose chain of parents comes back to a link on it.

        Each link is walked once: a chain that reaches a link already known to lead to
        the root stops there (linear, where walking every chain to the root would be
        quadratic on long serial chains).
        """
        parent_of = {child: self.attr(j.find("parent"), "link") for child, j in by_child.items()}
        rooted: set[str] = set()
        for start, j in by_child.items():
            seen = {start}
            link = parent_of[start]
            while link in by_child and link not in rooted:
                if link in seen:
                    raise self.fail(f"joints form a loop through link {link!r}", j)
                seen.add(link)
                link = parent_of[link]
            rooted |= seen

    def warn_massless(self, bodies: Sequence[Body], joints: Sequence[Joint],
                      links: Mapping[str, Element]) -> None:
        """Warn about a moving joint whose child subtree has no mass (a singular sim).

        One warning per massless subtree, at its top-most moving joint, with how many
        moving joints below it have no mass either (a massless chain of a thousand
        links is one warning, not a thousand).
        """
        kids: dict[str, list[str]] = {}
        for j in joints:
            if j.parent is not None:
                kids.setdefault(j.parent, []).append(j.child)
        moves = {j.child: j.num_dofs > 0 for j in joints}
        # Links parents first (a stack, not recursion: chains may be thousands deep), then
        # each subtree's mass and moving joints from the leaves up: linear in the links.
        top_down: list[str] = []
        pending = [j.child for j in joints if j.parent is None]
        while pending:
            link = pending.pop()
            top_down.append(link)
            pending.extend(reversed(kids.get(link, ())))  # the first child next
        mass = {b.name: b.inertia.mass for b in bodies}
        total: dict[str, float] = {}
        moving_below: dict[str, int] = {}
        for link in reversed(top_down):
            below = kids.get(link, ())
            total[link] = mass.get(link, 0.0) + sum(total[c] for c in below)
            moving_below[link] = sum(moving_below[c] + moves[c] for c in below)
        joint_of = {j.child: j for j in joints}
        reported: set[str] = set()  # links inside a massless subtree already warned about
        for link in top_down:
            j = joint_of[link]
            if j.parent in reported:
                reported.add(link)
            elif moves[link] and total[link] <= 0.0:
                reported.add(link)
                n = moving_below[link]
                more = f"; the {n} moving joints below it move no mass either" if n else ""
                self.warn(f"joint {j.name!r} moves link {j.child!r}, which carries no mass"
                          f" (no <inertial> below it){more}: a simulation of it is singular",
                          links[j.child])

    # ------------------------------------------------------------ links

    def body(self, el: Element) -> Body:
        name = self.attr(el, "name")
        self.check_children(el, frozenset({"inertial", "visual", "collision"}))
        inertial = el.find("inertial")
        if inertial is None:
            inertia = Inertia(mass=0.0, com=frozen_array(np.zeros(3)),
                              moment=frozen_array(np.zeros((3, 3))))
        else:
            inertia = self.inertia(inertial)
        shapes: list[Shape] = []
        for role, tag in ((ShapeRole.VISUAL, "visual"), (ShapeRole.COLLISION, "collision")):
            for k, shape_el in enumerate(el.findall(tag)):
                shape = self.shape(shape_el, name, role, k)
                if shape is not None:
                    shapes.append(shape)
        return Body(name=name, index=0, parent_joint="", inertia=inertia, gravity_mode=True,
                    rest_transform=frozen_array(np.eye(4)), shapes=tuple(shapes), markers=(),
                    soft=None, location=self.loc(el))

    def inertia(self, el: Element) -> Inertia:
        self.check_children(el, frozenset({"origin", "mass", "inertia"}))
        mass_el = el.find("mass")
        if mass_el is None:
            raise self.fail("<inertial> needs <mass>", el)
        mass = self.number(mass_el, "value", nonneg=True)
        inertia_el = el.find("inertia")
        if inertia_el is None:
            raise self.fail("<inertial> needs <inertia>", el)
        ixx, ixy, ixz, iyy, iyz, izz = (self.number(inertia_el, k) for k in
                                        ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
        moment = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        t = self.origin(el)
        rot = t[:3, :3]
        return Inertia(mass=mass, com=frozen_array(t[:3, 3]),
                       moment=frozen_array(rot @ moment @ rot.T))

    def material_color(self, el: Element) -> Array | None:
        color = el.find("color")
        if el.find("texture") is not None:
            self.ignore(el.find("texture"), "textures are not part of the model")
        if color is None:
            return None
        return frozen_array(self.numbers(color, "rgba", 4))

    def shape(self, el: Element, link: str, role: ShapeRole, k: int) -> Shape | None:
        self.check_children(el, frozenset({"origin", "geometry", "material"}))
        geometry_el = el.find("geometry")
        if geometry_el is None:
            raise self.fail(f"<{el.tag}> needs <geometry>", el)
        geometry = self.geometry(geometry_el)
        if geometry is None:
            return None
        color = None
        material = el.find("material")
        if role is ShapeRole.VISUAL and material is not None:
            if material.find("color") is not None or material.find("texture") is not None:
                color = self.material_color(material)
            else:
                mname = material.get("name")
                if mname not in self.materials:
                    self.group(("material", str(mname)), f"material {mname!r} has no colour"
                               " anywhere in the file; the shape has no colour", material)
                color = self.materials.get(str(mname))
        suffix = "" if k == 0 else f"_{k}"
        return Shape(name=f"{link} - {role.value} shape{suffix}", role=role, geometry=geometry,
                     transform=frozen_array(self.origin(el)), color=color, collidable=True,
                     location=self.loc(el))

    def geometry(self, el: Element) -> Geometry | None:
        kinds = [g for g in el if isinstance(g.tag, str)]
        if len(kinds) != 1:
            raise self.fail(f"<geometry> holds {len(kinds)} shapes; URDF allows one", el)
        g = kinds[0]
        # Sizes must be positive: a zero or negative size describes no solid (DART makes
        # a 1 x 1 x 1 box of such a box, and load_skel refuses such other shapes).
        if g.tag == "box":
            size = self.numbers(g, "size", 3)
            if min(size) <= 0.0:
                raise self.fail(f"box size=\"{g.get('size')}\": every size must be positive", g)
            return Box(size=frozen_array(size))
        if g.tag == "sphere":
            return Sphere(radius=self.number(g, "radius", positive=True))
        if g.tag == "cylinder":
            return Cylinder(radius=self.number(g, "radius", positive=True),
                            height=self.number(g, "length", positive=True))
        if g.tag == "capsule":
            return Capsule(radius=self.number(g, "radius", positive=True),
                           height=self.number(g, "length", positive=True))
        if g.tag == "mesh":
            uri = self.attr(g, "filename")
            scale = self.mesh_scale(g)
            path = resolve_uri(uri, self.base_dir, self.package_path)
            if path is None:
                hint = ("the package is found through AMENT_PREFIX_PATH (a sourced"
                        " workspace), ROS_PACKAGE_PATH or package_path"
                        if uri.startswith("package://") else
                        "file:// takes an absolute path; other paths are relative to the"
                        " URDF file")
                raise self.fail(f"mesh {uri!r} cannot be found", g, hint)
            return Mesh(file_name=str(path), path=path, scale=frozen_array(scale))
        self.warn(f"geometry <{g.tag}> is not a URDF geometry; the shape is left out", g)
        return None

    def mesh_scale(self, g: Element) -> list[float]:
        """A ``<mesh>``'s ``scale``: three numbers or one for all axes, none of them 0.

        A zero scales the mesh flat (an error); a negative one mirrors it, which not
        every URDF consumer takes (a warning, once per file, with how many).
        """
        raw = g.get("scale")
        if raw is None:
            return [1.0, 1.0, 1.0]
        if len(raw.split()) == 1 and _is_float(raw):
            scale = [float(raw)] * 3
        else:
            scale = self.numbers(g, "scale", 3)
        if 0.0 in scale:
            raise self.fail(f'mesh scale="{raw}" has a zero factor, which flattens the'
                            " mesh", g)
        if min(scale) < 0.0:
            self.group(("mirrored-mesh",), f'mesh scale="{raw}" has a negative factor: the'
                       " mesh is mirrored (rotated, for two); not every URDF consumer takes"
                       " negative scales (a mirrored mesh file is safer)", g)
        return scale

    # ------------------------------------------------------------ joints

    def joint(self, el: Element, world_root: bool) -> tuple[Joint, list[Dof]]:  # noqa: C901, FBT001
        name = self.attr(el, "name")
        raw_type = self.attr(el, "type")
        parent = self.attr(el.find("parent"), "link")
        child = self.attr(el.find("child"), "link")
        known = frozenset({"parent", "child", "origin", "axis", "limit", "dynamics", "mimic",
                           *_IGNORED_JOINT})
        for sub in el:
            if isinstance(sub.tag, str) and sub.tag in _IGNORED_JOINT:
                self.ignore(sub, _IGNORED_JOINT[sub.tag])
        self.check_children(el, known)
        if raw_type not in _URDF_TYPES:
            raise self.fail(f"joint type {raw_type!r} is not one of "
                            + ", ".join(_URDF_TYPES), el)
        jtype = _URDF_TYPES[raw_type]
        spec = jtype.spec
        axis = [1.0, 0.0, 0.0]  # URDF's default
        axis_el = el.find("axis")
        if axis_el is not None and (spec.axes or spec.plane):  # others have no axis
            axis = self.numbers(axis_el, "xyz", 3, [1.0, 0.0, 0.0])
            norm = math.sqrt(sum(a * a for a in axis))
            if norm == 0.0:
                raise self.fail(f"joint {name!r} has a zero axis", axis_el)
            axis = [a / norm for a in axis]
        axes: list[list[float]] = []
        plane = None
        plane_axes: list[list[float]] = []
        if spec.axes == 1:
            axes = [axis]
        elif spec.plane:  # the axis is the plane's normal
            plane, plane_axes = plane_from_normal(axis)
        n = spec.num_dofs
        kw: dict[str, Any] = dict(self.dof_limits(el, name, raw_type)) if n == 1 else {}
        dynamics = el.find("dynamics")
        if dynamics is not None:
            damping = self.number(dynamics, "damping", 0.0, nonneg=True)
            friction = self.number(dynamics, "friction", 0.0, nonneg=True)
            if n == 0 and (damping or friction):
                self.group(("dynamics-fixed",), "<dynamics> of a fixed joint ignored", dynamics)
            elif n > 1 and (damping or friction):
                self.warn(f"<dynamics> of the {raw_type} joint {name!r} applies to each of"
                          f" its {n} DOFs", dynamics)
            kw.update(damping=damping, coulomb_friction=friction)
        dofs = [draft.make_dof(f"{name}#{k}", name, k, **kw) for k in range(n)]
        joint = draft.make_joint(
            name, jtype, None if (world_root and parent == WORLD_LINK) else parent, child,
            t_parent=self.origin(el), axes=axes, plane=plane, plane_axes=plane_axes,
            dofs=[d.name for d in dofs], location=self.loc(el))
        mimic_el = el.find("mimic")
        if mimic_el is not None:
            self.mimics.append((joint, mimic_el))
        return joint, dofs

    def with_mimics(self, joints: Sequence[Joint], dofs: list[Dof]) -> list[Dof]:
        """``dofs`` with each follower's coupling (``<mimic>``), checked against ``joints``."""
        by_name = {j.name: j for j in joints}
        followers = {joint.name for joint, _ in self.mimics if joint.num_dofs}
        index = {d.name: i for i, d in enumerate(dofs)}
        for joint, el in self.mimics:
            leader = self.attr(el, "joint")
            if joint.num_dofs == 0:  # urdfdom keeps it; nothing moves it
                self.group(("mimic-fixed",), "<mimic> of a fixed joint ignored (a fixed"
                           " joint does not move)", el)
                continue
            mimic = Mimic(leader=f"{leader}#0",  # the draft's DOF name (draft.canonical renames)
                          multiplier=self.number(el, "multiplier", 1.0),
                          offset=self.number(el, "offset", 0.0))
            problem = mimic_problem(joint, leader, by_name, mimic)
            if problem is None and leader in followers:
                problem = (f"joint {joint.name!r} mimics joint {leader!r}, which mimics"
                           " another; make both mimic the same leader")
            if problem is not None:
                raise self.fail(problem, el)
            k = index[joint.dofs[0]]
            dofs[k] = dataclasses.replace(dofs[k], mimic=mimic)
        return dofs

    def dof_limits(self, el: Element, name: str, raw_type: str) -> dict[str, tuple[float, float]]:
        limit = el.find("limit")
        kw: dict[str, tuple[float, float]] = {}
        if limit is None:
            if raw_type in ("revolute", "prismatic"):
                self.warn(f"{raw_type} joint {name!r} has no <limit> (URDF requires one);"
                          " it is read without limits", el)
            return kw
        if raw_type in ("revolute", "prismatic"):
            if limit.get("lower") is None and limit.get("upper") is None:
                self.group(("locked",), f"<limit> without lower and upper (joint {name!r}):"
                           " URDF's default 0 for both locks the joint", limit)
            # The writer's stand-in for "no limit" (URDF requires numbers) reads back as one.
            lower = _unbounded(self.number(limit, "lower", 0.0))
            upper = _unbounded(self.number(limit, "upper", 0.0))
            if lower > upper:
                raise self.fail(f"joint {name!r}: lower limit {lower:g} is above upper limit"
                                f" {upper:g}", limit)
            kw["position"] = (lower, upper)
        for attr, key in (("velocity", "velocity"), ("effort", "force")):
            if limit.get(attr) is None:
                continue
            value = _unbounded(self.number(limit, attr, nonneg=True))
            if math.isinf(value):
                continue
            if value == 0.0:
                self.group(("zero", attr), f"{attr}=\"0\" in a joint's <limit> read as 'no"
                           f" {attr} limit' (a zero {attr} limit would stop the joint)", limit)
                continue
            kw[key] = (-value, value)
        return kw


def _unbounded(value: float) -> float:
    """``value``, or an infinity for the writer's :data:`~skel_ros.model.urdf.UNBOUNDED`."""
    return math.copysign(math.inf, value) if abs(value) >= UNBOUNDED else value


def _is_float(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
