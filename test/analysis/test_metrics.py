"""Tracking metrics against values known by construction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.analysis import AnalysisError, JointSeries, compare, estimate_lag

RATE = 100.0


def _series(name: str, t: np.ndarray, **joints: np.ndarray) -> JointSeries:
    return JointSeries.from_samples(name, t, list(joints), np.column_stack(list(joints.values())))


def _sine(t: np.ndarray, delay: float = 0.0, offset: float = 0.0) -> np.ndarray:
    return 0.5 * np.sin(2 * np.pi * 0.5 * (t - delay)) + offset


def test_constant_offset_gives_that_rms_and_max() -> None:
    t = np.arange(0, 4, 0.01)
    sim = _series("sim", t, a=_sine(t), b=np.zeros_like(t))
    real = _series("real", t, a=_sine(t, offset=0.02), b=np.full_like(t, -0.1))
    result = compare([sim, real], rate=RATE)
    a, b = result.joints
    assert a.error("sim", "real").rms == pytest.approx(0.02, abs=1e-9)
    assert a.error("sim", "real").max_abs == pytest.approx(0.02, abs=1e-9)
    assert b.error("sim", "real").rms == pytest.approx(0.1, abs=1e-12)
    assert math.isnan(b.error("sim", "real").lag)  # a flat reference tells no lag
    assert a.error("sim", "command") is None


@pytest.mark.parametrize("delay", [0.0, 0.05, 0.12, -0.03])
def test_lag_is_found(delay: float) -> None:
    t = np.arange(0, 6, 0.002)
    command = _series("command", t, j=_sine(t))
    real = _series("real", t, j=_sine(t, delay=delay))
    result = compare([command, real], rate=RATE)
    (j,) = result.joints
    assert j.error("real", "command").lag == pytest.approx(delay, abs=0.5 / RATE + 1e-9)


def test_estimate_lag_on_plain_arrays() -> None:
    t = np.arange(0, 5, 0.01)
    assert estimate_lag(_sine(t, 0.2), _sine(t), 0.01, 0.5) == pytest.approx(0.2, abs=1e-9)
    assert math.isnan(estimate_lag(np.zeros(10), np.zeros(10), 0.01, 0.5))


def test_streams_on_different_sample_times_are_resampled() -> None:
    t1 = np.arange(0, 3, 0.001)
    t2 = np.arange(0.0005, 3, 0.0137)  # irregular, slower, offset
    sim = _series("sim", t1, j=2 * t1)
    real = _series("real", t2, j=2 * t2)
    (j,) = compare([sim, real], rate=RATE).joints
    assert j.error("sim", "real").max_abs < 1e-9  # a ramp interpolates exactly


def test_limit_hits_are_counted() -> None:
    t = np.arange(0, 2, 0.01)
    sim = _series("sim", t, j=np.clip(t, 0, 1.0))  # reaches the upper limit at t = 1
    real = _series("real", t, j=np.clip(t, 0, 0.9))
    result = compare([sim, real], limits={"j": (-1.0, 1.0)}, rate=RATE)
    hits = result.joints[0].limit_hits
    assert hits["real"] == 0
    assert 95 <= hits["sim"] <= 101


def test_joints_in_one_stream_only_are_not_compared() -> None:
    t = np.arange(0, 1, 0.01)
    sim = _series("sim", t, a=t, b=t)
    real = _series("real", t, a=t)
    assert [j.joint for j in compare([sim, real]).joints] == ["a"]


def test_missing_samples_are_skipped() -> None:
    t = np.arange(0, 2, 0.01)
    pos = _sine(t)
    pos[50:60] = np.nan  # a stream that did not carry the joint for a while
    (j,) = compare([_series("sim", t, j=_sine(t)), _series("real", t, j=pos)]).joints
    assert j.error("sim", "real").max_abs < 0.01


@pytest.mark.parametrize(
    ("streams", "message"),
    [
        ([], "at least two"),
        ([_series("sim", np.arange(0, 1, 0.1), j=np.zeros(10))], "at least two"),
        ([_series("sim", np.arange(0, 1, 0.1), j=np.zeros(10)),
          _series("real", np.arange(5, 6, 0.1), j=np.zeros(10))], "do not overlap"),
        ([_series("sim", np.arange(0, 1, 0.1), a=np.zeros(10)),
          _series("real", np.arange(0, 1, 0.1), b=np.zeros(10))], "no joint in common"),
    ],
)
def test_bad_input_is_refused(streams: list[JointSeries], message: str) -> None:
    with pytest.raises(AnalysisError, match=message):
        compare(streams)


def test_series_rejects_bad_shapes() -> None:
    with pytest.raises(AnalysisError, match="shape"):
        JointSeries.from_samples("sim", [0, 1], ["a", "b"], [[0, 1]])
    with pytest.raises(AnalysisError, match="duplicated"):
        JointSeries.from_samples("sim", [0], ["a", "a"], [[0, 1]])
    with pytest.raises(AnalysisError, match="finite"):
        JointSeries.from_samples("sim", [0, math.nan], ["a"], [[0], [1]])


def _smoothstep(t: np.ndarray, delay: float = 0.0) -> np.ndarray:
    s = np.clip((t - delay) / 10.0, 0.0, 1.0)
    return 3 * s**2 - 2 * s**3  # a slow monotonic move, 0 -> 1 rad over 10 s


@pytest.mark.parametrize(("offset", "delay"), [(0.05, 0.0), (0.0, 0.2), (0.05, 0.2),
                                               (-0.3, 0.1)])
def test_lag_separates_a_constant_offset_from_a_delay(offset: float, delay: float) -> None:
    """A calibration offset is an error (RMS, max), not a lag: the lag is the shift that
    best matches the signals once their mean difference is removed."""
    t = np.arange(0, 10.0001, 0.01)
    command = _series("command", t, j=_smoothstep(t))
    real = _series("real", t, j=_smoothstep(t, delay) + offset)
    error = compare([command, real], rate=RATE).joints[0].error("real", "command")
    assert error.lag == pytest.approx(delay, abs=1e-9)
    if delay == 0.0:
        assert error.rms == pytest.approx(abs(offset), abs=1e-9)  # the offset, as error


def test_a_joint_missing_from_a_measured_stream_is_left_out_with_the_reason() -> None:
    t = np.arange(0, 4, 0.01)
    command = _series("command", t, a=_sine(t), d=_sine(t))
    sim = _series("sim", t, a=_sine(t), d=_sine(t), x=_sine(t))
    real = _series("real", t, a=_sine(t))
    result = compare([command, sim, real], rate=RATE)
    assert [j.joint for j in result.joints] == ["a"]
    left = {lo.joint: lo for lo in result.left_out}
    assert left["d"].streams == ("real",)
    assert left["d"].expected  # the command names it
    assert "real" in left["d"].reason
    assert not left["x"].expected  # only the simulation has it


def test_rms_of_an_oscillating_error_is_its_amplitude_over_root_two() -> None:
    """An error oscillating +-0.1 rad around zero: RMS 0.1 / sqrt(2) = 0.0707 (its mean is 0
    and its mean absolute value 0.0637, which a wrong RMS would give), max 0.1."""
    t = np.arange(0, 4, 0.01)
    sim = _series("sim", t, j=_sine(t))
    real = _series("real", t, j=_sine(t) + 0.1 * np.sin(2 * np.pi * 1.0 * t))
    error = compare([sim, real], rate=RATE).joints[0].error("sim", "real")
    assert error.rms == pytest.approx(0.1 / math.sqrt(2), rel=2e-3)  # 4 periods, +-1 sample
    assert error.max_abs == pytest.approx(0.1, abs=1e-9)


def test_rms_of_a_single_spike_weighs_it_by_the_root_of_the_sample_count() -> None:
    """Equal streams but for one sample 0.5 rad off: over n compared samples the RMS is
    0.5 / sqrt(n) (0.025 for 400), not 0.5 / n (the mean, or mean absolute, error)."""
    t = np.arange(0, 4, 0.01)
    real = _sine(t)
    real[200] += 0.5  # t = 2 s, a grid point: not smeared by the resampling
    result = compare([_series("sim", t, j=_sine(t)), _series("real", t, j=real)], rate=RATE)
    n = result.grid.size
    assert n in (399, 400)
    error = result.joints[0].error("sim", "real")
    assert error.rms == pytest.approx(0.5 / math.sqrt(n), rel=1e-9)
    assert error.max_abs == pytest.approx(0.5, abs=1e-9)
