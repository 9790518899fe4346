"""Drive the real robot (or emulated actuators) with the same joint model and limits.

    ros2 launch skel_ros hardware.launch.py emulate:=true
    ros2 launch skel_ros hardware.launch.py port:=/dev/ttyUSB0
    ros2 launch skel_ros hardware.launch.py emulate:=true namespace:=robot1 rviz:=true
    ros2 launch skel_ros hardware.launch.py \\
        skel_file:=package://skel_ros/examples/quadruped.skel \\
        hardware_config:=package://skel_ros/config/hardware/quadruped_mit.yaml

(the bundled mappings: config/hardware/arm_dynamixel.yaml, quadruped_mit.yaml; see
docs/hardware.md and docs/can.md.)

Arguments:
    skel_file        the robot's model, any format (SKEL, URDF/xacro, SMURF, ...)
    model_args       xacro arguments of a .xacro skel_file: "name:=value name:=value"
    fixed_base       URDF/SMURF: weld the root link to the world (true/false)
    hardware_config  joint -> actuator mapping YAML (config/hardware/*.yaml)
    port             serial port for every Dynamixel bus ("" = as in the YAML)
    can_interface    python-can interface for every CAN bus ("" = as in the YAML)
    can_channel      CAN channel for every CAN bus ("" = as in the YAML)
    emulate          start emulated actuators instead of talking to hardware (true/false)
    rviz             start RViz
    namespace        namespace of the node and its topics ("" = none)
    frame_prefix     prefix of every TF frame (default: "<namespace>/", "" without a namespace)
    autostart        lifecycle state at start: inactive (default), active, unconfigured

The hardware node is a lifecycle node. ``autostart`` is the state it brings itself to:
``inactive`` (buses open, torque off until the activate transition or ``~/enable``, as
before the lifecycle), ``active`` (torque on, holding the measured positions) or
``unconfigured`` (a lifecycle manager drives it, or ``ros2 lifecycle set
/hardware_node configure``). It is a ``launch_ros`` ``LifecycleNode`` here, so launch's
lifecycle events can drive it too (docs/hardware.md, "Lifecycle"). ``autostart`` is a
node parameter rather than launch events, so it works the same under Humble, Jazzy and
Kilted, and without launch.

With a namespace, RViz runs in it too (config/skel_ros.rviz names topics relatively:
``robot_description``, and ``markers`` remapped to the node's ``hardware_node/markers``)
and its fixed frame is ``<frame_prefix>world``.

String parameters are wrapped in ``ParameterValue(..., value_type=str)``: launch_ros reads
a bare substitution as YAML, so ``can_channel:=0`` would reach the node as the integer 0
and the node (string parameter) would refuse it. ``emulate`` accepts only true/false
(True/False): Humble's ``ParameterValue(value_type=bool)`` refuses 1/0, Jazzy's takes
them. Only launch / launch_ros API common to Humble, Jazzy and Kilted is used.
"""

# I001 off: ruff takes `launch` for first-party (the repository's launch/ directory).
from launch import LaunchDescription  # noqa: I001
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import LifecycleNode, Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

BOOL_CHOICES = ["true", "false", "True", "False"]
AUTOSTART_CHOICES = ["inactive", "active", "unconfigured"]  # hardware_node.AUTOSTART


def _string(name: str) -> ParameterValue:
    """A launch argument as a string parameter, never re-read as YAML (``0`` stays ``"0"``)."""
    return ParameterValue(LaunchConfiguration(name), value_type=str)


def _namespace_prefix() -> PythonExpression:
    """``"<namespace>/"`` (slashes around the namespace dropped), or "" for no namespace.

    A ROS namespace holds only letters, digits, ``_`` and ``/``: no quote can break the
    expression.
    """
    ns = LaunchConfiguration("namespace")
    return PythonExpression(["'", ns, "'.strip('/') + '/' if '", ns, "'.strip('/') else ''"])


def generate_launch_description() -> LaunchDescription:
    share = FindPackageShare("skel_ros")
    return LaunchDescription([
        DeclareLaunchArgument("skel_file", default_value="package://skel_ros/examples/arm.skel",
                              description="model of the robot (path or package:// URL)"),
        DeclareLaunchArgument("model_args", default_value="",
                              description="xacro arguments: 'name:=value name:=value'"),
        DeclareLaunchArgument("fixed_base", default_value="false", choices=BOOL_CHOICES,
                              description="URDF/SMURF: weld the root link to the world"),
        DeclareLaunchArgument(
            "hardware_config",
            default_value=PathJoinSubstitution([share, "config", "hardware", "arm_dynamixel.yaml"]),
            description="joint -> actuator mapping YAML"),
        DeclareLaunchArgument("port", default_value="", description="serial port override"),
        DeclareLaunchArgument("can_interface", default_value="",
                              description="python-can interface override"),
        DeclareLaunchArgument("can_channel", default_value="", description="CAN channel override"),
        DeclareLaunchArgument("emulate", default_value="false", choices=BOOL_CHOICES,
                              description="emulated actuators instead of hardware"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of the node"),
        DeclareLaunchArgument("frame_prefix", default_value=_namespace_prefix(),
                              description="prefix of every TF frame (default <namespace>/)"),
        DeclareLaunchArgument("autostart", default_value="inactive", choices=AUTOSTART_CHOICES,
                              description="lifecycle state at start: inactive (torque off),"
                                          " active (torque on), unconfigured"),
        # Nodes of other packages first: if one is missing (rviz2 is not in ros-base), launch
        # aborts before starting ours; started ones would be left running as orphans.
        Node(
            package="rviz2",
            executable="rviz2",
            name="rviz2",
            namespace=LaunchConfiguration("namespace"),
            arguments=["-d", PathJoinSubstitution([share, "config", "skel_ros.rviz"]),
                       "-f", [LaunchConfiguration("frame_prefix"), "world"]],
            remappings=[("markers", "hardware_node/markers")],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
        LifecycleNode(
            package="skel_ros",
            executable="hardware_node",
            name="hardware_node",
            namespace=LaunchConfiguration("namespace"),
            output="screen",
            parameters=[{
                "skel_file": _string("skel_file"),
                "model_args": _string("model_args"),
                "fixed_base": ParameterValue(LaunchConfiguration("fixed_base"), value_type=bool),
                "hardware_config": _string("hardware_config"),
                "port": _string("port"),
                "can_interface": _string("can_interface"),
                "can_channel": _string("can_channel"),
                "emulate": ParameterValue(LaunchConfiguration("emulate"), value_type=bool),
                "frame_prefix": _string("frame_prefix"),
                "autostart": _string("autostart"),
            }],
        ),
    ])
