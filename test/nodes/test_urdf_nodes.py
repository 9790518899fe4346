"""A robot that has only a URDF runs in both nodes.

example-robot-data's UR5 and Solo 12 (skipped with the reason when that package is not
installed): the simulation node steps them (the quadruped on its floating base);
``skel-ros init-hardware`` writes their hardware YAML and the hardware node runs them on
emulated actuators (UR5 on Dynamixel servos, Solo 12 on MIT motors, its floating base
unmapped, xArm 7 on CiA 402 drives), with the URDF's joint names and limits. A xacro
model takes its arguments and ``fixed_base`` as node parameters.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skel_ros.cli.main import main as skel_ros_main
from skel_ros.model import load_model

if TYPE_CHECKING:
    from skel_ros.model.types import World

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))
from urdf_robots import ament_env  # noqa: E402 - the helper of the model tests

UR5 = "ur_description/urdf/ur5_robot.urdf"
SOLO = "solo_description/robots/solo12.urdf"
XARM = "xarm_description/urdf/xarm7.urdf"
UR5_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
              "wrist_2_joint", "wrist_3_joint"]


def _limits(world: World) -> list[tuple[str, float, float, float]]:
    return [(d.name, d.position_lower, d.position_upper, d.velocity_upper)
            for s in world.skeletons for d in s.dofs]


@pytest.mark.parametrize("robot", [UR5, SOLO], ids=["ur5", "solo12"])
def test_sim_node_runs_a_urdf_robot(ros_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
                                    robot: str) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.sim_node import SimNode

    urdf = ament_env(monkeypatch) / robot
    world = load_model(urdf)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(urdf))])
        try:
            assert list(node.engine.dof_names) == [d.name for d in world.skeletons[0].dofs]
            assert robot != UR5 or list(node.engine.dof_names) == UR5_JOINTS
            assert _limits(node.engine.model) == _limits(world)
            node.run_steps(50)
            assert node.engine.time == pytest.approx(0.05)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


@pytest.mark.parametrize(("robot", "protocol", "joints"), [
    (UR5, "dynamixel", UR5_JOINTS),
    (SOLO, "mit", None),
    (XARM, "canopen", [f"joint{i}" for i in range(1, 8)]),
], ids=["ur5-dynamixel", "solo12-mit", "xarm7-canopen"])
def test_hardware_node_runs_a_urdf_robot_from_init_hardware(  # noqa: PLR0917 - fixtures
        ros_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        robot: str, protocol: str, joints: list[str] | None) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    urdf = ament_env(monkeypatch) / robot
    config = tmp_path / "hw.yaml"
    assert skel_ros_main(["init-hardware", str(urdf), "--protocol", protocol,
                          "-o", str(config)]) == 0
    world = load_model(urdf)
    actuated = [d.name for d in world.skeletons[0].dofs
                if world.skeletons[0].joint(d.joint).num_dofs == 1]
    assert joints is None or actuated == joints
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = HardwareNode(context=context, parameter_overrides=[
            Parameter("skel_file", value=str(urdf)),
            Parameter("hardware_config", value=str(config)),
            Parameter("emulate", value=True)])
        try:
            assert list(node.bound.names) == actuated  # every one-DOF joint has a motor
            assert node.bound.unmapped == tuple(d.name for d in world.skeletons[0].dofs
                                                if d.name not in actuated)  # floating base
            assert _limits(node.world) == _limits(world)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


XACRO = """<?xml version="1.0"?>
<robot name="pendulum" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.5"/>
  <link name="base"><inertial><mass value="5"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="bob"><inertial><origin xyz="0 0 -$(arg length)"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="swing" type="revolute"><parent link="base"/><child link="bob"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" velocity="5" effort="20"/></joint>
</robot>
"""


def test_sim_node_takes_xacro_arguments_and_fixed_base(ros_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    pytest.importorskip("xacro", reason="xacro reads .urdf.xacro files")
    from rclpy.parameter import Parameter

    from skel_ros.nodes.errors import NodeSetupError
    from skel_ros.nodes.sim_node import SimNode

    path = tmp_path / "pendulum.urdf.xacro"
    path.write_text(XACRO)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(path)),
            Parameter("model_args", value="length:=0.8"),
            Parameter("fixed_base", value=True)])
        try:
            assert list(node.engine.dof_names) == ["swing"]  # the base is welded
            bob = node.engine.model.skeletons[0].body("bob")
            assert bob.inertia.com[2] == pytest.approx(-0.8)
        finally:
            node.destroy_node()
        with pytest.raises(NodeSetupError, match="not a xacro argument"):
            SimNode(context=context, start=False, parameter_overrides=[
                Parameter("skel_file", value=str(path)),
                Parameter("model_args", value="length=0.8")])
    finally:
        rclpy.shutdown(context=context)
