"""MitBus against the MIT emulator on python-can's virtual bus (threads of this process).

The emulator's motors move on a manual clock (``Clock``): a test advances it and the
next frame a motor receives brings it there, so no test waits for motion in real time.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import can
import pytest

from skel_ros.emulation.mit import MitEmulator, start_emulator
from skel_ros.hardware import mit
from skel_ros.hardware.base import (
    ActuatorCommand,
    ActuatorLimits,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    TransportError,
    TransportTimeoutError,
)
from skel_ros.hardware.mit.bus import MitBus
from skel_ros.hardware.mit.codec import EXIT_MODE
from skel_ros.hardware.plugins import bus_class

if TYPE_CHECKING:
    from collections.abc import Iterator

P_STEP = 25 / 65535  # one position step of a +-12.5 rad range


class Clock:
    """A manual clock for the emulated motors."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


#: Joint limits inside every built-in model's position range (wider ones are refused).
LIMITS = ActuatorLimits(position=(-12.0, 12.0))


def _spec(motor_id: int, model: str, mode: ControlMode = ControlMode.IMPEDANCE,
          **options: Any) -> ActuatorSpec:
    opts = {"kp": 20.0, "kd": 0.5} if mode in (ControlMode.IMPEDANCE, ControlMode.POSITION) else {}
    opts.update(options)
    return ActuatorSpec(motor_id, mode, model, opts, name=f"j{motor_id}", limits=LIMITS)


class Rig:
    def __init__(self, actuators: list[ActuatorSpec], emulated: list[ActuatorSpec] | None = None,
                 motor: dict[str, float] | None = None, **bus_options: Any) -> None:
        self.clock = Clock()
        self.emulator = MitEmulator({}, emulated if emulated is not None else actuators,
                                    {"clock": self.clock, "motor": motor or {},
                                     "initial_positions": {a.id: 0.1 * a.id for a in actuators}})
        self.spec = BusSpec("legs", "mit", self.emulator.transport,
                            {"reply_timeout": 0.2, **bus_options})
        self.bus = MitBus(self.spec, actuators, time.monotonic)

    def close(self) -> None:
        self.bus.close()
        self.emulator.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig([_spec(1, "AK80-9"), _spec(2, "DM4310"), _spec(3, "MINI-CHEETAH")])
    yield r
    r.close()


def test_protocol_table_loads_the_driver() -> None:
    assert bus_class("mit") is MitBus


def test_open_reads_torque_off(rig: Rig) -> None:
    rig.bus.open()
    assert rig.bus.is_open
    states = rig.bus.read()
    assert set(states) == {1, 2, 3}
    for motor_id, st in states.items():
        assert st.position == pytest.approx(0.1 * motor_id, abs=P_STEP)
        assert not st.torque_enabled
        assert st.error_code == 0
        assert not rig.emulator.state(motor_id).torque_enabled
    assert states[1].temperature == 30.0   # CubeMars reports it
    assert states[3].temperature is None   # the 6-byte Mini Cheetah reply does not


def test_enter_command_move_exit(rig: Rig) -> None:
    rig.bus.open()
    rig.bus.set_torque(True)
    assert all(rig.emulator.state(i).torque_enabled for i in (1, 2, 3))
    goals = {1: 0.5, 2: -0.4, 3: 1.0}
    rig.bus.write({i: ActuatorCommand(position=g, velocity=0.0, effort=0.0)
                   for i, g in goals.items()})
    rig.bus.read()            # the replies to the commands
    rig.clock.t += 2.0        # the motors get there on the manual clock
    states = rig.bus.read()   # repeats the last commands: the motors advance to t
    for i, goal in goals.items():
        assert rig.emulator.state(i).position == pytest.approx(goal, abs=1e-3)
        assert states[i].position == pytest.approx(goal, abs=1e-3)
        assert states[i].torque_enabled
    assert states[2].torque_enabled  # Damiao status nibble says enabled
    rig.bus.set_torque(False, [2])
    assert not rig.emulator.state(2).torque_enabled
    assert rig.emulator.state(1).torque_enabled
    rig.bus.close()
    assert not rig.bus.is_open
    assert not any(rig.emulator.state(i).torque_enabled for i in (1, 2, 3))


def test_zero_makes_the_present_position_zero(rig: Rig) -> None:
    rig.bus.open()
    rig.bus.zero([3])
    states = rig.bus.read()
    assert states[3].position == pytest.approx(0.0, abs=P_STEP)
    assert states[1].position == pytest.approx(0.1, abs=P_STEP)


def test_velocity_and_effort_modes() -> None:
    r = Rig([_spec(1, "AK80-9", ControlMode.VELOCITY, kd=0.5),
             _spec(2, "AK80-9", ControlMode.EFFORT)])
    try:
        r.bus.open()
        r.bus.set_torque(True)
        r.bus.write({1: ActuatorCommand(velocity=2.0), 2: ActuatorCommand(effort=0.05)})
        r.bus.read()
        r.clock.t += 1.0
        states = r.bus.read()
        # kd (2 - v) = b v at steady state: v = kd * 2 / (kd + b)
        assert states[1].velocity == pytest.approx(0.5 * 2 / 0.55, abs=0.03)
        assert r.emulator.state(2).effort == pytest.approx(0.05, abs=36 / 4095)
        assert states[2].effort == pytest.approx(0.05, abs=36 / 4095)
    finally:
        r.close()


@pytest.mark.parametrize(("model", "stall"), [("AK10-9", 65.0), ("MINI-CHEETAH", 18.0)])
def test_emulated_motor_is_as_strong_as_its_model(model: str, stall: float) -> None:
    # The model's T range is the emulated stall torque (not one default for every motor):
    # an effort inside it is produced as commanded; a stiff MIT law that asks for more
    # is cut at it.
    r = Rig([_spec(1, model, ControlMode.EFFORT), _spec(2, model, kp=400.0, kd=0.0)])
    try:
        r.bus.open()
        r.bus.set_torque(True)
        r.bus.write({1: ActuatorCommand(effort=0.9 * stall),
                     2: ActuatorCommand(position=0.2 + 1.0, velocity=0.0, effort=0.0)})
        r.bus.read()
        r.clock.t += 0.005
        states = r.bus.read()
        step = 2 * stall / 4095
        assert r.emulator.state(1).effort == pytest.approx(0.9 * stall, abs=step)
        assert states[1].effort == pytest.approx(0.9 * stall, abs=step)
        assert r.emulator.state(2).effort == pytest.approx(stall)  # 400 N m/rad * ~1 rad
        assert states[2].effort == pytest.approx(stall, abs=step)
        assert r.emulator.state(1).velocity > 6.0  # faster than the old 6 rad/s cap
    finally:
        r.close()


def test_emulated_motor_options_win_over_the_model() -> None:
    r = Rig([_spec(1, "AK10-9", ControlMode.EFFORT)], motor={"max_effort": 1.5})
    try:
        r.bus.open()
        r.bus.set_torque(True)
        r.bus.write({1: ActuatorCommand(effort=10.0)})
        r.bus.read()
        r.clock.t += 0.01
        r.bus.read()
        assert r.emulator.state(1).effort == pytest.approx(1.5)
    finally:
        r.close()
    with pytest.raises(ConfigError, match=r"bad motor parameters for id 1: .*inertia"):
        Rig([_spec(1, "AK10-9")], motor={"inertia": -1.0})
    with pytest.raises(ConfigError, match="bad motor parameters for id 1"):
        Rig([_spec(1, "AK10-9")], motor={"stiffness": 3.0})


def test_silent_motor_is_a_timeout(rig: Rig) -> None:
    rig.bus.open()
    rig.emulator.set_silent(2)
    with pytest.raises(TransportTimeoutError, match=r"MIT id\(s\) \[2\]"):
        rig.bus.read()
    rig.emulator.set_silent(2, silent=False)
    assert set(rig.bus.read()) == {1, 2, 3}


def test_missing_motor_fails_open() -> None:
    r = Rig([_spec(1, "AK80-9"), _spec(4, "AK80-9")], emulated=[_spec(1, "AK80-9")])
    try:
        with pytest.raises(TransportTimeoutError, match=r"\[4\]"):
            r.bus.open()
        assert not r.bus.is_open
    finally:
        r.close()


def test_error_reply_is_reported(rig: Rig) -> None:
    rig.bus.open()
    rig.bus.set_torque(True)
    rig.emulator.inject_error(1, 1)  # CubeMars: over temperature
    state = rig.bus.read()[1]
    assert (state.error_code, state.fault, state.torque_enabled) == (1, "over temperature",
                                                                      False)
    assert not rig.emulator.state(1).torque_enabled
    with pytest.raises(DeviceError, match="over temperature") as info:
        rig.bus.set_torque(True, [1])
    assert (info.value.actuator_id, info.value.code) == (1, 1)
    rig.emulator.inject_error(1, 0)
    assert rig.bus.read()[1].error_code == 0


def test_damiao_error_is_cleared_on_open_with_clear_errors() -> None:
    r = Rig([_spec(2, "DM4310")], clear_errors=True)
    try:
        r.bus.open()
        r.emulator.inject_error(2, 0xD)  # lost communication
        assert r.bus.read()[2].fault == "lost communication"
        r.bus.close()
        r.bus.open()  # sends "clear error" to the Damiao motor
        assert r.bus.read()[2].error_code == 0
    finally:
        r.close()


def test_damiao_error_stays_by_default() -> None:
    r = Rig([_spec(2, "DM4310")])
    try:
        r.emulator.inject_error(2, 0xA)
        r.bus.open()
        assert r.bus.read()[2].fault == "over current"
    finally:
        r.close()


def test_bad_command_is_refused_before_the_wire(rig: Rig) -> None:
    rig.bus.open()
    before = rig.emulator.frames_received(1)
    with pytest.raises(mit.CommandError, match="id 1") as info:
        rig.bus.write({1: ActuatorCommand(position=math.nan)})
    assert isinstance(info.value, HardwareError)
    with pytest.raises(ConfigError, match="no MIT actuator"):
        rig.bus.write({9: ActuatorCommand(position=0.0)})
    assert rig.emulator.frames_received(1) == before


def test_config_errors() -> None:
    spec = BusSpec("b", "mit", {"interface": "virtual", "channel": "unused"})
    cases = [
        ([ActuatorSpec(1, ControlMode.POSITION, "AK80-9")], "needs option kp"),
        ([ActuatorSpec(1, ControlMode.VELOCITY, "AK80-9")], "needs option kd"),
        ([_spec(1, "AK99")], "unknown MIT motor model"),
        ([_spec(1, "DM4310"), _spec(17, "DM4310")], "low 4 bits"),
        ([_spec(0x800, "AK80-9")], "1..0x7FF"),
        ([_spec(1, "DM4310"), _spec(17, "AK80-9")], "mistaken for Damiao"),
        ([_spec(1, "AK80-9", kp=-1.0)], "'kp' must be >= 0"),
    ]
    for actuators, match in cases:
        with pytest.raises(ConfigError, match=match):
            MitBus(spec, actuators, time.monotonic)
    with pytest.raises(ConfigError, match="unknown MIT bus option"):
        MitBus(BusSpec("b", "mit", {}, {"sync": 1}), [_spec(1, "AK80-9")], time.monotonic)


def test_udp_multicast_is_refused() -> None:
    spec = BusSpec("b", "mit", {"interface": "udp_multicast", "channel": "239.74.163.2"})
    bus = MitBus(spec, [_spec(1, "AK80-9")], time.monotonic)
    with pytest.raises(TransportError, match="never sends traffic off the machine"):
        bus.open()
    assert not bus.is_open


def test_scan_lists_motors_and_only_switches_torque_off(rig: Rig) -> None:
    rig.bus.open()
    rig.bus.set_torque(True)
    rig.bus.close()
    with can.Bus(**rig.emulator.transport) as spy:
        found = mit.scan(rig.emulator.transport, list(range(1, 6)), timeout=0.2)
        seen = []
        while (msg := spy.recv(0)) is not None:
            seen.append(msg)
    assert [(r.id, r.model) for r in found] == [(1, "cubemars"), (2, "damiao"), (3, "cheetah")]
    assert found[1].firmware == "5013"
    commands = [bytes(m.data) for m in seen if 1 <= m.arbitration_id <= 5]
    assert commands
    assert set(commands) == {EXIT_MODE}  # nothing but "exit motor mode" went to a motor id
    assert not any(rig.emulator.state(i).torque_enabled for i in (1, 2, 3))


def test_start_emulator_signature() -> None:
    emu = start_emulator({}, [_spec(5, "AK60-6")], {"initial_positions": {5: 0.25}})
    try:
        assert emu.transport["interface"] == "virtual"
        assert emu.state(5).position == pytest.approx(0.25)
    finally:
        emu.stop()
        emu.stop()  # idempotent
