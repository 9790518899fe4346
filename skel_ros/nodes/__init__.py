"""The ROS 2 nodes: thin rclpy wrappers around the ROS-free core.

Only this package imports rclpy. Each node declares validated parameters, converts
messages and calls a core object:

* ``sim_node`` (:mod:`skel_ros.nodes.sim_node`): a ``SimEngine`` stepped in (scaled)
  real time, publishing simulated time on ``/clock``;
* ``hardware_node`` (:mod:`skel_ros.nodes.hardware_node`): a ``HardwareBackend`` (a
  lifecycle node);
* ``trajectory_player`` (:mod:`skel_ros.nodes.trajectory_player`): plays a trajectory file;
* shared by the simulation and the hardware node, the ROS shell
  (:mod:`skel_ros.nodes.shell`, ``RobotShell``, which both hold):
  :mod:`skel_ros.nodes.parameters` (the parameter idiom), :mod:`skel_ros.nodes.intake`
  (``joint_commands``, ``joint_trajectory``, FollowJointTrajectory:
  :mod:`skel_ros.nodes.follow_joint_trajectory`), :mod:`skel_ros.nodes.time_base` (header
  stamps <-> the core's time), :mod:`skel_ros.nodes.robot_publisher` (what a robot node
  publishes: ``joint_states``, ``/tf``, ``/tf_static``, ``robot_description``,
  ``/clock``), :mod:`skel_ros.nodes.markers`
  (``~/markers``), :mod:`skel_ros.nodes.commands` (command messages, read by the ROS-free
  :mod:`skel_ros.trajectory.messages`),
  :mod:`skel_ros.nodes.names` (joint and frame names, stamps), :mod:`skel_ros.nodes.qos`
  and :mod:`skel_ros.nodes.throttle`;
* :mod:`skel_ros.nodes.recorder`, :mod:`skel_ros.nodes.sim_to_real`: recording and the
  sim-to-real workflow;
* :mod:`skel_ros.nodes.service_calls`: service calls with a bounded wait, re-sent when an
  idempotent call's answer is lost (every client in the package uses it);
  :mod:`skel_ros.nodes.enable_call`: a hardware node's ``~/enable`` true, whose lost answer
  is asked of the node's lifecycle ``get_state`` instead (a re-send could undo an e-stop),
  and the node's ``/diagnostics`` state while a caller plays.

Submodules are imported on demand (``from skel_ros.nodes.sim_node import main``), so
importing this package does not start rclpy.
"""

__all__ = [
    "commands",
    "enable_call",
    "errors",
    "intake",
    "markers",
    "names",
    "parameters",
    "qos",
    "robot_publisher",
    "service_calls",
    "shell",
    "sim_node",
    "throttle",
    "time_base",
]
