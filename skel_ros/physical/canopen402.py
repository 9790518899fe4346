"""Emulated CiA 402 servo drives that move one physics model of the robot.

The same emulator as :mod:`skel_ros.emulation.canopen402` (the same canopen nodes on a
python-can bus, the same object dictionary, state machine, PDOs, heartbeats, EMCYs: the
same bytes on the wire), with one difference: each drive's shaft is a joint of a
:class:`~skel_ros.physical.world.PhysicalWorld` of the whole robot (the emulator's own, or
one the emulators of the robot's other buses move too: :mod:`skel_ros.physical.host`),
driven by the drive's own control loops (:class:`DriveLaw`) instead of a motor model of
its own.

The loops are the cascade of a servo drive, run at every step of the world (1 ms for the
bundled models; a real drive runs its current loop at tens of kHz and its position loop
at a few kHz, which the world's step stands for):

* **Position** (CSP 0x6060 = 8, PP = 1): a proportional loop on the error between the
  position demand and what the encoder reads (in whole counts of the axis, its
  ``counts_per_rev`` / ``counts_per_rad``), plus the demand's velocity as feed-forward,
  gives the velocity demand, within Max profile velocity 0x607F and the motor's speed.
  In CSP the demand is the cyclic target 0x607A, carried on from the last SYNC's target
  at the speed from the one before (the drive interpolates over the cycle it measures
  between SYNCs, at most one cycle ahead; a SYNC without a new target repeats the last,
  so the demand stands still there after one cycle). In PP it is a
  trapezoidal profile from where the demand is to the set-point: Profile velocity 0x6081
  (within 0x607F), acceleration 0x6083, deceleration 0x6084, re-planned at each new
  set-point (a set-point takes over at once, absolute).
* **Velocity** (and CSV 9 / PV 3, whose target is 0x60FF, PV's ramped at 0x6083 /
  0x6084): a PI loop on the shaft's speed, its integral stopped while the torque is
  saturated, gives the torque demand, within Max torque 0x6072 (per mille of the rated
  torque 0x6076) and the motor's own limit. CST 10 / PT 4: the target torque 0x6071,
  within the same limits. The current loop is taken as ideal: the torque demanded is the
  torque on the shaft. The loop's proportional part on the shaft's own speed, ``-kv v``,
  goes to the engine as the joint's damping, which it integrates implicitly
  (:attr:`DriveLaw.damping`): computed explicitly at the world's step, a stiff velocity
  loop rings where a light joint is coupled to heavy ones (the arm's wrist with a
  payload in the hand moves 11 times less inertia when the other joints yield than when
  they hold).
* **Tuning**: a drive is tuned to its axis; this one to the inertia its joint moves
  now (the world's :meth:`~skel_ros.physical.world.PhysicalWorld.inertia` through the
  gears, taken again at every SYNC; the ``motor`` option's ``inertia`` when the engine
  cannot say), as a drive with inertia estimation is: a velocity loop of
  :data:`VELOCITY_BANDWIDTH` (gain ``J w``, integral time ``4 / w``), a position loop a
  quarter of it. One fixed tuning cannot serve an arm's joint whose inertia changes a
  hundredfold with the pose (the bundled arm's shoulder yaw: 2.4e-4 kg m^2 folded,
  3.9e-2 stretched out): too slow to follow where it is heavy, unstable at the world's
  step where it is light. So a heavier real robot (a payload, a heavier link) shows in
  the torque it takes and where the torque limit is reached, not in a softer loop.
* **Quick stop** (controlword bit 2 = 0, or 0x6007 reaction 3): the velocity demand
  ramps from the shaft's speed to zero at the deceleration the quick stop option code
  0x605A selects: 1 / 5 Profile deceleration 0x6084, 2 / 6 Quick stop deceleration
  0x6085, 3 / 4 / 7 / 8 at once, at the torque limit (the drive's "current limit" and
  "voltage limit"); then the state machine does what the code says (the protocol-level
  emulator's).
* **Following error** (position modes): when the demand and the encoder differ by more
  than the Following error window 0x6065 (position units; 0xFFFFFFFF: off) for longer
  than the Following error time out 0x6066 (ms), the drive switches its power stage off
  at once and, at the next SYNC, reports FAULT with error code 0x8611 (following error)
  in 0x603F and an EMCY: a load its torque limit cannot hold, a target stream faster
  than the axis, a blocked joint.

The actual values are the drive's measures of the world: Position actual value 0x6064 is
the encoder's reading (the truth's offset and noise) in whole counts, Velocity actual
value 0x606C the shaft's speed, Torque actual value 0x6077 the loop's torque (0 with the
power stage off). Targets reach the loops after the joint's command delay (the truth
file); the state machine's switching, at once. The loop settings are read when written
(SDO or PDO) and at a reboot; an EDS without one of them gives the project's
``drive.eds`` default. The drive adds no rotor inertia of its own (a truth's
``armature`` does).

A drive's shaft cannot be put somewhere by hand: its world moves it.

Started by :func:`start_emulator` with the CiA 402 emulator's options and ``physics``
(:data:`~skel_ros.physical.option.PHYSICS_KEYS`).
"""

from __future__ import annotations

import functools
import math
import time
from typing import TYPE_CHECKING, Any, Final

from skel_ros.emulation.canopen402 import Cia402Emulator
from skel_ros.hardware.base import ControlMode
from skel_ros.physical.option import JointMotor, build_world, split_physics
from skel_ros.physical.servo_law import profile_step

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    from skel_ros.emulation.canopen402 import EmulatedDrive
    from skel_ros.emulation.motor import MotorParams, MotorState
    from skel_ros.hardware.base import ActuatorSpec
    from skel_ros.hardware.canopen402.bus import Units
    from skel_ros.physical.world import DeviceJoint

__all__ = ["FOLLOWING_ERROR", "LOOP_OBJECTS", "VELOCITY_BANDWIDTH", "DriveLaw",
           "PhysicalCia402Emulator", "PhysicalDrive", "start_emulator"]

FOLLOWING_ERROR: Final = 0x8611
"""The error code (0x603F, EMCY) of a following error (CiA 402)."""
VELOCITY_BANDWIDTH: Final = 200.0
"""rad/s: the velocity loop's bandwidth the drive is tuned to (at most a quarter of the
world's step rate: ``0.25 / dt``); the position loop's is a quarter of it."""
STREAM_GAP: Final = 0.1
"""s: two CSP targets further apart than this are not one stream (no feed-forward)."""
LOOP_OBJECTS: Final = frozenset({0x6065, 0x6066, 0x6072, 0x607F, 0x6081, 0x6083, 0x6084,
                                 0x6085})
"""The objects the loops take their settings from."""
_FOLLOWING_OFF = 0xFFFFFFFF
_PP, _PV, _PT, _CSP, _CSV, _CST = 1, 3, 4, 8, 9, 10
_POSITION_MODES = frozenset({_PP, _CSP})


class DriveLaw:
    """A CiA 402 drive's cascaded loops, stepped by the world (a :class:`DeviceLaw`).

    Positions, velocities and torques at the drive's shaft (rad, rad/s, N m); the object
    values it is given (:meth:`configure`) in the drive's units.

    Args:
        units: the axis's units (counts, velocity units, rated torque).
        inertia: kg m^2, what the drive is tuned to move (module docstring).
        dt: s, the world's step.
        max_torque: N m, the motor's torque limit.
        max_velocity: rad/s, the motor's speed limit.
        clock: the world's time.
    """

    encoder_at_output = False  # the motor's encoder, before the gears

    def __init__(self, units: Units, inertia: float, dt: float, *, max_torque: float,
                 max_velocity: float, clock: Callable[[], float]) -> None:
        self.units = units
        self.max_torque = max_torque
        self.max_velocity = max_velocity
        self.clock = clock
        self.bandwidth = min(VELOCITY_BANDWIDTH, 0.25 / dt)
        self.kv = 0.0                          # N m per rad/s (tune)
        self.integral_time = 4.0 / self.bandwidth  # s
        self.kp = self.bandwidth / 4.0         # rad/s per rad
        self.tune(inertia)
        # The settings (SI), from the objects (configure).
        self.torque_limit = math.inf           # 0x6072
        self.velocity_limit = math.inf         # 0x607F
        self.window = math.inf                 # 0x6065
        self.timeout = 0.0                     # 0x6066
        self.profile = (0.0, 0.0, 0.0)         # 0x6081, 0x6083, 0x6084
        self.quick_stop_deceleration = math.inf  # 0x6085
        self.op_mode = _CSP
        self.powered = False                   # the state machine's power stage
        self.tripped = False                   # switched off by a fault until powered off
        self.goal = 0.0                        # PP: the set-point
        self.target_velocity = 0.0             # CSV / PV
        self.target_torque = 0.0               # CST / PT
        self.demand = 0.0                      # the position demand and its velocity
        self.demand_velocity = 0.0
        self.stopping = math.nan               # quick stop's deceleration (NaN: none)
        self.error = 0.0                       # the last step's following error (rad)
        self._stream = ((0.0, -math.inf), (0.0, -math.inf))  # CSP: (target, time) x 2
        self._integral = 0.0
        self._command = 0.0                    # the last step's velocity demand
        self._since = math.nan                 # time the error left the window
        self._fault = 0
        self._position = self._velocity = 0.0  # the last step's readings

    def configure(self, index: int, raw: int) -> None:
        """Object ``index`` of :data:`LOOP_OBJECTS` now holds ``raw`` (drive units)."""
        u = self.units
        if index == 0x6065:  # noqa: PLR2004
            self.window = math.inf if raw == _FOLLOWING_OFF else raw / u.counts_per_rad
        elif index == 0x6066:  # noqa: PLR2004
            self.timeout = raw / 1000.0
        elif index == 0x6072:  # noqa: PLR2004
            self.torque_limit = raw / 1000.0 * u.rated_torque
        elif index == 0x607F:  # noqa: PLR2004
            self.velocity_limit = raw / u.velocity_per_rad_s
        elif index == 0x6085:  # noqa: PLR2004
            self.quick_stop_deceleration = raw / u.velocity_per_rad_s
        elif index in (0x6081, 0x6083, 0x6084):
            values = list(self.profile)
            values[(0x6081, 0x6083, 0x6084).index(index)] = raw / u.velocity_per_rad_s
            self.profile = (values[0], values[1], values[2])

    @property
    def enabled(self) -> bool:
        """Whether the loops drive the shaft: powered, and no fault switched them off."""
        return self.powered and not self.tripped

    def tune(self, inertia: float) -> None:
        """The velocity loop's gain for ``inertia`` (kg m^2 at the shaft)."""
        self.kv = inertia * self.bandwidth

    # ---------------------------------------------------------------- commands

    def enable(self, on: bool, position: float) -> None:  # noqa: FBT001 - a switch
        """Power stage on (the demand starts where the encoder reads, at rest) or off.

        A fault's switching off lasts until the power stage is switched off (the state
        machine's FAULT), whatever the controlword says meanwhile.
        """
        if on and not self.powered:
            self._position = position
            self._restart(position)
        if not on:
            self.tripped = False
        self.powered = on

    def set_mode(self, op_mode: int) -> None:
        """Modes of operation 0x6060; a new mode starts from where the demand is."""
        if op_mode != self.op_mode:
            self.op_mode = op_mode
            self._restart(self.demand if self.op_mode in _POSITION_MODES else self._position)

    def set_position(self, target: float) -> None:
        """A CSP target, or a PP set-point (the profile re-planned from the demand)."""
        if not math.isfinite(target):
            return
        if self.op_mode != _CSP:
            self.goal = target
            return
        now = self.clock()
        (previous, _), (last, at) = self._stream
        if now - at > 1e-9:  # noqa: PLR2004 - a new cycle's target
            self._stream = ((last, at), (target, now))
        else:                # the same cycle's target, written again
            self._stream = ((previous, self._stream[0][1]), (target, now))

    def cycle(self) -> None:
        """A SYNC: the cycle's CSP target is the last one received (repeated if none)."""
        (_, _), (last, at) = self._stream
        now = self.clock()
        if now - at > 1e-9:  # noqa: PLR2004 - no target in this cycle
            self._stream = ((last, at), (last, now))

    def set_velocity(self, target: float) -> None:
        """Target velocity 0x60FF (CSV, PV)."""
        if math.isfinite(target):
            self.target_velocity = target

    def set_torque(self, target: float) -> None:
        """Target torque 0x6071 (CST, PT)."""
        if math.isfinite(target):
            self.target_torque = target

    def quick_stop(self, deceleration: float) -> None:
        """Ramp the speed to zero at ``deceleration`` (rad/s^2; inf: at once); idempotent."""
        if math.isnan(self.stopping):
            self.demand_velocity = self._velocity
        self.stopping = deceleration

    def resume(self) -> None:
        """Back from a quick stop to the mode's loops, from where the shaft stands."""
        if not math.isnan(self.stopping):
            self.stopping = math.nan
            self._restart(self._position)

    def take_fault(self) -> int:
        """The error code of a fault since the last call (0: none)."""
        code, self._fault = self._fault, 0
        return code

    # ---------------------------------------------------------------- the loops

    def torque(self, position: float, velocity: float, dt: float) -> float:
        """The torque for one step of ``dt`` from the encoder's ``position`` and the speed."""
        counts = self.units.counts_per_rad
        position = round(position * counts) / counts  # the encoder counts whole counts
        self._position, self._velocity = position, velocity
        if not self.enabled:
            self._command = 0.0
            return 0.0
        limit = min(self.max_torque, self.torque_limit)
        mode = self.op_mode
        if math.isnan(self.stopping) and mode in (_CST, _PT):
            self._command = 0.0
            return max(-limit, min(limit, self.target_torque))
        speed = min(self.max_velocity, self.velocity_limit)
        if not math.isnan(self.stopping):
            command = self._ramp(0.0, self.stopping, self.stopping, dt)
        elif mode in _POSITION_MODES:
            self._advance_demand(speed, dt)
            self.error = self.demand - position
            command = self.demand_velocity + self.kp * self.error
            if self._following_error(abs(self.error)):
                self._fault, self.tripped, self._command = FOLLOWING_ERROR, True, 0.0
                return 0.0
        elif mode == _PV:
            command = self._ramp(self.target_velocity, self.profile[1], self.profile[2], dt)
        else:
            command = self.target_velocity
        self._command = command = max(-speed, min(speed, command))
        error = command - velocity
        drive = self.kv * error + self._integral
        if abs(drive) < limit or drive * error < 0.0:
            self._integral += self.kv * error * dt / self.integral_time  # N m
        # The engine applies -kv v itself (damping): the rest here.
        return max(-limit, min(limit, drive)) + self.kv * velocity

    @property
    def damping(self) -> float:
        """The velocity loop's gain while it runs: the engine integrates ``-kv v``."""
        if not self.enabled or (math.isnan(self.stopping) and self.op_mode in (_CST, _PT)):
            return 0.0
        return self.kv

    def free_speed(self) -> float:
        """The speed the drive demands (how fast it crosses the gear's play)."""
        return self._command

    def _restart(self, position: float) -> None:
        """The demand at ``position``, at rest; the loops' memories cleared."""
        self.demand, self.demand_velocity, self.goal = position, 0.0, position
        self.target_velocity = 0.0
        self.stopping = math.nan
        now = self.clock()
        self._stream = ((position, now), (position, now))
        self._integral = 0.0
        self._since = math.nan

    def _advance_demand(self, speed: float, dt: float) -> None:
        """The position demand one step on: the CSP stream, or the PP profile."""
        if self.op_mode == _CSP:
            (previous, before), (last, at) = self._stream
            span = at - before
            slope = (last - previous) / span if 0.0 < span <= STREAM_GAP else 0.0
            ahead = self.clock() + dt - at
            self.demand = last + slope * max(0.0, min(ahead, span))
            self.demand_velocity = slope if 0.0 <= ahead < span else 0.0
            return
        velocity, acceleration, deceleration = self.profile
        self.demand, self.demand_velocity = profile_step(
            self.demand, self.demand_velocity, self.goal, max_velocity=min(velocity, speed),
            acceleration=acceleration, deceleration=deceleration, dt=dt)

    def _ramp(self, target: float, acceleration: float, deceleration: float,
              dt: float) -> float:
        """The velocity demand one step towards ``target`` at the rates (0 or inf: at once)."""
        v = self.demand_velocity
        speeding_up = target * v >= 0.0 and abs(target) > abs(v)
        rate = acceleration if speeding_up else deceleration
        if 0.0 < rate < math.inf:
            v += max(-rate * dt, min(rate * dt, target - v))
        else:
            v = target
        self.demand_velocity = v
        return v

    def _following_error(self, error: float) -> bool:
        """Whether the error has been outside the window for longer than the time out."""
        if error <= self.window:
            self._since = math.nan
            return False
        now = self.clock()
        if math.isnan(self._since):
            self._since = now
        return now - self._since >= self.timeout


class PhysicalDrive(JointMotor):
    """A drive's shaft as a joint of the physics world (the emulated drive's ``model``).

    What the drive measures is what its encoder reads (:attr:`state`); targets reach its
    loops after the joint's command delay; the power stage switches at once.
    """

    law: DriveLaw

    def __init__(self, joint: DeviceJoint, law: DriveLaw, params: MotorParams) -> None:
        super().__init__(joint, law, params, ControlMode.POSITION)

    def _limit(self, params: MotorParams) -> None:
        """The law bounded by new limits: its torque and its speed."""
        super()._limit(params)
        self.law.max_velocity = params.max_velocity

    def tune(self) -> None:
        """The loops tuned to what the joint moves now, through the gears (module docstring).

        The ``motor`` option's ``inertia`` where the engine cannot say.
        """
        joint = self.joint
        inertia = joint.world.inertia(joint.name)
        ratio = joint.transmission.gear_ratio
        self.law.tune(self.params.inertia if inertia is None else inertia / (ratio * ratio))

    def _torque_on(self) -> bool:
        return self.law.enabled

    def advance(self, t: float) -> MotorState:
        """The world advanced to ``t``; what the drive measures then."""
        self.joint.world.advance(t)
        return self.state

    def set_torque(self, enabled: bool, t: float | None = None) -> None:  # noqa: FBT001
        """Power stage on (the world is released; the loops hold where it is) or off."""
        if t is not None:
            self.advance(t)
        if enabled:
            self.joint.world.release()
        self.law.enable(bool(enabled), self.joint.position)

    def set_position_target(self, position: float) -> None:
        """Target position 0x607A (rad), after the joint's command delay."""
        self.joint.later(functools.partial(self.law.set_position, float(position)))

    def set_velocity_target(self, velocity: float) -> None:
        """Target velocity 0x60FF (rad/s), after the joint's command delay."""
        self.joint.later(functools.partial(self.law.set_velocity, float(velocity)))

    def set_effort_target(self, effort: float) -> None:
        """Target torque 0x6071 (N m), after the joint's command delay."""
        self.joint.later(functools.partial(self.law.set_torque, float(effort)))

    def on_table(self, table: bytearray, touched: frozenset[int]) -> None:
        """A drive's settings are objects (:meth:`DriveLaw.configure`), not a table."""


class PhysicalCia402Emulator(Cia402Emulator):
    """CiA 402 drives whose shafts are the joints of one physics world (module docstring).

    Args:
        transport, actuators: as :class:`~skel_ros.emulation.canopen402.Cia402Emulator`'s.
        options: its options plus ``physics`` (:data:`~skel_ros.physical.option.
            PHYSICS_KEYS`).

    Raises:
        ConfigError: a ``physics`` without model or joints, unknown keys, a drive without
            a joint, a model or truth file that cannot be used; the CiA 402 emulator's own.
    """

    def __init__(self, transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                 options: Mapping[str, Any]) -> None:
        physics, rest = split_physics(options)
        clock = rest.get("clock", time.monotonic)
        initial = dict(rest.get("initial_positions") or {})
        self.world, self._joints = build_world(
            physics, {a.id: float(initial.get(a.id, 0.0)) for a in actuators}, clock())
        self._physical: dict[int, PhysicalDrive] = {}
        super().__init__(transport, actuators, rest)
        with self._lock:
            for d in self._drives.values():
                self._configure(d)

    def _motion_lock(self) -> AbstractContextManager[Any]:
        """The world's lock: the emulators of every bus moving it hold it (one at a time)."""
        return self.world.lock

    def law(self, actuator_id: int) -> DriveLaw:
        """The loops of one drive (for tests: its gains, demand and settings)."""
        return self._physical[actuator_id].law

    def _motion(self, actuator: ActuatorSpec, units: Units, params: MotorParams,
                position: float, now: float) -> PhysicalDrive:  # noqa: ARG002
        world = self.world
        joint = world.joints[self._joints[actuator.id][0]]
        law = DriveLaw(units, params.inertia, world.dt, max_torque=params.max_effort,
                       max_velocity=params.max_velocity, clock=lambda: world.time)
        drive = self._physical[actuator.id] = PhysicalDrive(joint, law, params)
        drive.tune()
        return drive

    def _configure(self, d: EmulatedDrive) -> None:
        """Every loop setting from the drive's objects (lock held)."""
        law = self._physical[d.spec.id].law
        for index in sorted(LOOP_OBJECTS):
            law.configure(index, self._setting(d, index))

    def _writer(self, d: EmulatedDrive) -> Callable[..., None]:
        write = super()._writer(d)
        law = self._physical[d.spec.id].law

        def configure(index: int, subindex: int, od: Any, data: bytes) -> None:  # noqa: ANN401
            write(index, subindex, od, data)   # refused values raise before they count
            if index in LOOP_OBJECTS:
                with self._lock:
                    law.configure(index, int(od.decode_raw(data)))
        return configure

    def reboot(self, actuator_id: int) -> None:
        """As the CiA 402 emulator's; the loops take the settings back to their defaults."""
        super().reboot(actuator_id)
        with self._lock:
            self._configure(self._drives[actuator_id])

    def _apply_targets(self, d: EmulatedDrive, *, take_setpoint: bool) -> None:
        """The mode and its targets to the loops (OPERATION ENABLED: a quick stop is over)."""
        law = self._physical[d.spec.id].law
        d.model.advance(self.clock())
        law.set_mode(d.mode)
        law.resume()
        super()._apply_targets(d, take_setpoint=take_setpoint)

    def _take_fault(self, d: EmulatedDrive) -> int:
        return self._physical[d.spec.id].law.take_fault()

    def _sync_drive(self, d: EmulatedDrive, now: float) -> tuple[list[Any], int]:
        """As the CiA 402 emulator's; the loops count the cycle (after the command delay)."""
        out = super()._sync_drive(d, now)
        drive = self._physical[d.spec.id]
        drive.tune()
        drive.joint.later(drive.law.cycle)
        return out

    def _stop_motion(self, d: EmulatedDrive) -> None:
        """The ramp 0x605A selects: 1 / 5 at 0x6084, 2 / 6 at 0x6085, else at once."""
        law = self._physical[d.spec.id].law
        option = self._setting(d, 0x605A)
        if option in (1, 5):
            deceleration = law.profile[2]
        elif option in (2, 6):
            deceleration = law.quick_stop_deceleration
        else:
            deceleration = math.inf
        law.quick_stop(deceleration)


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> PhysicalCia402Emulator:
    """Start physics-backed CiA 402 drives for ``actuators`` (a thread of this process).

    The CiA 402 emulator's arguments (:func:`skel_ros.emulation.canopen402.
    start_emulator`) plus the option ``physics``.
    """
    return PhysicalCia402Emulator(transport, actuators, options)
