"""FeetechBus against its emulator: tables, EEPROM and Lock, multi-turn, SCS, errors."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from feetech_arm import START, arm
from polling import wait_until

from skel_ros.hardware.base import (
    ActuatorCommand,
    ActuatorLimits,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.errors import ConfigError, DeviceError, TransportTimeoutError
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech.bus import FeetechBus

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.emulation.feetech import FeetechEmulator

TICK = 2 * math.pi / 4096


def test_open_reads_configures_eeprom_under_lock_and_keeps_it(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    bus = make_bus(dict(emu.transport), arm(homing_offset=-100, angle_limits=[500, 3500],
                                            acceleration=20, goal_speed=3.0))
    bus.open()
    for i in START:
        assert emu.register(i, "Return_Delay_Time") == 0       # factory 250 -> the YAML's 0
        assert emu.register(i, "Homing_Offset") == -100
        assert (emu.register(i, "Min_Angle_Limit"), emu.register(i, "Max_Angle_Limit")) \
            == (500, 3500)
        assert emu.register(i, "Lock") == 1                    # locked again after the writes
        assert emu.register(i, "Acceleration") == 20
        assert emu.register(i, "Goal_Velocity") == round(3.0 / TICK)
        assert emu.register(i, "Torque_Enable") == 0
        emu.power_cycle(i)                                     # EEPROM writes were kept
        assert emu.register(i, "Homing_Offset") == -100
        assert emu.register(i, "Return_Delay_Time") == 0
    # Present_Position = actual - Homing_Offset: the shaft at 0.3 rad reads 100 ticks more.
    states = bus.read()
    assert states[1].position == pytest.approx(START[1] + 100 * TICK, abs=TICK)


def test_goals_are_clamped_inside_the_angle_limits_and_the_yaml_limits(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    acts = [ActuatorSpec(i, ControlMode.POSITION, "STS3215", {"angle_limits": [1000, 3000]},
                         limits=ActuatorLimits(position=(-1.9, 0.9)))
            for i in START]
    bus = make_bus(dict(emu.transport), acts)
    bus.open()
    bus.set_torque(True)
    bus.write({1: ActuatorCommand(position=5.0), 2: ActuatorCommand(position=-5.0)})
    bus.read()
    assert emu.register(1, "Goal_Position") == 2048 + math.floor(0.9 / TICK)
    assert emu.register(2, "Goal_Position") == 1000            # the servo's limit binds
    bus.write({3: ActuatorCommand(position=-1.0)})
    assert wait_until(lambda: emu.register(3, "Goal_Position") == 2048 - round(1.0 / TICK), 5)


@pytest.mark.parametrize("setting", ["limits_zero", "step_mode"])
def test_multi_turn_is_corrected_at_open(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
        setting: str) -> None:
    emu = make_emulator()
    if setting == "limits_zero":
        emu.set_register(2, "Min_Angle_Limit", 0)
        emu.set_register(2, "Max_Angle_Limit", 0)
    else:
        emu.set_register(2, "Operating_Mode", ct.MODE_STEP)
    bus = make_bus(dict(emu.transport))
    bus.open()
    assert emu.register(2, "Operating_Mode") == ct.MODE_POSITION
    assert (emu.register(2, "Min_Angle_Limit"), emu.register(2, "Max_Angle_Limit")) == (0, 4095)
    assert bus.read()[2].position == pytest.approx(START[2], abs=TICK)


def test_multi_turn_is_refused_when_asked(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    emu.set_register(3, "Min_Angle_Limit", 0)
    emu.set_register(3, "Max_Angle_Limit", 0)
    bus = make_bus(dict(emu.transport), multi_turn="refuse")
    with pytest.raises(ConfigError, match=r"id 3 .*multi-turn"):
        bus.open()
    assert emu.register(3, "Max_Angle_Limit") == 0             # nothing written


def test_a_position_outside_the_range_is_never_a_joint_position(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    bus = make_bus(dict(emu.transport))
    bus.open()
    # Switched to multi-turn behind the driver's back, the shaft a turn and a half away.
    emu.set_register(1, "Min_Angle_Limit", 0)
    emu.set_register(1, "Max_Angle_Limit", 0)
    emu.set_position(1, 3 * math.pi)
    state = bus.read()[1]
    assert math.isnan(state.position)
    assert state.error_code & ct.POSITION_RANGE_FAULT
    assert "outside the servo's range" in state.fault


def test_scs_servos_are_read_one_at_a_time_big_endian_beside_sts(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    acts = [*arm("SCS0009", (1, 2)), *arm("STS3250", (3,))]
    emu = make_emulator(acts)
    bus = make_bus(dict(emu.transport), acts)
    bus.open()
    scs = ct.MODELS["SCS0009"]
    states = bus.read()
    for i in START:
        step = scs.rad_per_tick if i < 3 else TICK
        assert states[i].position == pytest.approx(START[i], abs=step)
    bus.set_torque(True)
    bus.write({1: ActuatorCommand(position=0.6), 3: ActuatorCommand(position=-0.4)})
    assert wait_until(lambda: abs(bus.read()[1].position - 0.6) < 2 * scs.rad_per_tick, 5)
    assert emu.register(1, "Goal_Position") == 512 + round(0.6 / scs.rad_per_tick)
    assert emu.register(1, "Lock") == 1                        # SCS's Lock is at 48
    assert wait_until(lambda: abs(bus.read()[3].position + 0.4) < 2 * TICK, 5)


def test_velocity_mode(make_emulator: Callable[..., FeetechEmulator],
                       make_bus: Callable[..., FeetechBus]) -> None:
    acts = [ActuatorSpec(1, ControlMode.VELOCITY, "STS3215")]
    emu = make_emulator(acts)
    bus = make_bus(dict(emu.transport), acts)
    bus.open()
    assert emu.register(1, "Operating_Mode") == ct.MODE_VELOCITY
    bus.set_torque(True)
    bus.write({1: ActuatorCommand(velocity=-2.0)})
    assert wait_until(lambda: abs(bus.read()[1].velocity + 2.0) < 0.05, 5)
    assert emu.register(1, "Goal_Velocity") == -round(2.0 / TICK)  # sign-magnitude on the wire


def test_health_is_reported_per_servo(make_emulator: Callable[..., FeetechEmulator],
                                      make_bus: Callable[..., FeetechBus]) -> None:
    emu = make_emulator()
    bus = make_bus(dict(emu.transport))
    bus.open()
    bus.set_torque(True)
    emu.inject_fault(2, 0x24)
    states = bus.read()
    assert states[1].temperature == 30.0
    assert states[1].voltage == pytest.approx(7.4)
    assert states[2].error_code == 0x24
    assert states[2].fault == "overheating, overload error"
    assert not states[2].torque_enabled
    answers = bus.clear_faults()
    assert answers[1] == "no fault; nothing done"
    assert answers[2].endswith("no error now")


def test_misconfigured_buses_are_clear_errors(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    with pytest.raises(ConfigError, match="no communication watchdog"):
        FeetechBus(BusSpec("arm", "feetech", emu.transport, device_watchdog=0.1), arm())
    with pytest.raises(ConfigError, match="unknown Feetech model"):
        make_bus(dict(emu.transport), arm("XM430-W350"))
    with pytest.raises(ConfigError, match="no Homing_Offset"):
        make_bus(dict(emu.transport), arm("SCS0009", homing_offset=3))
    with pytest.raises(ConfigError, match="return_delay_us 3"):
        make_bus(dict(emu.transport), return_delay_us=3)
    with pytest.raises(ConfigError, match="83 servos: one Sync Write carries the goals of at"
                                          " most 82; split them over buses"):
        make_bus(dict(emu.transport), arm(ids=tuple(range(83))))
    assert make_bus(dict(emu.transport), arm(ids=tuple(range(82))))  # 82: 250 bytes
    with pytest.raises(DeviceError, match=r"id 1 is STS3215.*says STS3250"):
        make_bus(dict(emu.transport), arm("STS3250")).open()
    with pytest.raises(TransportTimeoutError, match=r"id 9 did not answer at 1000000 baud;"
                       r" configured ids that answered: \[1\]"):
        make_bus(dict(emu.transport), arm(ids=(1, 9))).open()
