"""A Dynamixel X-series servo's own control law, as its e-Manual describes it.

One step of :class:`XServoLaw` turns what the servo's encoder reads into the torque its
motor puts on the output shaft, with the settings of its control table:

* **Profile** (velocity-based, Drive Mode bit 2 clear): Goal Position becomes the
  desired position through Profile Velocity (112, 0.229 rev/min) and Profile
  Acceleration (108, 214.577 rev/min^2): both 0, a step; acceleration 0, a rectangle of
  velocity; both set, a trapezoid (a triangle when the move is short). The generator is
  re-planned from the present desired state whenever the goal changes, as the e-Manual's
  profile is. **Time-based** (Drive Mode bit 2 set): Profile Velocity is the time the
  move to a new goal takes (ms) and Profile Acceleration the time of its speeding up and
  of its slowing down (ms, at most half the move's: the e-Manual clips it); each new
  goal is planned from where the desired position is, to arrive after that time (0: a
  step). The jerk smoothing the e-Manual mentions is not followed.
* **Position PID** (Position P / I / D Gain at 84 / 82 / 80, the e-Manual's scaling
  ``KPP = P / 128``, ``KPI = I / 65536``, ``KPD = D / 16``): on the error in pulses
  (4096 per turn) of the encoder's reading, giving PWM (885 = 100 %) within PWM Limit
  (36). The e-Manual gives the gains' scaling, not the controller's period: the integral
  and the difference are taken over :data:`CONTROL_PERIOD` (1 ms) here.
* **Velocity PI** (velocity mode: Velocity P / I Gain at 78 / 76, ``KVP = P / 128``,
  ``KVI = I / 65536``, on the error in 0.229 rev/min units) giving PWM the same way.
* **DC motor**: ``torque = stall_torque * (pwm / 885 - velocity / no_load_speed)``, the
  model's datasheet figures at its rated supply (the output shaft's: the gear ratio is
  in them), within the torque the Current Limit (38) allows. The rotor's inertia, seen
  at the output through the gears (:attr:`XServoLaw.rotor_inertia`), is the motor's
  mechanical time constant (:data:`MECHANICAL_TIME_CONSTANT`) times its stall torque over
  its no-load speed; the world adds it to the joint.

Current modes (current, current-based position) and the feedforward gains are not
followed yet: the current mode applies Goal Current's torque, the current-based position
mode the position PID. No engine, no ROS: the physical world calls :meth:`XServoLaw.torque`
once per step.

The Feetech servo's law (:mod:`skel_ros.physical.feetech`) shares the profile generator
(:func:`profile_step`), the DC motor (:func:`dc_motor_torque`), the rotor's inertia
(:func:`rotor_inertia`) and the PID's period; CiA 402 drives the profile generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

from skel_ros.hardware.dynamixel import control_table as ct

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["CONTROL_PERIOD", "DEFAULT_GAINS", "MECHANICAL_TIME_CONSTANT", "PWM_FULL",
           "ServoGains", "ServoLaw", "XServoLaw", "dc_motor_torque", "default_gains",
           "profile_step", "rotor_inertia"]

MECHANICAL_TIME_CONSTANT: Final = 0.01
"""s: the motor's mechanical time constant ``J R / k^2`` (the e-Manual gives none; 10 ms
is typical of the small DC motors of the series). It sets the rotor's inertia at the
output shaft: ``MECHANICAL_TIME_CONSTANT * stall_torque / no_load_speed``."""
CONTROL_PERIOD: Final = 1e-3
"""s: the period the PID's integral and difference are counted in."""
PWM_FULL: Final = 885
"""PWM units of 100 % duty (PWM Limit's factory value and largest)."""
PROFILE_ACCELERATION_UNIT: Final = 214.577 * 2.0 * math.pi / 3600.0
"""rad/s^2 per Profile Acceleration unit (214.577 rev/min^2)."""


@dataclass(frozen=True)
class ServoGains:
    """Power-on gains of a model (the e-Manual's control table defaults)."""

    position_p: int = 800
    position_i: int = 0
    position_d: int = 0
    velocity_p: int = 100
    velocity_i: int = 1920

    def fields(self) -> tuple[tuple[ct.Field, int], ...]:
        """``(field, value)`` of each gain, for the servo's power-on RAM."""
        return ((ct.POSITION_P_GAIN, self.position_p), (ct.POSITION_I_GAIN, self.position_i),
                (ct.POSITION_D_GAIN, self.position_d), (ct.VELOCITY_P_GAIN, self.velocity_p),
                (ct.VELOCITY_I_GAIN, self.velocity_i))


#: Model-name prefix -> its power-on gains (the e-Manual's control tables); others: XM430's.
DEFAULT_GAINS: Mapping[str, ServoGains] = MappingProxyType({
    "XL430": ServoGains(640, 0, 4000, 100, 1000),
    "2XL430": ServoGains(640, 0, 4000, 100, 1000),
    "XL330": ServoGains(400, 0, 0, 180, 1600),
    "XC430": ServoGains(640, 0, 4000, 100, 1000),
})


def default_gains(model: str) -> ServoGains:
    """The power-on gains of ``model`` (e.g. ``"XL430-W250"``)."""
    return DEFAULT_GAINS.get(model.split("-", maxsplit=1)[0], ServoGains())


class ServoLaw:
    """What a servo's position law keeps between the world's steps, and its motor.

    Torque on or off, the goal, the profile's desired position and velocity, the PID's
    memory; the DC motor of the model's datasheet figures (:func:`dc_motor_torque`) and its
    rotor (:func:`rotor_inertia`). The X-series' law (:class:`XServoLaw`) and the Feetech
    servo's (:class:`skel_ros.physical.feetech.FeetechLaw`) extend it.

    Args:
        stall_torque: N m at the output shaft, at the model's rated supply.
        no_load_speed: rad/s at the output shaft, at that supply.
    """

    damping = 0.0  # the whole torque is explicit (DeviceLaw)
    encoder_at_output = True  # a magnetic encoder on the output shaft: the play is inside

    def __init__(self, stall_torque: float, no_load_speed: float) -> None:
        self.stall_torque = stall_torque
        self.no_load_speed = no_load_speed
        self.torque_on = False
        self.max_torque = stall_torque  # what the device's settings allow of it
        self.goal_position = 0.0
        self.goal_velocity = 0.0
        self.desired = 0.0  # the profile's position and velocity
        self.desired_velocity = 0.0
        self._integral = 0.0
        self._last_error: float | None = None

    @property
    def rotor_inertia(self) -> float:
        """Kg m^2: the rotor's inertia at the output shaft (:func:`rotor_inertia`)."""
        return rotor_inertia(self.stall_torque, self.no_load_speed)

    def enable(self, on: bool, position: float) -> None:  # noqa: FBT001 - a switch
        """Torque on (the profile starts from ``position``, at rest) or off."""
        if on and not self.torque_on:
            self.desired, self.desired_velocity = position, 0.0
            self._integral, self._last_error = 0.0, None
        self.torque_on = on

    def hold(self, position: float) -> None:
        """Goal and profile at ``position``, at rest (a shaft put there by hand)."""
        self.goal_position = self.desired = position
        self.desired_velocity = 0.0
        self._integral, self._last_error = 0.0, None

    def _drive(self, duty: float, velocity: float) -> float:
        """The motor's torque at ``duty`` (-1..1) and shaft ``velocity``, within the limit."""
        drive = dc_motor_torque(duty, velocity, self.stall_torque, self.no_load_speed)
        return max(-self.max_torque, min(self.max_torque, drive))


class XServoLaw(ServoLaw):
    """The control law of one X-series servo, stepped by the physics world.

    Positions, velocities and torques are at the servo's output shaft (rad, rad/s, N m).

    Args:
        model: the servo's model (its stall torque and no-load speed).
    """

    def __init__(self, model: ct.ModelInfo) -> None:
        super().__init__(model.stall_torque, model.no_load_speed)
        self.model = model
        self.mode = ct.MODE_POSITION
        self.pwm_limit = float(PWM_FULL)
        self.kpp = self.kpi = self.kpd = 0.0
        self.kvp = self.kvi = 0.0
        self.profile_velocity = 0.0  # rad/s, 0: none
        self.profile_acceleration = 0.0  # rad/s^2, 0: none
        self.profile_time: float | None = None  # s, time-based profile (None: velocity-based)
        self.profile_ramp = 0.0  # s, its speeding-up (and slowing-down) time
        self._planned_goal: float | None = None  # the goal the time-based plan is for
        self.goal_torque = 0.0
        self.pwm = 0.0  # the last step's output

    def configure(self, table: bytearray) -> None:
        """Read the gains, limits and profile from the servo's control ``table``."""

        def u(fld: ct.Field) -> int:
            return int.from_bytes(table[fld.address:fld.address + fld.size], "little",
                                  signed=fld.signed)

        self.kpp = u(ct.POSITION_P_GAIN) / 128.0
        self.kpi = u(ct.POSITION_I_GAIN) / 65536.0
        self.kpd = u(ct.POSITION_D_GAIN) / 16.0
        self.kvp = u(ct.VELOCITY_P_GAIN) / 128.0
        self.kvi = u(ct.VELOCITY_I_GAIN) / 65536.0
        self.pwm_limit = float(min(u(ct.PWM_LIMIT), PWM_FULL))
        if table[ct.DRIVE_MODE.address] & ct.DRIVE_MODE_TIME_BASED:
            span = u(ct.PROFILE_VELOCITY) * 1e-3
            ramp = min(u(ct.PROFILE_ACCELERATION) * 1e-3, span / 2.0)
            if (span, ramp) != (self.profile_time, self.profile_ramp):
                # New times: the move under way is planned again. Any other write to the
                # table (a goal, the watchdog) leaves it as it is.
                self.profile_time, self.profile_ramp = span, ramp
                self._planned_goal = None
        else:
            self.profile_time = None
            self.profile_velocity = u(ct.PROFILE_VELOCITY) * ct.RAD_S_PER_VELOCITY_UNIT
            self.profile_acceleration = u(ct.PROFILE_ACCELERATION) * PROFILE_ACCELERATION_UNIT
        self.mode = table[ct.OPERATING_MODE.address]

    def torque(self, position: float, velocity: float, dt: float) -> float:
        """The motor's torque for one step of ``dt`` from the encoder's ``position``.

        ``velocity``: the shaft's, for the motor's back EMF (and velocity mode).
        """
        if not self.torque_on:
            self.pwm = 0.0
            return 0.0
        if self.mode in (ct.MODE_CURRENT, ct.MODE_PWM):
            self.pwm = 0.0
            return max(-self.max_torque, min(self.max_torque, self.goal_torque))
        if self.mode == ct.MODE_VELOCITY:
            pwm = self._velocity_pid(velocity, dt)
        else:
            self._advance_profile(dt)
            pwm = self._position_pid(position, dt)
        self.pwm = pwm = max(-self.pwm_limit, min(self.pwm_limit, pwm))
        return self._drive(pwm / PWM_FULL, velocity)

    def free_speed(self) -> float:
        """The speed the motor turns at unloaded with the last step's PWM (rad/s)."""
        return self.pwm / PWM_FULL * self.model.no_load_speed

    def pulse_error(self, position: float) -> float:
        """The position error the PID sees: whole pulses, as the encoder counts them."""
        return round(self.desired / ct.RAD_PER_TICK) - round(position / ct.RAD_PER_TICK)

    def _position_pid(self, position: float, dt: float) -> float:
        error = self.pulse_error(position)
        periods = dt / CONTROL_PERIOD
        self._integral += error * periods
        last = error if self._last_error is None else self._last_error
        self._last_error = error
        return (self.kpp * error + self.kpi * self._integral
                + self.kpd * (error - last) / periods)

    def _velocity_pid(self, velocity: float, dt: float) -> float:
        error = (self.goal_velocity - velocity) / ct.RAD_S_PER_VELOCITY_UNIT
        self._integral += error * dt / CONTROL_PERIOD
        return self.kvp * error + self.kvi * self._integral

    def _advance_profile(self, dt: float) -> None:
        """Move the desired position towards the goal within the profile's limits."""
        if self.profile_time is not None and self.goal_position != self._planned_goal:
            self._plan_time_based()
        self.desired, self.desired_velocity = profile_step(
            self.desired, self.desired_velocity, self.goal_position,
            max_velocity=self.profile_velocity, acceleration=self.profile_acceleration,
            deceleration=self.profile_acceleration, dt=dt)

    def _plan_time_based(self) -> None:
        """The velocity and acceleration that reach the new goal in the profile's time."""
        self._planned_goal = goal = self.goal_position
        span = self.profile_time or 0.0
        if span <= 0.0:  # time 0: no profile
            self.profile_velocity = self.profile_acceleration = 0.0
            return
        cruise = span - self.profile_ramp  # a trapezoid's distance is v (span - ramp)
        self.profile_velocity = max(abs(goal - self.desired) / cruise, 1e-12)
        self.profile_acceleration = (self.profile_velocity / self.profile_ramp
                                     if self.profile_ramp > 0.0 else 0.0)


def dc_motor_torque(duty: float, velocity: float, stall_torque: float,
                    no_load_speed: float) -> float:
    """A DC motor's torque at its output: ``stall_torque * (duty - velocity / no_load_speed)``.

    ``duty``: the drive's share of the supply (-1..1); ``velocity``: the shaft's (rad/s);
    the stall torque and no-load speed are the model's datasheet figures at its supply
    voltage, at the output (the gear ratio is in them). A Dynamixel's and a Feetech
    servo's motor alike.
    """
    return stall_torque * (duty - velocity / no_load_speed)


def rotor_inertia(stall_torque: float, no_load_speed: float) -> float:
    """Kg m^2: a servo's rotor seen at its output, from its datasheet figures.

    :data:`MECHANICAL_TIME_CONSTANT` times the motor's damping ``stall_torque /
    no_load_speed`` (the time constant ``J / b`` of a DC motor).
    """
    return MECHANICAL_TIME_CONSTANT * stall_torque / no_load_speed


def profile_step(position: float, velocity: float, goal: float, *, max_velocity: float,
                 acceleration: float, deceleration: float, dt: float) -> tuple[float, float]:
    """One step of ``dt`` of a trapezoidal profile towards ``goal``: ``(position, velocity)``.

    From the present ``position`` and ``velocity`` of the profile: towards the goal at most
    ``max_velocity`` (0: no profile, the goal at once), speeding up at ``acceleration`` and
    slowing down at ``deceleration`` (0: at once), so it stops at the goal (a triangle when
    the move is short); re-planned at every step, so a new goal takes over from where the
    profile is. The X-series servos' profile (both rates the same) and a CiA 402 drive's
    profile position mode (0x6083 / 0x6084) share it.
    """
    if max_velocity <= 0.0:
        return goal, 0.0
    gap = goal - position
    sign = 1.0 if gap >= 0.0 else -1.0
    # The fastest speed from which the profile still stops at the goal.
    reach = math.sqrt(2.0 * deceleration * abs(gap)) if deceleration > 0.0 else math.inf
    wanted = sign * min(max_velocity, reach)
    change = wanted - velocity
    speeding_up = wanted * velocity >= 0.0 and abs(wanted) > abs(velocity)
    rate = acceleration if speeding_up else deceleration
    if rate > 0.0:
        change = max(-rate * dt, min(rate * dt, change))
    velocity += change
    step = velocity * dt
    if abs(step) >= abs(gap) and step * gap >= 0.0:
        return goal, 0.0
    return position + step, velocity
