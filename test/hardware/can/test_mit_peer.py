"""The MIT codec and emulator against an independent implementation: damiao-motor 1.0.6.

damiao-motor truncates when it converts a float to an unsigned field (``int(...)``, like
the reference firmware); we round to the nearest step. So: with ``rounding="truncate"``
our frames equal its frames byte for byte; with the default rounding each field equals
its field or is one step above, and is never further from the commanded value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import can
import numpy as np
import pytest

damiao = pytest.importorskip("damiao_motor", reason="test peer damiao-motor (requirements/dev.txt)")

from damiao_motor.core.motor import KD_MAX, KP_MAX, MOTOR_TYPE_PRESETS  # noqa: E402

from skel_ros.emulation.mit import MitEmulator  # noqa: E402
from skel_ros.hardware.base import ActuatorSpec, ControlMode  # noqa: E402
from skel_ros.hardware.mit.codec import MitCodec, MitRanges, Variant  # noqa: E402
from skel_ros.hardware.mit.models import MODELS  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Iterator

N = 2000
TYPES = ["4310", "4340", "8009", "10010L"]


def _ranges(motor_type: str) -> MitRanges:
    p = MOTOR_TYPE_PRESETS[motor_type]
    return MitRanges(p["p_min"], p["p_max"], p["v_min"], p["v_max"], p["t_min"], p["t_max"],
                     0.0, KP_MAX, 0.0, KD_MAX)


def _peer(motor_type: str) -> damiao.DaMiaoMotor:
    # encode/decode only: no bus traffic (bus=None is never touched by them).
    return damiao.DaMiaoMotor(1, 0x11, None, motor_type=motor_type)  # type: ignore[arg-type]


def _fields(frame: bytes) -> np.ndarray:
    b = frame
    return np.array([(b[0] << 8) | b[1], (b[2] << 4) | (b[3] >> 4), ((b[3] & 0xF) << 8) | b[4],
                     (b[5] << 4) | (b[6] >> 4), ((b[6] & 0xF) << 8) | b[7]])


def _commands(motor_type: str, seed: int) -> np.ndarray:
    r = _ranges(motor_type)
    rng = np.random.default_rng(seed)
    lo = np.array([r.p_min, r.v_min, 0.0, 0.0, r.t_min])
    hi = np.array([r.p_max, r.v_max, KP_MAX, KD_MAX, r.t_max])
    x = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), size=(N, 5))  # some saturate
    x[:50] = np.round(x[:50])  # integers hit exact / half steps
    return x


def test_builtin_damiao_ranges_match_the_peer() -> None:
    for name in ("DM4310", "DM4340", "DM8009", "DM10010L"):
        assert MODELS[name].ranges == _ranges(name.removeprefix("DM"))


@pytest.mark.parametrize("motor_type", TYPES)
def test_truncating_frames_equal_the_peer(motor_type: str) -> None:
    peer = _peer(motor_type)
    ours = MitCodec(_ranges(motor_type), Variant.DAMIAO, rounding="truncate")
    for p, v, kp, kd, t in _commands(motor_type, 1):
        assert ours.encode(p, v, kp, kd, t) == peer.encode_cmd_msg(p, v, t, kp, kd)


@pytest.mark.parametrize("motor_type", TYPES)
def test_rounded_frames_are_the_peer_or_one_step_above_and_closer(motor_type: str) -> None:
    peer = _peer(motor_type)
    ours = MitCodec(_ranges(motor_type), Variant.DAMIAO)
    bumped = 0
    for x in _commands(motor_type, 2):
        p, v, kp, kd, t = x
        mine, theirs = ours.encode(*x), peer.encode_cmd_msg(p, v, t, kp, kd)
        diff = _fields(mine) - _fields(theirs)
        assert set(diff.tolist()) <= {0, 1}
        bumped += int(diff.any())
        clipped = np.clip(x, [ours.ranges.p_min, ours.ranges.v_min, 0, 0, ours.ranges.t_min],
                          [ours.ranges.p_max, ours.ranges.v_max, KP_MAX, KD_MAX,
                           ours.ranges.t_max])
        their_back = np.array(ours.decode_command(theirs))
        my_back = np.array(ours.decode_command(mine))
        assert np.all(np.abs(my_back - clipped) <= np.abs(their_back - clipped) + 1e-9)
    assert bumped > N // 2  # rounding differs from truncation for most random values


def test_batch_path_equals_the_peer() -> None:
    peer = _peer("8009")
    ours = MitCodec(_ranges("8009"), Variant.DAMIAO, rounding="truncate")
    x = _commands("8009", 3)
    frames = ours.encode_batch(x)
    assert [bytes(f) for f in frames] == [peer.encode_cmd_msg(p, v, t, kp, kd)
                                          for p, v, kp, kd, t in x]


def test_reply_decoding_equals_the_peer() -> None:
    peer = _peer("4310")
    ours = MitCodec(_ranges("4310"), Variant.DAMIAO)
    rng = np.random.default_rng(4)
    for _ in range(N):
        frame = bytes([int(rng.integers(0, 16)) << 4 | 1, *rng.integers(0, 256, 7).tolist()])
        mine = ours.decode_reply(frame)
        theirs = peer.decode_sensor_feedback(frame)
        assert mine.position == pytest.approx(theirs["pos"], abs=1e-12)
        assert mine.velocity == pytest.approx(theirs["vel"], abs=1e-12)
        assert mine.torque == pytest.approx(theirs["torq"], abs=1e-12)
        assert mine.motor_id == theirs["can_id"]
        assert mine.temperature == max(theirs["t_mos"], theirs["t_rotor"])
        status = theirs["status_code"]
        assert mine.error_code == (status if status >= 8 else 0)


@pytest.fixture
def emulated() -> Iterator[tuple[MitEmulator, can.BusABC, list[float]]]:
    t = [10.0]
    spec = ActuatorSpec(1, ControlMode.IMPEDANCE, "DM4310", {"kp": 10.0, "kd": 0.5})
    emu = MitEmulator({}, [spec], {"clock": lambda: t[0], "initial_positions": {1: -0.2}})
    bus = can.Bus(**emu.transport)
    yield emu, bus, t
    bus.shutdown()
    emu.stop()


def _feedback(bus: can.BusABC) -> bytes:
    msg = bus.recv(timeout=1.0)
    assert msg is not None, "the emulator did not answer"
    return bytes(msg.data)


def test_peer_drives_our_emulator(emulated: tuple[MitEmulator, can.BusABC, list[float]],
                                  ) -> None:
    emu, bus, t = emulated
    motor = damiao.DaMiaoMotor(1, 0, bus, motor_type="4310")
    motor.enable()
    state = motor.decode_sensor_feedback(_feedback(bus))
    assert state["status"] == "ENABLED"
    assert state["pos"] == pytest.approx(-0.2, abs=25 / 65535)
    motor.send_cmd_mit(target_position=0.3, target_velocity=0.0, stiffness=10.0, damping=0.5,
                       feedforward_torque=0.0)
    _feedback(bus)
    t[0] += 2.0
    motor.send_cmd_mit(target_position=0.3, target_velocity=0.0, stiffness=10.0, damping=0.5,
                       feedforward_torque=0.0)
    state = motor.decode_sensor_feedback(_feedback(bus))
    # At rest kp (p* - q) + kd v* + t* = 0, with the values the firmware decodes from the
    # peer's frame. Its truncation biases all three low: q ends 1 mrad below 0.3.
    p, v, kp, kd, tff = MitCodec(_ranges("4310")).decode_command(
        motor.encode_cmd_msg(0.3, 0.0, 0.0, 10.0, 0.5))
    rest = p + (kd * v + tff) / kp
    assert rest == pytest.approx(0.3 - 1e-3, abs=2e-4)
    assert emu.state(1).position == pytest.approx(rest, abs=1e-5)
    assert state["pos"] == pytest.approx(rest, abs=25 / 65535)
    motor.disable()
    assert motor.decode_sensor_feedback(_feedback(bus))["status"] == "DISABLED"
    assert not emu.state(1).torque_enabled
    motor.request_register_reading(10)  # CTRL_MODE over 0x7FF
    reply = _feedback(bus)
    motor.process_feedback_frame(reply)
    assert motor.registers[10] == 1  # MIT mode
