"""Cia402Bus: CANopen CiA 402 servo drives on one CAN bus, through the ``canopen`` library.

The bus is the CANopen master, the SYNC producer and (with a device watchdog) a
heartbeat producer. :meth:`Cia402Bus.open` first asks every drive what it is (SDO reads
of 0x1000 device type, 0x1008 name where the YAML names a model) and what it is doing
(statusword 0x6041, mode 0x6061, the PDO configuration), then, per drive:

* ``keep_torque`` and the drive is in OPERATION ENABLED with the configured mode and
  PDO configuration: nothing that could drop it is sent (no NMT pre-operational, no
  controlword, no re-mapping); only the heartbeat objects are checked and rewritten where
  they differ, the driver takes over the drive's own target, and NMT *start* (no change
  for a node already operational) is sent;
* otherwise: torque off first, by SDO, before anything else changes: a drive in FAULT
  stays in FAULT (reported by :meth:`~Cia402Bus.read`; ``reset_faults: true`` resets it
  here instead), the others get *shutdown* (one in QUICK STOP ACTIVE *disable voltage*
  before it; a drive that was enabled is logged as a warning under ``keep_torque``);
  then NMT *enter pre-operational*; producer heartbeat 0x1017 (``heartbeat_ms``), device
  watchdog (below), mode 0x6060 (0x6061 polled until it shows it, at most
  :data:`MODE_SWITCH_TIMEOUT`), motor rated torque 0x6076 (unless ``rated_torque`` is
  given); the PDO mapping is written by SDO, all synchronous (type 1):
  RPDO1 = controlword 0x6040 + target (0x607A / 0x60FF / 0x6071); TPDO1 = statusword
  0x6041 + position actual 0x6064; TPDO2 = velocity actual 0x606C + torque actual 0x6077
  + error code 0x603F; every other PDO disabled. COB-IDs are those of the CiA 301
  pre-defined connection set for the node id (RPDO1 0x200 + id, TPDO1 0x180 + id, TPDO2
  0x280 + id) unless the actuator's ``cob_ids`` option sets them; the EDS's values are
  never used (a commissioned EDS carries another node's);
* NMT *start*, and one SYNC round that must bring every TPDO.

Device watchdog (``BusSpec.device_watchdog`` > 0): the bus produces a heartbeat as node
``host_node_id`` (a periodic send task at a quarter of the watchdog time, and one frame
before every SYNC); each drive consumes it (heartbeat consumer 0x1016, time = the
watchdog) and, when it stops, signals a heartbeat event (EMCY 0x8130) and runs its
abort connection option 0x6007 (``abort_connection``: 1 fault, the default; 2 disable
voltage; 3 quick stop; 0 nothing). :meth:`~Cia402Bus.close` with ``torque_off`` disarms
the consumers before the heartbeat stops; without it they stay armed.

Per control cycle :meth:`~Cia402Bus.read` sends one SYNC (the drives apply the RPDO
received before it, then answer with their TPDOs) and waits for every TPDO;
:meth:`~Cia402Bus.write` sends one RPDO per drive (applied at the next SYNC), each target
rounded inward of the actuator's limits (profile position: see
:meth:`~Cia402Bus._next_setpoint`). :meth:`~Cia402Bus.set_torque` walks the CiA 402
state machine (canopen's ``State402`` transition table) one SYNC per step to OPERATION
ENABLED, or back to READY TO SWITCH ON. :meth:`~Cia402Bus.clear_faults` sends a fault
reset (controlword bit 7 rising edge) to drives in FAULT.

Faults: a drive in FAULT is reported by :meth:`~Cia402Bus.read` in ``error_code``/
``fault`` (0x603F, the last EMCY); the bus stays usable. A quick stop (statusword QUICK
STOP ACTIVE, or an EMCY 0x8130 when 0x6007 may be a quick stop) is reported likewise
until ``clear_faults`` or ``set_torque(True)``, and meanwhile no RPDO carries *enable
operation*: the quick stop command instead (see ``_CW_QUICK_STOP``). Heartbeat
loss or a drive that left OPERATIONAL (reboot) raises :class:`TransportError`; missing
TPDOs :class:`TransportTimeoutError`.

Timeouts: ``sync_timeout`` defaults to the wire time of one round (SYNC, the RPDOs, the
TPDOs at the transport's bitrate, see :func:`~skel_ros.hardware.can_transport.wire_time`)
plus 10 ms for the drives plus ``BusSpec.timeout_margin``; ``sdo_timeout`` to 0.25 s plus
the margin. The SDO requests and SYNC rounds that opening, enabling and clearing faults
depend on are tried ``1 + sdo_retries`` / ``1 + sync_retries`` times; a cycle's
:meth:`~Cia402Bus.read` is tried once (the backend counts failed cycles).

Units (actuator options): ``counts_per_rev`` (default 65536) or ``counts_per_rad``
converts positions; ``velocity_per_rad_s`` (velocity units per rad/s, default the
counts per rad, i.e. 0x606C in counts/s); torques are per mille of the rated torque
(``rated_torque`` in N·m, default read from the drive's 0x6076 in mN·m). ``op_mode``:
``csp`` (default in position mode), ``pp``, ``csv`` (velocity), ``pv``, ``cst`` (effort),
``pt``. ``eds``: the drive's EDS file (default the project's ``drive.eds``). ``cob_ids``:
``{rpdo1: 0x201, tpdo1: 0x181, tpdo2: 0x281}`` (any subset).

Bus options: ``sync_timeout``, ``sdo_timeout`` (s), ``sdo_retries`` (2), ``sync_retries``
(2), ``heartbeat_ms`` (100; 0 = off), ``heartbeat_timeout`` (s on the injected clock,
default 5 heartbeat periods, at least 0.5), ``reset_faults`` (false), ``host_node_id``
(127), ``abort_connection`` (1 or ``fault``, ``disable_voltage``, ``quick_stop``, ``none``),
``eds``.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from skel_ros.hardware import can_transport
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

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import canopen
    from canopen.emcy import EmcyError
    from canopen.pdo import PdoMap

__all__ = ["ABORT_CONNECTION", "DEFAULT_EDS", "MODE_CODES", "MODE_SWITCH_TIMEOUT",
           "STATUS_STATES", "Cia402Bus", "Units", "predefined_cob_id", "state_of",
           "units_for"]

_LOG = logging.getLogger(__name__)

#: The project's EDS for the emulated drive (and the default dictionary).
DEFAULT_EDS = Path(__file__).with_name("drive.eds")

#: op_mode option -> CiA 402 mode of operation (0x6060).
MODE_CODES: Mapping[str, int] = {"pp": 1, "pv": 3, "pt": 4, "csp": 8, "csv": 9, "cst": 10}
_DEFAULT_OP_MODE = {ControlMode.POSITION: "csp", ControlMode.VELOCITY: "csv",
                    ControlMode.EFFORT: "cst"}
_MODE_KIND = {1: ControlMode.POSITION, 8: ControlMode.POSITION, 3: ControlMode.VELOCITY,
              9: ControlMode.VELOCITY, 4: ControlMode.EFFORT, 10: ControlMode.EFFORT}
_TARGET = {ControlMode.POSITION: 0x607A, ControlMode.VELOCITY: 0x60FF,
           ControlMode.EFFORT: 0x6071}

#: ``abort_connection`` names -> CiA 402 abort connection option code (0x6007).
ABORT_CONNECTION: Mapping[str, int] = {"none": 0, "fault": 1, "disable_voltage": 2,
                                       "quick_stop": 3}

#: Statusword (mask, value) -> state name, as CiA 402 (and canopen's State402) define.
STATUS_STATES: tuple[tuple[int, int, str], ...] = (
    (0x4F, 0x00, "NOT READY TO SWITCH ON"),
    (0x4F, 0x40, "SWITCH ON DISABLED"),
    (0x6F, 0x21, "READY TO SWITCH ON"),
    (0x6F, 0x23, "SWITCHED ON"),
    (0x6F, 0x27, "OPERATION ENABLED"),
    (0x4F, 0x08, "FAULT"),
    (0x4F, 0x0F, "FAULT REACTION ACTIVE"),
    (0x6F, 0x07, "QUICK STOP ACTIVE"),
)
_FAULT_STATES = ("FAULT", "FAULT REACTION ACTIVE")
_POWERED = ("OPERATION ENABLED", "QUICK STOP ACTIVE", "FAULT REACTION ACTIVE")
_CW_DISABLE_VOLTAGE = 0x00
_CW_FAULT_RESET = 0x80
_CW_SHUTDOWN = 0x06
_CW_ENABLE = 0x0F
# CiA 402 command "quick stop": bit 7 (fault reset) 0, bit 2 (quick stop) 0, bit 1 (enable
# voltage) 1; bits 0 (switch on) and 3 (enable operation) are "don't care". Both left at 0
# here, so nothing in the frame asks for torque. From OPERATION ENABLED it is transition 11
# (to QUICK STOP ACTIVE), from READY TO SWITCH ON / SWITCHED ON transitions 7 / 10 (to
# SWITCH ON DISABLED); in QUICK STOP ACTIVE it is no transition at all: the drive stays
# there (option codes 5..8) or finishes its stop into SWITCH ON DISABLED (1..4), whereas
# "enable operation" would be transition 16 back to OPERATION ENABLED.
_CW_QUICK_STOP = 0x02
_CW_NEW_SETPOINT = 0x10
_CW_CHANGE_IMMEDIATELY = 0x20
_SW_SETPOINT_ACK = 0x1000        # statusword bit 12 in profile position: set-point taken
_QUICK_STOP = "QUICK STOP ACTIVE"
_HEARTBEAT_EVENT = 0x8130        # CiA 301 EMCY: a heartbeat the drive consumes stopped
#: s the mode of operation display 0x6061 may take to show the mode written to 0x6060
#: (the time canopen's BaseNode402 allows, TIMEOUT_SWITCH_OP_MODE), and its poll period.
MODE_SWITCH_TIMEOUT = 0.5
_MODE_POLL_PERIOD = 0.01
_NMT_OPERATIONAL = 5
_GENERIC_ERROR = 0x1000          # CiA 301 "generic error": a FAULT with no code given
_QUICK_STOP_BIT = 0x10000        # above the 16-bit CiA codes: QUICK STOP ACTIVE, no code
_INT32 = (-(2**31), 2**31 - 1)
_INT16 = (-(2**15), 2**15 - 1)
_DRIVE_TURNAROUND = 0.01         # s a drive may take to answer a SYNC with its TPDOs
_SDO_TURNAROUND = 0.25           # s a drive may take to answer an SDO request
_PDO_NAMES = ("rpdo1", "tpdo1", "tpdo2")
_BUS_OPTIONS = frozenset({"sync_timeout", "sdo_timeout", "sdo_retries", "sync_retries",
                          "heartbeat_ms", "heartbeat_timeout", "reset_faults", "eds",
                          "host_node_id", "abort_connection"})
_ACT_OPTIONS = frozenset({"counts_per_rev", "counts_per_rad", "velocity_per_rad_s",
                          "rated_torque", "op_mode", "eds", "cob_ids"})


def state_of(statusword: int) -> str:
    """The CiA 402 state a statusword reports (``"UNKNOWN"`` if none matches)."""
    for mask, value, name in STATUS_STATES:
        if statusword & mask == value:
            return name
    return "UNKNOWN"


def _mode_name(code: int) -> str:
    """A mode of operation code with its op_mode name where it has one: ``8 (csp)``."""
    names = [name for name, value in MODE_CODES.items() if value == code]
    return f"{code} ({names[0]})" if names else str(code)


def predefined_cob_id(kind: str, number: int, node_id: int) -> int:
    """The CiA 301 pre-defined connection set's COB-ID of RPDO/TPDO ``number`` (1..4).

    TPDO1..4: 0x180, 0x280, 0x380, 0x480 + node id; RPDO1..4: 0x200, 0x300, 0x400,
    0x500 + node id.
    """
    base = 0x180 if kind == "tpdo" else 0x200
    return base + 0x100 * (number - 1) + node_id


@dataclass(frozen=True)
class Units:
    """Conversion between SI at the output and the drive's units.

    Attributes:
        counts_per_rad: position counts per rad.
        velocity_per_rad_s: velocity units (0x606C / 0x60FF) per rad/s.
        rated_torque: N·m of 1000 per mille (0x6076 / 1000), NaN until known.
    """

    counts_per_rad: float
    velocity_per_rad_s: float
    rated_torque: float = math.nan

    def position(self, counts: int) -> float:
        """Radians of a position in counts (0x6064, 0x607A)."""
        return counts / self.counts_per_rad

    def velocity(self, units: int) -> float:
        """rad/s of a velocity in drive units (0x606C, 0x60FF)."""
        return units / self.velocity_per_rad_s

    def effort(self, per_mille: int) -> float:
        """N·m of a torque in per mille of the rated torque (0x6077, 0x6071)."""
        return per_mille / 1000.0 * self.rated_torque


def _positive(options: Mapping[str, Any], key: str, where: str) -> float | None:
    if key not in options:
        return None
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ConfigError(f"{where}: option {key!r} must be a positive number, got {value!r}")
    return float(value)


def _count(options: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10:  # noqa: PLR2004
        raise ConfigError(f"{where}: option {key!r} must be an integer in 0..10, got {value!r}")
    return int(value)


def units_for(options: Mapping[str, Any], where: str = "CiA 402 actuator") -> Units:
    """:class:`Units` from an actuator's options (shared by the driver and the emulator).

    Raises:
        ConfigError: bad numbers, or both ``counts_per_rev`` and ``counts_per_rad``.
    """
    rev = _positive(options, "counts_per_rev", where)
    rad = _positive(options, "counts_per_rad", where)
    if rev is not None and rad is not None:
        raise ConfigError(f"{where}: give counts_per_rev or counts_per_rad, not both")
    cpr = rad if rad is not None else (rev if rev is not None else 65536.0) / (2 * math.pi)
    vel = _positive(options, "velocity_per_rad_s", where)
    torque = _positive(options, "rated_torque", where)
    return Units(cpr, vel if vel is not None else cpr,
                 torque if torque is not None else math.nan)


def op_mode_for(spec: ActuatorSpec, where: str) -> int:
    """The 0x6060 code for an actuator (``op_mode`` option, else by its ControlMode)."""
    if spec.mode not in _DEFAULT_OP_MODE:
        raise ConfigError(f"{where}: mode {spec.mode.value!r} is not available on CiA 402 "
                          "drives (position, velocity or effort)")
    name = str(spec.options.get("op_mode", _DEFAULT_OP_MODE[spec.mode])).lower()
    if name not in MODE_CODES:
        raise ConfigError(f"{where}: op_mode must be one of {', '.join(MODE_CODES)}, "
                          f"got {name!r}")
    code = MODE_CODES[name]
    if _MODE_KIND[code] is not spec.mode:
        raise ConfigError(f"{where}: op_mode {name!r} does not fit mode {spec.mode.value!r}")
    return code


def _cob_ids(spec: ActuatorSpec, where: str) -> dict[str, int]:
    """The COB-IDs of RPDO1, TPDO1, TPDO2: pre-defined from the node id unless ``cob_ids``."""
    out = {name: predefined_cob_id(name[:4], int(name[4:]), spec.id) for name in _PDO_NAMES}
    given = spec.options.get("cob_ids", {})
    if not isinstance(given, dict):
        raise ConfigError(f"{where}: option 'cob_ids' must be a mapping like "
                          f"{{rpdo1: 0x{out['rpdo1']:X}}}, got {given!r}")
    for key, value in given.items():
        if key not in out:
            raise ConfigError(f"{where}: cob_ids key {key!r} unknown; known: "
                              f"{', '.join(_PDO_NAMES)}")
        if isinstance(value, bool) or not isinstance(value, int) or not 0x81 <= value <= 0x7FF:  # noqa: PLR2004
            raise ConfigError(f"{where}: cob_ids {key} must be an 11-bit COB-ID in "
                              f"0x081..0x7FF, got {value!r}")
        out[key] = value
    return out


def _abort_option(options: Mapping[str, Any], where: str) -> int:
    value = options.get("abort_connection", "fault")
    if isinstance(value, str) and value.lower() in ABORT_CONNECTION:
        return ABORT_CONNECTION[value.lower()]
    if isinstance(value, int) and not isinstance(value, bool) and -(2**15) <= value <= 3:  # noqa: PLR2004
        return value   # negative: manufacturer-specific reactions (CiA 402)
    raise ConfigError(f"{where}: abort_connection must be one of "
                      f"{', '.join(ABORT_CONNECTION)} or a CiA 402 option code "
                      f"(-32768..3), got {value!r}")


@dataclass
class _Drive:
    spec: ActuatorSpec
    where: str
    op_mode: int
    kind: ControlMode
    units: Units
    eds: Path
    cob_ids: dict[str, int]
    node: Any = None                    # canopen.BaseNode402 once open
    controlword: int = _CW_SHUTDOWN
    target: int | None = None
    # Profile position: bit 4 (new set-point) of the last RPDO, the SYNC count when it was
    # raised, the target sent with that rising edge (None: none since enabling).
    setpoint_bit: bool = False
    setpoint_sync: int = -1
    latched_target: int | None = None
    quick_stop: bool = False            # seen (statusword or EMCY) and not yet cleared
    sent_enable: bool = False           # the last RPDO carried "enable operation"
    # set_torque(True) is walking the drive up: a QUICK STOP ACTIVE statusword then is the
    # stop being left (a drive may sample its TPDO before it applies the RPDO of the same
    # SYNC), not a new one, and does not latch quick_stop
    enabling: bool = False
    values: dict[int, int] = field(default_factory=dict)   # last TPDO values by index
    received: set[int] = field(default_factory=set)        # TPDO numbers since the SYNC
    heartbeat_stamp: float = math.nan
    heartbeat_state: int | None = None
    rebooted: bool = False                 # a boot-up message came after open
    started: float = math.nan              # NMT start sent (a heartbeat sent before it
                                           # may still say PRE-OPERATIONAL)
    emcy: list[EmcyError] = field(default_factory=list)
    stamp: float = math.nan
    consumer_sub: int | None = None        # our 0x1016 entry, while armed


class Cia402Bus(ActuatorBus):
    """Every CiA 402 drive on one CAN bus (see the module docstring).

    Args:
        spec: the bus; ``transport`` is a python-can mapping.
        actuators: the drives (node ids 1..127).
        clock: monotonic seconds.

    Raises:
        ConfigError: bad options, unknown op_mode, impedance mode, missing EDS, bad node id,
            COB-IDs used twice, a watchdog longer than 0x1016 can hold.
    """

    protocol: ClassVar[str] = "canopen"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],  # noqa: C901, PLR0915
                 clock: Callable[[], float]) -> None:
        super().__init__(spec, actuators, clock)
        opts = spec.options
        unknown = set(opts) - _BUS_OPTIONS
        if unknown:
            raise ConfigError(f"bus {spec.name!r}: unknown CANopen bus option(s) "
                              f"{sorted(unknown)}; known: {', '.join(sorted(_BUS_OPTIONS))}")
        where = f"bus {spec.name!r}"
        hb = opts.get("heartbeat_ms", 100)
        if isinstance(hb, bool) or not isinstance(hb, int) or not 0 <= hb <= 0xFFFF:  # noqa: PLR2004
            raise ConfigError(f"{where}: heartbeat_ms must be an integer in 0..65535, "
                              f"got {hb!r}")
        self.heartbeat_ms = hb
        self.heartbeat_timeout = (_positive(opts, "heartbeat_timeout", where)
                                  or max(0.5, 5 * hb / 1000))
        self.reset_faults = bool(opts.get("reset_faults", False))
        self.sdo_retries = _count(opts, "sdo_retries", where, 2)
        self.sync_retries = _count(opts, "sync_retries", where, 2)
        self.abort_connection = _abort_option(opts, where)
        host = opts.get("host_node_id", 127)
        if isinstance(host, bool) or not isinstance(host, int) or not 1 <= host <= 127:  # noqa: PLR2004
            raise ConfigError(f"{where}: host_node_id must be a node id in 1..127, got {host!r}")
        self.host_node_id = host
        watchdog = float(spec.device_watchdog)
        if not (math.isfinite(watchdog) and 0 <= watchdog <= 0xFFFF / 1000):
            raise ConfigError(f"{where}: device_watchdog {watchdog!r} s does not fit the "
                              "heartbeat consumer time (0..65.535 s in ms)")
        self.consumer_ms = round(watchdog * 1000)
        if watchdog > 0 and self.consumer_ms == 0:
            self.consumer_ms = 1
        bus_eds = opts.get("eds")
        self._drives: dict[int, _Drive] = {}
        owners: dict[int, str] = {}
        for act in self.actuators:
            awhere = f"{where} CiA 402 drive {act.name or act.id!r} (node {act.id})"
            if not 1 <= act.id <= 127:  # noqa: PLR2004
                raise ConfigError(f"{awhere}: CANopen node id must be in 1..127")
            if act.id == host and self.consumer_ms:
                raise ConfigError(f"{awhere}: node id {host} is the host's heartbeat id; set "
                                  "the bus option host_node_id to a free id")
            bad = set(act.options) - _ACT_OPTIONS
            if bad:
                raise ConfigError(f"{awhere}: unknown option(s) {sorted(bad)}; known: "
                                  f"{', '.join(sorted(_ACT_OPTIONS))}")
            code = op_mode_for(act, awhere)
            eds = Path(str(act.options.get("eds", bus_eds or DEFAULT_EDS)))
            if not eds.is_file():
                raise ConfigError(f"{awhere}: EDS file {str(eds)!r} not found")
            cobs = _cob_ids(act, awhere)
            for name, cob in cobs.items():
                other = owners.setdefault(cob, f"{name} of node {act.id}")
                if other != f"{name} of node {act.id}":
                    raise ConfigError(f"{awhere}: {name} COB-ID 0x{cob:03X} is already "
                                      f"{other}'s")
            self._drives[act.id] = _Drive(act, awhere, code, _MODE_KIND[code],
                                          units_for(act.options, awhere), eds, cobs)
        n = len(self._drives)
        # One round: SYNC (0 bytes), an RPDO (6 bytes) and two TPDOs (6, 8 bytes) per drive,
        # and the host heartbeat (1 byte).
        wire = can_transport.wire_time(spec.transport, [0, 1] + [6, 6, 8] * n)
        self.sync_timeout = (_positive(opts, "sync_timeout", where)
                             or wire + _DRIVE_TURNAROUND + spec.timeout_margin)
        self.sdo_timeout = (_positive(opts, "sdo_timeout", where)
                            or can_transport.wire_time(spec.transport, [8, 8])
                            + _SDO_TURNAROUND + spec.timeout_margin)
        self._network: canopen.Network | None = None
        self._heartbeat_task: Any = None
        self._cond = threading.Condition()
        self._heard: dict[int, str] = {}   # node id -> what was heard from it while opening
        self._waiting: set[int] = set()    # drives whose TPDOs this SYNC round still lacks
        self._sync_count = 0               # SYNCs sent since open
        # An EMCY 0x8130 (heartbeat event) announces a quick stop unless the drive's abort
        # connection option is known (set by this driver) to be another reaction.
        self._heartbeat_event_stops = not (self.consumer_ms and self.abort_connection in (
            ABORT_CONNECTION["none"], ABORT_CONNECTION["fault"],
            ABORT_CONNECTION["disable_voltage"]))
        self._where = can_transport.describe(spec.transport)

    # ------------------------------------------------------------------ lifecycle

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded and :meth:`close` was not called since."""
        return self._network is not None

    def open(self, *, keep_torque: bool = False) -> None:
        """Read what each drive does, configure it, start the PDO exchange (module docstring).

        Raises:
            TransportError: the bus cannot be opened.
            TransportTimeoutError: a drive does not answer SDOs or PDOs (the message names
                the drives that did, the nodes heard on the bus and the bitrate).
            DeviceError: not a CiA 402 device, another model than configured, no heartbeat
                consumer for the device watchdog.
            ProtocolError: SDO abort, mode not accepted.
        """
        import canopen

        if self._network is not None:
            self.close(torque_off=not keep_torque)
        bus = can_transport.open_bus(self.spec.transport)
        network = canopen.Network(bus)
        network.NOTIFIER_CYCLE = 0.05  # stop() waits at most this long for the thread
        self._heard = {}
        for node_id in range(1, 128):
            network.subscribe(0x700 + node_id, self._on_heard)
            network.subscribe(0x80 + node_id, self._on_heard)
        try:
            network.connect()
        except Exception as exc:  # noqa: BLE001 - python-can notifier start
            bus.shutdown()
            raise TransportError(f"{self._where}: cannot start the CAN notifier: {exc}"
                                 ) from None
        self._network = network
        try:
            self._start_heartbeat(network)
            for d in self._drives.values():
                self._attach(network, d)
            self._identify()
            kept = [d for d in self._drives.values() if self._configure(d, keep_torque)]
            for d in self._drives.values():
                d.node.nmt.state = "OPERATIONAL"   # no change for a node already there
                d.heartbeat_stamp = d.started = self.clock()
            self._sync_round(list(self._drives), "the first SYNC after NMT start",
                             retries=self.sync_retries)
            self._check_heartbeats()
            for d in kept:
                _LOG.info("%s: kept in OPERATION ENABLED at its target", d.where)
        except BaseException:
            self.close(torque_off=not keep_torque)
            raise

    def close(self, *, torque_off: bool = True) -> None:
        """Release the bus; never raises.

        With ``torque_off``: RPDO *shutdown* + SYNC (torque off), the heartbeat consumers
        disarmed, NMT pre-operational. Without: nothing is sent, the drives keep their
        state and their armed consumers (which react when the heartbeat stays away).
        """
        network, self._network = self._network, None
        if network is None:
            return
        if torque_off:
            self._torque_off_on_close(network)
        if self._heartbeat_task is not None:
            try:
                self._heartbeat_task.stop()
            except Exception as exc:  # noqa: BLE001 - close never raises
                _LOG.warning("%s: stopping the heartbeat failed: %s", self._where, exc)
            self._heartbeat_task = None
        try:
            network.disconnect()
        except Exception as exc:  # noqa: BLE001
            _LOG.warning("%s: disconnect failed: %s", self._where, exc)
        for d in self._drives.values():
            d.node = None

    def _torque_off_on_close(self, network: Any) -> None:  # noqa: ANN401 - canopen.Network
        for d in self._drives.values():
            try:
                if d.node is not None and 1 in d.node.rpdo and d.node.rpdo[1].enabled:
                    d.controlword = _CW_SHUTDOWN
                    self._fill_rpdo(d)
                    d.node.rpdo[1].transmit()
            except Exception as exc:  # noqa: BLE001, PERF203 - close never raises
                _LOG.warning("%s: torque off on close failed: %s", d.where, exc)
        try:
            network.sync.transmit()
        except Exception as exc:  # noqa: BLE001
            _LOG.warning("%s: SYNC on close failed: %s", self._where, exc)
        for d in self._drives.values():
            if d.node is None:
                continue
            d.node.sdo.MAX_RETRIES = 1
            try:
                if d.consumer_sub is not None:
                    self._download(d, 0x1016, d.consumer_sub, 0, 4, "heartbeat consumer off")
                    d.consumer_sub = None
                d.node.nmt.state = "PRE-OPERATIONAL"
            except Exception as exc:  # noqa: BLE001
                _LOG.warning("%s: disarming / NMT on close failed: %s", d.where, exc)

    # ------------------------------------------------------------------ contract

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """Walk the 402 state machine to OPERATION ENABLED (or READY TO SWITCH ON).

        One step per SYNC, with canopen's ``State402`` transitions. Position targets not
        written yet are set to the actual position first, so nothing jumps. Enabling is the
        explicit command that ends a quick stop the driver saw (from QUICK STOP ACTIVE it
        is transition 16 or, where the drive already finished its stop, the way up from
        SWITCH ON DISABLED); in profile position the next written target is taken anew.

        Raises:
            DeviceError: a drive is in FAULT, or does not reach the state in 6 steps.
            TransportTimeoutError: TPDOs missing.
        """
        targets = [self._drives[i] for i in self._ids(ids)]
        goal = "OPERATION ENABLED" if enabled else "READY TO SWITCH ON"
        if enabled:
            for d in targets:
                self._prepare_enable(d)
        try:
            self._walk(targets, goal, enabled=enabled)
        finally:
            with self._cond:
                for d in targets:
                    d.enabling = False

    def _walk(self, targets: list[_Drive], goal: str, *, enabled: bool) -> None:
        """:meth:`set_torque`'s steps, one per SYNC, towards ``goal``."""
        from canopen.profiles.p402 import State402

        p402: Any = State402  # untyped library class
        for _step in range(6):
            pending = [d for d in targets if state_of(d.values.get(0x6041, 0)) != goal]
            if not pending:
                return
            for d in pending:
                state = state_of(d.values.get(0x6041, 0))
                if state in _FAULT_STATES:
                    if not enabled:
                        continue  # a faulted drive produces no torque
                    raise self._fault_error(d)
                nxt = goal if (state, goal) in p402.TRANSITIONTABLE else (
                    p402.next_state_indirect(state))
                d.controlword = p402.TRANSITIONTABLE.get((state, nxt), _CW_SHUTDOWN)
                self._send_rpdo(d)
            self._sync_round(list(self._drives), f"switching to {goal}",
                             retries=self.sync_retries)
            if enabled:
                self._raise_faults(targets)
        stuck = [d for d in targets
                 if (st := state_of(d.values.get(0x6041, 0))) != goal
                 and (enabled or st not in _FAULT_STATES)]
        if stuck:
            d = stuck[0]
            sw = d.values.get(0x6041, 0)
            raise DeviceError(f"{d.where}: did not reach {goal} (statusword 0x{sw:04X}, "
                              f"{state_of(sw)})", d.spec.id, d.values.get(0x603F, 0))

    def _prepare_enable(self, d: _Drive) -> None:
        """Before enabling: a target (the actual position if none), no set-point, no stop."""
        if d.target is None:
            d.target = (d.values.get(0x6064, 0) if d.kind is ControlMode.POSITION else 0)
        d.setpoint_bit, d.latched_target = False, None
        with self._cond:
            d.quick_stop, d.enabling = False, True

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """One RPDO per drive in ``commands`` (applied by the drive at the next SYNC).

        Each target is the drive unit nearest to the command whose value the drive decodes
        inside the actuator's limits (:func:`~skel_ros.hardware.base.quantize_inward`).

        Raises:
            ConfigError: an id not on this bus.
            ProtocolError: the value needed by the drive's mode is NaN or infinite.
            TransportError: the bus failed.
        """
        self._require_open()
        for node_id, cmd in commands.items():
            d = self._drives.get(node_id)
            if d is None:
                raise ConfigError(f"bus {self.spec.name!r}: no CiA 402 drive with id {node_id}")
            d.target = self._raw_target(d, cmd)
            if d.op_mode == MODE_CODES["pp"]:
                self._next_setpoint(d)
            self._send_rpdo(d)

    def _next_setpoint(self, d: _Drive) -> None:
        """Profile position: bit 4 (new set-point) of the RPDO about to carry ``d.target``.

        The drive takes 0x607A on a rising edge of bit 4 (bit 5, change set immediately,
        is always set), so a target that differs from the one last sent with a rising edge
        is sent with bit 4 = 1 once bit 4 was 0 at a SYNC and the drive's set-point
        acknowledge (statusword bit 12) is clear; bit 4 then goes back to 0 after the next
        SYNC. Until a SYNC applied it, a raised bit 4 stays raised and carries the newest
        target. So every new target goes out with an edge, the newest one, within two
        cycles (more if the drive is slow to clear bit 12; a drive that never sets it is
        not waited for).
        """
        if d.setpoint_bit:
            if self._sync_count == d.setpoint_sync:   # no SYNC since: still the same edge
                d.latched_target = d.target
            else:
                d.setpoint_bit = False
        elif d.target != d.latched_target and not (
                d.values.get(0x6041, 0) & _SW_SETPOINT_ACK):
            d.setpoint_bit, d.setpoint_sync, d.latched_target = (
                True, self._sync_count, d.target)

    def read(self) -> dict[int, ActuatorState]:
        """One SYNC, every drive's TPDOs, heartbeat checks.

        A drive in FAULT (or FAULT REACTION ACTIVE, QUICK STOP ACTIVE, or after a quick
        stop until it is cleared) is reported in ``error_code`` and ``fault``, not raised.

        Raises:
            TransportTimeoutError: TPDOs missing after ``sync_timeout``.
            TransportError: heartbeat lost, or a drive left OPERATIONAL.
        """
        self._require_open()
        try:
            self._sync_round(list(self._drives), "SYNC")
        except TransportTimeoutError:
            self._check_heartbeats()  # a dead or restarted drive is the better diagnosis
            raise
        self._check_heartbeats()
        out: dict[int, ActuatorState] = {}
        for node_id, d in self._drives.items():
            v = d.values
            u = d.units
            state = state_of(v.get(0x6041, 0))
            code, fault = self._fault_of(d, state)
            out[node_id] = ActuatorState(
                position=u.position(v.get(0x6064, 0)),
                velocity=u.velocity(v.get(0x606C, 0)),
                effort=u.effort(v.get(0x6077, 0)),
                torque_enabled=state in _POWERED,
                error_code=code, fault=fault, stamp=d.stamp)
        return out

    def clear_faults(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """Fault reset (controlword bit 7 rising edge, by SDO) of the drives in FAULT.

        A drive in QUICK STOP ACTIVE, or after a quick stop the driver saw, gets *disable
        voltage* (the way out CiA 402 gives) and is no longer reported.
        Every drive is re-read afterwards (statusword and error code by SDO, then one
        SYNC round); torque stays off.

        Returns:
            Per drive what was done and what remains.

        Raises:
            TransportError: the bus is not open, or failed.
        """
        self._require_open()
        out: dict[int, str] = {}
        for i in self._ids(ids):
            d = self._drives[i]
            sw = self._sdo_read(d, 0x6041, "statusword")
            d.values[0x6041] = sw
            state = state_of(sw)
            with self._cond:
                quick_stop, d.quick_stop = d.quick_stop, False
            if state in _FAULT_STATES:
                before = self._fault_text(d, self._sdo_read(d, 0x603F, "error code"))
                d.controlword = _CW_DISABLE_VOLTAGE
                self._sdo_write(d, 0x6040, _CW_DISABLE_VOLTAGE, "controlword")
                self._sdo_write(d, 0x6040, _CW_FAULT_RESET, "controlword (fault reset)")
                done = f"fault reset sent (was {before})"
            elif state == _QUICK_STOP or quick_stop:
                d.controlword = _CW_DISABLE_VOLTAGE
                self._sdo_write(d, 0x6040, _CW_DISABLE_VOLTAGE, "controlword (disable voltage)")
                done = "quick stop ended with disable voltage"
            else:
                out[i] = f"no fault ({state})"
                continue
            sw = self._sdo_read(d, 0x6041, "statusword")
            code = self._sdo_read(d, 0x603F, "error code")
            d.values[0x6041], d.values[0x603F] = sw, code
            state = state_of(sw)
            if state in _FAULT_STATES or state == _QUICK_STOP:
                out[i] = f"{done}; still in {state}: {self._fault_text(d, code)}"
            else:
                with self._cond:
                    d.emcy.clear()
                out[i] = f"{done}; now {state}, no fault, torque off"
        self._sync_round(list(self._drives), "the SYNC after clearing faults",
                         retries=self.sync_retries)
        return out

    # ------------------------------------------------------------------ open steps

    def _on_heard(self, can_id: int, data: bytearray, _stamp: float) -> None:
        """Notifier thread: remember which node ids a heartbeat / boot-up / EMCY came from."""
        node_id = can_id & 0x7F
        kind = ("boot-up" if data and data[0] & 0x7F == 0 else "heartbeat"
                ) if can_id >= 0x700 else "EMCY"  # noqa: PLR2004
        if node_id != self.host_node_id or can_id < 0x700:  # noqa: PLR2004
            self._heard.setdefault(node_id, kind)

    def _start_heartbeat(self, network: Any) -> None:  # noqa: ANN401 - canopen.Network
        if not self.consumer_ms:
            return
        period = max(0.001, self.consumer_ms / 4000)
        try:
            self._heartbeat_task = network.send_periodic(0x700 + self.host_node_id,
                                                         bytes((_NMT_OPERATIONAL,)), period)
        except Exception as exc:  # noqa: BLE001 - python-can periodic send errors
            raise TransportError(f"{self._where}: cannot start the host heartbeat "
                                 f"(node {self.host_node_id}): {exc}") from None

    def _attach(self, network: Any, d: _Drive) -> None:  # noqa: ANN401 - canopen.Network
        from canopen.profiles.p402 import BaseNode402

        factory: Any = BaseNode402  # untyped library class
        try:
            node = factory(d.spec.id, str(d.eds))
        except Exception as exc:  # noqa: BLE001 - the EDS parser raises anything
            raise ConfigError(f"{d.where}: cannot read EDS {str(d.eds)!r}: {exc}") from None
        network.add_node(node)
        node.sdo.RESPONSE_TIMEOUT = self.sdo_timeout
        node.sdo.MAX_RETRIES = 1 + self.sdo_retries  # attempts (canopen counts tries)
        d.node = node
        d.values, d.received, d.emcy = {}, set(), []
        d.heartbeat_state, d.target, d.rebooted = None, None, False
        d.setpoint_bit, d.setpoint_sync, d.latched_target = False, -1, None
        d.quick_stop, d.sent_enable = False, False
        d.controlword, d.consumer_sub = _CW_SHUTDOWN, None

        def on_heartbeat(state: int, d: _Drive = d) -> None:
            with self._cond:
                d.heartbeat_stamp = self.clock()
                d.heartbeat_state = state
                d.rebooted = d.rebooted or state == 0

        def on_emcy(entry: EmcyError, d: _Drive = d) -> None:
            with self._cond:
                d.emcy.append(entry)
                if entry.code == _HEARTBEAT_EVENT and self._heartbeat_event_stops:
                    d.quick_stop = True   # sent before the next SYNC (_sync_round)
            if entry.code:
                _LOG.warning("%s: EMCY 0x%04X %s", d.where, entry.code, entry.get_desc())

        node.nmt.add_heartbeat_callback(on_heartbeat)
        node.emcy.add_callback(on_emcy)

    def _identify(self) -> None:
        """SDO read of 0x1000 from every drive; one message for all that stay silent."""
        silent = []
        for d in self._drives.values():
            try:
                device_type = self._sdo_read(d, 0x1000, "device type")
            except TransportTimeoutError:
                silent.append(d)
                continue
            if device_type & 0xFFFF != 402:  # noqa: PLR2004
                raise DeviceError(f"{d.where}: expected a CiA 402 drive (device type 0x1000 "
                                  f"with profile 402 in the low 16 bits), found device type "
                                  f"0x{device_type:08X} (profile {device_type & 0xFFFF})",
                                  d.spec.id)
            if d.spec.model:
                name = self._device_name(d)
                if name is not None and name.strip().lower() != d.spec.model.strip().lower():
                    raise DeviceError(f"{d.where}: expected model {d.spec.model!r}, the drive "
                                      f"says {name!r} (0x1008 device name)", d.spec.id)
        if not silent:
            return
        answered = sorted(set(self._drives) - {d.spec.id for d in silent})
        for node_id in self._probe(set(self._drives)):
            self._heard.setdefault(node_id, "SDO")
        heard = {i: k for i, k in sorted(self._heard.items()) if i not in self._drives}
        heard_text = (", ".join(f"{i} ({k})" for i, k in heard.items()) if heard
                      else "none")
        tries = 1 + self.sdo_retries
        raise TransportTimeoutError(
            f"bus {self.spec.name!r} ({self._where}, "
            f"{can_transport.bitrate_text(self.spec.transport)}): CiA 402 node(s) "
            f"{[d.spec.id for d in silent]} did not answer an SDO read of 0x1000 (device "
            f"type) in {tries} x {self.sdo_timeout:.3g} s; drives of this bus that answered: "
            f"{answered or 'none'}; other nodes on the bus: {heard_text}"
            + ("" if answered or heard else
               " (nothing answered: wrong channel or bitrate, no power, no termination?)"))

    def _probe(self, skip: set[int]) -> list[int]:
        """Node ids (not in ``skip``) that answer an SDO upload request of 0x1000.

        One request to every other id at once, then one SDO timeout: a read, nothing is
        written. Only run when a configured drive is silent, to say who is there instead.
        """
        network = self._require_open()
        found: set[int] = set()

        def on_response(can_id: int, data: bytearray, _stamp: float) -> None:
            if data and data[0] & 0xE0 in (0x40, 0x80):  # upload response or abort
                found.add(can_id - 0x580)

        ids = [i for i in range(1, 128) if i not in skip and i != self.host_node_id]
        request = bytes((0x40, 0x00, 0x10, 0x00, 0, 0, 0, 0))   # initiate upload 0x1000:0
        try:
            for i in ids:
                network.subscribe(0x580 + i, on_response)
            for i in ids:
                network.send_message(0x600 + i, request)
            threading.Event().wait(self.sdo_timeout)   # real time, as canopen's SDO timeout
        except Exception as exc:  # noqa: BLE001 - best effort, for the message only
            _LOG.debug("%s: probing node ids failed: %s", self._where, exc)
        finally:
            for i in ids:
                network.unsubscribe(0x580 + i, on_response)
        return sorted(found)

    def _device_name(self, d: _Drive) -> str | None:
        from canopen.sdo.exceptions import SdoAbortedError

        try:
            return bytes(d.node.sdo.upload(0x1008, 0)).decode("latin-1").strip("\0 ")
        except SdoAbortedError:
            return None   # optional object: the model cannot be checked
        except Exception as exc:  # noqa: BLE001 - converted with context
            raise self._sdo_error(d, "read of 0x1008 device name", exc) from None

    def _configure(self, d: _Drive, keep_torque: bool) -> bool:  # noqa: FBT001
        """Configure one drive; True when it was kept in OPERATION ENABLED untouched."""
        sw = self._sdo_read(d, 0x6041, "statusword")
        d.values[0x6041] = sw
        d.values[0x603F] = self._sdo_read(d, 0x603F, "error code")
        if math.isnan(d.units.rated_torque):
            rated = self._sdo_read(d, 0x6076, "motor rated torque")
            if rated <= 0:
                raise ProtocolError(f"{d.where}: motor rated torque 0x6076 is {rated} mN·m; "
                                    "set option rated_torque (N·m)")
            d.units = Units(d.units.counts_per_rad, d.units.velocity_per_rad_s, rated / 1000)
        enabled = state_of(sw) == "OPERATION ENABLED"
        if keep_torque and enabled:
            differences = self._differences(d)
            if not differences:
                self._configure_heartbeats(d)
                d.controlword = _CW_ENABLE
                d.target = self._sdo_read(d, _TARGET[d.kind], "target")
                return True
            _LOG.warning("%s: in OPERATION ENABLED, but %s: reconfiguring it, torque off",
                         d.where, "; ".join(differences))
        elif enabled:
            _LOG.info("%s: was in OPERATION ENABLED; torque off", d.where)
        self._torque_off_to_configure(d, state_of(sw))   # before anything changes
        d.node.nmt.state = "PRE-OPERATIONAL"
        self._configure_heartbeats(d)
        self._set_mode(d)
        self._map_pdos(d)
        return False

    def _torque_off_to_configure(self, d: _Drive, state: str) -> None:
        """Controlword by SDO: torque off before the mode or anything else is changed.

        (In OPERATION ENABLED a drive runs a new mode at once, with whatever target that
        mode finds.) FAULT stays FAULT unless ``reset_faults``; QUICK STOP ACTIVE is ended
        with *disable voltage* (transition 12) and stays reported until cleared.
        """
        if state in _FAULT_STATES:
            if self.reset_faults:
                _LOG.warning("%s: resetting the drive's fault (reset_faults)", d.where)
                self._sdo_write(d, 0x6040, _CW_DISABLE_VOLTAGE, "controlword")
                self._sdo_write(d, 0x6040, _CW_FAULT_RESET, "controlword (fault reset)")
                d.controlword = _CW_SHUTDOWN
                self._sdo_write(d, 0x6040, _CW_SHUTDOWN, "controlword (shutdown)")
            else:
                d.controlword = _CW_DISABLE_VOLTAGE  # leaves FAULT only by clear_faults
            return
        if state == _QUICK_STOP:
            _LOG.warning("%s: in QUICK STOP ACTIVE; ended with disable voltage", d.where)
            with self._cond:
                d.quick_stop = True
            self._sdo_write(d, 0x6040, _CW_DISABLE_VOLTAGE, "controlword (disable voltage)")
        d.controlword = _CW_SHUTDOWN
        self._sdo_write(d, 0x6040, _CW_SHUTDOWN, "controlword (shutdown)")

    def _set_mode(self, d: _Drive) -> None:
        """0x6060 := the mode, then 0x6061 polled until it shows it (MODE_SWITCH_TIMEOUT).

        Real time, as the SDO timeouts: the bus clock may be a test's manual clock.
        """
        self._sdo_write(d, 0x6060, d.op_mode, "mode of operation")
        deadline = time.monotonic() + MODE_SWITCH_TIMEOUT
        while (shown := self._sdo_read(d, 0x6061, "mode of operation display")) != d.op_mode:
            if time.monotonic() >= deadline:
                raise ProtocolError(
                    f"{d.where}: asked for mode {_mode_name(d.op_mode)} (0x6060), the drive "
                    f"still shows mode {_mode_name(shown)} (0x6061) after "
                    f"{MODE_SWITCH_TIMEOUT:g} s (mode not supported?)")
            time.sleep(_MODE_POLL_PERIOD)

    def _configure_heartbeats(self, d: _Drive) -> None:  # noqa: C901 - one step per object
        """0x1017 producer time; 0x1016 consumer of the host + 0x6007 (device watchdog).

        Each object is read first and written only where it differs (safe while the
        drive is enabled).
        """
        if self._sdo_read(d, 0x1017, "producer heartbeat time") != self.heartbeat_ms:
            self._sdo_write(d, 0x1017, self.heartbeat_ms, "producer heartbeat time")
        try:
            count = self._upload(d, 0x1016, 0, "heartbeat consumer entries")
            entries = {sub: self._upload(d, 0x1016, sub, "heartbeat consumer entry")
                       for sub in range(1, count + 1)}
        except ProtocolError:
            if not self.consumer_ms:
                return  # no consumer object and none wanted
            raise DeviceError(f"{d.where}: the drive has no heartbeat consumer (0x1016) for "
                              f"the device watchdog of {self.consumer_ms} ms; set "
                              "device_watchdog: 0 in the hardware YAML to run without "
                              "one", d.spec.id) from None
        ours = [sub for sub, v in entries.items() if (v >> 16) & 0xFF == self.host_node_id
                and v & 0xFFFF]
        wanted = (self.host_node_id << 16) | self.consumer_ms
        if not self.consumer_ms:
            for sub in ours:   # left armed by an earlier run: nobody produces it now
                self._download(d, 0x1016, sub, 0, 4, "heartbeat consumer off")
            return
        try:
            option = self._upload(d, 0x6007, 0, "abort connection option code", signed=True)
        except ProtocolError:
            raise DeviceError(f"{d.where}: the drive has no abort connection option code "
                              "(0x6007) for the device watchdog; set device_watchdog: 0 to "
                              "run without one", d.spec.id) from None
        if option != self.abort_connection:
            self._download(d, 0x6007, 0, self.abort_connection, 2,
                           "abort connection option code", signed=True)
        if ours and entries[ours[0]] == wanted:
            d.consumer_sub = ours[0]
            return
        for sub in ours:   # CiA 301: one entry per producer; clear before changing it
            self._download(d, 0x1016, sub, 0, 4, "heartbeat consumer off")
            entries[sub] = 0
        free = [sub for sub, v in entries.items() if not (v & 0xFFFF and (v >> 16) & 0xFF)]
        if not free:
            raise DeviceError(f"{d.where}: every heartbeat consumer entry of 0x1016 is in use "
                              f"({', '.join(f'0x{v:08X}' for v in entries.values())}); "
                              "free one for the host's heartbeat", d.spec.id)
        self._download(d, 0x1016, free[0], wanted, 4, "heartbeat consumer time")
        d.consumer_sub = free[0]

    def _layout(self, d: _Drive) -> dict[tuple[str, int], tuple[int, list[int]]]:
        """(kind, number) -> (COB-ID, mapped indices) of the PDOs this driver uses."""
        return {("rpdo", 1): (d.cob_ids["rpdo1"], [0x6040, _TARGET[d.kind]]),
                ("tpdo", 1): (d.cob_ids["tpdo1"], [0x6041, 0x6064]),
                ("tpdo", 2): (d.cob_ids["tpdo2"], [0x606C, 0x6077, 0x603F])}

    def _read_pdo_configuration(self, d: _Drive) -> None:
        node = d.node
        missing = [f"{kind.upper()}{n}" for kind, n in self._layout(d)
                   if n not in getattr(node, kind).map]
        if missing:
            raise ConfigError(f"{d.where}: the EDS {str(d.eds)!r} lacks {missing}")
        try:
            node.rpdo.read(from_od=False)   # the drive's present configuration, by SDO
            node.tpdo.read(from_od=False)
        except Exception as exc:  # noqa: BLE001 - canopen raises SDO errors and more
            raise self._sdo_error(d, "read of the PDO configuration", exc) from None

    def _differences(self, d: _Drive) -> list[str]:
        """What keeps a drive in OPERATION ENABLED from being taken over as it is."""
        out = []
        shown = self._sdo_read(d, 0x6061, "mode of operation display")
        if shown != d.op_mode:
            out.append(f"mode of operation {shown} instead of {d.op_mode}")
        self._read_pdo_configuration(d)
        layout = self._layout(d)
        for kind in ("rpdo", "tpdo"):
            for number, pdo in getattr(d.node, kind).map.items():
                name = f"{kind.upper()}{number}"
                want = layout.get((kind, number))
                if want is None:
                    if pdo.enabled:
                        out.append(f"{name} enabled (0x{pdo.cob_id:03X})")
                    continue
                cob, indices = want
                have = [var.index for var in pdo]
                if not pdo.enabled or pdo.cob_id != cob or pdo.trans_type != 1 or (
                        have != indices):
                    out.append(f"{name} is {'on' if pdo.enabled else 'off'} at COB-ID "
                               f"0x{pdo.cob_id or 0:03X} type {pdo.trans_type} mapping "
                               f"{[f'0x{i:04X}' for i in have]}")
        if not out:
            for number in (1, 2):
                d.node.tpdo[number].add_callback(self._tpdo_callback(d, number))
        return out

    def _map_pdos(self, d: _Drive) -> None:
        self._read_pdo_configuration(d)
        node = d.node
        layout = self._layout(d)
        try:
            for kind in ("rpdo", "tpdo"):
                for number, pdo in getattr(node, kind).map.items():
                    want = layout.get((kind, number))
                    pdo.clear()
                    if want is None:
                        pdo.enabled = False   # keeps its COB-ID, marked not valid
                        continue
                    pdo.cob_id = want[0]
                    for index in want[1]:
                        pdo.add_variable(index)
                    pdo.trans_type = 1
                    pdo.enabled = True
            node.rpdo.save()
            node.tpdo.save()
        except Exception as exc:  # noqa: BLE001 - canopen raises SDO errors and more
            raise self._sdo_error(d, "PDO mapping", exc) from None
        for number in (1, 2):
            node.tpdo[number].add_callback(self._tpdo_callback(d, number))

    # ------------------------------------------------------------------ cycle steps

    def _tpdo_callback(self, d: _Drive, number: int) -> Callable[[PdoMap], None]:
        def on_tpdo(pdo: PdoMap) -> None:
            """Notifier thread: store the TPDO's values (must never raise)."""
            try:
                values = {var.index: int(var.raw) for var in pdo}
                # The drive sampled it at the SYNC and sent it at once; this thread may
                # take it later: its time is when it arrived.
                arrived = can_transport.arrived_at(self.clock, pdo.timestamp)
                arrived = self.clock() if arrived is None else arrived
                with self._cond:
                    d.values.update(values)
                    if state_of(values.get(0x6041, 0)) == _QUICK_STOP and not d.enabling:
                        d.quick_stop = True
                    d.received.add(number)
                    d.stamp = arrived
                    if {1, 2} <= d.received and d.spec.id in self._waiting:
                        self._waiting.discard(d.spec.id)
                        if not self._waiting:   # wake the waiter once per round, not per
                            self._cond.notify_all()   # frame (a loaded host: fewer hops)
            except Exception:  # noqa: BLE001 - never kill the notifier thread
                _LOG.exception("TPDO handling failed")
        return on_tpdo

    def _sync_round(self, ids: Sequence[int], what: str, retries: int = 0) -> None:
        """Send SYNC; wait until every drive's TPDO 1 and 2 arrived (``retries`` more SYNCs).

        A repeated SYNC changes nothing on the drives: the RPDOs were applied at the first.
        """
        network = self._require_open()
        with self._cond:
            for i in ids:
                self._drives[i].received.clear()
            self._waiting = set(ids)
            stopping = [d for d in self._drives.values() if d.quick_stop and d.sent_enable]
        for d in stopping:
            # A quick stop seen since the last RPDO (an EMCY): replace the "enable
            # operation" waiting in the drive before this SYNC applies it (transition 16).
            self._send_rpdo(d)
        self._sync_count += 1
        missing: list[int] = []
        for _attempt in range(1 + retries):
            try:
                if self._heartbeat_task is not None:
                    network.send_message(0x700 + self.host_node_id, bytes((_NMT_OPERATIONAL,)))
                network.sync.transmit()
            except Exception as exc:  # noqa: BLE001 - python-can send errors
                raise TransportError(f"{self._where}: cannot send SYNC: {exc}") from None
            deadline = self.clock() + self.sync_timeout
            with self._cond:
                while True:
                    missing = sorted(self._waiting)
                    if not missing:
                        return
                    remaining = deadline - self.clock()
                    if remaining <= 0 or not self._cond.wait(remaining):
                        break
        raise TransportTimeoutError(
            f"bus {self.spec.name!r} ({self._where}, "
            f"{can_transport.bitrate_text(self.spec.transport)}): no TPDO from node(s) "
            f"{missing} within {self.sync_timeout:.3g} s of {what}"
            + (f" ({1 + retries} SYNCs)" if retries else ""))

    def _check_heartbeats(self) -> None:
        now = self.clock()
        for d in self._drives.values():
            with self._cond:
                stamp, state, rebooted = d.heartbeat_stamp, d.heartbeat_state, d.rebooted
            if rebooted:
                raise TransportError(f"{d.where}: boot-up message: the drive restarted "
                                     "(configuration lost)")
            if not self.heartbeat_ms:
                continue
            if now - stamp > self.heartbeat_timeout:
                raise TransportError(f"{d.where}: heartbeat lost ({now - stamp:.3f} s since "
                                     f"the last, limit {self.heartbeat_timeout:g} s)")
            settled = now - d.started > self.heartbeat_timeout
            if state is not None and state != _NMT_OPERATIONAL and (settled or state == 0):
                text = "boot-up (the drive restarted)" if state == 0 else f"NMT state {state}"
                raise TransportError(f"{d.where}: heartbeat reports {text}, not OPERATIONAL")

    def _fault_text(self, d: _Drive, code: int) -> str:
        with self._cond:
            emcy = [e for e in d.emcy if e.code]
        text = f"EMCY 0x{emcy[-1].code:04X} {emcy[-1].get_desc()}" if emcy else "no EMCY"
        return f"error code 0x{code:04X} ({text})"

    def _fault_of(self, d: _Drive, state: str) -> tuple[int, str]:
        """``(error_code, fault)`` of a drive in the given state; ``(0, "")`` when healthy.

        A quick stop the driver saw stays a fault until ``set_torque(True)`` or
        ``clear_faults``, also after the drive finished it (SWITCH ON DISABLED).
        """
        with self._cond:
            emcy = [e for e in d.emcy if e.code]
            quick_stop = d.quick_stop
        if state not in _FAULT_STATES and state != _QUICK_STOP and not quick_stop:
            return 0, ""
        code = d.values.get(0x603F, 0)
        if not code and emcy:
            code = emcy[-1].code
        if not code:
            code = _GENERIC_ERROR if state in _FAULT_STATES else _QUICK_STOP_BIT
        name = state if state in _FAULT_STATES or state == _QUICK_STOP else (
            f"QUICK STOP (the drive is now {state})")
        return code, f"{name}: {self._fault_text(d, d.values.get(0x603F, 0))}"

    def _raise_faults(self, drives: Iterable[_Drive]) -> None:
        for d in drives:
            if state_of(d.values.get(0x6041, 0)) in _FAULT_STATES:
                raise self._fault_error(d)

    def _fault_error(self, d: _Drive) -> DeviceError:
        code = d.values.get(0x603F, 0)
        with self._cond:
            emcy = [e for e in d.emcy if e.code]
        return DeviceError(f"{d.where}: drive in FAULT, {self._fault_text(d, code)}; "
                           "clear_faults resets it", d.spec.id,
                           code or (emcy[-1].code if emcy else 0))

    def _raw_target(self, d: _Drive, cmd: ActuatorCommand) -> int:
        u = d.units
        lim = d.spec.limits
        decode: Callable[[int], float]
        if d.kind is ControlMode.POSITION:
            x, per_si, bounds, raw, name, decode = (cmd.position, u.counts_per_rad,
                                                    lim.position, _INT32, "position",
                                                    u.position)
        elif d.kind is ControlMode.VELOCITY:
            x, per_si, bounds, raw, name, decode = (cmd.velocity, u.velocity_per_rad_s,
                                                    lim.velocity, _INT32, "velocity",
                                                    u.velocity)
        else:
            x, per_si, bounds, raw, name, decode = (cmd.effort, 1000.0 / u.rated_torque,
                                                    lim.effort, _INT16, "effort", u.effort)
        if not math.isfinite(x):
            raise ProtocolError(f"{d.where}: {name} {x!r} is not a finite number")
        lo, hi = max(bounds[0], decode(raw[0])), min(bounds[1], decode(raw[1]))
        x = min(max(x, lo), hi)
        n = quantize_inward(x, 1.0 / per_si, lo, hi)
        # quantize_inward checks n * step; the drive decodes with its own arithmetic, which
        # can differ in the last bit exactly at a bound: step inward once more then.
        if decode(n) > hi:
            n -= 1
        elif decode(n) < lo:
            n += 1
        return max(raw[0], min(raw[1], n))

    def _fill_rpdo(self, d: _Drive) -> None:
        """RPDO1's controlword and target; never "enable operation" after a quick stop."""
        pdo = d.node.rpdo[1]
        cw = d.controlword
        with self._cond:
            if d.quick_stop and cw == _CW_ENABLE:
                cw = _CW_QUICK_STOP
        if d.op_mode == MODE_CODES["pp"] and cw == _CW_ENABLE:
            cw |= _CW_CHANGE_IMMEDIATELY | (_CW_NEW_SETPOINT if d.setpoint_bit else 0)
        pdo[0x6040].raw = cw
        pdo[_TARGET[d.kind]].raw = d.target or 0
        d.sent_enable = (cw & _CW_ENABLE) == _CW_ENABLE

    def _send_rpdo(self, d: _Drive) -> None:
        try:
            self._fill_rpdo(d)
            d.node.rpdo[1].transmit()
        except Exception as exc:  # noqa: BLE001 - python-can send errors
            raise TransportError(f"{d.where}: cannot send RPDO: {exc}") from None

    # ------------------------------------------------------------------ SDO helpers

    def _sdo_error(self, d: _Drive, what: str, exc: BaseException) -> HardwareError:
        from canopen.sdo.exceptions import SdoAbortedError, SdoCommunicationError

        if isinstance(exc, SdoAbortedError):
            return ProtocolError(f"{d.where}: SDO {what} aborted: {exc}")
        if isinstance(exc, SdoCommunicationError):
            return TransportTimeoutError(
                f"{d.where}: no SDO answer ({what}) in {d.node.sdo.MAX_RETRIES} x "
                f"{self.sdo_timeout:.3g} s at {can_transport.bitrate_text(self.spec.transport)}"
                f": {exc}")
        return TransportError(f"{d.where}: SDO {what} failed: {type(exc).__name__}: {exc}")

    def _sdo_read(self, d: _Drive, index: int, what: str) -> int:
        try:
            return int(d.node.sdo[index].raw)
        except Exception as exc:  # noqa: BLE001 - converted with context
            raise self._sdo_error(d, f"read of 0x{index:04X} {what}", exc) from None

    def _sdo_write(self, d: _Drive, index: int, value: int, what: str) -> None:
        try:
            d.node.sdo[index].raw = value
        except Exception as exc:  # noqa: BLE001 - converted with context
            raise self._sdo_error(d, f"write of 0x{index:04X} {what}", exc) from None

    def _upload(self, d: _Drive, index: int, sub: int, what: str, *,
                signed: bool = False) -> int:
        """An integer object read by SDO without the EDS (vendor EDS may lack it)."""
        try:
            data = bytes(d.node.sdo.upload(index, sub))
        except Exception as exc:  # noqa: BLE001 - converted with context
            raise self._sdo_error(d, f"read of 0x{index:04X}:{sub} {what}", exc) from None
        return int.from_bytes(data, "little", signed=signed)

    def _download(self, d: _Drive, index: int, sub: int, value: int, size: int, what: str,  # noqa: PLR0917
                  *, signed: bool = False) -> None:
        try:
            d.node.sdo.download(index, sub, value.to_bytes(size, "little", signed=signed))
        except Exception as exc:  # noqa: BLE001 - converted with context
            raise self._sdo_error(d, f"write of 0x{index:04X}:{sub} {what}", exc) from None

    # ------------------------------------------------------------------ misc

    def _ids(self, ids: Iterable[int] | None) -> list[int]:
        if ids is None:
            return list(self._drives)
        out = list(ids)
        unknown = [i for i in out if i not in self._drives]
        if unknown:
            raise ConfigError(f"bus {self.spec.name!r}: no CiA 402 drive with id(s) {unknown}")
        return out

    def _require_open(self) -> canopen.Network:
        if self._network is None:
            raise TransportError(f"bus {self.spec.name!r} ({self._where}) is not open")
        return self._network
