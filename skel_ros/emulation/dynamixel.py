"""Emulated Dynamixel X-series servos on a pseudo-terminal, in their own process.

What is emulated: the Protocol 2.0 instructions PING, READ, WRITE, REG WRITE, ACTION,
REBOOT, SYNC READ, FAST SYNC READ (firmware >= 45), SYNC WRITE, BULK READ,
FAST BULK READ, BULK WRITE; status packets with errors (bad CRC -> CRC error, unknown
instruction -> instruction error, wrong parameter count -> data length error, values
outside a field's range -> data range error, goals outside the limit fields -> data
limit error; access error, as the e-Manual's Protocol 2.0 status packet says: a READ,
Sync Read, Fast Sync Read or Bulk Read covering an address the servo does not define, a
WRITE to a read-only or undefined address, to EEPROM with torque on); Status Return
Level; Return Delay Time (a real delay before answering); the control table in memory,
Indirect Address/Data included, each model's own (``ModelInfo.indirect``: an XL330's
Indirect Data at 208, its table ending at 227) with the fields its model and firmware
have (``ModelInfo.defined``: no Current Limit or Goal Current on XL430 / XC430 / 2XL430,
no Bus Watchdog before firmware 38; the firmware is the ``firmware`` option, default
48); Hardware Error Status (injectable; it switches torque off and sets the alert bit);
REBOOT (the status, then :data:`REBOOT_TIME` of silence, then the RAM at its power-on
values and the error cleared unless injected as persistent); the Bus Watchdog (98) as
the e-Manual describes it, on the emulator's clock
(:meth:`EmulatedServo.check_watchdog`), expiring on silence the emulator saw on the line
(it wakes at the deadline to look), never because its own process was kept from reading
the port (bytes read late came after the last moment the port was seen empty). Each shaft moves with
:class:`~skel_ros.emulation.motor.MotorModel` on the emulator's monotonic clock.
The port is a symlink to the pty at a path of its own, so :meth:`DynamixelEmulator.vanish`
can unplug it for a while and bring it back at the same path, the servos powered.
Not emulated: baud-rate changes (a pty has none; optional *wire time* sleeps as long as
the bytes would take at the configured rate), profiles (Profile Velocity/Acceleration
are stored, not followed), PWM control (treated as current control), gains.

The process is started by :func:`start_emulator` (the protocol ``dynamixel``'s emulator,
:mod:`skel_ros.emulation`) or :func:`start`, and talks to its parent over stdin/stdout,
one JSON object per line; it exits when its stdin closes, so it never outlives its parent.
One process may serve several buses (:func:`run_servers`, one select loop; started by
:func:`start_group`, a handle per bus): :mod:`skel_ros.physical.host`'s buses whose
servos move one physics world. The same loop also runs in a thread of the caller's
process (:func:`start_in_thread`: the same ptys and bytes, the control requests made as
direct calls), where the servos move a world that emulators of other buses of that
process step too, under its lock.
``python -m skel_ros.emulation.dynamixel --ids 1-4`` runs one in the foreground.

Packets read from the port in one piece share their arrival time, so a Sync Write and the
Sync Read after it advance each motor once.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import math
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from skel_ros.emulation.motor import MotorModel, MotorParams, MotorState
from skel_ros.emulation.serial_pty import (
    PtyPort,
    pause_until,
    servo_ids,
    servo_parser,
    servo_starts,
)
from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as proto
from skel_ros.hardware.dynamixel.bus import return_delay_units
from skel_ros.hardware.errors import ConfigError, ProtocolError, TransportError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    from skel_ros.emulation.motor import Motion
    from skel_ros.hardware.base import ActuatorSpec

__all__ = [
    "DEFAULT_FIRMWARE",
    "DEFAULT_RETURN_DELAY",
    "EMULATOR_OPTIONS",
    "REBOOT_TIME",
    "DynamixelEmulator",
    "EmulatedServo",
    "EmulatorConfig",
    "ServoBus",
    "emulator_config",
    "main",
    "run",
    "run_servers",
    "start",
    "start_emulator",
    "start_group",
    "start_in_thread",
]

Instruction = proto.Instruction
StatusError = proto.StatusError

DEFAULT_FIRMWARE = 48
DEFAULT_RETURN_DELAY = 250  # the factory value: 500 µs
# How long a servo stays silent after a REBOOT. The e-Manual does not say; 0.4 s is what
# an XC330 was measured to take (ROBOTIS-GIT/emanual issue 1698).
REBOOT_TIME = 0.4
_CONTROL_TIMEOUT = 10.0  # s to wait for the emulator process's replies

_I32 = struct.Struct("<i")
_I16 = struct.Struct("<h")
_U16 = struct.Struct("<H")
_PRESENT = struct.Struct("<hii")  # Present Current, Velocity, Position at 126

_POSITION_MODES = (ct.MODE_POSITION, ct.MODE_EXTENDED_POSITION, ct.MODE_CURRENT_BASED_POSITION)
_EXTENDED_RANGE = 1_048_575


class _WriteRefused(Exception):  # noqa: N818 - internal control flow, carries the status error
    def __init__(self, error: int) -> None:
        super().__init__(error)
        self.error = error


@dataclass(frozen=True)
class _Layout:
    """A model's control table with one firmware: its fields, size and indirect entries.

    Attributes:
        size: bytes of the table.
        data: Indirect Data address -> entry index (0-based, over all runs of
            ``ModelInfo.indirect``).
        addresses: the bytes of its Indirect Address fields.
        fields: address -> the field that byte belongs to (the fields it has).
        defined: every address a request may cover (``ModelInfo.defined``); a READ or
            WRITE covering another is an access error.
    """

    size: int
    data: Mapping[int, int]
    addresses: frozenset[int]
    fields: Mapping[int, ct.Field]
    defined: frozenset[int]

    @classmethod
    def of(cls, model: ct.ModelInfo, firmware: int) -> _Layout:
        """``model``'s layout with ``firmware``."""
        data: dict[int, int] = {}
        for area in model.indirect:
            data.update({area.data + k: len(data) + k for k in range(area.count)})
        return cls(model.table_size, data,
                   frozenset(a for area in model.indirect
                             for a in range(area.address, area.address + 2 * area.count)),
                   {a: f for f in model.fields(firmware)
                    for a in range(f.address, f.address + f.size)},
                   model.defined(firmware))


_GOALS = frozenset({ct.GOAL_POSITION.address, ct.GOAL_VELOCITY.address,
                    ct.GOAL_CURRENT.address})
_WATCHDOG_GOALS = frozenset({*_GOALS, ct.GOAL_PWM.address})  # read-only once it expired
_LIMITS = frozenset({ct.VELOCITY_LIMIT.address, ct.CURRENT_LIMIT.address,
                     ct.MOVING_THRESHOLD.address})
_I32_MAX = 2**31 - 1
_POSITION_LIMITS = struct.Struct("<II")  # Max, Min Position Limit (48, 52), unsigned


@dataclass
class EmulatedServo:
    """One servo: its control table, its motor, its instruction handling."""

    id: int
    model: ct.ModelInfo
    motor: Motion
    firmware: int = DEFAULT_FIRMWARE
    torque_constant: float = 0.0
    table: bytearray = field(default_factory=bytearray)  # create(): the model's size
    registered: tuple[int, bytes] | None = None
    indirect: list[int] = field(default_factory=list)
    booting_until: float = -math.inf  # after a REBOOT: silent until then
    persistent_fault: int = 0  # Hardware Error Status bits a reboot does not clear
    watchdog_expired_at: float | None = None  # the emulator clock's time it last expired
    torque_writes: list[tuple[float, int]] = field(default_factory=list)  # (time, value)
    # RAM fields whose power-on value is not 0 (a physics-backed servo's gains).
    ram_defaults: tuple[tuple[ct.Field, int], ...] = ()
    _moving_threshold: float = 0.0
    # Indirect Data address -> the table byte it reads (from the Indirect Addresses).
    _sources: dict[int, int] = field(default_factory=dict)
    layout: _Layout = field(init=False, repr=False, compare=False)
    """Its model's table with its firmware: fields, size, indirect entries."""

    def __post_init__(self) -> None:
        self.layout = _Layout.of(self.model, self.firmware)

    @classmethod
    def create(cls, dxl_id: int, model: ct.ModelInfo, position: float, now: float, *,
               firmware: int = DEFAULT_FIRMWARE, return_delay: int = DEFAULT_RETURN_DELAY,
               torque_constant: float | None = None, motor: Motion | None = None,
               ram_defaults: Sequence[tuple[ct.Field, int]] = ()) -> EmulatedServo:
        """A servo with its factory settings, its shaft at ``position`` (rad).

        ``motor``: what moves its shaft (default: a :class:`MotorModel` of its own);
        ``ram_defaults``: RAM fields whose power-on value is not 0 (default: all are 0).
        """
        if motor is None:
            params = MotorParams(max_velocity=model.no_load_speed,
                                 max_effort=model.stall_torque)
            motor = MotorModel(params, position, now)
        servo = cls(dxl_id, model, motor, firmware, torque_constant or model.torque_constant,
                    bytearray(model.table_size), ram_defaults=tuple(ram_defaults))
        t = servo.table
        _U16.pack_into(t, ct.MODEL_NUMBER.address, model.model_number)
        t[ct.FIRMWARE_VERSION.address] = firmware
        t[ct.ID.address] = dxl_id
        t[ct.BAUD_RATE.address] = 3
        t[ct.RETURN_DELAY_TIME.address] = return_delay
        t[ct.OPERATING_MODE.address] = ct.MODE_POSITION
        t[ct.PROTOCOL_TYPE.address] = 2
        _I32.pack_into(t, ct.MOVING_THRESHOLD.address, 10)
        t[ct.TEMPERATURE_LIMIT.address] = 80
        _U16.pack_into(t, ct.MAX_VOLTAGE_LIMIT.address, 160)
        _U16.pack_into(t, ct.MIN_VOLTAGE_LIMIT.address, 95)
        _U16.pack_into(t, ct.PWM_LIMIT.address, 885)
        if model.senses_current:
            _U16.pack_into(t, ct.CURRENT_LIMIT.address, model.current_limit)
        _I32.pack_into(t, ct.VELOCITY_LIMIT.address, model.velocity_limit)
        _I32.pack_into(t, ct.MAX_POSITION_LIMIT.address, ct.TICKS_PER_REV - 1)
        _I32.pack_into(t, ct.MIN_POSITION_LIMIT.address, 0)
        t[ct.SHUTDOWN.address] = 0x34
        servo._factory_ram(position)
        servo._update_limits()
        servo.sync(now)
        return servo

    def _factory_ram(self, position: float) -> None:
        """The RAM area (64 on) as after power-on, the shaft at ``position`` (rad)."""
        t = self.table
        t[ct.TORQUE_ENABLE.address:] = bytes(len(t) - ct.TORQUE_ENABLE.address)
        t[ct.STATUS_RETURN_LEVEL.address] = 2
        _I32.pack_into(t, ct.GOAL_POSITION.address, _ticks(position))
        _U16.pack_into(t, ct.PRESENT_INPUT_VOLTAGE.address, 120)
        t[ct.PRESENT_TEMPERATURE.address] = 32
        for area in self.model.indirect:  # factory: Indirect Address n -> Indirect Data n
            for k in range(area.count):
                _U16.pack_into(t, area.address + 2 * k, area.data + k)
        for fld, value in self.ram_defaults:
            t[fld.address:fld.address + fld.size] = value.to_bytes(fld.size, "little",
                                                                   signed=fld.signed)
        self.registered = None
        self._update_indirect()
        self.motor.on_table(t, frozenset(range(ct.TORQUE_ENABLE.address, len(t))))

    # ---------------------------------------------------------------- state

    def _u(self, fld: ct.Field) -> int:
        return int.from_bytes(self.table[fld.address:fld.address + fld.size], "little",
                              signed=fld.signed)

    @property
    def return_delay(self) -> float:
        """Seconds to wait before answering."""
        return self.table[ct.RETURN_DELAY_TIME.address] * ct.RETURN_DELAY_UNIT

    @property
    def status_return_level(self) -> int:
        """0: answer PING only, 1: PING and READ, 2: everything."""
        return self.table[ct.STATUS_RETURN_LEVEL.address]

    @property
    def alert(self) -> int:
        """The error byte's alert flag."""
        return proto.ALERT if self.table[ct.HARDWARE_ERROR_STATUS.address] else 0

    def sync(self, now: float) -> None:
        """Advance the motor and refresh the Present fields."""
        position, velocity, effort, torque = self.motor.step(now)
        t = self.table
        model = self.model
        if model.current_unit is not None:
            raw_effort = effort / self.torque_constant / model.current_unit
        else:
            raw_effort = effort / model.stall_torque / ct.LOAD_UNIT
        _PRESENT.pack_into(t, ct.PRESENT_CURRENT.address, _clip(raw_effort, 32767),
                           _clip(velocity / ct.RAD_S_PER_VELOCITY_UNIT, _I32_MAX),
                           _clip(position / ct.RAD_PER_TICK, _I32_MAX) + ct.CENTER_TICK)
        t[ct.MOVING.address] = abs(velocity) > self._moving_threshold
        _U16.pack_into(t, ct.REALTIME_TICK.address, int(now * 1000) % 32768)
        t[ct.TORQUE_ENABLE.address] = torque

    def _update_indirect(self) -> None:
        """Read the Indirect Addresses: their targets, the byte each Indirect Data reads."""
        t = self.table
        targets: list[int] = []
        for area in self.model.indirect:
            targets.extend(_U16.unpack_from(t, area.address + 2 * k)[0]
                           for k in range(area.count))
        self.indirect = targets
        last = len(t) - 1  # a target outside the table reads its last byte
        self._sources = {a: targets[k] if 0 <= targets[k] <= last else last
                         for a, k in self.layout.data.items()}

    def _update_limits(self) -> None:
        self._moving_threshold = self._u(ct.MOVING_THRESHOLD) * ct.RAD_S_PER_VELOCITY_UNIT
        velocity_limit = self._u(ct.VELOCITY_LIMIT) * ct.RAD_S_PER_VELOCITY_UNIT
        speed = self.model.no_load_speed
        if velocity_limit > 0:
            speed = min(speed, velocity_limit)
        effort = self.model.stall_torque
        if self.model.current_unit is not None:
            effort = min(effort, self._u(ct.CURRENT_LIMIT) * self.model.current_unit *
                         self.torque_constant) or effort
        self.motor.params = replace(self.motor.params, max_velocity=speed, max_effort=effort)

    def inject_fault(self, bits: int, now: float, *, persistent: bool = False) -> None:
        """Set Hardware Error Status (torque goes off, as the Shutdown field asks).

        ``persistent``: the cause stays, so the error is back after a reboot.
        """
        self.sync(now)
        self.table[ct.HARDWARE_ERROR_STATUS.address] = bits & 0xFF
        self.persistent_fault = bits & 0xFF if persistent else 0
        if bits:
            self.motor.set_torque(enabled=False, t=now)
            self.table[ct.TORQUE_ENABLE.address] = 0

    def reboot(self, now: float) -> None:
        """Restart: silent for REBOOT_TIME, then RAM at its power-on values.

        Torque off, goals where the shaft is, Indirect Addresses, Status Return Level and
        Bus Watchdog back to the factory values, Hardware Error Status cleared (unless
        the injected fault is persistent). EEPROM (mode, ids, limits) is kept.
        """
        self.sync(now)
        motor = self.motor
        motor.set_torque(enabled=False, t=now)
        position = motor.state.position
        motor.set_position_target(position)
        motor.set_velocity_target(0.0)
        motor.set_effort_target(0.0)
        self._factory_ram(position)
        self.table[ct.HARDWARE_ERROR_STATUS.address] = self.persistent_fault
        self.booting_until = now + REBOOT_TIME
        self.sync(now)

    def check_watchdog(self, last_rx: float, now: float) -> None:
        """Expire the Bus Watchdog if the bus was silent too long (e-Manual, Bus Watchdog).

        Armed (1..127, 20 ms units) and torque on: when no instruction packet came for
        longer than its value since ``last_rx``, the servo stops at that moment (position
        modes: holds where it is; velocity and current modes: goal 0, the profile
        ignored), the field reads -1 (0xFF) and the goals become read-only until 0 is
        written to it. Evaluated on the emulator's clock at the exact deadline.
        """
        table = self.table
        units = table[ct.BUS_WATCHDOG.address]
        if not (0 < units <= ct.BUS_WATCHDOG_MAX and table[ct.TORQUE_ENABLE.address]):
            return
        deadline = last_rx + units * ct.BUS_WATCHDOG_UNIT
        if now <= deadline:
            return
        motor = self.motor
        motor.step(deadline)
        mode = table[ct.OPERATING_MODE.address]
        if mode == ct.MODE_VELOCITY:
            motor.set_velocity_target(0.0)
        elif mode in (ct.MODE_CURRENT, ct.MODE_PWM):
            motor.set_effort_target(0.0)
        else:
            motor.set_position_target(motor.state.position)
        table[ct.BUS_WATCHDOG.address] = ct.BUS_WATCHDOG_EXPIRED
        self.watchdog_expired_at = deadline

    def set_position(self, position: float, now: float) -> None:
        """Put the shaft at ``position`` (rad), at rest (a test's hand on the horn)."""
        self.sync(now)
        self.motor.set_position(position)
        self.sync(now)

    # ---------------------------------------------------------------- access

    def read(self, address: int, size: int, now: float) -> tuple[int, bytes]:
        """``(error, data)`` of a READ (covering an undefined address: access error)."""
        addresses = range(address, address + size)
        defined = self.layout.defined
        if size <= 0 or not all(a in defined for a in addresses):
            return StatusError.ACCESS, b""
        self.sync(now)
        return 0, bytes(self.table[self._sources.get(a, a)] for a in addresses)

    def write(self, address: int, data: bytes, now: float) -> int:
        """Apply a WRITE; the status error (0 when it was applied)."""
        try:
            self._write(address, data, now)
        except _WriteRefused as refused:
            return refused.error
        return 0

    def _write(self, address: int, data: bytes, now: float) -> None:  # noqa: C901
        """A WRITE of ``data`` at ``address``, Indirect Data resolved (refused: raises)."""
        if not data or address < 0 or address + len(data) > len(self.table):
            raise _WriteRefused(StatusError.ACCESS)
        layout = self.layout
        targets: list[int] = []
        for offset in range(len(data)):
            a = address + offset
            k = layout.data.get(a)
            if k is not None:
                a = self.indirect[k]
                if not 0 <= a < layout.size or a in layout.data:
                    raise _WriteRefused(StatusError.ACCESS)
            targets.append(a)
        touched: dict[str, ct.Field] = {}
        indirect_changed = False
        torque_on = bool(self.table[ct.TORQUE_ENABLE.address])
        for a in targets:
            if a in layout.addresses:
                if torque_on:
                    raise _WriteRefused(StatusError.ACCESS)
                indirect_changed = True
                continue
            fld = layout.fields.get(a)
            if fld is None or fld.access is ct.Access.R:
                raise _WriteRefused(StatusError.ACCESS)
            if fld.access is ct.Access.EEPROM and torque_on:
                raise _WriteRefused(StatusError.ACCESS)
            touched[fld.name] = fld
        new = bytearray(self.table)
        for a, byte in zip(targets, data, strict=True):
            new[a] = byte
        fields = tuple(touched.values())
        self._validate(new, fields)
        self.motor.step(now)  # the old goals up to now, the new ones from now
        self.table[:] = new
        if indirect_changed:
            self._update_indirect()
        self._apply(frozenset(f.address for f in fields), now)

    def _validate(self, new: bytearray, fields: Sequence[ct.Field]) -> None:  # noqa: C901, PLR0912
        def value(fld: ct.Field) -> int:
            return int.from_bytes(new[fld.address:fld.address + fld.size], "little",
                                  signed=fld.signed)

        mode = new[ct.OPERATING_MODE.address]
        expired = self.table[ct.BUS_WATCHDOG.address] == ct.BUS_WATCHDOG_EXPIRED
        for fld in fields:
            v = value(fld)
            at = fld.address
            bad = False
            limit = False
            if at in _WATCHDOG_GOALS and expired:
                bad = True  # read-only after the Bus Watchdog expired: a range error
            elif at == ct.GOAL_POSITION.address:
                if mode == ct.MODE_POSITION:
                    high, low = _POSITION_LIMITS.unpack_from(new, ct.MAX_POSITION_LIMIT.address)
                    limit = not low <= v <= high
                else:
                    bad = abs(v) > _EXTENDED_RANGE
            elif at == ct.GOAL_VELOCITY.address:
                limit = abs(v) > value(ct.VELOCITY_LIMIT)
            elif at == ct.GOAL_CURRENT.address:  # the models that have it: see ModelInfo.has
                limit = abs(v) > value(ct.CURRENT_LIMIT)
            elif at == ct.TORQUE_ENABLE.address:
                bad = v not in (0, 1)
                if v and self.table[ct.HARDWARE_ERROR_STATUS.address]:
                    raise _WriteRefused(StatusError.RESULT_FAIL)
            elif at == ct.BUS_WATCHDOG.address:
                bad = v > ct.BUS_WATCHDOG_MAX  # 0: off (clears an expired one), 1..127
            elif fld is ct.OPERATING_MODE:
                bad = v not in ct.OPERATING_MODES or (
                    not self.model.senses_current
                    and v in (ct.MODE_CURRENT, ct.MODE_CURRENT_BASED_POSITION))
            elif fld is ct.ID:
                bad = v > proto.MAX_ID
            elif fld is ct.BAUD_RATE:
                bad = v > 7  # noqa: PLR2004 - 0..7: 9,600 bps .. 4.5 Mbps
            elif fld is ct.RETURN_DELAY_TIME:
                bad = v > ct.RETURN_DELAY_TIME_MAX
            elif fld is ct.STATUS_RETURN_LEVEL:
                bad = v > 2  # noqa: PLR2004
            elif fld is ct.MAX_POSITION_LIMIT or fld is ct.MIN_POSITION_LIMIT:
                bad = not 0 <= v < ct.TICKS_PER_REV
            elif fld is ct.VELOCITY_LIMIT:
                bad = not 0 <= v <= 1023  # noqa: PLR2004
            elif fld is ct.CURRENT_LIMIT:
                bad = not 0 <= v <= self.model.current_limit
            if bad:
                raise _WriteRefused(StatusError.DATA_RANGE)
            if limit:
                raise _WriteRefused(StatusError.DATA_LIMIT)

    def _apply(self, touched: frozenset[int], now: float) -> None:
        """Act on the fields at ``touched`` (addresses) just written."""
        motor = self.motor
        table = self.table
        if ct.OPERATING_MODE.address in touched:
            motor.mode = _MOTOR_MODES[table[ct.OPERATING_MODE.address]]
        if not touched.isdisjoint(_LIMITS):
            self._update_limits()
        mode = table[ct.OPERATING_MODE.address]
        if ct.TORQUE_ENABLE.address in touched:
            enabled = bool(table[ct.TORQUE_ENABLE.address])
            self.torque_writes.append((now, table[ct.TORQUE_ENABLE.address]))
            motor.set_torque(enabled, now)
            if enabled:
                touched = touched | _GOALS
        if ct.GOAL_POSITION.address in touched and mode in _POSITION_MODES:
            goal, = _I32.unpack_from(table, ct.GOAL_POSITION.address)
            motor.set_position_target((goal - ct.CENTER_TICK) * ct.RAD_PER_TICK)
        if ct.GOAL_VELOCITY.address in touched:
            motor.set_velocity_target(self._u(ct.GOAL_VELOCITY) * ct.RAD_S_PER_VELOCITY_UNIT)
        if ct.GOAL_CURRENT.address in touched and self.model.current_unit is not None:
            motor.set_effort_target(self._u(ct.GOAL_CURRENT) * self.model.current_unit *
                                    self.torque_constant)
        motor.on_table(table, touched)

    def state(self, now: float) -> MotorState:
        """The true shaft state at ``now``."""
        self.sync(now)
        return self.motor.state


_MOTOR_MODES = {ct.MODE_CURRENT: ControlMode.EFFORT, ct.MODE_VELOCITY: ControlMode.VELOCITY,
                ct.MODE_POSITION: ControlMode.POSITION,
                ct.MODE_EXTENDED_POSITION: ControlMode.POSITION,
                ct.MODE_CURRENT_BASED_POSITION: ControlMode.POSITION,
                ct.MODE_PWM: ControlMode.EFFORT}


def _clip(value: float, limit: int) -> int:
    """``value`` rounded into ``-limit..limit``; 0 when it is not finite."""
    if -limit <= value <= limit:  # the common case (False for NaN)
        return round(value)
    if math.isfinite(value):
        return limit if value > 0 else -limit
    return 0


def _ticks(position: float) -> int:
    return _clip(position / ct.RAD_PER_TICK, 2**31 - 1) + ct.CENTER_TICK


# ---------------------------------------------------------------- the bus


class ServoBus:
    """Every emulated servo on one line: answers instruction packets.

    Args:
        servos: the servos by id.
        clock: monotonic seconds.
    """

    def __init__(self, servos: Mapping[int, EmulatedServo], clock: Callable[[], float]) -> None:
        self.all_servos = dict(servos)
        self.servos = self.all_servos  # the servos that answer: all but those rebooting
        self.clock = clock
        self.counts = {"packets": 0, "crc_errors": 0, "garbage_bytes": 0}
        self.last_rx = clock()  # when the last instruction packet arrived
        self._watched = tuple(self.all_servos.values())

    def check_watchdogs(self, now: float) -> None:
        """Expire the Bus Watchdogs the silence since the last packet ran out; end reboots."""
        last_rx = self.last_rx
        for servo in self._watched:
            servo.check_watchdog(last_rx, now)
        if self.servos is not self.all_servos and all(
                s.booting_until <= now for s in self.all_servos.values()):
            self.servos = self.all_servos

    def watchdog_deadline(self) -> float:
        """When the first armed Bus Watchdog runs out unless a packet comes (inf: none)."""
        units = [s.table[ct.BUS_WATCHDOG.address] for s in self._watched
                 if s.table[ct.TORQUE_ENABLE.address]
                 and 0 < s.table[ct.BUS_WATCHDOG.address] <= ct.BUS_WATCHDOG_MAX]
        return self.last_rx + min(units) * ct.BUS_WATCHDOG_UNIT if units else math.inf

    def handle(self, packet: proto.Packet,  # noqa: C901, PLR0911
               now: float | None = None, *,
               silent_until: float | None = None) -> list[tuple[float, bytes]]:
        """The replies to one instruction packet: ``(return delay, bytes)`` in order.

        ``now``: when the packet's bytes arrived (default: the clock's time now). Packets
        read from the port in one piece arrived together, so they share one time: a
        servo's motor steps once for a Sync Write and the Sync Read after it.
        ``silent_until``: the last time the line was seen silent before the packet (its
        bytes came after it, perhaps long before ``now`` when the emulator's process was
        kept from running): a Bus Watchdog expires only on silence seen, never on the
        emulator's own delay in reading the port.
        """
        self.counts["packets"] += 1
        if now is None:
            now = self.clock()
        # "Communication" for the Bus Watchdog is every instruction packet on the bus.
        self.check_watchdogs(now if silent_until is None else min(now, silent_until))
        self.last_rx = now
        inst, params, target = packet.instruction, packet.params, packet.id
        if inst == Instruction.SYNC_WRITE:
            self._sync_write(params, now)
            return []
        if inst in (Instruction.SYNC_READ, Instruction.FAST_SYNC_READ):
            return self._sync_read(inst, params, now) if target == proto.BROADCAST_ID else []
        if inst == Instruction.STATUS:
            return []
        if inst == Instruction.PING:
            if target == proto.BROADCAST_ID:
                return [self._ping(s) for _, s in sorted(self.servos.items())]
            servo = self.servos.get(target)
            return [self._ping(servo)] if servo else []
        if inst in (Instruction.BULK_READ, Instruction.FAST_BULK_READ):
            return self._bulk_read(inst, params, now) if target == proto.BROADCAST_ID else []
        if inst == Instruction.BULK_WRITE:
            self._bulk_write(params, now)
            return []
        if inst == Instruction.REBOOT:
            return self._reboot(target, now)
        targets = (list(self.servos.values()) if target == proto.BROADCAST_ID
                   else [self.servos[target]] if target in self.servos else [])
        replies = []
        for servo in targets:
            error, data = self._single(servo, inst, params, now)
            level = servo.status_return_level
            if target != proto.BROADCAST_ID and (
                    level == 2 or (level == 1 and inst == Instruction.READ)):  # noqa: PLR2004
                replies.append(self._status(servo, error, data))
        return replies

    def _reboot(self, target: int, now: float) -> list[tuple[float, bytes]]:
        """REBOOT: the status first (unless broadcast), then the servo restarts."""
        servos = (list(self.servos.values()) if target == proto.BROADCAST_ID
                  else [self.servos[target]] if target in self.servos else [])
        replies = [self._status(s, 0) for s in servos
                   if target != proto.BROADCAST_ID and s.status_return_level == 2]  # noqa: PLR2004
        for servo in servos:
            servo.reboot(now)
        self.servos = {i: s for i, s in self.all_servos.items() if s.booting_until <= now}
        return replies

    def bad_crc(self, dxl_id: int | None) -> list[tuple[float, bytes]]:
        """The reply to a packet with a bad CRC addressed to ``dxl_id``."""
        self.counts["crc_errors"] += 1
        servo = self.servos.get(dxl_id) if dxl_id is not None else None
        if servo is None or servo.status_return_level < 2:  # noqa: PLR2004
            return []
        return [self._status(servo, StatusError.CRC)]

    def _single(self, servo: EmulatedServo, inst: int, params: bytes,  # noqa: PLR0911
                now: float) -> tuple[int, bytes]:
        if inst == Instruction.READ:
            if len(params) != 4:  # noqa: PLR2004
                return StatusError.DATA_LENGTH, b""
            address, size = struct.unpack("<HH", params)
            return servo.read(address, size, now)
        if inst in (Instruction.WRITE, Instruction.REG_WRITE):
            if len(params) < 3:  # noqa: PLR2004
                return StatusError.DATA_LENGTH, b""
            address = params[0] | params[1] << 8
            if inst == Instruction.REG_WRITE:
                servo.registered = (address, params[2:])
                servo.table[ct.REGISTERED_INSTRUCTION.address] = 1
                return 0, b""
            return servo.write(address, params[2:], now), b""
        if inst == Instruction.ACTION:
            if servo.registered is None:
                return 0, b""
            address, data = servo.registered
            servo.registered = None
            servo.table[ct.REGISTERED_INSTRUCTION.address] = 0
            return servo.write(address, data, now), b""
        return StatusError.INSTRUCTION, b""

    def _status(self, servo: EmulatedServo, error: int, data: bytes = b"") -> tuple[float, bytes]:
        return servo.return_delay, proto.build_status(servo.id, error | servo.alert, data)

    def _ping(self, servo: EmulatedServo) -> tuple[float, bytes]:
        data = servo.table[0:2] + servo.table[6:7]
        return self._status(servo, 0, bytes(data))

    def _sync_read(self, inst: int, params: bytes, now: float) -> list[tuple[float, bytes]]:
        if len(params) < 5:  # noqa: PLR2004
            return []
        address, size = struct.unpack_from("<HH", params)
        servos = [self.servos[i] for i in params[4:] if i in self.servos]
        if inst == Instruction.FAST_SYNC_READ:
            return self._fast_reply([(s, address, size) for s in servos], now)
        replies = []
        for servo in servos:
            error, data = servo.read(address, size, now)
            replies.append(self._status(servo, error, data))
        return replies

    def _fast_reply(self, items: Sequence[tuple[EmulatedServo, int, int]],
                    now: float) -> list[tuple[float, bytes]]:
        if not items or any(s.firmware < ct.FAST_SYNC_READ_FIRMWARE for s, _, _ in items):
            return []  # older firmware ignores the instruction
        records = []
        for servo, address, size in items:
            error, data = servo.read(address, size, now)
            records.append((servo.id, error | servo.alert, data.ljust(size, b"\0")))
        return [(items[0][0].return_delay, proto.build_fast_status(records))]

    def _bulk_read(self, inst: int, params: bytes, now: float) -> list[tuple[float, bytes]]:
        if len(params) % 5:
            return []
        items = [struct.unpack_from("<BHH", params, k) for k in range(0, len(params), 5)]
        known = [(self.servos[i], a, s) for i, a, s in items if i in self.servos]
        if inst == Instruction.FAST_BULK_READ:
            return self._fast_reply(known, now)
        replies = []
        for servo, address, size in known:
            error, data = servo.read(address, size, now)
            replies.append(self._status(servo, error, data))
        return replies

    def _sync_write(self, params: bytes, now: float) -> None:
        if len(params) < 4:  # noqa: PLR2004
            return
        address, size = struct.unpack_from("<HH", params)
        body = params[4:]
        if size == 0 or len(body) % (size + 1):
            return
        for k in range(0, len(body), size + 1):
            servo = self.servos.get(body[k])
            if servo is not None:
                servo.write(address, body[k + 1:k + 1 + size], now)

    def _bulk_write(self, params: bytes, now: float) -> None:
        k = 0
        while k + 5 <= len(params):
            dxl_id, address, size = struct.unpack_from("<BHH", params, k)
            data = params[k + 5:k + 5 + size]
            k += 5 + size
            servo = self.servos.get(dxl_id)
            if servo is not None and len(data) == size:
                servo.write(address, data, now)


# ---------------------------------------------------------------- the process


@dataclass(frozen=True)
class EmulatorConfig:
    """What the emulator process emulates (JSON-serialisable)."""

    servos: tuple[tuple[int, str, float, float | None], ...]  # id, model, position, kt
    baudrate: int = 1_000_000
    firmware: int = DEFAULT_FIRMWARE
    return_delay: int = DEFAULT_RETURN_DELAY
    wire_time: bool = False

    def to_json(self) -> str:
        """One line of JSON."""
        return json.dumps({"servos": [list(s) for s in self.servos], "baudrate": self.baudrate,
                           "firmware": self.firmware, "return_delay": self.return_delay,
                           "wire_time": self.wire_time})

    @classmethod
    def from_json(cls, text: str) -> EmulatorConfig:
        """Parse :meth:`to_json`'s output."""
        raw = json.loads(text)
        return cls(tuple((int(i), str(m), float(p), None if k is None else float(k))
                         for i, m, p, k in raw["servos"]),
                   int(raw["baudrate"]), int(raw["firmware"]), int(raw["return_delay"]),
                   bool(raw["wire_time"]))

    def build(self, clock: Callable[[], float]) -> ServoBus:
        """The servos."""
        now = clock()
        servos = {}
        for dxl_id, model_name, position, kt in self.servos:
            model = ct.model_by_name(model_name)
            if model is None:
                raise ConfigError(f"emulator: unknown Dynamixel model {model_name!r}; known:"
                                  f" {', '.join(ct.MODELS)}")
            servos[dxl_id] = EmulatedServo.create(dxl_id, model, position, now,
                                                  firmware=self.firmware,
                                                  return_delay=self.return_delay,
                                                  torque_constant=kt)
        return ServoBus(servos, clock)


class _Server:
    """One bus of the emulator: its pty's master side and its servos (:func:`_serve_all`).

    ``lock`` (default: one of its own) is held while the servos act: a packet handled, a
    watchdog checked, a control request answered, the port opened or closed. Buses in a
    thread of a process whose other emulators move the same physics world hold that
    world's lock (:func:`start_in_thread`); a reply's pause is waited without it.
    """

    def __init__(self, config: EmulatorConfig, control_in: IO[str] | None,
                 control_out: IO[str] | None, lock: AbstractContextManager[Any] | None = None,
                 ) -> None:
        self.config = config
        self.lock: AbstractContextManager[Any] = threading.RLock() if lock is None else lock
        self.bus = config.build(time.monotonic)
        # The port is a symlink at a path of its own to the pty, so that a port that
        # vanishes and returns (a new pty) is found again at the same path.
        self.pty = PtyPort("skel-dxl-")
        self.port = self.pty.path
        self.back_at = math.inf  # while vanished: when the port returns
        self.reader = proto.PacketReader()
        # Every byte not read yet arrived after this time (the last time the port had
        # nothing to read or had no pty, or the start of the last read). Bus Watchdogs
        # expire on silence seen, never on the time this process took to get the CPU
        # back: a servo's clock does not stop when the host is busy.
        self.silent_at = time.monotonic()
        self._open_pty()
        self.control_in = control_in
        self.control_out = control_out
        self.running = True

    @property
    def master(self) -> int:
        """The pty's master side (-1 while the port is unplugged)."""
        return self.pty.master

    def _open_pty(self) -> None:
        self.pty.open()
        self.reader.clear()
        self.back_at = math.inf
        self.silent_at = time.monotonic()  # no byte can have come before the port was there

    def vanish(self, seconds: float) -> None:
        """Unplug the adapter for ``seconds``, keeping the servos powered.

        The pty closes (the driver's port hangs up) and the path disappears; then a new
        pty appears at the same path. The servos keep their state (their Bus Watchdogs
        see the silence).
        """
        self.pty.close()
        self.back_at = time.monotonic() + max(0.0, seconds)

    def cleanup(self) -> None:
        """Close the pty, remove the port's path."""
        self.pty.remove()

    def serve(self) -> None:
        """Serve this bus and the control channel until ``quit`` or the parent is gone."""
        _serve_all([self], self.control_in, self.control_out)

    def _wait(self, now: float) -> float:
        """Seconds the loop may sleep for this bus (the port back first, if it is time).

        Until the port returns, or just after the first Bus Watchdog deadline, to see the
        silence (if any).
        """
        if not self.running:
            return math.inf  # ended by a call meanwhile: its port stays closed
        if self.master < 0 and now >= self.back_at:
            self._open_pty()
        return min(self.back_at - now, self.bus.watchdog_deadline() + 1e-3 - now)

    def _ready(self, ready: Sequence[int]) -> None:
        """The port's bytes read and answered, or the silence seen."""
        with self.lock:
            if self.master < 0 or self.master not in ready:
                self._silence()
                return
            read_at = time.monotonic()  # bytes not in this read come after it
            data = os.read(self.master, 65536)
            arrived, out = self._answers(data, read_at)
        self._send(data, arrived, out)

    def _silence(self) -> None:
        """Nothing to read from the port now (or no port): expire the watchdogs it runs out."""
        now = time.monotonic()
        if self.master >= 0 and select.select([self.master], [], [], 0.0)[0]:
            return  # bytes came meanwhile: the next read takes them
        self.silent_at = now
        self.bus.check_watchdogs(now)

    def _on_bytes(self, data: bytes, read_at: float | None = None) -> None:
        """Answer the packets in ``data``, read from the port from ``read_at`` on."""
        with self.lock:
            arrived, out = self._answers(data, read_at)
        self._send(data, arrived, out)

    def _answers(self, data: bytes, read_at: float | None,
                 ) -> tuple[float, list[tuple[float, bytes]]]:
        """When ``data`` arrived, and the replies to its packets (each after its pause)."""
        arrived = time.monotonic()
        silent_until, self.silent_at = self.silent_at, arrived if read_at is None else read_at
        reader = self.reader
        reader.feed(data)
        out: list[tuple[float, bytes]] = []
        while True:
            try:
                packet = reader.next_packet()
            except ProtocolError:
                out.extend(self.bus.bad_crc(reader.bad_id))
                continue
            if packet is None:
                break
            out.extend(self.bus.handle(packet, arrived, silent_until=silent_until))
        self.bus.counts["garbage_bytes"] = reader.discarded
        return arrived, out

    def _send(self, data: bytes, arrived: float, out: Sequence[tuple[float, bytes]]) -> None:
        """The replies to ``data`` (arrived at ``arrived``) written, each after its pause."""
        if not out:
            return
        # Each pause is measured from when the bytes arrived, so the pauses do not add up
        # the oversleeping of a loaded host; short ones (a return delay of 0.5 ms) are
        # waited without giving the CPU away (see pause_until).
        wire = self.config.wire_time
        t = arrived
        if wire:
            t += 10.0 * len(data) / self.config.baudrate
        if all(delay == 0.0 for delay, _ in out) and not wire:
            self._write(b"".join(reply for _, reply in out))
            return
        for delay, reply in out:
            t += delay + (10.0 * len(reply) / self.config.baudrate if wire else 0.0)
            pause_until(t, time.monotonic, time.sleep)
            self._write(reply)

    def _write(self, reply: bytes) -> None:
        """``reply`` on the port, unless it was unplugged meanwhile (a control call's)."""
        with self.lock:
            if self.master >= 0:
                os.write(self.master, reply)

    def _control(self, request: Mapping[str, Any]) -> dict[str, Any]:  # noqa: C901, PLR0911
        command = request["command"]
        now = time.monotonic()
        self.bus.check_watchdogs(self.silent_at)  # the silence seen (see handle)
        if command == "quit":
            self.running = False
            return {"ok": True}
        if command == "counts":
            return dict(self.bus.counts)
        if command == "vanish":
            self.vanish(float(request["seconds"]))
            return {"ok": True}
        servo = self.bus.all_servos.get(int(request["id"]))
        if servo is None:
            return {"error": f"no emulated servo with id {request['id']}"}
        if command == "state":
            st = servo.state(now)
            return {"position": st.position, "velocity": st.velocity, "effort": st.effort,
                    "torque_enabled": st.torque_enabled}
        if command == "fault":
            servo.inject_fault(int(request["bits"]), now,
                               persistent=bool(request.get("persistent", False)))
            return {"ok": True}
        if command == "torque_writes":
            return {"writes": servo.torque_writes}
        if command == "watchdog":
            return {"value": servo.table[ct.BUS_WATCHDOG.address],
                    "expired_at": servo.watchdog_expired_at, "now": now}
        if command == "set_position":
            servo.set_position(float(request["position"]), now)
            return {"ok": True}
        if command == "register":
            fld = ct.FIELDS_BY_NAME[str(request["name"])]
            servo.sync(now)
            return {"value": servo._u(fld)}  # noqa: SLF001 - the emulator's own servo
        return {"error": f"unknown command {command!r}"}


def _serve_all(servers: Sequence[_Server], control_in: IO[str] | None,
               control_out: IO[str] | None, wake: int | None = None) -> None:
    """One select loop for the ports of ``servers`` (buses) and the control channel.

    Serves until every bus got ``quit`` or the parent is gone (the channel closed). A
    control request goes to the bus of its ``bus`` (the server's index, default 0:
    :func:`_dispatch`); ``quit`` ends that bus (its port removed), the others go on.
    ``wake``: the read end of a pipe, for a loop whose requests come as direct calls from
    other threads (:class:`_Thread`): a byte on it makes the loop look again at the
    ports and at which buses still run.
    """
    control = [control_in.fileno()] if control_in else []
    if wake is not None:
        control.append(wake)
    live = [s for s in servers if s.running]
    while live:
        now = time.monotonic()
        wait = min([1.0, *(_locked(s, s._wait, now) for s in live)])  # noqa: SLF001
        fds = [s.master for s in live if s.master >= 0] + control
        try:
            ready, _, _ = select.select(fds, [], [], max(0.0, wait))
        except (OSError, ValueError):
            continue  # a port closed by another thread's call meanwhile: look again
        if wake is not None and wake in ready:
            os.read(wake, 4096)
        for server in live:
            if server.running:
                server._ready(ready)  # noqa: SLF001
        if control_in is not None and control_in.fileno() in ready and not _on_control(
                servers, control_in, control_out):
            return  # the parent is gone
        for server in live:
            if not server.running:
                _locked(server, server.cleanup)
        live = [s for s in live if s.running]


def _on_control(servers: Sequence[_Server], control_in: IO[str],
                control_out: IO[str] | None) -> bool:
    """The request waiting on the control channel answered; False: the channel closed."""
    line = control_in.readline()
    if not line:
        return False
    answer = _control_line(servers, line)
    if control_out is not None:
        control_out.write(json.dumps(answer) + "\n")
        control_out.flush()
    return True


def _locked(server: _Server, call: Callable[..., Any], *args: Any) -> Any:  # noqa: ANN401
    """``call(*args)`` with ``server``'s lock held."""
    with server.lock:
        return call(*args)


def _control_line(servers: Sequence[_Server], line: str) -> dict[str, Any]:
    """The answer to one control request (a line of JSON): :func:`_dispatch`'s."""
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"error": str(exc)}
    if not isinstance(request, dict):
        return {"error": f"a control request is a JSON object, got {request!r}"}
    return _dispatch(servers, request)


def _dispatch(servers: Sequence[_Server], request: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to one control request from its bus's server (``{"error": ...}`` if none).

    The one way in for a request, whether a line of the process's channel
    (:func:`_control_line`) or a direct call (:class:`_Thread`); the bus's lock is held.
    """
    try:
        index = int(request.get("bus", 0))
        if not 0 <= index < len(servers):
            return {"error": f"no bus {index} in this emulator ({len(servers)} bus(es))"}
        server = servers[index]
        with server.lock:
            if not server.running:
                return {"error": f"bus {index} of this emulator is stopped"}
            return server._control(request)  # noqa: SLF001
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return {"error": str(exc)}


def run(config: EmulatorConfig, *, control: bool) -> int:
    """Serve until stdin closes (``control``) or Ctrl-C / SIGTERM (foreground)."""
    return run_servers([config], control=control)


def run_servers(configs: Sequence[EmulatorConfig], *, control: bool) -> int:
    """Serve the buses of ``configs`` in one loop, as :func:`run` serves one.

    Each config builds its bus's servos (configs whose servos move one physics world
    build them in that world). With ``control``, the first line on stdout is
    ``{"port": ...}`` (one bus) or ``{"ports": [...]}`` (several, in order); each control
    request names its ``bus``.
    """
    servers: list[_Server] = []
    try:
        for config in configs:  # one by one: those made are cleaned up if one fails
            servers.append(  # noqa: PERF401
                _Server(config, sys.stdin if control else None, sys.stdout if control else None))

        def _stop(*_: object) -> None:
            for server in servers:
                server.running = False
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, _stop)
        if control:
            ports = [s.port for s in servers]
            first = {"port": ports[0]} if len(ports) == 1 else {"ports": ports}
            sys.stdout.write(json.dumps(first) + "\n")
            sys.stdout.flush()
        else:
            for server in servers:
                ids = ", ".join(str(i) for i in sorted(server.bus.all_servos))
                print(f"emulated Dynamixel ids {ids} on {server.port}"  # noqa: T201
                      f" (baudrate {server.config.baudrate}); Ctrl-C to stop", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            _serve_all(servers, sys.stdin if control else None,
                       sys.stdout if control else None)
    finally:
        for server in servers:
            server.cleanup()
    return 0


# ---------------------------------------------------------------- the parent's handle


class _Host:
    """What serves a handle's bus (:class:`_Process`, :class:`_Thread`), shared by its buses'.

    ``release`` counts the handles done with it; the last one stops it.

    Attributes:
        ports: each bus's port, in the buses' order.
    """

    ports: list[str]

    def __init__(self, users: int) -> None:
        self._users = users
        self._count = threading.Lock()

    @property
    def pid(self) -> int | None:
        """The id of the process serving the buses (None once stopped)."""
        raise NotImplementedError

    @property
    def running(self) -> bool:
        """Whether it still serves."""
        raise NotImplementedError

    def call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one control request (:func:`_dispatch`'s, wherever it runs)."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop serving every bus (idempotent, never raises)."""
        raise NotImplementedError

    def release(self) -> None:
        """One bus's handle is done with it: the last one stops it."""
        with self._count:
            self._users -= 1
            last = self._users <= 0
        if last:
            self.stop()


class _Process(_Host):
    """A running emulator process serving one bus or several, and its control channel.

    Started as ``python -m module --control --config JSON``; its first line says its
    ports (``port``, or ``ports`` in the buses' order). It ends when the last bus's
    handle lets it go (:meth:`release`) or :meth:`stop`.
    """

    def __init__(self, module: str, config_json: str, timeout: float) -> None:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        try:
            self._process: subprocess.Popen[str] | None = subprocess.Popen(  # noqa: S603
                [sys.executable, "-m", module, "--control", "--config", config_json],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                start_new_session=True)
        except OSError as exc:
            raise TransportError(f"cannot start the Dynamixel emulator: {exc}") from None
        self._lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _terminate, self._process)
        atexit.register(self.stop)
        first = self._receive(timeout)
        ports = first["ports"] if isinstance(first.get("ports"), list) else [first.get("port")]
        if not ports or not all(isinstance(p, str) for p in ports):
            self.stop()
            raise TransportError(f"the Dynamixel emulator did not start: {first}")
        self.ports = [str(p) for p in ports]  # each one a str (checked above)
        super().__init__(len(ports))

    @property
    def pid(self) -> int | None:
        """The process's id (None once stopped)."""
        return self._process.pid if self._process else None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._process is not None and self._process.poll() is None

    def _receive(self, timeout: float) -> dict[str, Any]:
        process = self._process
        if process is None or process.stdout is None:
            raise TransportError("the Dynamixel emulator is stopped")
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        line = process.stdout.readline() if ready else ""
        if not line:
            raise TransportError("the Dynamixel emulator does not answer"
                                 f" (exit code {process.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The process's answer to one control request.

        Raises:
            TransportError: the process is stopped, gone or silent.
            ValueError: the request's error, as the process says it.
        """
        with self._lock:
            process = self._process
            if process is None or process.stdin is None:
                raise TransportError("the Dynamixel emulator is stopped")
            try:
                process.stdin.write(json.dumps(request) + "\n")
                process.stdin.flush()
            except OSError as exc:
                raise TransportError(f"the Dynamixel emulator is gone: {exc}") from None
            answer = self._receive(_CONTROL_TIMEOUT)
        if "error" in answer:
            raise ValueError(answer["error"])
        return answer

    def stop(self) -> None:
        """Stop the process (idempotent, never raises)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        _terminate(process)
        self._finalizer.detach()


class _Thread(_Host):
    """Buses served by a thread of this process: the process's loop, its requests direct calls.

    The same select loop over the buses' ptys as an emulator process's
    (:func:`_serve_all`), the same answers to the same requests (:func:`_dispatch`), made
    from the caller's thread under the buses' ``lock`` instead of as JSON lines. A call
    that unplugs or ends a bus wakes the loop (a pipe), which then closes its port. It
    ends when the last bus's handle lets it go (:meth:`release`) or :meth:`stop`: every
    port closed and removed, the thread joined.
    """

    def __init__(self, configs: Sequence[EmulatorConfig],
                 lock: AbstractContextManager[Any]) -> None:
        self._servers: list[_Server] = []
        try:
            with lock:  # the servos join a world other threads may be stepping
                for config in configs:  # one by one: those made are removed if one fails
                    self._servers.append(_Server(config, None, None, lock))
        except BaseException:
            for server in self._servers:
                server.cleanup()
            raise
        self.ports = [s.port for s in self._servers]
        super().__init__(len(self._servers))
        self._wake_r, self._wake_w = os.pipe()
        self._thread: threading.Thread | None = threading.Thread(
            target=_serve_all, args=(self._servers, None, None, self._wake_r),
            name="dynamixel-emulator", daemon=True)
        self._thread.start()
        atexit.register(self.stop)

    @property
    def pid(self) -> int | None:
        """This process's id (the emulator's; None once stopped)."""
        return os.getpid() if self.running else None

    @property
    def running(self) -> bool:
        """Whether the loop's thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def call(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one control request (as :meth:`_Process.call`'s).

        Raises:
            TransportError: the thread is stopped or gone.
            ValueError: the request's error.
        """
        if not self.running:
            raise TransportError("the Dynamixel emulator is stopped")
        answer = _dispatch(self._servers, request)
        for server in self._servers:
            if not server.running:  # ended (quit): its port closed and removed now
                _locked(server, server.cleanup)
        self._wake()  # a bus unplugged or ended: its port leaves the loop's select
        if "error" in answer:
            raise ValueError(answer["error"])
        return answer

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def stop(self) -> None:
        """Stop the thread, close and remove every port (idempotent, never raises)."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)
        for server in self._servers:
            server.running = False
        self._wake()
        thread.join(_CONTROL_TIMEOUT)
        for server in self._servers:
            with server.lock:
                server.cleanup()  # the loop's own, unless it was stuck: never raises
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)


class DynamixelEmulator:
    """A running emulator: one bus of an emulator process (what ``start_emulator`` returns).

    Attributes:
        transport: ``{"port": "/dev/pts/N", "baudrate": ...}`` for ``BusSpec.transport``.
    """

    def __init__(self, config: EmulatorConfig, timeout: float = _CONTROL_TIMEOUT, *,
                 module: str = "skel_ros.emulation.dynamixel",
                 process: _Host | None = None, bus: int | None = None) -> None:
        """Start ``python -m module --control --config JSON``, a process of its own.

        ``module`` serves the bus: this one, or one whose servos move a physics model
        (:mod:`skel_ros.physical`). With ``process`` (:func:`start_group`,
        :func:`start_in_thread`): bus ``bus`` of that process or thread instead, nothing
        started.
        """
        self.config = config
        self._host = _Process(module, config.to_json(), timeout) if process is None \
            else process
        self._bus = bus
        self._stopped = False
        self.transport: Mapping[str, Any] = {"port": self._host.ports[bus or 0],
                                             "baudrate": config.baudrate}

    @property
    def pid(self) -> int | None:
        """The emulator process's id (None once stopped)."""
        return None if self._stopped else self._host.pid

    @property
    def running(self) -> bool:
        """Whether the process is alive (and serves this bus)."""
        return not self._stopped and self._host.running

    def _call(self, **request: Any) -> dict[str, Any]:  # noqa: ANN401
        if self._stopped:
            raise TransportError("the Dynamixel emulator is stopped")
        if self._bus is not None:
            request["bus"] = self._bus
        return self._host.call(request)

    def state(self, actuator_id: int) -> MotorState:
        """The true shaft state of servo ``actuator_id``."""
        a = self._call(command="state", id=actuator_id)
        return MotorState(float(a["position"]), float(a["velocity"]), float(a["effort"]),
                          bool(a["torque_enabled"]))

    def inject_fault(self, actuator_id: int, bits: int, *, persistent: bool = False) -> None:
        """Set the servo's Hardware Error Status bits (0x20: overload ...).

        ``persistent``: the cause stays, so a reboot does not clear the error.
        """
        self._call(command="fault", id=actuator_id, bits=bits, persistent=persistent)

    def vanish(self, seconds: float) -> None:
        """Unplug the port for ``seconds`` (the servos keep power; see the module doc)."""
        self._call(command="vanish", seconds=seconds)

    def torque_writes(self, actuator_id: int) -> list[tuple[float, int]]:
        """Every Torque Enable value the servo accepted, with the emulator clock's time."""
        return [(float(t), int(v))
                for t, v in self._call(command="torque_writes", id=actuator_id)["writes"]]

    def watchdog(self, actuator_id: int) -> tuple[int, float | None]:
        """``(Bus Watchdog value, when it last expired or None)``.

        Times are the emulator's clock: ``time.monotonic``, the same as this process's.
        """
        a = self._call(command="watchdog", id=actuator_id)
        return int(a["value"]), None if a["expired_at"] is None else float(a["expired_at"])

    def set_position(self, actuator_id: int, position: float) -> None:
        """Put the servo's shaft at ``position`` (rad), at rest."""
        self._call(command="set_position", id=actuator_id, position=position)

    def register(self, actuator_id: int, name: str) -> int:
        """The value of control-table field ``name`` (e.g. ``"Operating Mode"``)."""
        return int(self._call(command="register", id=actuator_id, name=name)["value"])

    def counts(self) -> dict[str, int]:
        """Packets handled, CRC errors, garbage bytes seen."""
        return {k: int(v) for k, v in self._call(command="counts").items()}

    def stop(self) -> None:
        """Stop serving this bus: its process ends with its last bus (idempotent, never raises)."""
        if self._stopped:
            return
        self._stopped = True
        if self._bus is None:
            self._host.stop()
            return
        with contextlib.suppress(Exception):
            self._host.call({"command": "quit", "bus": self._bus})
        self._host.release()


def start_group(configs: Sequence[EmulatorConfig], module: str, config_json: str,
                timeout: float = _CONTROL_TIMEOUT) -> list[DynamixelEmulator]:
    """The buses of ``configs`` served by one process: a handle per bus, in order.

    ``python -m module --control --config config_json`` (its :func:`run_servers`: the
    ports first, each control request to its ``bus``). Each handle's :meth:`~DynamixelEmulator.
    stop` ends its bus; the last one ends the process.

    Raises:
        TransportError: the process did not start, or not with one port per bus.
    """
    process = _Process(module, config_json, timeout)
    if len(process.ports) != len(configs):
        process.stop()
        raise TransportError(f"the Dynamixel emulator serves {len(process.ports)} bus(es),"
                             f" not {len(configs)}")
    return [DynamixelEmulator(c, process=process, bus=k) for k, c in enumerate(configs)]


def start_in_thread(configs: Sequence[EmulatorConfig],
                    lock: AbstractContextManager[Any]) -> list[DynamixelEmulator]:
    """The buses of ``configs`` served by a thread of this process: a handle per bus, in order.

    The loop of an emulator process (:func:`run_servers`) on the buses' ptys (the driver
    opens the port as it opens a process's), for servos that move a physics world other
    threads of this process step: ``lock`` is that world's, held while a packet, a
    watchdog or a control request acts on the servos. Each handle's requests are direct
    calls; its :meth:`~DynamixelEmulator.stop` ends its bus, the last one the thread.

    Raises:
        ConfigError: a servo the configs cannot build (none served then).
    """
    host = _Thread(configs, lock)
    return [DynamixelEmulator(c, process=host, bus=k) for k, c in enumerate(configs)]


def _terminate(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(OSError, ValueError):
        if process.stdin:
            process.stdin.close()  # the emulator exits when its stdin closes
    try:
        process.wait(2.0)
    except subprocess.TimeoutExpired:
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(2.0)
    with contextlib.suppress(OSError, ValueError):
        if process.stdout:
            process.stdout.close()


def start(config: EmulatorConfig) -> DynamixelEmulator:
    """Start an emulator process."""
    return DynamixelEmulator(config)


EMULATOR_OPTIONS = frozenset({"initial_positions", "firmware", "return_delay_us", "wire_time",
                               "model"})


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> DynamixelEmulator:
    """Start emulated servos for ``actuators`` in their own process, on a pty.

    :func:`emulator_config` reads the arguments (below); :func:`start` starts the process.

    Args:
        transport: only ``baudrate`` is used (the port is the new pty).
        actuators: one servo per actuator (id; model, default XM430-W350; the
            ``torque_constant`` option).
        options: ``initial_positions`` ({id: rad}), ``firmware`` (every servo's, 0..255;
            default 48; < 45: no Fast Sync Read; < 38: no Bus Watchdog),
            ``return_delay_us`` (factory value 500; even, 0..508), ``wire_time`` (sleep
            as long as the bytes take at ``baudrate``; default false), ``model`` (for
            actuators without one).

    Returns:
        The running emulator; ``.transport`` reaches it, ``.stop()`` ends it (also at
        interpreter exit).

    Raises:
        ConfigError: unknown options, models or ids.
        TransportError: the process did not start.
    """
    return start(emulator_config(transport, actuators, options))


def emulator_config(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                    options: Mapping[str, Any],
                    known: frozenset[str] = EMULATOR_OPTIONS) -> EmulatorConfig:
    """What :func:`start_emulator` starts: its arguments, checked.

    ``known``: the options taken (a caller with options of its own adds them and reads
    them itself).

    Raises:
        ConfigError: unknown options, models or ids.
    """
    servos = []
    for act, name, _, position in servo_starts("Dynamixel emulator", actuators, options, known,
                                               default_model=ct.DEFAULT_MODEL,
                                               max_id=proto.MAX_ID,
                                               model_by_name=ct.model_by_name):
        kt = act.options.get("torque_constant")
        servos.append((act.id, name, position, None if kt is None else float(kt)))
    baudrate = int(transport.get("baudrate", 1_000_000))
    delay = return_delay_units(options.get("return_delay_us", 500), "Dynamixel emulator")
    firmware = options.get("firmware", DEFAULT_FIRMWARE)
    if isinstance(firmware, bool) or not isinstance(firmware, int) or not (
            0 <= firmware <= 255):  # noqa: PLR2004 - one byte
        raise ConfigError(f"Dynamixel emulator: firmware must be an integer in 0..255 (the"
                          f" Firmware Version byte), got {firmware!r}")
    return EmulatorConfig(tuple(servos), baudrate, firmware, delay,
                          bool(options.get("wire_time", False)))


def main(argv: Sequence[str] | None = None) -> int:
    """Run an emulator in this process (see the module docstring)."""
    parser = servo_parser("skel_ros.emulation.dynamixel", "Dynamixel", ct.DEFAULT_MODEL,
                          "1-12")
    parser.add_argument("--firmware", type=int, default=DEFAULT_FIRMWARE)
    parser.add_argument("--wire-time", action="store_true")
    parser.add_argument("--config", help="the whole configuration as JSON (internal)")
    parser.add_argument("--control", action="store_true", help="JSON control on stdin/stdout")
    args = parser.parse_args(argv)
    if args.config:
        config = EmulatorConfig.from_json(args.config)
    else:
        ids = servo_ids(parser, args.ids, proto.MAX_ID, "Dynamixel")
        if ct.model_by_name(args.model) is None:
            parser.error(f"unknown model {args.model!r}; known: {', '.join(ct.MODELS)}")
        config = EmulatorConfig(tuple((i, args.model, 0.0, None) for i in ids), args.baud,
                                args.firmware, DEFAULT_RETURN_DELAY, args.wire_time)
    return run(config, control=args.control)


if __name__ == "__main__":
    sys.exit(main())
