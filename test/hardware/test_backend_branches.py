"""The hardware backend's branches and effects no other test of its subset pinned.

Each test states one behaviour of :class:`~skel_ros.hardware.HardwareBackend` that branch
coverage of the backend's test subset (bench/mutation.py, target ``backend``) showed
untaken, or that ran with no assertion on its effect (survivors of mutation testing: seed
11, a scan of seed 17, the three gaps of seed 19, and mutants planted by hand where a
comparison, a constant or an argument could change unseen). Grouped as below: what the
backend declares (read-only status arrays, capabilities, the arguments over the YAML, the
hardware runner, a follower without commands); reads and logs (the reading's stamp, the
enable's log line, a failed open counted by kind, the every-10-s error of a bus never
reached, a retry at its exact time, the enable's inclusive tolerance, a read without
velocity or effort, the command timeout per actuator, the diagnostics field by field, a
fault in words, the time step of a late cycle and of one at the same time, velocity and
effort commands written on a wake, a stream to one impedance joint leaving another's steps
whole); e-stops and faults (every bus an e-stop did not reach, a bus failing during an
e-stop, torque losses and torque offs that fail, a bus reopened holding where its joint
measures (and a velocity joint stopped), a drive fault found after a bus failure, a fault
coming back after its recovery, ``clear_faults`` per joint over two buses, a disable and a
command timeout whose torque off fails); ``auto_resume`` (in a wake, never by
``clear_faults``, after a failed torque on, refused for a joint outside its limits, not
after a disable, never for a robot never enabled); configurations (followers with offsets,
a bus with no joint, ``write_on_command`` off).

The rigs: :mod:`cia402_rig` (the wrist on an emulated CiA 402 drive, one manual clock, a
bus analyser), :mod:`test_backend_gaps`' two buses of one drive each, and one bus on a
manual clock (:class:`_OneBus`): MIT motors in impedance mode
(:mod:`test_stream_feedforward`'s configuration), or CiA 402 drives of a linkage whose
followers have offsets (test/model/data/mimic/offset_linkage.urdf).
"""

from __future__ import annotations

import logging
import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from cia402_rig import ARM, NODE, START, WRIST_VELOCITY, Rig
from test_backend_gaps import (
    FINGERS,
    GRIPPER,
    REPO,
    TwoBuses,
    _inject,
    _late,
    _reporting,
    _unplugged,
)
from test_stream_feedforward import CONFIG as MIT

from skel_ros.core import Capabilities
from skel_ros.emulation.canopen402 import start_emulator
from skel_ros.emulation.mit import start_emulator as start_mit
from skel_ros.hardware import (
    HardwareBackend,
    MotionState,
    hardware_runner,
    parse_hardware_config,
)
from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.config import ReconnectPolicy, SafeState
from skel_ros.hardware.diagnostics import Level
from skel_ros.hardware.errors import DeviceError
from skel_ros.model import load_model, load_skel
from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from pathlib import Path

LOGGER = "skel_ros.hardware"
LOST = ("not reached (CAN adapter unplugged (injected)): its torque is unknown; no device"
        " watchdog is armed (device_watchdog: 0): nothing stops them; torque goes off when"
        " it reconnects")


def _fields(diagnostics: Any) -> dict[str, Any]:
    """A diagnostics record's fields (its error counts as a plain dict)."""
    out = {f.name: getattr(diagnostics, f.name) for f in fields(diagnostics)}
    return {**out, "errors": dict(out["errors"])}


def _lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    """The hardware logger's lines at exactly ``level``, in order."""
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == level]


def _reopened_after_its_backoff(rig: Rig, failed: float) -> None:
    """The wrist's bus, failed at ``failed``, is reopened after its backoff (0.05 s), the
    drive's torque off."""
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
    assert rig.t - failed == pytest.approx(0.05, abs=1.5 * rig.backend.period)
    assert not rig.emulator.state(NODE).torque_enabled


def _bus_fails_then_returns(rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bus's next read fails (``fault``), then cycles until it has reconnected."""
    _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
    assert rig.cycle().state is MotionState.FAULT
    rig.until(lambda: rig.backend.state is not MotionState.FAULT, limit=30)


def _stays_disabled_after_the_reconnection(rig: Rig, why: str = "") -> None:
    """Three more cycles: ``disabled`` since the bus reconnected, the drive's torque off;
    ``why``: the reason auto_resume was refused, which the message keeps."""
    for _ in range(3):
        status = rig.cycle()
    assert (status.state, status.message) == (
        MotionState.DISABLED, "reconnected; torque off: enable to move again" + why)
    assert not rig.emulator.state(NODE).torque_enabled


# ------------------------------------------------------------------ what it declares


def test_the_status_arrays_are_read_only(rig: Rig) -> None:
    """The status is shared with every thread: its arrays cannot be written to (a reader
    changing one would change what the others see)."""
    rig.enable()
    status = rig.cycle()
    for values in (status.position, status.velocity, status.effort, status.target,
                   status.measured):
        assert not values.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            values[0] = values[0]


def test_the_backend_declares_faults_and_one_command_kind_per_dof(rig: Rig) -> None:
    """What a shell reads to offer its services: faults (enable / e-stop / clear_faults
    apply), no clock, pause or reset of its own; each DOF takes its actuator's mode's
    commands; and the mode and the state's reason as the backend keeps them."""
    assert rig.backend.capabilities == Capabilities(
        has_faults=True, command_modes=(frozenset({CommandKind.POSITION}),))
    assert rig.backend.modes == (ControlMode.POSITION,)
    assert rig.backend.message == "not started"
    rig.enable()
    assert rig.backend.message == "holding the measured positions"


def test_a_hardware_runner_is_named_and_refuses_trajectories_5_s_ahead(rig: Rig) -> None:
    """The hardware node's loop: its thread's name, its core's start delay (5 s), and the
    listener it is given."""
    assert rig.runner.name == "skel_ros-hardware"
    assert rig.core.max_start_delay == 5.0
    listener: Any = object()  # never called: the runner is not run
    backend = HardwareBackend(rig.backend.bound)
    assert hardware_runner(backend, listener=listener).listener is listener
    backend.close()


def test_the_arguments_override_the_yamls_values() -> None:
    """The backend's arguments win over the YAML's (``safe_state: hold``, no auto_resume,
    100 Hz, no command timeout, the default re-enable bound, write_on_command off); without
    them, the YAML's."""
    skeleton = load_skel(ARM).skeletons[0]
    config = parse_hardware_config(
        "control_rate: 100.0\ncommand_timeout: 0.0\nsafe_state: hold\nauto_resume: false\n"
        "fault_threshold: 7\nwrite_on_command: false\n"
        "reconnect: {initial_delay: 0.25, max_delay: 2.0, factor: 3.0}\n"
        "buses:\n  b: {protocol: canopen, transport: {interface: virtual, channel: x}}\n"
        "joints:\n  wrist: {bus: b, id: 4}\n", "over.yaml").bind(skeleton)
    given = HardwareBackend(config, control_rate=50.0, command_timeout=0.5,
                            safe_state=SafeState.TORQUE_OFF, auto_resume=True,
                            reenable_velocity=0.5, write_on_command=True)
    from_yaml = HardwareBackend(config)
    try:
        assert (given.control_rate, given.period, given.command_timeout) == (50.0, 0.02, 0.5)
        assert (given.safe_state, given.auto_resume) == (SafeState.TORQUE_OFF, True)
        assert (given.reenable_velocity, given.write_on_command) == (0.5, True)
        assert (from_yaml.control_rate, from_yaml.period, from_yaml.command_timeout) == (
            100.0, 0.01, 0.0)
        assert (from_yaml.safe_state, from_yaml.auto_resume) == (SafeState.HOLD, False)
        assert (from_yaml.reenable_velocity, from_yaml.write_on_command) == (0.2, False)
        for backend in (given, from_yaml):
            assert backend.fault_threshold == 7
            assert backend.reconnect_policy.delay(1) == 0.75
        slow = HardwareBackend(config, control_rate=0.5)  # any rate above 0 is one
        assert slow.period == 2.0
        slow.close()
    finally:
        given.close()
        from_yaml.close()


def test_a_follower_with_its_own_actuator_takes_no_command() -> None:
    """The gripper's right finger follows the left one (a mimic joint) with its own
    actuator: it declares no command kind (its leader's commands move it), its leader
    its actuator's mode's."""
    config = parse_hardware_config(FINGERS, "fingers.yaml")
    backend = HardwareBackend(config.bind(load_model(GRIPPER).skeletons[0]))
    try:
        modes = dict(zip(backend.names, backend.capabilities.command_modes, strict=True))
        assert modes == {"finger_left": frozenset({CommandKind.VELOCITY}),
                         "finger_right": frozenset()}
    finally:
        backend.close()


def test_a_command_before_the_enable_is_refused_naming_the_state(rig: Rig) -> None:
    """Connected, torque off: the state says an enable is needed, and a command is refused
    saying motion is not enabled, in which state."""
    status = rig.cycle()
    assert (status.state, status.message) == (
        MotionState.DISABLED, "connected; torque off: enable to move")
    result = rig.core.command(CommandKind.POSITION, ["wrist"], [0.3])
    assert not result.ok
    assert result.message == ("position command ignored: motion is not enabled (state"
                              " disabled)")
    assert rig.backend.refusal() == "motion is not enabled (state disabled)"
    (wrist,) = status.actuators
    assert (wrist.level, wrist.message, wrist.torque_enabled) == (Level.OK, "torque off", False)
    rig.enable()
    assert rig.backend.refusal() == ""
    status = rig.cycle()
    assert status.watchdog_tripped is False  # no command yet, none missed


def test_dofs_without_a_velocity_limit_are_named_with_the_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A position DOF without a velocity limit cannot be slowed after an enable
    (``reenable_velocity`` below 1): the backend says so once, naming the file and the DOFs;
    with ``reenable_velocity: 1``, or every DOF limited, it says nothing."""
    skel = tmp_path / "arm.skel"
    skel.write_text(ARM.read_text(encoding="utf-8").replace(
        '<dof><velocity lower="-6.0" upper="6.0"/>', "<dof>"), encoding="utf-8")
    skeleton = load_skel(skel).skeletons[0]
    config = parse_hardware_config(
        "buses:\n  b: {protocol: canopen, transport: {interface: virtual, channel: x}}\n"
        "joints:\n  wrist: {bus: b, id: 4}\n  elbow: {bus: b, id: 3}\n", "nolimit.yaml")
    caplog.set_level(logging.WARNING, logger=LOGGER)
    warning = ("nolimit.yaml: DOF(s) wrist have no velocity limit: after an enable they are"
               " not slowed to reenable_velocity (give them limits: velocity)")
    limited = load_skel(ARM).skeletons[0]  # every DOF has a velocity limit
    for model, velocity, said in ((skeleton, 1.0, []), (skeleton, 0.5, [warning]),
                                  (limited, 0.5, [])):
        caplog.clear()
        backend = HardwareBackend(config.bind(model), reenable_velocity=velocity)
        try:
            assert [line for line in _lines(caplog, logging.WARNING)
                    if "velocity limit" in line] == said
        finally:
            backend.close()


# ------------------------------------------------------------------ reads and logs


def test_the_reading_is_stamped_with_its_cycle(rig: Rig) -> None:
    """What the core reads carries the time of the cycle that read it, not a later one."""
    rig.cycle()
    read_at = rig.t
    reading = rig.core.read()
    assert reading.stamp == read_at
    rig.t += 0.5  # no cycle since
    assert rig.core.read().stamp == read_at


def test_an_enable_is_logged_as_information(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    rig.cycle()
    caplog.clear()
    rig.enable()
    assert _lines(caplog, logging.INFO) == ["enabled; holding the measured positions"]


def test_a_failed_open_is_counted_by_its_kind(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bus whose opening times out counts a timeout (not a transport error), and says it
    as its last error; then it connects."""
    _inject(rig.backend._slots[0].driver, "open", [_late()], monkeypatch)
    (bus,) = rig.cycle().buses
    assert dict(bus.errors) == {"timeout": 1, "protocol": 0, "transport": 0, "device": 0}
    assert (bus.connected, bus.last_error) == (False, "no answer within 50 ms (injected)")
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)


def test_a_bus_never_reached_is_named_again_every_10_s_not_at_each_attempt(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """A bus that cannot be opened: an error at the first attempt, then only debug lines
    until 10 s later, when the error is said again (on the manual clock)."""
    _inject(rig.backend._slots[0].driver, "open", [_unplugged()] * 100, monkeypatch)
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    errors = []
    for t in (1.0, 5.0, 11.0, 12.0):  # an attempt each (the backoff is at most 0.1 s)
        caplog.clear()
        rig.t = t
        rig.runner.cycle()
        errors.append(len(_lines(caplog, logging.ERROR)))
    assert errors == [1, 0, 1, 0]


def test_a_failed_bus_is_reopened_at_its_retry_time(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bus failed at ``t`` is reopened by the first cycle at ``t`` + its backoff (0.05
    s), not one later."""
    rig.enable()
    _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
    failed = rig.t = 1.0
    rig.runner.cycle()
    assert not rig.backend.status().buses[0].connected
    rig.t = failed + 0.05
    rig.runner.cycle()
    assert rig.backend.status().buses[0].connected


def test_a_joint_measured_at_exactly_its_limit_plus_the_tolerance_is_enabled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The enable's tolerance (0.02 rad) is inclusive: a wrist measured exactly that far
    past its upper limit, then past its lower one, is enabled each time, held at the
    limit."""
    rig = Rig(wrist=", limits: {position: {lower: -0.5, upper: 0.5}}")
    try:
        driver = rig.backend._slots[0].driver
        for measured, limit in ((0.5 + 0.02, 0.5), (-0.5 - 0.02, -0.5)):
            _reporting(driver, [{"position": measured}] * 1000, monkeypatch)
            rig.enable()
            assert rig.backend.status().target[rig.index] == pytest.approx(limit, abs=1e-9)
            request = rig.backend.disable()
            rig.cycle()
            assert request.ok, request.message
    finally:
        rig.close()


def test_a_measurement_without_velocity_or_effort_keeps_the_last_ones(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A drive's read that carries no velocity and no effort (NaN): the joint is measured
    (it has a position), and its velocity and effort stay the last ones read."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.5]).ok
    for _ in range(3):
        before = rig.cycle()
    _reporting(rig.backend._slots[0].driver, [{"velocity": math.nan, "effort": math.nan}],
               monkeypatch)
    after = rig.cycle()
    assert after.measured[rig.index]
    assert after.read_stamp > before.read_stamp
    assert after.velocity[rig.index] == before.velocity[rig.index] != 0.0
    assert after.effort[rig.index] == before.effort[rig.index]
    assert np.isfinite(after.effort[rig.index])


def test_the_command_timeout_is_said_per_actuator() -> None:
    """Holding after the command timeout: each actuator's diagnostics say it, as a
    warning; a new command ends it."""
    rig = Rig(command_timeout=0.05)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        rig.until(lambda: rig.backend.status().watchdog_tripped, limit=20)
        (wrist,) = rig.cycle().actuators
        assert (wrist.level, wrist.message) == (Level.WARN, "command timeout: holding")
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        (wrist,) = rig.cycle().actuators
        assert (wrist.level, wrist.message) == (Level.OK, "torque on")
    finally:
        rig.close()


def test_the_diagnostics_of_a_healthy_bus_and_drive_field_by_field(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """Enabled and moving, a drive reporting its voltage and temperature: every field of
    the bus's and the drive's diagnostics in the first snapshot after the report (they are
    refreshed every 50 ms), as a diagnostics message carries them."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.5]).ok
    rig.cycle()
    _reporting(rig.backend._slots[0].driver, [{"voltage": 24.5, "temperature": 41.0}] * 10,
               monkeypatch)
    for _ in range(6):
        status = rig.cycle()
        if status.actuators[0].voltage is not None:
            break
    assert status.fresh is True
    (bus,), (wrist,) = status.buses, status.actuators
    zero = {"timeout": 0, "protocol": 0, "transport": 0, "device": 0}
    assert _fields(bus) == {
        "name": "b", "protocol": "canopen", "level": Level.OK, "message": "connected",
        "connected": True, "errors": zero, "consecutive_failures": 0, "reconnects": 0,
        "reconnect_attempts": 0, "last_error": ""}
    effort = rig.backend._slots[0].states[NODE].effort
    assert math.isfinite(effort)
    assert _fields(wrist) == {
        "name": "wrist", "bus": "b", "id": NODE, "model": "", "level": Level.OK,
        "message": "torque on", "torque_enabled": True, "error_code": 0, "fault": "",
        "temperature": 41.0, "voltage": 24.5, "effort": effort, "errors": zero,
        "position": status.position[rig.index], "target": status.target[rig.index]}
    assert START < wrist.position < wrist.target < 0.5


def test_a_drive_fault_is_said_in_words_in_its_diagnostics(rig: Rig) -> None:
    """A drive in fault: its diagnostics are an error saying the fault in the drive's
    words (not only its code)."""
    rig.enable()
    rig.emulator.inject_fault(NODE)
    rig.until(lambda: rig.backend.status().actuators[0].error_code != 0, limit=20)
    (wrist,) = rig.backend.status().actuators
    assert wrist.fault.startswith("FAULT: error code 0x2310")
    assert (wrist.level, wrist.message) == (Level.ERROR, f"fault: {wrist.fault}")


def test_a_late_cycle_moves_two_periods_worth_and_one_at_the_same_time_one(rig: Rig) -> None:
    """At the velocity limit: a cycle three periods late moves the target two periods'
    worth (the limiter's time step is capped: a stalled loop does not jump), and a cycle
    at the very time of the last write one period's worth (never a step of 0 s)."""
    rig.enable()
    assert rig.core.command(CommandKind.POSITION, ["wrist"], [-1.5]).ok
    for _ in range(3):
        rig.cycle()
    last = rig.sent()[-1]
    step = rig.backend.period * WRIST_VELOCITY
    for dt, moved in ((3.0 * rig.backend.period, 2.0 * step), (0.0, step)):
        rig.cycle(dt=dt)
        (target,) = rig.sent()
        assert last - target == pytest.approx(moved, abs=1e-4), dt
        last = target


@pytest.mark.parametrize(("mode", "kind", "value"), [
    ("velocity", CommandKind.VELOCITY, 0.5), ("effort", CommandKind.EFFORT, 0.2)])
def test_a_velocity_or_effort_command_is_written_when_the_loop_is_woken(
        mode: str, kind: CommandKind, value: float) -> None:
    """A velocity or an effort command between two cycles goes to the drive at once (the
    wake writes it), not at the next cycle: only a spread stream's goals wait."""
    rig = Rig(mode=mode)
    try:
        rig.enable()
        rig.cycle()
        rig.sent()
        assert rig.core.command(kind, ["wrist"], [value]).ok
        rig.serve()
        assert len(rig.sent()) == 1
    finally:
        rig.close()


# ------------------------------------------------------------------ e-stops and faults


def test_an_estop_names_a_bus_whose_device_kept_torque_and_one_not_reached(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both buses fail, then an e-stop; ``b`` reconnects with its drive still reporting
    torque on, ``c`` cannot be reopened: the state's message names both, ``b`` first."""
    two = TwoBuses("hold")
    try:
        two.enable()
        for driver in two.drivers.values():
            _inject(driver, "read", [_unplugged()], monkeypatch)
        two.cycle()
        _inject(two.drivers["c"], "open", [_unplugged()] * 100, monkeypatch)
        _reporting(two.drivers["b"], [{"torque_enabled": True}] * 100, monkeypatch)
        request = two.backend.estop()
        two.backend.serve(two.t)
        assert request.message == (f"emergency stop: torque off NOT confirmed: bus 'b' {LOST};"
                                   f" bus 'c' {LOST}; enable to move again")
        two.until(lambda: two.backend.status().buses[0].connected)
        status = two.cycle()
        assert status.state is MotionState.ESTOP
        assert status.message == ("emergency stop: torque off NOT confirmed: bus 'b': a device"
                                  f" still reports torque on; bus 'c' {LOST}; enable to move"
                                  " again")
    finally:
        two.close()


def test_a_bus_failing_during_an_estop_stays_in_estop_and_says_both(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """An e-stop is logged as an error; a bus that fails, and cannot be reopened, after
    it: the state stays ``estop`` (only an enable moves), its message adds the failure to
    the e-stop's."""
    rig.enable()
    caplog.set_level(logging.ERROR, logger=LOGGER)
    request = rig.backend.estop()
    rig.backend.serve(rig.t)
    assert request.ok, request.message
    assert _lines(caplog, logging.ERROR) == ["emergency stop: torque off; enable to move again"]
    driver = rig.backend._slots[0].driver
    _inject(driver, "read", [_unplugged()], monkeypatch)
    _inject(driver, "open", [_unplugged()] * 100, monkeypatch)
    estop = "emergency stop: torque off; enable to move again"
    failed = "bus 'b' failed: CAN adapter unplugged (injected)"
    status = rig.cycle()
    assert (status.state, status.message) == (MotionState.ESTOP, f"{estop}; {failed}")
    for _ in range(10):  # reopenings fail
        status = rig.cycle()
    assert status.buses[0].reconnect_attempts > 1
    assert (status.state, status.message) == (MotionState.ESTOP, f"{estop}; {failed}")


def test_a_torque_loss_whose_torque_off_fails_reconnects_the_bus_after_its_backoff(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: torque_off``: the drive switches torque off without a fault, and the
    backend's own torque off then fails: the bus is closed, counted as one failed attempt,
    and reopened after its backoff (0.05 s), torque off."""
    rig = Rig(safe_state="torque_off")
    try:
        rig.enable()
        driver = rig.backend._slots[0].driver
        _reporting(driver, [{"torque_enabled": False}], monkeypatch)
        _inject(driver, "set_torque", [_unplugged()], monkeypatch)
        status = rig.cycle()
        (bus,) = status.buses
        failed = rig.t
        assert (bus.connected, bus.reconnect_attempts) == (False, 1)
        assert bus.last_error == "torque off failed: CAN adapter unplugged (injected)"
        # The state says the bus failed (it said "disabled" while the bus reconnected).
        assert status.state is MotionState.FAULT, status.message
        _reopened_after_its_backoff(rig, failed)
    finally:
        rig.close()


def test_a_velocity_joint_on_a_bus_reopened_holding_is_stopped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: hold``, the wrist in velocity mode at 0.5 rad/s: its bus fails and
    comes back with the drive holding: the wrist is sent a velocity of 0 (held), not its
    old command."""
    rig = Rig(mode="velocity")
    try:
        rig.enable()
        assert rig.core.command(CommandKind.VELOCITY, ["wrist"], [0.5]).ok
        for _ in range(10):
            rig.cycle()
        assert rig.emulator.state(NODE).velocity == pytest.approx(0.5, abs=0.05)
        _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        rig.until(lambda: rig.backend.state is MotionState.HOLDING, limit=30)
        for _ in range(10):
            rig.cycle()
        assert rig.emulator.state(NODE).velocity == pytest.approx(0.0, abs=0.05)
    finally:
        rig.close()


def test_a_bus_reopened_holding_restarts_its_joint_where_it_measures_it(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``safe_state: hold``: the wrist's drive, which kept torque through its bus's outage,
    reports it 0.05 rad from its last target (a load pushed it) when the bus comes back:
    the wrist restarts from there (its target, on the wire), not from its last target."""
    rig.enable()
    driver = rig.backend._slots[0].driver
    _inject(driver, "read", [_unplugged()], monkeypatch)
    before = rig.cycle().target[rig.index]
    assert before == pytest.approx(START, abs=1e-4)
    _reporting(driver, [{"position": START + 0.05}] * 40, monkeypatch)
    caplog.set_level(logging.WARNING, logger=LOGGER)
    rig.until(lambda: rig.backend.state is MotionState.HOLDING, limit=30)
    assert _lines(caplog, logging.WARNING)[-1] == (
        "bus 'b': 1 actuator(s) kept torque through the outage; holding their measured"
        " positions")
    rig.sent()
    status = rig.cycle()
    assert status.target[rig.index] == pytest.approx(START + 0.05, abs=1e-9)
    assert rig.sent() == [pytest.approx(START + 0.05, abs=1e-4)]


def test_clear_faults_says_per_joint_what_it_did_on_each_bus(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two buses: ``b``'s fault recovery fails (the bus is closed and cannot be reopened),
    ``c`` has no fault. ``clear_faults`` says so per joint, both times it is asked, and
    the wake that answers it reads ``c``; when ``c`` fails too, it reconnects on its own
    while ``b``'s reopenings keep failing before it."""
    two = TwoBuses("hold")
    # Every closed bus is due again at each cycle: ``b``'s failing reopening comes first.
    two.backend.reconnect_policy = ReconnectPolicy(initial_delay=1e-3, max_delay=1e-3,
                                                   factor=1.0)
    try:
        two.enable()
        refused = DeviceError("the drive refused the fault reset (injected)", actuator_id=4)
        _inject(two.drivers["b"], "clear_faults", [refused], monkeypatch)
        _inject(two.drivers["b"], "open", [_unplugged()] * 100, monkeypatch)
        first = two.backend.clear_faults()
        two.t += two.backend.period / 2
        two.backend.serve(two.t)
        assert (first.ok, first.message) == (False, "bus(es) not connected: b")
        assert first.details == {
            "wrist": f"clear_faults failed on bus 'b': {refused}",
            "shoulder_yaw": "no fault (OPERATION ENABLED)"}  # the driver's answer
        status = two.backend.status()
        assert status.read_stamp == two.t
        assert status.actuators[0].errors["device"] == 1  # counted against the drive
        _reporting(two.drivers["c"], [{"position": START + 0.02}] * 3, monkeypatch)
        second = two.backend.clear_faults()
        status = two.cycle()
        assert status.position[two.backend.index["shoulder_yaw"]] == START + 0.02  # read
        assert second.details == {
            "wrist": "bus 'b' not connected (CAN adapter unplugged (injected)); nothing done",
            "shoulder_yaw": "no fault (OPERATION ENABLED)"}
        _inject(two.drivers["c"], "read", [_unplugged()], monkeypatch)
        assert [b.connected for b in two.cycle().buses] == [False, False]
        third = two.backend.clear_faults()
        two.backend.serve(two.t)
        assert third.message == "bus(es) not connected: b, c"
        two.until(lambda: two.backend.status().buses[1].connected, limit=5)
        assert not two.backend.status().buses[0].connected
    finally:
        two.close()


def test_a_disable_whose_torque_off_fails_names_the_bus_and_reconnects_it(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disable whose torque off times out: the answer is not ok and says why, the
    timeout is counted as one, the bus is closed with torque off (at once: below the
    fault threshold all the same) and reopened after its backoff (0.05 s)."""
    rig.enable()
    _inject(rig.backend._slots[0].driver, "set_torque", [_late()], monkeypatch)
    request = rig.backend.disable()
    status = rig.cycle()
    failed = rig.t
    assert not request.ok
    assert request.message == (
        "torque off NOT confirmed: bus 'b' not reached (torque off failed: no answer within"
        " 50 ms (injected)): its torque is unknown; no device watchdog is armed"
        " (device_watchdog: 0): nothing stops them; torque goes off when it reconnects")
    assert dict(status.buses[0].errors) == {"timeout": 1, "protocol": 0, "transport": 0,
                                            "device": 0}
    _reopened_after_its_backoff(rig, failed)


def test_a_drive_fault_found_after_a_bus_failure_ends_as_a_reconnection(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bus fails, and the drive faults while it is down: the reopened bus reports the
    fault (the fault goes on), and once ``clear_faults`` recovered the drive the state
    says the bus reconnected (torque off), not only that the fault is gone."""
    rig = Rig(safe_state="torque_off")
    try:
        rig.enable()
        _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        rig.emulator.inject_fault(NODE)
        rig.until(lambda: rig.backend.status().actuators[0].error_code != 0, limit=30)
        assert rig.backend.state is MotionState.FAULT
        request = rig.backend.clear_faults()
        status = rig.cycle()
        assert request.ok, request.message
        assert (status.state, status.message) == (
            MotionState.DISABLED, "reconnected; torque off: enable to move again")
    finally:
        rig.close()


def test_a_timeout_whose_torque_off_fails_closes_the_bus_and_says_so(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``safe_state: torque_off``: the command timeout's torque off cannot reach the
    drive: the warning says the timeout, the bus is closed (torque off) and reopened
    after its backoff (0.05 s), torque off."""
    rig = Rig(safe_state="torque_off", command_timeout=0.05)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        _inject(rig.backend._slots[0].driver, "set_torque", [_unplugged()], monkeypatch)
        caplog.set_level(logging.WARNING, logger=LOGGER)
        rig.until(lambda: not rig.backend.status().buses[0].connected, limit=20)
        failed = rig.t
        assert "no command for 0.05 s: torque off" in _lines(caplog, logging.WARNING)
        assert rig.backend.status().buses[0].last_error == (
            "torque off failed: CAN adapter unplugged (injected)")
        _reopened_after_its_backoff(rig, failed)
    finally:
        rig.close()


def test_a_torque_loss_on_one_bus_while_another_holds_ends_in_holding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``safe_state: hold`` over two buses: ``b``'s drive reports torque off without a
    fault: motion stops, ``c`` holds (``holding``, saying why), ``b`` is no longer
    written."""
    two = TwoBuses("hold")
    try:
        two.enable()
        _reporting(two.drivers["b"], [{"torque_enabled": False}] * 5, monkeypatch)
        status = two.cycle()
        assert (status.state, status.message) == (
            MotionState.HOLDING,
            ("bus 'b': wrist switched torque off without reporting a fault (a power loss? a"
             " reset?): enable to move again"))
        assert two.torque("c")
    finally:
        two.close()


def test_a_drive_faulting_again_after_its_recovery_is_reported_again(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """A drive fault, ``clear_faults``, an enable, and the same fault again: it is logged
    and stops the motion again (a fault is said once while it lasts, not once ever)."""
    rig.enable()
    caplog.set_level(logging.ERROR, logger=LOGGER)
    for _ in range(2):
        caplog.clear()
        rig.emulator.inject_fault(NODE)
        rig.until(lambda: rig.backend.state is MotionState.FAULT, limit=20)
        assert [line for line in _lines(caplog, logging.ERROR) if "reports a fault" in line]
        request = rig.backend.clear_faults()
        rig.cycle()
        assert request.ok, request.message
        rig.enable()


# ------------------------------------------------------------------ auto_resume


def _fail_then_reopen(rig: Rig, monkeypatch: pytest.MonkeyPatch, late: int) -> None:
    """The wrist's bus fails while enabled; after its reopening its first ``late`` reads
    miss (below the fault threshold); returns once it is open again."""
    driver = rig.backend._slots[0].driver
    _inject(driver, "read", [_unplugged()] + [_late()] * late, monkeypatch)
    assert rig.cycle().state is MotionState.FAULT
    rig.until(lambda: rig.backend._slots[0].is_open, limit=30)


def test_an_auto_resume_in_a_wake_between_cycles_starts_the_command_timeout(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``auto_resume``: the reopened bus's first read misses, and a request wakes the loop
    before the next cycle; that wake's read resumes the motion, and the command timeout
    counts from it: without a command for 0.05 s torque goes off (``torque_off``)."""
    rig = Rig(safe_state="torque_off", auto_resume=True, command_timeout=0.05)
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        _fail_then_reopen(rig, monkeypatch, late=1)
        assert rig.backend.state is MotionState.FAULT
        request = rig.backend.enable()
        caplog.set_level(logging.WARNING, logger=LOGGER)
        assert rig.serve() is True  # the status changed: the loop sends it
        assert request.ok, request.message
        assert rig.backend.state is MotionState.ENABLED
        assert rig.core.read().stamp == rig.backend.status().read_stamp == rig.t
        assert _lines(caplog, logging.WARNING)[-1] == (
            "resumed automatically after the bus failure (auto_resume)")
        assert rig.emulator.state(NODE).torque_enabled
        rig.until(lambda: rig.backend.state is not MotionState.ENABLED, limit=20)
        status = rig.backend.status()
        assert (status.state, status.message) == (
            MotionState.DISABLED, "no command for 0.05 s: torque off; enable to move again")
    finally:
        rig.close()


def test_clear_faults_after_a_bus_failure_never_resumes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto_resume``: the reopened bus misses its cycle's read and the wake's read, and
    ``clear_faults``' own read is the first healthy one: it ends the fault with torque off,
    waiting for an enable (``clear_faults`` never switches torque on), and stays so."""
    rig = Rig(safe_state="torque_off", auto_resume=True)
    try:
        rig.enable()
        _fail_then_reopen(rig, monkeypatch, late=2)
        request = rig.backend.clear_faults()
        rig.serve()
        assert request.ok, request.message
        _stays_disabled_after_the_reconnection(rig)
    finally:
        rig.close()


def test_an_auto_resume_whose_torque_on_fails_says_so_and_resumes_at_the_next_reopening(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto_resume``: the bus fails while enabled, and the resume's torque on fails
    after the reopening: the state says why (``fault``, reconnecting), and the next
    reopening resumes, the command timeout (0.05 s) counting from then."""
    rig = Rig(safe_state="torque_off", auto_resume=True, command_timeout=0.05)
    try:
        rig.enable()
        driver = rig.backend._slots[0].driver
        _inject(driver, "read", [_unplugged()], monkeypatch)
        _inject(driver, "set_torque", [_unplugged()], monkeypatch)
        rig.cycle()
        rig.until(lambda: rig.backend.status().message.startswith("auto_resume"), limit=30)
        status = rig.backend.status()
        assert (status.state, status.message) == (
            MotionState.FAULT,
            "auto_resume failed: cannot enable: bus 'b': CAN adapter unplugged (injected)")
        assert not status.buses[0].connected
        rig.until(lambda: rig.backend.state is not MotionState.FAULT, limit=30)
        assert rig.backend.state is MotionState.ENABLED
        assert rig.emulator.state(NODE).torque_enabled
        # The command timeout counts from the resume: no command, torque off again.
        rig.until(lambda: rig.backend.state is not MotionState.ENABLED, limit=10)
        assert rig.backend.status().message == (
            "no command for 0.05 s: torque off; enable to move again")
    finally:
        rig.close()


def test_an_auto_resume_refused_for_a_joint_outside_its_limits_ends_disabled(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``auto_resume``: the wrist comes back from a bus failure measured outside its
    limits (moved by hand while the bus was down): the resume is refused, the state is
    ``disabled`` with torque off (an enable, refused until the joint is back, is needed);
    no later cycle tries again. Why it was refused is logged and stays in the message
    (it was overwritten by "reconnected; ..." and never said)."""
    rig = Rig(safe_state="torque_off", auto_resume=True)
    try:
        rig.enable()
        driver = rig.backend._slots[0].driver
        _inject(driver, "read", [_unplugged()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        _reporting(driver, [{"position": 2.5}] * 100, monkeypatch)  # limits: +-1.9 rad
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            rig.until(lambda: rig.backend.state is not MotionState.FAULT, limit=30)
        (warned,) = [line for line in _lines(caplog, logging.WARNING)
                     if line.startswith("auto_resume failed")]
        why = warned.removeprefix("auto_resume failed after the bus failure: ")
        assert "wrist" in why, why
        _stays_disabled_after_the_reconnection(rig, f" (auto_resume failed: {why})")
    finally:
        rig.close()


def test_auto_resume_does_not_resume_a_robot_disabled_before_its_bus_failed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto_resume``: a disable, then the bus fails and comes back: motion was not
    enabled when it failed, so it stays disabled, torque off."""
    rig = Rig(safe_state="torque_off", auto_resume=True)
    try:
        rig.enable()
        request = rig.backend.disable()
        rig.cycle()
        assert request.ok, request.message
        _bus_fails_then_returns(rig, monkeypatch)
        _stays_disabled_after_the_reconnection(rig)
    finally:
        rig.close()


def test_auto_resume_does_not_enable_a_robot_never_enabled(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto_resume``: connected but never enabled, the bus fails twice and comes back
    each time: nothing enables the robot (there was no motion to resume)."""
    rig = Rig(safe_state="torque_off", auto_resume=True)
    try:
        assert rig.cycle().state is MotionState.DISABLED
        for _ in range(2):
            _bus_fails_then_returns(rig, monkeypatch)
            _stays_disabled_after_the_reconnection(rig)
    finally:
        rig.close()


# ------------------------------------------------------------------ configurations


class _OneBus:
    """A backend over bus ``b`` of ``config`` (one emulator, started by ``start`` with the
    devices at ``initial``), its runner and core, on a manual clock; no re-enable bound."""

    def __init__(self, config: str, skeleton: Any, start: Any,
                 initial: dict[int, float]) -> None:
        self.t = 0.0
        parsed = parse_hardware_config(config, "rig.yaml")
        self.emulator = start({}, [m.actuator for m in parsed.joints],
                              {"clock": lambda: self.t, "initial_positions": initial})
        self.backend = HardwareBackend(
            parsed.with_transport("b", self.emulator.transport).bind(skeleton),
            clock=lambda: self.t, reenable_velocity=1.0)
        self.runner = hardware_runner(self.backend)
        self.core = self.runner.core

    def cycle(self) -> Any:
        self.t += self.backend.period
        self.runner.cycle()
        return self.backend.status()

    def enable(self) -> None:
        assert self.cycle().state is MotionState.DISABLED
        request = self.backend.enable()
        self.cycle()
        assert request.ok, request.message

    def close(self) -> None:
        self.runner.cleanup()
        self.emulator.stop()


def test_two_goals_handed_in_at_one_instant_are_a_step_not_a_stream() -> None:
    """An MIT motor in impedance mode (:mod:`test_stream_feedforward`'s elbow): two goals
    taken at the very same time (a wake, then a cycle at one clock reading) are no stream
    (a stream needs time between its goals): the last is approached as a step, its
    targets finite all the way, and reached."""
    rig = _OneBus(MIT, load_skel(ARM).skeletons[0], start_mit, {1: 0.0})
    try:
        rig.enable()
        elbow = rig.backend.index["elbow"]
        rig.t += rig.backend.period
        assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.05]).ok
        rig.backend.serve(rig.t)  # a wake: the goal is taken and written at once
        assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.1]).ok
        rig.runner.cycle()  # a cycle at that same time takes the second
        targets = [rig.backend.status().target[elbow]]
        targets += [rig.cycle().target[elbow] for _ in range(40)]
        assert np.isfinite(targets).all()
        assert targets[-1] == pytest.approx(0.1, abs=1e-9)
    finally:
        rig.close()


def test_a_stream_to_one_impedance_joint_leaves_the_others_steps_whole() -> None:
    """Two impedance joints on MIT motors: goals streamed to the elbow every other cycle
    do not make the wrist's next goal, right after one of them, part of a stream: the
    wrist's small step (inside one cycle at its velocity limit) is taken whole in the next
    cycle, not spread over the elbow's stream period."""
    two = MIT + ("  wrist: {bus: b, id: 2, model: AK80-9, mode: impedance,"
                 " options: {kp: 30.0, kd: 0.8}}\n")
    rig = _OneBus(two, load_skel(ARM).skeletons[0], start_mit, {1: 0.0, 2: 0.0})
    try:
        rig.enable()
        wrist = rig.backend.index["wrist"]
        start = rig.backend.status().target[wrist]
        for k in range(10):
            if k % 2 == 0:
                assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.01 * k]).ok
            rig.cycle()
        assert rig.core.command(CommandKind.POSITION, ["elbow"], [0.1]).ok
        rig.cycle()
        rig.cycle()  # the wrist's goal comes two periods after the elbow's last
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [start + 0.01]).ok
        assert rig.cycle().target[wrist] == pytest.approx(start + 0.01, abs=1e-9)
    finally:
        rig.close()


LINKAGE = """\
control_rate: 100.0
command_timeout: 0.0
device_watchdog: 0.0
reenable_velocity: 1.0
buses:
  b: {protocol: canopen, transport: {interface: virtual, channel: x},
      options: {sync_timeout: 0.5, heartbeat_ms: 0}}
joints:
  crank: {bus: b, id: 4, options: {counts_per_rev: 131072}}
  rocker: {bus: b, id: 5, options: {counts_per_rev: 131072}}
"""


def test_followers_with_an_offset_are_commanded_and_derived_by_their_rule() -> None:
    """A linkage whose followers have offsets: the rocker (its own drive; 0.5 crank + 0.3)
    is sent its rule of the crank's goal, the slider (no drive; -0.02 crank + 0.01) is
    derived from the crank's measurement."""
    skeleton = load_model(REPO / "test" / "model" / "data" / "mimic"
                          / "offset_linkage.urdf").skeletons[0]
    rig = _OneBus(LINKAGE, skeleton, start_emulator, {4: 0.0, 5: 0.3})
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["crank"], [0.2]).ok
        for _ in range(30):
            status = rig.cycle()
        crank, rocker, slider = (rig.backend.index[n] for n in ("crank", "rocker", "slider"))
        assert status.derived == ("slider",)
        assert status.target[crank] == pytest.approx(0.2, abs=1e-9)
        assert status.target[rocker] == pytest.approx(0.5 * 0.2 + 0.3, abs=1e-9)
        assert status.position[slider] == pytest.approx(
            -0.02 * status.position[crank] + 0.01, abs=1e-12)
        assert status.position[crank] == pytest.approx(0.2, abs=1e-3)
    finally:
        rig.close()


def test_a_bus_without_a_joint_is_not_driven() -> None:
    """A bus the YAML declares but maps no joint to is left alone: the backend drives
    the buses after it, and reports only those."""
    config = parse_hardware_config(
        "buses:\n"
        "  spare: {protocol: canopen, transport: {interface: virtual, channel: y}}\n"
        "  b: {protocol: canopen, transport: {interface: virtual, channel: x}}\n"
        "joints:\n  wrist: {bus: b, id: 4}\n", "spare.yaml")
    backend = HardwareBackend(config.bind(load_skel(ARM).skeletons[0]))
    try:
        assert [b.name for b in backend.status().buses] == ["b"]
        assert [a.bus for a in backend.status().actuators] == ["b"]
    finally:
        backend.close()


def test_without_write_on_command_a_command_waits_for_the_next_cycle() -> None:
    """``write_on_command`` off: a wake between cycles writes nothing, the cycle after it
    writes the command's target."""
    rig = Rig(write_on_command=False)
    try:
        rig.enable()
        rig.cycle()
        rig.sent()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        rig.serve()
        assert rig.sent() == []
        rig.cycle()
        assert len(rig.sent()) == 1
    finally:
        rig.close()
