"""A servo's plain law in the simulation: no feed-forward of the setpoint's velocity, and
the command delay (gains ``velocity_feedforward`` and ``delay``; what ``skel-ros identify``
measures on the robot). Each engine, on the bundled arm's shoulder yaw (its axis is
vertical: no gravity on it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import load_model
from skel_ros.sim import ENGINES
from skel_ros.sim.gains import parse_gains

ARM = Path(__file__).resolve().parents[2] / "examples" / "arm.skel"
JOINT = "shoulder_yaw"
SERVO = {"kp": 15.0, "kd": 0.5, "ki": 0.0, "gravity_compensation": False}


@pytest.fixture(scope="module")
def world() -> object:
    return load_model(ARM)


def _engine(world: object, name: str, **gains: object) -> object:
    if name == "mujoco":
        pytest.importorskip("mujoco")
    return ENGINES[name](world, gains=parse_gains({"dofs": {JOINT: {**SERVO, **gains}}}))


def _sine_error(engine: object, seconds: float = 2.0) -> float:
    """RMS of command - position over the last second of a 0.5 Hz, 0.3 rad sine streamed
    at every step (each target within a step's reach of the last: the setpoint is the
    command, its velocity the sine's)."""
    k = engine.dof_names.index(JOINT)
    dt = engine.time_step
    errors = []
    for i in range(round(seconds / dt)):
        target = 0.3 * np.sin(np.pi * i * dt)
        engine.set_commands("position", [JOINT], [target])
        engine.step(1)
        if i * dt >= seconds - 1.0:
            errors.append(np.sin(np.pi * (i + 1) * dt) * 0.3 - engine.positions()[k])
    return float(np.sqrt(np.mean(np.square(errors))))


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_without_feed_forward_a_moving_command_is_trailed(world: object, name: str) -> None:
    """``kp e - kd v`` trails a ramp of speed v by about ``(kd + damping) v / kp``; with the
    setpoint's velocity fed forward the error is a small fraction of that."""
    fed = _sine_error(_engine(world, name))
    plain_engine = _engine(world, name, velocity_feedforward=False)
    plain = _sine_error(plain_engine)
    damping = plain_engine.model.skeletons[0].dofs[0].damping  # the joint's own (0.05)
    v_rms = 0.3 * np.pi / np.sqrt(2.0)
    expected = (SERVO["kd"] + damping) * v_rms / SERVO["kp"]  # 0.024 rad
    assert plain == pytest.approx(expected, rel=0.25)
    assert fed < 0.3 * plain


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_a_delayed_command_moves_the_joint_only_after_the_delay(world: object,
                                                                name: str) -> None:
    prompt, late = _engine(world, name), _engine(world, name, delay=0.02)
    k = prompt.dof_names.index(JOINT)
    for engine in (prompt, late):
        engine.set_commands("position", [JOINT], [0.2])
        engine.step(15)
    assert prompt.positions()[k] > 1e-3
    assert abs(late.positions()[k]) < 1e-9  # held where it was: the target is on its way
    late.step(5)  # 20 steps: the step starting 20 ms after the command takes it
    assert late.position_targets()[k] == 0.0
    late.step(1)
    assert late.position_targets()[k] == 0.2
    late.step(40)
    assert late.positions()[k] > 1e-3


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_a_stream_faster_than_the_delay_keeps_every_target(world: object, name: str) -> None:
    """Targets 5 ms apart down a 12 ms delay: each arrives in turn (none is lost to the
    next), and the joint reaches the last one."""
    engine = _engine(world, name, delay=0.012)
    k = engine.dof_names.index(JOINT)
    seen = []
    for i in range(1, 41):
        engine.set_commands("position", [JOINT], [0.005 * i])
        for _ in range(5):
            engine.step(1)
            seen.append(float(engine.position_targets()[k]))
    arrived = sorted(set(seen) - {0.0})
    assert arrived == pytest.approx([0.005 * i for i in range(1, 39)])  # the last 2 on the way
    engine.step(1500)
    assert engine.positions()[k] == pytest.approx(0.2, abs=2e-3)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_a_clear_voids_the_targets_on_their_way(world: object, name: str) -> None:
    engine = _engine(world, name, delay=0.02)
    k = engine.dof_names.index(JOINT)
    engine.set_commands("position", [JOINT], [0.5])
    engine.step(5)
    engine.clear_commands([JOINT])
    engine.set_commands("position", [JOINT], [0.0])  # hold here, from now on
    engine.step(100)
    assert engine.position_targets()[k] == 0.0
    assert abs(engine.positions()[k]) < 1e-6
