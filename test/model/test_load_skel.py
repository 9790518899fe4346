"""What ``load_skel`` gives beyond the corpus comparison with DART.

The model is frozen and its arrays are read-only; a file and the same text given as a
string give the same numbers; every body gets the moment of its own shapes; a text
that warns or fails does so at every element that holds it; numbers are refused as
``std::stod`` refuses them; files are found and read as DART reads them; loading
leaves the process's garbage collector as it is.
"""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from skel_ros.model import SkelError, SkelValueError, load_skel, skel_parser
from skel_ros.model.inertia import moment_from_shapes
from skel_ros.model.meshes import mesh_bounds
from skel_ros.model.transforms import RIGID_IDENTITY, rigid_from_skel
from skel_ros.model.types import Box, Dof, Joint, frozen_array
from skel_ros.model.xmlread import XmlReader


def _chain_doc(n: int, mesh: str = "") -> str:
    bodies = "".join(
        f'<body name="b{i}"><transformation>0 {-0.1 * i:.2f} 0 0 0 0</transformation>'
        "<inertia><mass>0.5</mass><offset>0 -0.05 0</offset></inertia>"
        "<visualization_shape><transformation>0 -0.05 0 0.1 0 0</transformation>"
        "<geometry><box><size>0.02 0.1 0.02</size></box></geometry></visualization_shape>"
        f"{mesh if i == 0 else ''}</body>"
        for i in range(n)
    )
    joints = "".join(
        f'<joint type="revolute" name="j{i}"><parent>{"world" if i == 0 else f"b{i - 1}"}'
        f"</parent><child>b{i}</child><axis><xyz>0 0 1</xyz></axis></joint>"
        for i in range(n)
    )
    return f'<skel><world name="w"><skeleton name="s">{bodies}{joints}</skeleton></world></skel>'


def _two_body_doc(first: str, second: str) -> str:
    """Two bodies on revolute joints; ``first`` / ``second`` go inside each <body>."""
    return (
        '<skel><world name="w"><skeleton name="s">'
        f'<body name="a">{first}</body><body name="b">{second}</body>'
        '<joint type="revolute" name="ja"><parent>world</parent><child>a</child>'
        "<axis><xyz>0 0 2</xyz></axis></joint>"
        '<joint type="revolute" name="jb"><parent>a</parent><child>b</child>'
        "<axis><xyz>0 0 2</xyz></axis></joint>"
        "</skeleton></world></skel>"
    )


def _box_body(mass: str, offset: str, size: str, pose: str) -> str:
    return (
        f"<inertia><mass>{mass}</mass><offset>{offset}</offset></inertia>"
        f"<visualization_shape><transformation>{pose}</transformation>"
        f"<geometry><box><size>{size}</size></box></geometry></visualization_shape>"
        f"<collision_shape><transformation>{pose}</transformation>"
        f"<geometry><box><size>{size}</size></box></geometry></collision_shape>"
    )


# --------------------------------------------------------------------------- the model


def test_parsed_model_objects_are_frozen() -> None:
    world = load_skel(_chain_doc(2))
    joint, dof = world.skeletons[0].joints[1], world.skeletons[0].dofs[0]
    assert type(joint) is Joint
    assert type(dof) is Dof
    with pytest.raises(dataclasses.FrozenInstanceError):
        dof.damping = 1.0  # type: ignore[misc]
    assert dataclasses.replace(dof, damping=2.0).damping == 2.0


def test_parsed_arrays_are_float64_and_read_only() -> None:
    skeleton = load_skel(_chain_doc(2)).skeletons[0]
    body, joint = skeleton.bodies[1], skeleton.joints[1]
    arrays = [
        body.rest_transform, body.inertia.com, body.inertia.moment,
        body.shapes[0].transform, body.shapes[0].geometry.size,  # type: ignore[union-attr]
        joint.T_parent_to_joint, joint.T_child_to_joint, joint.axes[0],
    ]
    for array in arrays:
        assert array.dtype == np.float64
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0


def test_a_file_and_its_string_give_the_same_numbers(tmp_path: Path) -> None:
    xml = _chain_doc(5)
    path = tmp_path / "chain.skel"
    path.write_text(xml)
    from_file, from_string = load_skel(path), load_skel(xml)
    for a, b in zip(from_file.skeletons[0].bodies, from_string.skeletons[0].bodies, strict=True):
        assert a.rest_transform.tolist() == b.rest_transform.tolist()
        assert a.inertia.moment.tolist() == b.inertia.moment.tolist()


@pytest.mark.parametrize(
    ("second", "why"),
    [
        (("0.5", "0 -0.05 0", "0.02 0.1 0.02", "0 -0.05 0 0.1 0 0"), "the same"),
        (("0.7", "0 -0.05 0", "0.02 0.1 0.02", "0 -0.05 0 0.1 0 0"), "another mass"),
        (("0.5", "0 -0.05 0.1", "0.02 0.1 0.02", "0 -0.05 0 0.1 0 0"), "another COM"),
        (("0.5", "0 -0.05 0", "0.02 0.1 0.03", "0 -0.05 0 0.1 0 0"), "another box"),
        (("0.5", "0 -0.05 0", "0.02 0.1 0.02", "0 -0.05 0 0.2 0 0"), "another pose"),
        (("0.5", "0 -0.050 0", "0.02 0.1 0.02", "0 -0.05 0 0.1 0 0"), "same COM, other text"),
    ],
)
def test_each_body_gets_the_moment_of_its_own_shapes(
    second: tuple[str, str, str, str], why: str
) -> None:
    first = ("0.5", "0 -0.05 0", "0.02 0.1 0.02", "0 -0.05 0 0.1 0 0")
    world = load_skel(_two_body_doc(_box_body(*first), _box_body(*second)))
    for body, (mass, offset, size, pose) in zip(
        world.skeletons[0].bodies, (first, second), strict=True
    ):
        box = Box(frozen_array([float(v) for v in size.split()]))
        rigid = rigid_from_skel([float(v) for v in pose.split()])
        expected = moment_from_shapes(
            float(mass), [float(v) for v in offset.split()], [(box, rigid), (box, rigid)]
        )
        assert expected is not None
        assert body.inertia.moment.tolist() == expected.tolist(), why
        assert body.inertia.moment_from_shapes


def test_no_moment_from_shapes_without_mass_or_shapes() -> None:
    box = Box(frozen_array([1.0, 1.0, 1.0]))
    zero = frozen_array([0.0, 0.0, 0.0])
    assert moment_from_shapes(0.0, zero, [(box, RIGID_IDENTITY)]) is None
    assert moment_from_shapes(1.0, zero, []) is None


# --------------------------------------------------------------------------- warnings


@pytest.mark.parametrize(
    ("inner", "message", "count"),
    [  # each body has its shape texts twice (visual, collision); there are two bodies
        (_box_body("1", "0 0 0", "0 1 1", "0 0 0 0 0 0"), "box size", 4),
        (_box_body("1", "0 0 0", "1 1 1 1", "0 0 0 0 0 0"), "<size> holds 4 numbers", 4),
        (_box_body("1", "0 0 0 0", "1 1 1", "0 0 0 0 0 0"), "<offset> holds 4 numbers", 2),
        (_box_body("1", "0 0 0", "1 1 1", "0 0 0 0 0 0 0"), "<transformation> holds 7", 4),
    ],
)
def test_a_repeated_text_that_warns_warns_at_every_element(
    inner: str, message: str, count: int
) -> None:
    warned = [w for w in load_skel(_two_body_doc(inner, inner)).warnings if message in w.message]
    assert len({w.location.path for w in warned}) == count


def test_a_repeated_axis_that_warns_or_fails_does_so_every_time() -> None:
    xml = _two_body_doc("", "").replace("<xyz>0 0 2</xyz>", "<xyz>0 0 2 5</xyz>")
    warned = [w for w in load_skel(xml).warnings if "DART reads the first 3" in w.message]
    assert len({w.location.path for w in warned}) == 2
    zero = _two_body_doc("", "").replace("<xyz>0 0 2</xyz>", "<xyz>0 0 0</xyz>")
    with pytest.raises(SkelValueError, match="zero vector"):
        load_skel(zero)


# --------------------------------------------------------------------------- numbers


def test_numbers_are_refused_as_std_stod_refuses_them() -> None:
    reader = XmlReader("numbers.skel")
    a, b, c, d, e, f, g = etree.fromstring(
        "<r><a>10 1 2</a><b>1_0 1 2</b><c>1e999</c><d>nan</d><e>1,0</e><f>1</f><g>0</g></r>"
    )
    assert reader.vector(a, 3) == [10.0, 1.0, 2.0]
    with pytest.raises(SkelValueError, match="not a number"):
        reader.vector(b, 3)
    with pytest.raises(SkelValueError, match="finite"):
        reader.number(c)
    with pytest.raises(SkelValueError, match="NaN"):
        reader.number(d)
    with pytest.raises(SkelValueError, match="commas"):
        reader.number(e)
    with pytest.raises(SkelValueError, match="holds 3 values"):
        reader.number(a)
    assert reader.number(f, positive=True) == 1.0
    with pytest.raises(SkelValueError, match="must be positive"):
        reader.number(g, positive=True)
    # Digits of other scripts: Python's float() reads them, std::stod does not.
    arabic_one, fullwidth_five = etree.fromstring("<r><a>\u0661 1 2</a><b>\uff15</b></r>")
    with pytest.raises(SkelValueError, match="not a number"):
        reader.vector(arabic_one, 3)
    with pytest.raises(SkelValueError, match="not a number"):
        reader.number(fullwidth_five)


# --------------------------------------------------------------------------- files

_MESH = (
    "<collision_shape><geometry><mesh><file_name>meshes/tri.obj</file_name>"
    "<scale>1 1 1</scale></mesh></geometry></collision_shape>"
)


def test_relative_meshes_start_from_the_real_directory_of_the_file(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "meshes").mkdir(parents=True)
    (real / "meshes" / "tri.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 2 0\nf 1 2 3\n")
    (real / "robot.skel").write_text(_chain_doc(1, _MESH))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "robot.skel"
    link.symlink_to(real / "robot.skel")
    (mesh_shape,) = [
        s for s in load_skel(link).skeletons[0].bodies[0].shapes if s.geometry.kind == "mesh"
    ]
    assert mesh_shape.geometry.path == real.resolve() / "meshes" / "tri.obj"  # type: ignore[union-attr]


def test_file_errors_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(SkelError, match="is a directory"):
        load_skel(tmp_path)
    with pytest.raises(SkelError, match="cannot read file: No such file"):
        load_skel(tmp_path / "missing.skel")
    with pytest.raises(SkelError, match="not a regular file"):
        load_skel("/dev/null")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_file_whose_file_system_gives_no_size_is_read_to_its_end() -> None:
    # /proc files are regular files of size 0: an empty read would say "empty document".
    with pytest.raises(SkelError, match="not an XML file"):
        load_skel("/proc/self/status")


def test_loading_leaves_the_garbage_collector_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The collector is process-wide: switching it off while a model loads would leave
    # every other thread's garbage uncollected meanwhile, and switching it back on at the
    # end would override another thread's choice.
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "tri.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 2 0\nf 1 2 3\n")
    (tmp_path / "robot.skel").write_text(_chain_doc(1, _MESH))
    seen: list[bool] = []
    def watched(path: Path) -> tuple[np.ndarray, np.ndarray]:
        seen.append(gc.isenabled())
        return mesh_bounds(path)

    monkeypatch.setattr(skel_parser, "mesh_bounds", watched)
    was = gc.isenabled()
    try:
        gc.enable()
        load_skel(tmp_path / "robot.skel")
        assert seen == [True]
        gc.disable()
        load_skel(tmp_path / "robot.skel")
        assert seen == [True, False]
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()


def test_a_3000_body_chain_written_leaf_first_loads() -> None:
    bodies = "".join(f'<body name="b{i}"><inertia><mass>1</mass></inertia></body>'
                     for i in range(3000))
    joints = "".join(
        f'<joint type="revolute" name="j{i}"><parent>{"world" if i == 0 else f"b{i - 1}"}'
        f"</parent><child>b{i}</child><axis><xyz>0 0 1</xyz></axis></joint>"
        for i in reversed(range(3000)))
    world = load_skel(f'<skel><world name="w"><skeleton name="s">{bodies}{joints}'
                      "</skeleton></world></skel>")
    skel = world.skeletons[0]
    assert [j.name for j in skel.joints[:2]] == ["j0", "j1"]  # DART's order: parents first
    assert skel.num_dofs == 3000


def test_a_negative_mass_is_refused_where_dart_only_warns(tmp_path: Path) -> None:
    """A deliberate difference from DART (docs/model.md, "Negative mass")."""
    body = _box_body("-5", "0 0 0", "0.1 0.2 0.3", "0 0 0 0 0 0")
    path = tmp_path / "negmass.skel"
    path.write_text(_two_body_doc(body, _box_body("1", "0 0 0", "0.1 0.2 0.3", "0 0 0 0 0 0"))
                    .replace("<inertia>", "\n<inertia>", 1))
    dartpy = pytest.importorskip("dartpy")
    dart = dartpy.utils.SkelParser.readWorld(f"file://{path}")
    assert dart.getSkeleton(0).getBodyNode(0).getMass() == -5.0  # DART builds it
    with pytest.raises(SkelValueError) as info:
        load_skel(path)
    assert "<mass> must not be negative" in info.value.reason
    assert "DART 6.20 builds such a body with only a warning" in info.value.hint
    assert info.value.location.line == 2
    assert info.value.location.path.endswith("body[@name='a']/inertia/mass")
