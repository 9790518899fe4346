"""Paths of the robot core the other core tests do not take.

Each test states one behaviour mutation testing (bench/mutation.py, target ``core``,
seed 3) showed no test pinned: a backend whose limits miss one of its DOFs, the gate's
result for a command naming a DOF without an actuator, a clamped command's reason, a
cancel's hold written at the time it happened, the limits report of a trajectory going
below a lower limit, which point a goal's error names, how sources are named and said,
a read's stamp, the log lines of a trajectory and of its takeover, the logging adapter,
a backend without a core, the goal monitor's last cycle, the loop thread's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from numpy_backend import NumpyBackend  # type: ignore[import-not-found]  # test/core

from skel_ros.core import RobotCore
from skel_ros.core.tolerances import GoalError, GoalPoint, check_arrival
from skel_ros.model.limits import CommandKind, JointLimits, LimitSet
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
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


def test_a_source_without_a_sender_is_named_by_its_channel() -> None:
    from skel_ros.core.commanders import Source

    assert str(Source("joint_commands")) == "joint_commands"
    assert str(Source("joint_commands", "/teleop")) == "joint_commands (/teleop)"


def test_two_sources_on_several_joints_are_named_with_every_joint() -> None:
    log = ListLog()
    core = RobotCore(NumpyBackend(), log=log)
    from skel_ros.core.commanders import Source

    assert core.command(P, ["a", "b"], [0.1, 0.1], source=Source("joint_commands", "/x")).ok
    assert core.command(P, ["a", "b"], [0.2, 0.2], source=Source("joint_commands", "/y")).ok
    said = [m for kind, m in log.lines if kind == "warning" and "two sources" in m]
    assert said
    assert said[0].startswith("two sources command a, b: joint_commands (/x) and"
                              " joint_commands (/y);"), said


def test_a_read_at_a_given_time_is_stamped_with_it() -> None:
    core = RobotCore(NumpyBackend())
    assert core.read(2.5).stamp == 2.5
    assert core.read().stamp == 0.0  # the backend's now


def test_the_log_says_a_trajectory_was_taken_over_and_how_many_points_it_had() -> None:
    from skel_ros.core.commanders import Source

    log = ListLog()
    backend = NumpyBackend()
    core = RobotCore(backend, log=log)
    core.follow(PointTrajectory(("a",), [TrajectoryPoint(0.5, (0.2,)),
                                         TrajectoryPoint(1.0, (0.4,))], [0.0]))
    assert ("info", "following a trajectory of 2 point(s) for 1 joint(s), 1 s") in log.lines
    core.cycle(backend.time + DT)
    assert core.command(P, ["a"], [0.0], source=Source("joint_commands", "/teleop")).ok
    assert ("info", "joint_commands (/teleop) took over: trajectory stopped") in log.lines


def test_the_python_logging_log_passes_messages_as_they_are(
        caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from skel_ros.core.log import LoggingLog

    with caplog.at_level(logging.INFO, logger="skel_ros.test_core_paths"):
        LoggingLog(logging.getLogger("skel_ros.test_core_paths")).info("100 % done")
    assert [r.getMessage() for r in caplog.records] == ["100 % done"]


def test_a_backend_no_core_drives_has_no_trajectory_to_stop() -> None:
    backend = NumpyBackend()  # not bound to a core: its link is the no-core one
    assert backend._core.stop_trajectory("disabled") is False


def test_the_goal_monitor_keeps_the_last_cycle_it_saw() -> None:
    from skel_ros.core.tolerances import GoalMonitor, Tolerances

    names = ("a", "b")
    monitor = GoalMonitor(names, Tolerances.defaults(names), 1.0, [1.0])
    monitor.on_cycle(3.0, 0.25, names, (np.array([0.1, 0.0]), np.zeros(2)),
                     (np.zeros(2), np.zeros(2)))
    assert monitor.latest is not None
    assert (monitor.latest.now, monitor.latest.elapsed) == (3.0, 0.25)


def test_the_loop_thread_carries_the_runners_name() -> None:
    import threading

    from skel_ros.core.runner import GridPacer, Runner

    backend = NumpyBackend()
    runner = Runner(Runner.over(backend).core, GridPacer(backend.now), name="arm-loop")
    runner.start()
    try:
        assert "arm-loop" in [t.name for t in threading.enumerate()]
    finally:
        runner.stop()
