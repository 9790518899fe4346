"""Simulate a SKEL robot and show it in RViz.

    ros2 launch skel_ros sim.launch.py
    ros2 launch skel_ros sim.launch.py skel_file:=/path/robot.skel rviz:=false
    ros2 launch skel_ros sim.launch.py namespace:=sim config:=/path/sim_params.yaml

Arguments:
    skel_file     SKEL (or other model) file; package://skel_ros/... works
    config        ROS parameter file for the simulation node (config/sim.yaml)
    rviz          start RViz with config/skel_ros.rviz
    namespace     namespace of the node and its topics ("" = none)
    use_sim_time  give nodes started here (RViz) the simulation's /clock (true/false)

``skel_file`` is passed as ``ParameterValue(..., value_type=str)``: launch_ros reads a bare
substitution as YAML, so a value YAML reads as a number, a boolean or a mapping (``0``,
``on``, ``a: b``) would not stay a string. ``use_sim_time`` accepts only true/false
(True/False): Humble's ``ParameterValue(value_type=bool)`` refuses 1/0. Only launch /
launch_ros API common to Humble, Jazzy and Kilted is used.
"""

# I001 off: ruff takes `launch` for first-party (the repository's launch/ directory).
from launch import LaunchDescription  # noqa: I001
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

BOOL_CHOICES = ["true", "false", "True", "False"]


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("skel_ros")
    skel_file = ParameterValue(LaunchConfiguration("skel_file"), value_type=str)
    use_sim_time = LaunchConfiguration("use_sim_time")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="SKEL model to simulate (path or package:// URL)"),
        DeclareLaunchArgument("config",
                              default_value=PathJoinSubstitution([share, "config", "sim.yaml"]),
                              description="parameter file of the simulation node"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("use_sim_time", default_value="true", choices=BOOL_CHOICES,
                              description="nodes started here follow the simulation's /clock"),
        # Nodes of other packages first: if one is missing (rviz2 is not in ros-base), launch
        # aborts before starting ours; started ones would be left running as orphans.
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros.rviz"])],
            parameters=[{"use_sim_time": ParameterValue(use_sim_time, value_type=bool)}],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
        Node(
            package="skel_ros",
            executable="sim_node",
            name="sim_node",
            namespace=LaunchConfiguration("namespace"),
            output="screen",
            parameters=[LaunchConfiguration("config"), {"skel_file": skel_file}],
        ),
    ])
