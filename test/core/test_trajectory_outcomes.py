"""How the robot core ends trajectories and what it says, over the numpy double.

What ``skel_ros/core/robot.py`` promises: a trajectory that cannot be sampled aborts and
holds at the cycle it failed on; an observer's answer other than SUCCEEDED or ABORTED
aborts; a joint whose measurement is stale reaches the observer as NaN (a float array);
a cancel says who canceled; the clamp warning names the farthest point beyond a limit,
on either side; commands for DOFs the robot does not drive are left out (said once),
and a DOF's command kinds are named when it refuses one; every refusal carries a
stable throttle key. Times are exact (the double moves as told, steps are 1/8 s).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from numpy_backend import NumpyBackend

from skel_ros.core import ALL_KINDS, CommandRefused, FollowOutcome, RobotCore, RobotState
from skel_ros.core.commanders import Source
from skel_ros.core.timeout import CommandTimeout
from skel_ros.model.limits import CommandKind, JointLimits, LimitSet
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from collections.abc import Sequence

DT = 0.125
P, V, E = CommandKind.POSITION, CommandKind.VELOCITY, CommandKind.EFFORT
TELEOP = Source("joint_commands", "/teleop")


class Log:
    """A CoreLog that keeps (level, message, key)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, str]] = []

    def info(self, message: str) -> None:
        self.lines.append(("info", message, ""))

    def warning(self, message: str, key: str) -> None:
        self.lines.append(("warning", message, key))

    def error(self, message: str, key: str) -> None:
        self.lines.append(("error", message, key))

    def about(self, word: str) -> list[tuple[str, str, str]]:
        return [line for line in self.lines if word in line[1]]


class Ends:
    """An observer that answers as told and records how the trajectory ended."""

    def __init__(self, answer: tuple[FollowOutcome, str] | None = None) -> None:
        self.answer = answer
        self.actual: list[tuple[np.ndarray, np.ndarray | None]] = []
        self.ends: list[tuple[float, FollowOutcome, str]] = []

    def on_cycle(self, now: float, elapsed: float, names: Sequence[str],  # noqa: ARG002
                 desired: tuple[np.ndarray, np.ndarray],  # noqa: ARG002
                 actual: tuple[np.ndarray, np.ndarray | None],
                 ) -> tuple[FollowOutcome, str] | None:
        self.actual.append(actual)
        return self.answer

    def on_end(self, now: float, outcome: FollowOutcome, message: str) -> None:
        self.ends.append((now, outcome, message))


def _rig(**kwargs: object) -> tuple[RobotCore, NumpyBackend, Log]:
    backend = NumpyBackend()
    backend.period = DT
    log = Log()
    return RobotCore(backend, log=log, **kwargs), backend, log  # type: ignore[arg-type]


def _ramp(names: Sequence[str] = ("a", "b"), to: float = 0.5, duration: float = 1.0,
          ) -> PointTrajectory:
    return PointTrajectory(names, [TrajectoryPoint(duration, tuple([to] * len(names)))],
                           [0.0] * len(names))


def _run(core: RobotCore, backend: NumpyBackend, steps: int) -> None:
    for _ in range(steps):
        core.cycle(backend.time + DT)
        backend.step(DT)


# ----------------------------------------------------------------------------- ends


class Broken:
    """A trajectory whose sampling fails after its first half second."""

    joint_names = ("a", "b")
    duration = 1.0

    def sample(self, t: float) -> tuple[list[float], list[float], list[float]]:
        if t > 0.5:
            raise ValueError("no spline there")
        return [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]


def test_a_trajectory_that_cannot_be_sampled_aborts_and_holds_on_that_cycle() -> None:
    core, backend, log = _rig()
    observer = Ends()
    core.follow(Broken(), observer=observer)  # type: ignore[arg-type]
    _run(core, backend, 6)
    assert observer.ends == [(0.625, FollowOutcome.ABORTED,
                              "trajectory sampling failed, holding: no spline there")]
    assert backend.holds == [("a", "b")]
    assert not core.following
    assert ("error", "trajectory sampling failed, holding: no spline there",
            "trajectory aborted") in log.lines


def test_an_observer_answering_neither_succeeded_nor_aborted_aborts_and_holds() -> None:
    core, backend, _ = _rig()
    observer = Ends(answer=(FollowOutcome.PREEMPTED, "odd"))
    core.follow(_ramp(), observer=observer)
    _run(core, backend, 1)
    assert observer.ends == [(DT, FollowOutcome.ABORTED,
                              (f"the observer returned {FollowOutcome.PREEMPTED!r}, not"
                              " SUCCEEDED or ABORTED"))]
    assert backend.holds == [("a", "b")]


class Stale(NumpyBackend):
    """Joint ``b``'s measurement is never fresh."""

    def read(self, now: float) -> RobotState:
        state = super().read(now)
        fresh = state.fresh.copy()
        fresh[1] = False
        return RobotState(state.stamp, state.positions, state.velocities, state.efforts, fresh)


def test_a_stale_joint_reaches_the_observer_as_nan_positions_and_velocities() -> None:
    backend = Stale()
    backend.period = DT
    core = RobotCore(backend)
    observer = Ends()
    core.follow(_ramp(), observer=observer)
    _run(core, backend, 2)
    q, v = observer.actual[-1]
    assert v is not None
    assert q.dtype == np.float64
    assert v.dtype == np.float64
    assert not math.isnan(q[0])
    assert math.isnan(q[1])
    assert not math.isnan(v[0])
    assert math.isnan(v[1])


def test_a_cancel_says_who_canceled_unless_it_is_the_trajectorys_own_source() -> None:
    goal = Source("follow_joint_trajectory", "goal 1")
    for by, said in ((None, "canceled: holding position"),
                     (goal, "canceled: holding position"),
                     (TELEOP, "canceled by joint_commands (/teleop): holding position")):
        core, backend, _ = _rig()
        observer = Ends()
        core.follow(_ramp(), observer=observer, source=goal)
        _run(core, backend, 1)
        assert core.cancel_trajectory(by)
        assert observer.ends == [(DT, FollowOutcome.CANCELED, said)]


def test_a_refused_cancel_is_keyed_as_a_second_commanders() -> None:
    core, _backend, _ = _rig(exclusive_commands=True)
    goal = Source("follow_joint_trajectory", "goal 1")
    core.follow(_ramp(), source=goal)
    with pytest.raises(CommandRefused, match="cancel refused: ") as info:
        core.cancel_trajectory(TELEOP)
    assert info.value.key == "second commander"
    assert core.following


# ----------------------------------------------------------------------------- refusals


def test_a_trajectory_refused_for_another_commander_is_keyed_as_such() -> None:
    core, _backend, _ = _rig(exclusive_commands=True, command_timeout=0.5)
    assert core.command(P, ["a"], [0.25], TELEOP).ok
    with pytest.raises(CommandRefused, match="trajectory refused: ") as info:
        core.follow(_ramp())
    assert info.value.key == "second commander"


class NoJoints:
    """A trajectory of no joint (PointTrajectory refuses to be one; another may not)."""

    joint_names = ()
    duration = 1.0

    def sample(self, t: float) -> tuple[list[float], list[float], list[float]]:  # noqa: ARG002
        return [], [], []


def test_a_trajectory_without_joints_is_refused_with_a_stable_key() -> None:
    core, _, _ = _rig()
    with pytest.raises(CommandRefused) as info:
        core.follow(NoJoints())  # type: ignore[arg-type]
    assert info.value.reason == "trajectory rejected: no joints"
    assert info.value.key == "trajectory joint names"


def test_a_start_on_receipt_is_allowed_with_no_start_delay_at_all() -> None:
    core, backend, _ = _rig(max_start_delay=0.0)
    core.follow(_ramp())
    assert core.following
    with pytest.raises(CommandRefused, match="max_start_delay"):
        core.follow(_ramp(), start=backend.time + DT)
    for bad in (-DT, math.nan):
        with pytest.raises(ValueError, match="max_start_delay must be >= 0"):
            RobotCore(NumpyBackend(), max_start_delay=bad)


def test_a_trajectory_that_ended_before_it_came_is_said_and_goes_to_its_last_point() -> None:
    core, backend, log = _rig()
    backend.time = 4.0
    core.follow(_ramp(duration=1.0), start=2.5)
    assert log.about("trajectory: it ended") == [
        ("warning", ("trajectory: it ended 0.500 s ago (start stamp in the past); going to its"
         " last point"), "trajectory past")]
    _run(core, backend, 1)
    assert backend.q[:2] == pytest.approx([0.5, 0.5])


# ----------------------------------------------------------------------------- clamping


def test_the_clamp_warning_names_the_farthest_point_beyond_the_limit_on_each_side() -> None:
    core, backend, log = _rig()
    trajectory = PointTrajectory(
        ["a", "b"],
        [TrajectoryPoint(0.5, (1.5, -1.25)), TrajectoryPoint(1.0, (3.0, -2.0)),
         TrajectoryPoint(1.5, (0.0, 0.0))],
        [0.0, 0.0])
    core.follow(trajectory)
    _run(core, backend, 14)
    said = log.about("leaves the limits")
    assert len(said) == 2  # once per DOF and trajectory: a leaves first, then b
    assert "'a' reaches 3 (limit 1)" in said[0][1]
    assert "'b' reaches -2 (limit -1)" in said[1][1]
    assert {key for _, _, key in said} == {"trajectory clamped"}


# ----------------------------------------------------------------------------- the gate


def _with_undriven(log: Log) -> tuple[RobotCore, NumpyBackend]:
    """Joints a, b, c driven; ``d`` has limits (it is in the model) but no actuator."""
    backend = NumpyBackend()
    backend.limits = LimitSet([JointLimits(x, position_lower=-1.0, position_upper=1.0,
                                           velocity_lower=-2.0, velocity_upper=2.0)
                               for x in ("a", "b", "c", "d")])
    return RobotCore(backend, log=log), backend


def test_commands_for_a_dof_without_an_actuator_leave_it_out_and_say_so_once() -> None:
    log = Log()
    core, backend = _with_undriven(log)
    result = core.command(P, ["d", "a"], [5.0, 2.0])
    assert result.ok
    assert [c.name for c in result.clamped] == ["a"]  # d's clamp is not reported
    assert backend.writes[-1] == (0.0, P, ("a",), (1.0,))
    assert core.command(P, ["a", "d"], [0.25, 0.5]).ok
    assert backend.writes[-1] == (0.0, P, ("a",), (0.25,))
    assert log.lines == [("warning", "commands for DOF(s) without an actuator are ignored: d",
                          "no actuator")]


def test_a_trajectory_for_a_dof_without_an_actuator_is_refused_naming_it() -> None:
    log = Log()
    core, _ = _with_undriven(log)
    with pytest.raises(CommandRefused) as info:
        core.follow(_ramp(("a", "d")))
    assert info.value.reason == "trajectory rejected: DOF(s) without an actuator: d"
    assert info.value.key == "no actuator"
    assert not core.following


def test_a_command_kind_a_dof_does_not_take_is_refused_naming_the_kinds_it_takes() -> None:
    backend = NumpyBackend(modes=[frozenset({P, V}), ALL_KINDS, frozenset()])
    core = RobotCore(backend)
    result = core.command(E, ["a"], [0.5])
    assert not result.ok
    assert "DOF 'a' takes position or velocity commands, not effort" in result.message
    result = core.command(P, ["c"], [0.5])
    assert "DOF 'c' takes no commands, not position" in result.message
    assert backend.writes == []


# ----------------------------------------------------------------------------- timeout


def test_a_nan_command_timeout_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^command timeout is NaN$"):
        CommandTimeout(math.nan)
    timeout = CommandTimeout(0.5)
    timeout.feed(0.0)
    assert timeout.poll(0.5) is True
    assert timeout.tripped is True
    timeout.feed(1.0)
    assert timeout.tripped is False


class HoldTimes(NumpyBackend):
    """Records when each hold was written."""

    def __init__(self) -> None:
        super().__init__()
        self.period = DT
        self.hold_times: list[float] = []

    def hold(self, now: float, index: np.ndarray) -> None:
        self.hold_times.append(now)
        super().hold(now, index)


class NotANumber:
    """A trajectory whose samples after its first quarter second are NaN."""

    joint_names = ("a", "b")
    duration = 1.0

    def sample(self, t: float) -> tuple[list[float], list[float], list[float]]:
        q = [math.nan, 0.0] if t > 0.25 else [0.0, 0.0]
        return q, [0.0, 0.0], [0.0, 0.0]


def test_a_sample_the_gate_rejects_aborts_and_holds_on_that_cycle() -> None:
    backend = HoldTimes()
    core = RobotCore(backend)
    observer = Ends()
    core.follow(NotANumber(), observer=observer)  # type: ignore[arg-type]
    _run(core, backend, 4)
    [(now, outcome, message)] = observer.ends
    assert (now, outcome) == (0.375, FollowOutcome.ABORTED)
    assert message.startswith("trajectory sample rejected, holding: ")
    assert backend.hold_times == [0.375]


def test_an_observer_abort_holds_at_the_cycle_it_was_decided() -> None:
    backend = HoldTimes()
    core = RobotCore(backend)
    core.follow(_ramp(), observer=Ends(answer=(FollowOutcome.ABORTED, "too far")))
    _run(core, backend, 1)
    assert backend.hold_times == [DT]


def test_a_trajectory_ending_in_the_future_is_not_said_to_be_past() -> None:
    core, backend, log = _rig()
    backend.time = 4.0
    core.follow(_ramp(duration=1.0), start=3.5)  # started half a second ago, ends at 4.5
    assert log.about("it ended") == []


def test_refusals_while_the_backend_refuses_motion_are_keyed_refused() -> None:
    core, backend, _ = _rig()
    backend.refused = "emergency stop"
    result = core.command(P, ["a"], [0.25])
    assert (result.ok, result.reason) == (False, "refused")
    assert result.message == "position command ignored: emergency stop"
    with pytest.raises(CommandRefused) as info:
        core.follow(_ramp())
    assert (info.value.reason, info.value.key) == ("trajectory ignored: emergency stop",
                                                   "refused")


def test_a_command_kind_refused_by_the_gate_carries_nothing_to_write() -> None:
    core, _, _ = _rig()
    check = core.gate(P, ["c"], [0.5])
    assert not check.ok
    assert (check.indices.size, check.values.size, check.requested.size) == (0, 0, 0)
    assert check.clamped == ()


def test_a_nan_timeout_set_on_the_core_is_refused_by_name() -> None:
    core, _, _ = _rig()
    with pytest.raises(ValueError, match=r"^command timeout is NaN$"):
        core.set_command_timeout(math.nan)
