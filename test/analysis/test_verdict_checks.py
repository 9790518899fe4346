"""Each check of a verdict in full: the fields the JSON report and the CI summaries read
(name, joint, value, bound, side, outcome, reason, pair, metric, stream) for every way a
check comes out, and a bound met exactly.

Beside test_verdict.py (outcomes of whole runs): these pin what mutation testing
(issue 35, docs/testing.md) showed no test read.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.analysis import JointSeries, Outcome, Verdict, compare, judge, parse_criteria
from skel_ros.analysis.verdict import Check

RATE = 100.0


def _series(name: str, t: np.ndarray, **joints: np.ndarray) -> JointSeries:
    return JointSeries.from_samples(name, t, list(joints), np.column_stack(list(joints.values())))


def _fields(check: Check) -> tuple[object, ...]:
    """The check's fields, NaN as the string "nan" so that they compare."""
    def nan(x: float) -> object:
        return "nan" if isinstance(x, float) and math.isnan(x) else x
    return (check.name, check.joint, nan(check.value), nan(check.bound), check.upper,
            check.outcome, check.where, check.reason, check.pair, check.metric, check.stream)


def _by_name(verdict: Verdict) -> dict[tuple[str | None, str], Check]:
    return {(c.joint, c.name): c for c in verdict.checks}


def test_a_run_that_did_not_complete() -> None:
    verdict = Verdict.not_judged("the hardware node died")
    (check,) = verdict.checks
    assert _fields(check) == ("run", None, "nan", "nan", True, Outcome.NOT_JUDGED, "",
                              "the hardware node died", None, "run", None)
    assert check.message == "run: not judged: the hardware node died"
    assert verdict.outcome is Outcome.NOT_JUDGED


def test_a_pair_without_one_of_its_streams_is_not_judged() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=np.sin(t)), _series("real", t, j=np.sin(t))], rate=RATE)
    verdict = judge(c, parse_criteria("all:\n  real_command: {rms: 0.1}\n", "c.yaml"))
    check = _by_name(verdict)["j", "RMS error real-command"]
    assert _fields(check) == ("RMS error real-command", "j", "nan", 0.1, True,
                              Outcome.NOT_JUDGED, "c.yaml:2", "no command stream",
                              ("real", "command"), "rms", None)
    assert check.message == "j: RMS error real-command: not judged: no command stream"


def test_a_pair_without_common_samples_is_not_judged() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, a=np.sin(t), b=np.sin(t)),
                 _series("real", t, a=np.sin(t), b=np.full_like(t, np.nan))],
                rate=RATE, joints=["a", "b"])
    criteria = parse_criteria("all:\n  sim_real: {max: 0.1, lag: 0.2}\n", "c.yaml")
    checks = _by_name(judge(c, criteria))
    for name, metric in (("max error sim-real", "max"), ("lag sim-real", "lag")):
        check = checks["b", name]
        assert _fields(check) == (name, "b", "nan", {"max": 0.1, "lag": 0.2}[metric], True,
                                  Outcome.NOT_JUDGED, "c.yaml:2",
                                  "no common samples of sim and real", ("sim", "real"),
                                  metric, None)
    assert checks["a", "max error sim-real"].outcome is Outcome.PASSED


def test_a_lag_against_a_still_reference_is_skipped_with_its_fields() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("command", t, j=np.zeros_like(t)),
                 _series("real", t, j=np.full_like(t, 0.01))], rate=RATE)
    check = _by_name(judge(c, parse_criteria("all:\n  real_command: {lag: 0.05}\n", "c.yaml"))
                     )["j", "lag real-command"]
    assert _fields(check) == ("lag real-command", "j", "nan", 0.05, True, Outcome.SKIPPED,
                              "c.yaml:2", "command does not move: no lag to measure",
                              ("real", "command"), "lag", None)
    assert check.message == "j: lag real-command: skipped: command does not move: no lag to measure"


def test_a_passed_pair_check_has_its_pair_and_metric() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=np.sin(t)), _series("real", t, j=np.sin(t) + 0.01)],
                rate=RATE)
    check = _by_name(judge(c, parse_criteria("all:\n  sim_real: {rms: 0.1}\n", "c.yaml")))[
        "j", "RMS error sim-real"]
    assert _fields(check) == ("RMS error sim-real", "j", pytest.approx(0.01), 0.1, True,
                              Outcome.PASSED, "c.yaml:2", "", ("sim", "real"), "rms", None)
    assert check.message == "j: RMS error sim-real = 0.01 <= bound 0.1 [c.yaml:2]"


def test_a_lower_bound_met_exactly_passes() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=np.sin(t)), _series("real", t, j=np.sin(t))], rate=RATE)
    exact = f"min_duration: {c.duration!r}\nmin_rate: {c.rates['real']!r}\n"
    checks = _by_name(judge(c, parse_criteria(exact, "c.yaml")))
    duration = checks[None, "duration"]
    assert _fields(duration) == ("duration", None, c.duration, c.duration, False,
                                 Outcome.PASSED, "c.yaml:1", "", None, "duration", None)
    assert duration.message == f"duration = {c.duration:.4g} >= bound {c.duration:.4g} [c.yaml:1]"
    rate = checks[None, "rate real"]
    assert (rate.outcome, rate.upper, rate.metric, rate.stream) == (
        Outcome.PASSED, False, "rate", "real")


def test_a_run_too_short_is_not_judged_with_its_fields() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=np.sin(t)), _series("real", t, j=np.sin(t))], rate=RATE)
    check = _by_name(judge(c, parse_criteria("min_duration: 5\n", "c.yaml")))[None, "duration"]
    assert _fields(check) == ("duration", None, c.duration, 5.0, False, Outcome.NOT_JUDGED,
                              "c.yaml:1", "the run is too short to judge", None, "duration",
                              None)
    assert check.message == (f"duration = {c.duration:.4g} < bound 5: not judged: "
                             "the run is too short to judge [c.yaml:1]")


def test_a_failed_upper_bound_says_by_how_much() -> None:
    check = Check("max error sim-real", "j", 0.3, 0.1, upper=True, outcome=Outcome.FAILED,
                  where="c.yaml:2")
    assert check.excess == pytest.approx(0.2)
    assert check.message == "j: max error sim-real = 0.3 > bound 0.1 (by 0.2) [c.yaml:2]"
    lower = Check("rate real", None, 10.0, 50.0, upper=False, outcome=Outcome.FAILED)
    assert lower.excess == 40.0
    assert lower.message == "rate real = 10 < bound 50 (by 40)"


def test_a_joint_that_thins_out_has_its_own_rate_and_gap_checks() -> None:
    t = np.arange(0, 4, 0.01)
    thin = np.where(np.arange(t.size) % 4 == 0, np.sin(t), np.nan)  # a quarter of the samples
    c = compare([_series("sim", t, a=np.sin(t), b=np.sin(t)),
                 _series("real", t, a=np.sin(t), b=thin)], rate=RATE)
    checks = _by_name(judge(c, parse_criteria("min_rate: 50\n", "c.yaml")))
    # "a" is in every sample of both streams: the streams' checks are its checks.
    assert ("a", "rate real") not in checks
    assert ("a", "gaps real") not in checks
    rate = checks["b", "rate real"]
    assert _fields(rate) == ("rate real", "b", pytest.approx(c.joint_rate("real", "b")), 50.0,
                             False, Outcome.NOT_JUDGED, "c.yaml:1",
                             "too few real samples of the joint to judge", None, "rate", "real")
    assert rate.value == pytest.approx(25.0, rel=0.02)
    gaps = checks["b", "gaps real"]
    assert (gaps.outcome, gaps.metric, gaps.stream, gaps.value) == (
        Outcome.PASSED, "gap", "real", 0.0)
    for stream in ("sim", "real"):
        whole = checks[None, f"rate {stream}"]
        assert _fields(whole) == (f"rate {stream}", None, pytest.approx(c.rates[stream]), 50.0,
                                  False, Outcome.PASSED, "c.yaml:1", "", None, "rate", stream)


def test_a_thin_joint_after_a_full_one_is_still_checked() -> None:
    t = np.arange(0, 4, 0.01)
    thin = np.where(t < 2.0, np.sin(t), np.nan)  # stops half way
    c = compare([_series("sim", t, a=np.sin(t), b=np.sin(t), c=np.sin(t)),
                 _series("real", t, a=np.sin(t), b=np.sin(t), c=thin)], rate=RATE)
    checks = _by_name(judge(c, parse_criteria("", "c.yaml")))
    assert checks["c", "gaps real"].outcome is Outcome.NOT_JUDGED
    assert "joint c in the real stream starved" in checks["c", "gaps real"].reason


def test_a_joint_of_the_criteria_missing_from_the_run_is_named_with_its_line() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=np.sin(t)), _series("real", t, j=np.sin(t))], rate=RATE)
    criteria = parse_criteria("min_duration: 1\njoints:\n  ghost:\n    sim_real: {max: 1}\n",
                              "c.yaml")
    checks = _by_name(judge(c, criteria))
    assert _fields(checks["ghost", "present"]) == (
        "present", "ghost", "nan", "nan", True, Outcome.NOT_JUDGED, "c.yaml:3",
        "the joint is not in the run", None, "present", None)
    assert checks[None, "duration"].outcome is Outcome.PASSED  # the run's checks stay


def test_a_joint_the_command_names_but_a_stream_lacks_is_named_per_stream() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("command", t, a=np.sin(t), b=np.sin(t), c=np.sin(t)),
                 _series("sim", t, a=np.sin(t)), _series("real", t, a=np.sin(t), b=np.sin(t))],
                rate=RATE)
    verdict = judge(c, parse_criteria("min_duration: 1\n", "c.yaml"))
    present = [_fields(ch) for ch in verdict.checks if ch.name == "present"]
    reason = "the command or the model names the joint, but the {} stream has no positions of it"
    assert present == [
        ("present", "b", "nan", "nan", True, Outcome.NOT_JUDGED, "", reason.format("sim"),
         None, "present", "sim"),
        ("present", "c", "nan", "nan", True, Outcome.NOT_JUDGED, "", reason.format("sim"),
         None, "present", "sim"),
        ("present", "c", "nan", "nan", True, Outcome.NOT_JUDGED, "", reason.format("real"),
         None, "present", "real"),
    ]
    assert _by_name(verdict)[None, "duration"].outcome is Outcome.PASSED


def test_limit_hit_checks_have_their_stream() -> None:
    t = np.arange(0, 2, 0.01)
    at_limit = np.where(t < 1.0, 0.0, 1.0)
    c = compare([_series("sim", t, j=at_limit), _series("real", t, j=np.zeros_like(t))],
                {"j": (-1.0, 1.0)}, rate=RATE)
    text = "all:\n  limit_hits: {sim: 3, real: 0, command: 0}\n"
    checks = _by_name(judge(c, parse_criteria(text, "c.yaml")))
    hits = c.joints[0].limit_hits["sim"]
    assert hits > 3
    assert _fields(checks["j", "limit hits sim"]) == (
        "limit hits sim", "j", float(hits), 3.0, True, Outcome.FAILED, "c.yaml:2", "", None,
        "limit_hits", "sim")
    assert _fields(checks["j", "limit hits real"]) == (
        "limit hits real", "j", 0.0, 0.0, True, Outcome.PASSED, "c.yaml:2", "", None,
        "limit_hits", "real")
    assert _fields(checks["j", "limit hits command"]) == (
        "limit hits command", "j", "nan", 0.0, True, Outcome.NOT_JUDGED, "c.yaml:2",
        "no command stream", None, "limit_hits", "command")


def test_pair_checks_come_in_metric_order_with_a_joints_own_bounds() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("sim", t, j=np.sin(3 * t)), _series("real", t, j=np.sin(3 * t))],
                rate=RATE)
    text = ("all:\n  sim_real: {lag: 0.1, max: 0.2, rms: 0.3}\n"
            "joints:\n  j:\n    sim_real: {max: 0.5}\n")
    checks = judge(c, parse_criteria(text, "c.yaml")).checks
    pairs = [(ch.name, ch.bound) for ch in checks if ch.pair]
    assert pairs == [("RMS error sim-real", 0.3), ("max error sim-real", 0.5),
                     ("lag sim-real", 0.1)]


def test_a_pair_without_both_streams_names_both() -> None:
    t = np.arange(0, 2, 0.01)
    c = compare([_series("command", t, j=np.sin(t)), _series("real", t, j=np.sin(t))],
                rate=RATE)
    check = _by_name(judge(c, parse_criteria("all:\n  sim_mujoco: {rms: 1}\n", "c.yaml")))[
        "j", "RMS error sim-mujoco"]
    assert check.reason == "no sim, mujoco stream"


@pytest.mark.parametrize(("time_base", "times"), [("log", "the log times"),
                                                   ("stamp", "the stamps")])
def test_a_starved_stream_says_how_long_from_when_and_in_which_times(
        time_base: str, times: str) -> None:
    t = np.arange(0, 4, 0.01)
    t_real = t[((t < 1.0) | (t > 1.3)) & ((t < 2.0) | (t > 2.6))]  # 0.3 s, then 0.6 s
    real = JointSeries.from_samples("real", t_real, ["j"], np.sin(t_real)[:, None],
                                    time_base=time_base)
    c = compare([_series("sim", t, j=np.sin(t)), real], rate=RATE)
    check = _by_name(judge(c, parse_criteria("max_gap: 0.2\n", "c.yaml")))[None, "gaps real"]
    first, second = c.gaps("real", 0.2)
    assert first.length < second.length  # the longest is not the first
    assert check.outcome is Outcome.NOT_JUDGED
    assert (check.value, check.bound) == (second.length, pytest.approx(0.2))
    assert (check.metric, check.stream, check.where) == ("gap", "real", "c.yaml:1")
    assert check.reason == (
        f"the real stream starved: no sample for {second.length:.3f} s from "
        f"{second.start:.2f} s of the recording (2 gap(s) in {times}, "
        f"{first.length + second.length:.3f} s in all; a gap is longer than max_gap 0.2 s "
        f"and 5 sample periods)")
    assert second.start == pytest.approx(1.99)


def test_a_joint_starved_in_its_stream_is_measured_against_its_own_period() -> None:
    t = np.arange(0, 4, 0.01)
    every4 = np.where(np.arange(t.size) % 4 == 0, np.sin(t), np.nan)
    every4[(t > 2.0) & (t < 2.5)] = np.nan
    c = compare([_series("sim", t, a=np.sin(t), b=np.sin(t)),
                 _series("real", t, a=np.sin(t), b=every4)], rate=RATE)
    check = _by_name(judge(c, parse_criteria("max_gap: 0.01\n", "c.yaml")))["b", "gaps real"]
    assert check.bound == pytest.approx(c.gap_threshold("real", 0.01, "b"))
    assert check.bound == pytest.approx(0.2)  # five of its own 40 ms periods
    assert check.outcome is Outcome.NOT_JUDGED
    assert check.reason.startswith("joint b in the real stream starved: no sample for 0.520 s")
    assert _by_name(judge(c, parse_criteria("max_gap: 0.01\n", "c.yaml")))[
        None, "gaps real"].outcome is Outcome.PASSED
