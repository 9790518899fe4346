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
