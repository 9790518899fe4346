"""Checking a trajectory against the model's joint limits before it is played.

DOF names are the public names the simulation and hardware nodes use: the SKEL
DOF name, prefixed ``<skeleton>/`` in a world with several skeletons (the URDF
rule, :func:`skel_ros.model.urdf.skeleton_namespace`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.urdf import skeleton_namespace
from skel_ros.trajectory.errors import TrajectoryError, TrajectoryLimitError
from skel_ros.trajectory.points import PointTrajectory

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.model.types import World
    from skel_ros.trajectory.polynomials import FloatArray

__all__ = ["LIMIT_TOLERANCE_ULPS", "DofLimits", "check_limits", "model_limits"]

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


#: Rounding allowance, in ulps of the DOF's scale (the largest of its finite limits, its
#: range and the largest value the trajectory gives it). A CASPR quintic ending exactly on
#: a limit is evaluated from terms 10, 15 and 6 times the segment's travel, so in doubles
#: it lands up to about 30 ulps of the travel past the limit; 64 covers that with margin
#: and is still 1.4e-14 of the scale (1.4e-14 rad on a 1 rad range).
LIMIT_TOLERANCE_ULPS = 64
_EPS = float(np.finfo(np.float64).eps)


def check_limits(trajectory: PointTrajectory, limits: Mapping[str, DofLimits],
                 step: float = DEFAULT_CHECK_STEP) -> PointTrajectory:
    """Check ``trajectory`` against the DOFs' limits; return it with rounding clamped away.

    A value past a limit by at most :data:`LIMIT_TOLERANCE_ULPS` ulps of the DOF's scale
    is rounding, not motion: point positions that far out are set exactly onto the
    limit in the returned trajectory, and samples between points that far out are
    accepted. Anything further out is refused. The trajectory is sampled every
    ``step`` seconds and at every point's time; the first violation (earliest time) is
    reported, with the value's shortest round-trip digits (so the excess shows) and the
    trajectory's source (file and trajectory id) when it has one.

    Returns:
        The trajectory to play: ``trajectory`` itself when no point needed clamping.

    Raises:
        TrajectoryLimitError: Names the source, the DOF, the time, the value and the limit.
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
    positions = [p.positions for p in trajectory.points]
    if trajectory.start_positions is not None:
        positions.append(trajectory.start_positions)
    velocities = [p.velocities for p in trajectory.points if p.velocities]
    pos_tol = _tolerance(lo, hi, positions)
    vel_tol = _tolerance(vlo, vhi, velocities)
    trajectory = _clamp_points(trajectory, lo, hi, pos_tol)
    prefix = f"{trajectory.source}: " if trajectory.source else ""
    count = max(1, math.ceil(trajectory.duration / step))
    times = np.union1d(np.linspace(0.0, trajectory.duration, count + 1),
                       [p.time_from_start for p in trajectory.points])
    for t in times:
        pos, vel, _ = trajectory.sample(float(t))
        for j, name in enumerate(trajectory.joint_names):
            if not lo[j] - pos_tol[j] <= pos[j] <= hi[j] + pos_tol[j]:
                raise TrajectoryLimitError(
                    f"{prefix}DOF {name!r} at t = {t:.3f} s: position {_num(pos[j])} is outside"
                    f" its limits [{_num(lo[j])}, {_num(hi[j])}]{_excess(pos[j], lo[j], hi[j])}",
                    name, float(t), float(pos[j]))
            if not vlo[j] - vel_tol[j] <= vel[j] <= vhi[j] + vel_tol[j]:
                raise TrajectoryLimitError(
                    f"{prefix}DOF {name!r} at t = {t:.3f} s: velocity {_num(vel[j])} is outside"
                    f" its limits [{_num(vlo[j])}, {_num(vhi[j])}]"
                    f"{_excess(vel[j], vlo[j], vhi[j])}", name, float(t), float(vel[j]))
    return trajectory


def _tolerance(lo: FloatArray, hi: FloatArray, values: Sequence[Sequence[float]]) -> FloatArray:
    """Per DOF: LIMIT_TOLERANCE_ULPS ulps of max(|finite limits|, finite range, max |value|)."""
    scale = np.zeros(lo.size)
    with np.errstate(invalid="ignore", over="ignore"):
        for bound in (np.abs(lo), np.abs(hi), hi - lo):
            scale = np.fmax(scale, np.where(np.isfinite(bound), bound, 0.0))
    if values:
        scale = np.fmax(scale, np.max(np.abs(np.asarray(values, dtype=np.float64)), axis=0))
    out: FloatArray = LIMIT_TOLERANCE_ULPS * _EPS * scale
    return out


def _clamp_points(trajectory: PointTrajectory, lo: FloatArray, hi: FloatArray,
                  tol: FloatArray) -> PointTrajectory:
    """``trajectory`` with point positions within ``tol`` outside a limit set onto it."""
    changed = False
    points = []
    for point in trajectory.points:
        pos = np.asarray(point.positions, dtype=np.float64)
        below = (pos < lo) & (pos >= lo - tol)
        above = (pos > hi) & (pos <= hi + tol)
        if below.any() or above.any():
            changed = True
            pos = np.where(below, lo, np.where(above, hi, pos))
            point = dataclasses.replace(point, positions=tuple(pos.tolist()))  # noqa: PLW2901
        points.append(point)
    if not changed:
        return trajectory
    return PointTrajectory(trajectory.joint_names, points, trajectory.start_positions,
                           source=trajectory.source)


def _num(value: float) -> str:
    """The shortest text that reads back as ``value`` (``1`` for 1.0)."""
    text = repr(float(value))
    return text.removesuffix(".0")


def _excess(value: float, lo: float, hi: float) -> str:
    if value > hi:
        return f" (by {value - hi:.3g})"
    if value < lo:
        return f" (by {lo - value:.3g})"
    return ""  # NaN
