"""FeetechBus: every Feetech STS/SMS or SCS servo on one serial line.

One control cycle:

* :meth:`FeetechBus.write`: one **Sync Write** of Goal_Position (42, position mode) or
  Goal_Velocity (46, STS/SMS constant-speed mode) per series on the bus (STS/SMS fields
  are little-endian, SCS big-endian). Goals are sign-magnitude, each the nearest tick
  inside the actuator's limits and the servo's Min/Max_Angle_Limit (the next one inward
  when the nearest lies outside: :func:`~skel_ros.hardware.base.quantize_inward`).
* :meth:`FeetechBus.read`: one **Sync Read** of the 27 bytes Torque_Enable (40) .. Moving
  (66) of every STS/SMS servo (one status packet each), and one **READ** per SCS servo
  (SCS has no Sync Read).

**Never torque without a valid first read** (:meth:`FeetechBus.set_torque`): torque goes
on only after every servo of the bus answered a full read in that same call; the goals
written just before are the positions measured by it; a read that fails or misses a servo
leaves torque off and names the servo. :meth:`write` sends no goal before a complete
read since :meth:`open`.

**Multi-turn** (STS/SMS): a servo found in step mode (Operating_Mode 3), or in position
mode with Min_Angle_Limit = Max_Angle_Limit = 0 (Feetech's multi-turn setting), or
reporting a position outside its ticks, is corrected at open (bus option ``multi_turn:
correct``, the default: position mode, the angle limits of the YAML or the full range)
or refused (``multi_turn: refuse``, a ConfigError). A position outside the servo's range
is never reported as a position: :meth:`read` gives NaN with
:data:`~skel_ros.hardware.feetech.control_table.POSITION_RANGE_FAULT` set.

EEPROM (Return_Delay_Time, angle limits, Homing_Offset, Operating_Mode) is written only
where it differs from the YAML, with torque off, between Lock 0 and Lock 1.

Feetech servos have no communication watchdog: a bus with ``device_watchdog`` set is a
ConfigError (see docs/feetech.md, "The device's own safety").
"""

from __future__ import annotations

import contextlib
import logging
import math
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar

from skel_ros.hardware.base import (
    ActuatorBus,
    ActuatorCommand,
    ActuatorSpec,
    ActuatorState,
    BusSpec,
    ControlMode,
    quantize_inward,
)
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech import protocol as proto
from skel_ros.hardware.serial_link import (
    AnswerTime,
    PacketLink,
    clamp_goal,
    known,
    round_goal,
)
from skel_ros.hardware.transport import Transport, serial_transport

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

_LOG = logging.getLogger(__name__)
_T = TypeVar("_T")

# The read block, Torque_Enable (40) .. Moving (66), as the values a state needs: torque,
# (41..55 skipped), present position, velocity, load, voltage, temperature, (64), status,
# (moving). Goals and Lock are in it because one Sync Read covers one contiguous run.
_BLOCK_CODES: Final = "B15xHHHBBxBx"
BLOCK_LE: Final = struct.Struct("<" + _BLOCK_CODES)
BLOCK_BE: Final = struct.Struct(">" + _BLOCK_CODES)
_REPLY_SIZE: Final = proto.STATUS_OVERHEAD + ct.READ_SIZE
# One STS/SMS status packet of the block as a row: (header, id, length), the error byte,
# the block's values, (checksum). Header and checksum are checked by _SyncAnswer.
_PACKET_LE: Final = struct.Struct("<4xB" + _BLOCK_CODES + "x")
# The table read once per servo at open: Model_Number .. Moving.
_OPEN_SIZE: Final = ct.READ_START + ct.READ_SIZE
_ACTUATOR_OPTIONS: Final = frozenset({"homing_offset", "angle_limits", "acceleration",
                                      "goal_speed"})
_BUS_OPTIONS: Final = frozenset({"return_delay_us", "timeout", "multi_turn"})
_MULTI_TURN: Final = ("correct", "refuse")
_MAX_RETURN_DELAY: Final = ct.RETURN_DELAY_MAX * ct.RETURN_DELAY_UNIT
# What turns a servo's reading into its state: id, last tick, tick of 0 rad, rad per tick,
# N·m per Present_Load unit (one tuple per servo, unpacked by _states).
_Reading = tuple[int, int, int, float, float]
# Sign-magnitude signs: Present_Velocity's bit 15, Present_Load's bit 10 (below it, 10 bits).
_VELOCITY_SIGN: Final = 1 << 15
_LOAD_SIGN: Final = 1 << 10
_LOAD_MAGNITUDE: Final = _LOAD_SIGN - 1
# A Sync Write of one 2-byte goal each: LEN = 4 + 3 per servo must stay <= MAX_LENGTH.
MAX_SERVOS: Final = (proto.MAX_LENGTH - 4) // 3


@dataclass
class _Servo:
    """What the driver knows about one servo (completed at open)."""

    spec: ActuatorSpec
    model: ct.ModelInfo
    homing_offset: int | None  # the YAML's (None: leave the servo's)
    angle_limits: tuple[int, int] | None  # the YAML's (None: leave the servo's)
    acceleration: int | None
    goal_speed: int  # Goal_Velocity in position mode (0: the servo's maximum)
    goal_lo: int = 0  # the goal field's range: limits, inward
    goal_hi: int = 0
    clamp_logged: bool = False
    # What every cycle uses, taken out of the model once (plain attributes, no lookups).
    velocity_mode: bool = False
    big_endian: bool = False
    rad_per_tick: float = 0.0
    center: int = 0
    max_tick: int = 0
    effort_scale: float = 0.0  # N·m per Present_Load unit
    block: struct.Struct = BLOCK_LE
    reading: _Reading = (0, 0, 0, 0.0, 0.0)

    def __post_init__(self) -> None:
        model = self.model
        self.velocity_mode = self.spec.mode is ControlMode.VELOCITY
        self.big_endian = model.protocol_end == 1
        self.rad_per_tick, self.center, self.max_tick = (model.rad_per_tick, model.center,
                                                         model.max_tick)
        self.effort_scale = ct.LOAD_UNIT * model.stall_torque
        self.block = BLOCK_BE if self.big_endian else BLOCK_LE
        self.reading = (self.spec.id, self.max_tick, self.center, self.rad_per_tick,
                        self.effort_scale)


class _SyncAnswer:
    """The Sync Read answer of a bus's STS/SMS servos, checked and split in a few calls.

    What does not change from cycle to cycle is worked out once, for the ids asked: the
    answer's size, each packet's expected header (``FF FF``, id, length) and where each
    packet's checksummed bytes lie. A complete, clean answer is then one ``struct`` unpack
    of the headers, one ``sum`` per packet and one ``iter_unpack`` of the values; anything
    else (noise, a bad checksum, a short answer) goes to the packet parser instead.
    """

    def __init__(self, ids: Sequence[int]) -> None:
        self.size = len(ids) * _REPLY_SIZE
        self._heads = struct.Struct("<" + f"4s{_REPLY_SIZE - 4}x" * len(ids))
        self._expected = tuple(bytes((0xFF, 0xFF, i, ct.READ_SIZE + 2)) for i in ids)
        # ID .. checksum of each packet: their sum's low byte is 0xFF when the checksum
        # (proto.checksum: the complement of the low byte of ID .. last data byte) holds.
        self._checked = tuple(slice(at + 2, at + _REPLY_SIZE)
                              for at in range(0, self.size, _REPLY_SIZE))

    def rows(self, raw: bytes) -> Iterator[tuple[int, ...]] | None:
        """Per servo ``(error, *block values)`` of a complete, clean answer, else None."""
        if len(raw) != self.size or self._heads.unpack(raw) != self._expected:
            return None
        for checked in self._checked:
            if sum(raw[checked]) & 0xFF != 0xFF:  # noqa: PLR2004 - see __init__
                return None
        return _PACKET_LE.iter_unpack(raw)


class FeetechBus(ActuatorBus):
    """Feetech STS/SMS and SCS servos on one serial line (see the module doc).

    Args:
        spec: the bus (``transport``: ``port``, ``baudrate``, optional ``timeout``).
        actuators: the servos (``model`` names the variant, default STS3215-C001).
        clock: monotonic seconds (stamps of the states).
        transport: a transport to use instead of opening ``spec.transport`` (tests).

    Raises:
        ConfigError: bad ids, options, models, a mode the model cannot run, a
            ``device_watchdog`` (Feetech servos have none).
    """

    protocol: ClassVar[str] = "feetech"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],
                 clock: Callable[[], float] = time.monotonic,
                 transport: Transport | None = None) -> None:
        super().__init__(spec, actuators, clock)
        self._where = f"bus {spec.name!r} ({spec.transport.get('port', '?')})"
        unknown = set(spec.options) - _BUS_OPTIONS
        if unknown:
            raise ConfigError(f"{self._where}: unknown Feetech bus option(s)"
                              f" {sorted(unknown)}; known: {sorted(_BUS_OPTIONS)}")
        if spec.device_watchdog > 0:
            raise ConfigError(
                f"{self._where}: device_watchdog {spec.device_watchdog:g} s: Feetech STS/SMS"
                " and SCS servos have no communication watchdog, so nothing would stop them"
                " when the host dies; set device_watchdog: 0 to drive them without one"
                " (docs/feetech.md, \"The device's own safety\")")
        self._transport = transport or serial_transport(spec.transport, self._where)
        self._time = AnswerTime(spec, self._where, _MAX_RETURN_DELAY)
        self._timeout = self._time.timeout
        self.timeout, self.baudrate = self._time.fixed, self._time.baudrate  # s or None, baud
        self._return_delay = return_delay_units(spec.options.get("return_delay_us", 0),
                                                 self._where)
        self._multi_turn = spec.options.get("multi_turn", "correct")
        if self._multi_turn not in _MULTI_TURN:
            raise ConfigError(f"{self._where}: multi_turn must be correct or refuse, got"
                              f" {self._multi_turn!r}")
        if len(actuators) > MAX_SERVOS:
            raise ConfigError(f"{self._where}: {len(actuators)} servos: one Sync Write carries"
                              f" the goals of at most {MAX_SERVOS}; split them over buses")
        self._servos = {a.id: self._servo(a) for a in actuators}
        self._ids = [a.id for a in actuators]
        self._sts = [i for i in self._ids if self._servos[i].model.series == "sts"]
        self._sts_readings = [self._servos[i].reading for i in self._sts]
        self._scs = [i for i in self._ids if self._servos[i].model.series == "scs"]
        self._open = False
        self._verified = False  # a complete read since open: goals may be written
        self._drop_logged = False
        self._open_faults: dict[int, int] = {}  # status bytes found at open, until reported
        # Any packet from an asked id is its answer (the format does not mark status
        # packets); a second one is ignored.
        self._link = PacketLink(self._transport, proto.PacketReader(), self._where, _LOG,
                                refuse_twice=False, timeout_tail=_within,
                                monotonic=time.monotonic)
        # The link's calls, under the names the protocol code uses.
        self._send, self._receive = self._link.send, self._link.receive
        self._attempts = self._link.attempts
        self._sync_read = proto.sync_read(ct.READ_START, ct.READ_SIZE, self._sts)
        self._sync_answer = _SyncAnswer(self._sts)
        self._sync_timeout = self._timeout(len(self._sync_read), len(self._sts) * _REPLY_SIZE,
                                           len(self._sts))
        self.stats = self._link.stats
        self.stats["goal_writes"] = 0

    def _servo(self, spec: ActuatorSpec) -> _Servo:  # noqa: C901 - one check per option
        where = f"{self._where}: actuator {spec.name or spec.id!r} (id {spec.id})"
        if not 0 <= spec.id <= proto.MAX_ID:
            raise ConfigError(f"{where}: Feetech ids are 0..{proto.MAX_ID}")
        unknown = set(spec.options) - _ACTUATOR_OPTIONS
        if unknown:
            raise ConfigError(f"{where}: unknown Feetech option(s) {sorted(unknown)};"
                              f" known: {sorted(_ACTUATOR_OPTIONS)}")
        model = ct.model_by_name(spec.model)
        if model is None:
            raise ConfigError(f"{where}: unknown Feetech model {spec.model!r}; known:"
                              f" {', '.join(ct.MODELS)} (STS3215 means STS3215-C001)")
        if spec.mode not in (ControlMode.POSITION, ControlMode.VELOCITY):
            raise ConfigError(f"{where}: Feetech servos have no {spec.mode.value} mode"
                              " (position, or velocity on STS/SMS)")
        if spec.mode is ControlMode.VELOCITY and model.series != "sts":
            raise ConfigError(f"{where}: {model.name} has no constant-speed mode")
        opts = spec.options
        offset = opts.get("homing_offset")
        if offset is not None:
            if model.series != "sts":
                raise ConfigError(f"{where}: {model.name} has no Homing_Offset (SCS series)")
            offset = _integer(offset, "homing_offset", where, -ct.HOMING_OFFSET_MAX,
                              ct.HOMING_OFFSET_MAX)
        limits = opts.get("angle_limits")
        if limits is not None:
            if not (isinstance(limits, (list, tuple)) and len(limits) == 2):  # noqa: PLR2004
                raise ConfigError(f"{where}: angle_limits must be [min, max] ticks, got"
                                  f" {limits!r}")
            lo = _integer(limits[0], "angle_limits", where, 0, model.max_tick)
            hi = _integer(limits[1], "angle_limits", where, 0, model.max_tick)
            if lo >= hi:
                raise ConfigError(f"{where}: angle_limits [{lo}, {hi}]: min must be below max")
            limits = (lo, hi)
        acceleration = opts.get("acceleration")
        if acceleration is not None:
            acceleration = _integer(acceleration, "acceleration", where, 0, 254)
        speed = opts.get("goal_speed", 0.0)
        if isinstance(speed, bool) or not isinstance(speed, (int, float)) or speed < 0:
            raise ConfigError(f"{where}: goal_speed must be a number >= 0 (rad/s; 0: the"
                              f" servo's maximum), got {speed!r}")
        goal_speed = min(round(speed / model.rad_per_tick), 0x7FFF)
        return _Servo(spec, model, offset, limits, acceleration, goal_speed)

    # ---------------------------------------------------------------- properties

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded and :meth:`close` was not called since."""
        return self._open

    @property
    def transport(self) -> Transport:
        """The byte transport."""
        return self._transport

    def model_of(self, servo_id: int) -> ct.ModelInfo:
        """The servo's model (the YAML's, checked against Model_Number at open)."""
        return self._servos[servo_id].model

    # ---------------------------------------------------------------- open / close

    def open(self, *, keep_torque: bool = False) -> None:
        """Open the port, find and check every servo, configure it.

        Per servo, before writing anything: a PING and one READ of its table up to
        Moving (66): model number, firmware, EEPROM settings, torque, status, position.
        Then (unless it keeps its torque) torque off, EEPROM written where it differs
        (Lock 0 .. Lock 1), Acceleration where the YAML gives one. ``keep_torque``: a
        servo found with torque on, no error and nothing to change keeps its torque and
        its goal. Then one read.

        Raises:
            TransportError: the port cannot be opened.
            TransportTimeoutError: a servo does not answer (names it and who answered).
            DeviceError: another model than configured; a setting not taken.
            ConfigError: a multi-turn servo with ``multi_turn: refuse``; limits that
                do not overlap the servo's.
        """
        self._open = False
        self._verified = False
        self._open_faults = {}
        self._transport.open()
        try:
            self._link.dirty = True
            self._time.reply_delay = _MAX_RETURN_DELAY
            self._find_servos()
            held = [i for i in self._ids
                    if self._configure(self._servos[i], keep_torque=keep_torque)]
            self._time.reply_delay = self._return_delay * ct.RETURN_DELAY_UNIT
            self._sync_timeout = self._timeout(len(self._sync_read),
                                               len(self._sts) * _REPLY_SIZE, len(self._sts))
            self._open = True
            self._attempts(self.read)
        except HardwareError:
            self._open = False
            self._transport.close()
            raise
        if held:
            _LOG.info("%s: id(s) %s still held torque: kept, with their goals", self._where, held)

    def _find_servos(self) -> None:
        missing = []
        for servo_id in self._ids:
            try:
                self._attempts(self.ping, servo_id)
            except TransportTimeoutError:  # noqa: PERF203 - one try per id
                missing.append(servo_id)
        if not missing:
            return
        answered = [i for i in self._ids if i not in missing]
        which = f"id {missing[0]} did" if len(missing) == 1 else f"ids {missing} did"
        hint = "" if answered else " (check power, wiring, baud rate and port)"
        raise TransportTimeoutError(f"{self._where}: {which} not answer at {self.baudrate}"
                                    f" baud; configured ids that answered: {answered}{hint}")

    def _configure(self, servo: _Servo, *, keep_torque: bool) -> bool:  # noqa: C901, PLR0912
        """Check and configure one servo; whether it kept its torque (see :meth:`open`)."""
        servo_id, model = servo.spec.id, servo.model
        table = self._attempts(self.read_register, servo_id, 0, _OPEN_SIZE)
        value = _reader(table, model)
        number = value(ct.MODEL_NUMBER)
        if number != model.model_number:
            other = int.from_bytes(table[3:5], "big" if model.protocol_end == 0 else "little")
            found = ct.model_name(number) or ct.model_name(other) or f"model number {number}"
            raise DeviceError(f"{self._where}: id {servo_id} is {found}, the configuration"
                              f" says {model.name}", servo_id)
        level = table[ct.RESPONSE_STATUS_LEVEL.address]
        torque = table[ct.TORQUE_ENABLE.address]
        status = table[ct.STATUS.address]
        lo, hi = value(ct.MIN_ANGLE_LIMIT), value(ct.MAX_ANGLE_LIMIT)
        mode = table[ct.OPERATING_MODE.address] if model.series == "sts" else ct.MODE_POSITION
        present = ct.decode_sm(value(ct.PRESENT_POSITION), 15)
        want_mode = ct.MODE_VELOCITY if servo.velocity_mode else ct.MODE_POSITION
        multi_turn = model.series == "sts" and (mode == ct.MODE_STEP or (
            mode == ct.MODE_POSITION and lo == hi == 0) or not 0 <= present <= model.max_tick)
        if multi_turn and self._multi_turn == "refuse":
            raise ConfigError(
                f"{self._where}: id {servo_id} ({model.name}) is set to multi-turn (Operating_Mode"
                f" {mode}, Min/Max_Angle_Limit {lo}/{hi}, Present_Position {present}); its"
                " positions are not joint positions. Set it to position mode with angle limits"
                " (or bus option multi_turn: correct)")
        eeprom: list[tuple[ct.Field, int]] = []
        if table[ct.RETURN_DELAY_TIME.address] != self._return_delay:
            eeprom.append((ct.RETURN_DELAY_TIME, self._return_delay))
        if model.series == "sts" and mode != want_mode:
            eeprom.append((ct.OPERATING_MODE, want_mode))
        want_limits = servo.angle_limits or ((0, model.max_tick) if multi_turn else (lo, hi))
        if (lo, hi) != want_limits:
            eeprom += [(ct.MIN_ANGLE_LIMIT, want_limits[0]), (ct.MAX_ANGLE_LIMIT, want_limits[1])]
        if servo.homing_offset is not None and (
                ct.decode_sm(value(ct.HOMING_OFFSET), 11) != servo.homing_offset):
            eeprom.append((ct.HOMING_OFFSET, ct.encode_sm(servo.homing_offset, 11)))
        if multi_turn:
            _LOG.warning("%s: id %d was set to multi-turn (Operating_Mode %d, angle limits"
                         " %d/%d): correcting it to position mode, angle limits %d/%d",
                         self._where, servo_id, mode, lo, hi, *want_limits)
        self._set_limits(servo, want_limits)
        hold = keep_torque and torque == 1 and status == 0 and not eeprom and level
        if keep_torque and torque == 1 and not hold:
            _LOG.warning("%s: id %d held torque but needs reconfiguring (%s): switching its"
                         " torque off", self._where, servo_id,
                         ct.describe_error(status) if status else
                         ", ".join(f.name for f, _ in eeprom) or "Response_Status_Level 0")
        if hold:
            return True
        if status:  # the torque off below acknowledges it: say so now, and in clear_faults
            self._open_faults[servo_id] = status
            _LOG.warning("%s: id %d reports %s at open; torque off written (it clears a"
                         " protection whose cause is gone)", self._where, servo_id,
                         ct.describe_error(status))
        order = model.byte_order
        if not level:  # it answers READ and PING only: make it answer writes first
            self._write_eeprom(servo, [(ct.RESPONSE_STATUS_LEVEL, 1)], answered=False)
        self._attempts(self.write_register, servo_id, ct.TORQUE_ENABLE.address, b"\x00")
        if eeprom:
            self._write_eeprom(servo, eeprom)
        if servo.acceleration is not None:
            self._attempts(self.write_register, servo_id, ct.ACCELERATION.address,
                           bytes((servo.acceleration,)))
        if not servo.velocity_mode:  # the speed a position goal is approached at
            self._attempts(self.write_register, servo_id, ct.GOAL_VELOCITY.address,
                           servo.goal_speed.to_bytes(2, order))
        return False

    def _write_eeprom(self, servo: _Servo, values: Sequence[tuple[ct.Field, int]], *,
                      answered: bool = True) -> None:
        """Write EEPROM fields between Lock 0 and Lock 1 (torque is off)."""
        servo_id, lock = servo.spec.id, servo.model.lock.address
        order = servo.model.byte_order
        write = self._attempts if answered else _once
        write(self.write_register, servo_id, lock, bytes((ct.UNLOCKED,)), answered)
        for fld, raw in values:
            _LOG.info("%s: id %d: writing %s = %d (EEPROM)", self._where, servo_id, fld.name, raw)
            write(self.write_register, servo_id, fld.address, raw.to_bytes(fld.size, order),
                  answered)
        self._attempts(self.write_register, servo_id, lock, bytes((ct.LOCKED,)))

    def _set_limits(self, servo: _Servo, angle_limits: tuple[int, int]) -> None:
        """The goal range the YAML's limits and the servo's angle limits allow."""
        model, lim = servo.model, servo.spec.limits
        if servo.velocity_mode:
            top = min(round(model.no_load_speed / model.rad_per_tick), 0x7FFF)
            own, (lower, upper), scale, offset, unit = ((-top, top), lim.velocity,
                                                        model.rad_per_tick, 0, "rad/s")
        else:
            own, (lower, upper), scale, offset, unit = (angle_limits, lim.position,
                                                        model.rad_per_tick, -model.center, "rad")
        lo = quantize_inward(lower, scale, lower, upper, offset) if math.isfinite(lower) else own[0]
        hi = quantize_inward(upper, scale, lower, upper, offset) if math.isfinite(upper) else own[1]
        servo.goal_lo, servo.goal_hi = max(lo, own[0]), min(hi, own[1])
        if servo.goal_lo > servo.goal_hi:
            raise ConfigError(
                f"{self._where}: id {servo.spec.id}: the limits [{lower:g}, {upper:g}] {unit}"
                f" lie outside what the servo allows [{(own[0] + offset) * scale:g},"
                f" {(own[1] + offset) * scale:g}] {unit}")

    def close(self, *, torque_off: bool = True) -> None:
        """Close the port; first torque off (one Sync Write, unverified) if ``torque_off``."""
        if self._open and torque_off and self._ids:
            try:
                self._send(proto.sync_write(ct.TORQUE_ENABLE.address, 1,
                                            dict.fromkeys(self._ids, b"\x00")))
            except HardwareError as exc:
                _LOG.warning("%s: torque off at close failed: %s", self._where, exc)
        self._open = False
        self._verified = False
        self._transport.close()

    def clear_faults(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """Servos whose status reports a protection: torque off written, status read again.

        Feetech documents no fault-reset instruction: a protection (overload, overheating,
        voltage, overcurrent, angle sensor) unloads the servo, and its status shows the
        condition. Writing Torque_Enable 0 acknowledges it; the status is then read again
        and what remains is said. Torque stays off. A protection :meth:`open` found (its
        torque off acknowledged it already) is said too, once.
        """
        self._require_open()
        targets = list(self._ids if ids is None else ids)
        for servo_id in targets:
            self._known(servo_id)
        before = self._attempts(self.read)
        faulty = [i for i in targets if before[i].error_code & 0xFF]
        for servo_id in faulty:
            self._attempts(self.write_register, servo_id, ct.TORQUE_ENABLE.address, b"\x00")
        after = self._attempts(self.read) if faulty else before
        answers = {}
        for servo_id in targets:
            found = self._open_faults.pop(servo_id, 0)
            if servo_id not in faulty:
                answers[servo_id] = (f"{ct.describe_error(found)} found at open, where torque"
                                     " off was written; no error now" if found else
                                     "no fault; nothing done")
                continue
            now = after[servo_id].error_code & 0xFF
            left = f"still reports {ct.describe_error(now)}" if now else "no error now"
            answers[servo_id] = f"torque off written ({before[servo_id].fault}); {left}"
        return answers

    # ---------------------------------------------------------------- cycle

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """Torque on or off, verified by one read.

        On: first a full read of every servo of the bus (retried); a servo that does not
        answer leaves torque off and is named. Then the goals of the servos switched on
        are written as the positions that read measured (velocity 0 in constant-speed
        mode), then Torque_Enable.

        Raises:
            TransportTimeoutError: a servo did not answer the first read (named).
            DeviceError: a servo did not take the new state.
        """
        self._require_open()
        targets = list(self._ids if ids is None else ids)
        for servo_id in targets:
            self._known(servo_id)
        if enabled and targets:
            self._verified = False
            try:
                states = self._attempts(self.read)
            except HardwareError as exc:
                raise type(exc)(f"{exc}; torque left off: every servo must answer a full"
                                " read first") from None
            self._verified = True
            stops: dict[int, ActuatorCommand] = {}
            for servo_id in targets:
                servo = self._servos[servo_id]
                stops[servo_id] = (ActuatorCommand(velocity=0.0) if servo.velocity_mode
                                   else ActuatorCommand(position=states[servo_id].position))
            self.write(stops)
        value = b"\x01" if enabled else b"\x00"
        packet = proto.sync_write(ct.TORQUE_ENABLE.address, 1, dict.fromkeys(targets, value))
        self._link.switch_torque(packet, self.read, targets, enabled=enabled)

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """Sync Write the goals (NaN: that servo keeps its goal); none before a full read."""
        self._require_open()
        if not self._verified:
            if commands and not self._drop_logged:
                self._drop_logged = True
                _LOG.warning("%s: goals dropped: no complete read of every servo yet",
                             self._where)
            return
        little: list[int] = []
        big: list[int] = []
        velocity_little: list[int] = []
        servos = self._servos
        for servo_id, command in commands.items():
            servo = servos.get(servo_id) or self._known(servo_id)
            velocity_mode = servo.velocity_mode
            value = command.velocity if velocity_mode else command.position
            if math.isnan(value):  # this servo keeps its goal
                continue
            ticks = round_goal(value / servo.rad_per_tick)
            raw = ticks if velocity_mode else ticks + servo.center
            if not servo.goal_lo <= raw <= servo.goal_hi:
                raw = clamp_goal(servo, raw, self._where, _LOG)
            target = velocity_little if velocity_mode else big if servo.big_endian else little
            target += (servo_id, raw if raw >= 0 else -raw | 0x8000)  # sign-magnitude, bit 15
        for flat, address, big_endian in ((little, ct.GOAL_POSITION.address, False),
                                          (big, ct.GOAL_POSITION.address, True),
                                          (velocity_little, ct.GOAL_VELOCITY.address, False)):
            if flat:
                self._send(proto.sync_write_words(address, flat, big_endian=big_endian))
                self.stats["goal_writes"] += 1

    def read(self) -> dict[int, ActuatorState]:
        """Every servo's present values: one Sync Read (STS/SMS), one READ per SCS servo.

        Raises:
            TransportTimeoutError: a servo did not answer (the message names it).
            ProtocolError: a malformed answer.
        """
        self._require_open()
        states = self._read_sts() if self._sts else {}
        for servo_id in self._scs:
            servo = self._servos[servo_id]
            error, block = self.read_register(servo_id, ct.READ_START, ct.READ_SIZE, status=True)
            states.update(_states((servo.reading,), ((error, *servo.block.unpack(block)),),
                                  self.clock()))
        if len(self._ids) > 1 and self._scs and self._sts:
            states = {i: states[i] for i in self._ids}
        self._verified = True
        return states

    def _read_sts(self) -> dict[int, ActuatorState]:
        ids, answer = self._sts, self._sync_answer
        self._send(self._sync_read)
        timeout = self._sync_timeout
        deadline = time.monotonic() + timeout
        try:
            raw = self._transport.read(answer.size, timeout)
        except TransportError:
            self._link.dirty = True
            raise TransportTimeoutError(f"{self._where}: Sync Read: no answer from id(s)"
                                        f" {ids} within {timeout * 1e3:.0f} ms") from None
        stamp = self.clock()
        rows = answer.rows(raw)
        if rows is None:  # noise, a bad checksum, a partial answer: the packet parser
            got = self._receive(ids, answer.size, "Sync Read", timeout, raw, deadline=deadline)
            stamp = self.clock()
            if any(len(got[i].params) != ct.READ_SIZE for i in ids):
                self._link.dirty = True
                raise ProtocolError(f"{self._where}: Sync Read: answers of"
                                    f" {[len(got[i].params) for i in ids]} bytes, expected"
                                    f" {ct.READ_SIZE} each")
            rows = [(got[i].code, *BLOCK_LE.unpack(got[i].params)) for i in ids]
        return _states(self._sts_readings, rows, stamp)

    # ---------------------------------------------------------------- single instructions

    def ping(self, servo_id: int) -> int:
        """PING one servo: its status byte."""
        request = proto.ping(servo_id)
        self._send(request)
        packet = self._receive([servo_id], proto.STATUS_OVERHEAD, "PING",
                               self._timeout(len(request), proto.STATUS_OVERHEAD))[servo_id]
        return packet.code

    def read_register(self, servo_id: int, address: int, size: int, *,
                      status: bool = False) -> Any:  # noqa: ANN401 - bytes, or (error, bytes)
        """READ ``size`` bytes at ``address``; with ``status`` also its status byte."""
        request = proto.read(servo_id, address, size)
        self._send(request)
        reply = proto.STATUS_OVERHEAD + size
        packet = self._receive([servo_id], reply, "READ",
                               self._timeout(len(request), reply))[servo_id]
        if len(packet.params) != size:
            self._link.dirty = True
            raise ProtocolError(f"{self._where}: id {servo_id}: READ {address} answered"
                                f" {len(packet.params)} bytes, asked {size}")
        return (packet.code, packet.params) if status else packet.params

    def write_register(self, servo_id: int, address: int, data: bytes,
                       answered: bool = True) -> None:  # noqa: FBT001, FBT002
        """WRITE ``data`` at ``address`` and wait for the status (unless not ``answered``)."""
        request = proto.write(servo_id, address, data)
        self._send(request)
        if answered:
            self._receive([servo_id], proto.STATUS_OVERHEAD, "WRITE",
                          self._timeout(len(request), proto.STATUS_OVERHEAD))

    def _require_open(self) -> None:
        if not self._open:
            raise TransportError(f"{self._where}: not open")

    def _known(self, servo_id: int) -> _Servo:
        return known(self._servos, servo_id, self._where)


def _states(readings: Sequence[_Reading], rows: Iterable[tuple[int, ...]],
            stamp: float) -> dict[int, ActuatorState]:
    """The servos' states from their rows: the status byte, then the read block's values.

    The one place a reading becomes a state, run for every servo every cycle: the
    sign-magnitude fields are decoded inline (as :func:`ct.decode_sm` does), the position
    only when it is not a plain tick of the servo's range.
    """
    states = {}
    for (servo_id, max_tick, center, rad_per_tick, effort_scale), (
            error, torque, position, velocity, load, voltage, temperature, status) in zip(
            readings, rows, strict=True):
        code = error | status
        # Negative (bit 15) or beyond one turn: decoded only then.
        tick = position if position <= max_tick else ct.decode_sm(position, 15)
        if 0 <= tick <= max_tick:
            rad = (tick - center) * rad_per_tick
        else:  # multi-turn: not a joint position
            rad = math.nan
            code |= ct.POSITION_RANGE_FAULT
        # ActuatorState's fields in their order (by position: a quarter of the call's cost):
        # position, velocity, effort, torque_enabled, error_code, fault, temperature,
        # voltage, stamp.
        states[servo_id] = ActuatorState(
            rad,
            (velocity if velocity < _VELOCITY_SIGN else _VELOCITY_SIGN - velocity) * rad_per_tick,
            (-(load & _LOAD_MAGNITUDE) if load & _LOAD_SIGN else load & _LOAD_MAGNITUDE)
            * effort_scale,
            torque == 1,
            code,
            ct.describe_error(code) if code else "",
            float(temperature),
            voltage * ct.VOLTAGE_UNIT,
            stamp,
        )
    return states


def _once(request: Callable[..., _T], *args: Any) -> _T:  # noqa: ANN401
    with contextlib.suppress(TransportTimeoutError):
        return request(*args)
    return None  # type: ignore[return-value]


def _reader(table: bytes, model: ct.ModelInfo) -> Callable[[ct.Field], int]:
    def value(fld: ct.Field) -> int:
        return int.from_bytes(table[fld.address:fld.address + fld.size], model.byte_order)

    return value


def _within(partial: bool, timeout: float, exc: BaseException) -> str:  # noqa: ARG001, FBT001
    """The end of the message of a missing answer: the request's timeout."""
    return f" within {timeout * 1e3:.0f} ms"


def return_delay_units(value: Any, where: str) -> int:  # noqa: ANN401 - YAML value
    """Return_Delay_Time's value for ``return_delay_us`` (2 µs units, so even only)."""
    top = ct.RETURN_DELAY_MAX * 2
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise ConfigError(f"{where}: return_delay_us must be an integer in 0..{top},"
                          f" got {value!r}")
    if value % 2:
        raise ConfigError(f"{where}: return_delay_us {value} is not a multiple of 2 µs, the"
                          f" unit of Return_Delay_Time; use {value - 1} or {value + 1}")
    return int(value) // 2


def _integer(value: Any, name: str, where: str, lo: int, hi: int) -> int:  # noqa: ANN401
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigError(f"{where}: {name} must be an integer in {lo}..{hi}, got {value!r}")
    return int(value)
