"""Segment polynomials shared by the point trajectory and the CASPR reader.

A segment from ``(p0, v0, a0)`` to ``(p1, v1, a1)`` over ``T`` seconds is the
polynomial ``sum c[k] * tau**k`` in the time ``tau`` since its start. The
coefficient formulas are those of ros2_control's joint_trajectory_controller
(``Trajectory::interpolate_between_points``); arrays hold one column per DOF.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

__all__ = ["FloatArray", "cubic", "evaluate", "evaluate_many", "linear", "quintic"]

ORDER = 6  # coefficients per segment (quintic); lower orders leave the top ones zero


def linear(p0: FloatArray, p1: FloatArray, duration: float) -> FloatArray:
    """Coefficients of the straight line from ``p0`` to ``p1``."""
    c = np.zeros((ORDER, p0.size))
    c[0] = p0
    c[1] = (p1 - p0) / duration
    return c


def cubic(p0: FloatArray, v0: FloatArray, p1: FloatArray, v1: FloatArray,
          duration: float) -> FloatArray:
    """Coefficients of the cubic Hermite segment matching positions and velocities."""
    t1 = np.float64(duration)  # overflow gives inf (callers check), not OverflowError
    t2, t3 = t1**2, t1**3
    c = np.zeros((ORDER, p0.size))
    c[0] = p0
    c[1] = v0
    c[2] = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * t1 - v1 * t1) / t2
    c[3] = (2.0 * p0 - 2.0 * p1 + v0 * t1 + v1 * t1) / t3
    return c


def quintic(p0: FloatArray, v0: FloatArray, a0: FloatArray,  # noqa: PLR0917 - boundary values
            p1: FloatArray, v1: FloatArray, a1: FloatArray, duration: float) -> FloatArray:
    """Coefficients of the quintic segment matching positions, velocities and accelerations."""
    t1, t2, t3, t4, t5 = (np.float64(duration) ** k for k in range(1, 6))  # as cubic
    c = np.zeros((ORDER, p0.size))
    c[0] = p0
    c[1] = v0
    c[2] = 0.5 * a0
    c[3] = (-20.0 * p0 + 20.0 * p1 - 3.0 * a0 * t2 + a1 * t2
            - 12.0 * v0 * t1 - 8.0 * v1 * t1) / (2.0 * t3)
    c[4] = (30.0 * p0 - 30.0 * p1 + 3.0 * a0 * t2 - 2.0 * a1 * t2
            + 16.0 * v0 * t1 + 14.0 * v1 * t1) / (2.0 * t4)
    c[5] = (-12.0 * p0 + 12.0 * p1 - a0 * t2 + a1 * t2
            - 6.0 * v0 * t1 - 6.0 * v1 * t1) / (2.0 * t5)
    return c


def evaluate(c: FloatArray, tau: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Position, velocity and acceleration of coefficients ``c`` at ``tau``."""
    powers = tau ** np.arange(ORDER, dtype=np.float64)
    k = np.arange(ORDER, dtype=np.float64)
    pos = powers @ c
    vel = (k[1:] * powers[:-1]) @ c[1:]
    acc = (k[2:] * (k[2:] - 1.0) * powers[:-2]) @ c[2:]
    return pos, vel, acc


def evaluate_many(c: FloatArray, tau: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Like :func:`evaluate` at every time of ``tau``; arrays of shape ``(len(tau), n)``."""
    k = np.arange(ORDER, dtype=np.float64)
    powers = tau[:, None] ** k[None, :]
    pos = powers @ c
    vel = (powers[:, :-1] * k[1:]) @ c[1:]
    acc = (powers[:, :-2] * (k[2:] * (k[2:] - 1.0))) @ c[2:]
    return pos, vel, acc
