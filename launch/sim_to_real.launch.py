"""The simulated and the real robot side by side, driven by one command stream.

    ros2 launch skel_ros sim_to_real.launch.py                  # emulated hardware
    ros2 launch skel_ros sim_to_real.launch.py emulate:=false port:=/dev/ttyUSB0
    ros2 launch skel_ros sim_to_real.launch.py \\
        trajectory:=package://skel_ros/examples/arm_trajectory.xml

The simulation node runs in namespace ``sim`` with frame prefix ``sim/``, the hardware
node in ``real`` with ``real/``; both take their commands from the global
``/joint_commands`` and ``/joint_trajectory``, so one publisher drives both. Static
transforms put ``sim/world`` and ``real/world`` 0.6 m apart along y, so the two robots
stand side by side in RViz. The session has one time base, the wall clock: the
simulation runs locked to it (``time_base: wall``, real-time factor 1) and stamps its
messages in ROS time, as the hardware node does; nothing publishes ``/clock``, so ``sim/``
and ``real/`` frames line up in RViz, in tf2 lookups and in recordings. With
``trajectory:=``, the trajectory player waits until every robot this file starts
subscribes to the commands (its ``subscribers``: 2, 3 with ``second_engine``; up to 60 s,
else it plays nothing and exits with status 2), enables the hardware
(``/real/hardware_node/enable``; it starts with torque off) and then streams the
trajectory to all; without it, enable by hand and tell a player how many robots to wait
for::

    ros2 service call /real/hardware_node/enable std_srvs/srv/SetBool "{data: true}"
    ros2 run skel_ros trajectory_player --ros-args -p skel_file:=... \\
        -p trajectory_file:=... -p subscribers:=2

``skel-ros compare run.mcap --record`` records the run (until Ctrl-C) and compares it.

With ``second_engine:=mujoco`` a second simulation node runs the same robot in that
engine (namespace and frame prefix ``mujoco``) on the same commands: sim-to-sim beside
sim-to-real (``skel-ros compare`` reads ``/mujoco/joint_states`` as the stream
``mujoco``).

Arguments: skel_file, engine (the simulation's: dart or mujoco), second_engine ("" = none,
dart or mujoco), hardware_config, port,
can_interface, can_channel, emulate (true/false), trajectory ("" = none; a CASPR
trajectories.xml or a trajectory YAML), rviz, spacing (distance between the robots in
RViz, m), autostart (the hardware node's lifecycle state at start: inactive, the default,
active or unconfigured).

The hardware node is a ``launch_ros`` ``LifecycleNode``, as in ``hardware.launch.py``:
``autostart:=inactive`` configures it (buses open, torque off) and the player's
``~/enable`` runs its activate transition; ``autostart:=unconfigured`` leaves it to a
lifecycle manager or launch's lifecycle events.

String parameters are wrapped in ``ParameterValue(..., value_type=str)``: launch_ros reads
a bare substitution as YAML, so ``can_channel:=0`` would reach the node as the integer 0
and be refused. The player's condition is a plain ``launch.Condition`` predicate: a
``PythonExpression`` comparison breaks on paths with quotes, ``NotEqualsSubstitution`` is
not in Humble and ``LaunchConfigurationNotEquals`` is deprecated since Iron. ``emulate``
accepts only true/false (True/False): Humble's ``ParameterValue(value_type=bool)`` refuses
1/0. Only launch / launch_ros API common to Humble, Jazzy and Kilted is used.
"""

# I001 off: ruff takes `launch` for first-party (the repository's launch/ directory).
from launch import Condition, LaunchContext, LaunchDescription  # noqa: I001
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import LifecycleNode, Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

COMMAND_REMAPS = [("joint_commands", "/joint_commands"),
                  ("joint_trajectory", "/joint_trajectory")]
BOOL_CHOICES = ["true", "false", "True", "False"]
AUTOSTART_CHOICES = ["inactive", "active", "unconfigured"]  # hardware_node.AUTOSTART


def _string(name: str) -> ParameterValue:
    """A launch argument as a string parameter, never re-read as YAML (``0`` stays ``"0"``).

    A new ParameterValue per use: it keeps its evaluated value, so it is not shared.
    """
    return ParameterValue(LaunchConfiguration(name), value_type=str)


def _trajectory_given(context: LaunchContext) -> bool:
    return LaunchConfiguration("trajectory").perform(context).strip() != ""


def _world_offset(side: str, y: PythonExpression) -> Node:
    # tf2_ros's static publisher: the two robots' world frames, apart along y.
    return Node(
        package="tf2_ros",
        executable="static_transform_publisher",
        name=f"{side}_world_offset",
        arguments=["--x", "0", "--y", y, "--z", "0", "--frame-id", "world",
                   "--child-frame-id", f"{side}/world"],
    )


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("skel_ros")
    spacing = LaunchConfiguration("spacing")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="SKEL model of the robot (path or package:// URL)"),
        DeclareLaunchArgument(
            "hardware_config",
            default_value=PathJoinSubstitution([share, "config", "hardware", "arm_dynamixel.yaml"]),
            description="joint -> actuator mapping YAML"),
        DeclareLaunchArgument("engine", default_value="dart", choices=["dart", "mujoco"],
                              description="the engine of the simulation"),
        DeclareLaunchArgument("second_engine", default_value="", choices=["", "dart", "mujoco"],
                              description="a second simulation in this engine, beside the "
                                          "first, in the namespace named after it"),
        DeclareLaunchArgument("port", default_value="", description="serial port override"),
        DeclareLaunchArgument("can_interface", default_value="",
                              description="python-can interface override"),
        DeclareLaunchArgument("can_channel", default_value="", description="CAN channel override"),
        DeclareLaunchArgument("emulate", default_value="true", choices=BOOL_CHOICES,
                              description="emulated actuators instead of hardware"),
        DeclareLaunchArgument("trajectory", default_value="",
                              description="trajectory file to play to both robots"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        DeclareLaunchArgument("spacing", default_value="0.6",
                              description="distance between the two robots in RViz (m)"),
        DeclareLaunchArgument("autostart", default_value="inactive", choices=AUTOSTART_CHOICES,
                              description="the hardware node's lifecycle state at start:"
                                          " inactive (torque off), active (torque on),"
                                          " unconfigured"),
        # Nodes of other packages first: if one is missing (rviz2 is not in ros-base), launch
        # aborts before starting ours; started ones would be left running as orphans.
        _world_offset("sim", PythonExpression(["str(", spacing, " / 2)"])),
        _world_offset("real", PythonExpression(["str(-", spacing, " / 2)"])),
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros_sim_to_real.rviz"])],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
        Node(
            package="skel_ros",
            executable="sim_node",
            name="sim_node",
            namespace="sim",
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "sim.yaml"]),
                        {"skel_file": _string("skel_file"), "frame_prefix": "sim/",
                         "engine": _string("engine"), "time_base": "wall"}],
            remappings=COMMAND_REMAPS,
        ),
        # second_engine:=mujoco: the same robot in the other engine beside it, on the same
        # commands (namespace and frame prefix named after the engine), as
        # `skel-ros sim-to-real --engines dart,mujoco` runs it.
        Node(
            package="skel_ros",
            executable="sim_node",
            name="sim_node",
            namespace=LaunchConfiguration("second_engine"),
            output="screen",
            parameters=[PathJoinSubstitution([share, "config", "sim.yaml"]),
                        {"skel_file": _string("skel_file"),
                         "frame_prefix": ParameterValue(
                             [LaunchConfiguration("second_engine"), "/"], value_type=str),
                         "engine": _string("second_engine"), "time_base": "wall"}],
            remappings=COMMAND_REMAPS,
            condition=IfCondition(PythonExpression(
                ["'", LaunchConfiguration("second_engine"), "' != ''"])),
        ),
        LifecycleNode(
            package="skel_ros",
            executable="hardware_node",
            name="hardware_node",
            namespace="real",
            output="screen",
            parameters=[{
                "skel_file": _string("skel_file"),
                "hardware_config": _string("hardware_config"),
                "port": _string("port"),
                "can_interface": _string("can_interface"),
                "can_channel": _string("can_channel"),
                "emulate": ParameterValue(LaunchConfiguration("emulate"), value_type=bool),
                "frame_prefix": "real/",
                "autostart": _string("autostart"),
            }],
            remappings=COMMAND_REMAPS,
        ),
        Node(
            package="skel_ros",
            executable="trajectory_player",
            name="trajectory_player",
            output="screen",
            parameters=[{"trajectory_file": _string("trajectory"),
                         "skel_file": _string("skel_file"), "mode": "stream",
                         "enable_service": "/real/hardware_node/enable",
                         # every robot hears the stream from its first sample
                         "subscribers": ParameterValue(PythonExpression(
                             ["2 + int('", LaunchConfiguration("second_engine"), "' != '')"]),
                             value_type=int),
                         "wait_for_subscribers": 60.0}],
            condition=Condition(predicate=_trajectory_given),
        ),
    ])
