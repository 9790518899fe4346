"""The hardware backend's motion limiter steps, checked on the wire.

Two lines of :mod:`skel_ros.hardware.backend` that mutation testing showed the rest of the
suite did not pin (issue 35):

* the time step handed to the limiter is capped at two control periods: after the loop
  stalls (a loaded host, a debugger, a slow bus), the next target moves at most what the
  velocity limit allows in two periods, never what it allows in the whole stall;
* when a bus comes back with its drives still holding (``safe_state: hold``), the limiter
  restarts from the measured positions, not from the targets it had sent before the
  outage, which the drives may be far short of.

The rig (:mod:`cia402_rig`): the wrist on an emulated CiA 402 drive, the backend and the
emulator on one manual clock, a bus analyser reading every RPDO1.
"""

from __future__ import annotations

import pytest
from can_buses import OpenedBuses
from cia402_rig import NODE, START, WRIST_VELOCITY, Rig

from skel_ros.hardware import MotionState
from skel_ros.model.limits import CommandKind


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
