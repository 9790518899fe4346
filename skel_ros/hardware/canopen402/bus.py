"""Cia402Bus: CANopen CiA 402 servo drives on one CAN bus, through the ``canopen`` library.

The bus is the CANopen master and the SYNC producer. :meth:`Cia402Bus.open`:

1. NMT *enter pre-operational*; SDO read of 0x1000 (device type must be profile 402);
2. producer heartbeat 0x1017 (``heartbeat_ms``), mode of operation 0x6060 (checked in
   0x6061), motor rated torque 0x6076 (unless ``rated_torque`` is given);
3. a drive in FAULT gets a fault reset (``reset_faults``), then *shutdown* (torque off);
4. PDO mapping (canopen's ``PdoMap``, written by SDO), all synchronous (type 1):
   RPDO1 = controlword 0x6040 + target (0x607A position / 0x60FF velocity / 0x6071
   torque); TPDO1 = statusword 0x6041 + position actual 0x6064; TPDO2 = velocity actual
   0x606C + torque actual 0x6077 + error code 0x603F;
5. NMT *start*, and one SYNC round that must bring every TPDO.

Per control cycle :meth:`~Cia402Bus.read` sends one SYNC (the drives apply the RPDO
received before it, then answer with their TPDOs) and waits for every TPDO;
:meth:`~Cia402Bus.write` sends one RPDO per drive (applied at the next SYNC).
:meth:`~Cia402Bus.set_torque` walks the CiA 402 state machine (canopen's ``State402``
transition table) one SYNC per step to OPERATION ENABLED, or back to READY TO SWITCH ON.

Faults: a statusword in FAULT raises :class:`DeviceError` with the drive's error code
(0x603F) and the last EMCY's text; heartbeat loss or a drive that left OPERATIONAL
(reboot) raises :class:`TransportError`; missing TPDOs :class:`TransportTimeoutError`.

Units (actuator options): ``counts_per_rev`` (default 65536) or ``counts_per_rad``
converts positions; ``velocity_per_rad_s`` (velocity units per rad/s, default the
counts per rad, i.e. 0x606C in counts/s); torques are per mille of the rated torque
(``rated_torque`` in N·m, default read from the drive's 0x6076 in mN·m). ``op_mode``:
``csp`` (default in position mode), ``pp``, ``csv`` (velocity), ``pv``, ``cst`` (effort),
``pt``. ``eds``: the drive's EDS file (default the project's ``drive.eds``).

Bus options: ``sync_timeout`` (s, 0.05), ``sdo_timeout`` (s, 0.3), ``heartbeat_ms``
(100; 0 = off), ``heartbeat_timeout`` (s on the injected clock, default 5 heartbeat
periods, at least 0.5),
``reset_faults`` (true), ``eds``.
"""

from __future__ import annotations

import logging
import math
import threading
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

__all__ = ["DEFAULT_EDS", "MODE_CODES", "STATUS_STATES", "Cia402Bus", "Units",
           "state_of", "units_for"]

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
_CW_FAULT_RESET = 0x80
_CW_SHUTDOWN = 0x06
_CW_ENABLE = 0x0F
_CW_NEW_SETPOINT = 0x10
_CW_CHANGE_IMMEDIATELY = 0x20
_NMT_OPERATIONAL = 5
_INT32 = (-(2**31), 2**31 - 1)
_INT16 = (-(2**15), 2**15 - 1)
_BUS_OPTIONS = frozenset({"sync_timeout", "sdo_timeout", "heartbeat_ms", "heartbeat_timeout",
                          "reset_faults", "eds"})
_ACT_OPTIONS = frozenset({"counts_per_rev", "counts_per_rad", "velocity_per_rad_s",
                          "rated_torque", "op_mode", "eds"})


def state_of(statusword: int) -> str:
    """The CiA 402 state a statusword reports (``"UNKNOWN"`` if none matches)."""
    for mask, value, name in STATUS_STATES:
        if statusword & mask == value:
            return name
    return "UNKNOWN"


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


def _positive(options: Mapping[str, Any], key: str, where: str) -> float | None:
    if key not in options:
        return None
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ConfigError(f"{where}: option {key!r} must be a positive number, got {value!r}")
    return float(value)


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


@dataclass
class _Drive:
    spec: ActuatorSpec
    where: str
    op_mode: int
    kind: ControlMode
    units: Units
    eds: Path
    node: Any = None                    # canopen.BaseNode402 once open
    controlword: int = _CW_SHUTDOWN
    target: int | None = None
    setpoint_toggle: bool = False
    values: dict[int, int] = field(default_factory=dict)   # last TPDO values by index
    received: set[int] = field(default_factory=set)        # TPDO numbers since the SYNC
    heartbeat_stamp: float = math.nan
    heartbeat_state: int | None = None
    rebooted: bool = False                 # a boot-up message came after open
    started: float = math.nan              # NMT start sent (a heartbeat sent before it
                                           # may still say PRE-OPERATIONAL)
    emcy: list[EmcyError] = field(default_factory=list)
    stamp: float = math.nan


class Cia402Bus(ActuatorBus):
    """Every CiA 402 drive on one CAN bus (see the module docstring).

    Args:
        spec: the bus; ``transport`` is a python-can mapping.
        actuators: the drives (node ids 1..127).
        clock: monotonic seconds.

    Raises:
        ConfigError: bad options, unknown op_mode, MIT mode, missing EDS, bad node id.
    """

    protocol: ClassVar[str] = "canopen"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],
                 clock: Callable[[], float]) -> None:
        super().__init__(spec, actuators, clock)
        opts = spec.options
        unknown = set(opts) - _BUS_OPTIONS
        if unknown:
            raise ConfigError(f"bus {spec.name!r}: unknown CANopen bus option(s) "
                              f"{sorted(unknown)}; known: {', '.join(sorted(_BUS_OPTIONS))}")
        where = f"bus {spec.name!r}"
        self.sync_timeout = _positive(opts, "sync_timeout", where) or 0.05
        self.sdo_timeout = _positive(opts, "sdo_timeout", where) or 0.3
        hb = opts.get("heartbeat_ms", 100)
        if isinstance(hb, bool) or not isinstance(hb, int) or not 0 <= hb <= 0xFFFF:  # noqa: PLR2004
            raise ConfigError(f"{where}: heartbeat_ms must be an integer in 0..65535, "
                              f"got {hb!r}")
        self.heartbeat_ms = hb
        self.heartbeat_timeout = (_positive(opts, "heartbeat_timeout", where)
                                  or max(0.5, 5 * hb / 1000))
        self.reset_faults = bool(opts.get("reset_faults", True))
        bus_eds = opts.get("eds")
        self._drives: dict[int, _Drive] = {}
        for act in self.actuators:
            awhere = f"{where} CiA 402 drive {act.name or act.id!r} (node {act.id})"
            if not 1 <= act.id <= 127:  # noqa: PLR2004
                raise ConfigError(f"{awhere}: CANopen node id must be in 1..127")
            bad = set(act.options) - _ACT_OPTIONS
            if bad:
                raise ConfigError(f"{awhere}: unknown option(s) {sorted(bad)}; known: "
                                  f"{', '.join(sorted(_ACT_OPTIONS))}")
            code = op_mode_for(act, awhere)
            eds = Path(str(act.options.get("eds", bus_eds or DEFAULT_EDS)))
            if not eds.is_file():
                raise ConfigError(f"{awhere}: EDS file {str(eds)!r} not found")
            self._drives[act.id] = _Drive(act, awhere, code, _MODE_KIND[code],
                                          units_for(act.options, awhere), eds)
        self._network: canopen.Network | None = None
        self._cond = threading.Condition()
        self._where = can_transport.describe(spec.transport)

    # ------------------------------------------------------------------ lifecycle

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded and :meth:`close` was not called since."""
        return self._network is not None

    def open(self) -> None:
        """Configure every drive and start the PDO exchange (module docstring); torque off.

        Raises:
            TransportError: the bus cannot be opened.
            TransportTimeoutError: a drive does not answer SDOs or PDOs.
            ProtocolError: not a CiA 402 device, SDO abort, mode not accepted.
            DeviceError: a drive stays in FAULT.
        """
        import canopen

        self.close()
        bus = can_transport.open_bus(self.spec.transport)
        network = canopen.Network(bus)
        network.NOTIFIER_CYCLE = 0.05  # stop() waits at most this long for the thread
        try:
            network.connect()
        except Exception as exc:  # noqa: BLE001 - python-can notifier start
            bus.shutdown()
            raise TransportError(f"{self._where}: cannot start the CAN notifier: {exc}"
                                 ) from None
        self._network = network
        try:
            for d in self._drives.values():
                self._attach(network, d)
            for d in self._drives.values():
                self._configure(d)
            for d in self._drives.values():
                d.node.nmt.state = "OPERATIONAL"
                d.heartbeat_stamp = d.started = self.clock()
            self._sync_round(list(self._drives), "the first SYNC after NMT start")
            self._check_heartbeats()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Torque off (RPDO shutdown + SYNC), NMT pre-operational, release; never raises."""
        network, self._network = self._network, None
        if network is None:
            return
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
            for d in self._drives.values():
                if d.node is not None:
                    d.node.nmt.state = "PRE-OPERATIONAL"
        except Exception as exc:  # noqa: BLE001
            _LOG.warning("%s: NMT on close failed: %s", self._where, exc)
        try:
            network.disconnect()
        except Exception as exc:  # noqa: BLE001
            _LOG.warning("%s: disconnect failed: %s", self._where, exc)
        for d in self._drives.values():
            d.node = None

    # ------------------------------------------------------------------ contract

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """Walk the 402 state machine to OPERATION ENABLED (or READY TO SWITCH ON).

        One step per SYNC, with canopen's ``State402`` transitions. Position targets not
        written yet are set to the actual position first, so nothing jumps.

        Raises:
            DeviceError: a drive is in FAULT, or does not reach the state in 6 steps.
            TransportTimeoutError: TPDOs missing.
        """
        from canopen.profiles.p402 import State402

        p402: Any = State402  # untyped library class
        targets = [self._drives[i] for i in self._ids(ids)]
        goal = "OPERATION ENABLED" if enabled else "READY TO SWITCH ON"
        for d in targets:
            if enabled and d.target is None:
                d.target = (d.values.get(0x6064, 0) if d.kind is ControlMode.POSITION else 0)
        for _step in range(6):
            pending = [d for d in targets if state_of(d.values.get(0x6041, 0)) != goal]
            if not pending:
                return
            for d in pending:
                state = state_of(d.values.get(0x6041, 0))
                if state in ("FAULT", "FAULT REACTION ACTIVE"):
                    if not enabled:
                        continue  # a faulted drive produces no torque
                    raise self._fault_error(d)
                nxt = goal if (state, goal) in p402.TRANSITIONTABLE else (
                    p402.next_state_indirect(state))
                d.controlword = p402.TRANSITIONTABLE.get((state, nxt), _CW_SHUTDOWN)
                self._send_rpdo(d)
            self._sync_round(list(self._drives), f"switching to {goal}")
            self._raise_faults([d for d in targets if enabled])
        stuck = [d for d in targets
                 if (st := state_of(d.values.get(0x6041, 0))) != goal
                 and (enabled or not st.startswith("FAULT"))]
        if stuck:
            d = stuck[0]
            sw = d.values.get(0x6041, 0)
            raise DeviceError(f"{d.where}: did not reach {goal} (statusword 0x{sw:04X}, "
                              f"{state_of(sw)})", d.spec.id, d.values.get(0x603F, 0))

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """One RPDO per drive in ``commands`` (applied by the drive at the next SYNC).

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
            new = self._raw_target(d, cmd)
            if d.op_mode == MODE_CODES["pp"]:
                # Profile position: a rising edge of bit 4 takes the new set-point.
                d.setpoint_toggle = new != d.target and not d.setpoint_toggle
            d.target = new
            self._send_rpdo(d)

    def read(self) -> dict[int, ActuatorState]:
        """One SYNC, every drive's TPDOs, heartbeat and fault checks.

        Raises:
            TransportTimeoutError: TPDOs missing after ``sync_timeout``.
            TransportError: heartbeat lost, or a drive left OPERATIONAL.
            DeviceError: a drive is in FAULT.
        """
        self._require_open()
        try:
            self._sync_round(list(self._drives), "SYNC")
        except TransportTimeoutError:
            self._check_heartbeats()  # a dead or restarted drive is the better diagnosis
            raise
        self._check_heartbeats()
        self._raise_faults(self._drives.values())
        out: dict[int, ActuatorState] = {}
        for node_id, d in self._drives.items():
            v = d.values
            u = d.units
            sw = v.get(0x6041, 0)
            out[node_id] = ActuatorState(
                position=v.get(0x6064, 0) / u.counts_per_rad,
                velocity=v.get(0x606C, 0) / u.velocity_per_rad_s,
                effort=v.get(0x6077, 0) / 1000.0 * u.rated_torque,
                torque_enabled=state_of(sw) == "OPERATION ENABLED",
                error_code=v.get(0x603F, 0), fault="", stamp=d.stamp)
        return out

    def reset_fault(self, ids: Sequence[int] | None = None) -> None:
        """Fault reset (controlword bit 7 rising edge) of drives in FAULT, by SDO.

        Raises:
            DeviceError: still in FAULT afterwards.
            TransportTimeoutError / ProtocolError: SDO failed.
        """
        for i in self._ids(ids):
            self._reset_fault(self._drives[i])

    # ------------------------------------------------------------------ open steps

    def _attach(self, network: Any, d: _Drive) -> None:  # noqa: ANN401 - canopen.Network
        from canopen.profiles.p402 import BaseNode402

        factory: Any = BaseNode402  # untyped library class
        try:
            node = factory(d.spec.id, str(d.eds))
        except Exception as exc:  # noqa: BLE001 - the EDS parser raises anything
            raise ConfigError(f"{d.where}: cannot read EDS {str(d.eds)!r}: {exc}") from None
        network.add_node(node)
        node.sdo.RESPONSE_TIMEOUT = self.sdo_timeout
        node.sdo.MAX_RETRIES = 1  # one try (0 would retry forever)
        d.node = node
        d.values, d.received, d.emcy = {}, set(), []
        d.heartbeat_state, d.target, d.setpoint_toggle, d.rebooted = None, None, False, False
        d.controlword = _CW_SHUTDOWN

        def on_heartbeat(state: int, d: _Drive = d) -> None:
            with self._cond:
                d.heartbeat_stamp = self.clock()
                d.heartbeat_state = state
                d.rebooted = d.rebooted or state == 0

        def on_emcy(entry: EmcyError, d: _Drive = d) -> None:
            with self._cond:
                d.emcy.append(entry)
            if entry.code:
                _LOG.warning("%s: EMCY 0x%04X %s", d.where, entry.code, entry.get_desc())

        node.nmt.add_heartbeat_callback(on_heartbeat)
        node.emcy.add_callback(on_emcy)

    def _configure(self, d: _Drive) -> None:
        node = d.node
        node.nmt.state = "PRE-OPERATIONAL"
        device_type = self._sdo_read(d, 0x1000, "device type")
        if device_type & 0xFFFF != 402:  # noqa: PLR2004
            raise ProtocolError(f"{d.where}: device type 0x{device_type:08X} is not a CiA 402 "
                                "drive (profile 402 in the low 16 bits)")
        self._sdo_write(d, 0x1017, self.heartbeat_ms, "producer heartbeat time")
        self._sdo_write(d, 0x6060, d.op_mode, "mode of operation")
        shown = self._sdo_read(d, 0x6061, "mode of operation display")
        if shown != d.op_mode:
            raise ProtocolError(f"{d.where}: the drive shows mode {shown} after 0x6060 := "
                                f"{d.op_mode} (mode not supported?)")
        if math.isnan(d.units.rated_torque):
            rated = self._sdo_read(d, 0x6076, "motor rated torque")
            if rated <= 0:
                raise ProtocolError(f"{d.where}: motor rated torque 0x6076 is {rated} mN·m; "
                                    "set option rated_torque (N·m)")
            d.units = Units(d.units.counts_per_rad, d.units.velocity_per_rad_s, rated / 1000)
        sw = self._sdo_read(d, 0x6041, "statusword")
        if state_of(sw).startswith("FAULT"):
            if not self.reset_faults:
                d.values[0x6041] = sw
                d.values[0x603F] = self._sdo_read(d, 0x603F, "error code")
                raise self._fault_error(d)
            self._reset_fault(d)
        self._sdo_write(d, 0x6040, _CW_SHUTDOWN, "controlword (shutdown)")
        self._map_pdos(d)

    def _map_pdos(self, d: _Drive) -> None:
        node = d.node
        target = _TARGET[d.kind]
        layout_r = {1: [0x6040, target]}
        layout_t = {1: [0x6041, 0x6064], 2: [0x606C, 0x6077, 0x603F]}
        missing = ([f"RPDO{n}" for n in layout_r if n not in node.rpdo.map]
                   + [f"TPDO{n}" for n in layout_t if n not in node.tpdo.map])
        if missing:
            raise ConfigError(f"{d.where}: the EDS {str(d.eds)!r} lacks {missing}")
        try:
            node.rpdo.read(from_od=True)
            node.tpdo.read(from_od=True)
            for maps, layout in ((node.rpdo, layout_r), (node.tpdo, layout_t)):
                for number, pdo in maps.map.items():
                    pdo.clear()
                    indices = layout.get(number, [])
                    for index in indices:
                        pdo.add_variable(index)
                    pdo.trans_type = 1
                    pdo.enabled = bool(indices)
            node.rpdo.save()
            node.tpdo.save()
        except Exception as exc:  # noqa: BLE001 - canopen raises SDO errors and more
            raise self._sdo_error(d, "PDO mapping", exc) from None
        for number in layout_t:
            node.tpdo[number].add_callback(self._on_tpdo)

    # ------------------------------------------------------------------ cycle steps

    def _on_tpdo(self, pdo: PdoMap) -> None:
        """Notifier thread: store the TPDO's values (must never raise)."""
        try:
            node_id = (pdo.cob_id or 0) & 0x7F
            d = self._drives.get(node_id)
            if d is None:
                return
            number = next((n for n, p in d.node.tpdo.map.items() if p is pdo), 0)
            values = {var.index: int(var.raw) for var in pdo}
            with self._cond:
                d.values.update(values)
                d.received.add(number)
                d.stamp = self.clock()
                self._cond.notify_all()
        except Exception:  # noqa: BLE001 - never kill the notifier thread
            _LOG.exception("TPDO handling failed")

    def _sync_round(self, ids: Sequence[int], what: str) -> None:
        """Send SYNC; wait until every drive's TPDO 1 and 2 arrived."""
        network = self._require_open()
        with self._cond:
            for i in ids:
                self._drives[i].received.clear()
        try:
            network.sync.transmit()
        except Exception as exc:  # noqa: BLE001 - python-can send errors
            raise TransportError(f"{self._where}: cannot send SYNC: {exc}") from None
        deadline = self.clock() + self.sync_timeout
        with self._cond:
            while True:
                missing = [i for i in ids if not {1, 2} <= self._drives[i].received]
                if not missing:
                    return
                remaining = deadline - self.clock()
                if remaining <= 0 or not self._cond.wait(remaining):
                    break
        raise TransportTimeoutError(f"bus {self.spec.name!r} ({self._where}): no TPDO from "
                                    f"node(s) {missing} within {self.sync_timeout:g} s of "
                                    f"{what}")

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

    def _raise_faults(self, drives: Iterable[_Drive]) -> None:
        for d in drives:
            if state_of(d.values.get(0x6041, 0)) in ("FAULT", "FAULT REACTION ACTIVE"):
                raise self._fault_error(d)

    def _fault_error(self, d: _Drive) -> DeviceError:
        code = d.values.get(0x603F, 0)
        with self._cond:
            emcy = [e for e in d.emcy if e.code]
        text = f"EMCY 0x{emcy[-1].code:04X} {emcy[-1].get_desc()}" if emcy else "no EMCY"
        return DeviceError(f"{d.where}: drive in FAULT, error code 0x{code:04X} ({text})",
                           d.spec.id, code or (emcy[-1].code if emcy else 0))

    def _reset_fault(self, d: _Drive) -> None:
        _LOG.warning("%s: resetting the drive's fault", d.where)
        self._sdo_write(d, 0x6040, 0, "controlword")
        self._sdo_write(d, 0x6040, _CW_FAULT_RESET, "controlword (fault reset)")
        sw = self._sdo_read(d, 0x6041, "statusword")
        if state_of(sw).startswith("FAULT"):
            d.values[0x6041] = sw
            d.values[0x603F] = self._sdo_read(d, 0x603F, "error code")
            raise self._fault_error(d)
        with self._cond:
            d.emcy.clear()
        d.values[0x6041] = sw

    def _raw_target(self, d: _Drive, cmd: ActuatorCommand) -> int:
        u = d.units
        if d.kind is ControlMode.POSITION:
            x, scale, lo_hi, name = cmd.position, u.counts_per_rad, _INT32, "position"
        elif d.kind is ControlMode.VELOCITY:
            x, scale, lo_hi, name = cmd.velocity, u.velocity_per_rad_s, _INT32, "velocity"
        else:
            x, scale, lo_hi, name = cmd.effort, 1000.0 / u.rated_torque, _INT16, "effort"
        if not math.isfinite(x):
            raise ProtocolError(f"{d.where}: {name} {x!r} is not a finite number")
        return max(lo_hi[0], min(lo_hi[1], round(x * scale)))

    def _fill_rpdo(self, d: _Drive) -> None:
        pdo = d.node.rpdo[1]
        cw = d.controlword
        if d.op_mode == MODE_CODES["pp"] and cw == _CW_ENABLE:
            cw |= _CW_CHANGE_IMMEDIATELY | (_CW_NEW_SETPOINT if d.setpoint_toggle else 0)
        pdo[0x6040].raw = cw
        pdo[_TARGET[d.kind]].raw = d.target or 0

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
            return TransportTimeoutError(f"{d.where}: no SDO answer ({what}): {exc}")
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
