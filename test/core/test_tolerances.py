"""joint_trajectory_controller's goal rules (skel_ros.core.tolerances), without ROS."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy_backend import NumpyBackend  # type: ignore[import-not-found]  # test/core

from skel_ros.core import FollowOutcome, RobotCore
from skel_ros.core.tolerances import (
    ErrorCode,
    GoalError,
    GoalMonitor,
    GoalPoint,
    StateTolerance,
    ToleranceRequest,
    Tolerances,
    check_arrival,
    check_goal,
    check_start,
    query_state,
)
from skel_ros.trajectory import PointTrajectory, TrajectoryPoint

JOINTS = ("a", "b")


def _refused(code: ErrorCode, *args: object, **kwargs: object) -> str:
    with pytest.raises(GoalError) as info:
        check_goal(*args, **kwargs)  # type: ignore[arg-type]
    assert info.value.code is code
    return info.value.reason


# ------------------------------------------------------------------ goal validation

def test_a_valid_goal_passes() -> None:
    check_goal(["b", "a"], [GoalPoint(0.5, [0.1, 0.2]),
                            GoalPoint(1.0, [0.2, 0.3], [0.0, 0.0], [0.0, 0.0])], JOINTS)


@pytest.mark.parametrize(("names", "words"), [
    ([], "no joints"),
    (["a", "z"], "'z' is not a joint"),
    (["a", "a"], "appears twice"),
    (["a"], "leaves out 'b'"),
])
def test_joint_names_are_invalid_joints(names: list[str], words: str) -> None:
    points = [GoalPoint(1.0, [0.0] * len(names))]
    assert words in _refused(ErrorCode.INVALID_JOINTS, names, points, JOINTS)


def test_partial_goals_when_allowed() -> None:
    check_goal(["a"], [GoalPoint(1.0, [0.0])], JOINTS, allow_partial=True)


@pytest.mark.parametrize(("points", "words"), [
    ([], "no points"),
    ([GoalPoint(1.0, [0.0])], "1 positions for 2 joint(s)"),
    ([GoalPoint(1.0, [0.0, 0.0], [0.0])], "1 velocities"),
    ([GoalPoint(1.0, [0.0, math.nan])], "'b' is nan"),
    ([GoalPoint(1.0, [0.0, 0.0]), GoalPoint(1.0, [0.1, 0.1])], "not after point 0"),
    ([GoalPoint(1.0, [0.0, 0.0]), GoalPoint(0.5, [0.1, 0.1])], "strictly increasing"),
    ([GoalPoint(-1.0, [0.0, 0.0])], "not >= 0"),
    ([GoalPoint(1.0, [0.0, 0.0], (), [0.0, 0.0])], "accelerations but no velocities"),
    ([GoalPoint(1.0, [0.0, 0.0], (), (), [1.0, 1.0])], "effort"),
    ([GoalPoint(1.0, [0.0, 0.0], [0.0, 0.5])], "velocity of 'b' is 0.5, not 0"),
])
def test_bad_points_are_invalid_goals(points: list[GoalPoint], words: str) -> None:
    assert words in _refused(ErrorCode.INVALID_GOAL, list(JOINTS), points, JOINTS)


def test_nonzero_end_velocity_when_allowed() -> None:
    check_goal(list(JOINTS), [GoalPoint(1.0, [0.0, 0.0], [0.0, 0.5])], JOINTS,
               allow_nonzero_end_velocity=True)


def test_positions_go_through_the_limits_gate() -> None:
    seen = []

    def gate(names: object, q: np.ndarray) -> str:
        seen.append(q.tolist())
        return "'b' 2 beyond its limits [-1, 1]" if abs(q[1]) > 1.0 else ""

    reason = _refused(ErrorCode.INVALID_GOAL, list(JOINTS),
                      [GoalPoint(1.0, [0.0, 0.5]), GoalPoint(2.0, [0.0, 2.0])], JOINTS,
                      check_positions=gate)
    assert reason == "point 1: 'b' 2 beyond its limits [-1, 1]"
    assert seen == [[0.0, 0.5], [0.0, 2.0]]


@pytest.mark.parametrize(("names", "points", "code", "words"), [
    ([], [GoalPoint(1.0, [])], ErrorCode.INVALID_JOINTS, "no joints"),
    (["a", "z"], [GoalPoint(1.0, [0.0, 0.0])], ErrorCode.INVALID_JOINTS, "'z' is not a joint"),
    (["a"], [GoalPoint(1.0, [0.0])], ErrorCode.INVALID_JOINTS, "leaves out 'b'"),
    (["a", "b", "a"], [GoalPoint(1.0, [0.0] * 3)], ErrorCode.INVALID_JOINTS, "appears twice"),
    (["a", "b"], [], ErrorCode.INVALID_GOAL, "no points"),
    (["a", "b"], [GoalPoint(1.0, [0.0, 0.0]), GoalPoint(1.0, [0.1, 0.1])],
     ErrorCode.INVALID_GOAL, "strictly increasing"),
    (["a", "b"], [GoalPoint(1.0, [0.0])], ErrorCode.INVALID_GOAL, "1 positions for 2"),
    (["a", "b"], [GoalPoint(1.0, [0.0, 0.0], [0.0])], ErrorCode.INVALID_GOAL, "1 velocities"),
    (["a", "b"], [GoalPoint(1.0, [0.0, 0.0], [0.0, 0.0], [0.0])], ErrorCode.INVALID_GOAL,
     "1 accelerations"),
    (["a", "b"], [GoalPoint(1.0, [0.0, 0.0], (), (), [1.0, 1.0])], ErrorCode.INVALID_GOAL,
     "effort"),
    (["a", "b"], [GoalPoint(1.0, [0.0, 0.0], [0.0, 0.5])], ErrorCode.INVALID_GOAL,
     "velocity of 'b' is 0.5, not 0"),
])
def test_check_arrival_refuses_what_jtc_rejects(names: list[str], points: list[GoalPoint],
                                                code: ErrorCode, words: str) -> None:
    """JTC's goal_received_callback -> validate_trajectory_msg, with check_goal's codes."""
    with pytest.raises(GoalError) as info:
        check_arrival(names, points, JOINTS)
    assert info.value.code is code
    assert words in info.value.reason
    with pytest.raises(GoalError) as info:  # check_goal refuses it with the same code
        check_goal(names, points, JOINTS)
    assert info.value.code is code


def test_check_arrival_lets_through_what_jtc_lets_through() -> None:
    """What JTC's goal callback accepts (check_goal refuses some of it later, with a
    result), and what the settings allow."""
    for names, points in (
        (["a", "a"], [GoalPoint(1.0, [0.0, 0.0])]),  # as many names as joints, all known
        (["a", "b"], [GoalPoint(1.0, [0.0, math.nan])]),
        (["a", "b"], [GoalPoint(-1.0, [0.0, 0.0])]),
        (["a", "b"], [GoalPoint(1.0, [0.0, 0.0], (), [0.0, 0.0])]),
        (["a", "b"], [GoalPoint(1.0, [0.0, 9.0])]),  # limits: not JTC's goal callback
    ):
        check_arrival(names, points, JOINTS)
    check_arrival(["a"], [GoalPoint(1.0, [0.0])], JOINTS, allow_partial=True)
    check_arrival(list(JOINTS), [GoalPoint(1.0, [0.0, 0.0], [0.0, 0.5])], JOINTS,
                  allow_nonzero_end_velocity=True)
    check_arrival(list(JOINTS), [GoalPoint(2.0, [0.0, 0.0])], JOINTS, start=97.0, now=99.0)
    with pytest.raises(GoalError) as info:
        check_arrival(list(JOINTS), [GoalPoint(2.0, [0.0, 0.0])], JOINTS, start=97.0,
                      now=99.5)
    assert info.value.code is ErrorCode.OLD_HEADER_TIMESTAMP


def test_a_trajectory_that_ended_in_the_past_is_an_old_header_timestamp() -> None:
    check_start(None, 2.0, 100.0)  # stamp 0: starts on receipt
    check_start(97.0, 2.0, 99.0)  # ends at 99.0: still fine
    with pytest.raises(GoalError) as info:
        check_start(97.0, 2.0, 99.5)
    assert info.value.code is ErrorCode.OLD_HEADER_TIMESTAMP
    assert "ended 0.500 s ago" in info.value.reason


# ------------------------------------------------------------------ tolerances

def test_defaults_are_shaped_as_jtc_constraints() -> None:
    t = Tolerances.defaults(JOINTS, trajectory={"a": 0.1}, goal={"b": 0.02},
                            stopped_velocity=0.05, goal_time=0.5)
    assert t.path == {"a": StateTolerance(0.1), "b": StateTolerance()}
    assert t.goal == {"a": StateTolerance(0.0, 0.05), "b": StateTolerance(0.02, 0.05)}
    assert t.goal_time == 0.5
    with pytest.raises(ValueError, match="'z' is not one of"):
        Tolerances.defaults(JOINTS, goal={"z": 0.1})
    with pytest.raises(ValueError, match="stopped_velocity_tolerance"):
        Tolerances.defaults(JOINTS, stopped_velocity=-1.0)


def test_requests_merge_as_jtc_zero_keeps_minus_one_erases_positive_replaces() -> None:
    base = Tolerances.defaults(JOINTS, trajectory={"a": 0.1, "b": 0.2}, goal_time=1.0)
    merged = base.merged(
        path=[ToleranceRequest("a", position=0.0, velocity=0.3),
              ToleranceRequest("b", position=-1.0)],
        goal=[ToleranceRequest("a", position=0.05, velocity=-1.0)],
        goal_time=0.0)
    assert merged.path["a"] == StateTolerance(0.1, 0.3, 0.0)
    assert merged.path["b"] == StateTolerance(0.0, 0.0, 0.0)
    assert merged.goal["a"] == StateTolerance(0.05, 0.0, 0.0)
    assert merged.goal["b"] == base.goal["b"]
    assert merged.goal_time == 1.0  # 0 in the goal keeps the default
    assert base.merged(goal_time=-1.0).goal_time == 0.0  # erased: no limit
    assert base.merged(goal_time=0.25).goal_time == 0.25


@pytest.mark.parametrize(("request_", "words"), [
    (ToleranceRequest("z", 0.1), "'z' is not a joint"),
    (ToleranceRequest("a", -0.5), "path_tolerance[0].position is -0.5"),
    (ToleranceRequest("a", 0.0, math.nan), "velocity is nan"),
])
def test_bad_requests_are_invalid_goals(request_: ToleranceRequest, words: str) -> None:
    base = Tolerances.defaults(JOINTS)
    with pytest.raises(GoalError) as info:
        base.merged(path=[request_])
    assert info.value.code is ErrorCode.INVALID_GOAL
    assert words in info.value.reason
    with pytest.raises(GoalError, match="appears twice"):
        base.merged(goal=[ToleranceRequest("a", 0.1), ToleranceRequest("a", 0.2)])
    with pytest.raises(GoalError, match="goal_time_tolerance is -2"):
        base.merged(goal_time=-2.0)


def test_zero_tolerance_is_not_checked_and_nan_counts_only_when_asked() -> None:
    assert StateTolerance().violations(5.0, 5.0, 5.0) == []
    assert StateTolerance(0.1).violations(0.2, 0.0, 0.0) == ["position error 0.2 beyond 0.1"]
    assert StateTolerance(0.1).violations(-0.2, 0.0, 0.0) == ["position error -0.2 beyond 0.1"]
    assert StateTolerance(0.1).violations(math.nan, 0.0, 0.0) == []
    assert StateTolerance(0.1).violations(math.nan, 0.0, 0.0, unknown_violates=True) == [
        "position not measured"]


# ------------------------------------------------------------------ the monitor

def _cycle(monitor: GoalMonitor, elapsed: float, desired: list[float], actual: list[float],
           actual_v: list[float] | None = None) -> tuple[FollowOutcome, str] | None:
    d = np.array(desired)
    return monitor.on_cycle(10.0 + elapsed, elapsed, JOINTS, (d, np.zeros(2)),
                            (np.array(actual), None if actual_v is None else np.array(actual_v)))


def test_monitor_path_tolerance_aborts_with_the_joint_and_the_error() -> None:
    done = []
    tol = Tolerances.defaults(JOINTS, trajectory={"b": 0.05})
    monitor = GoalMonitor(JOINTS, tol, 2.0, [1.0, 2.0], on_done=lambda: done.append(1))
    assert _cycle(monitor, -0.5, [0.0, 0.0], [0.0, 1.0]) is None  # not started: not checked
    assert _cycle(monitor, 0.5, [0.0, 0.30], [9.0, 0.26]) is None  # 'a' has no tolerance
    assert monitor.latest is not None
    assert monitor.latest.point_index == 0
    assert monitor.latest.error_positions.tolist() == pytest.approx([-9.0, 0.04])
    decision = _cycle(monitor, 1.5, [0.0, 0.30], [0.0, 0.20])
    assert decision is not None
    assert decision[0] is FollowOutcome.ABORTED
    assert "'b' position error 0.1 beyond 0.05" in decision[1]
    assert monitor.latest.point_index == 1
    monitor.on_end(11.5, *decision)
    assert monitor.result is not None
    assert monitor.result.code is ErrorCode.PATH_TOLERANCE_VIOLATED
    monitor.on_end(11.6, FollowOutcome.STOPPED, "later")  # once only
    assert monitor.result.code is ErrorCode.PATH_TOLERANCE_VIOLATED
    assert done == [1]


def test_monitor_goal_waits_within_goal_time_then_succeeds() -> None:
    tol = Tolerances.defaults(JOINTS, goal={"a": 0.01, "b": 0.01}, goal_time=0.5)
    monitor = GoalMonitor(JOINTS, tol, 1.0)
    assert _cycle(monitor, 1.2, [1.0, 1.0], [0.95, 1.0], [0.0, 0.0]) is None
    decision = _cycle(monitor, 1.4, [1.0, 1.0], [0.995, 1.0], [0.0, 0.0])
    assert decision is not None
    assert decision[0] is FollowOutcome.SUCCEEDED
    monitor.on_end(11.4, *decision)
    assert monitor.result is not None
    assert monitor.result.code is ErrorCode.SUCCESSFUL


def test_monitor_goal_tolerance_violated_after_goal_time() -> None:
    tol = Tolerances.defaults(JOINTS, goal={"a": 0.01}, goal_time=0.5)
    monitor = GoalMonitor(JOINTS, tol, 1.0)
    assert _cycle(monitor, 1.4, [1.0, 1.0], [0.9, 1.0], [0.0, 0.0]) is None
    decision = _cycle(monitor, 1.6, [1.0, 1.0], [0.9, 1.0], [0.0, 0.0])
    assert decision is not None
    assert decision[0] is FollowOutcome.ABORTED
    assert "goal_time_tolerance 0.5 s" in decision[1]
    assert "'a' position error 0.1 beyond 0.01" in decision[1]
    monitor.on_end(11.6, *decision)
    assert monitor.result is not None
    assert monitor.result.code is ErrorCode.GOAL_TOLERANCE_VIOLATED


def test_monitor_without_goal_time_waits_and_checks_stopped_velocity() -> None:
    monitor = GoalMonitor(JOINTS, Tolerances.defaults(JOINTS), 1.0)  # stopped: 0.01 rad/s
    for k in range(100):
        assert _cycle(monitor, 1.0 + k, [1.0, 1.0], [0.0, 0.0], [0.0, 0.5]) is None
    decision = _cycle(monitor, 200.0, [1.0, 1.0], [0.0, 0.0], [0.0, 0.005])
    assert decision is not None
    assert decision[0] is FollowOutcome.SUCCEEDED
    # Unknown velocities (a robot that measures none) do not stop it from succeeding.
    monitor = GoalMonitor(JOINTS, Tolerances.defaults(JOINTS), 1.0)
    decision = _cycle(monitor, 1.1, [1.0, 1.0], [1.0, 1.0], None)
    assert decision is not None
    assert decision[0] is FollowOutcome.SUCCEEDED


def test_monitor_results_of_outcomes_it_did_not_decide() -> None:
    for outcome, code in ((FollowOutcome.PREEMPTED, ErrorCode.INVALID_GOAL),
                          (FollowOutcome.STOPPED, ErrorCode.INVALID_GOAL),
                          (FollowOutcome.TAKEN_OVER, ErrorCode.INVALID_GOAL),
                          (FollowOutcome.ABORTED, ErrorCode.INVALID_GOAL),
                          (FollowOutcome.CANCELED, ErrorCode.SUCCESSFUL)):
        monitor = GoalMonitor(JOINTS, Tolerances.defaults(JOINTS), 1.0)
        monitor.on_end(3.0, outcome, "why")
        said = "stopped: why" if outcome is FollowOutcome.STOPPED else "why"
        assert monitor.result == (outcome, code, said)


# ------------------------------------------------------------------ over the real core

class _LaggingBackend(NumpyBackend):  # type: ignore[misc]
    """Position targets are reached only ``lag`` of the way per step."""

    lag = 0.5

    def step(self, dt: float) -> None:
        before = self.q.copy()
        super().step(dt)
        self.q = before + self.lag * (self.q - before)
        self.v = (self.q - before) / dt


def _run(core: RobotCore, backend: NumpyBackend, monitor: GoalMonitor, steps: int) -> None:
    dt = 0.01
    for _ in range(steps):
        core.cycle(backend.time + dt)
        backend.step(dt)
        if monitor.result is not None:
            return


def _follow(backend: NumpyBackend, tol: Tolerances, target: float,
            duration: float) -> GoalMonitor:
    core = RobotCore(backend)
    trajectory = PointTrajectory(["a", "b"], [TrajectoryPoint(duration, (target, 0.0))],
                                 core.start_positions(["a", "b"]))
    monitor = GoalMonitor(["a", "b"], tol, duration, [duration])
    core.follow(trajectory, None, monitor)
    _run(core, backend, monitor, 500)
    return monitor


def test_over_the_core_a_followed_goal_succeeds() -> None:
    tol = Tolerances.defaults(JOINTS, trajectory={"a": 0.05}, goal={"a": 0.001}, goal_time=0.5)
    monitor = _follow(NumpyBackend(), tol, 0.5, 1.0)
    assert monitor.result is not None
    assert monitor.result.code is ErrorCode.SUCCESSFUL, monitor.result


def test_over_the_core_a_lagging_joint_violates_the_path_tolerance_and_holds() -> None:
    backend = _LaggingBackend()
    tol = Tolerances.defaults(JOINTS, trajectory={"a": 0.01})
    monitor = _follow(backend, tol, 0.9, 0.5)  # 1.8 rad/s: the lag leaves ~0.02 rad behind
    assert monitor.result is not None
    assert monitor.result.code is ErrorCode.PATH_TOLERANCE_VIOLATED, monitor.result
    assert backend.holds == [("a", "b")]  # ABORTED: the core holds where they are


def test_over_the_core_a_joint_that_cannot_arrive_violates_the_goal_tolerance() -> None:
    backend = _LaggingBackend()
    backend.lag = 0.02  # very slow: still far when goal_time has passed
    tol = Tolerances.defaults(JOINTS, goal={"a": 0.001}, goal_time=0.2)
    monitor = _follow(backend, tol, 0.9, 0.5)
    assert monitor.result is not None
    assert monitor.result.code is ErrorCode.GOAL_TOLERANCE_VIOLATED, monitor.result


# ------------------------------------------------------------------ query_state

def test_query_state_answers_from_receipt_until_before_the_last_point() -> None:
    """JTC's query_state: no trajectory or a time before it was taken: no sample; from then
    until before the last point: what the core commands (its first sample until a future
    start); from the last point on: the last point, not ok."""
    backend = NumpyBackend()
    core = RobotCore(backend)
    assert query_state(core.active_trajectory, 0.0) == (
        False, "no trajectory is being followed", None)
    backend.time = 2.0
    trajectory = PointTrajectory(["b", "a"], [TrajectoryPoint(1.0, (0.4, -0.2)),
                                              TrajectoryPoint(2.0, (0.6, -0.6))],
                                 core.start_positions(["b", "a"]))
    core.follow(trajectory, start=3.0)  # starts 1 s after it was received
    active = core.active_trajectory
    assert active is not None
    assert (active.names, active.start, active.received) == (("b", "a"), 3.0, 2.0)

    before = query_state(active, 1.999)
    assert (before.ok, before.sample) == (False, None)
    assert "before the trajectory was received (2.000000 s)" in before.message
    waiting = query_state(active, 2.5)  # received, not started: held at its first sample
    assert waiting.ok
    assert waiting.sample is not None
    np.testing.assert_array_equal(waiting.sample[0], [0.0, 0.0])
    for t in (3.0, 3.25, 4.0, 4.9):
        answer = query_state(active, t)
        assert answer.ok, t
        assert answer.sample is not None
        expected = trajectory.sample(t - 3.0)
        for got, want in zip(answer.sample, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    for t in (5.0, 60.0):  # the last point, JTC's "played out": not ok, its values given
        answer = query_state(active, t)
        assert not answer.ok
        assert "not before the trajectory's last point (5.000000 s)" in answer.message
        assert answer.sample is not None
        np.testing.assert_allclose(answer.sample[0], [0.6, -0.6], rtol=0, atol=1e-12)
    core.cancel_trajectory()
    assert core.active_trajectory is None
