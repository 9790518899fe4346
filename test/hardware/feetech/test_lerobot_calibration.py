"""LeRobot calibration files <-> hardware YAML joints (issue 30, item 3).

A file LeRobot wrote comes back byte for byte; a position reads the same in LeRobot's
``degrees`` mode and as our joint angle within one encoder tick, computed from the file
here and measured on emulated servos through the driver. LeRobot's reading is written
here from its documented formula (``MotorNormMode.DEGREES``: ``(present - mid) * 360 /
max_res``, ``mid = (range_min + range_max) / 2``, ``max_res`` = 4095 on an STS3215, 1023
on an SCS0009; it ignores ``drive_mode``), not imported: LeRobot is no dependency. On SCS
servos (no Homing_Offset) the file's offset is 0 and nothing in the YAML; the positions
agree tick for tick, and in LeRobot's range modes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from lerobot_scs import SCS_CALIBRATION, SCS_MOTORS
from lerobot_so101 import MOTORS, SO101_CALIBRATION

from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.config import JointMapping, parse_hardware_config
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech.lerobot import (
    MotorCalibration,
    dumps_calibration,
    joint_calibration,
    load_calibration,
    motor_calibration,
    parse_calibration,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from skel_ros.emulation.feetech import FeetechEmulator
    from skel_ros.hardware.feetech.bus import FeetechBus

STS3215 = ct.MODELS["STS3215-C001"]
TICK = STS3215.rad_per_tick  # 2 pi / 4096
SCS0009 = ct.MODELS["SCS0009"]  # 1024 ticks over 300 degrees


def lerobot_degrees(present: int, motor: MotorCalibration, resolution: int = 4096) -> float:
    """LeRobot's ``degrees`` reading of a Present_Position (its MODEL_RESOLUTION: STS3215
    4096, SCS0009 1024)."""
    mid = (motor.range_min + motor.range_max) / 2
    return (present - mid) * 360 / (resolution - 1)


def lerobot_0_100(present: int, motor: MotorCalibration) -> float:
    """LeRobot's ``range_0_100`` reading (its HOPE-Jr hand's SCS0009s): drive_mode flips it."""
    bounded = min(motor.range_max, max(motor.range_min, present))
    norm = (bounded - motor.range_min) / (motor.range_max - motor.range_min) * 100
    return 100 - norm if motor.drive_mode else norm


def lerobot_m100_100(present: int, motor: MotorCalibration) -> float:
    """LeRobot's ``range_m100_100`` reading (its SO-101 default): drive_mode flips it."""
    bounded = min(motor.range_max, max(motor.range_min, present))
    norm = (bounded - motor.range_min) / (motor.range_max - motor.range_min) * 200 - 100
    return -norm if motor.drive_mode else norm


def mapping(motor: MotorCalibration, model: ct.ModelInfo = STS3215) -> JointMapping:
    """The joint the file's motor becomes (id, direction, zero, options)."""
    cal = joint_calibration(motor, model)
    offset = {} if cal.homing_offset is None else {"homing_offset": cal.homing_offset}
    options = {**offset, "angle_limits": list(cal.angle_limits)}
    actuator = ActuatorSpec(cal.id, ControlMode.POSITION, model.name, options,
                            name=motor.motor)
    return JointMapping(motor.motor, "arm", actuator, cal.direction, cal.zero_offset)


def driver_radians(present: int, model: ct.ModelInfo = STS3215) -> float:
    """The feetech driver's actuator position of a Present_Position (tick 2048 = 0 rad)."""
    return (present - model.center) * model.rad_per_tick


# --------------------------------------------------------------------------- the file


def test_a_file_lerobot_wrote_comes_back_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "so101_follower.json"
    path.write_bytes(SO101_CALIBRATION.encode())
    motors = load_calibration(path)
    assert tuple(m.motor for m in motors) == MOTORS
    assert motors[0] == MotorCalibration("shoulder_pan", 1, 0, -1470, 758, 3292)
    text = dumps_calibration(motors)
    assert text == SO101_CALIBRATION
    assert not text.endswith("\n")
    assert '\n    "shoulder_pan": {\n        "id": 1,\n' in text  # indent 4, LeRobot's order


def test_a_motor_becomes_direction_zero_offset_homing_offset_and_range() -> None:
    pan, *_, roll, gripper = parse_calibration(SO101_CALIBRATION)
    cal = joint_calibration(pan, STS3215)
    assert cal.id == 1
    assert cal.direction == 1
    assert cal.zero_offset == pytest.approx((2025 - 2048) * TICK, abs=1e-15)
    assert cal.homing_offset == -1470
    assert cal.angle_limits == (758, 3292)
    assert cal.position == pytest.approx((-1267 * TICK, 1267 * TICK))
    assert joint_calibration(roll, STS3215).zero_offset == pytest.approx(-0.5 * TICK)
    inverted = MotorCalibration("gripper", 6, 1, 1378, 2031, 3509)
    assert joint_calibration(inverted, STS3215).direction == -1
    # The range is symmetric about the joint's 0 whatever the direction.
    assert joint_calibration(inverted, STS3215).position == joint_calibration(
        gripper, STS3215).position


# --------------------------------------------------------------------------- positions


def test_degrees_and_joint_angle_agree_within_one_tick_at_every_tick() -> None:
    for motor in parse_calibration(SO101_CALIBRATION):
        joint = mapping(motor)
        worst_inside = worst = 0.0
        for present in range(STS3215.ticks):
            ours = joint.from_actuator(driver_radians(present))
            error = abs(ours - math.radians(lerobot_degrees(present, motor))) / TICK
            worst = max(worst, error)
            if motor.range_min <= present <= motor.range_max:
                worst_inside = max(worst_inside, error)
        # 4095 steps a turn against 4096: (present - mid) / 4095 of a tick apart.
        assert worst < 1.0, motor.motor
        assert worst_inside <= 0.5 + 1e-9, motor.motor
        assert joint.from_actuator(driver_radians(motor.range_min)) == pytest.approx(
            -(motor.range_max - motor.range_min) / 2 * TICK)


def test_drive_mode_1_is_direction_minus_1_as_lerobots_range_modes_read_it() -> None:
    motor = MotorCalibration("elbow_flex", 3, 1, 1105, 851, 3100)
    joint = mapping(motor)
    half = (motor.range_max - motor.range_min) / 2 * TICK
    for present in range(motor.range_min, motor.range_max + 1, 7):
        ours = joint.from_actuator(driver_radians(present))
        # LeRobot's range mode applies drive_mode: the same sign, the same fraction.
        assert ours / half * 100 == pytest.approx(lerobot_m100_100(present, motor), abs=1e-9)
        # Its degrees mode ignores drive_mode: ours is its negative there (docs/feetech.md).
        assert abs(ours + math.radians(lerobot_degrees(present, motor))) < TICK


# --------------------------------------------------------------------------- SCS servos


def test_an_scs_file_maps_without_homing_offset_and_comes_back_byte_for_byte() -> None:
    motors = parse_calibration(SCS_CALIBRATION)
    assert tuple(m.motor for m in motors) == SCS_MOTORS
    cal = joint_calibration(motors[0], SCS0009)
    assert cal.homing_offset is None  # no Homing_Offset: nothing to write, nothing in the YAML
    assert cal.angle_limits == (310, 702)
    assert cal.zero_offset == pytest.approx((506 - 512) * SCS0009.rad_per_tick, abs=1e-15)
    assert cal.position == pytest.approx((-196 * SCS0009.rad_per_tick,
                                          196 * SCS0009.rad_per_tick))
    assert joint_calibration(motors[1], SCS0009).direction == -1
    joints = [mapping(m, SCS0009) for m in motors]
    assert "homing_offset" not in joints[0].actuator.options
    back = tuple(motor_calibration(m.motor, j, "hw.yaml")
                 for m, j in zip(motors, joints, strict=True))
    assert back == motors
    assert dumps_calibration(back) == SCS_CALIBRATION
    offset = MotorCalibration("thumb_cmc", 1, 0, 5, 310, 702)
    with pytest.raises(ConfigError, match=r"f: motor 'thumb_cmc': homing_offset must be 0 on"
                                          r" SCS0009, got 5: an SCS servo has no Homing_Offset"):
        joint_calibration(offset, SCS0009, "f")
    with pytest.raises(ConfigError, match=r"motor 'thumb_cmc': range_max must be in 0\.\.1023"):
        joint_calibration(MotorCalibration("thumb_cmc", 1, 0, 0, 10, 1024), SCS0009, "f")


def test_on_scs_positions_agree_tick_for_tick_and_in_the_range_modes() -> None:
    step = SCS0009.rad_per_tick
    for motor in parse_calibration(SCS_CALIBRATION):
        joint = mapping(motor, SCS0009)
        half = (motor.range_max - motor.range_min) / 2 * step
        for present in range(SCS0009.ticks):
            ours = joint.from_actuator(driver_radians(present, SCS0009))
            # LeRobot's degrees count 1023 steps a turn on the SCS0009: in its steps, the
            # same count from the middle as ours (its degrees ignore drive_mode).
            lerobot_steps = lerobot_degrees(present, motor, SCS0009.ticks) * 1023 / 360
            assert abs(ours * joint.direction / step - lerobot_steps) < 1.0, (motor, present)
            if motor.range_min <= present <= motor.range_max:
                assert 50 + ours / half * 50 == pytest.approx(lerobot_0_100(present, motor),
                                                              abs=1e-9)
    # Its degrees are not the servo's: 1024 ticks span 300 degrees, not 360.
    assert 360 / 1023 / math.degrees(step) == pytest.approx(1.2 * 1024 / 1023)


def test_the_driver_writes_an_scs_calibration_and_reads_what_lerobot_reads(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    motors = parse_calibration(SCS_CALIBRATION)
    joints = [mapping(m, SCS0009) for m in motors]
    actuators = [j.actuator for j in joints]
    emu = make_emulator(actuators, initial_positions={})
    bus = make_bus(dict(emu.transport), actuators)
    bus.open()
    for m in motors:  # what LeRobot's write_calibration leaves on an SCS servo
        assert emu.register(m.id, "Min_Angle_Limit") == m.range_min
        assert emu.register(m.id, "Max_Angle_Limit") == m.range_max
    for k in range(5):
        presents = {m.id: m.range_min + round(k * (m.range_max - m.range_min) / 4)
                    for m in motors}
        for m in motors:
            emu.set_position(m.id, (presents[m.id] - SCS0009.center) * SCS0009.rad_per_tick)
        states = bus.read()
        for m, joint in zip(motors, joints, strict=True):
            assert emu.register(m.id, "Present_Position") == presents[m.id]
            ours = joint.from_actuator(states[m.id].position)
            half = (m.range_max - m.range_min) / 2 * SCS0009.rad_per_tick
            assert 50 + ours / half * 50 == pytest.approx(lerobot_0_100(presents[m.id], m),
                                                          abs=1e-9)


def test_the_driver_writes_the_calibration_and_reads_what_lerobot_reads(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    motors = parse_calibration(SO101_CALIBRATION)
    joints = [mapping(m) for m in motors]
    actuators = [j.actuator for j in joints]
    emu = make_emulator(actuators, initial_positions={})
    bus = make_bus(dict(emu.transport), actuators)
    bus.open()
    for m in motors:  # what LeRobot's write_calibration leaves on the servo
        assert emu.register(m.id, "Homing_Offset") == m.homing_offset
        assert emu.register(m.id, "Min_Angle_Limit") == m.range_min
        assert emu.register(m.id, "Max_Angle_Limit") == m.range_max
    steps = 33
    checked = 0
    for k in range(steps):
        presents = {}
        for m in motors:  # across the range, both ends and the middle included
            present = m.range_min + round(k * (m.range_max - m.range_min) / (steps - 1))
            presents[m.id] = present
            actual = (present + m.homing_offset) % STS3215.ticks  # present = actual - offset
            emu.set_position(m.id, (actual - STS3215.center) * TICK)
        states = bus.read()
        for m, joint in zip(motors, joints, strict=True):
            assert emu.register(m.id, "Present_Position") == presents[m.id]
            ours = joint.from_actuator(states[m.id].position)
            assert abs(ours - math.radians(lerobot_degrees(presents[m.id], m))) <= TICK / 2 + 1e-12
            checked += 1
    assert checked == steps * len(motors)


# --------------------------------------------------------------------------- bad files

_PAN = '"id": 1, "drive_mode": 0, "homing_offset": 5, "range_min": 700, "range_max": 3000'


@pytest.mark.parametrize(("text", "message"), [
    ('{"a": 1,}', r"cal\.json:1:9: not JSON"),
    ("[]", r"cal\.json: a LeRobot calibration is a JSON object of motors .*got a JSON list"),
    ("{}", r"cal\.json: .*got an empty object"),
    ('{"pan": 3}', r"cal\.json: motor 'pan': expected an object with id, drive_mode"),
    ('{"pan": {"id": 1}}', r"cal\.json: motor 'pan': no 'drive_mode'"),
    ('{"pan": {' + _PAN + ', "offset": 3}}', r"motor 'pan': unknown key 'offset' \(a LeRobot"),
    ('{"pan": {' + _PAN.replace('"id": 1', '"id": "1"') + "}}",
     r"motor 'pan': id must be an integer, got '1'"),
    ('{"pan": {' + _PAN.replace('"drive_mode": 0', '"drive_mode": true') + "}}",
     r"motor 'pan': drive_mode must be an integer, got True"),
    ('{"pan": {' + _PAN.replace('"drive_mode": 0', '"drive_mode": 2') + "}}",
     r"motor 'pan': drive_mode must be 0 or 1, got 2"),
    ('{"pan": {' + _PAN.replace('"id": 1', '"id": 254') + "}}",
     r"motor 'pan': id must be in 0\.\.253, got 254"),
    ('{"pan": {' + _PAN.replace("3000", "700") + "}}",
     r"motor 'pan': range_min 700 must be below range_max 700"),
    ('{"pan": {' + _PAN + '}, "lift": {' + _PAN + "}}",
     r"cal\.json: motor 'lift': id 1 is also the id of motor 'pan'"),
    ('{"pan": {' + _PAN + '}, "pan": {' + _PAN + "}}", r"cal\.json: key 'pan' appears twice"),
])
def test_a_bad_file_is_an_error_naming_the_file_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_calibration(text, "cal.json")


def test_values_the_servo_cannot_hold_are_errors_naming_the_motor() -> None:
    wide = MotorCalibration("pan", 1, 0, 2048, 10, 20)  # LeRobot's mid-travel at tick 4095
    with pytest.raises(ConfigError, match=r"f: motor 'pan': homing_offset must be in"
                                          r" -2047\.\.2047 .*got 2048"):
        joint_calibration(wide, STS3215, "f")
    with pytest.raises(ConfigError, match=r"motor 'pan': range_max must be in 0\.\.4095"):
        joint_calibration(MotorCalibration("pan", 1, 0, 0, 10, 4096), STS3215, "f")


def test_a_missing_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read LeRobot calibration .*nope\.json"):
        load_calibration(tmp_path / "nope.json")


# --------------------------------------------------------------------------- back from YAML


def test_a_joint_lerobot_cannot_describe_is_an_error_at_its_line() -> None:
    motor = parse_calibration(SO101_CALIBRATION)[0]
    joint = mapping(motor)
    assert motor_calibration("shoulder_pan", joint, "hw.yaml") == motor
    # A zero_offset written with fewer digits still reads as the range's middle.
    assert motor_calibration("shoulder_pan", JointMapping(
        joint.name, joint.bus, joint.actuator, 1, round(joint.zero_offset, 4)), "hw.yaml") == motor
    moved = JointMapping(joint.name, joint.bus, joint.actuator, 1, 0.0, line=12)
    with pytest.raises(ConfigError, match=r"hw\.yaml:12: joint 'shoulder_pan': zero_offset 0\.0"
                                          r" rad is not the middle of angle_limits"):
        motor_calibration("shoulder_pan", moved, "hw.yaml")
    geared = JointMapping(joint.name, joint.bus, joint.actuator, 1, joint.zero_offset, 2.0)
    with pytest.raises(ConfigError, match=r"gear_ratio 2: LeRobot has no gear ratio"):
        motor_calibration("shoulder_pan", geared, "hw.yaml")
    bare = ActuatorSpec(1, ControlMode.POSITION, "STS3215", {"homing_offset": 3})
    with pytest.raises(ConfigError, match=r"joint 'shoulder_pan': no options\.angle_limits"):
        motor_calibration("shoulder_pan", JointMapping("shoulder_pan", "arm", bare), "hw.yaml")
    scs = ActuatorSpec(1, ControlMode.POSITION, "SCS0009", {})
    with pytest.raises(ConfigError, match=r"joint 'shoulder_pan': no options\.angle_limits; a"
                                          r" LeRobot calibration of SCS0009 needs angle_limits"):
        motor_calibration("shoulder_pan", JointMapping("shoulder_pan", "arm", scs), "hw.yaml")
    scs = ActuatorSpec(1, ControlMode.POSITION, "SCS0009",
                       {"homing_offset": 3, "angle_limits": [100, 900]})
    with pytest.raises(ConfigError, match=r"homing_offset must be 0 on SCS0009, got 3"):
        motor_calibration("shoulder_pan", JointMapping(
            "shoulder_pan", "arm", scs, 1, -12 * SCS0009.rad_per_tick), "hw.yaml")


_YAML = """\
device_watchdog: 0
buses:
  arm: {protocol: feetech, transport: {port: /dev/null}}
joints:
  pan: {bus: arm, id: 1}
  lift: {bus: arm, id: 2}
"""


def test_lerobot_motors_keeps_the_files_names_and_order() -> None:
    config = parse_hardware_config(_YAML + "lerobot_motors: {shoulder_lift: lift,"
                                           " shoulder_pan: pan}\n", "hw.yaml")
    assert config.lerobot_motors == (("shoulder_lift", "lift"), ("shoulder_pan", "pan"))
    assert parse_hardware_config(_YAML, "hw.yaml").lerobot_motors == ()


@pytest.mark.parametrize(("extra", "message"), [
    ("lerobot_motors: {a: elbow}", (r"hw\.yaml:7: lerobot_motors: motor 'a' names 'elbow',"
                                   r" not a joint of this file")),
    ("lerobot_motors: {a: pan, b: pan}", (r"hw\.yaml:7: lerobot_motors: motor 'b' names joint"
                                         r" 'pan', as motor 'a' does")),
    ("lerobot_motors: [pan]", r"hw\.yaml:7: lerobot_motors must be a mapping"),
    ("lerobot_motor: {a: pan}", r"unknown key 'lerobot_motor' .*did you mean 'lerobot_motors'"),
])
def test_a_bad_lerobot_motors_is_an_error_at_its_line(extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_hardware_config(_YAML + extra + "\n", "hw.yaml")
