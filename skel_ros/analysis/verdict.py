"""The verdict of a run against its criteria: one check per joint and bound.

Each check is *passed*, *failed* (the measured value is beyond the bound), *not judged*
(the run cannot tell: a stream or a joint missing (a joint of the command or the model
that a measured stream lacks, a joint of the criteria not in the run), the run shorter
than ``min_duration``, a stream, or a joint in a measured stream, slower than
``min_rate`` or with a gap beyond ``max_gap`` (its node starved), or the run did not
complete) or *skipped* (a lag bound
on a joint whose reference did not move, so that no lag can be measured; a reversal bound
on one whose reference never turned back; one whose every turn fell in a gap of a stream
is not judged). A run's outcome
is *not judged* if any check is, else *failed* if any check is, else *passed*; several
runs (trajectories) combine the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import Enum
from typing import TYPE_CHECKING

from skel_ros.analysis.criteria import PAIR_METRICS
from skel_ros.analysis.metrics import GAP_PERIODS

if TYPE_CHECKING:
    from collections.abc import Iterable

    from skel_ros.analysis.criteria import Bound, Criteria
    from skel_ros.analysis.metrics import Comparison, JointComparison

__all__ = ["Check", "Outcome", "Verdict", "combine", "judge"]


class Outcome(Enum):
    """What a check, a run or a whole gate came to."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_JUDGED = "not judged"
    SKIPPED = "skipped"


_METRIC_LABEL = {"rms": "RMS error", "max": "max error", "lag": "lag",
                 "reversal": "reversal error"}


@dataclass(frozen=True)
class Check:
    """One criterion applied to one joint (or to the run when ``joint`` is None).

    Attributes:
        name: what is checked, e.g. ``"max error sim-real"``, ``"limit hits real"``,
            ``"duration"``, ``"rate sim"``.
        joint: the joint, or None for the run.
        value: the measured value (NaN when it could not be measured).
        bound: the bound (NaN for a run that did not complete).
        upper: True when ``value`` must stay at or below ``bound``, False at or above.
        outcome: passed, failed, not judged or skipped.
        where: the bound's ``file:line`` in the criteria.
        reason: why not judged or skipped ("" otherwise).
        pair: ``(a, b)`` for a bound on the error of a pair of streams.
        metric: ``rms``, ``max``, ``lag``, ``limit_hits``, ``duration``, ``rate``,
            ``gap`` (the longest gap of a measured stream, against the gap threshold),
            ``present`` (a joint of the criteria in the run, or a joint of the command
            or model in a measured stream) or ``run``.
        stream: the stream of a ``limit_hits``, ``rate``, ``gap`` or ``present`` check.
    """

    name: str
    joint: str | None
    value: float
    bound: float
    upper: bool
    outcome: Outcome
    where: str = ""
    reason: str = ""
    pair: tuple[str, str] | None = None
    metric: str = ""
    stream: str | None = None

    @property
    def excess(self) -> float:
        """How far beyond the bound the value is (positive when failed)."""
        return self.value - self.bound if self.upper else self.bound - self.value

    @property
    def message(self) -> str:
        """One line: the measured value against the bound, and the outcome."""
        subject = f"{self.joint}: {self.name}" if self.joint else self.name
        if self.outcome is Outcome.NOT_JUDGED and not math.isfinite(self.value):
            return f"{subject}: not judged: {self.reason}"
        if self.outcome is Outcome.SKIPPED:
            return f"{subject}: skipped: {self.reason}"
        op = ("<=" if self.upper else ">=") if self.outcome is Outcome.PASSED else \
            (">" if self.upper else "<")
        text = f"{subject} = {_num(self.value)} {op} bound {_num(self.bound)}"
        if self.outcome is Outcome.FAILED:
            text += f" (by {_num(self.excess)})"
        if self.outcome is Outcome.NOT_JUDGED:
            text += f": not judged: {self.reason}"
        return text + (f" [{self.where}]" if self.where else "")


def _num(x: float) -> str:
    return f"{x:.4g}"


@dataclass(frozen=True)
class Verdict:
    """The checks of one run and what they come to."""

    checks: tuple[Check, ...]

    @property
    def outcome(self) -> Outcome:
        """Not judged if any check is; else failed if any check is; else passed."""
        return combine(c.outcome for c in self.checks)

    def with_outcome(self, outcome: Outcome) -> tuple[Check, ...]:
        """The checks that came to ``outcome``."""
        return tuple(c for c in self.checks if c.outcome is outcome)

    @classmethod
    def not_judged(cls, reason: str) -> Verdict:
        """The verdict of a run that did not complete (a node died, ...)."""
        return cls((Check("run", None, math.nan, math.nan, upper=True,
                          outcome=Outcome.NOT_JUDGED, reason=reason, metric="run"),))


def combine(outcomes: Iterable[Outcome]) -> Outcome:
    """Not judged if any is; else failed if any is; else passed (skipped counts as passed)."""
    seen = set(outcomes)
    if Outcome.NOT_JUDGED in seen:
        return Outcome.NOT_JUDGED
    if Outcome.FAILED in seen:
        return Outcome.FAILED
    return Outcome.PASSED


def _check(name: str, joint: str | None, value: float, bound: Bound, *,
           outcome: Outcome | None = None, upper: bool = True, reason: str = "",
           pair: tuple[str, str] | None = None, metric: str = "",
           stream: str | None = None) -> Check:
    """A check of ``value`` against ``bound``; its outcome from the two unless given."""
    if outcome is None:
        held = value <= bound.value if upper else value >= bound.value
        outcome = Outcome.PASSED if held else Outcome.FAILED
    return Check(name, joint, value, bound.value, upper=upper, outcome=outcome,
                 where=bound.where, reason=reason, pair=pair, metric=metric, stream=stream)


def _pair_check(joint: JointComparison, pair: tuple[str, str], metric: str, bound: Bound,
                streams: tuple[str, ...]) -> Check:
    a, b = pair
    name = f"{_METRIC_LABEL[metric]} {a}-{b}"
    error = joint.error(a, b)
    if error is None:
        missing = ", ".join(s for s in pair if s not in streams) or f"{a} or {b}"
        return _check(name, joint.joint, math.nan, bound, outcome=Outcome.NOT_JUDGED,
                      reason=f"no {missing} stream", pair=pair, metric=metric)
    value = {"rms": error.rms, "max": error.max_abs, "lag": abs(error.lag),
             "reversal": error.reversal}[metric]
    if math.isfinite(value):
        return _check(name, joint.joint, value, bound, pair=pair, metric=metric)
    if metric == "lag" and math.isfinite(error.rms):
        return _check(name, joint.joint, value, bound, outcome=Outcome.SKIPPED,
                      reason=f"{b} does not move: no lag to measure", pair=pair, metric=metric)
    if metric == "reversal" and math.isfinite(error.rms):
        if error.turns and math.isfinite(error.lag):
            return _check(name, joint.joint, value, bound, outcome=Outcome.NOT_JUDGED,
                          reason=f"each turn of {b} falls in a gap of a stream", pair=pair,
                          metric=metric)
        why = f"{b} does not reverse" if not error.turns else "no lag to measure"
        return _check(name, joint.joint, value, bound, outcome=Outcome.SKIPPED,
                      reason=f"{why}: no reversal error", pair=pair, metric=metric)
    return _check(name, joint.joint, value, bound, outcome=Outcome.NOT_JUDGED,
                  reason=f"no common samples of {a} and {b}", pair=pair, metric=metric)


def _run_checks(comparison: Comparison, criteria: Criteria) -> list[Check]:
    checks: list[Check] = []
    if criteria.min_duration is not None:
        check = _check("duration", None, comparison.duration, criteria.min_duration,
                       upper=False, metric="duration")
        if check.outcome is Outcome.FAILED:
            check = replace(check, outcome=Outcome.NOT_JUDGED,
                            reason="the run is too short to judge")
        checks.append(check)
    if criteria.min_rate is not None:
        for stream in comparison.streams:
            check = _check(f"rate {stream}", None, comparison.rates.get(stream, math.nan),
                           criteria.min_rate, upper=False, metric="rate", stream=stream)
            if check.outcome is Outcome.FAILED:
                check = replace(check, outcome=Outcome.NOT_JUDGED,
                                reason=f"too few {stream} samples to judge")
            checks.append(check)
    checks += [_gap_check(comparison, stream, criteria.max_gap)
               for stream in comparison.measured]
    checks += _joint_starvation_checks(comparison, criteria)
    return checks


def _joint_starvation_checks(comparison: Comparison, criteria: Criteria) -> list[Check]:
    """The starvation rules per joint of each measured stream.

    A stream that keeps publishing may still stop carrying one joint: each joint that
    some of the stream's samples lack gets its own ``gaps`` check (the span's start to
    its first sample and its last sample to the span's end count as gaps: a joint that
    stops early) and, with ``min_rate``, its own ``rate`` check. A joint in every sample
    of the stream has the stream's checks, so none of its own.
    """
    checks: list[Check] = []
    for stream in comparison.measured:
        every = comparison.times[stream].size
        for joint in comparison.joints:
            if comparison.joint_times[stream][joint.joint].size == every:
                continue
            checks.append(_gap_check(comparison, stream, criteria.max_gap, joint.joint))
            if criteria.min_rate is not None:
                check = _check(f"rate {stream}", joint.joint,
                               comparison.joint_rate(stream, joint.joint), criteria.min_rate,
                               upper=False, metric="rate", stream=stream)
                if check.outcome is not Outcome.PASSED:
                    check = replace(check, outcome=Outcome.NOT_JUDGED,
                                    reason=f"too few {stream} samples of the joint to judge")
                checks.append(check)
    return checks


def _gap_check(comparison: Comparison, stream: str, max_gap: Bound,
               joint: str | None = None) -> Check:
    """Whether ``stream`` (or ``joint`` in it) had samples all along: else not judged."""
    threshold = comparison.gap_threshold(stream, max_gap.value, joint)
    gaps = comparison.gaps(stream, max_gap.value, joint)
    longest = max(gaps, key=lambda g: g.length, default=None)
    value = longest.length if longest else 0.0
    check = _check(f"gaps {stream}", joint, value, replace(max_gap, value=threshold),
                   metric="gap", stream=stream)
    if longest is None:
        return check
    times = "the stamps" if comparison.time_bases.get(stream) == "stamp" else "the log times"
    what = f"the {stream} stream" if joint is None else f"joint {joint} in the {stream} stream"
    reason = (f"{what} starved: no sample for {longest.length:.3f} s from "
              f"{longest.start:.2f} s of the recording ({len(gaps)} gap(s) in {times}, "
              f"{sum(g.length for g in gaps):.3f} s in all; a gap is longer than "
              f"max_gap {max_gap.value:g} s and {GAP_PERIODS:g} sample periods)")
    return replace(check, outcome=Outcome.NOT_JUDGED, reason=reason)


def judge(comparison: Comparison, criteria: Criteria) -> Verdict:
    """Apply ``criteria`` to ``comparison``."""
    checks = _run_checks(comparison, criteria)
    for left in comparison.left_out:
        if left.expected:
            checks += [Check("present", left.joint, math.nan, math.nan, upper=True,
                             outcome=Outcome.NOT_JUDGED, metric="present", stream=stream,
                             reason=f"the command or the model names the joint, but the "
                                    f"{stream} stream has no positions of it")
                       for stream in left.streams]
    measured = {j.joint for j in comparison.joints}
    for name, where in criteria.joint_where.items():
        if name not in measured:
            checks.append(Check("present", name, math.nan, math.nan, upper=True,
                                outcome=Outcome.NOT_JUDGED, where=where,
                                reason="the joint is not in the run", metric="present"))
    for joint in comparison.joints:
        bounds = criteria.for_joint(joint.joint)
        for (a, b, metric), bound in sorted(
                bounds.errors.items(), key=lambda kv: PAIR_METRICS.index(kv[0][2])):
            checks.append(_pair_check(joint, (a, b), metric, bound, comparison.streams))
        for stream, bound in bounds.limit_hits.items():
            name = f"limit hits {stream}"
            if stream in joint.limit_hits:
                checks.append(_check(name, joint.joint, float(joint.limit_hits[stream]), bound,
                                     metric="limit_hits", stream=stream))
            else:
                checks.append(_check(name, joint.joint, math.nan, bound,
                                     outcome=Outcome.NOT_JUDGED, reason=f"no {stream} stream",
                                     metric="limit_hits", stream=stream))
    return Verdict(tuple(checks))
