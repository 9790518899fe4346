"""The hardware manager on the CAN drivers and their emulators (end to end, no ROS).

The arm example's four DOFs on one CAN bus, first as MIT motors, then as CiA 402 drives:
connect, enable (holding the measured positions), a position command reaches the
emulated shafts, a device fault fails the bus and the manager reconnects. The manager's
and the emulators' clocks are one manual clock: the tests step it; the bus I/O is real. A device
fault keeps the bus open; ``clear_faults`` runs the protocol's recovery.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from skel_ros.emulation.canopen402 import start_emulator as start_cia402
from skel_ros.emulation.mit import start_emulator as start_mit
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[3]
ARM = REPO / "examples" / "arm.skel"
START = {1: 0.3, 2: -0.2, 3: 0.5, 4: 0.1}

MIT_JOINT = "{{bus: b, id: {id}, model: AK80-9, mode: impedance, options: {{kp: 8.0, kd: 0.3}}}}"
CIA_JOINT = "{{bus: b, id: {id}, mode: position, options: {{counts_per_rev: 131072}}}}"


def _config(protocol: str, joint: str, transport: dict[str, Any], options: str) -> str:
    names = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
    lines = ["control_rate: 100.0", "command_timeout: 0.0", "fault_threshold: 3",
             "reconnect: {initial_delay: 0.05, max_delay: 0.1, factor: 2.0}", "buses:",
             "  b:", f"    protocol: {protocol}",
             "    transport: {" + ", ".join(f"{k}: {v}" for k, v in transport.items()) + "}",
             f"    options: {options}", "joints:"]
    lines += [f"  {n}: " + joint.format(id=i + 1) for i, n in enumerate(names)]
    return "\n".join(lines) + "\n"


class Rig:
    def __init__(self, protocol: str, start: Callable[..., Any], joint: str,
                 options: str) -> None:
        self.t = 0.0
        skeleton = load_skel(ARM).skeletons[0]
        text = _config(protocol, joint, {"interface": "virtual", "channel": "x"}, options)
        config = parse_hardware_config(text, "can.yaml")
        actuators = [m.actuator for m in config.joints]
        self.emulator = start({}, actuators, {"clock": lambda: self.t,
                                              "initial_positions": START})
        config = config.with_transport("b", self.emulator.transport)
        self.attach(HardwareBackend(config.bind(skeleton), clock=lambda: self.t))

    def attach(self, backend: HardwareBackend) -> None:
        """Drive ``backend`` under a runner and a core, as the hardware node does."""
        self.backend = backend
        self.runner = hardware_runner(backend)
        self.core = self.runner.core

    def step(self, n: int = 1) -> Any:
        status = None
        for _ in range(n):
            self.t += self.backend.period
            self.runner.cycle()
            status = self.backend.status()
        return status

    def until(self, predicate: Callable[[], bool], limit: int = 300) -> None:
        for _ in range(limit):
            self.step()
            if predicate():
                return
        raise AssertionError(f"not reached in {limit} cycles: {self.backend.status().message}")

    def close(self) -> None:
        self.runner.cleanup()
        self.emulator.stop()


CASES = {
    "mit": ("mit", start_mit, MIT_JOINT, "{reply_timeout: 0.2}"),
    "canopen": ("canopen", start_cia402, CIA_JOINT, "{sync_timeout: 0.3, heartbeat_ms: 0}"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_manager_drives_the_can_emulators(case: str) -> None:
    protocol, start, joint, options = CASES[case]
    rig = Rig(protocol, start, joint, options)
    try:
        status = rig.step()
        assert status.state is MotionState.DISABLED, status.message
        request = rig.backend.enable()
        rig.until(lambda: request.done)
        assert request.ok, request.message
        for i in (1, 2, 3, 4):  # no jump on enable
            assert rig.emulator.state(i).position == pytest.approx(START[i], abs=2e-3)
        result = rig.core.command(CommandKind.POSITION, ["wrist"], [0.4])
        assert result.ok, result.reason
        rig.until(lambda: abs(rig.emulator.state(4).position - 0.4) < 2e-3)
        status = rig.step(50)  # settled
        index = status.names.index("wrist")
        assert status.position[index] == pytest.approx(0.4, abs=2e-3)
        assert rig.emulator.state(4).position == pytest.approx(0.4, abs=2e-3)
        # A device fault fails the bus; the manager closes it and reconnects.
        if protocol == "mit":
            rig.emulator.inject_error(2, 1)
        else:
            rig.emulator.inject_fault(2, 0x2310)
        rig.until(lambda: rig.backend.status().state is MotionState.FAULT)
        if protocol == "mit":
            rig.emulator.inject_error(2, 0)  # the over-temperature is gone
        request = rig.backend.clear_faults()
        rig.until(lambda: request.done)
        assert request.ok, (request.message, request.details)
        rig.until(lambda: rig.backend.status().state is not MotionState.FAULT)
        # safe_state hold: the healthy actuators kept holding; the one that faulted stays
        # torque off until an enable.
        assert rig.backend.status().state is MotionState.HOLDING
        assert not rig.emulator.state(2).torque_enabled
        assert all(rig.emulator.state(i).torque_enabled for i in (1, 3, 4))
    finally:
        rig.close()


def test_an_mit_reading_is_stamped_when_the_motors_measured_it() -> None:
    """A reply read a cycle after its frame carries that frame's time, not the read's.

    An MIT motor answers each frame with its state the moment it takes it; the driver
    collects the replies to a cycle's commands in the next cycle's read. The core's
    reading (what joint_states is stamped with) is when the motors measured it: the last
    cycle's write, one period before the read (planted: the read's own time).
    """
    protocol, start, joint, options = CASES["mit"]
    rig = Rig(protocol, start, joint, options)
    try:
        request = rig.backend.enable()
        rig.until(lambda: request.done)
        assert request.ok, request.message
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [0.3]).ok
        for _ in range(5):
            rig.step()
            reading = rig.backend.read(rig.t)
            assert reading.stamp == pytest.approx(rig.t - rig.backend.period, abs=1e-9)
            assert reading.fresh.all()
    finally:
        rig.close()
