"""Checking a trajectory against the model's joint limits before it is played.

DOF names are the public names the simulation and hardware nodes use: the SKEL
DOF name, prefixed ``<skeleton>/`` in a world with several skeletons (the URDF
rule, :func:`skel_ros.model.urdf.skeleton_namespace`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.urdf import skeleton_namespace
from skel_ros.trajectory.errors import TrajectoryError, TrajectoryLimitError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.model.types import World
    from skel_ros.trajectory.points import PointTrajectory

__all__ = ["DofLimits", "check_limits", "model_limits"]

DEFAULT_CHECK_STEP = 0.005  # s between checked samples (plus every point's time)


@dataclass(frozen=True)
class DofLimits:
    """Position and velocity limits of one DOF (+-inf when unlimited)."""

    position_lower: float
    position_upper: float
    velocity_lower: float
    velocity_upper: float


def model_limits(world: World) -> dict[str, DofLimits]:
    """Limits of every DOF of ``world`` by public name, in DOF order.

    Raises:
        TrajectoryError: Two DOFs would have the same public name.
    """
    out: dict[str, DofLimits] = {}
    for skeleton in world.skeletons:
        prefix = skeleton_namespace(world, skeleton)
        for dof in skeleton.dofs:
            name = prefix + dof.name
            if name in out:
                raise TrajectoryError(f"two DOFs are both named {name!r}")
            out[name] = DofLimits(dof.position_lower, dof.position_upper,
                                  dof.velocity_lower, dof.velocity_upper)
    return out


def check_limits(trajectory: PointTrajectory, limits: Mapping[str, DofLimits],
                 step: float = DEFAULT_CHECK_STEP) -> None:
    """Raise if any DOF of ``trajectory`` leaves its limits.

    The trajectory is sampled every ``step`` seconds and at every point's time;
    the first violation (earliest time) is reported.

    Raises:
        TrajectoryLimitError: Names the DOF, the time, the value and the limit.
        TrajectoryError: A joint of the trajectory is not in ``limits``.
    """
    unknown = [n for n in trajectory.joint_names if n not in limits]
    if unknown:
        raise TrajectoryError(f"unknown DOF(s) {', '.join(map(repr, unknown))}; the model's"
                              f" DOFs are {', '.join(limits)}")
    dofs = [limits[n] for n in trajectory.joint_names]
    lo = np.array([d.position_lower for d in dofs])
    hi = np.array([d.position_upper for d in dofs])
    vlo = np.array([d.velocity_lower for d in dofs])
    vhi = np.array([d.velocity_upper for d in dofs])
    count = max(1, math.ceil(trajectory.duration / step))
    times = np.union1d(np.linspace(0.0, trajectory.duration, count + 1),
                       [p.time_from_start for p in trajectory.points])
    for t in times:
        pos, vel, _ = trajectory.sample(float(t))
        for j, name in enumerate(trajectory.joint_names):
            if not lo[j] <= pos[j] <= hi[j]:
                raise TrajectoryLimitError(
                    f"DOF {name!r} at t = {t:.3f} s: position {pos[j]:.4g} is outside its"
                    f" limits [{lo[j]:g}, {hi[j]:g}]", name, float(t), float(pos[j]))
            if not vlo[j] <= vel[j] <= vhi[j]:
                raise TrajectoryLimitError(
                    f"DOF {name!r} at t = {t:.3f} s: velocity {vel[j]:.4g} is outside its"
                    f" limits [{vlo[j]:g}, {vhi[j]:g}]", name, float(t), float(vel[j]))
