"""The runner's timing as its caller sees it: when cycles are due, how long the loop
sleeps, how many cycles go in one batch, and when the command timeout starts counting.

The clocks are moved by hand (a wall clock for the real-time pacer, and for the batch
budget the runner's own ``time.monotonic``, which the world advances as its steps cost
wall time), so every figure is exact. Beside ``test_runner_batches.py``: these pin the
timing that mutation testing (issue 35, docs/testing.md) found no test held. Only the
last test runs the loop thread, to see it give its lock to another thread and go on.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

from numpy_backend import NumpyBackend

from skel_ros.core import Runner
from skel_ros.core import runner as runner_module

if TYPE_CHECKING:
    import pytest

PERIOD = 0.125  # s: a power of two, so every sum of periods below is exact


class ManualClock:
    """Seconds that move only when the test (or the world) moves them."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class Publisher:
    """A listener with a publication due every ``every`` seconds of backend time."""

    def __init__(self, every: float = math.inf) -> None:
        self.every = every
        self.last = 0.0
        self.batches: list[tuple[float, int]] = []

    def next_event(self) -> float:
        return self.last + self.every

    def after_cycles(self, now: float, count: int) -> None:
        self.batches.append((now, count))
        if count and now >= self.last + self.every:
            self.last = now

    def flush(self) -> None:
        pass

    def on_lagging(self) -> None:
        pass

    def on_error(self, exc: Exception) -> bool:  # noqa: ARG002 - the listener's signature
        return True


def _engine() -> NumpyBackend:
    backend = NumpyBackend()
    backend.period = PERIOD
    return backend


# ----------------------------------------------------------------------------- the schedule


def test_a_runner_never_started_counts_simulated_time_from_the_moment_it_was_made() -> None:
    """Simulated time 0 falls on the wall time the pacer was made at, before any start."""
    clock = ManualClock(100.0)
    backend = _engine()
    runner = Runner.over(backend, clock=clock)
    pacer = runner.pacer
    assert isinstance(pacer, runner_module.RealTimePacer)
    assert pacer.wall_at(0.0) == 100.0
    assert pacer.wall_at(0.5) == 100.5
    assert pacer.due(backend.now(), PERIOD) == 0  # made just now: nothing due yet
    assert not pacer.lagging
    clock.now += 2 * PERIOD
    assert pacer.due(backend.now(), PERIOD) == 2


def test_an_engine_loop_without_events_sleeps_until_its_next_cycle_is_due() -> None:
    """No publication pending: the loop wakes for the very next cycle, not one later."""
    clock = ManualClock(100.0)
    runner = Runner.over(_engine(), clock=clock, listener=Publisher())
    runner.pacer.anchor(0.0)
    assert runner._until_work() == PERIOD
    clock.now += PERIOD / 2
    assert runner._until_work() == PERIOD / 2


# ----------------------------------------------------------------------------- batches


def test_a_publication_due_on_the_next_cycle_goes_out_in_a_batch_of_one() -> None:
    """The cycle a publication falls on ends its batch, even when it is the next one."""
    backend = _engine()
    listener = Publisher(every=0.5)  # due at 0.5, 1.0, ...: every 4 cycles
    runner = Runner.over(backend, listener=listener)
    assert runner.run_cycles(3) == 3
    assert listener.batches == [(0.375, 3)]
    assert runner.run_cycles(5) == 5  # the publication at 0.5 is the next cycle's
    assert listener.batches == [(0.375, 3), (0.5, 1), (1.0, 4)]


def test_a_budget_is_filled_by_batches_sized_on_the_measured_wall_time_per_cycle(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first batch (sized on a guess) the rest of the budget goes in one batch.

    Each step of the world costs 1/4096 s of the runner's wall clock; the budget is 64
    steps' worth. The first batch is sized on the runner's first guess (1 ms a cycle:
    15 cycles); the wall time it took says what a cycle costs, so the 49 cycles that fit
    in the rest go in one batch, and then the budget is spent.
    """
    cost = 1.0 / 4096
    wall = ManualClock(0.0)
    monkeypatch.setattr(runner_module, "time", SimpleNamespace(monotonic=wall, sleep=time.sleep))
    backend = _engine()
    step = backend.step

    def costly_step(dt: float) -> None:
        wall.now += cost
        step(dt)

    backend.step = costly_step  # type: ignore[method-assign]
    listener = Publisher()
    runner = Runner.over(backend, listener=listener)
    assert runner.run_cycles(1000, budget=64 * cost) == 64
    assert [count for _, count in listener.batches] == [15, 49]
    assert wall.now == 64 * cost


# ----------------------------------------------------------------------------- lifecycle


def test_activate_starts_the_command_timeout_at_the_backends_time() -> None:
    """No command after activation: the timeout fires one timeout after it, not before."""
    backend = _engine()
    backend.time = 3.0  # the world ran before the robot was activated
    runner = Runner.over(backend, command_timeout=1.0)
    assert runner.core.quiet_until() == math.inf  # nothing to guard before activation
    runner.activate()
    assert runner.core.quiet_until() == 4.0
    runner.run_cycles(12)  # to 4.5
    assert backend.timeouts == [4.0]
    assert runner.core.timeout_tripped


# ----------------------------------------------------------------------------- the thread


def test_a_loop_running_flat_out_lets_other_threads_take_its_lock_and_goes_on() -> None:
    """A thread waiting for the lock gets it between batches; the loop carries on after."""
    runner = Runner.over(_engine(), real_time_factor=0.0)
    runner.start()
    thread = runner._thread
    assert thread is not None
    try:
        for _ in range(20):
            with runner.lock:  # waits while the loop runs a batch: the lock is contended
                before = runner.cycles
            deadline = time.monotonic() + 30.0  # a generous bound, not a timing check
            while runner.cycles == before and thread.is_alive() and time.monotonic() < deadline:
                time.sleep(0.001)
            assert thread.is_alive()
            assert runner.cycles > before
    finally:
        runner.stop()
    assert not thread.is_alive()
