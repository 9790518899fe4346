"""Kinematic joints and the command policy: braking, position limits, refusal names, reports.

A world of single-link pendulums, one skeleton per actuator type (``<type>/hinge``),
limited to [-1.5, 1.5] rad and started at 0.2 rad, each skeleton with its own link.
Both engines (DART, and MuJoCo when installed) share the actuation under test.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

pytest.importorskip("dartpy")

from skel_ros.core import RobotCore
from skel_ros.model import load_skel
from skel_ros.sim import ENGINES, SimEngine
from skel_ros.sim.backend import EngineBackend
from skel_ros.sim.errors import CommandError
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

DT = 0.001
LIMIT = 1.5
TYPES = ("force", "servo", "velocity", "acceleration", "locked", "passive")


def _skeleton(actuator: str, x: float, acceleration: float | None) -> str:
    acc = "" if acceleration is None else (
        f'<acceleration lower="{-acceleration}" upper="{acceleration}"/>')
    return f"""<skeleton name="{actuator}">
 <body name="link"><transformation>{x} 0 0 0 0 0</transformation>
  <inertia><mass>1</mass><offset>0.25 0 0</offset></inertia></body>
 <joint type="revolute" name="hinge" actuator="{actuator}">
  <parent>world</parent><child>link</child>
  <axis><xyz>0 1 0</xyz><limit><lower>{-LIMIT}</lower><upper>{LIMIT}</upper></limit></axis>
  <init_pos>0.2</init_pos>
  <dof local_index="0"><velocity lower="-2" upper="2"/><force lower="-5" upper="5"/>{acc}</dof>
 </joint>
</skeleton>"""


def world(acceleration: float | None = None) -> str:
    """Six pendulums (module docstring); ``acceleration``: their acceleration limit."""
    skeletons = "".join(_skeleton(a, k, acceleration) for k, a in enumerate(TYPES))
    return f"""<skel version="1.0"><world name="w">
<physics><time_step>{DT}</time_step><gravity>0 0 -9.81</gravity></physics>
{skeletons}</world></skel>"""


def make(engine: str, acceleration: float | None = None, **kwargs: object) -> SimEngine:
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    model = load_skel(world(acceleration), name="kinematic.skel")
    return ENGINES[engine](model, **kwargs)  # type: ignore[arg-type]


def run(engine: SimEngine, name: str, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Position and velocity of ``name`` after each step."""
    i = engine.dof_names.index(name)
    q, v = np.empty(steps), np.empty(steps)
    for k in range(steps):
        engine.step()
        q[k], v[k] = engine.positions()[i], engine.velocities()[i]
    return q, v


ENGINE_NAMES = sorted(ENGINES)

# MuJoCo's kinematic joints are velocity actuators of very large gain, not exact (1e-5 of
# the velocity error left per step); its joint ranges are soft.
Q_TOL = {"dart": 1e-9, "mujoco": 1e-4}
V_TOL = {"dart": 1e-12, "mujoco": 1e-4}


# ---------------------------------------------------------------- 1: braking

@pytest.mark.parametrize("engine_name", ENGINE_NAMES)
def test_acceleration_joint_brakes_to_rest_after_the_command_timeout(engine_name: str) -> None:
    """The node's safe state: a moving acceleration joint stops and stays; it never coasts.

    Before the fix it kept 0.6 rad/s for ever and ran through its 1.5 rad limit.
    """
    engine = make(engine_name)
    core = RobotCore(EngineBackend(engine, hold_initial=False), command_timeout=0.3)
    # The core has no acceleration kind: held in the engine, the timeout armed at 0.
    engine.set_commands("acceleration", ["acceleration/hinge"], [2.0])
    core.restart_timeout(engine.time)
    for _ in range(300):
        core.cycle(engine.time + engine.time_step)
        engine.step()
    assert not engine.commands()  # dropped at 0.3 s
    _, v = run(engine, "acceleration/hinge", 1)
    assert abs(v[0]) <= V_TOL[engine_name]  # stopped within a step: no acceleration limit
    q, v = run(engine, "acceleration/hinge", 3000)
    assert np.abs(v).max() <= V_TOL[engine_name]
    assert q.max() - q.min() <= Q_TOL[engine_name]
    assert q[-1] < LIMIT


@pytest.mark.parametrize("engine_name", ENGINE_NAMES)
def test_braking_keeps_to_the_acceleration_limits(engine_name: str) -> None:
    """At 4 rad/s^2 from 0.8 rad/s: 0.2 s of steady deceleration, then at rest."""
    engine = make(engine_name, acceleration=4.0)
    backend = EngineBackend(engine, hold_initial=False)
    engine.set_commands("acceleration", ["acceleration/hinge"], [4.0])
    run(engine, "acceleration/hinge", 200)  # 0.8 rad/s
    backend.deactivate()  # every command dropped
    _, v = run(engine, "acceleration/hinge", 400)
    accel = np.diff(np.concatenate([[0.8], v])) / DT
    assert accel.min() >= -4.0 - 0.02
    assert accel.max() <= 0.02
    assert abs(v[150]) > 0.1  # still braking 0.15 s on
    assert np.abs(v[220:]).max() <= V_TOL[engine_name]


def test_an_uncommanded_acceleration_joint_is_dart_s_without_braking() -> None:
    """The bare engine is DART's (acceleration 0: it coasts); the backend turns braking on."""
    engine = make("dart")
    assert not engine.braking
    engine.set_commands("acceleration", ["acceleration/hinge"], [2.0])
    run(engine, "acceleration/hinge", 100)
    engine.clear_commands()
    _, v = run(engine, "acceleration/hinge", 100)
    assert v == pytest.approx(np.full(100, 0.2), abs=1e-12)
    EngineBackend(engine)
    assert engine.braking
    engine.reset()
    assert engine.braking  # kept by a reset


# ---------------------------------------------------------------- 2: position limits

@pytest.mark.parametrize("engine_name", ENGINE_NAMES)
@pytest.mark.parametrize(("actuator", "kind", "value"), [
    ("velocity", "velocity", 1.0), ("velocity", "velocity", -1.0),
    ("acceleration", "acceleration", 3.0), ("acceleration", "acceleration", -3.0),
])
def test_kinematic_joints_stop_on_their_limits(engine_name: str, actuator: str, kind: str,
                                               value: float) -> None:
    """With enforce_limits, as a servo joint: before the fix velocity/hinge reached 3.2 rad."""
    engine = make(engine_name)
    name = f"{actuator}/hinge"
    engine.set_commands(kind, [name], [value])
    q, v = run(engine, name, 3000)
    limit = LIMIT if value > 0 else -LIMIT
    assert np.abs(q).max() <= LIMIT + Q_TOL[engine_name]
    assert q[-1] == pytest.approx(limit, abs=Q_TOL[engine_name])
    assert np.abs(v[-100:]).max() <= V_TOL[engine_name]
    # A command away from the limit moves it back.
    engine.set_commands(kind, [name], [-value])
    q, _ = run(engine, name, 300)
    assert abs(q[-1]) < LIMIT - 0.05


@pytest.mark.parametrize("engine_name", ENGINE_NAMES)
def test_kinematic_joints_pass_their_limits_without_enforcement(engine_name: str) -> None:
    engine = make(engine_name, enforce_limits=False)
    engine.set_commands("velocity", ["velocity/hinge"], [1.0])
    q, _ = run(engine, "velocity/hinge", 3000)
    assert q[-1] == pytest.approx(3.2, abs=1e-3)


def test_kinematic_limit_stop_switches_at_run_time_and_survives_a_reset() -> None:
    engine = make("dart", enforce_limits=False)
    engine.set_limit_enforcement(True)
    engine.reset()
    engine.set_commands("velocity", ["velocity/hinge"], [2.0])
    q, _ = run(engine, "velocity/hinge", 1000)
    assert q.max() <= LIMIT + 1e-12
    engine.set_limit_enforcement(False)
    q, _ = run(engine, "velocity/hinge", 100)
    assert q[-1] == pytest.approx(LIMIT + 0.2, abs=1e-9)


def test_effort_on_the_limit_is_dart_s_for_the_motion() -> None:
    """Resting on its limit, a velocity joint's effort holds the link against gravity, as
    the servo joint's does at the same place."""
    engine = make("dart")
    engine.set_commands("velocity", ["velocity/hinge", "servo/hinge"], [1.0, 1.0])
    run(engine, "velocity/hinge", 2000)
    efforts = dict(zip(engine.dof_names, engine.efforts(), strict=True))
    # 1 kg at 0.25 m, at 1.5 rad about y from horizontal: m g r cos(1.5).
    expected = -9.81 * 0.25 * np.cos(LIMIT)
    assert efforts["velocity/hinge"] == pytest.approx(expected, rel=1e-3)
    assert efforts["servo/hinge"] == pytest.approx(expected, rel=1e-3)


# ---------------------------------------------------------------- 6: public names in refusals

@pytest.mark.parametrize(("name", "kind", "match"), [
    ("passive/hinge", "position", "joint 'passive/hinge' is passive"),
    ("locked/hinge", "velocity", "joint 'locked/hinge' is locked"),
    ("servo/hinge", "effort", "joint 'servo/hinge' has a servo actuator"),
])
def test_refusals_name_the_public_name(name: str, kind: str, match: str) -> None:
    engine = make("dart")
    with pytest.raises(CommandError, match=match):
        engine.set_commands(kind, [name], [0.0])


# ---------------------------------------------------------------- 7: trajectory clamp report

def test_trajectory_clamp_report_gives_the_farthest_point(caplog: pytest.LogCaptureFixture,
                                                          ) -> None:
    """Not the first clamped sample ("1.5 -> 1.5"), but how far the points go."""
    engine = make("dart")
    core = RobotCore(EngineBackend(engine))
    core.backend.activate()
    trajectory = PointTrajectory(["servo/hinge", "velocity/hinge"], [
        TrajectoryPoint(0.5, (1.0, -1.0)), TrajectoryPoint(1.0, (3.0, -2.5)),
        TrajectoryPoint(1.5, (1.0, 0.0))], start_positions=[0.2, 0.2])
    core.follow(trajectory)
    with caplog.at_level(logging.WARNING, logger="skel_ros.core"):
        for _ in range(1600):
            core.cycle(engine.time + engine.time_step)
            engine.step()
    lines = [r.getMessage() for r in caplog.records if "leaves the limits" in r.getMessage()]
    assert len(lines) == 2  # once per DOF
    text = " ".join(lines)
    assert "'servo/hinge' reaches 3 (limit 1.5)" in text
    assert "'velocity/hinge' reaches -2.5 (limit -1.5)" in text
