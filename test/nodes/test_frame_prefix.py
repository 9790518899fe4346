"""The nodes' ``frame_prefix`` follows their namespace by default, as the launch files'.

``ros2 run skel_ros sim_node --ros-args -r __ns:=/robot1`` puts its frames under
``robot1/`` as ``sim.launch.py namespace:=robot1`` does; a ``frame_prefix`` given (even
``""``) is used as given. In process, the namespace from the context's ``--ros-args``.
"""

from __future__ import annotations

from typing import Any

import pytest

from skel_ros.resources import example, resolve

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")


@pytest.mark.parametrize(("namespace", "prefix"), [
    ("/robot1", "robot1/"), ("/a/b", "a/b/"), ("/", ""), ("", ""),
])
def test_namespace_frame_prefix(namespace: str, prefix: str) -> None:
    from skel_ros.nodes.names import NAMESPACE_FRAME_PREFIX, namespace_frame_prefix

    assert namespace_frame_prefix(NAMESPACE_FRAME_PREFIX, namespace) == prefix
    assert namespace_frame_prefix("", namespace) == ""
    assert namespace_frame_prefix("sim/", namespace) == "sim/"


def _context(namespace: str) -> Any:
    context = rclpy.Context()
    rclpy.init(context=context,
               args=["--ros-args", "-r", f"__ns:={namespace}"] if namespace else None)
    return context


@pytest.mark.parametrize(("namespace", "given", "world"), [
    ("/robot1", None, "robot1/world"),
    ("", None, "world"),
    ("/robot1", "", "world"),
    ("/robot1", "sim/", "sim/world"),
])
def test_sim_node_frames_follow_its_namespace(ros_env: dict[str, str], namespace: str,
                                              given: str | None, world: str) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.sim_node import SimNode

    del ros_env
    context = _context(namespace)
    try:
        params = [Parameter("skel_file", value=str(example("arm.skel")))]
        if given is not None:
            params.append(Parameter("frame_prefix", value=given))
        node = SimNode(context=context, start=False, parameter_overrides=params)
        assert node.get_namespace() == (namespace or "/")
        assert node.shell.robot.world_frame == world
        assert f'<link name="{world}"/>' in node.shell.robot.urdf
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def test_hardware_node_frames_follow_its_namespace(ros_env: dict[str, str]) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    del ros_env
    context = _context("/robot2")
    try:
        node = HardwareNode(context=context, parameter_overrides=[
            Parameter("skel_file", value=str(example("arm.skel"))),
            Parameter("hardware_config", value=str(
                resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml"))),
            Parameter("emulate", value=True)])
        try:
            assert node.shell.robot.frame_prefix == "robot2/"
            assert node.shell.robot.world_frame == "robot2/world"
        finally:
            node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
