"""Simulate a SKEL robot and show it in RViz.

    ros2 launch skel_ros sim.launch.py
    ros2 launch skel_ros sim.launch.py skel_file:=/path/robot.skel rviz:=false
    ros2 launch skel_ros sim.launch.py namespace:=sim config:=/path/sim_params.yaml

Arguments:
    skel_file     SKEL (or other model) file; package://skel_ros/... works
    config        ROS parameter file for the simulation node (config/sim.yaml)
    rviz          start RViz with config/skel_ros.rviz
    namespace     namespace of the node and its topics ("" = none)
    use_sim_time  give nodes started here (RViz) the simulation's /clock
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
    skel_file = LaunchConfiguration("skel_file")
    use_sim_time = LaunchConfiguration("use_sim_time")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="SKEL model to simulate (path or package:// URL)"),
        DeclareLaunchArgument("config", default_value=PathJoinSubstitution([share, "config", "sim.yaml"]),
                              description="parameter file of the simulation node"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("use_sim_time", default_value="true",
                              description="nodes started here follow the simulation's /clock"),
        Node(
            package="skel_ros",
            executable="sim_node",
            name="sim_node",
            namespace=LaunchConfiguration("namespace"),
            output="screen",
            parameters=[LaunchConfiguration("config"), {"skel_file": skel_file}],
        ),
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros.rviz"])],
            parameters=[{"use_sim_time": ParameterValue(use_sim_time, value_type=bool)}],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
    ])
