"""Metrics at their edges, against values worked out by hand: the gap rule, a joint's own
rate and gaps, the limit-hit tolerance, the rates, the messages of refused input.

Beside test_metrics.py (errors and lag on known signals) and test_sample_times.py (the
gap rule through recordings): these pin what mutation testing (issue 35,
docs/testing.md) showed no test checked directly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.analysis import AnalysisError, JointSeries, compare, estimate_lag
from skel_ros.analysis.metrics import GAP_PERIODS, LIMIT_TOLERANCE, Gap, LeftOut

RATE = 100.0


def _series(name: str, t: np.ndarray, **joints: np.ndarray) -> JointSeries:
    return JointSeries.from_samples(name, t, list(joints), np.column_stack(list(joints.values())))


def test_the_gap_threshold_is_the_larger_of_max_gap_and_five_periods() -> None:
    t = np.arange(0, 2, 0.01)  # median period 10 ms
    c = compare([_series("sim", t, j=t), _series("real", t, j=t)], rate=RATE)
    assert c.gap_threshold("real", 0.2) == pytest.approx(0.2)
    assert c.gap_threshold("real", 0.01) == pytest.approx(GAP_PERIODS * 0.01)
    assert c.gap_threshold("real", 0.01, "j") == pytest.approx(GAP_PERIODS * 0.01)
    assert c.gap_threshold("nothing", 0.3) == 0.3  # no samples: max_gap alone


def test_a_gap_is_reported_with_its_start_and_length() -> None:
    t = np.arange(0, 3, 0.01)
    t_real = np.concatenate([t[t < 1.0], t[t >= 1.5]])  # 0.5 s without a sample
    c = compare([_series("sim", t, j=t), _series("real", t_real, j=t_real)], rate=RATE)
    (gap,) = c.gaps("real", 0.2)
    assert gap.stream == "real"
    assert gap.start == pytest.approx(0.99)
    assert gap.length == pytest.approx(0.51)
    assert c.gaps("real", 0.6) == ()  # shorter than max_gap
    assert c.gaps("sim", 0.2) == ()
    assert c.gaps("nothing", 0.2) == ()


def test_a_gap_just_longer_than_the_threshold_counts() -> None:
    t = np.arange(0, 3, 0.01)
    t_real = np.concatenate([t[t < 1.0], t[t >= 1.2]])
    c = compare([_series("sim", t, j=t), _series("real", t_real, j=t_real)], rate=RATE)
    (gap,) = c.gaps("real", 0.2)  # 0.21 s > 0.2 s
    assert gap.length == pytest.approx(0.21)
    assert c.gaps("real", 0.21 + 1e-9) == ()


def test_a_joint_that_stops_while_its_stream_goes_on_has_a_gap_to_the_end() -> None:
    t = np.arange(0, 3, 0.01)
    late = np.where(t < 2.0, t, np.nan)  # "b" stops at 2 s, "a" goes on
    sim = _series("sim", t, a=t, b=t)
    real = _series("real", t, a=t, b=late)
    c = compare([sim, real], rate=RATE)
    assert c.gaps("real", 0.2, "a") == ()
    (gap,) = c.gaps("real", 0.2, "b")
    assert gap.start == pytest.approx(1.99)
    assert gap.start + gap.length == pytest.approx(float(c.grid[-1]))


def test_a_joint_that_starts_late_has_a_gap_from_the_start() -> None:
    t = np.arange(0, 3, 0.01)
    early = np.where(t >= 1.0, t, np.nan)
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t, b=early)], rate=RATE)
    (gap,) = c.gaps("real", 0.2, "b")
    assert gap == Gap("real", float(c.grid[0]), pytest.approx(1.0))


def test_a_joints_own_rate_counts_its_samples_in_the_span() -> None:
    t = np.arange(0, 2.001, 0.01)
    half = np.where(np.arange(t.size) % 2 == 0, t, np.nan)  # every other sample
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t, b=half)], rate=RATE)
    assert c.duration == pytest.approx(2.0)
    assert c.joint_rate("real", "a") == pytest.approx(t.size / 2.0)
    assert c.joint_rate("real", "b") == pytest.approx(101 / 2.0)
    assert math.isnan(c.joint_rate("real", "nothing"))
    assert c.rates["real"] == pytest.approx(t.size / 2.0)


def test_rates_count_only_samples_inside_the_compared_span() -> None:
    t_sim = np.arange(0, 2.001, 0.01)
    t_real = np.arange(-1, 3.001, 0.01)  # a second more on each side
    c = compare([_series("sim", t_sim, j=t_sim), _series("real", t_real, j=t_real)],
                rate=RATE)
    inside = np.count_nonzero((t_sim >= c.grid[0]) & (t_sim <= c.grid[-1]))
    assert c.rates["sim"] == pytest.approx(inside / c.duration)
    assert c.rates["real"] == pytest.approx(c.rates["sim"], rel=0.02)
    assert c.rates["real"] < 0.5 * t_real.size / c.duration  # not all of its 4 s


def test_a_position_within_the_tolerance_of_a_limit_is_a_hit() -> None:
    t = np.arange(0, 1, 0.01)
    inside = 1.0 - 2 * LIMIT_TOLERANCE
    p = np.where(t < 0.5, inside, 1.0 - 0.5 * LIMIT_TOLERANCE)
    low = np.where(t < 0.5, -inside, -1.0 + 0.5 * LIMIT_TOLERANCE)
    c = compare([_series("sim", t, a=p, b=low), _series("real", t, a=p, b=low)],
                {"a": (-1.0, 1.0), "b": (-1.0, 1.0)}, rate=RATE)
    a, b = c.joints
    assert a.limit_hits["real"] == b.limit_hits["real"] == np.count_nonzero(c.grid >= 0.5)
    assert (a.lower, a.upper) == (-1.0, 1.0)
    # Without limits nothing is a hit.
    (j,) = compare([_series("sim", t, j=p), _series("real", t, j=p)], rate=RATE).joints
    assert j.limit_hits == {"sim": 0, "real": 0}
    assert (j.lower, j.upper) == (-math.inf, math.inf)


def test_the_measured_streams_are_all_but_the_command() -> None:
    t = np.arange(0, 1, 0.01)
    c = compare([_series("command", t, j=t), _series("sim", t, j=t),
                 _series("real", t, j=t)], rate=RATE)
    assert c.streams == ("command", "sim", "real")
    assert c.measured == ("sim", "real")
    (j,) = c.joints
    assert [(e.a, e.b) for e in j.errors] == [("sim", "real"), ("sim", "command"),
                                               ("real", "command")]


def test_a_left_out_joint_says_which_streams_lack_it() -> None:
    assert LeftOut("j", ("sim", "real"), expected=True).reason == (
        "the joint is not in the sim, real stream(s)")


def test_a_joint_named_only_by_the_limits_is_expected() -> None:
    t = np.arange(0, 1, 0.01)
    c = compare([_series("sim", t, a=t), _series("real", t, a=t)],
                {"a": (-1.0, 1.0), "model_only": (-1.0, 1.0)}, rate=RATE)
    assert c.left_out == (LeftOut("model_only", ("sim", "real"), expected=True),)


def test_a_stream_of_nan_gives_nan_errors() -> None:
    t = np.arange(0, 1, 0.01)
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t, b=np.full_like(t, np.nan))],
                rate=RATE, joints=["a", "b"])
    b = c.joints[1].error("sim", "real")
    assert b is not None
    assert math.isnan(b.rms)
    assert math.isnan(b.max_abs)
    assert math.isnan(b.lag)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"rate": 0.0}, "grid rate must be positive, got 0.0"),
    ({"rate": math.inf}, "grid rate must be positive, got inf"),
])
def test_a_bad_rate_is_refused(kwargs: dict[str, float], message: str) -> None:
    t = np.arange(0, 1, 0.01)
    with pytest.raises(AnalysisError) as info:
        compare([_series("sim", t, j=t), _series("real", t, j=t)], **kwargs)
    assert str(info.value) == message


def test_refusals_say_what_was_given() -> None:
    t = np.arange(0, 1, 0.01)
    with pytest.raises(AnalysisError) as info:
        compare([_series("sim", t, j=t)])
    assert str(info.value) == "need at least two non-empty streams to compare, got ['sim']"
    with pytest.raises(AnalysisError) as info:
        compare([_series("sim", t, j=t), _series("real", t + 2.0, j=t)])
    assert str(info.value) == "the streams do not overlap in time (2.000 .. 0.990 s)"
    with pytest.raises(AnalysisError) as info:
        compare([_series("sim", t, a=t), _series("real", t, b=t)])
    assert str(info.value) == "the streams have no joint in common"


def test_two_grid_periods_of_overlap_are_enough() -> None:
    t = np.arange(0, 1, 0.01)
    c = compare([_series("sim", t, j=t), _series("real", t + 0.97, j=t)], rate=RATE)
    assert c.grid.size == 3
    with pytest.raises(AnalysisError, match="do not overlap"):
        compare([_series("sim", t, j=t), _series("real", t + 0.975, j=t)], rate=RATE)


def test_lag_needs_four_samples_and_a_moving_reference() -> None:
    r = np.array([0.0, 1.0, 2.0, 3.0])
    assert estimate_lag(r, r, 0.01, 0.5) == 0.0
    assert math.isnan(estimate_lag(r[:3], r[:3], 0.01, 0.5))
    assert math.isnan(estimate_lag(r, np.full(4, 1.0 + 5e-7), 0.01, 0.5))


def test_lag_is_searched_no_further_than_max_lag() -> None:
    t = np.arange(0, 5, 0.01)
    reference = np.sin(2 * np.pi * 0.3 * t)
    signal = np.sin(2 * np.pi * 0.3 * (t - 0.3))
    assert estimate_lag(signal, reference, 0.01, 0.5) == pytest.approx(0.3)
    assert estimate_lag(signal, reference, 0.01, 0.1) == pytest.approx(0.1)
    assert estimate_lag(reference, signal, 0.01, 0.5) == pytest.approx(-0.3)


def test_a_stream_or_joint_without_samples_has_no_rate_and_the_plain_threshold() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=t), _series("real", t, j=t)], rate=RATE)
    assert c.gap_threshold("nothing", 0.3, "j") == 0.3
    assert c.gaps("nothing", 0.3, "j") == ()
    assert math.isnan(c.joint_rate("nothing", "j"))


def test_a_joint_with_two_samples_has_its_own_period() -> None:
    t = np.arange(0, 3, 0.01)
    two = np.full_like(t, np.nan)
    two[[0, 100]] = [0.0, 1.0]  # at 0 s and 1 s
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t, b=two)], rate=RATE)
    assert c.gap_threshold("real", 0.2, "b") == pytest.approx(GAP_PERIODS * 1.0)


def test_a_joints_gaps_are_measured_against_its_own_period() -> None:
    t = np.arange(0, 4, 0.01)
    every4 = np.where(np.arange(t.size) % 4 == 0, t, np.nan)  # every 40 ms
    every4[(t > 2.0) & (t < 2.1)] = np.nan  # one 120 ms stretch
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t, b=every4)], rate=RATE)
    # Five of its own periods (0.2 s): no gap; five of the stream's (0.05 s) would be one.
    assert c.gap_threshold("real", 0.01, "b") == pytest.approx(0.2)
    assert c.gaps("real", 0.01, "b") == ()
    assert c.gaps("real", 0.01) == ()


def test_gaps_outside_the_compared_span_do_not_count() -> None:
    t_sim = np.arange(0, 2, 0.01)
    t_real = np.arange(0, 4, 0.01)
    t_real = t_real[(t_real < 3.0) | (t_real > 3.5)]  # a gap after the span
    early = np.arange(-2, 2, 0.01)
    early = early[(early < -1.5) | (early > -1.0)]  # a gap before it
    c = compare([_series("sim", t_sim, j=t_sim), _series("real", t_real, j=t_real),
                 _series("command", early, j=early)], rate=RATE)
    assert c.gaps("real", 0.2) == ()
    assert c.gaps("command", 0.2) == ()


def test_a_gap_exactly_at_the_threshold_does_not_count() -> None:
    t = np.arange(0, 3, 0.01)
    t_real = np.concatenate([t[t < 1.0], t[t >= 1.3]])
    c = compare([_series("sim", t, j=t), _series("real", t_real, j=t_real)], rate=RATE)
    (gap,) = c.gaps("real", 0.2)
    assert c.gaps("real", gap.length) == ()


def test_a_short_run_has_a_joint_rate() -> None:
    t = np.arange(0, 0.5, 0.01)
    c = compare([_series("sim", t, j=t), _series("real", t, j=t)], rate=RATE)
    assert c.duration < 1.0
    assert c.joint_rate("real", "j") == pytest.approx(t.size / c.duration)


def test_a_joints_rate_counts_only_its_samples_in_the_span() -> None:
    t_sim = np.arange(10, 12.001, 0.01)  # not from 0: the span is a difference of times
    t_real = np.arange(8, 14.001, 0.01)
    c = compare([_series("sim", t_sim, j=t_sim), _series("real", t_real, j=t_real)],
                rate=RATE)
    assert c.joint_rate("real", "j") == pytest.approx(c.rates["sim"], rel=0.02)
    assert c.rates["real"] == pytest.approx(c.rates["sim"], rel=0.02)
    assert c.rates["sim"] == pytest.approx(100.0, rel=0.01)


def test_lag_ignores_samples_missing_from_either_signal() -> None:
    t = np.arange(0, 5, 0.01)
    reference = np.sin(2 * np.pi * 0.3 * t)
    signal = np.sin(2 * np.pi * 0.3 * (t - 0.2))
    signal[::7] = np.nan
    reference[3::11] = np.nan
    assert estimate_lag(signal, reference, 0.01, 0.5) == pytest.approx(0.2)


def test_lag_is_searched_up_to_half_the_data() -> None:
    rng = np.random.default_rng(5)
    walk = np.cumsum(rng.normal(size=160))
    reference, signal = walk[50:], walk[:-50]  # 50 samples late, of 110: past a third
    assert estimate_lag(signal, reference, 0.01, 10.0) == pytest.approx(0.5)


def test_lag_takes_the_best_shift_not_a_nearly_as_good_one() -> None:
    t = np.arange(0, 6, 0.01)
    reference = np.sin(2 * np.pi * 0.5 * t) + 0.3 * np.sin(2 * np.pi * 1.3 * t)
    for k in (0, 3, 12, -7):
        signal = np.roll(reference, k)
        signal[: max(k, 0)] = np.nan
        signal[len(signal) + min(k, 0):] = np.nan
        assert estimate_lag(signal, reference, 0.01, 0.5) == pytest.approx(k * 0.01), k


def test_lag_of_data_too_sparse_to_shift_is_zero() -> None:
    signal = np.full(100, np.nan)
    reference = np.full(100, np.nan)
    signal[:6] = reference[:6] = np.arange(6.0)  # 6 common samples: fewer than n // 4
    assert estimate_lag(signal, reference, 0.01, 0.5) == 0.0


def test_compare_defaults_to_a_100_hz_grid_and_half_a_second_of_lag() -> None:
    t = np.arange(0, 6, 0.002)
    reference = np.sin(2 * np.pi * 0.2 * t)
    late = np.sin(2 * np.pi * 0.2 * (t - 0.8))
    c = compare([_series("command", t, j=reference), _series("real", t, j=late)])
    assert np.diff(c.grid) == pytest.approx(0.01)
    (j,) = c.joints
    assert j.error("real", "command").lag == pytest.approx(0.5)


def test_empty_streams_are_ignored_and_a_single_sample_is_a_stream() -> None:
    t = np.arange(0, 1, 0.01)
    empty = JointSeries.from_samples("command", [], ["j"], np.zeros((0, 1)))
    c = compare([_series("sim", t, j=t), _series("real", t, j=t), empty], rate=RATE)
    assert c.streams == ("sim", "real")
    with pytest.raises(AnalysisError) as info:
        compare([_series("sim", t, j=t), empty])
    assert str(info.value) == "need at least two non-empty streams to compare, got ['sim']"
    with pytest.raises(AnalysisError) as info:
        compare([])
    assert str(info.value) == "need at least two non-empty streams to compare, got none"
    with pytest.raises(AnalysisError, match="do not overlap"):
        compare([_series("sim", t, j=t), _series("real", t[:1], j=t[:1])])


def test_a_slow_grid_is_allowed() -> None:
    t = np.arange(0, 10, 0.01)
    c = compare([_series("sim", t, j=t), _series("real", t, j=t)], rate=0.5)
    assert c.grid.tolist() == pytest.approx([0.0, 2.0, 4.0, 6.0, 8.0])


def test_the_command_is_not_a_measured_stream() -> None:
    t = np.arange(0, 1, 0.01)
    c = compare([_series("command", t, a=t), _series("sim", t, a=t, b=t),
                 _series("real", t, a=t, b=t)], rate=RATE)
    assert [j.joint for j in c.joints] == ["a", "b"]
    assert c.left_out == ()
    assert np.isnan(c.positions["command"]["b"]).all()


def test_a_joint_with_one_sample_is_left_out() -> None:
    t = np.arange(0, 1, 0.01)
    once = np.full_like(t, np.nan)
    once[10] = 0.5
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t, b=once)], rate=RATE)
    assert [j.joint for j in c.joints] == ["a"]
    assert c.left_out == (LeftOut("b", ("real",), expected=False),)


def test_a_joint_asked_for_but_absent_from_a_stream_is_nan_there() -> None:
    t = np.arange(0, 1, 0.01)
    c = compare([_series("sim", t, a=t, b=t), _series("real", t, a=t)], rate=RATE,
                joints=["a", "b"])
    assert np.isnan(c.positions["real"]["b"]).all()
    assert c.positions["real"]["b"].shape == c.grid.shape
    assert math.isnan(c.joints[1].error("sim", "real").rms)


def test_a_position_exactly_at_the_tolerance_is_a_hit() -> None:
    t = np.arange(0, 1, 0.01)
    lo, hi = -1.0, 1.0
    low = np.full_like(t, lo + LIMIT_TOLERANCE)
    high = np.full_like(t, hi - LIMIT_TOLERANCE)
    c = compare([_series("sim", t, a=low, b=high), _series("real", t, a=low, b=high)],
                {"a": (lo, hi), "b": (lo, hi)}, rate=RATE)
    a, b = c.joints
    assert a.limit_hits["real"] == b.limit_hits["real"] == c.grid.size


def test_a_joint_gap_starts_at_its_last_sample_before_the_span() -> None:
    t_sim = np.arange(0, 2, 0.01)
    t_real = np.arange(-1, 3, 0.01)
    b = np.where((t_real < -0.99) | (t_real > 0.49), t_real, np.nan)  # -1.0, then 0.5 on
    b[(t_real > 1.5) & (t_real < 2.9)] = np.nan  # and from 1.5 to 2.9: past the span's end
    c = compare([_series("sim", t_sim, a=t_sim, b=t_sim), _series("real", t_real, a=t_real, b=b)],
                rate=RATE)
    first, last = c.gaps("real", 0.2, "b")
    assert first.start == pytest.approx(-1.0)
    assert first.length == pytest.approx(1.49)  # to its first sample in the span
    assert last.start == pytest.approx(1.5, abs=0.011)  # its last sample before it
    assert last.start + last.length == pytest.approx(2.9, abs=0.011)  # its next, after


def test_a_joint_sampled_only_around_the_span_has_one_gap_over_it() -> None:
    t_sim = np.arange(0, 2, 0.01)
    t_real = np.array([-1.0, -0.5, 3.0, 3.5])
    only_outside = _series("real", t_real, a=t_real)
    c = compare([_series("sim", t_sim, a=t_sim), only_outside], rate=RATE)
    (gap,) = c.gaps("real", 0.2, "a")
    assert (gap.start, gap.length) == (pytest.approx(-0.5), pytest.approx(3.5))


def test_a_stream_gap_ending_at_the_spans_start_is_outside_it() -> None:
    t_sim = np.arange(0, 2, 0.01)
    before = np.arange(-1, -0.49, 0.01)
    for start, counted in ((0.0, False), (0.005, True)):
        t_real = np.concatenate([before, start + np.arange(0, 2, 0.01)])
        c = compare([_series("sim", t_sim, j=t_sim), _series("real", t_real, j=t_real)],
                    rate=RATE)
        assert c.grid[0] == 0.0
        assert (len(c.gaps("real", 0.2)) == 1) is counted, start


def test_a_stream_gap_starting_at_the_spans_end_is_outside_it() -> None:
    t_sim = np.arange(0, 2.001, 0.01)
    for end, counted in ((2.0, False), (1.995, True)):
        t_real = np.concatenate([np.arange(0, end - 1e-9, 0.01), [end, end + 1.0]])
        c = compare([_series("sim", t_sim, j=t_sim), _series("real", t_real, j=t_real)],
                    rate=RATE)
        assert c.grid[-1] == pytest.approx(2.0)
        gaps = [g for g in c.gaps("real", 0.2) if g.start >= end - 1e-9]
        assert bool(gaps) is counted, end


def test_lag_needs_four_samples_where_both_signals_have_one() -> None:
    reference = np.sin(np.arange(100) * 0.1)
    signal = np.full(100, np.nan)
    signal[[10, 40, 70]] = reference[[10, 40, 70]]
    assert math.isnan(estimate_lag(signal, reference, 0.01, 0.5))


def test_lag_with_noise_is_the_best_shift_not_the_last_good_enough_one() -> None:
    rng = np.random.default_rng(7)
    t = np.arange(0, 10, 0.01)
    reference = np.sin(2 * np.pi * 0.2 * t)
    signal = np.sin(2 * np.pi * 0.2 * (t - 0.12)) + rng.normal(scale=0.01, size=t.size)
    assert estimate_lag(signal, reference, 0.01, 0.5) == pytest.approx(0.12)
