"""The MuJoCo engine: what is its own (names and state against DART's, ball and free
joints, its kinematic actuators, how it batches steps).

What it shares with every engine (motion per command kind and actuator type against the
closed forms, limits and refusals, timeouts, reset, ``step(n)``) is the conformance
suite's (``test_engine_conformance.py``), with MuJoCo's tolerances stated there: its
velocity actuators (gain ``KINEMATIC_GAIN M / dt``) leave 1e-5 of the velocity error
per step, and its limits, locks and friction are soft.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_worlds import EXAMPLES, FLOATING, TWO_ARMS, pendulum, trajectory

pytest.importorskip("mujoco")

from skel_ros.model import load_model, load_skel
from skel_ros.sim import ENGINES, CommandError, MujocoEngine, SimEngine


def mujoco_of(text: str, **kwargs: object) -> MujocoEngine:
    return MujocoEngine(load_skel(text, name="test.skel"), **kwargs)  # type: ignore[arg-type]


def test_engines_table() -> None:
    assert {"dart": SimEngine, "mujoco": MujocoEngine} == ENGINES


# --------------------------------------------------------------------------- SERVO / VELOCITY

def test_a_velocity_joint_ignores_the_force_limits() -> None:
    """VELOCITY is kinematic in DART: its force limits do not slow it (unlike SERVO)."""
    dof = '<dof local_index="0"><force lower="-1" upper="1"/></dof>'
    engine = mujoco_of(pendulum("velocity", dof=dof))
    engine.set_commands("velocity", ["hinge"], [0.0])
    _, v = trajectory(engine, 100)
    assert abs(v[-1]) < 1e-5


def test_an_uncommanded_servo_holds_still() -> None:
    """DART's servo motor brakes to velocity 0 when nothing is commanded; so does MuJoCo's."""
    engine = mujoco_of(pendulum("servo"))
    trajectory(engine, 200)
    assert abs(engine.positions()[0]) < 1e-3


# --------------------------------------------------------------------------- names and state

@pytest.mark.parametrize("path", [*EXAMPLES, TWO_ARMS], ids=lambda p: Path(p).name)
def test_names_state_and_frames_equal_dart_s(path: Path) -> None:
    """Same public names, initial state and body frames; holding the initial positions for
    0.5 s, the same positions (1e-3 rad) and the same efforts (1e-2 N m)."""
    pytest.importorskip("dartpy")
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


@pytest.mark.parametrize("world", ["servo pendulum", "floating", *map(str, EXAMPLES)])
@pytest.mark.parametrize("held", [False, True], ids=["nothing held", "holding"])
def test_quiet_steps_are_one_mj_step(world: str, held: bool) -> None:
    """With nothing to compute per step, step(n) is one ``mj_step(..., nstep=n)`` (MuJoCo
    repeats its step); with a command held, n calls; a servo's force is solved before
    every step (``mj_step1``, ``mj_step2``: no mj_step). That this is n single steps, bit
    for bit, is the conformance suite's ``test_n_steps_at_once_are_n_single_steps``."""
    if world == "servo pendulum":
        engine = mujoco_of(pendulum("servo"))
    elif world == "floating":
        engine = mujoco_of(FLOATING)
    else:
        engine = MujocoEngine(load_model(Path(world)))
    if held:
        engine.hold_initial_positions()
    calls: list[int] = []
    mj_step = engine._mj_step

    def counting_step(model: object, data: object, nstep: int = 1) -> None:
        calls.append(nstep)
        mj_step(model, data, nstep)

    engine._mj_step = counting_step
    for k in (1, 7, 13, 50):
        calls.clear()
        engine.step(k)
        expected = [1] * k if held and engine.commands() else [k]
        assert calls == ([] if world == "servo pendulum" else expected)
