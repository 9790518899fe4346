"""What the hardware backend says to an operator, word for word.

The log lines (on the ``skel_ros.hardware`` logger), the status and diagnostics messages
and the requests' answers of :class:`~skel_ros.hardware.HardwareBackend` that an operator
reads: the DOFs a configuration leaves undriven, a bus not connected (with and without an
error), an actuator with no data yet, a bus that cannot be opened and then connects, a
bus's missed reads, its failure and its reconnection under each safe state, the answers
of ``clear_faults`` and the state after them, the state that ends a bus failure, a control
rate out of range, and the core's own lines, which a hardware runner sends to the same
logger. Mutation testing (bench/mutation.py, target
``backend``) showed that no test read these words.

The rig (:mod:`cia402_rig`): the wrist on an emulated CiA 402 drive, on a manual clock.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import pytest
from cia402_rig import ARM, NODE, Rig
from test_backend_gaps import _inject, _late, _unplugged

from skel_ros.hardware import HardwareBackend, MotionState, parse_hardware_config
from skel_ros.hardware.diagnostics import Level
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind

LOGGER = "skel_ros.hardware"
BUS_CONFIG = """\
buses:
  b: {protocol: canopen, transport: {interface: virtual, channel: x}}
joints:
  wrist: {bus: b, id: 4}
"""


def _lines(caplog: pytest.LogCaptureFixture, level: int = logging.DEBUG) -> list[str]:
    """The hardware logger's lines at ``level`` and above, in order."""
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno >= level]


def test_a_backend_names_the_file_and_the_dofs_it_does_not_drive(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    rig = Rig()
    try:
        assert _lines(caplog) == [("rig.yaml: 3 DOF(s) of skeleton 'arm' have no actuator and"
                                   " are not driven: shoulder_yaw, shoulder_pitch, elbow")]
    finally:
        rig.close()


def test_before_the_first_cycle_the_bus_is_not_connected_and_nothing_is_known(
        rig: Rig) -> None:
    """Before the loop's first cycle: the bus "not connected" (no error yet), the drive
    without data, no fault text and no torque state, and a request not answered yet has
    an empty message (a string, as a service response carries it)."""
    status = rig.backend.status()
    (bus,) = status.buses
    assert (bus.level, bus.message, bus.last_error) == (Level.ERROR, "not connected", "")
    (wrist,) = status.actuators
    assert (wrist.level, wrist.message) == (Level.STALE, "no data: bus not connected")
    assert (wrist.fault, wrist.error_code, wrist.torque_enabled) == ("", 0, None)
    assert rig.backend.enable().message == ""


def test_a_bus_that_cannot_be_opened_says_why_until_it_connects(
        rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The first open fails: the diagnostics and the log say why (and that it retries);
    the retry after the backoff connects, which the log says with the protocol and the
    number of actuators."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    _inject(rig.backend._slots[0].driver, "open", [_unplugged()], monkeypatch)
    status = rig.cycle()
    assert status.buses[0].message == "not connected: CAN adapter unplugged (injected)"
    rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
    assert _lines(caplog, logging.INFO) == [
        ("bus 'b' (canopen) not connected (attempt 1; still trying, this repeats every 10 s):"
         " CAN adapter unplugged (injected)"),
        "bus 'b' (canopen): connected, 1 actuator(s)"]
    assert rig.backend.status().buses[0].message == "connected"


@pytest.mark.parametrize(("safe_state", "closing", "reconnected"), [
    ("hold", "(servos keep holding: safe_state hold)",
     "; servos that still hold keep holding"),
    ("torque_off", "(torque off)", ""),
])
def test_a_bus_that_keeps_missing_its_reads_is_logged_as_it_fails_and_comes_back(
        safe_state: str, closing: str, reconnected: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Each missed read below the fault threshold (3) is a debug line with the count in a
    row; the third fails the bus, an error line saying what its servos do under the safe
    state; its reconnection is a warning saying whether servos still hold."""
    rig = Rig(safe_state=safe_state)
    try:
        rig.enable()
        caplog.set_level(logging.DEBUG, logger=LOGGER)
        caplog.clear()
        _inject(rig.backend._slots[0].driver, "read", [_late()] * 3, monkeypatch)
        for _ in range(3):
            rig.cycle()
        assert rig.backend.status().state is MotionState.FAULT
        rig.until(lambda: rig.backend.status().buses[0].connected, limit=30)
        late = "no answer within 50 ms (injected)"
        assert _lines(caplog)[:4] == [
            f"bus 'b': {late} (1 in a row)",
            f"bus 'b': {late} (2 in a row)",
            f"bus 'b' failed: {late}; closing it {closing} and reconnecting",
            f"bus 'b': reconnected (failure 1 in a row){reconnected}"]
    finally:
        rig.close()


def test_clear_faults_that_recovers_the_drive_says_enable_to_move(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """A drive fault that a fault reset clears, under ``safe_state: hold``: the drive's
    fault drops its torque, so no target goes to it from the fault on; ``clear_faults``
    answers that no actuator reports a fault, torque off, the log says the bus's fault is
    gone, and the state is what the drive says: ``disabled`` (torque off, not ``holding``:
    no bus reconnected), saying an enable is needed. No target reaches the drive until
    that enable, which holds the measured position.

    Before: the backend kept the bus's torque as it set it, went to ``holding`` ("reconnected,
    torque on where the devices kept it") and sent the drive a target every cycle.
    """
    rig.enable()
    caplog.set_level(logging.WARNING, logger=LOGGER)
    rig.emulator.inject_fault(NODE)
    rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=20)
    assert not rig.emulator.state(NODE).torque_enabled
    assert _lines(caplog)[-1] == ("bus 'b': no actuator reports torque on any more (in fault:"
                                  " wrist); nothing is written to it until torque is switched"
                                  " on again")
    rig.sent()
    for _ in range(3):
        rig.cycle()
    assert rig.sent() == []  # the drive has no torque: nothing to hold
    caplog.set_level(logging.INFO, logger=LOGGER)
    caplog.clear()
    request = rig.backend.clear_faults()
    status = rig.cycle()
    assert request.ok, request.message
    assert request.message == ("no actuator reports a fault; the recovered ones have torque"
                               " off: enable to move")
    assert request.details["wrist"].startswith("fault reset sent (was ")
    assert not rig.emulator.state(NODE).torque_enabled
    assert "bus 'b': no actuator reports a fault any more" in _lines(caplog, logging.INFO)
    assert (status.state, status.message) == (
        MotionState.DISABLED,
        "no actuator reports a fault any more; torque off: enable to move again")
    assert status.actuators[0].torque_enabled is False
    for _ in range(5):
        status = rig.cycle()
    assert status.state is MotionState.DISABLED
    assert rig.sent() == []  # not one target until the enable
    rig.enable()
    rig.cycle()
    held = rig.sent()
    assert held  # the analyser does see the targets once torque is on
    assert held[-1] == pytest.approx(status.position[rig.index], abs=1e-4)


@pytest.mark.parametrize(("safe_state", "state", "reconnected"), [
    ("hold", MotionState.HOLDING,
     "reconnected, torque on where the devices kept it: enable to move"),
    ("torque_off", MotionState.DISABLED, "reconnected; torque off: enable to move again"),
], ids=["hold", "torque_off"])
def test_the_state_after_a_fault_says_what_ended_it(
        safe_state: str, state: MotionState, reconnected: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A bus failure ends with its reconnection ("reconnected", the drive holding or not as
    the safe state left it); a drive fault cleared after it, with no bus failing in between,
    ends with "no actuator reports a fault any more" (the reconnection is not said again)."""
    rig = Rig(safe_state=safe_state)
    try:
        rig.enable()
        _inject(rig.backend._slots[0].driver, "read", [_unplugged()], monkeypatch)
        assert rig.cycle().state is MotionState.FAULT
        rig.until(lambda: rig.backend.status().state is not MotionState.FAULT, limit=30)
        status = rig.backend.status()
        assert (status.state, status.message) == (state, reconnected)
        request = rig.backend.enable()
        rig.until(lambda: request.done)
        assert request.ok, request.message
        rig.emulator.inject_fault(NODE)
        rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=20)
        request = rig.backend.clear_faults()
        status = rig.cycle()
        assert request.ok, request.message
        assert (status.state, status.message) == (
            MotionState.DISABLED,
            "no actuator reports a fault any more; torque off: enable to move again")
    finally:
        rig.close()


def test_clear_faults_reports_no_fault_for_an_actuator_its_driver_says_nothing_about(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """A driver may answer only for the actuators it recovered: one it says nothing about
    is reported "no fault"."""
    rig.enable()
    monkeypatch.setattr(rig.backend._slots[0].driver, "clear_faults", dict)
    request = rig.backend.clear_faults()
    rig.cycle()
    assert request.ok, request.message
    assert request.details == {"wrist": "no fault"}


@pytest.mark.parametrize("rate", [-5.0, math.inf, math.nan])
def test_a_control_rate_out_of_range_is_refused_naming_it(rate: float) -> None:
    bound = parse_hardware_config(BUS_CONFIG, "rate.yaml").bind(load_skel(ARM).skeletons[0])
    with pytest.raises(ValueError, match=r"^control_rate must be > 0, got") as info:
        HardwareBackend(bound, control_rate=rate)
    assert str(info.value) == f"control_rate must be > 0, got {rate!r}"


def test_a_configuration_built_with_a_zero_control_rate_is_refused_naming_it() -> None:
    """A configuration made in code skips the YAML's checks: a control rate of 0 there is
    refused as one given to the backend is (not a division by zero), and the message
    names the configuration's rate (before: "got None", the argument not given)."""
    config = replace(parse_hardware_config(BUS_CONFIG, "rate.yaml"), control_rate=0.0)
    with pytest.raises(ValueError, match=r"^control_rate must be > 0") as info:
        HardwareBackend(config.bind(load_skel(ARM).skeletons[0]))
    assert str(info.value) == "control_rate must be > 0, got 0.0"


def test_a_zero_control_rate_given_to_the_backend_is_refused_not_replaced() -> None:
    """``control_rate=0.0`` overrides the YAML's rate as any other value does: it is refused
    (before: 0 was taken for "not given" and the YAML's 200 Hz ran instead)."""
    bound = parse_hardware_config(BUS_CONFIG, "rate.yaml").bind(load_skel(ARM).skeletons[0])
    with pytest.raises(ValueError, match=r"^control_rate must be > 0") as info:
        HardwareBackend(bound, control_rate=0.0)
    assert str(info.value) == "control_rate must be > 0, got 0.0"


def test_a_hardware_runners_core_logs_on_the_hardware_logger(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    """The core under a hardware runner (the rig's, with no log given) says its own lines
    on ``skel_ros.hardware``, with the backend's: here a command naming a DOF without an
    actuator."""
    rig.enable()
    caplog.set_level(logging.WARNING)
    caplog.clear()
    rig.core.command(CommandKind.POSITION, ["wrist", "elbow"], [0.2, 0.1])
    assert [(r.name, r.getMessage()) for r in caplog.records] == [
        (LOGGER, "commands for DOF(s) without an actuator are ignored: elbow")]
