"""One wrist on an emulated CiA 402 drive under the hardware backend, on a manual clock.

The backend drives a CiA 402 drive emulated on a python-can ``virtual`` channel, under a
runner and a core as the hardware node does; a second python-can bus on the channel is
the bus analyser and reads the target of every RPDO1 the backend's driver sends. The
backend's and the emulator's clocks are one manual clock (no waiting for real time). The
device watchdog is off: the host's heartbeat is sent in real time, the drive supervises it
on the manual clock, so a jump of that clock could fire it at random.

Shared by the tests of the backend's paths (test_limiter_steps.py, test_backend_paths.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import can

from skel_ros.emulation.canopen402 import start_emulator
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, parse_hardware_config
from skel_ros.model import load_skel

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
NODE = 4
START = 0.1  # where the wrist starts (rad)
WRIST_VELOCITY = 6.0  # the wrist's velocity limit in arm.skel (rad/s)
CPR = 131072 / (2 * math.pi)  # counts per rad of the drive (counts_per_rev below)
CONFIG = """\
control_rate: 100.0
command_timeout: {command_timeout}
fault_threshold: {fault_threshold}
device_watchdog: 0.0
safe_state: {safe_state}
reconnect: {{initial_delay: 0.05, max_delay: 0.1, factor: 2.0}}
buses:
  b:
    protocol: canopen
    transport: {{interface: virtual, channel: x}}
    options: {{sync_timeout: 0.5, heartbeat_ms: 0}}
joints:
  wrist: {{bus: b, id: {node}, mode: {mode}, direction: {direction}, gear_ratio: {gear_ratio},
          options: {{counts_per_rev: 131072}}{wrist}}}
"""


class Rig:
    """The wrist on an emulated CiA 402 drive, its backend, runner and core, an analyser."""

    def __init__(self, motor: dict[str, float] | None = None, *, safe_state: str = "hold",
                 command_timeout: float = 0.0, mode: str = "position", direction: int = 1,
                 gear_ratio: float = 1.0, fault_threshold: int = 3, wrist: str = "",
                 **backend: Any) -> None:
        """``wrist``: more keys of the wrist's mapping (``", limits: {...}"``)."""
        self.t = 0.0
        skeleton = load_skel(ARM).skeletons[0]
        config = parse_hardware_config(CONFIG.format(
            safe_state=safe_state, command_timeout=command_timeout, mode=mode, node=NODE,
            direction=direction, gear_ratio=gear_ratio, fault_threshold=fault_threshold,
            wrist=wrist),
            "rig.yaml")
        actuators = [m.actuator for m in config.joints]
        self.emulator = start_emulator({}, actuators, {
            "clock": lambda: self.t, "initial_positions": {NODE: START},
            **({"motor": motor} if motor else {})})
        self.spy = can.Bus(**self.emulator.transport)
        config = config.with_transport("b", self.emulator.transport)
        # No re-enable bound: the targets move at the velocity limit from the enable on.
        self.backend = HardwareBackend(config.bind(skeleton), clock=lambda: self.t,
                                       **{"reenable_velocity": 1.0, **backend})
        self.runner = hardware_runner(self.backend)
        self.core = self.runner.core
        self.index = self.backend.names.index("wrist")

    def cycle(self, dt: float | None = None) -> Any:
        """One control cycle ``dt`` (default one period) after the last one."""
        self.t += self.backend.period if dt is None else dt
        self.runner.cycle()
        return self.backend.status()

    def serve(self) -> bool:
        """The loop woken half a period after the last cycle (a command, a request): serve."""
        self.t += self.backend.period / 2
        return self.backend.serve(self.t)

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
