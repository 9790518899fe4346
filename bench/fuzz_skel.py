#!/usr/bin/env python3
"""Fuzz ``load_skel``: mutate corpus files, check that every input loads or raises SkelError.

The contract under test (``skel_ros.model.load_skel``): for any input, the call
either returns a :class:`~skel_ros.model.World` or raises a
:class:`~skel_ros.model.SkelError`, within a bounded time. Anything else is a
FAILURE: another exception type, a ``SkelError`` that only wraps an internal
exception (``load_skel``'s last-resort ``internal error ... please report this``),
or a load slower than the time bound (a hang, or runaway work).

Inputs are corpus files (plus one synthetic file that uses the elements the
corpus lacks: planar/screw/translational2d joints, ``<dof>``, markers, every
shape kind) with a few random mutations applied; DART's SKEL corpus is optional
(``--corpus DIR`` or ``SKEL_CORPUS``): without it the seeds are what the repository has,
the bundled ``examples/*.skel``, a generated humanoid and serial chains
(``bench/generated_models.py``) and the synthetic file (its mesh one of the bundled
meshes), and the script says so. Mutations are at the XML level (drop /
duplicate / reorder / move elements, garbage / NaN / inf / 1e308 numbers,
wrong token counts, tag renames, attribute changes, inserted snippets) and at
the byte level (truncation, byte flips, inserted / deleted / duplicated
bytes). Mutated text is loaded with ``load_skel(text, name=<original path>)``
so relative mesh paths still resolve; byte-level mutants are also loaded from a
temporary file, which exercises the file path (encodings, binary garbage).

Every input is a pure function of ``(--seed, index)``, so a run is
reproducible whatever ``--jobs`` is, and a failure can be replayed with
``--replay INDEX``.

This module is also the mutator library of ``test/model/test_skel_fuzz.py``, which
imports it by path: the script is the primary tool and must run without pytest
or hypothesis, while a test module is not something a script should import.

Usage::

    .venv/bin/python bench/fuzz_skel.py --seconds 180 --jobs 2 --seed 1
    .venv/bin/python bench/fuzz_skel.py --seconds 1 --jobs 1      # a smoke run
    .venv/bin/python bench/fuzz_skel.py --max-inputs 5000 --out /tmp/skel-fuzz --sample
    .venv/bin/python bench/fuzz_skel.py --seed 1 --replay 1234
"""

# Pseudo-random numbers are the point here (S311), and the mutation probabilities are
# tuning knobs, not magic numbers (PLR2004).
# ruff: noqa: S311, PLR2004

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import multiprocessing
import os
import random
import re
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
for _path in (REPO, BENCH):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import generated_models  # noqa: E402 - bench/, after the path setup

from skel_ros.model import SkelError, World, load_skel  # noqa: E402 - after the path setup

# One file of each kind; the test samples from these, the script from these plus the
# whole corpus.
SAMPLE_FILES = (
    "data/skel/shapes.skel",  # every rigid shape kind, OBJ meshes, colors
    "data/skel/kima/kima_human_left_arm.skel",  # COLLADA meshes, euler joints, init_pos
    "data/skel/bullet_collision.skel",  # plane, meshes, bullet detector
    "data/skel/soft_cubes.skel",  # soft boxes
    "data/skel/soft_open_chain.skel",  # soft bodies on ball joints
    "data/skel/test/joint_actuator_type_test.skel",  # many joint types and actuators
    "data/skel/test/joint_dynamics_elements_test.skel",  # dynamics, translational joint
    "data/skel/two_cubes.skel",  # euler, free, revolute, universal, weld
    "data/skel/sphere.skel",  # prismatic
    "data/skel/test/test_single_body.skel",  # DART rejects it (soft box without frags)
    "data/skel_old/cube.skel",  # legacy text format
)

# Elements the corpus never uses, so the parser branches for them get fuzzed too.
# Loaded with a name inside data/skel/, so ../obj/foot.obj resolves.
SYNTHETIC_NAME = "data/skel/_fuzz_synthetic.skel"
SYNTHETIC = """<?xml version="1.0"?>
<skel version="1.0">
  <world name="w">
    <physics>
      <time_step>0.002</time_step>
      <gravity>0 0 -9.81</gravity>
      <collision_detector>dart</collision_detector>
    </physics>
    <skeleton name="features">
      <transformation>0.1 0.2 0.3 0.1 0.2 0.3</transformation>
      <mobile>true</mobile>
      <body name="base">
        <gravity>0</gravity>
        <inertia>
          <mass>2</mass>
          <offset>0 0 0.1</offset>
          <moment_of_inertia>
            <ixx>0.1</ixx><iyy>0.1</iyy><izz>0.1</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz>
          </moment_of_inertia>
        </inertia>
        <marker name="m1"><offset>0 0 1</offset></marker>
        <marker name="m1"/>
        <visualization_shape>
          <geometry><pyramid><base_width>1</base_width><base_depth>2</base_depth>
            <height>3</height></pyramid></geometry>
          <color>0.1 0.2 0.3 0.5</color>
        </visualization_shape>
        <collision_shape>
          <transformation>0 0 1 0 0 0</transformation>
          <geometry><plane><normal>0 0 1</normal><offset>0.5</offset></plane></geometry>
          <collidable>0</collidable>
        </collision_shape>
      </body>
      <body name="arm">
        <transformation>0 0 1 0 0 0</transformation>
        <inertia><mass>1</mass></inertia>
        <visualization_shape>
          <geometry><capsule><radius>0.1</radius><height>0.5</height></capsule></geometry>
        </visualization_shape>
        <collision_shape>
          <geometry><cone><radius>0.1</radius><height>0.5</height></cone></geometry>
        </collision_shape>
        <collision_shape>
          <geometry><multi_sphere>
            <sphere><radius>0.1</radius><position>0 0 0</position></sphere>
            <sphere><radius>0.2</radius><position>0 0 1</position></sphere>
          </multi_sphere></geometry>
        </collision_shape>
      </body>
      <body name="slider">
        <transformation>0 0 2 0 0 0</transformation>
        <inertia><mass>1</mass></inertia>
        <visualization_shape>
          <geometry><mesh><file_name>../obj/foot.obj</file_name><scale>1 1 1</scale></mesh>
          </geometry>
        </visualization_shape>
      </body>
      <body name="plate">
        <transformation>0 0 3 0 0 0</transformation>
        <soft_shape>
          <total_mass>1</total_mass>
          <geometry><sphere><radius>0.1</radius><num_slices>4</num_slices>
            <num_stacks>4</num_stacks></sphere></geometry>
          <kv>100</kv><ke>10</ke><damp>1</damp>
        </soft_shape>
      </body>
      <body name="puck">
        <transformation>0 0 4 0 0 0</transformation>
        <soft_shape>
          <total_mass>1</total_mass>
          <geometry><cylinder><radius>0.1</radius><height>0.2</height><num_slices>4</num_slices>
            <num_stacks>2</num_stacks><num_rings>2</num_rings></cylinder></geometry>
        </soft_shape>
      </body>
      <body name="egg">
        <transformation>0 0 5 0 0 0</transformation>
        <soft_shape>
          <total_mass>1</total_mass>
          <geometry><ellipsoid><size>0.1 0.2 0.3</size><num_slices>4</num_slices>
            <num_stacks>4</num_stacks></ellipsoid></geometry>
        </soft_shape>
      </body>
      <body name="nut"><transformation>0 0 6 0 0 0</transformation></body>
      <body name="tip"><transformation>0 0 7 0 0 0</transformation></body>
      <joint type="planar" name="j_base" actuator="servo">
        <parent>world</parent>
        <child>base</child>
        <plane type="arbitrary">
          <translation_axis1><xyz>1 0 0</xyz></translation_axis1>
          <translation_axis2><xyz>0 1 0</xyz></translation_axis2>
        </plane>
        <init_pos>0.1 0.2 0.3</init_pos>
        <init_vel>0 0 0</init_vel>
        <dof local_index="2" name="yaw">
          <position lower="-1" upper="1" initial="0.2"/>
          <velocity lower="-2" upper="2" initial="0"/>
          <acceleration lower="-3" upper="3"/>
          <force lower="-4" upper="4"/>
          <damping>0.1</damping><friction>0.2</friction>
          <spring_rest_position>0</spring_rest_position><spring_stiffness>1</spring_stiffness>
        </dof>
      </joint>
      <joint type="universal" name="j_arm" actuator="velocity">
        <parent>base</parent>
        <child>arm</child>
        <transformation>0 0 0.1 0 0 0</transformation>
        <axis><xyz>1 0 0</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis>
        <axis2><xyz>0 1 0</xyz><dynamics><damping>0.5</damping></dynamics></axis2>
        <init_pos>0 0</init_pos>
      </joint>
      <joint type="prismatic" name="j_slider" actuator="locked">
        <parent>arm</parent>
        <child>slider</child>
        <axis><xyz>0 0 2</xyz><damping>0.1</damping></axis>
        <dof><position lower="-0.5" upper="0.5"/></dof>
        <init_pos>0.1</init_pos>
      </joint>
      <joint type="planar" name="j_plate">
        <parent>slider</parent>
        <child>plate</child>
        <plane type="zx"/>
      </joint>
      <joint type="euler" name="j_puck" actuator="acceleration">
        <parent>plate</parent>
        <child>puck</child>
        <axis_order>zyx</axis_order>
        <axis3><limit><lower>-1</lower></limit></axis3>
        <init_vel>0.1 0.2 0.3</init_vel>
      </joint>
      <joint type="translational" name="j_egg" actuator="passive">
        <parent>puck</parent>
        <child>egg</child>
        <init_pos>0 0 0.1</init_pos>
      </joint>
      <joint type="screw" name="j_nut">
        <parent>egg</parent>
        <child>nut</child>
        <axis><xyz>0 0 1</xyz><pitch>0.2</pitch></axis>
      </joint>
      <joint type="translational2d" name="j_tip">
        <parent>nut</parent>
        <child>tip</child>
        <plane type="yz"/>
      </joint>
    </skeleton>
    <skeleton name="features">
      <body name="ball"><inertia><mass>1</mass></inertia>
        <visualization_shape><geometry><sphere><radius>0.1</radius></sphere></geometry>
        </visualization_shape>
        <collision_shape><geometry><ellipsoid><size>0.1 0.1 0.1</size></ellipsoid></geometry>
        </collision_shape>
      </body>
      <body name="cyl">
        <visualization_shape><geometry><cylinder><radius>0.1</radius><height>0.1</height>
        </cylinder></geometry></visualization_shape>
      </body>
      <joint type="ball" name="j"><parent>world</parent><child>ball</child>
        <init_pos>0.1 0.2 0.3</init_pos>
        <dof local_index="0"><position lower="-1" upper="1"/></dof>
      </joint>
      <joint type="revolute" name="j"><parent>ball</parent><child>cyl</child>
        <axis><xyz>0 1 0</xyz><dynamics><friction>0.1</friction></dynamics></axis>
      </joint>
    </skeleton>
  </world>
</skel>
"""

# Tags of the SKEL vocabulary, for renames and inserted elements.
KNOWN_TAGS = (
    "skel", "world", "physics", "time_step", "gravity", "collision_detector", "skeleton",
    "transformation", "mobile", "immobile", "body", "joint", "inertia", "mass", "offset",
    "moment_of_inertia", "ixx", "iyy", "izz", "ixy", "ixz", "iyz", "visualization_shape",
    "collision_shape", "geometry", "sphere", "box", "ellipsoid", "cylinder", "capsule", "cone",
    "pyramid", "plane", "multi_sphere", "mesh", "radius", "height", "length", "size", "normal",
    "point", "position", "file_name", "scale", "base_width", "base_depth", "color", "collidable",
    "marker", "soft_shape", "total_mass", "frags", "num_slices", "num_stacks", "num_rings", "kv",
    "ke", "damp", "parent", "child", "axis", "axis2", "axis3", "xyz", "pitch", "limit", "lower",
    "upper", "effort", "velocity", "dynamics", "damping", "friction", "spring_rest_position",
    "spring_stiffness", "sprint_stiffness", "init_pos", "init_vel", "dof", "axis_order",
    "translation_axis1", "translation_axis2", "acceleration", "force", "self_collide", "torus",
)

KNOWN_ATTRIBUTES = ("name", "type", "actuator", "local_index", "lower", "upper", "initial",
                    "version")

ATTRIBUTE_VALUES = (
    "", " ", "world", "revolute", "prismatic", "screw", "universal", "ball", "euler",
    "translational", "translational2d", "planar", "free", "weld", "hinge", "force", "passive",
    "servo", "acceleration", "velocity", "locked", "torque", "FORCE", "xy", "yz", "zx",
    "arbitrary", "0", "1", "2", "3", "5", "6", "-1", "-2", "99999999999999999999", "1.5", "²",
    "\u0661", "nan", "inf", "-inf", "1e308", "link 1", "link 2", "root", "default", "J(1)",
    "a\u00e9\u4e2d", "x" * 300,
)

# Replacements for one numeric token: garbage, non-finite, huge, tiny, oddly written.
NASTY_NUMBERS = (
    "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e309", "-1e309",
    "1.7976931348623157e308", "1e-320", "5e-324", "0", "-0", "-1", "1e400", "1e-400",
    "abc", "1,5", "1.2.3", "0x10", "1e", "e5", ".", "-", "+", "++1", "1_000", "\u0661\u0662",
    "\u00b2", "\uff11", "\u00a0", "true", "false", "1;2", "&amp;", "1e+308",
    "99999999999999999999999999",
    "-99999999999999999999999999", "3.14159", "1e6", "1000000", "1000001", "2147483648",
)

SNIPPETS = (
    '<dof local_index="0"><position lower="-1" upper="1" initial="0"/></dof>',
    '<dof local_index="5" name="d"/>',
    '<dof><velocity lower="x" upper="nan"/></dof>',
    "<init_pos>0.5</init_pos>",
    "<init_pos>1 2 3 4 5 6 7</init_pos>",
    "<init_vel>nan</init_vel>",
    "<axis><xyz>0 0 0</xyz></axis>",
    ("<axis><xyz>1 0 0</xyz><limit><lower>1</lower><upper>-1</upper><effort>5</effort></limit>"
    "</axis>"),
    "<axis_order>yxz</axis_order>",
    ('<plane type="arbitrary"><translation_axis1><xyz>1 0 0</xyz></translation_axis1>'
    "<translation_axis2><xyz>2 0 0</xyz></translation_axis2></plane>"),
    '<plane type="xz"/>',
    '<marker name="mk"><offset>1 2</offset></marker>',
    "<transformation>0 0 0</transformation>",
    "<transformation>1e308 1e308 1e308 1e308 1e308 1e308</transformation>",
    "<inertia><mass>-1</mass></inertia>",
    "<inertia><mass>1e308</mass><moment_of_inertia><ixx>1</ixx></moment_of_inertia></inertia>",
    "<visualization_shape><geometry><torus/></geometry></visualization_shape>",
    ("<collision_shape><geometry><box><size>1e308 1e308 1e308</size></box></geometry>"
    "<collidable>true</collidable></collision_shape>"),
    ("<visualization_shape><geometry><mesh><file_name>missing.obj</file_name>"
    "<scale>1 1 1</scale></mesh></geometry></visualization_shape>"),
    ("<visualization_shape><geometry><mesh><file_name>../obj/foot.obj</file_name>"
    "<scale>0 -1 1e308</scale></mesh></geometry></visualization_shape>"),
    ("<visualization_shape><geometry><mesh><file_name>/dev/null</file_name>"
    "<scale>1 1 1</scale></mesh></geometry></visualization_shape>"),
    ("<visualization_shape><geometry><mesh><file_name>http://x/y.obj</file_name>"
    "<scale>1 1 1</scale></mesh></geometry></visualization_shape>"),
    ("<visualization_shape><geometry><mesh><file_name>.</file_name>"
    "<scale>1 1 1</scale></mesh></geometry></visualization_shape>"),
    ("<soft_shape><total_mass>1</total_mass><geometry><box><size>1 1 1</size>"
    "<frags>1000000 1000000 1000000</frags></box></geometry></soft_shape>"),
    ('<body name="extra"><visualization_shape><geometry><sphere><radius>1</radius></sphere>'
    "</geometry></visualization_shape></body>"),
    '<body name="world"/>',
    '<joint type="free" name="jx"><parent>world</parent><child>world</child></joint>',
    '<joint type="revolute" name="jx"><parent>extra</parent><child>extra</child></joint>',
    '<joint type="screw" name="jx"><parent>world</parent><child>extra</child></joint>',
    '<joint type="planar" name="jp"><parent>world</parent><child>extra</child></joint>',
    ('<skeleton name="s"><body name="b"/><joint type="weld" name="w"><parent>world'
    "</parent><child>b</child></joint></skeleton>"),
    "<physics><collision_detector>nope</collision_detector><time_step>0</time_step></physics>",
    "<world/>",
    "<![CDATA[ 1 2 3 ]]>",
    "<!-- comment --><?pi data?>",
    "<color>1 2</color>",
    "<gravity>maybe</gravity>",
    '<dof local_index="abc"/>',
    '<dof local_index="+-1"/>',
    '<dof local_index="-1"><position initial="1"/></dof>',
    '<dof name="n"><damping>x</damping></dof>',
    "<cylinder><radius>1</radius><length>1</length></cylinder>",
    "<dynamics><sprint_stiffness>1</sprint_stiffness></dynamics>",
    ('<plane type="arbitrary"><translation_axis1><xyz>1e308 1e308 0</xyz></translation_axis1>'
    "</plane>"),
    ("<visualization_shape><geometry><capsule><radius>1e-320</radius><height>1e-320</height>"
    "</capsule></geometry></visualization_shape>"),
    ("<visualization_shape><geometry><mesh><file_name>../obj/foot.obj</file_name>"
    "<scale>1e308 1 1</scale></mesh></geometry></visualization_shape>"),
)

WEIRD_TEXT = (
    "", " ", "\n\t", "world", "None", "0 0 0 0 0 0 0 0 0 0 0 0", "1 2 3", "-1", "xyz", "zyx",
    "\u00e9\u4e2d\U0001f600", "\u202e1", "0" * 1000, "1 " * 500, "nan nan nan nan nan nan",
    "inf -inf inf", "1e308 1e308 1e308", "-1e308 -1e308 -1e308", "1,2,3", "TRUE", "False",
)

# Byte strings to splice in at the byte level.
INTERESTING_BYTES = (
    b"<", b">", b"&", b"&#0;", b"&#x110000;", b"&lt;", b"&undefined;", b"]]>", b"<!--", b"\x00",
    b"\xff", b"\xfe\xff", b"\xef\xbb\xbf", b"\xc3", b"\xed\xa0\x80", b'"', b"'", b"/>",
    b"</skel>", b"<skel>", b'<!DOCTYPE skel [<!ENTITY a "aaaaaaaaaa">]>', b"&a;",
    b'<?xml version="1.0" encoding="UTF-16"?>', b"\r", b"\n" * 50, b" " * 100,
)


# --------------------------------------------------------------------------- seeds


@dataclass(frozen=True)
class Seed:
    """An unmutated input: its text and the path it is loaded as (for relative meshes)."""

    name: str
    text: str


def corpus_folder(option: str | os.PathLike[str] | None = None) -> Path | None:
    """The SKEL corpus: ``option`` (``--corpus``), else ``SKEL_CORPUS``, else None."""
    text = os.fspath(option) if option else os.environ.get("SKEL_CORPUS", "")
    return Path(text) if text else None


def corpus_available(corpus: Path | None = None) -> bool:
    """Whether ``corpus`` (default: :func:`corpus_folder`) holds the SKEL corpus."""
    corpus = corpus if corpus is not None else corpus_folder()
    return corpus is not None and (corpus / "data" / "skel").is_dir()


def _corpus(corpus: Path | None) -> Path:
    found = corpus if corpus is not None else corpus_folder()
    if found is None:
        raise FileNotFoundError("no SKEL corpus: --corpus DIR or SKEL_CORPUS")
    return found


def load_seed(rel: str, corpus: Path | None = None) -> Seed:
    """The corpus file at ``rel`` (relative to the corpus root) as a seed."""
    path = _corpus(corpus) / rel
    return Seed(str(path), path.read_bytes().decode("utf-8", "surrogateescape"))


# Without the corpus the synthetic file is named inside examples/, and its mesh is one of
# the bundled ones (an STL there) instead of the corpus's ../obj/foot.obj.
BUNDLED_MESH = next(iter(sorted((REPO / "examples" / "meshes").glob("*.stl"))), None)


def synthetic_seed(corpus: Path | None = None) -> Seed:
    """The synthetic all-features document, named inside the corpus for its mesh.

    Without a corpus (none given, none in ``SKEL_CORPUS``) it is named inside
    ``examples/`` and draws a bundled mesh.
    """
    found = corpus if corpus is not None else corpus_folder()
    if found is not None:
        return Seed(str(found / SYNTHETIC_NAME), SYNTHETIC)
    return _bundled_synthetic()


def _bundled_synthetic() -> Seed:
    """The synthetic document named inside ``examples/``, drawing a bundled mesh."""
    mesh = f"meshes/{BUNDLED_MESH.name}" if BUNDLED_MESH is not None else "missing.stl"
    return Seed(str(REPO / "examples" / "_fuzz_synthetic.skel"),
                SYNTHETIC.replace("../obj/foot.obj", mesh))


def sample_seeds(corpus: Path | None = None) -> list[Seed]:
    """The representative sample (test) : ``SAMPLE_FILES`` plus the synthetic document."""
    return [load_seed(rel, corpus) for rel in SAMPLE_FILES] + [synthetic_seed(corpus)]


def bundled_seeds() -> list[Seed]:
    """What the repository has: the bundled robots, generated ones, the synthetic file."""
    files = sorted((REPO / "examples").glob("*.skel"))
    seeds = [Seed(str(p), p.read_bytes().decode("utf-8", "surrogateescape")) for p in files]
    generated = {generated_models.HUMANOID_NAME: generated_models.humanoid(),
                 "chain_ball_40_generated.skel": generated_models.serial_chain(40, "ball"),
                 "chain_revolute_12_generated.skel": generated_models.serial_chain(12)}
    seeds += [Seed(str(BENCH / name), text) for name, text in generated.items()]
    return [*seeds, _bundled_synthetic()]


# A few legacy files are enough: they all take the same path through the parser.
LEGACY_SEEDS = ("data/skel_old/cube.skel", "data/skel_old/Chain.skel",
                "data/skel_old/fullbody.skel")


def all_seeds(corpus: Path | None = None) -> list[Seed]:
    """Every corpus SKEL-XML file, three legacy files and the synthetic document."""
    root = _corpus(corpus)
    files = sorted((root / "data" / "skel").rglob("*.skel"))
    rels = [str(p.relative_to(root)) for p in files] + list(LEGACY_SEEDS)
    return [load_seed(rel, root) for rel in rels] + [synthetic_seed(root)]


# --------------------------------------------------------------------------- mutators

Mutator = Callable[[str, random.Random], str]
_NUMBER_TOKEN = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _parse(text: str) -> etree._Element | None:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        return etree.fromstring(text.encode("utf-8", "surrogatepass"), parser)
    except (etree.XMLSyntaxError, ValueError):
        return None


def _serialize(root: etree._Element) -> str:
    return '<?xml version="1.0"?>\n' + etree.tostring(root, encoding="unicode")


def _elements(root: etree._Element) -> list[etree._Element]:
    return [e for e in root.iter() if isinstance(e.tag, str)]


def _xml_mutator(
    fn: Callable[[etree._Element, random.Random], bool],
) -> Mutator:
    """Lift a tree mutation to text; the text is kept if it is not XML or nothing changed."""

    def mutate(text: str, rng: random.Random) -> str:
        root = _parse(text)
        if root is None:
            return text
        try:
            changed = fn(root, rng)
        except ValueError:  # lxml refuses text/names that XML cannot hold
            return text
        return _serialize(root) if changed else text

    mutate.__name__ = fn.__name__
    mutate.__doc__ = fn.__doc__
    return mutate


def _pick_non_root(root: etree._Element, rng: random.Random) -> etree._Element | None:
    candidates = _elements(root)[1:]
    return rng.choice(candidates) if candidates else None


def _drop_element(root: etree._Element, rng: random.Random) -> bool:
    """Remove one element (and its subtree)."""
    el = _pick_non_root(root, rng)
    if el is None:
        return False
    parent = el.getparent()
    if parent is None:
        return False
    parent.remove(el)
    return True


def _duplicate_element(root: etree._Element, rng: random.Random) -> bool:
    """Insert a copy of an element right after it."""
    el = _pick_non_root(root, rng)
    if el is None:
        return False
    el.addnext(copy.deepcopy(el))
    return True


def _reorder_children(root: etree._Element, rng: random.Random) -> bool:
    """Shuffle the children of one element."""
    parents = [e for e in _elements(root) if len(e) > 1]
    if not parents:
        return False
    parent = rng.choice(parents)
    children = list(parent)
    rng.shuffle(children)
    for child in children:
        parent.remove(child)
    for child in children:
        parent.append(child)
    return True


def _move_element(root: etree._Element, rng: random.Random) -> bool:
    """Move an element under another (non-descendant) element."""
    el = _pick_non_root(root, rng)
    if el is None:
        return False
    inside = set(el.iter())
    targets = [e for e in _elements(root) if e not in inside]
    if not targets:
        return False
    target = rng.choice(targets)
    target.insert(rng.randint(0, len(target)), el)
    return True


def _numeric_elements(root: etree._Element) -> list[etree._Element]:
    return [e for e in _elements(root) if e.text and _NUMBER_TOKEN.search(e.text)]


def _replace_number(root: etree._Element, rng: random.Random) -> bool:
    """Replace one numeric token with garbage, NaN, inf, 1e308, ..."""
    els = _numeric_elements(root)
    if not els:
        return False
    el = rng.choice(els)
    matches = list(_NUMBER_TOKEN.finditer(el.text or ""))
    m = rng.choice(matches)
    text = el.text or ""
    el.text = text[: m.start()] + rng.choice(NASTY_NUMBERS) + text[m.end():]
    return True


def _replace_all_numbers(root: etree._Element, rng: random.Random) -> bool:
    """Replace every numeric token of one element with the same nasty value."""
    els = _numeric_elements(root)
    if not els:
        return False
    el = rng.choice(els)
    value = rng.choice(NASTY_NUMBERS)
    el.text = _NUMBER_TOKEN.sub(value, el.text or "")
    return True


def _wrong_count(root: etree._Element, rng: random.Random) -> bool:
    """Drop tokens from, or add tokens to, a numeric text."""
    els = _numeric_elements(root)
    if not els:
        return False
    el = rng.choice(els)
    tokens = (el.text or "").split()
    if tokens and rng.random() < 0.5:
        start = rng.randrange(len(tokens))
        del tokens[start : start + rng.randint(1, len(tokens))]
    else:
        for _ in range(rng.randint(1, 4)):
            tokens.insert(rng.randint(0, len(tokens)), rng.choice(("0", "1", "-2.5", "1e3")))
    el.text = " ".join(tokens)
    return True


def _set_text(root: etree._Element, rng: random.Random) -> bool:
    """Replace the text of one element with something odd (empty, unicode, long, ...)."""
    el = rng.choice(_elements(root))
    el.text = rng.choice(WEIRD_TEXT + NASTY_NUMBERS)
    return True


def _rename_tag(root: etree._Element, rng: random.Random) -> bool:
    """Rename one element: another SKEL tag, a typo, or a random name."""
    el = rng.choice(_elements(root))
    roll = rng.random()
    if roll < 0.6:
        el.tag = rng.choice(KNOWN_TAGS)
    elif roll < 0.8 and len(el.tag) > 1:
        i = rng.randrange(len(el.tag))
        el.tag = el.tag[:i] + el.tag[i + 1 :]
    else:
        el.tag = "".join(rng.choice("abcxyz_") for _ in range(rng.randint(1, 8)))
    return True


def _change_attribute(root: etree._Element, rng: random.Random) -> bool:
    """Delete, change or add one attribute."""
    el = rng.choice(_elements(root))
    roll = rng.random()
    if el.attrib and roll < 0.3:
        del el.attrib[rng.choice(list(el.attrib))]
    elif el.attrib and roll < 0.7:
        el.set(rng.choice(list(el.attrib)), rng.choice(ATTRIBUTE_VALUES))
    else:
        el.set(rng.choice(KNOWN_ATTRIBUTES), rng.choice(ATTRIBUTE_VALUES))
    return True


def _insert_snippet(root: etree._Element, rng: random.Random) -> bool:
    """Insert a SKEL fragment (often a dubious one) into a random element."""
    snippet = rng.choice(SNIPPETS)
    try:
        wrapper = etree.fromstring(f"<w>{snippet}</w>".encode())
    except etree.XMLSyntaxError:
        return False
    target = rng.choice(_elements(root))
    pos = rng.randint(0, len(target))
    for i, node in enumerate(list(wrapper)):
        target.insert(pos + i, node)
    if wrapper.text and wrapper.text.strip():  # CDATA content becomes text
        target.text = (target.text or "") + wrapper.text
    return True


def _byte_mutator(fn: Callable[[bytearray, random.Random], None]) -> Mutator:
    """Lift a mutation of the UTF-8 bytes to text (undecodable bytes kept as surrogates)."""

    def mutate(text: str, rng: random.Random) -> str:
        data = bytearray(text.encode("utf-8", "surrogateescape"))
        fn(data, rng)
        return bytes(data).decode("utf-8", "surrogateescape")

    mutate.__name__ = fn.__name__
    mutate.__doc__ = fn.__doc__
    return mutate


def _truncate(data: bytearray, rng: random.Random) -> None:
    """Cut the bytes at a random position."""
    del data[rng.randint(0, len(data)) :]


def _flip_bytes(data: bytearray, rng: random.Random) -> None:
    """XOR a few random bytes with random values."""
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)


def _insert_bytes(data: bytearray, rng: random.Random) -> None:
    """Insert an interesting byte string or random bytes at a random position."""
    pos = rng.randint(0, len(data))
    if rng.random() < 0.7:
        chunk = rng.choice(INTERESTING_BYTES)
    else:
        chunk = bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 16)))
    data[pos:pos] = chunk


def _delete_bytes(data: bytearray, rng: random.Random) -> None:
    """Delete a random short range of bytes."""
    if data:
        start = rng.randrange(len(data))
        del data[start : start + rng.randint(1, 64)]


def _duplicate_bytes(data: bytearray, rng: random.Random) -> None:
    """Copy a random range of bytes to another random position."""
    if data:
        start = rng.randrange(len(data))
        chunk = data[start : start + rng.randint(1, 256)]
        pos = rng.randint(0, len(data))
        data[pos:pos] = chunk


XML_MUTATORS: dict[str, Mutator] = {
    "drop_element": _xml_mutator(_drop_element),
    "duplicate_element": _xml_mutator(_duplicate_element),
    "reorder_children": _xml_mutator(_reorder_children),
    "move_element": _xml_mutator(_move_element),
    "replace_number": _xml_mutator(_replace_number),
    "replace_all_numbers": _xml_mutator(_replace_all_numbers),
    "wrong_count": _xml_mutator(_wrong_count),
    "set_text": _xml_mutator(_set_text),
    "rename_tag": _xml_mutator(_rename_tag),
    "change_attribute": _xml_mutator(_change_attribute),
    "insert_snippet": _xml_mutator(_insert_snippet),
}
BYTE_MUTATORS: dict[str, Mutator] = {
    "truncate": _byte_mutator(_truncate),
    "flip_bytes": _byte_mutator(_flip_bytes),
    "insert_bytes": _byte_mutator(_insert_bytes),
    "delete_bytes": _byte_mutator(_delete_bytes),
    "duplicate_bytes": _byte_mutator(_duplicate_bytes),
}
MUTATORS: dict[str, Mutator] = {**XML_MUTATORS, **BYTE_MUTATORS}

# A step is (mutator name, seed of its own Random): hypothesis can shrink each one.
Step = tuple[str, int]


def apply_steps(text: str, steps: list[Step]) -> str:
    """Apply the mutation steps in order."""
    for name, step_seed in steps:
        text = MUTATORS[name](text, random.Random(step_seed))
    return text


def random_steps(rng: random.Random, max_steps: int = 4) -> list[Step]:
    """Between 1 and ``max_steps`` steps; XML-level mutators are picked twice as often."""
    names = [*XML_MUTATORS, *XML_MUTATORS, *BYTE_MUTATORS]
    return [(rng.choice(names), rng.getrandbits(32)) for _ in range(rng.randint(1, max_steps))]


# --------------------------------------------------------------------------- the check


class LoadTimeoutError(Exception):
    """A load ran past the hard timeout (raised from a SIGALRM handler)."""


@contextlib.contextmanager
def hard_timeout(seconds: float) -> Iterator[None]:
    """Interrupt the block with LoadTimeoutError after ``seconds`` (main thread, Unix only).

    This only turns a hang into a failure report; the real bound is checked with
    ``time.monotonic`` by the caller.
    """
    if not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return

    def on_alarm(_signum: int, _frame: object) -> None:
        raise LoadTimeoutError(f"load did not finish in {seconds} s")

    try:
        old = signal.signal(signal.SIGALRM, on_alarm)
    except ValueError:  # not the main thread
        yield
        return
    start = time.monotonic()
    # Someone else's alarm (pytest-timeout's signal method) is put back afterwards.
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer_delay > 0:
            remaining = max(outer_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, remaining, outer_interval)


@dataclass
class Outcome:
    """What one input did.

    Attributes:
        kind: ``loaded``, ``skel_error`` or ``failure``.
        seconds: Slowest of the loads (string and, for byte mutants, file).
        detail: Exception text or traceback for failures, the SkelError text otherwise.
    """

    kind: str
    seconds: float
    detail: str = ""
    error_class: str = ""
    py_warning: str = ""


def _is_internal(exc: SkelError) -> bool:
    """A SkelError that only wraps an unexpected exception (load_skel's safety net)."""
    return exc.reason.startswith("internal error") or (
        exc.__cause__ is not None and not isinstance(exc.__cause__, SkelError)
    )


def _one_load(load: Callable[[], object], bound: float) -> Outcome:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _timed_load(load, bound)
    if caught:
        first = caught[0]
        where = f"{first.filename}:{first.lineno}"
        outcome.py_warning = f"{first.category.__name__}: {first.message} ({where})"
    return outcome


def _timed_load(load: Callable[[], object], bound: float) -> Outcome:
    start = time.monotonic()
    try:
        with hard_timeout(max(5 * bound, bound + 5.0)):
            result = load()
    except SkelError as exc:
        elapsed = time.monotonic() - start
        if _is_internal(exc):
            tb = "".join(traceback.format_exception(exc.__cause__ or exc))
            return Outcome("failure", elapsed, f"{exc}\n{tb}", type(exc).__name__)
        kind, detail, cls = "skel_error", str(exc), type(exc).__name__
    except LoadTimeoutError as exc:
        return Outcome("failure", time.monotonic() - start, f"timeout: {exc}", "timeout")
    except Exception as exc:  # noqa: BLE001 - anything else is what we are looking for
        tb = traceback.format_exc()
        return Outcome("failure", time.monotonic() - start, tb, type(exc).__name__)
    else:
        elapsed = time.monotonic() - start
        if not isinstance(result, World):
            return Outcome("failure", elapsed, f"returned {type(result).__name__}", "type")
        kind, detail, cls = "loaded", "", ""
    if elapsed > bound:
        return Outcome("failure", elapsed, f"took {elapsed:.2f} s (bound {bound} s)", "slow")
    return Outcome(kind, elapsed, detail, cls)


def check_input(text: str, name: str, *, via_file: bool = False, bound: float = 2.0) -> Outcome:
    """Load ``text`` as ``load_skel(text, name=name)`` and judge the outcome.

    With ``via_file``, or when the text does not start with ``<`` (so that
    ``load_skel`` takes the string for a path), the same text (as bytes) is also
    written to a temporary ``.skel`` file and loaded by path; the worse outcome
    is returned.
    """
    outcome = _one_load(lambda: load_skel(text, name=name), bound)
    as_path = not text.lstrip("\ufeff \t\r\n").startswith("<")
    if not (via_file or as_path) or outcome.kind == "failure":
        return outcome
    with tempfile.TemporaryDirectory(prefix="skel-fuzz-") as tmp:
        path = Path(tmp) / Path(name).name
        path.write_bytes(text.encode("utf-8", "surrogateescape"))
        second = _one_load(lambda: load_skel(path), bound)
    if second.kind == "failure":
        return second
    worse = outcome if outcome.seconds >= second.seconds else second
    worse.py_warning = outcome.py_warning or second.py_warning
    return worse


def has_byte_steps(steps: list[Step]) -> bool:
    """Whether any step works at the byte level."""
    return any(name in BYTE_MUTATORS for name, _ in steps)


# --------------------------------------------------------------------------- the script


@dataclass
class Case:
    """One generated input."""

    index: int
    seed_name: str
    steps: list[Step]
    text: str


def make_case(seeds: list[Seed], run_seed: int, index: int) -> Case:
    """Input ``index`` of run ``run_seed``: a pure function of the two."""
    rng = random.Random(f"{run_seed}:{index}")
    seed = rng.choice(seeds)
    steps = random_steps(rng)
    return Case(index, seed.name, steps, apply_steps(seed.text, steps))


@dataclass
class Stats:
    """Counters of a run."""

    tried: int = 0
    loaded: int = 0
    skel_error: int = 0
    failures: int = 0
    slowest: float = 0.0
    py_warnings: int = 0
    first_py_warnings: list[str] = field(default_factory=list)

    def add(self, case: Case, outcome: Outcome) -> None:
        """Count one result."""
        self.tried += 1
        self.slowest = max(self.slowest, outcome.seconds)
        for name, _ in case.steps:
            counts = self.by_mutator.setdefault(name, [0, 0])
            counts[0] += 1
            counts[1] += outcome.kind == "failure"
        if outcome.py_warning:
            self.py_warnings += 1
            if len(self.first_py_warnings) < 5:
                self.first_py_warnings.append(f"#{case.index}: {outcome.py_warning}")
        if outcome.kind == "loaded":
            self.loaded += 1
        elif outcome.kind == "skel_error":
            self.skel_error += 1
            self.by_class[outcome.error_class] = self.by_class.get(outcome.error_class, 0) + 1
        else:
            self.failures += 1

    def report(self, args: argparse.Namespace, seeds: int, elapsed: float) -> None:
        """Print the summary."""
        sample = " (sample)" if args.sample else ""
        print(f"seed {args.seed}, {args.jobs} job(s), {elapsed:.1f} s, {seeds} seed files{sample}")
        print(f"inputs tried : {self.tried} ({self.tried / max(elapsed, 1e-9):.0f}/s)")
        print(f"loaded       : {self.loaded}")
        classes = ", ".join(f"{k} {v}" for k, v in sorted(self.by_class.items()))
        print(f"SkelError    : {self.skel_error}  {classes}")
        saved = f" (saved in {args.out})" if self.failures else ""
        print(f"FAILURES     : {self.failures}{saved}")
        if self.failures:
            print("  failing inputs per mutator used: " + ", ".join(
                f"{k} {v[1]}/{v[0]}" for k, v in sorted(self.by_mutator.items()) if v[1]))
        print(f"slowest load : {self.slowest:.3f} s (bound {args.bound} s)")
        print(f"Python warnings during a load (not failures): {self.py_warnings} input(s)")
        for line in self.first_py_warnings:
            print(f"    {line}")
    by_class: dict[str, int] = field(default_factory=dict)
    by_mutator: dict[str, list[int]] = field(default_factory=dict)  # name -> [tried, failures]


_SEEDS: list[Seed] = []


def _worker_init(seeds: list[Seed]) -> None:
    _SEEDS[:] = seeds


def _run_case(args: tuple[int, int, float]) -> tuple[Case, Outcome]:
    run_seed, index, bound = args
    case = make_case(_SEEDS, run_seed, index)
    outcome = check_input(case.text, case.seed_name, via_file=has_byte_steps(case.steps),
                          bound=bound)
    if outcome.kind != "failure" and not outcome.py_warning:
        case.text = ""  # do not ship passing inputs back to the parent
    return case, outcome


def _save_failure(out: Path, run_seed: int, case: Case, outcome: Outcome) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"fail-{run_seed}-{case.index:08d}"
    (out / f"{stem}.skel").write_bytes(case.text.encode("utf-8", "surrogateescape"))
    meta = {
        "seed": run_seed,
        "index": case.index,
        "name": case.seed_name,
        "steps": case.steps,
        "error": outcome.error_class,
        "seconds": outcome.seconds,
        "detail": outcome.detail,
        "replay": f"bench/fuzz_skel.py --seed {run_seed} --replay {case.index}",
    }
    (out / f"{stem}.json").write_text(json.dumps(meta, indent=1))
    return out / f"{stem}.skel"


def _iter_results(
    args: argparse.Namespace, seeds: list[Seed]
) -> Iterator[tuple[Case, Outcome]]:
    deadline = time.monotonic() + args.seconds if args.seconds else None
    limit = args.max_inputs or None
    if not args.seconds and not limit:
        limit = 1000

    def tasks() -> Iterator[tuple[int, int, float]]:
        index = 0
        while (limit is None or index < limit) and (
            deadline is None or time.monotonic() < deadline
        ):
            yield (args.seed, index, args.bound)
            index += 1

    if args.jobs <= 1:
        _worker_init(seeds)
        for task in tasks():
            yield _run_case(task)
        return
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    with ctx.Pool(args.jobs, initializer=_worker_init, initargs=(seeds,)) as pool:
        yield from pool.imap_unordered(_run_case, tasks(), chunksize=8)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=0.0, help="run for this long")
    ap.add_argument("--max-inputs", type=int, default=0, help="stop after this many inputs")
    ap.add_argument("--seed", type=int, default=0, help="run seed (inputs are reproducible)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument("--bound", type=float, default=2.0, help="time bound per load, seconds")
    default_out = Path(tempfile.gettempdir()) / "skel-fuzz-failures"
    ap.add_argument("--out", type=Path, default=default_out,
                    help=f"directory for failing inputs (default {default_out})")
    ap.add_argument("--sample", action="store_true",
                    help="mutate only the test's sample, not the whole corpus")
    ap.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                    help="DART's SKEL corpus (default: SKEL_CORPUS; none: the bundled and"
                         " generated robots and the synthetic file)")
    ap.add_argument("--replay", type=int, default=None, metavar="INDEX",
                    help="re-run input INDEX of --seed in this process and print the result")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the fuzzer; return 1 if any input failed."""
    args = _parse_args(argv)
    corpus = corpus_folder(args.corpus)
    if corpus is None:
        seeds = bundled_seeds()
        print(f"no SKEL corpus (--corpus or SKEL_CORPUS): fuzzing {len(seeds)} seeds, the"
              " bundled and generated robots and the synthetic file"
              + (" (--sample needs the corpus)" if args.sample else ""))
    elif not corpus_available(corpus):
        print(f"bench/fuzz_skel.py: {corpus}: not a SKEL corpus (no data/skel in it)",
              file=sys.stderr)
        return 2
    else:
        seeds = sample_seeds(corpus) if args.sample else all_seeds(corpus)
    if args.replay is not None:
        case = make_case(seeds, args.seed, args.replay)
        outcome = check_input(case.text, case.seed_name, via_file=has_byte_steps(case.steps),
                              bound=args.bound)
        print(f"input {case.index}: {case.seed_name} steps={case.steps}")
        print(f"{outcome.kind} in {outcome.seconds:.3f} s: {outcome.detail}")
        return 1 if outcome.kind == "failure" else 0

    stats = Stats()
    start = last_report = time.monotonic()
    for case, outcome in _iter_results(args, seeds):
        stats.add(case, outcome)
        if outcome.kind == "failure":
            saved = _save_failure(args.out, args.seed, case, outcome)
            first = outcome.detail.strip().splitlines()[-1] if outcome.detail.strip() else ""
            print(f"FAILURE #{case.index} ({outcome.error_class}) -> {saved}: {first[:200]}",
                  flush=True)
        if time.monotonic() - last_report > 30:
            last_report = time.monotonic()
            print(f"[{last_report - start:6.0f} s] tried {stats.tried}, failures {stats.failures}",
                  flush=True)
    stats.report(args, len(seeds), time.monotonic() - start)
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
