"""One commander at a time, without ROS: the core over the numpy test double.

Who commands each joint and since when (:mod:`skel_ros.core.commanders`), what the core
does with a second source (said once per pair; refused with ``exclusive_commands``),
what it says it is doing (:meth:`RobotCore.activity`), and the result each way a
FollowJointTrajectory goal can be ended by something else gets (its code and string).
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy_backend import NumpyBackend

from skel_ros.core import CommandRefused, FollowOutcome, RobotCore
from skel_ros.core.commanders import DEFAULT_WINDOW, Source
from skel_ros.core.tolerances import ErrorCode, GoalMonitor, Tolerances
from skel_ros.model.limits import CommandKind
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

P = CommandKind.POSITION
TELEOP = Source("joint_commands", "/teleop", key=("node", "/teleop"))
SCRIPT = Source("joint_commands", "/script", key=("node", "/script"))
GOAL = Source("joint_trajectory_controller/follow_joint_trajectory", "goal 5f3a1c2e",
              key=("action", "joint_trajectory_controller/follow_joint_trajectory"))


class Lines:
    """A CoreLog that keeps its lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)

    def warning(self, message: str, key: str) -> None:  # noqa: ARG002
        self.lines.append(message)

    def error(self, message: str, key: str) -> None:  # noqa: ARG002
        self.lines.append(message)

    def about(self, word: str) -> list[str]:
        return [line for line in self.lines if word in line]


def _core(timeout: float = 0.5, *, exclusive: bool = False) -> tuple[RobotCore, NumpyBackend,
                                                                        Lines]:
    backend = NumpyBackend()
    log = Lines()
    core = RobotCore(backend, command_timeout=timeout, log=log, exclusive_commands=exclusive)
    return core, backend, log


def _ramp(core: RobotCore, to: float = 0.5, duration: float = 1.0) -> PointTrajectory:
    return PointTrajectory(["a", "b"], [TrajectoryPoint(duration, (to, to))],
                           core.start_positions(["a", "b"]))


def test_by_default_a_second_source_is_taken_and_said_once_naming_both() -> None:
    core, backend, log = _core()
    assert core.command(P, ["a"], [0.1], TELEOP).ok
    backend.time = 0.1
    assert core.activity() == "tracking a joint_commands stream from /teleop"
    for k in range(5):  # two streams interleaved: every command taken, the last wins
        backend.time += 0.01
        assert core.command(P, ["a"], [0.3], SCRIPT).ok
        assert core.command(P, ["a"], [0.1 + 0.01 * k], TELEOP).ok
    assert backend.target[0] == pytest.approx(0.14)
    said = log.about("two sources")
    assert said == [("two sources command a: joint_commands (/teleop) and joint_commands"
                    " (/script); the latest command wins; exclusive_commands: true refuses"
                    " the second (said once for these two)")]
    conflict = core.conflict()
    assert conflict is not None
    assert str(conflict) == ("joint_commands (/teleop) while joint_commands (/script)"
                             " commands a: the latest command wins")
    assert core.refused_commands == 0
    # Other joints are another matter (as ros2_control claims joints, not the robot).
    assert core.command(P, ["b"], [0.2], SCRIPT).ok
    backend.time += 0.5 + 0.01  # the window is the command timeout
    assert core.conflict() is None
    assert core.activity() == "holding"


def test_exclusive_refuses_the_newcomer_until_the_first_was_quiet_for_the_window() -> None:
    core, backend, log = _core(0.5, exclusive=True)
    assert core.commander_window == 0.5
    assert core.command(P, ["a", "b"], [0.1, 0.1], TELEOP).ok
    backend.time = 0.3
    refused = core.command(P, ["b"], [0.9], SCRIPT)
    assert not refused.ok
    assert refused.reason == "second commander"
    assert refused.message == (
        "position command refused: joint_commands (/teleop) commands b (it commanded them"
        " within the last 0.5 s); exclusive_commands: joint_commands (/script) may command"
        " them once joint_commands (/teleop) has been quiet for 0.5 s")
    assert backend.target[1] == pytest.approx(0.1)  # nothing of it was written
    assert core.refused_commands == 1
    assert log.about("two sources") == [
        ("two sources command b: joint_commands (/teleop) and joint_commands (/script);"
        " joint_commands (/script) is refused until joint_commands (/teleop) has been quiet"
        " for 0.5 s (exclusive_commands: true) (said once for these two)")]
    assert core.command(P, ["a", "b"], [0.2, 0.2], TELEOP).ok  # the first goes on
    backend.time = 0.3 + 0.49
    assert not core.command(P, ["b"], [0.9], SCRIPT).ok  # 0.49 s since the first's
    backend.time = 0.3 + 0.51
    assert core.command(P, ["b"], [0.9], SCRIPT).ok  # quiet for 0.51 s: its turn
    assert backend.target[1] == pytest.approx(0.9)
    refused = core.command(P, ["a", "b"], [0.0, 0.0], TELEOP)  # now b is the script's
    assert not refused.ok
    assert "joint_commands (/script) commands b" in refused.message
    assert core.refused_commands == 3


def test_without_a_command_timeout_the_window_is_the_default() -> None:
    core, backend, _ = _core(0.0, exclusive=True)
    assert core.commander_window == DEFAULT_WINDOW
    assert core.command(P, ["a"], [0.1], TELEOP).ok
    backend.time = DEFAULT_WINDOW - 0.01
    assert not core.command(P, ["a"], [0.2], SCRIPT).ok
    backend.time = DEFAULT_WINDOW + 0.01
    assert core.command(P, ["a"], [0.2], SCRIPT).ok
    core.set_command_timeout(2.0)
    assert core.commander_window == 2.0


def test_a_running_trajectory_holds_its_joints_however_long_it_runs() -> None:
    core, backend, log = _core(0.5, exclusive=True)
    core.follow(_ramp(core, duration=10.0), None, None, GOAL)
    backend.time = 5.0  # long after the window: the trajectory still commands a and b
    assert core.activity() == ("following a trajectory from"
                               " joint_trajectory_controller/follow_joint_trajectory"
                               " (goal 5f3a1c2e)")
    refused = core.command(P, ["a"], [0.0], TELEOP)
    assert not refused.ok
    assert "(its trajectory runs)" in refused.message
    assert core.following
    with pytest.raises(CommandRefused, match="trajectory refused: "):
        core.follow(_ramp(core), None, None, TELEOP)
    with pytest.raises(CommandRefused):
        core.cancel_trajectory(TELEOP)
    assert core.following
    # A newer goal of the same action preempts it (one commander: JTC's rule).
    core.follow(_ramp(core, duration=0.5), None, None,
                Source(GOAL.channel, "goal 77aa0000", key=GOAL.key))
    assert core.following
    core.cycle(backend.time + 0.6)  # the last point reached (no observer): it ends
    assert not core.following
    backend.time += 0.6
    assert not core.command(P, ["a"], [0.0], TELEOP).ok  # within the window of its end
    backend.time += 0.51
    assert core.command(P, ["a"], [0.0], TELEOP).ok
    assert len(log.about("two sources")) == 1


def test_by_default_a_command_from_another_source_takes_the_trajectory_over() -> None:
    core, backend, _ = _core()
    monitor = GoalMonitor(["a", "b"], Tolerances.defaults(["a", "b"]), 1.0)
    core.follow(_ramp(core), None, monitor, GOAL)
    backend.time = 0.2
    assert core.command(P, ["a"], [0.0], TELEOP).ok
    assert not core.following
    assert monitor.result == (FollowOutcome.TAKEN_OVER, ErrorCode.INVALID_GOAL,
                              ("taken over by a position command for its joints from"
                              " joint_commands (/teleop)"))
    assert core.activity() == "tracking a joint_commands stream from /teleop"
    assert core.conflict() is not None


def _ended(end: str) -> tuple[FollowOutcome, ErrorCode, str]:
    core, backend, _ = _core()
    monitor = GoalMonitor(["a", "b"], Tolerances.defaults(["a", "b"]), 1.0)
    core.follow(_ramp(core), None, monitor, GOAL)
    backend.time = 0.2
    if end == "preempted":
        core.follow(_ramp(core), None, None, Source("joint_trajectory", "/player",
                                                    key=("node", "/player")))
    elif end == "estop":
        core.stop_trajectory("emergency stop")  # what the hardware backend says
    elif end == "disabled":
        core.stop_trajectory("disabled")
    elif end == "deactivated":
        core.deactivate()
    elif end == "canceled by another":
        core.cancel_trajectory(Source("joint_trajectory", "/player", key=("node", "/player")))
    assert monitor.result is not None
    return monitor.result


@pytest.mark.parametrize(("end", "outcome", "message"), [
    ("preempted", FollowOutcome.PREEMPTED,
     "preempted by a newer trajectory from joint_trajectory (/player)"),
    ("estop", FollowOutcome.STOPPED, "stopped: emergency stop"),
    ("disabled", FollowOutcome.STOPPED, "stopped: disabled"),
    ("deactivated", FollowOutcome.STOPPED, "stopped: deactivated"),
    ("canceled by another", FollowOutcome.CANCELED,
     "canceled by joint_trajectory (/player): holding position"),
])
def test_a_goal_ended_by_something_else_says_what_ended_it(end: str, outcome: FollowOutcome,
                                                           message: str) -> None:
    """joint_trajectory_controller's code for a goal it preempts or drops on deactivate is
    INVALID_GOAL (ABORTED); the string says which (the node aborts a goal canceled by
    another source with that code too: test_follow_joint_trajectory.py)."""
    result = _ended(end)
    code = ErrorCode.SUCCESSFUL if outcome is FollowOutcome.CANCELED else ErrorCode.INVALID_GOAL
    assert result == (outcome, code, message)


def test_deactivate_does_not_wait_longer_than_asked_for_a_loop_that_holds_the_core() -> None:
    """A loop stuck in a cycle (a bus that does not answer) holds the core's lock: a
    deactivate with a wait powers off all the same after it, and ends the trajectory once
    the lock is free (it waited as long as the loop was stuck)."""
    import threading

    core, backend, _ = _core()
    monitor = GoalMonitor(["a", "b"], Tolerances.defaults(["a", "b"]), 1.0)
    core.follow(_ramp(core), None, monitor, GOAL)
    powered_off = threading.Event()
    backend.deactivate = powered_off.set  # type: ignore[method-assign]
    held, release = threading.Event(), threading.Event()

    def stuck_cycle() -> None:
        with core.lock:
            held.set()
            release.wait(10.0)

    loop = threading.Thread(target=stuck_cycle)
    loop.start()
    held.wait(10.0)
    caller = threading.Thread(target=core.deactivate, kwargs={"wait": 0.05})
    caller.start()
    assert powered_off.wait(5.0), "the power off waited for the stuck loop"
    assert monitor.result is None  # the trajectory ends once the loop lets go of the core
    release.set()
    caller.join(10.0)
    loop.join(10.0)
    assert not caller.is_alive()
    assert monitor.result is not None
    assert monitor.result[2] == "stopped: deactivated"


def test_activity_says_holding_after_the_timeout_and_a_trajectory_waiting_to_start() -> None:
    core, backend, _ = _core(0.5)
    core.restart_timeout(0.0)
    assert core.activity() == "holding"
    core.cycle(0.6)
    assert core.timeout_tripped
    backend.time = 0.6
    assert core.activity() == "holding: no command for 0.5 s"
    core.follow(_ramp(core), start=2.0, source=TELEOP)
    assert core.activity() == ("following a trajectory from joint_commands (/teleop)"
                               " (waiting for its start time)")
    np.testing.assert_array_equal(core.trajectory_names, ["a", "b"])
