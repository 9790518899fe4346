"""``quantize_inward``: the tick a driver encodes stays inside the limits, exactly."""

from __future__ import annotations

import math
import random

import pytest

from skel_ros.hardware.base import quantize_inward


def test_the_nearest_tick_when_it_is_inside() -> None:
    assert quantize_inward(0.26, 0.1, -1.0, 1.0) == 3
    assert quantize_inward(-0.26, -0.1, -1.0, 1.0) == 3  # reversed field


def test_a_tick_past_a_limit_steps_inward() -> None:
    step = 2 * math.pi / 4096  # a Dynamixel position tick
    n = quantize_inward(-1.9, step, -1.9, 1.9)
    assert n * step >= -1.9
    assert (n - 1) * step < -1.9  # and it is the outermost tick inside


def test_far_outside_gives_the_bound_tick_not_the_middle() -> None:
    assert quantize_inward(2.0, 0.1, -1.0, 1.0) == 10
    assert quantize_inward(-50.0, 0.1, -1.0, 1.0) == -10
    assert quantize_inward(7.3, 1.0, 0.2, 0.4, offset=0.0) == 0  # no tick fits: nearest middle


@pytest.mark.parametrize("seed", range(5))
def test_random_values_decode_inside(seed: int) -> None:
    rng = random.Random(seed)  # noqa: S311 - reproducible, not crypto
    for _ in range(20_000):
        scale = rng.choice((1, -1)) * 10 ** rng.uniform(-6, 0)
        lo = rng.uniform(-5, 5)
        hi = lo + rng.uniform(10 * abs(scale), 10)
        offset = rng.choice((0.0, rng.uniform(-1000, 1000)))
        value = rng.choice((lo, hi, rng.uniform(lo - 3, hi + 3), rng.uniform(lo, hi)))
        n = quantize_inward(value, scale, lo, hi, offset)
        decoded = (n + offset) * scale
        assert lo <= decoded <= hi, (value, scale, lo, hi, offset, n)
        inside = min(max(value, lo), hi)
        assert abs(decoded - inside) <= abs(scale) * (1 + 1e-9), (value, scale, lo, hi)


def test_not_finite_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot quantize"):
        quantize_inward(math.nan, 0.1)
    with pytest.raises(ValueError, match="cannot quantize"):
        quantize_inward(1.0, 0.0)
