"""The joint regressor: what the identified parameters multiply in a joint's torque balance.

For one joint, with the model's rigid-body torque ``tau_rb`` (mass matrix, Coriolis,
gravity: :mod:`skel_ros.sim.inverse_dynamics`) known, the torque its motor gives is

    tau - tau_rb = armature * qdd + damping * qd + friction * sign(qd)

linear in the three parameters: each sample is one row ``[qdd, qd, sign(qd)]`` of the
joint's regressor. Samples slower than :data:`STILL_SPEED` are left out: there a Coulomb
friction holds anything below it and ``sign(qd)`` says nothing. The excitation designer
(:mod:`skel_ros.identify.excite`) rates a trajectory by the condition number of these
regressors and the fit (:mod:`skel_ros.identify.fit`) solves them, so both see the same
problem. No ROS, no engine.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = ["PARAMETERS", "SLIDE_UNITS", "STILL_SPEED", "UNITS", "condition_number",
           "joint_regressor", "moving"]

Vector = npt.NDArray[np.float64]

PARAMETERS: Final = ("armature", "damping", "friction")
"""The per-joint parameters, in the regressor's column order."""
UNITS: Final = {"armature": "kg m^2", "damping": "N m s/rad", "friction": "N m",
                "delay": "s", "mass": "kg"}
"""The units of each identified quantity (a hinge joint's parameters)."""
SLIDE_UNITS: Final = {"armature": "kg", "damping": "N s/m", "friction": "N"}
"""A slide joint's parameters' units (its motion in m, its effort in N)."""
STILL_SPEED: Final = 0.05
"""rad/s (m/s): samples slower than this are not used (module docstring)."""


def moving(qd: Vector) -> npt.NDArray[np.bool_]:
    """The samples fast enough to enter the regressor."""
    return np.abs(np.asarray(qd, dtype=float)) >= STILL_SPEED


def joint_regressor(qd: Vector, qdd: Vector, direction: Vector | None = None) -> Vector:
    """The rows ``[qdd, qd, sign(qd)]`` of one joint's samples (all of them; see :func:`moving`).

    ``direction``: the friction's column where known (a sample's share of time moving
    forward less back, from the motion inside it; NaN: ``sign(qd)``).
    """
    qd = np.asarray(qd, dtype=float)
    sign = np.sign(qd)
    if direction is not None:
        sign = np.where(np.isfinite(direction), direction, sign)
    return np.column_stack([np.asarray(qdd, dtype=float), qd, sign])


def condition_number(regressor: Vector) -> float:
    """The condition number of ``regressor`` with its columns scaled to unit length.

    Scaling the columns makes the figure independent of units (a parameter in kg m^2 and
    one in N m would otherwise set it by their units alone); a zero column (a parameter
    the data does not touch) gives infinity.
    """
    regressor = np.asarray(regressor, dtype=float)
    if regressor.shape[0] < regressor.shape[1]:
        return float("inf")
    norms = np.linalg.norm(regressor, axis=0)
    if np.any(norms == 0.0):
        return float("inf")
    sv = np.linalg.svd(regressor / norms, compute_uv=False)
    return float(sv[0] / sv[-1]) if sv[-1] > 0.0 else float("inf")
