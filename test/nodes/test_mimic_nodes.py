"""Mimic joints through the nodes: joint_states, /tf, commands and FollowJointTrajectory.

The simulation node runs in-process on the gripper example (finger_right mimics
finger_left with multiplier -1); its publishers are replaced by recorders, so every
message is checked as published, without a second node or a wait.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.model import Kinematics, load_model
from skel_ros.model.mimic import with_followers

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

GRIPPER = Path(__file__).resolve().parents[2] / "examples" / "gripper_arm.urdf"
INDEPENDENT = ["shoulder", "elbow", "finger_left"]


class _Keep:
    """Stands in for a publisher: keeps every message (deserialised)."""

    def __init__(self, msg_type: Any) -> None:
        self.msg_type, self.messages = msg_type, []

    def publish(self, msg: Any) -> None:
        from rclpy.serialization import deserialize_message

        self.messages.append(deserialize_message(msg, self.msg_type)
                             if isinstance(msg, bytes) else msg)


@pytest.fixture(params=["dart", "mujoco"])
def gripper(request: pytest.FixtureRequest, ros_env: dict[str, str]) -> Iterator[Any]:
    """The simulation node on the gripper example, its joint_states and /tf recorded."""
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.sim_node import SimNode

    if request.param == "mujoco":
        pytest.importorskip("mujoco")
    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(GRIPPER)), Parameter("engine", value=request.param),
            Parameter("joint_states_rate", value=100.0), Parameter("tf_rate", value=100.0)])
        node.joint_states = _Keep(JointState)
        node.tf = _Keep(TFMessage)
        node.shell.robot._joint_states_pub = node.joint_states
        node.shell.robot._tf_pub = node.tf
        yield node
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def _command(node: Any, names: list[str], positions: list[float]) -> None:
    from sensor_msgs.msg import JointState

    node.shell.intake.on_joint_command(JointState(name=names, position=positions))


def test_joint_states_carry_followers_on_the_rule_and_tf_follows(gripper: Any) -> None:
    """Followers are in joint_states at the rule's position and velocity; /tf from the rule."""
    skel = load_model(GRIPPER).skeletons[0]
    _command(gripper, ["finger_left"], [0.02])
    gripper.run_steps(300)  # the fingers move (0.1 m/s at most)
    msg = gripper.joint_states.messages[-1]
    assert list(msg.name) == [d.name for d in skel.dofs]  # the follower included
    left, right = msg.name.index("finger_left"), msg.name.index("finger_right")
    assert msg.position[left] > 0.01  # it moved
    assert msg.position[right] == -msg.position[left]  # the rule, exactly
    assert msg.velocity[right] == -msg.velocity[left]
    assert len(msg.effort) == len(msg.name)
    # /tf: the follower's link where the rule puts it (robot_state_publisher's result).
    tf = gripper.tf.messages[-1]
    frames = {t.child_frame_id: t.transform.translation for t in tf.transforms}
    q = with_followers(skel, np.array(msg.position))
    expected = Kinematics(skel).link_frames(q)[0]
    links = [t.child_frame_id for t in tf.transforms]
    row = expected[links.index("finger_right")]
    assert frames["finger_right"].y == pytest.approx(row[1, 3], abs=1e-12)
    assert frames["finger_right"].y == pytest.approx(-0.02 - msg.position[left], abs=1e-12)


def test_a_command_to_a_follower_is_refused_naming_its_leader(gripper: Any) -> None:
    said: list[str] = []
    gripper.shell.intake.warn = lambda text, **_: said.append(text)  # type: ignore[method-assign]
    for _ in range(3):
        _command(gripper, ["finger_right"], [0.01])
    assert len(said) == 3  # (the node's Throttle says it once per key and period)
    assert "joint 'finger_right' is a mimic joint" in said[0]
    assert "command 'finger_left' instead" in said[0]
    assert "finger_right" not in gripper.engine.commands()


def test_the_trajectory_controller_leaves_followers_out(gripper: Any) -> None:
    """Its joints are the independent ones; a goal naming a follower is rejected."""
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action.server import GoalResponse
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    server = gripper.shell.trajectory_controller
    assert server.settings.joints == tuple(INDEPENDENT)
    said: list[str] = []
    server._warn = lambda text, **_: said.append(text)

    def goal(names: list[str]) -> Any:
        point = JointTrajectoryPoint(positions=[0.0] * len(names))
        point.time_from_start.sec = 1
        return FollowJointTrajectory.Goal(
            trajectory=JointTrajectory(joint_names=names, points=[point]))

    assert server._on_goal(goal(INDEPENDENT)) == GoalResponse.ACCEPT
    assert server._on_goal(goal([*INDEPENDENT, "finger_right"])) == GoalResponse.REJECT
    assert "INVALID_JOINTS" in said[-1]
    assert "'finger_right' is a mimic joint" in said[-1]
    assert "command 'finger_left' instead" in said[-1]
