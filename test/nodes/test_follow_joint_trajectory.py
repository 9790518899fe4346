"""FollowJointTrajectory (skel_ros.nodes.follow_joint_trajectory) through a real rclpy ActionClient.

The server runs on a robot core over a small backend of the test suite (its joints lag
their targets, so tolerances can be violated on purpose), stepped by a thread in its own
time base, in this process; the client talks to it over DDS. The same cases run against
the simulation node and the hardware node in test_trajectory_controller_nodes.py.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from fjt_client import ActionProbe, codes, make_goal, status
from service_call import spin_call

pytestmark = pytest.mark.ros

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

if TYPE_CHECKING:
    from collections.abc import Iterator

# ------------------------------------------------------------------ the in-process robot

class LaggingRobot:
    """A RobotCore over the test suite's numpy backend, its joints reaching ``lag`` of the
    way to their targets per 10 ms step, stepped in real time by a thread."""

    dt = 0.01

    def __init__(self, context: Any) -> None:
        from numpy_backend import NumpyBackend  # type: ignore[import-not-found]
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        from skel_ros.core import RobotCore
        from skel_ros.nodes.follow_joint_trajectory import FollowJointTrajectoryServer

        self.backend = NumpyBackend()
        self.lag = 0.3
        self.core = RobotCore(self.backend)
        self.node = Node("robot", context=context)
        self.server = FollowJointTrajectoryServer(self.node, self.core)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._step, daemon=True),
                         threading.Thread(target=self._spin, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _step(self) -> None:
        backend = self.backend
        while not self._stop.is_set():
            with self.core.lock:
                self.core.cycle(backend.time + self.dt)
                before = backend.q.copy()
                backend.step(self.dt)
                backend.q = before + self.lag * (backend.q - before)
                backend.v = (backend.q - before) / self.dt
            time.sleep(self.dt / 2)  # twice real time: the tests take less

    def _spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5.0)
        self.server.destroy()
        self.executor.shutdown()
        self.node.destroy_node()


@pytest.fixture(scope="module")
def rig(ros_env: dict[str, str]) -> Iterator[tuple[LaggingRobot, ActionProbe]]:
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    robot = LaggingRobot(context)
    probe = ActionProbe(context)
    try:
        yield robot, probe
    finally:
        probe.destroy()
        robot.close()
        rclpy.shutdown(context=context)


# ------------------------------------------------------------------ the cases

def test_a_goal_within_its_tolerances_succeeds_with_feedback(
        rig: tuple[LaggingRobot, ActionProbe]) -> None:
    robot, probe = rig
    status_, result, goal = probe.run(make_goal(
        ["a", "b"], [(0.5, [0.2, -0.1]), (1.0, [0.3, -0.2])],
        path={"a": 0.2, "b": 0.2}, goal={"a": 0.01, "b": 0.01}, goal_time=1.0))
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL), \
        result.error_string
    assert robot.backend.q[:2] == pytest.approx([0.3, -0.2], abs=0.01)
    assert goal.feedback, "no feedback"
    fb = goal.feedback[-1].feedback
    assert list(fb.joint_names) == ["a", "b"]
    assert len(fb.desired.positions) == len(fb.actual.positions) == len(fb.error.positions) == 2
    assert np.allclose(np.array(fb.error.positions),
                       np.array(fb.desired.positions) - np.array(fb.actual.positions))


def test_path_tolerance_violated(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    robot, probe = rig
    start = float(robot.backend.q[0])
    target = start - 0.9 if start > 0.0 else start + 0.9  # 3 rad/s: the lag falls behind
    status_, result, _ = probe.run(make_goal(
        ["a", "b"], [(0.3, [target, -0.2])], path={"a": 0.02}))
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().PATH_TOLERANCE_VIOLATED, result.error_string
    assert "'a' position error" in result.error_string


def test_goal_tolerance_violated(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    robot, probe = rig
    robot.lag = 0.002  # barely moves: far from the goal when goal_time has passed
    try:
        status_, result, _ = probe.run(make_goal(
            ["a", "b"], [(0.2, [-0.5, 0.4])], goal={"a": 0.01}, goal_time=0.3))
    finally:
        robot.lag = 0.3
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().GOAL_TOLERANCE_VIOLATED, result.error_string
    assert "goal_time_tolerance 0.3 s" in result.error_string


def test_cancel_holds_position(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    robot, probe = rig
    goal = probe.send(make_goal(["a", "b"], [(20.0, [0.9, 0.9])]))
    probe.spin_until(lambda: len(goal.feedback) >= 2, "feedback while moving")
    holds = len(robot.backend.holds)
    assert probe.cancel(goal).return_code == 0  # ERROR_NONE
    status_, _result = probe.wait(goal)
    assert status_ == status().STATUS_CANCELED
    assert not robot.core.following
    assert robot.backend.holds[holds:] == [("a", "b")]


def test_a_new_goal_preempts_the_active_one(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    robot, probe = rig
    first = probe.send(make_goal(["a", "b"], [(20.0, [0.9, 0.9])]))
    probe.spin_until(lambda: bool(first.feedback), "feedback of the first goal")
    q = robot.backend.q[:2].tolist()
    second = probe.send(make_goal(["a", "b"], [(0.3, q)]))
    status_, result = probe.wait(first)
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().INVALID_GOAL
    assert "preempted" in result.error_string
    status_, result = probe.wait(second)
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL)


def _end_by(robot: LaggingRobot, probe: ActionProbe, how: str) -> None:
    """End the running goal the way ``how`` says, from outside the action."""
    from skel_ros.core.commanders import Source
    from skel_ros.model.limits import CommandKind

    teleop = Source("joint_commands", "/teleop", key=("node", "/teleop"))
    if how == "taken over":
        assert robot.core.command(CommandKind.POSITION, ["a"], [0.0], teleop).ok
    elif how == "estop":  # what the hardware backend's e-stop does to the core
        robot.core.stop_trajectory("emergency stop")
    elif how == "disabled":
        robot.core.stop_trajectory("disabled")
    elif how == "canceled by another":  # an empty joint_trajectory from another node
        robot.core.cancel_trajectory(Source("joint_trajectory", "/player",
                                            key=("node", "/player")))
    elif how == "preempted by the topic":
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        point = JointTrajectoryPoint(positions=robot.backend.q[:2].tolist())
        point.time_from_start.sec = 1
        probe.topic.publish(JointTrajectory(joint_names=["a", "b"], points=[point]))


@pytest.mark.parametrize(("how", "error_string"), [
    ("taken over", ("taken over by a position command for its joints from joint_commands"
                   " (/teleop)")),
    ("estop", "stopped: emergency stop"),
    ("disabled", "stopped: disabled"),
    ("canceled by another", "canceled by joint_trajectory (/player): holding position"),
    ("preempted by the topic", ("preempted by a newer trajectory from"
                               " joint_trajectory_controller/joint_trajectory")),
])
def test_a_goal_ended_by_another_source_is_aborted_saying_which(
        rig: tuple[LaggingRobot, ActionProbe], how: str, error_string: str) -> None:
    """ABORTED with joint_trajectory_controller's code for a goal it did not end itself
    (INVALID_GOAL: it preempts and drops goals on deactivate with it; control_msgs has
    no other), the string saying what ended it. While it ran, the core said whose it was."""
    robot, probe = rig
    goal = probe.send(make_goal(["a", "b"], [(20.0, [0.9, 0.9])]))
    probe.spin_until(lambda: bool(goal.feedback), "feedback while moving")
    uuid = bytes(goal.handle.goal_id.uuid).hex()[:8]
    assert robot.core.activity() == ("following a trajectory from joint_trajectory_controller/"
                                     f"follow_joint_trajectory (goal {uuid})")
    _end_by(robot, probe, how)
    status_, result = probe.wait(goal)
    assert (status_, result.error_code) == (status().STATUS_ABORTED, codes().INVALID_GOAL)
    assert result.error_string.startswith(error_string), result.error_string
    if how == "preempted by the topic":
        from skel_ros.nodes.sources import PUBLISHER_IDENTITY

        # Where rclpy names the publisher (Kilted on), the string names its node too.
        said = " (/fjt_probe)" if PUBLISHER_IDENTITY else ""
        assert result.error_string == error_string + said
        robot.core.cancel_trajectory()


def _goal_with(**change: Any) -> Any:
    """A valid goal for both joints with one thing changed (issue 26: JTC rejects these)."""
    goal = make_goal(["a", "b"], [(0.5, [0.0, 0.0]), (1.0, [0.1, 0.1])])
    points = goal.trajectory.points
    if "names" in change:
        goal.trajectory.joint_names = change["names"]
    if change.get("points") == "none":
        goal.trajectory.points = []
    if "time" in change:
        points[1].time_from_start.sec, points[1].time_from_start.nanosec = 0, change["time"]
    for field in ("positions", "velocities", "accelerations", "effort"):
        if field in change:
            setattr(points[1], field, change[field])
    return goal


@pytest.mark.parametrize("change", [
    {"names": ["a", "nope"]},  # a joint the controller does not have
    {"names": ["a", "c"]},  # c takes velocity commands only: not a controller joint
    {"names": ["a"]},  # not every joint (allow_partial_joints_goal is false)
    {"names": []},
    {"points": "none"},
    {"time": 500_000_000},  # the same time as the point before
    {"time": 100_000_000},  # before it
    {"positions": [0.1]},  # one value for two joints
    {"velocities": [0.0]},
    {"accelerations": [0.0, 0.0, 0.0]},
    {"effort": [1.0, 1.0]},
    {"velocities": [0.0, 0.3]},  # the last point does not stop
])
def test_what_jtc_rejects_on_arrival_is_rejected(
        rig: tuple[LaggingRobot, ActionProbe], change: dict[str, Any]) -> None:
    """Issue 26: a goal naming an unknown joint was accepted, then aborted with
    INVALID_JOINTS; joint_trajectory_controller's goal callback rejects it
    (validate_trajectory_msg), and the active goal goes on."""
    robot, probe = rig
    q = robot.backend.q[:2].tolist()
    active = probe.send(make_goal(["a", "b"], [(0.5, [q[0] + (0.1 if q[0] < 0 else -0.1),
                                                     q[1]])]))
    assert not probe.accepts(_goal_with(**change))
    status_, result = probe.wait(active)
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL)


def test_a_joint_named_twice_is_accepted_then_invalid_joints(
        rig: tuple[LaggingRobot, ActionProbe]) -> None:
    """JTC's goal callback lets ["a", "a"] through (as many names as joints, all known);
    here it ends at once with the reason, rather than run."""
    _, probe = rig
    status_, result, _ = probe.run(make_goal(["a", "a"], [(0.5, [0.0, 0.0])]))
    assert status_ == status().STATUS_ABORTED
    assert result.error_code == codes().INVALID_JOINTS
    assert "appears twice" in result.error_string


def test_an_invalid_goal_leaves_the_active_one_running(
        rig: tuple[LaggingRobot, ActionProbe]) -> None:
    robot, probe = rig
    q = robot.backend.q[:2].tolist()
    active = probe.send(make_goal(["a", "b"], [(1.0, [q[0] + 0.1, q[1]])]))
    status_, result, _ = probe.run(make_goal(["a", "b"], [(0.5, [0.0, 5.0])]))  # beyond [-1, 1]
    assert result.error_code == codes().INVALID_GOAL
    assert "'b' at 5 is beyond its limits" in result.error_string
    status_, result = probe.wait(active)
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL)


def test_a_goal_before_motion_was_ever_enabled_gives_that_reason(
        rig: tuple[LaggingRobot, ActionProbe], monkeypatch: pytest.MonkeyPatch) -> None:
    """Like a hardware node never enabled: no targets to start from, and motion off.

    The reason is the robot's (JTC: the controller is not running), not the missing start.
    """
    robot, probe = rig
    monkeypatch.setattr(robot.backend, "refused", "motion is not enabled (state disabled)")
    monkeypatch.setattr(robot.backend, "start_positions",
                        lambda index: np.full(len(index), np.nan))
    status_, result, _ = probe.run(make_goal(["a", "b"], [(0.5, [0.1, 0.1])]))
    assert (status_, result.error_code) == (status().STATUS_ABORTED, codes().INVALID_GOAL)
    assert result.error_string == "trajectory ignored: motion is not enabled (state disabled)"


def test_stale_header_stamp(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    """A trajectory that ended before it arrived is rejected, as JTC's goal callback does;
    one that has not ended yet starts late (at its stamp)."""
    robot, probe = rig
    probe.spin_until(lambda: robot.core.now() > 1.0, "the robot's time past 1 s")
    assert not probe.accepts(make_goal(["a", "b"], [(0.5, [0.0, 0.0])], stamp=0.2))
    q = robot.backend.q[:2].tolist()
    status_, result, _ = probe.run(make_goal(["a", "b"], [(2.0, q)],
                                             stamp=robot.core.now() - 0.5))
    assert (status_, result.error_code) == (status().STATUS_SUCCEEDED, codes().SUCCESSFUL)


def test_controller_state_and_the_topic(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    robot, probe = rig
    probe.spin_until(lambda: len(probe.states) >= 3, "controller_state")
    state = probe.states[-1]
    assert list(state.joint_names) == ["a", "b"]
    assert state.header.stamp.sec + state.header.stamp.nanosec > 0
    msg = JointTrajectory(joint_names=["b", "a"])
    msg.points.append(JointTrajectoryPoint(positions=[0.25, -0.35]))
    msg.points[0].time_from_start.nanosec = 300_000_000
    probe.spin_until(lambda: probe.topic.get_subscription_count() > 0, "the topic's subscriber")
    probe.topic.publish(msg)
    probe.spin_until(lambda: abs(robot.backend.q[0] + 0.35) < 1e-3
                     and abs(robot.backend.q[1] - 0.25) < 1e-3, "the topic's trajectory")
    count = len(probe.states)
    probe.spin_until(lambda: len(probe.states) > count + 2, "more controller_state")
    assert list(probe.states[-1].reference.positions) == pytest.approx([-0.35, 0.25], abs=1e-6)


def test_query_state(rig: tuple[LaggingRobot, ActionProbe]) -> None:
    """<controller>/query_state answers as JTC's: the trajectory's desired state at a time
    from its receipt until before its last point; else success false (the last point after
    it; the measured state with no trajectory or before it; nothing when inactive)."""
    robot, probe = rig
    goal = probe.send(make_goal(["b", "a"], [(20.0, [0.9, -0.9])]))
    probe.spin_until(lambda: bool(goal.feedback), "feedback while moving")
    active = robot.core.active_trajectory
    assert active is not None
    for t in (0.5, 7.25):
        reply = probe.query_state(active.start + t)
        assert reply.success, reply.message
        assert list(reply.name) == ["a", "b"]  # the controller's joints, its order
        q, v, a = active.trajectory.sample(t)  # the goal's order: b, a
        assert list(reply.position) == pytest.approx([q[1], q[0]], abs=1e-9)
        assert list(reply.velocity) == pytest.approx([v[1], v[0]], abs=1e-9)
        assert list(reply.acceleration) == pytest.approx([a[1], a[0]], abs=1e-9)
    reply = probe.query_state(active.start + 25.0)
    assert not reply.success
    assert "not before the trajectory's last point" in reply.message
    assert list(reply.position) == pytest.approx([-0.9, 0.9], abs=1e-9)
    reply = probe.query_state(active.received - 0.5)
    assert not reply.success
    assert "before the trajectory was received" in reply.message
    assert len(reply.position) == 2  # the measured state
    assert probe.cancel(goal).return_code == 0
    probe.wait(goal)
    reply = probe.query_state(robot.core.now())
    assert (reply.success, reply.message) == (False, "no trajectory is being followed")
    with robot.core.lock:
        measured = robot.backend.q[:2].tolist()
    assert list(reply.position) == pytest.approx(measured, abs=1e-9)  # held: not moving
    robot.backend.refused = "torque off"
    try:
        reply = probe.query_state(robot.core.now())
    finally:
        robot.backend.refused = ""
    assert not reply.success
    assert reply.message == "the controller is not active: torque off"
    assert list(reply.name) == list(reply.position) == []


# ------------------------------------------------------------------ parameters

def _settings(context: Any, **overrides: Any) -> Any:
    from numpy_backend import NumpyBackend  # type: ignore[import-not-found]
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from skel_ros.core import RobotCore
    from skel_ros.nodes.follow_joint_trajectory import PREFIX, declare_settings

    node = Node("settings", context=context, parameter_overrides=[
        Parameter(PREFIX + name, value=value) for name, value in overrides.items()])
    try:
        return declare_settings(node, RobotCore(NumpyBackend()))
    finally:
        node.destroy_node()


def test_settings_defaults_and_jtc_constraints(context: Any) -> None:
    from skel_ros.core.tolerances import StateTolerance

    s = _settings(context)
    assert s.name == "joint_trajectory_controller"
    assert s.joints == ("a", "b")  # 'c' takes velocity commands only
    assert s.tolerances.goal["a"] == StateTolerance(0.0, 0.01)
    assert s.tolerances.goal_time == 0.0
    s = _settings(context, **{"joints": ["b"], "constraints.trajectory": [0.2],
                              "constraints.goal_time": 0.5, "allow_partial_joints_goal": True})
    assert s.joints == ("b",)
    assert s.tolerances.path == {"b": StateTolerance(0.2)}
    assert s.tolerances.goal_time == 0.5
    assert s.allow_partial
    s = _settings(context, **{"constraints.goal": [0.1, 0.2]})
    assert (s.tolerances.goal["a"].position, s.tolerances.goal["b"].position) == (0.1, 0.2)


def test_tolerances_take_integers_and_one_number_for_all(context: Any) -> None:
    s = _settings(context, **{"constraints.goal": [1, 2]})
    assert (s.tolerances.goal["a"].position, s.tolerances.goal["b"].position) == (1.0, 2.0)
    s = _settings(context, **{"constraints.trajectory": 0.25})
    assert s.tolerances.path["a"].position == s.tolerances.path["b"].position == 0.25


def test_every_listed_parameter_can_be_fetched_in_one_request(context: Any) -> None:
    """As ``ros2 param dump`` does: list the names, then get them all in one call.

    rclpy answers such a request with no values at all when one of the names has no value
    (declared by type only), and the dump shows an empty node.
    """
    from numpy_backend import NumpyBackend  # type: ignore[import-not-found]
    from rcl_interfaces.srv import GetParameters, ListParameters
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from skel_ros.core import RobotCore
    from skel_ros.nodes.follow_joint_trajectory import declare_settings

    node = Node("dumped", context=context)
    client_node = Node("dumper", context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        declare_settings(node, RobotCore(NumpyBackend()))
        executor.add_node(node)
        executor.add_node(client_node)

        def call(srv_type: Any, name: str, request: Any) -> Any:  # read only: idempotent
            client = client_node.create_client(srv_type, f"/dumped/{name}")
            return spin_call(executor, client, request, idempotent=True)

        names = list(call(ListParameters, "list_parameters",
                          ListParameters.Request()).result.names)
        assert "trajectory_controller.joints" in names
        assert "trajectory_controller.constraints.goal" in names
        values = call(GetParameters, "get_parameters", GetParameters.Request(names=names)).values
        assert len(values) == len(names)
    finally:
        executor.shutdown()
        client_node.destroy_node()
        node.destroy_node()


@pytest.mark.parametrize(("overrides", "words"), [
    ({"joints": ["a", "c"]}, "'c' cannot be commanded in position"),
    ({"joints": ["a", "a"]}, "twice"),
    ({"joints": [1, 2]}, "joints must be a list of names"),
    ({"constraints.goal": ["0.1"]}, "constraints.goal must be a list of numbers"),
    ({"constraints.goal": [0.1, 0.2, 0.3]}, "3 values for 2 joints"),
    ({"constraints.trajectory": [-0.1]}, "must be finite and >= 0"),
    ({"state_publish_rate": 0.0}, "state_publish_rate must be in (0, 1000] Hz"),
])
def test_settings_refused_with_the_parameter_named(context: Any, overrides: dict[str, Any],
                                                   words: str) -> None:
    from skel_ros.nodes.errors import NodeSetupError

    with pytest.raises(NodeSetupError) as info:
        _settings(context, **overrides)
    assert words in str(info.value)
    assert "trajectory_controller." in str(info.value)


def test_an_empty_name_serves_nothing(context: Any) -> None:
    from numpy_backend import NumpyBackend  # type: ignore[import-not-found]
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    from skel_ros.core import RobotCore
    from skel_ros.nodes.follow_joint_trajectory import PREFIX, FollowJointTrajectoryServer

    node = Node("no_controller", context=context,
                parameter_overrides=[Parameter(PREFIX + "name", value="")])
    try:
        server = FollowJointTrajectoryServer(node, RobotCore(NumpyBackend()))
        assert server._server is None
        assert not [p.topic_name for p in node.publishers if "controller" in p.topic_name]
        assert list(node.subscriptions) == []
        server.destroy()
    finally:
        node.destroy_node()
