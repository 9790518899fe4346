"""A simple, clock-driven motor model shared by every protocol emulator.

Not a physics simulation: enough dynamics that a driver talking to an emulator sees a
shaft that moves towards its goal in finite time, with a finite speed, and reports a
plausible effort. All values are SI at the output shaft (rad, rad/s, N·m).

Per mode (:class:`~skel_ros.hardware.base.ControlMode`):

* ``POSITION``: first-order tracking of the position target with time constant
  ``time_constant``, the speed limited to ``max_velocity`` (solved in closed form, so a
  long :meth:`MotorModel.advance` step is exact).
* ``VELOCITY``: first-order tracking of the velocity target (clamped to ``max_velocity``).
* ``EFFORT``: a rotor with ``inertia`` and viscous ``damping`` driven by the effort target
  (clamped to ``max_effort``), ``J dv/dt = u - b v``, also in closed form.
* ``IMPEDANCE``: ``u = kp (p* - p) + kd (v* - v) + t_ff`` on the same rotor, integrated with
  small semi-implicit Euler steps.

With torque off the rotor coasts to rest through its damping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from skel_ros.hardware.base import ControlMode

# Impedance-mode integration step, and the most steps one advance() takes (a longer gap takes
# proportionally longer steps).
_IMPEDANCE_STEP = 2.5e-4
_IMPEDANCE_MAX_STEPS = 4000


@dataclass(frozen=True)
class MotorState:
    """The shaft's true state, as an emulator's tests read it.

    Attributes:
        position: rad.
        velocity: rad/s.
        effort: N·m, the torque the motor produces.
        torque_enabled: whether the motor produces torque.
    """

    position: float
    velocity: float
    effort: float
    torque_enabled: bool


@dataclass(frozen=True)
class MotorParams:
    """Dynamics of one emulated motor.

    Attributes:
        time_constant: s, of the position / velocity tracking.
        max_velocity: rad/s, the no-load speed.
        max_effort: N·m, the stall torque.
        inertia: kg·m², rotor + load seen at the shaft.
        damping: N·m·s/rad, viscous friction.
    """

    time_constant: float = 0.03
    max_velocity: float = 6.0
    max_effort: float = 4.0
    inertia: float = 2e-3
    damping: float = 0.05

    def __post_init__(self) -> None:
        for name in ("time_constant", "max_velocity", "max_effort", "inertia", "damping"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0.0):
                raise ValueError(f"MotorParams.{name} must be finite and > 0, got {value!r}")


class Motion(Protocol):
    """What an emulated device asks of what moves its shaft.

    :class:`MotorModel` (a motor of its own, first order) is one; a joint of a physics
    world driven by the device's control law (:mod:`skel_ros.physical`) is another, so
    the same device speaks the same bytes over either.
    """

    params: MotorParams
    """The limits the device's settings allow (speed, torque: ``max_velocity``,
    ``max_effort``), which the device writes when its limit fields change."""

    mode: ControlMode

    @property
    def state(self) -> MotorState:
        """The state at the last step (no advance)."""
        ...

    def step(self, t: float) -> tuple[float, float, float, bool]:
        """Advance to clock time ``t``; ``(position, velocity, effort, torque_enabled)``."""
        ...

    def set_torque(self, enabled: bool, t: float | None = None) -> None:  # noqa: FBT001
        """Torque on or off (advancing to ``t`` first when given)."""
        ...

    def set_position(self, position: float) -> None:
        """Put the shaft at ``position`` at rest."""
        ...

    def set_position_target(self, position: float) -> None:
        """Position goal (rad)."""
        ...

    def set_velocity_target(self, velocity: float) -> None:
        """Velocity goal (rad/s)."""
        ...

    def set_effort_target(self, effort: float) -> None:
        """Effort goal (N m)."""
        ...

    def on_table(self, table: bytearray, touched: frozenset[int]) -> None:
        """The device wrote the fields at ``touched`` of its control ``table``."""
        ...


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))


class MotorModel:
    """One emulated motor, advanced by an injected clock.

    Args:
        params: the dynamics.
        position: the initial shaft position (rad).
        t0: the clock's time at creation (s).
    """

    def __init__(self, params: MotorParams | None = None, position: float = 0.0,
                 t0: float = 0.0) -> None:
        self.params = params or MotorParams()
        self._t = t0
        self._p = float(position)
        self._v = 0.0
        self._effort = 0.0
        self._mode = ControlMode.POSITION
        self._torque = False
        self._target_p = float(position)
        self._target_v = 0.0
        self._target_e = 0.0
        self._impedance_goal = (float(position), 0.0, 0.0, 0.0, 0.0)

    # ---------------------------------------------------------------- settings

    @property
    def mode(self) -> ControlMode:
        """The control mode; changing it keeps the shaft where it is."""
        return self._mode

    @mode.setter
    def mode(self, mode: ControlMode) -> None:
        self._mode = mode

    @property
    def torque_enabled(self) -> bool:
        """Whether the motor produces torque."""
        return self._torque

    def set_torque(self, enabled: bool, t: float | None = None) -> None:  # noqa: FBT001
        """Switch torque on or off (advancing to ``t`` first when given)."""
        if t is not None:
            self.advance(t)
        self._torque = bool(enabled)

    def set_position(self, position: float) -> None:
        """Put the shaft at ``position`` at rest (a test or emulator start-up)."""
        self._p = float(position)
        self._v = 0.0
        self._target_p = float(position)

    def set_position_target(self, position: float) -> None:
        """POSITION mode goal (rad)."""
        if math.isfinite(position):
            self._target_p = float(position)

    def set_velocity_target(self, velocity: float) -> None:
        """VELOCITY mode goal (rad/s); clamped to the speed limit."""
        if math.isfinite(velocity):
            self._target_v = _clamp(float(velocity), self.params.max_velocity)

    def set_effort_target(self, effort: float) -> None:
        """EFFORT mode goal (N·m); clamped to the stall torque."""
        if math.isfinite(effort):
            self._target_e = _clamp(float(effort), self.params.max_effort)

    def set_impedance(self, position: float, velocity: float, kp: float, kd: float,
                effort: float) -> None:
        """IMPEDANCE mode goal: ``u = kp (position - p) + kd (velocity - v) + effort``."""
        values = (position, velocity, kp, kd, effort)
        if all(math.isfinite(x) for x in values):
            self._impedance_goal = (float(position), float(velocity), max(0.0, float(kp)),
                         max(0.0, float(kd)), float(effort))

    # ---------------------------------------------------------------- time

    @property
    def time(self) -> float:
        """The clock time the state belongs to."""
        return self._t

    @property
    def state(self) -> MotorState:
        """The state at :attr:`time` (no advance)."""
        return MotorState(self._p, self._v, self._effort, self._torque)

    def advance(self, t: float) -> MotorState:
        """Advance to clock time ``t`` (an earlier ``t`` is ignored) and return the state."""
        return MotorState(*self.step(t))

    def step(self, t: float) -> tuple[float, float, float, bool]:
        """Advance like :meth:`advance`; return ``(position, velocity, effort, torque_enabled)``.

        Builds no :class:`MotorState` (the emulators' per-packet path).
        """
        dt = t - self._t
        if dt > 0.0:  # False for NaN too
            self._t = t
            v0 = self._v
            if not self._torque:
                self._rotor(0.0, dt)
                self._effort = 0.0
            elif self._mode is ControlMode.POSITION:
                self._track_position(dt)
                self._effort = self._reaction(v0, dt)
            elif self._mode is ControlMode.VELOCITY:
                self._track_velocity(dt)
                self._effort = self._reaction(v0, dt)
            elif self._mode is ControlMode.EFFORT:
                self._rotor(self._target_e, dt)
                self._effort = self._target_e
            else:
                self._impedance(dt)
        return self._p, self._v, self._effort, self._torque

    def on_table(self, table: bytearray, touched: frozenset[int]) -> None:
        """A device wrote ``touched`` (addresses) of its ``table``: nothing to take here.

        A motion source that follows the device's own settings (gains, profiles) reads
        them here (:class:`Motion`); this simple model has none.
        """

    def _reaction(self, v0: float, dt: float) -> float:
        """The effort a tracking controller needed: J a + b v, within the stall torque."""
        p = self.params
        return _clamp(p.inertia * (self._v - v0) / dt + p.damping * self._v, p.max_effort)

    def _track_position(self, dt: float) -> None:
        tau, vmax = self.params.time_constant, self.params.max_velocity
        error = self._target_p - self._p
        sign = 1.0 if error >= 0.0 else -1.0
        saturated = abs(error) - vmax * tau  # distance covered at full speed
        if saturated > 0.0:
            t_full = saturated / vmax
            if dt <= t_full:
                self._p += sign * vmax * dt
                self._v = sign * vmax
                return
            dt -= t_full
            error = sign * vmax * tau
        decay = math.exp(-dt / tau)
        self._p = self._target_p - error * decay
        self._v = error * decay / tau

    def _track_velocity(self, dt: float) -> None:
        tau = self.params.time_constant
        target = self._target_v
        decay = math.exp(-dt / tau)
        self._p += target * dt + (self._v - target) * tau * (1.0 - decay)
        self._v = target + (self._v - target) * decay

    def _rotor(self, effort: float, dt: float) -> None:
        p = self.params
        rate = p.damping / p.inertia
        terminal = effort / p.damping
        decay = math.exp(-rate * dt)
        self._p += terminal * dt + (self._v - terminal) * (1.0 - decay) / rate
        self._v = _clamp(terminal + (self._v - terminal) * decay, p.max_velocity)

    def _impedance(self, dt: float) -> None:
        p = self.params
        pos, vel, kp, kd, ff = self._impedance_goal
        steps = min(_IMPEDANCE_MAX_STEPS, max(1, math.ceil(dt / _IMPEDANCE_STEP)))
        h = dt / steps  # longer than _IMPEDANCE_STEP only for gaps of more than the most steps
        u = 0.0
        for _ in range(steps):
            u = _clamp(kp * (pos - self._p) + kd * (vel - self._v) + ff, p.max_effort)
            # Semi-implicit in the damping terms (kd and b), so stiff gains stay stable.
            self._v = (self._v + h * (u + kd * self._v) / p.inertia) / (
                1.0 + h * (p.damping + kd) / p.inertia)
            self._v = _clamp(self._v, p.max_velocity)
            self._p += h * self._v
        self._effort = u
