"""The hardware backend: joint <-> actuator mapping, limits, safety, faults, reconnects.

One :class:`HardwareBackend` drives every bus of a :class:`~skel_ros.hardware.config.
BoundConfig`, behind the robot core's seam (:class:`~skel_ros.core.RobotBackend`), as a
ros2_control hardware component: passive, it has no thread and no core of its own. The
:class:`~skel_ros.core.Runner` owns the loop and calls, once per cycle at
``control_rate`` (:class:`~skel_ros.core.GridPacer`: a late cycle does not shift the later
ones), :meth:`~HardwareBackend.sense` (reconnect failed buses, e-stop, read every bus,
faults, enable / disable / clear_faults requests), then the core's cycle (trajectory
sample, command timeout, the limits gate, :meth:`~HardwareBackend.write`), then
:meth:`~HardwareBackend.actuate` (the motion limiter, the drivers' writes). All bus I/O
happens in the loop's thread. Other threads (the ROS executor) only hand in commands
(through the core) and enable / disable / estop requests, and read the latest
:class:`HardwareStatus`; they never wait for the bus, and the loop never waits for them:
a request wakes the loop, which serves it between cycles (:meth:`~HardwareBackend.serve`).

Safety, in order of precedence:

* Everything starts with torque off (the drivers' ``open`` contract). Motion only after
  :meth:`~HardwareBackend.enable` (the lifecycle's activate), which reads the measured
  positions and makes them the targets before torque goes on, so nothing jumps.
* :meth:`~HardwareBackend.estop` cuts torque on every bus at once (it wakes the loop);
  only a new enable moves again. Its answer is a success only when every bus confirmed
  the torque off; a bus that cannot be reached is named (its torque is unknown until a
  read after it reconnects, with torque off, says so).
* After an enable (or a resume, or a bus reopened holding), a command far from where a
  joint stands is approached at ``reenable_velocity`` times its velocity limits until the
  joint has reached a commanded goal (the motion limiter's re-enable bound): a stream that
  never stopped across a disable and an enable does not slew the robot at full speed.
* An enable while already enabled changes nothing (the motion goes on).
* Every command passed the core's limits gate (the model's limits tightened by the YAML,
  :attr:`~HardwareBackend.limits`, and each actuator's control mode); every cycle's
  targets come from the :class:`~skel_ros.hardware.safety.MotionLimiter` (velocity and
  acceleration limits) and pass its guard before any driver encodes them.
* No command for ``command_timeout`` -> ``safe_state`` (hold the current target, or
  torque off): the core's timeout calls :meth:`~HardwareBackend.on_timeout`.
* Bus errors never escape the loop: they are counted; ``fault_threshold`` failed cycles
  in a row (or at once: a vanished port, a drive in fault) fail the bus: it is closed,
  the others get the safe state, and it is reopened with exponential backoff. Motion
  resumes after a new enable, or by itself with ``auto_resume`` when the bus failed while
  motion was enabled (targets reset to the measured positions either way). A device
  fault never resumes by itself: ``clear_faults`` leaves torque off, an enable moves. A
  bus's torque is what its devices report: one none of whose devices has torque on any
  more (a fault cut it) gets no target until an enable, and ends ``disabled``, not
  ``holding``, once its faults are cleared.

Whatever stops motion here (e-stop, fault, disable, a new enable) ends the core's
trajectory through the link the core binds (:meth:`~skel_ros.core.RobotBackend.bind_core`).

Units: DOF side (what the model and ROS see) in the model's units; actuator side as in
:mod:`skel_ros.hardware.base`. See :mod:`skel_ros.hardware.config` for the mapping.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.core import Capabilities, LoggingLog, RobotBackend, RobotState, Runner
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, ControlMode
from skel_ros.hardware.config import SafeState
from skel_ros.hardware.diagnostics import (
    ActuatorDiagnostics,
    BusDiagnostics,
    ErrorCounts,
    ErrorKind,
    Level,
    classify,
)
from skel_ros.hardware.errors import ConfigError, DeviceError, HardwareError
from skel_ros.hardware.plugins import bus_class
from skel_ros.hardware.safety import MODE_COMMANDS, MotionLimiter, MotionState
from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from skel_ros.core import CoreLog, LoopListener
    from skel_ros.hardware.base import ActuatorBus, ActuatorState, BusSpec
    from skel_ros.hardware.config import BoundConfig
    from skel_ros.model.types import Array

__all__ = [
    "STREAM_PERIODS",
    "WRITES_KEPT",
    "HardwareBackend",
    "HardwareStatus",
    "LoopNotAnsweringError",
    "Request",
    "WrittenGoals",
    "hardware_runner",
]

_LOG = logging.getLogger("skel_ros.hardware")
_DIAG_PERIOD = 0.05  # s between diagnostics snapshots (they allocate; joint data is per cycle)
_MIN_DT_FRACTION = 0.05  # a write-through cycle closer than this * period to the last is skipped
# Goals at most this many control periods apart are a stream. Its goals are written by the
# cycles (with write_on_command only the first goal after a pause, or a hold, is written
# between cycles: a stream's sample would double the bus's writes to arrive at most a
# period sooner), and its position goals are spread over the cycles between two of them
# for DOFs in impedance mode (_streamed).
STREAM_PERIODS = 4
# How far outside its position limits a DOF may measure and still be enabled (it is then
# held at the limit): sensor noise of a joint resting on its mechanical stop.
ENABLE_TOLERANCE = 0.02
# Reads an enable may repeat when a bus misses one (a loaded host), before it refuses.
ENABLE_READ_ATTEMPTS = 3
# Seconds between two log lines about a bus that cannot be opened (the first is at once).
_UNREACHED_LOG_PERIOD = 10.0
# Seconds activate / deactivate wait for the loop to answer the enable / disable.
LIFECYCLE_WAIT = 2.0
# Written goals kept for take_writes (record_writes): a second of a 200 Hz loop's
# cycles; a reader that falls further behind loses the oldest.
WRITES_KEPT = 256
# A trajectory may start at most this many seconds after it arrives (the hardware's
# default for the core's max_start_delay: a wrong stamp would keep the robot waiting).
MAX_START_DELAY = 5.0


class LoopNotAnsweringError(HardwareError):
    """An enable or disable the loop did not answer in time (it may still do it)."""


class Request:
    """An enable / disable / estop request; the loop thread completes it."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.ok = False
        self.message = ""
        self.details: dict[str, str] = {}
        """Per actuator (DOF name), what was done and what remains (``clear_faults``)."""
        self._done = threading.Event()

    def finish(self, ok: bool, message: str) -> None:  # noqa: FBT001
        """Record the outcome and wake the waiters."""
        self.ok, self.message = ok, message
        self._done.set()

    @property
    def done(self) -> bool:
        """Whether the loop has handled it."""
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until handled; returns :attr:`done`."""
        return self._done.wait(timeout)


@dataclass(frozen=True, eq=False)
class HardwareStatus:
    """What the loop measured and decided in its last cycle (immutable, for any thread).

    Attributes:
        stamp: the backend's clock at the cycle.
        state: the safety state.
        message: why the state is what it is (last fault, watchdog ...).
        names: the mapped DOFs, in the arrays' order (the model's DOF order).
        position, velocity, effort: measured, DOF side; the last known value where a
            bus is down, NaN where never known. Only the DOFs in :attr:`measured` were
            read in the last read cycle; the others are stale.
        target: the last position target sent (NaN for DOFs without one).
        measured: per DOF, whether its bus answered in the last read cycle (bool array).
        read_stamp: the backend's clock at the last read cycle (NaN before the first);
            it advances only when a cycle read the buses.
        fresh: whether every bus answered this cycle.
        watchdog_tripped: commands stopped and the safe state holds.
        cycles: control cycles run.
        guard_corrections: targets the last gate had to change (should stay 0).
        reenable_bounded: the DOFs the re-enable bound slows now (commanded since the
            enable, their goal not reached yet).
        derived: the followers (mimic joints) without an actuator: their position and
            velocity are their leader's measurement through the mimic rule, measured when
            the leader's is; no effort (NaN).
        buses, actuators: diagnostics (refreshed every 50 ms).
    """

    stamp: float
    state: MotionState
    message: str
    names: tuple[str, ...]
    position: Array
    velocity: Array
    effort: Array
    target: Array
    measured: Array
    read_stamp: float = math.nan
    fresh: bool = False
    watchdog_tripped: bool = False
    cycles: int = 0
    guard_corrections: int = 0
    reenable_bounded: tuple[str, ...] = ()
    derived: tuple[str, ...] = ()
    buses: tuple[BusDiagnostics, ...] = ()
    actuators: tuple[ActuatorDiagnostics, ...] = ()


@dataclass(eq=False)
class _Slot:
    """One bus and its bookkeeping (loop thread only)."""

    spec: BusSpec
    driver: ActuatorBus
    dofs: npt.NDArray[np.intp]  # DOF index of each actuator, in ``actuators`` order
    actuators: tuple[ActuatorSpec, ...]
    is_open: bool = False
    # Torque as last set (confirmed by the driver) or read: True, False, or None = unknown
    # (a bus not reached since; a read after it reopens says). True means at least one of
    # its devices has torque on; every healthy read in which none reports it makes it False
    # (a device fault that cut the torque), so nothing is written to the bus until an enable.
    torque: bool | None = None
    keep_torque: bool = False  # reopen without switching torque off (a fault under hold)
    just_opened: bool = False  # the next healthy read sets torque from the devices
    ever_opened: bool = False
    last_log: float = -math.inf
    consecutive: int = 0
    attempts: int = 0
    next_retry: float = -math.inf
    reconnects: int = 0
    last_error: str = ""
    fresh: bool = False
    counts: ErrorCounts = field(default_factory=ErrorCounts)
    device_counts: dict[int, ErrorCounts] = field(default_factory=dict)
    states: dict[int, ActuatorState] = field(default_factory=dict)
    faults_reported: set[int] = field(default_factory=set)  # ids whose fault was logged


@dataclass(frozen=True, eq=False)
class WrittenGoals:
    """The position goals one write put on the buses (:meth:`HardwareBackend.take_writes`).

    Attributes:
        stamp: When they were written: the backend's clock just before the first bus's
            write.
        positions: Per DOF (:attr:`HardwareBackend.names`), the position target sent
            (after the limits), NaN for a DOF whose bus was not written or failed to be.
    """

    stamp: float
    positions: Array


def _default_factory(spec: BusSpec, actuators: Sequence[ActuatorSpec],
                     clock: Callable[[], float]) -> ActuatorBus:
    return bus_class(spec.protocol)(spec, actuators, clock)


def _arr(values: Array) -> Array:
    values.setflags(write=False)
    return values


class HardwareBackend(RobotBackend):
    """Drives the buses of a bound configuration; see the module docstring.

    Args:
        bound: the configuration checked against the model.
        clock: monotonic seconds (injected for tests; a runner's loop waits in real time,
            so give it a real clock when a :class:`~skel_ros.core.Runner` runs it).
        bus_factory: builds the driver of a bus (default: the driver class of the bus's
            protocol plugin, :func:`~skel_ros.hardware.plugins.bus_class`).
        control_rate, command_timeout, safe_state, auto_resume, reenable_velocity: override
            the YAML's values (``command_timeout`` is the core's: :attr:`command_timeout`
            hands it over).
        write_on_command: when a goal arrives between cycles after a pause, compute and
            write its targets at once (no read) instead of at the next deadline; the
            rate limiter uses the real time elapsed, so the limits hold either way. Not
            a stream's goals (:data:`STREAM_PERIODS`): the cycles write them.
            Default: the YAML's ``write_on_command`` (itself true by default).
        record_writes: keep each write's position goals and time for
            :meth:`take_writes` (the hardware node's ``publish_goals``: what ``skel-ros
            identify`` fits a servo's delay to).

    Raises:
        ConfigError: a protocol that cannot be loaded, actuator ids used twice on a bus.
        LimitError: limits the rate limiter cannot work with.
        ValueError: ``control_rate`` or ``reenable_velocity`` out of range.
    """

    def __init__(
        self,
        bound: BoundConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        bus_factory: Callable[[BusSpec, Sequence[ActuatorSpec], Callable[[], float]],
                              ActuatorBus] | None = None,
        control_rate: float | None = None,
        command_timeout: float | None = None,
        safe_state: SafeState | None = None,
        auto_resume: bool | None = None,
        reenable_velocity: float | None = None,
        write_on_command: bool | None = None,
        record_writes: bool = False,
    ) -> None:
        cfg = bound.config
        self.bound = bound
        self.names = bound.reported  # the mapped DOFs and the followers derived from them
        self.control_rate = float(cfg.control_rate if control_rate is None else control_rate)
        if not (math.isfinite(self.control_rate) and self.control_rate > 0):
            raise ValueError(f"control_rate must be > 0, got {self.control_rate!r}")
        self.period = 1.0 / self.control_rate
        self.safe_state = safe_state or cfg.safe_state
        self.auto_resume = cfg.auto_resume if auto_resume is None else auto_resume
        self.fault_threshold = cfg.fault_threshold
        self.reconnect_policy = cfg.reconnect
        self.write_on_command = (cfg.write_on_command if write_on_command is None
                                 else write_on_command)
        self.command_timeout = float(cfg.command_timeout if command_timeout is None
                                     else command_timeout)
        """Seconds without a command before the safe state (the YAML's; the core counts)."""
        self._clock = clock
        self.limits = bound.limits  # the model's DOFs, tightened by the YAML
        self._index = {n: i for i, n in enumerate(self.names)}
        by_name = {m.name: m for m in bound.mappings()}
        couplings = dict(bound.couplings)
        # A derived follower (no actuator) is limited as its leader's mode would be.
        self._modes = tuple(by_name[couplings[n].leader if n in bound.derived else n]
                            .actuator.mode for n in self.names)
        self.capabilities = Capabilities(
            has_faults=True,
            command_modes=tuple(frozenset() if n in couplings else frozenset({MODE_COMMANDS[m]})
                                for n, m in zip(self.names, self._modes, strict=True)))
        self._direction = np.array([float(by_name[n].direction) if n in by_name else 1.0
                                    for n in self.names])
        self._gear = np.array([by_name[n].gear_ratio if n in by_name else 1.0
                               for n in self.names])
        self._zero = np.array([by_name[n].zero_offset if n in by_name else 0.0
                               for n in self.names])
        # Followers, as arrays over names: index, leader's index, multiplier, offset.
        self._f = np.array([self._index[n] for n in couplings], dtype=np.intp)
        self._f_lead = np.array([self._index[m.leader] for m in couplings.values()],
                                dtype=np.intp)
        self._f_mult = np.array([m.multiplier for m in couplings.values()])
        self._f_off = np.array([m.offset for m in couplings.values()])
        self._derived = np.array([self._index[n] for n in bound.derived], dtype=np.intp)
        self._derived_lead = np.array([self._index[couplings[n].leader] for n in bound.derived],
                                      dtype=np.intp)
        self._derived_mult = np.array([couplings[n].multiplier for n in bound.derived])
        self._derived_off = np.array([couplings[n].offset for n in bound.derived])
        self._followers = frozenset(couplings)
        self.reenable_velocity = float(cfg.reenable_velocity if reenable_velocity is None
                                       else reenable_velocity)
        """Fraction of each joint's velocity limits it may use after an enable until it
        reached a commanded goal (the YAML's ``reenable_velocity``)."""
        self._limiter = MotionLimiter(bound.limits, self.names, self._modes,
                                      reenable_velocity=self.reenable_velocity)
        if self._limiter.unbounded and self.reenable_velocity < 1.0:
            _LOG.warning("%s: DOF(s) %s have no velocity limit: after an enable they are not"
                         " slowed to reenable_velocity (give them limits: velocity)",
                         cfg.source, ", ".join(self._limiter.unbounded))
        self._slots = self._build_slots(bus_factory or _default_factory)
        self._init_state()
        if bound.unmapped:
            _LOG.warning("%s: %d DOF(s) of skeleton %r have no actuator and are not driven: %s",
                         cfg.source, len(bound.unmapped), bound.skeleton.name,
                         ", ".join(bound.unmapped))
        self._writes: deque[WrittenGoals] | None = (deque(maxlen=WRITES_KEPT) if record_writes
                                                    else None)
        self.writes_lost = 0
        """Writes :meth:`take_writes` never handed over: the oldest, past :data:`WRITES_KEPT`."""
        self._status = self._make_status(math.nan)

    def take_writes(self) -> list[WrittenGoals]:
        """The writes since the last call, oldest first (none unless ``record_writes``).

        One reader at a time (the hardware node's publisher thread; the loop only
        appends); at most :data:`WRITES_KEPT` are kept between two calls.
        """
        writes = self._writes
        taken: list[WrittenGoals] = []
        while writes:
            taken.append(writes.popleft())
        return taken

    def _init_state(self) -> None:
        n = len(self.names)
        self._q = np.full(n, np.nan)
        self._v = np.full(n, np.nan)
        self._e = np.full(n, np.nan)
        self._goal_q = np.full(n, np.nan)
        self._goal_v = np.zeros(n)
        self._goal_e = np.zeros(n)
        self._target = np.full(n, np.nan)
        self._measured = np.zeros(n, dtype=bool)
        # A stream of position goals, spread over the cycles between two of them: the goal
        # it leaves from, the one it goes to, the cycle before it came, the time between.
        # Only for the DOFs sent the velocity of their targets (impedance mode: an MIT
        # motor's v_des), which a target stepping once in several cycles makes jump;
        # a position-mode device is sent no velocity, and a spread goal would only reach
        # it a stream period later.
        self._spread = np.array([m is ControlMode.IMPEDANCE for m in self._modes], dtype=bool)
        self._any_spread = bool(self._spread.any())  # else no stream work at all per cycle
        self._stream_from = np.full(n, np.nan)
        self._stream_to = np.full(n, np.nan)
        self._stream_base = np.full(n, np.nan)
        self._stream_span = np.full(n, np.nan)
        self._arrived = np.full(n, np.nan)
        self._goal_used = np.full(n, np.nan)
        self._read_stamp = math.nan
        self._reading = RobotState(math.nan, self._q.copy(), self._v.copy(), self._e.copy(),
                                   self._measured.copy())
        self._timeout_tripped = False
        self._state = MotionState.OFFLINE
        self._message = "not started"
        self._resume_wanted = False
        self._bus_failed = False  # a bus failed (or never opened) in the current FAULT
        self._last_compute: float | None = None
        self._cycles = 0
        self._last_diag = -math.inf
        self._diag: tuple[tuple[BusDiagnostics, ...], tuple[ActuatorDiagnostics, ...]] = ((), ())
        # Handed in by other threads, under _lock.
        self._lock = threading.Lock()
        self._pending_q = np.full(n, np.nan)
        self._pending_v = np.full(n, np.nan)
        self._pending_e = np.full(n, np.nan)
        self._pending_new = False
        self._pending_step = False  # a goal handed in that is no stream's (write it at once)
        self._handed_at = np.full(n, -math.inf)  # the clock when each DOF's goal came
        self._pending_hold = np.zeros(n, dtype=bool)  # DOFs to stop at their targets
        self._requests: list[Request] = []
        self._estop_requested = False
        # Loop thread state.
        self._diag_signature: tuple[object, ...] = ()
        self._io = threading.RLock()

    def _build_slots(
        self,
        factory: Callable[[BusSpec, Sequence[ActuatorSpec], Callable[[], float]], ActuatorBus],
    ) -> list[_Slot]:
        maps = self.bound.mappings()
        actuators_with_limits = self.bound.actuators()
        slots = []
        for spec in self.bound.config.buses:
            on_bus = [(self._index[m.name], a) for m, a in
                      zip(maps, actuators_with_limits, strict=True) if m.bus == spec.name]
            if not on_bus:
                continue
            actuators = tuple(a for _, a in on_bus)
            try:
                driver = factory(spec, actuators, self._clock)
            except ConfigError as exc:  # the driver's own checks: say where in the file
                where = f"{self.bound.config.source}:{spec.line}: " if spec.line else ""
                raise ConfigError(f"{where}{exc}") from None
            slots.append(_Slot(
                spec=spec, driver=driver,
                dofs=np.array([i for i, _ in on_bus], dtype=np.intp), actuators=actuators,
                device_counts={a.id: ErrorCounts() for a in actuators},
            ))
        return slots

    # ================================================================ other threads

    @property
    def state(self) -> MotionState:
        """The current safety state."""
        return self._state

    @property
    def message(self) -> str:
        """Why the state is what it is (the last enable, fault, watchdog ...)."""
        return self._message

    def now(self) -> float:
        """The backend's clock (trajectory start times are on it)."""
        return self._clock()

    def status(self) -> HardwareStatus:
        """The latest cycle's status (immutable; safe from any thread)."""
        return self._status

    def enable(self, *, wait: float | None = None) -> Request:
        """Ask for torque on, holding the measured positions; clears an estop.

        While already enabled it changes nothing (commands and the trajectory go on) and
        says so.

        Args:
            wait: seconds to wait for the loop to handle it (None: do not wait).
        """
        return self._request("enable", wait)

    def disable(self, *, wait: float | None = None) -> Request:
        """Ask for torque off (no motion until the next enable).

        ``ok`` only when every bus confirmed the torque off (see :meth:`estop`).
        """
        return self._request("disable", wait)

    def clear_faults(self, *, wait: float | None = None) -> Request:
        """Run each protocol's fault recovery on the actuators in fault (torque stays off).

        The request's :attr:`Request.details` say per DOF what was done and what remains;
        ``ok`` is True when no actuator reports a fault afterwards. Motion needs a new
        enable, ``auto_resume`` or not.
        """
        return self._request("clear_faults", wait)

    def estop(self, *, wait: float | None = None) -> Request:
        """Emergency stop: torque off on every bus as soon as the loop wakes.

        The state is ``estop`` whatever happens. The request's ``ok`` is True only when
        every bus confirmed torque off; otherwise its message names each bus not reached
        and what is known (its devices' own watchdog, if armed, is what stops them; torque
        goes off when the bus reconnects).
        """
        with self._lock:
            self._estop_requested = True
        return self._request("estop", wait)

    def _request(self, kind: str, wait: float | None) -> Request:
        req = Request(kind)
        with self._lock:
            self._requests.append(req)
        self._wake_loop()
        if wait is not None:
            req.wait(wait)
        return req

    # ================================================================ the seam

    @property
    def modes(self) -> tuple[ControlMode, ...]:
        """The control mode of each DOF's actuator."""
        return self._modes

    @property
    def index(self) -> Mapping[str, int]:
        """DOF name -> index in :attr:`names`."""
        return self._index

    def configure(self) -> None:
        """Nothing to do here: the loop's first cycle opens the buses, torque off."""

    def activate(self) -> None:
        """Enable: torque on, holding the measured positions (waits for the loop).

        Raises:
            HardwareError: The enable was refused or not answered; torque stays off.
        """
        self._answered(self.enable(wait=LIFECYCLE_WAIT))

    def deactivate(self) -> None:
        """Disable: torque off (waits for the loop).

        Raises:
            HardwareError: A bus did not confirm the torque off (named), or no answer.
        """
        self._answered(self.disable(wait=LIFECYCLE_WAIT))

    @staticmethod
    def _answered(req: Request) -> None:
        """Raise unless the loop answered ``req`` with success."""
        if not req.done:
            raise LoopNotAnsweringError(f"the control loop did not answer the {req.kind}"
                                        f" within {LIFECYCLE_WAIT:g} s")
        if not req.ok:
            raise HardwareError(req.message)

    def close(self) -> None:
        """Switch torque off and close every bus (the loop has stopped). Never raises."""
        with self._io:
            for slot in self._slots:
                slot.driver.close()
                slot.is_open = slot.torque = False
            self._state = MotionState.OFFLINE
            self._message = "stopped"
            with self._lock:
                requests, self._requests = self._requests, []
            for req in requests:
                req.finish(ok=False, message="the hardware backend closed")
            self._status = self._make_status(self._clock())

    def read(self, now: float) -> RobotState:  # noqa: ARG002 - the measurement has its stamp
        """The last read cycle's measurement (per DOF: whether its bus answered)."""
        return self._reading

    def refusal(self) -> str:
        """Commands are taken only while motion is enabled."""
        state = self._state
        if state is MotionState.ENABLED:
            return ""
        return f"motion is not enabled (state {state.value})"

    def write(self, now: float, kind: CommandKind,
              index: npt.NDArray[np.intp], values: Array) -> None:
        """New goals for some DOFs (through the core's gate); the next actuate takes them.

        From another thread with ``write_on_command``, the loop is woken to write them at
        once (:meth:`serve`), unless they are a stream's: every DOF had a goal at most
        :data:`STREAM_PERIODS` control periods before ``now`` (the backend's clock, as the
        core reads it; the next cycle writes them, as it writes goals in its actuate).
        """
        with self._lock:
            target = {CommandKind.POSITION: self._pending_q, CommandKind.VELOCITY:
                      self._pending_v, CommandKind.EFFORT: self._pending_e}[kind]
            target[index] = values
            step = bool(np.any(now - self._handed_at[index] > STREAM_PERIODS * self.period
                               + 1e-9))
            self._handed_at[index] = now
            self._pending_step = self._pending_step or step
            self._pending_new = True
            self._timeout_tripped = False
        if step and self.write_on_command:
            self._wake_loop()

    def hold(self, now: float, index: npt.NDArray[np.intp]) -> None:  # noqa: ARG002
        """Stop the DOFs at ``index`` at their current targets (at the next actuate)."""
        with self._lock:
            self._pending_hold[index] = True

    def start_positions(self, index: npt.NDArray[np.intp]) -> Array:
        """The last targets sent (NaN where none)."""
        target = np.asarray(self._status.target, dtype=float)
        return target[index] if target.size else np.full(len(index), math.nan)

    def on_timeout(self, now: float, timeout: float) -> str:
        """The command timeout expired: hold, or torque off (``safe_state``); logs it."""
        with self._io:
            self._timeout_tripped = True
            if self.safe_state is SafeState.HOLD:
                self._hold_goals()
                self._message = f"no command for {timeout:g} s: holding position"
                _LOG.warning("no command for %g s: holding position", timeout)
            else:
                self._torque_off_all(now)
                self._state = MotionState.DISABLED
                self._message = (f"no command for {timeout:g} s: torque off; enable to move"
                                 " again")
                _LOG.warning("no command for %g s: torque off", timeout)
        return ""

    # ================================================================ the loop's calls

    def cycle_time(self, count: int = 1) -> float:  # noqa: ARG002 - one cycle at a time
        """The clock now: a cycle runs when it is called."""
        return self._clock()

    def sense(self, now: float) -> None:
        """The read half of a cycle at ``now``.

        Reconnect failed buses whose backoff expired; estop; read every bus; handle
        faults; enable / disable / clear_faults requests.
        """
        with self._io:
            self._cycles += 1
            self._reconnect(now)
            self._handle_estop(now)
            self._read_all(now)
            self._settle(now)
            self._handle_requests(now)

    def actuate(self, now: float, count: int = 1) -> None:  # noqa: ARG002 - one at a time
        """The write half of a cycle: take the goals handed in, limit them, write them."""
        with self._io:
            self._control(now, read_cycle=True)
            self._status = self._make_status(now)

    def serve(self, now: float) -> bool:
        """Between cycles (the loop was woken): estop and requests, and new goals at once.

        Returns:
            True (the status changed).
        """
        with self._io:
            self._handle_estop(now)
            with self._lock:
                has_requests = bool(self._requests)
                new = self._pending_new
            if has_requests:
                self._read_all(now)
                self._settle(now)
                self._handle_requests(now)
            if new and self.write_on_command:
                self._control(now, read_cycle=False)
            self._status = self._make_status(now)
        return True

    def step(self, now: float | None = None) -> HardwareStatus:
        """One cycle without a core (tools and tests that drive the buses by hand)."""
        now = self._clock() if now is None else now
        self.sense(now)
        self.actuate(now)
        return self._status

    # ---------------------------------------------------------------- connection

    def _reconnect(self, now: float) -> None:
        for slot in self._slots:
            if slot.is_open or now < slot.next_retry:
                continue
            keep = slot.keep_torque and self.safe_state is SafeState.HOLD
            try:
                slot.driver.open(keep_torque=keep)
            except HardwareError as exc:
                self._open_failed(slot, exc, now)
                continue
            if slot.ever_opened:
                slot.reconnects += 1
                _LOG.warning("bus %r: reconnected (failure %d in a row)%s", slot.spec.name,
                             slot.attempts, "; servos that still hold keep holding" if keep
                             else "")
            else:
                _LOG.info("bus %r (%s): connected, %d actuator(s)", slot.spec.name,
                          slot.spec.protocol, len(slot.actuators))
            slot.is_open, slot.ever_opened, slot.torque = True, True, keep
            slot.just_opened = True
            slot.last_log = -math.inf
            # ``attempts`` is reset by the first healthy read: a bus that fails again at
            # once (a drive still in fault) keeps backing off.
            slot.consecutive, slot.next_retry = 0, -math.inf

    def _open_failed(self, slot: _Slot, exc: HardwareError, now: float) -> None:
        """Count a failed open and say so: at once, then every _UNREACHED_LOG_PERIOD."""
        slot.counts.add(classify(exc))
        slot.last_error = str(exc)
        delay = self.reconnect_policy.delay(slot.attempts)
        slot.attempts += 1
        slot.next_retry = now + delay
        if now - slot.last_log >= _UNREACHED_LOG_PERIOD:
            slot.last_log = now
            if slot.ever_opened:
                _LOG.warning("bus %r: cannot reopen (attempt %d), retrying: %s",
                             slot.spec.name, slot.attempts, exc)
            else:  # never reached: most likely a wrong port, id, baud rate or model
                _LOG.error("bus %r (%s) not connected (attempt %d; still trying, this"
                           " repeats every %g s): %s", slot.spec.name, slot.spec.protocol,
                           slot.attempts, _UNREACHED_LOG_PERIOD, exc)
        else:
            _LOG.debug("bus %r: cannot open (attempt %d), retrying in %.3g s: %s",
                       slot.spec.name, slot.attempts, delay, exc)
        if self._state in (MotionState.OFFLINE, MotionState.FAULT):
            self._state = MotionState.FAULT
            self._bus_failed = True
            self._message = f"bus {slot.spec.name!r} not connected: {exc}"

    def _settle(self, now: float, *, resume: bool = True) -> None:
        """Leave OFFLINE / FAULT once every bus is open and healthy.

        ``auto_resume`` enables again only after a bus failure that came while enabled
        (``_resume_wanted``), and never when ``resume`` is False (``clear_faults``).
        """
        if self._state not in (MotionState.OFFLINE, MotionState.FAULT):
            return
        if not all(s.is_open and s.fresh for s in self._slots) or self._device_faults():
            return
        refused = ""
        if self._resume_wanted and resume and self.auto_resume:
            ok, message = self._do_enable(now)
            if ok:
                _LOG.warning("resumed automatically after the bus failure (auto_resume)")
                return
            self._message = f"auto_resume failed: {message}"
            if self._state is not MotionState.FAULT or not all(s.is_open for s in self._slots):
                return  # (a bus failed in the enable: FAULT, reconnecting)
            refused = f" (auto_resume failed: {message})"
            _LOG.warning("auto_resume failed after the bus failure: %s", message)
        self._resume_wanted = False
        # No bus failed since the fault: a device fault is gone (clear_faults, or by itself).
        fault_gone = self._state is MotionState.FAULT and not self._bus_failed
        if any(s.torque for s in self._slots):
            self._state = MotionState.HOLDING
            self._message = ("no actuator reports a fault any more; torque on where the devices"
                             " kept it: enable to move" if fault_gone else
                             "reconnected, torque on where the devices kept it: enable to move")
        else:
            was_fault = self._state is MotionState.FAULT
            self._state = MotionState.DISABLED
            self._message = ("no actuator reports a fault any more; torque off: enable to move"
                             " again" if fault_gone else
                             "reconnected; torque off: enable to move again" if was_fault
                             else "connected; torque off: enable to move")
        self._message += refused

    def _fail_bus(self, slot: _Slot, exc: HardwareError | None, kind: ErrorKind,
                  message: str, now: float, *, hard: bool = False,
                  torque_off: bool = False) -> None:
        """Count an error of ``slot``; fail the bus when it is hard or repeated.

        ``torque_off``: the failure came while switching torque off (an e-stop, a
        disable, a failed enable): the bus is closed with torque off, whatever the safe
        state, never kept holding.
        """
        slot.counts.add(kind)
        if isinstance(exc, DeviceError) and exc.actuator_id in slot.device_counts:
            slot.device_counts[exc.actuator_id].add(kind)
        slot.last_error = message
        slot.consecutive += 1
        slot.fresh = False
        hard = hard or kind in (ErrorKind.TRANSPORT, ErrorKind.DEVICE)
        if not hard and slot.consecutive < self.fault_threshold:
            _LOG.debug("bus %r: %s (%d in a row)", slot.spec.name, message, slot.consecutive)
            return
        hold = self.safe_state is SafeState.HOLD and self._state is not MotionState.ESTOP
        slot.keep_torque = hold and slot.torque is True and not torque_off
        _LOG.error("bus %r failed: %s; closing it%s and reconnecting", slot.spec.name, message,
                   " (servos keep holding: safe_state hold)" if slot.keep_torque
                   else " (torque off)")
        slot.driver.close(torque_off=not slot.keep_torque)
        slot.is_open = slot.fresh = False
        slot.torque = None  # close's torque off is not confirmed: unknown until a read
        self._measured[slot.dofs] = False
        slot.next_retry = now + self.reconnect_policy.delay(slot.attempts)
        slot.attempts += 1
        self._enter_fault(f"bus {slot.spec.name!r} failed: {message}", now, bus=True)

    def _enter_fault(self, message: str, now: float, *, bus: bool) -> None:
        """Go to FAULT (safe state applied); ``bus``: a bus failed, else a device fault."""
        if self._state is MotionState.ESTOP:
            self._message = f"{self._message}; {message}"
            return
        # auto_resume is for a bus failure while enabled (until the reconnection); a device
        # fault needs clear_faults and an enable, whatever came before.
        self._resume_wanted = bus and (self._resume_wanted
                                       or self._state is MotionState.ENABLED)
        self._bus_failed = bus or (self._bus_failed and self._state is MotionState.FAULT)
        self._state = MotionState.FAULT
        self._message = message
        self._clear_commands(message)
        if self.safe_state is SafeState.HOLD:
            self._hold_goals()
        else:
            self._torque_off_all(now)

    # ---------------------------------------------------------------- requests

    def _handle_estop(self, now: float) -> None:
        with self._lock:
            if not self._estop_requested:
                return
            self._estop_requested = False
        self._torque_off_all(now)
        self._clear_commands("emergency stop")
        self._resume_wanted = False
        self._state = MotionState.ESTOP
        self._message = self._estop_message()
        _LOG.error("%s", self._message)

    def _torque_off_unconfirmed(self) -> str:
        """``""`` when every bus confirmed torque off, else what is known of the others."""
        parts = []
        for s in self._slots:
            if s.torque is False:
                continue
            if s.is_open:
                parts.append(f"bus {s.spec.name!r}: a device still reports torque on")
                continue
            watchdog = s.spec.device_watchdog
            stops = (f"its devices' own watchdog ({watchdog:g} s), where armed, is what stops"
                     " them" if watchdog > 0 else "no device watchdog is armed"
                     " (device_watchdog: 0): nothing stops them")
            parts.append(f"bus {s.spec.name!r} not reached ({s.last_error or 'not connected'}):"
                         f" its torque is unknown; {stops}; torque goes off when it reconnects")
        return "; ".join(parts)

    def _estop_message(self) -> str:
        unconfirmed = self._torque_off_unconfirmed()
        if not unconfirmed:
            return "emergency stop: torque off; enable to move again"
        return (f"emergency stop: torque off NOT confirmed: {unconfirmed}; enable to move"
                " again")

    def _handle_requests(self, now: float) -> None:
        # An estop handed in while this cycle was reading: apply it before answering.
        self._handle_estop(now)
        with self._lock:
            requests, self._requests = self._requests, []
        if not requests:
            return
        answers: list[tuple[Request, bool, str]] = []
        for req in requests:
            if req.kind == "estop":
                unconfirmed = self._torque_off_unconfirmed()
                answers.append((req, self._state is MotionState.ESTOP and not unconfirmed,
                                self._estop_message()))
            elif req.kind == "clear_faults":
                answers.append((req, *self._do_clear_faults(req, now)))
            elif req.kind == "disable":
                self._torque_off_all(now)
                self._clear_commands("disabled")
                self._resume_wanted = False
                if self._state is not MotionState.FAULT:
                    self._state = MotionState.DISABLED
                    self._message = "torque off"  # the state says "disabled"
                unconfirmed = self._torque_off_unconfirmed()
                answers.append((req, not unconfirmed,
                                (f"torque off NOT confirmed: {unconfirmed}" if unconfirmed
                                 else "torque off")))
            elif self._state is MotionState.ENABLED:  # no e-stop or fault to leave
                answers.append((req, True, ("already enabled: nothing changed (torque on;"
                                            " commands and the trajectory go on)")))
            else:
                answers.append((req, *self._do_enable(now)))
        # The status says what the answers say before anyone hears them (a diagnostics
        # message sent right after an e-stop's answer must not still say "enabled").
        self._status = self._make_status(now)
        for req, ok, message in answers:
            req.finish(ok=ok, message=message)

    def _device_faults(self) -> list[tuple[_Slot, ActuatorSpec, ActuatorState]]:
        """Actuators on open buses that report a fault in their last state."""
        return [(s, a, st) for s in self._slots if s.is_open for a in s.actuators
                if (st := s.states.get(a.id)) is not None and st.error_code]

    def _do_clear_faults(self, req: Request, now: float) -> tuple[bool, str]:
        details: dict[str, str] = {}
        for slot in self._slots:
            if not slot.is_open:
                for act in slot.actuators:
                    details[act.name] = (f"bus {slot.spec.name!r} not connected"
                                         f" ({slot.last_error}); nothing done")
                continue
            try:
                answers = slot.driver.clear_faults()
            except HardwareError as exc:
                self._fail_bus(slot, exc, classify(exc), f"clear_faults failed: {exc}", now)
                for act in slot.actuators:
                    details[act.name] = f"clear_faults failed on bus {slot.spec.name!r}: {exc}"
                continue
            for act in slot.actuators:
                details[act.name] = answers.get(act.id, "no fault")
        self._read_all(now)
        self._settle(now, resume=False)  # clear_faults never switches torque on
        remaining = self._device_faults()
        faults_left = [f"{a.name!r}: {st.fault or st.error_code}" for _, a, st in remaining]
        closed = [s.spec.name for s in self._slots if not s.is_open]
        req.details = details
        ok = not faults_left and not closed
        if ok:
            message = ("no actuator reports a fault; the recovered ones have torque off:"
                       " enable to move")
        else:
            parts = ([f"still in fault: {', '.join(faults_left)}"] if faults_left else [])
            parts += [f"bus(es) not connected: {', '.join(closed)}"] if closed else []
            message = "; ".join(parts)
        _LOG.warning("clear_faults: %s (%s)", message,
                     "; ".join(f"{k}: {v}" for k, v in details.items()))
        return ok, message

    def _enable_problem(self) -> str:
        """Why enabling is not possible now, or ``""``."""
        closed = [s.spec.name for s in self._slots if not s.is_open]
        if closed:
            last = next(s.last_error for s in self._slots if not s.is_open)
            return f"cannot enable: bus {closed[0]!r} is not connected ({last})"
        stale = [s.spec.name for s in self._slots if not s.fresh]
        if stale:
            return f"cannot enable: no fresh measurement from bus {stale[0]!r}"
        faulty = [(s, a) for s in self._slots for a in s.actuators
                  if (st := s.states.get(a.id)) is not None and st.error_code]
        if faulty:
            slot, act = faulty[0]
            return (f"cannot enable: {act.name!r} (bus {slot.spec.name!r} id {act.id})"
                    f" reports a fault: {slot.states[act.id].fault}; ~/clear_faults runs"
                    " the device's recovery")
        unknown = [self.names[i] for i in np.flatnonzero(~np.isfinite(self._q))]
        if unknown:
            return f"cannot enable: no measured position for {', '.join(unknown)}"
        lim = self._limiter
        outside = np.flatnonzero((self._q < lim.q_lo - ENABLE_TOLERANCE)
                                 | (self._q > lim.q_hi + ENABLE_TOLERANCE))
        if outside.size:
            i = int(outside[0])
            return (f"cannot enable: {self.names[i]!r} is at {self._q[i]:.4g}, outside"
                    f" its limits [{lim.q_lo[i]:g}, {lim.q_hi[i]:g}]; bring it inside"
                    " (torque is off) first")
        return ""

    def _do_enable(self, now: float) -> tuple[bool, str]:
        # A bus that missed this cycle's read (a loaded host) is read again, a few times.
        for _ in range(ENABLE_READ_ATTEMPTS - 1):
            if all(s.fresh for s in self._slots if s.is_open):
                break
            for slot in self._slots:
                if slot.is_open and not slot.fresh:
                    try:
                        states = slot.driver.read()
                    except HardwareError as exc:  # counted, retried
                        self._fail_bus(slot, exc, classify(exc), str(exc), now)
                    else:
                        self._take_states(slot, states, now)
        problem = self._enable_problem()
        if problem:
            return False, problem
        lim = self._limiter
        # Within the tolerance of a limit (resting on a stop): hold at the limit.
        hold_q = np.clip(self._q, lim.q_lo, lim.q_hi)
        self._clear_commands("enabled again")
        self._limiter.reset(hold_q)
        self._arrived.fill(np.nan)  # a stream starts again after an enable
        self._goal_q = np.where(self._limiter.position_mask, hold_q, np.nan)
        self._goal_v = np.zeros(len(self.names))
        self._goal_e = np.zeros(len(self.names))
        self._target = self._limiter.position_targets
        hold = self._commands_for(self._target, np.zeros(len(self.names)),
                                  np.zeros(len(self.names)))
        for slot in self._slots:
            try:
                # Goals = measured before torque goes on, and again after: no jump.
                stamp = self._clock()
                slot.driver.write(hold[id(slot)])
                self._recorded(stamp, self._target, [slot])
                slot.driver.set_torque(True)
                slot.torque = True
                stamp = self._clock()
                slot.driver.write(hold[id(slot)])
                self._recorded(stamp, self._target, [slot])
            except HardwareError as exc:  # noqa: PERF203 - each bus fails on its own
                slot.torque = False  # a failed enable ends with torque off everywhere
                self._fail_bus(slot, exc, classify(exc), str(exc), now, hard=True,
                               torque_off=True)
                self._torque_off_all(now)
                return False, f"cannot enable: bus {slot.spec.name!r}: {exc}"
        self._state = MotionState.ENABLED
        self._message = "holding the measured positions"  # the state says "enabled"
        self._resume_wanted = False
        self._last_compute = now
        self._core.restart_timeout(now)
        _LOG.info("enabled; holding the measured positions")
        return True, f"enabled: {self._message}"

    def _torque_off_all(self, now: float) -> None:
        """Torque off on every bus; :meth:`_torque_off_unconfirmed` says where it was not."""
        for slot in self._slots:
            # A closed bus is reopened with torque off (its torque unknown until then); an
            # open one that fails now is closed with torque off.
            slot.keep_torque = False
            if not slot.is_open:
                slot.torque = None
                continue
            try:
                slot.driver.set_torque(False)  # verified by a read of every device
                slot.torque = False
            except HardwareError as exc:
                self._fail_bus(slot, exc, classify(exc), f"torque off failed: {exc}", now,
                               hard=True, torque_off=True)
        self._core.disarm_timeout()

    def _clear_commands(self, why: str) -> None:
        """Forget every command handed in, and end the trajectory (``STOPPED``: ``why``)."""
        with self._lock:
            self._pending_q.fill(np.nan)
            self._pending_v.fill(np.nan)
            self._pending_e.fill(np.nan)
            self._pending_hold[:] = False
            self._pending_new = False
            self._pending_step = False
            self._handed_at.fill(-math.inf)  # a stream starts again
        self._core.stop_trajectory(why)

    def _hold_goals(self) -> None:
        self._arrived.fill(np.nan)
        self._goal_q = self._limiter.hold()
        self._goal_v = np.zeros(len(self.names))
        self._goal_e = np.zeros(len(self.names))

    # ---------------------------------------------------------------- I/O

    def _read_all(self, now: float) -> None:
        self._read_stamp = now
        for slot in self._slots:
            if not slot.is_open:
                slot.fresh = False
                self._measured[slot.dofs] = False
                continue
            try:
                states = slot.driver.read()
            except HardwareError as exc:
                self._measured[slot.dofs] = False
                self._fail_bus(slot, exc, classify(exc), str(exc), now)
                continue
            self._take_states(slot, states, now)
        self._derive_followers()
        # What read() gives the core and its observers (copies: the loop refills the arrays),
        # stamped when it was measured: the cycle's time, or the oldest reading of a bus
        # whose devices measured before it (an MIT motor's reply to the last cycle's frame).
        measured = [st.stamp for slot in self._slots if slot.fresh
                    for st in slot.states.values() if st.stamp < now]
        self._reading = RobotState(min(measured, default=now), self._q.copy(),
                                   self._v.copy(), self._e.copy(), self._measured.copy())

    def _take_states(self, slot: _Slot, states: Mapping[int, ActuatorState],
                     now: float) -> None:
        missing = [a.id for a in slot.actuators if a.id not in states]
        if missing:
            self._measured[slot.dofs] = False
            self._fail_bus(slot, None, ErrorKind.TIMEOUT, f"no state from id(s) {missing}", now)
            return
        slot.states = dict(states)
        slot.consecutive = 0
        slot.fresh = True
        for dof, act in zip(slot.dofs, slot.actuators, strict=True):
            st = states[act.id]
            d, g, z = self._direction[dof], self._gear[dof], self._zero[dof]
            self._measured[dof] = math.isfinite(st.position)
            if math.isfinite(st.position):
                self._q[dof] = d * (st.position - z) / g
            if math.isfinite(st.velocity):
                self._v[dof] = d * st.velocity / g
            if math.isfinite(st.effort):
                self._e[dof] = d * st.effort * g
        self._derive_followers()
        if slot.just_opened:
            slot.just_opened = False
            self._after_open(slot)
        self._note_faults(slot, states, now)
        if slot.torque and not any(states[a.id].torque_enabled for a in slot.actuators):
            self._torque_lost(slot, states, now)

    def _torque_lost(self, slot: _Slot, states: Mapping[int, ActuatorState], now: float,
                     ) -> None:
        """The devices of ``slot`` cut the torque the backend switched on: the bus's is off.

        None of them reports torque on any more. Usually a fault cut it (a Dynamixel
        Hardware Error, a CiA 402 drive in Fault, an MIT motor's error, which
        :meth:`_note_faults` has taken). Nothing is written to the bus, and only an
        enable switches it on again.

        Without a fault reported (a servo that lost its power and came back, a drive reset
        by hand), motion stops all the same, as for a device fault: commands and the
        trajectory end, the safe state goes to the other buses, and the state says what
        happened: ``disabled`` (``holding`` where other buses hold), so that an enable
        moves again. Else the state would still say "enabled" while this bus gets
        nothing, and an enable would answer "already enabled".

        A read never switches :attr:`_Slot.torque` on: a device found with torque on is
        held at its measured position only after a reopening (:meth:`_after_open`).
        """
        slot.torque = False
        faulty = [a.name for a in slot.actuators if states[a.id].error_code]
        _LOG.warning("bus %r: no actuator reports torque on any more%s; nothing is written to"
                     " it until torque is switched on again", slot.spec.name,
                     f" (in fault: {', '.join(faulty)})" if faulty else "")
        if not faulty and self._state in (MotionState.ENABLED, MotionState.HOLDING):
            names = ", ".join(a.name for a in slot.actuators)
            message = (f"bus {slot.spec.name!r}: {names} switched torque off without"
                       " reporting a fault (a power loss? a reset?): enable to move again")
            slot.last_error = message
            _LOG.error("%s", message)
            self._clear_commands(message)
            if self.safe_state is SafeState.HOLD:
                self._hold_goals()
            else:
                self._torque_off_all(now)
            if self._state is MotionState.FAULT:  # a bus failed in that torque off
                return  # (reconnecting: the fault says so, and _settle ends it)
            self._state = (MotionState.HOLDING if any(s.torque for s in self._slots)
                           else MotionState.DISABLED)
            self._message = message

    def _derive_followers(self) -> None:
        """The state of each follower without an actuator: its leader's, through the rule.

        Measured when its leader is; no effort (what the mechanism carries is unknown).
        """
        if not self._derived.size:
            return
        lead, f = self._derived_lead, self._derived
        self._q[f] = self._derived_mult * self._q[lead] + self._derived_off
        self._v[f] = self._derived_mult * self._v[lead]
        self._e[f] = np.nan
        self._measured[f] = self._measured[lead]

    def _note_faults(self, slot: _Slot, states: Mapping[int, ActuatorState], now: float) -> None:
        """Take the devices' fault reports of one healthy read.

        The read resets the backoff; a new device fault is counted, logged once and puts
        the backend in ``fault``; faults that cleared are said once.
        """
        faulty = [a for a in slot.actuators if states[a.id].error_code]
        if not faulty:
            slot.attempts = 0
            if slot.faults_reported:
                slot.faults_reported = set()
                _LOG.info("bus %r: no actuator reports a fault any more", slot.spec.name)
            return
        new = [a for a in faulty if a.id not in slot.faults_reported]
        slot.faults_reported = {a.id for a in faulty}
        if not new:
            return
        for act in new:
            slot.device_counts[act.id].add(ErrorKind.DEVICE)
            slot.counts.add(ErrorKind.DEVICE)
        act = new[0]
        st = states[act.id]
        message = (f"{act.name!r} (bus {slot.spec.name!r} id {act.id}) reports a fault:"
                   f" {st.fault or st.error_code}; ~/clear_faults runs the device's recovery")
        slot.last_error = message
        _LOG.error("%s", message)
        self._enter_fault(message, now, bus=False)

    def _after_open(self, slot: _Slot) -> None:
        """First healthy read after (re)opening: take the devices' torque as they report it.

        Under ``safe_state: hold``, actuators that kept torque through a bus outage hold
        their measured positions (the limiter restarts there, so nothing jumps).
        """
        torqued = [dof for dof, a in zip(slot.dofs, slot.actuators, strict=True)
                   if slot.states[a.id].torque_enabled and not slot.states[a.id].error_code]
        slot.torque = bool(torqued)
        slot.keep_torque = False
        if self._state is MotionState.ESTOP:
            self._message = self._estop_message()  # this read confirms (or not) torque off
            if not slot.torque:
                _LOG.warning("bus %r: reconnected with torque off (emergency stop)",
                             slot.spec.name)
        if not torqued:
            return
        lim = self._limiter
        measured = np.zeros(len(self.names), dtype=bool)
        measured[np.asarray(torqued, dtype=np.intp)] = True
        measured &= np.isfinite(self._q)
        current = lim.position_targets
        start = np.where(measured | ~np.isfinite(current), np.clip(self._q, lim.q_lo, lim.q_hi),
                         current)
        # A position DOF with neither a measurement nor a target is on a bus that is not
        # open: its target is never written (writes go to open, torqued buses only), its
        # status says none was sent, and the next open or enable restarts it from its
        # measurement. Its goal is that same finite stand-in: a goal that is not a number
        # would stop the limiter, and the loop with it.
        held = np.where(np.isfinite(start), start, 0.0)
        lim.reset(held)
        self._arrived.fill(np.nan)
        self._goal_q = np.where(lim.position_mask, held, np.nan)
        self._goal_v = np.zeros(len(self.names))
        self._goal_e = np.zeros(len(self.names))
        self._target = self._sent(lim.position_targets,
                                  [s for s in self._slots if s.is_open and s.torque])
        self._last_compute = None
        _LOG.warning("bus %r: %d actuator(s) kept torque through the outage; holding their"
                     " measured positions", slot.spec.name, len(torqued))

    def _control(self, now: float, *, read_cycle: bool) -> None:
        """Take the goals handed in, compute the targets and write them."""
        torque = [s for s in self._slots if s.is_open and s.torque]
        stepped = self._take_handed_in(now)
        if not torque or (not read_cycle and not stepped):
            return  # only a stream's goals, which the cycles spread: they wait for them
        last = self._last_compute
        dt = self.period if last is None else min(now - last, 2.0 * self.period)
        if not read_cycle and dt < _MIN_DT_FRACTION * self.period:
            return
        if dt <= 0:
            dt = self.period
        self._last_compute = now
        goal = self._streamed(now)
        self._goal_used = goal
        q, v, e = self._limiter.step(goal, self._goal_v, self._goal_e, self._q, dt)
        self._target = self._sent(q, torque)
        commands = self._commands_for(q, v, e)
        stamp = self._clock() if self._writes is not None else math.nan  # record_writes
        written = []
        for slot in torque:
            try:
                slot.driver.write(commands[id(slot)])
            except HardwareError as exc:  # noqa: PERF203 - each bus fails on its own
                self._fail_bus(slot, exc, classify(exc), f"write failed: {exc}", now)
            else:
                written.append(slot)
        self._recorded(stamp, q, written)

    def _recorded(self, stamp: float, q: Array, slots: Sequence[_Slot]) -> None:
        """Keep the position goals ``q`` written at ``stamp`` to ``slots`` (take_writes)."""
        if self._writes is not None and slots:
            if len(self._writes) == WRITES_KEPT:
                self.writes_lost += 1  # the deque drops its oldest
            self._writes.append(WrittenGoals(stamp, _arr(self._sent(q, slots))))

    def _sent(self, targets: Array, slots: Sequence[_Slot]) -> Array:
        """``targets`` of the DOFs on ``slots`` (the buses written to), NaN for the others.

        What :attr:`HardwareStatus.target` says: a target no bus was sent is none.
        """
        sent = np.full(len(self.names), np.nan)
        for slot in slots:
            sent[slot.dofs] = targets[slot.dofs]
        return sent

    def _streamed(self, now: float) -> Array:
        """The position goals of this cycle: a stream's goal spread over its cycles.

        A position goal that came ``span`` after the one before it (a stream slower than
        the loop) is reached in even steps over the cycles of that span, starting from
        the goal of the cycle before it came; so the targets, and the velocity sent with
        them, move every cycle instead of a stream's step in one cycle and none in the
        next. A goal changed since (a hold, an enable) is taken as it is.
        """
        if not self._any_spread:
            return self._goal_q
        goal = self._goal_q.copy()
        on = np.isfinite(self._stream_span) & (self._stream_to == goal)
        if on.any():
            share = np.clip((now - self._stream_base[on]) / self._stream_span[on], 0.0, 1.0)
            goal[on] = self._stream_from[on] + (goal[on] - self._stream_from[on]) * share
        return goal

    def _take_handed_in(self, now: float = math.nan) -> bool:
        """Take the goals handed in since the last cycle.

        Returns:
            Whether a goal changed other than by a stream (a hold, a goal after a pause:
            :meth:`write`): what a write between cycles is for. A stream's goal written
            between cycles would double the bus's writes to arrive at most a period
            sooner, and for a spread stream cut short the hold of the cycle's command (an
            MIT motor's torque reply, read at its end, then no longer matches a control
            period's hold: ``skel-ros identify``'s correction).
        """
        stepped = False
        with self._lock:
            new = self._pending_new
            if self._pending_hold.any():
                held = self._pending_hold
                if self._f.size:  # a follower stops with its leader
                    held[self._f] |= held[self._f_lead]
                self._goal_q[held] = self._limiter.hold()[held]
                held[:] = False
                stepped = True
            if self._state is MotionState.ENABLED and new:
                self._follow_leaders(self._pending_q, self._pending_v)
                pending = (self._pending_q, self._pending_v, self._pending_e)
                given = [np.isfinite(p) for p in pending]
                given_q = given[0]
                self._limiter.commanded(given_q)
                if self._any_spread:
                    self._stream(given_q & self._spread, now)
                stepped = stepped or self._pending_step
                for values, goal, taken in zip(pending, (self._goal_q, self._goal_v,
                                                         self._goal_e), given, strict=True):
                    goal[taken] = values[taken]
                    values.fill(np.nan)
            self._pending_new = False
            self._pending_step = False
        return stepped

    def _stream(self, given: npt.NDArray[np.bool_], now: float) -> None:
        """Position goals arrive at ``now`` for the spread DOFs ``given`` (:meth:`_streamed`)."""
        last = self._last_compute
        span = now - self._arrived[given]
        used = np.where(np.isfinite(self._goal_used[given]), self._goal_used[given],
                        self._goal_q[given])
        self._stream_from[given] = used
        self._stream_to[given] = self._pending_q[given]
        self._stream_base[given] = now if last is None else last
        stream = (span > 0.0) & (span <= STREAM_PERIODS * self.period + 1e-9)
        self._stream_span[given] = np.where(stream, span, np.nan)
        self._arrived[given] = now

    def _follow_leaders(self, q: Array, v: Array) -> None:
        """Each follower's goal from its leader's goal handed in (in place).

        ``multiplier * leader + offset`` (velocity: ``multiplier * leader``), where the
        leader has a goal; the follower then passes the motion limiter as any DOF, its
        leader's limits narrowed to its own (``BoundConfig.limits``), so both move alike.
        """
        if not self._f.size:
            return
        lead, f = self._f_lead, self._f
        q_lead, v_lead = q[lead], v[lead]
        q[f] = np.where(np.isfinite(q_lead), self._f_mult * q_lead + self._f_off, q[f])
        v[f] = np.where(np.isfinite(v_lead), self._f_mult * v_lead, v[f])

    def _commands_for(self, q: Array, v: Array, e: Array,
                      ) -> dict[int, dict[int, ActuatorCommand]]:
        """DOF targets -> actuator commands per bus (keyed by ``id(slot)``)."""
        aq = self._zero + self._direction * self._gear * q
        av = self._direction * self._gear * v
        ae = self._direction * e / self._gear
        out: dict[int, dict[int, ActuatorCommand]] = {}
        for slot in self._slots:
            cmds: dict[int, ActuatorCommand] = {}
            for dof, act in zip(slot.dofs, slot.actuators, strict=True):
                # The actuator's mode decides which fields it gets.
                cmd = ActuatorCommand.for_mode(act.mode, float(aq[dof]), float(av[dof]),
                                               float(ae[dof]))
                if cmd is not None:
                    cmds[act.id] = cmd
            out[id(slot)] = cmds
        return out

    # ---------------------------------------------------------------- status

    def _make_status(self, now: float) -> HardwareStatus:
        # Refreshed every _DIAG_PERIOD, and at once when the state or a bus's health changes.
        signature = (self._state, self._timeout_tripped, *(
            (s.is_open, s.fresh, s.torque, s.consecutive, s.attempts, s.counts.total)
            for s in self._slots))
        if not now - self._last_diag < _DIAG_PERIOD or signature != self._diag_signature:
            self._diag = (self._bus_diagnostics(), self._actuator_diagnostics())
            self._last_diag = now if math.isfinite(now) else -math.inf
            self._diag_signature = signature
        return HardwareStatus(
            stamp=now, state=self._state, message=self._message, names=self.names,
            position=_arr(self._q.copy()), velocity=_arr(self._v.copy()),
            effort=_arr(self._e.copy()), target=_arr(np.asarray(self._target, float).copy()),
            measured=_arr(self._measured.copy()), read_stamp=self._read_stamp,
            fresh=all(s.fresh for s in self._slots), watchdog_tripped=self._timeout_tripped,
            cycles=self._cycles,
            guard_corrections=self._limiter.corrections,
            reenable_bounded=(tuple(n for n in self._limiter.bounded
                                    if n not in self._followers)  # the leader is named
                              if self._state is MotionState.ENABLED else ()),
            derived=self.bound.derived,
            buses=self._diag[0], actuators=self._diag[1],
        )

    def _bus_diagnostics(self) -> tuple[BusDiagnostics, ...]:
        out = []
        for s in self._slots:
            if not s.is_open:
                level = Level.ERROR
                message = f"not connected: {s.last_error}" if s.last_error else "not connected"
            elif s.consecutive:
                level, message = Level.WARN, f"{s.consecutive} failed cycle(s): {s.last_error}"
            else:
                level, message = Level.OK, "connected"
            out.append(BusDiagnostics(
                name=s.spec.name, protocol=s.spec.protocol, level=level, message=message,
                connected=s.is_open, errors=s.counts.frozen(),
                consecutive_failures=s.consecutive, reconnects=s.reconnects,
                reconnect_attempts=s.attempts, last_error=s.last_error))
        return tuple(out)

    def _actuator_diagnostics(self) -> tuple[ActuatorDiagnostics, ...]:
        out = []
        for s in self._slots:
            for dof, act in zip(s.dofs, s.actuators, strict=True):
                st = s.states.get(act.id)
                stale = not (s.is_open and s.fresh)
                if not s.is_open:
                    level, message = Level.STALE, "no data: bus not connected"
                elif st is None:
                    level, message = Level.STALE, "no data yet"
                elif stale:
                    level, message = Level.STALE, f"no fresh data: {s.last_error}"
                elif st.error_code:
                    level, message = Level.ERROR, f"fault: {st.fault or st.error_code}"
                elif self._timeout_tripped and st.torque_enabled:
                    level, message = Level.WARN, "command timeout: holding"
                elif s.consecutive:
                    level, message = Level.WARN, f"bus errors: {s.last_error}"
                else:  # the actuator's own torque, as it reported it in this read
                    level = Level.OK
                    message = "torque on" if st.torque_enabled else "torque off"
                out.append(ActuatorDiagnostics(
                    name=act.name, bus=s.spec.name, id=act.id, model=act.model, level=level,
                    message=message,
                    torque_enabled=None if stale or st is None else st.torque_enabled,
                    error_code=st.error_code if st else 0, fault=st.fault if st else "",
                    temperature=st.temperature if st else None,
                    voltage=st.voltage if st else None,
                    effort=(None if stale or st is None or not math.isfinite(st.effort)
                            else st.effort),
                    errors=s.device_counts[act.id].frozen(),
                    position=float(self._q[dof]), target=float(self._target[dof])))
        return tuple(out)


def hardware_runner(backend: HardwareBackend, *, log: CoreLog | None = None,
                    listener: LoopListener | None = None,
                    max_start_delay: float = MAX_START_DELAY) -> Runner:
    """The core and the loop over ``backend``, as the hardware node runs them.

    The core counts the configuration's command timeout (:attr:`HardwareBackend.
    command_timeout`) and refuses trajectories starting more than ``max_start_delay``
    seconds ahead; the runner's :class:`~skel_ros.core.GridPacer` keeps the control rate on the
    backend's clock.
    """
    return Runner.over(backend, command_timeout=backend.command_timeout,
                       max_start_delay=max_start_delay, log=log or LoggingLog(_LOG),
                       listener=listener, name="skel_ros-hardware")
