"""The shortcuts the SKEL parser takes for speed build exactly what the plain code builds.

Generated constructors for the frozen model classes, arrays over packed bytes,
the one-pass moment of inertia, the per-document number memo, the mesh base
directory found on first use and the garbage collector paused while loading.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import random
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from skel_ros.model import SkelError, SkelValueError, load_skel
from skel_ros.model.errors import Location
from skel_ros.model.inertia import moment_from_rigid_shapes, moment_from_shapes
from skel_ros.model.transforms import RIGID_IDENTITY, rigid_from_skel, rigid_to_matrix
from skel_ros.model.types import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Dof,
    Ellipsoid,
    Joint,
    Pyramid,
    Shape,
    ShapeRole,
    Sphere,
    frozen_array,
    frozen_matrix3,
    frozen_vector3,
)
from skel_ros.model.xmlread import XmlReader, frozen_maker

# --------------------------------------------------------------------------- frozen_maker


def test_made_object_equals_the_dataclass_one() -> None:
    make = frozen_maker(Shape)
    loc = Location("f.skel", 3, "/skel/world")
    args = ("s", ShapeRole.VISUAL, Sphere(0.1), rigid_to_matrix(RIGID_IDENTITY), None, True, loc)
    made, built = make(*args), Shape(*args)
    assert type(made) is Shape
    assert vars(made) == vars(built)
    assert list(vars(made)) == [f.name for f in dataclasses.fields(Shape)]
    assert repr(made) == repr(built)


def test_made_object_stays_frozen() -> None:
    loc = frozen_maker(Location)("f.skel", 3, "/skel")
    with pytest.raises(dataclasses.FrozenInstanceError):
        loc.line = 4  # type: ignore[misc]
    assert loc == Location("f.skel", 3, "/skel")
    assert hash(loc) == hash(Location("f.skel", 3, "/skel"))


def test_every_field_must_be_given() -> None:
    with pytest.raises(TypeError):
        frozen_maker(Location)("f.skel")


def test_classes_it_cannot_shortcut_get_their_own_constructor() -> None:
    @dataclasses.dataclass
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError

    assert frozen_maker(Mutable) is Mutable
    assert frozen_maker(Checked) is Checked


def test_parsed_model_objects_are_frozen() -> None:
    world = load_skel(_chain_doc(2))
    joint, dof = world.skeletons[0].joints[1], world.skeletons[0].dofs[0]
    assert type(joint) is Joint
    assert type(dof) is Dof
    with pytest.raises(dataclasses.FrozenInstanceError):
        dof.damping = 1.0  # type: ignore[misc]
    assert list(vars(dof)) == [f.name for f in dataclasses.fields(Dof)]
    assert dataclasses.replace(dof, damping=2.0).damping == 2.0


# --------------------------------------------------------------------------- arrays


@pytest.mark.parametrize(
    "array",
    [
        rigid_to_matrix(rigid_from_skel([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])),
        frozen_vector3(1.0, -0.0, 3.0),
        frozen_matrix3([float(i) for i in range(9)]),
    ],
    ids=["4x4", "vector", "3x3"],
)
def test_arrays_are_float64_and_cannot_be_made_writeable(array: np.ndarray) -> None:
    assert array.dtype == np.float64
    assert not array.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        array[0] = 1.0
    with pytest.raises(ValueError, match="WRITEABLE"):
        array.flags.writeable = True
    copy = array.copy()
    copy[0] = 5.0  # a copy is an ordinary array


def test_packed_arrays_keep_every_bit() -> None:
    values = [-0.0, 1e-310, math.pi, -1e300, 0.1, 2.0**-1074, 7.0, -3.5, 1.0 / 3.0]
    m = frozen_matrix3(values)
    assert [v.hex() for v in m.ravel().tolist()] == [v.hex() for v in values]
    assert m.tolist() == np.array(values).reshape(3, 3).tolist()
    v = frozen_vector3(*values[:3])
    assert [x.hex() for x in v.tolist()] == [x.hex() for x in values[:3]]
    rigid = rigid_from_skel([0.5, -0.25, 3.0, 1.0, -2.0, 0.5])
    matrix = rigid_to_matrix(rigid)
    assert matrix.shape == (4, 4)
    assert matrix.ravel().tolist() == [*rigid, 0.0, 0.0, 0.0, 1.0]


# --------------------------------------------------------------------------- inertia


def _random_geometry(rng: random.Random) -> object:
    s = [rng.uniform(0.01, 2.0) for _ in range(3)]
    return rng.choice(
        [
            Box(frozen_vector3(*s)),
            Sphere(s[0]),
            Ellipsoid(frozen_vector3(*s)),
            Cylinder(s[0], s[1]),
            Capsule(s[0], s[1]),
            Cone(s[0], s[1]),
            Pyramid(s[0], s[1], s[2]),
        ]
    )


def test_moment_from_rigid_poses_equals_the_matrix_version_bit_for_bit() -> None:
    rng = random.Random(20261123)  # noqa: S311 - reproducible test data
    for _ in range(300):
        shapes = []
        rigid_shapes = []
        for _ in range(rng.randint(1, 4)):
            geometry = _random_geometry(rng)
            if rng.random() < 0.3:
                pose_rigid = None
                pose = rigid_to_matrix(RIGID_IDENTITY)
            else:
                pose_rigid = rigid_from_skel([rng.uniform(-1.0, 1.0) for _ in range(6)])
                pose = rigid_to_matrix(pose_rigid)
            shapes.append((geometry, pose))
            rigid_shapes.append((geometry, pose_rigid))
        mass = rng.uniform(0.1, 10.0)
        com = frozen_vector3(*(rng.uniform(-0.5, 0.5) for _ in range(3)))
        expected = moment_from_shapes(mass, com, shapes)  # type: ignore[arg-type]
        got = moment_from_rigid_shapes(mass, com.tolist(), rigid_shapes)  # type: ignore[arg-type]
        assert expected is not None
        assert got is not None
        assert [v.hex() for v in got] == [v.hex() for v in expected.ravel().tolist()]


def test_no_moment_without_mass_or_shapes() -> None:
    box = Box(frozen_vector3(1.0, 1.0, 1.0))
    assert moment_from_rigid_shapes(0.0, [0.0, 0.0, 0.0], [(box, None)]) is None
    assert moment_from_rigid_shapes(1.0, [0.0, 0.0, 0.0], []) is None


# --------------------------------------------------------------------------- numbers


def _reader_and(xml: str) -> tuple[XmlReader, etree._Element]:
    return XmlReader("memo.skel"), etree.fromstring(xml)


def test_repeated_numbers_read_the_same() -> None:
    r, root = _reader_and("<r><a>0.1 0 1e-3</a><b>0.1</b><c>0 0.1 1e-3</c><d>1e-3</d></r>")
    a, b, c, d = root
    assert r.vector(a, 3) == [0.1, 0.0, 1e-3]
    assert r.number(b) == 0.1
    assert r.vector(c, 3) == [0.0, 0.1, 1e-3]
    assert r.number(d) == 1e-3


def test_the_memo_does_not_let_bad_numbers_through() -> None:
    r, root = _reader_and(
        "<r><a>10 1 2</a><b>1_0 1 2</b><c>1e999</c><d>nan</d><e>1,0</e><f>1</f></r>"
    )
    a, b, c, d, e, f = root
    assert r.vector(a, 3) == [10.0, 1.0, 2.0]
    with pytest.raises(SkelValueError, match="not a number"):
        r.vector(b, 3)
    with pytest.raises(SkelValueError, match="finite"):
        r.number(c)
    with pytest.raises(SkelValueError, match="NaN"):
        r.number(d)
    with pytest.raises(SkelValueError, match="commas"):
        r.number(e)
    with pytest.raises(SkelValueError, match="holds 3 values"):
        r.number(a)
    assert r.number(f, positive=True) == 1.0
    r2, root2 = _reader_and("<r><a>0 1</a><b>0</b></r>")
    assert r2.vector(root2[0], 2) == [0.0, 1.0]  # "0" is known now
    with pytest.raises(SkelValueError, match="must be positive"):
        r2.number(root2[1], positive=True)


def test_a_file_and_its_string_give_the_same_numbers(tmp_path: Path) -> None:
    xml = _chain_doc(5)
    path = tmp_path / "chain.skel"
    path.write_text(xml)
    from_file, from_string = load_skel(path), load_skel(xml)
    for a, b in zip(from_file.skeletons[0].bodies, from_string.skeletons[0].bodies, strict=True):
        assert a.rest_transform.tolist() == b.rest_transform.tolist()
        assert a.inertia.moment.tolist() == b.inertia.moment.tolist()


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


def test_repeated_texts_share_their_values_within_one_document_only() -> None:
    xml = _chain_doc(3)
    first, second = load_skel(xml).skeletons[0], load_skel(xml).skeletons[0]
    b0, b1, _ = first.bodies
    assert b0.shapes[0].geometry is b1.shapes[0].geometry  # the same <size> text
    assert b0.shapes[0].transform is b1.shapes[0].transform  # the same <transformation>
    assert b0.inertia.moment is b1.inertia.moment  # same mass, offset, boxes and poses
    assert first.joints[0].axes[0] is first.joints[1].axes[0]
    # Nothing is kept from one load to the next.
    assert second.bodies[0].shapes[0].geometry is not b0.shapes[0].geometry
    assert second.bodies[0].inertia.moment is not b0.inertia.moment
    assert second.joints[0].axes[0] is not first.joints[0].axes[0]


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
        expected = moment_from_rigid_shapes(
            float(mass), [float(v) for v in offset.split()], [(box, rigid), (box, rigid)]
        )
        assert body.inertia.moment.ravel().tolist() == expected, why
        assert body.inertia.moment_from_shapes


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


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_file_whose_file_system_gives_no_size_is_read_to_its_end() -> None:
    # /proc files are regular files of size 0: an empty read would say "empty document".
    with pytest.raises(SkelError, match="not an XML file"):
        load_skel("/proc/self/status")


# --------------------------------------------------------------------------- files


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


def test_file_errors_still_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(SkelError, match="is a directory"):
        load_skel(tmp_path)
    with pytest.raises(SkelError, match="cannot read file: No such file"):
        load_skel(tmp_path / "missing.skel")
    with pytest.raises(SkelError, match="not a regular file"):
        load_skel("/dev/null")


# --------------------------------------------------------------------------- garbage collector


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        if enabled:
            gc.enable()
        else:
            gc.disable()
        load_skel(_chain_doc(3))
        assert gc.isenabled() is enabled
        with pytest.raises(SkelError):
            load_skel("<skel><world><skeleton><body/></skeleton></world></skel>")
        assert gc.isenabled() is enabled
    finally:
        if was:
            gc.enable()
        else:
            gc.disable()
