"""Moving bodies without mass in the MJCF export (skel_ros.model.mjcf_masses).

MuJoCo moves no body that neither has, nor has welded to it, a mass and a moment of
inertia; DART does, and DartEnv's robots (hopper, walker2d, half_cheetah...) are built
on such bodies: a planar root of massless bodies with one DOF each. The robots of
``test/model/data/massless/`` are built after them:

* ``hopper.skel``: DartEnv's own layout (massless x and y slides, then the torso's hinge);
* ``crane.skel``: massless bodies that turn, with offsets and rotations between joints;
* ``gantry.skel``: a massless body on a 3-DOF translational joint, then a ball;
* ``bounded.skel``: four bodies that cannot be folded (a ball joint, a shape, a moment of
  inertia that turns, a point mass).

Folded robots must match our kinematics (1e-9) and DART's mass matrix (1e-9; measured
1e-14) exactly; bounded ones differ by the bound, which the warning states.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from corpus_data import CORPUS

from skel_ros.cli.main import main
from skel_ros.model import ExportError, Kinematics, load_model, load_skel, world_to_mjcf
from skel_ros.model.mjcf_masses import MASS_BOUND_RATIO, mass_plan

if TYPE_CHECKING:
    from skel_ros.model.types import World

mujoco = pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "test" / "model" / "data" / "massless"
FOLDED = [DATA / "hopper.skel", DATA / "crane.skel", DATA / "gantry.skel"]
BOUNDED = DATA / "bounded.skel"
TOL = 1e-9


def _compile(xml: str, directory: Path) -> object:
    path = directory / "model.mjcf"
    path.write_text(xml, encoding="utf-8")
    return mujoco.MjModel.from_xml_path(str(path))


def _random_positions(world: World, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {s.name: rng.uniform(-2.0, 2.0, s.num_dofs) for s in world.skeletons}


def _fk_error(world: World, model: object, seed: int) -> float:
    """Largest difference of every SKEL body's pose, MuJoCo's (through MjcfBody.pose) - ours."""
    export = world_to_mjcf(world)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(5):
        positions = _random_positions(world, rng)
        data.qpos[:] = export.qpos(positions)
        mujoco.mj_kinematics(model, data)
        for skeleton in world.skeletons:
            ours = Kinematics(skeleton).body_transforms(positions[skeleton.name])
            placed = [b for b in export.bodies if b.skeleton == skeleton.name]
            assert sorted(b.body for b in placed) == sorted(b.name for b in skeleton.bodies)
            for body in placed:
                i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body.name)
                pose = np.eye(4)
                pose[:3, :3] = data.xmat[i].reshape(3, 3)
                pose[:3, 3] = data.xpos[i]
                theirs = body.pose(pose, positions[skeleton.name])
                index = skeleton.bodies.index(skeleton.body(body.body))
                worst = max(worst, float(np.abs(theirs - ours[index]).max()))
    return worst


def _mass_matrix_error(world: World, model: object, seed: int) -> float:
    """Largest difference of MuJoCo's joint-space mass matrix and DART's.

    Over the hinge, slide and ball DOFs (the same velocity coordinates in both engines;
    a free joint's are not: DART's twist against MuJoCo's world-linear, body-angular).
    """
    from skel_ros.sim.mujoco_engine import _full_mass_matrix
    from skel_ros.sim.world_builder import build_dart_world

    export = world_to_mjcf(world)
    dart = build_dart_world(world)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(5):
        positions = _random_positions(world, rng)
        data.qpos[:] = export.qpos(positions)
        mujoco.mj_forward(model, data)
        full = _full_mass_matrix(mujoco, model, data)
        for k, skeleton in enumerate(world.skeletons):
            index = np.full(skeleton.num_dofs, -1)
            for j in export.joints:
                if j.skeleton == skeleton.name and j.free is None and j.scale == 1.0:
                    address = int(model.jnt_dofadr[mujoco.mj_name2id(
                        model, mujoco.mjtObj.mjOBJ_JOINT, j.name)])
                    index[list(j.dofs)] = address + np.arange(len(j.dofs))
            same = np.flatnonzero(index >= 0)
            assert same.size >= skeleton.num_dofs - 6  # all but a free joint's
            theirs = dart.getSkeleton(k)
            theirs.setPositions(positions[skeleton.name])
            ours = full[np.ix_(index[same], index[same])]
            worst = max(worst, float(np.abs(ours - theirs.getMassMatrix()[np.ix_(same, same)])
                                     .max()))
    return worst


@pytest.mark.parametrize("path", FOLDED, ids=lambda p: p.stem)
def test_folded_robot_has_our_kinematics_and_darts_mass_matrix(path: Path,
                                                              tmp_path: Path) -> None:
    pytest.importorskip("dartpy")
    world = load_model(path)
    export = world_to_mjcf(world)
    assert not export.warnings  # folding is exact: nothing to warn about
    model = _compile(export.xml, tmp_path)
    assert model.nq == export.nq
    # The folded bodies have no MuJoCo body: the body that carries them stands for them.
    assert model.nbody == len({b.name for b in export.bodies}) + 1 < len(export.bodies) + 1
    assert _fk_error(world, model, seed=len(path.stem)) < TOL
    assert _mass_matrix_error(world, model, seed=len(path.stem)) < TOL


def test_hopper_is_written_as_mujocos_hopper() -> None:
    """DartEnv's planar root becomes MuJoCo's: rootx, rooty, then rotz in the torso."""
    export = world_to_mjcf(load_model(DATA / "hopper.skel"))
    model = mujoco.MjModel.from_xml_string(export.xml)
    torso = model.body("torso").id
    joints = [model.joint(j).name for j in range(model.njnt) if model.jnt_bodyid[j] == torso]
    assert joints == ["rootx", "rooty", "rotz"]
    assert [model.jnt_type[model.joint(j).id] for j in joints] == [
        mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_SLIDE, mujoco.mjtJoint.mjJNT_HINGE]
    assert np.array_equal(model.jnt_pos[model.joint("rotz").id], np.zeros(3))
    assert {b.body: b.name for b in export.bodies if b.name == "torso"} == {
        "rootx": "torso", "rooty": "torso", "torso": "torso"}
    for name in ("rootx", "rooty"):
        assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, name) == -1


def test_folded_hinges_act_about_their_own_points() -> None:
    """A folded hinge away from the carrying body's frame gets its own pos and axis."""
    model = mujoco.MjModel.from_xml_string(world_to_mjcf(load_model(DATA / "crane.skel")).xml)
    hook = model.body("hook").id
    assert [model.joint(j).name for j in range(model.njnt) if model.jnt_bodyid[j] == hook] == [
        "slew", "trolley", "hook_1", "hook_2"]
    assert np.linalg.norm(model.jnt_pos[model.joint("slew").id]) > 0.5
    gantry = mujoco.MjModel.from_xml_string(world_to_mjcf(load_model(DATA / "gantry.skel")).xml)
    payload = gantry.body("payload").id
    kinds = [gantry.jnt_type[j] for j in range(gantry.njnt) if gantry.jnt_bodyid[j] == payload]
    assert kinds == [mujoco.mjtJoint.mjJNT_SLIDE] * 3 + [mujoco.mjtJoint.mjJNT_BALL]


def test_unfoldable_bodies_are_bounded_with_a_warning(tmp_path: Path) -> None:
    pytest.importorskip("dartpy")
    world = load_model(BOUNDED)
    export = world_to_mjcf(world)
    warned = {re.match(r"body '(\w+)'", w.message).group(1): w  # type: ignore[union-attr]
              for w in export.warnings}
    assert set(warned) == {"socket", "lamp", "platter", "bob"}
    why = {"socket": "its joint is a ball joint", "lamp": "it has 1 shape(s)",
           "platter": "it turns, and its moment of inertia", "bob": "its mass of 0.5 kg"}
    for name, warning in warned.items():
        assert why[name] in warning.message
        assert warning.location.line > 0
    # How much, and where: 1e-6 of the skeleton's mass (1.5 kg) and of its largest moment
    # of inertia about a body origin (the forearm's: 0.012 + 1.5 * 0.15^2 kg m^2).
    assert "is given 1.5e-06 kg and 4.57e-08 kg m^2 about each axis" in warned["socket"].message
    assert "is given 4.5e-08 kg m^2 about each axis" in warned["bob"].message
    model = _compile(export.xml, tmp_path)
    assert model.body_mass[model.body("wrist/socket").id] == pytest.approx(MASS_BOUND_RATIO * 1.5)
    assert model.body_mass[model.body("bob/bob").id] == 0.5
    assert _fk_error(world, model, seed=2) < TOL
    # The dynamics differ by the bound: a little, not nothing.
    assert 1e-9 < _mass_matrix_error(world, model, seed=2) < 1e-7


def test_massless_free_floating_body_is_refused() -> None:
    free = """<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="float"><inertia><mass>0</mass></inertia></body>
      <body name="arm"><inertia><mass>1</mass></inertia></body>
      <joint type="free" name="j"><parent>world</parent><child>float</child></joint>
      <joint type="revolute" name="k"><parent>float</parent><child>arm</child></joint>
    </skeleton></world></skel>"""
    with pytest.raises(ExportError, match="floats on free joint 'j'") as info:
        world_to_mjcf(load_skel(free, name="f.skel"))
    assert str(info.value).startswith("f.skel:2:")
    alone = """<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="float"><inertia><mass>0</mass></inertia></body>
      <joint type="free" name="j"><parent>world</parent><child>float</child></joint>
    </skeleton></world></skel>"""
    with pytest.raises(ExportError, match="floats on free joint 'j'"):
        world_to_mjcf(load_skel(alone, name="f.skel"))
    # Welded to a body with mass and inertia, it is carried, as MuJoCo allows.
    carried = free.replace('type="revolute"', 'type="weld"')
    world_to_mjcf(load_skel(carried, name="f.skel"))


def test_a_placeholder_body_with_an_inertia_no_body_has_is_a_point_mass(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """example-robot-data's Go1: its root link 'base' (1e-6 kg, every inertia entry 1e-6:
    rank one) is welded to the trunk. MuJoCo refuses the tensor, and the export refused
    the robot; so light a body is now a point mass (with a warning), a heavy one is not."""
    from urdf_robots import ament_env

    robots = ament_env(monkeypatch)
    world = load_model(robots / "go1_description" / "urdf" / "go1.urdf")
    export = world_to_mjcf(world, base_dir=tmp_path)
    (said,) = [w for w in export.warnings if "written as a point mass" in w.message]
    assert said.message.startswith("body 'base': its moment of inertia")
    model = _compile(export.xml, tmp_path)
    assert _fk_error(world, model, seed=5) < TOL
    heavy = """<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="base"><inertia><mass>MASS</mass><moment_of_inertia><ixx>1e-6</ixx>
        <iyy>1e-6</iyy><izz>1e-6</izz><ixy>1e-6</ixy><ixz>1e-6</ixz><iyz>1e-6</iyz>
        </moment_of_inertia></inertia></body>
      <body name="trunk"><inertia><mass>5</mass></inertia></body>
      <joint type="free" name="j"><parent>world</parent><child>base</child></joint>
      <joint type="weld" name="k"><parent>base</parent><child>trunk</child></joint>
    </skeleton></world></skel>"""
    world_to_mjcf(load_skel(heavy.replace("MASS", "1e-6"), name="h.skel"))
    with pytest.raises(ExportError, match="not one a rigid body can have"):
        world_to_mjcf(load_skel(heavy.replace("MASS", "0.5"), name="h.skel"))


def test_soft_body_is_still_refused() -> None:
    with pytest.raises(ExportError, match="soft body"):
        world_to_mjcf(load_model(REPO / "test" / "sim" / "data" / "features.skel"))


def test_engines_agree_on_folded_and_bounded_robots() -> None:
    """Folding changes nothing DART simulates; a bound changes it by a little.

    One second at the world's step with docs/mujoco.md's efforts on every DOF (measured:
    1e-15 rad on the hopper and the crane, 3e-8 on the gantry, whose ball DART keeps as a
    rotation vector; 2e-5 on the bounded robots).
    """
    pytest.importorskip("dartpy")
    from skel_ros.sim.agreement import compare_engines

    for path, bound in ((DATA / "hopper.skel", 1e-9), (DATA / "crane.skel", 1e-9),
                        (DATA / "gantry.skel", 1e-6)):
        result = compare_engines(load_model(path))
        assert not result.unstable
        assert result.max_error < bound, path.name
    bounded = compare_engines(load_model(BOUNDED))
    assert 1e-9 < bounded.max_error < 1e-4


def test_mujoco_engine_places_folded_bodies() -> None:
    """The MuJoCo engine's body transforms (the node's TF) include the folded bodies."""
    pytest.importorskip("dartpy")
    from skel_ros.sim import SimEngine
    from skel_ros.sim.mujoco_engine import MujocoEngine

    for path in (DATA / "hopper.skel", DATA / "crane.skel"):
        world = load_model(path)
        dart, mj = SimEngine(world), MujocoEngine(world)
        np.testing.assert_allclose(mj.body_transforms(), dart.body_transforms(), atol=1e-12)
        for _ in range(20):
            dart.step()
            mj.step()
        np.testing.assert_allclose(mj.body_transforms(), dart.body_transforms(), atol=1e-9)


def test_cli_converts_massless_robots(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hopper.xml"
    assert main(["convert", str(DATA / "hopper.skel"), "-o", str(out), "--to", "mjcf"]) == 0
    assert mujoco.MjModel.from_xml_path(str(out)).nq == 6
    capsys.readouterr()
    assert main(["convert", str(BOUNDED), "-o", str(tmp_path / "b.mjcf")]) == 0
    err = capsys.readouterr().err
    assert "bounded.skel:17:" in err
    assert "body 'socket' moves with no mass and no inertia" in err


def test_example_robot_data_human_folds_exactly(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    """example-robot-data's 36-DOF human: each 3-DOF joint is three revolutes through
    massless 'virtual' links. Refused before; now every virtual link is folded."""
    pytest.importorskip("dartpy")
    from urdf_robots import ament_env

    robots = ament_env(monkeypatch)
    world = load_model(robots / "human_description" / "robots" / "human.urdf")
    export = world_to_mjcf(world, base_dir=tmp_path)
    assert not [w for w in export.warnings if "moves with" in w.message]  # nothing bounded
    model = _compile(export.xml, tmp_path)
    assert len(export.bodies) - len({b.name for b in export.bodies}) == 19  # folded
    assert _fk_error(world, model, seed=3) < TOL
    assert _mass_matrix_error(world, model, seed=3) < TOL


def test_corpus_files_with_massless_moving_bodies(tmp_path: Path) -> None:
    """Every corpus file with a moving body MuJoCo would refuse converts exactly or bounded.

    (DartEnv's files, when the corpus at SKEL_CORPUS holds them; DART's own corpus has
    none, and test_mjcf.py converts all of its files.)
    """
    pytest.importorskip("dartpy")
    root = CORPUS / "data" / "skel"
    found = 0
    for path in sorted(root.rglob("*.skel")) if root.is_dir() else ():
        try:
            world = load_model(path)
        except Exception:  # noqa: BLE001, S112 - not loadable: not ours to export
            continue
        plans = [mass_plan(s) for s in world.skeletons
                 if s.mobile and not any(b.soft is not None for b in s.bodies)]
        if not any(p.folds or p.bounds for p in plans):
            continue
        try:
            export = world_to_mjcf(world, base_dir=tmp_path)
        except ExportError as exc:  # the rank-1 inertia of force_torque_test2, bounded or not
            assert "not one a rigid body can have" in str(exc), path  # noqa: PT017
            continue
        found += 1
        model = _compile(export.xml, tmp_path)
        assert _fk_error(world, model, seed=found) < TOL, path
        if not any(p.bounds for p in plans):
            assert _mass_matrix_error(world, model, seed=found) < TOL, path
    if not found:
        pytest.skip(f"no corpus file at {root} has a massless moving body")


def test_bound_scales_with_the_robot() -> None:
    """The same robot 1000 times heavier gets a 1000 times larger bound."""
    text = BOUNDED.read_text()
    heavy = re.sub(r"<mass>([0-9.]+)</mass>", lambda m: f"<mass>{float(m[1]) * 1000}</mass>",
                   text)
    heavy = re.sub(r"<(i[xyz]{2})>([0-9.]+)</", lambda m: f"<{m[1]}>{float(m[2]) * 1000}</",
                   heavy)
    light = {s.name: mass_plan(s) for s in load_skel(text).skeletons}
    scaled = {s.name: mass_plan(s) for s in load_skel(heavy).skeletons}
    for name, plan in light.items():
        for body, bound in plan.bounds.items():
            other = scaled[name].bounds[body]
            assert math.isclose(other.mass, 1000 * bound.mass, rel_tol=1e-12)
            assert math.isclose(other.moment, 1000 * bound.moment, rel_tol=1e-12)
