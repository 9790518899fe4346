"""The robot core over a numpy test-double backend: arbitration, gate, follower, timeout.

The cycle here is the simulation's: ``core.cycle(t + dt)`` for the time the step ends
at, then the step. Every expectation is exact (the double moves as told).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from numpy_backend import NumpyBackend

from skel_ros.core import CommandRefused, FollowOutcome, RobotCore
from skel_ros.model.limits import CommandKind
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from collections.abc import Sequence

DT = 0.01
P, V = CommandKind.POSITION, CommandKind.VELOCITY


class Recorder:
    """An observer that records and answers as told."""

    def __init__(self, decide=None) -> None:
        self.cycles: list[tuple[float, float, tuple[str, ...], np.ndarray, np.ndarray,
                                np.ndarray, np.ndarray | None]] = []
        self.ends: list[tuple[float, FollowOutcome, str]] = []
        self.decide = decide

    def on_cycle(self, now: float, elapsed: float, names: Sequence[str],
                 desired: tuple[np.ndarray, np.ndarray],
                 actual: tuple[np.ndarray, np.ndarray | None]) -> tuple[FollowOutcome, str] | None:
        self.cycles.append((now, elapsed, tuple(names), desired[0], desired[1], actual[0],
                            actual[1]))
        return self.decide(now, elapsed, desired, actual) if self.decide else None

    def on_end(self, now: float, outcome: FollowOutcome, message: str) -> None:
        self.ends.append((now, outcome, message))


def ramp(names: Sequence[str] = ("a", "b"), to: float = 0.5, duration: float = 0.1,
         ) -> PointTrajectory:
    return PointTrajectory(names, [TrajectoryPoint(duration, tuple([to] * len(names)))],
                           [0.0] * len(names))


def run(core: RobotCore, backend: NumpyBackend, steps: int) -> None:
    for _ in range(steps):
        core.cycle(backend.time + DT)
        backend.step(DT)


@pytest.fixture
def rig() -> tuple[RobotCore, NumpyBackend]:
    backend = NumpyBackend()
    return RobotCore(backend), backend


# ---------------------------------------------------------------- commands and the gate

def test_command_is_gated_clamped_and_written(rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    result = core.command(P, ["a", "b"], [0.5, 3.0])
    assert result.ok
    assert [(c.name, c.requested, c.applied) for c in result.clamped] == [("b", 3.0, 1.0)]
    assert "clamped" in result.message
    assert backend.writes == [(0.0, P, ("a", "b"), (0.5, 1.0))]


@pytest.mark.parametrize(("kind", "names", "values", "why"), [
    (P, ["a", "zz"], [0.0, 0.0], "zz"),
    (P, ["a"], [math.nan], "a"),
    (P, ["a", "a"], [0.0, 0.0], "a"),
    (P, ["c"], [0.0], "takes velocity commands, not position"),
])
def test_bad_commands_are_refused_whole(rig: tuple[RobotCore, NumpyBackend], kind: CommandKind,
                                        names: list[str], values: list[float], why: str) -> None:
    core, backend = rig
    result = core.command(kind, names, values)
    assert not result.ok
    assert why in result.message
    assert backend.writes == []


def test_commands_are_refused_while_the_backend_refuses_motion(
        rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    backend.refused = "motion is not enabled (state disabled)"
    result = core.command(P, ["a"], [0.1])
    assert not result.ok
    assert result.message == "position command ignored: motion is not enabled (state disabled)"
    with pytest.raises(CommandRefused, match="not enabled"):
        core.follow(ramp())
    assert backend.writes == []


# ---------------------------------------------------------------- following

def test_trajectory_is_sampled_every_cycle_and_ends_at_its_last_point(
        rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    trajectory = ramp(duration=0.1)
    core.follow(trajectory)
    assert core.following
    run(core, backend, 5)
    # Each cycle writes the sample for the time its step ends at.
    for k, (now, kind, names, values) in enumerate(backend.writes, start=1):
        assert now == pytest.approx(k * DT)
        assert kind is P and names == ("a", "b")
        assert values == pytest.approx(tuple(trajectory.sample(k * DT)[0]))
    run(core, backend, 10)
    assert not core.following  # past its end: done, no observer to ask
    assert backend.q[:2] == pytest.approx([0.5, 0.5])
    assert backend.mode[0] is P  # the last point stays held


def test_observer_sees_every_cycle_and_decides_the_end(
        rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig

    def decide(now, elapsed, desired, actual):
        if elapsed > 0.205:  # after the end (0.1 s): the goal tolerance holds
            return FollowOutcome.SUCCEEDED, "at the goal"
        return None

    observer = Recorder(decide)
    core.follow(ramp(duration=0.1), observer=observer)
    run(core, backend, 30)
    assert not core.following
    assert observer.ends == [(pytest.approx(0.21), FollowOutcome.SUCCEEDED, "at the goal")]
    # Held past the last point and asked every cycle until it decided.
    assert len(observer.cycles) == 21
    now, elapsed, names, dq, dv, aq, av = observer.cycles[4]
    assert (now, elapsed, names) == (pytest.approx(0.05), pytest.approx(0.05), ("a", "b"))
    assert dq == pytest.approx([0.25, 0.25])
    assert dv == pytest.approx([5.0, 5.0])
    assert aq == pytest.approx([0.2, 0.2])  # measured before the step that ends at `now`
    assert av is not None
    assert observer.cycles[-1][3] == pytest.approx([0.5, 0.5])  # the last point, held
    assert backend.writes[-1][3] == pytest.approx((0.5, 0.5))
    run(core, backend, 3)
    assert len(observer.cycles) == 21 and len(observer.ends) == 1


def test_unknown_velocities_reach_the_observer_as_none(
        rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    backend.velocity_known = False
    observer = Recorder()
    core.follow(ramp(), observer=observer)
    run(core, backend, 1)
    assert observer.cycles[0][6] is None


def test_observer_abort_holds_the_measured_positions(
        rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig

    def decide(now, elapsed, desired, actual):
        return (FollowOutcome.ABORTED, "path tolerance") if elapsed >= 0.03 - 1e-9 else None

    observer = Recorder(decide)
    core.follow(ramp(duration=0.1), observer=observer)
    run(core, backend, 10)
    assert observer.ends == [(pytest.approx(0.03), FollowOutcome.ABORTED, "path tolerance")]
    assert backend.holds == [("a", "b")]
    assert backend.q[:2] == pytest.approx([0.1, 0.1])  # held where it was measured


def test_a_failing_observer_aborts_without_stopping_the_loop(
        rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig

    def decide(*_args: object) -> None:
        raise RuntimeError("boom")

    observer = Recorder(decide)
    core.follow(ramp(), observer=observer)
    run(core, backend, 3)
    assert [e[1] for e in observer.ends] == [FollowOutcome.ABORTED]
    assert "boom" in observer.ends[0][2]
    assert not core.following


def test_a_newer_trajectory_preempts(rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    first, second = Recorder(), Recorder()
    core.follow(ramp(), observer=first)
    run(core, backend, 2)
    core.follow(ramp(("b",), to=-0.5), observer=second)
    assert [e[1] for e in first.ends] == [FollowOutcome.PREEMPTED]
    assert second.ends == []
    run(core, backend, 1)
    assert backend.writes[-1][2] == ("b",)


def test_a_command_for_its_joints_takes_over(rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    observer = Recorder()
    core.follow(ramp(("a", "b")), observer=observer)
    run(core, backend, 2)
    assert core.command(V, ["c"], [0.1]).ok  # another joint: the trajectory goes on
    assert core.following and observer.ends == []
    assert core.command(P, ["b"], [0.0]).ok
    assert not core.following
    assert [e[1] for e in observer.ends] == [FollowOutcome.TAKEN_OVER]


def test_cancel_holds_and_stop_does_not(rig: tuple[RobotCore, NumpyBackend]) -> None:
    core, backend = rig
    assert not core.cancel_trajectory()
    observer = Recorder()
    core.follow(ramp(), observer=observer)
    run(core, backend, 2)
    assert core.cancel_trajectory()
    assert [e[1] for e in observer.ends] == [FollowOutcome.CANCELED]
    assert backend.holds == [("a", "b")]
    stopped = Recorder()
    core.follow(ramp(), observer=stopped)
    assert core.stop_trajectory("emergency stop")
    assert stopped.ends == [(0.02, FollowOutcome.STOPPED, "emergency stop")]
    assert backend.holds == [("a", "b")]  # no hold: the backend stopped the joints itself
    assert not core.stop_trajectory("again")


@pytest.mark.parametrize(("names", "why"), [
    (("a", "zz"), "zz"),
    (("c",), "takes velocity commands, not position"),
])
def test_trajectories_the_joints_cannot_follow_are_refused(
        rig: tuple[RobotCore, NumpyBackend], names: tuple[str, ...], why: str) -> None:
    core, _ = rig
    with pytest.raises(CommandRefused, match=why) as info:
        core.follow(ramp(names))
    assert info.value.reason.startswith("trajectory rejected: ")
    assert not core.following


def test_a_start_too_far_ahead_is_refused() -> None:
    backend = NumpyBackend()
    core = RobotCore(backend, max_start_delay=5.0)
    with pytest.raises(CommandRefused, match="max_start_delay") as info:
        core.follow(ramp(), start=3600.0)
    assert info.value.key == "trajectory starts too late"
    core.follow(ramp(), start=2.0)
    run(core, backend, 3)
    assert backend.q[:2] == pytest.approx([0.0, 0.0])  # waits at its start
    assert core.start_positions(["a", "b"]) == pytest.approx([0.0, 0.0])


def test_samples_outside_the_limits_are_clamped_and_said_once(
        rig: tuple[RobotCore, NumpyBackend], caplog: pytest.LogCaptureFixture) -> None:
    core, backend = rig
    core.follow(ramp(("a",), to=3.0, duration=0.1))
    with caplog.at_level("WARNING", logger="skel_ros.core"):
        run(core, backend, 20)
    assert backend.q[0] == pytest.approx(1.0)
    lines = [r.getMessage() for r in caplog.records if "leaves the limits" in r.getMessage()]
    assert len(lines) == 1 and "'a'" in lines[0]


# ---------------------------------------------------------------- timeout

def test_timeout_fires_once_after_the_last_command() -> None:
    backend = NumpyBackend()
    core = RobotCore(backend, command_timeout=0.05)
    core.restart_timeout(0.0)
    core.command(P, ["a"], [0.2])
    run(core, backend, 4)
    assert backend.timeouts == []
    run(core, backend, 1)  # 0.05 s after the command
    assert backend.timeouts == [pytest.approx(0.05)]
    assert core.timeout_tripped
    assert backend.mode == [None, None, None]  # the double's safe state: commands dropped
    run(core, backend, 10)
    assert len(backend.timeouts) == 1  # once per expiry
    core.command(P, ["a"], [0.2])
    assert not core.timeout_tripped


def test_a_trajectory_feeds_the_timeout_until_its_end() -> None:
    backend = NumpyBackend()
    core = RobotCore(backend, command_timeout=0.05)
    core.restart_timeout(0.0)
    core.follow(ramp(duration=0.2))
    run(core, backend, 20)
    assert backend.timeouts == []
    run(core, backend, 10)
    # It ended in the first cycle past 0.2 s; the timeout counts from there.
    assert backend.timeouts == [pytest.approx(0.25, abs=0.011)]


def test_zero_timeout_never_fires_and_disarm_stops_it() -> None:
    backend = NumpyBackend()
    core = RobotCore(backend)
    core.restart_timeout(0.0)
    run(core, backend, 100)
    assert backend.timeouts == []
    core.set_command_timeout(0.02)
    core.disarm_timeout()
    run(core, backend, 10)
    assert backend.timeouts == []
    with pytest.raises(ValueError, match="NaN"):
        core.set_command_timeout(math.nan)


def test_quiet_until_says_when_a_cycle_can_act() -> None:
    """Cycles before quiet_until() change nothing; the one at it is where the timeout fires."""
    backend = NumpyBackend()
    core = RobotCore(backend)
    assert core.quiet_until() == math.inf  # no timeout, no trajectory
    core.set_command_timeout(0.05, 0.0)
    assert core.quiet_until() == pytest.approx(0.05)
    core.command(P, ["a"], [0.2])  # at the backend's time 0: the expiry stays 0.05
    run(core, backend, 3)
    core.command(P, ["a"], [0.2])  # fed at 0.03: expiry 0.08
    assert core.quiet_until() == pytest.approx(0.08)
    run(core, backend, 4)  # cycles at 0.04 .. 0.07, before it: nothing happens
    assert backend.timeouts == []
    run(core, backend, 1)
    assert backend.timeouts == [pytest.approx(0.08)]
    assert core.quiet_until() == math.inf  # fired: quiet until the next command
    core.follow(ramp(duration=0.05))
    assert core.quiet_until() == -math.inf  # a trajectory: every cycle samples it
    run(core, backend, 7)
    assert not core.following
    assert core.quiet_until() == pytest.approx(backend.time + 0.05 - DT)  # fed by its last cycle
    core.disarm_timeout()
    assert core.quiet_until() == math.inf
