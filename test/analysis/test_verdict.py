"""The verdict: each bound checked per joint; pass, fail, not judged, skipped."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.analysis import JointSeries, Outcome, Verdict, compare, judge, parse_criteria
from skel_ros.analysis.verdict import combine

RATE = 100.0


def _run(*, real_offset: float = 0.01, seconds: float = 4.0, streams: tuple[str, ...] = (
        "command", "sim", "real"), flat_wrist: bool = False, step: float = 0.01):
    t = np.arange(0, seconds, step)
    command = np.column_stack([0.5 * np.sin(t), np.zeros_like(t) if flat_wrist else np.cos(t)])
    values = {"command": command, "sim": command + 0.005, "real": command + real_offset}
    return compare([JointSeries.from_samples(s, t, ["elbow", "wrist"], values[s])
                    for s in streams], limits={"elbow": (-1.0, 1.0)}, rate=RATE)


CRITERIA = """\
min_duration: 2.0
min_rate: 50
all:
  sim_real: {rms: 0.05, max: 0.1}
  real_command: {max: 0.1, lag: 0.05}
  limit_hits: {real: 0}
"""


def _outcomes(verdict: Verdict) -> dict[tuple[str | None, str], Outcome]:
    return {(c.joint, c.name): c.outcome for c in verdict.checks}


def test_a_good_run_passes_every_check() -> None:
    verdict = judge(_run(), parse_criteria(CRITERIA, "c.yaml"))
    assert verdict.outcome is Outcome.PASSED
    names = {(c.joint, c.name) for c in verdict.checks}
    assert ("elbow", "max error sim-real") in names
    assert ("wrist", "lag real-command") in names
    assert (None, "duration") in names
    assert (None, "rate real") in names
    assert (None, "gaps sim") in names
    assert len(verdict.checks) == 1 + 3 + 2 + 2 * 5  # duration, 3 rates, 2 gaps, 5 bounds/joint


def test_a_bound_crossed_fails_with_value_bound_and_excess() -> None:
    verdict = judge(_run(real_offset=0.2), parse_criteria(CRITERIA, "c.yaml"))
    assert verdict.outcome is Outcome.FAILED
    failed = {(c.joint, c.name): c for c in verdict.with_outcome(Outcome.FAILED)}
    check = failed["elbow", "max error real-command"]
    assert check.value == pytest.approx(0.2)
    assert check.bound == 0.1
    assert check.excess == pytest.approx(0.1)
    assert check.where == "c.yaml:5"
    assert "0.2 > bound 0.1 (by 0.1)" in check.message
    assert ("elbow", "max error sim-real") in failed


def test_limit_hits_bound() -> None:
    t = np.arange(0, 3, 0.01)
    pos = np.clip(t, 0, 1.0)[:, None]
    cmp_ = compare([JointSeries.from_samples("command", t, ["elbow"], pos),
                    JointSeries.from_samples("real", t, ["elbow"], pos)],
                   limits={"elbow": (-1.0, 1.0)})
    verdict = judge(cmp_, parse_criteria("all: {limit_hits: {real: 5}}", "c.yaml"))
    gaps, check = verdict.checks
    assert (gaps.name, gaps.outcome) == ("gaps real", Outcome.PASSED)
    assert check.outcome is Outcome.FAILED
    assert check.stream == "real"
    assert check.value > 100


@pytest.mark.parametrize(("run", "reason"), [
    ({"seconds": 1.5}, "too short"),
    ({"step": 0.05}, "too few real samples"),
    ({"streams": ("command", "real")}, "no sim stream"),
])
def test_a_run_that_cannot_tell_is_not_judged(run: dict, reason: str) -> None:
    verdict = judge(_run(**run), parse_criteria(CRITERIA, "c.yaml"))
    assert verdict.outcome is Outcome.NOT_JUDGED
    assert any(reason in c.reason for c in verdict.with_outcome(Outcome.NOT_JUDGED))


def test_a_joint_of_the_criteria_missing_from_the_run_is_not_judged() -> None:
    verdict = judge(_run(), parse_criteria("joints:\n  knee: {sim_real: {max: 1}}\n", "c.yaml"))
    (check,) = verdict.with_outcome(Outcome.NOT_JUDGED)
    assert (check.joint, check.where) == ("knee", "c.yaml:2")
    assert verdict.outcome is Outcome.NOT_JUDGED


def test_lag_of_a_still_reference_is_skipped_not_failed() -> None:
    verdict = judge(_run(flat_wrist=True), parse_criteria(CRITERIA, "c.yaml"))
    (skipped,) = verdict.with_outcome(Outcome.SKIPPED)
    assert (skipped.joint, skipped.name) == ("wrist", "lag real-command")
    assert math.isnan(skipped.value)
    assert verdict.outcome is Outcome.PASSED


def test_combine_not_judged_then_failed_then_passed() -> None:
    p, f, n, s = Outcome.PASSED, Outcome.FAILED, Outcome.NOT_JUDGED, Outcome.SKIPPED
    assert combine([p, s]) is p
    assert combine([p, f, s]) is f
    assert combine([f, n, p]) is n
    assert Verdict.not_judged("the sim node died").outcome is n


def test_a_joint_of_the_command_missing_from_a_measured_stream_is_not_judged() -> None:
    """Criteria with only `all:` bound every joint: a joint the hardware stream lacks
    cannot pass by being left out."""
    t = np.arange(0, 4, 0.01)
    both = np.column_stack([np.sin(t), np.cos(t)])
    comparison = compare([JointSeries.from_samples("command", t, ["a", "d"], both),
                          JointSeries.from_samples("sim", t, ["a", "d"], both),
                          JointSeries.from_samples("real", t, ["a"], both[:, :1])], rate=RATE)
    verdict = judge(comparison, parse_criteria("all:\n  sim_real: {rms: 1}\n", "c.yaml"))
    assert verdict.outcome is Outcome.NOT_JUDGED
    (missing,) = verdict.with_outcome(Outcome.NOT_JUDGED)
    assert (missing.joint, missing.metric, missing.stream) == ("d", "present", "real")
    assert "d: present: not judged" in missing.message
    assert "real stream" in missing.message


@pytest.mark.parametrize("hole", [(1.5, 4.0), (1.5, 2.5)])
def test_a_joint_starved_in_a_stream_that_keeps_publishing_is_not_judged(
        hole: tuple[float, float]) -> None:
    """The hardware stream goes on, but joint elbow stops (or pauses for a second) in it:
    the gap rule applies to the joint, not only to the stream."""
    t = np.arange(0, 4, 0.01)
    command = np.column_stack([0.5 * np.sin(t), np.cos(t)])
    real = command.copy()
    real[(t > hole[0]) & (t < hole[1]), 0] = np.nan  # no elbow in these messages
    comparison = compare([JointSeries.from_samples("command", t, ["elbow", "wrist"], command),
                          JointSeries.from_samples("real", t, ["elbow", "wrist"], real)],
                         rate=RATE)
    verdict = judge(comparison, parse_criteria(CRITERIA, "c.yaml"))
    assert verdict.outcome is Outcome.NOT_JUDGED
    starved = [c for c in verdict.with_outcome(Outcome.NOT_JUDGED) if c.metric == "gap"]
    assert [(c.joint, c.stream) for c in starved] == [("elbow", "real")]
    assert "joint elbow in the real stream starved" in starved[0].message


def test_a_joint_sampled_before_the_span_has_no_gap_at_its_start() -> None:
    """The measured stream starts before the command (the usual case) and a joint is missing
    from some of its messages: its samples before the compared span are not a gap."""
    t = np.arange(0, 10, 0.01)
    sim = np.column_stack([np.sin(t), np.cos(t)])
    sim[::10, 1] = np.nan  # joint b missing from every 10th message
    tc = np.arange(5, 10, 0.01)
    comparison = compare([
        JointSeries.from_samples("command", tc, ["a", "b"], np.column_stack([np.sin(tc),
                                                                             np.cos(tc)])),
        JointSeries.from_samples("sim", t, ["a", "b"], sim)], rate=RATE)
    assert comparison.gaps("sim", 0.5, "b") == ()
    verdict = judge(comparison, parse_criteria("max_gap: 0.5\n", "c.yaml"))
    assert verdict.outcome is not Outcome.NOT_JUDGED, verdict.with_outcome(Outcome.NOT_JUDGED)


def _shifted_run(shift: float, error: float = 0.0):
    """Command and sim the same smooth motion; real the same ``shift`` s later (negative:
    earlier), plus ``error`` rad x a 1 Hz sinusoid."""
    t = np.arange(0, 6, 0.01)

    def motion(s: np.ndarray) -> np.ndarray:
        return 0.5 * np.sin(2 * np.pi * 0.5 * s)

    command = motion(t)[:, None]
    real = (motion(t - shift) + error * np.sin(2 * np.pi * t))[:, None]
    return compare([JointSeries.from_samples("command", t, ["elbow"], command),
                    JointSeries.from_samples("sim", t, ["elbow"], command),
                    JointSeries.from_samples("real", t, ["elbow"], real)], rate=RATE)


@pytest.mark.parametrize("shift", [0.2, -0.2], ids=["real behind", "real ahead"])
def test_a_lag_beyond_the_bound_fails_whichever_side_is_late(shift: float) -> None:
    """The real side 0.2 s behind (or ahead of) the simulation and the command fails a
    0.05 s lag bound either way: the lag is signed (which stream follows), the bound is on
    its size. Each sign makes one of the two pairs' lags negative."""
    criteria = parse_criteria("all:\n  sim_real: {lag: 0.05}\n  real_command: {lag: 0.05}\n",
                              "c.yaml")
    comparison = _shifted_run(shift)
    elbow = comparison.joints[0]
    assert elbow.error("real", "command").lag == pytest.approx(shift, abs=1e-9)
    assert elbow.error("sim", "real").lag == pytest.approx(-shift, abs=1e-9)
    verdict = judge(comparison, criteria)
    assert verdict.outcome is Outcome.FAILED
    failed = {c.name: c for c in verdict.with_outcome(Outcome.FAILED)}
    assert set(failed) == {"lag sim-real", "lag real-command"}
    for check in failed.values():
        assert check.value == pytest.approx(0.2, abs=1e-9)
        assert check.excess == pytest.approx(0.15, abs=1e-9)


def test_an_oscillation_around_the_reference_fails_an_rms_bound() -> None:
    """Real oscillating +-0.1 rad around the command (RMS 0.0707, mean error 0) fails a
    0.02 rad RMS bound: the RMS is not the mean error, which such an oscillation cancels."""
    verdict = judge(_shifted_run(0.0, error=0.1),
                    parse_criteria("all:\n  real_command: {rms: 0.02}\n", "c.yaml"))
    assert verdict.outcome is Outcome.FAILED
    (check,) = verdict.with_outcome(Outcome.FAILED)
    assert check.name == "RMS error real-command"
    assert check.value == pytest.approx(0.1 / math.sqrt(2), rel=2e-3)
