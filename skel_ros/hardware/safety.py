"""The safety states and the motion limiter every target passes before it is encoded.

:class:`MotionLimiter` works in DOF space on the mapped DOFs (arrays in the backend's
order). Commands were already checked and clamped by the shared
:class:`~skel_ros.model.limits.LimitSet` (model limits, tightened by the YAML) when they
were handed in; each cycle the limiter turns the goals into this cycle's targets:

* position (and impedance) DOFs: :class:`~skel_ros.model.limits.RateLimiter` (velocity and
  acceleration limits, inside the position limits);
* velocity DOFs: clamped into the velocity limits, changed by at most the acceleration
  limit per cycle, and slowed so the DOF can stop at its position limits;
* effort DOFs: clamped into the effort limits; no effort pushing further past a
  position limit.

After every :meth:`MotionLimiter.reset` (an enable, a resume, a bus reopened holding) each
position DOF moves at most ``reenable_velocity`` times its velocity limits until it has
reached a goal commanded since (the **re-enable bound**): a command far from where the
joint stands, from a stream that never stopped across a disable and an enable or from
anything else, is approached at that bounded speed, never at full speed. Reached means
within what the bounded motion covers in one step plus its braking distance; a new reset
bounds it again.

:meth:`MotionLimiter.guard` is the last gate before encoding: a target that is not
finite or outside its limits (which the steps above cannot produce) is replaced by the
nearest safe value and counted.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.hardware.base import ControlMode
from skel_ros.model.limits import CommandKind, LimitKind, RateLimiter

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from skel_ros.model.limits import LimitSet
    from skel_ros.model.types import Array

__all__ = ["DEFAULT_REENABLE_VELOCITY", "MODE_COMMANDS", "MotionLimiter", "MotionState"]

DEFAULT_REENABLE_VELOCITY = 0.2
"""The re-enable bound's default: a fifth of each joint's velocity limits."""


class MotionState(enum.Enum):
    """The backend's safety state, as the diagnostics and the node report it."""

    OFFLINE = "offline"  # not started, or stopped
    DISABLED = "disabled"  # buses open, torque off; enable() to move
    ENABLED = "enabled"  # torque on, following commands
    HOLDING = "holding"  # torque on, holding still after a fault; enable() to move again
    ESTOP = "estop"  # torque cut by an emergency stop; enable() to move again
    FAULT = "fault"  # a bus failed: safe state applied, reconnecting with backoff


# The command kind each control mode accepts.
MODE_COMMANDS: dict[ControlMode, CommandKind] = {
    ControlMode.POSITION: CommandKind.POSITION,
    ControlMode.IMPEDANCE: CommandKind.POSITION,
    ControlMode.VELOCITY: CommandKind.VELOCITY,
    ControlMode.EFFORT: CommandKind.EFFORT,
}


class MotionLimiter:
    """Goals -> this cycle's targets, within the limits, for the mapped DOFs.

    Args:
        limits: the limit set (all DOFs of the model; only ``names`` are used).
        names: the mapped DOFs, in array order.
        modes: each DOF's control mode.
        reenable_velocity: the re-enable bound, a fraction in (0, 1] of each position
            DOF's velocity limits (1: none); see the module docstring.

    Raises:
        LimitError: limits the rate limiter cannot work with (e.g. velocity limits that
            exclude 0).
        ValueError: ``reenable_velocity`` outside (0, 1].
    """

    def __init__(self, limits: LimitSet, names: Sequence[str],
                 modes: Sequence[ControlMode], *,
                 reenable_velocity: float = DEFAULT_REENABLE_VELOCITY) -> None:
        if not 0.0 < reenable_velocity <= 1.0:
            raise ValueError(f"reenable_velocity must be in (0, 1], got {reenable_velocity!r}")
        self.reenable_velocity = float(reenable_velocity)
        self.names = tuple(names)
        self.modes = tuple(modes)
        idx = np.array([limits.index(n) for n in self.names], dtype=np.intp)

        def pick(kind: LimitKind) -> tuple[Array, Array]:
            return limits.lower(kind)[idx].copy(), limits.upper(kind)[idx].copy()

        self.q_lo, self.q_hi = pick(LimitKind.POSITION)
        self.v_lo, self.v_hi = pick(LimitKind.VELOCITY)
        self.a_lo, self.a_hi = pick(LimitKind.ACCELERATION)
        self.e_lo, self.e_hi = pick(LimitKind.EFFORT)
        kinds = [MODE_COMMANDS[m] for m in self.modes]
        self.position_mask = np.array([k is CommandKind.POSITION for k in kinds], dtype=bool)
        self.velocity_mask = np.array([k is CommandKind.VELOCITY for k in kinds], dtype=bool)
        self.effort_mask = np.array([k is CommandKind.EFFORT for k in kinds], dtype=bool)
        self._pos_idx = np.flatnonzero(self.position_mask)
        self._vel_idx = np.flatnonzero(self.velocity_mask)
        self._rate = RateLimiter(limits, [self.names[i] for i in self._pos_idx])
        n = len(self.names)
        self._velocity = np.zeros(n)  # last velocity target of velocity DOFs
        self._position = np.full(n, np.nan)  # last position target of position DOFs
        self.corrections = 0  # targets the guard had to change (should stay 0)
        # The re-enable bound, per position DOF (in _pos_idx order): bounded, and whether
        # a goal was commanded since the reset; reached within `_reach` of the goal.
        self._bounded = np.zeros(self._pos_idx.size, dtype=bool)
        self._commanded = np.zeros(self._pos_idx.size, dtype=bool)
        i = self._pos_idx
        speed = reenable_velocity * np.minimum(-self.v_lo[i], self.v_hi[i])
        brake = np.minimum(-self.a_lo[i], self.a_hi[i])
        with np.errstate(invalid="ignore", divide="ignore"):
            self._reach_speed = speed
            self._reach_brake = np.where(np.isinf(brake), 0.0, speed * speed / (2.0 * brake))
        self.unbounded = tuple(self.names[k] for k in i[~np.isfinite(speed)])
        """Position DOFs without a finite velocity limit: the re-enable bound cannot slow
        them (give them ``limits: velocity`` in the hardware YAML)."""

    @property
    def position_targets(self) -> Array:
        """The last position targets (NaN for DOFs not position-controlled), a copy."""
        copy: Array = self._position.copy()
        return copy

    def reset(self, measured: npt.ArrayLike) -> None:
        """Restart from the measured positions, standing still (enable, resume).

        Raises:
            ValueError: a measured position of a position DOF is not finite.
        """
        q = np.asarray(measured, dtype=np.float64)
        if self._pos_idx.size:
            self._rate.reset(q[self._pos_idx])
        self._position = np.full(len(self.names), np.nan)
        self._position[self._pos_idx] = q[self._pos_idx]
        self._velocity = np.zeros(len(self.names))
        self._bounded[:] = self.reenable_velocity < 1.0
        self._commanded[:] = False

    def commanded(self, given: npt.NDArray[np.bool_]) -> None:
        """Goals were commanded for the DOFs where ``given`` (all DOFs) is True."""
        self._commanded |= given[self._pos_idx]

    @property
    def bounded(self) -> tuple[str, ...]:
        """The position DOFs the re-enable bound slows now: commanded, not reached yet."""
        slowed = self._bounded & self._commanded
        if not slowed.any():
            return ()
        return tuple(self.names[k] for k in self._pos_idx[slowed])

    def step(self, goal_position: Array, goal_velocity: Array, goal_effort: Array,
             measured: Array, dt: float) -> tuple[Array, Array, Array]:
        """One cycle: ``(position, velocity, effort)`` targets, NaN where a DOF has none.

        Args:
            goal_position: wanted positions (position DOFs), already within limits.
            goal_velocity: wanted velocities (velocity DOFs).
            goal_effort: wanted efforts (effort DOFs).
            measured: measured positions (NaN where unknown).
            dt: seconds since the previous step (> 0).
        """
        n = len(self.names)
        position = np.full(n, np.nan)
        velocity = np.full(n, np.nan)
        effort = np.full(n, np.nan)
        if self._pos_idx.size:
            goal = goal_position[self._pos_idx]
            bounded = self._bounded
            if bounded.any():
                scale = np.where(bounded, self.reenable_velocity, 1.0)
                q = self._rate.step(goal, dt, scale)
                # Reached: within one bounded step and its braking distance of a goal
                # commanded since the reset (the bound would barely matter from there).
                near = np.abs(goal - q) <= self._reach_speed * dt + self._reach_brake
                bounded &= ~(self._commanded & near)
            else:
                q = self._rate.step(goal, dt)
            position[self._pos_idx] = q
            velocity[self._pos_idx] = self._rate.velocity
        if self._vel_idx.size:
            velocity[self._vel_idx] = self._velocity_step(goal_velocity, measured, dt)
        if self.effort_mask.any():
            effort[self.effort_mask] = self._effort_step(goal_effort, measured)
        position, velocity, effort = self.guard(position, velocity, effort)
        self._position = position
        return position, velocity, effort

    def hold(self) -> Array:
        """Goals that stop every DOF where its target is now (positions; NaN elsewhere)."""
        copy: Array = self._position.copy()
        return copy

    def _velocity_step(self, goal: Array, measured: Array, dt: float) -> Array:
        i = self._vel_idx
        v_prev = self._velocity[i]
        g = np.nan_to_num(goal[i], nan=0.0, posinf=0.0, neginf=0.0)
        lo = np.maximum(self.v_lo[i], v_prev + self.a_lo[i] * dt)
        hi = np.minimum(self.v_hi[i], v_prev + self.a_hi[i] * dt)
        v = np.minimum(np.maximum(g, lo), hi)
        q = measured[i]
        with np.errstate(invalid="ignore", over="ignore"):
            # Fastest speed from which braking at the acceleration limit still stops at
            # the position limit (at most the distance left per step when unlimited).
            room_up = np.maximum(self.q_hi[i] - q, 0.0)
            room_down = np.maximum(q - self.q_lo[i], 0.0)
            up = np.where(np.isinf(self.a_lo[i]), room_up / dt,
                          np.sqrt(2.0 * -self.a_lo[i] * room_up))
            down = np.where(np.isinf(self.a_hi[i]), room_down / dt,
                            np.sqrt(2.0 * self.a_hi[i] * room_down))
        known = np.isfinite(q)
        v = np.where(known, np.minimum(v, np.nan_to_num(up, nan=0.0)), 0.0)
        v = np.where(known, np.maximum(v, -np.nan_to_num(down, nan=0.0)), 0.0)
        self._velocity[i] = v
        result: Array = v
        return result

    def _effort_step(self, goal: Array, measured: Array) -> Array:
        m = self.effort_mask
        e = np.nan_to_num(goal[m], nan=0.0, posinf=0.0, neginf=0.0)
        e = np.minimum(np.maximum(e, self.e_lo[m]), self.e_hi[m])
        q = measured[m]
        e = np.where((q >= self.q_hi[m]) & (e > 0.0), 0.0, e)
        e = np.where((q <= self.q_lo[m]) & (e < 0.0), 0.0, e)
        result: Array = np.where(np.isfinite(q), e, 0.0)
        return result

    def guard(self, position: Array, velocity: Array, effort: Array,
              ) -> tuple[Array, Array, Array]:
        """The last gate: every target finite and inside its limits, or replaced.

        A non-finite position target of a position DOF becomes the previous target
        (or NaN = "send nothing" if there is none); values outside the limits are
        clamped. Every change is counted in :attr:`corrections`.
        """
        p = self.position_mask
        bad_p = p & ~np.isfinite(position)
        clipped = np.clip(position, self.q_lo, self.q_hi)
        changed = p & np.isfinite(position) & (clipped != position)
        v_clip = np.clip(velocity, self.v_lo, self.v_hi)
        # Only velocity DOFs count: a position DOF's velocity is the rate limiter's
        # feed-forward, (q_next - q) / dt, which rounding may put an ulp past the limit.
        v_changed = self.velocity_mask & np.isfinite(velocity) & (v_clip != velocity)
        e_clip = np.clip(effort, self.e_lo, self.e_hi)
        e_changed = np.isfinite(effort) & (e_clip != effort)
        bad = int(bad_p.sum() + changed.sum() + v_changed.sum() + e_changed.sum())
        self.corrections += bad
        position = np.where(bad_p, self._position, clipped)
        velocity = np.where(np.isinf(velocity), 0.0, v_clip)
        effort = np.where(np.isinf(effort), 0.0, e_clip)
        return position, velocity, effort
