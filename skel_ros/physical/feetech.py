"""Emulated Feetech STS/SMS and SCS servos that move one physics model of the robot.

The same emulator as :mod:`skel_ros.emulation.feetech` (the same thread on a pty, the
same memory table, instructions, status byte, protections, Lock and power cycles: the
same bytes on the wire), with one difference: each servo's shaft is a joint of a
:class:`~skel_ros.physical.world.PhysicalWorld` of the whole robot (the emulator's own,
or one the emulators of the robot's other buses move too: :mod:`skel_ros.physical.host`),
driven by the servo's own control law (:class:`FeetechLaw`) instead of
a first-order motor of its own.

The law, from Feetech's STS/SMS and SCS memory tables where they say it:

* **Profile**: Goal_Position becomes the desired position through Goal_Speed (46,
  steps/s) and Acceleration (41, 100 steps/s^2): both 0, a step; Acceleration 0, a
  rectangle of velocity; both set, a trapezoid (the Dynamixel's profile generator,
  :func:`~skel_ros.physical.servo_law.profile_step`, with both rates the same).
* **Position loop**: P / D / I_Coefficient (21 / 22 / 23; the servos ship with P 32, D 32,
  I 0) on the error in encoder steps (4096 a turn on STS/SMS, 1024 over 300 degrees on
  SCS0009) gives the motor's duty cycle. Feetech gives the coefficients, not their
  scaling: the duty per step and per unit of P is :data:`DUTY_PER_STEP` (Rhoban's BAM
  measured it on STS3215 servos with an oscilloscope: 0.166 per radian of error per unit
  of P); the integral and the difference are taken per :data:`~skel_ros.physical.
  servo_law.CONTROL_PERIOD` (1 ms, as for the Dynamixel: a choice, Feetech gives no
  period) with the same scaling, so D at its factory 32 adds about 0.01 N m s/rad to the
  motor's own back-EMF damping (0.41 on an STS3215-C001): next to nothing, as BAM's
  P-only model of the servo found. Within the dead zone (CW_Dead_Zone 26 below the goal,
  CCW_Dead_Zone 27 above it, 1 step each as shipped) the servo drives nothing; out of
  it, at least Minimum_Startup_Force (24, 0.1 % of the stall torque; 16 as shipped).
* **Torque limit**: the duty within Torque_Limit (48, 0.1 %; at power-on the EEPROM's
  Max_Torque_Limit 16) on STS/SMS, within Max_Torque_Limit on SCS.
* **DC motor**: ``torque = stall_torque * (duty - velocity / no_load_speed)`` with the
  model's datasheet figures at its rated supply (:mod:`skel_ros.hardware.feetech.
  control_table`: the 7.4 V and 12 V STS3215 variants apart); the rotor's inertia at the
  output is the Dynamixel's mechanical time constant times stall torque over no-load
  speed (:func:`~skel_ros.physical.servo_law.rotor_inertia`: 4.1e-3 kg m^2 for an
  STS3215-C001), added to the joint.
* **Constant-speed mode** (Operating_Mode 1, STS/SMS): Feetech names the speed loop's
  coefficients (37, 39) but not its form; here the servo follows a point moving at
  Goal_Speed (reached at Acceleration) with its position loop, that point never further
  ahead than the error that saturates the drive. PWM mode is not followed.

What the servo reports: Present_Position and Present_Speed are what its encoder reads
(the truth file's offset and noise) in steps and steps/s, sign-magnitude as the
protocol-level emulator encodes them; Present_Load is the drive's duty cycle (0.1 %, as
the memory table defines it: not the torque, though the two agree at rest); STS/SMS
Present_Current (69, 6.5 mA) is the torque over the motor's torque constant
(:data:`TORQUE_CONSTANTS`; a model without one reports 0).

The fields the law reads and the protocol-level emulator does not keep (21..27) are
writable here, EEPROM, with their factory values (:data:`FACTORY_SETTINGS`). A servo's
shaft cannot be put somewhere by hand (:meth:`~skel_ros.emulation.feetech.
FeetechEmulator.set_position`): its world moves it.

Started by :func:`start_emulator` with the Feetech emulator's options and ``physics``
(:data:`~skel_ros.physical.option.PHYSICS_KEYS`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from skel_ros.emulation import feetech as emu
from skel_ros.emulation import serial_pty
from skel_ros.emulation.motor import MotorParams
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech import protocol as proto
from skel_ros.hardware.feetech.bus import return_delay_units
from skel_ros.physical.option import ServoMotor, build_world, split_physics
from skel_ros.physical.servo_law import CONTROL_PERIOD, ServoLaw, profile_step

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.hardware.base import ActuatorSpec

__all__ = ["DUTY_PER_STEP", "FACTORY_SETTINGS", "TORQUE_CONSTANTS", "FeetechLaw",
           "FeetechServoMotor", "LawSettings", "PhysicalServo", "physical_servos",
           "start_emulator"]

_LAW_FIELDS: Final = (ct.P_COEFFICIENT, ct.D_COEFFICIENT, ct.I_COEFFICIENT,
                      ct.MINIMUM_STARTUP_FORCE, ct.CW_DEAD_ZONE, ct.CCW_DEAD_ZONE)
_LAW_BYTES: Final = frozenset(a for f in _LAW_FIELDS for a in range(f.address,
                                                                     f.address + f.size))

DUTY_PER_STEP: Final = 0.166 * 2.0 * math.pi / 4096
"""Duty cycle (1 = 100 %) per encoder step of error per unit of P_Coefficient: Rhoban's
BAM (``bam/feetech/actuator.py``, STS3215, oscilloscope) measured 0.166 per radian, that
is one 3927th per step of 4096 a turn; taken per step on SCS servos too."""
ACCELERATION_UNIT: Final = 100  # steps/s^2 per Acceleration unit
TORQUE_LIMIT_FULL: Final = 1000  # Torque_Limit / Max_Torque_Limit of 100 %
CURRENT_UNIT: Final = 6.5e-3  # A per Present_Current unit

TORQUE_CONSTANTS: Final[Mapping[str, float]] = MappingProxyType({
    "STS3215": 8.0 * 0.0980665,
})
"""Model-name prefix -> N m per A at the output: the STS3215's 8 kg cm/A (Feetech's figure
as BAM quotes it; the 12 V variants share motor and gears: their 30 kg cm stall torque is
about the 7.4 V variants' 19.5 times 12 / 7.4)."""


@dataclass(frozen=True)
class LawSettings:
    """The position loop's factory settings of a series (its EEPROM as shipped)."""

    p: int = 32
    d: int = 32
    i: int = 0
    minimum_startup_force: int = 16
    cw_dead_zone: int = 1
    ccw_dead_zone: int = 1

    def fields(self) -> tuple[tuple[ct.Field, int], ...]:
        """``(field, value)`` of each setting."""
        return ((ct.P_COEFFICIENT, self.p), (ct.D_COEFFICIENT, self.d),
                (ct.I_COEFFICIENT, self.i),
                (ct.MINIMUM_STARTUP_FORCE, self.minimum_startup_force),
                (ct.CW_DEAD_ZONE, self.cw_dead_zone), (ct.CCW_DEAD_ZONE, self.ccw_dead_zone))


#: Series -> its factory settings: STS/SMS from Feetech's STS memory table; SCS as five
#: SCS0009 servos read out (P 15, D 15, I 0, startup 24, dead zones 1).
FACTORY_SETTINGS: Final[Mapping[str, LawSettings]] = MappingProxyType({
    "sts": LawSettings(),
    "scs": LawSettings(15, 15, 0, 24, 1, 1),
})


class FeetechLaw(ServoLaw):
    """The control law of one Feetech servo, stepped by the physics world (module docstring).

    Positions, velocities and torques are at the servo's output shaft (rad, rad/s, N m).

    Args:
        model: the servo's model (its steps, stall torque and no-load speed).
    """

    def __init__(self, model: ct.ModelInfo) -> None:
        super().__init__(model.stall_torque, model.no_load_speed)
        self.model = model
        self.velocity_mode = False
        self.duty_limit = 1.0  # Torque_Limit's share of the supply
        self.kp = self.ki = self.kd = 0.0  # duty per step (per step-period, per step/period)
        self.startup = 0.0  # the least duty out of the dead zone
        self.dead_zone = (0, 0)  # steps below / above the goal
        self.profile_velocity = 0.0  # rad/s, 0: none
        self.profile_acceleration = 0.0  # rad/s^2, 0: none
        self.duty = 0.0  # the last step's output, -1..1

    @property
    def torque_constant(self) -> float | None:
        """N m per A at the output (:data:`TORQUE_CONSTANTS`); None: not known."""
        return TORQUE_CONSTANTS.get(self.model.name.split("-", maxsplit=1)[0])

    def configure(self, value: Callable[[ct.Field], int]) -> None:
        """Read the loop, its limits and the profile: ``value(field)``, sign-magnitude decoded."""
        step = self.model.rad_per_tick
        self.kp = value(ct.P_COEFFICIENT) * DUTY_PER_STEP
        self.kd = value(ct.D_COEFFICIENT) * DUTY_PER_STEP
        self.ki = value(ct.I_COEFFICIENT) * DUTY_PER_STEP
        self.startup = min(value(ct.MINIMUM_STARTUP_FORCE), TORQUE_LIMIT_FULL) / TORQUE_LIMIT_FULL
        self.dead_zone = (value(ct.CW_DEAD_ZONE), value(ct.CCW_DEAD_ZONE))
        sts = self.model.series == "sts"
        limit = value(ct.TORQUE_LIMIT if sts else ct.MAX_TORQUE_LIMIT)
        self.duty_limit = min(limit, TORQUE_LIMIT_FULL) / TORQUE_LIMIT_FULL
        self.profile_acceleration = value(ct.ACCELERATION) * ACCELERATION_UNIT * step
        self.velocity_mode = sts and value(ct.OPERATING_MODE) == ct.MODE_VELOCITY
        self.profile_velocity = 0.0 if self.velocity_mode else abs(value(ct.GOAL_VELOCITY)) * step

    def torque(self, position: float, velocity: float, dt: float) -> float:
        """The motor's torque for one step of ``dt`` from the encoder's ``position``.

        ``velocity``: the shaft's, for the motor's back EMF.
        """
        if not self.torque_on:
            self.duty = 0.0
            return 0.0
        if self.velocity_mode:
            self._advance_speed(position, dt)
        else:
            self.desired, self.desired_velocity = profile_step(
                self.desired, self.desired_velocity, self.goal_position,
                max_velocity=self.profile_velocity, acceleration=self.profile_acceleration,
                deceleration=self.profile_acceleration, dt=dt)
        duty = self._position_loop(position, dt)
        self.duty = duty = max(-self.duty_limit, min(self.duty_limit, duty))
        return self._drive(duty, velocity)

    def free_speed(self) -> float:
        """The speed the motor turns at unloaded with the last step's duty (rad/s)."""
        return self.duty * self.model.no_load_speed

    def _position_loop(self, position: float, dt: float) -> float:
        # The encoder counts whole steps: the error the servo sees is an integer.
        step = self.model.rad_per_tick
        error = round(self.desired / step) - round(position / step)
        below, above = self.dead_zone
        if -below <= error <= above:
            self._last_error = error
            return 0.0
        periods = dt / CONTROL_PERIOD
        self._integral += error * periods
        last = error if self._last_error is None else self._last_error
        self._last_error = error
        duty = self.kp * error + self.ki * self._integral + self.kd * (error - last) / periods
        if duty and abs(duty) < self.startup:
            duty = math.copysign(self.startup, duty)
        return duty

    def _advance_speed(self, position: float, dt: float) -> None:
        """Constant-speed mode: the followed point at Goal_Speed (module docstring)."""
        change = self.goal_velocity - self.desired_velocity
        rate = self.profile_acceleration
        if rate > 0.0:
            change = max(-rate * dt, min(rate * dt, change))
        self.desired_velocity += change
        lead = self.duty_limit / self.kp * self.model.rad_per_tick if self.kp else 0.0
        self.desired = max(position - lead, min(position + lead,
                                                self.desired + self.desired_velocity * dt))


class FeetechServoMotor(ServoMotor):
    """A Feetech servo's shaft as a joint of the physics world.

    An emulated servo's ``motor``: its law is :class:`FeetechLaw`.
    """

    law: FeetechLaw

    def set_effort_target(self, effort: float) -> None:
        """Not a Feetech servo's: it has no torque mode."""
        raise ValueError(f"a Feetech servo takes no torque goal ({effort} N m)")

    def on_table(self, table: bytearray, touched: frozenset[int]) -> None:
        """Unused: :class:`PhysicalServo` configures the law from its table."""


class PhysicalServo(emu.EmulatedServo):
    """An emulated Feetech servo whose motor is a joint of the physics world.

    The protocol-level servo (:class:`~skel_ros.emulation.feetech.EmulatedServo`) with
    the position loop's fields kept too, its law configured from its table after every
    write and power-on, and Present_Load / Present_Current as the drive reports them
    (module docstring). Made by :meth:`build`.
    """

    physical: FeetechServoMotor

    @classmethod
    def build(cls, servo_id: int, model: ct.ModelInfo, motor: FeetechServoMotor, now: float,
              *, return_delay: int = ct.FACTORY_RETURN_DELAY) -> PhysicalServo:
        """A servo with its factory settings (the law's too) moving ``motor``'s joint."""
        base = emu.EmulatedServo.create(servo_id, model, motor.law.goal_position, now,
                                        return_delay=return_delay)
        # The protocol-level servo takes any Motion, though its field says MotorModel.
        servo = cls(base.id, base.model, motor, base.table, base.saved)  # type: ignore[arg-type]
        servo.physical = motor
        for fld, raw in FACTORY_SETTINGS[model.series].fields():
            servo.put(fld, raw)
        servo.saved[:] = servo.table[:ct.TORQUE_ENABLE.address]  # the EEPROM as shipped
        servo.power_on(now)
        return servo

    def _value(self, fld: ct.Field) -> int:
        raw = self.get(fld)
        return raw if fld.sign_bit is None else ct.decode_sm(raw, fld.sign_bit)

    def power_on(self, now: float) -> None:
        """The protocol-level servo's power-on, then the law as the table now says."""
        super().power_on(now)
        self.physical.law.configure(self._value)

    def write(self, address: int, data: bytes, now: float) -> None:
        """A WRITE: the position loop's bytes kept too; the law configured from the table."""
        end = min(address + len(data), len(self.table))
        for k, a in enumerate(range(address, end)):
            if a in _LAW_BYTES:  # the base keeps them and saves the EEPROM when unlocked
                self.table[a] = data[k]
        super().write(address, data, now)
        self.physical.law.configure(self._value)

    def sync(self, now: float) -> None:
        """The protocol-level refresh; Present_Load the duty, Present_Current the current."""
        super().sync(now)
        law = self.physical.law
        load = round(law.duty * TORQUE_LIMIT_FULL)
        self.put(ct.PRESENT_LOAD, ct.encode_sm(max(-1000, min(1000, load)), 10))
        if self.model.has(ct.PRESENT_CURRENT):
            kt = law.torque_constant
            torque = self.physical.state.effort
            current = 0 if kt is None else round(torque / kt / CURRENT_UNIT)
            self.put(ct.PRESENT_CURRENT, ct.encode_sm(current, 15))


_OPTIONS: Final = frozenset({"initial_positions", "return_delay_us", "wire_time", "model"})


def physical_servos(actuators: Sequence[ActuatorSpec], options: Mapping[str, Any],
                    now: float) -> dict[int, PhysicalServo]:
    """The servos of :func:`start_emulator`, their world started at clock time ``now``.

    For a bus of the caller's, on a clock of its own (the tests' benches).

    Raises:
        ConfigError: as :func:`start_emulator`.
    """
    physics, rest = split_physics(options)
    starts = serial_pty.servo_starts("Feetech emulator", actuators, rest, _OPTIONS,
                                     default_model=ct.DEFAULT_MODEL, max_id=proto.MAX_ID,
                                     model_by_name=ct.model_by_name)
    delay = return_delay_units(rest.get("return_delay_us", 2 * ct.FACTORY_RETURN_DELAY),
                               "Feetech emulator")
    world, joints = build_world(physics, {act.id: p for act, _, _, p in starts}, now)
    servos = {}
    for act, _, model, position in starts:
        law = FeetechLaw(model)
        law.hold(position)
        motor = FeetechServoMotor(world.joints[joints[act.id][0]], law,
                                  MotorParams(max_velocity=model.no_load_speed,
                                              max_effort=model.stall_torque))
        servos[act.id] = PhysicalServo.build(act.id, model, motor, now, return_delay=delay)
    return servos


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> emu.FeetechEmulator:
    """Start physics-backed servos for ``actuators`` on a new pty (served by a thread).

    The Feetech emulator's arguments (:func:`skel_ros.emulation.feetech.start_emulator`)
    plus the option ``physics``; the world runs on ``time.monotonic``.

    Raises:
        ConfigError: unknown options, models or ids; a ``physics`` without model or
            joints, unknown keys, a servo without a joint, a model or truth file that
            cannot be used.
    """
    servos = physical_servos(actuators, options, time.monotonic())
    world = next(iter(servos.values())).physical.joint.world if servos else None
    return emu.FeetechEmulator(emu.ServoBus(servos, time.monotonic),
                               int(transport.get("baudrate", 1_000_000)),
                               wire_time=bool(options.get("wire_time", False)),
                               lock=None if world is None else world.lock)
