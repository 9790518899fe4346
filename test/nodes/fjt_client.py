"""A FollowJointTrajectory client for the tests: an rclpy ActionClient, bounded spinning."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from polling import spin_until
from service_call import spin_call

if TYPE_CHECKING:
    from collections.abc import Callable

SPIN_LIMIT = 30.0  # s of spinning before a wait gives up (a bound, not a measurement)


class ActionProbe:
    """A client node: sends goals, collects feedback, waits for results (bounded)."""

    def __init__(self, context: Any, controller: str = "joint_trajectory_controller",
                 namespace: str = "") -> None:
        from control_msgs.action import FollowJointTrajectory
        from control_msgs.msg import JointTrajectoryControllerState
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node
        from trajectory_msgs.msg import JointTrajectory

        self.node = Node("fjt_probe", namespace=namespace, context=context)
        self.controller = controller
        self._query: Any = None
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.client = ActionClient(self.node, FollowJointTrajectory,
                                   f"{controller}/follow_joint_trajectory")
        self.states: list[Any] = []
        self.node.create_subscription(JointTrajectoryControllerState,
                                      f"{controller}/controller_state", self.states.append, 10)
        self.topic = self.node.create_publisher(JointTrajectory,
                                                f"{controller}/joint_trajectory", 10)
        self.spin_until(self.client.server_is_ready, "the action server")

    def spin_until(self, condition: Callable[[], bool], what: str,
                   limit: float = SPIN_LIMIT) -> None:
        spin_until(self.executor, condition, what, limit, step=0.05)

    def send(self, goal: Any) -> Goal:
        goal_obj = Goal()
        future = self.client.send_goal_async(goal, feedback_callback=goal_obj.feedback.append)
        self.spin_until(future.done, "the goal's acceptance")
        goal_obj.handle = future.result()
        assert goal_obj.handle.accepted
        goal_obj.result_future = goal_obj.handle.get_result_async()
        return goal_obj

    def accepts(self, goal: Any) -> bool:
        """Send ``goal``: whether the server accepted it (an accepted one then runs)."""
        future = self.client.send_goal_async(goal)
        self.spin_until(future.done, "the goal's acceptance")
        return bool(future.result().accepted)

    def wait(self, goal: Goal, limit: float = SPIN_LIMIT) -> tuple[int, Any]:
        self.spin_until(goal.result_future.done, "the goal's result", limit)
        response = goal.result_future.result()
        return response.status, response.result

    def run(self, goal: Any) -> tuple[int, Any, Goal]:
        sent = self.send(goal)
        status, result = self.wait(sent)
        return status, result, sent

    def query_state(self, seconds: float) -> Any:
        """The reply of ``<controller>/query_state`` for a time (seconds, the node's clock)."""
        from control_msgs.srv import QueryTrajectoryState

        from skel_ros.nodes.names import stamp_from_seconds

        if self._query is None:
            self._query = self.node.create_client(QueryTrajectoryState,
                                                  f"{self.controller}/query_state")
        return spin_call(self.executor, self._query, QueryTrajectoryState.Request(
            time=stamp_from_seconds(seconds)), idempotent=True, timeout=SPIN_LIMIT)  # read only

    def cancel(self, goal: Goal) -> Any:
        future = goal.handle.cancel_goal_async()
        self.spin_until(future.done, "the cancel response")
        return future.result()

    def destroy(self) -> None:
        self.client.destroy()
        self.executor.shutdown()
        self.node.destroy_node()


class Goal:
    def __init__(self) -> None:
        self.feedback: list[Any] = []
        self.handle: Any = None
        self.result_future: Any = None


def make_goal(names: list[str], points: list[tuple[float, list[float]]], *,
              stamp: float = 0.0, path: dict[str, float] | None = None,
              goal: dict[str, float] | None = None, goal_time: float = 0.0,
              velocities: bool = False) -> Any:
    """A FollowJointTrajectory goal: (time_from_start, positions) points."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
    from trajectory_msgs.msg import JointTrajectoryPoint

    from skel_ros.nodes.names import stamp_from_seconds

    msg = FollowJointTrajectory.Goal()
    msg.trajectory.joint_names = names
    if stamp:
        msg.trajectory.header.stamp = stamp_from_seconds(stamp)
    for t, q in points:
        point = JointTrajectoryPoint(positions=q)
        if velocities:
            point.velocities = [0.0] * len(q)
        total = round(t * 1e9)
        point.time_from_start.sec, point.time_from_start.nanosec = divmod(total, 1_000_000_000)
        msg.trajectory.points.append(point)
    msg.path_tolerance = [JointTolerance(name=n, position=v) for n, v in (path or {}).items()]
    msg.goal_tolerance = [JointTolerance(name=n, position=v) for n, v in (goal or {}).items()]
    total = round(goal_time * 1e9)
    msg.goal_time_tolerance.sec, msg.goal_time_tolerance.nanosec = divmod(total, 1_000_000_000)
    return msg


def codes() -> Any:
    """FollowJointTrajectory.Result (its error code constants)."""
    from control_msgs.action import FollowJointTrajectory

    return FollowJointTrajectory.Result


def status() -> Any:
    """action_msgs/GoalStatus (its status constants)."""
    from action_msgs.msg import GoalStatus

    return GoalStatus
