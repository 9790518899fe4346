"""DynamixelBus: every Dynamixel X-series servo on one serial line (Protocol 2.0).

One control cycle is two packets:

* :meth:`DynamixelBus.write`: one **Sync Write** per goal kind present (Goal Position 116
  in position modes, Goal Velocity 104, Goal Current 102); usually all servos share a
  mode, so one packet. Goals outside the servo's own limit fields (read at open) are
  clamped to them and logged once per servo.
* :meth:`DynamixelBus.read`: one **Fast Sync Read** (firmware >= 45; one status packet
  for all servos) or **Sync Read** (one status packet per servo) of 15 bytes at Indirect
  Data 1 (224). At open, Indirect Address 1..15 (168..197) are pointed at Hardware Error
  Status (70), Torque Enable (64), Present Current (126, 2), Present Velocity (128, 4),
  Present Position (132, 4), Present Input Voltage (144, 2) and Present Temperature
  (146): everything the manager needs in one contiguous read of 15 bytes, instead of
  21 bytes at 126..146 plus a second read for 64 and 70.

Units: see :mod:`skel_ros.hardware.dynamixel.control_table`. Per actuator ``options``
in the YAML: ``torque_constant`` (N·m/A; default: the model's stall torque / stall
current) and ``operating_mode`` (``position`` | ``extended_position`` |
``current_based_position`` for POSITION actuators). Bus ``options``: ``fast_sync_read``
(``auto`` (default) | true | false), ``return_delay_us`` (written at open, default 0),
``timeout`` (s per answer, default: the transport's ``timeout`` or 0.05).

Garbage bytes before or between status packets are skipped (counted in
:attr:`DynamixelBus.stats`); a packet with a bad CRC raises ProtocolError, a status
packet with an error raises DeviceError, missing answers TransportTimeoutError.

Speed: :meth:`DynamixelBus.read` asks the transport for the whole expected answer at
once; when it arrives complete and clean (headers, ids in order, lengths, CRCs: the
common case) one ``struct`` unpack decodes every servo. Anything else (a split read,
garbage, byte stuffing, a missing servo) goes through the packet reader.
"""

from __future__ import annotations

import logging
import math
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from skel_ros.hardware.base import (
    ActuatorBus,
    ActuatorCommand,
    ActuatorSpec,
    ActuatorState,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as proto
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)
from skel_ros.hardware.transport import Transport, serial_transport

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

_LOG = logging.getLogger(__name__)

DEFAULT_TIMEOUT: Final = 0.05
# The block read every cycle, through Indirect Address 1..15 -> Indirect Data 1..15.
READ_FIELDS: Final = (ct.HARDWARE_ERROR_STATUS, ct.TORQUE_ENABLE, ct.PRESENT_CURRENT,
                      ct.PRESENT_VELOCITY, ct.PRESENT_POSITION, ct.PRESENT_INPUT_VOLTAGE,
                      ct.PRESENT_TEMPERATURE)
READ_STRUCT: Final = struct.Struct("<BBhiiHB")
_READ_CODES: Final = READ_STRUCT.format[1:]
READ_ADDRESS: Final = ct.INDIRECT_DATA_1
READ_SIZE: Final = READ_STRUCT.size
INDIRECT_TARGETS: Final = tuple(a for f in READ_FIELDS
                                for a in range(f.address, f.address + f.size))

_POSITION_MODES: Final = {"position": ct.MODE_POSITION,
                          "extended_position": ct.MODE_EXTENDED_POSITION,
                          "current_based_position": ct.MODE_CURRENT_BASED_POSITION}
_ACTUATOR_OPTIONS: Final = frozenset({"torque_constant", "operating_mode"})
_BUS_OPTIONS: Final = frozenset({"fast_sync_read", "return_delay_us", "timeout"})
_EXTENDED_RANGE: Final = 1_048_575
_STATUS: Final = int(proto.Instruction.STATUS)
_NO_ERROR: Final = frozenset({0, proto.ALERT})  # error bytes without a status error
# Module constants as plain globals for the per-cycle paths.
_CENTER_TICK: Final = ct.CENTER_TICK
_RAD_PER_TICK: Final = ct.RAD_PER_TICK
_RAD_S_PER_VELOCITY_UNIT: Final = ct.RAD_S_PER_VELOCITY_UNIT
_VOLTAGE_UNIT: Final = ct.VOLTAGE_UNIT
_MODE_VELOCITY: Final = ct.MODE_VELOCITY
_MODE_CURRENT: Final = ct.MODE_CURRENT
_GOAL_POSITION_AT: Final = ct.GOAL_POSITION.address
_GOAL_VELOCITY_AT: Final = ct.GOAL_VELOCITY.address
_GOAL_CURRENT_AT: Final = ct.GOAL_CURRENT.address
_PING_ATTEMPTS: Final = 2


@dataclass
class _Servo:
    """What the driver knows about one servo (filled in at open)."""

    spec: ActuatorSpec
    operating_mode: int
    torque_constant: float | None  # from the YAML; None: the model's
    model: ct.ModelInfo | None = None
    firmware: int = 0
    min_goal: int = -_EXTENDED_RANGE
    max_goal: int = _EXTENDED_RANGE
    velocity_limit: int = 0
    current_limit: int = 0
    effort_scale: float = math.nan  # N·m per Present Current / Load unit
    current_scale: float = math.nan  # Goal Current units per N·m
    clamp_logged: bool = False


class DynamixelBus(ActuatorBus):
    """Dynamixel Protocol 2.0 X-series servos on one serial line (see the module doc).

    Args:
        spec: the bus (``transport``: ``port``, ``baudrate``, optional ``timeout``).
        actuators: the servos.
        clock: monotonic seconds (stamps of the states).
        transport: a transport to use instead of opening ``spec.transport`` (tests).

    Raises:
        ConfigError: bad ids, options, unknown model names, a mode the model cannot run.
    """

    protocol: ClassVar[str] = "dynamixel"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],
                 clock: Callable[[], float] = time.monotonic,
                 transport: Transport | None = None) -> None:
        super().__init__(spec, actuators, clock)
        self._where = f"bus {spec.name!r} ({spec.transport.get('port', '?')})"
        unknown = set(spec.options) - _BUS_OPTIONS
        if unknown:
            raise ConfigError(f"{self._where}: unknown Dynamixel bus option(s)"
                              f" {sorted(unknown)}; known: {sorted(_BUS_OPTIONS)}")
        self._transport = transport or serial_transport(spec.transport, self._where)
        self.timeout = _positive(spec.options.get("timeout", spec.transport.get(
            "timeout", DEFAULT_TIMEOUT)), "timeout", self._where)
        fast = spec.options.get("fast_sync_read", "auto")
        if fast not in ("auto", True, False):
            raise ConfigError(f"{self._where}: fast_sync_read must be auto, true or false,"
                              f" got {fast!r}")
        self._fast_option: str | bool = fast
        delay = spec.options.get("return_delay_us", 0)
        if isinstance(delay, bool) or not isinstance(delay, int) or not 0 <= delay <= 508:  # noqa: PLR2004
            raise ConfigError(f"{self._where}: return_delay_us must be an integer in"
                              f" 0..508, got {delay!r}")
        self._return_delay = delay // 2
        self._servos: dict[int, _Servo] = {a.id: self._servo(a) for a in actuators}
        self._ids = [a.id for a in actuators]
        self._open = False
        self._dirty = True  # flush input before the next request
        self._reader = proto.PacketReader()
        self.fast_sync_read = False
        self._read_packet = b""
        self._read_reply_size = 0
        self._reply_struct = struct.Struct("")
        self._ids_tuple = tuple(self._ids)
        self.stats = {"garbage_bytes": 0}

    def _servo(self, spec: ActuatorSpec) -> _Servo:  # noqa: C901 - one check per setting
        where = f"{self._where}: actuator {spec.name or spec.id!r} (id {spec.id})"
        if not 0 <= spec.id <= proto.MAX_ID:
            raise ConfigError(f"{where}: Dynamixel ids are 0..{proto.MAX_ID}")
        unknown = set(spec.options) - _ACTUATOR_OPTIONS
        if unknown:
            raise ConfigError(f"{where}: unknown Dynamixel option(s) {sorted(unknown)};"
                              f" known: {sorted(_ACTUATOR_OPTIONS)}")
        model = None
        if spec.model:
            model = ct.model_by_name(spec.model)
            if model is None:
                raise ConfigError(f"{where}: unknown Dynamixel model {spec.model!r}; known:"
                                  f" {', '.join(ct.MODELS)}")
        kt = spec.options.get("torque_constant")
        if kt is not None:
            kt = _positive(kt, "torque_constant", where)
        if spec.mode is ControlMode.POSITION:
            name = spec.options.get("operating_mode", "position")
            if name not in _POSITION_MODES:
                raise ConfigError(f"{where}: operating_mode must be one of"
                                  f" {sorted(_POSITION_MODES)}, got {name!r}")
            mode = _POSITION_MODES[name]
        elif spec.mode is ControlMode.VELOCITY:
            mode = ct.MODE_VELOCITY
        elif spec.mode is ControlMode.EFFORT:
            mode = ct.MODE_CURRENT
        else:
            raise ConfigError(f"{where}: Dynamixel servos have no {spec.mode.value} mode")
        if "operating_mode" in spec.options and spec.mode is not ControlMode.POSITION:
            raise ConfigError(f"{where}: operating_mode is for position actuators only")
        servo = _Servo(spec, mode, kt)
        if model is not None:
            self._check_model(servo, model)
        return servo

    def _check_model(self, servo: _Servo, model: ct.ModelInfo) -> None:
        needs_current = servo.operating_mode in (ct.MODE_CURRENT, ct.MODE_CURRENT_BASED_POSITION)
        if needs_current and not model.senses_current:
            raise ConfigError(f"{self._where}: id {servo.spec.id}: {model.name} has no current"
                              " control (effort / current-based position need XM, XH, XW"
                              " or XL330 servos)")

    # ---------------------------------------------------------------- properties

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded and :meth:`close` was not called since."""
        return self._open

    @property
    def transport(self) -> Transport:
        """The byte transport."""
        return self._transport

    def model_of(self, dxl_id: int) -> ct.ModelInfo | None:
        """The model found at open (None before)."""
        return self._servos[dxl_id].model

    # ---------------------------------------------------------------- open / close

    def open(self) -> None:
        """Open the port, ping and configure every servo, torque off, set up the reads.

        Raises:
            TransportError: the port cannot be opened.
            TransportTimeoutError: a servo does not answer.
            DeviceError: a servo refuses a setting or is another model than configured.
            ConfigError: the configuration does not fit the servo found.
        """
        self._open = False
        self._transport.open()
        try:
            self._dirty = True
            ids = self._ids
            self._send(proto.sync_write(ct.STATUS_RETURN_LEVEL.address, 1,
                                        dict.fromkeys(ids, b"\x02")))
            for dxl_id in ids:
                self._configure(self._servos[dxl_id])
            self._setup_read()
            self._open = True
            self.read()
        except HardwareError:
            self._open = False
            self._transport.close()
            raise

    def _configure(self, servo: _Servo) -> None:
        dxl_id = servo.spec.id
        number, firmware = self._ping_servo(dxl_id)
        model = ct.MODELS_BY_NUMBER.get(number)
        if model is None:
            raise DeviceError(f"{self._where}: id {dxl_id} is model number {number}, not a"
                              " supported X-series servo", dxl_id)
        if servo.spec.model and ct.model_by_name(servo.spec.model) is not model:
            raise DeviceError(f"{self._where}: id {dxl_id} is a {model.name}, the configuration"
                              f" says {servo.spec.model}", dxl_id)
        self._check_model(servo, model)
        servo.model, servo.firmware = model, firmware
        self.write_register(dxl_id, ct.TORQUE_ENABLE.address, b"\x00")
        current = self.read_register(dxl_id, ct.RETURN_DELAY_TIME.address, 3)
        if current[0] != self._return_delay:  # EEPROM: written only when it differs
            self.write_register(dxl_id, ct.RETURN_DELAY_TIME.address,
                                bytes((self._return_delay,)))
        if current[2] != servo.operating_mode:
            self.write_register(dxl_id, ct.OPERATING_MODE.address, bytes((servo.operating_mode,)))
        self.write_register(dxl_id, ct.INDIRECT_ADDRESS_1,
                            b"".join(struct.pack("<H", a) for a in INDIRECT_TARGETS))
        limits = self.read_register(dxl_id, ct.CURRENT_LIMIT.address, 18)
        current_limit, = struct.unpack_from("<H", limits, 0)
        velocity_limit, max_pos, min_pos = struct.unpack_from("<iii", limits, 6)
        servo.velocity_limit = velocity_limit
        servo.current_limit = current_limit if model.senses_current else 0
        if servo.operating_mode == ct.MODE_POSITION:
            servo.min_goal, servo.max_goal = min_pos, max_pos
        else:
            servo.min_goal, servo.max_goal = -_EXTENDED_RANGE, _EXTENDED_RANGE
        kt = servo.torque_constant or model.torque_constant
        if model.current_unit is not None:
            servo.effort_scale = model.current_unit * kt
            servo.current_scale = 1.0 / servo.effort_scale
        else:
            servo.effort_scale = ct.LOAD_UNIT * model.stall_torque

    def _ping_servo(self, dxl_id: int) -> tuple[int, int]:
        for attempt in range(_PING_ATTEMPTS):
            try:
                return self.ping(dxl_id)
            except TransportTimeoutError:  # noqa: PERF203 - a retry loop
                if attempt == _PING_ATTEMPTS - 1:
                    raise
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def _setup_read(self) -> None:
        firmware_ok = all(s.firmware >= ct.FAST_SYNC_READ_FIRMWARE for s in self._servos.values())
        if self._fast_option is True and not firmware_ok:
            old = {i: s.firmware for i, s in self._servos.items()
                   if s.firmware < ct.FAST_SYNC_READ_FIRMWARE}
            raise ConfigError(f"{self._where}: fast_sync_read needs firmware >="
                              f" {ct.FAST_SYNC_READ_FIRMWARE}; id: firmware {old}")
        self.fast_sync_read = bool(self._fast_option) and firmware_ok
        self._build_read_packet()

    def _build_read_packet(self) -> None:
        ids = self._ids
        n = len(ids)
        self._read_packet = proto.sync_read(READ_ADDRESS, READ_SIZE, ids,
                                            fast=self.fast_sync_read)
        # The whole expected answer as one struct: one unpack decodes every servo.
        if self.fast_sync_read:
            # header, id, length, 0x55 | (ERR ID DATA CRC) per servo
            self._read_reply_size = proto.HEADER_SIZE + 1 + n * (READ_SIZE + 4)
            self._reply_struct = struct.Struct("<4sBHB" + ("BB" + _READ_CODES + "H") * n)
        else:
            # (header, id, length, 0x55, ERR, DATA, CRC) per servo
            self._read_reply_size = n * (proto.STATUS_OVERHEAD + READ_SIZE)
            self._reply_struct = struct.Struct("<" + ("4sBHBB" + _READ_CODES + "H") * n)

    def close(self) -> None:
        """Torque off (one Sync Write, unverified) where possible, then close the port."""
        if self._open:
            try:
                self._send(proto.sync_write(ct.TORQUE_ENABLE.address, 1,
                                            dict.fromkeys(self._ids, b"\x00")))
            except HardwareError as exc:
                _LOG.warning("%s: torque off at close failed: %s", self._where, exc)
        self._open = False
        self._transport.close()

    # ---------------------------------------------------------------- cycle

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """One Sync Write of Torque Enable, verified by one read of every servo.

        Raises:
            DeviceError: a servo did not take the new state (e.g. a hardware error).
        """
        self._require_open()
        targets = list(self._ids if ids is None else ids)
        for dxl_id in targets:
            self._known(dxl_id)
        value = b"\x01" if enabled else b"\x00"
        self._send(proto.sync_write(ct.TORQUE_ENABLE.address, 1, dict.fromkeys(targets, value)))
        states = self.read()
        wrong = [i for i in targets if states[i].torque_enabled != enabled]
        if wrong:
            first = states[wrong[0]]
            why = f": {first.fault}" if first.fault else ""
            raise DeviceError(f"{self._where}: torque {'on' if enabled else 'off'} not taken by"
                              f" id(s) {wrong}{why}", wrong[0], first.error_code)

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:  # noqa: C901 - inlined hot loop
        """Sync Write the goals (NaN fields: that servo keeps its previous goal)."""
        self._require_open()
        positions: list[int] = []  # id, value, id, value ...
        velocities: list[int] = []
        currents: list[int] = []
        servos = self._servos
        isnan = math.isnan
        for dxl_id, command in commands.items():
            servo = servos.get(dxl_id) or self._known(dxl_id)
            mode = servo.operating_mode
            if mode == _MODE_VELOCITY:
                value = command.velocity
                if not isnan(value):
                    raw = _round(value / _RAD_S_PER_VELOCITY_UNIT)
                    velocities += (dxl_id, self._clamp(servo, raw, -servo.velocity_limit,
                                                       servo.velocity_limit))
            elif mode == _MODE_CURRENT:
                value = command.effort
                if not isnan(value):
                    raw = _round(value * servo.current_scale)
                    currents += (dxl_id, self._clamp(servo, raw, -servo.current_limit,
                                                     servo.current_limit))
            else:
                value = command.position
                if not isnan(value):
                    raw = _round(value / _RAD_PER_TICK) + _CENTER_TICK
                    if not servo.min_goal <= raw <= servo.max_goal:
                        raw = self._clamp(servo, raw, servo.min_goal, servo.max_goal)
                    positions += (dxl_id, raw)
        if positions:
            self._send(proto.sync_write_values(_GOAL_POSITION_AT, "i", positions))
        if velocities:
            self._send(proto.sync_write_values(_GOAL_VELOCITY_AT, "i", velocities))
        if currents:
            self._send(proto.sync_write_values(_GOAL_CURRENT_AT, "h", currents))

    def _clamp(self, servo: _Servo, raw: int, lo: int, hi: int) -> int:
        if lo <= raw <= hi:
            return raw
        if not servo.clamp_logged:
            servo.clamp_logged = True
            _LOG.warning("%s: id %d: goal %d outside the servo's limits [%d, %d]; clamped"
                         " (logged once)", self._where, servo.spec.id, raw, lo, hi)
        return max(lo, min(hi, raw))

    def read(self) -> dict[int, ActuatorState]:
        """One (Fast) Sync Read of every servo's present values.

        Raises:
            TransportTimeoutError: a servo did not answer (the message names it).
            ProtocolError: a CRC or length error.
            DeviceError: a servo's status packet carries an error.
        """
        self._require_open()
        self._send(self._read_packet)
        size = self._read_reply_size
        what = "Fast Sync Read" if self.fast_sync_read else "Sync Read"
        try:
            raw = self._transport.read(max(1, size), self.timeout)
        except TransportTimeoutError:
            self._dirty = True
            raise TransportTimeoutError(f"{self._where}: {what}: no answer from id(s)"
                                        f" {self._ids} within {self.timeout * 1e3:.0f} ms"
                                        ) from None
        except TransportError:
            self._dirty = True
            raise
        stamp = self.clock()
        # The common case: the whole answer in one read, exactly as asked. Anything else
        # (partial reads, garbage, stuffing, errors) goes through the packet reader.
        values = self._unpack_reply(raw) if len(raw) == size else None
        if values is not None:
            errors, columns = values
        else:
            errors, columns = self._records(raw)
            stamp = self.clock()
        if not _NO_ERROR.issuperset(errors):
            for dxl_id, error in zip(self._ids, errors, strict=True):
                if error & 0x7F:
                    self._status_error(dxl_id, error, "Sync Read")
        return self._states(columns, stamp)

    def _unpack_reply(self, raw: bytes) -> tuple[Sequence[int], Sequence[Any]] | None:
        """``(error bytes, values)`` of a complete, clean reply, or None to parse it."""
        n = len(self._ids)
        try:
            flat = self._reply_struct.unpack(raw)
        except struct.error:
            return None
        if self.fast_sync_read:  # 4 header fields, then 10 per servo
            if (flat[0] != proto.HEADER or flat[1] != proto.BROADCAST_ID
                    or flat[2] != len(raw) - proto.HEADER_SIZE or flat[3] != _STATUS
                    or flat[5::10] != self._ids_tuple
                    or proto.crc16(memoryview(raw)[:-2]) != flat[-1]):
                return None
            return flat[4::10], [flat[6 + k::10] for k in range(7)]
        # 13 fields per servo: header, id, length, 0x55, error, 7 values, CRC
        packet = proto.STATUS_OVERHEAD + READ_SIZE
        if (flat[0::13].count(proto.HEADER) != n or flat[1::13] != self._ids_tuple
                or flat[2::13].count(packet - proto.HEADER_SIZE) != n
                or flat[3::13].count(_STATUS) != n):
            return None
        view = memoryview(raw)
        crc16 = proto.crc16
        for k, crc in enumerate(flat[12::13]):
            if crc16(view[k * packet:(k + 1) * packet - 2]) != crc:
                return None
        return flat[4::13], [flat[5 + k::13] for k in range(7)]

    def _records(self, raw: bytes) -> tuple[list[int], list[tuple[int, ...]]]:
        """``(error bytes, values)`` through the packet reader, in id order."""
        if self.fast_sync_read:
            records = self._receive_fast(raw)
        else:
            packets = self._receive(self._ids, self._read_reply_size, "Sync Read", raw)
            records = [(i, packets[i].error, packets[i].data) for i in self._ids]
        errors = []
        rows = []
        for dxl_id, error, data in records:
            if error & 0x7F:
                self._status_error(dxl_id, error, "Sync Read")
            if len(data) != READ_SIZE:
                self._dirty = True
                raise ProtocolError(f"{self._where}: id {dxl_id} sent {len(data)} bytes,"
                                    f" expected {READ_SIZE}")
            errors.append(error)
            rows.append(READ_STRUCT.unpack(data))
        return errors, list(zip(*rows, strict=True))

    def _states(self, columns: Sequence[Any], stamp: float) -> dict[int, ActuatorState]:
        """ActuatorStates from the read block's 7 values, one column per value, id order."""
        servos = self._servos
        states = {}
        for dxl_id, hw_error, torque, current, velocity, position, voltage, temperature in zip(
                self._ids, *columns, strict=True):
            states[dxl_id] = new_state({
                "position": (position - _CENTER_TICK) * _RAD_PER_TICK,
                "velocity": velocity * _RAD_S_PER_VELOCITY_UNIT,
                "effort": current * servos[dxl_id].effort_scale,
                "torque_enabled": torque == 1,
                "error_code": hw_error,
                "fault": ct.describe_hardware_error(hw_error) if hw_error else "",
                "temperature": float(temperature),
                "voltage": voltage * _VOLTAGE_UNIT,
                "stamp": stamp,
            })
        return states

    def _receive_fast(self, first: bytes) -> list[tuple[int, int, bytes]]:
        size = self._read_reply_size
        packet = self._receive([proto.BROADCAST_ID], size, "Fast Sync Read", first)[
            proto.BROADCAST_ID]
        try:
            records = proto.split_fast_status(packet, READ_SIZE)
        except ProtocolError as exc:
            self._dirty = True
            raise ProtocolError(f"{self._where}: {exc}") from None
        got = [r[0] for r in records]
        if got != self._ids:
            self._dirty = True
            missing = [i for i in self._ids if i not in got]
            if missing:
                raise TransportTimeoutError(f"{self._where}: Fast Sync Read: no data from"
                                            f" id(s) {missing}")
            raise ProtocolError(f"{self._where}: Fast Sync Read answered ids {got},"
                                f" asked {self._ids}")
        return records

    # ---------------------------------------------------------------- single instructions

    def ping(self, dxl_id: int) -> tuple[int, int]:
        """PING one servo: ``(model number, firmware version)``."""
        self._send(proto.ping(dxl_id))
        packet = self._receive([dxl_id], 14, "PING")[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, "PING")
        data = packet.data
        if len(data) != 3:  # noqa: PLR2004 - model number (2) + firmware (1)
            raise ProtocolError(f"{self._where}: id {dxl_id}: PING answer of {len(data)} bytes")
        return data[0] | data[1] << 8, data[2]

    def read_register(self, dxl_id: int, address: int, size: int) -> bytes:
        """READ ``size`` bytes at ``address`` of one servo."""
        self._send(proto.read(dxl_id, address, size))
        packet = self._receive([dxl_id], proto.STATUS_OVERHEAD + size, "READ")[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, f"READ {address}")
        if len(packet.data) != size:
            raise ProtocolError(f"{self._where}: id {dxl_id}: READ {address} answered"
                                f" {len(packet.data)} bytes, asked {size}")
        return packet.data

    def write_register(self, dxl_id: int, address: int, data: bytes) -> None:
        """WRITE ``data`` at ``address`` of one servo and wait for its status."""
        self._send(proto.write(dxl_id, address, data))
        packet = self._receive([dxl_id], proto.STATUS_OVERHEAD, "WRITE")[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, f"WRITE {address}")

    # ---------------------------------------------------------------- I/O

    def _send(self, packet: bytes) -> None:
        transport = self._transport
        try:
            if self._dirty:
                transport.reset_input()
                self._reader.clear()
                self._dirty = False
            transport.write(packet)
        except TransportError:
            self._dirty = True
            raise

    def _receive(self, ids: Sequence[int], expected: int, what: str,
                 first: bytes = b"") -> dict[int, proto.Packet]:
        """Status packets from ``ids``, within the timeout; ``first``: bytes already read."""
        reader = self._reader
        deadline = time.monotonic() + self.timeout
        wanted = set(ids)
        got: dict[int, proto.Packet] = {}
        data = first
        try:
            while True:
                if data:
                    reader.feed(data)
                    self._drain(reader, wanted, got, what)
                    if len(got) == len(wanted):
                        break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    missing = sorted(wanted - got.keys())
                    raise TransportTimeoutError(  # noqa: TRY301 - handled with the read's
                        f"{self._where}: {what}: no answer from id(s) {missing} within"
                        f" {self.timeout * 1e3:.0f} ms")
                data = self._transport.read(max(1, expected - len(reader.buffer)), remaining)
        except TransportTimeoutError as exc:
            self._dirty = True
            if got or reader.buffer:
                missing = sorted(wanted - got.keys())
                raise TransportTimeoutError(f"{self._where}: {what}: no complete answer from"
                                            f" id(s) {missing}") from None
            raise TransportTimeoutError(f"{self._where}: {what}: no answer from id(s)"
                                        f" {sorted(wanted)}: {exc}") from None
        except HardwareError:
            self._dirty = True
            raise
        self.stats["garbage_bytes"] += reader.discarded
        reader.discarded = 0
        if reader.buffer:
            self._dirty = True  # bytes after the answers: drop them before the next request
        return got

    def _drain(self, reader: proto.PacketReader, wanted: set[int],
               got: dict[int, proto.Packet], what: str) -> None:
        while True:
            try:
                packet = reader.next_packet()
            except ProtocolError as exc:
                raise ProtocolError(f"{self._where}: {what}: {exc}") from None
            if packet is None:
                return
            if not packet.is_status or packet.id not in wanted:
                continue  # an echo or another device's packet: not ours
            if packet.id in got:
                raise ProtocolError(f"{self._where}: {what}: id {packet.id} answered twice")
            got[packet.id] = packet

    def _status_error(self, dxl_id: int, error: int, what: str) -> None:
        self._dirty = True
        raise DeviceError(f"{self._where}: id {dxl_id}: {what}:"
                          f" {proto.describe_status_error(error)}", dxl_id, error & 0x7F)

    def _require_open(self) -> None:
        if not self._open:
            raise TransportError(f"{self._where}: not open")

    def _known(self, dxl_id: int) -> _Servo:
        servo = self._servos.get(dxl_id)
        if servo is None:
            raise ConfigError(f"{self._where}: no actuator with id {dxl_id} on this bus")
        return servo


def _new_state_fast(fields: dict[str, Any]) -> ActuatorState:
    state = object.__new__(ActuatorState)
    state.__dict__.update(fields)
    return state


def _new_state_checked(fields: dict[str, Any]) -> ActuatorState:
    return ActuatorState(**fields)


# ActuatorState is a plain frozen dataclass: filling its __dict__ gives the same object as
# its __init__ (one dict update instead of nine object.__setattr__ calls; a tenth of the
# cycle's CPU). Should it ever get __slots__ or a __post_init__, the constructor is used.
_PLAIN_DATACLASS = (not hasattr(ActuatorState, "__slots__")
                    and not hasattr(ActuatorState, "__post_init__"))
new_state: Callable[[dict[str, Any]], ActuatorState] = (
    _new_state_fast if _PLAIN_DATACLASS else _new_state_checked)


def _round(value: float) -> int:
    if -2e9 < value < 2e9:  # noqa: PLR2004 - the common case, no OverflowError possible
        return round(value)
    return 2**31 - 1 if value > 0 else -(2**31)


def _positive(value: Any, name: str, where: str) -> float:  # noqa: ANN401 - YAML value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ConfigError(f"{where}: {name} must be a positive number, got {value!r}")
    return float(value)
