"""The runner's batches, budget, wake-ups and errors, over the numpy double and manual clocks.

What the runner promises (``skel_ros/core/runner.py``): an engine's quiet cycles go in one
batch up to the next publication or the cycle on which the core may act (the command
timeout fires on its own cycle, not inside a batch); a wall-time budget still runs one
cycle and caps the batch; a wake is served at the backend's time and heard by the
listener only when something changed; an error in a cycle reaches the listener and
pauses the loop; ``stop`` returns once the loop thread ended, or after its timeout.
No real time is waited for except where a thread must end.
"""

from __future__ import annotations

import math
import threading

import pytest
from numpy_backend import NumpyBackend

from skel_ros.core import Capabilities, GridPacer, RealTimePacer, Runner
from skel_ros.model.limits import CommandKind


class FakeClock:
    """Wall seconds, moved by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Publisher:
    """A listener with a publication due every ``every`` seconds of backend time."""

    def __init__(self, every: float = math.inf) -> None:
        self.every = every
        self.last = 0.0
        self.cycles: list[tuple[float, int]] = []
        self.errors: list[Exception] = []
        self.flushes = 0

    def next_event(self) -> float:
        return self.last + self.every

    def after_cycles(self, now: float, count: int) -> None:
        self.cycles.append((now, count))
        if count and now + 1e-9 >= self.last + self.every:
            self.last = now

    def flush(self) -> None:
        self.flushes += 1

    def on_lagging(self) -> None:
        pass

    def on_error(self, exc: Exception) -> bool:
        self.errors.append(exc)
        return True


def _engine(period: float = 0.125) -> NumpyBackend:
    backend = NumpyBackend()
    backend.period = period  # a power of two: every sum of periods is exact
    return backend


def _hardware() -> NumpyBackend:
    backend = NumpyBackend()
    backend.capabilities = Capabilities(command_modes=backend.capabilities.command_modes)
    return backend


# ----------------------------------------------------------------------------- counting


def test_a_new_runner_has_run_no_cycle_and_counts_every_cycle_of_a_batch() -> None:
    runner = Runner.over(_engine())
    assert runner.cycles == 0
    assert runner.run_cycles(7) == 7
    assert runner.cycles == 7
    runner.step()
    assert runner.cycles == 8


def test_the_loop_thread_gets_the_name_it_was_given() -> None:
    runner = Runner.over(_engine(), name="sim-loop")
    assert runner.name == "sim-loop"


# ----------------------------------------------------------------------------- batches


def test_quiet_cycles_go_in_batches_up_to_each_publication_under_a_budget() -> None:
    """The measured wall time per cycle caps a batch by the budget, not to one cycle."""
    backend = _engine(period=0.0625)
    listener = Publisher(every=0.5)  # a publication every 8 cycles
    runner = Runner.over(backend, listener=listener)
    assert runner.run_cycles(32, budget=60.0) == 32
    assert [count for _, count in listener.cycles] == [8, 8, 8, 8]
    assert [now for now, _ in listener.cycles] == [0.5, 1.0, 1.5, 2.0]
    assert listener.flushes == 1  # once, at the end of the call


def test_a_spent_budget_still_runs_one_cycle_and_only_one() -> None:
    backend = _engine()
    listener = Publisher()
    runner = Runner.over(backend, listener=listener)
    assert runner.run_cycles(100, budget=0.0) == 1
    assert listener.cycles == [(0.125, 1)]


def test_a_batch_ends_before_the_cycle_on_which_the_command_timeout_fires() -> None:
    """The timeout acts on its own cycle (a core cycle), exactly at its expiry."""
    backend = _engine()
    listener = Publisher()
    runner = Runner.over(backend, command_timeout=1.0, listener=listener)
    assert runner.core.command(CommandKind.POSITION, ["a"], [0.5]).ok  # at 0: expires at 1
    assert runner.core.quiet_until() == 1.0
    runner.run_cycles(12)
    # 7 quiet cycles (to 0.875), the cycle ending at 1.0 alone, then quiet again.
    assert [count for _, count in listener.cycles][:2] == [7, 1]
    assert listener.cycles[1][0] == 1.0
    assert backend.timeouts == [1.0]
    assert runner.core.timeout_tripped


def test_a_batch_takes_every_quiet_cycle_before_the_one_that_may_act() -> None:
    backend = _engine()
    listener = Publisher()
    runner = Runner.over(backend, command_timeout=2.0, listener=listener)
    runner.core.command(CommandKind.POSITION, ["a"], [0.5])  # expires at 2.0: 16 cycles
    assert runner._batch_size(100) == 15  # up to 1.875; the 16th, at 2.0, may act
    assert runner._batch_size(10) == 10  # fewer asked: all of them
    runner.core.set_command_timeout(0.0)
    assert runner._batch_size(100) == 100  # nothing to act on: every cycle asked


# ----------------------------------------------------------------------------- waiting


class RecordingPacer(GridPacer):
    """A grid pacer that records what the runner asks it."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.asked: list[tuple[float, float]] = []

    def wait(self, now: float, period: float) -> float:
        self.asked.append((now, period))
        return super().wait(now, period)


def test_the_hardware_loop_waits_for_the_pacers_next_deadline_at_its_period() -> None:
    clock = FakeClock()
    backend = _hardware()
    backend.period = 0.25
    backend.now = clock  # type: ignore[method-assign] - the hardware's clock
    pacer = RecordingPacer(clock)
    runner = Runner(Runner.over(backend).core, pacer)
    pacer.anchor(clock.now)
    assert pacer.due(clock.now, backend.period) == 1
    clock.now += 0.0625
    assert runner._until_work() == 0.1875
    assert pacer.asked == [(100.0625, 0.25)]


# ----------------------------------------------------------------------------- serving


def test_a_wake_is_served_at_the_backends_time_and_heard_when_something_changed() -> None:
    backend = _engine()
    backend.time = 3.0
    served: list[float] = []

    def serve(now: float) -> bool:
        served.append(now)
        return True

    backend.serve = serve  # type: ignore[method-assign]
    listener = Publisher()
    runner = Runner.over(backend, listener=listener)
    runner._serve()
    assert served == [3.0]
    assert listener.cycles == [(3.0, 0)]  # 0 cycles: the backend served a wake
    assert listener.flushes == 1


def test_a_wake_with_nothing_to_serve_tells_the_listener_nothing() -> None:
    listener = Publisher()
    runner = Runner.over(_engine(), listener=listener)  # the base class serves nothing
    runner._serve()
    assert listener.cycles == []


def test_a_failing_serve_reaches_the_listener_and_pauses_the_loop() -> None:
    backend = _engine()
    problem = RuntimeError("the bus is gone")

    def serve(now: float) -> bool:
        raise problem

    backend.serve = serve  # type: ignore[method-assign]
    listener = Publisher()
    runner = Runner.over(backend, listener=listener)
    runner._serve()
    assert listener.errors == [problem]
    assert runner.paused


# ----------------------------------------------------------------------------- catching up


def _sleeping_engine(clock: FakeClock, listener: Publisher) -> tuple[Runner, NumpyBackend]:
    """An engine's runner whose loop sleeps ahead of its schedule (as its thread would)."""
    backend = _engine(period=0.001)
    runner = Runner.over(backend, clock=clock, listener=listener)
    runner.pacer.anchor(0.0)
    runner._asleep = True
    return runner, backend


def test_a_cycle_failing_while_a_taker_catches_up_reaches_the_listener_and_pauses() -> None:
    clock = FakeClock()
    listener = Publisher()
    runner, backend = _sleeping_engine(clock, listener)
    problem = RuntimeError("the world blew up")

    def sense(now: float) -> None:
        raise problem

    backend.sense = sense  # type: ignore[method-assign]
    clock.now += 0.0015  # one cycle due
    with runner.lock:
        pass
    assert listener.errors == [problem]
    assert runner.paused


def test_only_an_engine_paced_in_real_time_catches_up_when_the_lock_is_taken() -> None:
    """Hardware paced by wall deadlines: a thread taking the lock runs no cycle."""
    clock = FakeClock()
    backend = _hardware()
    backend.period = 0.001
    listener = Publisher()
    pacer = RealTimePacer(1.0, clock=clock)
    runner = Runner(Runner.over(backend).core, pacer, listener=listener)
    pacer.anchor(0.0)
    runner._asleep = True
    clock.now += 0.0055
    with runner.lock:
        pass
    assert listener.cycles == []
    assert runner.cycles == 0


# ----------------------------------------------------------------------------- stopping


def test_stop_returns_once_the_loop_thread_has_ended() -> None:
    runner = Runner.over(_engine(), real_time_factor=0.0)
    runner.start()
    thread = runner._thread
    assert thread is not None
    runner.stop()
    assert not thread.is_alive()
    assert not runner.running


def test_stop_gives_up_on_a_stuck_loop_after_its_timeout() -> None:
    release = threading.Event()
    entered = threading.Event()

    class Stuck(Publisher):
        def after_cycles(self, now: float, count: int) -> None:  # noqa: ARG002 - the listener's signature
            entered.set()
            release.wait(5.0)

    runner = Runner.over(_engine(), real_time_factor=0.0, listener=Stuck())
    runner.start()
    try:
        assert entered.wait(30.0)
        thread = runner._thread
        assert thread is not None
        runner.stop(timeout=0.01)  # returns, though the loop is stuck in its listener
        assert thread.is_alive()
        assert not runner.running
    finally:
        release.set()
        if thread is not None:
            thread.join(30.0)


@pytest.mark.parametrize("factor", [1.0, 0.0])
def test_a_runner_without_a_thread_stops_quietly(factor: float) -> None:
    runner = Runner.over(_engine(), real_time_factor=factor)
    runner.stop()
    runner.stop()
    assert not runner.running


def test_a_runner_says_its_default_name_and_its_core_uses_the_log_given() -> None:
    from skel_ros.core.log import LoggingLog

    log = LoggingLog(__import__("logging").getLogger("test.runner"))
    runner = Runner.over(_engine(), log=log, max_start_delay=2.0)
    assert runner.name == "skel_ros-loop"
    assert runner.core.log is log
    assert runner.core.max_start_delay == 2.0


def test_an_engine_loop_behind_its_schedule_does_not_sleep() -> None:
    clock = FakeClock()
    listener = Publisher()  # no event: it would sleep until the next cycle is due
    runner, _ = _sleeping_engine(clock, listener)
    runner._asleep = False
    clock.now += 5.0  # far behind: the next cycle is due already
    assert runner._until_work() == 0.0


def test_a_real_time_pacer_starts_not_lagging_and_reanchors_when_the_clock_goes_back() -> None:
    clock = FakeClock()
    pacer = RealTimePacer(2.0, clock=clock, max_lag=0.5)
    assert pacer.lagging is False
    pacer.anchor(10.0)
    clock.now += 0.25  # simulated time 10.5 is due at twice the wall rate
    assert pacer.due(10.0, 0.25) == 2
    # The wall clock steps back 0.75 s before the anchor: more than a step's wall time
    # (0.25 / 2 = 0.125 s) plus max_lag (0.5 s) ahead of the schedule.
    clock.now -= 1.0
    assert pacer.due(10.0, 0.25) == 0
    clock.now += 0.125
    assert pacer.due(10.0, 0.25) == 1  # the schedule restarted at the present
