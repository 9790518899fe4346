"""What a FollowJointTrajectory client reads: tolerance edges and the words of refusals.

``skel_ros/core/tolerances.py`` follows joint_trajectory_controller: an error *beyond*
its tolerance violates it (``abs(error) > tolerance``; exactly at it is within), and the
goal tolerance fails only once the robot is *later* than ``goal_time`` after the end.
The strings here reach the client as ``error_string`` (or the node's parameter errors):
they name the field, the joint and the point, and these tests hold them word for word.
Values are powers of two, so "exactly at" is exact.
"""

from __future__ import annotations

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
    query_state,
)
from skel_ros.trajectory import PointTrajectory, TrajectoryPoint

JOINTS = ("a", "b")


def _reason(check: object, *args: object, **kwargs: object) -> tuple[ErrorCode, str]:
    with pytest.raises(GoalError) as info:
        check(*args, **kwargs)  # type: ignore[operator]
    return info.value.code, info.value.reason


# ----------------------------------------------------------------------------- edges


def test_an_error_exactly_at_its_tolerance_is_within_and_beyond_it_is_named() -> None:
    tolerance = StateTolerance(position=0.25, velocity=0.5, acceleration=0.125)
    assert tolerance.violations(0.25, -0.5, 0.125) == []
    assert tolerance.violations(-0.3125, 0.625, -0.25) == [
        "position error -0.3125 beyond 0.25", "velocity error 0.625 beyond 0.5",
        "acceleration error -0.25 beyond 0.125"]


def _monitor(goal_time: float) -> GoalMonitor:
    tolerances = Tolerances.defaults(JOINTS, goal={"a": 0.125}, goal_time=goal_time)
    return GoalMonitor(JOINTS, tolerances, 1.0, [1.0])


def _late(monitor: GoalMonitor, elapsed: float) -> tuple[FollowOutcome, str] | None:
    desired = np.array([0.5, 0.0])
    actual = np.array([0.0, 0.0])  # a is 0.5 away: outside its goal tolerance
    return monitor.on_cycle(elapsed, elapsed, JOINTS, (desired, np.zeros(2)),
                            (actual, np.zeros(2)))


def test_the_goal_tolerance_fails_only_once_later_than_goal_time_after_the_end() -> None:
    monitor = _monitor(goal_time=0.5)
    assert _late(monitor, 1.25) is None
    assert _late(monitor, 1.5) is None  # exactly goal_time late: still within it
    decision = _late(monitor, 1.625)
    assert decision == (FollowOutcome.ABORTED,
                        ("goal tolerance not reached 0.625 s after the end"
                        " (goal_time_tolerance 0.5 s): 'a' position error 0.5 beyond 0.125"))


def test_the_result_carries_the_message_the_monitor_decided() -> None:
    monitor = _monitor(goal_time=0.5)
    desired = np.array([0.5, 0.0])
    decision = monitor.on_cycle(1.25, 1.25, JOINTS, (desired, np.zeros(2)),
                                (desired.copy(), np.zeros(2)))
    assert decision == (FollowOutcome.SUCCEEDED, "goal reached 0.250 s after the end")
    monitor.on_end(1.25, FollowOutcome.SUCCEEDED, "the core's words")
    assert monitor.result == (FollowOutcome.SUCCEEDED, ErrorCode.SUCCESSFUL,
                              "goal reached 0.250 s after the end")


def test_query_state_at_or_after_the_last_point_answers_a_plain_false() -> None:
    """``ok`` goes into a bool message field: it is False, not merely falsy."""
    backend = NumpyBackend()
    core = RobotCore(backend)
    core.follow(PointTrajectory(["a"], [TrajectoryPoint(1.0, (0.5,))], [0.0]))
    answer = query_state(core.active_trajectory, 1.0)
    assert answer.ok is False
    assert query_state(core.active_trajectory, 0.5).ok is True
    assert query_state(None, 0.5).ok is False


# ----------------------------------------------------------------------------- words


def test_a_bad_goal_time_setting_is_named_as_its_parameter() -> None:
    with pytest.raises(ValueError, match=r"^constraints\.goal_time must be finite and >= 0"):
        Tolerances.defaults(JOINTS, goal_time=-1.0)
    with pytest.raises(ValueError,
                       match=r"^constraints\.stopped_velocity_tolerance must be finite"):
        Tolerances.defaults(JOINTS, stopped_velocity=float("inf"))


def test_a_tolerance_request_for_another_joint_names_the_field_and_the_joints() -> None:
    code, reason = _reason(Tolerances.defaults(JOINTS).merged,
                           goal=[ToleranceRequest("a", 0.25), ToleranceRequest("zz", 0.25)])
    assert code is ErrorCode.INVALID_GOAL
    assert reason == ("goal_tolerance[1]: 'zz' is not a joint of this controller (its joints:"
                      " 'a', 'b')")
    _, reason = _reason(Tolerances.defaults(JOINTS).merged, path=[ToleranceRequest("zz")])
    assert reason.startswith("path_tolerance[0]: 'zz' is not a joint")


def test_a_long_list_of_joints_is_cut_after_eight() -> None:
    joints = [f"j{i}" for i in range(10)]
    _, reason = _reason(check_goal, ["zz"], [GoalPoint(1.0, [0.0])], joints)
    assert reason == ("joint_names[0] 'zz' is not a joint of this controller (its joints:"
                      " 'j0', 'j1', 'j2', 'j3', 'j4', 'j5', 'j6', 'j7' and 2 more)")


def test_times_not_increasing_name_the_point_and_the_one_before_it() -> None:
    points = [GoalPoint(0.5, [0.0, 0.0]), GoalPoint(1.5, [0.0, 0.0]),
              GoalPoint(1.0, [0.0, 0.0])]
    code, reason = _reason(check_arrival, JOINTS, points, JOINTS)
    assert code is ErrorCode.INVALID_GOAL
    assert reason == ("point 2: time_from_start 1 s is not after point 1 (1.5 s); times must"
                      " be strictly increasing")


def test_a_goal_leaving_out_joints_says_which_and_why() -> None:
    code, reason = _reason(check_arrival, ["a"], [GoalPoint(1.0, [0.0])], ("a", "b", "c"))
    assert code is ErrorCode.INVALID_JOINTS
    assert reason == ("the trajectory leaves out 'b', 'c': this controller takes goals for"
                      " all its joints (allow_partial_joints_goal is false)")


def test_effort_in_a_goal_is_refused_as_unsupported() -> None:
    points = [GoalPoint(1.0, [0.0, 0.0], effort=[1.0, 1.0])]
    for check in (check_goal, check_arrival):
        code, reason = _reason(check, JOINTS, points, JOINTS)
        assert code is ErrorCode.INVALID_GOAL
        assert reason == ("point 0: effort is not supported (this controller commands"
                          " positions)")


def test_a_point_with_too_few_values_names_the_point_and_the_counts() -> None:
    points = [GoalPoint(0.5, [0.0, 0.0]), GoalPoint(1.0, [0.0])]
    _, reason = _reason(check_goal, JOINTS, points, JOINTS)
    assert reason == "point 1: 1 positions for 2 joint(s)"
    points = [GoalPoint(0.5, [0.0, 0.0], velocities=[0.0])]
    _, reason = _reason(check_goal, JOINTS, points, JOINTS)
    assert reason == "point 0: 1 velocities for 2 joint(s)"


def test_words_for_no_joint_names_and_a_value_that_is_not_a_number() -> None:
    code, reason = _reason(check_goal, [], [GoalPoint(1.0, [])], JOINTS)
    assert (code, reason) == (ErrorCode.INVALID_JOINTS, "the trajectory names no joints")
    points = [GoalPoint(1.0, [0.0, 0.0], velocities=[0.0, 0.0],
                        accelerations=[0.0, float("nan")])]
    _, reason = _reason(check_goal, JOINTS, points, JOINTS)
    assert reason == "point 0: accelerations of 'b' is nan, not a finite number"


def test_a_path_violation_names_every_joint_beyond_and_ignores_unmeasured_ones() -> None:
    tolerances = Tolerances.defaults(("a", "b", "c"), trajectory={"a": 0.125, "b": 0.125,
                                                                  "c": 0.125})
    monitor = GoalMonitor(("a", "b", "c"), tolerances, 1.0, [0.5, 1.0])
    desired = np.array([0.5, 0.5, 0.5])
    actual = np.array([0.0, 0.25, float("nan")])  # c not measured: not a path violation
    decision = monitor.on_cycle(0.75, 0.75, ("a", "b", "c"), (desired, np.zeros(3)),
                                (actual, None))
    assert decision == (FollowOutcome.ABORTED,
                        ("path tolerance violated at t = 0.750 s: 'a' position error 0.5"
                        " beyond 0.125; 'b' position error 0.25 beyond 0.125"))
    assert monitor.latest is not None
    assert monitor.latest.point_index == 1  # between the first and second point
    monitor = GoalMonitor(("a", "b", "c"), tolerances, 1.0, [0.5, 1.0])
    assert monitor.on_cycle(0.25, 0.25, ("a", "b", "c"), (desired, np.zeros(3)),
                            (np.array([0.5, 0.5, float("nan")]), None)) is None
    assert monitor.latest is not None
    assert monitor.latest.point_index == 0


def test_a_goal_is_not_reached_while_a_joint_is_not_measured() -> None:
    monitor = _monitor(goal_time=0.5)
    desired = np.array([0.5, 0.0])
    unmeasured = np.array([float("nan"), 0.0])
    assert monitor.on_cycle(1.25, 1.25, JOINTS, (desired, np.zeros(2)),
                            (unmeasured, np.zeros(2))) is None
    decision = monitor.on_cycle(1.75, 1.75, JOINTS, (desired, np.zeros(2)),
                                (unmeasured, np.zeros(2)))
    assert decision is not None
    assert decision[0] is FollowOutcome.ABORTED
    assert decision[1].endswith("'a' position not measured")
