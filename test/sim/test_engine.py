"""DART's engine: its limit constraint, rate-limited setpoints, gains, names, the PD as
DART's joint spring, the position controller's integral.

What every engine does alike (motion per command kind and actuator type, limits and
refusals, timeouts, reset, ``step(n)``) is the conformance suite's
(``test_engine_conformance.py``); this file keeps what is DART's own or not yet in it.
Every world here is a small SKEL document written for the test (``engine_worlds.py``: a
one-link pendulum, ``data/two_arms.skel``), so the expected motion is known in closed form
or from the controller's design (critically damped, natural frequency ``w = 20 rad/s`` by
default: ``config/sim_gains.yaml``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from engine_worlds import DATA, DT, INERTIA, TWO_ARMS, pendulum, trajectory

pytest.importorskip("dartpy")

from skel_ros.model import load_skel
from skel_ros.model.limits import LimitSet, RateLimiter
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


def engine_of(text: str, **kwargs: object) -> SimEngine:
    return SimEngine(load_skel(text, name="test.skel"), **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- limit enforcement

LIMIT = 0.1
# DART's joint-limit constraint lets the joint pass its limit by at most this much
# (measured: 6.2e-13 rad over 2 s of a pendulum pressing on its limit).
LIMIT_TOL = 1e-9


def test_limit_enforcement_switches_at_run_time() -> None:
    engine = engine_of(pendulum(limits=(-LIMIT, LIMIT)), enforce_limits=False)
    assert not engine.world.getSkeleton(0).getJoint(0).areLimitsEnforced()
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

# --------------------------------------------------------------------------- clamping

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


@pytest.mark.parametrize("actuator", [a.value for a in ActuatorType])
def test_actuator_types_are_exposed(actuator: str) -> None:
    engine = engine_of(pendulum(actuator))
    assert engine.actuator_types == (ActuatorType(actuator),)


# --------------------------------------------------------------------------- names

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
    assert (g.kp, g.kd, g.ki, g.kp_vel) == (m * 1600.0, 2 * m * 40.0,
                                            0.2 * m * 40.0**3, 10.0)



def test_an_unstable_integral_ratio_is_refused() -> None:
    """``ki < 2 zeta m w^3`` is the PID's stability bound: ``integral_ratio < 2 zeta``."""
    with pytest.raises(GainsError, match=r"integral_ratio must be below 2 \* damping_ratio"):
        parse_gains({"default": {"damping_ratio": 0.1}}, "soft.yaml")  # the default 0.2
    assert parse_gains({"default": {"damping_ratio": 0.1, "integral_ratio": 0.0}})
    assert parse_gains({"default": {"damping_ratio": 0.1, "integral_ratio": 0.19}})

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


FRICTION = "<dynamics><friction>{}</friction></dynamics>"


def _integral(engine: SimEngine) -> float:
    return float(engine._actuation[0]._integral[0])


def test_integral_takes_a_force_joint_past_its_friction() -> None:
    """Coulomb friction 0.05 N m holds a PD short by about friction / kp (measured 5.2e-4
    rad at kp = 100 N m/rad, for good); the integral takes the joint there (1e-4 rad at
    1 s, 1.9e-6 at 2 s: the error falls at ki / kp = 4/s once the joint is held) and then
    pushes about the friction."""
    text = pendulum(gravity=False).replace("<xyz>0 0 1</xyz>",
                                           "<xyz>0 0 1</xyz>" + FRICTION.format(0.05))
    pd = engine_of(text, gains=SimGains(defaults=GainDefaults(integral_ratio=0.0)))
    pd.set_commands("position", ["hinge"], [0.3])
    q_pd, _ = trajectory(pd, 2000)
    assert 4e-4 < 0.3 - q_pd[-1] < 1e-3  # a PD stops short
    engine = engine_of(text)
    engine.set_commands("position", ["hinge"], [0.3])
    q, _ = trajectory(engine, 2000)
    assert abs(q[999] - 0.3) < 2e-4
    assert abs(q[-1] - 0.3) < 1e-5
    assert 0.04 < _integral(engine) < 0.06


def test_integral_restarts_on_a_new_move_a_mode_change_and_reset() -> None:
    """Kept for a trajectory's next sample (closer than i_zone, 0.05 rad); 0 again for a
    target farther than that, on entering position mode, after clear and reset."""
    text = pendulum(gravity=False).replace("<xyz>0 0 1</xyz>",
                                           "<xyz>0 0 1</xyz>" + FRICTION.format(0.05))
    engine = engine_of(text)
    engine.set_commands("position", ["hinge"], [0.3])
    engine.step(1000)
    held = _integral(engine)
    assert held > 0.0
    engine.set_commands("position", ["hinge"], [0.31])  # the next sample of a trajectory
    assert _integral(engine) == held
    engine.set_commands("position", ["hinge"], [-0.2])  # a new move
    assert _integral(engine) == 0.0
    engine.step(1000)
    assert _integral(engine) < 0.0
    engine.set_commands("effort", ["hinge"], [0.0])
    engine.set_commands("position", ["hinge"], [-0.2])  # back in position mode
    assert _integral(engine) == 0.0
    engine.step(1000)
    engine.clear_commands()
    assert _integral(engine) == 0.0
    engine.set_commands("position", ["hinge"], [-0.2])
    engine.step(1000)
    engine.reset()
    assert _integral(engine) == 0.0


def test_integral_stays_within_the_effort_limits() -> None:
    """A joint its motor cannot move (friction 2 N m, force limits 0.5 N m), given an
    integral allowed to reach 100 N m: it stops growing where the law reaches the effort
    limit, and never pushes beyond the limit itself (anti-windup)."""
    dof = '<dof local_index="0"><force lower="-0.5" upper="0.5"/></dof>'
    text = pendulum(gravity=False, dof=dof).replace("<xyz>0 0 1</xyz>",
                                                    "<xyz>0 0 1</xyz>" + FRICTION.format(2.0))
    engine = engine_of(text, gains=SimGains(dofs={"hinge": {"ki": 1e3, "i_limit": 100.0}}))
    engine.set_commands("position", ["hinge"], [0.003])  # kp e = 0.3 N m
    integral, effort = np.empty(2000), np.empty(2000)
    for k in range(2000):
        engine.step()
        integral[k], effort[k] = _integral(engine), engine.efforts()[0]
    assert abs(engine.positions()[0]) < 1e-9  # stuck
    assert integral.max() <= 0.5
    assert 0.15 < integral[-1] < 0.21  # 0.5 - kp e, and one step's growth
    assert np.abs(effort).max() <= 0.5 + 1e-12


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


