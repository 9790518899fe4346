"""The hardware backend's motion limiter steps, checked on the wire.

Two lines of :mod:`skel_ros.hardware.backend` that mutation testing showed the rest of the
suite did not pin (issue 35):

* the time step handed to the limiter is capped at two control periods: after the loop
  stalls (a loaded host, a debugger, a slow bus), the next target moves at most what the
  velocity limit allows in two periods, never what it allows in the whole stall;
* when a bus comes back with its drives still holding (``safe_state: hold``), the limiter
  restarts from the measured positions, not from the targets it had sent before the
  outage, which the drives may be far short of.

The backend drives a CiA 402 drive emulated on a python-can ``virtual`` channel, under a
runner and a core as the hardware node does; a second python-can bus on the channel is
the bus analyser and reads the target of every RPDO1 the backend's driver sends. The
backend's and the emulator's clocks are one manual clock (no waiting for real time). The
device watchdog is off: the host's heartbeat is sent in real time, the drive supervises it
on the manual clock, so a jump of that clock (the stall below) could fire it at random.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import can
import pytest
from can_buses import OpenedBuses

from skel_ros.emulation.canopen402 import start_emulator
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
NODE = 4
START = 0.1  # where the wrist starts (rad)
WRIST_VELOCITY = 6.0  # the wrist's velocity limit in arm.skel (rad/s)
CPR = 131072 / (2 * math.pi)  # counts per rad of the drive (counts_per_rev below)
CONFIG = f"""\
control_rate: 100.0
command_timeout: 0.0
fault_threshold: 3
device_watchdog: 0.0
safe_state: hold
reconnect: {{initial_delay: 0.05, max_delay: 0.1, factor: 2.0}}
buses:
  b:
    protocol: canopen
    transport: {{interface: virtual, channel: x}}
    options: {{sync_timeout: 0.5, heartbeat_ms: 0}}
joints:
  wrist: {{bus: b, id: {NODE}, mode: position, options: {{counts_per_rev: 131072}}}}
"""


class Rig:
    """The wrist on an emulated CiA 402 drive, its backend, runner and core, an analyser."""

    def __init__(self, motor: dict[str, float] | None = None) -> None:
        self.t = 0.0
        skeleton = load_skel(ARM).skeletons[0]
        config = parse_hardware_config(CONFIG, "steps.yaml")
        actuators = [m.actuator for m in config.joints]
        self.emulator = start_emulator({}, actuators, {
            "clock": lambda: self.t, "initial_positions": {NODE: START},
            **({"motor": motor} if motor else {})})
        self.spy = can.Bus(**self.emulator.transport)
        config = config.with_transport("b", self.emulator.transport)
        # No re-enable bound: the targets move at the velocity limit from the enable on.
        self.backend = HardwareBackend(config.bind(skeleton), clock=lambda: self.t,
                                       reenable_velocity=1.0)
        self.runner = hardware_runner(self.backend)
        self.core = self.runner.core
        self.index = self.backend.names.index("wrist")

    def cycle(self, dt: float | None = None) -> Any:
        """One control cycle ``dt`` (default one period) after the last one."""
        self.t += self.backend.period if dt is None else dt
        self.runner.cycle()
        return self.backend.status()

    def until(self, predicate: Callable[[], bool], limit: int = 300) -> None:
        for _ in range(limit):
            self.cycle()
            if predicate():
                return
        raise AssertionError(f"not reached in {limit} cycles: {self.backend.status().message}")

    def sent(self) -> list[float]:
        """The wrist's target (rad) in every RPDO1 on the wire since the last call."""
        out = []
        while (msg := self.spy.recv(0)) is not None:
            if msg.arbitration_id == 0x200 + NODE:
                out.append(int.from_bytes(msg.data[2:6], "little", signed=True) / CPR)
        return out

    def enable(self) -> None:
        status = self.cycle()
        assert status.state is MotionState.DISABLED, status.message
        request = self.backend.enable()
        self.until(lambda: request.done)
        assert request.ok, request.message

    def close(self) -> None:
        self.runner.cleanup()
        self.spy.shutdown()
        self.emulator.stop()


def test_after_a_loop_stall_one_write_moves_at_most_two_periods_at_the_velocity_limit(
        ) -> None:
    """A 1 s stall between two cycles, while the wrist is on its way to a goal 1.6 rad
    away: the target written after the stall moves at most 2 periods x 6 rad/s = 0.12 rad
    (the limiter's time step is capped at two periods), not the whole way to the goal as
    one step of 1 s would allow."""
    rig = Rig()
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [-1.5]).ok
        for _ in range(3):
            rig.cycle()
        before = rig.sent()
        assert len(before) >= 3
        steps = [b - a for a, b in zip(before[-3:], before[-2:], strict=False)]
        assert steps == pytest.approx([-WRIST_VELOCITY * rig.backend.period] * 2, abs=1e-4)
        status = rig.cycle(dt=1.0)  # the stall
        after = rig.sent()
        assert after, "nothing written after the stall"
        moved = abs(after[0] - before[-1])
        assert moved <= 2 * rig.backend.period * WRIST_VELOCITY + 1e-4, after
        assert moved > 0  # still on its way
        assert status.target[rig.index] == pytest.approx(after[0], abs=1e-4)
    finally:
        rig.close()


def test_a_bus_back_with_the_drive_holding_restarts_from_the_measured_position(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The wrist is on its way to a far goal, its (slow: a 0.5 s time constant) drive far
    behind the targets, when the host's CAN socket dies; the drive keeps torque and its
    last target. When the bus is back (safe_state hold: the backend holds), the first
    targets sent start from the measured position (within one step at the velocity limit),
    not from the last target sent before the outage, which the drive is far short of."""
    capture = OpenedBuses(monkeypatch)
    rig = Rig(motor={"time_constant": 0.5})
    try:
        rig.enable()
        assert rig.core.command(CommandKind.POSITION, ["wrist"], [1.8]).ok
        for _ in range(20):
            rig.cycle()
        old_target = rig.sent()[-1]
        assert old_target == pytest.approx(START + 20 * 0.01 * WRIST_VELOCITY, abs=1e-3)
        capture.buses[-1].shutdown()  # the adapter is unplugged: the drive keeps holding
        rig.until(lambda: rig.backend.status().state is MotionState.FAULT, limit=10)
        assert rig.sent() == []
        rig.until(lambda: rig.backend.status().state is MotionState.HOLDING, limit=100)
        status = rig.backend.status()
        assert status.buses[0].reconnects == 1
        assert rig.emulator.state(NODE).torque_enabled
        measured = status.position[rig.index]
        assert old_target - measured > 0.5, "the drive is not short of its target"
        first = rig.sent()
        assert first, "nothing written after the reconnection"
        step = rig.backend.period * WRIST_VELOCITY
        assert abs(first[0] - measured) <= step, (first, measured, old_target)
        for _ in range(5):  # and it goes on holding there
            rig.cycle()
        assert all(abs(q - measured) <= step for q in rig.sent())
    finally:
        rig.close()
