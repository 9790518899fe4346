"""The simulation engine: limit enforcement, actuation per SKEL actuator type, commands, names.

Every world here is a small SKEL document written for the test (a one-link
pendulum, ``data/two_arms.skel``), so the expected motion is known in closed form
or from the controller's design (critically damped, natural frequency
``w = 20 rad/s`` by default: ``config/sim_gains.yaml``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dartpy")

from skel_ros.model import load_skel
from skel_ros.model.limits import CheckResult, LimitSet, RateLimiter
from skel_ros.model.types import ActuatorType
from skel_ros.model.urdf import world_joint_values
from skel_ros.sim import (
    ActuationMode,
    CommandError,
    GainDefaults,
    GainsError,
    SimBuildError,
    SimEngine,
    SimGains,
    load_gains,
    parse_gains,
)

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[2]
DT = 0.001
MASS, ARM = 1.0, 0.5  # the pendulum's point-like link: 1 kg at 0.5 m from the hinge
GRAVITY = 9.81


def pendulum(
    actuator: str = "force",
    *,
    limits: tuple[float, float] | None = None,
    dof: str = "",
    gravity: bool = True,
    init: float = 0.0,
    name: str = "pendulum",
) -> str:
    """A SKEL world: one link on a z-axis hinge ``hinge``, its centre of mass 0.5 m along x.

    With gravity along -y the link starts horizontal, where gravity pulls hardest.
    """
    limit = "" if limits is None else (
        f"<limit><lower>{limits[0]}</lower><upper>{limits[1]}</upper></limit>")
    g = f"0 -{GRAVITY} 0" if gravity else "0 0 0"
    return f"""<skel version="1.0"><world name="w">
<physics><time_step>{DT}</time_step><gravity>{g}</gravity></physics>
<skeleton name="{name}">
 <body name="link"><inertia><mass>{MASS}</mass><offset>{ARM} 0 0</offset>
  <moment_of_inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
  <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia></inertia></body>
 <joint type="revolute" name="hinge" actuator="{actuator}">
  <parent>world</parent><child>link</child>
  <axis><xyz>0 0 1</xyz>{limit}</axis>{dof}<init_pos>{init}</init_pos>
 </joint>
</skeleton></world></skel>"""


INERTIA = MASS * ARM**2 + 0.001  # about the hinge


def engine_of(text: str, **kwargs: object) -> SimEngine:
    return SimEngine(load_skel(text, name="test.skel"), **kwargs)  # type: ignore[arg-type]


def trajectory(engine: SimEngine, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Position and velocity of DOF 0 after each of ``steps`` steps."""
    q, v = np.empty(steps), np.empty(steps)
    for k in range(steps):
        engine.step()
        q[k], v[k] = engine.positions()[0], engine.velocities()[0]
    return q, v


# --------------------------------------------------------------------------- limit enforcement

LIMIT = 0.1
# DART's joint-limit constraint lets the joint pass its limit by at most this much
# (measured: 6.2e-13 rad over 2 s of a pendulum pressing on its limit).
LIMIT_TOL = 1e-9


def test_limits_hold_under_gravity_when_enforced() -> None:
    engine = engine_of(pendulum(limits=(-LIMIT, LIMIT)))
    assert engine.limits_enforced
    q, _ = trajectory(engine, 2000)
    assert q.min() >= -LIMIT - LIMIT_TOL
    assert q.max() <= LIMIT + LIMIT_TOL
    assert q[-1] == pytest.approx(-LIMIT, abs=LIMIT_TOL)  # resting on the lower limit


def test_limits_are_ignored_when_enforcement_is_off() -> None:
    """SKEL/DART never enforce limits by themselves: switched off, the link falls through."""
    engine = engine_of(pendulum(limits=(-LIMIT, LIMIT)), enforce_limits=False)
    assert not engine.limits_enforced
    q, _ = trajectory(engine, 2000)
    assert q.min() < -1.0  # swings down to about -pi/2 and beyond
    assert not engine.world.getSkeleton(0).getJoint(0).areLimitsEnforced()


def test_limit_enforcement_switches_at_run_time() -> None:
    engine = engine_of(pendulum(limits=(-LIMIT, LIMIT)), enforce_limits=False)
    trajectory(engine, 300)
    assert engine.positions()[0] < -LIMIT  # already past the limit
    engine.set_limit_enforcement(True)
    assert engine.world.getSkeleton(0).getJoint(0).areLimitsEnforced()
    engine.set_limit_enforcement(False)
    assert not engine.world.getSkeleton(0).getJoint(0).areLimitsEnforced()
    engine.set_limit_enforcement(True)
    engine.reset()  # the setting survives a reset
    assert engine.limits_enforced
    q, _ = trajectory(engine, 1000)
    assert q.min() >= -LIMIT - LIMIT_TOL


def test_unlimited_joints_are_not_given_a_limit_constraint() -> None:
    engine = engine_of(pendulum())
    assert not engine.world.getSkeleton(0).getJoint(0).areLimitsEnforced()


# --------------------------------------------------------------------------- FORCE joints

W = 20.0  # default natural frequency of the position controllers (rad/s)


def test_effort_command_on_a_force_joint() -> None:
    """Without gravity, a torque tau turns the link at tau / I (semi-implicit Euler, 1e-12)."""
    engine = engine_of(pendulum(gravity=False))
    torque, steps = 0.3, 400
    [result] = engine.set_commands("effort", ["hinge"], [torque])
    assert result.ok
    assert not result.clamped
    q, v = trajectory(engine, steps)
    acc = torque / INERTIA
    assert v[-1] == pytest.approx(acc * DT * steps, rel=1e-12)
    assert q[-1] == pytest.approx(acc * DT * DT * steps * (steps + 1) / 2, rel=1e-12)
    assert engine.efforts()[0] == torque


def test_position_command_on_a_force_joint_under_gravity() -> None:
    """PD + gravity compensation, critically damped at w = 20 rad/s.

    The error of a critically damped step response is ``A (1 + w t) e^(-w t)``:
    5e-4 A at 0.5 s, 4e-8 A at 1 s. Stated: within 1e-3 rad of 0.5 rad at 0.5 s,
    within 1e-6 rad at 1 s; no overshoot (1e-9); never faster than the ideal
    response's peak speed ``A w / e`` (+5 %), so the joint never jumps.
    """
    engine = engine_of(pendulum())
    target = 0.5
    engine.set_commands("position", ["hinge"], [target])
    q, v = trajectory(engine, 1000)
    assert abs(q[499] - target) <= 1e-3
    assert abs(q[-1] - target) <= 1e-6
    assert q.max() <= target + 1e-9
    assert np.abs(v).max() <= target * W / math.e * 1.05
    assert abs(q[0]) < 1e-3  # one step in: barely moved
    # Holding against gravity costs the gravity torque m g l cos(q).
    assert engine.efforts()[0] == pytest.approx(MASS * GRAVITY * ARM * math.cos(target), rel=1e-4)


def test_position_command_from_yaml_gains() -> None:
    """Gains from a gains file: a softer w = 5 rad/s controller is 4x slower."""
    gains = parse_gains({"default": {"natural_frequency": 5.0}}, "test.yaml")
    engine = engine_of(pendulum(), gains=gains)
    engine.set_commands("position", ["hinge"], [0.5])
    q, _ = trajectory(engine, 2000)
    t = np.arange(1, 2001) * DT
    ideal = 0.5 * (1 - (1 + 5.0 * t) * np.exp(-5.0 * t))
    assert np.abs(q - ideal).max() < 5e-3
    assert abs(q[499] - 0.5) > 0.1  # at 0.5 s still far, unlike w = 20


def test_position_command_beyond_the_effort_limit_saturates() -> None:
    """A weak motor (0.5 N m) cannot hold the link horizontal (needs m g l = 4.9 N m)."""
    dof = '<dof local_index="0"><force lower="-0.5" upper="0.5"/></dof>'
    engine = engine_of(pendulum(dof=dof))
    engine.set_commands("position", ["hinge"], [0.0])
    q, _ = trajectory(engine, 500)
    assert q[-1] < -0.5
    assert engine.efforts()[0] == pytest.approx(0.5)


# --------------------------------------------------------------------------- SERVO / VELOCITY

@pytest.mark.parametrize("actuator", ["servo", "velocity"])
def test_velocity_command(actuator: str) -> None:
    """Servo (DART's servo motor, unlimited force) and velocity joints move at the commanded
    velocity from the first step on, against gravity (1e-9 rad/s)."""
    engine = engine_of(pendulum(actuator))
    engine.set_commands("velocity", ["hinge"], [0.7])
    q, v = trajectory(engine, 200)
    np.testing.assert_allclose(v, 0.7, atol=1e-9)
    assert q[-1] == pytest.approx(0.7 * 0.2, abs=1e-9)


def test_servo_with_a_weak_motor_sags() -> None:
    """DART's servo motor reaches the velocity only within its force limits."""
    dof = '<dof local_index="0"><force lower="-1" upper="1"/></dof>'
    engine = engine_of(pendulum("servo", dof=dof))
    engine.set_commands("velocity", ["hinge"], [0.0])
    _, v = trajectory(engine, 100)
    assert v[-1] < -0.1  # gravity (4.9 N m) beats the 1 N m motor
    assert engine.efforts()[0] == pytest.approx(1.0, rel=1e-6)


@pytest.mark.parametrize("actuator", ["servo", "velocity"])
def test_position_command_on_a_velocity_driven_joint(actuator: str) -> None:
    """Velocity ``kp_vel * error`` (kp_vel = 10/s): first-order approach, time constant 0.1 s.

    Stated: within 1e-4 rad of the target after 1 s (ideal 0.5 e^-10 = 2.3e-5), no
    overshoot, speed at most kp_vel * 0.5 = 5 rad/s.
    """
    engine = engine_of(pendulum(actuator))
    engine.set_commands("position", ["hinge"], [0.5])
    q, v = trajectory(engine, 1000)
    assert abs(q[-1] - 0.5) <= 1e-4
    assert q.max() <= 0.5 + 1e-9
    assert np.abs(v).max() <= 5.0 + 1e-9


# --------------------------------------------------------------------------- ACCELERATION

def test_acceleration_command() -> None:
    """An acceleration joint follows the commanded acceleration exactly (1e-12), gravity or not."""
    engine = engine_of(pendulum("acceleration"))
    engine.set_commands("acceleration", ["hinge"], [2.0])
    q, v = trajectory(engine, 100)
    assert v[-1] == pytest.approx(2.0 * 0.1, rel=1e-12)
    assert q[-1] == pytest.approx(2.0 * DT * DT * 100 * 101 / 2, rel=1e-12)


def test_position_command_on_an_acceleration_joint() -> None:
    """``kp_vel^2 e - 2 kp_vel v``: critically damped at 10 rad/s; within 1e-3 of the
    target after 1.5 s (ideal 0.5 * 16 e^-15 = 2.4e-6), no overshoot."""
    engine = engine_of(pendulum("acceleration"))
    engine.set_commands("position", ["hinge"], [0.5])
    q, _ = trajectory(engine, 1500)
    assert abs(q[-1] - 0.5) <= 1e-3
    assert q.max() <= 0.5 + 1e-9


# --------------------------------------------------------------------------- rate-limited setpoints

RATE_DOF = ('<dof local_index="0"><velocity lower="-1" upper="1"/>'
            '<acceleration lower="-4" upper="4"/></dof>')


# Per actuator: largest lag behind the setpoint, speed and acceleration over the limits
# (1 rad/s, 4 rad/s^2) as factors, overshoot of the 0.5 rad target.
_FOLLOW = {
    "force": (0.012, 1.1, 1.2, 0.012),
    "servo": (0.001, 1.0 + 1e-9, 1.03, 0.001),
    "acceleration": (0.2, 1.0 + 1e-9, 1.0 + 1e-9, 1e-6),
}


@pytest.mark.parametrize("actuator", sorted(_FOLLOW))
def test_position_setpoint_is_rate_limited(actuator: str) -> None:
    """With velocity limit 1 rad/s and acceleration limit 4 rad/s^2, the setpoint follows the
    limits module's RateLimiter exactly, and the joint follows the setpoint.

    FORCE and SERVO get the setpoint's velocity fed forward, so the 2 zeta v / w = 0.1 rad
    lag of a plain ``- kd v`` is gone: 0.01 rad is left for FORCE, whose law is an MIT
    motor's ``kp e + kd (v* - v)`` (no acceleration fed forward), and catching up takes
    it 7 % past the velocity limit and 14 % past the acceleration limit; SERVO's velocity
    command is clamped into the velocity limits (2 % past the acceleration limit).
    ACCELERATION has no feed-forward (clamped into the acceleration limits, it would
    overshoot): it lags up to 0.19 rad and never passes the target or the limits."""
    max_lag, v_factor, a_factor, overshoot = _FOLLOW[actuator]
    engine = engine_of(pendulum(actuator, dof=RATE_DOF))
    engine.set_commands("position", ["hinge"], [0.5])
    limiter = RateLimiter(engine.limit_set("pendulum"), positions=[0.0])
    q, v, lag = np.empty(1500), np.empty(1500), np.empty(1500)
    for k in range(1500):
        expected = limiter.step([0.5], DT)
        engine.step()
        assert engine.setpoints()[0] == expected[0]
        q[k], v[k] = engine.positions()[0], engine.velocities()[0]
        lag[k] = expected[0] - q[k]
    assert np.abs(lag).max() <= max_lag
    assert np.abs(v).max() <= 1.0 * v_factor
    assert np.abs(np.diff(v)).max() / DT <= 4.0 * a_factor
    assert abs(q[-1] - 0.5) <= 1e-3
    assert q.max() <= 0.5 + overshoot


def test_setpoints_are_nan_outside_position_mode() -> None:
    engine = engine_of(pendulum())
    assert np.isnan(engine.setpoints()).all()
    engine.set_commands("position", ["hinge"], [0.2])
    assert engine.setpoints()[0] == 0.2  # no rate limits: the target at once
    engine.set_commands("effort", ["hinge"], [0.0])
    assert np.isnan(engine.setpoints()).all()


# --------------------------------------------------------------------------- rejected commands

@pytest.mark.parametrize("actuator", ["passive", "locked"])
@pytest.mark.parametrize("kind", ["position", "velocity", "effort", "acceleration"])
def test_unactuated_joints_reject_every_command(actuator: str, kind: str) -> None:
    engine = engine_of(pendulum(actuator))
    with pytest.raises(CommandError, match=f"'hinge' is {actuator}: it takes no commands"):
        engine.set_commands(kind, ["hinge"], [0.1])
    assert engine.commands() == {}


def test_locked_joint_stays_put_and_passive_swings() -> None:
    locked = engine_of(pendulum("locked"))
    trajectory(locked, 200)
    assert locked.positions()[0] == 0.0
    passive = engine_of(pendulum("passive"))
    trajectory(passive, 200)
    assert passive.positions()[0] < -0.05


@pytest.mark.parametrize(("actuator", "kind"), [
    ("force", "velocity"), ("force", "acceleration"),
    ("servo", "effort"), ("servo", "acceleration"),
    ("velocity", "effort"), ("acceleration", "velocity"),
])
def test_kind_the_actuator_does_not_take_is_rejected(actuator: str, kind: str) -> None:
    engine = engine_of(pendulum(actuator))
    with pytest.raises(CommandError, match=f"has a {actuator} actuator"):
        engine.set_commands(kind, ["hinge"], [0.1])


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("kind", ["position", "effort"])
def test_non_finite_values_are_rejected(value: float, kind: str) -> None:
    engine = engine_of(pendulum())
    engine.set_commands("position", ["hinge"], [0.25])
    with pytest.raises(CommandError, match="non-finite value for joint 'hinge'"):
        engine.set_commands(kind, ["hinge"], [value])
    # Nothing of the rejected command was applied: the previous one holds.
    assert engine.commands() == {"hinge": (ActuationMode.POSITION, 0.25)}


@pytest.mark.parametrize(("names", "values", "match"), [
    (["hinj"], [0.1], "unknown joint 'hinj'; did you mean 'hinge'"),
    (["hinge", "hinge"], [0.1, 0.2], "'hinge' appears more than once"),
    (["hinge"], [0.1, 0.2], "1 names but 2 values"),
    (["hinge"], ["a lot"], "values must be a flat list of numbers"),
    ([3], [0.1], "names must be strings"),
])
def test_malformed_commands_are_rejected(names: list[object], values: list[object],
                                         match: str) -> None:
    engine = engine_of(pendulum())
    with pytest.raises(CommandError, match=match):
        engine.set_commands("effort", names, values)  # type: ignore[arg-type]


def test_unknown_kind_and_skeleton_are_rejected() -> None:
    engine = engine_of(pendulum())
    with pytest.raises(CommandError, match="unknown command kind 'torque'"):
        engine.set_commands("torque", ["hinge"], [0.1])
    with pytest.raises(CommandError, match=r"unknown skeleton 'robot'.*'pendulum'"):
        engine.set_commands("effort", ["hinge"], [0.1], skeleton="robot")


# --------------------------------------------------------------------------- clamping

def test_out_of_limit_values_are_clamped_and_reported() -> None:
    dof = ('<dof local_index="0"><force lower="-2" upper="2"/>'
           '<velocity lower="-1" upper="1"/></dof>')
    engine = engine_of(pendulum(limits=(-0.3, 0.4), dof=dof))
    [pos] = engine.set_commands("position", ["hinge"], [1.0])
    assert isinstance(pos, CheckResult)
    assert [(c.name, c.requested, c.applied) for c in pos.clamped] == [("hinge", 1.0, 0.4)]
    assert pos.message == "position command clamped to limits: 'hinge' 1 -> 0.4"
    assert engine.commands()["hinge"] == (ActuationMode.POSITION, 0.4)
    [eff] = engine.set_commands("effort", ["hinge"], [-5.0])
    assert [(c.requested, c.applied) for c in eff.clamped] == [(-5.0, -2.0)]
    engine.step()
    assert engine.efforts()[0] == -2.0
    [ok] = engine.set_commands("effort", ["hinge"], [1.5])
    assert ok.clamped == ()
    assert ok.message == ""

    servo = engine_of(pendulum("servo", dof=dof))
    [vel] = servo.set_commands("velocity", ["hinge"], [3.0])
    assert [(c.requested, c.applied) for c in vel.clamped] == [(3.0, 1.0)]

    accel = engine_of(pendulum(
        "acceleration", dof='<dof local_index="0"><acceleration lower="-1" upper="1"/></dof>'))
    [acc] = accel.set_commands("acceleration", ["hinge"], [-7.0])
    assert [(c.requested, c.applied) for c in acc.clamped] == [(-7.0, -1.0)]


def test_tightened_limit_set_is_used_for_commands() -> None:
    world = load_skel(pendulum(limits=(-1.0, 1.0)), name="test.skel")
    tight = LimitSet.from_skeleton(world.skeletons[0]).tightened(
        {"joints": {"hinge": {"position": {"lower": -0.2, "upper": 0.2}}}}, "override.yaml")
    engine = SimEngine(world, limits={"pendulum": tight})
    [result] = engine.set_commands("position", ["hinge"], [0.5])
    assert result.values[0] == 0.2
    assert engine.limit_set("pendulum") is tight


def test_clear_commands() -> None:
    engine = engine_of(pendulum(gravity=False))
    engine.set_commands("effort", ["hinge"], [0.3])
    engine.clear_commands(["hinge"])
    assert engine.commands() == {}
    trajectory(engine, 10)
    assert engine.positions()[0] == 0.0
    with pytest.raises(CommandError, match="unknown joint 'nope'"):
        engine.clear_commands(["nope"])


def test_reset_repeats_the_first_run() -> None:
    engine = engine_of(pendulum())
    engine.set_commands("position", ["hinge"], [0.3])
    first, _ = trajectory(engine, 300)
    engine.reset()
    assert engine.time == 0.0
    assert engine.commands() == {}
    engine.set_commands("position", ["hinge"], [0.3])
    again, _ = trajectory(engine, 300)
    np.testing.assert_array_equal(first, again)


@pytest.mark.parametrize("actuator", [a.value for a in ActuatorType])
def test_actuator_types_are_exposed(actuator: str) -> None:
    engine = engine_of(pendulum(actuator))
    assert engine.actuator_types == (ActuatorType(actuator),)


# --------------------------------------------------------------------------- names

TWO_ARMS = DATA / "two_arms.skel"


def test_single_skeleton_keeps_plain_names() -> None:
    engine = engine_of(pendulum())
    assert engine.dof_names == ("hinge",)
    assert engine.frame_names == ("link",)
    assert engine.dof_ids == (("pendulum", "hinge"),)
    assert engine.body_names == (("pendulum", "link"),)


def test_clashing_names_get_the_skeleton_prefix() -> None:
    world = load_skel(TWO_ARMS)
    engine = SimEngine(world)
    assert engine.dof_names == ("left/shoulder", "left/elbow", "right/shoulder", "right/elbow")
    assert engine.frame_names == ("left/upper", "left/lower", "right/upper", "right/lower")
    assert engine.dof_ids == (("left", "shoulder"), ("left", "elbow"),
                              ("right", "shoulder"), ("right", "elbow"))
    # The names of the URDF the node publishes (world_to_urdf) are the same.
    assert set(engine.dof_names) <= set(world_joint_values(world))


def test_commands_by_public_name_reach_the_right_skeleton() -> None:
    engine = SimEngine(load_skel(TWO_ARMS))
    results = engine.set_commands("effort", ["right/elbow", "left/shoulder", "right/shoulder"],
                                  [0.1, -0.2, 5.0])
    assert [r.names for r in results] == [("right/elbow", "right/shoulder"), ("left/shoulder",)]
    engine.step(10)
    q = dict(zip(engine.dof_names, engine.positions(), strict=True))
    assert q["left/shoulder"] < 0 < q["right/shoulder"]
    assert q["left/elbow"] != 0  # reaction of the moving shoulder
    assert engine.commands() == {"left/shoulder": (ActuationMode.EFFORT, -0.2),
                                 "right/shoulder": (ActuationMode.EFFORT, 5.0),
                                 "right/elbow": (ActuationMode.EFFORT, 0.1)}


def test_clamp_report_uses_public_names() -> None:
    engine = SimEngine(load_skel(TWO_ARMS))
    [left, right] = engine.set_commands("position", ["left/shoulder", "right/shoulder"],
                                        [2.0, -2.0])
    assert left.message == "position command clamped to limits: 'left/shoulder' 2 -> 1.5"
    assert right.message == "position command clamped to limits: 'right/shoulder' -2 -> -1.5"


def test_plain_name_in_a_multi_skeleton_world_is_rejected_with_a_hint() -> None:
    engine = SimEngine(load_skel(TWO_ARMS))
    with pytest.raises(CommandError, match="unknown joint 'elbow'; in this world it is "
                       "'left/elbow', 'right/elbow'"):
        engine.set_commands("position", ["elbow"], [0.1])
    # With skeleton=, the skeleton's own names.
    [result] = engine.set_commands("position", ["elbow"], [0.1], skeleton="left")
    assert result.names == ("elbow",)
    assert engine.commands() == {"left/elbow": (ActuationMode.POSITION, 0.1)}


def test_rejection_in_one_skeleton_rejects_the_whole_command() -> None:
    engine = SimEngine(load_skel(TWO_ARMS))
    with pytest.raises(CommandError, match="non-finite"):
        engine.set_commands("effort", ["left/elbow", "right/elbow"], [0.1, math.nan])
    assert engine.commands() == {}


def test_prefixed_names_that_still_clash_are_refused() -> None:
    text = TWO_ARMS.read_text()
    text = text.replace('<skeleton name="right">', '<skeleton name="left/x">', 1)
    text = text.replace('name="shoulder">', 'name="x/shoulder">', 1)  # in skeleton "left"
    # left: DOF "x/shoulder" -> "left/x/shoulder"; "left/x": DOF "shoulder" -> the same.
    world = load_skel(text, name="clash.skel")
    with pytest.raises(SimBuildError, match="'left/x/shoulder'"):
        SimEngine(world)


def test_gains_by_dof_name() -> None:
    gains = SimGains(dofs={"hinge": {"kp": 7.0, "kd": 0.5}})
    engine = engine_of(pendulum(), gains=gains)
    assert engine._actuation[0].gains[0].kp == 7.0
    assert engine._actuation[0].gains[0].kd == 0.5


def test_gains_by_public_name_win_over_plain_names() -> None:
    gains = parse_gains({"dofs": {"elbow": {"kp_vel": 3.0}, "right/elbow": {"kp_vel": 7.0}}})
    engine = SimEngine(load_skel(TWO_ARMS), gains=gains)
    left, right = engine._actuation
    assert left.gains[1].kp_vel == 3.0
    assert right.gains[1].kp_vel == 7.0
    assert left.gains[0].kp_vel == right.gains[0].kp_vel == 10.0  # the default


def test_gains_for_unknown_dofs_are_refused() -> None:
    gains = parse_gains({"dofs": {"elbw": {"kp": 1.0}}}, "my_gains.yaml")
    with pytest.raises(GainsError, match=r"my_gains\.yaml: gains for unknown DOF 'elbw'; "
                       r"did you mean 'elbow'\? \(the world .*two_arms\.skel has 'left/shoulder'"):
        SimEngine(load_skel(TWO_ARMS), gains=gains)


def test_shipped_gains_file_loads_and_gives_the_documented_defaults() -> None:
    gains = load_gains(Path(__file__).resolve().parents[2] / "config" / "sim_gains.yaml")
    # The built-in defaults except the natural frequency: the nodes' file sets 40 rad/s
    # (docs/simulation.md).
    assert gains.defaults == GainDefaults(natural_frequency=40.0)
    assert gains.dofs == {}
    m = 2.0
    g = gains.gains_for("any", m)
    assert (g.kp, g.kd, g.ki, g.kp_vel) == (m * 1600.0, 2 * m * 40.0, 0.0, 10.0)


@pytest.mark.parametrize("actuator", ["force", "servo", "velocity", "acceleration"])
def test_hold_initial_positions_keeps_a_pendulum_up(actuator: str) -> None:
    """Without a hold the horizontal pendulum falls; held, it stays at its init_pos."""
    init = 0.2
    limp = engine_of(pendulum(actuator, init=init))
    q_limp, _ = trajectory(limp, 500)
    if actuator == "force":  # a bare force joint falls (a servo holds velocity 0 itself)
        assert q_limp[-1] < init - 0.05
    held = engine_of(pendulum(actuator, init=init))
    assert held.hold_initial_positions() == ("hinge",)
    assert held.commands() == {"hinge": (ActuationMode.POSITION, pytest.approx(init))}
    q, _ = trajectory(held, 1000)
    assert np.abs(q - init).max() < 1e-2
    assert abs(q[-1] - init) < 1e-3
    held.set_commands("position", ["hinge"], [0.0])  # a command replaces the hold
    assert held.commands()["hinge"][1] == 0.0


@pytest.mark.parametrize("actuator", ["passive", "locked"])
def test_hold_initial_positions_leaves_unactuated_joints(actuator: str) -> None:
    engine = engine_of(pendulum(actuator))
    assert engine.hold_initial_positions() == ()
    assert engine.commands() == {}


def test_hold_initial_positions_clamps_into_the_limits() -> None:
    engine = engine_of(pendulum(limits=(-0.1, 0.1), init=0.3))
    engine.hold_initial_positions()
    assert engine.commands()["hinge"][1] == pytest.approx(0.1)


def test_default_gains_count_the_joints_own_damping() -> None:
    from skel_ros.sim.gains import GainDefaults

    d = GainDefaults(natural_frequency=20.0, damping_ratio=1.0)
    m = 0.01
    plain = d.gains_for(m)
    assert (plain.kp, plain.kd) == pytest.approx((m * 400.0, 2 * m * 20.0))
    # Some damping: kd makes up the rest of the critical damping, kp unchanged.
    some = d.gains_for(m, damping=0.1)
    assert (some.kp, some.kd) == pytest.approx((m * 400.0, 2 * m * 20.0 - 0.1))
    # More damping than critical on its own: w rises so that it is critical again.
    heavy = d.gains_for(m, damping=1.0)
    w = 1.0 / (2 * m)
    assert (heavy.kp, heavy.kd) == pytest.approx((m * w * w, 0.0))


def test_a_heavily_damped_light_joint_still_tracks() -> None:
    """A light link on a damped joint (a wrist) settles like any other joint."""
    damping = 50.0  # 5x the critical damping of the pendulum's inertia at w = 20 rad/s
    dof = f"<dynamics><damping>{damping}</damping></dynamics>"
    text = pendulum(gravity=False).replace("<xyz>0 0 1</xyz>", f"<xyz>0 0 1</xyz>{dof}")
    engine = engine_of(text)
    engine.set_commands("position", ["hinge"], [0.5])
    q, _ = trajectory(engine, 500)
    assert abs(q[-1] - 0.5) < 1e-3
    # Gains that ignore the joint's damping (kd = 2 m w on top of it) are far behind.
    naive = engine_of(text, gains=SimGains(dofs={"hinge": {"kp": INERTIA * 400.0,
                                                            "kd": 2 * INERTIA * 20.0}}))
    naive.set_commands("position", ["hinge"], [0.5])
    q_naive, _ = trajectory(naive, 500)
    assert abs(q_naive[-1] - 0.5) > 0.1


def test_position_control_gives_dart_the_spring_only_while_it_holds() -> None:
    """A FORCE joint's PD is DART's joint spring while held; the model's spring after."""
    spring = ("<dynamics><spring_stiffness>3.0</spring_stiffness>"
              "<spring_rest_position>0.4</spring_rest_position>"
              "<damping>0.2</damping></dynamics>")
    text = pendulum(gravity=False).replace("<xyz>0 0 1</xyz>", f"<xyz>0 0 1</xyz>{spring}")
    engine = engine_of(text)
    dof = engine.world.getSkeleton(0).getDof(0)
    model = (dof.getSpringStiffness(), dof.getRestPosition(), dof.getDampingCoefficient())
    assert model == pytest.approx((3.0, 0.4, 0.2))
    engine.set_commands("position", ["hinge"], [0.5])
    engine.step()
    gains = engine._actuation[0].gains[0]
    k = 3.0 + gains.kp
    assert dof.getSpringStiffness() == pytest.approx(k)
    assert dof.getDampingCoefficient() == pytest.approx(0.2 + gains.kd)
    assert dof.getRestPosition() == pytest.approx((3.0 * 0.4 + gains.kp * 0.5) / k)
    engine.set_commands("position", ["hinge"], [-0.25])  # a new target moves the rest
    engine.step()
    assert dof.getRestPosition() == pytest.approx((3.0 * 0.4 - gains.kp * 0.25) / k)
    engine.clear_commands()
    assert (dof.getSpringStiffness(), dof.getRestPosition(),
            dof.getDampingCoefficient()) == pytest.approx(model)
    engine.step()
    assert (dof.getSpringStiffness(), dof.getRestPosition(),
            dof.getDampingCoefficient()) == pytest.approx(model)


def test_state_vectors_are_fresh_arrays_in_model_order() -> None:
    engine = SimEngine(load_skel(DATA / "two_arms.skel"))
    engine.step(5)
    q = engine.positions()
    parts = [np.asarray(engine.world.getSkeleton(i).getPositions())
             for i in range(engine.world.getNumSkeletons())]
    np.testing.assert_array_equal(q, np.concatenate(parts))
    q[:] = 99.0  # a copy: the engine's state is untouched
    assert not np.any(engine.positions() == 99.0)
    assert engine.velocities().shape == engine.efforts().shape == (engine.num_dofs,)


def test_state_is_positions_velocities_and_efforts() -> None:
    engine = SimEngine(load_skel(DATA / "two_arms.skel"))
    engine.hold_initial_positions()
    engine.step(20)
    q, v, e = engine.state()
    np.testing.assert_array_equal(q, engine.positions())
    np.testing.assert_array_equal(v, engine.velocities())
    np.testing.assert_array_equal(e, engine.efforts())
    e[:] = 1e9  # fresh arrays: the engine's record is untouched
    assert not np.any(engine.efforts() == 1e9)


def _batch_worlds() -> list[str]:
    """Worlds for step(n) == n single steps: servo efforts, two skeletons, contacts."""
    corpus = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))
    fullbody = corpus / "data" / "skel" / "fullbody1.skel"  # DART's, with contacts
    return ["servo pendulum", str(DATA / "two_arms.skel"),
            *([str(fullbody)] if fullbody.is_file() else [])]


def _batch_world(name: str) -> SimEngine:
    return engine_of(pendulum("servo")) if name == "servo pendulum" else SimEngine(
        load_skel(Path(name)))


@pytest.mark.parametrize("name", _batch_worlds())
@pytest.mark.parametrize("held", [False, True], ids=["nothing held", "holding"])
def test_n_steps_at_once_are_n_single_steps(name: str, held: bool) -> None:
    """step(n) (DART's own world.step() when no command is held) equals n step() calls.

    Bit for bit: positions, velocities, time, and the efforts of the last step (an
    uncommanded servo's are its motor's force, not 0).
    """
    one, batched = _batch_world(name), _batch_world(name)
    if held:
        one.hold_initial_positions()
        batched.hold_initial_positions()
    for k in (1, 7, 13, 50):
        for _ in range(k):
            one.step()
        batched.step(k)
        assert batched.time == one.time
        for a, b in zip(batched.state(), one.state(), strict=True):
            np.testing.assert_array_equal(a, b)
    if name == "servo pendulum" and not held:
        assert np.any(one.efforts() != 0.0)
