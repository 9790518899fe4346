"""MIT codec: hand-computed frames, saturation, NaN/inf, round trips, batch = scalar."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.hardware.errors import ConfigError, HardwareError, ProtocolError
from skel_ros.hardware.mit.codec import (
    CLEAR_ERROR,
    ENTER_MODE,
    EXIT_MODE,
    ZERO_POSITION,
    CommandError,
    MitCodec,
    MitRanges,
    Variant,
    float_to_uint,
    is_special,
    uint_to_float,
)
from skel_ros.hardware.mit.models import MODELS, lookup, resolve

AK80_9 = MitRanges.symmetric(12.5, 50.0, 18.0)


def test_zero_command_by_hand() -> None:
    # p: 12.5 * 65535 / 25 = 32767.5 -> 32768 (nearest) / 32767 (truncate); v and t:
    # 2047.5 -> 2048 / 2047; gains 0.
    assert MitCodec(AK80_9).encode(0, 0, 0, 0, 0).hex() == "8000800000000800"
    trunc = MitCodec(AK80_9, rounding="truncate")
    assert trunc.encode(0, 0, 0, 0, 0).hex() == "7fff7ff0000007ff"


def test_mid_command_by_hand() -> None:
    # p = 1.0: 13.5 * 65535 / 25 = 35388.9 -> 0x8A3D;  v = 10: 60 * 4095 / 100 = 2457 ->
    # 0x999;  kp = 250: 2047.5 -> 0x800;  kd = 1: 819 -> 0x333;  t = -9: 1023.75 -> 0x400.
    frame = MitCodec(AK80_9).encode(1.0, 10.0, 250.0, 1.0, -9.0)
    assert frame == bytes([0x8A, 0x3D, 0x99, 0x98, 0x00, 0x33, 0x34, 0x00])


def test_extremes_and_saturation() -> None:
    codec = MitCodec(AK80_9)
    top = bytes([0xFF, 0xFF, 0x00, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF])
    assert codec.encode(12.5, -50.0, 500.0, 5.0, 18.0) == top
    assert codec.encode(1e9, -1e9, 1e6, 99.0, 1e3) == top  # saturates like pack_cmd
    assert codec.encode(-12.5, 50, -1, -1, -18) == codec.encode(-99, 99, -5, -5, -99)
    assert codec.encode(-99, 99, -5, -5, -99) == bytes([0, 0, 0xFF, 0xF0, 0, 0, 0, 0])


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("field", range(5))
def test_non_finite_is_an_error(bad: float, field: int) -> None:
    values = [0.0, 0.0, 1.0, 0.1, 0.0]
    values[field] = bad
    name = ("p", "v", "kp", "kd", "t_ff")[field]
    with pytest.raises(CommandError, match=name) as info:
        MitCodec(AK80_9).encode(*values)
    assert isinstance(info.value, HardwareError)
    with pytest.raises(CommandError, match=f"row 1: {name}"):
        MitCodec(AK80_9).encode_batch(np.array([[0.0, 0, 1, 0.1, 0], values]))


def test_round_trip_within_half_a_step() -> None:
    rng = np.random.default_rng(7)
    codec = MitCodec(AK80_9)
    steps = np.array([25 / 65535, 100 / 4095, 500 / 4095, 5 / 4095, 36 / 4095])
    for _ in range(2000):
        x = rng.uniform([-12.5, -50, 0, 0, -18], [12.5, 50, 500, 5, 18])
        back = np.array(codec.decode_command(codec.encode(*x)))
        assert np.all(np.abs(back - x) <= steps / 2 + 1e-9)
    trunc = MitCodec(AK80_9, rounding="truncate")
    x = np.array([0.3, 1.0, 10.0, 0.5, 1.0])
    back = np.array(trunc.decode_command(trunc.encode(*x)))
    assert np.all(back <= x + 1e-12)  # truncation is biased low
    assert np.all(x - back < steps)


@pytest.mark.parametrize("t_step", [0xFFB, 0xFFC, 0xFFD, 0xFFE])
def test_command_never_reads_as_a_special_frame(t_step: int) -> None:
    # All fields at their maximum and t_ff at 0xFFB..0xFFE would be ff x7 + fb..fe.
    codec = MitCodec(AK80_9)
    t = -18.0 + t_step * 36.0 / 4095
    frame = codec.encode(12.5, 50.0, 500.0, 5.0, t)
    assert not is_special(frame)
    assert frame == bytes([0xFF] * 6 + [0xEF, t_step & 0xFF])  # kd one step lower
    assert codec.decode_command(frame)[4] == pytest.approx(t)
    assert bytes(codec.encode_batch(np.array([[12.5, 50.0, 500.0, 5.0, t]]))[0]) == frame


def test_scalar_helpers() -> None:
    assert float_to_uint(0.0, -1.0, 1.0, 12) == 2048
    assert float_to_uint(0.0, -1.0, 1.0, 12, rounding="truncate") == 2047
    assert uint_to_float(4095, -1.0, 1.0, 12) == 1.0
    assert uint_to_float(0, -1.0, 1.0, 12) == -1.0
    with pytest.raises(CommandError):
        float_to_uint(math.nan, -1, 1, 12)


def test_decode_command_rejects_special_and_short() -> None:
    codec = MitCodec(AK80_9)
    for frame in (ENTER_MODE, EXIT_MODE, ZERO_POSITION, CLEAR_ERROR):
        assert is_special(frame)
        with pytest.raises(ProtocolError):
            codec.decode_command(frame)
    with pytest.raises(ProtocolError):
        codec.decode_command(b"\x00" * 7)
    assert not is_special(codec.encode(12.5, 50, 500, 5, 18))  # ff ff ff ff ... not 7x ff


def test_replies_by_hand() -> None:
    body = bytes([0x80, 0x00, 0x80, 0x08, 0x00])  # p 32768, v 2048, t 2048
    p = 32768 * 25 / 65535 - 12.5
    v = 2048 * 100 / 4095 - 50
    t = 2048 * 36 / 4095 - 18
    cheetah = MitCodec(AK80_9, Variant.CHEETAH).decode_reply(bytes([3]) + body)
    assert (cheetah.motor_id, cheetah.temperature, cheetah.error_code) == (3, None, 0)
    assert cheetah.position == pytest.approx(p)
    assert cheetah.velocity == pytest.approx(v)
    assert cheetah.torque == pytest.approx(t)
    cube = MitCodec(AK80_9, Variant.CUBEMARS)
    ok = cube.decode_reply(bytes([2]) + body + bytes([41, 0]))
    assert (ok.motor_id, ok.temperature, ok.error_code, ok.fault) == (2, 41.0, 0, "")
    bad = cube.decode_reply(bytes([2]) + body + bytes([90, 1]))
    assert (bad.error_code, bad.fault) == (1, "over temperature")
    assert cube.decode_reply(bytes([2]) + body).temperature is None  # 6-byte firmware
    dm = MitCodec(AK80_9, Variant.DAMIAO)
    on = dm.decode_reply(bytes([0x15]) + body + bytes([30, 45]))
    assert (on.motor_id, on.enabled, on.error_code, on.temperature) == (5, True, 0, 45.0)
    off = dm.decode_reply(bytes([0x05]) + body + bytes([30, 45]))
    assert off.enabled is False
    err = dm.decode_reply(bytes([0xD5]) + body + bytes([30, 45]))
    assert (err.error_code, err.fault) == (0xD, "lost communication")
    with pytest.raises(ProtocolError):
        dm.decode_reply(bytes([0x15]) + body)
    with pytest.raises(ProtocolError):
        cube.decode_reply(b"\x01\x02")


@pytest.mark.parametrize("variant", list(Variant))
def test_reply_round_trip(variant: Variant) -> None:
    codec = MitCodec(AK80_9, variant)
    frame = codec.encode_reply(7, 1.25, -3.0, 4.5, temperature=37.0, enabled=True)
    r = codec.decode_reply(frame)
    assert r.motor_id == 7
    assert r.position == pytest.approx(1.25, abs=25 / 65535)
    assert r.velocity == pytest.approx(-3.0, abs=100 / 4095)
    assert r.torque == pytest.approx(4.5, abs=36 / 4095)
    if variant is not Variant.CHEETAH:
        assert r.temperature == 37.0
    fault = codec.encode_reply(7, 0, 0, 0, error_code=0xB if variant is Variant.DAMIAO else 2)
    if variant is Variant.CHEETAH:
        assert codec.decode_reply(fault).error_code == 0  # the 6-byte reply has no error
    else:
        assert codec.decode_reply(fault).error_code != 0


def test_batch_equals_scalar() -> None:
    rng = np.random.default_rng(1)
    for rounding in ("nearest", "truncate"):
        codec = MitCodec(AK80_9, rounding=rounding)
        x = rng.uniform([-15, -60, -10, -1, -20], [15, 60, 600, 6, 20], size=(500, 5))
        frames = codec.encode_batch(x)
        assert [bytes(f) for f in frames] == [codec.encode(*row) for row in x]
    replies = np.array([list(MitCodec(AK80_9).encode_reply(1, p, 0.5, -1.0))
                        for p in np.linspace(-12, 12, 50)], dtype=np.uint8)
    decoded = MitCodec(AK80_9).decode_batch(replies)
    assert decoded[:, 0] == pytest.approx(np.linspace(-12, 12, 50), abs=25 / 65535)


def test_models_and_overrides() -> None:
    assert lookup("ak80-9") is MODELS["AK80-9"]
    assert lookup("DM-J4310-2EC") is MODELS["DM4310"]
    assert lookup("nothing") is None
    ranges, variant = resolve("DM8009", {})
    assert (ranges.t_max, ranges.v_max, variant) == (54.0, 45.0, Variant.DAMIAO)
    ranges, variant = resolve("AK80-9", {"v_max": 25.64, "t_min": -10, "variant": "cheetah"})
    assert (ranges.v_min, ranges.t_min, ranges.t_max) == (-25.64, -10.0, 18.0)
    assert variant is Variant.CHEETAH
    custom, _ = resolve("", {"p_max": 4 * math.pi, "v_max": 30, "t_max": 40})
    assert custom.p_min == -4 * math.pi
    for model, options, match in (
            ("AK99", {}, "unknown MIT motor model 'AK99'"),
            ("", {}, "no model given"),
            ("AK80-9", {"p_max": "x"}, "finite number"),
            ("AK80-9", {"p_min": 20}, "p_min < p_max"),
            ("AK80-9", {"variant": "odrive"}, "variant must be")):
        with pytest.raises(ConfigError, match=match):
            resolve(model, options)
