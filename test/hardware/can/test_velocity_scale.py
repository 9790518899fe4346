"""CiA 402 velocity targets on the wire are scaled by ``velocity_per_rad_s``.

A drive's velocity unit (0x606C, 0x60FF) need not be its position count per second: with
``velocity_per_rad_s: 100`` (0.01 rad/s per unit) and an encoder of 4096 counts a turn
(651.9 counts per rad), 1.5 rad/s must go out as 150, not as 978 (the position scale:
6.5 times too fast). Mutation testing (issue 35) found no test that told the two apart:
elsewhere the two scales are equal, the default.

A second python-can bus on the same virtual channel is the bus analyser: it sees each
RPDO1 (controlword, target) exactly as the drive does. The emulated drive runs on a
manual clock; nothing waits for real time.
"""

from __future__ import annotations

import math
import time

import can
import pytest

from skel_ros.emulation.canopen402 import Cia402Emulator
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.canopen402.bus import Cia402Bus

VELOCITY_PER_RAD_S = 100
COUNTS_PER_REV = 4096


class Clock:
    def __init__(self, t: float = 50.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _rpdo_targets(spy: can.BusABC, node: int = 1) -> list[int]:
    """The target (bytes 2..5, signed) of every RPDO1 to ``node`` the analyser received."""
    out = []
    while (msg := spy.recv(0)) is not None:
        if msg.arbitration_id == 0x200 + node:
            out.append(int.from_bytes(msg.data[2:6], "little", signed=True))
    return out


@pytest.mark.parametrize("op_mode", ["csv", "pv"])
def test_a_velocity_goes_out_in_the_drives_velocity_units(op_mode: str) -> None:
    """1.5 rad/s reaches the drive's target velocity 0x60FF as round(1.5 * 100) = 150,
    in cyclic synchronous velocity and in profile velocity; the drive turns at 1.5 rad/s
    and the driver reads that back through the same scale."""
    actuator = ActuatorSpec(1, ControlMode.VELOCITY, name="wheel", options={
        "counts_per_rev": COUNTS_PER_REV, "velocity_per_rad_s": VELOCITY_PER_RAD_S,
        "op_mode": op_mode})
    clock = Clock()
    emulator = Cia402Emulator({}, [actuator], {"clock": clock})
    spy = can.Bus(**emulator.transport)
    bus = Cia402Bus(BusSpec("base", "canopen", emulator.transport,
                            {"sync_timeout": 0.5, "heartbeat_ms": 0}), [actuator],
                    time.monotonic)
    try:
        bus.open()
        bus.set_torque(True)
        _rpdo_targets(spy)  # what opening and enabling sent
        bus.write({1: ActuatorCommand(velocity=1.5)})
        bus.read()  # SYNC: the drive takes the RPDO
        sent = _rpdo_targets(spy)
        assert sent, "no RPDO1 on the wire"
        assert sent[-1] == round(1.5 * VELOCITY_PER_RAD_S)
        assert round(1.5 * COUNTS_PER_REV / (2 * math.pi)) != sent[-1]  # the scales differ
        assert emulator.target(1) == pytest.approx(1.5)  # 0x60FF as the drive decodes it
        clock.t += 1.0
        states = bus.read()
        assert emulator.state(1).velocity == pytest.approx(1.5, abs=1e-3)
        assert states[1].velocity == pytest.approx(1.5, abs=1.0 / VELOCITY_PER_RAD_S)
    finally:
        bus.close()
        spy.shutdown()
        emulator.stop()
