"""Drive the real robot (or emulated actuators) with the same joint model and limits.

    ros2 launch skel_ros hardware.launch.py emulate:=true
    ros2 launch skel_ros hardware.launch.py port:=/dev/ttyUSB0
    ros2 launch skel_ros hardware.launch.py skel_file:=package://skel_ros/examples/quadruped.skel \\
        hardware_config:=$(ros2 pkg prefix skel_ros)/share/skel_ros/config/hardware/quadruped_mit.yaml \\
        can_interface:=socketcan can_channel:=can0

Arguments:
    skel_file        the robot's SKEL (or other model) file
    hardware_config  joint -> actuator mapping YAML (config/hardware/*.yaml)
    port             serial port for every Dynamixel bus ("" = as in the YAML)
    can_interface    python-can interface for every CAN bus ("" = as in the YAML)
    can_channel      CAN channel for every CAN bus ("" = as in the YAML)
    emulate          start emulated actuators instead of talking to hardware
    rviz             start RViz
    namespace        namespace of the node and its topics
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("skel_ros")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="SKEL model of the robot (path or package:// URL)"),
        DeclareLaunchArgument(
            "hardware_config",
            default_value=PathJoinSubstitution([share, "config", "hardware", "arm_dynamixel.yaml"]),
            description="joint -> actuator mapping YAML"),
        DeclareLaunchArgument("port", default_value="", description="serial port override"),
        DeclareLaunchArgument("can_interface", default_value="",
                              description="python-can interface override"),
        DeclareLaunchArgument("can_channel", default_value="", description="CAN channel override"),
        DeclareLaunchArgument("emulate", default_value="false",
                              description="emulated actuators instead of hardware"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        Node(
            package="skel_ros",
            executable="hardware_node",
            name="hardware_node",
            namespace=LaunchConfiguration("namespace"),
            output="screen",
            parameters=[{
                "skel_file": LaunchConfiguration("skel_file"),
                "hardware_config": LaunchConfiguration("hardware_config"),
                "port": LaunchConfiguration("port"),
                "can_interface": LaunchConfiguration("can_interface"),
                "can_channel": LaunchConfiguration("can_channel"),
                "emulate": ParameterValue(LaunchConfiguration("emulate"), value_type=bool),
            }],
        ),
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros.rviz"])],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
    ])
