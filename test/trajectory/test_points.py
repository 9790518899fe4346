"""PointTrajectory: interpolation per segment kind against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.trajectory import PointTrajectory, TrajectoryError, TrajectoryPoint
from skel_ros.trajectory.polynomials import cubic, quintic

P = TrajectoryPoint


def _check(traj: PointTrajectory, t: float, pos: list[float], vel: list[float],
           acc: list[float]) -> None:
    p, v, a = traj.sample(t)
    np.testing.assert_allclose(p, pos, atol=1e-12)
    np.testing.assert_allclose(v, vel, atol=1e-12)
    np.testing.assert_allclose(a, acc, atol=1e-12)


def test_linear_between_position_only_points() -> None:
    traj = PointTrajectory(["a", "b"], [P(0.0, (0.0, 0.0)), P(2.0, (1.0, -2.0))])
    assert traj.joint_names == ("a", "b")
    assert traj.duration == 2.0
    # p = p0 + (p1 - p0) t / T; velocity is the slope, acceleration zero
    _check(traj, 0.5, [0.25, -0.5], [0.5, -1.0], [0.0, 0.0])
    _check(traj, 2.0, [1.0, -2.0], [0.5, -1.0], [0.0, 0.0])


def test_cubic_hermite_with_velocities() -> None:
    # p0 = 0, v0 = 0, p1 = 1, v1 = 0, T = 2:  p(t) = 0.75 t^2 - 0.25 t^3
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (0.0,)), P(2.0, (1.0,), (0.0,))])
    _check(traj, 0.5, [0.15625], [0.5625], [0.75])
    _check(traj, 1.0, [0.5], [0.75], [0.0])
    # p0 = 0, v0 = 1, p1 = 0, v1 = 1, T = 1:  p(t) = t - 3 t^2 + 2 t^3
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (1.0,)), P(1.0, (0.0,), (1.0,))])
    _check(traj, 0.5, [0.0], [-0.5], [0.0])
    _check(traj, 1.0, [0.0], [1.0], [6.0])


def test_quintic_with_velocities_and_accelerations() -> None:
    # minimum jerk 0 -> 1 in 1 s: p = 10 t^3 - 15 t^4 + 6 t^5
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (0.0,), (0.0,)), P(1.0, (1.0,), (0.0,), (0.0,))])
    _check(traj, 0.5, [0.5], [1.875], [0.0])
    _check(traj, 0.25, [0.103515625], [1.0546875], [5.625])
    # a0 = 2: p = t^2 + 7 t^3 - 12 t^4 + 5 t^5
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (0.0,), (2.0,)), P(1.0, (1.0,), (0.0,), (0.0,))])
    _check(traj, 0.0, [0.0], [0.0], [2.0])
    _check(traj, 0.5, [0.53125], [2.0 * 0.5 + 21 * 0.25 - 48 * 0.125 + 25 * 0.0625],
           [2.0 + 42 * 0.5 - 144 * 0.25 + 100 * 0.125])
    _check(traj, 1.0, [1.0], [0.0], [0.0])


def test_segment_kind_is_chosen_per_segment() -> None:
    # segment 0: accelerations only at one end -> cubic; segment 1: velocities at one end -> linear
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (0.0,), (5.0,)), P(2.0, (1.0,), (0.0,)),
                                   P(3.0, (3.0,))])
    _check(traj, 0.5, [0.15625], [0.5625], [0.75])
    _check(traj, 2.5, [2.0], [2.0], [0.0])


def test_start_positions_before_first_point() -> None:
    # at rest at 0 -> position-only point: linear
    traj = PointTrajectory(["a"], [P(2.0, (1.0,))], start_positions=[0.0])
    _check(traj, 1.0, [0.5], [0.5], [0.0])
    assert traj.start_positions == (0.0,)
    # at rest at 0 -> point with velocity: cubic from rest, p(t) = 0.75 t^2 - 0.25 t^3
    traj = PointTrajectory(["a"], [P(2.0, (1.0,), (0.0,))], start_positions=[0.0])
    _check(traj, 1.0, [0.5], [0.75], [0.0])
    # at rest -> quintic point: minimum jerk over 1 s
    traj = PointTrajectory(["a"], [P(1.0, (1.0,), (0.0,), (0.0,))], start_positions=[0.0])
    _check(traj, 0.25, [0.103515625], [1.0546875], [5.625])


def test_without_start_positions_the_first_point_is_held() -> None:
    traj = PointTrajectory(["a"], [P(1.0, (1.0,)), P(2.0, (3.0,))])
    _check(traj, 0.0, [1.0], [0.0], [0.0])
    _check(traj, 0.5, [1.0], [0.0], [0.0])
    _check(traj, 1.5, [2.0], [2.0], [0.0])


def test_first_point_at_zero_ignores_start_positions() -> None:
    traj = PointTrajectory(["a"], [P(0.0, (1.0,)), P(1.0, (2.0,))], start_positions=[5.0])
    _check(traj, 0.0, [1.0], [1.0], [0.0])
    _check(traj, 0.5, [1.5], [1.0], [0.0])


def test_hold_after_end_and_before_start() -> None:
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (0.0,)), P(1.0, (1.0,), (0.5,))],
                           start_positions=None)
    # c2 = 3 - 0.5 = 2.5, c3 = -2 + 0.5 = -1.5: a(1) = 2 c2 + 6 c3 = -4
    _check(traj, 1.0, [1.0], [0.5], [-4.0])  # at the last point: its own velocity
    _check(traj, 7.0, [1.0], [0.0], [0.0])
    _check(traj, -1.0, [0.0], [0.0], [0.0])


def test_single_point_at_zero() -> None:
    traj = PointTrajectory(["a", "b"], [P(0.0, (1.0, 2.0))])
    assert traj.duration == 0.0
    _check(traj, 0.0, [1.0, 2.0], [0.0, 0.0], [0.0, 0.0])
    _check(traj, 3.0, [1.0, 2.0], [0.0, 0.0], [0.0, 0.0])


def test_samples_are_copies() -> None:
    traj = PointTrajectory(["a"], [P(0.0, (1.0,))])
    traj.sample(5.0)[0][0] = 99.0
    assert traj.sample(5.0)[0][0] == 1.0


def test_many_points_pick_the_right_segment() -> None:
    times = [0.1 * k for k in range(1, 101)]
    traj = PointTrajectory(["a"], [P(t, (math.sin(t),)) for t in times], start_positions=[0.0])
    for k, t in enumerate(times[:-1]):
        mid = t + 0.05
        expected = 0.5 * (math.sin(t) + math.sin(times[k + 1]))
        assert traj.sample(mid)[0][0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("names", "points", "start", "message"),
    [
        (["a", "a"], [P(0.0, (0.0, 0.0))], None, "'a' appears twice"),
        ([], [P(0.0, ())], None, "joint_names is empty"),
        (["a", ""], [P(0.0, (0.0, 0.0))], None, "joint_names[1]"),
        ("ab", [P(0.0, (0.0, 0.0))], None, "not the string"),
        (["a"], [], None, "at least one point"),
        (["a", "b"], [P(0.0, (0.0,))], None, "point 0 positions has 1 values, expected 2"),
        (["a", "b"], [P(0.0, (0.0, 0.0)), P(1.0, (0.0, 0.0), (1.0,))], None,
         "point 1 velocities has 1 values"),
        (["a"], [P(0.0, (0.0,)), P(1.0, (0.0,), None, (1.0,))], None,
         "point 1 has accelerations but no velocities"),
        (["a"], [P(1.0, (0.0,)), P(1.0, (0.0,))], None,
         "point 1: time_from_start 1 s is not after"),
        (["a"], [P(1.0, (0.0,)), P(0.5, (0.0,))], None, "strictly increasing"),
        (["a"], [P(-0.5, (0.0,))], None, "point 0: time_from_start -0.5 must be finite and >= 0"),
        (["a"], [P(math.inf, (0.0,))], None, "point 0: time_from_start inf"),
        (["a"], [P(0.0, (0.0,), (0.1,)), P(1e308, (1.0,), (0.0,))], None,
         "point 1: time_from_start 1e+308 s is beyond 2147483648 s"),
        (["a", "b"], [P(0.0, (0.0, math.nan))], None, "point 0 positions: joint 'b' is nan"),
        (["a"], [P(0.0, (0.0,)), P(1.0, (0.0,), (math.inf,))], None,
         "point 1 velocities: joint 'a' is inf"),
        (["a"], [P(0.0, ("x",))], None, "point 0 positions is not a list of numbers"),  # type: ignore[arg-type]
        (["a"], [P(1.0, (0.0,))], [1.0, 2.0], "start_positions has 2 values"),
        (["a"], [P(1.0, (0.0,))], [math.nan], "start_positions: joint 'a' is nan"),
        (["a"], [(1.0, (0.0,))], None, "point 0 is a tuple"),
        (["a"], [P(0.0, (0.0,), (1e300,)), P(1e-9, (1.0,), (0.0,))], None,
         "from t = 0 s to 1e-09 s overflows"),
    ],
)
def test_invalid_input_names_the_problem(names: list[str], points: list[TrajectoryPoint],
                                         start: list[float] | None, message: str) -> None:
    with pytest.raises(TrajectoryError) as info:
        PointTrajectory(names, points, start)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_empty_velocity_tuples_mean_absent() -> None:
    # ROS messages carry empty arrays for absent fields
    traj = PointTrajectory(["a"], [P(0.0, (0.0,), (), ()), P(2.0, (1.0,), (), ())])
    _check(traj, 1.0, [0.5], [0.5], [0.0])


@pytest.mark.parametrize("t", [math.nan, math.inf, "soon"])
def test_sample_rejects_bad_times(t: object) -> None:
    traj = PointTrajectory(["a"], [P(0.0, (0.0,))])
    with pytest.raises(TrajectoryError):
        traj.sample(t)  # type: ignore[arg-type]


def test_segment_polynomials_overflow_to_inf_never_raise() -> None:
    # Python's float ** raises OverflowError; the segment code must give inf, which
    # PointTrajectory turns into a TrajectoryError (found by test_trajectory_fuzz).
    p, v = np.array([0.0]), np.array([0.1])
    with np.errstate(all="ignore"):
        c3 = cubic(p, v, p + 1.0, v, 1e308)
        c5 = quintic(p, v, v, p + 1.0, v, v, 1e308)
    assert c3.shape == c5.shape == (6, 1)  # computed, not raised
    assert not np.isfinite(c5).all()  # inf / inf: a segment PointTrajectory refuses


def test_times_must_be_at_least_a_nanosecond_apart() -> None:
    """What a JointTrajectory can carry: ``duration_parts`` rounds to whole nanoseconds."""
    from skel_ros.trajectory import duration_parts

    assert duration_parts(1.0000000001) == duration_parts(1.0000000002) == (1, 0)
    assert duration_parts(2.9999999999) == (3, 0)
    with pytest.raises(TrajectoryError, match="at least 1 ns apart"):
        PointTrajectory(["a"], [TrajectoryPoint(1.0000000001, (0.0,)),
                                TrajectoryPoint(1.0000000002, (0.0,))])
    ok = PointTrajectory(["a"], [TrajectoryPoint(1.0, (0.0,)), TrajectoryPoint(1 + 1e-9, (0.0,))])
    assert len(ok.points) == 2
