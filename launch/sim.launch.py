"""Simulate a SKEL robot and show it in RViz.

    ros2 launch skel_ros sim.launch.py
    ros2 launch skel_ros sim.launch.py skel_file:=/path/robot.skel rviz:=false
    ros2 launch skel_ros sim.launch.py engine:=mujoco
    ros2 launch skel_ros sim.launch.py namespace:=robot1 config:=/path/sim_params.yaml
    ros2 launch skel_ros sim.launch.py skel_file:=/path/robot.urdf.xacro \
        model_args:="arm:=ur5 hand:=false" fixed_base:=true

Arguments:
    skel_file     model file in any format (SKEL, URDF/xacro, SMURF, ...); package:// works
    model_args    xacro arguments of a .xacro skel_file: "name:=value name:=value"
    fixed_base    URDF/SMURF: weld the root link to the world (true/false)
    engine        the engine that steps the world: dart (default) or mujoco
    config        ROS parameter file for the simulation node (config/sim.yaml)
    rviz          start RViz with config/skel_ros.rviz
    namespace     namespace of the node and its topics ("" = none)
    frame_prefix  prefix of every TF frame (default: "<namespace>/", "" without a namespace)
    use_sim_time  give nodes started here (RViz) the simulation's /clock (true/false)

With a namespace, RViz runs in it too (its configuration names topics relatively:
``robot_description``, and ``markers`` remapped to the node's ``sim_node/markers``) and
its fixed frame is ``<frame_prefix>world``; two robots in two namespaces then have
distinct frames on ``/tf`` (launch/two_arms.launch.py shows both in one RViz).

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
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

BOOL_CHOICES = ["true", "false", "True", "False"]


def _namespace_prefix() -> PythonExpression:
    """``"<namespace>/"`` (slashes around the namespace dropped), or "" for no namespace.

    A ROS namespace holds only letters, digits, ``_`` and ``/``: no quote can break the
    expression.
    """
    ns = LaunchConfiguration("namespace")
    return PythonExpression(["'", ns, "'.strip('/') + '/' if '", ns, "'.strip('/') else ''"])


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("skel_ros")
    skel_file = ParameterValue(LaunchConfiguration("skel_file"), value_type=str)
    use_sim_time = LaunchConfiguration("use_sim_time")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="model to simulate (path or package:// URL)"),
        DeclareLaunchArgument("model_args", default_value="",
                              description="xacro arguments: 'name:=value name:=value'"),
        DeclareLaunchArgument("fixed_base", default_value="false", choices=BOOL_CHOICES,
                              description="URDF/SMURF: weld the root link to the world"),
        DeclareLaunchArgument("engine", default_value="dart", choices=["dart", "mujoco"],
                              description="the engine that steps the world"),
        DeclareLaunchArgument("config",
                              default_value=PathJoinSubstitution([share, "config", "sim.yaml"]),
                              description="parameter file of the simulation node"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("frame_prefix", default_value=_namespace_prefix(),
                              description="prefix of every TF frame (default <namespace>/)"),
        DeclareLaunchArgument("use_sim_time", default_value="true", choices=BOOL_CHOICES,
                              description="nodes started here follow the simulation's /clock"),
        # Nodes of other packages first: if one is missing (rviz2 is not in ros-base), launch
        # aborts before starting ours; started ones would be left running as orphans.
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            namespace=LaunchConfiguration("namespace"),
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros.rviz"]),
                       "-f", [LaunchConfiguration("frame_prefix"), "world"]],
            parameters=[{"use_sim_time": ParameterValue(use_sim_time, value_type=bool)}],
            remappings=[("markers", "sim_node/markers")],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
        Node(
            package="skel_ros",
            executable="sim_node",
            name="sim_node",
            namespace=LaunchConfiguration("namespace"),
            output="screen",
            parameters=[LaunchConfiguration("config"), {
                "skel_file": skel_file,
                "model_args": ParameterValue(LaunchConfiguration("model_args"), value_type=str),
                "fixed_base": ParameterValue(LaunchConfiguration("fixed_base"), value_type=bool),
                "engine": ParameterValue(LaunchConfiguration("engine"), value_type=str),
                "frame_prefix": ParameterValue(LaunchConfiguration("frame_prefix"),
                                               value_type=str)}],
        ),
    ])
