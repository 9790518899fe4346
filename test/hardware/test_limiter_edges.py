"""The motion limiter at its edges, without a bus: goals that are not numbers, joints with
no acceleration limit, positions that are not known, the re-enable bound's reach and its
per-DOF release, and the guard's clamps on both sides.

Beside test_safety.py (braking at limits, the guard) and test_reenable_bound.py (the
re-enable bound over whole moves): these pin behaviours mutation testing (issue 35,
docs/testing.md) showed no test held, each one a way a joint could be driven harder or
further than its limits allow.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.safety import MotionLimiter
from skel_ros.model.limits import JointLimits, LimitSet

DT = 0.005
Q_LIMIT = 1.0
V_LIMIT = 2.0
A_LIMIT = 10.0
E_LIMIT = 5.0


def _limits(names: tuple[str, ...], acceleration: float = A_LIMIT) -> LimitSet:
    return LimitSet([JointLimits(n, position_lower=-Q_LIMIT, position_upper=Q_LIMIT,
                                 velocity_lower=-V_LIMIT, velocity_upper=V_LIMIT,
                                 acceleration_lower=-acceleration,
                                 acceleration_upper=acceleration,
                                 effort_lower=-E_LIMIT, effort_upper=E_LIMIT)
                     for n in names])


def _one(mode: ControlMode, *, acceleration: float = A_LIMIT, reset: bool = True,
         reenable: float = 1.0) -> MotionLimiter:
    limiter = MotionLimiter(_limits(("j",), acceleration), ("j",), (mode,),
                            reenable_velocity=reenable)
    if reset:
        limiter.reset([0.0])
    return limiter


def _step(limiter: MotionLimiter, *, position: float = math.nan, velocity: float = 0.0,
          effort: float = 0.0, measured: float = 0.0) -> tuple[float, float, float]:
    q, v, e = limiter.step(np.array([position]), np.array([velocity]), np.array([effort]),
                           np.array([measured]), DT)
    return float(q[0]), float(v[0]), float(e[0])


# ------------------------------------------------------------------ before a reset


def test_a_limiter_never_reset_has_no_position_target_and_starts_still() -> None:
    limiter = _one(ControlMode.POSITION, reset=False)
    assert np.isnan(limiter.position_targets).all()
    assert limiter.position_targets.dtype == np.float64
    assert np.isnan(limiter.hold()).all()
    velocity = _one(ControlMode.VELOCITY, reset=False)
    _, v, _ = _step(velocity, velocity=V_LIMIT)
    assert v == pytest.approx(A_LIMIT * DT)  # from standstill, one step of acceleration


def test_hold_is_the_last_target() -> None:
    limiter = _one(ControlMode.POSITION)
    for _ in range(20):
        q, v, _ = _step(limiter, position=0.5)
    assert limiter.hold().tolist() == [q]
    assert limiter.position_targets.tolist() == [q]
    assert 0.0 < v <= V_LIMIT  # the rate limiter's feed-forward, a number
    assert math.isfinite(v)


# ------------------------------------------------------------------ goals that are not numbers


@pytest.mark.parametrize("goal", [math.nan, math.inf, -math.inf])
def test_a_velocity_goal_that_is_not_a_number_stops_the_joint(goal: float) -> None:
    limiter = _one(ControlMode.VELOCITY)
    for _ in range(50):
        _step(limiter, velocity=1.0)
    _, v, _ = _step(limiter, velocity=goal)
    assert v == pytest.approx(1.0 - A_LIMIT * DT)  # braking toward 0 at the limit
    for _ in range(50):
        _, v, _ = _step(limiter, velocity=goal)
    assert v == 0.0


@pytest.mark.parametrize("goal", [math.nan, math.inf, -math.inf])
def test_an_effort_goal_that_is_not_a_number_is_no_effort(goal: float) -> None:
    limiter = _one(ControlMode.EFFORT)
    assert _step(limiter, effort=goal)[2] == 0.0


@pytest.mark.parametrize("side", [1.0, -1.0], ids=["upper", "lower"])
def test_no_effort_at_all_pushes_past_a_limit(side: float) -> None:
    limiter = _one(ControlMode.EFFORT)
    for effort in (0.5, 1e-6, 1.0):
        assert _step(limiter, effort=side * effort, measured=side * Q_LIMIT)[2] == 0.0
        assert _step(limiter, effort=-side * effort, measured=side * Q_LIMIT)[2] == (
            -side * effort)


# ------------------------------------------------------------------ no acceleration limit


@pytest.mark.parametrize("side", [1.0, -1.0], ids=["upper", "lower"])
def test_without_acceleration_limits_a_velocity_joint_stops_at_the_limit(side: float) -> None:
    """With no braking limit the joint may stop at once: it gets at most the distance left
    to the limit per step, so that the next position is the limit, not beyond."""
    limiter = _one(ControlMode.VELOCITY, acceleration=math.inf)
    room = 0.004
    _, v, _ = _step(limiter, velocity=side * V_LIMIT, measured=side * (Q_LIMIT - room))
    assert v == pytest.approx(side * room / DT)
    assert abs(v) < V_LIMIT
    _, v, _ = _step(limiter, velocity=side * V_LIMIT, measured=0.0)
    assert v == side * V_LIMIT  # far from the limit: full speed at once


def test_a_velocity_joint_whose_position_is_not_known_gets_no_velocity() -> None:
    limiter = _one(ControlMode.VELOCITY, acceleration=math.inf)
    assert _step(limiter, velocity=1.5, measured=math.nan)[1] == 0.0
    assert _step(limiter, velocity=-1.5, measured=math.nan)[1] == 0.0


# ------------------------------------------------------------------ the re-enable bound


def _two(reenable: float) -> MotionLimiter:
    limiter = MotionLimiter(_limits(("a", "b"), acceleration=math.inf), ("a", "b"),
                            (ControlMode.POSITION, ControlMode.POSITION),
                            reenable_velocity=reenable)
    limiter.reset([0.0, 0.0])
    return limiter


def test_without_a_re_enable_bound_nothing_is_bounded() -> None:
    limiter = _two(1.0)
    limiter.commanded(np.array([True, True]))
    assert limiter.bounded == ()
    q, _, _ = limiter.step(np.array([0.9, -0.9]), np.zeros(2), np.zeros(2), np.zeros(2), DT)
    assert q.tolist() == pytest.approx([V_LIMIT * DT, -V_LIMIT * DT])


def test_goals_commanded_at_different_times_are_all_bounded() -> None:
    limiter = _two(0.25)
    limiter.commanded(np.array([True, False]))
    assert limiter.bounded == ("a",)
    limiter.commanded(np.array([False, True]))
    assert limiter.bounded == ("a", "b")


def test_a_released_joint_moves_at_its_limit_not_beyond_while_another_is_bounded() -> None:
    limiter = _two(0.25)
    limiter.commanded(np.array([True, True]))
    goals = np.array([0.001, 0.9])  # "a" is reached at once, "b" is far
    q, _, _ = limiter.step(goals, np.zeros(2), np.zeros(2), np.zeros(2), DT)
    assert limiter.bounded == ("b",)
    goals = np.array([-0.9, 0.9])  # "a" goes far now: released, at its full limit
    previous = q
    for _ in range(40):
        q, _, _ = limiter.step(goals, np.zeros(2), np.zeros(2), np.zeros(2), DT)
        speed = np.abs(q - previous) / DT
        assert speed[0] <= V_LIMIT * (1 + 1e-9)
        assert speed[1] <= 0.25 * V_LIMIT * (1 + 1e-9)
        previous = q
    assert speed[0] == pytest.approx(V_LIMIT)


def test_a_goal_is_reached_within_a_step_and_the_braking_distance() -> None:
    """Bounded speed s, braking a: within s * dt + s**2 / (2 a) of the goal counts as
    reached; a little further does not."""
    s, a = 0.25 * V_LIMIT, A_LIMIT
    reach = s * DT + s * s / (2.0 * a)
    for distance, released in ((0.99 * reach, True), (1.2 * reach, False)):
        limiter = MotionLimiter(_limits(("j",)), ("j",), (ControlMode.POSITION,),
                                reenable_velocity=0.25)
        limiter.reset([0.0])
        limiter.commanded(np.array([True]))
        # The first step from standstill moves a * dt**2 at most: add it to the distance.
        goal = distance + A_LIMIT * DT * DT
        q, _, _ = limiter.step(np.array([goal]), np.zeros(1), np.zeros(1), np.zeros(1), DT)
        assert abs(goal - q[0]) == pytest.approx(distance, rel=0.02)
        assert (limiter.bounded == ()) is released, distance


# ------------------------------------------------------------------ the guard


def test_the_guard_clamps_velocity_and_effort_on_both_sides() -> None:
    limiter = _one(ControlMode.VELOCITY)
    nan = np.array([np.nan])
    for v, want in ((-3.0, -V_LIMIT), (3.0, V_LIMIT), (1.0, 1.0)):
        assert limiter.guard(nan, np.array([v]), nan)[1][0] == want
    assert limiter.corrections == 2
    effort = _one(ControlMode.EFFORT)
    for e, want in ((7.0, E_LIMIT), (-7.0, -E_LIMIT), (2.0, 2.0)):
        assert effort.guard(nan, nan, np.array([e]))[2][0] == want
    assert effort.corrections == 2
    for e in (math.inf, -math.inf):
        assert effort.guard(nan, nan, np.array([e]))[2][0] == 0.0


def test_the_guard_does_not_count_what_it_need_not_change() -> None:
    """A position DOF's velocity (the rate limiter's feed-forward) and targets that are
    NaN ("send nothing") are not corrections."""
    limiter = _one(ControlMode.POSITION)
    limiter.guard(np.array([0.5]), np.array([V_LIMIT * (1 + 1e-12)]), np.array([np.nan]))
    assert limiter.corrections == 0
    velocity = _one(ControlMode.VELOCITY)
    velocity.guard(np.array([np.nan]), np.array([np.nan]), np.array([np.nan]))
    assert velocity.corrections == 0
