"""The motion limiter's position joints brake onto their goal, never past it.

:class:`~skel_ros.hardware.safety.MotionLimiter` runs a position joint's targets through
the rate limiter of :mod:`skel_ros.model.limits`, whose largest step ``x`` toward a goal
``d`` away is the one after which braking at the acceleration limit (the step shrinking
by ``h = A dt**2`` each period) still stops exactly on the goal (``_max_step``'s
docstring: ``m = floor((sqrt(1 + 8 d / h) - 1) / 2)``, ``x = d / (m + 1) + h m / 2``).
A step larger than that passes the goal and must come back: on a robot, an overshoot
of the commanded position. These tests hold the worked examples and the rule over many
distances, from rest. ``dt`` and the limits are powers of two, so the steps are exact.
"""

from __future__ import annotations

import numpy as np
import pytest

from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.safety import MotionLimiter
from skel_ros.model.limits import JointLimits, LimitSet

DT = 0.125
A_LIMIT = 2.0
H = A_LIMIT * DT * DT  # 1/32: how much a braking step shrinks each period


def _limiter() -> MotionLimiter:
    limits = LimitSet([JointLimits("j", position_lower=-4.0, position_upper=4.0,
                                   velocity_lower=-8.0, velocity_upper=8.0,
                                   acceleration_lower=-A_LIMIT, acceleration_upper=A_LIMIT)])
    limiter = MotionLimiter(limits, ("j",), (ControlMode.POSITION,), reenable_velocity=1.0)
    limiter.reset([0.0])
    return limiter


def _targets(goal: float, steps: int) -> list[float]:
    limiter = _limiter()
    out = []
    for _ in range(steps):
        q, _, _ = limiter.step(np.array([goal]), np.zeros(1), np.zeros(1), np.zeros(1), DT)
        out.append(float(q[0]))
    return out


@pytest.mark.parametrize("fraction", [0.5, 0.875, 0.9375, 1.0])
def test_a_goal_within_one_braking_step_is_reached_in_one_step(fraction: float) -> None:
    """From rest, a goal at most h away: one step of the whole distance (m = 0)."""
    assert _targets(fraction * H, 3) == pytest.approx([fraction * H] * 3, rel=1e-6)


def test_a_worked_example_of_the_largest_step() -> None:
    """3 h from rest: h (all the acceleration limit allows), then the largest step from
    2 h away moving at h a period (m = 1: x = d / 2 + h / 2 = 1.5 h), then the last h / 2."""
    assert _targets(3 * H, 4) == pytest.approx([H, 2.5 * H, 3 * H, 3 * H], rel=1e-6)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["up", "down"])
def test_from_rest_a_position_joint_never_passes_its_goal_and_arrives(sign: float) -> None:
    for sixteenths in range(1, 321):  # goals from h / 16 to 20 h away, every h / 16
        goal = sign * sixteenths * H / 16
        targets = _targets(goal, 40)
        beyond = [q for q in targets if sign * (q - goal) > 1e-12]
        assert not beyond, (sixteenths, beyond[:3])
        assert targets[-1] == pytest.approx(goal, abs=1e-12), sixteenths
        steps = np.diff([0.0, *targets])
        assert (sign * steps >= -1e-12).all(), sixteenths  # never backs up
