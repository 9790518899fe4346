"""Tracking metrics of one run: how far simulation, hardware and command are apart.

All streams are resampled onto one uniform time grid covering the span where every
stream has data (linear interpolation, at each series' times: a measured stream's header
stamps when they are on the recorder's clock, else when the recorder received it; see
:mod:`skel_ros.analysis.recording`). For each joint and each pair of streams this gives the
RMS and maximum absolute position error and the lag: the shift of the second stream
that best explains the first (the time shift minimising the RMS of the error once its mean
is removed, searched on the grid up to ``max_lag``, so that a constant offset, which the
RMS and max errors show, is not taken for a delay); positive means the first stream
follows the second. And the reversal error: the motion the first stream loses where the
second reverses (:func:`reversal_error`), what play in a gear train shows.

The joints compared are those every measured stream carries (with positions); any other
joint of a stream is left out, and :attr:`Comparison.left_out` says which and why, so
that a gate can refuse to judge a run that lacks a joint it was asked about.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.analysis.errors import AnalysisError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.analysis.series import Array, JointSeries

# The pairs reported, in this order, when both streams are present. A run in several
# engines (``sim-to-real --engines dart,mujoco``) has the first engine's simulation as
# ``sim`` and each other one under its engine's name: engine vs hardware, engine vs
# engine, engine vs command.
ENGINE_STREAMS: tuple[str, ...] = ("dart", "mujoco")
PAIRS: tuple[tuple[str, str], ...] = (
    ("sim", "real"), *((e, "real") for e in ENGINE_STREAMS),
    *(("sim", e) for e in ENGINE_STREAMS),
    ("sim", "command"), *((e, "command") for e in ENGINE_STREAMS),
    ("real", "command"))
# A position within this distance of a limit counts as a limit hit (rad or m).
LIMIT_TOLERANCE = 1e-3
# A gap in a measured stream: consecutive samples further apart than both this many of
# the stream's median periods and the criteria's ``max_gap`` (see :meth:`Comparison.gaps`).
GAP_PERIODS = 5.0
# Reversal error (:func:`reversal_error`): a reversal is where the reference turns back by
# more than this (rad or m) from the furthest it went, and the error is looked at for
# this long after it (s).
REVERSAL_HYSTERESIS = 0.005
REVERSAL_WINDOW = 0.3


@dataclass(frozen=True)
class Gap:
    """A stretch without samples in a measured stream (its node starved).

    Attributes:
        stream: the stream.
        start: time of the last sample before the gap (s, the recording's time).
        length: seconds without a sample.
    """

    stream: str
    start: float
    length: float


@dataclass(frozen=True)
class LeftOut:
    """A joint left out of the comparison: some measured stream has no positions of it.

    Attributes:
        joint: the joint.
        streams: the measured streams without it.
        expected: whether the command or the model names it (a gate cannot judge the run
            without it); False for a joint only some measured stream has.
    """

    joint: str
    streams: tuple[str, ...]
    expected: bool

    @property
    def reason(self) -> str:
        """Why it was left out, in words."""
        return f"the joint is not in the {', '.join(self.streams)} stream(s)"


@dataclass(frozen=True)
class PairError:
    """Position error of stream ``a`` against stream ``b`` for one joint."""

    a: str
    b: str
    rms: float
    max_abs: float
    lag: float  # seconds; NaN when the reference does not move enough to tell
    reversal: float = math.nan  # rad (m): reversal_error; NaN when no turn could tell
    turns: int = 0  # how many times the reference turned back (reversals)


@dataclass(frozen=True)
class JointComparison:
    """Everything measured for one joint."""

    joint: str
    errors: tuple[PairError, ...]
    limit_hits: Mapping[str, int]  # stream -> samples at or beyond a position limit
    lower: float
    upper: float

    def error(self, a: str, b: str) -> PairError | None:
        """The error of ``a`` against ``b``, if both streams were there."""
        for e in self.errors:
            if (e.a, e.b) == (a, b):
                return e
        return None


@dataclass(frozen=True)
class Comparison:
    """A whole run: the common grid, the resampled positions and per-joint results."""

    grid: Array
    streams: tuple[str, ...]
    positions: Mapping[str, Mapping[str, Array]]  # stream -> joint -> positions on grid
    joints: tuple[JointComparison, ...]
    # stream -> samples per second over the compared span (the stream's own samples)
    rates: Mapping[str, float] = field(default_factory=dict)
    # stream -> its own sample times (s), and "stamp" or "log": what they are
    times: Mapping[str, Array] = field(default_factory=dict)
    time_bases: Mapping[str, str] = field(default_factory=dict)
    # stream -> why its samples are not at their stamps (a refused time base), "" otherwise
    time_base_notes: Mapping[str, str] = field(default_factory=dict)
    # stream -> joint -> the times of that joint's own position samples in that stream
    joint_times: Mapping[str, Mapping[str, Array]] = field(default_factory=dict)
    left_out: tuple[LeftOut, ...] = ()

    @property
    def measured(self) -> tuple[str, ...]:
        """The measured streams (every one but the command)."""
        return tuple(s for s in self.streams if s != "command")

    def _sample_times(self, stream: str, joint: str | None) -> Array | None:
        if joint is None:
            return self.times.get(stream)
        return self.joint_times.get(stream, {}).get(joint)

    def gap_threshold(self, stream: str, max_gap: float, joint: str | None = None) -> float:
        """The shortest gap of ``stream`` (or of one joint in it) that counts (the rule).

        A gap is longer than ``max_gap`` seconds and than :data:`GAP_PERIODS` times the
        median period of the samples (of the stream, or of the joint's own samples).
        """
        t = self._sample_times(stream, joint)
        period = float(np.median(np.diff(t))) if t is not None and t.size > 1 else 0.0
        return max(max_gap, GAP_PERIODS * period)

    def gaps(self, stream: str, max_gap: float, joint: str | None = None) -> tuple[Gap, ...]:
        """The gaps of ``stream`` (or of ``joint`` in it) in the compared span, in order.

        A stream covers the compared span by construction; a joint of it may not: the
        time from the span's start to its first sample, and from its last sample to the
        span's end, count as gaps too (a joint that stops while its stream goes on).
        """
        t = self._sample_times(stream, joint)
        if t is None or not self.grid.size:
            return ()
        threshold = self.gap_threshold(stream, max_gap, joint)
        if joint is not None:  # the span's edges bound the joint's samples
            before, after = t[t <= self.grid[0]], t[t >= self.grid[-1]]
            inner = t[(t > self.grid[0]) & (t < self.grid[-1])]
            # Its last sample at or before the span (else the span's start), the samples
            # inside, its first one at or after the span (else the span's end).
            t = np.concatenate(([before[-1] if before.size else self.grid[0]], inner,
                                [after[0] if after.size else self.grid[-1]]))
        if t.size < 2:  # noqa: PLR2004 - a gap needs two samples
            return ()
        d = np.diff(t)
        inside = (t[1:] > self.grid[0]) & (t[:-1] < self.grid[-1])
        return tuple(Gap(stream, float(t[i]), float(d[i]))
                     for i in np.flatnonzero(inside & (d > threshold)))

    def joint_rate(self, stream: str, joint: str) -> float:
        """Samples per second of ``joint`` in ``stream`` over the compared span."""
        t = self.joint_times.get(stream, {}).get(joint)
        if t is None or self.duration <= 0:
            return math.nan
        return float(np.count_nonzero((t >= self.grid[0]) & (t <= self.grid[-1]))) / self.duration

    @property
    def duration(self) -> float:
        """Length of the compared span in seconds."""
        return float(self.grid[-1] - self.grid[0]) if self.grid.size else 0.0


def estimate_lag(signal: Array, reference: Array, dt: float, max_lag: float) -> float:
    """Shift (s) of ``reference`` that makes it best match ``signal``.

    The best match minimises the RMS of the difference with its mean removed, so a
    constant offset between the two does not move the lag (the RMS and max errors show
    it). Among equally good shifts the smallest is taken (a straight ramp, whose delay
    cannot be told from an offset, has lag 0).

    Positive: ``signal`` happens later than ``reference``. NaN when the reference
    hardly moves (then every shift fits equally well) or the data are too short.
    """
    ok = np.isfinite(signal) & np.isfinite(reference)
    if ok.sum() < 4 or float(np.ptp(reference[ok])) < 1e-6:  # noqa: PLR2004
        return math.nan
    n = signal.size
    k_max = min(round(max_lag / dt), n // 2)
    best_k, best = 0, math.inf
    for k in sorted(range(-k_max, k_max + 1), key=abs):  # ties go to the smallest shift
        if k >= 0:
            a, b = signal[k:], reference[: n - k]
        else:
            a, b = signal[: n + k], reference[-k:]
        d = a - b
        d = d[np.isfinite(d)]
        if d.size < n // 4:
            continue
        d = d - np.mean(d)
        rms = float(np.sqrt(np.mean(d * d)))
        if rms < best * (1 - 1e-9) - 1e-12:
            best_k, best = k, rms
    return best_k * dt


def reversals(reference: Array, hysteresis: float = REVERSAL_HYSTERESIS) -> list[int]:
    """The samples where ``reference`` turns back.

    Each extremum it then leaves by more than ``hysteresis`` the other way (so that
    noise and holds are no reversals); where it held the extremum for a while, the
    sample it leaves it from (a follower's play shows once the reference moves back).
    """
    turns: list[int] = []
    direction, extreme = 0, -1
    for i, value in enumerate(reference):
        if not math.isfinite(value):
            continue
        if extreme < 0:
            extreme = i
        elif direction and direction * (value - reference[extreme]) >= 0.0:
            extreme = i  # further the same way, or held there: it turns where it leaves
        elif abs(value - reference[extreme]) > hysteresis:
            if direction:
                turns.append(extreme)
            direction = 1 if value > reference[extreme] else -1
            extreme = i
    return turns


def reversal_error(signal: Array, reference: Array, dt: float, lag: float,
                   window: float = REVERSAL_WINDOW) -> float:
    """The motion ``signal`` loses where ``reference`` reverses (rad or m).

    With the lag taken out (``reference`` shifted by ``lag``, :func:`estimate_lag`), the
    error at each reversal of ``reference`` (:func:`reversals`) is the error the
    follower had on its way there; within ``window`` seconds after it the error moves by
    what the reversal costs: nothing for a follower that turns as it was going, the play
    a geared joint crosses before its load turns with it. The largest such change of the
    error over the run; NaN when ``reference`` never reverses or the lag is unknown. A
    turn whose window holds a NaN of either stream (a gap: :func:`without_gaps`) cannot
    tell, and is left out.
    """
    if not math.isfinite(lag):
        return math.nan
    shift = round(lag / dt)
    span = round(window / dt)
    worst = math.nan
    for turn in reversals(reference):
        start = turn + shift  # the reversal, as the follower should show it
        if start < 0 or start + 1 >= signal.size:  # the turn itself is in reference
            continue
        k = np.arange(start, min(signal.size, start + span + 1))
        k = k[k - shift < reference.size]  # k - shift >= turn >= 0 already
        error = signal[k] - reference[k - shift]
        if not np.isfinite(error).all():
            continue
        change = float(np.max(np.abs(error - error[0])))
        if not worst >= change:
            worst = change
    return worst


def without_gaps(values: Array, grid: Array, times: Array | None) -> Array:
    """``values`` on ``grid``, NaN where the samples at ``times`` leave a gap.

    A gap: consecutive samples further apart than :data:`GAP_PERIODS` of their median
    period (a stalled node), across which a resampled stream is only a straight line.
    """
    if times is None or times.size < 2:  # noqa: PLR2004 - a period needs two samples
        return values
    d = np.diff(times)
    out: Array = values.copy()
    for i in np.flatnonzero(d > GAP_PERIODS * float(np.median(d))):
        out[(grid > times[i]) & (grid < times[i + 1])] = math.nan
    return out


def _pair_error(  # noqa: PLR0917
    a: str, b: str, x: Array, y: Array, dt: float, max_lag: float,
    turns: tuple[Array, Array],
) -> PairError:
    """The pair's errors; ``turns``: ``x`` and ``y`` NaN in their gaps, for the reversals."""
    d = x - y
    d = d[np.isfinite(d)]
    if d.size == 0:
        return PairError(a, b, math.nan, math.nan, math.nan)
    lag = estimate_lag(x, y, dt, max_lag)
    gx, gy = turns
    return PairError(a, b, float(np.sqrt(np.mean(d * d))), float(np.max(np.abs(d))), lag,
                     reversal_error(gx, gy, dt, lag), len(reversals(y)))


def compare(
    streams: Sequence[JointSeries],
    limits: Mapping[str, tuple[float, float]] | None = None,
    *,
    rate: float = 100.0,
    max_lag: float = 0.5,
    joints: Sequence[str] | None = None,
) -> Comparison:
    """Compare the streams joint by joint.

    Args:
        streams: any of ``command``, ``sim``, ``real`` (by :attr:`JointSeries.name`).
        limits: position limits per joint, for the limit-hit counts.
        rate: grid rate in Hz.
        max_lag: largest lag searched, seconds.
        joints: joints to compare (default: those every non-command stream carries,
            with at least two position samples; the others are in
            :attr:`Comparison.left_out`, marked ``expected`` when the command or
            ``limits`` (the model) name them).

    Raises:
        AnalysisError: fewer than two streams, no overlap in time, no common joint.
    """
    by_name = {s.name: s for s in streams if len(s) > 0}
    if len(by_name) < 2:  # noqa: PLR2004 - a comparison needs two streams
        raise AnalysisError(
            f"need at least two non-empty streams to compare, got {sorted(by_name) or 'none'}")
    if rate <= 0 or not math.isfinite(rate):
        raise AnalysisError(f"grid rate must be positive, got {rate}")
    start = max(float(s.times[0]) for s in by_name.values())
    end = min(float(s.times[-1]) for s in by_name.values())
    if end - start < 2.0 / rate:
        raise AnalysisError(
            f"the streams do not overlap in time ({start:.3f} .. {end:.3f} s)")
    dt = 1.0 / rate
    grid: Array = start + dt * np.arange(math.floor((end - start) / dt) + 1, dtype=np.float64)
    measured = [s for n, s in by_name.items() if n != "command"] or list(by_name.values())
    carried = {s.name: {j for j in s.joint_names if np.isfinite(s.column(j)).sum() >= 2}  # noqa: PLR2004 - interpolation needs two samples
               for s in measured}
    every = [j for s in by_name.values() for j in s.joint_names]
    expected = set(by_name["command"].joint_names if "command" in by_name else ()) | set(
        limits or ())
    left_out = tuple(
        LeftOut(j, tuple(s.name for s in measured if j not in carried[s.name]), j in expected)
        for j in dict.fromkeys([*every, *sorted(expected)])
        if any(j not in carried[s.name] for s in measured))
    if joints is None:
        common = set.intersection(*carried.values())
        joints = [j for j in dict.fromkeys(every) if j in common]
    if not joints:
        raise AnalysisError("the streams have no joint in common")
    positions: dict[str, dict[str, Array]] = {n: {} for n in by_name}
    results = []
    for joint in joints:
        for n, s in by_name.items():
            positions[n][joint] = (s.resample(joint, grid) if joint in s.joint_names
                                   else np.full(grid.shape, np.nan))
        gapless = {n: without_gaps(positions[n][joint], grid,
                                   s.times[np.isfinite(s.column(joint))]
                                   if joint in s.joint_names else None)
                   for n, s in by_name.items()}
        errors = tuple(
            _pair_error(a, b, positions[a][joint], positions[b][joint], dt, max_lag,
                        (gapless[a], gapless[b]))
            for a, b in PAIRS if a in by_name and b in by_name
        )
        lo, hi = (limits or {}).get(joint, (-math.inf, math.inf))
        hits = {}
        for n in by_name:
            p = positions[n][joint]
            p = p[np.isfinite(p)]
            at_limit = (p <= lo + LIMIT_TOLERANCE) | (p >= hi - LIMIT_TOLERANCE)
            hits[n] = int(np.count_nonzero(at_limit))
        results.append(JointComparison(joint, errors, hits, lo, hi))
    span = float(grid[-1] - grid[0])
    rates = {n: float(np.count_nonzero((s.times >= grid[0]) & (s.times <= grid[-1]))) / span
             for n, s in by_name.items()}
    joint_times = {n: {j: s.times[np.isfinite(s.column(j))] for j in joints if j in s.joint_names}
                   for n, s in by_name.items()}
    return Comparison(grid, tuple(by_name), positions, tuple(results), rates,
                      {n: s.times for n, s in by_name.items()},
                      {n: s.time_base for n, s in by_name.items()},
                      {n: s.time_base_note for n, s in by_name.items() if s.time_base_note},
                      joint_times, left_out)
