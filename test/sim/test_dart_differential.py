"""Differential tests against dartpy that need no corpus: generated SKEL documents.

Hypothesis writes valid SKEL documents (``skel_documents``): one or two skeletons,
each a random tree of one to four bodies under joints of every type SkelParser
builds (weld, revolute, prismatic, universal, ball, euler in both axis orders,
translational, planar in every plane, free), with axes along and off the
coordinate axes, every actuator type, ``<axis>`` limits and dynamics, ``<dof>``
elements (names, position / velocity / acceleration / force limits and initial
values, damping, friction, springs), ``init_pos`` / ``init_vel``, skeleton, body,
joint and shape transformations, gravity modes, explicit inertias and inertias
computed from shapes (sphere, box, ellipsoid, cylinder, capsule, cone, pyramid,
multi-sphere, plane), colours and the collidable flag. The XML is written the many ways a file
may be: elements in any order (joints before or after their bodies, children
before parents), comments between elements, whitespace around and between
numbers, and numbers spelled ``1``, ``1.0``, ``+1``, ``1e0``, ``10E-1``,
``.5``, ``2.``, ``0.500``, ``0x1.8p+1``, ``007``, ``&#49;``, ``<![CDATA[1]]>``.
And now and then what DART reads its own way: unknown elements, a plane without
offset or with the deprecated ``<point>``, colours of 2 or 5 numbers, a planar
joint without or with an unknown plane type, missing axes, ``<damping>`` directly
under ``<axis>``, ``<dof>`` elements without or with an out-of-range
``local_index``, actuator strings DART refuses, a root joint without
``<parent>``, a body that is a parent but has no joint (DART gives it a free
joint named ``root``), a second joint for a child, repeated skeleton and joint
names, ``<dof name>`` values that clash with DART's own DOF names, booleans,
axis orders and detector names with spaces around them, no ``<physics>``.

Each document is read by ``load_skel`` and by ``dartpy.utils.SkelParser`` from
the same text, and compared with the helpers the corpus tests use:

* ``diff_worlds`` between our World (``build_dart_world`` through ``SimEngine``,
  as ``skel-ros simulate`` and the sim node build it) and SkelParser's: names and
  order of skeletons, joints, DOFs and bodies, types, actuators, joint frames,
  axes, limits, initial values, damping / friction / springs, masses, COMs,
  inertias, world transforms, shape nodes and their aspects; no discrete
  difference, numbers within 1e-9 relative (the corpus tolerance);
* the model's own forward kinematics (``Kinematics.body_transforms``, used by the
  URDF / Phobos exports and the state publisher) against SkelParser's body world
  transforms, within 1e-9;
* 100 zero-command steps side by side (``trajectory_gap``): bit-identical builds
  must step bit-identically, others stay within 1e-8 (the corpus tolerance).

Left out of the generator, and why:

* comments inside an element's text (``<mass>1<!-- -->.5</mass>``) and other
  XML that only tinyxml2 accepts: handled separately (issue 15, item 5); comments
  here go between elements only. A CDATA section is only ever a whole text: DART
  (tinyxml2's ``GetText``) reads the first text node only, so
  ``<mass><![CDATA[2]]>.5</mass>`` is 2 to DART and 2.5 to us (not fixed here).
* text after a number (``1.5kg``): ``std::stod`` stops there and DART reads 1.5;
  we refuse it with the line (a deliberate difference: no silent acceptance).
* arbitrary planes whose translation axes are not orthogonal: DART asserts they
  are (debug builds) and, released, moves along the skewed axes; the model's
  ``Kinematics`` does not (0.16 m apart on ``1 2 -2`` / ``1 -1 0.5``). Reported,
  not fixed here (``skel_ros/model/kinematics.py``).
* ``<child>`` / ``<parent>`` with spaces around the name: DART discards the
  joint, and a body left unattached with shapes crashes DART;
  ``test_names_and_flags_are_compared_as_written`` covers them.
* screw and translational2d joints, meshes, soft bodies and markers: SkelParser
  cannot build the first two (``test_world_builder`` checks them on their own),
  the others need files next to the document or are covered by the corpus and
  ``features.skel``.

Documents are written from a seed drawn by hypothesis (drawing every choice
through hypothesis took ~0.3 s per document, ten times the check itself), so a
failure reports its seed and the document (``note``), and
``skel_document(seed)`` rebuilds it. Reproducible: ``derandomize=True`` and no
example database, so every run checks the same documents; ``MAX_EXAMPLES`` keeps
the run to about 10-15 s on 2 cores (1,700 seeds were checked clean while the
generator was written). It is 150 (was 250): every choice is still drawn many
times; in the 150 documents every joint type appears in 43 or more, every actuator
value (the invalid ones too) in 15 or more, every shape in 43 or more, ``axis2``
and ``axis3`` elements in 89 and 65.

Rules the generator (or probes it suggested) found, each fixed with its own test
below: DART keeps universal-joint axes as written; ``std::stod`` reads
hexadecimal floats; names, keywords and booleans are compared with their
surrounding whitespace; a plane's ``<point>`` gives its offset as Eigen sums the
dot product (seed 715922 in a full run, 2026-11-30: numpy's ``@`` went through BLAS
and came out a last bit off).
"""

from __future__ import annotations

import random
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

dartpy = pytest.importorskip("dartpy")

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dart_compare import align_last_bits, diff_worlds, trajectory_gap  # noqa: E402

from skel_ros.model import load_skel  # noqa: E402
from skel_ros.model.errors import SkelValueError  # noqa: E402
from skel_ros.model.kinematics import Kinematics  # noqa: E402
from skel_ros.sim import SimEngine  # noqa: E402

MAX_EXAMPLES = 150
STEPS = 100
STRUCTURE_TOL = 1e-9  # as test_world_builder / the corpus tests
KINEMATICS_TOL = 1e-9

SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# (type, DOFs, <axis*> elements read with xyz, <axis*> elements read at all)
JOINTS: dict[str, tuple[int, int, int]] = {
    "weld": (0, 0, 0),
    "revolute": (1, 1, 1),
    "prismatic": (1, 1, 1),
    "universal": (2, 2, 2),
    "ball": (3, 0, 0),
    "euler": (3, 0, 3),
    "translational": (3, 0, 3),
    "planar": (3, 0, 3),
    "free": (6, 0, 0),
}
ACTUATORS = (None, "force", "passive", "servo", "acceleration", "velocity", "locked") * 3 + (
    "torque", "FORCE", "")  # not actuator types: DART logs an error, the joint stays force
SHAPES = ("sphere", "box", "ellipsoid", "cylinder", "capsule", "cone", "pyramid", "multi_sphere",
          "plane")
AXIS_TAGS = ("axis", "axis2", "axis3")
DETECTORS = ("fcl", "fcl_mesh", "dart", "bullet", "ode", "FCL", "none", " dart ")

# Unit axes written as a file would (DART 6.20 keeps universal axes as written,
# so only unit vectors there); any direction for the joints DART normalises, but
# only directions whose normalisation is idempotent: the model keeps the unit
# vector, the builder gives it to DART, and DART normalises it again, which moves
# "1 1 0"'s by an ulp (SkelParser normalises the written vector once).
UNIT_AXES = ("1 0 0", "0 1 0", "0 0 1", "-1 0 0", "0 -1 0", "0 0 -1", "0.6 0.8 0",
             "0 -0.28 0.96", "0.48 0.6 0.64", "1.0 0.0 0.0", "0.0 0.0 1.0")
ANY_AXES = (*UNIT_AXES, "1 2 -2", "0 0 2", "3 -4 12", "1e-3 0 0", "-2 0 0")
PLANE_AXES = (("1 0 0", "0 1 0"), ("0 0 2", "3 4 0"), ("0 0.6 0.8", "1 0 0"),
              ("1 2 -2", "2 -2 -1"))  # orthogonal: see the module docstring


# --------------------------------------------------------------------------- spelling


def number(r: random.Random, lo: int = -999, hi: int = 999,
           scales: tuple[int, ...] = (0, 1, 2, 3), *, alone: bool = True) -> str:
    """A decimal m * 10^-e (m in [lo, hi]) spelled one of the ways std::stod accepts.

    ``alone``: the number is an element's whole text, so it may be a CDATA section
    (not inside a vector, or an attribute).
    """
    m = r.randint(lo, hi)
    e = r.choice(scales)
    plain = format(Decimal(m).scaleb(-e), "f")
    sign = "-" if m < 0 else ""
    digits = plain.lstrip("-")
    variants = [plain, f"{m}e-{e}", f"{m}E-{e:02d}", f"{plain}00" if "." in plain else f"{plain}.0"]
    if m >= 0:
        variants.append("+" + plain)
    if digits.startswith("0.") and m != 0:
        variants.append(sign + digits[1:])  # .5
    if "." not in plain:
        variants += [plain + ".", f"{m * 10}e-1", f"{m}e0"]
    text = r.choice(variants)
    rare = r.randint(0, 19)
    if rare == 0:
        text = float(Decimal(m).scaleb(-e)).hex()  # 0x1.8p-1: std::stod reads C99 hex
    elif rare == 1:
        text = sign + "00" + digits  # leading zeros
    elif rare == 2 and m == 0:
        text = "-0"
    elif rare == 3:
        text = "&#" + str(ord(text[0])) + ";" + text[1:]  # a character reference
    elif rare == 4 and alone:
        return f"<![CDATA[{text}]]>"
    return r.choice(["", "", "", " ", "\n  ", "\t"]) + text + r.choice(["", "", " ", "\n"])


def _coin(r: random.Random) -> bool:
    return r.random() < 0.5


def _shuffled(r: random.Random, items: list[str]) -> list[str]:
    return r.sample(items, len(items))


def _spaced(r: random.Random, parts: list[str]) -> str:
    """Whitespace-separated ``parts``, with the separators a file may have."""
    out = r.choice(["", "", " ", "\n      "])
    for i, p in enumerate(parts):
        out += p.strip()
        if i < len(parts) - 1:
            out += r.choice([" ", " ", "  ", "\t", "\n"])
    return out + r.choice(["", "", " ", "\n    "])


def vector(r: random.Random, n: int, **kw: Any) -> str:
    return _spaced(r, [number(r, **kw, alone=False) for _ in range(n)])


def respell(r: random.Random, text: str) -> str:
    """A vector given as text (``"0 0.6 0.8"``), re-spaced."""
    return _spaced(r, text.split())


def transformation(r: random.Random) -> str:
    xyz = [number(r, -500, 500, (2, 3), alone=False) for _ in range(3)]
    rpy = [number(r, -3141, 3141, (3,), alone=False) for _ in range(3)]
    return _spaced(r, xyz + rpy)


def element(r: random.Random, tag: str, children: list[str] | str, **attrib: str) -> str:
    """``<tag attrib>children</tag>``; between child elements, whitespace and comments."""
    attrs = "".join(f' {k}="{v}"' for k, v in attrib.items())
    if isinstance(children, str):
        return f"<{tag}{attrs}>{children}</{tag}>"
    inner = ""
    for child in children:
        inner += r.choice(["", "\n  ", " ", "\n  <!-- a comment -->\n  ",
                           "<!---->", "<!-- <body/> &amp; -->"])
        inner += child
    return f"<{tag}{attrs}>{inner}\n</{tag}>"


UNKNOWN = ("<foo>1</foo>", "<self_collide>true</self_collide>", "<immobile>true</immobile>",
           '<note lang="en">ignored</note>',
           "<restitution_coefficient>0.5</restitution_coefficient>")


def unknown(r: random.Random) -> list[str]:
    """Now and then an element DART does not read (it ignores unknown children)."""
    return [r.choice(UNKNOWN)] if r.randint(0, 5) == 0 else []


def boolean(r: random.Random, value: bool) -> str:
    """``value`` spelled as a SKEL bool; now and then with spaces, which DART reads as false."""
    text = r.choice(["true", "1", "TRUE", "True"] if value else ["false", "0", "FALSE", "False"])
    return f" {text}\n" if r.randint(0, 9) == 0 else text


def optional(r: random.Random, items: list[str]) -> list[str]:
    """A random subset of ``items``, in random order."""
    keep = [i for i in items if _coin(r)]
    return _shuffled(r, keep) if keep else []


# --------------------------------------------------------------------------- bodies


def geometry(r: random.Random, kind: str) -> list[str]:
    """The children of a ``kind`` geometry element."""
    pos = {"lo": 1, "hi": 400, "scales": (3,)}
    if kind == "sphere":
        geom = [element(r, "radius", number(r, **pos))]
    elif kind in ("box", "ellipsoid"):
        geom = [element(r, "size", vector(r, 3, **pos))]
    elif kind == "pyramid":
        geom = [element(r, t, number(r, **pos))
                for t in ("base_width", "base_depth", "height")]
    elif kind == "multi_sphere":
        geom = [element(r, "sphere", _shuffled(r, [
            element(r, "radius", number(r, **pos)),
            element(r, "position", vector(r, 3, lo=-100, hi=100, scales=(3,)))]))
            for _ in range(r.randint(1, 3))]
    elif kind == "plane":
        geom = [element(r, "normal", respell(r, r.choice(UNIT_AXES)))]
        where = r.choice(["offset", "offset", "point", "none"])  # point: deprecated form
        if where == "offset":
            geom.append(element(r, "offset", number(r)))
        elif where == "point":
            geom.append(element(r, "point", vector(r, 3)))
    else:
        geom = [element(r, "radius", number(r, **pos)),
                element(r, "height", number(r, **pos))]
    return geom


def shape(r: random.Random, role: str, *, plane: bool) -> str:
    """A shape (``plane``: it may be a plane; only visual ones are)."""
    kind = r.choice(SHAPES if role == "visualization_shape" and plane else SHAPES[:-1])
    geom = geometry(r, kind)
    children = [element(r, "geometry", [element(r, kind, _shuffled(r, geom))])]
    if _coin(r):
        children.append(element(r, "transformation", transformation(r)))
    if role == "visualization_shape" and _coin(r):
        n = r.choice([3, 4, 3, 4, 2, 5])  # 2 and 5: DART warns and ignores them
        children.append(element(r, "color", vector(r, n, lo=0, hi=100, scales=(2,))))
    if role == "collision_shape" and _coin(r):
        children.append(element(r, "collidable", r.choice(["0", "1", " 1 ", "2"])))
    return element(r, role, _shuffled(r, children))


def inertia(r: random.Random, how: str) -> str | None:
    """``<inertia>``: none, mass only (moment from the shapes), or full."""
    if how == "none":
        return None
    children = [element(r, "mass", number(r, 1, 5000, (3,)))]
    if _coin(r):
        children.append(element(r, "offset", vector(r, 3, lo=-100, hi=100, scales=(3,))))
    if r.randint(0, 9) == 0:
        children.append(element(r, "transformation", transformation(r)))  # ignored by DART
    if how == "full":
        diag = [element(r, t, number(r, 10, 900, (4,))) for t in ("ixx", "iyy", "izz")]
        off = [element(r, t, number(r, -9, 9, (4,))) for t in ("ixy", "ixz", "iyz")]
        children.append(element(r, "moment_of_inertia", _shuffled(r, diag + off)))
    return element(r, "inertia", _shuffled(r, children))


def body(r: random.Random, name: str) -> str:
    children = []
    if _coin(r):
        children.append(element(r, "transformation", transformation(r)))
    if r.randint(0, 3) == 0:
        children.append(element(r, "gravity", boolean(r, _coin(r))))
    how = r.choice(["none", "mass", "full"])
    inert = inertia(r, how)
    if inert is not None:
        children.append(inert)
    # A plane has no inertia: a mass-only body with only planes would have a zero
    # moment, and its steps amplify last-bit differences without bound.
    for role in ("visualization_shape", "collision_shape"):
        children += [shape(r, role, plane=how != "mass") for _ in range(r.randint(0, 2))]
    return element(r, "body", _shuffled(r, children + unknown(r)), name=name)


# --------------------------------------------------------------------------- joints


def axis_element(r: random.Random, tag: str, xyz: str | None) -> str:
    children = [] if xyz is None else [element(r, "xyz", respell(r, xyz))]
    if r.randint(0, 7) == 0:
        children.append(element(r, "damping", number(r, 0, 500, (3,))))  # deprecated place
    limit = optional(r, [element(r, "lower", number(r, -3000, 0, (3,))),
                            element(r, "upper", number(r, 0, 3000, (3,)))])
    if limit:
        children.append(element(r, "limit", limit))
    dynamics = optional(r, [
        element(r, "damping", number(r, 0, 500, (3,))),
        element(r, "friction", number(r, 0, 200, (3,))),
        element(r, "spring_rest_position", number(r, -1000, 1000, (3,))),
        element(r, "spring_stiffness", number(r, 0, 2000, (2,))),
    ])
    if dynamics:
        children.append(element(r, "dynamics", dynamics))
    return element(r, tag, _shuffled(r, children))


def dof_element(r: random.Random, index: int, ndofs: int, names: list[str]) -> str:
    attrib = {}
    if ndofs > 1 or _coin(r):
        attrib["local_index"] = str(index)
    bad = r.randint(0, 15)
    if bad == 0:
        attrib.pop("local_index", None)  # needed with more than one DOF: DART skips the <dof>
    elif bad == 1:
        attrib["local_index"] = str(ndofs)  # out of range: skipped
    if r.randint(0, 2) == 0:
        attrib["name"] = r.choice(names)
    children = []
    for tag, scale in (("position", 3), ("velocity", 2), ("acceleration", 1), ("force", 1)):
        if _coin(r):
            attrs = {}
            if _coin(r):
                attrs["lower"] = number(r, -3000, 0, (scale,), alone=False)
            if _coin(r):
                attrs["upper"] = number(r, 0, 3000, (scale,), alone=False)
            if tag in ("position", "velocity") and _coin(r):
                attrs["initial"] = number(r, -500, 500, (3,), alone=False)
            children.append(element(r, tag, "", **attrs))
    children += optional(r, [
        element(r, "damping", number(r, 0, 500, (3,))),
        element(r, "friction", number(r, 0, 200, (3,))),
        element(r, "spring_rest_position", number(r, -1000, 1000, (3,))),
        element(r, "spring_stiffness", number(r, 0, 2000, (2,))),
    ])
    return element(r, "dof", children, **attrib)


def plane_element(r: random.Random) -> str | None:
    plane = r.choice(["xy", "yz", "zx", "arbitrary"] * 4 + ["XY", "xz", "none"])
    if plane == "none":
        return None  # DART: XY, with a warning
    if plane != "arbitrary":
        return element(r, "plane", "", type=plane)
    a1, a2 = r.choice(PLANE_AXES)
    return element(r, "plane", [
        element(r, "translation_axis1", [element(r, "xyz", respell(r, a1))]),
        element(r, "translation_axis2", [element(r, "xyz", respell(r, a2))]),
    ], type=plane)


def joint_values(r: random.Random, ndofs: int, names: list[str]) -> list[str]:
    """``init_pos``, ``init_vel`` and ``<dof>`` elements of a joint with ``ndofs`` DOFs."""
    out = [element(r, tag, vector(r, ndofs, lo=-800, hi=800, scales=(3,)))
           for tag in ("init_pos", "init_vel") if _coin(r)]
    out += [dof_element(r, i, ndofs, names)
            for i in r.sample(range(ndofs), r.randint(0, min(3, ndofs)))]
    return out


def universal_axes(r: random.Random) -> list[str]:
    """Two unit axes, not parallel: with parallel axes the joint is singular, and its
    steps amplify last-bit differences without bound (that is no rule of the file)."""
    first = r.choice(UNIT_AXES)
    a = np.array(first.split(), dtype=float)
    others = [t for t in UNIT_AXES
              if np.linalg.norm(np.cross(a, np.array(t.split(), dtype=float))) > 0.1]
    return [first, r.choice(others)]


def joint_axes(r: random.Random, kind: str) -> list[str]:
    """The ``<axis*>`` elements of a ``kind`` joint."""
    _, with_xyz, axes_read = JOINTS[kind]
    xyz = universal_axes(r) if kind == "universal" else [r.choice(ANY_AXES)] * with_xyz
    out = []
    for i in range(axes_read):
        if i < with_xyz and r.randint(0, 15) == 0:
            continue  # missing: DART logs an error and keeps its default axis
        if i < with_xyz:
            out.append(axis_element(r, AXIS_TAGS[i], xyz[i]))
        elif _coin(r):
            out.append(axis_element(r, AXIS_TAGS[i], None))
    return out


def joint(r: random.Random, name: str, parent: str | None, child: str, names: list[str]) -> str:
    """A joint (``parent`` None: no ``<parent>``, which DART reads as a root joint)."""
    kind = r.choice(list(JOINTS))
    ndofs = JOINTS[kind][0]
    children = [element(r, "child", child)]
    if parent is not None:
        children.append(element(r, "parent", parent))
    if _coin(r):
        children.append(element(r, "transformation", transformation(r)))
    children += joint_axes(r, kind)
    if kind == "euler":
        children.append(element(r, "axis_order", r.choice(["xyz", "zyx"] * 5 + [" zyx "])))
    if kind == "planar":
        children += [p for p in [plane_element(r)] if p is not None]
    if ndofs:
        children += joint_values(r, ndofs, names)
    attrib = {"type": kind, "name": name}
    actuator = r.choice(ACTUATORS)
    if actuator is not None:
        attrib["actuator"] = actuator
    return element(r, "joint", _shuffled(r, children + unknown(r)), **attrib)


# --------------------------------------------------------------------------- documents


def skeleton(r: random.Random, name: str, offset: float) -> str:
    n = r.randint(1, 4)
    bodies = [f"{name}_b{k}" for k in range(n)]
    joint_names = [f"{name}_j{k}" for k in range(n)]
    if n > 1 and r.randint(0, 4) == 0:
        joint_names[-1] = joint_names[0]  # DART makes joint names unique: J(1)
    # DOF names a <dof name=...> may take: new ones and ones DART also makes.
    names = [f"{name}_d", f"{name}_j0", f"{name}_j1_x", f"{name}_j1_1", "default"]
    items = [body(r, b) for b in bodies]
    # Body 0 without a joint of its own but parent of body 1: DART gives it a free
    # joint named "root".
    orphan = n > 1 and r.randint(0, 7) == 0
    for k in range(n):
        if k == 0 and orphan:
            continue
        parent: str | None = "world" if k == 0 else r.choice(["world", *bodies[:k]])
        if k == 1 and orphan:
            parent = bodies[0]
        elif k == 0 and r.randint(0, 9) == 0:
            parent = None
        items.append(joint(r, joint_names[k], parent, bodies[k], names))
    if not orphan and r.randint(0, 9) == 0:  # a second joint for a child: DART drops
        # the later one (not with the orphan: a body left unattached crashes DART)
        items.append(joint(r, f"{name}_again", "world", bodies[-1], names))
    children = list(_shuffled(r, items + unknown(r)))
    frame = f"{offset} 0 0 0 0 0"
    if _coin(r):
        y, b = number(r, -100, 100, (2,), alone=False), number(r, -300, 300, (2,), alone=False)
        frame = f"{offset} {y} 0 0 {b} 0"
    children.insert(0, element(r, "transformation", frame))
    if r.randint(0, 4) == 0:
        children.insert(0, element(r, "mobile", boolean(r, _coin(r))))
    return element(r, "skeleton", children, name=name)


def skel_document(seed: int) -> str:
    """The generated document of ``seed`` (the same text on every machine)."""
    r = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    physics = [element(r, "time_step", r.choice(
        ["0.001", "1e-3", " 0.002 ", ".0005"]))]
    if _coin(r):
        physics.append(element(r, "gravity", vector(r, 3, lo=-981, hi=981, scales=(2,))))
    if r.randint(0, 3) == 0:
        physics.append(element(r, "collision_detector", r.choice(DETECTORS)))
    # Skeletons 10 m apart (bodies of one skeleton do not collide with each other);
    # the same name twice now and then (DART makes it unique: "s0(1)").
    names = ["s0", r.choice(["s1", "s1", "s1", "s0"])]
    skeletons = [skeleton(r, names[k], 10.0 * k) for k in range(r.randint(1, 2))]
    top = skeletons if r.randint(0, 5) == 0 else [element(r, "physics", physics), *skeletons]
    world = element(r, "world", top, name="w")
    head = r.choice(['<?xml version="1.0" ?>\n', "", "<!-- generated -->\n"])
    return head + element(r, "skel", [world], version="1.0")


# --------------------------------------------------------------------------- the check


def check_against_skelparser(text: str) -> None:
    """Our model, our World and 100 steps against SkelParser's, from ``text``."""
    ref = dartpy.utils.SkelParser.readWorldXML(text)
    assert ref is not None, "SkelParser could not read the document"
    model = load_skel(text, name="generated.skel")
    engine = SimEngine(model, enforce_limits=False)
    diff = diff_worlds(engine.world, ref)
    assert not diff.discrete, "\n".join(diff.discrete[:20])
    worst = {k: v for k, v in diff.numeric.items() if not v <= STRUCTURE_TOL}
    assert not worst, worst
    for i, skel in enumerate(model.skeletons):
        ours = Kinematics(skel).body_transforms()
        theirs = [b.getWorldTransform().matrix() for b in ref.getSkeleton(i).getBodyNodes()]
        assert len(ours) == len(theirs)
        for b, (a, t) in zip(skel.bodies, zip(ours, theirs, strict=True), strict=True):
            np.testing.assert_allclose(a, t, rtol=0, atol=KINEMATICS_TOL, err_msg=b.name)
    if diff.numeric:
        align_last_bits(engine.world, ref)
        left = diff_worlds(engine.world, ref).numeric
        assert not left, f"differences left after aligning the last bits: {left}"
    gap = trajectory_gap(engine, ref, STEPS)
    assert gap == 0.0, f"identical builds, but the trajectories differ by {gap}"


@SETTINGS
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_generated_documents_match_skelparser(seed: int) -> None:
    text = skel_document(seed)
    note(text)
    check_against_skelparser(text)


def test_the_check_can_fail() -> None:
    """The same check refuses a document whose model differs from DART's (here a
    damping DART reads but a model built from the other text lacks)."""
    doc = ('<skel><world name="w"><skeleton name="s"><body name="b"><inertia><mass>1</mass>'
           '</inertia></body><joint type="revolute" name="j"><parent>world</parent>'
           "<child>b</child><axis><xyz>1 0 0</xyz>{}</axis><init_vel>1</init_vel></joint>"
           "</skeleton></world></skel>")
    check_against_skelparser(doc.format(""))
    ref = dartpy.utils.SkelParser.readWorldXML(doc.format(
        "<dynamics><damping>0.5</damping></dynamics>"))
    diff = diff_worlds(SimEngine(load_skel(doc.format("")), enforce_limits=False).world, ref)
    assert "skel[0].joint[0:j].DampingCoefficient" in diff.numeric


# --------------------------------------------------------------------------- rules found


UNIVERSAL = """<skel><world name="w"><physics><gravity>0 -9.81 0</gravity></physics>
<skeleton name="s"><body name="a"/><body name="b"><transformation>0 -0.3 0 0 0 0</transformation>
<inertia><mass>1</mass><offset>0 -0.1 0</offset></inertia></body>
<joint type="free" name="root"><parent>world</parent><child>a</child></joint>
<joint type="universal" name="u"><parent>a</parent><child>b</child>
<axis><xyz>{}</xyz></axis><axis2><xyz>0 0 1</xyz></axis2>
<init_pos>0.4 -0.3</init_pos><init_vel>1 2</init_vel></joint></skeleton></world></skel>"""


def test_universal_axes_are_used_as_written() -> None:
    """DART 6.20 keeps a universal joint's axes as the file writes them (revolute,
    prismatic and planar axes it normalises): the model must hold the same vector."""
    text = UNIVERSAL.format("0.70710678 0.70710678 0")  # 5e-9 short of unit length
    joint = load_skel(text).skeletons[0].joint("u")
    np.testing.assert_array_equal(joint.axes[0], [0.70710678, 0.70710678, 0.0])
    check_against_skelparser(text)


def test_a_plane_s_point_gives_dart_s_offset_to_the_bit() -> None:
    """A ``<plane>`` with the deprecated ``<point>``: DART's offset is ``normal . point``
    with the products summed left to right (Eigen). Computed with numpy's ``@`` (BLAS,
    which may fuse a multiply and an add) it was -14.3864 here, DART's
    -14.386400000000002 (the generated document of seed 715922)."""
    doc = ('<skel><world name="w"><skeleton name="s"><body name="b"><inertia><mass>1</mass>'
           "</inertia><visualization_shape><geometry><plane><normal>0 -0.28 0.96</normal>"
           "<point>-0.438 72.5 6.16</point></plane></geometry></visualization_shape>"
           '</body><joint type="free" name="j"><parent>world</parent><child>b</child>'
           "</joint></skeleton></world></skel>")
    ref = dartpy.utils.SkelParser.readWorldXML(doc)
    theirs = ref.getSkeleton(0).getBodyNode(0).getShapeNodes()[0].getShape().getOffset()
    ours = load_skel(doc).skeletons[0].bodies[0].shapes[0].geometry.offset
    assert ours == theirs == -14.386400000000002
    check_against_skelparser(doc)


@pytest.mark.parametrize("xyz", ["1 1 0", "0 0 2", "0.7071 0.7071 0"])
def test_universal_axis_that_is_not_unit_is_refused(xyz: str) -> None:
    """Used as written, a non-unit axis breaks DART's joint: the rotation it makes is no
    rotation, so DART logs an error on every update and uses the identity instead (the
    joint does not turn). Such a file is refused, with the line and the fix."""
    ref = dartpy.utils.SkelParser.readWorldXML(UNIVERSAL.format(xyz))
    u = ref.getSkeleton(0).getJoint(1)
    np.testing.assert_array_equal(u.getAxis1(), np.array(xyz.split(), dtype=float))
    u.setPositions(np.array([0.4, -0.3]))
    np.testing.assert_array_equal(u.getRelativeTransform().matrix(), np.eye(4))  # frozen
    with pytest.raises(SkelValueError, match=r"generated\.skel:6: .*joint\[@name='u'\]/axis.*"
                                             r"not a unit vector.*write"):
        load_skel(UNIVERSAL.format(xyz), name="generated.skel")


HEX = """<skel><world name="w"><physics><gravity>0x1.8p+1 0 -0X1.3Ap3</gravity></physics>
<skeleton name="s"><body name="b"><transformation>0x.8 0 0 0 0x1p-2 0</transformation>
<inertia><mass> 0x1.8 </mass><offset>0 -0x1p-4 0</offset></inertia></body>
<joint type="revolute" name="j"><parent>world</parent><child>b</child>
<axis><xyz>0 0 0x1p0</xyz></axis><init_pos>-0x1.2p-1</init_pos></joint></skeleton></world></skel>"""


def test_hexadecimal_numbers_are_read_as_dart_reads_them() -> None:
    """std::stod, which DART reads every number with, takes C99 hexadecimal floats."""
    world = load_skel(HEX)
    np.testing.assert_array_equal(world.gravity, [3.0, 0.0, -9.8125])
    assert world.skeletons[0].bodies[0].inertia.mass == 1.5
    assert world.skeletons[0].dofs[0].initial_position == -0.5625
    check_against_skelparser(HEX)


SPACED = """<skel><world name="w"><physics><collision_detector>{detector}</collision_detector>
</physics><skeleton name="s">{mobile}
<body name="base"><inertia><mass>1</mass></inertia></body>
<body name="b"><transformation>0 -0.3 0 0 0 0</transformation>{gravity}
<inertia><mass>1</mass><moment_of_inertia><ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz>
<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia></inertia></body>
<joint type="free" name="root"><parent>world</parent><child>base</child></joint>
<joint type="euler" name="j"><parent>{parent}</parent><child>{child}</child>
<axis_order>{order}</axis_order><init_pos>0.1 0.2 0.3</init_pos></joint>
</skeleton></world></skel>"""
_PLAIN = {"detector": "dart", "mobile": "<mobile>true</mobile>",
          "gravity": "<gravity>true</gravity>", "parent": "base", "child": "b", "order": "zyx"}


@pytest.mark.parametrize(("field", "spaced"), [
    ("detector", " dart "),  # DART: unknown detector, FCL
    ("mobile", "<mobile> true </mobile>"),  # DART: not a bool, false
    ("gravity", "<gravity>\n  true\n</gravity>"),  # DART: not a bool, false
    ("parent", " base "),  # DART: no such body, joint j discarded
    ("child", "b "),  # DART: no such body, joint j discarded
    ("order", " zyx "),  # DART: not xyz or zyx, XYZ
])
def test_names_and_flags_are_compared_as_written(field: str, spaced: str) -> None:
    """DART reads the text of <parent>, <child>, <axis_order>, <collision_detector> and
    of booleans as written, surrounding whitespace included (numbers and vectors are
    read past it): " true " is not a bool to DART, " base " names no body. The model
    is DART's, with a warning that shows the text."""
    plain = SPACED.format(**_PLAIN)
    check_against_skelparser(plain)
    text = SPACED.format(**{**_PLAIN, field: spaced})
    check_against_skelparser(text)
    shown = repr(spaced.replace("<mobile>", "").replace("</mobile>", "")
                 .replace("<gravity>", "").replace("</gravity>", ""))
    assert any(shown in str(w) for w in load_skel(text).warnings), shown
