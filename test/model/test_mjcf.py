"""MJCF export (skel_ros.model.mjcf): MuJoCo compiles it, and its kinematics are ours.

For every corpus file, every example and the every-joint-type file, the export is
compiled by ``mujoco.MjModel`` (from a file, so relative mesh paths count) and MuJoCo's
``mj_kinematics`` at random configurations puts every body where
:class:`~skel_ros.model.Kinematics` does, to 1e-9 (measured: a few 1e-15).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from corpus_data import CORPUS, requires_corpus

from skel_ros.cli.main import main
from skel_ros.model import ExportError, Kinematics, load_model, load_skel
from skel_ros.model.mjcf import MAX_BODY_DEPTH, MjcfExport, world_to_mjcf, write_mjcf
from skel_ros.model.types import JointType, World

mujoco = pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[2]
JOINTS = REPO / "test" / "model" / "data" / "mjcf_joints.skel"
EXAMPLES = sorted((REPO / "examples").glob("*.skel"))
TOL = 1e-9

# Corpus files the export refuses, and why (everything else must convert).
REFUSED = {
    "soft body": ["softBodies", "soft_cubes", "soft_open_chain", "test_adaptive_deformable",
                  "test_articulated_bodies_10bodies", "test_drop_box", "test_drop_box_offset",
                  "test_drop_low_stiffness", "test_drop_sphere"],
    # DART takes a rank-1 moment of inertia; MuJoCo compiles none that no body can have.
    "not one a rigid body can have": ["force_torque_test2"],
}


def _corpus_files() -> list[Path]:
    root = CORPUS / "data" / "skel"
    return sorted(root.rglob("*.skel")) if root.is_dir() else []


def _compile(export: MjcfExport, directory: Path) -> object:
    path = directory / "model.mjcf"
    path.write_text(export.xml, encoding="utf-8")
    return mujoco.MjModel.from_xml_path(str(path))


def _random_positions(world: World, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {s.name: (rng.uniform(-3.0, 3.0, s.num_dofs) if s.mobile
                     else np.asarray(s.initial_positions)) for s in world.skeletons}


def _worst_fk_error(world: World, export: MjcfExport, model: object, seed: int,
                    trials: int = 4) -> float:
    """Largest entry of (MuJoCo's body pose - ours) over random configurations."""
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    kinematics = {s.name: Kinematics(s) for s in world.skeletons}
    worst = 0.0
    for _ in range(trials):
        positions = _random_positions(world, rng)
        data.qpos[:] = export.qpos(positions)
        mujoco.mj_kinematics(model, data)
        ours = {s.name: kinematics[s.name].body_transforms(positions[s.name])
                for s in world.skeletons}
        for body in export.bodies:
            skeleton = world.skeleton(body.skeleton)
            i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body.name)
            theirs = np.eye(4)
            theirs[:3, :3] = data.xmat[i].reshape(3, 3)
            theirs[:3, 3] = data.xpos[i]
            index = skeleton.bodies.index(skeleton.body(body.body))
            error = np.abs(body.pose(theirs, positions[body.skeleton])
                           - ours[body.skeleton][index]).max()
            worst = max(worst, float(error))
    return worst


def _check_converts(path: Path, tmp_path: Path) -> None:
    world = load_model(path)
    export = world_to_mjcf(world, base_dir=tmp_path)
    model = _compile(export, tmp_path)
    assert model.nq == export.nq
    assert model.nv == export.nv
    assert model.nbody == len({b.name for b in export.bodies}) + 1  # folded bodies share one
    assert len(export.bodies) == sum(len(s.bodies) for s in world.skeletons)
    assert model.opt.timestep == world.time_step
    assert list(model.opt.gravity) == list(world.gravity)
    assert _worst_fk_error(world, export, model, seed=len(path.name)) < TOL


@requires_corpus
@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.stem)
def test_corpus_file_compiles_with_our_kinematics(path: Path, tmp_path: Path) -> None:
    try:
        world = load_model(path)
    except Exception:  # noqa: BLE001 - not loadable (legacy, DART refuses it): not ours to export
        pytest.skip("the model itself does not load")
    refused = [why for why, stems in REFUSED.items() if path.stem in stems]
    if refused:
        with pytest.raises(ExportError, match=refused[0]) as info:
            world_to_mjcf(world)
        assert info.value.location.line > 0  # file:line of the element
        return
    del world
    _check_converts(path, tmp_path)


@pytest.mark.parametrize("path", [*EXAMPLES, JOINTS], ids=lambda p: p.stem)
def test_example_compiles_with_our_kinematics(path: Path, tmp_path: Path) -> None:
    _check_converts(path, tmp_path)


def test_every_joint_type_is_exported() -> None:
    world = load_skel(JOINTS)
    types = {j.type for s in world.skeletons for j in s.joints}
    assert types == set(JointType)  # the test file has them all
    export = world_to_mjcf(world)
    kinds = {j.joint: j.kind for j in export.joints if j.skeleton == "more"}
    assert kinds == {"float": "free", "screw": "slide", "sled": "slide", "puck": "hinge",
                     "drone": "ball", "gimbal": "ball", "stick": "slide"}
    # The free joint below the root is three slides and a ball; the statue has no joints.
    assert [j.kind for j in export.joints if j.joint == "drone"] == ["slide"] * 3 + ["ball"]
    assert not [j for j in export.joints if j.skeleton == "statue"]
    # The euler zyx joint is three hinges about z, y, x.
    model = mujoco.MjModel.from_xml_string(export.xml)
    axes = [model.jnt_axis[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, f"euler/zyx_{a}")]
            for a in ("z", "y", "x")]
    assert np.array_equal(axes, [[0, 0, 1], [0, 1, 0], [1, 0, 0]])


def test_joint_dynamics_and_limits_are_written() -> None:
    world = load_skel(JOINTS)
    model = mujoco.MjModel.from_xml_string(world_to_mjcf(world).xml)

    def joint(name: str) -> int:
        return int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name))

    yaw = joint("planar/base_yaw")
    assert model.jnt_limited[yaw]
    assert list(model.jnt_range[yaw]) == [-2.0, 2.0]
    assert model.dof_damping[model.jnt_dofadr[yaw]] == 0.3
    assert list(model.jnt_actfrcrange[yaw]) == [-10.0, 10.0]
    spring = joint("planar/" + world.skeleton("planar").dofs[3].name)
    assert model.jnt_stiffness[spring] == 20.0
    assert model.qpos_spring[model.jnt_qposadr[spring]] == 0.05
    friction = "planar/" + world.skeleton("planar").dofs[7].name
    assert model.dof_frictionloss[model.jnt_dofadr[joint(friction)]] == 0.01
    gimbal = joint("more/gimbal")
    assert model.jnt_type[gimbal] == mujoco.mjtJoint.mjJNT_BALL
    assert model.dof_damping[model.jnt_dofadr[gimbal]] == 0.1
    e2 = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "euler/e2")
    assert model.body_gravcomp[e2] == 1.0  # <gravity>false</gravity>


def test_screw_slide_follows_its_hinge() -> None:
    world = load_skel(JOINTS)
    export = world_to_mjcf(world)
    model = mujoco.MjModel.from_xml_string(export.xml)
    data = mujoco.MjData(model)
    hinge = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "more/screw")
    slide = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "more/screw/screw_translation")
    data.qvel[model.jnt_dofadr[hinge]] = 3.0
    for _ in range(300):
        mujoco.mj_step(model, data)
    turned = data.qpos[model.jnt_qposadr[hinge]]
    assert abs(turned) > 0.1
    # Soft equality constraint: held to a small fraction of the motion.
    assert data.qpos[model.jnt_qposadr[slide]] == pytest.approx(0.25 / (2 * math.pi) * turned,
                                                                rel=0.05)


def test_initial_state_keyframe() -> None:
    """The keyframe ``initial`` holds the initial state in MuJoCo's coordinates (that these
    velocities are DART's is checked against dartpy in test/sim/test_engine_agreement.py)."""
    world = load_skel(JOINTS)
    export = world_to_mjcf(world)
    model = mujoco.MjModel.from_xml_string(export.xml)
    positions = {s.name: np.asarray(s.initial_positions) for s in world.skeletons}
    velocities = {s.name: np.asarray(s.initial_velocities) for s in world.skeletons}
    key = model.key("initial")
    assert np.array_equal(key.qpos, export.qpos(positions))
    assert np.array_equal(key.qvel, export.qvel(positions, velocities))
    assert np.abs(key.qvel).max() > 0.1


def test_refusals_name_the_element(tmp_path: Path) -> None:
    ball_limits = """<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="b"><inertia><mass>1</mass></inertia></body>
      <joint type="ball" name="j"><parent>world</parent><child>b</child>
        <dof local_index="1"><position lower="-1" upper="1"/></dof></joint>
    </skeleton></world></skel>"""
    with pytest.raises(ExportError, match="position limits") as info:
        world_to_mjcf(load_skel(ball_limits, name="limits.skel"))
    assert str(info.value).startswith("limits.skel:3:")
    mesh = tmp_path / "part.dae"
    mesh.write_text(
        '<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">'
        '<library_geometries><geometry id="g"><mesh><source id="p">'
        '<float_array id="pa" count="9">0 0 0 1 0 0 0 1 0</float_array></source>'
        '<vertices id="v"><input semantic="POSITION" source="#p"/></vertices>'
        '<triangles count="1"><input semantic="VERTEX" source="#v" offset="0"/><p>0 1 2</p>'
        '</triangles></mesh></geometry></library_geometries>'
        '<library_visual_scenes><visual_scene id="s"><node><instance_geometry url="#g"/>'
        '</node></visual_scene></library_visual_scenes>'
        '<scene><instance_visual_scene url="#s"/></scene></COLLADA>')
    collision_dae = f"""<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="b"><inertia><mass>1</mass></inertia>
        <visualization_shape><geometry><mesh><file_name>{mesh}</file_name>
          <scale>1 1 1</scale></mesh></geometry></visualization_shape>
        <collision_shape><geometry><mesh><file_name>{mesh}</file_name>
          <scale>1 1 1</scale></mesh></geometry></collision_shape></body>
      <joint type="revolute" name="j"><parent>world</parent><child>b</child></joint>
    </skeleton></world></skel>"""
    with pytest.raises(ExportError, match="collision shape cannot be left out") as info:
        world_to_mjcf(load_skel(collision_dae, name="dae.skel"))
    assert str(info.value).startswith("dae.skel:5:")
    visual_only = collision_dae.replace("<collision_shape>", "<!--").replace(
        "</collision_shape>", "-->")
    export = world_to_mjcf(load_skel(visual_only, name="dae.skel"))
    assert [str(w) for w in export.warnings] == [
        (f"dae.skel:3: /skel/world[@name='w']/skeleton[@name='s']/body[@name='b']"
         f"/visualization_shape: warning: visual mesh left out (MuJoCo reads .stl, .obj, .msh"
         f" meshes only): '{mesh}'")]
    assert 'type="mesh"' not in export.xml


def test_approximations_are_warned() -> None:
    export = world_to_mjcf(load_skel(JOINTS))
    messages = {w.message.split(" (")[0].split(":")[0] for w in export.warnings}
    assert "cone written as a 64-sided pyramid" in messages
    assert any("velocity/acceleration limits of" in w.message for w in export.warnings)


def test_cli_convert_to_mjcf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "arm.mjcf"
    assert main(["convert", str(REPO / "examples" / "arm.skel"), "-o", str(out)]) == 0
    assert mujoco.MjModel.from_xml_path(str(out)).nq == load_skel(
        REPO / "examples" / "arm.skel").skeletons[0].num_dofs
    as_xml = tmp_path / "arm_mujoco.xml"
    assert main(["convert", str(JOINTS), "-o", str(as_xml), "--to", "mjcf"]) == 0
    assert "cone written as" in capsys.readouterr().err
    mujoco.MjModel.from_xml_path(str(as_xml))
    soft = REPO / "test" / "sim" / "data" / "features.skel"
    assert main(["convert", str(soft), "-o", str(tmp_path / "x.mjcf")]) == 1
    assert "features.skel:151:" in capsys.readouterr().err


def test_write_mjcf_relative_mesh_paths(tmp_path: Path) -> None:
    if not (CORPUS / "data" / "skel" / "shapes.skel").is_file():
        pytest.skip("corpus not found")
    world = load_model(CORPUS / "data" / "skel" / "shapes.skel")
    sub = tmp_path / "out"
    sub.mkdir()
    export = write_mjcf(world, sub / "m.mjcf")
    assert 'file="/' not in export.xml  # relative to the output directory
    assert mujoco.MjModel.from_xml_path(str(sub / "m.mjcf")).nmesh > 0


def _one_body(inner: str, *, joint: str = "revolute") -> str:
    return f"""<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="b">{inner}</body>
      <joint type="{joint}" name="j"><parent>world</parent><child>b</child></joint>
    </skeleton></world></skel>"""


def test_what_mujoco_would_not_compile_is_refused_or_dropped() -> None:
    """Each of these compiled-and-failed in MuJoCo before the export checked for it."""
    # A massless body on a joint, with nothing to fold it into: bounded, with a warning.
    massless = world_to_mjcf(load_skel(_one_body("<inertia><mass>0</mass></inertia>"),
                                       name="m.skel"))
    assert [str(w).split(": warning: ")[0].split(":")[:2] for w in massless.warnings] == [
        ["m.skel", "2"]]
    assert "body 'b' moves with no mass" in massless.warnings[0].message
    mujoco.MjModel.from_xml_string(massless.xml)
    # Without joints a massless body is fine, as in MuJoCo.
    welded = world_to_mjcf(load_skel(_one_body("<inertia><mass>0</mass></inertia>",
                                               joint="weld")))
    mujoco.MjModel.from_xml_string(welded.xml)
    plane = ("<inertia><mass>1</mass><moment_of_inertia><ixx>1</ixx><iyy>1</iyy><izz>1</izz>"
             "<ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia></inertia>"
             "<{role}><geometry><plane><normal>0 0 1</normal>"
             "<offset>0</offset></plane></geometry></{role}>")
    with pytest.raises(ExportError, match="plane on a moving body"):
        world_to_mjcf(load_skel(_one_body(plane.format(role="collision_shape"))))
    visual = world_to_mjcf(load_skel(_one_body(plane.format(role="visualization_shape"))))
    assert [w.message.split(":")[0] for w in visual.warnings] == ["plane left out"]
    mujoco.MjModel.from_xml_string(visual.xml)
    still = world_to_mjcf(load_skel(_one_body(plane.format(role="collision_shape"),
                                              joint="weld")))
    assert 'type="plane"' in still.xml
    mujoco.MjModel.from_xml_string(still.xml)


_INERTIA = ("<inertia><mass>{m}</mass><moment_of_inertia><ixx>{i}</ixx><iyy>{i}</iyy>"
            "<izz>{i}</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia></inertia>")


def _chain(*links: tuple[str, str, str]) -> str:
    """A SKEL chain from the world: (joint type, mass, moment) per body, b0 first."""
    parts = []
    for k, (joint, mass, moment) in enumerate(links):
        parent = "world" if k == 0 else f"b{k - 1}"
        parts.append(f'<body name="b{k}">{_INERTIA.format(m=mass, i=moment)}</body>'
                     f'<joint type="{joint}" name="j{k}"><parent>{parent}</parent>'
                     f"<child>b{k}</child><axis><xyz>0 1 0</xyz></axis></joint>")
    body = "\n".join(parts)
    return (f'<skel version="1.0"><world name="w"><skeleton name="s">\n{body}\n'
            "</skeleton></world></skel>")


def test_massless_moving_body_is_carried_by_what_is_welded_to_it(tmp_path: Path) -> None:
    """MuJoCo's rule: a moving body, or one body welded to it, has mass and inertia."""
    # A massless free root welded to a 5 kg trunk, through a massless welded body.
    carried = world_to_mjcf(load_skel(_chain(("free", "0", "0"), ("weld", "0", "0"),
                                             ("weld", "5", "0.1"), ("revolute", "1", "0.01")),
                                      name="c.skel"))
    assert mujoco.MjModel.from_xml_string(carried.xml).nq == 8
    assert not carried.warnings
    # The same in URDF: a massless root link fixed to its trunk (example-robot-data's a1).
    urdf = tmp_path / "massless_base.urdf"
    urdf.write_text(
        '<robot name="mb"><link name="base"/>'
        '<joint name="fix" type="fixed"><parent link="base"/><child link="trunk"/></joint>'
        '<link name="trunk"><inertial><mass value="5"/><inertia ixx="0.1" ixy="0" ixz="0"'
        ' iyy="0.1" iyz="0" izz="0.1"/></inertial></link></robot>')
    _compile(world_to_mjcf(load_model(urdf), base_dir=tmp_path), tmp_path)


def test_massless_moving_body_is_folded_or_bounded() -> None:
    """Nothing welded carries it: folded into its child's MuJoCo body, or given a bound.

    (These were refused before; test_mjcf_massless.py has the DartEnv-style robots.)
    """
    # A massless body between two joints: its hinge goes into its child's MuJoCo body.
    folded = world_to_mjcf(load_skel(_chain(("revolute", "0", "0"), ("revolute", "1", "0.1")),
                                     name="m.skel"))
    assert not folded.warnings
    model = mujoco.MjModel.from_xml_string(folded.xml)
    assert model.nbody == 2
    assert model.jnt_bodyid[model.joint("j0").id] == model.jnt_bodyid[model.joint("j1").id]
    # A lone point mass, a massless body with a point mass welded to it: bounded.
    for links, bad, lacks in (
            ((("revolute", "1", "0"),), "b0", "a mass of 1 kg but no inertia about every axis"),
            ((("revolute", "1", "0.1"), ("revolute", "0", "0"), ("weld", "1", "0")), "b1",
             "no mass and no inertia")):
        export = world_to_mjcf(load_skel(_chain(*links), name="m.skel"))
        assert len(export.warnings) == 1
        assert export.warnings[0].message.startswith(f"body '{bad}' moves with {lacks}")
        assert export.warnings[0].location.line == 2 + int(bad[1])
        mujoco.MjModel.from_xml_string(export.xml)


def test_example_robot_data_massless_base_converts(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    """a1's root link 'base' has no inertial; it is welded to the trunk, as MuJoCo allows."""
    from urdf_robots import ament_env

    robots = ament_env(monkeypatch)
    world = load_model(robots / "a1_description" / "urdf" / "a1.urdf")
    assert world.skeletons[0].body("base").inertia.mass == 0.0
    export = world_to_mjcf(world, base_dir=tmp_path)
    model = _compile(export, tmp_path)
    assert model.nq == export.nq == 19
    assert _worst_fk_error(world, export, model, seed=1) < TOL


def test_nesting_mujoco_cannot_read_is_refused() -> None:
    """MuJoCo's XML parser stops at 500 nested elements: 496 nested bodies at most."""
    deepest = _chain(*[("revolute", "1", "0.1")] * MAX_BODY_DEPTH)
    model = mujoco.MjModel.from_xml_string(world_to_mjcf(load_skel(deepest)).xml)
    assert model.nbody == MAX_BODY_DEPTH + 1
    too_deep = _chain(*[("revolute", "1", "0.1")] * (MAX_BODY_DEPTH + 1))
    with pytest.raises(ExportError, match=f"nested {MAX_BODY_DEPTH + 1} bodies deep") as info:
        world_to_mjcf(load_skel(too_deep, name="deep.skel"))
    assert str(info.value).startswith(f"deep.skel:{2 + MAX_BODY_DEPTH}:")


def _mesh_bodies(stl: Path, role: str, n: int) -> str:
    links = "".join(
        f'<body name="b{k}"><inertia><mass>1</mass></inertia><{role}><geometry><mesh>'
        f"<file_name>{stl}</file_name><scale>1 1 1</scale></mesh></geometry></{role}></body>"
        f'<joint type="weld" name="j{k}"><parent>world</parent><child>b{k}</child></joint>'
        for k in range(n))
    return (f'<skel version="1.0"><world name="w"><skeleton name="s">{links}'
            "</skeleton></world></skel>")


def test_repeated_warnings_are_given_once_with_a_count(tmp_path: Path) -> None:
    """One line per kind of warning, with how many times and the first location."""
    stl = tmp_path / "tri.stl"  # binary STL: one triangle
    stl.write_bytes(bytes(80) + (1).to_bytes(4, "little") + bytes(50))
    export = world_to_mjcf(load_skel(_mesh_bodies(stl, "collision_shape", 38), name="m.skel"))
    hull = [str(w) for w in export.warnings if "convex hull" in w.message]
    assert len(hull) == 1
    assert hull[0].startswith("m.skel:1:")
    assert hull[0].endswith("collision mesh: MuJoCo collides with its convex hull"
                            " (38 times; the first is here)")


def test_ascii_stl_is_refused_or_dropped(tmp_path: Path) -> None:
    """MuJoCo reads binary STL only: an ASCII STL failed to compile before."""
    stl = tmp_path / "box.stl"
    stl.write_text("solid box\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                   "vertex 0 1 0\nendloop\nendfacet\nendsolid box\n")
    with pytest.raises(ExportError, match="an ASCII STL file; MuJoCo reads binary STL only"):
        world_to_mjcf(load_skel(_mesh_bodies(stl, "collision_shape", 1)))
    export = world_to_mjcf(load_skel(_mesh_bodies(stl, "visualization_shape", 2)))
    assert [w.message for w in export.warnings] == [
        (f"visual mesh left out (an ASCII STL file; MuJoCo reads binary STL only): '{stl}'"
         " (2 times; the first is here)")]
    mujoco.MjModel.from_xml_string(export.xml)
