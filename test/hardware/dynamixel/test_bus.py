"""DynamixelBus against the emulator (a separate process) over a pty."""

from __future__ import annotations

import math
import os
import time
import tty
from typing import TYPE_CHECKING

import pytest
from scripted_servo import ScriptedServo

from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as p
from skel_ros.hardware.dynamixel.bus import DynamixelBus
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)

START = {1: 0.3, 2: -0.2, 3: 0.5, 4: 0.1}  # as in conftest.py

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.emulation.dynamixel import DynamixelEmulator

TICK = 2 * math.pi / 4096


def _wait(predicate: Callable[[], bool], seconds: float = 3.0) -> None:
    """Poll the emulator (a real process on its own clock) until ``predicate``."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


@pytest.mark.parametrize("fast", [True, False])
def test_open_configures_reads_and_moves(emulator: DynamixelEmulator,
                                         make_bus: Callable[..., DynamixelBus],
                                         fast: bool) -> None:
    bus = make_bus(emulator.transport, fast_sync_read=fast)
    bus.open()
    assert bus.is_open
    assert bus.fast_sync_read is fast
    assert bus.model_of(1) is ct.MODELS["XM430-W350"]
    for i in START:
        assert emulator.register(i, "Return Delay Time") == 0
        assert emulator.register(i, "Operating Mode") == ct.MODE_POSITION
        assert emulator.register(i, "Torque Enable") == 0
    states = bus.read()
    assert sorted(states) == [1, 2, 3, 4]
    for i, start in START.items():
        assert states[i].position == pytest.approx(start, abs=TICK)
        assert not states[i].torque_enabled
        assert states[i].error_code == 0
        assert states[i].voltage == pytest.approx(12.0)
        assert states[i].stamp == 12.5  # the injected clock
    bus.set_torque(True)
    assert all(emulator.state(i).torque_enabled for i in START)
    bus.write({3: ActuatorCommand(position=1.0), 4: ActuatorCommand()})  # NaN: keep goal
    assert emulator.register(3, "Goal Position") == 2048 + round(1.0 / TICK)
    _wait(lambda: abs(emulator.state(3).position - 1.0) < 2e-3)
    assert bus.read()[3].position == pytest.approx(1.0, abs=2 * TICK)
    assert emulator.state(4).position == pytest.approx(START[4], abs=2 * TICK)
    bus.set_torque(False, [3])
    assert not emulator.state(3).torque_enabled
    assert emulator.state(1).torque_enabled


def test_velocity_and_effort_modes_convert_units(make_emulator: Callable[..., DynamixelEmulator],
                                                 make_bus: Callable[..., DynamixelBus]) -> None:
    acts = [ActuatorSpec(1, ControlMode.VELOCITY, "XM430-W350"),
            ActuatorSpec(2, ControlMode.EFFORT, "XM430-W350", {"torque_constant": 1.5})]
    emulator = make_emulator(acts, initial_positions={})
    bus = make_bus(emulator.transport, acts)
    bus.open()
    assert emulator.register(1, "Operating Mode") == ct.MODE_VELOCITY
    assert emulator.register(2, "Operating Mode") == ct.MODE_CURRENT
    bus.set_torque(True)
    bus.write({1: ActuatorCommand(velocity=1.0), 2: ActuatorCommand(effort=0.3)})
    unit = 0.229 * 2 * math.pi / 60
    assert emulator.register(1, "Goal Velocity") == round(1.0 / unit)
    assert emulator.register(2, "Goal Current") == round(0.3 / 1.5 / 2.69e-3)
    _wait(lambda: abs(emulator.state(1).velocity - round(1.0 / unit) * unit) < 1e-3)
    states = bus.read()
    assert states[1].velocity == pytest.approx(1.0, abs=unit)
    assert states[2].effort == pytest.approx(0.3, abs=1.5 * 2.69e-3)


def test_goals_outside_the_servo_limits_are_clamped(emulator: DynamixelEmulator,
                                                    make_bus: Callable[..., DynamixelBus],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    bus = make_bus(emulator.transport)
    bus.open()
    bus.write({1: ActuatorCommand(position=50.0), 2: ActuatorCommand(position=-math.inf)})
    assert emulator.register(1, "Goal Position") == 4095
    assert emulator.register(2, "Goal Position") == 0
    assert "clamped" in caplog.text


def test_status_errors_become_device_errors(emulator: DynamixelEmulator,
                                            make_bus: Callable[..., DynamixelBus]) -> None:
    bus = make_bus(emulator.transport)
    bus.open()
    with pytest.raises(DeviceError, match="access error") as info:
        bus.write_register(2, ct.PRESENT_POSITION.address, b"\0\0\0\0")
    assert (info.value.actuator_id, info.value.code) == (2, p.StatusError.ACCESS)
    with pytest.raises(DeviceError, match="data range error"):
        bus.write_register(2, ct.OPERATING_MODE.address, b"\x02")
    bus.set_torque(True, [2])
    with pytest.raises(DeviceError, match="access error"):  # EEPROM while torque is on
        bus.write_register(2, ct.OPERATING_MODE.address, b"\x01")
    with pytest.raises(DeviceError, match="data limit error"):
        bus.write_register(2, ct.GOAL_VELOCITY.address, (5000).to_bytes(4, "little"))
    assert bus.read()[2].torque_enabled  # the bus is still usable


def test_raw_errors_unknown_instruction_and_bad_crc(emulator: DynamixelEmulator) -> None:
    fd = os.open(emulator.transport["port"], os.O_RDWR | os.O_NOCTTY)
    try:
        tty.setraw(fd)
        bad_crc = bytearray(p.read(3, 132, 4))
        bad_crc[-1] ^= 0xFF
        os.write(fd, p.build_packet(3, 0x77) + bytes(bad_crc) + p.read(3, 2000, 4))
        replies = []
        deadline = time.monotonic() + 2.0
        data = b""
        while len(replies) < 3 and time.monotonic() < deadline:
            data += os.read(fd, 4096)
            replies = p.parse(data)
    finally:
        os.close(fd)
    assert [(r.id, r.error) for r in replies] == [
        (3, p.StatusError.INSTRUCTION), (3, p.StatusError.CRC), (3, p.StatusError.ACCESS)]


def test_hardware_error_is_reported_and_blocks_torque(emulator: DynamixelEmulator,
                                                      make_bus: Callable[..., DynamixelBus],
                                                      ) -> None:
    bus = make_bus(emulator.transport)
    bus.open()
    bus.set_torque(True)
    emulator.inject_fault(4, 0x20)
    states = bus.read()
    assert states[4].error_code == 0x20
    assert states[4].fault == "overload error"
    assert not states[4].torque_enabled
    assert states[1].error_code == 0
    with pytest.raises(DeviceError, match="overload") as info:
        bus.set_torque(True)
    assert info.value.actuator_id == 4


def test_profile_time_sets_a_time_based_profile_and_keeps_it(
        emulator: DynamixelEmulator, make_bus: Callable[..., DynamixelBus],
        caplog: pytest.LogCaptureFixture) -> None:
    plain = make_bus(emulator.transport)
    plain.open()
    plain.write_register(1, ct.DRIVE_MODE.address, b"\x01")  # reverse mode, set elsewhere
    plain.set_torque(True)
    plain.close(torque_off=False)
    acts = [ActuatorSpec(1, ControlMode.POSITION, "XM430-W350",
                         options={"profile_time": 0.005}),
            ActuatorSpec(2, ControlMode.POSITION, "XM430-W350")]
    bus = make_bus(emulator.transport, acts)
    with caplog.at_level("WARNING"):
        bus.open(keep_torque=True)
    # Held torque, but its profile was velocity-based: torque off to write the EEPROM bit.
    assert "id 1 held torque but its profile is velocity-based" in caplog.text
    assert emulator.register(1, "Drive Mode") == ct.DRIVE_MODE_TIME_BASED | 1
    assert emulator.register(1, "Profile Velocity") == 5  # ms
    assert emulator.register(1, "Profile Acceleration") == 0
    assert emulator.register(2, "Drive Mode") == 0  # no profile_time: left as it was
    assert emulator.register(2, "Profile Velocity") == 0
    # A reboot puts the RAM back to its power-on values: the profile is written again.
    emulator.inject_fault(1, 0x04)
    bus.clear_faults([1])
    assert emulator.register(1, "Profile Velocity") == 5
    bus.set_torque(True)
    bus.close(torque_off=False)
    caplog.clear()
    held = make_bus(emulator.transport, acts)
    with caplog.at_level("WARNING"):
        held.open(keep_torque=True)  # time-based already: it keeps its torque
    assert "held torque but" not in caplog.text
    assert emulator.state(1).torque_enabled
    assert emulator.register(1, "Profile Velocity") == 5


def test_wrong_model_and_missing_servo(emulator: DynamixelEmulator,
                                       make_bus: Callable[..., DynamixelBus]) -> None:
    wrong = [ActuatorSpec(1, ControlMode.POSITION, "XL430-W250")]
    with pytest.raises(DeviceError, match="XM430-W350"):
        make_bus(emulator.transport, wrong).open()
    missing = [ActuatorSpec(1, ControlMode.POSITION), ActuatorSpec(7, ControlMode.POSITION)]
    bus = make_bus(emulator.transport, missing)
    # Which id is silent, at which baud rate, and who did answer (a broadcast PING).
    with pytest.raises(TransportTimeoutError, match=r"id 7 did not answer at 1000000 baud;"
                       r" ids that answered: \[1, 2, 3, 4\]$"):
        bus.open()
    assert not bus.is_open


def test_old_firmware_uses_plain_sync_read(make_emulator: Callable[..., DynamixelEmulator],
                                           make_bus: Callable[..., DynamixelBus]) -> None:
    emulator = make_emulator(firmware=44)
    bus = make_bus(emulator.transport)
    bus.open()
    assert not bus.fast_sync_read
    assert bus.read()[1].position == pytest.approx(START[1], abs=TICK)
    with pytest.raises(ConfigError, match="firmware"):
        make_bus(emulator.transport, fast_sync_read=True).open()


def test_stopped_emulator_times_out(make_emulator: Callable[..., DynamixelEmulator],
                                    make_bus: Callable[..., DynamixelBus]) -> None:
    emulator = make_emulator()
    # Keep the pty alive after the emulator stops: hold its slave side open ourselves.
    keep = os.open(emulator.transport["port"], os.O_RDWR | os.O_NOCTTY)
    try:
        bus = make_bus(emulator.transport)
        bus.open()
        emulator.stop()
        with pytest.raises(TransportError) as info:
            bus.read()
        # The master side closed with the process: either no answer or the pty hung up.
        assert isinstance(info.value, (TransportTimeoutError, TransportError))
    finally:
        os.close(keep)


def test_no_answer_is_a_timeout_naming_the_ids(make_bus: Callable[..., DynamixelBus]) -> None:
    master, slave = os.openpty()  # a port with nothing behind it
    tty.setraw(slave)
    try:
        bus = make_bus({"port": os.ttyname(slave), "baudrate": 1_000_000})
        with pytest.raises(TransportTimeoutError, match=r"ids \[1, 2, 3, 4\] did not answer at"
                           r" 1000000 baud; ids that answered: \[\] \(check power"):
            bus.open()
    finally:
        os.close(master)
        os.close(slave)


def test_port_vanishing_is_a_transport_error(emulator: DynamixelEmulator,
                                             make_bus: Callable[..., DynamixelBus]) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    bus = make_bus({"port": os.ttyname(slave), "baudrate": 1_000_000})
    bus.transport.open()
    os.close(master)  # the adapter is unplugged: reads and writes now fail with EIO
    os.close(slave)
    with pytest.raises(TransportError):
        bus.ping(1)
    with pytest.raises(TransportError):
        bus.transport.read(10, 0.01)
    bus.close()  # never raises
    with pytest.raises(TransportError, match="cannot open"):
        make_bus({"port": "/dev/does-not-exist"}).open()
    assert emulator.running


def _ping_reply(packet: p.Packet) -> bytes:
    return p.build_status(packet.id, 0, b"\x24\x04\x2d")  # XL430-W250, firmware 45


def test_garbage_before_answers_is_skipped(make_bus: Callable[..., DynamixelBus]) -> None:
    servo = ScriptedServo(lambda packet: b"\x13\xff\x00\xff\xff\xfd" + _ping_reply(packet))
    try:
        bus = make_bus({"port": servo.port, "baudrate": 1_000_000})
        bus.transport.open()
        assert bus.ping(3) == (1060, 45)
        assert bus.ping(4) == (1060, 45)
        assert bus.stats["garbage_bytes"] == 12
    finally:
        servo.close()


def test_corrupt_answer_is_a_protocol_error(make_bus: Callable[..., DynamixelBus]) -> None:
    answers = []

    def reply(packet: p.Packet) -> bytes:
        good = _ping_reply(packet)
        answers.append(good)
        if len(answers) == 1:
            return good[:-1] + bytes([good[-1] ^ 1])
        return good

    servo = ScriptedServo(reply)
    try:
        bus = make_bus({"port": servo.port, "baudrate": 1_000_000})
        bus.transport.open()
        with pytest.raises(ProtocolError, match="CRC"):
            bus.ping(1)
        assert bus.ping(1) == (1060, 45)  # the next request starts clean
    finally:
        servo.close()


@pytest.mark.parametrize(("acts", "options", "match"), [
    ([ActuatorSpec(1, ControlMode.EFFORT, "XL430-W250")], {}, "no current control"),
    ([ActuatorSpec(1, ControlMode.IMPEDANCE)], {}, "no impedance mode"),
    ([ActuatorSpec(1, ControlMode.POSITION, "XM999")], {}, "unknown Dynamixel model"),
    ([ActuatorSpec(300, ControlMode.POSITION)], {}, "ids are 0..252"),
    ([ActuatorSpec(1, ControlMode.POSITION, options={"kt": 1})], {}, "unknown Dynamixel option"),
    ([ActuatorSpec(1, ControlMode.POSITION, options={"torque_constant": -1})], {}, "positive"),
    ([ActuatorSpec(1, ControlMode.POSITION)], {"fast_sync_read": "yes"}, "fast_sync_read"),
    ([ActuatorSpec(1, ControlMode.POSITION)], {"return_delay_us": 1000}, "return_delay_us"),
    ([ActuatorSpec(1, ControlMode.POSITION)], {"speed": 1}, "unknown Dynamixel bus option"),
    ([ActuatorSpec(1, ControlMode.VELOCITY, options={"profile_time": 0.005})], {},
     "profile_time is for position actuators only"),
    ([ActuatorSpec(1, ControlMode.POSITION, options={"profile_time": 0})], {}, "positive"),
    ([ActuatorSpec(1, ControlMode.POSITION, options={"profile_time": 40})], {},
     r"profile_time must be 0.001..32.737 s"),
    ([ActuatorSpec(1, ControlMode.POSITION, options={"profile_time": 0.0004})], {},
     r"profile_time must be 0.001..32.737 s"),
])
def test_configuration_errors(acts: list[ActuatorSpec], options: dict[str, object],
                              match: str) -> None:
    spec = BusSpec("arm", "dynamixel", {"port": "/dev/null"}, options)
    with pytest.raises(ConfigError, match=match):
        DynamixelBus(spec, acts)


def test_registered_in_protocols() -> None:
    from skel_ros.hardware.plugins import bus_class

    assert bus_class("dynamixel") is DynamixelBus
