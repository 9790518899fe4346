"""joint_trajectory_controller's rules for a FollowJointTrajectory goal, without ROS.

What ros2_control's joint_trajectory_controller (JTC) does with a
``control_msgs/action/FollowJointTrajectory`` goal, as plain Python for the action server
(:mod:`skel_ros.nodes.follow_joint_trajectory`) to apply over the robot core:

* :func:`check_goal` validates the trajectory: joint names (none, unknown, twice, or not
  every controller joint unless partial goals are allowed: ``INVALID_JOINTS``), points
  (none, value counts, times not strictly increasing, effort, a non-zero velocity at the
  end, positions outside the limits: ``INVALID_GOAL``); :func:`check_start` refuses a
  trajectory whose header stamp makes it end in the past (``OLD_HEADER_TIMESTAMP``).
  :func:`check_arrival` is the part of both that JTC's goal callback rejects a goal for
  when it arrives (``validate_trajectory_msg``).
* :class:`Tolerances` holds the controller's default tolerances and merges a goal's
  ``path_tolerance`` / ``goal_tolerance`` / ``goal_time_tolerance`` into them as JTC does:
  a requested 0 keeps the default, -1 erases it (not checked), a positive value replaces
  it. A tolerance of 0 is never checked.
* :class:`GoalMonitor` is the goal's :class:`~skel_ros.core.follower.TrajectoryObserver`:
  while the trajectory runs, each joint's error (desired - actual) must stay within its
  path tolerance (else ``PATH_TOLERANCE_VIOLATED``); after its last point, the joints must
  come within their goal tolerance (velocity: ``stopped_velocity_tolerance`` by default)
  before ``goal_time_tolerance`` has passed (else ``GOAL_TOLERANCE_VIOLATED``); a
  ``goal_time_tolerance`` of 0 waits without limit, as JTC does.
* :func:`query_state` answers JTC's ``query_state`` service (``QueryTrajectoryState``):
  the active trajectory's desired state at a given time, and whether that time is one
  the trajectory answers for (from when it was handed in until before its last point).

Where this differs from JTC, on purpose: a goal whose tolerances name an unknown joint or
hold an illegal value is refused (``INVALID_GOAL``, the reason in the result's
``error_string``) rather than run with the default tolerances and a line in the
controller's log the client never sees; and a goal that passes :func:`check_arrival`
(rejected on arrival, as JTC does) but cannot be run (a joint named twice, values that
are not finite, positions beyond the limits, such tolerances) is accepted and ended at
once with its error code, so a client learns why (JTC lets these through its goal
callback).

Measured accelerations are unknown here, so an acceleration tolerance is never violated
(JTC does the same without an acceleration state interface); a joint without a fresh
measurement (NaN) is not checked against its path tolerance in that cycle and is never
within its goal tolerance.
"""

from __future__ import annotations

import bisect
import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from skel_ros.core.follower import FollowOutcome

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    import numpy.typing as npt

    from skel_ros.core.robot import ActiveTrajectory

    Array = npt.NDArray[np.float64]

__all__ = [
    "ENDED_BY_OTHERS",
    "ERASE",
    "ErrorCode",
    "FollowSample",
    "GoalError",
    "GoalMonitor",
    "GoalPoint",
    "GoalResult",
    "StateQuery",
    "StateTolerance",
    "ToleranceRequest",
    "Tolerances",
    "check_arrival",
    "check_goal",
    "check_start",
    "query_state",
]

#: The requested tolerance that erases a default (JointTolerance.msg: "-1 - the tolerance is
#: erased"). Matched within a float epsilon, as JTC does.
ERASE = -1.0
_FLOAT_EPS = float(np.finfo(np.float32).eps)


class ErrorCode(enum.IntEnum):
    """``FollowJointTrajectory.Result.error_code`` values."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


ENDED_BY_OTHERS = ErrorCode.INVALID_GOAL
"""The code of a goal ended by something else than its own checks: preempted by a newer
trajectory, taken over by a command, canceled by another source, stopped (e-stop,
disable, deactivate, a fault, the command timeout). control_msgs has no code for these;
joint_trajectory_controller answers a goal it preempts ("Current goal preempted by new
incoming action.") and one it drops on deactivate ("Current goal cancelled during
deactivate transition.") ABORTED with ``INVALID_GOAL``, and so does this package, the
result's ``error_string`` saying which it was (MoveIt reads the goal's status, ABORTED,
and logs the code's name with the string)."""

_ENDINGS = {
    FollowOutcome.SUCCEEDED: ErrorCode.SUCCESSFUL,
    FollowOutcome.CANCELED: ErrorCode.SUCCESSFUL,  # the client's own cancel: CANCELED
    FollowOutcome.PREEMPTED: ENDED_BY_OTHERS,
    FollowOutcome.TAKEN_OVER: ENDED_BY_OTHERS,
    FollowOutcome.STOPPED: ENDED_BY_OTHERS,
    FollowOutcome.ABORTED: ENDED_BY_OTHERS,
}


class GoalError(ValueError):
    """A goal that cannot be run; nothing was started.

    Attributes:
        code: The result's error code.
        reason: The result's error string (names the joint, the point or the field).
    """

    def __init__(self, code: ErrorCode, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"{code.name}: {reason}")


@dataclass(frozen=True)
class StateTolerance:
    """How far a joint may be from where it should be; 0 = not checked.

    Attributes:
        position: rad or m.
        velocity: rad/s or m/s.
        acceleration: rad/s^2 or m/s^2.
    """

    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0

    def violations(self, position: float, velocity: float, acceleration: float, *,
                   unknown_violates: bool = False) -> list[str]:
        """The errors beyond this tolerance, one description each (empty: within).

        Args:
            position: The position error (desired - actual).
            velocity: The velocity error.
            acceleration: The acceleration error.
            unknown_violates: Whether an unknown (NaN) error counts as outside.
        """
        out = []
        for what, error, tolerance in (("position", position, self.position),
                                       ("velocity", velocity, self.velocity),
                                       ("acceleration", acceleration, self.acceleration)):
            if tolerance <= 0.0:
                continue
            if math.isnan(error):
                if unknown_violates:
                    out.append(f"{what} not measured")
            elif abs(error) > tolerance:
                out.append(f"{what} error {error:.4g} beyond {tolerance:g}")
        return out


class ToleranceRequest(NamedTuple):
    """One ``control_msgs/JointTolerance`` of a goal: 0 = default, -1 = erase."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


def _resolve(default: float, requested: float, what: str) -> float:
    """JTC's ``resolve_tolerance_source``: >0 replaces, -1 erases, 0 keeps the default."""
    if not math.isfinite(requested):
        raise GoalError(ErrorCode.INVALID_GOAL, f"{what} is {requested}, not a number")
    if requested > 0.0:
        return requested
    if abs(requested - ERASE) < _FLOAT_EPS:
        return 0.0
    if requested < 0.0:
        raise GoalError(ErrorCode.INVALID_GOAL,
                          f"{what} is {requested:g}: a tolerance is > 0, 0 (the controller's"
                          " default) or -1 (not checked)")
    return default


@dataclass(frozen=True)
class Tolerances:
    """Path and goal tolerances per joint, and the time allowed after the end.

    Attributes:
        path: Joint -> tolerance while the trajectory runs (absent: not checked).
        goal: Joint -> tolerance after its last point (absent: not checked).
        goal_time: Seconds after the last point's time to come within ``goal``;
            0 = no limit (wait until within).
    """

    path: Mapping[str, StateTolerance] = field(default_factory=dict)
    goal: Mapping[str, StateTolerance] = field(default_factory=dict)
    goal_time: float = 0.0

    @classmethod
    def defaults(cls, joints: Sequence[str], *, trajectory: Mapping[str, float] | None = None,
                 goal: Mapping[str, float] | None = None, stopped_velocity: float = 0.01,
                 goal_time: float = 0.0) -> Tolerances:
        """The controller's tolerances, from parameters shaped as JTC's ``constraints``.

        Args:
            joints: The controller's joints.
            trajectory: Joint -> path position tolerance (``constraints.<joint>.trajectory``).
            goal: Joint -> goal position tolerance (``constraints.<joint>.goal``).
            stopped_velocity: Goal velocity tolerance of every joint
                (``constraints.stopped_velocity_tolerance``).
            goal_time: ``constraints.goal_time``.

        Raises:
            ValueError: A value is negative or not finite, or names another joint.
        """
        trajectory = dict(trajectory or {})
        goal = dict(goal or {})
        for what, values in (("trajectory", trajectory), ("goal", goal)):
            for name, value in values.items():
                if name not in joints:
                    raise ValueError(f"constraints.{name}.{what}: {name!r} is not one of the"
                                     f" controller's joints")
                _check_setting(f"constraints.{name}.{what}", value)
        _check_setting("constraints.stopped_velocity_tolerance", stopped_velocity)
        _check_setting("constraints.goal_time", goal_time)
        return cls(
            path={n: StateTolerance(position=trajectory.get(n, 0.0)) for n in joints},
            goal={n: StateTolerance(position=goal.get(n, 0.0), velocity=stopped_velocity)
                  for n in joints},
            goal_time=float(goal_time))

    def merged(self, path: Sequence[ToleranceRequest] = (),
               goal: Sequence[ToleranceRequest] = (),
               goal_time: float = 0.0) -> Tolerances:
        """These tolerances with a goal's requests applied (JTC's rules).

        Raises:
            GoalError: ``INVALID_GOAL``: a request names a joint that has no tolerance
                here, twice, or holds a value other than > 0, 0 or -1.
        """
        merged_path = dict(self.path)
        merged_goal = dict(self.goal)
        for field_name, requests, table in (("path_tolerance", path, merged_path),
                                            ("goal_tolerance", goal, merged_goal)):
            seen: set[str] = set()
            for i, request in enumerate(requests):
                where = f"{field_name}[{i}]"
                if request.name not in table:
                    raise GoalError(ErrorCode.INVALID_GOAL,
                                      f"{where}: {request.name!r} is not a joint of this"
                                      f" controller (its joints: {_list(list(table))})")
                if request.name in seen:
                    raise GoalError(ErrorCode.INVALID_GOAL,
                                      f"{where}: joint {request.name!r} appears twice")
                seen.add(request.name)
                old = table[request.name]
                table[request.name] = StateTolerance(
                    _resolve(old.position, request.position, f"{where}.position"),
                    _resolve(old.velocity, request.velocity, f"{where}.velocity"),
                    _resolve(old.acceleration, request.acceleration, f"{where}.acceleration"))
        return Tolerances(merged_path, merged_goal,
                          _resolve(self.goal_time, goal_time, "goal_time_tolerance"))


def _check_setting(name: str, value: float) -> None:
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"{name} must be finite and >= 0 (0 = not checked), got {value!r}")


def _list(names: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


class GoalPoint(NamedTuple):
    """One ``trajectory_msgs/JointTrajectoryPoint`` as given (empty fields: absent)."""

    time_from_start: float
    positions: Sequence[float]
    velocities: Sequence[float] = ()
    accelerations: Sequence[float] = ()
    effort: Sequence[float] = ()


def check_goal(joint_names: Sequence[str], points: Sequence[GoalPoint],
               controller_joints: Sequence[str], *, allow_partial: bool = False,
               allow_nonzero_end_velocity: bool = False,
               check_positions: Callable[[Sequence[str], Array], str] | None = None) -> None:
    """Validate a goal's trajectory as JTC's ``validate_trajectory_msg`` does.

    Args:
        joint_names: ``trajectory.joint_names``.
        points: ``trajectory.points``.
        controller_joints: The joints this controller drives.
        allow_partial: Whether a goal may name only some of them.
        allow_nonzero_end_velocity: Whether the last point may have a non-zero velocity.
        check_positions: The limits gate: ``(names, positions)`` -> ``""`` when
            they are within the limits, else why not; applied to every point.

    Raises:
        GoalError: ``INVALID_JOINTS`` (names) or ``INVALID_GOAL`` (points); the
            reason names the joint, the point or the field.
    """
    names = list(joint_names)
    _check_names(names, controller_joints, allow_partial=allow_partial)
    if not points:
        raise GoalError(ErrorCode.INVALID_GOAL, "the trajectory has no points")
    previous = -math.inf
    for i, point in enumerate(points):
        t = point.time_from_start
        if not math.isfinite(t) or t < 0.0:
            raise GoalError(ErrorCode.INVALID_GOAL,
                            f"point {i}: time_from_start {t} is not >= 0")
        if i > 0 and not t > previous:
            raise _not_increasing(i, t, previous)
        previous = t
        _check_point(i, point, names)
        if check_positions is not None:
            problem = check_positions(names, np.asarray(point.positions, dtype=np.float64))
            if problem:
                raise GoalError(ErrorCode.INVALID_GOAL, f"point {i}: {problem}")
    if not allow_nonzero_end_velocity:
        _check_end_velocity(names, points[-1])


def check_arrival(joint_names: Sequence[str], points: Sequence[GoalPoint],
                  controller_joints: Sequence[str], *, allow_partial: bool = False,
                  allow_nonzero_end_velocity: bool = False, start: float | None = None,
                  now: float = 0.0) -> None:
    """Refuse what JTC's goal callback rejects when a goal arrives.

    JTC's ``goal_received_callback`` rejects the goals its ``validate_trajectory_msg``
    refuses: no joint names, a name that is not a controller joint, not every
    controller joint unless partial goals are allowed (``INVALID_JOINTS`` here); no
    points, times not strictly increasing, positions not one per joint, velocities or
    accelerations neither empty nor one per joint, effort given, a non-zero velocity at
    the last point (``INVALID_GOAL``); a non-zero header stamp whose trajectory has
    already ended (``OLD_HEADER_TIMESTAMP``). What else :func:`check_goal` refuses (a
    joint named twice, values that are not finite, accelerations without velocities,
    positions beyond the limits) JTC lets through this callback, and so does this.

    Args:
        joint_names: ``trajectory.joint_names``.
        points: ``trajectory.points``.
        controller_joints: The joints this controller drives.
        allow_partial: Whether a goal may name only some of them.
        allow_nonzero_end_velocity: Whether the last point may have a non-zero velocity.
        start: The header stamp in the core's time base, or None (a zero stamp).
        now: The core's time.

    Raises:
        GoalError: The code :func:`check_goal` or :func:`check_start` gives the same
            problem, and the reason (a rejected goal carries no result: for the log).
    """
    names = list(joint_names)
    _check_arrival_names(names, controller_joints, allow_partial=allow_partial)
    if not points:
        raise GoalError(ErrorCode.INVALID_GOAL, "the trajectory has no points")
    n = len(names)
    for i, point in enumerate(points):
        if i > 0 and not point.time_from_start > points[i - 1].time_from_start:
            raise _not_increasing(i, point.time_from_start, points[i - 1].time_from_start)
        for what, values in (("positions", point.positions), ("velocities", point.velocities),
                             ("accelerations", point.accelerations)):
            if len(values) != n and (what == "positions" or len(values)):
                raise _count(i, what, len(values), n)
        if len(point.effort):
            raise _effort(i)
    if not allow_nonzero_end_velocity:
        _check_end_velocity(names, points[-1])
    check_start(start, points[-1].time_from_start, now)


def _check_arrival_names(names: list[str], controller_joints: Sequence[str], *,
                         allow_partial: bool) -> None:
    """The names JTC's ``validate_trajectory_msg`` refuses (a name twice it does not)."""
    if not names:
        raise GoalError(ErrorCode.INVALID_JOINTS, "the trajectory names no joints")
    known = set(controller_joints)
    for i, name in enumerate(names):
        if name not in known:
            raise _unknown_joint(i, name, controller_joints)
    if not allow_partial and len(names) != len(known):
        _check_twice(names)  # more names than joints: one is named twice
        raise _left_out(names, controller_joints)


def _check_names(names: list[str], controller_joints: Sequence[str], *,
                 allow_partial: bool) -> None:
    known = set(controller_joints)
    if not names:
        raise GoalError(ErrorCode.INVALID_JOINTS, "the trajectory names no joints")
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name not in known:
            raise _unknown_joint(i, name, controller_joints)
        if name in seen:
            raise _twice(name, seen[name], i)
        seen[name] = i
    if not allow_partial and len(names) != len(known):
        raise _left_out(names, controller_joints)


def _check_twice(names: Sequence[str]) -> None:
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise _twice(name, seen[name], i)
        seen[name] = i


def _twice(name: str, first: int, second: int) -> GoalError:
    return GoalError(ErrorCode.INVALID_JOINTS, f"joint {name!r} appears twice"
                     f" (joint_names[{first}] and joint_names[{second}])")


def _unknown_joint(i: int, name: str, controller_joints: Sequence[str]) -> GoalError:
    return GoalError(ErrorCode.INVALID_JOINTS,
                     f"joint_names[{i}] {name!r} is not a joint of this controller"
                     f" (its joints: {_list(list(controller_joints))})")


def _left_out(names: Sequence[str], controller_joints: Sequence[str]) -> GoalError:
    named = set(names)
    missing = [n for n in controller_joints if n not in named]
    return GoalError(ErrorCode.INVALID_JOINTS,
                     f"the trajectory leaves out {_list(missing)}: this controller takes"
                     " goals for all its joints (allow_partial_joints_goal is false)")


def _not_increasing(i: int, t: float, previous: float) -> GoalError:
    return GoalError(ErrorCode.INVALID_GOAL,
                     f"point {i}: time_from_start {t:g} s is not after point {i - 1}"
                     f" ({previous:g} s); times must be strictly increasing")


def _count(i: int, what: str, count: int, n: int) -> GoalError:
    return GoalError(ErrorCode.INVALID_GOAL, f"point {i}: {count} {what} for {n} joint(s)")


def _effort(i: int) -> GoalError:
    return GoalError(ErrorCode.INVALID_GOAL,
                     f"point {i}: effort is not supported (this controller commands"
                     " positions)")


def _check_end_velocity(names: Sequence[str], last: GoalPoint) -> None:
    for j, v in enumerate(last.velocities):
        if abs(v) > _FLOAT_EPS:
            raise GoalError(ErrorCode.INVALID_GOAL,
                            f"the last point's velocity of {names[j]!r} is {v:g}, not 0"
                            " (allow_nonzero_velocity_at_trajectory_end is false)")


def _check_point(i: int, point: GoalPoint, names: list[str]) -> None:
    n = len(names)
    for what, values, required in (("positions", point.positions, True),
                                   ("velocities", point.velocities, False),
                                   ("accelerations", point.accelerations, False)):
        if not required and len(values) == 0:
            continue
        if len(values) != n:
            raise _count(i, what, len(values), n)
        bad = [j for j, v in enumerate(values) if not math.isfinite(v)]
        if bad:
            raise GoalError(ErrorCode.INVALID_GOAL,
                            f"point {i}: {what} of {names[bad[0]]!r} is {values[bad[0]]},"
                            " not a finite number")
    if len(point.accelerations) and not len(point.velocities):
        raise GoalError(ErrorCode.INVALID_GOAL, f"point {i} has accelerations but no velocities")
    if len(point.effort):
        raise _effort(i)


def check_start(start: float | None, duration: float, now: float) -> None:
    """Refuse a trajectory whose header stamp makes it end before ``now``.

    Args:
        start: The header stamp in the core's time base, or None (a zero stamp: start now).
        duration: The last point's ``time_from_start``.
        now: The core's time.

    Raises:
        GoalError: ``OLD_HEADER_TIMESTAMP``.
    """
    if start is not None and start + duration < now:
        raise GoalError(ErrorCode.OLD_HEADER_TIMESTAMP,
                          f"the trajectory (header stamp {start:.6f} s, {duration:g} s long)"
                          f" ended {now - start - duration:.3f} s ago; stamp 0 starts it on"
                          " receipt")


class FollowSample(NamedTuple):
    """One control cycle as the monitor saw it (arrays in the trajectory's joint order).

    ``error`` is desired - actual (NaN where not measured); velocities are None when the
    robot does not measure them.
    """

    now: float
    elapsed: float
    point_index: int
    desired_positions: Array
    desired_velocities: Array
    actual_positions: Array
    actual_velocities: Array | None
    error_positions: Array
    error_velocities: Array | None


class GoalResult(NamedTuple):
    """How a goal ended: the core's outcome, the result's code and string."""

    outcome: FollowOutcome
    code: ErrorCode
    message: str


class GoalMonitor:
    """A goal's :class:`~skel_ros.core.follower.TrajectoryObserver` (JTC's tolerance checks).

    Called by the core in its thread, under its lock: it only compares numbers, keeps the
    latest cycle in :attr:`latest` and, once, the result in :attr:`result`, then calls
    ``on_done`` (which must not block: e.g. a ROS guard condition's ``trigger``).

    Args:
        names: The trajectory's joints (its arrays' order).
        tolerances: The goal's tolerances (joints not in them: not checked).
        duration: The last point's ``time_from_start``.
        point_times: Every point's ``time_from_start`` (for :attr:`FollowSample.index`).
        on_done: Called once, after :attr:`result` is set.
    """

    def __init__(self, names: Sequence[str], tolerances: Tolerances, duration: float,
                 point_times: Sequence[float] = (), *,
                 on_done: Callable[[], None] | None = None) -> None:
        self.names = tuple(names)
        self.tolerances = tolerances
        self.duration = float(duration)
        self._times = list(point_times)
        self._path = [tolerances.path.get(n, StateTolerance()) for n in self.names]
        self._goal = [tolerances.goal.get(n, StateTolerance()) for n in self.names]
        self._on_done = on_done
        self._decided: GoalResult | None = None
        self.latest: FollowSample | None = None
        """The last cycle seen (None before the first)."""
        self.result: GoalResult | None = None
        """How it ended (None while it runs)."""

    def on_cycle(self, now: float, elapsed: float, names: Sequence[str],  # noqa: ARG002
                 desired: tuple[Array, Array], actual: tuple[Array, Array | None],
                 ) -> tuple[FollowOutcome, str] | None:
        """Check this cycle; see :class:`~skel_ros.core.follower.TrajectoryObserver`."""
        desired_q, desired_v = desired
        actual_q, actual_v = actual
        error_q = desired_q - actual_q
        error_v = None if actual_v is None else desired_v - actual_v
        index = min(bisect.bisect_right(self._times, elapsed), max(len(self._times) - 1, 0))
        self.latest = FollowSample(now, elapsed, index, desired_q, desired_v, actual_q,
                                   actual_v, error_q, error_v)
        if elapsed < 0.0:
            return None  # not started yet (a header stamp in the future)
        if elapsed <= self.duration:
            problems = self._beyond(self._path, error_q, error_v, unknown_violates=False)
            if problems:
                return self._decide(ErrorCode.PATH_TOLERANCE_VIOLATED,
                                    f"path tolerance violated at t = {elapsed:.3f} s: {problems}")
            return None
        problems = self._beyond(self._goal, error_q, error_v, unknown_violates=True)
        if not problems:
            return self._decide(ErrorCode.SUCCESSFUL,
                                f"goal reached {elapsed - self.duration:.3f} s after the end")
        late = elapsed - self.duration
        if self.tolerances.goal_time > 0.0 and late > self.tolerances.goal_time:
            return self._decide(ErrorCode.GOAL_TOLERANCE_VIOLATED,
                                f"goal tolerance not reached {late:.3f} s after the end"
                                f" (goal_time_tolerance {self.tolerances.goal_time:g} s):"
                                f" {problems}")
        return None

    def _beyond(self, tolerances: list[StateTolerance], error_q: Array, error_v: Array | None,
                *, unknown_violates: bool) -> str:
        out = []
        for j, tolerance in enumerate(tolerances):
            velocity = 0.0 if error_v is None else float(error_v[j])
            found = tolerance.violations(float(error_q[j]), velocity, 0.0,
                                         unknown_violates=unknown_violates)
            if found:
                out.append(f"{self.names[j]!r} " + ", ".join(found))
        return "; ".join(out)

    def _decide(self, code: ErrorCode, message: str) -> tuple[FollowOutcome, str]:
        outcome = FollowOutcome.SUCCEEDED if code is ErrorCode.SUCCESSFUL else \
            FollowOutcome.ABORTED
        self._decided = GoalResult(outcome, code, message)
        return outcome, message

    def on_end(self, now: float, outcome: FollowOutcome, message: str) -> None:  # noqa: ARG002
        """Record the result (once); see :class:`~skel_ros.core.follower.TrajectoryObserver`."""
        if self.result is not None:
            return
        decided = self._decided
        if decided is not None and decided.outcome is outcome:
            self.result = decided
        else:
            if outcome is FollowOutcome.STOPPED:  # the backend's reason: "emergency stop"...
                message = f"stopped: {message}"
            self.result = GoalResult(outcome, _ENDINGS[outcome], message)
        if self._on_done is not None:
            self._on_done()


class StateQuery(NamedTuple):
    """:func:`query_state`'s answer.

    Attributes:
        ok: The time is one the active trajectory answers for.
        message: Why not ("" when ``ok``).
        sample: Desired positions, velocities and accelerations, in the trajectory's
            joint order (:attr:`ActiveTrajectory.names`): at the time asked, or its last
            point when the time is at or after it; None when there is nothing to sample
            (no trajectory, or a time before it was handed in).
    """

    ok: bool
    message: str
    sample: tuple[Array, Array, Array] | None


def query_state(active: ActiveTrajectory | None, time: float) -> StateQuery:
    """The active trajectory's desired state at ``time``, as JTC's ``query_state`` answers.

    JTC answers for the times from the moment it took the trajectory until before its
    last point: earlier, the trajectory was not in effect; from the last point on it has
    played out (JTC then still gives the last point, with ``success`` false). In between
    the sample is what the core commands at that time: its first sample until its start
    (a start stamp in the future), then the trajectory.

    Args:
        active: The trajectory being followed (:attr:`RobotCore.active_trajectory`).
        time: The time asked, in the core's time base.
    """
    if active is None:
        return StateQuery(ok=False, message="no trajectory is being followed", sample=None)
    if not time >= active.received:
        return StateQuery(ok=False, sample=None,
                          message=f"the time asked ({time:.6f} s) is before the trajectory"
                                  f" was received ({active.received:.6f} s)")
    duration = active.trajectory.duration
    end = active.start + duration
    if time >= end:
        return StateQuery(ok=False, sample=_sample(active, duration),
                          message=f"the time asked ({time:.6f} s) is not before the"
                                  f" trajectory's last point ({end:.6f} s)")
    return StateQuery(ok=True, message="", sample=_sample(active, max(time - active.start, 0.0)))

def _sample(active: ActiveTrajectory, t: float) -> tuple[Array, Array, Array]:
    q, v, a = active.trajectory.sample(t)
    return (np.asarray(q, dtype=np.float64), np.asarray(v, dtype=np.float64),
            np.asarray(a, dtype=np.float64))
