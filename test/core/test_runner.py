"""The runner: the loop owner over any backend (pacing, cycles, lifecycle, listener).

Over the suite's numpy backend (no engine, no bus): the cycle order, batches of quiet
engine cycles, the grid pacer's deadlines and overruns, the real-time pacer, the lock,
the lifecycle through the seam, and a listener's bug that must not stop the loop.
"""

from __future__ import annotations

import math
import threading
import time

import pytest
from numpy_backend import NumpyBackend

from skel_ros.core import Capabilities, GridPacer, Runner
from skel_ros.model.limits import CommandKind


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Listener:
    """Records what a runner tells it."""

    def __init__(self, next_event: float = math.inf) -> None:
        self.event = next_event
        self.cycles: list[tuple[float, int]] = []
        self.flushes = 0
        self.raise_in_cycles = False

    def next_event(self) -> float:
        return self.event

    def after_cycles(self, now: float, count: int) -> None:
        self.cycles.append((now, count))
        if self.raise_in_cycles:
            raise RuntimeError("a listener's bug")

    def flush(self) -> None:
        self.flushes += 1

    def on_lagging(self) -> None:
        pass

    def on_error(self, exc: Exception) -> bool:  # noqa: ARG002
        return True


# ----------------------------------------------------------------------------- pacing


def test_pacer_follows_wall_time_times_the_factor_without_drift() -> None:
    from skel_ros.core import RealTimePacer

    clock = FakeClock()
    pacer = RealTimePacer(2.0, clock=clock)
    pacer.anchor(0.0)
    sim, dt = 0.0, 0.001
    assert pacer.due(sim, dt) == 0
    assert pacer.wait(sim, dt) == pytest.approx(0.0005)
    # Wake up late, many times, by odd amounts: the schedule never slips.
    for _ in range(1000):
        clock.now += 0.0013
        n = pacer.due(sim, dt)
        sim += n * dt
    assert sim == pytest.approx(2.0 * 1.3, abs=dt)


def test_pacer_reanchors_when_the_world_is_too_slow_and_runs_flat_out_at_zero() -> None:
    from skel_ros.core import RealTimePacer

    clock = FakeClock()
    pacer = RealTimePacer(1.0, clock=clock, max_lag=0.25)
    pacer.anchor(0.0)
    clock.now += 1.0  # a second behind schedule
    assert pacer.due(0.0, 0.001) == 1
    assert pacer.lagging
    clock.now += 0.01
    # From the new anchor, not 1000 to catch up; the one step it allowed was due at once.
    assert pacer.due(0.001, 0.001) == 10
    assert not pacer.lagging
    pacer.anchor(0.0, factor=0.0)
    assert pacer.due(0.0, 0.001) > 10**6
    assert pacer.wait(0.0, 0.001) == 0.0


def test_grid_pacer_keeps_its_grid_and_counts_overruns() -> None:
    clock = FakeClock()
    pacer = GridPacer(clock)
    pacer.anchor(clock.now)
    assert pacer.due(clock.now, 0.01) == 1  # the first cycle is due at once
    assert pacer.due(clock.now, 0.01) == 0
    assert pacer.wait(clock.now, 0.01) == pytest.approx(0.01)
    clock.now += 0.0105  # woke a little late: the next deadline stays on the grid
    assert pacer.due(clock.now, 0.01) == 1
    assert pacer.wait(clock.now, 0.01) == pytest.approx(0.0095)
    clock.now += 0.035  # a cycle that ran 3.5 periods: the deadlines missed are skipped
    assert pacer.wait(clock.now, 0.01) == pytest.approx(0.0045)  # on the grid: 100.05
    assert pacer.overruns == 1


# ----------------------------------------------------------------------------- cycles


def test_a_cycle_senses_then_runs_the_core_then_actuates() -> None:
    backend = NumpyBackend()
    calls: list[str] = []
    sense, actuate = backend.sense, backend.actuate
    backend.sense = lambda now: (calls.append(f"sense {now:.2f}"), sense(now))[1]  # type: ignore[method-assign]
    backend.actuate = lambda now, count=1: (calls.append(f"actuate {count}"),  # type: ignore[method-assign]
                                            actuate(now, count))[1]
    runner = Runner.over(backend)
    cycle = runner.core.cycle
    runner.core.cycle = lambda now: (calls.append(f"core {now:.2f}"), cycle(now))[1]  # type: ignore[method-assign]
    runner.cycle()
    assert calls == ["sense 0.01", "core 0.01", "actuate 1"]
    backend.refused = "power off"  # a refusing backend: no core cycle
    calls.clear()
    runner.cycle()
    assert calls == ["sense 0.02", "actuate 1"]


def test_quiet_engine_cycles_go_in_batches_up_to_the_next_event() -> None:
    backend = NumpyBackend()
    backend.period = 0.01
    listener = Listener(next_event=0.1)
    runner = Runner.over(backend, listener=listener)
    assert runner.run_cycles(25) == 25
    # Up to the event at 0.1 s in one batch (10 cycles), then the rest.
    assert listener.cycles[0] == (pytest.approx(0.1), 10)
    assert sum(count for _, count in listener.cycles) == 25
    assert listener.flushes == 1
    # A trajectory: every cycle samples it, one at a time.
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    runner.core.follow(PointTrajectory(["a"], [TrajectoryPoint(0.05, (0.5,))], [0.0]))
    listener.cycles.clear()
    listener.event = math.inf
    runner.run_cycles(5)
    assert [count for _, count in listener.cycles] == [1] * 5


def test_a_backend_without_its_own_clock_runs_one_cycle_at_a_time() -> None:
    backend = NumpyBackend()
    backend.capabilities = Capabilities(command_modes=backend.capabilities.command_modes)
    listener = Listener()
    runner = Runner(Runner.over(backend).core, GridPacer(backend.now), listener=listener)
    runner.run_cycles(4)
    assert [count for _, count in listener.cycles] == [1] * 4


def test_a_listener_bug_is_said_once_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture,
                                                          ) -> None:
    listener = Listener()
    listener.raise_in_cycles = True
    runner = Runner.over(NumpyBackend(), listener=listener)
    with caplog.at_level("ERROR", logger="skel_ros.core"):
        assert runner.run_cycles(3) == 3
    assert sum("listener failed" in r.getMessage() for r in caplog.records) == 1


# ----------------------------------------------------------------------------- lifecycle


def test_the_lifecycle_goes_through_the_seam_and_the_loop_runs_in_its_thread() -> None:
    backend = NumpyBackend()
    calls: list[str] = []
    for name in ("configure", "activate", "deactivate", "close"):
        method = getattr(backend, name)
        setattr(backend, name, lambda m=method, n=name: (calls.append(n), m())[1])
    runner = Runner.over(backend, command_timeout=1.0, real_time_factor=0.0)
    runner.configure()
    assert runner.running
    deadline = time.monotonic() + 30.0
    while runner.cycles < 50 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert runner.cycles >= 50  # the loop thread steps it
    runner.activate()
    assert runner.core.command(CommandKind.POSITION, ["a"], [0.5]).ok
    runner.deactivate()
    runner.cleanup()
    assert not runner.running
    assert calls == ["configure", "activate", "deactivate", "close"]
    stopped = runner.cycles
    time.sleep(0.05)
    assert runner.cycles == stopped


def test_a_stop_while_the_loop_thread_starts_neither_raises_nor_leaves_it_running(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop that lands while ``start`` starts the thread (a SIGINT's handler runs in the
    main thread between two bytecodes: a node stopped while it starts): it joined the
    thread before it was started (``RuntimeError: cannot join thread before it is
    started``, seen once as a sim_node's exit status 1). Now the stop takes, and the loop
    ends at once."""
    runner = Runner.over(NumpyBackend(), real_time_factor=0.0)
    real_start = threading.Thread.start

    def start_with_a_stop_in_between(thread: threading.Thread) -> None:
        if thread.name == runner.name:
            runner.stop()  # what the signal handler would do at this instant
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start_with_a_stop_in_between)
    runner.start()
    monkeypatch.undo()
    runner.stop()
    assert not runner.running
    stopped = runner.cycles
    time.sleep(0.05)
    assert runner.cycles == stopped  # the stop was not lost: no loop runs


def test_a_wake_from_the_backend_is_served_between_cycles() -> None:
    backend = NumpyBackend()
    served = threading.Event()
    backend.serve = lambda _now: (served.set(), True)[1]  # type: ignore[method-assign]
    backend.capabilities = Capabilities(command_modes=backend.capabilities.command_modes)
    backend.period = 10.0  # a cycle every 10 s: only a wake serves it sooner
    backend.now = time.monotonic  # type: ignore[method-assign] - a wall clock, as hardware
    runner = Runner.over(backend)
    runner.start()
    try:
        time.sleep(0.05)
        backend._wake_loop()
        assert served.wait(30.0)
    finally:
        runner.stop()


# ----------------------------------------------------------------------------- the lock


def test_loop_lock_is_reentrant_and_says_when_another_thread_waits() -> None:
    import threading
    import time

    from skel_ros.core import ContendedLock

    lock = ContendedLock()
    entered = threading.Event()

    def callback() -> None:
        with lock:
            entered.set()

    with lock:
        with lock:  # reentrant: the loop publishes under it
            assert not lock.contended  # the holder alone
        waiter = threading.Thread(target=callback)
        waiter.start()
        for _ in range(1000):  # until the callback waits (no wall-clock assertion)
            if lock.contended:
                break
            time.sleep(0.01)
        assert lock.contended
        assert not entered.is_set()
    waiter.join(timeout=30.0)
    assert entered.is_set()
    assert not lock.contended


# ----------------------------------------------------------------------------- wake-ups


def test_an_engine_loop_sleeps_until_its_next_event_then_takes_every_cycle_due() -> None:
    """Ahead of its schedule an engine's loop sleeps until the cycle of its next event."""
    from skel_ros.core.runner import _MIN_SLEEP

    clock = FakeClock()
    backend = NumpyBackend()
    backend.period = 0.001
    listener = Listener(next_event=0.010)
    runner = Runner.over(backend, clock=clock, listener=listener)
    runner.pacer.anchor(0.0)
    assert runner._until_work() == pytest.approx(0.010)  # the 10th cycle's, not the next's
    listener.event = 0.001  # an event on the next cycle: at least _MIN_SLEEP (two a wake)
    assert runner._until_work() == pytest.approx(_MIN_SLEEP)
    listener.event = 0.010
    clock.now += 0.0104  # woken late: the ten cycles due, up to the event
    runner._take_due()
    assert sum(count for _, count in listener.cycles) == 10
    assert listener.cycles[-1][0] == pytest.approx(0.010)
    listener.event = 0.020
    assert runner._until_work() == pytest.approx(0.0096)  # until the 20th cycle is due


def test_a_thread_taking_the_lock_while_the_loop_sleeps_first_runs_the_cycles_due() -> None:
    """A command handed in between two events acts from the cycle due when it came."""
    clock = FakeClock()
    backend = NumpyBackend()
    backend.period = 0.001
    listener = Listener(next_event=1000.0)  # the loop sleeps (almost) for ever
    runner = Runner.over(backend, clock=clock, listener=listener)
    runner.start()
    try:
        for _ in range(3000):  # until the loop sleeps (no wall-clock assertion)
            if runner._asleep:
                break
            time.sleep(0.01)
        assert runner._asleep
        assert backend.now() == 0.0
        clock.now += 0.0052  # five cycles are due
        assert runner.core.command(CommandKind.POSITION, ["a"], [0.5]).ok
        assert backend.writes[-1][0] == pytest.approx(0.005)  # after them, not at 0
        assert sum(count for _, count in listener.cycles) == 5
        runner.paused = True  # paused: a taker runs nothing
        clock.now += 0.01
        with runner.lock:
            assert backend.now() == pytest.approx(0.005)
    finally:
        runner.stop()
