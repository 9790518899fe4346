"""MitBus safety on the wire, against the MIT emulator modelling Ben Katz's mbed firmware.

That firmware (which CubeMars AK MIT mode derives from) keeps the last command it unpacked
across *exit* and *enter*, zeroes in any state keeping ``p_des``, and packs positions past
``p_max`` into 16 bits, so they wrap; AK firmware may stay silent for about a second after
*set zero*. Each test reads what the emulated motor received or applied.

The motors move on a manual clock (``Clock``) unless a test needs the emulator's own
real-time clock (the zeroing silence); no test asserts wall-clock durations.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any

import can
import pytest

from skel_ros.emulation.mit import MitEmulator
from skel_ros.hardware.base import (
    NO_LIMITS,
    ActuatorCommand,
    ActuatorLimits,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.errors import ConfigError, DeviceError, TransportTimeoutError
from skel_ros.hardware.mit import bus as mit_bus
from skel_ros.hardware.mit.bus import MitBus
from skel_ros.hardware.mit.codec import ENTER_MODE, EXIT_MODE, ZERO_POSITION, MitCodec
from skel_ros.hardware.mit.models import MODELS

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

P_STEP = 25 / 65535          # one position step of a +-12.5 rad range
T_STEP = 36 / 4095           # one torque step of an AK80-9 (+-18 N m)
LIMITS = ActuatorLimits(position=(-12.0, 12.0))


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _spec(motor_id: int, model: str = "AK80-9", limits: ActuatorLimits = LIMITS,
          **options: Any) -> ActuatorSpec:
    return ActuatorSpec(motor_id, ControlMode.IMPEDANCE, model, {"kp": 20.0, "kd": 0.5, **options},
                        name=f"j{motor_id}", limits=limits)


class Rig:
    def __init__(self, actuators: list[ActuatorSpec], *,
                 clock: Callable[[], float] | None = None,
                 emulator: dict[str, Any] | None = None, **options: Any) -> None:
        self.clock = Clock()
        self.emulator = MitEmulator({}, actuators,
                                    {"clock": clock or self.clock, **(emulator or {}),
                                     "initial_positions": {a.id: 0.1 * a.id
                                                           for a in actuators}})
        self.spec = BusSpec("legs", "mit", self.emulator.transport,
                            {"reply_timeout": 0.2, **options})
        self.bus = MitBus(self.spec, actuators, time.monotonic)

    def hold(self, motor_id: int, position: float) -> None:
        self.bus.write({motor_id: ActuatorCommand(position=position, velocity=0.0,
                                                  effort=0.0)})

    def close(self) -> None:
        self.bus.close()
        self.emulator.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig([_spec(1)])
    yield r
    r.close()


def _limp(command: tuple[float, float, float, float, float] | None) -> bool:
    """Whether a decoded command produces no torque (kp = kd = 0, t_ff within a step)."""
    assert command is not None
    _p, _v, kp, kd, t = command
    return kp == 0.0 and kd == 0.0 and abs(t) <= T_STEP


def _hold_at_one_then_torque_off(r: Rig) -> None:
    r.bus.open()
    r.hold(1, 1.0)
    r.bus.set_torque(True)
    r.hold(1, 1.0)
    r.bus.read()
    r.clock.t += 2.0
    assert r.bus.read()[1].position == pytest.approx(1.0, abs=1e-3)


# ------------------------------------------------------------------ D1: stale command


def test_torque_off_leaves_a_limp_command_in_the_firmware(rig: Rig) -> None:
    _hold_at_one_then_torque_off(rig)
    rig.bus.set_torque(False)
    assert rig.emulator.specials(1)[-1] == EXIT_MODE
    assert _limp(rig.emulator.command(1))        # retained across exit: harmless
    # The joint is moved by hand while limp; the manager's enable: hold, enter, hold.
    rig.emulator.move_to(1, 3.0)
    start = rig.bus.read()[1].position
    rig.hold(1, start)
    rig.bus.set_torque(True)
    rig.hold(1, start)
    rig.bus.read()
    assert _limp(rig.emulator.entered(1)[-1])    # enter applied no goal of session 1
    rig.clock.t += 1.0
    assert rig.bus.read()[1].position == pytest.approx(3.0, abs=1e-3)
    assert rig.emulator.state(1).position == pytest.approx(3.0, abs=1e-3)
    # close() with torque off leaves a limp command too.
    rig.bus.close()
    assert rig.emulator.specials(1)[-1] == EXIT_MODE
    assert _limp(rig.emulator.command(1))


def test_enable_without_a_new_command_holds_limp_not_the_old_goal(rig: Rig) -> None:
    _hold_at_one_then_torque_off(rig)
    rig.bus.set_torque(False)
    rig.emulator.move_to(1, 3.0)
    rig.bus.read()
    rig.bus.set_torque(True)          # no write since torque went off
    rig.bus.read()
    rig.clock.t += 1.0
    state = rig.bus.read()[1]
    assert state.torque_enabled
    assert state.position == pytest.approx(3.0, abs=1e-3)   # not pulled back to 1.0
    assert _limp(rig.emulator.command(1))


def test_open_leaves_a_limp_command_in_a_motor_left_enabled() -> None:
    r = Rig([_spec(1)])
    try:
        _hold_at_one_then_torque_off(r)
        r.bus.close(torque_off=False)          # e.g. the node died: still holding 1.0
        fresh = MitBus(r.spec, [_spec(1)], time.monotonic)
        try:
            fresh.open()                        # a new driver: torque off
            assert r.emulator.specials(1)[-1] == EXIT_MODE
            assert _limp(r.emulator.command(1))
        finally:
            fresh.close()
    finally:
        r.close()


def test_emulator_retains_the_command_across_exit_and_enter() -> None:
    # The firmware behaviour itself, on raw frames (no driver).
    spec = _spec(1)
    emu = MitEmulator({}, [spec], {"clock": Clock()})
    codec = MitCodec(MODELS["AK80-9"].ranges)
    try:
        with can.Bus(**emu.transport) as raw:
            frames = [ENTER_MODE, codec.encode(1.0, 0.0, 20.0, 0.5, 0.0), EXIT_MODE,
                      codec.encode(3.0, 0.0, 5.0, 0.1, 0.0), ENTER_MODE]
            for data in frames:
                raw.send(can.Message(arbitration_id=1, data=data, is_extended_id=False))
                assert raw.recv(timeout=2.0) is not None
        entered = emu.entered(1)
        assert entered[0] is None                      # nothing retained at power-up
        assert entered[1] is not None
        assert entered[1][0] == pytest.approx(1.0, abs=P_STEP)   # the command in rest
        assert entered[1][2] == pytest.approx(20.0, abs=0.2)     # mode was ignored
    finally:
        emu.stop()


# ------------------------------------------------------------------ D2: zero with torque on


def test_zero_is_refused_with_torque_on(rig: Rig) -> None:
    rig.bus.open()
    rig.hold(1, 0.1)
    rig.bus.set_torque(True)
    rig.bus.read()
    with pytest.raises(DeviceError, match=r"refusing set zero for MIT id\(s\) \[1\]: torque "
                                          "is on") as info:
        rig.bus.zero([1])
    assert info.value.actuator_id == 1
    assert ZERO_POSITION not in rig.emulator.specials(1)
    rig.bus.set_torque(False)
    rig.bus.zero([1])
    assert rig.emulator.specials(1).count(ZERO_POSITION) == 1
    assert rig.bus.read()[1].position == pytest.approx(0.0, abs=P_STEP)


def test_emulator_zeroes_in_motor_mode_and_keeps_p_des() -> None:
    clock = Clock()
    emu = MitEmulator({}, [_spec(1)], {"clock": clock, "initial_positions": {1: 2.0}})
    codec = MitCodec(MODELS["AK80-9"].ranges)
    try:
        with can.Bus(**emu.transport) as raw:
            for data in (ENTER_MODE, codec.encode(2.0, 0.0, 20.0, 0.5, 0.0), ZERO_POSITION):
                raw.send(can.Message(arbitration_id=1, data=data, is_extended_id=False))
                assert raw.recv(timeout=2.0) is not None
            clock.t += 2.0
            raw.send(can.Message(arbitration_id=1, data=EXIT_MODE, is_extended_id=False))
            assert raw.recv(timeout=2.0) is not None
        # p_des 2.0 in the new zero: the motor jumped to 4.0 of the old one.
        assert emu.state(1).position == pytest.approx(2.0, abs=1e-3)
    finally:
        emu.stop()


# ------------------------------------------------------------------ D3: wrapped positions


def test_position_limits_not_inside_the_range_are_refused() -> None:
    spec = BusSpec("b", "mit", {"interface": "virtual", "channel": "unused"})
    for limits, shown in ((ActuatorLimits(position=(-20.0, 20.0)), r"\[-20, 20\]"),
                          (ActuatorLimits(), r"\[-inf, inf\]"),
                          (ActuatorLimits(position=(0.0, 12.6)), r"\[0, 12.6\]")):
        with pytest.raises(ConfigError, match=r"MIT actuator 'j1' \(id 1\): position limits "
                                              + shown + r" at the motor are not inside its "
                                              r"range \[-12.5, 12.5\]"):
            MitBus(spec, [_spec(1, limits=limits)], time.monotonic)
    MitBus(spec, [_spec(1, limits=ActuatorLimits(position=(-12.5, 12.5)))], time.monotonic)
    # No limits given at all (a tool without a model: skel-ros clear-faults) is not a
    # joint without limits (which the manager passes as an infinite ActuatorLimits).
    MitBus(spec, [_spec(1, limits=NO_LIMITS)], time.monotonic)


def test_a_wrapped_position_reading_is_a_fault(rig: Rig) -> None:
    rig.bus.open()
    rig.emulator.move_to(1, 12.4)            # by hand, torque off, up to P_MAX ...
    assert rig.bus.read()[1].error_code == 0
    rig.emulator.move_to(1, 13.0)            # ... and 0.5 rad past it
    state = rig.bus.read()[1]
    assert state.position == pytest.approx(13.0 - 25 * 65536 / 65535, abs=2 * P_STEP)
    assert state.fault == ("position reading wrapped: the joint is outside the motor's "
                           "±P_MAX range")
    assert state.error_code & mit_bus.WRAP_FAULT
    assert not state.torque_enabled
    assert rig.bus.read()[1].error_code & mit_bus.WRAP_FAULT    # it stays
    with pytest.raises(DeviceError, match="refusing to enable: id 1: position reading "
                                          "wrapped"):
        rig.bus.set_torque(True)
    assert ENTER_MODE not in rig.emulator.specials(1)
    answer = rig.bus.clear_faults([1])[1]
    assert re.search(r"torque off\); still: position reading wrapped", answer), answer
    rig.emulator.move_to(1, 12.0)            # back inside: the reading wraps back
    state = rig.bus.read()[1]
    assert (state.error_code, state.fault) == (0, "")
    assert state.position == pytest.approx(12.0, abs=P_STEP)


# ------------------------------------------------------------------ D4: models


def test_ak60_6_ranges_are_the_manufacturers() -> None:
    r = MODELS["AK60-6"].ranges
    assert (r.p_max, r.v_max, r.t_max) == (12.5, 45.0, 15.0)   # AK driver manual V1.0.8


# ------------------------------------------------------------------ D5: zeroing silence


def test_zero_is_sent_once_and_waits_for_a_silent_motor() -> None:
    # The emulator's own (real-time) clock: the motor is silent 0.4 s after set zero,
    # longer than the driver's 3 x 0.1 s of retries, well inside its zeroing wait.
    r = Rig([_spec(1)], clock=time.monotonic, emulator={"zero_silence": 0.4},
            reply_timeout=0.1)
    try:
        r.bus.open()
        r.bus.zero([1])
        assert r.emulator.specials(1).count(ZERO_POSITION) == 1
        assert r.bus.read()[1].position == pytest.approx(0.0, abs=1e-3)
    finally:
        r.close()


def test_zero_gives_up_after_the_zeroing_wait() -> None:
    r = Rig([_spec(1)], reply_timeout=0.1)
    try:
        r.bus.open()
        r.emulator.set_silent(1)
        with pytest.raises(TransportTimeoutError,
                           match=r"no reply to set zero from MIT id\(s\) \[1\] in 1.5 s "
                                 r"\(the zeroing wait\)"):
            r.bus.zero([1])
        assert r.emulator.specials(1).count(ZERO_POSITION) == 1
    finally:
        r.close()


# ------------------------------------------------------------------ D6: config, messages


def test_gains_outside_the_model_range_are_refused() -> None:
    spec = BusSpec("b", "mit", {"interface": "virtual", "channel": "unused"})
    with pytest.raises(ConfigError, match=r"'kp' = 900 is outside the motor's kp range "
                                          r"\[0, 500\]"):
        MitBus(spec, [_spec(1, kp=900.0)], time.monotonic)
    with pytest.raises(ConfigError, match=r"'kd' = 7 is outside the motor's kd range "
                                          r"\[0, 5\]"):
        MitBus(spec, [_spec(1, kd=7.0)], time.monotonic)
    MitBus(spec, [_spec(1, kp=500.0, kd=5.0)], time.monotonic)


def test_ids_beyond_one_reply_byte_are_refused() -> None:
    spec = BusSpec("b", "mit", {"interface": "virtual", "channel": "unused"})
    for model in ("AK80-9", "MINI-CHEETAH"):
        with pytest.raises(ConfigError, match=r"replies carry the id in one byte, so CAN id "
                                              r"must be in 1..255"):
            MitBus(spec, [_spec(257, model)], time.monotonic)
    MitBus(spec, [_spec(255, "AK80-9"), _spec(257, "DM4310")], time.monotonic)


def test_open_timeout_counts_frames_on_motor_ids() -> None:
    # Motors answering on their own id (the CubeMars manual's "0x00 + drive id") are not
    # read as replies; the message says frames came on motor ids.
    r = Rig([_spec(1)], emulator={"master_id": 1}, retries=0, reply_timeout=0.1)
    try:
        with pytest.raises(TransportTimeoutError) as info:
            r.bus.open()
        text = str(info.value)
        assert "replies from other ids: none" in text
        assert re.search(r"frames on motor ids: [1-9]", text), text
    finally:
        r.close()
