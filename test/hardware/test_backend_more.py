"""Still more paths of the hardware backend, checked on the wire, in the status and the log.

Each test states one behaviour of :class:`~skel_ros.hardware.HardwareBackend` that
mutation testing (bench/mutation.py, target ``backend``) showed no test pinned: the
efforts before anything is known, what ``close`` leaves, a cycle's write right after a
command written at once, ``step`` with and without a time, a backoff that grows while a
reopened bus keeps failing, an enable whose torque on times out, an enable refused while a
position is unknown, an enable whose reads fail the bus, ``auto_resume`` after the command
timeout disabled the robot, a write that times out, a ``clear_faults`` the driver fails, a
``clear_faults`` waited for, an e-stop before the first cycle, a disable's status, torque
lost with no fault, a stale effort in the diagnostics, a bus reopened holding (its
joints restart inside their limits, the other bus's targets stay where they were); and, from
a later sample: an enable's answers, ``activate``'s refusal, a drive fault's log line, the
command timeout's one line, a reopened bus's count of missed reads, torque offs that fail
after a failed enable and after a drive fault, an e-stop naming the device watchdog, and
an enable that reads again only the bus that missed; and, from a third: a hold on the wire
(and a leader's held follower), a command woken too soon after a cycle's write, a reopening's
log lines, a disable ending the trajectory, clear_faults' log, a drive fault as the bus's
last error, "no data yet", and an enable the loop does not answer.

The rigs: :mod:`cia402_rig` (the wrist on an emulated CiA 402 drive, one manual clock, a
bus analyser) and :mod:`test_backend_gaps`' two buses of one drive each.
"""

from __future__ import annotations

import logging
import math
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from cia402_rig import NODE, START, Rig
from test_backend_gaps import TwoBuses, _inject, _late, _reporting, _unplugged

from skel_ros.core import FollowOutcome
from skel_ros.hardware import MotionState
from skel_ros.hardware.config import ReconnectPolicy
from skel_ros.hardware.diagnostics import Level
from skel_ros.hardware.errors import HardwareError
from skel_ros.model.limits import CommandKind
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from pathlib import Path

LOGGER = "skel_ros.hardware"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno == logging.WARNING]


# ------------------------------------------------------------------ the status


def test_before_anything_is_read_the_efforts_are_unknown_numbers(rig: Rig) -> None:
    """Before the first read the status's positions, velocities and efforts are NaN, as
    floats (a message's float arrays carry them), and so is an effort after it."""
    status = rig.backend.status()
    for values in (status.position, status.velocity, status.effort):
        assert values.dtype == np.float64
        assert np.isnan(values).all()
    status = rig.cycle()
    assert status.effort.dtype == np.float64


def test_close_switches_torque_off_says_stopped_and_answers_what_waits(rig: Rig) -> None:
    """``close`` (the loop has stopped): torque off on the drive, the bus not connected in
    the diagnostics, the state ``offline`` saying "stopped", and a request still waiting
    answered (not ok)."""
    rig.enable()
    waiting = rig.backend.disable()
    rig.backend.close()
    assert not rig.emulator.state(NODE).torque_enabled
    status = rig.backend.status()
    assert (status.state, status.message) == (MotionState.OFFLINE, "stopped")
    (bus,) = status.buses
    assert (bus.connected, bus.level) == (False, Level.ERROR)
    assert (waiting.done, waiting.ok, waiting.message) == (
        True, False, "the hardware backend closed")


def test_step_runs_a_cycle_at_the_clocks_time_or_at_the_time_given(rig: Rig) -> None:
    """``step()`` (no core's loop) runs one cycle stamped with the backend's clock;
    ``step(now)`` one stamped ``now``."""
    rig.t = 0.01
    status = rig.backend.step()
    assert (status.stamp, status.read_stamp, status.cycles) == (0.01, 0.01, 1)
    status = rig.backend.step(0.02)  # the clock still says 0.01
    assert (status.stamp, status.read_stamp, status.cycles) == (0.02, 0.02, 2)


def test_a_disable_says_torque_off_in_the_status(rig: Rig) -> None:
    rig.enable()
    request = rig.backend.disable()
    status = rig.cycle()
    assert request.ok, request.message
    assert (status.state, status.message) == (MotionState.DISABLED, "torque off")


def test_an_effort_not_read_in_this_cycle_is_not_in_the_diagnostics(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that misses the drive (below the fault threshold): the drive's diagnostics
    are stale and carry neither its last effort nor its last torque state as fresh; the
    next good read carries them again."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.4]).ok
    status = rig.cycle()
    assert status.actuators[0].effort is not None
    _inject(rig.backend._slots[0].driver, "read", [_late()], monkeypatch)
    (wrist,) = rig.cycle().actuators
    assert (wrist.level, wrist.effort, wrist.torque_enabled) == (Level.STALE, None, None)
    assert wrist.message == "no fresh data: no answer within 50 ms (injected)"
    (wrist,) = rig.cycle().actuators
    assert wrist.effort is not None
    assert wrist.torque_enabled is True


# ------------------------------------------------------------------ writes


def test_a_cycle_writes_its_targets_even_right_after_a_command_written_at_once(
        rig: Rig) -> None:
    """A command written at once (the loop woken) and a cycle a hundredth of a period
    later: the cycle writes its targets all the same (every read cycle writes)."""
    rig.enable()
    rig.cycle()
    rig.sent()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
    rig.serve()
    assert len(rig.sent()) == 1
    rig.cycle(dt=0.01 * rig.backend.period)
    assert len(rig.sent()) == 1


def test_a_write_that_times_out_is_counted_and_the_bus_stays_up(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that times out once is a timeout (below the fault threshold the bus stays
    connected and the motion enabled), not a lost transport."""
    rig.enable()
    _inject(rig.backend._slots[0].driver, "write", [_late()], monkeypatch)
    status = rig.cycle()
    (bus,) = status.buses
    assert bus.connected
    assert dict(bus.errors) == {"timeout": 1, "protocol": 0, "transport": 0, "device": 0}
    assert status.state is MotionState.ENABLED
    assert bus.message == "1 failed cycle(s): write failed: no answer within 50 ms (injected)"


# ------------------------------------------------------------------ reconnects


def test_the_backoff_grows_while_a_reopened_bus_fails_again(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A bus whose first read after each reopening fails again: the waits before the
    reopenings grow (0.05, 0.1, 0.2 s; initial 0.05 s, factor 2), the diagnostics count the
    failures in a row, and the log says each reconnection's count; a good read ends it."""
    rig.backend.reconnect_policy = ReconnectPolicy(initial_delay=0.05, max_delay=1.0,
                                                   factor=2.0)
    rig.enable()
    caplog.set_level(logging.WARNING, logger=LOGGER)
    caplog.clear()
    _inject(rig.backend._slots[0].driver, "read", [_unplugged()] * 3, monkeypatch)
    failed, waits, attempts = rig.t, [], []
    status = rig.cycle()
    attempts.append(status.buses[0].reconnect_attempts)
    for _ in range(3):
        rig.until(lambda: rig.backend.status().buses[0].reconnects > len(waits), limit=40)
        waits.append(rig.t - failed)
        failed = rig.t
        attempts.append(rig.backend.status().buses[0].reconnect_attempts)
    assert waits == pytest.approx([0.05, 0.1, 0.2], abs=1.5 * rig.backend.period)
    assert attempts == [1, 2, 3, 0]
    assert [line for line in _warnings(caplog) if "reconnected" in line] == [
        f"bus 'b': reconnected (failure {n} in a row); servos that still hold keep holding"
        for n in (1, 2, 3)]


def test_auto_resume_does_not_resume_a_robot_the_command_timeout_disabled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: torque_off`` and ``auto_resume``: the command timeout disabled the
    robot, then its bus fails and comes back: motion was not enabled when it failed, so it
    stays disabled, torque off, waiting for an enable."""
    rig = Rig(safe_state="torque_off", command_timeout=0.05, auto_resume=True)
    try:
        rig.enable()
        rig.until(lambda: rig.backend.status().state is MotionState.DISABLED, limit=20)
        _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        rig.until(lambda: rig.backend.status().state is not MotionState.FAULT, limit=30)
        status = rig.backend.status()
        assert (status.state, status.message) == (
            MotionState.DISABLED, "reconnected; torque off: enable to move again")
        assert not rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


# ------------------------------------------------------------------ enables


def test_an_enable_whose_torque_on_times_out_fails_the_bus_at_once(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A timeout while an enable switches torque on fails the bus at once (below the fault
    threshold all the same): closed with torque off, the enable refused naming it."""
    assert rig.cycle().state is MotionState.DISABLED
    _inject(rig.backend._slots[0].driver, "set_torque", [_late()], monkeypatch)
    request = rig.backend.enable()
    status = rig.cycle()
    assert not request.ok
    assert request.message == "cannot enable: bus 'b': no answer within 50 ms (injected)"
    assert status.state is MotionState.FAULT
    assert not status.buses[0].connected
    rig.until(lambda: rig.backend.status().state is MotionState.DISABLED, limit=30)
    assert not rig.emulator.state(NODE).torque_enabled


def test_an_enable_is_refused_while_a_position_is_unknown(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A drive that answers without a position (never measured): the enable is refused
    naming the DOF, torque stays off."""
    _reporting(rig.backend._slots[0].driver, [{"position": math.nan}] * 10, monkeypatch)
    status = rig.cycle()
    assert status.state is MotionState.DISABLED, status.message
    assert not status.measured[rig.index]
    request = rig.backend.enable()
    rig.cycle()
    assert not request.ok
    assert request.message == "cannot enable: no measured position for wrist"
    assert not rig.emulator.state(NODE).torque_enabled


def test_an_enables_read_that_fails_the_bus_schedules_its_reconnection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle's read misses the drive, the enable's read brings no state from it: at
    the fault threshold (2 here) the bus fails, the enable is refused naming why, and the
    bus is reopened after its backoff (0.05 s) from then."""
    rig = Rig(fault_threshold=2)
    try:
        assert rig.cycle().state is MotionState.DISABLED
        driver = rig.backend._slots[0].driver
        _reporting(driver, [None], monkeypatch)  # the second read: no state
        _inject(driver, "read", [_late()], monkeypatch)  # the first: missed
        request = rig.backend.enable()
        status = rig.cycle()
        assert not request.ok
        assert request.message == ("cannot enable: bus 'b' is not connected (no state from"
                                   " id(s) [4])")
        assert not status.buses[0].connected
        failed = rig.t
        rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
        assert rig.t - failed == pytest.approx(0.05, abs=1.5 * rig.backend.period)
        assert not rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


# ------------------------------------------------------------------ requests


def test_clear_faults_that_the_driver_fails_closes_the_bus_saying_why(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    rig.enable()
    _inject(rig.backend._slots[0].driver, "clear_faults", [_unplugged()], monkeypatch)
    request = rig.backend.clear_faults()
    status = rig.cycle()
    assert (request.ok, request.message) == (False, "bus(es) not connected: b")
    assert request.details == {
        "wrist": "clear_faults failed on bus 'b': CAN adapter unplugged (injected)"}
    (bus,) = status.buses
    assert bus.last_error == "clear_faults failed: CAN adapter unplugged (injected)"
    assert bus.message == "not connected: clear_faults failed: CAN adapter unplugged (injected)"


def test_clear_faults_waits_for_the_loops_answer(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """``clear_faults(wait=...)`` returns once the loop answered: the loop here serves
    the request only while the caller still waits (0.3 s after it was woken)."""
    rig.enable()
    woken, returned = threading.Event(), threading.Event()
    monkeypatch.setattr(rig.backend, "_wake_loop", woken.set)

    def loop() -> None:
        if woken.wait(10.0) and not returned.wait(0.3):
            rig.backend.serve(rig.t)

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        request = rig.backend.clear_faults(wait=10.0)
    finally:
        returned.set()
        thread.join()
    assert request.done
    assert request.ok, request.message


def test_an_estop_before_the_first_cycle_names_the_bus_not_connected(rig: Rig) -> None:
    """An e-stop before the loop ever opened the bus: nothing confirms the torque off, and
    the answer says the bus is not connected (no error known yet)."""
    request = rig.backend.estop()
    rig.backend.serve(rig.t)
    assert not request.ok
    assert request.message == (
        "emergency stop: torque off NOT confirmed: bus 'b' not reached (not connected): its"
        " torque is unknown; no device watchdog is armed (device_watchdog: 0): nothing stops"
        " them; torque goes off when it reconnects; enable to move again")


def test_torque_lost_without_a_fault_is_logged_and_nothing_is_written(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The drive stops reporting torque on with no fault: the log says so (naming no fault)
    and why motion stopped (an error, which the bus's last error and the state repeat),
    and no target goes to the bus from then on."""
    rig.enable()
    caplog.set_level(logging.WARNING, logger=LOGGER)
    caplog.clear()
    _reporting(rig.backend._slots[0].driver, [{"torque_enabled": False}] * 5, monkeypatch)
    status = rig.cycle()
    assert _warnings(caplog) == [
        ("bus 'b': no actuator reports torque on any more; nothing is written to it until"
         " torque is switched on again")]
    why = ("bus 'b': wrist switched torque off without reporting a fault (a power loss? a"
           " reset?): enable to move again")
    assert [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno == logging.ERROR] == [why]
    assert (status.state, status.message, status.buses[0].last_error) == (
        MotionState.DISABLED, why, why)
    rig.sent()
    rig.cycle()
    assert rig.sent() == []


# ------------------------------------------------------------------ a bus reopened holding


@pytest.mark.parametrize(("bound", "limit", "measured"), [
    ("upper", START - 0.01, START), ("lower", START + 0.01, START)])
def test_a_bus_reopened_holding_restarts_its_joints_inside_their_limits(
        bound: str, limit: float, measured: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: hold``: the wrist rests 0.01 rad past its limit (within the enable's
    tolerance), its bus fails and comes back with the drive holding: the wrist restarts at
    its limit, which goes on the wire, and the last gate has nothing to correct (from a
    start past the limit, the acceleration limit would keep the targets out a while)."""
    rig = Rig(wrist=f", limits: {{position: {{{bound}: {limit!r}}}, acceleration: 20.0}}")
    try:
        rig.enable()
        driver = rig.backend._slots[0].driver
        _reporting(driver, [{"position": measured}] * 20, monkeypatch)
        _inject(driver, "read", [_unplugged()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        rig.until(lambda: rig.backend.status().state is MotionState.HOLDING, limit=30)
        rig.sent()
        status = rig.cycle()
        assert status.target[rig.index] == pytest.approx(limit, abs=1e-9)
        assert rig.sent() == [pytest.approx(limit, abs=1e-4)]
        assert status.guard_corrections == 0
    finally:
        rig.close()


def test_a_bus_reopened_holding_leaves_the_other_buses_targets_where_they_were(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``safe_state: hold`` over two buses: the shoulder's drive on ``c`` holds 0.05 rad
    off its target (a load), bus ``b`` fails and comes back holding: the wrist restarts at
    its measured position, the shoulder's target stays where it was (not its measurement),
    and the log says how many actuators of ``b`` kept their torque."""
    two = TwoBuses("hold")
    try:
        two.enable()
        yaw = two.backend.index["shoulder_yaw"]
        _reporting(two.drivers["c"], [{"position": START + 0.05}] * 40, monkeypatch)
        two.cycle()
        before = two.backend.status().target[yaw]
        assert before == pytest.approx(START, abs=1e-4)
        _inject(two.drivers["b"], "read", [_unplugged()], monkeypatch)
        assert not two.cycle().buses[0].connected
        caplog.set_level(logging.WARNING, logger=LOGGER)
        two.until(lambda: two.backend.status().state is MotionState.HOLDING, limit=30)
        assert _warnings(caplog)[-1] == ("bus 'b': 1 actuator(s) kept torque through the"
                                         " outage; holding their measured positions")
        assert two.backend.status().position[yaw] == pytest.approx(START + 0.05)
        assert two.cycle().target[yaw] == before
    finally:
        two.close()


# ------------------------------------------------------------------ a fresh sample's survivors


def test_an_enable_says_it_holds_and_a_second_one_that_nothing_changed(rig: Rig) -> None:
    rig.cycle()
    first = rig.backend.enable()
    status = rig.cycle()
    assert (first.ok, first.message) == (True, "enabled: holding the measured positions")
    assert (status.state, status.message) == (MotionState.ENABLED,
                                              "holding the measured positions")
    second = rig.backend.enable()
    rig.cycle()
    assert (second.ok, second.message) == (
        True, "already enabled: nothing changed (torque on; commands and the trajectory go on)")


def test_activate_raises_the_enables_refusal(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lifecycle's activate, refused by the loop (a position unknown), raises with the
    refusal's words (the loop here serves each request as it is woken)."""
    _reporting(rig.backend._slots[0].driver, [{"position": math.nan}] * 10, monkeypatch)
    rig.cycle()
    woken = threading.Event()
    monkeypatch.setattr(rig.backend, "_wake_loop", woken.set)

    def loop() -> None:
        if woken.wait(10.0):
            rig.backend.serve(rig.t)

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        with pytest.raises(HardwareError) as info:
            rig.backend.activate()
    finally:
        woken.set()
        thread.join()
    assert str(info.value) == "cannot enable: no measured position for wrist"


def test_a_drive_fault_is_logged_once_as_an_error_naming_it(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    rig.enable()
    caplog.set_level(logging.ERROR, logger=LOGGER)
    rig.emulator.inject_fault(NODE, persistent=True)
    rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=20)
    for _ in range(3):
        rig.cycle()
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [
        ("'wrist' (bus 'b' id 4) reports a fault: FAULT: error code 0x2310 (EMCY 0x2310"
         " Current); ~/clear_faults runs the device's recovery")]


def test_the_command_timeout_is_said_in_one_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    """The command timeout under ``hold``: one warning, and no other line from the core."""
    rig = Rig(command_timeout=0.05)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        caplog.set_level(logging.INFO, logger=LOGGER)
        caplog.clear()
        rig.until(lambda: rig.backend.status().watchdog_tripped, limit=20)
        assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == [
            "no command for 0.05 s: holding position"]
    finally:
        rig.close()


def test_a_reopened_bus_counts_its_missed_reads_from_zero(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bus reopened after a failure starts its count of missed reads afresh: its first
    read missing is one failed cycle (the fault threshold counts from there)."""
    rig.enable()
    _inject(rig.backend._slots[0].driver, "read", [_unplugged(), _late()], monkeypatch)
    rig.cycle()
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
    (bus,) = rig.backend.status().buses
    assert bus.consecutive_failures == 1
    assert bus.message == "1 failed cycle(s): no answer within 50 ms (injected)"


def test_an_enable_failing_on_one_bus_whose_torque_off_fails_on_the_other_closes_both(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Torque on fails on ``c``; switching ``b`` off again (a failed enable ends with torque
    off everywhere) fails too: both buses are closed and reopened after their backoff,
    torque off, the enable refused naming ``c``."""
    two = TwoBuses("hold")
    try:
        two.until(lambda: two.backend.status().state is MotionState.DISABLED)
        _inject(two.drivers["c"], "set_torque", [_unplugged()], monkeypatch)
        _inject(two.drivers["b"], "set_torque", [None, _unplugged()], monkeypatch)
        request = two.backend.enable()
        status = two.cycle()
        assert not request.ok
        assert request.message == "cannot enable: bus 'c': CAN adapter unplugged (injected)"
        assert [b.connected for b in status.buses] == [False, False]
        two.until(lambda: two.backend.status().state is MotionState.DISABLED)
        assert [b.connected for b in two.backend.status().buses] == [True, True]
        assert not two.torque("b")
        assert not two.torque("c")
    finally:
        two.close()


def test_a_drive_fault_whose_torque_off_fails_closes_the_bus_and_reconnects_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: torque_off``: a drive reports a fault, and switching its bus's torque
    off fails: the bus is closed (torque off) and reopened after its backoff, torque off."""
    rig = Rig(safe_state="torque_off")
    try:
        rig.enable()
        driver = rig.backend._slots[0].driver
        _reporting(driver, [{"error_code": 0x2310, "fault": "over-current"}], monkeypatch)
        _inject(driver, "set_torque", [_unplugged()], monkeypatch)
        status = rig.cycle()
        assert status.state is MotionState.FAULT
        assert not status.buses[0].connected
        assert status.buses[0].last_error == "torque off failed: CAN adapter unplugged (injected)"
        rig.until(lambda: rig.backend.status().state is MotionState.DISABLED, limit=30)
        assert not rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


def test_an_estop_not_reaching_a_bus_names_its_device_watchdog(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``device_watchdog: 0.5`` an e-stop before the bus was opened says the drives'
    own watchdog (0.5 s) is what stops them."""
    import cia402_rig

    monkeypatch.setattr(cia402_rig, "CONFIG", cia402_rig.CONFIG.replace(
        "device_watchdog: 0.0", "device_watchdog: 0.5"))
    rig = Rig()
    try:
        request = rig.backend.estop()
        rig.backend.serve(rig.t)
        assert not request.ok
        assert request.message == (
            "emergency stop: torque off NOT confirmed: bus 'b' not reached (not connected):"
            " its torque is unknown; its devices' own watchdog (0.5 s), where armed, is what"
            " stops them; torque goes off when it reconnects; enable to move again")
    finally:
        rig.close()


def test_an_enable_reads_again_only_the_bus_that_missed_its_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two buses, ``c``'s read missed in the enable's cycle: the enable reads ``c`` again,
    not ``b``, which answered (one read of ``b`` in that cycle, two of ``c``)."""
    two = TwoBuses("hold")
    try:
        two.until(lambda: two.backend.status().state is MotionState.DISABLED)
        _inject(two.drivers["c"], "read", [_late()], monkeypatch)
        reads = {"b": 0, "c": 0}
        for bus, driver in two.drivers.items():
            def counted(bus: str = bus, read: Any = driver.read) -> Any:
                reads[bus] += 1
                return read()

            monkeypatch.setattr(driver, "read", counted)
        request = two.backend.enable()
        two.cycle()
        assert request.ok, request.message
        assert reads == {"b": 1, "c": 2}
    finally:
        two.close()


def test_a_drive_found_with_torque_on_while_another_bus_never_connected_is_held(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Bus ``c`` cannot be opened; the drive on ``b`` reports torque on at its first read
    (it did not obey the open's torque off): the wrist is held at its measured position,
    the shoulder's yaw (never measured, on the closed bus) gets no target, and the loop
    goes on cycling.

    Before: ``_after_open`` gave the yaw a NaN goal, and the next ``actuate`` raised
    ``ValueError: target holds a non-finite value`` out of the loop (the runner's thread
    stops or pauses on it). Found by the mutant that changed the stand-in 0.0 of a DOF
    with neither a measurement nor a target."""
    two = TwoBuses("hold")
    try:
        _inject(two.drivers["c"], "open", [_unplugged()] * 100, monkeypatch)
        _reporting(two.drivers["b"], [{"torque_enabled": True}] * 100, monkeypatch)
        for _ in range(3):
            status = two.cycle()
        wrist, yaw = two.backend.index["wrist"], two.backend.index["shoulder_yaw"]
        assert status.state is MotionState.FAULT  # bus c not connected
        assert status.target[wrist] == pytest.approx(START, abs=1e-4)
        assert math.isnan(status.target[yaw])  # HardwareStatus.target: NaN, none sent
    finally:
        two.close()


# ------------------------------------------------------------------ the seed-7 sample's survivors


def test_a_hold_stops_a_joint_short_of_its_goal_on_the_wire(rig: Rig) -> None:
    """The core's hold of a DOF (a trajectory canceled or aborted): the wrist, on its way
    to 2 rad at its velocity limit, stops where its target was: the wire's targets stop
    there, far from the goal. The hold is done once: a command after it moves the wrist
    all the way to its goal."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [2.0]).ok
    for _ in range(3):
        rig.cycle()
    rig.backend.hold(rig.t, np.array([rig.index]))
    rig.sent()
    for _ in range(10):
        rig.cycle()
    sent = rig.sent()
    assert sent[-1] == sent[-2]
    assert sent[-1] < START + 0.5
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.5]).ok
    rig.until(lambda: rig.backend.status().target[rig.index] == pytest.approx(0.5), limit=20)


def test_a_hold_on_a_leader_holds_its_follower(tmp_path: Path) -> None:
    """The gripper's finger_right follows finger_left by the rule (a servo each): a hold
    of the leader alone stops both where their targets were."""
    # Imported here: that module skips itself without the Dynamixel emulator.
    from test_mimic_hardware import Rig as Gripper
    from test_mimic_hardware import _two_servos

    two = Gripper(tmp_path, _two_servos())
    try:
        two.enable()
        assert two.runner.core.command(CommandKind.POSITION, ["finger_left"], [0.02]).ok
        two.cycle()
        left = two.backend.names.index("finger_left")
        two.backend.hold(two.t, np.array([left]))
        two.cycle()
        held = two.backend.status().target.copy()
        two.cycle(5)
        assert two.backend.status().target == pytest.approx(held, abs=1e-12)
    finally:
        two.close()


def test_a_command_woken_right_after_a_cycle_waits_for_the_next_one(rig: Rig) -> None:
    """A command written at once (the loop woken) a hundredth of a period after a cycle
    wrote: nothing goes to the wire then (too soon after the last write); the next cycle
    writes it."""
    rig.enable()
    rig.cycle()
    rig.sent()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
    rig.backend.serve(rig.t + 0.01 * rig.backend.period)
    assert rig.sent() == []
    rig.cycle()
    assert len(rig.sent()) == 1


def test_a_bus_that_cannot_be_reopened_says_why_in_the_log(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A bus fails and its reopening fails twice: the first failure is a warning naming
    the error, the second (within the log's period) a debug line with the wait and the
    error."""
    rig.enable()
    driver = rig.backend._slots[0].driver
    _inject(driver, "read", [_unplugged()], monkeypatch)
    _inject(driver, "open", [_unplugged(), _unplugged()], monkeypatch)
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    caplog.clear()
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=60)
    lines = [r.getMessage() for r in caplog.records if r.name == LOGGER
             and "cannot" in r.getMessage()]
    assert lines == [
        "bus 'b': cannot reopen (attempt 2), retrying: CAN adapter unplugged (injected)",
        ("bus 'b': cannot open (attempt 3), retrying in 0.1 s: CAN adapter unplugged"
         " (injected)")]


class _Ends:
    """A trajectory observer that keeps how it ended."""

    def __init__(self) -> None:
        self.ends: list[tuple[Any, str]] = []

    def on_cycle(self, *args: Any) -> None:  # noqa: ARG002 - only the end matters
        return None

    def on_end(self, now: float, outcome: Any, message: str) -> None:  # noqa: ARG002
        self.ends.append((outcome, message))


def test_a_disable_stops_the_trajectory_saying_disabled(rig: Rig) -> None:
    rig.enable()
    ends = _Ends()
    rig.core.follow(PointTrajectory(["wrist"], [TrajectoryPoint(1.0, (0.5,))], [START]),
                    observer=ends)
    rig.cycle()
    request = rig.backend.disable()
    rig.cycle()
    assert request.ok, request.message
    assert ends.ends == [(FollowOutcome.STOPPED, "disabled")]


def test_clear_faults_logs_what_it_did_per_joint(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    rig.enable()
    _inject(rig.backend._slots[0].driver, "clear_faults", [_unplugged()], monkeypatch)
    caplog.set_level(logging.WARNING, logger=LOGGER)
    caplog.clear()
    rig.backend.clear_faults()
    rig.cycle()
    assert [line for line in _warnings(caplog) if line.startswith("clear_faults")] == [
        ("clear_faults: bus(es) not connected: b (wrist: clear_faults failed on bus 'b': CAN"
         " adapter unplugged (injected))")]


def test_a_drive_fault_is_the_buss_last_error(rig: Rig) -> None:
    rig.enable()
    rig.emulator.inject_fault(NODE, persistent=True)
    rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=20)
    (bus,) = rig.backend.status().buses
    assert bus.last_error == (
        "'wrist' (bus 'b' id 4) reports a fault: FAULT: error code 0x2310 (EMCY 0x2310"
        " Current); ~/clear_faults runs the device's recovery")


def test_a_drive_not_heard_from_yet_has_no_data_yet(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bus's first read brings no state from the drive: its diagnostics say no data
    yet (stale), the bus one failed cycle."""
    _reporting(rig.backend._slots[0].driver, [None], monkeypatch)
    status = rig.cycle()
    (wrist,) = status.actuators
    assert (wrist.level, wrist.message) == (Level.STALE, "no data yet")
    assert status.buses[0].consecutive_failures == 1


def test_an_enable_the_loop_does_not_answer_is_named(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lifecycle's activate with no loop running: the error names the enable."""
    from skel_ros.hardware import backend as module

    monkeypatch.setattr(module, "LIFECYCLE_WAIT", 0.01)
    with pytest.raises(HardwareError, match=r"^the control loop did not answer the enable"
                       r" within 0\.01 s$"):
        rig.backend.activate()
