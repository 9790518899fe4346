"""Paths of the robot core the other core tests do not take.

Each test states one behaviour mutation testing (bench/mutation.py, target ``core``,
seed 3) showed no test pinned: a backend whose limits miss one of its DOFs, the gate's
result for a command naming a DOF without an actuator, a clamped command's reason, a
cancel's hold written at the time it happened, the limits report of a trajectory going
below a lower limit, and which point a goal's error names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from numpy_backend import NumpyBackend  # type: ignore[import-not-found]  # test/core

from skel_ros.core import RobotCore
from skel_ros.core.tolerances import GoalError, GoalPoint, check_arrival
from skel_ros.model.limits import CommandKind, JointLimits, LimitSet
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

P = CommandKind.POSITION
DT = 0.01


class ListLog:
    """A core log that keeps every line."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str) -> None:
        self.lines.append(("info", message))

    def warning(self, message: str, key: str) -> None:  # noqa: ARG002 - protocol
        self.lines.append(("warning", message))

    def error(self, message: str, key: str) -> None:  # noqa: ARG002 - protocol
        self.lines.append(("error", message))


class TimedHolds(NumpyBackend):
    """The numpy backend, recording when each hold was written."""

    def __init__(self) -> None:
        super().__init__()
        self.hold_times: list[float] = []

    def hold(self, now: float, index: npt.NDArray[np.intp]) -> None:
        self.hold_times.append(now)
        super().hold(now, index)


def _limits(names: tuple[str, ...]) -> LimitSet:
    return LimitSet([JointLimits(x, position_lower=-1.0, position_upper=1.0,
                                 velocity_lower=-2.0, velocity_upper=2.0) for x in names])


def test_a_backend_whose_limits_miss_a_dof_is_refused_naming_it() -> None:
    backend = NumpyBackend()
    backend.limits = _limits(("a", "b"))  # no limits for "c"
    with pytest.raises(ValueError, match=r"the backend's limits do not cover its DOF.* 'c'"):
        RobotCore(backend)


def test_the_gate_keeps_only_the_driven_dofs_of_a_command() -> None:
    """The limits know a DOF the backend does not drive: the gate's result names, indexes
    and gives the requested and applied values of the driven ones only."""
    backend = NumpyBackend()
    backend.limits = _limits(("d", "a", "b", "c"))  # "d" has limits, no actuator
    core = RobotCore(backend)
    check = core.gate(P, ["d", "a", "b"], [0.2, 3.0, 0.5])
    assert check.ok
    assert check.names == ("a", "b")
    assert list(check.indices) == [backend.limits.index("a"), backend.limits.index("b")]
    assert list(check.values) == [1.0, 0.5]
    assert list(check.requested) == [3.0, 0.5]
    assert [c.name for c in check.clamped] == ["a"]


def test_a_clamped_command_says_so_in_its_reason() -> None:
    core = RobotCore(NumpyBackend())
    assert core.command(P, ["a"], [3.0]).reason == "clamped"
    assert core.command(P, ["a"], [0.5]).reason == ""


def test_a_cancel_holds_at_the_time_it_happened() -> None:
    backend = TimedHolds()
    core = RobotCore(backend)
    trajectory = PointTrajectory(("a",), [TrajectoryPoint(1.0, (0.5,))], [0.0])
    core.follow(trajectory)
    for _ in range(3):
        core.cycle(backend.time + DT)
        backend.step(DT)
    assert core.cancel_trajectory()
    assert backend.hold_times == [pytest.approx(backend.time)]


def test_a_trajectory_below_a_lower_limit_is_reported_with_its_lowest_point() -> None:
    """The limits report of a trajectory names how far it goes: its lowest sample below
    the lower limit, not the first sample that was clamped."""
    log = ListLog()
    backend = NumpyBackend()
    core = RobotCore(backend, log=log)
    trajectory = PointTrajectory(("a",), [TrajectoryPoint(0.1, (-1.2,)),
                                          TrajectoryPoint(0.2, (-1.5,)),
                                          TrajectoryPoint(0.3, (0.0,))], [0.0])
    core.follow(trajectory)
    for _ in range(20):
        core.cycle(backend.time + DT)
        backend.step(DT)
    warnings = [m for kind, m in log.lines if kind == "warning" and "leaves the limits" in m]
    assert len(warnings) == 1, log.lines
    assert "'a' reaches -1.5 (limit -1)" in warnings[0]


def test_a_goal_error_names_its_point() -> None:
    points = [GoalPoint(0.5, (0.0, 0.0)), GoalPoint(1.0, (0.0,))]
    with pytest.raises(GoalError, match=r"point 1: 1 positions for 2 joint\(s\)"):
        check_arrival(["a", "b"], points, ["a", "b"])
