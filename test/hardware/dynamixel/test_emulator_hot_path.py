"""A control cycle's goal written again is checked and applied again, as the e-Manual says.

These tests write the same goal again after each thing that changes whether it is valid
or where the motor is heading, and check it is refused or applied. Packets read from the
port in one piece share their arrival time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.emulation import dynamixel as emu
from skel_ros.emulation.dynamixel import EmulatedServo, ServoBus
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as p

if TYPE_CHECKING:
    from collections.abc import Callable

NOW = 50.0
MODEL = ct.MODELS["XM430-W350"]


def _i32(value: int) -> bytes:
    return value.to_bytes(4, "little", signed=True)


def _servo() -> EmulatedServo:
    return EmulatedServo.create(1, MODEL, 0.0, NOW - 1.0)


def test_the_same_goal_velocity_after_a_lower_velocity_limit_is_refused() -> None:
    servo = _servo()
    assert servo.write(ct.OPERATING_MODE.address, bytes((ct.MODE_VELOCITY,)), NOW) == 0
    assert servo.write(ct.GOAL_VELOCITY.address, _i32(200), NOW) == 0
    assert servo.write(ct.VELOCITY_LIMIT.address, _i32(100), NOW) == 0  # torque off: EEPROM
    assert servo.write(ct.GOAL_VELOCITY.address, _i32(200), NOW) == p.StatusError.DATA_LIMIT
    assert servo.write(ct.GOAL_VELOCITY.address, _i32(100), NOW) == 0
    assert servo.write(ct.VELOCITY_LIMIT.address, _i32(50), NOW) == 0
    assert servo.write(ct.GOAL_POSITION.address, _i32(2048), NOW) == 0  # another goal between
    assert servo.write(ct.GOAL_VELOCITY.address, _i32(100), NOW) == p.StatusError.DATA_LIMIT


def test_the_same_goal_after_the_bus_watchdog_expired_is_refused() -> None:
    servo = _servo()
    bus = ServoBus({1: servo}, lambda: NOW)
    assert servo.write(ct.BUS_WATCHDOG.address, b"\x05", NOW) == 0  # 100 ms
    assert servo.write(ct.TORQUE_ENABLE.address, b"\x01", NOW) == 0
    assert servo.write(ct.GOAL_POSITION.address, _i32(3000), NOW) == 0
    bus.last_rx = NOW
    bus.check_watchdogs(NOW + 0.2)
    assert servo.table[ct.BUS_WATCHDOG.address] == ct.BUS_WATCHDOG_EXPIRED
    held = servo.motor._target_p
    assert servo.write(ct.GOAL_POSITION.address, _i32(3000), NOW + 0.3) == \
        p.StatusError.DATA_RANGE
    assert servo.motor._target_p == held
    assert servo.write(ct.BUS_WATCHDOG.address, b"\x00", NOW + 0.3) == 0  # cleared
    assert servo.write(ct.GOAL_POSITION.address, _i32(3000), NOW + 0.3) == 0
    assert servo.motor._target_p == pytest.approx(
        (3000 - ct.CENTER_TICK) * ct.RAD_PER_TICK)


@pytest.mark.parametrize("move", ["set_position", "reboot", "torque"])
def test_the_same_goal_after_the_target_moved_is_applied_again(move: str) -> None:
    servo = _servo()
    goal = (2500 - ct.CENTER_TICK) * ct.RAD_PER_TICK
    assert servo.write(ct.GOAL_POSITION.address, _i32(2500), NOW) == 0
    assert servo.motor._target_p == pytest.approx(goal)
    moves: dict[str, Callable[[], object]] = {
        "set_position": lambda: servo.set_position(0.3, NOW + 0.1),
        "reboot": lambda: servo.reboot(NOW + 0.1),  # goal back at the shaft's position
        "torque": lambda: servo.inject_fault(0x20, NOW + 0.1),
    }
    moves[move]()
    if move == "torque":  # a fault changes no target; the goal is still in force
        assert servo.motor._target_p == pytest.approx(goal)
    else:
        assert servo.motor._target_p != pytest.approx(goal)
        if move == "set_position":  # the table still holds 2500, the target does not
            assert int.from_bytes(servo.table[116:120], "little") == 2500
    assert servo.write(ct.GOAL_POSITION.address, _i32(2500), NOW + 0.2) == 0
    assert servo.motor._target_p == pytest.approx(goal)


def test_packets_read_in_one_piece_share_their_arrival_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A Sync Write and the Sync Read after it, read together: one time for both."""
    config = emu.EmulatorConfig(((1, "XM430-W350", 0.0, None), (2, "XM430-W350", 0.0, None)),
                                return_delay=0)
    server = emu._Server(config, None, None)
    steps: list[float] = []
    for servo in server.bus.all_servos.values():
        step = servo.motor.step

        def counted(t: float, step: Callable[[float], object] = step) -> object:
            steps.append(t)
            return step(t)

        monkeypatch.setattr(servo.motor, "step", counted)
    try:
        server._on_bytes(p.sync_write_values(116, "i", [1, 2100, 2, 2200])
                         + p.sync_read(132, 4, [1, 2]))
    finally:
        server.cleanup()
    assert len(steps) == 4  # each servo: the write and the read
    assert len(set(steps)) == 1, steps
    assert server.bus.last_rx == steps[0]
