"""More paths of the hardware backend, checked on the wire, in the status and diagnostics.

Each test states one behaviour of :class:`~skel_ros.hardware.HardwareBackend` that
mutation testing (bench/mutation.py, target ``backend``) showed no test pinned: what a
reading and a request say before the loop ran, the status's stamp and the diagnostics'
protocol, error code and period, a wake without a new command writing nothing, the reads
an enable repeats, the position tolerance of an enable, a reconnection that waits for a
fresh read, a write that fails, a velocity command, a follower's velocity, a disable's
answer, ``clear_faults`` with every bus open, the limiter's time step, reads that bring no
state, a device fault that ``auto_resume`` does not undo, an enable whose torque on fails,
the DOFs the re-enable bound slows, a drive's temperature, the enable's time as the
limiter's first time step and the command timeout's start, a device error in an enable's
reads counted against its drive, a read without the drive's state, a bus reopened during an
e-stop, the diagnostics kept between two snapshots, and, over two buses, a torque off that
fails on the second one, an e-stop that reaches neither bus, the remaining faults of a
``clear_faults``, the error an enable names, the backend's own command timeout and a drive
fault that stops the targets of its bus only; and, on a Dynamixel bus, servos whose hardware
errors cut their torque getting no goal until an enable.

The rigs: :mod:`cia402_rig` (the wrist on an emulated CiA 402 drive, one manual clock, a
bus analyser), and here two buses of one drive each, and the gripper's two fingers; the
Dynamixel arm of :mod:`test_manager` (its emulator process, a stepped clock).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from cia402_rig import ARM, NODE, START, WRIST_VELOCITY, Rig

from skel_ros.emulation.canopen402 import start_emulator
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.hardware.errors import DeviceError, TransportError, TransportTimeoutError
from skel_ros.model import load_model, load_skel
from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

REPO = Path(__file__).resolve().parents[2]
GRIPPER = REPO / "examples" / "gripper_arm.urdf"
FAULT_CODE = 0x2310  # the emulator's default fault: over-current
TOLERANCE = 0.02  # the backend's ENABLE_TOLERANCE (rad), written out: the test states it


def _inject(driver: Any, method: str, errors: Sequence[Exception | None],
            monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's next calls of ``method`` raise ``errors`` in order (None: the real call),
    then it works again."""
    real = getattr(driver, method)
    left = list(errors)

    def call(*args: Any, **kwargs: Any) -> Any:
        error = left.pop(0) if left else None
        if error is not None:
            raise error
        return real(*args, **kwargs)

    monkeypatch.setattr(driver, method, call)


def _reporting(driver: Any, changes: Sequence[dict[str, Any] | None],
               monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver's next reads report ``changes`` to every device's state in order (None:
    nothing read; ``{}``: the state as read), then the states as read."""
    real = driver.read
    left = list(changes)

    def read() -> Any:
        states = real()
        if not left:
            return states
        change = left.pop(0)
        return {} if change is None else {i: replace(st, **change) for i, st in states.items()}

    monkeypatch.setattr(driver, "read", read)


def _late() -> TransportTimeoutError:
    return TransportTimeoutError("no answer within 50 ms (injected)")


def _unplugged() -> TransportError:
    return TransportError("CAN adapter unplugged (injected)")


# ------------------------------------------------------------------ one bus


def test_before_the_first_cycle_nothing_is_measured_and_a_request_is_not_ok(rig: Rig) -> None:
    """Before the loop's first cycle the reading has no stamp, no values and every DOF not
    fresh (a bool per DOF), and a request not answered yet is ``ok`` False (a bool, as a
    service response carries it)."""
    reading = rig.core.read()
    assert math.isnan(reading.stamp)
    assert math.isnan(rig.backend.status().read_stamp)
    assert np.isnan(reading.positions).all()
    assert reading.fresh.dtype == bool
    assert not reading.fresh.any()
    request = rig.backend.enable()
    assert request.ok is False
    assert not request.done


def test_the_status_is_stamped_and_the_bus_diagnostics_name_the_protocol(rig: Rig) -> None:
    rig.enable()
    status = rig.cycle()
    assert status.stamp == rig.t
    assert status.read_stamp == rig.t
    (bus,) = status.buses
    assert (bus.name, bus.protocol, bus.connected) == ("b", "canopen", True)


def test_a_drive_in_fault_is_named_by_its_error_code_in_the_diagnostics(rig: Rig) -> None:
    rig.enable()
    rig.emulator.inject_fault(NODE)
    rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=20)
    (wrist,) = rig.backend.status().actuators
    assert wrist.error_code == FAULT_CODE
    assert wrist.fault


def test_diagnostics_50_ms_old_are_refreshed(rig: Rig) -> None:
    """The diagnostics are a snapshot refreshed every 50 ms (they allocate) and when the
    state changes: a status made 50 ms after the last snapshot carries a new one (here:
    the moving wrist's position)."""
    rig.cycle()
    request = rig.backend.enable()
    # Cycles at chosen times: 0.1 - 0.05 is 0.05 to the last bit (from about 0.07 s on
    # no difference of two clock times is).
    t0, t1 = 0.05, 0.1
    assert t1 - t0 == 0.05  # the test's premise
    rig.t = t0
    rig.runner.cycle()  # enabled: a new snapshot at t0
    assert request.ok, request.message
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [1.5]).ok
    for t in (t0 + 0.02, t0 + 0.04, t1):
        rig.t = t
        rig.runner.cycle()
    status = rig.backend.status()
    (wrist,) = status.actuators
    assert status.position[rig.index] > START + 1e-3  # it moved since t0
    assert wrist.position == status.position[rig.index]


def test_a_wake_without_a_new_command_writes_nothing(rig: Rig) -> None:
    """The loop woken between two cycles by a request, with no new command, answers it and
    writes no target: the motion's targets go out once a cycle."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.5]).ok
    rig.cycle()
    rig.cycle()
    rig.sent()
    request = rig.backend.enable()  # already enabled: nothing changes
    rig.serve()
    assert request.ok, request.message
    assert rig.sent() == []
    rig.cycle()
    assert len(rig.sent()) == 1


def test_an_enable_reads_a_bus_that_missed_its_read_three_times_in_all(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An enable whose cycle missed the bus's read reads it again, ENABLE_READ_ATTEMPTS (3)
    reads in all: two misses are forgiven, three refuse the enable (torque stays off)."""
    rig = Rig(fault_threshold=10)  # the misses stay below the bus's fault threshold
    try:
        assert rig.cycle().state is MotionState.DISABLED
        driver = rig.backend._slots[0].driver
        _inject(driver, "read", [_late(), _late(), _late()], monkeypatch)
        refused = rig.backend.enable()
        rig.cycle()
        assert refused.done
        assert not refused.ok
        assert refused.message == "cannot enable: no fresh measurement from bus 'b'"
        assert not rig.emulator.state(NODE).torque_enabled
        _inject(driver, "read", [_late(), _late()], monkeypatch)
        enabled = rig.backend.enable()
        rig.cycle()
        assert enabled.ok, enabled.message
        assert rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


@pytest.mark.parametrize(("bound", "limit"), [("upper", START - TOLERANCE / 2),
                                              ("lower", START + TOLERANCE / 2)])
def test_a_joint_resting_just_past_its_limit_is_enabled_and_held_at_it(
        bound: str, limit: float) -> None:
    """A joint measured outside its position limits by less than the enable's tolerance
    (sensor noise of a joint on its stop) is enabled, its target the limit itself."""
    rig = Rig(wrist=f", limits: {{position: {{{bound}: {limit!r}}}}}")
    try:
        rig.enable()
        assert rig.cycle().target[rig.index] == pytest.approx(limit, abs=1e-9)
        assert rig.sent()[-1] == pytest.approx(limit, abs=1e-4)
    finally:
        rig.close()


def test_a_reconnected_bus_waits_for_a_fresh_read_before_leaving_fault(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bus that failed is reopened; while its first read after that misses, the state
    stays ``fault`` (nothing fresh is known); the next good read settles it."""
    rig = Rig(safe_state="torque_off")
    try:
        rig.enable()
        _inject(rig.backend._slots[0].driver, "read", [_unplugged(), _late()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
        status = rig.backend.status()
        assert status.state is MotionState.FAULT
        assert not status.fresh
        status = rig.cycle()
        assert status.state is MotionState.DISABLED, status.message
    finally:
        rig.close()


def test_a_failing_write_closes_the_bus_which_is_reconnected_and_counted(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails at the transport closes the bus and reconnects it after its
    backoff (here twice: under ``hold`` the drive kept its torque and is written again);
    the diagnostics count the reconnections and say the write failed."""
    rig.enable()
    _inject(rig.backend._slots[0].driver, "write", [_unplugged(), _unplugged()], monkeypatch)
    status = rig.cycle()
    assert status.state is MotionState.FAULT
    assert not status.buses[0].connected
    assert status.buses[0].last_error == "write failed: CAN adapter unplugged (injected)"
    for _ in range(40):  # two backoffs of at most 0.1 s, and a few cycles more
        status = rig.cycle()
    assert status.buses[0].connected
    assert status.buses[0].reconnects == 2
    assert status.state is MotionState.HOLDING, status.message
    assert rig.emulator.state(NODE).torque_enabled


def test_a_velocity_command_reaches_the_drive() -> None:
    rig = Rig(mode="velocity")
    try:
        rig.enable()
        assert rig.core.command(CommandKind.VELOCITY, ["wrist"], [0.5]).ok
        for _ in range(20):
            rig.cycle()
        assert rig.emulator.state(NODE).velocity == pytest.approx(0.5, abs=0.05)
        assert rig.core.read().velocities[rig.index] == pytest.approx(0.5, abs=0.05)
    finally:
        rig.close()


def test_clear_faults_with_every_bus_connected_names_only_the_fault_left(rig: Rig) -> None:
    rig.enable()
    rig.emulator.inject_fault(NODE, persistent=True)
    rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=20)
    request = rig.backend.clear_faults()
    rig.cycle()
    assert not request.ok
    assert request.message == (f"still in fault: 'wrist': FAULT: error code {FAULT_CODE:#x}"
                               f" (EMCY {FAULT_CODE:#x} Current)")


def test_the_limiters_time_step_is_the_time_since_the_last_cycle(rig: Rig) -> None:
    """At the velocity limit, a cycle 1.5 periods after the last one moves the target 1.5
    periods' worth, one half a period after it half a period's worth."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [-1.5]).ok
    for _ in range(3):
        rig.cycle()
    last = rig.sent()[-1]
    for fraction in (1.5, 0.5, 1.0):
        rig.cycle(dt=fraction * rig.backend.period)
        (target,) = rig.sent()
        assert last - target == pytest.approx(
            fraction * rig.backend.period * WRIST_VELOCITY, abs=1e-4), fraction
        last = target


def test_a_drive_that_sends_no_state_three_times_fails_its_bus_which_comes_back(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads that bring no state from the drive are counted; at the bus's fault threshold
    (3) the bus is closed, and reopened after its backoff (0.05 s)."""
    rig.enable()
    _reporting(rig.backend._slots[0].driver, [None] * 3, monkeypatch)
    for _ in range(3):
        status = rig.cycle()
    assert status.state is MotionState.FAULT
    assert not status.buses[0].connected
    assert status.buses[0].last_error == "no state from id(s) [4]"
    failed = rig.t
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
    assert rig.t - failed == pytest.approx(0.05, abs=1.5 * rig.backend.period)
    rig.until(lambda: rig.backend.status().state is MotionState.HOLDING, limit=10)


def test_a_device_fault_gone_without_clear_faults_is_not_resumed_automatically(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto_resume`` is for a bus failure: a device fault while enabled (torque goes off)
    that the drive stops reporting on its own leaves torque off, waiting for an enable."""
    rig = Rig(safe_state="torque_off", auto_resume=True)
    try:
        rig.enable()
        _reporting(rig.backend._slots[0].driver,
                   [{"error_code": FAULT_CODE, "fault": "over-current"}], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        assert not rig.emulator.state(NODE).torque_enabled
        for _ in range(5):
            status = rig.cycle()
        assert status.state is MotionState.DISABLED, status.message
        assert not rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


def test_an_enable_whose_torque_on_fails_closes_the_bus_with_torque_off(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bus fails while an enable switches torque on: the enable is refused naming the
    bus, the bus is closed with torque off and reopened after its backoff, torque off."""
    assert rig.cycle().state is MotionState.DISABLED
    _inject(rig.backend._slots[0].driver, "set_torque", [_unplugged()], monkeypatch)
    request = rig.backend.enable()
    status = rig.cycle()
    assert not request.ok
    assert request.message == "cannot enable: bus 'b': CAN adapter unplugged (injected)"
    assert status.state is MotionState.FAULT
    assert not status.buses[0].connected
    rig.until(lambda: rig.backend.status().state is MotionState.DISABLED, limit=30)
    assert not rig.emulator.state(NODE).torque_enabled


def test_the_status_names_the_dofs_the_reenable_bound_slows_while_enabled() -> None:
    """``reenable_velocity: 0.5``: after an enable the wrist's far goal is approached at half
    its velocity limit, and the status names it; a disable, its torque off confirmed, is
    answered "torque off", and then nothing is slowed."""
    rig = Rig(reenable_velocity=0.5)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [-1.5]).ok
        for _ in range(3):
            status = rig.cycle()
        a, b = rig.sent()[-2:]
        assert a - b == pytest.approx(0.5 * WRIST_VELOCITY * rig.backend.period, abs=1e-4)
        assert status.reenable_bounded == ("wrist",)
        request = rig.backend.disable()
        status = rig.cycle()
        assert (request.ok, request.message) == (True, "torque off")
        assert not rig.emulator.state(NODE).torque_enabled
        assert status.state is MotionState.DISABLED
        assert status.reenable_bounded == ()
    finally:
        rig.close()


def test_the_diagnostics_carry_the_temperature_a_drive_reports(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    rig.cycle()
    assert rig.backend.status().actuators[0].temperature is None  # CiA 402: not reported
    _reporting(rig.backend._slots[0].driver, [{"temperature": 41.5}] * 20, monkeypatch)
    for _ in range(6):  # past the diagnostics' 50 ms period
        rig.cycle()
    assert rig.backend.status().actuators[0].temperature == 41.5


def test_the_first_step_after_an_enable_is_timed_from_the_enable(rig: Rig) -> None:
    """The motion limiter's first time step after an enable runs from the enable, not from
    the last step before the disable: an enable served between two cycles, then a far
    command served 0.4 period later, moves the target 0.4 period's worth at the velocity
    limit (one step computed from an older time would move up to twice a period's)."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
    for _ in range(3):
        rig.cycle()
    disable = rig.backend.disable()
    for _ in range(5):  # the last step's time is now 0.05 s old
        rig.cycle()
    assert disable.ok, disable.message
    enable = rig.backend.enable()
    rig.t += 0.3 * rig.backend.period
    rig.backend.serve(rig.t)  # the loop, woken by the enable between two cycles
    assert enable.ok, enable.message
    held = rig.sent()[-1]  # the enable writes the measured position
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [-1.5]).ok
    rig.t += 0.4 * rig.backend.period
    rig.backend.serve(rig.t)
    (target,) = rig.sent()
    assert held - target == pytest.approx(0.4 * rig.backend.period * WRIST_VELOCITY, abs=1e-4)


@pytest.mark.parametrize("safe_state", ["hold", "torque_off"])
def test_the_command_timeout_counts_from_the_enable_on_the_backends_clock(
        safe_state: str, caplog: pytest.LogCaptureFixture) -> None:
    """An enable starts the command timeout (0.05 s) at its own time on the backend's
    clock: enabled between two cycles (at 0.015 s) and never commanded, the robot is still
    enabled at 0.06 s and gets the safe state at the first cycle from 0.065 s on, said in
    the status and the log."""
    rig = Rig(safe_state=safe_state, command_timeout=0.05)
    try:
        rig.t = 0.0
        assert rig.cycle().state is MotionState.DISABLED  # at 0.01 s
        request = rig.backend.enable()
        rig.t = 0.015
        rig.backend.serve(rig.t)
        assert request.ok, request.message
        rig.t = 0.06 - rig.backend.period
        status = rig.cycle()  # at 0.06 s
        assert (status.state, status.watchdog_tripped) == (MotionState.ENABLED, False)
        assert rig.emulator.state(NODE).torque_enabled
        caplog.clear()
        status = rig.cycle()  # at 0.07 s
        assert status.watchdog_tripped
        warnings = [r.getMessage() for r in caplog.records
                    if r.name == "skel_ros.hardware" and r.levelname == "WARNING"]
        if safe_state == "hold":
            assert status.state is MotionState.ENABLED
            assert status.message == "no command for 0.05 s: holding position"
            assert warnings == ["no command for 0.05 s: holding position"]
            assert rig.emulator.state(NODE).torque_enabled
        else:
            assert status.state is MotionState.DISABLED
            assert status.message == "no command for 0.05 s: torque off; enable to move again"
            assert warnings == ["no command for 0.05 s: torque off"]
            assert not rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


def test_a_device_error_in_an_enables_reads_is_counted_against_its_actuator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle's read misses the drive (a timeout: counted on the bus only); the enable
    reads it again and the drive answers with an error of its own: that error is counted
    on the bus and against the wrist's drive, the bus fails (a device error is hard) and
    the enable is refused naming the error (torque stays off)."""
    rig = Rig(fault_threshold=10)  # the timeout alone does not fail the bus
    try:
        assert rig.cycle().state is MotionState.DISABLED
        _inject(rig.backend._slots[0].driver, "read",
                [_late(), DeviceError("drive 4: under-voltage (injected)", NODE)], monkeypatch)
        request = rig.backend.enable()
        status = rig.cycle()
        assert not request.ok
        assert request.message == ("cannot enable: bus 'b' is not connected (drive 4:"
                                   " under-voltage (injected))")
        assert not rig.emulator.state(NODE).torque_enabled
        (bus,) = status.buses
        (wrist,) = status.actuators
        assert dict(bus.errors) == {"timeout": 1, "protocol": 0, "transport": 0, "device": 1}
        assert dict(wrist.errors) == {"timeout": 0, "protocol": 0, "transport": 0, "device": 1}
    finally:
        rig.close()


def test_a_read_without_a_drives_state_leaves_its_joint_unmeasured(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that brings no state from the drive (below the fault threshold: the bus
    stays up) leaves the wrist not measured in that cycle, in the reading and the status,
    never its last position as a fresh one; the next good read measures it again."""
    rig.enable()
    assert rig.core.read().fresh[rig.index]
    _reporting(rig.backend._slots[0].driver, [None], monkeypatch)
    status = rig.cycle()
    assert not rig.core.read().fresh[rig.index]
    assert not status.measured[rig.index]
    assert not status.fresh
    assert status.state is MotionState.ENABLED
    status = rig.cycle()
    assert rig.core.read().fresh[rig.index]
    assert status.measured[rig.index]


def test_a_bus_reopened_during_an_estop_confirms_its_torque_off(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """An e-stop while the bus is down cannot confirm the torque off; the bus reopened
    with torque off, its first read confirms it: the e-stop's message says so and the log
    says the bus came back with torque off."""
    rig.enable()
    _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
    assert not rig.cycle().buses[0].connected
    request = rig.backend.estop()
    rig.backend.serve(rig.t)
    assert not request.ok
    assert "torque off NOT confirmed" in request.message
    caplog.clear()
    rig.until(lambda: rig.backend.status().fresh, limit=30)
    status = rig.backend.status()
    assert status.state is MotionState.ESTOP
    assert status.message == "emergency stop: torque off; enable to move again"
    assert not rig.emulator.state(NODE).torque_enabled
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "bus 'b': reconnected (failure 1 in a row)",
        "bus 'b': reconnected with torque off (emergency stop)"]


def test_the_diagnostics_are_rebuilt_every_50_ms_not_every_cycle(rig: Rig) -> None:
    """While no state or bus health changes, the diagnostics (they allocate) are rebuilt
    every 50 ms: at 100 Hz a new snapshot every fifth cycle (sixth, where the clock's
    sums fall a last bit short of 50 ms); the statuses in between carry the last one."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [1.5]).ok
    last = rig.cycle().actuators
    rebuilt = []
    for n in range(1, 25):
        status = rig.cycle()
        if status.actuators is not last:
            rebuilt.append(n)
            last = status.actuators
    gaps = np.diff(rebuilt)
    assert len(rebuilt) >= 3
    assert set(gaps) <= {5, 6}, rebuilt


# ------------------------------------------------------------------ two buses

TWO_BUSES = """\
control_rate: 100.0
command_timeout: 0.0
fault_threshold: 3
device_watchdog: 0.0
safe_state: {safe_state}
reconnect: {{initial_delay: 0.05, max_delay: 0.1, factor: 2.0}}
buses:
  b: {{protocol: canopen, transport: {{interface: virtual, channel: x}},
      options: {{sync_timeout: 0.5, heartbeat_ms: 0}}}}
  c: {{protocol: canopen, transport: {{interface: virtual, channel: y}},
      options: {{sync_timeout: 0.5, heartbeat_ms: 0}}}}
joints:
  wrist: {{bus: b, id: 4, options: {{counts_per_rev: 131072}}}}
  shoulder_yaw: {{bus: c, id: 5, options: {{counts_per_rev: 131072}}}}
"""


class TwoBuses:
    """The wrist on bus ``b`` and the shoulder's yaw on bus ``c``, each its own drive."""

    def __init__(self, safe_state: str, **backend: Any) -> None:
        """``backend``: more arguments of the backend (the YAML's overrides)."""
        self.t = 0.0
        config = parse_hardware_config(TWO_BUSES.format(safe_state=safe_state), "two.yaml")
        self.emulators = {}
        for bus, node in (("b", 4), ("c", 5)):
            self.emulators[bus] = start_emulator(
                {}, [m.actuator for m in config.joints if m.bus == bus],
                {"clock": lambda: self.t, "initial_positions": {node: START}})
            config = config.with_transport(bus, self.emulators[bus].transport)
        self.backend = HardwareBackend(config.bind(load_skel(ARM).skeletons[0]),
                                       clock=lambda: self.t,
                                       **{"reenable_velocity": 1.0, **backend})
        self.runner = hardware_runner(self.backend)
        self.drivers = {s.spec.name: s.driver for s in self.backend._slots}

    def cycle(self) -> Any:
        self.t += self.backend.period
        self.runner.cycle()
        return self.backend.status()

    def until(self, predicate: Callable[[], bool], limit: int = 60) -> None:
        for _ in range(limit):
            self.cycle()
            if predicate():
                return
        raise AssertionError(f"not reached in {limit} cycles: {self.backend.status().message}")

    def enable(self) -> None:
        self.until(lambda: self.backend.state is MotionState.DISABLED)
        request = self.backend.enable()
        self.cycle()
        assert request.ok, request.message

    def torque(self, bus: str) -> bool:
        return self.emulators[bus].state(4 if bus == "b" else 5).torque_enabled

    def close(self) -> None:
        self.runner.cleanup()
        for emulator in self.emulators.values():
            emulator.stop()


def test_a_fault_whose_torque_off_fails_on_another_bus_closes_that_bus_too(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: torque_off``: bus ``b`` fails, and switching torque off on ``c`` fails
    as well: ``c`` is closed with torque off on the wire, and both are reconnected after
    their backoff (torque off, waiting for an enable)."""
    two = TwoBuses("torque_off")
    try:
        two.enable()
        _inject(two.drivers["b"], "read", [_unplugged()], monkeypatch)
        _inject(two.drivers["c"], "set_torque", [_unplugged()], monkeypatch)
        status = two.cycle()
        assert status.state is MotionState.FAULT
        assert [b.connected for b in status.buses] == [False, False]
        assert status.buses[1].last_error == "torque off failed: CAN adapter unplugged (injected)"
        assert not two.torque("b")
        assert not two.torque("c")
        two.until(lambda: two.backend.status().state is MotionState.DISABLED)
        assert [b.connected for b in two.backend.status().buses] == [True, True]
    finally:
        two.close()


def test_clear_faults_names_a_fault_left_and_a_bus_not_connected(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A drive whose fault persists on ``b`` while ``c`` cannot be reopened: clear_faults
    says both, and an enable names the closed bus with its own error."""
    two = TwoBuses("hold")
    try:
        two.enable()
        open_c = two.drivers["c"].open
        _inject(two.drivers["c"], "read", [_unplugged()], monkeypatch)
        _inject(two.drivers["c"], "open", [_unplugged()] * 100, monkeypatch)
        two.emulators["b"].inject_fault(4, persistent=True)
        two.until(lambda: not two.backend.status().buses[1].connected
                  and two.backend.status().actuators[0].error_code != 0)
        request = two.backend.clear_faults()
        two.cycle()
        assert not request.ok
        assert request.message.startswith(f"still in fault: 'wrist': FAULT: error code"
                                          f" {FAULT_CODE:#x}")
        assert request.message.endswith("; bus(es) not connected: c")
        enable = two.backend.enable()
        two.cycle()
        assert not enable.ok
        assert enable.message == ("cannot enable: bus 'c' is not connected (CAN adapter"
                                  " unplugged (injected))")
        assert not two.backend.status().fresh  # a closed bus measured nothing
        monkeypatch.setattr(two.drivers["c"], "open", open_c)  # it can be reached again
        two.until(lambda: two.backend.status().buses[1].connected)
    finally:
        two.close()


def test_a_drive_fault_stops_the_targets_of_its_bus_only_and_ends_in_holding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: hold``: the drive on ``b`` faults (its torque goes off), the one on
    ``c`` keeps holding. From then on only ``c`` gets targets; after ``clear_faults`` the
    state is ``holding`` (``c``'s drive holds), saying no actuator reports a fault any more
    (no bus reconnected), and ``b`` gets a target again only from the enable on."""
    two = TwoBuses("hold")
    try:
        two.enable()
        writes = {"b": 0, "c": 0}
        for bus, driver in two.drivers.items():
            def counted(commands: Any, bus: str = bus, write: Any = driver.write) -> None:
                writes[bus] += 1
                write(commands)

            monkeypatch.setattr(driver, "write", counted)
        two.emulators["b"].inject_fault(4)
        two.until(lambda: two.backend.status().state is MotionState.FAULT)
        writes.update(b=0, c=0)
        for _ in range(3):
            two.cycle()
        assert writes == {"b": 0, "c": 3}
        request = two.backend.clear_faults()
        status = two.cycle()
        assert request.ok, request.message
        assert (status.state, status.message) == (
            MotionState.HOLDING,
            ("no actuator reports a fault any more; torque on where the devices kept it:"
             " enable to move"))
        assert (two.torque("b"), two.torque("c")) == (False, True)
        writes.update(b=0, c=0)
        for _ in range(5):
            two.cycle()
        assert writes == {"b": 0, "c": 5}
        request = two.backend.enable()
        two.cycle()
        assert request.ok, request.message
        assert writes["b"] > 0
        assert two.torque("b")
    finally:
        two.close()


def test_an_estop_that_reaches_no_bus_names_each_and_what_stops_its_servos(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both buses fail in one cycle (holding), then an e-stop: its answer names each bus
    not reached, its error, that its torque is unknown and that no device watchdog stops
    its servos (``device_watchdog: 0``), one bus after the other."""
    two = TwoBuses("hold")
    try:
        two.enable()
        for driver in two.drivers.values():
            _inject(driver, "read", [_unplugged()], monkeypatch)
        status = two.cycle()
        assert [b.connected for b in status.buses] == [False, False]
        request = two.backend.estop()
        two.backend.serve(two.t)
        assert not request.ok
        lost = ("not reached (CAN adapter unplugged (injected)): its torque is unknown; no"
                " device watchdog is armed (device_watchdog: 0): nothing stops them; torque"
                " goes off when it reconnects")
        assert request.message == (f"emergency stop: torque off NOT confirmed: bus 'b' {lost};"
                                   f" bus 'c' {lost}; enable to move again")
        assert two.backend.status().state is MotionState.ESTOP
    finally:
        two.close()


def test_the_command_timeout_argument_is_used_over_the_yamls() -> None:
    """The YAML says no command timeout (0); the backend's argument 0.05 s is the one the
    core counts: without a command for 0.05 s the targets are held and the status says so."""
    two = TwoBuses("hold", command_timeout=0.05)
    try:
        assert two.backend.bound.config.command_timeout == 0.0
        two.enable()
        assert two.runner.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        two.until(lambda: "no command" in two.backend.status().message, limit=20)
        assert two.backend.status().message == "no command for 0.05 s: holding position"
    finally:
        two.close()


# ------------------------------------------------------------------ a follower


FINGERS = """\
control_rate: 100.0
command_timeout: 0.0
device_watchdog: 0.0
reenable_velocity: 1.0
buses:
  b: {protocol: canopen, transport: {interface: virtual, channel: x},
      options: {sync_timeout: 0.5, heartbeat_ms: 0}}
joints:
  finger_left: {bus: b, id: 3, mode: velocity, options: {counts_per_rad: 100000}}
  finger_right: {bus: b, id: 4, mode: velocity, options: {counts_per_rad: 100000}}
"""


def test_a_followers_velocity_is_its_leaders_by_the_mimic_rule() -> None:
    """Velocity mode: the gripper's right finger (mimic of the left, multiplier -1) is
    commanded minus the left finger's velocity."""
    t = [0.0]
    config = parse_hardware_config(FINGERS, "fingers.yaml")
    emulator = start_emulator({}, [m.actuator for m in config.joints],
                              {"clock": lambda: t[0]})
    config = config.with_transport("b", emulator.transport)
    backend = HardwareBackend(config.bind(load_model(GRIPPER).skeletons[0]),
                              clock=lambda: t[0])
    runner = hardware_runner(backend)
    try:
        def cycle() -> None:
            t[0] += backend.period
            runner.cycle()

        for _ in range(20):
            cycle()
            if backend.state is MotionState.DISABLED:
                break
        request = backend.enable()
        cycle()
        assert request.ok, request.message
        assert runner.core.command(CommandKind.VELOCITY, ["finger_left"], [0.02]).ok
        for _ in range(20):
            cycle()
        assert emulator.state(3).velocity == pytest.approx(0.02, abs=0.002)
        assert emulator.state(4).velocity == pytest.approx(-0.02, abs=0.002)
    finally:
        runner.cleanup()
        emulator.stop()


# ------------------------------------------------------------------ a Dynamixel bus


def test_servos_whose_hardware_errors_cut_their_torque_get_no_goal_until_an_enable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: hold`` on the Dynamixel arm (:mod:`test_manager`'s rig): every servo
    reports an overload, which cuts its torque. From then on the backend hands the driver
    no goal, and after ``clear_faults`` (the Reboot, torque stays off) it is ``disabled``,
    saying an enable is needed, still handing over nothing until that enable.

    Before: the bus's torque stayed as the backend set it: goals went out every cycle and
    ``clear_faults`` ended in ``holding`` ("torque on where the devices kept it").
    """
    from test_manager import START as SERVOS
    from test_manager import Rig as DynamixelRig
    from test_manager import SharedEmulator

    emulators = SharedEmulator()
    rig = DynamixelRig(tmp_path, emulators)
    try:
        rig.step()
        rig.enable()
        writes: list[int] = []
        driver = rig.backend._slots[0].driver
        write = driver.write

        def counted(commands: Any) -> None:
            writes.append(len(commands))
            write(commands)

        monkeypatch.setattr(driver, "write", counted)
        for i in SERVOS:
            rig.emulator.inject_fault(i, 0x20)  # Hardware Error Status: overload
        rig.until(lambda: all(a.error_code for a in rig.backend.status().actuators),
                  limit=50)
        assert not any(rig.emulator.state(i).torque_enabled for i in SERVOS)
        writes.clear()
        rig.step(3)
        assert writes == []  # no servo has torque: nothing to hold
        request = rig.backend.clear_faults()
        status = rig.step()
        assert request.ok, request.message
        assert (status.state, status.message) == (  # type: ignore[attr-defined]
            MotionState.DISABLED,
            "no actuator reports a fault any more; torque off: enable to move again")
        rig.step(5)
        assert writes == []
        assert not any(rig.emulator.state(i).torque_enabled for i in SERVOS)
        rig.enable()
        assert writes  # the enable's goals (the measured positions), then every cycle's
        assert all(rig.emulator.state(i).torque_enabled for i in SERVOS)
    finally:
        rig.close()
        emulators.close()


def test_devices_that_switch_torque_off_without_a_fault_stop_the_motion(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The drive on ``b`` reports torque off but no fault (a power loss it came back from,
    a reset by hand) while enabled: motion stops (``torque_off``: every bus off, the state
    ``disabled``), the status says why, naming the bus; ``b`` gets no target; an enable
    moves again. Before, the state kept saying ``enabled`` while ``b`` got nothing, and an
    enable answered "already enabled"."""
    two = TwoBuses("torque_off")
    try:
        two.enable()
        writes = {"b": 0}
        driver = two.drivers["b"]

        def counted(commands: Any, write: Any = driver.write) -> None:
            writes["b"] += 1
            write(commands)

        monkeypatch.setattr(driver, "write", counted)
        _reporting(driver, [{"torque_enabled": False}] * 6, monkeypatch)
        status = two.cycle()
        assert (status.state, status.message) == (
            MotionState.DISABLED,
            ("bus 'b': wrist switched torque off without reporting a fault (a power loss? a"
             " reset?): enable to move again"))
        assert not two.torque("c")
        writes["b"] = 0
        for _ in range(3):
            two.cycle()
        assert writes["b"] == 0
        request = two.backend.enable()
        two.until(lambda: request.done)
        assert request.ok, request.message
        assert two.backend.status().state is MotionState.ENABLED
        assert writes["b"] > 0
    finally:
        two.close()
