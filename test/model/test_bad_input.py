"""Bad input: every file DART rejects, every crash / hang / abort of skel-semantics §8.

``load_skel`` must raise a ``SkelError`` subclass for each of them (never another
exception, never a crash or hang), whose message names the file, the line and the
element path, with a hint where one helps. Input that DART loads but almost surely
not as the author meant loads here too, with a warning carrying file:line.

Also here: one regression case for each crash the fuzzer (``bench/fuzz_skel.py``)
found in the parser.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from corpus_data import CORPUS, requires_corpus
from lxml import etree

from skel_ros.model import (
    JointType,
    SkelError,
    SkelLegacyFormatError,
    SkelMissingElementError,
    SkelReferenceError,
    SkelSyntaxError,
    SkelUnsupportedError,
    SkelValueError,
    World,
    load_skel,
    meshes,
)

if TYPE_CHECKING:
    import os

NAME = "bad_input.skel"  # the name given to every XML string, checked in every message


# --------------------------------------------------------------------------- helpers


def doc(inner: str, *, skeleton_attrs: str = ' name="s"') -> str:
    """A SKEL document with ``inner`` as the content of one skeleton (line 5 onwards)."""
    return f"""<?xml version="1.0"?>
<skel version="1.0">
  <world name="w">
    <skeleton{skeleton_attrs}>
{inner}
    </skeleton>
  </world>
</skel>
"""


def line_of(text: str, needle: str) -> int:
    """1-based line of the first occurrence of ``needle`` in ``text``."""
    index = text.index(needle)
    return text.count("\n", 0, index) + 1


def raises(source: str | os.PathLike[str], name: str | None = NAME) -> SkelError:
    """Load ``source`` and return the SkelError it raises (any other outcome fails)."""
    with pytest.raises(SkelError) as info:
        load_skel(source, name=name)
    exc = info.value
    # The message is "<file>:<line>: <path>: <reason> (hint: ...)", built from the location.
    assert str(exc).startswith(str(exc.location))
    assert exc.reason in str(exc)
    assert "internal error" not in exc.reason, "load_skel's safety net caught a bug"
    assert exc.__cause__ is None or isinstance(exc.__cause__, SkelError)
    return exc


def body(name: str = "b", content: str = "") -> str:
    return f'      <body name="{name}">\n{content}      </body>\n'


def joint(jtype: str = "revolute", *, name: str = "j", parent: str = "world", child: str = "b",
          content: str = "", attrs: str = "") -> str:
    axis = "        <axis><xyz>0 0 1</xyz></axis>\n" if jtype == "revolute" else ""
    return (
        f'      <joint type="{jtype}" name="{name}"{attrs}>\n'
        f"        <parent>{parent}</parent>\n"
        f"        <child>{child}</child>\n"
        f"{axis}{content}"
        "      </joint>\n"
    )


SPHERE = "<geometry><sphere><radius>0.1</radius></sphere></geometry>"


# --------------------------------------------------------------------------- DART's failures


def _dart_failures() -> dict[str, str]:
    path = CORPUS / "reference" / "_failures.json"
    return json.loads(path.read_text()) if path.is_file() else {}


DART_FAILURES = _dart_failures()
LEGACY = sorted(k for k in DART_FAILURES if k.startswith("data/skel_old/"))
SOFT_NO_FRAGS = sorted(k for k in DART_FAILURES if k not in LEGACY)


@requires_corpus
def test_failure_list_is_what_we_expect() -> None:
    # Guards the parametrisations below against silently testing nothing.
    assert len(LEGACY) == 22
    assert [Path(k).name for k in SOFT_NO_FRAGS] == [
        "test_double_pendulum.skel", "test_single_body.skel", "test_single_pendulum.skel",
    ]
    assert all("frags" in DART_FAILURES[k] for k in SOFT_NO_FRAGS)


@requires_corpus
@pytest.mark.parametrize("rel", LEGACY)
def test_legacy_file_is_rejected_with_a_hint(rel: str) -> None:
    path = CORPUS / rel
    exc = raises(path, name=None)
    assert type(exc) is SkelLegacyFormatError
    assert exc.location.file == str(path)
    assert exc.location.line == 1
    assert str(exc).startswith(f"{path}:1: ")
    assert "legacy" in exc.hint
    assert "dofs" in exc.hint
    assert "<skel>" in exc.hint  # says what to convert it to


@requires_corpus
@pytest.mark.parametrize("rel", SOFT_NO_FRAGS)
def test_soft_box_without_frags_is_rejected(rel: str) -> None:
    path = CORPUS / rel
    exc = raises(path, name=None)
    assert type(exc) is SkelMissingElementError
    assert "<frags>" in exc.reason
    assert "frags" in exc.hint
    # The first soft box of the file, where DART stops too.
    box = etree.parse(str(path)).xpath("//body/soft_shape/geometry/box")[0]
    assert exc.location.line == box.sourceline
    assert exc.location.path.endswith("/soft_shape/geometry/box")
    assert "/body[@name='" in exc.location.path
    assert str(exc).startswith(f"{path}:{box.sourceline}: /skel/world")


@requires_corpus
def test_every_loadable_corpus_file_still_loads() -> None:
    # The bad-input checks must not reject anything DART loads.
    loadable = [CORPUS / p["source"] for p in (
        json.loads(f.read_text()) for f in sorted((CORPUS / "reference").rglob("*.skel.json"))
    )]
    assert loadable
    for path in loadable:
        assert isinstance(load_skel(path), World), path


# --------------------------------------------------------------------------- §8 cases


@dataclass(frozen=True)
class Bad:
    """An XML string DART crashes, hangs or aborts on, and the error we expect.

    ``at`` is a piece of the XML whose line the error must report, ``path`` the end
    of the element path, ``reason`` / ``hint`` pieces of the message and hint
    (``hint=None``: no hint is required).
    """

    xml: str
    error: type[SkelError]
    at: str
    path: str
    reason: str
    hint: str | None = None


BAD: dict[str, Bad] = {
    "unattached body with shapes": Bad(
        doc(body("b", f"        <visualization_shape>{SPHERE}</visualization_shape>\n")
            + body("c") + joint(child="c")),
        SkelUnsupportedError, '<body name="b">', "/skeleton[@name='s']/body[@name='b']",
        "not attached by any joint", "crashes",
    ),
    "unattached body with mass-only inertia": Bad(
        doc(body("b", "        <inertia><mass>2</mass></inertia>\n")),
        SkelUnsupportedError, '<body name="b">', "/body[@name='b']",
        "not attached by any joint", "attach it with a joint",
    ),
    "mesh that cannot be loaded": Bad(
        doc(body("b", "        <visualization_shape><geometry>\n"
                      "          <mesh><file_name>no_such_mesh.obj</file_name>"
                      "<scale>1 1 1</scale></mesh>\n"
                      "        </geometry></visualization_shape>\n") + joint()),
        SkelUnsupportedError, "<mesh>", "/body[@name='b']/visualization_shape/geometry/mesh",
        "no_such_mesh.obj", "mesh cannot be loaded",
    ),
    "unknown geometry torus": Bad(
        doc(body("b", "        <collision_shape>\n"
                      "          <geometry><torus><radius>1</radius></torus></geometry>\n"
                      "        </collision_shape>\n") + joint()),
        SkelUnsupportedError, "<geometry><torus>", "/body[@name='b']/collision_shape/geometry",
        "<torus>", "unknown geometry",
    ),
    "shape without geometry": Bad(
        doc(body("b", "        <visualization_shape>\n"
                      "          <transformation>0 0 0 0 0 0</transformation>\n"
                      "        </visualization_shape>\n") + joint()),
        SkelMissingElementError, "<visualization_shape>",
        "/body[@name='b']/visualization_shape", "<geometry>", "without geometry",
    ),
    "self-parented joint": Bad(
        doc(body("b") + joint(parent="b", child="b")),
        SkelReferenceError, '<joint type="revolute" name="j">',
        "/skeleton[@name='s']/joint[@name='j']", "both parent and child", "hangs",
    ),
    "joint loop between two bodies": Bad(
        doc(body("a") + body("b") + joint(name="ja", parent="b", child="a")
            + joint(name="jb", parent="a", child="b")),
        SkelReferenceError, '<joint type="revolute" name="ja">', "/joint[@name='ja']",
        "loop", "one path to the world",
    ),
    "inertia without mass": Bad(
        doc(body("b", "        <inertia>\n          <offset>0 0 0</offset>\n"
                      "        </inertia>\n") + joint()),
        SkelMissingElementError, "<inertia>", "/body[@name='b']/inertia", "<mass>", "aborts",
    ),
    "moment of inertia without ixz": Bad(
        doc(body("b", "        <inertia>\n          <mass>1</mass>\n"
                      "          <moment_of_inertia>\n"
                      "            <ixx>1</ixx><iyy>1</iyy><izz>1</izz><ixy>0</ixy><iyz>0</iyz>\n"
                      "          </moment_of_inertia>\n        </inertia>\n") + joint()),
        SkelMissingElementError, "<moment_of_inertia>", "/inertia/moment_of_inertia", "<ixz>",
    ),
    "cylinder with length instead of height": Bad(
        doc(body("b", "        <collision_shape><geometry>\n"
                      "          <cylinder>\n            <radius>0.1</radius>\n"
                      "            <length>1</length>\n          </cylinder>\n"
                      "        </geometry></collision_shape>\n") + joint()),
        SkelMissingElementError, "<cylinder>", "/collision_shape/geometry/cylinder",
        "<height>", "<height>, not <length>",
    ),
    "mesh without scale": Bad(
        doc(body("b", "        <visualization_shape><geometry>\n"
                      "          <mesh>\n            <file_name>m.obj</file_name>\n"
                      "          </mesh>\n        </geometry></visualization_shape>\n")
            + joint()),
        SkelMissingElementError, "<mesh>", "/visualization_shape/geometry/mesh", "<scale>",
        "<scale>",
    ),
    "euler joint without axis_order": Bad(
        doc(body("b") + joint("euler", content="        <init_pos>0 0 0</init_pos>\n")),
        SkelMissingElementError, '<joint type="euler"', "/joint[@name='j']", "<axis_order>",
        "xyz",
    ),
    "non-numeric number": Bad(
        doc(body("b", "        <inertia>\n          <mass>heavy</mass>\n        </inertia>\n")
            + joint()),
        SkelValueError, "<mass>heavy", "/body[@name='b']/inertia/mass", "'heavy' is not a number",
    ),
    "commas in a vector": Bad(
        doc(body("b", "        <transformation>0, 0, 1, 0, 0, 0</transformation>\n") + joint()),
        SkelValueError, "<transformation>0,", "/body[@name='b']/transformation", "commas",
        "whitespace",
    ),
    "transformation with 3 numbers": Bad(
        doc(body("b") + joint(content="        <transformation>0 0 1</transformation>\n")),
        SkelValueError, "<transformation>0 0 1<", "/joint[@name='j']/transformation",
        "3 number(s) where 6 are required",
    ),
    "transformation with 5 numbers": Bad(
        doc(body("b", "        <transformation>0 0 1 0 0</transformation>\n") + joint()),
        SkelValueError, "<transformation>0 0 1 0 0<", "/body[@name='b']/transformation",
        "5 number(s) where 6 are required",
    ),
    "scalar init_pos for a ball joint": Bad(
        doc(body("b") + joint("ball", content="        <init_pos>0.5</init_pos>\n")),
        SkelValueError, "<init_pos>", "/joint[@name='j']/init_pos", "ball joint has 3 DOFs",
        "undefined",
    ),
    "collidable true": Bad(
        doc(body("b", f"        <collision_shape>{SPHERE}\n"
                      "          <collidable>true</collidable>\n"
                      "        </collision_shape>\n") + joint()),
        SkelValueError, "<collidable>", "/collision_shape/collidable", "'true'", "use 1 or 0",
    ),
    "empty child": Bad(
        doc(body("b") + joint(child="")),
        SkelValueError, "<child></child>", "/joint[@name='j']/child", "<child> is empty",
    ),
    "malformed XML": Bad(
        doc(body("b") + '      <joint type="weld" name="j">\n'
            "        <parent>world</parent>\n        <child>b</chld>\n      </joint>\n"),
        SkelSyntaxError, "</chld>", "", "malformed XML",
    ),
    "root is not skel": Bad(
        '<?xml version="1.0"?>\n<robot name="r">\n  <link name="l"/>\n</robot>\n',
        SkelSyntaxError, "<robot", "/robot[@name='r']", "not <skel>", "<skel><world>",
    ),
    "no world": Bad(
        '<?xml version="1.0"?>\n<skel version="1.0">\n  <skeleton name="s"/>\n</skel>\n',
        SkelMissingElementError, "<skel version", "/skel", "no <world>", "wrap the <skeleton>",
    ),
    "empty string": Bad("", SkelSyntaxError, "", "", "empty", "<skel>"),
    "blank string": Bad(" \n\t\n", SkelSyntaxError, "", "", "empty"),
}


@pytest.mark.parametrize("case", BAD.values(), ids=BAD.keys())
def test_crash_case_raises_located_error(case: Bad) -> None:
    exc = raises(case.xml)
    assert type(exc) is case.error, f"{type(exc).__name__}: {exc}"
    assert exc.location.file == NAME
    line = line_of(case.xml, case.at) if case.at else 1
    assert exc.location.line == line, str(exc)
    assert str(exc).startswith(f"{NAME}:{line}: ")
    if case.path:
        assert exc.location.path.startswith("/")
        assert exc.location.path.endswith(case.path), exc.location.path
        assert f"{NAME}:{line}: {exc.location.path}: " in str(exc)
    assert case.reason in exc.reason, exc.reason
    if case.hint is not None:
        assert case.hint in exc.hint, exc.hint
        assert f"(hint: {exc.hint})" in str(exc)


def test_truncated_document_reports_the_end() -> None:
    xml = '<?xml version="1.0"?>\n<skel>\n  <world>\n    <skeleton name="s">\n      <bo'
    exc = raises(xml)
    assert type(exc) is SkelSyntaxError
    assert exc.location.line == 5
    assert str(exc).startswith(f"{NAME}:5: malformed XML")


def test_malformed_xml_reports_the_line_of_the_syntax_error() -> None:
    xml = doc(body("b") + joint()).replace("<child>b</child>", "<child>b</child></oops>")
    exc = raises(xml)
    assert type(exc) is SkelSyntaxError
    assert exc.location.line == line_of(xml, "</oops>")
    assert "oops" in exc.reason


# --------------------------------------------------------------------------- files


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.skel"
    path.write_bytes(b"")
    exc = raises(path, name=None)
    assert type(exc) is SkelSyntaxError
    assert str(exc).startswith(f"{path}:1: ")
    assert "empty" in exc.reason


def test_binary_garbage_is_a_syntax_error_not_legacy(tmp_path: Path) -> None:
    path = tmp_path / "garbage.skel"
    path.write_bytes(bytes(range(256)) * 16)  # holds "{" but is no legacy file
    exc = raises(path, name=None)
    assert type(exc) is SkelSyntaxError
    assert exc.location.file == str(path)
    assert exc.location.line == 1
    assert "not an XML file" in exc.reason


def test_json_file_is_not_called_legacy(tmp_path: Path) -> None:
    path = tmp_path / "robot.skel"
    path.write_text('{"dofs": []}\n')
    exc = raises(path, name=None)
    assert type(exc) is SkelSyntaxError


def test_binary_garbage_after_a_tag(tmp_path: Path) -> None:
    path = tmp_path / "garbage.skel"
    path.write_bytes(b"<skel>" + bytes(range(256)) * 4)
    exc = raises(path, name=None)
    assert type(exc) is SkelSyntaxError
    assert exc.location.file == str(path)
    assert exc.location.line >= 1
    assert "malformed XML" in exc.reason


def test_directory(tmp_path: Path) -> None:
    exc = raises(tmp_path, name=None)
    assert type(exc) is SkelSyntaxError
    assert exc.location.file == str(tmp_path)
    assert "directory" in exc.reason


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.skel"
    exc = raises(path, name=None)
    assert type(exc) is SkelSyntaxError
    assert exc.location.file == str(path)
    assert str(exc).startswith(str(path))
    assert "No such file" in exc.reason


def test_missing_file_given_as_string(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.skel")
    exc = raises(path, name=None)
    assert type(exc) is SkelSyntaxError
    assert exc.location.file == path


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_device_file_is_refused_without_reading_it() -> None:
    # Regression: /dev/zero was read until memory ran out.
    exc = raises("/dev/zero", name=None)
    assert type(exc) is SkelSyntaxError
    assert "not a regular file" in exc.reason


def test_legacy_text_given_as_file_but_named(tmp_path: Path) -> None:
    path = tmp_path / "old.skel"
    path.write_text("dofs {\n  root<t-X> { 0.0, -10.0, 10.0 }\n}\n")
    exc = raises(path, name="my-robot.skel")
    assert type(exc) is SkelLegacyFormatError
    assert exc.location.file == "my-robot.skel"
    assert "legacy" in exc.hint


# --------------------------------------------------------------------------- meshes


def _mesh_doc(file_name: str, scale: str = "1 1 1") -> str:
    return doc(body("b", "        <visualization_shape><geometry>\n"
                         f"          <mesh><file_name>{file_name}</file_name>"
                         f"<scale>{scale}</scale></mesh>\n"
                         "        </geometry></visualization_shape>\n") + joint())


@pytest.mark.parametrize(
    ("file_name", "content", "reason"),
    [
        ("bad.obj", b"v 1 2\nf 1 2 3\n", "bad OBJ vertex"),
        ("empty.obj", b"# nothing\n", "no vertices"),
        ("nan.obj", b"v nan 0 0\n", "non-finite"),
        ("mesh.ply", b"ply\n", "unsupported mesh format"),
        ("broken.dae", b"<COLLADA><library_geometries>", "not well-formed"),
        ("subdir", None, "not a regular file"),
        # Fuzzer find (meshes.py): a short ASCII STL vertex line raised numpy's ValueError.
        ("short.stl", b"solid x\n  vertex 1 2\nendsolid x\n", "bad STL vertex line"),
    ],
)
def test_mesh_that_cannot_be_loaded(tmp_path: Path, file_name: str, content: bytes | None,
                                    reason: str) -> None:
    if content is None:
        (tmp_path / file_name).mkdir()
    else:
        (tmp_path / file_name).write_bytes(content)
    xml = _mesh_doc(file_name)
    skel = str(tmp_path / "robot.skel")
    exc = raises(xml, name=skel)
    assert type(exc) is SkelUnsupportedError
    assert exc.location.file == skel
    assert exc.location.line == line_of(xml, "<mesh>")
    assert exc.location.path.endswith("/geometry/mesh")
    assert reason in exc.reason
    assert "crashes" in exc.hint


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_mesh_on_a_device_is_refused() -> None:
    # Regression: a mesh path naming /dev/zero was read until memory ran out.
    exc = raises(_mesh_doc("/dev/zero"))
    assert type(exc) is SkelUnsupportedError
    assert "not a regular file" in exc.reason


def test_deeply_nested_collada_nodes_load(tmp_path: Path) -> None:
    # Regression: nodes were visited recursively, so 1,500 nested <node>s (valid XML)
    # raised RecursionError, reported as "document is nested too deeply" for the .skel.
    depth = 1500
    (tmp_path / "deep.dae").write_text(
        '<COLLADA><library_geometries><geometry id="g"><mesh><source id="s">'
        "<float_array>0 0 0 1 2 3</float_array></source>"
        '<vertices><input semantic="POSITION" source="#s"/></vertices></mesh></geometry>'
        "</library_geometries><library_visual_scenes><visual_scene>"
        + "<node><translate>1 0 0</translate>" * depth + '<instance_geometry url="#g"/>'
        + "</node>" * depth + "</visual_scene></library_visual_scenes></COLLADA>"
    )
    world = load_skel(_mesh_doc("deep.dae"), name=str(tmp_path / "robot.skel"))
    lo, hi = world.skeletons[0].bodies[0].shapes[0].geometry.bounds
    assert list(lo) == [depth, 0, 0]
    assert list(hi) == [depth + 1, 2, 3]


def test_relative_mesh_in_an_unnamed_string() -> None:
    xml = _mesh_doc("m.obj")
    exc = raises(xml, name=None)
    assert type(exc) is SkelUnsupportedError
    assert exc.location.file == "<string>"
    assert "name=" in exc.hint


def test_mesh_with_a_url_scheme() -> None:
    exc = raises(_mesh_doc("package://robot/m.obj"))
    assert type(exc) is SkelUnsupportedError
    assert "scheme" in exc.reason


# --------------------------------------------------------------------------- warnings


@dataclass(frozen=True)
class Warned:
    """An XML string that loads, with the warning we expect (``at``: see ``Bad``)."""

    xml: str
    at: str
    path: str
    message: str


def _axis_with(content: str) -> str:
    return f"        <axis>\n          <xyz>0 0 1</xyz>\n{content}        </axis>\n"


WARNED: dict[str, Warned] = {
    "sprint_stiffness": Warned(
        doc(body("b") + joint("prismatic", content=_axis_with(
            "          <dynamics>\n            <sprint_stiffness>5</sprint_stiffness>\n"
            "          </dynamics>\n"))),
        "<sprint_stiffness>", "/axis/dynamics/sprint_stiffness", "did you mean <spring_stiffness>",
    ),
    "immobile": Warned(
        doc("      <immobile>1</immobile>\n" + body("b") + joint("free")),
        "<immobile>", "/skeleton[@name='s']/immobile", "<mobile>false</mobile>",
    ),
    "actuator torque": Warned(
        doc(body("b") + joint(attrs=' actuator="torque"')),
        'actuator="torque"', "/joint[@name='j']", "'torque' is spelled 'force'",
    ),
    "limit effort": Warned(
        doc(body("b") + joint("prismatic", content=_axis_with(
            "          <limit>\n            <lower>-1</lower>\n"
            "            <effort>5</effort>\n          </limit>\n"))),
        "<effort>", "/axis/limit/effort", "<limit><effort> is ignored by DART",
    ),
    "unknown tag": Warned(
        doc(body("b", "        <foo>1</foo>\n") + joint("free")),
        "<foo>", "/body[@name='b']/foo", "unknown element <foo>",
    ),
    "screw joint": Warned(
        doc(body("b") + joint("screw", content=_axis_with("          <pitch>0.5</pitch>\n"))),
        '<joint type="screw"', "/joint[@name='j']", "drops this joint",
    ),
    "translational2d joint": Warned(
        doc(body("b") + joint("translational2d", content='        <plane type="yz"/>\n')),
        '<joint type="translational2d"', "/joint[@name='j']", "drops this joint",
    ),
    "unknown joint type": Warned(
        doc(body("a") + body("b") + joint("weld", name="ja", child="a")
            + joint("hinge", name="jb", parent="a", child="b")),
        '<joint type="hinge"', "/joint[@name='jb']", "unknown joint type 'hinge'",
    ),
    "duplicate joint name": Warned(
        doc(body("a") + body("b") + joint(name="J", child="a")
            + joint(name="J", parent="a", child="b")),
        '<joint type="revolute" name="J">\n        <parent>a', "/joint[@name='J']",
        "renames it 'J(1)'",
    ),
}


@pytest.mark.parametrize("case", WARNED.values(), ids=WARNED.keys())
def test_warning_case_loads_with_a_located_warning(case: Warned) -> None:
    world = load_skel(case.xml, name=NAME)
    line = line_of(case.xml, case.at)
    matching = [w for w in world.warnings if case.message in w.message]
    assert len(matching) == 1, [str(w) for w in world.warnings]
    warning = matching[0]
    assert warning.location.file == NAME
    assert warning.location.line == line, str(warning)
    assert warning.location.path.endswith(case.path), warning.location.path
    assert str(warning).startswith(f"{NAME}:{line}: {warning.location.path}: warning: ")


@pytest.mark.parametrize(
    ("jtype", "dofs"), [("screw", ("j",)), ("translational2d", ("j_y", "j_z"))]
)
def test_joint_types_dart_cannot_build_are_kept(jtype: str, dofs: tuple[str, ...]) -> None:
    content = _axis_with("") if jtype == "screw" else '        <plane type="yz"/>\n'
    world = load_skel(doc(body("b") + joint(jtype, content=content)), name=NAME)
    (j,) = world.skeletons[0].joints
    assert j.type is JointType(jtype)
    assert not j.type.dart_builds
    assert j.dofs == dofs
    assert any("DART 6 reads this type but cannot build it" in w.message for w in world.warnings)


def test_unknown_joint_type_is_dropped() -> None:
    world = load_skel(WARNED["unknown joint type"].xml, name=NAME)
    skel = world.skeletons[0]
    assert [j.name for j in skel.joints] == ["ja"]
    assert [b.name for b in skel.bodies] == ["a"]


def test_duplicate_joint_names_become_numbered() -> None:
    world = load_skel(WARNED["duplicate joint name"].xml, name=NAME)
    skel = world.skeletons[0]
    assert [j.name for j in skel.joints] == ["J", "J(1)"]
    assert [d.name for d in skel.dofs] == ["J", "J(1)"]


def test_torque_actuator_stays_force() -> None:
    world = load_skel(WARNED["actuator torque"].xml, name=NAME)
    assert world.skeletons[0].joints[0].actuator.value == "force"


def test_sprint_stiffness_is_not_read() -> None:
    world = load_skel(WARNED["sprint_stiffness"].xml, name=NAME)
    assert world.skeletons[0].dofs[0].spring_stiffness == 0.0


def test_immobile_does_not_make_the_skeleton_immobile() -> None:
    world = load_skel(WARNED["immobile"].xml, name=NAME)
    assert world.skeletons[0].mobile is True


# --------------------------------------------------------------------------- DOF names


def test_planar_dof_names_use_default_and_are_made_unique() -> None:
    xml = doc(body("a") + body("b") + body("c")
              + joint("planar", name="p", child="a", content='        <plane type="xy"/>\n')
              + joint("planar", name="q", parent="a", child="b",
                      content='        <plane type="zx"/>\n')
              + joint("planar", name="r", parent="b", child="c",
                      content='        <plane type="yz"/>\n'))
    skel = load_skel(xml, name=NAME).skeletons[0]
    assert [d.name for d in skel.dofs] == [
        "p_x", "p_y", "default", "q_z", "q_x", "default(1)", "r_y", "r_z", "default(2)",
    ]
    assert skel.joint("q").dofs == ("q_z", "q_x", "default(1)")


def test_euler_zyx_dof_names() -> None:
    xml = doc(body("a") + body("b")
              + joint("euler", name="e", child="a",
                      content="        <axis_order>zyx</axis_order>\n")
              + joint("euler", name="f", parent="a", child="b",
                      content="        <axis_order>xyz</axis_order>\n"))
    skel = load_skel(xml, name=NAME).skeletons[0]
    assert [d.name for d in skel.dofs] == ["e_z", "e_y", "e_x", "f_x", "f_y", "f_z"]


# --------------------------------------------------------------------------- fuzzer finds

# Each of these raised something other than SkelError (wrapped by load_skel's
# "internal error" safety net) or never finished, before the fix in the parser.

def _dof_doc(jtype: str, dof: str) -> str:
    return doc(body("b") + joint(jtype, content=f"        {dof}\n"))


@pytest.mark.parametrize(
    ("xml", "error", "at", "reason"),
    [
        pytest.param(_dof_doc("revolute", '<dof local_index="²"/>'), None, "<dof", "not an integer",
                     id="local_index superscript digit (ValueError from int)"),
        pytest.param(_dof_doc("ball", '<dof local_index="+-1"/>'), None, "<dof", "not an integer",
                     id="local_index +-1 (ValueError from int)"),
        pytest.param(_dof_doc("ball", f'<dof local_index="{"9" * 5000}"/>'), SkelValueError,
                     "<dof", "out of range", id="local_index 5000 digits (int limit)"),
        pytest.param(_dof_doc("weld", '<dof name="x"/>'), None, "<dof", "has no DOFs",
                     id="dof of a weld joint (IndexError)"),
    ],
)
def test_fuzz_regression_dof(xml: str, error: type[SkelError] | None, at: str,
                             reason: str) -> None:
    line = line_of(xml, at)
    if error is None:
        world = load_skel(xml, name=NAME)
        assert any(reason in w.message and w.location.line == line for w in world.warnings), [
            str(w) for w in world.warnings]
    else:
        exc = raises(xml)
        assert type(exc) is error
        assert exc.location.line == line
        assert exc.location.path.endswith("/joint[@name='j']/dof")
        assert reason in exc.reason


def _soft_box(frags: str) -> str:
    return doc(body("b", "        <soft_shape>\n          <total_mass>1</total_mass>\n"
                         "          <geometry><box><size>1 1 1</size>\n"
                         f"            <frags>{frags}</frags>\n"
                         "          </box></geometry>\n        </soft_shape>\n") + joint("free"))


def _mass_only(shape: str, transform: str = "") -> str:
    return doc(body("b", f"{transform}        <inertia><mass>1</mass></inertia>\n"
                         f"        <visualization_shape><geometry>{shape}</geometry>"
                         "</visualization_shape>\n") + joint("free"))


OVERFLOW_CASES = {
    "soft box frags with 5000 digits (int limit)": (
        _soft_box("9" * 5000 + " 1 1"), "<frags>", "/soft_shape/geometry/box/frags",
        "not a non-negative integer"),
    "box 1e308 with mass-only inertia (OverflowError)": (
        _mass_only("<box><size>1e308 1e308 1e308</size></box>"), '<body name="b">',
        "/body[@name='b']", "moment of inertia computed from the shapes"),
    "sphere radius 1e200 with mass-only inertia (OverflowError)": (
        _mass_only("<sphere><radius>1e200</radius></sphere>"), '<body name="b">',
        "/body[@name='b']", "moment of inertia computed from the shapes"),
    "capsule of zero volume by underflow (ZeroDivisionError)": (
        _mass_only("<capsule><radius>1e-320</radius><height>1e-320</height></capsule>"),
        '<body name="b">', "/body[@name='b']", "moment of inertia computed from the shapes"),
    "body pose overflowing with the skeleton frame": (
        doc("      <transformation>1e308 0 0 0 0 0</transformation>\n"
            + body("b", "        <transformation>1e308 0 0 0 0 0</transformation>\n")
            + joint("free")),
        '<body name="b">', "/body[@name='b']", "rest pose of body 'b'"),
    "joint transform overflowing": (
        doc(body("b", "        <transformation>1e308 0 0 0 0 0</transformation>\n")
            + joint("free", content="        <transformation>1e308 0 0 0 0 0</transformation>\n")),
        '<joint type="free"', "/joint[@name='j']", "parent-side transform of joint 'j'"),
    "axis too large to normalise": (
        doc(body("b") + joint("prismatic", content="        <axis><xyz>1e308 1e308 0</xyz>"
                                                   "</axis>\n")),
        "<axis>", "/joint[@name='j']/axis", "too large to normalise"),
    "plane normal too large to normalise": (
        _mass_only("<plane><normal>1e308 1e308 0</normal><offset>0</offset></plane>"),
        "<plane>", "/geometry/plane", "too large to normalise"),
    "unicode digits are not numbers": (
        doc(body("b", "        <inertia><mass>\u0661</mass></inertia>\n") + joint("free")),
        "<mass>", "/inertia/mass", "is not a number"),
}


@pytest.mark.parametrize("case", OVERFLOW_CASES.values(), ids=OVERFLOW_CASES.keys())
def test_fuzz_regression_extreme_values(case: tuple[str, str, str, str]) -> None:
    xml, at, path, reason = case
    exc = raises(xml)
    assert type(exc) is SkelValueError, f"{type(exc).__name__}: {exc}"
    assert exc.location.line == line_of(xml, at)
    assert exc.location.path.endswith(path), exc.location.path
    assert reason in exc.reason


def test_fuzz_regression_mesh_scale_overflow(tmp_path: Path) -> None:
    (tmp_path / "m.obj").write_text("v 0 0 0\nv 10 10 10\n")
    xml = _mesh_doc("m.obj", scale="1e308 1 1")
    exc = raises(xml, name=str(tmp_path / "robot.skel"))
    assert type(exc) is SkelValueError
    assert exc.location.line == line_of(xml, "<mesh>")
    assert "scaled bounds of mesh 'm.obj'" in exc.reason


def test_fuzz_regression_string_with_nul_is_not_a_path() -> None:
    # A non-XML string is taken for a path; a NUL in it raised ValueError from os.stat.
    exc = raises("dofs {\x00}", name=None)
    assert type(exc) is SkelSyntaxError
    assert "null byte" in exc.reason


# --------------------------------------------------------------------------- time bound

# Found while checking the fuzzer's time bound: the build order was computed by
# literally restarting from the earliest joint after each one (quadratic, and cubic
# with the loop check), so a 3,000-joint chain written leaf first took ~50 s;
# repeated names were numbered by counting from (1) every time.


def _leaf_first_chain(n: int, joint_name: str | None = None) -> str:
    bodies = "".join(f'      <body name="b{i}"/>\n' for i in range(n))
    joints = "".join(
        joint(name=joint_name or f"j{i}", parent="world" if i == 0 else f"b{i - 1}",
              child=f"b{i}")
        for i in reversed(range(n))
    )
    return doc(bodies + joints)


@pytest.mark.parametrize("joint_name", [None, "J"], ids=["distinct names", "one name"])
def test_long_chain_written_leaf_first_loads_quickly(joint_name: str | None) -> None:
    n = 3000
    xml = _leaf_first_chain(n, joint_name)
    # No wall-clock budget (the machine is shared): the CPU time of this process, against
    # the same chain written root first, measured here. Linear work gives a ratio near 1;
    # the old quadratic walk gave hundreds.
    root_first = doc("".join(f'      <body name="b{i}"/>\n' for i in range(n)) + "".join(
        joint(name=joint_name or f"j{i}", parent="world" if i == 0 else f"b{i - 1}",
              child=f"b{i}") for i in range(n)))
    start = time.process_time()
    load_skel(root_first, name=NAME)
    reference = time.process_time() - start
    start = time.process_time()
    world = load_skel(xml, name=NAME)
    elapsed = time.process_time() - start
    skel = world.skeletons[0]
    assert [b.name for b in skel.bodies] == [f"b{i}" for i in range(n)]  # root first
    if joint_name:
        assert [j.name for j in skel.joints[:3]] == ["J", "J(1)", "J(2)"]
        assert skel.joints[-1].name == f"J({n - 1})"
    assert elapsed < 5.0 * reference, f"{elapsed:.2f} s of CPU against {reference:.2f} s"


@requires_corpus
def test_one_mesh_in_many_shapes_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each shape used to parse the 1.3 MB COLLADA file again (~20 ms each).
    shape = ("<visualization_shape><geometry><mesh><file_name>head.dae</file_name>"
             "<scale>1 1 1</scale></mesh></geometry></visualization_shape>\n")
    xml = doc(body("b", "        <inertia><mass>1</mass></inertia>\n" + shape * 200)
              + joint("free"))
    meshes.clear_mesh_cache()
    reads: list[Path] = []
    read = meshes._read_bounds

    def counting(path: Path) -> object:
        reads.append(path)
        return read(path)

    monkeypatch.setattr(meshes, "_read_bounds", counting)
    world = load_skel(xml, name=str(CORPUS / "data" / "skel" / "kima" / "many.skel"))
    shapes = world.skeletons[0].bodies[0].shapes
    assert len(shapes) == 200
    assert all((s.geometry.bounds[0] == shapes[0].geometry.bounds[0]).all() for s in shapes)
    assert len(reads) == 1, reads
