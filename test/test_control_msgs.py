"""control_msgs, built from scripts/control_msgs by scripts/setup.sh, is a working package.

The action and the controller state must have upstream's fields (ros-controls/control_msgs
6.8.0), so that MoveIt and rqt_joint_trajectory_controller of a ROS 2 installation can talk
to the nodes.
"""

from __future__ import annotations

import pytest
from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Header
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.ros


def test_follow_joint_trajectory_goal_round_trips() -> None:
    goal = FollowJointTrajectory.Goal(
        trajectory=JointTrajectory(
            header=Header(stamp=Time(sec=3, nanosec=5)),
            joint_names=["shoulder", "elbow"],
            points=[JointTrajectoryPoint(positions=[0.1, -0.2], velocities=[0.0, 0.0],
                                         time_from_start=Duration(sec=1, nanosec=500_000_000))]),
        path_tolerance=[JointTolerance(name="shoulder", position=0.05, velocity=-1.0)],
        goal_tolerance=[JointTolerance(name="elbow", position=0.01)],
        goal_time_tolerance=Duration(sec=0, nanosec=250_000_000),
    )
    decoded = deserialize_message(serialize_message(goal), FollowJointTrajectory.Goal)
    assert decoded == goal
    assert decoded.path_tolerance[0].velocity == -1.0
    assert list(decoded.trajectory.points[0].positions) == [0.1, -0.2]


def test_follow_joint_trajectory_has_the_standard_definition() -> None:
    assert FollowJointTrajectory.Goal.get_fields_and_field_types() == {
        "trajectory": "trajectory_msgs/JointTrajectory",
        "multi_dof_trajectory": "trajectory_msgs/MultiDOFJointTrajectory",
        "path_tolerance": "sequence<control_msgs/JointTolerance>",
        "component_path_tolerance": "sequence<control_msgs/JointComponentTolerance>",
        "goal_tolerance": "sequence<control_msgs/JointTolerance>",
        "component_goal_tolerance": "sequence<control_msgs/JointComponentTolerance>",
        "goal_time_tolerance": "builtin_interfaces/Duration",
    }
    assert FollowJointTrajectory.Result.get_fields_and_field_types() == {
        "error_code": "int32", "error_string": "string"}
    codes = {name: getattr(FollowJointTrajectory.Result, name) for name in (
        "SUCCESSFUL", "INVALID_GOAL", "INVALID_JOINTS", "OLD_HEADER_TIMESTAMP",
        "PATH_TOLERANCE_VIOLATED", "GOAL_TOLERANCE_VIOLATED")}
    assert codes == {"SUCCESSFUL": 0, "INVALID_GOAL": -1, "INVALID_JOINTS": -2,
                     "OLD_HEADER_TIMESTAMP": -3, "PATH_TOLERANCE_VIOLATED": -4,
                     "GOAL_TOLERANCE_VIOLATED": -5}
    feedback = FollowJointTrajectory.Feedback.get_fields_and_field_types()
    for field in ("header", "joint_names", "desired", "actual", "error"):
        assert field in feedback


def test_controller_state_round_trips() -> None:
    point = JointTrajectoryPoint(positions=[1.0, 2.0], velocities=[0.5, 0.25])
    state = JointTrajectoryControllerState(
        header=Header(stamp=Time(sec=7), frame_id=""), joint_names=["a", "b"],
        reference=point, feedback=point, error=JointTrajectoryPoint(positions=[0.0, 0.0]))
    decoded = deserialize_message(serialize_message(state), JointTrajectoryControllerState)
    assert decoded == state
    assert list(decoded.joint_names) == ["a", "b"]
    fields = JointTrajectoryControllerState.get_fields_and_field_types()
    for field in ("reference", "feedback", "error", "output"):
        assert fields[field] == "trajectory_msgs/JointTrajectoryPoint"


def test_query_trajectory_state_has_the_standard_definition() -> None:
    from control_msgs.srv import QueryTrajectoryState

    assert QueryTrajectoryState.Request.get_fields_and_field_types() == {
        "time": "builtin_interfaces/Time"}
    assert QueryTrajectoryState.Response.get_fields_and_field_types() == {
        "success": "boolean", "message": "string", "name": "sequence<string>",
        "position": "sequence<double>", "velocity": "sequence<double>",
        "acceleration": "sequence<double>"}
