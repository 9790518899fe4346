"""The hardware manager on the real Dynamixel driver and its emulator (a process on a pty).

Between the driver and the emulator sits :class:`SerialProxy`, a second pty pair that
forwards bytes both ways and can drop replies (read timeouts), corrupt them (CRC errors),
prepend garbage, or make the port vanish and come back (under the same path, a symlink).
The manager's clock is injected: the tests call ``step(now)`` with chosen times, so the
watchdog and the reconnect backoff are deterministic; the bus I/O is real.

The emulator process is shared by the module's tests (starting one takes about a second of
CPU, most of the file's time): each test gets it back as after power-on, see
:class:`SharedEmulator`.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import random
import select
import termios
import threading
import tty
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.core import CommandRefused, CommandResult, RobotCore, Trajectory
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.hardware.diagnostics import Level
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from skel_ros.emulation.dynamixel import DynamixelEmulator
    from skel_ros.hardware.base import ActuatorSpec

dynamixel = pytest.importorskip("skel_ros.emulation.dynamixel")
ct = pytest.importorskip("skel_ros.hardware.dynamixel.control_table")

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
BAUD = 1_000_000
# How long the driver waits for a reply: the emulator is a process of its own, which a
# loaded 2-core machine may run 20 ms late; each dropped reply costs this much real time.
REPLY_TIMEOUT = 0.05
START = {1: 0.3, 2: -0.2, 3: 0.5, 4: 0.1}  # actuator positions the emulator starts at

CONFIG = """\
control_rate: 100.0
command_timeout: 0.5
safe_state: {safe_state}
auto_resume: {auto_resume}
fault_threshold: 3
reconnect: {{initial_delay: 0.1, max_delay: 0.4, factor: 2.0}}
buses:
  arm_bus:
    protocol: dynamixel
    transport: {{port: "{port}", baudrate: {baud}, timeout: {reply_timeout}}}
joints:
  shoulder_yaw: {{bus: arm_bus, id: 1, model: XM430-W350}}
  shoulder_pitch: {{bus: arm_bus, id: 2, model: XM430-W350, direction: -1}}
  elbow: {{bus: arm_bus, id: 3, model: XM430-W350, gear_ratio: 2.0, zero_offset: 0.1}}
  wrist: {{bus: arm_bus, id: 4, model: XL430-W250}}
"""


def follow(core: RobotCore, trajectory: Trajectory | None,
           start: float | None = None) -> CommandResult:
    """Follow (None: cancel) a trajectory; a refusal as a result, not an exception."""
    if trajectory is None:
        core.cancel_trajectory()
        return CommandResult(ok=True)
    try:
        core.follow(trajectory, start)
    except CommandRefused as exc:
        return CommandResult(ok=False, message=exc.reason, reason=exc.key)
    return CommandResult(ok=True)


class SerialProxy:
    """A pty that forwards to another pty, with faults on demand.

    ``path`` is a symlink to the current pty slave: the driver opens it like a port.
    Modes for the emulator -> driver direction: ``pass``, ``drop`` (no replies),
    ``corrupt`` (last byte of each chunk flipped: CRC error), ``garbage`` (random bytes
    before each chunk), ``noise`` (each chunk replaced by as many random bytes).
    """

    def __init__(self, target: str, path: Path) -> None:
        self.path = path
        self.mode = "pass"
        self._rng = random.Random(7)  # noqa: S311 - reproducible garbage, not crypto
        self._target = os.open(target, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._target)
        # The emulator's port outlives a test (SharedEmulator): a reply a previous test's
        # driver never read must not reach this one's.
        termios.tcflush(self._target, termios.TCIOFLUSH)
        self._lock = threading.Lock()
        self._master = self._slave = -1
        self._stop = threading.Event()
        self.appear()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def appear(self) -> None:
        """Create a new pty pair and point ``path`` at it."""
        master, slave = os.openpty()
        tty.setraw(slave)
        with self._lock:
            self._master, self._slave = master, slave
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self.path.symlink_to(os.ttyname(slave))

    def vanish(self) -> None:
        """Close the pty (the driver's reads and writes fail) and remove ``path``."""
        with self._lock:
            master, slave = self._master, self._slave
            self._master = self._slave = -1
        for fd in (master, slave):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        self.vanish()
        os.close(self._target)

    def _pump(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                master = self._master
            fds = [self._target] + ([master] if master >= 0 else [])
            try:
                ready, _, _ = select.select(fds, [], [], 0.01)
            except (OSError, ValueError):
                continue
            for fd in ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    continue
                if fd == self._target:
                    self._to_driver(master, data)
                else:
                    with contextlib.suppress(OSError):
                        os.write(self._target, data)

    def _to_driver(self, master: int, data: bytes) -> None:
        if master < 0 or self.mode == "drop":
            return
        if self.mode == "corrupt":
            data = data[:-1] + bytes([data[-1] ^ 0x5A])
        elif self.mode == "garbage":
            data = bytes(self._rng.randrange(256) for _ in range(7)) + data
        elif self.mode == "noise":
            data = bytes(self._rng.randrange(256) for _ in range(len(data)))
        with contextlib.suppress(OSError):
            os.write(master, data)


class SharedEmulator:
    """One emulator process for the module, handed to each test as after power-on.

    What a test changes on the servos is undone between tests: the shafts go back to START
    at rest. What cannot be undone through the emulator's control channel (torque left on,
    a hardware error, an expired Bus Watchdog: a test that failed half-way, or a manager
    that did not switch torque off at stop) makes the next test get a new process instead.
    The driver of each test's manager opens with torque off and writes every setting it
    needs (mode, limits, Bus Watchdog, read block, goals), so a test cannot tell the
    process is not new; only the first open finds the EEPROM at its factory values, which
    no test here is about.
    """

    def __init__(self) -> None:
        self._emulator: DynamixelEmulator | None = None

    def take(self, actuators: Sequence[ActuatorSpec]) -> DynamixelEmulator:
        """The emulator, reset; a new one if there is none or it could not be reset."""
        if self._emulator is not None and not self._reset(self._emulator):
            self._emulator.stop()
            self._emulator = None
        if self._emulator is None:
            self._emulator = dynamixel.start_emulator(
                {"baudrate": BAUD}, actuators, {"initial_positions": START})
        return self._emulator

    @staticmethod
    def _reset(emulator: DynamixelEmulator) -> bool:
        if not emulator.running:
            return False
        for i in START:
            if (emulator.state(i).torque_enabled
                    or emulator.register(i, "Hardware Error Status")
                    or emulator.register(i, "Bus Watchdog") == ct.BUS_WATCHDOG_EXPIRED):
                return False
        for i, position in START.items():
            emulator.set_position(i, position)
        return True

    def close(self) -> None:
        if self._emulator is not None:
            self._emulator.stop()
            self._emulator = None


class Rig:
    """Emulator + proxy + manager, with a stepping clock."""

    def __init__(self, tmp: Path, emulators: SharedEmulator, *, safe_state: str = "hold",
                 auto_resume: bool = False) -> None:
        world = load_skel(ARM)
        self.skeleton = world.skeletons[0]
        text = CONFIG.format(safe_state=safe_state, auto_resume=str(auto_resume).lower(),
                             port=tmp / "ttyDXL", baud=BAUD, reply_timeout=REPLY_TIMEOUT)
        config = parse_hardware_config(text, "test.yaml")
        self.bound = config.bind(self.skeleton)
        self.actuators = [m.actuator for m in config.joints]
        self.emulator = emulators.take(self.actuators)
        self.proxy = SerialProxy(self.emulator.transport["port"], tmp / "ttyDXL")
        self.t = 0.0
        self.attach(HardwareBackend(self.bound, clock=lambda: self.t))

    def attach(self, backend: HardwareBackend) -> None:
        """Drive ``backend`` (under a runner and a core, as the hardware node does)."""
        self.backend = backend
        self.runner = hardware_runner(backend)
        self.core = self.runner.core

    def step(self, n: int = 1, dt: float | None = None) -> object:
        status = None
        for _ in range(n):
            self.t += self.backend.period if dt is None else dt
            self.runner.cycle()
            status = self.backend.status()
        return status

    def until(self, predicate: object, limit: int = 500) -> None:
        """Run cycles until ``predicate()`` (each cycle is real bus I/O)."""
        for _ in range(limit):
            self.step()
            if predicate():  # type: ignore[operator]
                return
        raise AssertionError(f"condition not reached in {limit} cycles: "
                             f"{self.backend.status().state} {self.backend.status().message}")

    def settle(self, actuator_id: int, target: float, tol: float = 0.01) -> None:
        """Run cycles until the emulated servo is within ``tol`` of ``target`` (rad).

        The servo moves on the emulator process's own (real) clock while the manager runs
        on the rig's stepped one, so how many cycles the move takes depends on how fast
        this machine runs a cycle (the elbow's 0.8 rad move to within 0.01 rad took 470 to
        over 500 cycles of about 2.5 ms here). The budget is set for a machine several
        times faster; extra cycles are harmless, as the manager only holds its targets
        once the watchdog fires.
        """
        self.until(lambda: abs(self.actuator(actuator_id) - target) < tol, limit=4000)

    def enable(self) -> None:
        req = self.backend.enable()
        self.step()
        assert req.done
        assert req.ok, req.message

    def actuator(self, actuator_id: int) -> float:
        return float(self.emulator.state(actuator_id).position)

    def close(self) -> None:
        self.runner.cleanup()
        self.proxy.close()


@pytest.fixture(scope="module")
def emulators() -> Iterator[SharedEmulator]:
    shared = SharedEmulator()
    yield shared
    shared.close()


@pytest.fixture
def rig(tmp_path: Path, emulators: SharedEmulator) -> Iterator[Rig]:
    r = Rig(tmp_path, emulators)
    yield r
    r.close()


def test_starts_disabled_with_torque_off_and_measures(rig: Rig) -> None:
    status = rig.step()
    assert status.state is MotionState.DISABLED
    assert not any(rig.emulator.state(i).torque_enabled for i in START)
    # The DOF is direction * (actuator - zero_offset) / gear_ratio.
    expected = [0.3, 0.2, (0.5 - 0.1) / 2.0, 0.1]
    assert status.position == pytest.approx(expected, abs=2e-3)
    assert status.names == ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")


def test_commands_before_enable_are_refused(rig: Rig) -> None:
    rig.step()
    result = rig.core.command(CommandKind.POSITION, ["elbow"], [1.0])
    assert not result.ok
    assert "not enabled" in result.message
    rig.step(5)
    assert rig.actuator(3) == pytest.approx(0.5, abs=2e-3)


def test_enable_holds_the_measured_position_then_moves(rig: Rig) -> None:
    rig.step()
    rig.enable()
    assert rig.backend.state is MotionState.ENABLED
    assert all(rig.emulator.state(i).torque_enabled for i in START)
    rig.step(20)
    for i, start in START.items():  # no jump at enable
        assert rig.actuator(i) == pytest.approx(start, abs=3e-3)
    result = rig.core.command(CommandKind.POSITION, ["elbow"], [0.6])
    assert result.ok
    # elbow target 0.6 rad -> actuator 0.1 + 2 * 0.6 = 1.3 rad
    rig.settle(3, 1.3)
    assert rig.actuator(1) == pytest.approx(0.3, abs=3e-3)


def test_targets_respect_the_velocity_limit(rig: Rig) -> None:
    rig.step()
    rig.enable()
    rig.core.command(CommandKind.POSITION, ["wrist"], [1.5])
    targets = [rig.step().target[3] for _ in range(10)]  # type: ignore[attr-defined]
    steps = np.diff([0.1, *targets])
    assert np.all(np.abs(steps) <= 6.0 * rig.backend.period + 1e-9)  # wrist: 6 rad/s
    assert steps[0] > 0


def test_bad_commands_are_rejected_whole(rig: Rig) -> None:
    rig.step()
    rig.enable()
    for names, values in [(["elbow"], [math.nan]), (["elbow"], [math.inf]),
                          (["nope"], [0.0]), (["elbow", "elbow"], [0.0, 0.1]),
                          (["elbow"], [0.0, 1.0])]:
        assert not rig.core.command(CommandKind.POSITION, names, values).ok
    wrong_mode = rig.core.command(CommandKind.VELOCITY, ["elbow"], [0.1])
    assert not wrong_mode.ok
    assert "takes position commands, not velocity" in wrong_mode.message
    clamped = rig.core.command(CommandKind.POSITION, ["elbow"], [1e300])
    assert clamped.ok
    assert clamped.clamped[0].applied == 2.2


def test_estop_cuts_torque_at_once_and_needs_enable(rig: Rig) -> None:
    rig.step()
    rig.enable()
    req = rig.backend.estop()
    rig.backend.serve(rig.t)  # what the loop thread does when woken
    assert rig.backend.state is MotionState.ESTOP
    assert not any(rig.emulator.state(i).torque_enabled for i in START)
    rig.step()
    assert req.done
    assert req.ok
    assert not rig.core.command(CommandKind.POSITION, ["elbow"], [0.0]).ok
    rig.enable()
    assert rig.backend.state is MotionState.ENABLED


def test_an_answer_is_given_once_the_status_says_it(rig: Rig) -> None:
    """A request's answer never comes before the status (what /diagnostics and the
    publishers read) says the same: an e-stop answered while the status still said
    "enabled" let a client that checks the node's diagnostics take it as enabled."""
    rig.step()
    rig.enable()
    seen: list[tuple[str, MotionState]] = []
    for kind in ("estop", "enable", "disable"):
        req = getattr(rig.backend, kind)()
        finish = req.finish

        def watched(ok: bool, message: str, req: object = req, finish: object = finish,
                    kind: str = kind) -> None:
            seen.append((kind, rig.backend.status().state))
            finish(ok, message)  # type: ignore[operator]

        req.finish = watched  # type: ignore[method-assign]
        rig.step()
        assert req.done
    assert seen == [("estop", MotionState.ESTOP), ("enable", MotionState.ENABLED),
                    ("disable", MotionState.DISABLED)]


def test_watchdog_holds_position(rig: Rig) -> None:
    rig.step()
    rig.enable()
    rig.core.command(CommandKind.POSITION, ["elbow"], [1.0])
    rig.step(5)
    assert not rig.backend.status().watchdog_tripped
    before = rig.backend.status().target.copy()
    status = rig.step(dt=0.5)  # no command for command_timeout
    assert status.watchdog_tripped  # type: ignore[attr-defined]
    assert status.state is MotionState.ENABLED  # type: ignore[attr-defined]
    held = status.target.copy()  # type: ignore[attr-defined]
    rig.step(10)
    assert rig.backend.status().target == pytest.approx(held)
    assert held[2] < 1.0
    assert held[2] >= before[2]
    # A new command resumes.
    assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.0]).ok
    rig.step()
    assert not rig.backend.status().watchdog_tripped


def test_watchdog_torque_off(tmp_path: Path, emulators: SharedEmulator) -> None:
    rig = Rig(tmp_path, emulators, safe_state="torque_off")
    try:
        rig.step()
        rig.enable()
        rig.core.command(CommandKind.POSITION, ["elbow"], [0.3])
        rig.step(3)
        rig.step(dt=0.5)
        assert rig.backend.state is MotionState.DISABLED
        assert not any(rig.emulator.state(i).torque_enabled for i in START)
        assert "no command" in rig.backend.status().message
    finally:
        rig.close()


def test_garbage_before_replies_is_skipped(rig: Rig) -> None:
    rig.step()
    rig.enable()
    rig.proxy.mode = "garbage"
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.4]).ok
    rig.settle(4, 0.4)
    # Reads go on succeeding (a loaded host may make one miss its timeout, garbage or not).
    rig.until(lambda: rig.backend.status().fresh, limit=20)
    status = rig.backend.status()
    assert status.state is MotionState.ENABLED
    assert status.buses[0].consecutive_failures == 0


@pytest.mark.parametrize("mode", ["drop", "corrupt", "noise"])
def test_transient_errors_are_counted_then_fail_the_bus(rig: Rig, mode: str) -> None:
    rig.step()
    rig.enable()
    rig.proxy.mode = mode
    status = rig.step()
    assert status.state is MotionState.ENABLED  # type: ignore[attr-defined]
    assert status.buses[0].consecutive_failures == 1  # type: ignore[attr-defined]
    rig.step(2)  # fault_threshold = 3
    status = rig.backend.status()
    assert status.state is MotionState.FAULT
    errors = status.buses[0].errors
    if mode == "drop":
        assert errors["timeout"] >= 3
    elif mode == "corrupt":
        assert errors["protocol"] >= 3
    else:  # random bytes: bad frames, or no complete frame in time
        assert errors["protocol"] + errors["timeout"] >= 3
    assert status.buses[0].level is Level.ERROR
    assert all(a.level is Level.STALE for a in status.actuators)
    assert all(a.torque_enabled is None for a in status.actuators)
    assert not status.measured.any()
    # Healed: reconnect after the backoff. The servos kept power and torque (safe_state
    # hold): they keep holding, now at their measured positions; moving needs an enable.
    rig.proxy.mode = "pass"
    rig.until(lambda: rig.backend.state is MotionState.HOLDING)
    assert all(rig.emulator.state(i).torque_enabled for i in START)
    assert rig.backend.status().buses[0].reconnects == 1
    assert not rig.core.command(CommandKind.POSITION, ["elbow"], [0.0]).ok
    rig.enable()
    status = rig.step()
    measured = status.position  # type: ignore[attr-defined]
    assert status.target == pytest.approx(measured, abs=3e-3)  # type: ignore[attr-defined]


def test_port_vanishes_and_comes_back_with_backoff(rig: Rig) -> None:
    rig.step()
    rig.enable()
    rig.proxy.vanish()
    rig.step()
    status = rig.backend.status()
    assert status.state is MotionState.FAULT
    assert status.buses[0].errors["transport"] >= 1
    # Reconnect attempts back off: 0.1, 0.2, 0.4, 0.4 ... s (clock driven).
    attempts = []
    for _ in range(120):  # 1.2 s at 100 Hz
        rig.step()
        attempts.append(rig.backend.status().buses[0].reconnect_attempts)
    changes = [i for i in range(1, len(attempts)) if attempts[i] != attempts[i - 1]]
    gaps = np.diff(changes)
    assert len(changes) >= 3
    assert list(gaps[:2]) == [20, 40]  # 0.2 s, then 0.4 s, in cycles of 10 ms
    rig.proxy.appear()
    rig.until(lambda: rig.backend.state is MotionState.HOLDING, limit=100)
    assert rig.backend.status().buses[0].connected
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.2]).ok
    rig.settle(4, 0.2)


def test_auto_resume_after_reconnect(tmp_path: Path, emulators: SharedEmulator) -> None:
    rig = Rig(tmp_path, emulators, auto_resume=True)
    try:
        rig.step()
        rig.enable()
        rig.proxy.vanish()
        rig.step()
        assert rig.backend.state is MotionState.FAULT
        rig.proxy.appear()
        rig.until(lambda: rig.backend.state is MotionState.ENABLED, limit=100)
        status = rig.step()
        assert status.target == pytest.approx(status.position, abs=3e-3)  # type: ignore[attr-defined]
    finally:
        rig.close()


def test_diagnostics_per_actuator(rig: Rig) -> None:
    rig.step()
    status = rig.step()
    assert [a.name for a in status.actuators] == list(status.names)  # type: ignore[attr-defined]
    act = status.actuators[0]  # type: ignore[attr-defined]
    assert act.level is Level.OK
    assert act.bus == "arm_bus"
    assert act.id == 1
    assert act.error_code == 0
    # Its load as it reported it (gear 1, direction 1: the DOF's effort): on /diagnostics.
    assert act.effort is not None
    assert act.effort == pytest.approx(status.effort[0])  # type: ignore[attr-defined]
    assert status.buses[0].connected  # type: ignore[attr-defined]


def test_control_loop_thread_runs_and_stops(tmp_path: Path,
                                            emulators: SharedEmulator) -> None:
    rig = Rig(tmp_path, emulators)
    import time

    rig.attach(HardwareBackend(rig.bound, clock=time.monotonic))
    try:
        rig.runner.configure()
        req = rig.backend.enable(wait=5.0)
        assert req.done, "the loop did not handle the enable"
        assert req.ok, req.message
        assert rig.core.command(CommandKind.POSITION, ["shoulder_yaw"], [0.5]).ok
        estop = rig.backend.estop(wait=5.0)
        assert estop.done
        assert estop.ok
        assert rig.backend.status().cycles > 0
    finally:
        rig.close()
    assert rig.backend.state is MotionState.OFFLINE


def test_the_listener_hears_each_read_once_and_a_failing_listener_is_survived(
        tmp_path: Path, emulators: SharedEmulator, caplog: pytest.LogCaptureFixture) -> None:
    """The loop thread tells its listener of each new read, once and in order; a listener
    that raises neither stops the loop nor floods the log (one line)."""
    import time

    rig = Rig(tmp_path, emulators)
    heard: list[tuple[float, str]] = []
    enough = threading.Event()

    class Listener:
        def next_event(self) -> float:
            return math.inf

        def after_cycles(self, now: float, count: int) -> None:  # noqa: ARG002
            status = rig.backend.status()
            if not heard or status.read_stamp != heard[-1][0]:
                heard.append((status.read_stamp, threading.current_thread().name))
            if len(heard) >= 20:
                enough.set()
            raise RuntimeError("a listener's bug")

        def flush(self) -> None:
            pass

        def on_lagging(self) -> None:
            pass

        def on_error(self, exc: Exception) -> bool:  # noqa: ARG002
            return True

    rig.attach(HardwareBackend(rig.bound, clock=time.monotonic))
    rig.runner.listener = Listener()
    try:
        with caplog.at_level("ERROR", logger="skel_ros.hardware"):
            rig.runner.configure()
            assert enough.wait(30.0), f"the listener heard {len(heard)} reads"
            req = rig.backend.enable(wait=10.0)  # the loop still answers
        assert req.done
        assert req.ok, req.message
    finally:
        rig.close()
    stamps = [stamp for stamp, _ in heard if math.isfinite(stamp)]
    assert len(stamps) >= 19
    assert all(b > a for a, b in itertools.pairwise(stamps))  # once each, in order
    assert {name for _, name in heard} == {"skel_ros-hardware"}
    failed = [r for r in caplog.records if "listener failed" in r.getMessage()]
    assert len(failed) == 1


def test_servo_fault_then_clear_faults(rig: Rig) -> None:
    rig.step()
    rig.enable()
    rig.emulator.inject_fault(3, 0x20)  # Hardware Error Status: overload
    rig.until(lambda: rig.backend.state is not MotionState.ENABLED, limit=20)
    status = rig.backend.status()
    assert status.state is MotionState.FAULT
    assert "elbow" in status.message
    assert "clear_faults" in status.message
    assert status.buses[0].errors["device"] == 1  # counted once, not every cycle
    # The bus works: it stays open and measured; the other servos keep holding (hold).
    rig.step(30)
    status = rig.backend.status()
    assert status.buses[0].connected
    assert status.buses[0].reconnects == 0
    assert status.measured.all()
    assert status.buses[0].errors["device"] == 1
    assert not rig.emulator.state(3).torque_enabled  # the servo's own reaction
    assert all(rig.emulator.state(i).torque_enabled for i in (1, 2, 4))
    elbow = next(a for a in status.actuators if a.name == "elbow")
    assert elbow.level is Level.ERROR
    req = rig.backend.enable()
    rig.step()
    assert not req.ok
    assert "clear_faults" in req.message
    # The way out: the protocol's own recovery (Dynamixel: Reboot), torque stays off.
    req = rig.backend.clear_faults()
    rig.step()
    assert req.done
    assert req.ok, req.message
    assert "elbow" in req.details
    assert "reboot" in req.details["elbow"].lower()
    assert rig.backend.state is MotionState.HOLDING
    assert not rig.emulator.state(3).torque_enabled
    rig.enable()
    status = rig.step()
    assert status.target == pytest.approx(status.position, abs=3e-3)  # type: ignore[attr-defined]
    assert all(rig.emulator.state(i).torque_enabled for i in START)


def test_servo_fault_with_torque_off_safe_state(tmp_path: Path,
                                                emulators: SharedEmulator) -> None:
    rig = Rig(tmp_path, emulators, safe_state="torque_off")
    try:
        rig.step()
        rig.enable()
        rig.emulator.inject_fault(3, 0x20)
        rig.until(lambda: rig.backend.state is MotionState.FAULT, limit=20)
        assert not any(rig.emulator.state(i).torque_enabled for i in START)
        req = rig.backend.clear_faults()
        rig.step()
        assert req.ok, req.message
        assert rig.backend.state is MotionState.DISABLED
    finally:
        rig.close()


def test_stale_state_is_not_measured(rig: Rig) -> None:
    rig.step()
    rig.enable()
    status = rig.step()
    assert status.measured.all()  # type: ignore[attr-defined]
    read = status.read_stamp  # type: ignore[attr-defined]
    rig.proxy.vanish()
    status = rig.step(3)
    assert not status.measured.any()  # type: ignore[attr-defined]
    assert status.read_stamp > read  # type: ignore[attr-defined]
    for act in status.actuators:  # type: ignore[attr-defined]
        assert act.level is Level.STALE
        assert act.torque_enabled is None
    rig.proxy.appear()
    rig.until(lambda: bool(rig.backend.status().measured.all()), limit=100)


@pytest.mark.parametrize("safe_state", ["hold", "torque_off"])
def test_a_glitch_keeps_the_safe_state(tmp_path: Path, emulators: SharedEmulator,
                                       safe_state: str) -> None:
    """The port vanishes for 0.5 s while the servos keep power (issue: the arm dropped)."""
    rig = Rig(tmp_path, emulators, safe_state=safe_state)
    try:
        rig.step()
        rig.enable()
        # Commanded every cycle until the servo arrives: the command watchdog (0.5 s of
        # the stepped clock) would otherwise stop a slow emulated move first.
        for _ in range(4000):
            assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.4]).ok
            rig.step()
            if abs(rig.actuator(3) - 0.9) < 0.01:
                break
        rig.proxy.vanish()
        rig.step(50)  # 0.5 s of the manager's clock
        assert rig.backend.state is MotionState.FAULT
        rig.proxy.appear()
        if safe_state == "hold":
            rig.until(lambda: rig.backend.state is MotionState.HOLDING, limit=200)
            # Never switched off: the servos hold where they are, the targets are there.
            assert all(rig.emulator.state(i).torque_enabled for i in START)
            status = rig.step(5)
            assert status.target == pytest.approx(status.position, abs=3e-3)  # type: ignore[attr-defined]
            assert rig.actuator(3) == pytest.approx(0.9, abs=0.02)
            assert not rig.core.command(CommandKind.POSITION, ["elbow"], [0.0]).ok
            rig.enable()
            assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.2]).ok
            rig.settle(3, 0.5)
        else:
            rig.until(lambda: rig.backend.state is MotionState.DISABLED, limit=200)
            assert not any(rig.emulator.state(i).torque_enabled for i in START)
    finally:
        rig.close()


def test_enable_reads_again_when_a_read_is_missed(tmp_path: Path,
                                                 emulators: SharedEmulator) -> None:
    """A loaded host: one Sync Read misses its timeout; enable reads again."""
    from skel_ros.hardware.errors import TransportTimeoutError

    rig = Rig(tmp_path, emulators)
    misses = {"n": 0}
    real_read = None
    try:
        driver = rig.backend._slots[0].driver  # inject a missed read
        real_read = driver.read

        def read() -> object:
            if misses["n"]:
                misses["n"] -= 1
                raise TransportTimeoutError("injected: no answer in time")
            return real_read()

        driver.read = read  # type: ignore[method-assign]
        rig.step()
        misses["n"] = 2  # this cycle's read, then the enable's first retry
        req = rig.backend.enable()
        rig.step()
        assert req.ok, req.message
        assert rig.backend.state is MotionState.ENABLED
    finally:
        rig.close()


def test_trajectory_far_in_the_future_is_refused(rig: Rig) -> None:
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    rig.step()
    rig.enable()
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(0.5, (0.5,))], start_positions=[0.1])
    late = follow(rig.core, traj, start=rig.t + 3600.0)
    assert not late.ok
    assert "max_start_delay" in late.message
    assert follow(rig.core, traj, start=rig.t + 2.0).ok


def test_trajectory_leaving_the_limits_is_reported_once(rig: Rig,
                                                        caplog: pytest.LogCaptureFixture,
                                                        ) -> None:
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    # At full speed at once: the bound after an enable (test_reenable.py) would slow this
    # 8 rad/s trajectory, and the command timeout hold it half-way.
    rig.attach(HardwareBackend(rig.bound, clock=lambda: rig.t, reenable_velocity=1.0))
    rig.step()
    rig.enable()
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(0.3, (2.5,))], start_positions=[0.1])
    with caplog.at_level("WARNING", logger="skel_ros.hardware"):
        assert follow(rig.core, traj, start=rig.t).ok
        rig.step(60)
    lines = [r for r in caplog.records if "leaves the limits" in r.getMessage()]
    assert len(lines) == 1
    assert "'wrist'" in lines[0].getMessage()
    assert rig.backend.status().target[3] == pytest.approx(1.9)


def test_unreachable_bus_is_an_error_repeated_slowly(tmp_path: Path, emulators: SharedEmulator,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    rig = Rig(tmp_path, emulators)
    try:
        rig.proxy.vanish()
        with caplog.at_level("DEBUG", logger="skel_ros.hardware"):
            rig.step(300)  # 3 s of the manager's clock: a dozen reopen attempts
        errors = [r for r in caplog.records if r.levelname == "ERROR"]
        assert len(errors) == 1
        assert "not connected" in errors[0].getMessage()
        assert "ttyDXL" in errors[0].getMessage()
        status = rig.backend.status()
        assert status.state is MotionState.FAULT
        assert "not connected" in status.message
        assert status.buses[0].message.startswith("not connected")
        caplog.clear()
        with caplog.at_level("DEBUG", logger="skel_ros.hardware"):
            rig.step(dt=8.0)
            rig.step(dt=0.5)
        assert len([r for r in caplog.records if r.levelname == "ERROR"]) == 1
    finally:
        rig.close()


def test_trajectory_is_sampled_by_the_loop(rig: Rig) -> None:
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    rig.step()
    rig.enable()
    start = rig.backend.status().target
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(0.5, (0.5,))],
                           start_positions=[float(start[3])])
    assert follow(rig.core, traj, start=rig.t).ok
    targets = [rig.step().target[3] for _ in range(60)]  # type: ignore[attr-defined]
    s = float(start[3])
    assert targets[10] == pytest.approx(s + (0.5 - s) * 0.11 / 0.5, abs=1e-9)  # linear
    assert targets[-1] == pytest.approx(0.5)
    rig.settle(4, 0.5)
    bad = PointTrajectory(["wrist", "nope"], [TrajectoryPoint(0.5, (0.5, 0.0))])
    assert not follow(rig.core, bad).ok


def test_enable_is_refused_outside_the_position_limits(rig: Rig) -> None:
    rig.emulator.set_position(4, 2.5)  # wrist limits [-1.9, 1.9]
    rig.step(2)
    req = rig.backend.enable()
    rig.step()
    assert not req.ok
    assert "'wrist' is at 2.5, outside its limits [-1.9, 1.9]" in req.message
    assert rig.backend.state is MotionState.DISABLED
    assert not rig.emulator.state(4).torque_enabled
    rig.emulator.set_position(4, 1.91)  # resting on the stop: held at the limit
    rig.step(2)
    rig.enable()
    assert rig.backend.status().target[3] == pytest.approx(1.9)


class _Observer:
    """Records the core's calls; ends the trajectory once ``elapsed`` passes ``done_at``."""

    def __init__(self, done_at: float = math.inf) -> None:
        self.cycles: list[tuple[float, float, np.ndarray, np.ndarray | None]] = []
        self.ends: list[tuple[float, object, str]] = []
        self.done_at = done_at

    def on_cycle(self, now, elapsed, names, desired, actual):  # noqa: ARG002
        from skel_ros.core import FollowOutcome

        self.cycles.append((now, elapsed, desired[0].copy(), actual[0].copy()))
        return (FollowOutcome.SUCCEEDED, "done") if elapsed > self.done_at else None

    def on_end(self, now, outcome, message):
        self.ends.append((now, outcome, message))


def test_observer_sees_each_read_cycle_on_the_manager_clock(rig: Rig) -> None:
    """The core's follower runs once per read cycle, in the manager's clock."""
    from skel_ros.core import FollowOutcome
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    rig.step()
    rig.enable()
    q0 = float(rig.backend.status().target[3])
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(0.2, (q0 + 0.2,))], start_positions=[q0])
    observer = _Observer(done_at=0.305)
    start = rig.t
    rig.core.follow(traj, start, observer)
    rig.step(10)
    times = [c[0] for c in observer.cycles]
    assert times == pytest.approx([start + (k + 1) * rig.backend.period for k in range(10)])
    assert [c[1] for c in observer.cycles] == pytest.approx([t - start for t in times])
    for now, _, desired, actual in observer.cycles:
        assert desired == pytest.approx(traj.sample(now - start)[0])
        assert np.isfinite(actual).all()  # measured in that very cycle
    rig.step(30)
    assert [e[1] for e in observer.ends] == [FollowOutcome.SUCCEEDED]
    assert len(observer.cycles) == 31  # held after its end until the observer decided
    assert observer.ends[0][0] == pytest.approx(observer.cycles[-1][0])


def test_estop_and_a_command_end_the_trajectory(rig: Rig) -> None:
    from skel_ros.core import FollowOutcome
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    rig.step()
    rig.enable()
    q0 = float(rig.backend.status().target[3])
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(1.0, (q0 + 0.2,))], start_positions=[q0])
    taken = _Observer()
    rig.core.follow(traj, rig.t, taken)
    rig.step(3)
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [q0]).ok
    assert [e[1] for e in taken.ends] == [FollowOutcome.TAKEN_OVER]
    stopped = _Observer()
    rig.core.follow(traj, rig.t, stopped)
    rig.step(3)
    rig.backend.estop()
    rig.step()
    assert [e[1] for e in stopped.ends] == [FollowOutcome.STOPPED]
    assert "emergency stop" in stopped.ends[0][2]
    assert len(stopped.cycles) == 3


def test_a_command_for_other_joints_keeps_a_new_trajectory(rig: Rig) -> None:
    """Only a command for a trajectory's own joints takes over (one rule, sim and hardware).

    Before the robot core, a position command for any joint, handed in between a
    trajectory's arrival and the next cycle, silently dropped the trajectory.
    """
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    rig.step()
    rig.enable()
    q = rig.backend.status().target
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(0.2, (float(q[3]) + 0.2,))],
                           start_positions=[float(q[3])])
    assert follow(rig.core, traj, start=rig.t).ok
    assert rig.core.command(CommandKind.POSITION, ["shoulder_yaw"], [float(q[0])]).ok
    targets = [rig.step().target[3] for _ in range(30)]  # type: ignore[attr-defined]
    assert targets[-1] == pytest.approx(float(q[3]) + 0.2)


# ---------------------------------------------------------------- answers that are true


def _torque(rig: Rig) -> list[bool]:
    return [rig.emulator.state(i).torque_enabled for i in START]


def test_estop_during_an_outage_says_the_bus_was_not_reached(rig: Rig) -> None:
    """safe_state hold, the port gone: the servos keep torque, and no e-stop reaches them.

    The e-stop latches ``estop`` but answers no success, naming the bus; the torque of
    that bus stays unknown (a second e-stop says the same) until the bus reconnects with
    torque off and a read confirms it.
    """
    rig.step()
    rig.enable()
    rig.proxy.vanish()
    rig.step()
    assert rig.backend.state is MotionState.FAULT
    req = rig.backend.estop()
    rig.backend.serve(rig.t)  # what the loop thread does when woken
    assert req.done
    assert rig.backend.state is MotionState.ESTOP
    assert not req.ok, req.message
    assert "'arm_bus' not reached" in req.message
    assert "watchdog" in req.message
    assert "NOT confirmed" in rig.backend.status().message
    assert all(_torque(rig))  # what the answer says: nothing reached the servos
    again = rig.backend.estop()
    rig.step()
    assert again.done
    assert not again.ok  # still unknown, not "off"
    rig.proxy.appear()
    rig.until(lambda: bool(rig.backend.status().measured.all()), limit=200)
    assert not any(_torque(rig))  # reopened with torque off
    status = rig.step()
    assert status.state is MotionState.ESTOP  # type: ignore[attr-defined]
    assert status.message == "emergency stop: torque off; enable to move again"  # type: ignore[attr-defined]
    confirmed = rig.backend.estop()
    rig.step()
    assert confirmed.ok, confirmed.message


def test_disable_during_an_outage_says_the_bus_was_not_reached(rig: Rig) -> None:
    rig.step()
    rig.enable()
    rig.proxy.vanish()
    rig.step()
    req = rig.backend.disable()
    rig.step()
    assert req.done
    assert not req.ok
    assert "'arm_bus' not reached" in req.message
    rig.proxy.appear()
    rig.until(lambda: bool(rig.backend.status().measured.all()), limit=200)
    assert not any(_torque(rig))
    confirmed = rig.backend.disable()
    rig.step()
    assert confirmed.ok, confirmed.message


@pytest.mark.parametrize(("safe_state", "after"), [("hold", MotionState.HOLDING),
                                                   ("torque_off", MotionState.DISABLED)])
def test_clear_faults_never_switches_torque_on_even_with_auto_resume(
        tmp_path: Path, emulators: SharedEmulator, safe_state: str, after: MotionState,
) -> None:
    """auto_resume is for a bus failure and its reconnection, not for a device fault."""
    rig = Rig(tmp_path, emulators, safe_state=safe_state, auto_resume=True)
    try:
        rig.step()
        rig.enable()
        rig.emulator.inject_fault(3, 0x20)  # elbow: overload
        rig.until(lambda: rig.backend.state is MotionState.FAULT, limit=20)
        torque = _torque(rig)  # hold: the others keep holding; torque_off: all off
        writes = {i: len(rig.emulator.torque_writes(i)) for i in START}
        req = rig.backend.clear_faults()
        rig.step()
        assert req.ok, req.message
        rig.step(20)
        assert rig.backend.state is after
        assert _torque(rig) == torque
        assert not rig.emulator.state(3).torque_enabled
        for i in START:  # not one Torque Enable = 1 since the fault
            assert 1 not in [v for _, v in rig.emulator.torque_writes(i)[writes[i]:]]
        assert not rig.core.command(CommandKind.POSITION, ["elbow"], [0.0]).ok
        rig.enable()  # an enable moves again
        assert all(_torque(rig))
    finally:
        rig.close()


def test_enable_while_enabled_changes_nothing(rig: Rig) -> None:
    """A second enable while moving: the targets go on, the trajectory too."""
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    rig.step()
    rig.enable()
    q0 = float(rig.backend.status().target[3])
    traj = PointTrajectory(["wrist"], [TrajectoryPoint(0.5, (q0 + 0.4,))], start_positions=[q0])
    observer = _Observer()
    rig.core.follow(traj, rig.t, observer)
    assert rig.core.command(CommandKind.POSITION, ["elbow"], [2.0]).ok  # > 20 cycles away
    targets = [rig.step().target.copy() for _ in range(10)]  # type: ignore[attr-defined]
    req = rig.backend.enable()
    targets += [rig.step().target.copy() for _ in range(10)]  # type: ignore[attr-defined]
    steps = np.diff(np.array(targets)[:, 2:4], axis=0)
    assert (steps > 0).all()  # elbow and wrist never jump back to the measured positions
    assert observer.ends == []  # the trajectory goes on
    assert req.done
    assert req.ok, req.message
    assert "already enabled" in req.message
    assert rig.backend.state is MotionState.ENABLED
    rig.step(40)
    assert rig.backend.status().target[3] == pytest.approx(q0 + 0.4)


def test_actuator_diagnostics_say_their_own_torque(rig: Rig) -> None:
    """After clear_faults under hold: the recovered servo has torque off, the others on."""
    rig.step()
    rig.enable()
    rig.emulator.inject_fault(3, 0x20)
    rig.until(lambda: rig.backend.state is MotionState.FAULT, limit=20)
    req = rig.backend.clear_faults()
    rig.step()
    assert req.ok, req.message
    assert rig.backend.state is MotionState.HOLDING
    status = rig.step(10)  # past the diagnostics' refresh period
    actuators = {a.name: a for a in status.actuators}  # type: ignore[attr-defined]
    assert not rig.emulator.state(3).torque_enabled
    assert actuators["elbow"].torque_enabled is False
    assert actuators["elbow"].message == "torque off"
    for name in ("shoulder_yaw", "shoulder_pitch", "wrist"):
        assert actuators[name].torque_enabled is True
        assert actuators[name].message == "torque on"


def _torque_off_fails_bus(spec: object, actuators: Sequence[ActuatorSpec],
                          clock: object) -> object:
    """A bus whose torque-off times out on demand (what the device receives is logged)."""
    from skel_ros.hardware.base import ActuatorBus, ActuatorState
    from skel_ros.hardware.errors import TransportTimeoutError

    class Bus(ActuatorBus):
        protocol = "dynamixel"

        def __init__(self, *args: object) -> None:
            super().__init__(*args)  # type: ignore[arg-type]
            self.torque = False
            self.fail_torque_off = False
            self.log: list[tuple[str, bool]] = []

        def open(self, *, keep_torque: bool = False) -> None:
            self.log.append(("open", keep_torque))
            self.torque = self.torque and keep_torque

        def close(self, *, torque_off: bool = True) -> None:
            self.log.append(("close", torque_off))
            self.torque = self.torque and not torque_off

        def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: ARG002
            if not enabled and self.fail_torque_off:
                raise TransportTimeoutError("no answer to Torque Enable = 0")
            self.torque = enabled

        def write(self, commands: object) -> None:  # noqa: ARG002
            self.log.append(("write", self.torque))

        def read(self) -> dict[int, ActuatorState]:
            return {a.id: ActuatorState(position=0.0, velocity=0.0, effort=0.0,
                                        torque_enabled=self.torque)
                    for a in self.actuators}

        def clear_faults(self, ids: Sequence[int] | None = None) -> dict[int, str]:  # noqa: ARG002
            return {}

    return Bus(spec, actuators, clock)


@pytest.mark.parametrize("stop", ["estop", "disable"])
def test_a_failed_torque_off_is_never_kept_holding(stop: str) -> None:
    """Before: an e-stop (or disable) whose Torque Enable = 0 timed out under safe_state
    hold closed the bus keeping torque, reopened it keeping torque and drove the servos
    on while ESTOP; now the bus is closed with torque off and reopened with torque off."""
    made: list[Any] = []

    def factory(spec: object, actuators: Sequence[ActuatorSpec], clock: object) -> object:
        made.append(_torque_off_fails_bus(spec, actuators, clock))
        return made[-1]

    bound = parse_hardware_config(CONFIG.format(safe_state="hold", auto_resume="false",
                                                port="/dev/null", baud=1_000_000,
                                                reply_timeout=REPLY_TIMEOUT),
                                  "t.yaml").bind(load_skel(ARM).skeletons[0])
    now = [0.0]
    manager = HardwareBackend(bound, clock=lambda: now[0], bus_factory=factory)

    def step(n: int = 1) -> None:
        for _ in range(n):
            now[0] += 0.01
            manager.step(now[0])

    step(2)
    enabled = manager.enable()  # requests are answered by the loop's next step
    step()
    assert enabled.ok, enabled.message
    bus = made[-1]
    bus.fail_torque_off = True
    answer = manager.estop() if stop == "estop" else manager.disable()
    step()
    assert not answer.ok  # not confirmed on the wire
    assert ("close", True) in bus.log  # closed with torque off, not kept holding
    bus.fail_torque_off = False
    bus.log.clear()
    step(30)  # reconnected
    assert not bus.torque
    assert ("open", True) not in bus.log
    assert [entry for entry in bus.log if entry == ("write", True)] == []
