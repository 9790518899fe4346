"""URDF export: same kinematics as the model, every shape present, valid unique names.

Forward kinematics is checked with an independent URDF implementation (yourdfpy):
for every loadable corpus file and for a synthetic model with every joint and
shape kind, the URDF joint positions from ``urdf_joint_values`` must put every
body link where ``Kinematics.body_transforms`` puts the body, within 1e-9.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pytest
import yourdfpy
from corpus_data import CORPUS, requires_corpus
from lxml import etree

from skel_ros.model import Kinematics, SkelError, Skeleton, World, load_skel
from skel_ros.model.meshes import mesh_bounds
from skel_ros.model.transforms import euler_xyz, exp_rot
from skel_ros.model.urdf import (
    PLANE_THICKNESS,
    UrdfCoordinates,
    UrdfExportError,
    default_mesh_dir,
    euler_xyz_angles,
    skeleton_namespace,
    skeleton_to_urdf,
    urdf_joint_map,
    urdf_joint_values,
    world_joint_values,
    world_to_urdf,
)

TOL = 1e-9
SKEL_DIR = CORPUS / "data" / "skel"
SKEL_FILES = sorted(SKEL_DIR.rglob("*.skel")) if SKEL_DIR.is_dir() else []
RANDOM_CONFIGS = 3


def _corpus_id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def _dart_failures() -> set[str]:
    data = json.loads((CORPUS / "reference" / "_failures.json").read_text())
    return {k for k in data if k.startswith("data/skel/")}


# --------------------------------------------------------------------------- helpers


def _random_q(skel: Skeleton, rng: np.random.Generator) -> np.ndarray:
    q = np.empty(skel.num_dofs)
    for i, dof in enumerate(skel.dofs):
        lo, hi = dof.position_lower, dof.position_upper
        if math.isfinite(lo) and math.isfinite(hi):
            q[i] = rng.uniform(lo, hi)
        elif math.isfinite(lo):
            q[i] = lo + rng.uniform(0.0, 2.0)
        elif math.isfinite(hi):
            q[i] = hi - rng.uniform(0.0, 2.0)
        else:
            q[i] = rng.uniform(-math.pi, math.pi)
    return q


def _load_urdf(text: str, tmp_path: Path, name: str = "robot.urdf") -> yourdfpy.URDF:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    urdf = yourdfpy.URDF.load(str(path), build_scene_graph=True, load_meshes=False)
    assert urdf.validate(), urdf.errors
    return urdf


def _check_fk(
    urdf: yourdfpy.URDF,
    skeletons: list[tuple[Skeleton, str, str]],
    rng: np.random.Generator,
) -> None:
    """Compare body links with the model at the initial and random configurations.

    ``skeletons`` holds (skeleton, link prefix, joint prefix).
    """
    assert urdf.base_link == "world"
    configs = [
        {id(s): np.asarray(s.initial_positions) for s, _, _ in skeletons},
        *({id(s): _random_q(s, rng) for s, _, _ in skeletons} for _ in range(RANDOM_CONFIGS)),
    ]
    for config in configs:
        values: dict[str, float] = {}
        for skel, _, joint_prefix in skeletons:
            values.update(urdf_joint_values(skel, config[id(skel)], joint_prefix=joint_prefix))
        # Every non-fixed URDF joint gets a value, and nothing else.
        moving = {j.name for j in urdf.robot.joints if j.type != "fixed"}
        assert set(values) == moving
        urdf.update_cfg(values)
        for skel, link_prefix, _ in skeletons:
            expected = Kinematics(skel).body_transforms(config[id(skel)])
            # Composed body to body (numpy's multi_dot is cubic in the length of a long
            # chain); each step is yourdfpy's transform over one model joint's URDF chain.
            got: dict[str, np.ndarray] = {}
            for joint, body, want in zip(skel.joints, skel.bodies, expected, strict=True):
                parent = "world" if joint.parent is None else link_prefix + joint.parent
                step = urdf.get_transform(frame_to=link_prefix + body.name, frame_from=parent)
                got[body.name] = step if joint.parent is None else got[joint.parent] @ step
                err = float(np.max(np.abs(got[body.name] - want)))
                assert err <= TOL, f"{skel.name}/{body.name}: off by {err:.3g}"


def _xml(text: str) -> etree._Element:
    return etree.fromstring(text.encode("utf-8"))


def _check_names_and_shapes(root: etree._Element, skeletons: list[tuple[Skeleton, str]]) -> None:
    """Unique names, one link per body, every shape present once with its role."""
    for tag in ("link", "joint"):
        names = [e.get("name") for e in root.iter(tag)]
        assert len(names) == len(set(names)), f"repeated {tag} names"
    materials = [e.get("name") for e in root.iter("material")]
    assert len(materials) == len(set(materials))
    links = {e.get("name"): e for e in root.iter("link")}
    for skel, prefix in skeletons:
        for body in skel.bodies:
            link = links[prefix + body.name]
            assert link.find("inertial/mass").get("value") == repr(body.inertia.mass + 0.0)
            found = [(e.tag, e.get("name")) for e in link if e.tag in ("visual", "collision")]
            expected = [(s.role.value, s.name) for s in body.shapes]
            if body.soft is not None:
                soft = f"{body.name}_SoftMeshShape"
                expected += [("visual", soft), ("collision", soft)]
            assert sorted(found) == sorted(expected)
            for element in link:
                if element.tag in ("visual", "collision"):
                    assert len(element.find("geometry")) == 1


# --------------------------------------------------------------------------- corpus


def _loads(path: Path) -> bool:
    try:
        load_skel(path)
    except SkelError:
        return False
    return True


@requires_corpus
def test_load_failures_are_exactly_darts() -> None:
    assert {_corpus_id(p) for p in SKEL_FILES if not _loads(p)} == _dart_failures()


@requires_corpus
@pytest.mark.parametrize("path", SKEL_FILES, ids=[_corpus_id(p) for p in SKEL_FILES])
def test_corpus_world_urdf_matches_model(path: Path, tmp_path: Path) -> None:
    try:
        world = load_skel(path)
    except SkelError:
        assert _corpus_id(path) in _dart_failures()
        pytest.skip("DART cannot load this file either")
    text = world_to_urdf(world, mesh_dir=tmp_path / "meshes")
    urdf = _load_urdf(text, tmp_path)
    spaced = [
        (s, skeleton_namespace(world, s), skeleton_namespace(world, s)) for s in world.skeletons
    ]
    assert world_joint_values(world) == {
        k: v for s, _, p in spaced for k, v in urdf_joint_values(s, joint_prefix=p).items()
    }
    _check_fk(urdf, spaced, np.random.default_rng(abs(hash(path.name)) % 2**32))
    _check_names_and_shapes(_xml(text), [(s, p) for s, p, _ in spaced])
    # Meshes: model files by absolute file:// URI, generated ones in mesh_dir.
    for mesh in _xml(text).iter("mesh"):
        uri = urlparse(mesh.get("filename"))
        assert uri.scheme == "file"
        assert Path(unquote(uri.path)).is_file()


@requires_corpus
@pytest.mark.parametrize(
    "name", ["fullbody1.skel", "vehicle.skel", "softBodies.skel", "kima/kima_human_edited.skel"]
)
def test_corpus_skeleton_urdf_matches_model(name: str, tmp_path: Path) -> None:
    world = load_skel(SKEL_DIR / name)
    skel = next(s for s in world.skeletons if len(s.bodies) > 1 or s.dofs)
    text = skeleton_to_urdf(skel, frame_prefix="r1/", joint_prefix="r1_", mesh_dir=tmp_path)
    urdf = _load_urdf(text, tmp_path)
    assert urdf.robot.name == skel.name
    _check_fk(urdf, [(skel, "r1/", "r1_")], np.random.default_rng(7))
    _check_names_and_shapes(_xml(text), [(skel, "r1/")])
    # The same skeleton through world_to_urdf(skeleton=...) is the same document.
    same = world_to_urdf(world, skeleton=skel.name, frame_prefix="r1/", mesh_dir=tmp_path)
    assert same == skeleton_to_urdf(skel, frame_prefix="r1/", mesh_dir=tmp_path)


# --------------------------------------------------------------------------- synthetic model

SPECIAL = "a<b> & \"c\" 'd'"


def _shape(kind: str, geometry: str, transform: str = "0 0 0 0 0 0", extra: str = "") -> str:
    return (
        f"<{kind}><transformation>{transform}</transformation>"
        f"<geometry>{geometry}</geometry>{extra}</{kind}>"
    )


def _body(name: str, pose: str, *shapes: str) -> str:
    name = name.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")
    return f'<body name="{name}"><transformation>{pose}</transformation>{"".join(shapes)}</body>'


def _joint(kind: str, name: str, parent: str, child: str, inner: str = "", *, tf: str = "") -> str:
    child = child.replace("&", "&amp;").replace("<", "&lt;")
    tf_el = f"<transformation>{tf}</transformation>" if tf else ""
    return (
        f'<joint type="{kind}" name="{name}"><parent>{parent}</parent><child>{child}</child>'
        f"{tf_el}{inner}</joint>"
    )


GEOMETRIES = {
    "ellipsoid": "<ellipsoid><size>0.2 0.4 0.6</size></ellipsoid>",
    "capsule": "<capsule><radius>0.05</radius><height>0.3</height></capsule>",
    "cone": "<cone><radius>0.1</radius><height>0.4</height></cone>",
    "pyramid": "<pyramid><base_width>0.2</base_width><base_depth>0.3</base_depth>"
    "<height>0.4</height></pyramid>",
    "multi_sphere": "<multi_sphere><sphere><radius>0.05</radius><position>0 0 0.1</position>"
    "</sphere><sphere><radius>0.08</radius><position>0.1 -0.2 0</position></sphere>"
    "<sphere><radius>0.01</radius><position>-0.1 0.05 -0.3</position></sphere></multi_sphere>",
    "plane": "<plane><normal>0 0 2</normal><offset>0.5</offset></plane>",
    "sphere": "<sphere><radius>0.07</radius></sphere>",
    "cylinder": "<cylinder><radius>0.03</radius><height>0.2</height></cylinder>",
    "box": "<box><size>0.1 0.2 0.3</size></box>",
}

# Expected extent (min, max) of the generated meshes, in the shape frame.
GENERATED_BOUNDS = {
    "ellipsoid": ([-0.1, -0.2, -0.3], [0.1, 0.2, 0.3]),
    "capsule": ([-0.05, -0.05, -0.2], [0.05, 0.05, 0.2]),
    "cone": ([-0.1, -0.1, -0.2], [0.1, 0.1, 0.2]),
    "pyramid": ([-0.1, -0.15, -0.2], [0.1, 0.15, 0.2]),
    "multi_sphere": ([-0.11, -0.28, -0.31], [0.18, 0.06, 0.15]),
}

POSE = "0.1 -0.2 0.3 0.4 -0.5 0.6"


def _synthetic_skel() -> str:
    vis, col = "visualization_shape", "collision_shape"
    bodies = [
        _body(
            "base",
            "0 0 0.5 0.1 0.2 0.3",
            _shape(vis, GEOMETRIES["ellipsoid"], POSE, "<color>1 0 0</color>"),
            _shape(col, GEOMETRIES["capsule"], POSE),
        ),
        _body(
            "b_rev",
            "0.1 0 0.7 0.3 0 0.2",
            _shape(vis, GEOMETRIES["cone"], POSE, "<color>0 1 0 0.5</color>"),
            _shape(col, GEOMETRIES["cone"], "0 0 0 0 0 0", "<collidable>0</collidable>"),
        ),
        _body("b_pri", "0.2 0.1 0.8 0 0.4 0", _shape(vis, GEOMETRIES["pyramid"], POSE)),
        _body(
            "b_uni",
            "0.3 0.1 0.9 0.5 0 0",
            _shape(col, GEOMETRIES["multi_sphere"], POSE),
            _shape(vis, GEOMETRIES["multi_sphere"], POSE),
        ),
        _body(
            "b_ball",
            "0.3 0.2 1.0 0 0 0.7",
            _shape(vis, GEOMETRIES["plane"], POSE),
            _shape(col, GEOMETRIES["plane"]),
        ),
        _body("b_euler", "0.2 0.3 1.1 0.1 0.1 0.1", _shape(vis, GEOMETRIES["sphere"])),
        _body("b_trans", "0.1 0.3 1.2 0 0 0", _shape(vis, GEOMETRIES["cylinder"], POSE)),
        _body("b_t2d", "0 0.3 1.3 0.2 0.2 0", _shape(vis, GEOMETRIES["box"], POSE)),
        _body("b_pxy", "0 0.2 1.4 0 0 0"),
        _body("b_parb", "0 0.1 1.5 0.3 0.2 0.1"),
        _body("b_screw", "0 0 1.6 0 0.3 0"),
        _body("b_weld", "-0.1 0 1.7 0.2 0 0", _shape(vis, GEOMETRIES["box"])),
        _body(SPECIAL, "-0.2 0 1.8 0 0 0", _shape(vis, GEOMETRIES["sphere"])),
        _body("b_free2", "1 1 1 0 0 0", _shape(vis, GEOMETRIES["box"])),
    ]
    limits = (
        '<dof local_index="0"><position lower="-1.2" upper="0.8"/>'
        '<velocity lower="-2" upper="3"/><force lower="-5" upper="7"/></dof>'
    )
    joints = [
        _joint("free", "root", "world", "base", tf="0.01 0.02 0.03 0.1 0.2 0.3"),
        _joint(
            "revolute",
            "rev",
            "base",
            "b_rev",
            f"<axis><xyz>0 1 1</xyz><dynamics><damping>0.3</damping></dynamics></axis>{limits}",
            tf="0.1 0 0.2 0.3 0 0",
        ),
        _joint(
            "prismatic",
            "pri",
            "b_rev",
            "b_pri",
            "<axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>",
            tf="0 0.1 0 0 0 0.2",
        ),
        _joint(
            "universal",
            "uni",
            "b_pri",
            "b_uni",
            "<axis><xyz>0 1 0</xyz></axis><axis2><xyz>0.6 0 0.8</xyz></axis2>"
            '<dof local_index="0" name="uni first"/>',
            tf="0.05 0 0 0 0.3 0",
        ),
        _joint("ball", "ball", "b_uni", "b_ball", "", tf="0 0 0.05 0.2 0.1 0"),
        _joint(
            "euler",
            "eul",
            "b_ball",
            "b_euler",
            "<axis_order>zyx</axis_order>",
            tf="0.02 0.02 0 0 0 0.4",
        ),
        _joint("translational", "trans", "b_euler", "b_trans", "", tf="0 0 0 0.1 0 0"),
        _joint(
            "translational2d", "t2d", "b_trans", "b_t2d", '<plane type="yz"/>', tf="0.1 0 0 0 0 0"
        ),
        _joint("planar", "pxy", "b_t2d", "b_pxy", '<plane type="xy"/>'),
        _joint(
            "planar",
            "parb",
            "b_pxy",
            "b_parb",
            '<plane type="arbitrary"><translation_axis1><xyz>1 1 0</xyz></translation_axis1>'
            "<translation_axis2><xyz>0 1 1</xyz></translation_axis2></plane>",
            tf="0 0.05 0 0 0.2 0",
        ),
        _joint(
            "screw",
            "scr",
            "b_parb",
            "b_screw",
            "<axis><xyz>0 0 1</xyz><pitch>0.25</pitch></axis>",
            tf="0.03 0 0 0 0 0",
        ),
        _joint("weld", "weld", "b_screw", "b_weld", "", tf="0 0 0.1 0.3 0 0"),
        _joint("revolute", "cont", "b_weld", SPECIAL, "<axis><xyz>1 0 0</xyz></axis>"),
        _joint("free", "root2", "world", "b_free2"),
    ]
    soft = (
        '<skeleton name="soft"><body name="blob"><transformation>0 0 2 0 0 0</transformation>'
        "<soft_shape><total_mass>0.5</total_mass><geometry><ellipsoid><size>0.2 0.3 0.4</size>"
        "<num_slices>8</num_slices><num_stacks>8</num_stacks></ellipsoid></geometry>"
        "</soft_shape></body>" + _joint("free", "j", "world", "blob") + "</skeleton>"
        '<skeleton name="soft box"><body name="blob"><transformation>0 1 2 0 0 0</transformation>'
        "<soft_shape><total_mass>0.5</total_mass><transformation>0 0 0.1 0 0 0.3</transformation>"
        "<geometry><box><size>0.2 0.3 0.4</size><frags>3 3 3</frags></box></geometry>"
        "</soft_shape></body>" + _joint("ball", "j", "world", "blob") + "</skeleton>"
    )
    return (
        '<skel version="1.0"><world name="w">'
        '<skeleton name="all joints"><transformation>0.1 0.2 0.3 0.4 0.5 0.6</transformation>'
        + "".join(bodies)
        + "".join(joints)
        + "</skeleton>"
        + soft
        + "</world></skel>"
    )


@pytest.fixture(scope="module")
def synthetic() -> World:
    return load_skel(_synthetic_skel(), name="synthetic.skel")


def test_synthetic_model_has_every_joint_type(synthetic: World) -> None:
    types = {j.type.value for j in synthetic.skeletons[0].joints}
    assert types == {
        "free",
        "revolute",
        "prismatic",
        "universal",
        "ball",
        "euler",
        "translational",
        "translational2d",
        "planar",
        "screw",
        "weld",
    }


def test_synthetic_urdf_matches_model(synthetic: World, tmp_path: Path) -> None:
    text = world_to_urdf(synthetic, mesh_dir=tmp_path / "meshes")
    urdf = _load_urdf(text, tmp_path)
    spaced = [
        (s, skeleton_namespace(synthetic, s), skeleton_namespace(synthetic, s))
        for s in synthetic.skeletons
    ]
    assert spaced[0][1] == "all joints/"
    rng = np.random.default_rng(12345)
    for _ in range(5):
        _check_fk(urdf, spaced, rng)
    _check_names_and_shapes(_xml(text), [(s, p) for s, p, _ in spaced])


def test_single_skeleton_urdf_matches_model(synthetic: World, tmp_path: Path) -> None:
    skel = synthetic.skeletons[0]
    text = skeleton_to_urdf(skel, mesh_dir=tmp_path)
    urdf = _load_urdf(text, tmp_path)
    _check_fk(urdf, [(skel, "", "")], np.random.default_rng(99))


def test_joint_types_and_limits(synthetic: World, tmp_path: Path) -> None:
    skel = synthetic.skeletons[0]
    joints = {
        e.get("name"): e for e in _xml(skeleton_to_urdf(skel, mesh_dir=tmp_path)).iter("joint")
    }
    rev = joints["rev"]
    assert rev.get("type") == "revolute"
    limit = rev.find("limit")
    assert (limit.get("lower"), limit.get("upper")) == ("-1.2", "0.8")
    assert (limit.get("effort"), limit.get("velocity")) == ("7.0", "3.0")
    assert rev.find("dynamics").get("damping") == "0.3"
    assert joints["pri"].get("type") == "prismatic"
    assert (joints["pri"].find("limit").get("lower"), joints["pri"].find("limit").get("upper")) == (
        "-0.5",
        "0.5",
    )
    assert joints["cont"].get("type") == "continuous"
    assert joints["weld"].get("type") == "fixed"
    # Chains: one URDF joint per DOF, named as the DOF; renamed DOFs keep their name.
    assert joints["uni first"].get("type") == "continuous"
    assert joints["uni_2"].get("type") == "continuous"
    for dof in ("ball_x", "ball_y", "ball_z", "root_rot_x", "root_rot_y", "root_rot_z"):
        assert joints[dof].get("type") == "continuous"
    for dof in ("root_pos_x", "trans_x", "t2d_y", "t2d_z", "pxy_x", "parb_1", "parb_2"):
        assert joints[dof].get("type") == "prismatic"
    # Planar rotations are DOFs "default", "default(1)" (DART's names).
    assert joints["default"].get("type") == "continuous"
    assert joints["default(1)"].find("axis").get("xyz") != "0.0 0.0 1.0"
    # Screw: a revolute and a prismatic mimicking it with pitch / 2 pi.
    mimic = joints["scr__screw_translation"].find("mimic")
    assert mimic.get("joint") == "scr"
    assert float(mimic.get("multiplier")) == pytest.approx(0.25 / (2 * math.pi), abs=0)
    # Intermediate links are massless and named after one model name: the DOF whose
    # motion they follow, or the body whose joint frame they are.
    links = {e.get("name"): e for e in _xml(skeleton_to_urdf(skel, mesh_dir=tmp_path)).iter("link")}
    assert links["ball_y__link"].find("inertial") is None
    assert links["b_rev__joint_frame"].find("inertial") is None  # T_child_to_joint is not identity
    assert joints["rev__fixed"].get("type") == "fixed"
    assert links["b_rev"].find("inertial") is not None


def test_joint_map(synthetic: World) -> None:
    skel = synthetic.skeletons[0]
    entries = urdf_joint_map(skel, joint_prefix="p/")
    assert [e.dof for e in entries] == [d.name for d in skel.dofs]
    assert [e.dof_index for e in entries] == list(range(skel.num_dofs))
    by_dof = {e.dof: e for e in entries}
    assert by_dof["ball_y"].coordinates is UrdfCoordinates.EULER_XYZ
    assert by_dof["root_rot_z"].coordinates is UrdfCoordinates.EULER_XYZ
    assert by_dof["root_pos_z"].coordinates is UrdfCoordinates.SAME
    assert by_dof["rev"].urdf_joint == "p/rev"
    assert by_dof["uni first"].joint == "uni"
    assert by_dof["scr"].mimic_joints == ("p/scr__screw_translation",)
    values = urdf_joint_values(skel, np.zeros(skel.num_dofs), joint_prefix="p/")
    assert {e.urdf_joint for e in entries} | {"p/scr__screw_translation"} == set(values)


def test_joint_values_convert_ball_and_free_to_euler(synthetic: World) -> None:
    skel = synthetic.skeletons[0]
    q = _random_q(skel, np.random.default_rng(3))
    values = urdf_joint_values(skel, q)
    for joint in ("ball", "root"):
        first = skel.joint(joint).first_dof
        rot = exp_rot(q[first : first + 3])
        names = [e.urdf_joint for e in urdf_joint_map(skel)][first : first + 3]
        assert np.allclose(euler_xyz(*(values[n] for n in names)), rot, atol=1e-14)
    assert values["scr__screw_translation"] == pytest.approx(
        q[skel.dof_index("scr")] * 0.25 / (2 * math.pi)
    )
    assert values["rev"] == q[skel.dof_index("rev")]
    with pytest.raises(ValueError, match="DOFs"):
        urdf_joint_values(skel, [0.0])


@pytest.mark.parametrize(
    "angles",
    [
        (0.3, -0.4, 2.0),
        (0.0, math.pi / 2, 0.0),
        (1.0, math.pi / 2, -0.7),
        (-2.0, -math.pi / 2, 0.5),
        (3.0, math.pi / 2 - 1e-9, 1.0),
        (math.pi, 0.0, -math.pi),
        (0.0, 0.0, 0.0),
    ],
)
def test_euler_angles_rebuild_the_rotation(angles: tuple[float, float, float]) -> None:
    rot = euler_xyz(*angles)
    a, b, c = euler_xyz_angles(rot)
    assert -math.pi / 2 <= b <= math.pi / 2
    assert np.max(np.abs(euler_xyz(a, b, c) - rot)) <= 1e-15 * 8


def test_generated_meshes_have_the_right_size(synthetic: World, tmp_path: Path) -> None:
    mesh_dir = tmp_path / "meshes"
    root = _xml(world_to_urdf(synthetic, mesh_dir=mesh_dir))
    skel = synthetic.skeletons[0]
    kinds = {s.name: s.geometry.kind for b in skel.bodies for s in b.shapes}
    seen = set()
    for element in root.iter("visual", "collision"):
        kind = kinds.get(element.get("name"))
        if kind not in GENERATED_BOUNDS:
            continue
        mesh = element.find("geometry/mesh")
        path = Path(unquote(urlparse(mesh.get("filename")).path))
        assert path.parent == mesh_dir.resolve()
        assert path.name.startswith(f"{kind}-")
        lo, hi = mesh_bounds(path)
        want_lo, want_hi = GENERATED_BOUNDS[kind]
        assert np.allclose(lo, want_lo, atol=1e-7), kind
        assert np.allclose(hi, want_hi, atol=1e-7), kind
        seen.add(kind)
    assert seen == set(GENERATED_BOUNDS)
    # The soft ellipsoid is a generated mesh too.
    soft = next(e for e in root.iter("visual") if e.get("name") == "blob_SoftMeshShape")
    lo, hi = mesh_bounds(Path(unquote(urlparse(soft.find("geometry/mesh").get("filename")).path)))
    assert np.allclose(hi, [0.1, 0.15, 0.2], atol=1e-7)
    assert np.allclose(lo, [-0.1, -0.15, -0.2], atol=1e-7)


def test_export_is_stable(synthetic: World, tmp_path: Path) -> None:
    first = world_to_urdf(synthetic, mesh_dir=tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert world_to_urdf(synthetic, mesh_dir=tmp_path) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == files
    assert not [f for f in files if not f.endswith(".stl")]


def test_default_mesh_dir_follows_xdg(
    synthetic: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_mesh_dir() == tmp_path / "skel_ros" / "meshes"
    text = world_to_urdf(synthetic)
    assert f"file://{tmp_path}/skel_ros/meshes/" in text
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_mesh_dir() == tmp_path / "home" / ".cache" / "skel_ros" / "meshes"


def test_plane_is_a_thin_box_on_the_plane(synthetic: World, tmp_path: Path) -> None:
    root = _xml(world_to_urdf(synthetic, mesh_dir=tmp_path))
    col = next(e for e in root.iter("collision") if e.get("name") == "b_ball - collision shape")
    box = col.find("geometry/box")
    assert box is not None
    assert float(box.get("size").split()[2]) == PLANE_THICKNESS
    origin = [float(v) for v in col.find("origin").get("xyz").split()]
    # normal (0 0 2) -> z, offset 0.5: the box's top face is at z = 0.5.
    assert origin == pytest.approx([0.0, 0.0, 0.5 - PLANE_THICKNESS / 2], abs=1e-15)


def test_colours_and_materials(synthetic: World, tmp_path: Path) -> None:
    root = _xml(world_to_urdf(synthetic, mesh_dir=tmp_path))
    visuals = {e.get("name"): e for e in root.iter("visual")}
    assert visuals["base - visual shape"].find("material/color").get("rgba") == "1.0 0.0 0.0 1.0"
    assert visuals["b_rev - visual shape"].find("material/color").get("rgba") == "0.0 1.0 0.0 0.5"
    # No colour given: DART's default.
    assert visuals["b_pri - visual shape"].find("material/color").get("rgba") == "0.5 0.5 1.0 1.0"


def test_special_characters_round_trip(synthetic: World, tmp_path: Path) -> None:
    text = world_to_urdf(synthetic, frame_prefix="x&y/", mesh_dir=tmp_path)
    link = "x&y/all joints/" + SPECIAL
    assert link in {e.get("name") for e in _xml(text).iter("link")}
    urdf = _load_urdf(text, tmp_path)
    assert link in urdf.link_map


def test_mesh_files_are_absolute_uris(tmp_path: Path) -> None:
    if not SKEL_DIR.is_dir():
        pytest.skip("no corpus")
    world = load_skel(SKEL_DIR / "kima" / "kima_human_left_arm.skel")
    meshes = list(_xml(world_to_urdf(world, mesh_dir=tmp_path)).iter("mesh"))
    from_model = [m for m in meshes if m.get("filename").endswith(".dae")]
    assert from_model
    for mesh in from_model:
        assert mesh.get("filename").startswith("file:///")
        assert mesh.get("scale") is not None


def test_body_named_like_the_root_link_is_refused(tmp_path: Path) -> None:
    world = load_skel(
        '<skel version="1.0"><world name="w"><skeleton name="s">'
        + _body("world", "0 0 0 0 0 0")
        + '<joint type="weld" name="j"><child>world</child></joint>'
        + "</skeleton></world></skel>"
    )
    skel = world.skeletons[0]
    with pytest.raises(UrdfExportError, match="world_link"):
        skeleton_to_urdf(skel, mesh_dir=tmp_path)
    text = skeleton_to_urdf(skel, world_link="map", mesh_dir=tmp_path)
    assert _load_urdf(text, tmp_path).base_link == "map"
    assert urdf_joint_map(skel) == []


def test_single_skeleton_world_keeps_plain_names(tmp_path: Path) -> None:
    world = load_skel(
        '<skel version="1.0"><world name="w"><skeleton name="empty"/><skeleton name="s">'
        + _body("b", "0 0 0 0 0 0")
        + _joint("revolute", "j", "world", "b", "<axis><xyz>0 0 1</xyz></axis>")
        + "</skeleton></world></skel>"
    )
    skel = world.skeleton("s")
    assert skeleton_namespace(world, skel) == ""
    text = world_to_urdf(world, mesh_dir=tmp_path)
    names = {e.get("name") for e in _xml(text).iter("joint")}
    assert names == {"j"}
    assert world_joint_values(world, {"s": [0.5]}) == {"j": 0.5}


def test_unknown_skeleton_is_refused(synthetic: World) -> None:
    with pytest.raises(UrdfExportError, match="no skeleton named"):
        world_to_urdf(synthetic, skeleton="nope")


def test_empty_world(tmp_path: Path) -> None:
    world = load_skel('<skel version="1.0"><world name="w"></world></skel>')
    urdf = _load_urdf(world_to_urdf(world, mesh_dir=tmp_path), tmp_path)
    assert [link.name for link in urdf.robot.links] == ["world"]
