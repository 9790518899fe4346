"""DART and MuJoCo on the same model (skel_ros.sim.agreement, docs/mujoco.md).

The bound, and why: both engines integrate with semi-implicit Euler (velocities first,
then positions with the new velocities), both compute the exact rigid-body dynamics, and
both treat joint damping implicitly. Where no constraint is active (no limit reached, no
Coulomb friction, no contact), the same initial state and the same efforts therefore give
the same step map in both, and the runs differ only by rounding: 1e-9 over 1 s on hinge
models (measured: at most 1e-13 on the corpus); 1e-6 where a ball or free joint turns
(measured: at most 8.5e-7 on the corpus, 2e-8 on the models below), whose orientation
DART keeps as a rotation vector, converted every step, and MuJoCo as a quaternion: that
error grows with the number of steps, not with their size. Springs differ by O(dt):
DART integrates them implicitly, MuJoCo explicitly, so that error must shrink about 10x
with a 10x smaller step. Limits, friction and contacts are soft constraints in MuJoCo and
hard ones in DART: docs/mujoco.md reports them, no bound is claimed.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

pytest.importorskip("dartpy")
mujoco = pytest.importorskip("mujoco")

from skel_ros.model import load_model, load_skel, world_to_mjcf  # noqa: E402
from skel_ros.model.transforms import inverse  # noqa: E402
from skel_ros.sim import SimEngine  # noqa: E402
from skel_ros.sim.agreement import compare_engines, main  # noqa: E402

if TYPE_CHECKING:
    from skel_ros.model.types import World

REPO = Path(__file__).resolve().parents[2]
JOINTS = REPO / "test" / "model" / "data" / "mjcf_joints.skel"
HINGE_BOUND = 1e-9  # rad or m, over 1 s (see the module docstring)
ROTATION_BOUND = 1e-6  # the same with ball or free joints

# A body on a free joint, spinning, off-centre COM, full inertia, joint frame away from
# the body frame on both sides: every term of the free-joint velocity conversion.
FREE_BODY = """<skel version="1.0"><world name="w"><physics><time_step>0.001</time_step>
  <gravity>0 -9.81 0</gravity></physics>
  <skeleton name="s"><transformation>0 0 0 0.1 0.2 0.3</transformation>
    <body name="b"><transformation>0 1 0 0.2 0.1 0</transformation>
      <inertia><mass>2</mass><offset>0.1 0 0.05</offset><moment_of_inertia><ixx>0.1</ixx>
        <iyy>0.2</iyy><izz>0.15</izz><ixy>0.01</ixy><ixz>0</ixz><iyz>0</iyz>
      </moment_of_inertia></inertia></body>
    <joint type="free" name="j"><parent>world</parent><child>b</child>
      <transformation>0.05 0 0 0.2 0 0.1</transformation>
      <init_pos>0.1 0.2 -0.3 0.01 0.02 0.03</init_pos>
      <init_vel>1 2 0.5 0.3 -0.2 0.1</init_vel></joint>
  </skeleton></world></skel>"""

# A damped pendulum on a spring with a rest position: the one smooth term the engines
# integrate differently.
SPRING = """<skel version="1.0"><world name="w"><physics><time_step>0.001</time_step>
  <gravity>0 -9.81 0</gravity></physics>
  <skeleton name="s">
    <body name="b"><transformation>0 0 0 0 0 0</transformation>
      <inertia><mass>1</mass><offset>0 -0.5 0</offset></inertia></body>
    <joint type="revolute" name="j" actuator="force"><parent>world</parent><child>b</child>
      <axis><xyz>0 0 1</xyz></axis><init_pos>0.3</init_pos>
      <dof local_index="0"><spring_stiffness>40</spring_stiffness>
        <spring_rest_position>-0.2</spring_rest_position><damping>0.2</damping></dof>
    </joint></skeleton></world></skel>"""


# A servo joint (no command: held still, in DART by its servo motor, in MujocoEngine by a
# velocity actuator) under a swinging force-actuated child.
SERVO = """<skel version="1.0"><world name="w"><physics><time_step>0.001</time_step>
  <gravity>0 -9.81 0</gravity></physics>
  <skeleton name="s">
    <body name="a"><transformation>0 0 0 0 0 0</transformation>
      <inertia><mass>1</mass><offset>0 -0.25 0</offset></inertia></body>
    <body name="b"><transformation>0 -0.5 0 0 0 0</transformation>
      <inertia><mass>1</mass><offset>0 -0.25 0</offset></inertia></body>
    <joint type="revolute" name="held" actuator="servo"><parent>world</parent><child>a</child>
      <axis><xyz>0 0 1</xyz></axis><init_pos>0.5</init_pos></joint>
    <joint type="revolute" name="swing" actuator="force"><parent>a</parent><child>b</child>
      <axis><xyz>0 0 1</xyz></axis><init_pos>0.3</init_pos></joint>
  </skeleton></world></skel>"""


def _corpus(name: str) -> Path:
    from corpus_data import CORPUS  # test/model's helper: SKEL_CORPUS or ../shared

    path = CORPUS / "data" / "skel" / name
    if not path.is_file():
        pytest.skip(f"corpus file {name} not found (set SKEL_CORPUS)")
    return path


def _without_constraints(world: World) -> World:
    """The world with its position, velocity limits and Coulomb friction taken out."""
    inf = math.inf
    skeletons = tuple(
        dataclasses.replace(s, dofs=tuple(
            dataclasses.replace(d, position_lower=-inf, position_upper=inf,
                                velocity_lower=-inf, velocity_upper=inf, coulomb_friction=0.0)
            for d in s.dofs))
        for s in world.skeletons)
    return dataclasses.replace(world, skeletons=skeletons)


@pytest.fixture(autouse=True)
def _corpus_helper_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO / "test" / "model"))


@pytest.mark.parametrize(("name", "bound"), [("test/double_pendulum.skel", HINGE_BOUND),
                                           ("test/double_pendulum_euler_joint.skel", HINGE_BOUND),
                                           ("test/single_pendulum_ball_joint.skel",
                                            ROTATION_BOUND)])
def test_constraint_free_corpus_models_agree(name: str, bound: float) -> None:
    world = load_model(_corpus(name))
    for step in (world.time_step, world.time_step / 10.0):
        result = compare_engines(world, time_step=step)
        assert not result.contacts
        assert not result.unstable
        assert result.max_error < bound, (step, result)


def test_examples_agree_once_the_constraints_are_out() -> None:
    """The arm's whole difference (0.7 rad, docs/mujoco.md) is its limits and friction."""
    world = load_model(REPO / "examples" / "arm.skel")
    as_written = compare_engines(world, duration=0.5)
    smooth = compare_engines(_without_constraints(world), duration=0.5)
    assert smooth.max_error < HINGE_BOUND
    assert as_written.max_error > 1e3 * HINGE_BOUND


def test_free_body_agrees() -> None:
    """DART's free-joint velocity is converted to MuJoCo's, and MuJoCo's free body is the
    SKEL body itself (measured before each fix: 0.18 m apart after 1 s with DART's
    velocity read as a joint-frame twist; 1.3e-4 m, first order in the step, with the
    MuJoCo body at the joint frame, whose origin MuJoCo integrates and DART does not)."""
    world = load_skel(FREE_BODY)
    for step in (world.time_step, world.time_step / 10.0):
        assert compare_engines(world, time_step=step).max_error < ROTATION_BOUND


def test_spring_error_is_first_order_in_the_step() -> None:
    world = load_skel(SPRING)
    coarse = compare_engines(world)
    fine = compare_engines(world, time_step=world.time_step / 10.0)
    assert coarse.max_error > ROTATION_BOUND  # the one real difference, and it is O(dt):
    assert fine.max_error < coarse.max_error / 5.0
    # The implicit spring of DART lowers the frequency by about k dt / (2 I w) (3e-4 of a
    # 13.4 rad/s swing for k = 40 N m/rad on 0.25 kg m^2): a phase drift of 1e-2 rad over
    # 1 s at 0.5 rad of amplitude. Measured 6.9e-3 rad, then 6.9e-4 at the tenth step.
    assert coarse.max_error < 10.0 * world.time_step


def test_servo_joint_is_held_alike() -> None:
    """MuJoCo runs as the node runs it (MujocoEngine): its servo joint is held, not left to
    fall (a bare MjModel of the export has no actuator there: 0.97 rad apart after 1 s).
    The servo's force is solved each step for the commanded velocity after the step, as
    DART's servo constraint does, so the engines agree to rounding at any step (measured
    3e-12 rad; the velocity actuator it replaced lagged 1.6e-8)."""
    world = load_skel(SERVO)
    for time_step in (world.time_step, world.time_step / 10.0):
        assert compare_engines(world, time_step=time_step).max_error < 1e-9


def test_contacts_are_reported() -> None:
    """A box dropped on the ground: both engines see the contact (and count it their way)."""
    result = compare_engines(load_model(_corpus("cube.skel")), duration=0.3)
    assert result.dart_contacts > 0
    assert result.mujoco_contacts > 0
    assert not result.unstable


def test_velocities_match_dart_body_velocities() -> None:
    """MjcfExport.qvel gives every body the angular and linear velocity DART gives it,
    ball and free joints (at and below a root), chains and screws included."""
    world = load_skel(JOINTS)
    engine = SimEngine(world, enforce_limits=False)
    export = world_to_mjcf(world)
    model = mujoco.MjModel.from_xml_string(export.xml)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(7)
    positions, velocities = {}, {}
    dart = {engine.world.getSkeleton(i).getName(): engine.world.getSkeleton(i)
            for i in range(engine.world.getNumSkeletons())}
    for s in world.skeletons:
        q = rng.uniform(-1.0, 1.0, s.num_dofs) if s.mobile else np.asarray(s.initial_positions)
        v = rng.uniform(-1.0, 1.0, s.num_dofs) if s.mobile else np.zeros(s.num_dofs)
        positions[s.name], velocities[s.name] = q, v
        if s.num_dofs:
            dart[s.name].setPositions(q)
            dart[s.name].setVelocities(v)
    data.qpos[:] = export.qpos(positions)
    data.qvel[:] = export.qvel(positions, velocities)
    mujoco.mj_forward(model, data)
    checked = 0
    for body in export.bodies:
        node = dart[body.skeleton].getBodyNode(body.body)
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body.name)
        velocity = np.zeros(6)  # (angular, linear) of MuJoCo's body frame, world axes
        mujoco.mj_objectVelocity(model, data, mujoco.mjtObj.mjOBJ_XBODY, i, velocity, 0)
        frame = node.getWorldTransform().matrix() @ np.asarray(body.frame)
        angular = np.asarray(node.getAngularVelocity())
        linear = (np.asarray(node.getLinearVelocity())
                  + np.cross(angular, frame[:3, 3] - node.getWorldTransform().translation()))
        assert np.abs(velocity[:3] - angular).max() < 1e-9, body.name
        assert np.abs(velocity[3:] - linear).max() < 1e-9, body.name
        theirs = np.eye(4)
        theirs[:3, :3] = data.xmat[i].reshape(3, 3)
        theirs[:3, 3] = data.xpos[i]
        assert np.abs(theirs @ inverse(np.asarray(body.frame))
                      - node.getWorldTransform().matrix()).max() < 1e-9
        checked += 1
    assert checked == len(export.bodies) > 15


def test_table_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(REPO / "examples" / "arm.skel"), "--duration", "0.05"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("| file | joints |")
    assert "position limits, velocity limits, Coulomb friction" in rows[2]
