"""The pacers of the runner on a clock the test moves: when a simulated time is due on
the wall clock, how much wall time a re-anchoring drops, and a grid pacer's deadlines
after an overrun.

Beside test_runner.py (whole loops): these pin the arithmetic mutation testing (issue
35, docs/testing.md) showed no test held.
"""

from __future__ import annotations

import pytest

from skel_ros.core.runner import GridPacer, RealTimePacer


class _Clock:
    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_a_simulated_time_is_due_at_its_place_on_the_wall_clock() -> None:
    clock = _Clock(100.0)
    pacer = RealTimePacer(2.0, clock)
    pacer.anchor(10.0)  # simulated 10 s at wall 100 s, twice real time
    assert pacer.wall_at(10.0) == 100.0
    assert pacer.wall_at(14.0) == 102.0
    assert pacer.wall_at(9.0) == 99.5


def test_falling_behind_drops_the_wall_time_beyond_one_step() -> None:
    clock = _Clock(0.0)
    pacer = RealTimePacer(2.0, clock, max_lag=0.5)
    pacer.anchor(0.0)
    clock.t = 3.0  # 6 simulated seconds due; the world is still at 0
    assert pacer.due(0.0, 0.1) == 1
    assert pacer.lagging
    # 3 wall seconds behind, one step (0.05 wall s) of it kept.
    assert pacer.lost == pytest.approx(3.0 - 0.1 / 2.0)


def test_a_grid_pacer_skips_the_deadlines_it_missed() -> None:
    clock = _Clock(0.0)
    pacer = GridPacer(clock)
    pacer.anchor(0.0)
    assert pacer.due(0.0, 0.01) == 1  # the next deadline is 0.01
    assert pacer.wait(0.0, 0.01) == pytest.approx(0.01)
    assert pacer.overruns == 0
    clock.t = 0.01  # exactly on time: not an overrun
    assert pacer.wait(0.01, 0.01) == 0.0
    assert pacer.overruns == 0
    clock.t = 0.035  # 25 ms late: the deadlines at 0.02 and 0.03 are skipped
    assert pacer.wait(0.035, 0.01) == pytest.approx(0.005)
    assert pacer.overruns == 1
