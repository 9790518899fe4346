"""Emulated CiA 402 servo drives: canopen ``LocalNode`` objects with the project's EDS.

Each drive is a ``canopen.LocalNode`` (SDO server, NMT slave with heartbeat producer,
EMCY producer) built from ``drive.eds`` on a python-can bus, served by canopen's
notifier thread in the caller's process. On top of the library this module adds what
a drive's firmware does:

* the CiA 402 state machine, driven by the controlword 0x6040 (SDO or RPDO): SWITCH ON
  DISABLED -> READY TO SWITCH ON -> SWITCHED ON -> OPERATION ENABLED, quick stop,
  disable voltage, fault reset on a rising edge of bit 7; the statusword 0x6041;
* modes 0x6060 (shown in 0x6061, after ``mode_display_lag`` reads): profile position (new
  set-point on a rising edge of controlword bit 4, acknowledged in statusword bit 12
  until bit 4 falls), profile velocity, profile torque, cyclic synchronous position /
  velocity / torque; anything else is refused with an SDO abort;
* quick stop (controlword bit 2 = 0, or the 0x6007 reaction 3) by the quick stop option
  code 0x605A (CiA 402): 0 disables at once (SWITCH ON DISABLED); 1..4 decelerate to
  standstill, then SWITCH ON DISABLED on their own (transition 12), "enable operation"
  is ignored meanwhile; 5..8 decelerate and hold in QUICK STOP ACTIVE, where "enable
  operation" is transition 16 back to OPERATION ENABLED. Other codes are refused;
* PDOs: at NMT *start* the drive loads its PDO configuration (as written by SDO);
  synchronous RPDOs are applied at the next SYNC, TPDOs are sent on SYNC (every n-th for
  transmission type n in 1..240; every SYNC for types 0, 254, 255);
* the shaft: :class:`~skel_ros.emulation.motor.MotorModel` (the dynamics every
  emulator shares; :mod:`skel_ros.physical.canopen402` puts a physics world's joint
  driven by the drive's own position and velocity loops there instead,
  :meth:`Cia402Emulator._motion`), advanced on each SYNC; actual position 0x6064
  (counts), velocity 0x606C, torque 0x6077 (per mille of 0x6076), error code 0x603F,
  error register 0x1001;
* the heartbeat consumer 0x1016 (CiA 301): an entry ``node << 16 | ms`` watches that
  node's heartbeat from its first reception on; a supervisor thread checks every entry on
  the emulator's clock, and when ``ms`` passed without a heartbeat the drive signals a
  heartbeat event (EMCY 0x8130, error register bit 4, error code 0x603F = 0x8130) and runs
  its abort connection option code 0x6007 (CiA 402): 0 nothing more, 1 FAULT (torque
  off), 2 disable voltage (SWITCH ON DISABLED, torque off), 3 quick stop (QUICK STOP
  ACTIVE: decelerates to standstill and holds; from READY TO SWITCH ON / SWITCHED ON to
  SWITCH ON DISABLED). Other codes are refused (SDO abort "value range"). The NMT state
  stays as it is (as with 0x1029 = 1). A new heartbeat re-arms the entry.

For tests: :meth:`Cia402Emulator.inject_fault` (FAULT + EMCY), :meth:`~Cia402Emulator.
inject_quick_stop` (QUICK STOP ACTIVE, optionally with an EMCY), :meth:`~Cia402Emulator.
stop_heartbeat`, :meth:`~Cia402Emulator.reboot` (boot-up, back to PRE-OPERATIONAL),
:meth:`~Cia402Emulator.state`, :meth:`~Cia402Emulator.target` (the target the drive
holds), :meth:`~Cia402Emulator.transitions` (every CiA 402 state change),
:meth:`~Cia402Emulator.nmt_commands`, :meth:`~Cia402Emulator.watchdog_events`,
:meth:`~Cia402Emulator.supervisor_passes`.

Options of :func:`start_emulator`: ``initial_positions`` ``{id: rad}``, ``motor``
(:class:`~skel_ros.emulation.motor.MotorParams` fields), ``clock``, ``eds``,
``supervisor_period`` (s of real time between the consumer checks, default 0.002),
``quick_stop_option`` (0x605A of every drive, 0..8; default the EDS's, 2),
``objects`` (``{index: value}``: values every drive holds at power-up and after a reboot,
as its commissioning stored them, e.g. ``{0x6065: 4000}``; an index may be a string such
as ``"0x6065"``; each must be a sub-index 0 object of the EDS),
``mode_display_lag`` (how many reads of 0x6061 after a write of 0x6060 still show the
previous mode, default 0: a drive that takes a moment to switch modes),
``sample_before_apply`` (default false: at a SYNC the RPDOs are applied, then the TPDOs
sampled; true: the TPDOs carry the state from before the RPDOs of that SYNC, which
CiA 301 also allows).
Actuator options (``counts_per_rev`` ..., ``rated_torque``) are read as the driver reads
them (:func:`~skel_ros.hardware.canopen402.bus.units_for`), so both agree.
"""

from __future__ import annotations

import functools
import logging
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skel_ros.emulation.motor import Motion, MotorModel, MotorParams, MotorState
from skel_ros.emulation.virtual_can import can_arguments
from skel_ros.hardware import can_transport
from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.canopen402.bus import DEFAULT_EDS, MODE_CODES, Units, units_for
from skel_ros.hardware.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    from skel_ros.hardware.base import ActuatorSpec

__all__ = ["Cia402Emulator", "DriveMotion", "EmulatedDrive", "start_emulator"]

_LOG = logging.getLogger(__name__)

SOD, READY, SWITCHED_ON, ENABLED = ("SWITCH ON DISABLED", "READY TO SWITCH ON", "SWITCHED ON",
                                    "OPERATION ENABLED")
QUICK_STOP, FAULT = "QUICK STOP ACTIVE", "FAULT"
_STATUS = {SOD: 0x0040, READY: 0x0031, SWITCHED_ON: 0x0033, ENABLED: 0x0037,
           QUICK_STOP: 0x0017, FAULT: 0x0018}
_REMOTE = 0x0200
_TARGET_REACHED = 0x0400
_SETPOINT_ACK = 0x1000             # profile position: statusword bit 12
_STANDSTILL = 0.01                 # rad/s below which the shaft counts as standing still
_PP = 1
_OPTION_CODES = {0x6007: range(4), 0x605A: range(9)}   # the option codes emulated
_SUPPORTED_MODES = frozenset(MODE_CODES.values())
_KIND = {1: ControlMode.POSITION, 8: ControlMode.POSITION, 3: ControlMode.VELOCITY,
         9: ControlMode.VELOCITY, 4: ControlMode.EFFORT, 10: ControlMode.EFFORT}
_NMT_OPERATIONAL = 5
_ABORT_VALUE_RANGE = 0x06090030
_ABORT_INCOMPATIBLE = 0x06040043   # CiA 301: a second consumer entry for one producer
_HEARTBEAT_EVENT = 0x8130          # CiA 301 EMCY: life guard error or heartbeat error
_COMMUNICATION_BIT = 0x10          # error register 0x1001 bit 4: communication error


class DriveMotion(Motion, Protocol):
    """What moves a drive's shaft: a Motion that advances to a time and says its state.

    :class:`~skel_ros.emulation.motor.MotorModel`, or a joint of a physics world driven
    by the drive's own loops (:mod:`skel_ros.physical.canopen402`).
    """

    def advance(self, t: float) -> MotorState:
        """Advance to clock time ``t`` (an earlier ``t``: none) and return the state."""
        ...


@dataclass
class EmulatedDrive:
    """One emulated drive: its node, its shaft's motion, its CiA 402 and NMT state."""

    spec: ActuatorSpec
    node: Any  # canopen.LocalNode (the library is only partly typed)
    model: DriveMotion
    units: Units
    state: str = SOD
    controlword: int = 0
    mode: int = 8
    error_code: int = 0
    pending: dict[int, bytes] = field(default_factory=dict)   # sync RPDO number -> data
    sync_counts: dict[int, int] = field(default_factory=dict)
    rpdo_hooked: set[int] = field(default_factory=set)
    heartbeat_stopped: bool = False
    consumers: dict[int, float] = field(default_factory=dict)      # producer -> s
    heard: dict[int, float] = field(default_factory=dict)          # producer -> last stamp
    expired: set[int] = field(default_factory=set)
    transitions: list[tuple[str, str]] = field(default_factory=list)
    nmt_log: list[int] = field(default_factory=list)
    watchdog_events: list[tuple[float, int, int]] = field(default_factory=list)
    fault_persists: bool = False
    sdo_to_drop: int = 0
    setpoint_ack: bool = False
    mode_shown: int = 8                 # what 0x6061 shows while the display lags
    display_lag_left: int = 0           # reads of 0x6061 still showing mode_shown


class Cia402Emulator:
    """CiA 402 drives answering on a python-can bus (see the module docstring).

    Args:
        transport: python-can mapping; default (``{}``) a fresh ``virtual`` channel.
        actuators: the drives (node ids 1..127; position, velocity or effort mode).
        options: see the module docstring.

    Attributes:
        transport: what the driver's ``BusSpec.transport`` needs to reach it.

    Raises:
        ConfigError: bad options or EDS.
        TransportError: the bus cannot be opened.
    """

    def __init__(self, transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],  # noqa: PLR0915
                 options: Mapping[str, Any] | None = None) -> None:
        import canopen

        opts = dict(options or {})
        tr = can_arguments(transport, "canopen")
        self.transport: Mapping[str, Any] = dict(tr)
        self.clock: Callable[[], float] = opts.get("clock", time.monotonic)
        initial = dict(opts.get("initial_positions") or {})
        try:
            params = MotorParams(**dict(opts.get("motor") or {}))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"CiA 402 emulator: bad motor parameters: {exc}") from None
        self._lock = self._motion_lock()
        self._stop = threading.Event()
        self._passes = 0
        period = opts.get("supervisor_period", 0.002)
        if isinstance(period, bool) or not isinstance(period, (int, float)) or not (
                0 < period <= 1):
            raise ConfigError(f"CiA 402 emulator: supervisor_period must be in (0, 1] s, "
                              f"got {period!r}")
        self._supervisor_period = float(period)
        (self._quick_stop_option, self._mode_display_lag,
         self._sample_before_apply) = _drive_options(opts)
        self._objects = _stored_objects(opts.get("objects"))
        self._syncs_to_drop = 0
        self._drives: dict[int, EmulatedDrive] = {}
        bus = can_transport.open_bus(tr)
        network = canopen.Network(bus)
        network.NOTIFIER_CYCLE = 0.05
        self._network: Any = network
        try:
            now = self.clock()
            for act in actuators:
                eds = Path(str(act.options.get("eds", opts.get("eds", DEFAULT_EDS))))
                try:
                    node: Any = canopen.LocalNode(act.id, canopen.import_od(str(eds), act.id))
                except Exception as exc:  # noqa: BLE001 - the EDS parser raises anything
                    raise ConfigError(f"CiA 402 emulator: cannot read EDS {str(eds)!r}: "
                                      f"{exc}") from None
                units = units_for(act.options, f"emulated CiA 402 node {act.id}")
                if units.rated_torque != units.rated_torque:  # NaN: the EDS's 0x6076
                    rated = node.object_dictionary[0x6076].default / 1000.0
                    units = Units(units.counts_per_rad, units.velocity_per_rad_s, rated)
                model = self._motion(act, units, params, float(initial.get(act.id, 0.0)),
                                     now)
                d = EmulatedDrive(act, node, model, units)
                self._store_settings(d)
                node.add_read_callback(self._reader(d))
                node.add_write_callback(self._writer(d))
                network.add_node(node)
                network.unsubscribe(node.sdo.rx_cobid, node.sdo.on_request)
                network.subscribe(node.sdo.rx_cobid, self._sdo_filter(d))
                self._drives[act.id] = d
            network.subscribe(0x80, self._on_sync)
            network.subscribe(0, self._on_nmt)
            for producer in range(1, 128):
                network.subscribe(0x700 + producer, self._on_heartbeat)
            network.connect()
            for d in self._drives.values():
                self._boot(d)
            self._supervisor = threading.Thread(target=self._supervise, daemon=True,
                                                name="cia402-emulator-supervisor")
            self._supervisor.start()
        except BaseException:
            self.stop()
            raise

    def _motion(self, actuator: ActuatorSpec, units: Units,  # noqa: ARG002
                params: MotorParams, position: float, now: float) -> DriveMotion:
        """What moves one drive's shaft, at ``position`` (rad) at ``now``.

        A motor model of its own here; :mod:`skel_ros.physical.canopen402` gives a physics
        world's joint. Called from ``__init__`` for each actuator, before the network starts.
        """
        return MotorModel(params, position, now)

    def _motion_lock(self) -> AbstractContextManager[Any]:
        """The (re-entrant) lock held while a frame or a call acts on the drives: its own.

        :mod:`skel_ros.physical.canopen402` gives its physics world's, which the emulators
        of other buses moving that world hold too.
        """
        return threading.RLock()

    def _take_fault(self, d: EmulatedDrive) -> int:  # noqa: ARG002
        """The error code of a fault the drive's own monitoring raised since the last call.

        0: none (lock held). The motor model always follows; a drive whose loops can lose
        their load (:mod:`skel_ros.physical.canopen402`: following error) says so here.
        """
        return 0

    def _stop_motion(self, d: EmulatedDrive) -> None:
        """Bring the shaft to standstill as quick stop does (lock held, QUICK STOP ACTIVE).

        The motor model's velocity tracking to 0; a drive with its own loops ramps down at
        the deceleration 0x605A selects.
        """
        d.model.mode = ControlMode.VELOCITY
        d.model.set_velocity_target(0.0)

    # ------------------------------------------------------------------ control

    def stop(self) -> None:
        """Stop heartbeats and the notifier, release the bus; idempotent, never raises."""
        network, self._network = getattr(self, "_network", None), None
        if network is None:
            return
        self._stop.set()
        supervisor = getattr(self, "_supervisor", None)
        if supervisor is not None and supervisor is not threading.current_thread():
            supervisor.join(timeout=2.0)
        for d in self._drives.values():
            try:
                d.node.nmt.stop_heartbeat()
            except Exception as exc:  # noqa: BLE001, PERF203 - stop never raises
                _LOG.warning("CiA 402 emulator: stopping heartbeat failed: %s", exc)
        try:
            network.disconnect()
        except Exception as exc:  # noqa: BLE001
            _LOG.warning("CiA 402 emulator: disconnect failed: %s", exc)

    def state(self, actuator_id: int) -> MotorState:
        """The true shaft state of one drive (advanced to now)."""
        with self._lock:
            return self._drives[actuator_id].model.advance(self.clock())

    def drive_state(self, actuator_id: int) -> str:
        """The drive's CiA 402 state name (a finished quick stop taken into account)."""
        with self._lock:
            d = self._drives[actuator_id]
            self._end_quick_stop(d, self.clock())
            return d.state

    def nmt_state(self, actuator_id: int) -> str:
        """The drive's NMT state name."""
        return str(self._drives[actuator_id].node.nmt.state)

    def target(self, actuator_id: int) -> float:
        """The target the drive holds in its present mode, as it decodes it (SI)."""
        with self._lock:
            d = self._drives[actuator_id]
            kind = _KIND.get(d.mode, ControlMode.POSITION)
            u = d.units
            if kind is ControlMode.POSITION:
                return self._stored(d, 0x607A) / u.counts_per_rad
            if kind is ControlMode.VELOCITY:
                return self._stored(d, 0x60FF) / u.velocity_per_rad_s
            return self._stored(d, 0x6071) / 1000.0 * u.rated_torque

    def transitions(self, actuator_id: int) -> list[tuple[str, str]]:
        """Every CiA 402 state change of the drive so far, ``(from, to)``."""
        with self._lock:
            return list(self._drives[actuator_id].transitions)

    def nmt_commands(self, actuator_id: int) -> list[int]:
        """Every NMT command code addressed to the drive (or to all) so far."""
        with self._lock:
            return list(self._drives[actuator_id].nmt_log)

    def watchdog_events(self, actuator_id: int) -> list[tuple[float, int, int]]:
        """Heartbeat events so far: ``(emulator time, producer node, 0x6007 reaction)``."""
        with self._lock:
            return list(self._drives[actuator_id].watchdog_events)

    def last_heartbeat(self, actuator_id: int, producer: int) -> float | None:
        """The emulator time the drive last received ``producer``'s heartbeat (None: never)."""
        with self._lock:
            return self._drives[actuator_id].heard.get(producer)

    def supervisor_passes(self) -> int:
        """How many times the consumer supervisor has checked every entry."""
        with self._lock:
            return self._passes

    def inject_fault(self, actuator_id: int, code: int = 0x2310, *,
                     persistent: bool = False) -> None:
        """Enter FAULT (torque off) and send an EMCY with ``code`` (default over-current).

        ``persistent``: the cause stays (a fault reset leaves the drive in FAULT) until
        :meth:`reboot`.
        """
        with self._lock:
            d = self._drives[actuator_id]
            self._fault(d, code, self.clock())
            d.fault_persists = persistent
            network = self._network
        if network is not None:
            d.node.emcy.send(code, _error_register(code))

    def _fault(self, d: EmulatedDrive, code: int, now: float) -> None:
        """FAULT (torque off) with error code ``code`` (lock held; the EMCY is the caller's)."""
        d.model.set_torque(False, now)  # noqa: FBT003
        self._set_state(d, FAULT)
        d.error_code = code

    def inject_quick_stop(self, actuator_id: int, code: int = 0) -> None:
        """Quick stop by the drive itself (its quick stop input, a monitored event).

        From OPERATION ENABLED to QUICK STOP ACTIVE, then as 0x605A says; ``code`` (0:
        none) goes to 0x603F and out in an EMCY, as a heartbeat event's 0x8130 does.
        """
        with self._lock:
            d = self._drives[actuator_id]
            now = self.clock()
            d.model.advance(now)
            if d.state == ENABLED:
                self._enter(d, QUICK_STOP, now)
            if code:
                d.error_code = code
            network = self._network
        if code and network is not None:
            d.node.emcy.send(code, _error_register(code))

    def drop_syncs(self, count: int) -> None:
        """Ignore the next ``count`` SYNC frames (lost on the wire, or a drive too late)."""
        with self._lock:
            self._syncs_to_drop = count

    def drop_sdo_requests(self, actuator_id: int, count: int) -> None:
        """The drive ignores its next ``count`` SDO requests (lost or unanswered in time)."""
        with self._lock:
            self._drives[actuator_id].sdo_to_drop = count

    def stop_heartbeat(self, actuator_id: int) -> None:
        """The drive stops producing heartbeats (and keeps it so), as a dead node."""
        d = self._drives[actuator_id]
        d.heartbeat_stopped = True
        d.node.nmt.stop_heartbeat()

    def reboot(self, actuator_id: int) -> None:
        """Reset the node: boot-up message, PRE-OPERATIONAL, drive state and data reset."""
        d = self._drives[actuator_id]
        with self._lock:
            d.node.data_store.clear()
            self._store_settings(d)
            d.model.set_torque(False, self.clock())  # noqa: FBT003
            self._set_state(d, SOD)
            d.controlword, d.error_code, d.mode, d.mode_shown = 0, 0, 8, 8
            d.display_lag_left, d.setpoint_ack = 0, False
            d.fault_persists = False
            d.pending.clear()
            self._reset_consumers(d)
        d.node.nmt.stop_heartbeat()
        d.node.nmt._state = 0  # noqa: SLF001 - the library's NMT slave has no reset entry
        self._boot(d)

    def _store_settings(self, d: EmulatedDrive) -> None:
        """The objects a drive's commissioning sets: rated torque 0x6076, 0x605A option.

        And the ``objects`` option's.

        Raises:
            ConfigError: an ``objects`` index the EDS lacks, a value its type cannot hold.
        """
        od = d.node.object_dictionary
        d.node.data_store.setdefault(0x6076, {})[0] = od[0x6076].encode_raw(
            round(d.units.rated_torque * 1000))
        if self._quick_stop_option is not None:
            d.node.data_store.setdefault(0x605A, {})[0] = od[0x605A].encode_raw(
                self._quick_stop_option)
        for index, value in self._objects.items():
            try:
                raw = od[index].encode_raw(value)
            except (KeyError, AttributeError, ValueError, OverflowError, struct.error):
                raise ConfigError(f"CiA 402 emulator node {d.spec.id}: objects: cannot store "
                                  f"{value} in 0x{index:04X} (not a plain object of its EDS,"
                                  " or out of its type's range)") from None
            d.node.data_store.setdefault(index, {})[0] = raw

    # ------------------------------------------------------------------ NMT / SYNC

    def _boot(self, d: EmulatedDrive) -> None:
        nmt = d.node.nmt
        nmt.send_command(0x81)  # -> INITIALISING: sends the boot-up message
        nmt.send_command(0x80)  # -> PRE-OPERATIONAL: starts the heartbeat (0x1017)
        if d.heartbeat_stopped:
            nmt.stop_heartbeat()

    def _on_nmt(self, can_id: int, data: bytearray, timestamp: float) -> None:  # noqa: ARG002
        """After the library's NMT slave: load PDOs on start, boot again on resets."""
        if len(data) < 2:  # noqa: PLR2004
            return
        cmd, target = data[0], data[1]
        for d in self._drives.values():
            if target not in (0, d.spec.id):
                continue
            with self._lock:
                d.nmt_log.append(cmd)
            try:
                if cmd in (0x81, 0x82):
                    with self._lock:
                        self._reset_consumers(d)   # communication objects to defaults
                    self._boot(d)
                elif cmd == 0x01:
                    self._load_pdos(d)
                if d.heartbeat_stopped:
                    d.node.nmt.stop_heartbeat()
            except Exception:  # noqa: BLE001 - never kill the notifier thread
                _LOG.exception("CiA 402 emulator node %d: NMT 0x%02X failed", d.spec.id, cmd)

    def _load_pdos(self, d: EmulatedDrive) -> None:
        node = d.node
        with self._lock:
            node.rpdo.read(from_od=False)  # the configuration as written by SDO
            node.tpdo.read(from_od=False)
            for number, pdo in node.rpdo.map.items():
                if number not in d.rpdo_hooked:
                    pdo.add_callback(self._rpdo_hook(d, number))
                    d.rpdo_hooked.add(number)
            d.pending.clear()
            d.sync_counts.clear()

    def _rpdo_hook(self, d: EmulatedDrive, number: int) -> Callable[[Any], None]:
        def on_rpdo(pdo: Any) -> None:  # noqa: ANN401 - canopen PdoMap
            if d.node.nmt.state != "OPERATIONAL" or not pdo.enabled:
                return
            with self._lock:
                if pdo.trans_type is not None and pdo.trans_type <= 240:  # noqa: PLR2004
                    d.pending[number] = bytes(pdo.data)   # applied at the next SYNC
                else:
                    self._apply_rpdo(d, pdo, bytes(pdo.data))
        return on_rpdo

    def _apply_rpdo(self, d: EmulatedDrive, pdo: Any, data: bytes) -> None:  # noqa: ANN401
        saved = pdo.data
        pdo.data = bytearray(data)
        try:
            # Targets first, the controlword last: a new set-point edge sees its target.
            for var in sorted(pdo, key=lambda v: v.index == 0x6040):  # noqa: PLR2004
                if var.length:
                    d.node.set_data(var.index, var.subindex, var.get_data())
        finally:
            pdo.data = saved

    def _sdo_filter(self, d: EmulatedDrive) -> Callable[[int, bytearray, float], None]:
        def on_request(can_id: int, data: bytearray, timestamp: float) -> None:
            with self._lock:
                if d.sdo_to_drop > 0:
                    d.sdo_to_drop -= 1
                    return
            d.node.sdo.on_request(can_id, data, timestamp)
        return on_request

    def _on_sync(self, can_id: int, data: bytearray, timestamp: float) -> None:  # noqa: ARG002
        with self._lock:
            if self._syncs_to_drop > 0:
                self._syncs_to_drop -= 1
                return
        try:
            now = self.clock()
            for d in self._drives.values():
                if d.node.nmt.state != "OPERATIONAL":
                    continue
                with self._lock:
                    frames, fault = self._sync_drive(d, now)
                if fault:
                    d.node.emcy.send(fault, _error_register(fault))
                for pdo in frames:
                    pdo.transmit()
        except Exception:  # noqa: BLE001 - never kill the notifier thread
            _LOG.exception("CiA 402 emulator: SYNC handling failed")

    def _sync_drive(self, d: EmulatedDrive, now: float) -> tuple[list[Any], int]:
        """One drive's SYNC (lock held): its TPDOs due, and a fault it raised (0: none).

        The RPDOs received before it applied, the shaft advanced to ``now``, a fault of
        the drive's own monitoring (:meth:`_take_fault`) entered, a quick stop ended.
        """
        if self._sample_before_apply:
            frames = self._due_tpdos(d)
        for number, payload in sorted(d.pending.items()):
            self._apply_rpdo(d, d.node.rpdo.map[number], payload)
        d.pending.clear()
        d.model.advance(now)
        fault = self._take_fault(d)
        if fault:
            self._fault(d, fault, now)
        self._end_quick_stop(d, now)
        if not self._sample_before_apply:
            frames = self._due_tpdos(d)
        return frames, fault

    def _due_tpdos(self, d: EmulatedDrive) -> list[Any]:
        due = []
        for number, pdo in d.node.tpdo.map.items():
            if not pdo.enabled or not pdo.map:
                continue
            n = d.sync_counts.get(number, 0) + 1
            d.sync_counts[number] = n
            tt = pdo.trans_type or 0
            if 1 <= tt <= 240 and n % tt:  # noqa: PLR2004
                continue
            for var in pdo:
                if var.length:
                    var.set_data(d.node.get_data(var.index, var.subindex))
            due.append(pdo)
        return due

    # ------------------------------------------------------------------ objects

    def _reader(self, d: EmulatedDrive) -> Callable[..., int | None]:
        def read(index: int, subindex: int, od: Any) -> int | None:  # noqa: ANN401, ARG001
            with self._lock:
                return self._value(d, index)
        return read

    def _value(self, d: EmulatedDrive, index: int) -> int | None:  # noqa: PLR0911 - one per object
        if index == 0x6041:  # noqa: PLR2004
            return self._statusword(d)
        if index == 0x6061:  # noqa: PLR2004
            if d.display_lag_left > 0:
                d.display_lag_left -= 1
                return d.mode_shown
            d.mode_shown = d.mode
            return d.mode
        if index == 0x603F:  # noqa: PLR2004
            return d.error_code
        if index == 0x1001:  # noqa: PLR2004
            return _error_register(d.error_code) if d.state == FAULT else 0
        if index in (0x6064, 0x606C, 0x6077):
            s = d.model.state
            u = d.units
            if index == 0x6064:  # noqa: PLR2004
                return _clamp32(round(s.position * u.counts_per_rad))
            if index == 0x606C:  # noqa: PLR2004
                return _clamp32(round(s.velocity * u.velocity_per_rad_s))
            return max(-32768, min(32767, round(s.effort / u.rated_torque * 1000)))
        return None

    def _statusword(self, d: EmulatedDrive) -> int:
        sw = _STATUS[d.state] | _REMOTE
        if d.state == ENABLED and _KIND.get(d.mode) is ControlMode.POSITION:
            s = d.model.state
            target = self._stored(d, 0x607A) / d.units.counts_per_rad
            if abs(target - s.position) * d.units.counts_per_rad < 10 and abs(  # noqa: PLR2004
                    s.velocity) < _STANDSTILL:
                sw |= _TARGET_REACHED
            if d.mode == _PP and d.setpoint_ack:
                sw |= _SETPOINT_ACK
        return sw

    def _setting(self, d: EmulatedDrive, index: int) -> int:
        """Object ``index`` of the drive, or the project's EDS default if its EDS has none."""
        try:
            return self._stored(d, index)
        except KeyError:
            return _project_default(index)

    def _stored(self, d: EmulatedDrive, index: int) -> int:
        node = d.node
        try:
            raw = node.data_store[index][0]
        except KeyError:
            return int(node.object_dictionary[index].default or 0)
        return int(node.object_dictionary[index].decode_raw(raw))

    def _writer(self, d: EmulatedDrive) -> Callable[..., None]:
        def write(index: int, subindex: int, od: Any, data: bytes) -> None:  # noqa: ANN401
            from canopen.sdo.exceptions import SdoAbortedError

            with self._lock:
                if index == 0x6060:  # noqa: PLR2004
                    self._mode(d, int(od.decode_raw(data)))
                elif index == 0x6040:  # noqa: PLR2004
                    self._controlword(d, int(od.decode_raw(data)))
                elif index in (0x607A, 0x60FF, 0x6071):
                    # Stored by the library after this callback: apply with the new value.
                    d.node.data_store.setdefault(index, {})[0] = bytes(data)
                    if d.state == ENABLED:
                        self._apply_targets(d, take_setpoint=False)
                elif index == 0x1017 and d.heartbeat_stopped:  # noqa: PLR2004
                    d.node.nmt.stop_heartbeat()
                elif index == 0x1016 and subindex:  # noqa: PLR2004
                    self._consumer_entry(d, subindex, int(od.decode_raw(data)))
                elif index in _OPTION_CODES and int(od.decode_raw(data)) not in _OPTION_CODES[
                        index]:
                    raise SdoAbortedError(_ABORT_VALUE_RANGE)
        return write

    def _mode(self, d: EmulatedDrive, mode: int) -> None:
        """A write of 0x6060 (lock held); 0x6061 follows after ``mode_display_lag`` reads."""
        from canopen.sdo.exceptions import SdoAbortedError

        if mode not in _SUPPORTED_MODES:
            raise SdoAbortedError(_ABORT_VALUE_RANGE)
        if d.display_lag_left == 0:
            d.mode_shown = d.mode
        d.mode, d.display_lag_left = mode, self._mode_display_lag
        if d.state == ENABLED:
            self._apply_targets(d, take_setpoint=False)

    def _controlword(self, d: EmulatedDrive, cw: int) -> None:
        previous, d.controlword = d.controlword, cw
        now = self.clock()
        d.model.advance(now)
        if d.state == FAULT:
            if cw & 0x80 and not previous & 0x80 and not d.fault_persists:
                self._set_state(d, SOD)
                d.error_code = 0
                d.node.emcy.reset()
            return
        if cw & 0x80:
            return
        state = d.state
        new = self._next_state(d, cw)
        if new == ENABLED and state != ENABLED:
            d.model.set_position_target(d.model.state.position)  # PP: hold until a set-point
        self._enter(d, new, now)
        if new == ENABLED:
            take = bool(cw & 0x10 and not previous & 0x10)
            if d.mode == _PP:   # bit 12 set with the set-point taken, cleared as bit 4 falls
                d.setpoint_ack = take or bool(d.setpoint_ack and cw & 0x10)
            self._apply_targets(d, take_setpoint=take)

    def _next_state(self, d: EmulatedDrive, cw: int) -> str:
        """The state a controlword command (no fault reset) leads to from ``d.state``."""
        voltage, quick, switch_on, enable = cw & 0x02, cw & 0x04, cw & 0x01, cw & 0x08
        state = d.state
        if not voltage:
            return SOD
        if not quick:
            return QUICK_STOP if state in (ENABLED, QUICK_STOP) else SOD
        if not switch_on:  # shutdown
            return READY if state in (SOD, READY, SWITCHED_ON, ENABLED) else SOD
        if not enable:     # switch on / disable operation
            return SWITCHED_ON if state in (READY, SWITCHED_ON, ENABLED) else state
        if state == QUICK_STOP:   # enable operation: transition 16 for codes 5..8 only
            return ENABLED if self._stored(d, 0x605A) in range(5, 9) else state
        return ENABLED if state in (READY, SWITCHED_ON, ENABLED) else state

    def _set_state(self, d: EmulatedDrive, new: str) -> None:
        if new != d.state:
            d.transitions.append((d.state, new))
        d.state = new

    def _enter(self, d: EmulatedDrive, new: str, now: float) -> None:
        """Change the 402 state with what it does to the shaft (torque, quick stop ramp)."""
        self._set_state(d, new)
        d.model.set_torque(new in (ENABLED, QUICK_STOP), now)
        if new != ENABLED:
            d.setpoint_ack = False
        if new == QUICK_STOP:
            self._stop_motion(d)
            self._end_quick_stop(d, now)

    def _end_quick_stop(self, d: EmulatedDrive, now: float) -> None:
        """QUICK STOP ACTIVE -> SWITCH ON DISABLED where 0x605A says so (lock held).

        Option code 0 at once (disable drive function), 1..4 at standstill; 5..8 never.
        """
        if d.state != QUICK_STOP:
            return
        option = self._stored(d, 0x605A)
        if option == 0 or (option in range(1, 5) and abs(
                d.model.advance(now).velocity) < _STANDSTILL):
            self._enter(d, SOD, now)

    # ------------------------------------------------------------------ heartbeat consumer

    def _reset_consumers(self, d: EmulatedDrive) -> None:
        d.consumers.clear()
        d.heard.clear()
        d.expired.clear()
        d.node.data_store.pop(0x1016, None)

    def _consumer_entry(self, d: EmulatedDrive, subindex: int, value: int) -> None:
        """A write of 0x1016:n (lock held): check it as CiA 301 says, then watch it."""
        from canopen.sdo.exceptions import SdoAbortedError

        producer, ms = (value >> 16) & 0xFF, value & 0xFFFF
        entries = {sub: self._stored_sub(d, 0x1016, sub) for sub in range(1, 5)}
        entries[subindex] = value
        if producer and ms and any((v >> 16) & 0xFF == producer and v & 0xFFFF
                                   for sub, v in entries.items() if sub != subindex):
            raise SdoAbortedError(_ABORT_INCOMPATIBLE)
        d.consumers = {(v >> 16) & 0xFF: (v & 0xFFFF) / 1000.0 for v in entries.values()
                       if (v >> 16) & 0xFF and v & 0xFFFF}
        for gone in set(d.heard) - set(d.consumers):
            d.heard.pop(gone, None)
        d.expired &= set(d.consumers)
        if producer in d.heard:
            d.heard[producer] = self.clock()   # a new time starts from now

    def _stored_sub(self, d: EmulatedDrive, index: int, sub: int) -> int:
        try:
            raw = d.node.data_store[index][sub]
        except KeyError:
            return 0
        return int.from_bytes(raw, "little")

    def _on_heartbeat(self, can_id: int, data: bytearray, timestamp: float) -> None:  # noqa: ARG002
        producer = can_id - 0x700
        with self._lock:
            now = self.clock()
            for d in self._drives.values():
                if producer in d.consumers:
                    d.heard[producer] = now
                    d.expired.discard(producer)

    def _supervise(self) -> None:
        """Thread: check every consumer entry on the emulator's clock."""
        while not self._stop.wait(self._supervisor_period):
            events = []
            with self._lock:
                now = self.clock()
                for d in self._drives.values():
                    for producer, limit in d.consumers.items():
                        last = d.heard.get(producer)
                        if last is None or producer in d.expired or now - last <= limit:
                            continue
                        d.expired.add(producer)
                        events.append((d, producer))
                        self._abort_connection(d, producer, now)
                    self._end_quick_stop(d, now)
                self._passes += 1
            for d, producer in events:
                try:
                    d.node.emcy.send(_HEARTBEAT_EVENT, _error_register(_HEARTBEAT_EVENT),
                                     producer.to_bytes(1, "little"))
                except Exception:  # noqa: BLE001, PERF203 - never kill the supervisor
                    _LOG.exception("CiA 402 emulator node %d: EMCY failed", d.spec.id)

    def _abort_connection(self, d: EmulatedDrive, producer: int, now: float) -> None:
        """The heartbeat event's reaction, 0x6007 (lock held)."""
        option = self._stored(d, 0x6007)
        d.watchdog_events.append((now, producer, option))
        d.error_code = _HEARTBEAT_EVENT
        d.model.advance(now)
        if option == 1 and d.state != FAULT:
            self._enter(d, FAULT, now)
        elif option == 2:  # noqa: PLR2004
            self._enter(d, SOD, now)
        elif option == 3:  # noqa: PLR2004
            if d.state == ENABLED:
                self._enter(d, QUICK_STOP, now)
            elif d.state in (READY, SWITCHED_ON):
                self._enter(d, SOD, now)

    def _apply_targets(self, d: EmulatedDrive, *, take_setpoint: bool) -> None:
        """Hand the target objects of the present mode to the model (OPERATION ENABLED).

        Cyclic modes follow their target at once; profile position takes 0x607A only on
        a new set-point (``take_setpoint``, controlword bit 4 rising).
        """
        kind = _KIND.get(d.mode, ControlMode.POSITION)
        model = d.model
        model.advance(self.clock())
        model.mode = kind
        u = d.units
        if kind is ControlMode.POSITION:
            if d.mode != 1 or take_setpoint:
                model.set_position_target(self._stored(d, 0x607A) / u.counts_per_rad)
        elif kind is ControlMode.VELOCITY:
            model.set_velocity_target(self._stored(d, 0x60FF) / u.velocity_per_rad_s)
        else:
            model.set_effort_target(self._stored(d, 0x6071) / 1000.0 * u.rated_torque)


def _drive_options(opts: Mapping[str, Any]) -> tuple[int | None, int, bool]:
    """``quick_stop_option`` (None: the EDS's), ``mode_display_lag``, ``sample_before_apply``."""
    option = opts.get("quick_stop_option")
    if option is not None and (isinstance(option, bool) or option not in _OPTION_CODES[
            0x605A]):
        raise ConfigError("CiA 402 emulator: quick_stop_option must be an integer in 0..8, "
                          f"got {option!r}")
    lag = opts.get("mode_display_lag", 0)
    if isinstance(lag, bool) or not isinstance(lag, int) or lag < 0:
        raise ConfigError(f"CiA 402 emulator: mode_display_lag must be an integer >= 0, "
                          f"got {lag!r}")
    sample_first = opts.get("sample_before_apply", False)
    if not isinstance(sample_first, bool):
        raise ConfigError("CiA 402 emulator: sample_before_apply must be true or false, "
                          f"got {sample_first!r}")
    return option, lag, sample_first


def _stored_objects(raw: object) -> dict[int, int]:
    """The ``objects`` option: ``{index: value}`` with integer (or ``"0x..."``) indices."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"CiA 402 emulator: objects must be a mapping index -> value, "
                          f"got {raw!r}")
    out = {}
    for key, value in raw.items():
        try:
            index = key if isinstance(key, int) and not isinstance(key, bool) else int(
                str(key), 0)
        except ValueError:
            raise ConfigError(f"CiA 402 emulator: objects: {key!r} is not an object index"
                              ) from None
        if index not in range(0x10000):
            raise ConfigError(f"CiA 402 emulator: objects: {key!r} is not an object index")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"CiA 402 emulator: objects: 0x{index:04X} needs an integer "
                              f"value, got {value!r}")
        out[index] = value
    return out


@functools.cache
def _project_default(index: int) -> int:
    """Object ``index``'s default in the project's ``drive.eds``."""
    import canopen

    return int(canopen.import_od(str(DEFAULT_EDS))[index].default or 0)


def _error_register(code: int) -> int:
    """0x1001 for an error code: generic, plus current (0x2xxx) or communication (0x81xx)."""
    register = 0x01
    if code & 0xF000 == 0x2000:  # noqa: PLR2004
        register |= 0x02
    if code & 0xFF00 == 0x8100:  # noqa: PLR2004
        register |= _COMMUNICATION_BIT
    return register


def _clamp32(x: int) -> int:
    return max(-(2**31), min(2**31 - 1, x))


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> Cia402Emulator:
    """Start emulated CiA 402 drives (canopen ``LocalNode``s served by a thread here).

    The protocol ``canopen``'s emulator (:mod:`skel_ros.emulation`). ``transport`` may be
    ``{}``: a fresh python-can ``virtual`` channel is used; the emulator's ``transport``
    attribute says how to reach it.
    """
    return Cia402Emulator(transport, actuators, options)
