"""DynamixelBus: every Dynamixel X-series servo on one serial line (Protocol 2.0).

One control cycle is two packets:

* :meth:`DynamixelBus.write`: one **Sync Write** per goal kind present (Goal Position 116
  in position modes, Goal Velocity 104, Goal Current 102); usually all servos share a
  mode, so one packet. Every goal is encoded inside the actuator's limits
  (``ActuatorSpec.limits``, the nearest tick inward: :func:`~skel_ros.hardware.base.
  quantize_inward`) and the servo's own limit fields (read at open); a goal beyond them
  is clamped and logged once per servo.
* :meth:`DynamixelBus.read`: one **Fast Sync Read** (firmware >= 45; one status packet
  for all servos) or **Sync Read** (one status packet per servo) of 16 bytes at Indirect
  Data 1: 224 on the X430/X540 series, 208 on the XL330 (the model's
  :attr:`~skel_ros.hardware.dynamixel.control_table.ModelInfo.indirect`). A Sync Read
  reads one address of every servo it lists, so a bus mixing both kinds sends one
  request per address, one after the other, in the same :meth:`~DynamixelBus.read`.
  At open, Indirect Address 1..16 (168..199 on every model) are pointed at Hardware
  Error Status (70), Torque Enable (64), Present Current (126, 2), Present Velocity
  (128, 4), Present Position (132, 4), Present Input Voltage (144, 2), Present
  Temperature (146) and Bus Watchdog (98): everything the backend needs in one
  contiguous read of 16 bytes, instead of 21 bytes at 126..146 plus reads of 64, 70 and 98.

Every request covers only addresses the servo's model (and firmware) defines
(:meth:`~skel_ros.hardware.dynamixel.control_table.ModelInfo.defined`): the e-Manual's
Protocol 2.0 answers a READ or WRITE covering an undefined address with an Access Error.
So open reads its fields in runs of defined addresses, never a field the model lacks
(Current Limit on XL430 / XC430 / 2XL430), and a servo without Bus Watchdog (firmware
< 38) is refused while ``BusSpec.device_watchdog`` asks for it, else never sent 98.

Open, reconnect, faults (see :meth:`DynamixelBus.open`): ``open(keep_torque=True)``
leaves a servo that still holds torque without a hardware error holding; the Bus
Watchdog (98) is armed from ``BusSpec.device_watchdog`` so that the servos stop by
themselves when the host goes silent; :meth:`DynamixelBus.clear_faults` reboots servos
in a hardware error. Timeouts follow the baud rate and the packet sizes plus
``BusSpec.timeout_margin``; the reads open and enable depend on are retried.

Units: see :mod:`skel_ros.hardware.dynamixel.control_table`. Per actuator ``options``
in the YAML: ``torque_constant`` (N·m/A; default: the model's stall torque / stall
current) and ``operating_mode`` (``position`` | ``extended_position`` |
``current_based_position`` for POSITION actuators). Bus ``options``: ``fast_sync_read``
(``auto`` (default) | true | false), ``return_delay_us`` (written at open, default 0;
an even number of µs, 0..508: Return Delay Time counts 2 µs units), ``timeout`` (s per
request, fixed; default: the transport's ``timeout``, else computed per request from
the baud rate, the bytes both ways, the return delays and ``BusSpec.timeout_margin``).
A request has one deadline: everything it waits for (its answer, the rest of a split or
garbled one) is waited for within that one timeout.

Garbage bytes before or between status packets are skipped, and so is a late Fast Sync
Read answer to an earlier request of other ids (both counted in :attr:`DynamixelBus.stats`:
``garbage_bytes``, ``late_answers``); a packet with a bad CRC raises ProtocolError, a status
packet with an error raises DeviceError, missing answers TransportTimeoutError.

Speed: :meth:`DynamixelBus.read` asks the transport for the whole expected answer at
once; when it arrives complete and clean (headers, ids in order, lengths, CRCs: the
common case) one ``struct`` unpack decodes every servo. Anything else (a split read,
garbage, byte stuffing, a missing servo) goes through the packet reader, which asks the
transport for the bytes still missing and returns as soon as every answer is complete.
"""

from __future__ import annotations

import contextlib
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
    quantize_inward,
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
from skel_ros.hardware.serial_link import (
    ATTEMPTS,
    AnswerTime,
    PacketLink,
    clamp_goal,
    known,
    positive,
    round_goal,
)
from skel_ros.hardware.transport import Transport, serial_transport

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

_LOG = logging.getLogger(__name__)

# The block read every cycle, through Indirect Address 1..16 -> Indirect Data 1..16 (where
# these lie is the model's: ModelInfo.indirect; the fields' addresses are the same on all).
READ_FIELDS: Final = (ct.HARDWARE_ERROR_STATUS, ct.TORQUE_ENABLE, ct.PRESENT_CURRENT,
                      ct.PRESENT_VELOCITY, ct.PRESENT_POSITION, ct.PRESENT_INPUT_VOLTAGE,
                      ct.PRESENT_TEMPERATURE, ct.BUS_WATCHDOG)
READ_STRUCT: Final = struct.Struct("<BBhiiHBB")
_READ_CODES: Final = READ_STRUCT.format[1:]
_NV: Final = len(_READ_CODES)  # values per servo in the read block
READ_SIZE: Final = READ_STRUCT.size
INDIRECT_TARGETS: Final = tuple(a for f in READ_FIELDS
                                for a in range(f.address, f.address + f.size))
INDIRECT_BLOCK: Final = b"".join(struct.pack("<H", a) for a in INDIRECT_TARGETS)
REBOOT_WAIT: Final = 3.0  # s for a rebooted servo to answer again (see clear_faults)
# s a servo may wait before answering, until the servos are configured
_MAX_RETURN_DELAY: Final = ct.RETURN_DELAY_TIME_MAX * ct.RETURN_DELAY_UNIT
_BROADCAST_PING_WAIT: Final = 253  # answers a broadcast PING may bring
# A servo without Bus Watchdog (firmware < 38; device_watchdog 0) has Indirect Address 16
# pointed at Torque Enable instead: a defined byte that never reads 0xFF, so its state
# never reports an expired watchdog.
INDIRECT_BLOCK_NO_WATCHDOG: Final = b"".join(
    struct.pack("<H", a) for a in (*INDIRECT_TARGETS[:-1], ct.TORQUE_ENABLE.address))
# What open reads of each servo before writing anything (the fields its model has).
_OPEN_FIELDS: Final = (ct.RETURN_DELAY_TIME, ct.DRIVE_MODE, ct.OPERATING_MODE, ct.CURRENT_LIMIT,
                       ct.VELOCITY_LIMIT, ct.MAX_POSITION_LIMIT, ct.MIN_POSITION_LIMIT,
                       ct.TORQUE_ENABLE, ct.HARDWARE_ERROR_STATUS, ct.BUS_WATCHDOG,
                       ct.PRESENT_POSITION)

_POSITION_MODES: Final = {"position": ct.MODE_POSITION,
                          "extended_position": ct.MODE_EXTENDED_POSITION,
                          "current_based_position": ct.MODE_CURRENT_BASED_POSITION}
_ACTUATOR_OPTIONS: Final = frozenset({"torque_constant", "operating_mode", "profile_time"})
PROFILE_TIME_MAX: Final = 32.737  # s: the time-based Profile Velocity's largest (32737 ms)
_BUS_OPTIONS: Final = frozenset({"fast_sync_read", "return_delay_us", "timeout"})
_PING_REPLY: Final = proto.STATUS_OVERHEAD + 3
_EXTENDED_RANGE: Final = 1_048_575
_NO_ERROR: Final = frozenset({0, proto.ALERT})  # error bytes without a status error
# The goal fields write() sends, in this order, with their struct codes.
_GOAL_CODES: Final = {ct.GOAL_POSITION: "i", ct.GOAL_VELOCITY: "i", ct.GOAL_CURRENT: "h"}


@dataclass
class _Servo:
    """What the driver knows about one servo (filled in at open)."""

    spec: ActuatorSpec
    operating_mode: int
    torque_constant: float | None  # from the YAML; None: the model's
    model: ct.ModelInfo | None = None  # the YAML's until open, then the one found
    firmware: int = 0
    bus_watchdog: bool = True  # whether it has Bus Watchdog (firmware >= 38), from open
    min_goal: int = -_EXTENDED_RANGE
    max_goal: int = _EXTENDED_RANGE
    velocity_limit: int = 0
    current_limit: int = 0
    effort_scale: float = math.nan  # N·m per Present Current / Load unit
    current_scale: float = math.nan  # Goal Current units per N·m
    goal_lo: int = -_EXTENDED_RANGE  # the goal field's encoded range: limits, inward
    goal_hi: int = _EXTENDED_RANGE
    clamp_logged: bool = False
    profile_ms: int | None = None  # the YAML's profile_time (ms): a time-based profile

    @property
    def indirect_block(self) -> bytes:
        """What its Indirect Address 1..16 hold for the read block."""
        return INDIRECT_BLOCK if self.bus_watchdog else INDIRECT_BLOCK_NO_WATCHDOG


@dataclass
class _ReadGroup:
    """One (Fast) Sync Read of the cycle: the servos whose read block is at ``address``.

    Attributes:
        ids: the servos asked, in the bus's id order.
        address: their models' Indirect Data 1.
        packet: the request.
        reply_size: bytes of the complete answer (unstuffed).
        timeout: s to wait for it.
        reply_struct: the complete, clean answer as one struct.
        reply_heads: Sync Read: each status packet's first 8 bytes.
    """

    ids: tuple[int, ...]
    address: int
    packet: bytes
    reply_size: int
    timeout: float
    reply_struct: struct.Struct
    reply_heads: tuple[bytes, ...]


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
        self._time = AnswerTime(spec, self._where, _MAX_RETURN_DELAY)
        self._timeout = self._time.timeout
        self.timeout, self.baudrate = self._time.fixed, self._time.baudrate  # s or None, baud
        self._watchdog = _watchdog_units(spec.device_watchdog, self._where)
        fast = spec.options.get("fast_sync_read", "auto")
        if fast not in ("auto", True, False):
            raise ConfigError(f"{self._where}: fast_sync_read must be auto, true or false,"
                              f" got {fast!r}")
        self._fast_option: str | bool = fast
        self._return_delay = return_delay_units(spec.options.get("return_delay_us", 0),
                                                 self._where)
        self._servos: dict[int, _Servo] = {a.id: self._servo(a) for a in actuators}
        self._ids = [a.id for a in actuators]
        self._open = False
        self._reader = proto.PacketReader()  # the link's; broadcast_ping reads it too
        self._link = PacketLink(self._transport, self._reader, self._where, _LOG,
                                answers=_is_status, timeout_tail=_transport_said,
                                monotonic=time.monotonic)
        # The link's calls, under the names the protocol code uses.
        self._send, self._receive = self._link.send, self._link.receive
        self._attempts = self._link.attempts
        self.fast_sync_read = False
        self._read_groups: list[_ReadGroup] = []  # one per Indirect Data address, at open
        self.stats = self._link.stats
        self.stats["late_answers"] = 0

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
            kt = positive(kt, "torque_constant", where)
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
        servo = _Servo(spec, mode, kt, model, profile_ms=_profile_ms(spec, where))
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
        """The model found at open; before: the YAML's (None if it names none)."""
        return self._servos[dxl_id].model

    # ---------------------------------------------------------------- open / close

    def open(self, *, keep_torque: bool = False) -> None:
        """Open the port, find and check every servo, configure it, set up the reads.

        Per servo, before changing anything, READs of Torque Enable, Hardware Error
        Status, Bus Watchdog, Present Position, the EEPROM settings the YAML fixes
        (Return Delay Time, Operating Mode), the limit fields and the Indirect Addresses
        of the read block: one READ per run of defined addresses (:meth:`_read_fields`),
        only the fields the servo's model has.

        * ``keep_torque`` False: torque off, settings written where they differ (EEPROM
          only then), indirect addresses, Bus Watchdog armed (off when
          ``spec.device_watchdog`` is 0). Nothing moves.
        * ``keep_torque`` True: a servo found with torque on, no hardware error, the
          settings the YAML needs and the read block in place keeps its torque and goal
          (nothing is written to it but the Bus Watchdog: an expired one is cleared,
          its goal set to where it stopped, and armed again). Any other servo is handled
          as above; one that held torque is logged with the reason.

        Raises:
            TransportError: the port cannot be opened (the message names it).
            TransportTimeoutError: a servo does not answer (the message names it, the baud
                rate and the ids that did answer).
            DeviceError: a servo refuses a setting or is another model than configured.
            ConfigError: the configuration does not fit the servo found (among others:
                ``device_watchdog`` set and a servo's firmware older than v38, which
                has no Bus Watchdog).
        """
        self._open = False
        self._transport.open()
        try:
            self._link.dirty = True
            self._time.reply_delay = _MAX_RETURN_DELAY
            ids = self._ids
            if ids:  # Status Return Level 2 (RAM; the factory value): every instruction answers
                self._send(proto.sync_write(ct.STATUS_RETURN_LEVEL.address, 1,
                                            dict.fromkeys(ids, b"\x02")))
            found = self._find_servos()
            self._check_bus_watchdogs(found)
            held = [i for i in ids
                    if self._configure(self._servos[i], found[i], keep_torque=keep_torque)]
            self._time.reply_delay = self._return_delay * ct.RETURN_DELAY_UNIT
            self._setup_read()
            self._open = True
            self._attempts(self.read)
        except HardwareError:
            self._open = False
            self._transport.close()
            raise
        if held:
            _LOG.info("%s: id(s) %s still held torque: kept, with their goals", self._where, held)

    def _find_servos(self) -> dict[int, tuple[int, int]]:
        """PING every configured id: ``{id: (model number, firmware)}``.

        Raises:
            TransportTimeoutError: some did not answer; the message lists the ids that
                answer a broadcast PING.
        """
        found: dict[int, tuple[int, int]] = {}
        missing = []
        for dxl_id in self._ids:
            try:
                found[dxl_id] = self._attempts(self.ping, dxl_id)
            except TransportTimeoutError:  # noqa: PERF203 - one try per id
                missing.append(dxl_id)
        if not missing:
            return found
        answered = sorted(set(self.broadcast_ping()) | found.keys())
        which = f"id {missing[0]} did" if len(missing) == 1 else f"ids {missing} did"
        hint = "" if answered else " (check power, wiring, baud rate and port)"
        if set(missing) <= set(answered):
            hint = (" (they answered the broadcast PING but not their own, "
                    f"{ATTEMPTS} times: a noisy line or an overloaded host?)")
        raise TransportTimeoutError(f"{self._where}: {which} not answer at {self.baudrate}"
                                    f" baud; ids that answered: {answered}{hint}")

    def _check_bus_watchdogs(self, found: Mapping[int, tuple[int, int]]) -> None:
        """Refuse servos without Bus Watchdog (firmware < 38) when ``device_watchdog`` is set.

        The watchdog is what stops the servos when the host dies; a servo that lacks it
        would not stop, so open fails before anything is written. With
        ``device_watchdog: 0`` (off) such servos are driven and never sent address 98.
        """
        if not self._watchdog:
            return
        for dxl_id, (number, firmware) in found.items():
            model = ct.MODELS_BY_NUMBER.get(number)
            if model is not None and not model.has(ct.BUS_WATCHDOG, firmware):
                raise ConfigError(
                    f"{self._where}: id {dxl_id} ({model.name}) has firmware v{firmware},"
                    f" which has no Bus Watchdog (98, from firmware"
                    f" v{ct.BUS_WATCHDOG_FIRMWARE} on); device_watchdog"
                    f" {self.spec.device_watchdog:g} s needs it to stop the"
                    " servos when the host dies; update its firmware (DYNAMIXEL Wizard 2.0),"
                    " or run without it with device_watchdog: 0")

    def _read_fields(self, dxl_id: int, model: ct.ModelInfo, firmware: int,
                     fields: Sequence[ct.Field]) -> dict[ct.Field, int]:
        """The values of those of ``fields`` that ``model`` has with ``firmware``, by field.

        One READ per run of them whose addresses, and those between them, the model
        defines (a READ covering an undefined address is an Access Error); each READ is
        tried up to :data:`ATTEMPTS` times.
        """
        defined = model.defined(firmware)
        values: dict[ct.Field, int] = {}
        for run in _runs(sorted((f for f in fields if model.has(f, firmware)),
                                key=lambda f: f.address), defined):
            start, end = run[0].address, run[-1].address + run[-1].size
            data = self._attempts(self.read_register, dxl_id, start, end - start)
            for fld in run:
                at = fld.address - start
                values[fld] = int.from_bytes(data[at:at + fld.size], "little",
                                             signed=fld.signed)
        return values

    def _configure(self, servo: _Servo, found: tuple[int, int], *,
                   keep_torque: bool) -> bool:
        """Check and configure one servo; whether it kept its torque (see :meth:`open`)."""
        dxl_id = servo.spec.id
        number, firmware = found
        model = ct.MODELS_BY_NUMBER.get(number)
        if model is None:
            raise DeviceError(f"{self._where}: id {dxl_id} is model number {number}, not a"
                              " supported X-series servo", dxl_id)
        if servo.spec.model and ct.model_by_name(servo.spec.model) is not model:
            raise DeviceError(f"{self._where}: id {dxl_id} is a {model.name}, the configuration"
                              f" says {servo.spec.model}", dxl_id)
        self._check_model(servo, model)
        servo.model, servo.firmware = model, firmware
        servo.bus_watchdog = model.has(ct.BUS_WATCHDOG, firmware)
        values = self._read_fields(dxl_id, model, firmware, _OPEN_FIELDS)
        torque = values[ct.TORQUE_ENABLE]
        hw_error = values[ct.HARDWARE_ERROR_STATUS]
        watchdog = values.get(ct.BUS_WATCHDOG, 0)  # 0xFF (-1): expired
        present = values[ct.PRESENT_POSITION]
        settings = self._eeprom_differences(servo, values)
        indirect_at = _read_area(model, self._where).address
        block = servo.indirect_block
        indirect = self._attempts(self.read_register, dxl_id, indirect_at, len(block))
        differs = [why for _, why in settings.values()]
        if indirect != block:
            differs.append("its Indirect Addresses are not this driver's read block")
        self._set_limits(servo, model, values)
        hold = keep_torque and torque == 1 and hw_error == 0 and not differs
        if keep_torque and torque == 1 and not hold:
            why = (f"it reports {ct.describe_hardware_error(hw_error)}" if hw_error
                   else "; ".join(differs))
            _LOG.warning("%s: id %d held torque but %s: switching its torque off to"
                         " reconfigure it", self._where, dxl_id, why)
        if hold:
            self._set_profile(servo)
            self._rearm_held(servo, watchdog, present)
            return True
        self._attempts(self.write_register, dxl_id, ct.TORQUE_ENABLE.address, b"\x00")
        for fld, (value, _) in settings.items():  # EEPROM: written only when it differs
            self._attempts(self.write_register, dxl_id, fld.address, bytes((value,)))
        self._set_profile(servo)
        if indirect != block:
            self._attempts(self.write_register, dxl_id, indirect_at, block)
        self._arm_watchdog(dxl_id, watchdog)
        return False

    def _eeprom_differences(self, servo: _Servo, values: Mapping[ct.Field, int],
                            ) -> dict[ct.Field, tuple[int, str]]:
        """The one-byte EEPROM settings the YAML needs that ``values`` (read) lack.

        ``{field: (the value to write, what differs)}``, in the order they are written:
        Return Delay Time, Operating Mode, Drive Mode (bit 2 for ``profile_time``, its
        other bits kept).
        """
        out = {}
        delay = values[ct.RETURN_DELAY_TIME]
        if delay != self._return_delay:
            why = f"Return Delay Time {delay * 2} us, the YAML {self._return_delay * 2} us"
            out[ct.RETURN_DELAY_TIME] = (self._return_delay, why)
        mode = values[ct.OPERATING_MODE]
        if mode != servo.operating_mode:
            why = f"Operating Mode {mode}, the YAML needs {servo.operating_mode}"
            out[ct.OPERATING_MODE] = (servo.operating_mode, why)
        drive = values[ct.DRIVE_MODE]
        if servo.profile_ms is not None and not drive & ct.DRIVE_MODE_TIME_BASED:
            why = ("its profile is velocity-based, the YAML's profile_time needs a time-based"
                   " one (Drive Mode bit 2)")
            out[ct.DRIVE_MODE] = (drive | ct.DRIVE_MODE_TIME_BASED, why)
        return out

    def _set_profile(self, servo: _Servo) -> None:
        """Profile Velocity = the YAML's ``profile_time`` (ms), Profile Acceleration 0.

        RAM (a reboot or a power cycle sets both to 0, a step): written at open and after
        a reboot. Nothing for a servo without ``profile_time`` (its profile is left as
        it is).
        """
        if servo.profile_ms is None:
            return
        self._attempts(self.write_register, servo.spec.id, ct.PROFILE_ACCELERATION.address,
                       struct.pack("<I", 0))
        self._attempts(self.write_register, servo.spec.id, ct.PROFILE_VELOCITY.address,
                       struct.pack("<I", servo.profile_ms))

    def _rearm_held(self, servo: _Servo, watchdog: int, present: int) -> None:
        """Bus Watchdog of a servo that keeps its torque (nothing if it has none).

        An expired one is cleared and the goal set to where the servo stopped; then the
        configured value.
        """
        if not servo.bus_watchdog:
            return
        dxl_id = servo.spec.id
        if watchdog == ct.BUS_WATCHDOG_EXPIRED:  # it stopped: its goal becomes where it is
            self._attempts(self.write_register, dxl_id, ct.BUS_WATCHDOG.address, b"\x00")
            self._write_stop_goal(servo, present)
        if watchdog != self._watchdog:
            self._attempts(self.write_register, dxl_id, ct.BUS_WATCHDOG.address,
                           bytes((self._watchdog,)))

    def _set_limits(self, servo: _Servo, model: ct.ModelInfo,
                    values: Mapping[ct.Field, int]) -> None:
        """The servo's limit fields (read at open) and the goal range they and the YAML allow.

        ``values``: :meth:`_read_fields`' answer; Current Limit only where the model has it.
        """
        velocity_limit = values[ct.VELOCITY_LIMIT]
        max_pos, min_pos = values[ct.MAX_POSITION_LIMIT], values[ct.MIN_POSITION_LIMIT]
        servo.velocity_limit = velocity_limit
        servo.current_limit = values.get(ct.CURRENT_LIMIT, 0)
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
        lim = servo.spec.limits
        if servo.operating_mode == ct.MODE_VELOCITY:
            own, (lower, upper), scale, offset = (
                (-velocity_limit, velocity_limit), lim.velocity, ct.RAD_S_PER_VELOCITY_UNIT, 0)
            unit = "rad/s"
        elif servo.operating_mode == ct.MODE_CURRENT:
            own, (lower, upper), scale, offset = (
                (-servo.current_limit, servo.current_limit), lim.effort, servo.effort_scale, 0)
            unit = "N m"
        else:
            own, (lower, upper), scale, offset = (
                (servo.min_goal, servo.max_goal), lim.position, ct.RAD_PER_TICK, -ct.CENTER_TICK)
            unit = "rad"
        lo = quantize_inward(lower, scale, lower, upper, offset) if math.isfinite(lower) else own[0]
        hi = quantize_inward(upper, scale, lower, upper, offset) if math.isfinite(upper) else own[1]
        servo.goal_lo, servo.goal_hi = max(lo, own[0]), min(hi, own[1])
        if servo.goal_lo > servo.goal_hi:
            raise DeviceError(
                f"{self._where}: id {servo.spec.id}: the limits [{lower:g}, {upper:g}] {unit}"
                f" lie outside what the servo's own limit fields allow"
                f" [{(own[0] + offset) * scale:g}, {(own[1] + offset) * scale:g}] {unit}",
                servo.spec.id)

    def _arm_watchdog(self, dxl_id: int, value: int) -> None:
        """Bus Watchdog: 0 (clears an expired one), then the configured value.

        Nothing for a servo without one (see :meth:`_check_bus_watchdogs`).
        """
        if not self._servos[dxl_id].bus_watchdog:
            return
        if value != 0:
            self._attempts(self.write_register, dxl_id, ct.BUS_WATCHDOG.address, b"\x00")
        if self._watchdog:
            self._attempts(self.write_register, dxl_id, ct.BUS_WATCHDOG.address,
                           bytes((self._watchdog,)))

    def _stop_goal(self, servo: _Servo, present_ticks: int) -> int:
        """The goal that keeps a servo where it is: its position, or velocity / current 0."""
        moving = servo.operating_mode in (ct.MODE_VELOCITY, ct.MODE_CURRENT)
        value = 0 if moving else present_ticks
        return max(servo.goal_lo, min(servo.goal_hi, value))

    def _write_stop_goal(self, servo: _Servo, present_ticks: int) -> None:
        mode = servo.operating_mode
        goal = self._stop_goal(servo, present_ticks)
        if mode == ct.MODE_CURRENT:
            data, address = struct.pack("<h", goal), ct.GOAL_CURRENT.address
        else:
            data = struct.pack("<i", goal)
            address = (ct.GOAL_VELOCITY.address if mode == ct.MODE_VELOCITY
                       else ct.GOAL_POSITION.address)
        self._attempts(self.write_register, servo.spec.id, address, data)

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
        """The cycle's read requests: one per Indirect Data address among the servos' models.

        A Sync Read asks one address of every servo listed, so servos whose models put
        Indirect Data 1 elsewhere (XL330: 208; X430/X540: 224) are asked in a request of
        their own; a bus of one kind (the common case) sends one request.
        """
        by_address: dict[int, list[int]] = {}
        for dxl_id in self._ids:
            area = _read_area(self._servos[dxl_id].model, self._where, dxl_id)
            by_address.setdefault(area.data, []).append(dxl_id)
        self._read_groups = [self._read_group(address, tuple(ids))
                             for address, ids in by_address.items()]

    def _read_group(self, address: int, ids: tuple[int, ...]) -> _ReadGroup:
        n = len(ids)
        fast = self.fast_sync_read
        packet = proto.sync_read(address, READ_SIZE, list(ids), fast=fast)
        # The whole expected answer as one struct: one unpack decodes every servo.
        heads: tuple[bytes, ...] = ()
        if fast:
            # header, id, length, 0x55 | (ERR ID DATA CRC) per servo
            reply_size = proto.HEADER_SIZE + 1 + n * (READ_SIZE + 4)
            reply_struct = struct.Struct("<4sBHB" + ("BB" + _READ_CODES + "H") * n)
        else:
            # (header, id, length, 0x55 | ERR, DATA, CRC) per servo; the first 8 bytes of
            # each status packet are known in advance: one bytes field, compared whole.
            one = proto.STATUS_OVERHEAD + READ_SIZE
            reply_size = n * one
            reply_struct = struct.Struct("<" + ("8sB" + _READ_CODES + "H") * n)
            length = one - proto.HEADER_SIZE
            heads = tuple(proto.HEADER + struct.pack("<BHB", i, length, proto.Instruction.STATUS)
                          for i in ids)
        timeout = self._timeout(len(packet), reply_size, 1 if fast else n)
        return _ReadGroup(ids, address, packet, reply_size, timeout, reply_struct, heads)

    def close(self, *, torque_off: bool = True) -> None:
        """Close the port; first torque off (one Sync Write, unverified) if ``torque_off``.

        ``torque_off`` False sends nothing: servos keep their torque, goals and armed
        Bus Watchdog (a bus that failed under ``safe_state: hold``). Never raises.
        """
        if self._open and torque_off:
            try:
                self._send(proto.sync_write(ct.TORQUE_ENABLE.address, 1,
                                            dict.fromkeys(self._ids, b"\x00")))
            except HardwareError as exc:
                _LOG.warning("%s: torque off at close failed: %s", self._where, exc)
        self._open = False
        self._transport.close()

    def clear_faults(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """Reboot the servos in a hardware error; clear an expired Bus Watchdog.

        A servo whose Hardware Error Status is not 0 gets the Reboot instruction (only
        those): it answers, restarts (not answering for a while: about 0.4 s measured on
        XC330, not given by the e-Manual; up to :data:`REBOOT_WAIT` is waited for), comes
        back with its RAM at the factory values (torque off, Indirect Addresses and Bus
        Watchdog reset), so the read block and the watchdog are set again and the error
        is read again. A servo whose Bus Watchdog expired gets it cleared (0), its goal
        set to where it stopped, and armed again. Torque stays as it is (a rebooted
        servo's is off).

        Returns:
            ``{id: what was done and what remains}``.

        Raises:
            TransportTimeoutError: a rebooted servo did not answer within REBOOT_WAIT.
        """
        self._require_open()
        targets = list(self._ids if ids is None else ids)
        for dxl_id in targets:
            self._known(dxl_id)
        before = self._attempts(self.read)
        reboot = [i for i in targets if before[i].error_code & 0xFF]
        self._reboot_and_wait(reboot)
        for dxl_id in reboot:  # RAM is back to the factory values
            servo = self._servos[dxl_id]
            area = _read_area(servo.model, self._where)
            self._attempts(self.write_register, dxl_id, area.address, servo.indirect_block)
            self._set_profile(servo)
            self._arm_watchdog(dxl_id, 0)
        after = self._attempts(self.read)
        answers = {}
        for dxl_id in targets:
            was, now = before[dxl_id], after[dxl_id]
            servo = self._servos[dxl_id]
            if dxl_id in reboot:
                left = (f"still reports {ct.describe_hardware_error(now.error_code & 0xFF)}"
                        if now.error_code & 0xFF else "no error now")
                answers[dxl_id] = (f"rebooted ({was.fault}); {left}; torque"
                                   f" {'on' if now.torque_enabled else 'off'}")
            elif was.error_code & ct.BUS_WATCHDOG_FAULT:
                self._attempts(self.write_register, dxl_id, ct.BUS_WATCHDOG.address, b"\x00")
                self._write_stop_goal(servo, _ticks(was.position))
                self._arm_watchdog(dxl_id, 0)
                answers[dxl_id] = "bus watchdog error cleared, goal set where it stopped, re-armed"
            else:
                answers[dxl_id] = "no fault; nothing done"
        return answers

    def _reboot_and_wait(self, ids: Sequence[int]) -> None:
        for dxl_id in ids:
            # Not retried: a servo whose answer was lost is restarting all the same (a
            # second Reboot would meet its silence); the wait below finds out.
            with contextlib.suppress(TransportTimeoutError, ProtocolError):
                self.reboot(dxl_id)
        self._await_reboot(ids)

    def _await_reboot(self, ids: Sequence[int]) -> None:
        """Wait until every servo of ``ids`` answers a PING again, at most REBOOT_WAIT."""
        deadline = time.monotonic() + REBOOT_WAIT
        waiting = list(ids)
        while waiting:
            try:
                self.ping(waiting[0])
                waiting.pop(0)
            except (TransportTimeoutError, ProtocolError):  # noqa: PERF203 - a poll
                if time.monotonic() > deadline:
                    raise TransportTimeoutError(
                        f"{self._where}: id(s) {waiting} did not answer within"
                        f" {REBOOT_WAIT:g} s of their Reboot") from None
                time.sleep(0.02)

    # ---------------------------------------------------------------- cycle

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """One Sync Write of Torque Enable, verified by one read of every servo.

        Switching on first clears and re-arms the Bus Watchdog of the servos switched on
        (one whose watchdog had expired first gets its goal set to where it stopped, so
        torque on resumes nothing stale). The Sync Write and its check are tried up to
        :data:`ATTEMPTS` times when the check's answer is lost.

        Raises:
            DeviceError: a servo did not take the new state (e.g. a hardware error).
        """
        self._require_open()
        targets = list(self._ids if ids is None else ids)
        for dxl_id in targets:
            self._known(dxl_id)
        if enabled and targets:
            states = self._attempts(self.read)
            for dxl_id in targets:
                if states[dxl_id].error_code & ct.BUS_WATCHDOG_FAULT:
                    self._attempts(self.write_register, dxl_id, ct.BUS_WATCHDOG.address, b"\x00")
                    self._write_stop_goal(self._servos[dxl_id], _ticks(states[dxl_id].position))
            watched = [i for i in targets if self._servos[i].bus_watchdog]
            if watched:
                self._send(proto.sync_write(ct.BUS_WATCHDOG.address, 1,
                                            dict.fromkeys(watched, b"\x00")))
            if watched and self._watchdog:
                self._send(proto.sync_write(ct.BUS_WATCHDOG.address, 1,
                                            dict.fromkeys(watched, bytes((self._watchdog,)))))
        value = b"\x01" if enabled else b"\x00"
        packet = proto.sync_write(ct.TORQUE_ENABLE.address, 1, dict.fromkeys(targets, value))
        self._link.switch_torque(packet, self.read, targets, enabled=enabled)

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """Sync Write the goals (NaN fields: that servo keeps its previous goal).

        Each goal is the nearest value of its field inside the actuator's limits and the
        servo's own (the next one inward when the nearest lies outside).
        """
        self._require_open()
        # id, value, id, value ... per goal field, by its address (a plain int key: the
        # Field itself hashes all its attributes)
        goals: dict[int, list[int]] = {}
        servos = self._servos
        for dxl_id, command in commands.items():
            servo = servos.get(dxl_id) or self._known(dxl_id)
            field, raw = self._goal(servo, command)
            if raw is not None:
                goals.setdefault(field.address, []).extend((dxl_id, raw))
        for field, code in _GOAL_CODES.items():
            if field.address in goals:
                self._send(proto.sync_write_values(field.address, code, goals[field.address]))

    def _goal(self, servo: _Servo, command: ActuatorCommand) -> tuple[ct.Field, int | None]:
        """The goal field ``servo``'s mode takes and ``command``'s value in it (None: NaN)."""
        mode = servo.operating_mode
        if mode == ct.MODE_VELOCITY:
            field, value = ct.GOAL_VELOCITY, command.velocity
            raw = None if math.isnan(value) else round_goal(value / ct.RAD_S_PER_VELOCITY_UNIT)
        elif mode == ct.MODE_CURRENT:
            field, value = ct.GOAL_CURRENT, command.effort
            raw = None if math.isnan(value) else round_goal(value * servo.current_scale)
        else:
            field, value = ct.GOAL_POSITION, command.position
            raw = (None if math.isnan(value)
                   else round_goal(value / ct.RAD_PER_TICK) + ct.CENTER_TICK)
        return field, None if raw is None else clamp_goal(servo, raw, self._where, _LOG)

    def read(self) -> dict[int, ActuatorState]:
        """One (Fast) Sync Read of every servo's present values.

        One request per Indirect Data address among the servos' models (one on a bus of
        one kind), each with its own timeout.

        Raises:
            TransportTimeoutError: a servo did not answer (the message names it).
            ProtocolError: a CRC or length error.
            DeviceError: a servo's status packet carries an error.
        """
        self._require_open()
        groups = self._read_groups
        if len(groups) == 1:
            return self._read(groups[0])
        states: dict[int, ActuatorState] = {}
        for group in groups:
            states.update(self._read(group))
        return {i: states[i] for i in self._ids}

    def _read(self, group: _ReadGroup) -> dict[int, ActuatorState]:
        """One (Fast) Sync Read of ``group``'s servos, within its one deadline."""
        self._send(group.packet)
        size, timeout = group.reply_size, group.timeout
        deadline = time.monotonic() + timeout
        what = "Fast Sync Read" if self.fast_sync_read else "Sync Read"
        try:
            raw = self._transport.read(max(1, size), timeout)
        except TransportTimeoutError:
            self._link.dirty = True
            raise TransportTimeoutError(f"{self._where}: {what}: no answer from id(s)"
                                        f" {list(group.ids)} within {timeout * 1e3:.0f} ms"
                                        ) from None
        except TransportError:
            self._link.dirty = True
            raise
        stamp = self.clock()
        # The common case: the whole answer in one read, exactly as asked. Anything else
        # (partial reads, garbage, stuffing, errors) goes through the packet reader, with
        # what is left of the same deadline.
        values = self._unpack_reply(group, raw) if len(raw) == size else None
        if values is not None:
            errors, columns = values
        else:
            errors, columns = self._records(group, raw, deadline)
            stamp = self.clock()
        if not _NO_ERROR.issuperset(errors):
            for dxl_id, error in zip(group.ids, errors, strict=True):
                if error & 0x7F:
                    self._status_error(dxl_id, error, what)
        return self._states(group.ids, columns, stamp)

    def _unpack_reply(self, group: _ReadGroup,
                      raw: bytes) -> tuple[Sequence[int], Sequence[Any]] | None:
        """``(error bytes, values)`` of a complete, clean reply, or None to parse it."""
        try:
            flat = group.reply_struct.unpack(raw)
        except struct.error:
            return None
        per = _NV + 3
        if self.fast_sync_read:  # 4 header fields, then error, id, the values, CRC per servo
            if (flat[0] != proto.HEADER or flat[1] != proto.BROADCAST_ID
                    or flat[2] != len(raw) - proto.HEADER_SIZE
                    or flat[3] != proto.Instruction.STATUS
                    or flat[5::per] != group.ids
                    or proto.crc16(memoryview(raw)[:-2]) != flat[-1]):
                return None
            return flat[4::per], [flat[6 + k::per] for k in range(_NV)]
        # per servo: its status packet's first 8 bytes, error, the values, CRC
        if (flat[0::per] != group.reply_heads
                or proto.crc16_each(raw, proto.STATUS_OVERHEAD + READ_SIZE, len(group.ids))
                != list(flat[per - 1::per])):
            return None
        return flat[1::per], [flat[2 + k::per] for k in range(_NV)]

    def _records(self, group: _ReadGroup, raw: bytes,
                 deadline: float) -> tuple[list[int], list[tuple[int, ...]]]:
        """``(error bytes, values)`` through the packet reader, in id order."""
        if self.fast_sync_read:
            records = self._receive_fast(group, raw, deadline)
        else:
            packets = self._receive(group.ids, group.reply_size, "Sync Read", group.timeout,
                                    raw, deadline=deadline)
            records = [(i, packets[i].error, packets[i].data) for i in group.ids]
        errors = []
        rows = []
        for dxl_id, error, data in records:
            if error & 0x7F:
                self._status_error(dxl_id, error, "Sync Read")
            if len(data) != READ_SIZE:
                self._link.dirty = True
                raise ProtocolError(f"{self._where}: id {dxl_id} sent {len(data)} bytes,"
                                    f" expected {READ_SIZE}")
            errors.append(error)
            rows.append(READ_STRUCT.unpack(data))
        return errors, list(zip(*rows, strict=True))

    def _states(self, ids: Sequence[int], columns: Sequence[Any],
                stamp: float) -> dict[int, ActuatorState]:
        """ActuatorStates of ``ids`` from the read block's values, one column per value.

        ``error_code``: Hardware Error Status, plus ``BUS_WATCHDOG_FAULT`` (0x100) when the
        servo's Bus Watchdog expired (it reads -1).
        """
        states = {}
        for (dxl_id, hw_error, torque, current, velocity, position, voltage, temperature,
             watchdog) in zip(ids, *columns, strict=True):
            code = hw_error | (ct.BUS_WATCHDOG_FAULT if watchdog == ct.BUS_WATCHDOG_EXPIRED
                               else 0)
            states[dxl_id] = ActuatorState(
                position=(position - ct.CENTER_TICK) * ct.RAD_PER_TICK,
                velocity=velocity * ct.RAD_S_PER_VELOCITY_UNIT,
                effort=current * self._servos[dxl_id].effort_scale,
                torque_enabled=torque == 1,
                error_code=code,
                fault=ct.describe_error_code(code) if code else "",
                temperature=float(temperature),
                voltage=voltage * ct.VOLTAGE_UNIT,
                stamp=stamp,
            )
        return states

    def _receive_fast(self, group: _ReadGroup, first: bytes,
                      deadline: float) -> list[tuple[int, int, bytes]]:
        """The records of ``group``'s Fast Sync Read answer, within ``deadline``.

        Every Fast Sync Read answer has the broadcast id: only its records say which
        request it answers. A complete answer for other ids is a late answer to an earlier
        request (the servos, or an emulator its host kept from running, answered after
        that request's timeout, when the next request had been sent): it is dropped,
        counted in ``stats["late_answers"]``, and this request's own answer is read on
        within the same deadline. Taken for this answer, it would fail this read and, as
        each late answer is read in place of the next one, the reads after it. (A late
        answer to an earlier request of the same ids cannot be told from this one's; its
        values are at most that request's timeout older than they are stamped.)
        """
        expected = group.reply_size
        while True:
            packet = self._receive([proto.BROADCAST_ID], expected, "Fast Sync Read",
                                   group.timeout, first, deadline=deadline)[proto.BROADCAST_ID]
            first = b""
            try:
                records = proto.split_fast_status(packet, READ_SIZE)
            except ProtocolError as exc:
                self._link.dirty = True
                raise ProtocolError(f"{self._where}: {exc}") from None
            got = [r[0] for r in records]
            if got == list(group.ids) or not self._answers_another(got):
                break
            self.stats["late_answers"] += 1
            # The start of this answer may have come with the late one: ask for the rest
            # only (a port waits its whole timeout for bytes that never come).
            expected = max(1, group.reply_size - len(self._link.reader.buffer))
        if got != list(group.ids):
            self._link.dirty = True
            missing = [i for i in group.ids if i not in got]
            if missing:
                raise TransportTimeoutError(f"{self._where}: Fast Sync Read: no data from"
                                            f" id(s) {missing}")
            raise ProtocolError(f"{self._where}: Fast Sync Read answered ids {got},"
                                f" asked {list(group.ids)}")
        return records

    def _answers_another(self, ids: list[int]) -> bool:
        """Whether records of ``ids`` answer another of this bus's read requests."""
        return any(list(g.ids) == ids for g in self._read_groups)

    # ---------------------------------------------------------------- single instructions

    def ping(self, dxl_id: int) -> tuple[int, int]:
        """PING one servo: ``(model number, firmware version)``."""
        request = proto.ping(dxl_id)
        self._send(request)
        packet = self._receive([dxl_id], _PING_REPLY, "PING",
                               self._timeout(len(request), _PING_REPLY))[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, "PING")
        data = packet.data
        if len(data) != 3:  # noqa: PLR2004 - model number (2) + firmware (1)
            raise ProtocolError(f"{self._where}: id {dxl_id}: PING answer of {len(data)} bytes")
        return data[0] | data[1] << 8, data[2]

    def broadcast_ping(self) -> dict[int, tuple[int, int]]:
        """PING the broadcast id once: ``{id: (model number, firmware)}`` of who answered.

        Every servo answers in turn; the wait covers 253 answers at the baud rate with
        their return delays, plus the margin (at least the fixed ``timeout``).
        """
        request = proto.ping(proto.BROADCAST_ID)
        self._send(request)
        reader = self._reader
        found: dict[int, tuple[int, int]] = {}
        wait = self._time.wire(len(request), _BROADCAST_PING_WAIT * _PING_REPLY,
                                  _BROADCAST_PING_WAIT)
        deadline = time.monotonic() + max(wait, self.timeout or 0.0)
        try:
            while (remaining := deadline - time.monotonic()) > 0:
                try:
                    reader.feed(self._transport.read(4096, remaining))
                except TransportTimeoutError:
                    break
                for packet in reader.valid_packets():
                    if packet.is_status and len(packet.data) == 3:  # noqa: PLR2004
                        found[packet.id] = (packet.data[0] | packet.data[1] << 8,
                                            packet.data[2])
        finally:
            self._link.dirty = True
        return found

    def reboot(self, dxl_id: int) -> None:
        """The Reboot instruction to one servo; its status comes before it restarts."""
        request = proto.reboot(dxl_id)
        self._send(request)
        packet = self._receive([dxl_id], proto.STATUS_OVERHEAD, "REBOOT",
                               self._timeout(len(request), proto.STATUS_OVERHEAD))[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, "REBOOT")

    def read_register(self, dxl_id: int, address: int, size: int) -> bytes:
        """READ ``size`` bytes at ``address`` of one servo."""
        request = proto.read(dxl_id, address, size)
        self._send(request)
        reply = proto.STATUS_OVERHEAD + size
        packet = self._receive([dxl_id], reply, "READ",
                               self._timeout(len(request), reply))[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, f"READ {address}")
        if len(packet.data) != size:
            raise ProtocolError(f"{self._where}: id {dxl_id}: READ {address} answered"
                                f" {len(packet.data)} bytes, asked {size}")
        return packet.data

    def write_register(self, dxl_id: int, address: int, data: bytes) -> None:
        """WRITE ``data`` at ``address`` of one servo and wait for its status."""
        request = proto.write(dxl_id, address, data)
        self._send(request)
        packet = self._receive([dxl_id], proto.STATUS_OVERHEAD, "WRITE",
                               self._timeout(len(request), proto.STATUS_OVERHEAD))[dxl_id]
        if packet.error & 0x7F:
            self._status_error(dxl_id, packet.error, f"WRITE {address}")

    # ---------------------------------------------------------------- I/O

    def _status_error(self, dxl_id: int, error: int, what: str) -> None:
        self._link.dirty = True
        raise DeviceError(f"{self._where}: id {dxl_id}: {what}:"
                          f" {proto.describe_status_error(error)}", dxl_id, error & 0x7F)

    def _require_open(self) -> None:
        if not self._open:
            raise TransportError(f"{self._where}: not open")

    def _known(self, dxl_id: int) -> _Servo:
        return known(self._servos, dxl_id, self._where)


def _is_status(packet: proto.Packet) -> bool:
    """Whether ``packet`` may be an answer: a status packet (not an echo of a request)."""
    return packet.is_status


def _transport_said(partial: bool, timeout: float, exc: BaseException) -> str:  # noqa: ARG001, FBT001
    """The end of the message of a missing answer: what the transport said, if nothing came."""
    return "" if partial else f": {exc}"


def _ticks(position: float) -> int:
    """Present Position ticks of a position the driver decoded (exact: it came from ticks)."""
    return round(position / ct.RAD_PER_TICK) + ct.CENTER_TICK


def _watchdog_units(seconds: float, where: str) -> int:
    """Bus Watchdog's value for ``seconds`` (20 ms units, rounded up; 0: off)."""
    if not math.isfinite(seconds) or seconds <= 0:
        return 0
    units = math.ceil(seconds / ct.BUS_WATCHDOG_UNIT - 1e-9)
    if units > ct.BUS_WATCHDOG_MAX:
        _LOG.warning("%s: device_watchdog %g s is beyond the Bus Watchdog's %g s; using that",
                     where, seconds, ct.BUS_WATCHDOG_MAX * ct.BUS_WATCHDOG_UNIT)
        units = ct.BUS_WATCHDOG_MAX
    return max(1, units)


def _runs(fields: Sequence[ct.Field], defined: frozenset[int]) -> list[list[ct.Field]]:
    """``fields`` (in address order) in runs one READ each may cover.

    A run goes on to the next field when every address from the end of its last field
    to that field's start is in ``defined``; else the next field starts a new run.
    """
    runs: list[list[ct.Field]] = []
    for fld in fields:
        if runs:
            last = runs[-1][-1]
            if all(a in defined for a in range(last.address + last.size, fld.address)):
                runs[-1].append(fld)
                continue
        runs.append([fld])
    return runs


def _read_area(model: ct.ModelInfo | None, where: str, dxl_id: int | None = None,
               ) -> ct.IndirectArea:
    """The Indirect Address / Data run that holds ``model``'s read block (entries 1..16)."""
    if model is None:
        raise ConfigError(f"{where}: id {dxl_id}: its model is unknown until open (or name"
                          " it in the YAML)")
    area = model.indirect[0]
    if area.count < len(INDIRECT_TARGETS):
        raise ConfigError(f"{where}: {model.name} has {area.count} indirect entries from"
                          f" {area.data}, the read block needs {len(INDIRECT_TARGETS)}")
    return area


def _profile_ms(spec: ActuatorSpec, where: str) -> int | None:
    """The option ``profile_time`` (s) as the time-based Profile Velocity (ms), or None.

    Each goal is then reached that long after it is written, along a straight line
    from where the servo's profile was (Profile Acceleration 0): a stream of goals at
    the control rate with ``profile_time`` one control period becomes a continuous
    ramp instead of a step each period.
    """
    value = spec.options.get("profile_time")
    if value is None:
        return None
    if spec.mode is not ControlMode.POSITION:
        raise ConfigError(f"{where}: profile_time is for position actuators only")
    seconds = positive(value, "profile_time", where)
    ms = round(seconds * 1e3)
    if not 1 <= ms <= round(PROFILE_TIME_MAX * 1e3):
        raise ConfigError(f"{where}: profile_time must be 0.001..{PROFILE_TIME_MAX:g} s"
                          f" (whole ms), got {value!r}")
    return ms


def return_delay_units(value: Any, where: str) -> int:  # noqa: ANN401 - YAML value
    """Return Delay Time's value for ``return_delay_us`` (its unit is 2 µs, so even only)."""
    unit_us = round(ct.RETURN_DELAY_UNIT * 1e6)
    top = ct.RETURN_DELAY_TIME_MAX * unit_us
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise ConfigError(f"{where}: return_delay_us must be an integer in 0..{top},"
                          f" got {value!r}")
    if value % unit_us:
        raise ConfigError(f"{where}: return_delay_us {value} is not a multiple of"
                          f" {unit_us} µs, the unit of Return Delay Time; use"
                          f" {value - value % unit_us} or {value - value % unit_us + unit_us}")
    return value // unit_us
