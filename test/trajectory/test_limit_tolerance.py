"""A limit is inside its limits: rounding of a few ulps is accepted and clamped; refusals
show the excess and name the file and the trajectory."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.trajectory import (
    DofLimits,
    PointTrajectory,
    TrajectoryLimitError,
    TrajectoryPoint,
    check_limits,
    load_trajectory,
)

if TYPE_CHECKING:
    from pathlib import Path

INF = float("inf")


def _quintic_file(path: Path, end: str, duration: str = "1", step: str = "0.01") -> None:
    path.write_text(
        "<trajectories><joint_trajectories>\n"
        f'<quintic_spline_trajectory id="to_the_limit" time_definition="absolute"'
        f' time_step="{step}"><points>\n'
        "<point><q>0</q><q_dot>0</q_dot><q_ddot>0</q_ddot></point>\n"
        f'<point time="{duration}"><q>{end}</q><q_dot>0</q_dot><q_ddot>0</q_ddot></point>\n'
        "</points></quintic_spline_trajectory>\n</joint_trajectories></trajectories>\n",
        encoding="utf-8")


def test_quintic_ending_exactly_on_the_limit_is_accepted_and_clamped(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.xml"
    _quintic_file(path, "1.3")
    limits = {"slider": DofLimits(0.0, 1.3, -INF, INF)}
    trajectory = load_trajectory(path, ["slider"])
    # CASPR's quintic evaluated in doubles ends a few ulps past 1.3 (the defect's input).
    assert max(p.positions[0] for p in trajectory.points) > 1.3
    checked = check_limits(trajectory, limits)
    positions = [p.positions[0] for p in checked.points]
    assert max(positions) == 1.3  # clamped exactly onto the limit
    assert checked.points[-1].positions == (1.3,)
    assert checked.joint_names == trajectory.joint_names
    assert [p.time_from_start for p in checked.points] == [
        p.time_from_start for p in trajectory.points]


def test_lower_limit_and_one_sided_limit_tolerance() -> None:
    down = PointTrajectory(["j"], [TrajectoryPoint(0.0, (2.0,)),
                                   TrajectoryPoint(1.0, (-4e-16,))])
    checked = check_limits(down, {"j": DofLimits(0.0, INF, -INF, INF)})
    assert checked.points[-1].positions == (0.0,)
    with pytest.raises(TrajectoryLimitError):
        check_limits(PointTrajectory(["j"], [TrajectoryPoint(0.0, (2.0,)),
                                             TrajectoryPoint(1.0, (-1e-12,))]),
                     {"j": DofLimits(0.0, INF, -INF, INF)})


def test_refusal_shows_the_excess_and_names_file_and_trajectory(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.xml"
    _quintic_file(path, "1.000000001")
    trajectory = load_trajectory(path, ["slider"])
    with pytest.raises(TrajectoryLimitError) as info:
        check_limits(trajectory, {"slider": DofLimits(0.0, 1.0, -INF, INF)})
    message = str(info.value)
    assert message.startswith(f"{path} (joint trajectory 'to_the_limit'): DOF 'slider' at t = ")
    found = re.search(r"position (\S+) is outside its limits \[0, 1\] \(by (\S+)\)", message)
    assert found is not None, message
    assert float(found.group(1)) == info.value.value > 1.0  # every digit of the value shown
    assert float(found.group(2)) == pytest.approx(info.value.value - 1.0, rel=1e-2)


def test_refusal_of_a_yaml_trajectory_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "far.yaml"
    path.write_text("joint_names: [j]\npoints:\n- {positions: [0.5000000000001],"
                    " time_from_start: 1}\n", encoding="utf-8")
    with pytest.raises(TrajectoryLimitError) as info:
        check_limits(load_trajectory(path, ["j"]), {"j": DofLimits(-0.5, 0.5, -INF, INF)})
    assert str(info.value).startswith(f"{path}: DOF 'j' at t = ")
    assert "position 0.5000000000001 is outside its limits [-0.5, 0.5]" in str(info.value)


def test_velocity_refusal_shows_digits() -> None:
    trajectory = PointTrajectory(["j"], [TrajectoryPoint(0.0, (0.0,)),
                                         TrajectoryPoint(1.0, (1.0000001,))])
    with pytest.raises(TrajectoryLimitError, match=r"velocity 1\.0000001 is outside its"
                                                   r" limits \[-1, 1\]"):
        check_limits(trajectory, {"j": DofLimits(-INF, INF, -1.0, 1.0)})


def test_clamping_keeps_velocities_and_start() -> None:
    trajectory = PointTrajectory(
        ["a", "b"], [TrajectoryPoint(1.0, (0.5, 1.0 + 2e-16), (0.0, 0.0), (0.0, 0.0))],
        start_positions=(0.0, 0.0))
    checked = check_limits(trajectory, {"a": DofLimits(-1, 1, -INF, INF),
                                        "b": DofLimits(-1, 1, -INF, INF)})
    assert checked.points[0].positions == (0.5, 1.0)
    assert checked.points[0].velocities == (0.0, 0.0)
    assert checked.start_positions == (0.0, 0.0)
    np.testing.assert_array_equal(checked.sample(1.0)[0], [0.5, 1.0])
