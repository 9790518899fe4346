"""The motion limiter's last lines of defence, without a bus: braking at the position
limits for velocity-mode joints, no effort pushing further past a limit for effort-mode
joints, and the guard that clamps and counts what the steps before it let through.

Each test pins a line that mutation testing showed the rest of the suite did not (issue
35): the limiter is called directly, with hand-computed expectations. Through the
backend and on the wire: test/hardware/test_limiter_steps.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.safety import MotionLimiter
from skel_ros.model.limits import JointLimits, LimitSet

DT = 0.005
Q_LIMIT = 1.0  # position limits +-1 rad
V_LIMIT = 2.0  # velocity limits +-2 rad/s
A_LIMIT = 10.0  # acceleration limits +-10 rad/s^2
E_LIMIT = 5.0  # effort limits +-5 N m


def _limiter(mode: ControlMode, start: float = 0.0) -> MotionLimiter:
    """One DOF "j" in ``mode``, reset at ``start``."""
    limits = LimitSet([JointLimits("j", position_lower=-Q_LIMIT, position_upper=Q_LIMIT,
                                   velocity_lower=-V_LIMIT, velocity_upper=V_LIMIT,
                                   acceleration_lower=-A_LIMIT, acceleration_upper=A_LIMIT,
                                   effort_lower=-E_LIMIT, effort_upper=E_LIMIT)])
    limiter = MotionLimiter(limits, ("j",), (mode,))
    limiter.reset([start])
    return limiter


def _velocity(limiter: MotionLimiter, goal: float, measured: float) -> float:
    _, v, _ = limiter.step(np.array([np.nan]), np.array([goal]), np.zeros(1),
                           np.array([measured]), DT)
    return float(v[0])


def _effort(limiter: MotionLimiter, goal: float, measured: float) -> float:
    _, _, e = limiter.step(np.array([np.nan]), np.zeros(1), np.array([goal]),
                           np.array([measured]), DT)
    return float(e[0])


# ------------------------------------------------------------------ velocity mode


@pytest.mark.parametrize("side", [1.0, -1.0], ids=["upper", "lower"])
def test_a_velocity_joint_near_a_limit_is_slowed_to_what_it_can_brake_from(
        side: float) -> None:
    """A velocity-mode joint running at full speed toward a limit 0.01 rad away gets at
    most sqrt(2 a room) = 0.447 rad/s, the speed from which braking at the acceleration
    limit stops it at the limit; not the 2 rad/s it was commanded (from which it needs
    0.2 rad to stop: far past the limit). Both limits: each has its own line."""
    limiter = _limiter(ControlMode.VELOCITY)
    goal = side * V_LIMIT
    for _ in range(100):  # far from the limit: up to full speed, at the acceleration limit
        v = _velocity(limiter, goal, 0.0)
    assert v == pytest.approx(goal)
    brake = math.sqrt(2.0 * A_LIMIT * 0.01)
    v = _velocity(limiter, goal, side * (Q_LIMIT - 0.01))
    assert v == pytest.approx(side * brake, rel=1e-9)
    # Moving away from the limit is never slowed by it.
    v = _velocity(limiter, -goal, side * (Q_LIMIT - 0.01))
    assert v == pytest.approx(side * brake - side * A_LIMIT * DT)
    # At (or past) the limit: nothing toward it.
    limiter = _limiter(ControlMode.VELOCITY)
    for _ in range(100):
        _velocity(limiter, goal, 0.0)
    assert _velocity(limiter, goal, side * (Q_LIMIT + 0.05)) == 0.0


# ------------------------------------------------------------------ effort mode


@pytest.mark.parametrize("side", [1.0, -1.0], ids=["upper", "lower"])
def test_an_effort_joint_past_a_limit_gets_no_effort_pushing_further(side: float) -> None:
    """An effort-mode joint at or past a position limit: an effort pushing it further out
    becomes 0; one pushing it back in passes as commanded. Inside the limits the effort
    passes (clamped into the effort limits). Both limits: each has its own line."""
    limiter = _limiter(ControlMode.EFFORT)
    out, back = side * 3.0, -side * 3.0
    assert _effort(limiter, out, side * 0.5) == out  # inside: as commanded
    assert _effort(limiter, side * 9.0, side * 0.5) == side * E_LIMIT  # clamped
    for q in (side * Q_LIMIT, side * (Q_LIMIT + 0.05)):  # at, and past, the limit
        assert _effort(limiter, out, q) == 0.0, q
        assert _effort(limiter, back, q) == back, q
    assert _effort(limiter, out, math.nan) == 0.0  # not measured: no effort at all


# ------------------------------------------------------------------ the guard


def test_the_guard_clamps_an_out_of_limit_position_and_counts_it() -> None:
    """The guard is the last gate before encoding: a position target outside the limits
    (which the steps before it cannot produce) reaches the driver clamped into them, a
    non-finite one as the previous target, and each is counted in ``corrections``."""
    limiter = _limiter(ControlMode.POSITION, start=0.3)
    nan = np.array([np.nan])
    assert limiter.corrections == 0
    q, _, _ = limiter.guard(np.array([5.0]), nan, nan)
    assert q[0] == Q_LIMIT
    assert limiter.corrections == 1
    q, _, _ = limiter.guard(np.array([-5.0]), nan, nan)
    assert q[0] == -Q_LIMIT
    assert limiter.corrections == 2
    q, _, _ = limiter.guard(np.array([np.inf]), nan, nan)
    assert q[0] == 0.3  # the previous target (the reset's)
    assert limiter.corrections == 3
    q, _, _ = limiter.guard(np.array([0.5]), nan, nan)  # inside: untouched, not counted
    assert q[0] == 0.5
    assert limiter.corrections == 3


def test_the_guard_clamps_velocity_and_effort_targets_and_counts_them() -> None:
    """Velocity- and effort-mode targets outside their limits are clamped and counted too;
    an infinite one becomes 0."""
    limiter = _limiter(ControlMode.VELOCITY)
    nan = np.array([np.nan])
    _, v, _ = limiter.guard(nan, np.array([3.0]), nan)
    assert v[0] == V_LIMIT
    assert limiter.corrections == 1
    _, v, _ = limiter.guard(nan, np.array([-np.inf]), nan)
    assert v[0] == 0.0
    limiter = _limiter(ControlMode.EFFORT)
    _, _, e = limiter.guard(nan, nan, np.array([-7.0]))
    assert e[0] == -E_LIMIT
    assert limiter.corrections == 1
