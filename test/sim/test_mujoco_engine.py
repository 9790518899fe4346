"""The MuJoCo engine: DART's command semantics per SKEL actuator type, names, state, reset.

The worlds and the closed-form expectations are test_engine.py's (a one-link pendulum,
``data/two_arms.skel``, the examples); each test states what both engines must do, and
where MuJoCo's actuators only approach DART's kinematic joints (a velocity actuator of
gain ``KINEMATIC_GAIN M / dt`` leaves 1e-5 of the velocity error per step), by how much.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")

from test_engine import (  # test/sim/test_engine.py: the same worlds as for DART
    ARM,
    DT,
    GRAVITY,
    INERTIA,
    MASS,
    TWO_ARMS,
    pendulum,
    trajectory,
)

from skel_ros.model import load_model, load_skel
from skel_ros.sim import ENGINES, CommandError, MujocoEngine, SimEngine

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [REPO / "examples" / "arm.skel", REPO / "examples" / "quadruped.skel"]

# A free-floating base (its joint frame away from the body's origin, so DART's free-joint
# velocity and MuJoCo's differ), a ball joint and a hinge below it.
FLOATING = """<skel version="1.0"><world name="w">
<physics><time_step>0.001</time_step><gravity>0 0 -9.81</gravity></physics>
<skeleton name="floating">
 <body name="base"><inertia><mass>2</mass></inertia></body>
 <body name="head"><transformation>0 0 0.3 0 0 0</transformation>
  <inertia><mass>0.5</mass></inertia></body>
 <body name="arm"><transformation>0.2 0 0.3 0 0 0</transformation>
  <inertia><mass>0.3</mass></inertia></body>
 <joint type="free" name="root"><parent>world</parent><child>base</child>
  <transformation>0.1 -0.2 0.05 0.3 -0.4 0.2</transformation></joint>
 <joint type="ball" name="neck"><parent>base</parent><child>head</child>
  <transformation>0 0 -0.1 0 0 0</transformation></joint>
 <joint type="revolute" name="shoulder"><parent>base</parent><child>arm</child>
  <axis><xyz>0 1 0</xyz></axis></joint>
</skeleton></world></skel>"""


def mujoco_of(text: str, **kwargs: object) -> MujocoEngine:
    return MujocoEngine(load_skel(text, name="test.skel"), **kwargs)  # type: ignore[arg-type]


def test_engines_table() -> None:
    assert {"dart": SimEngine, "mujoco": MujocoEngine} == ENGINES


# --------------------------------------------------------------------------- FORCE

def test_effort_command_on_a_force_joint() -> None:
    """A torque tau turns the link at tau / I: semi-implicit Euler in both engines (1e-9)."""
    engine = mujoco_of(pendulum(gravity=False))
    torque, steps = 0.3, 400
    [result] = engine.set_commands("effort", ["hinge"], [torque])
    assert result.ok
    q, v = trajectory(engine, steps)
    acc = torque / INERTIA
    assert v[-1] == pytest.approx(acc * DT * steps, rel=1e-9)
    assert q[-1] == pytest.approx(acc * DT * DT * steps * (steps + 1) / 2, rel=1e-9)
    assert engine.efforts()[0] == pytest.approx(torque, rel=1e-12)


def test_position_command_on_a_force_joint_under_gravity() -> None:
    """The same PD + gravity compensation as DART: within 1e-6 rad of the target at 1 s,
    no overshoot, the gravity torque as effort. The two runs differ by 2.2e-3 rad at most
    on the way (0.5 % of the move; DART integrates the PD's joint spring implicitly,
    MuJoCo explicitly; w dt = 0.02): stated 5e-3."""
    target = 0.5
    runs = []
    for make in (mujoco_of, lambda text: SimEngine(load_skel(text, name="test.skel"))):
        engine = make(pendulum())
        engine.set_commands("position", ["hinge"], [target])
        q, _ = trajectory(engine, 1000)
        assert abs(q[-1] - target) <= 1e-6
        assert q.max() <= target + 1e-9
        assert engine.efforts()[0] == pytest.approx(MASS * GRAVITY * ARM * math.cos(target),
                                                    rel=1e-4)
        runs.append(q)
    assert np.abs(runs[0] - runs[1]).max() < 5e-3


def test_position_command_beyond_the_effort_limit_saturates() -> None:
    dof = '<dof local_index="0"><force lower="-0.5" upper="0.5"/></dof>'
    engine = mujoco_of(pendulum(dof=dof))
    engine.set_commands("position", ["hinge"], [0.0])
    q, _ = trajectory(engine, 500)
    assert q[-1] < -0.5
    assert engine.efforts()[0] == pytest.approx(0.5)


# --------------------------------------------------------------------------- SERVO / VELOCITY

@pytest.mark.parametrize("actuator", ["servo", "velocity"])
def test_velocity_command(actuator: str) -> None:
    """The commanded velocity from the first step on, against gravity (DART: exactly; here
    within 2e-5 rad/s: 1e-5 of the error is left each step)."""
    engine = mujoco_of(pendulum(actuator))
    engine.set_commands("velocity", ["hinge"], [0.7])
    q, v = trajectory(engine, 200)
    np.testing.assert_allclose(v, 0.7, atol=2e-5)
    assert q[-1] == pytest.approx(0.7 * 0.2, abs=1e-5)


def test_servo_with_a_weak_motor_sags() -> None:
    """A servo reaches the velocity only within its force limits (gravity: 4.9 N m > 1)."""
    dof = '<dof local_index="0"><force lower="-1" upper="1"/></dof>'
    engine = mujoco_of(pendulum("servo", dof=dof))
    engine.set_commands("velocity", ["hinge"], [0.0])
    _, v = trajectory(engine, 100)
    assert v[-1] < -0.1
    assert engine.efforts()[0] == pytest.approx(1.0, rel=1e-6)


def test_a_velocity_joint_ignores_the_force_limits() -> None:
    """VELOCITY is kinematic in DART: its force limits do not slow it (unlike SERVO)."""
    dof = '<dof local_index="0"><force lower="-1" upper="1"/></dof>'
    engine = mujoco_of(pendulum("velocity", dof=dof))
    engine.set_commands("velocity", ["hinge"], [0.0])
    _, v = trajectory(engine, 100)
    assert abs(v[-1]) < 1e-5


@pytest.mark.parametrize("actuator", ["servo", "velocity"])
def test_position_command_on_a_velocity_driven_joint(actuator: str) -> None:
    engine = mujoco_of(pendulum(actuator))
    engine.set_commands("position", ["hinge"], [0.5])
    q, v = trajectory(engine, 1000)
    assert abs(q[-1] - 0.5) <= 1e-3
    assert q.max() <= 0.5 + 1e-6
    assert np.abs(v).max() <= 5.0 + 1e-3


def test_an_uncommanded_servo_holds_still() -> None:
    """DART's servo motor brakes to velocity 0 when nothing is commanded; so does MuJoCo's."""
    engine = mujoco_of(pendulum("servo"))
    trajectory(engine, 200)
    assert abs(engine.positions()[0]) < 1e-3


# --------------------------------------------------------------------------- ACCELERATION

def test_acceleration_command() -> None:
    engine = mujoco_of(pendulum("acceleration"))
    engine.set_commands("acceleration", ["hinge"], [2.0])
    q, v = trajectory(engine, 100)
    # DART: exact; here each step falls 2e-7 rad/s short (1e-5 of gravity's pull).
    assert v[-1] == pytest.approx(2.0 * 0.1, abs=5e-5)
    assert q[-1] == pytest.approx(2.0 * DT * DT * 100 * 101 / 2, abs=5e-6)


def test_position_command_on_an_acceleration_joint() -> None:
    engine = mujoco_of(pendulum("acceleration"))
    engine.set_commands("position", ["hinge"], [0.5])
    q, _ = trajectory(engine, 1500)
    assert abs(q[-1] - 0.5) <= 1e-3
    assert q.max() <= 0.5 + 1e-4


# --------------------------------------------------------------------------- PASSIVE / LOCKED

def test_locked_joint_stays_put_and_passive_swings() -> None:
    locked = mujoco_of(pendulum("locked", init=0.2))
    trajectory(locked, 200)
    assert locked.positions()[0] == pytest.approx(0.2, abs=1e-3)
    passive = mujoco_of(pendulum("passive"))
    trajectory(passive, 200)
    assert passive.positions()[0] < -0.05


@pytest.mark.parametrize(("actuator", "kind", "message"), [
    ("passive", "position", "'hinge' is passive: it takes no commands"),
    ("locked", "effort", "'hinge' is locked: it takes no commands"),
    ("force", "velocity", "has a force actuator"),
    ("servo", "effort", "has a servo actuator"),
])
def test_rejected_commands_are_dart_s(actuator: str, kind: str, message: str) -> None:
    engine = mujoco_of(pendulum(actuator))
    with pytest.raises(CommandError, match=message):
        engine.set_commands(kind, ["hinge"], [0.1])
    assert engine.commands() == {}


# --------------------------------------------------------------------------- names and state

@pytest.mark.parametrize("path", [*EXAMPLES, TWO_ARMS], ids=lambda p: Path(p).name)
def test_names_state_and_frames_equal_dart_s(path: Path) -> None:
    """Same public names, initial state and body frames; holding the initial positions for
    0.5 s, the same positions (1e-3 rad) and the same efforts (1e-2 N m)."""
    world = load_model(path)
    dart, mujoco = SimEngine(world), MujocoEngine(world)
    assert mujoco.dof_names == dart.dof_names
    assert mujoco.frame_names == dart.frame_names
    assert mujoco.time_step == dart.time_step
    np.testing.assert_array_equal(mujoco.positions(), dart.positions())
    np.testing.assert_allclose(mujoco.body_transforms(), dart.body_transforms(), atol=1e-12)
    assert mujoco.hold_initial_positions() == dart.hold_initial_positions()
    for engine in (dart, mujoco):
        engine.step(500)
    assert mujoco.time == pytest.approx(dart.time, abs=1e-12)
    np.testing.assert_allclose(mujoco.positions(), dart.positions(), atol=1e-3)
    np.testing.assert_allclose(mujoco.efforts(), dart.efforts(), atol=1e-2)
    np.testing.assert_allclose(mujoco.body_transforms(), dart.body_transforms(), atol=1e-3)


def test_ball_and_free_joint_state_is_dart_s_coordinates() -> None:
    """At random configurations and velocities, MuJoCo's qpos/qvel read back as DART's
    rotation vectors, translations and free-joint velocity (1e-9): the inverse of the
    export's ``qpos`` / ``qvel``."""
    engine = mujoco_of(FLOATING)
    export, data = engine.export, engine.data
    rng = np.random.default_rng(7)
    for _ in range(20):
        q = rng.uniform(-1.0, 1.0, 10)
        v = rng.uniform(-2.0, 2.0, 10)
        data.qpos[:] = export.qpos({"floating": q})
        data.qvel[:] = export.qvel({"floating": q}, {"floating": v})
        np.testing.assert_allclose(engine.positions(), q, atol=1e-9)
        np.testing.assert_allclose(engine.velocities(), v, atol=1e-9)


def test_ball_and_free_joints_take_no_commands() -> None:
    engine = mujoco_of(FLOATING)
    with pytest.raises(CommandError, match="'neck' is a ball joint: the MuJoCo engine takes"):
        engine.set_commands("effort", ["neck_x"], [0.1])
    with pytest.raises(CommandError, match="'root' is a free joint: the MuJoCo engine takes"):
        engine.set_commands("position", ["shoulder", "root_pos_z"], [0.1, 0.2])
    assert engine.commands() == {}
    # A powered robot holds what it can: here the hinge alone (DART holds every DOF).
    assert engine.hold_initial_positions() == ("shoulder",)


def test_reset_repeats_the_first_run() -> None:
    engine = mujoco_of(pendulum())
    engine.set_commands("position", ["hinge"], [0.3])
    first, _ = trajectory(engine, 300)
    engine.reset()
    assert engine.time == 0.0
    assert engine.commands() == {}
    engine.set_commands("position", ["hinge"], [0.3])
    again, _ = trajectory(engine, 300)
    np.testing.assert_array_equal(first, again)


def test_limit_enforcement_switches() -> None:
    engine = mujoco_of(pendulum("passive", limits=(-0.1, 0.1)))
    trajectory(engine, 500)
    assert engine.positions()[0] >= -0.1 - 1e-3  # MuJoCo's soft limit: within a milliradian
    engine.reset()
    engine.set_limit_enforcement(False)
    trajectory(engine, 500)
    assert engine.positions()[0] < -0.5
    assert not engine.limits_enforced


@pytest.mark.parametrize("world", ["servo pendulum", "floating", *map(str, EXAMPLES)])
@pytest.mark.parametrize("held", [False, True], ids=["nothing held", "holding"])
def test_n_steps_at_once_are_n_single_steps(world: str, held: bool) -> None:
    """step(n) equals n step() calls bit for bit; with nothing to compute per step it is
    one ``mj_step(..., nstep=n)`` (MuJoCo repeats its step), with a command held n calls;
    a servo's force is solved before every step (``mj_step1``, ``mj_step2``: no mj_step).
    """
    def build() -> MujocoEngine:
        if world == "servo pendulum":
            return mujoco_of(pendulum("servo"))
        if world == "floating":
            return mujoco_of(FLOATING)
        return MujocoEngine(load_model(Path(world)))

    one, batched = build(), build()
    if held:
        one.hold_initial_positions()
        batched.hold_initial_positions()
    calls: list[int] = []
    mj_step = batched._mj_step

    def counting_step(model: object, data: object, nstep: int = 1) -> None:
        calls.append(nstep)
        mj_step(model, data, nstep)

    batched._mj_step = counting_step
    for k in (1, 7, 13, 50):
        for _ in range(k):
            one.step()
        calls.clear()
        batched.step(k)
        assert batched.time == one.time
        for a, b in zip(batched.state(), one.state(), strict=True):
            np.testing.assert_array_equal(a, b)
        expected = [1] * k if held and batched.commands() else [k]
        assert calls == ([] if world == "servo pendulum" else expected)
    if world == "servo pendulum" and not held:
        assert np.any(one.efforts() != 0.0)  # the last step's, not 0
