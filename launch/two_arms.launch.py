"""Two simulated arms side by side, each in its own namespace, in one RViz.

    ros2 launch skel_ros two_arms.launch.py
    ros2 launch skel_ros two_arms.launch.py spacing:=1.0 rviz:=false
    ros2 launch skel_ros two_arms.launch.py skel_file:=package://skel_ros/examples/quadruped.skel

The pattern for several robots: each robot node runs in a namespace (``robot1``,
``robot2``) with the frame prefix ``<namespace>/``, so its topics
(``/robot1/joint_states``, ``/robot1/joint_commands``, ``/robot1/robot_description``,
``/robot1/sim_node/markers``) and its TF frames (``robot1/world``, ``robot1/base`` ...)
are its own. Static transforms put ``robot1/world`` and ``robot2/world`` under one
``world``, ``spacing`` apart along y. RViz (config/skel_ros_two_arms.rviz) shows a
RobotModel per robot (``Description Topic`` ``/robotN/robot_description``), TF and each
node's shape markers, in the fixed frame ``world``.

Each simulation has its own simulated time; two of them on ``/clock`` would make it jump
back and forth, so ``robot2``'s clock goes to ``/robot2/clock`` and RViz follows
``robot1``'s. Drive one arm::

    ros2 topic pub --once /robot2/joint_commands sensor_msgs/msg/JointState \\
        "{name: [shoulder_yaw], position: [0.8]}"

Arguments: skel_file, engine (dart or mujoco), config (the simulation nodes' parameter
file), rviz, spacing (m between the two robots in RViz).

``skel_file`` is passed as ``ParameterValue(..., value_type=str)`` (launch_ros would read
``0`` or ``on`` as YAML). Only launch / launch_ros API common to Humble, Jazzy and Kilted
is used.
"""

# I001 off: ruff takes `launch` for first-party (the repository's launch/ directory).
from launch import LaunchDescription  # noqa: I001
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

ROBOTS = (("robot1", "str(", " / 2)"), ("robot2", "str(-", " / 2)"))
"""(namespace, and the y offset of its world frame as an expression around ``spacing``)."""


def _world_offset(namespace: str, y: PythonExpression) -> Node:
    # tf2_ros's static publisher: the robot's world frame, placed in the common world.
    return Node(
        package="tf2_ros",
        executable="static_transform_publisher",
        name=f"{namespace}_world_offset",
        arguments=["--x", "0", "--y", y, "--z", "0", "--frame-id", "world",
                   "--child-frame-id", f"{namespace}/world"],
    )


def _sim_node(namespace: str, *, clock: bool) -> Node:
    return Node(
        package="skel_ros",
        executable="sim_node",
        name="sim_node",
        namespace=namespace,
        output="screen",
        parameters=[LaunchConfiguration("config"), {
            "skel_file": ParameterValue(LaunchConfiguration("skel_file"), value_type=str),
            "engine": ParameterValue(LaunchConfiguration("engine"), value_type=str),
            "frame_prefix": f"{namespace}/"}],
        # One /clock per session: the other simulations keep theirs in their namespace.
        remappings=[] if clock else [("/clock", f"/{namespace}/clock")],
    )


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("skel_ros")
    spacing = LaunchConfiguration("spacing")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="SKEL model of both robots (path or package:// URL)"),
        DeclareLaunchArgument("engine", default_value="dart", choices=["dart", "mujoco"],
                              description="the engine that steps both worlds"),
        DeclareLaunchArgument("config",
                              default_value=PathJoinSubstitution([share, "config", "sim.yaml"]),
                              description="parameter file of the simulation nodes"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("spacing", default_value="0.6",
                              description="distance between the two robots in RViz (m)"),
        # Nodes of other packages first: if one is missing (rviz2 is not in ros-base), launch
        # aborts before starting ours; started ones would be left running as orphans.
        *[_world_offset(ns, PythonExpression([head, spacing, tail])) for ns, head, tail in ROBOTS],
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros_two_arms.rviz"])],
            parameters=[{"use_sim_time": True}],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
        *[_sim_node(ns, clock=i == 0) for i, (ns, _, _) in enumerate(ROBOTS)],
    ])
