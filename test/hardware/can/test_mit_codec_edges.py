"""The MIT codec where limits cut into a motor's range, its batch paths field by field,
every reply field of every variant, and the text of what it refuses.

Beside test_mit_codec.py (frame layout, rounding, special frames) and test_mit_peer.py
(bit-identical to damiao-motor): these pin behaviours mutation testing (issue 35,
docs/testing.md) showed no test of the codec checked: that a codec made with limits
never sends a value the motor decodes outside them, that the batch encoder and decoder
give exactly the scalar paths' fields (velocity and torque included), and the reply
fields an emulator and the bus read (motor id, temperature, error, fault, enabled).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.hardware.base import ActuatorLimits
from skel_ros.hardware.errors import ProtocolError
from skel_ros.hardware.mit.codec import (
    CommandError,
    MitCodec,
    MitRanges,
    MitReply,
    Variant,
    float_to_uint,
    is_special,
)

RANGES = MitRanges.symmetric(12.5, 50.0, 18.0)
# Limits that cut into all three limited fields, at values between two steps.
LIMITS = ActuatorLimits(position=(-1.00001, 2.00003), velocity=(-3.0107, 4.0209),
                        effort=(-5.0311, 6.0403))
P_STEP = 25.0 / 0xFFFF
V_STEP = 100.0 / 0xFFF
T_STEP = 36.0 / 0xFFF


def _random_commands(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform([-14, -60, -10, -1, -20], [14, 60, 510, 6, 20], size=(n, 5))
    # Exactly at, just inside and just outside each limit.
    edges = [[p + d, v + d, 10.0, 0.5, t + d]
             for p, v, t in ((-1.00001, -3.0107, -5.0311), (2.00003, 4.0209, 6.0403))
             for d in (-1e-9, 0.0, 1e-9, -1e-4, 1e-4)]
    return np.vstack([x, np.array(edges)])


def test_symmetric_ranges_have_gains_from_zero() -> None:
    assert MitRanges.symmetric(12.5, 50.0, 18.0) == MitRanges(
        -12.5, 12.5, -50.0, 50.0, -18.0, 18.0, 0.0, 500.0, 0.0, 5.0)
    assert MitRanges.symmetric(1, 2, 3, kp_max=10, kd_max=2) == MitRanges(
        -1, 1, -2, 2, -3, 3, 0.0, 10, 0.0, 2)


def test_an_empty_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"MIT range p: need finite p_min < p_max, got \[1, 1\]"):
        MitRanges(1, 1, -1, 1, -1, 1)


def test_a_codec_with_limits_never_sends_a_value_outside_them() -> None:
    codec = MitCodec(RANGES, limits=LIMITS)
    assert codec.limits is LIMITS
    for p, v, kp, kd, t in _random_commands(400):
        dp, dv, _, _, dt = codec.decode_command(codec.encode(p, v, kp, kd, t))
        assert LIMITS.position[0] <= dp <= LIMITS.position[1]
        assert LIMITS.velocity[0] <= dv <= LIMITS.velocity[1]
        assert LIMITS.effort[0] <= dt <= LIMITS.effort[1]
        # ... and inside them, as near the command as a step allows.
        for x, got, (lo, hi), step in ((p, dp, LIMITS.position, P_STEP),
                                       (v, dv, LIMITS.velocity, V_STEP),
                                       (t, dt, LIMITS.effort, T_STEP)):
            want = min(max(x, lo), hi)
            assert abs(got - want) <= step * (1 + 1e-9), (x, got, want)


def test_limits_at_the_range_ends_take_the_plain_path() -> None:
    at_ends = ActuatorLimits(position=(-12.5, 12.5), velocity=(-50.0, 50.0),
                             effort=(-18.0, 18.0))
    plain, same = MitCodec(RANGES), MitCodec(RANGES, limits=at_ends)
    for row in _random_commands(50):
        assert same.encode(*row) == plain.encode(*row)


@pytest.mark.parametrize("rounding", ["nearest", "truncate"])
def test_the_batch_encoder_gives_the_scalar_frames(rounding: str) -> None:
    for limits in (ActuatorLimits(), LIMITS):
        codec = MitCodec(RANGES, rounding=rounding, limits=limits)
        x = _random_commands(300, seed=1)
        frames = codec.encode_batch(x)
        assert frames.dtype == np.uint8
        assert frames.shape == (x.shape[0], 8)
        for row, frame in zip(x, frames, strict=True):
            assert bytes(frame) == codec.encode(*row), row


def test_limits_on_one_field_only_leave_the_others_alone() -> None:
    for limits in (ActuatorLimits(position=(-1.00001, 2.00003)),
                   ActuatorLimits(velocity=(-3.0107, 4.0209)),
                   ActuatorLimits(effort=(-5.0311, 6.0403))):
        codec = MitCodec(RANGES, limits=limits)
        x = _random_commands(100, seed=2)
        for row, frame in zip(x, codec.encode_batch(x), strict=True):
            assert bytes(frame) == codec.encode(*row)


def test_the_batch_encoder_keeps_frames_off_the_special_ones() -> None:
    codec = MitCodec(RANGES)
    x = np.array([[12.5, 50.0, 500.0, 5.0, 18.0], [12.5, 50.0, 500.0, 5.0, 17.99]])
    for row, frame in zip(x, codec.encode_batch(x), strict=True):
        assert bytes(frame) == codec.encode(*row)
        assert not is_special(bytes(frame))
    # One field short of the maximum is not special: nothing is changed.
    for col in range(4):
        y = np.array([[12.5, 50.0, 500.0, 5.0, 18.0]])
        y[0, col] = 0.0
        assert codec.decode_command(bytes(codec.encode_batch(y)[0]))[3] == pytest.approx(
            5.0 if col != 3 else 0.0)


def test_the_batch_encoder_refuses_a_bad_shape_and_names_a_bad_value() -> None:
    codec = MitCodec(RANGES)
    with pytest.raises(ValueError, match=r"values must have shape \(N, 5\), got \(2, 4\)"):
        codec.encode_batch(np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"got \(5,\)"):
        codec.encode_batch(np.zeros(5))
    x = np.zeros((3, 5))
    x[1, 4] = math.nan
    with pytest.raises(CommandError,
                       match=r"MIT command row 1: t_ff=\S*nan\S* is not a finite number"):
        codec.encode_batch(x)
    assert codec.encode_batch([[1, 2, 3, 1, 4]]).shape == (1, 8)  # a list of ints is fine


def test_the_batch_decoder_gives_the_scalar_fields() -> None:
    codec = MitCodec(RANGES)
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, size=(200, 6), dtype=np.uint8)
    out = codec.decode_batch(frames)
    assert out.shape == (200, 3)
    for frame, (p, v, t) in zip(frames, out, strict=True):
        reply = codec.decode_reply(bytes(frame))
        assert (p, v, t) == (reply.position, reply.velocity, reply.torque)


def test_reply_fields_decode_from_their_bits() -> None:
    codec = MitCodec(RANGES)
    # p = 0x8000, v = 0xABC, t = 0xDEF
    reply = codec.decode_reply(bytes((7, 0x80, 0x00, 0xAB, 0xCD, 0xEF)))
    assert reply == MitReply(7, 0x8000 * P_STEP - 12.5, 0xABC * V_STEP - 50.0,
                             0xDEF * T_STEP - 18.0)
    assert codec.decode_batch(np.array([[7, 0x80, 0x00, 0xAB, 0xCD, 0xEF]],
                                       dtype=np.uint8))[0].tolist() == [
        reply.position, reply.velocity, reply.torque]


def test_a_reply_is_encoded_saturated_and_decoded_back() -> None:
    codec = MitCodec(RANGES, Variant.CUBEMARS)
    reply = codec.decode_reply(codec.encode_reply(3, 1.0, -2.0, 0.5, temperature=41.4,
                                                  error_code=2))
    assert reply.motor_id == 3
    assert reply.position == pytest.approx(1.0, abs=P_STEP / 2)
    assert reply.velocity == pytest.approx(-2.0, abs=V_STEP / 2)
    assert reply.torque == pytest.approx(0.5, abs=T_STEP / 2)
    assert (reply.temperature, reply.error_code, reply.fault) == (41.0, 2, "over current")
    # Beyond the range: its ends; NaN: the low end.
    high = codec.decode_reply(codec.encode_reply(3, 99.0, 99.0, 99.0))
    assert (high.position, high.velocity, high.torque) == (12.5, 50.0, 18.0)
    low = codec.decode_reply(codec.encode_reply(3, -99.0, math.nan, -99.0))
    assert (low.position, low.velocity, low.torque) == (-12.5, -50.0, -18.0)
    exact = codec.decode_reply(codec.encode_reply(3, 12.5, -50.0, 18.0))
    assert (exact.position, exact.velocity, exact.torque) == (12.5, -50.0, 18.0)
    # The defaults: 25 deg C, no error.
    default = codec.decode_reply(codec.encode_reply(3, 0.0, 0.0, 0.0))
    assert (default.temperature, default.error_code, default.fault) == (25.0, 0, "")


def test_reply_temperature_and_error_bytes_saturate_and_wrap() -> None:
    codec = MitCodec(RANGES, Variant.CUBEMARS)
    frame = codec.encode_reply(0x1FF, 0.0, 0.0, 0.0, temperature=300.0, error_code=0x101)
    assert frame[0] == 0xFF
    assert frame[6:] == bytes((255, 1))
    assert codec.encode_reply(1, 0.0, 0.0, 0.0, temperature=-5.0)[6] == 0
    assert codec.encode_reply(1, 0.0, 0.0, 0.0, temperature=0.4)[6] == 0
    assert codec.encode_reply(1, 0.0, 0.0, 0.0, temperature=254.6)[6] == 255


def test_cubemars_replies_name_unknown_errors_and_accept_the_short_form() -> None:
    codec = MitCodec(RANGES, Variant.CUBEMARS)
    reply = codec.decode_reply(codec.encode_reply(1, 0.0, 0.0, 0.0, error_code=77))
    assert (reply.error_code, reply.fault) == (77, "unknown error 77")
    short = codec.decode_reply(codec.encode_reply(1, 1.0, -2.0, 3.0)[:6])
    assert short.motor_id == 1
    assert short.position == pytest.approx(1.0, abs=P_STEP)
    assert short.velocity == pytest.approx(-2.0, abs=V_STEP)
    assert short.torque == pytest.approx(3.0, abs=T_STEP)
    assert (short.temperature, short.error_code, short.fault) == (None, 0, "")


def test_damiao_replies_carry_status_temperature_and_id() -> None:
    codec = MitCodec(RANGES, Variant.DAMIAO)
    enabled = codec.decode_reply(codec.encode_reply(0x15, 1.0, 0.0, 0.0, enabled=True,
                                                    temperature=33))
    assert (enabled.motor_id, enabled.enabled, enabled.error_code, enabled.fault) == (
        5, True, 0, "")
    assert enabled.temperature == 33.0
    disabled = codec.decode_reply(codec.encode_reply(2, 1.0, 0.0, 0.0))
    assert (disabled.enabled, disabled.error_code, disabled.fault) == (False, 0, "")
    fault = codec.decode_reply(codec.encode_reply(2, 1.0, 0.0, 0.0, error_code=0xA))
    assert (fault.enabled, fault.error_code, fault.fault) == (None, 0xA, "over current")
    odd = codec.decode_reply(bytes((0xF2, 0, 0, 0, 0, 0, 40, 45)))
    assert (odd.error_code, odd.fault, odd.temperature) == (0xF, "unknown status 15", 45.0)
    unknown_ok = codec.decode_reply(bytes((0x32, 0, 0, 0, 0, 0, 50, 45)))
    assert (unknown_ok.error_code, unknown_ok.fault, unknown_ok.enabled) == (0, "", False)
    assert unknown_ok.temperature == 50.0


def test_what_the_codec_refuses_is_named() -> None:
    with pytest.raises(ValueError, match="rounding must be 'nearest' or 'truncate', got 'up'"):
        MitCodec(RANGES, rounding="up")
    with pytest.raises(ValueError, match=r"MIT p limits \[20, 30\] lie outside the motor's "
                                         r"range \[-12.5, 12.5\]"):
        MitCodec(RANGES, limits=ActuatorLimits(position=(20.0, 30.0)))
    with pytest.raises(ValueError, match=r"MIT v limits \[60, 70\]"):
        MitCodec(RANGES, limits=ActuatorLimits(velocity=(60.0, 70.0)))
    with pytest.raises(ValueError, match=r"MIT t_ff limits \[-40, -30\]"):
        MitCodec(RANGES, limits=ActuatorLimits(effort=(-40.0, -30.0)))
    MitCodec(RANGES, limits=ActuatorLimits(position=(12.5, 20.0)))  # one value left: fine
    codec = MitCodec(RANGES)
    for name, args in (("p", (math.inf, 0, 0, 0, 0)), ("v", (0, math.nan, 0, 0, 0)),
                       ("kp", (0, 0, math.nan, 0, 0)), ("kd", (0, 0, 0, math.inf, 0)),
                       ("t_ff", (0, 0, 0, 0, -math.inf))):
        with pytest.raises(CommandError, match=rf"MIT command {name}=\S+ is not a finite"):
            codec.encode(*args)
    with pytest.raises(CommandError, match=r"cannot encode nan: not a finite number"):
        float_to_uint(math.nan, -1.0, 1.0, 12)
    with pytest.raises(ProtocolError, match="not an MIT command frame: 0102"):
        codec.decode_command(b"\x01\x02")
    with pytest.raises(ProtocolError, match=r"MIT reply too short \(5 bytes\): 0102030405"):
        codec.decode_reply(b"\x01\x02\x03\x04\x05")
    with pytest.raises(ProtocolError, match="Damiao reply needs 8 bytes, got 6: 010203040506"):
        MitCodec(RANGES, Variant.DAMIAO).decode_reply(b"\x01\x02\x03\x04\x05\x06")


def test_float_to_uint_saturates_at_both_ends() -> None:
    assert float_to_uint(-2.0, -1.0, 1.0, 12) == 0
    assert float_to_uint(2.0, -1.0, 1.0, 12) == 0xFFF
    assert float_to_uint(-1.0, -1.0, 1.0, 12) == 0
    assert float_to_uint(1.0, -1.0, 1.0, 12) == 0xFFF
    assert float_to_uint(0.0, -1.0, 1.0, 12, rounding="truncate") == 2047
    assert float_to_uint(0.0, -1.0, 1.0, 12) == 2048


def test_special_frames_are_exactly_fb_to_fe() -> None:
    for last in range(0xF8, 0x100):
        assert is_special(b"\xff" * 7 + bytes((last,))) == (0xFB <= last <= 0xFE)
    assert not is_special(b"\xff" * 6 + b"\xfe\xfc")
    assert not is_special(b"\xff" * 7)


def test_a_limit_on_a_tick_is_sent_as_that_tick() -> None:
    """A limit the motor can represent exactly is a value the codec may send."""
    k_hi, k_lo = 40000, 20000
    hi = k_hi * P_STEP - 12.5
    lo = k_lo * P_STEP - 12.5
    codec = MitCodec(RANGES, limits=ActuatorLimits(position=(lo, hi)))
    for x, k in ((hi, k_hi), (hi + 1.0, k_hi), (lo, k_lo), (lo - 1.0, k_lo)):
        assert codec.quantise(x, 0.0, 0.0, 0.0, 0.0)[0] == k, x
        assert bytes(codec.encode_batch([[x, 0.0, 0.0, 0.0, 0.0]])[0]) == codec.encode(
            x, 0.0, 0.0, 0.0, 0.0)


def test_gain_ranges_that_do_not_start_at_zero() -> None:
    ranges = MitRanges(-12.5, 12.5, -50.0, 50.0, -18.0, 18.0, kp_min=10.0, kp_max=510.0,
                       kd_min=1.0, kd_max=6.0)
    codec = MitCodec(ranges)
    for kp, kd in ((10.0, 1.0), (510.0, 6.0), (260.0, 3.5), (0.0, 0.0), (999.0, 9.0)):
        _, _, dkp, dkd, _ = codec.decode_command(codec.encode(0.0, 0.0, kp, kd, 0.0))
        assert dkp == pytest.approx(min(max(kp, 10.0), 510.0), abs=500 / 0xFFF)
        assert dkd == pytest.approx(min(max(kd, 1.0), 6.0), abs=5 / 0xFFF)
        assert bytes(codec.encode_batch([[0.0, 0.0, kp, kd, 0.0]])[0]) == codec.encode(
            0.0, 0.0, kp, kd, 0.0)


def test_a_frame_one_gain_short_of_the_maximum_is_not_changed() -> None:
    codec = MitCodec(RANGES)
    top = (12.5, 50.0, 500.0, 5.0, 18.0)
    assert codec.quantise(*top)[3] == 0xFFF - 1  # would be special: kd one step lower
    for field in range(4):
        values = list(top)
        values[field] = 0.0
        assert codec.quantise(*values)[3] == (0 if field == 3 else 0xFFF), field
