"""The reversal error (skel_ros.analysis.metrics): the motion a follower loses where its
reference turns back, what play in a gear train shows, and its bound in the criteria."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.analysis import JointSeries, Outcome, compare, judge, parse_criteria
from skel_ros.analysis.metrics import (
    REVERSAL_HYSTERESIS,
    reversal_error,
    reversals,
    without_gaps,
)

DT = 0.01
T = np.arange(0.0, 6.0, DT)
# 0.3 rad/s out and back between -0.3 and 0.3: turns back at 1 s, 3 s and 5 s.
REFERENCE = 0.3 - 0.3 * np.abs((T - 1.0) % 4.0 - 2.0)


def delayed(x: np.ndarray, steps: int) -> np.ndarray:
    return np.concatenate([np.full(steps, x[0]), x[:-steps]])


def with_play(x: np.ndarray, play: float) -> np.ndarray:
    """A follower through a dead band of ``play``: it moves once the input has crossed it."""
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, x.size):
        out[i] = min(max(out[i - 1], x[i] - play / 2), x[i] + play / 2)
    return out


def test_the_turns_are_the_extremes_left_by_more_than_the_hysteresis() -> None:
    assert reversals(REFERENCE) == [100, 300, 500]
    # Wiggles within the hysteresis, a hold, NaN samples: no turn.
    wiggle = 0.4 * REVERSAL_HYSTERESIS * np.sin(np.arange(200) * 0.3)
    assert reversals(wiggle) == []
    assert reversals(np.zeros(50)) == []
    ramp = np.linspace(0.0, 1.0, 100)
    ramp[40] = math.nan
    assert reversals(ramp) == []
    # A turn that goes back by just more than the hysteresis counts, at its extreme.
    there_and_back = np.concatenate([np.linspace(0.0, 0.1, 11), [0.1 - 2 * REVERSAL_HYSTERESIS]])
    assert reversals(there_and_back) == [10]


def test_a_follower_that_only_lags_loses_nothing_at_a_turn() -> None:
    follower = delayed(REFERENCE, 5)
    assert reversal_error(follower, REFERENCE, DT, 0.05) == pytest.approx(0.0, abs=1e-12)
    # An offset (a sag) is no lost motion either.
    assert reversal_error(follower - 0.02, REFERENCE, DT, 0.05) == pytest.approx(0.0, abs=1e-12)


def test_play_loses_its_width_at_each_turn() -> None:
    follower = delayed(with_play(REFERENCE, 0.04), 5)
    # On its way the follower trails by half the play; after a turn it leads by half:
    # the error moves by the whole play within the window.
    assert reversal_error(follower, REFERENCE, DT, 0.05) == pytest.approx(0.04, abs=1e-3)
    assert reversal_error(follower, REFERENCE, DT, 0.05, window=0.05) < 0.02


def test_no_turn_or_no_lag_no_reversal_error() -> None:
    ramp = np.linspace(0.0, 1.0, 300)
    assert math.isnan(reversal_error(ramp, ramp, DT, 0.0))
    assert math.isnan(reversal_error(REFERENCE, REFERENCE, DT, math.nan))
    # A turn too near the end to see the follower after it: none measured.
    late = np.concatenate([np.linspace(0.0, 1.0, 100), [1.0 - 2 * REVERSAL_HYSTERESIS]])
    assert math.isnan(reversal_error(late, late, DT, 0.05))


def test_the_gate_bounds_the_reversal_error_and_skips_it_without_a_turn() -> None:
    names = ("turns", "still")
    command = np.column_stack([REFERENCE, np.linspace(0.0, 0.5, T.size)])
    real = np.column_stack([delayed(with_play(REFERENCE, 0.04), 5), delayed(command[:, 1], 5)])
    comparison = compare([JointSeries.from_samples("command", T, names, command),
                          JointSeries.from_samples("real", T, names, real)])
    error = comparison.joints[0].error("real", "command")
    assert error is not None
    # The lag the comparison finds takes in part of the play (the follower trails by half
    # of it all along): what is left is lost at the turns.
    assert error.lag > 0.05
    assert error.reversal == pytest.approx(reversal_error(real[:, 0], REFERENCE, DT, error.lag))
    assert error.reversal > 0.015
    criteria = parse_criteria("all:\n  real_command: {reversal: 0.01}\n", "c.yaml")
    checks = {c.joint: c for c in judge(comparison, criteria).checks if c.metric == "reversal"}
    assert checks["turns"].outcome is Outcome.FAILED
    assert checks["turns"].message.startswith("turns: reversal error real-command = 0.0")
    assert "> bound 0.01" in checks["turns"].message
    assert checks["turns"].where == "c.yaml:2"
    assert checks["still"].outcome is Outcome.SKIPPED
    assert checks["still"].reason == "command does not reverse: no reversal error"
    assert checks["still"].pair == ("real", "command")
    assert checks["still"].name == "reversal error real-command"
    assert math.isnan(checks["still"].value)
    loose = parse_criteria("all:\n  real_command: {reversal: 0.05}\n")
    assert judge(comparison, loose).outcome is Outcome.PASSED


def test_a_turn_in_a_gap_of_a_stream_cannot_tell() -> None:
    names = ("turns",)
    follower = delayed(REFERENCE, 5)
    follower[110:125] += 0.05  # a glitch right after the first turn
    real = JointSeries.from_samples("real", T, names, follower[:, None])
    full = JointSeries.from_samples("command", T, names, REFERENCE[:, None])
    error = compare([full, real]).joints[0].error("real", "command")
    assert error is not None
    assert error.reversal == pytest.approx(0.05)
    assert error.turns == 3
    # The command stream stalled over the first turn (no sample from 0.9 s to 1.2 s):
    # that turn is left out, the two others tell.
    kept = (T < 0.9) | (T > 1.2)
    stalled = JointSeries.from_samples("command", T[kept], names, REFERENCE[kept, None])
    error = compare([stalled, real]).joints[0].error("real", "command")
    assert error is not None
    assert error.reversal == pytest.approx(0.0, abs=1e-9)
    # Every turn in a gap: the bound cannot be judged.
    kept = np.ones(T.size, dtype=bool)
    for turn in (1.0, 3.0, 5.0):
        kept &= np.abs(T - (turn + 0.05)) > 0.15  # none from 0.1 s before to 0.2 s after
    stalled = JointSeries.from_samples("command", T[kept], names, REFERENCE[kept, None])
    comparison = compare([stalled, real])
    criteria = parse_criteria("all:\n  real_command: {reversal: 0.01}\n")
    (check,) = [c for c in judge(comparison, criteria).checks if c.metric == "reversal"]
    assert check.outcome is Outcome.NOT_JUDGED
    assert check.reason == "each turn of command falls in a gap of a stream"
    assert (check.joint, check.pair) == ("turns", ("real", "command"))
    assert check.name == "reversal error real-command"
    assert math.isnan(check.value)


def test_without_gaps_blanks_only_the_gaps() -> None:
    times = np.array([0.0, 0.1, 0.2, 0.3, 1.0, 1.1, 1.2])
    grid = np.arange(0.0, 1.25, 0.05)
    out = without_gaps(np.ones(grid.size), grid, times)
    assert np.isnan(out[(grid > 0.3) & (grid < 1.0)]).all()
    assert np.isfinite(out[(grid <= 0.3) | (grid >= 1.0)]).all()
    assert without_gaps(grid, grid, None) is grid


def test_a_turn_after_a_hold_is_where_the_reference_leaves_the_hold() -> None:
    """A trajectory that dwells at its extremes (waypoints held for a while) turns back
    where it leaves the hold, not where it reached it: the play shows after that."""
    t = np.arange(0.0, 8.0, DT)
    # 0.3 rad/s between -0.15 and 0.15, held 0.6 s (longer than the window) at each end.
    knots = [0.0, 1.0, 1.6, 2.6, 3.2, 4.2, 4.8, 5.8, 6.4]
    reference = np.interp(t, knots, [-0.15, 0.15, 0.15, -0.15, -0.15, 0.15, 0.15, -0.15, -0.15])
    assert [round(float(t[i]), 2) for i in reversals(reference)] == [1.6, 3.2, 4.8]
    follower = with_play(reference, 0.04)
    assert reversal_error(follower, reference, DT, 0.0) == pytest.approx(0.04, abs=0.005)


def test_a_reference_away_from_zero_turns_where_it_turns() -> None:
    """The turns of a joint that moves about 1.2 rad are those it makes about 0."""
    assert reversals(1.2 + REFERENCE) == reversals(REFERENCE) == [100, 300, 500]
    assert reversals(-1.2 - REFERENCE) == [100, 300, 500]
    # Wiggles smaller than the hysteresis (a noisy reading) are no turns, away from 0 too.
    wiggle = 0.4 * REVERSAL_HYSTERESIS * (-1.0) ** np.arange(T.size)  # back and forth
    turns = reversals(1.2 + REFERENCE + wiggle)
    assert len(turns) == 3
    assert all(abs(a - b) <= 5 for a, b in zip(turns, (100, 300, 500), strict=True))
