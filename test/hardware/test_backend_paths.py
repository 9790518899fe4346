"""Paths of the hardware backend the manager tests do not take, checked on the wire.

Each test states one behaviour of :class:`~skel_ros.hardware.HardwareBackend` that
mutation testing (bench/mutation.py, target ``backend``) showed no test pinned: a new
command written at once when the loop is woken, the trajectory's first segment starting
at the targets on the wire, the efforts a drive reports, the command timeout's holding
message, an e-stop whose torque off cannot reach the bus (before a cycle's read, or handed
in during it), a deactivate that waits for a loop answering late.

The rig (:mod:`cia402_rig`): the wrist on an emulated CiA 402 drive, the backend and the
emulator on one manual clock, a bus analyser reading every RPDO1.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from can_buses import OpenedBuses
from cia402_rig import NODE, Rig

from skel_ros.hardware import MotionState
from skel_ros.hardware import backend as backend_module
from skel_ros.model.limits import CommandKind


def test_a_command_is_written_when_the_loop_is_woken_not_at_the_next_cycle(rig: Rig) -> None:
    """By default (``write_on_command``) a command handed in between two cycles goes on the
    wire when the loop serves it, before the next cycle's deadline."""
    rig.enable()
    rig.cycle()
    rig.sent()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
    rig.serve()  # the loop, woken by the command, half a period on
    written = rig.sent()
    assert written, "the new target waits for the next cycle"
    assert written[-1] > 0.1  # on its way to 0.3 (the wrist starts at 0.1)


def test_a_trajectory_starts_at_the_targets_on_the_wire(rig: Rig) -> None:
    """A trajectory message's first segment starts at the present targets: the core asks
    the backend, which answers with the last targets it wrote."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.5]).ok
    for _ in range(3):
        rig.cycle()
    last = rig.sent()[-1]
    start = rig.core.start_positions(["wrist"])
    assert start == pytest.approx([last], abs=1e-4)
    assert 0.1 < start[0] < 0.5


def test_the_efforts_are_what_the_drive_reports(rig: Rig) -> None:
    """The reading's effort is the drive's torque actual value (0x6077), not unknown."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.4]).ok
    for _ in range(5):
        rig.cycle()
    effort = rig.runner.core.read().efforts[rig.index]
    assert np.isfinite(effort)
    truth = rig.emulator.state(NODE).effort
    assert effort == pytest.approx(truth, abs=0.01 * max(1.0, abs(truth)))


def test_the_command_timeout_holds_and_says_so() -> None:
    """With ``safe_state: hold``, no command for ``command_timeout`` holds the targets and
    the status says how long it waited."""
    rig = Rig(command_timeout=0.05)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        rig.until(lambda: "no command" in rig.backend.status().message, limit=20)
        status = rig.backend.status()
        assert status.message == "no command for 0.05 s: holding position"
        assert status.state is MotionState.ENABLED
    finally:
        rig.close()


def test_an_estop_whose_torque_off_cannot_reach_the_bus_says_so(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CAN adapter dies between two cycles; an e-stop then fails to switch torque off:
    the state is ``estop`` all the same, the bus is closed for a reconnection, and the
    answer says the torque off is not confirmed."""
    capture = OpenedBuses(monkeypatch)
    rig.close()
    rig.__init__()  # type: ignore[misc] # the same rig, its buses opened under capture
    rig.enable()
    capture.buses[-1].shutdown()
    request = rig.backend.estop()
    rig.backend.serve(rig.t)  # the loop, woken by the e-stop before its next read
    assert request.done
    assert not request.ok
    status = rig.backend.status()
    assert status.state is MotionState.ESTOP
    assert "NOT confirmed" in status.message, status.message
    assert not status.buses[0].connected
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=100)
    assert rig.backend.status().state is MotionState.ESTOP
    assert not rig.emulator.state(NODE).torque_enabled


def test_an_estop_handed_in_during_a_read_is_applied_before_the_answers(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """An e-stop that arrives while the cycle reads the buses, with the adapter then dead:
    it is applied before that cycle's requests are answered, and its failed torque off
    leaves the bus closed for a reconnection (the cycle itself does not fail)."""
    capture = OpenedBuses(monkeypatch)
    rig.close()
    rig.__init__()  # type: ignore[misc] # the same rig, its buses opened under capture
    rig.enable()
    slot = rig.backend._slots[0]
    read = slot.driver.read
    requests = []

    def read_then_estop() -> object:
        states = read()
        if not requests:
            capture.buses[-1].shutdown()
            requests.append(rig.backend.estop())
        return states

    monkeypatch.setattr(slot.driver, "read", read_then_estop)
    rig.cycle()
    assert requests
    assert requests[0].done
    assert rig.backend.status().state is MotionState.ESTOP
    assert "NOT confirmed" in requests[0].message


def test_deactivate_waits_for_a_loop_that_answers_late(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lifecycle's deactivate waits up to ``LIFECYCLE_WAIT`` for the loop: a loop that
    answers 0.2 s later is not reported as not answering."""
    monkeypatch.setattr(backend_module, "LIFECYCLE_WAIT", 10.0)
    rig.enable()

    def late_loop() -> None:
        time.sleep(0.2)
        rig.cycle()

    thread = threading.Thread(target=late_loop)
    thread.start()
    try:
        rig.backend.deactivate()
    finally:
        thread.join()
    assert rig.backend.status().state is MotionState.DISABLED
    assert not rig.emulator.state(NODE).torque_enabled


def test_a_geared_reversed_joint_is_read_and_commanded_through_its_transmission() -> None:
    """direction -1, gear ratio 2: the drive is sent -2x the joint's position, and its
    position and velocity are read back as the joint's (divided by the ratio, reversed)."""
    rig = Rig(direction=-1, gear_ratio=2.0)
    try:
        rig.enable()
        start = rig.core.read().positions[rig.index]
        assert start == pytest.approx(-0.1 / 2.0, abs=1e-4)  # the drive starts at 0.1
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.2]).ok
        for _ in range(3):
            rig.cycle()
        assert rig.sent()[-1] < -0.1  # on its way to -0.4 at the drive
        reading = rig.core.read()
        drive = rig.emulator.state(NODE)
        assert reading.positions[rig.index] == pytest.approx(-drive.position / 2.0, abs=1e-3)
        assert abs(drive.velocity) > 0.1  # moving
        assert reading.velocities[rig.index] == pytest.approx(-drive.velocity / 2.0,
                                                              rel=0.05, abs=0.02)
    finally:
        rig.close()


def test_an_effort_command_reaches_the_drive_through_the_transmission() -> None:
    """An effort-mode joint (CiA 402 cyclic torque) with direction -1 and gear ratio 2:
    0.2 N m at the joint is -0.1 N m at the drive, and the drive's torque is read back as
    the joint's."""
    rig = Rig(mode="effort", direction=-1, gear_ratio=2.0)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.EFFORT, ["wrist"], [0.2]).ok
        for _ in range(5):
            rig.cycle()
        drive = rig.emulator.state(NODE)
        assert drive.effort == pytest.approx(-0.1, abs=0.01)
        assert rig.core.read().efforts[rig.index] == pytest.approx(0.2, abs=0.02)
    finally:
        rig.close()


def test_a_bus_that_stops_answering_leaves_its_joints_unmeasured(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    capture = OpenedBuses(monkeypatch)
    rig.close()
    rig.__init__()  # type: ignore[misc] # the same rig, its buses opened under capture
    rig.enable()
    assert rig.core.read().fresh[rig.index]
    capture.buses[-1].shutdown()
    rig.cycle()
    assert not rig.core.read().fresh[rig.index]
    assert not rig.backend.status().fresh


def test_with_safe_state_torque_off_a_failed_bus_comes_back_with_torque_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: torque_off``: a bus that failed while enabled is closed with torque
    off and reopened with torque off (``hold`` would let its drives keep holding)."""
    capture = OpenedBuses(monkeypatch)
    rig = Rig(safe_state="torque_off")
    try:
        rig.enable()
        assert rig.emulator.state(NODE).torque_enabled
        capture.buses[-1].shutdown()
        rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=10)
        rig.until(lambda: rig.backend.status().buses[0].connected, limit=100)
        for _ in range(3):
            rig.cycle()
        assert not rig.emulator.state(NODE).torque_enabled
        assert rig.backend.status().state is not MotionState.ENABLED
    finally:
        rig.close()


def _fail_reads(rig: Rig, monkeypatch: pytest.MonkeyPatch, times: int) -> None:
    """The bus's next ``times`` reads time out (a drive that missed its replies)."""
    from skel_ros.hardware.errors import TransportTimeoutError

    slot = rig.backend._slots[0]
    read = slot.driver.read
    left = [times]

    def read_or_time_out() -> object:
        if left[0] > 0:
            left[0] -= 1
            raise TransportTimeoutError("no answer within 50 ms (injected)")
        return read()

    monkeypatch.setattr(slot.driver, "read", read_or_time_out)


def test_one_missed_read_leaves_its_joints_unmeasured_for_that_cycle(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that times out once (below the fault threshold: the bus stays up) leaves its
    joints not measured in that cycle, not the previous cycle's values as fresh."""
    rig.enable()
    rig.cycle()
    assert rig.core.read().fresh[rig.index]
    _fail_reads(rig, monkeypatch, 1)
    rig.cycle()
    assert not rig.core.read().fresh[rig.index]
    assert rig.backend.status().state is MotionState.ENABLED
    rig.cycle()
    assert rig.core.read().fresh[rig.index]


def test_with_safe_state_torque_off_a_failing_bus_is_closed_with_torque_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: torque_off``: a bus whose reads keep timing out (the CAN link itself
    alive) is closed with torque off on the wire at once, not left holding until it
    reconnects."""
    rig = Rig(safe_state="torque_off")
    try:
        rig.enable()
        _fail_reads(rig, monkeypatch, 1000)
        rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=10)
        assert not rig.emulator.state(NODE).torque_enabled
    finally:
        rig.close()


def test_a_request_no_loop_answers_is_not_ok_and_its_wait_ends(rig: Rig) -> None:
    """An enable with no loop to serve it: after its wait it is neither done nor ok (the
    wait ends at its timeout, it does not hang)."""
    request = rig.backend.enable(wait=0.05)
    assert not request.done
    assert not request.ok


def test_before_any_target_a_trajectory_starts_from_nothing_known(rig: Rig) -> None:
    """Before the loop's first cycle no target was written: the start positions are NaN,
    not an error and not a number made up."""
    starts = rig.backend.start_positions(np.array([rig.index], dtype=np.intp))
    assert starts.shape == (1,)
    assert np.isnan(starts[0])


def test_an_actuators_diagnostics_carry_its_measured_position_and_target(rig: Rig) -> None:
    """The per-actuator diagnostics (refreshed at their own period, so of a recent cycle,
    not necessarily the last) carry the measured position and the target sent."""
    rig.enable()
    (wrist,) = [a for a in rig.backend.status().actuators if a.name == "wrist"]
    assert wrist.position == pytest.approx(0.1, abs=1e-3)  # where the drive started
    assert wrist.target == pytest.approx(0.1, abs=1e-3)  # held there by the enable
    assert wrist.error_code == 0
