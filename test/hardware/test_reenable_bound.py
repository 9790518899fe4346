"""The re-enable bound of the motion limiter, without a bus: after a reset (an enable), a
commanded goal is approached at ``reenable_velocity`` of the velocity limits until it is
reached; then full speed; a new reset bounds again. On the wire, through the hardware
node: test/nodes/test_hardware_reenable.py."""

from __future__ import annotations

import numpy as np
import pytest

from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.safety import DEFAULT_REENABLE_VELOCITY, MotionLimiter
from skel_ros.model.limits import JointLimits, LimitSet

DT = 0.005
NAMES = ("a", "b", "c")


def _limiter(reenable: float = DEFAULT_REENABLE_VELOCITY, *,
             acceleration: float = np.inf) -> MotionLimiter:
    limits = LimitSet([JointLimits(n, position_lower=-3.0, position_upper=3.0,
                                   velocity_lower=-4.0, velocity_upper=4.0,
                                   acceleration_lower=-acceleration,
                                   acceleration_upper=acceleration) for n in NAMES])
    modes = (ControlMode.POSITION, ControlMode.POSITION, ControlMode.VELOCITY)
    limiter = MotionLimiter(limits, NAMES, modes, reenable_velocity=reenable)
    limiter.reset([0.0, 0.0, 0.0])
    return limiter


def _run(limiter: MotionLimiter, goal: list[float], steps: int, *,
         commanded: bool = True) -> np.ndarray:
    """Positions of a and b over ``steps`` cycles toward ``goal`` (velocity of c: 3)."""
    goals = np.array([*goal, np.nan])
    if commanded:
        limiter.commanded(np.isfinite(goals))
    out = []
    for _ in range(steps):
        q, _, _ = limiter.step(goals, np.array([0.0, 0.0, 3.0]), np.zeros(3),
                               np.zeros(3), DT)
        out.append(q[:2])
    return np.array(out)


def test_after_a_reset_a_far_goal_is_approached_at_the_bounded_speed_until_reached() -> None:
    limiter = _limiter()
    q = _run(limiter, [1.0, 0.0], 300)
    steps = np.abs(np.diff(np.vstack([[0.0, 0.0], q]), axis=0))
    assert steps[:, 0].max() == pytest.approx(0.2 * 4.0 * DT)  # 0.8 rad/s, not 4
    assert np.count_nonzero(np.abs(q[:, 0] - 1.0) > 1e-9) == pytest.approx(250, abs=1)
    assert limiter.bounded == ()  # a reached its goal; b was at its goal
    q = _run(limiter, [-1.0, 0.0], 3)  # reached once: full speed from then on
    assert q[0, 0] == pytest.approx(1.0 - 4.0 * DT)


def test_the_bound_names_what_it_slows_and_a_new_reset_bounds_again() -> None:
    limiter = _limiter()
    _run(limiter, [1.0, 0.0], 10)
    assert limiter.bounded == ("a",)
    _run(limiter, [1.0, 0.0], 300)
    limiter.reset(limiter.position_targets)
    q = _run(limiter, [0.0, 0.0], 2)
    assert q[0, 0] == pytest.approx(1.0 - 0.8 * DT)


def test_a_hold_is_not_a_commanded_goal_and_velocity_joints_are_not_bounded() -> None:
    limiter = _limiter()
    _run(limiter, [0.0, 0.0], 5, commanded=False)  # holding where it stands
    assert limiter.bounded == ()
    q = _run(limiter, [1.0, 0.0], 1)  # the first command: still bounded
    assert q[0, 0] == pytest.approx(0.8 * DT)
    _, v, _ = limiter.step(np.array([1.0, 0.0, np.nan]), np.array([0.0, 0.0, 3.0]),
                           np.zeros(3), np.zeros(3), DT)
    assert v[2] == 3.0  # a velocity-mode DOF: its command as it is (no acceleration limit)


def test_with_acceleration_limits_the_bound_and_the_braking_both_hold() -> None:
    limiter = _limiter(acceleration=20.0)
    q = _run(limiter, [1.0, 0.0], 600)
    v = np.diff(np.vstack([[0.0, 0.0], q]), axis=0)[:, 0] / DT
    assert v.max() <= 0.8 + 1e-9
    assert np.abs(np.diff(v)).max() <= 20.0 * DT + 1e-9
    assert q[-1, 0] == pytest.approx(1.0)
    assert limiter.bounded == ()


def test_reenable_velocity_one_is_no_bound_and_out_of_range_is_refused() -> None:
    limiter = _limiter(1.0)
    q = _run(limiter, [1.0, 0.0], 1)
    assert q[0, 0] == pytest.approx(4.0 * DT)
    for bad in (0.0, -0.1, 1.5, np.nan):
        with pytest.raises(ValueError, match="reenable_velocity"):
            _limiter(bad)


def test_a_joint_without_a_velocity_limit_cannot_be_slowed_and_is_named() -> None:
    limits = LimitSet([JointLimits("a", position_lower=-3.0, position_upper=3.0)])
    limiter = MotionLimiter(limits, ("a",), (ControlMode.POSITION,))
    assert limiter.unbounded == ("a",)
