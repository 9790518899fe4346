"""FollowJointTrajectory over the robot core, as joint_trajectory_controller offers it.

MoveIt's simple controller manager, rqt_joint_trajectory_controller and most arm tooling
drive a robot through ros2_control's joint_trajectory_controller (JTC). This helper gives a
robot node (simulation or hardware: it only talks to :class:`~skel_ros.core.RobotCore`)
the same interface, relative to the node's namespace, ``<controller>`` being the
``trajectory_controller.name`` parameter (default ``joint_trajectory_controller``):

* the action ``<controller>/follow_joint_trajectory``
  (``control_msgs/action/FollowJointTrajectory``): goal validation, path and goal
  tolerances, ``goal_time_tolerance``, feedback (desired / actual / error), cancel (the
  joints hold where they are), preemption by a newer goal or any other trajectory, and
  the result codes (the rules: :mod:`skel_ros.core.tolerances`);
* the topic ``<controller>/joint_trajectory`` (``trajectory_msgs/JointTrajectory``),
  checked as a goal with the default tolerances;
* ``<controller>/controller_state`` (``control_msgs/msg/JointTrajectoryControllerState``):
  reference, feedback and error of the controller's joints, at ``state_publish_rate``,
  only when there is a new measurement;
* the service ``<controller>/query_state`` (``control_msgs/srv/QueryTrajectoryState``):
  the active trajectory's desired state at a given time (which times it answers for:
  :func:`~skel_ros.core.tolerances.query_state`).

Threading: the core checks every control cycle in its own thread (the simulation's
stepping thread, the hardware's control loop) through a
:class:`~skel_ros.core.tolerances.GoalMonitor`. The action's execute callback is a
coroutine that waits on an rclpy ``Future``: it never blocks the executor, so it works
with the single-threaded executor the nodes spin. When the core ends a goal, the
monitor triggers a guard condition, whose callback (in the executor) completes that
future. Feedback and the controller state go out from timers. Only rclpy API common to
Humble, Jazzy and Kilted is used.

Parameters (read-only, declared on the node), JTC's names under ``trajectory_controller.``:
    name (string): the controller's name; "" = no action, no topics.
    joints (string[]): the controller's joints ([]: every DOF that takes position
        commands, in model order).
    allow_partial_joints_goal (bool): goals may name some of the joints only.
    allow_nonzero_velocity_at_trajectory_end (bool).
    state_publish_rate (double): Hz of ``controller_state``.
    action_monitor_rate (double): Hz of the action's feedback.
    constraints.goal_time (double): seconds after the end to come within the goal
        tolerance; 0 = no limit.
    constraints.stopped_velocity_tolerance (double): goal velocity tolerance, every joint.
    constraints.trajectory, constraints.goal (double[]): path / goal position tolerance,
        one value per joint (``joints`` order) or one for all ([] or 0: not checked).
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTrajectoryControllerState
from control_msgs.srv import QueryTrajectoryState
from rclpy.action.server import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from skel_ros.core import CommandRefused, FollowOutcome
from skel_ros.core.commanders import Source
from skel_ros.core.tolerances import (
    ENDED_BY_OTHERS,
    ErrorCode,
    GoalError,
    GoalMonitor,
    GoalPoint,
    GoalResult,
    ToleranceRequest,
    Tolerances,
    check_arrival,
    check_goal,
    check_start,
    query_state,
)
from skel_ros.model.limits import CommandKind
from skel_ros.nodes.errors import NodeSetupError
from skel_ros.nodes.parameters import Param, declare, read, within
from skel_ros.nodes.qos import COMMAND_QOS, quiet_publisher_events
from skel_ros.nodes.robot_publisher import float64_array
from skel_ros.nodes.sources import subscribe_with_source
from skel_ros.nodes.throttle import Throttle
from skel_ros.nodes.time_base import TimeBase
from skel_ros.trajectory.errors import TrajectoryError
from skel_ros.trajectory.messages import build_trajectory, read_joint_trajectory, stamp_to_seconds

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt
    from rclpy.node import Node

    from skel_ros.core import RobotCore
    from skel_ros.core.tolerances import FollowSample
    from skel_ros.trajectory.points import PointTrajectory

    _Handle = Any  # rclpy.action.server.ServerGoalHandle (generic from Jazzy on)

__all__ = ["DEFAULT_CONTROLLER", "PREFIX", "SETTINGS", "ControllerSettings",
           "FollowJointTrajectoryServer", "declare_settings"]

PREFIX = "trajectory_controller."
DEFAULT_CONTROLLER = "joint_trajectory_controller"
_MAX_RATE = 1000.0  # Hz


@dataclass(frozen=True)
class ControllerSettings:
    """The ``trajectory_controller.*`` parameters, checked."""

    name: str
    joints: tuple[str, ...]
    allow_partial: bool
    allow_nonzero_end_velocity: bool
    state_rate: float
    feedback_rate: float
    tolerances: Tolerances


def _position_joints(core: RobotCore, prefix: str) -> tuple[str, ...]:
    """The DOFs that take position commands, in model order (public names)."""
    modes = core.capabilities.command_modes
    out = []
    for i, name in enumerate(core.names):
        if modes and CommandKind.POSITION not in modes[i]:
            continue
        check = core.gate(CommandKind.POSITION, [name], [0.0])
        if check.ok and name in check.names:
            out.append(prefix + name)
    return tuple(out)


def _strings(value: Any) -> list[str]:  # noqa: ANN401 - a parameter's value
    """A string-list parameter's value (declared with dynamic typing)."""
    items = list(value) if isinstance(value, (list, tuple)) else None
    if items is None or not all(isinstance(v, str) for v in items):
        raise ValueError(f"must be a list of names, got {value!r}")
    return items


def _numbers(value: Any) -> list[float]:  # noqa: ANN401 - a parameter's value
    """A number-list parameter's value (a single number: one for all)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        raise ValueError(f"must be a list of numbers, got {value!r}")
    return [float(v) for v in items]


_RATE = within(0.0, _MAX_RATE, open_low=True, unit="Hz")

# Every parameter gets a value: rclpy's GetParameters answers nothing at all when one
# name asked for has none, so `ros2 param dump` would print an empty node. An empty list
# has no type in rclpy: the lists are declared with dynamic typing, their items checked.
SETTINGS: dict[str, Param] = {
    "name": Param(DEFAULT_CONTROLLER, "the trajectory controller's name: actions and topics"
                  " under <name>/ ('' = none)", read_only=True),
    "joints": Param([], "the controller's joints ([]: every DOF taking position commands)",
                    read_only=True, dynamic=True, convert=_strings),
    "allow_partial_joints_goal": Param(
        default=False, description="goals may name some of the controller's joints only",
        read_only=True),
    "allow_nonzero_velocity_at_trajectory_end": Param(
        default=False, description="a trajectory's last point may have a non-zero velocity",
        read_only=True),
    "state_publish_rate": Param(25.0, "Hz of <name>/controller_state", read_only=True,
                                number=True, convert=_RATE),
    "action_monitor_rate": Param(20.0, "Hz of the action's feedback", read_only=True,
                                 number=True, convert=_RATE),
    "constraints.goal_time": Param(0.0, "seconds after a trajectory's end to come within the"
                                   " goal tolerance (0: no limit)", read_only=True, number=True),
    "constraints.stopped_velocity_tolerance": Param(
        0.01, "goal velocity tolerance of every joint (rad/s or m/s)", read_only=True,
        number=True),
    "constraints.trajectory": Param(
        [], "path position tolerance: one per joint or one for all ([] or 0: not checked)",
        read_only=True, dynamic=True, convert=_numbers),
    "constraints.goal": Param(
        [], "goal position tolerance: one per joint or one for all ([] or 0: not checked)",
        read_only=True, dynamic=True, convert=_numbers),
}
"""The ``trajectory_controller.*`` parameters (under :data:`PREFIX`), JTC's names."""


def declare_settings(node: Node, core: RobotCore, prefix: str = "") -> ControllerSettings:
    """Declare the ``trajectory_controller.*`` parameters on ``node`` and check them.

    Args:
        node: The node.
        core: Its core.
        prefix: What the node puts before the core's DOF names to make its public joint
            names (``<skeleton>/`` when the hardware drives one skeleton of several).

    Raises:
        NodeSetupError: A value is unusable; the message names the parameter.
    """
    declare(node, SETTINGS, PREFIX)
    p = read(node, SETTINGS, PREFIX)
    joints = _controller_joints(p["joints"], _position_joints(core, prefix))
    try:
        tolerances = Tolerances.defaults(
            joints, trajectory=_per_joint("constraints.trajectory", p["constraints.trajectory"],
                                          joints),
            goal=_per_joint("constraints.goal", p["constraints.goal"], joints),
            stopped_velocity=p["constraints.stopped_velocity_tolerance"],
            goal_time=p["constraints.goal_time"])
    except ValueError as exc:
        raise NodeSetupError(f"{PREFIX}{exc}") from None
    return ControllerSettings(p["name"], joints, p["allow_partial_joints_goal"],
                              p["allow_nonzero_velocity_at_trajectory_end"],
                              p["state_publish_rate"], p["action_monitor_rate"], tolerances)


def _controller_joints(given: Sequence[str] | None,
                       available: tuple[str, ...]) -> tuple[str, ...]:
    if not given:
        return available
    unknown = [j for j in given if j not in available]
    if unknown:
        raise NodeSetupError(
            f"{PREFIX}joints: {', '.join(map(repr, unknown))} cannot be commanded in"
            f" position (these can: {', '.join(map(repr, available))})")
    if len(set(given)) != len(given):
        raise NodeSetupError(f"{PREFIX}joints names a joint twice")
    return tuple(given)


def _per_joint(key: str, values: Sequence[float] | None,
               joints: tuple[str, ...]) -> dict[str, float]:
    """One value per joint, or one for all (unset: none)."""
    if not values:
        return {}
    if len(values) == 1:
        return dict.fromkeys(joints, float(values[0]))
    if len(values) != len(joints):
        raise NodeSetupError(f"{PREFIX}{key}: {len(values)} values for {len(joints)}"
                             " joints (give one per joint, or one for all)")
    return {j: float(v) for j, v in zip(joints, values, strict=True)}


def _point(positions: npt.ArrayLike, velocities: npt.ArrayLike | None) -> JointTrajectoryPoint:
    point = JointTrajectoryPoint()
    _set_point(point, positions, velocities)
    return point


def _set_point(point: JointTrajectoryPoint, positions: npt.ArrayLike,
               velocities: npt.ArrayLike | None) -> None:
    """Write positions and velocities (empty when ``None``) into ``point``."""
    point.positions = float64_array(positions)
    point.velocities = float64_array(() if velocities is None else velocities)


def _check_single_dof(request: FollowJointTrajectory.Goal) -> None:
    """Refuse the multi-DOF parts of a goal (every DOF is a joint of ``trajectory`` here)."""
    if len(request.multi_dof_trajectory.points) or len(request.multi_dof_trajectory.joint_names):
        raise GoalError(ErrorCode.INVALID_JOINTS, "multi_dof_trajectory is not supported:"
                        " give every DOF as a joint of trajectory")
    for field in ("component_path_tolerance", "component_goal_tolerance"):
        if len(getattr(request, field, ())):  # control_msgs >= 4
            raise GoalError(ErrorCode.INVALID_GOAL,
                            f"{field} applies to multi_dof_trajectory, which is not supported")


@dataclass
class _Goal:
    handle: _Handle
    monitor: GoalMonitor
    done: Future[GoalResult]
    sent: FollowSample | None = None


class FollowJointTrajectoryServer:
    """The action server, topic and controller state of one trajectory controller.

    Takes a node, as tf2_ros's ``TransformBroadcaster`` does; everything is created on it.

    Args:
        node: The robot node.
        core: Its robot core.
        time_base: Header stamps <-> the core's time (default: stamps in the core's
            time, offset 0).
        settings: Checked settings (None: declared on ``node`` and read).
        joint_prefix: Public joint name = ``joint_prefix`` + the core's DOF name.
        state_timer: Publish ``controller_state`` from a timer of the node's clock at
            ``state_publish_rate``; False: the owner calls :meth:`publish_state` at that
            rate from its control loop (the simulation: in simulated time, as
            joint_trajectory_controller does from its update loop).

    Raises:
        NodeSetupError: A ``trajectory_controller.*`` parameter is unusable.
    """

    def __init__(self, node: Node, core: RobotCore, *,
                 time_base: TimeBase | None = None,
                 settings: ControllerSettings | None = None,
                 joint_prefix: str = "",
                 state_timer: bool = True) -> None:
        self.node = node
        self.core = core
        self._core_lock = core.lock  # the loop holds it through its cycles
        self.settings = (settings if settings is not None
                         else declare_settings(node, core, joint_prefix))
        self._to_core = {joint_prefix + n: n for n in core.names}
        self._time_base = time_base or TimeBase.core_time()
        self._warn = Throttle(node.get_logger().warning)
        self._lock = threading.Lock()
        self._goals: list[_Goal] = []
        self._following: GoalMonitor | None = None  # the last monitor handed to the core
        self._state_sent: float | None = None
        self._server: ActionServer[Any, Any, Any] | None = None
        name = self.settings.name
        if not name:
            return
        self._server = ActionServer(
            node, FollowJointTrajectory, f"{name}/follow_joint_trajectory",
            execute_callback=self._execute, goal_callback=self._on_goal,
            cancel_callback=self._on_cancel)
        self._topic = f"{name}/joint_trajectory"
        subscribe_with_source(node, JointTrajectory, self._topic, self._on_trajectory,
                              COMMAND_QOS)
        # Every goal of the action is one commander, as joint_trajectory_controller is one
        # controller: a newer goal preempts the running one, as JTC's does. rclpy tells a
        # server no client's identity (common to Humble, Jazzy and Kilted): a goal is
        # named by its id.
        self._action = f"{name}/follow_joint_trajectory"
        self._state = node.create_publisher(JointTrajectoryControllerState,
                                            f"{name}/controller_state", 10,
                                            event_callbacks=quiet_publisher_events())
        # Feedback runs only while a goal does (no executor wake-ups for nothing).
        self._feedback_timer = node.create_timer(1.0 / self.settings.feedback_rate,
                                                 self._publish_feedback)
        self._feedback_timer.cancel()
        if state_timer:
            node.create_timer(1.0 / self.settings.state_rate, self.publish_state)
        node.create_service(QueryTrajectoryState, f"{name}/query_state", self._on_query_state)
        # controller_state: one message, filled in place at each publish.
        self._state_msg = JointTrajectoryControllerState()
        node.get_logger().info(
            f"trajectory controller {name!r}: {name}/follow_joint_trajectory for"
            f" {len(self.settings.joints)} joint(s)")

    def destroy(self) -> None:
        """Destroy the action server (the node's destroy_node does not)."""
        if self._server is not None:
            self._server.destroy()
            self._server = None

    # ---------------------------------------------------------------- goals

    def _prepare(self, msg: JointTrajectory, path: Sequence[Any] = (),
                 goal: Sequence[Any] = (), goal_time: float = 0.0, *,
                 done: bool = True) -> tuple[PointTrajectory, float | None, GoalMonitor]:
        """Check a trajectory and its tolerances; build what the core follows.

        Raises:
            GoalError: It cannot be run (the code and the reason of the result).
            CommandRefused: The robot takes no motion now (torque off, fault).
        """
        s = self.settings
        fields = read_joint_trajectory(msg)
        names = list(fields.joint_names)
        self._check_followers(names)
        points = [GoalPoint(*p) for p in fields.points]
        check_goal(names, points, s.joints, allow_partial=s.allow_partial,
                   allow_nonzero_end_velocity=s.allow_nonzero_end_velocity,
                   check_positions=self._check_positions)
        dofs = [self._to_core[n] for n in names]
        tolerances = s.tolerances.merged(
            [ToleranceRequest(t.name, t.position, t.velocity, t.acceleration) for t in path],
            [ToleranceRequest(t.name, t.position, t.velocity, t.acceleration) for t in goal],
            goal_time)
        start = None if fields.stamp == 0.0 else self._time_base.to_core(fields.stamp)
        duration = points[-1].time_from_start
        check_start(start, duration, self.core.now())
        self.core.check_motion()  # before its start positions: none while motion is off
        try:
            trajectory = build_trajectory(dofs, fields.points, self.core.start_positions(dofs))
        except TrajectoryError as exc:
            raise GoalError(ErrorCode.INVALID_GOAL, str(exc)) from None
        monitor = GoalMonitor(names, tolerances, duration, [p.time_from_start for p in points],
                              on_done=self._trigger if done else None)
        return trajectory, start, monitor

    def _check_followers(self, names: Sequence[str]) -> None:
        """Refuse a trajectory naming a follower (a mimic joint), saying to name its leader.

        A follower is no joint of the controller (JTC's ``joints`` list the independent
        joints, as a MoveIt controller configuration does); the gate's reason says which
        joint it follows, where "not a joint of the controller" would not.

        Raises:
            GoalError: INVALID_JOINTS, with the gate's reason.
        """
        limits = self.core.backend.limits
        for name in names:
            dof = self._to_core.get(name)
            if dof is not None and dof in limits and limits[dof].leader is not None:
                check = limits.check(CommandKind.POSITION, [dof], [0.0])
                raise GoalError(ErrorCode.INVALID_JOINTS, check.reason)

    def _check_positions(self, names: Sequence[str], positions: npt.NDArray[np.float64]) -> str:
        """The limits gate: "" when every position is within its joint's limits."""
        check = self.core.gate(CommandKind.POSITION,
                                        [self._to_core[n] for n in names], positions)
        if not check.ok:
            return check.reason
        if check.clamped:
            c = check.clamped[0]
            return (f"{c.name!r} at {c.requested:.6g} is beyond its limits (the nearest allowed"
                    f" position is {c.applied:.6g})")
        return ""

    def _on_goal(self, goal: FollowJointTrajectory.Goal) -> GoalResponse:
        """Reject on arrival what joint_trajectory_controller's goal callback rejects.

        A rejected goal carries no result, so the reason is logged, as JTC logs it. A goal
        that passes but still cannot run (a joint named twice, values that are not finite,
        positions beyond the limits, its tolerances, a multi-DOF part, the robot refusing
        motion) is accepted and ends at once, ABORTED with its error code and reason,
        leaving the active one alone.
        """
        s = self.settings
        fields = read_joint_trajectory(goal.trajectory)
        try:
            self._check_followers(fields.joint_names)
            with self._core_lock:
                now = self.core.now()
            check_arrival(fields.joint_names, [GoalPoint(*p) for p in fields.points], s.joints,
                          allow_partial=s.allow_partial,
                          allow_nonzero_end_velocity=s.allow_nonzero_end_velocity,
                          start=(None if fields.stamp == 0.0
                                 else self._time_base.to_core(fields.stamp)),
                          now=now)
        except GoalError as exc:
            self._warn(f"{s.name}: goal rejected ({exc.code.name}): {exc.reason}",
                       key=f"rejected {exc.code.name}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def goal_source(self, handle: _Handle) -> Source:
        """The :class:`~skel_ros.core.commanders.Source` of a goal: the action, the goal's id."""
        uuid = bytes(handle.goal_id.uuid).hex()
        return Source(self._action, f"goal {uuid[:8]}", key=("action", self._action))

    async def _execute(self, handle: _Handle) -> FollowJointTrajectory.Result:
        request = handle.request
        try:
            _check_single_dof(request)
            with self._core_lock:
                trajectory, start, monitor = self._prepare(
                    request.trajectory, request.path_tolerance, request.goal_tolerance,
                    stamp_to_seconds(request.goal_time_tolerance))
                self.core.follow(trajectory, start, monitor, self.goal_source(handle))
        except GoalError as exc:
            return self._end(handle, GoalResult(FollowOutcome.ABORTED, exc.code, exc.reason))
        except CommandRefused as exc:
            return self._end(handle, GoalResult(FollowOutcome.ABORTED, ErrorCode.INVALID_GOAL,
                                                exc.reason))
        except Exception as exc:  # noqa: BLE001 - a bug must still end the goal, with a result
            self.node.get_logger().error(f"{self.settings.name}: goal failed: {exc!r}")
            return self._end(handle, GoalResult(FollowOutcome.ABORTED, ErrorCode.INVALID_GOAL,
                                                f"internal error: {exc!r}"))
        entry = _Goal(handle, monitor, Future())
        with self._lock:
            self._following = monitor
            self._goals.append(entry)
        self._feedback_timer.reset()
        self._on_wake()  # it may have ended already
        await entry.done
        with self._lock:
            self._goals.remove(entry)
            if not self._goals:
                self._feedback_timer.cancel()
        result = monitor.result
        if result is None:  # pragma: no cover - the future is completed with the result
            result = GoalResult(FollowOutcome.ABORTED, ErrorCode.INVALID_GOAL, "no result")
        return self._end(handle, result)

    def _end(self, handle: _Handle, result: GoalResult) -> FollowJointTrajectory.Result:
        outcome, code, message = result
        if outcome is FollowOutcome.SUCCEEDED:
            handle.succeed()
        elif outcome is FollowOutcome.CANCELED and handle.is_cancel_requested:
            handle.canceled()
        else:
            # The monitor's string says how it ended ("preempted by ...", "taken over by
            # ...", "stopped: emergency stop", "canceled by ...: holding position").
            if outcome is FollowOutcome.CANCELED:  # canceled by another source
                code = ENDED_BY_OTHERS
            handle.abort()
            self._warn(f"{self.settings.name}: goal aborted ({code.name}): {message}",
                       key=f"aborted {code.name}")
        return FollowJointTrajectory.Result(error_code=int(code), error_string=message)

    def _trigger(self) -> None:
        """A goal ended (called in the core's thread): wake the executor.

        A task handed to the node's executor wakes it (every rclpy executor takes tasks
        from any thread; the events executor takes no guard conditions).
        """
        executor = self.node.executor
        if executor is None:  # the node left its executor: nobody waits any more
            return
        # The executor shut down under us (its error type differs between distros):
        # nobody waits any more either.
        with contextlib.suppress(Exception):
            executor.create_task(self._on_wake)

    def _on_wake(self) -> None:
        """In the executor: complete the futures of the goals that ended."""
        with self._lock:
            for entry in self._goals:
                result = entry.monitor.result
                if result is not None and not entry.done.done():
                    entry.done.set_result(result)

    def _on_cancel(self, handle: _Handle) -> CancelResponse:
        with self._lock:
            active = [g for g in self._goals if g.handle is handle and g.monitor.result is None]
        if not active:
            return CancelResponse.REJECT
        # Still running: the core ends it (CANCELED, holding position) and the monitor's
        # on_done completes it once the server has marked it canceling.
        with self._core_lock:
            if active[0].monitor is self._following and active[0].monitor.result is None:
                self.core.cancel_trajectory()
        return CancelResponse.ACCEPT

    def _on_trajectory(self, msg: JointTrajectory, source: Source | None = None) -> None:
        try:
            with self._core_lock:
                trajectory, start, monitor = self._prepare(msg, done=False)
                self.core.follow(trajectory, start, monitor,
                                 source or Source(self._topic, key=("topic", self._topic)))
        except GoalError as exc:
            self._warn(f"{self._topic}: {exc.reason} (message ignored)",
                       key=f"{self._topic} {exc.code.name}")
            return
        except CommandRefused as exc:
            self._warn(f"{self._topic}: {exc.reason} (message ignored)",
                       key=f"{self._topic} {exc.key}")
            return
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the node's executor
            self._warn(f"{self._topic}: message ignored, internal error: {exc!r}",
                       key=f"{self._topic} internal error")
            return
        with self._lock:
            self._following = monitor

    # ---------------------------------------------------------------- query_state

    def _on_query_state(self, request: QueryTrajectoryState.Request,
                        response: QueryTrajectoryState.Response) -> QueryTrajectoryState.Response:
        """The desired state of the controller's joints at ``request.time`` (JTC's rules).

        Joints the active trajectory does not move answer the position they are held at.
        When the trajectory has nothing to say (none, or a time before it was received) the
        answer is the measured state (NaN where not fresh), as JTC answers its current one;
        when the controller cannot move (hardware disabled) it is empty, as JTC's when the
        controller is inactive.
        """
        names = self.settings.joints
        dofs = [self._to_core[n] for n in names]
        time = self._time_base.to_core(stamp_to_seconds(request.time))
        with self._core_lock:
            refusal = self.core.backend.refusal()
            if refusal:
                response.success = False
                response.message = f"the controller is not active: {refusal}"
                return response
            active = self.core.active_trajectory
            answer = query_state(active, time)
            held = np.asarray(self.core.start_positions(dofs), dtype=np.float64)
            state = self.core.read()
        response.success = answer.ok
        response.message = answer.message
        response.name = list(names)
        if active is None or answer.sample is None:
            index = [self.core.index[n] for n in dofs]
            fresh = state.fresh[index]
            response.position = float64_array(np.where(fresh, state.positions[index], np.nan))
            v = np.where(fresh, state.velocities[index], np.nan)
            response.velocity = float64_array(() if np.isnan(v).all() else v)
            return response
        q, v, a = held, np.zeros(len(dofs)), np.zeros(len(dofs))
        where = {n: i for i, n in enumerate(active.names)}
        for k, dof in enumerate(dofs):
            i = where.get(dof)
            if i is not None:
                q[k], v[k], a[k] = (x[i] for x in answer.sample)
        response.position = float64_array(q)
        response.velocity = float64_array(v)
        response.acceleration = float64_array(a)
        return response

    # ---------------------------------------------------------------- feedback, state

    def _publish_feedback(self) -> None:
        with self._lock:
            goals = [g for g in self._goals if g.monitor.result is None]
        for goal in goals:
            sample = goal.monitor.latest
            if sample is None or sample is goal.sent:
                continue
            goal.sent = sample
            feedback = FollowJointTrajectory.Feedback(joint_names=list(goal.monitor.names))
            feedback.header.stamp = self._time_base.stamp(sample.now)
            feedback.desired = _point(sample.desired_positions, sample.desired_velocities)
            feedback.actual = _point(sample.actual_positions, sample.actual_velocities)
            feedback.error = _point(sample.error_positions, sample.error_velocities)
            if hasattr(feedback, "index"):  # control_msgs >= 6 (Kilted)
                feedback.index = sample.point_index
            goal.handle.publish_feedback(feedback)

    def publish_state(self) -> None:
        """Publish ``controller_state`` if something was measured since the last one."""
        if self._server is None:
            return  # no controller (name ""): no topic
        monitor = self._following
        sample = monitor.latest if monitor is not None and monitor.result is None else None
        msg = self._state_msg
        if sample is not None:
            names: Sequence[str] = monitor.names  # type: ignore[union-attr]
            stamp = sample.now
            reference = (sample.desired_positions, sample.desired_velocities)
            feedback = (sample.actual_positions, sample.actual_velocities)
            error = (sample.error_positions, sample.error_velocities)
        else:
            names = self.settings.joints
            dofs = [self._to_core[n] for n in names]
            index = [self.core.index[n] for n in dofs]
            with self._core_lock:
                state = self.core.read()
                targets = np.asarray(self.core.start_positions(dofs), dtype=np.float64)
            stamp = state.stamp
            q = np.where(state.fresh[index], state.positions[index], np.nan)
            v = np.where(state.fresh[index], state.velocities[index], np.nan)
            velocities = None if np.isnan(v).all() else v
            reference = (targets, np.zeros(len(names)))
            feedback = (q, velocities)
            error = (targets - q, None if velocities is None else -velocities)
        if not np.isfinite(stamp) or stamp == self._state_sent:
            return  # nothing measured since the last message: send nothing
        self._state_sent = stamp
        if tuple(msg.joint_names) != tuple(names):
            msg.joint_names = list(names)
        _set_point(msg.reference, *reference)
        _set_point(msg.feedback, *feedback)
        _set_point(msg.error, *error)
        msg.header.stamp = self._time_base.stamp(stamp)
        self._state.publish(msg)
