"""The simulation node's real-time pacing and parameter checks (no node is started)."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


# ----------------------------------------------------------------------------- pacing


def test_pacer_follows_wall_time_times_the_factor_without_drift() -> None:
    from skel_ros.nodes.sim_node import RealTimePacer

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
    from skel_ros.nodes.sim_node import RealTimePacer

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


def test_parameter_checks() -> None:
    from skel_ros.nodes.sim_node import check_parameter

    assert check_parameter("real_time_factor", 3) == (3.0, "")
    assert check_parameter("real_time_factor", 0.0) == (0.0, "")
    assert "must be in [0, 1000]" in check_parameter("real_time_factor", math.inf)[1]
    assert "must be a number" in check_parameter("tf_rate", True)[1]
    assert "(0, 10000] Hz" in check_parameter("joint_states_rate", 20000.0)[1]
    assert "finite and >= 0" in check_parameter("command_timeout", -0.5)[1]
    assert "must be a bool" in check_parameter("paused", "yes")[1]


# ----------------------------------------------------------------------------- engine lock


def test_engine_lock_is_reentrant_and_says_when_another_thread_waits() -> None:
    import threading
    import time

    from skel_ros.nodes.sim_node import _EngineLock

    lock = _EngineLock()
    entered = threading.Event()

    def callback() -> None:
        with lock:
            entered.set()

    with lock:
        with lock:  # reentrant: the stepping thread publishes under it
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
