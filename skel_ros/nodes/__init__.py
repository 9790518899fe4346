"""The ROS 2 nodes: thin rclpy wrappers around the ROS-free core.

Only this package imports rclpy. Each node declares validated parameters, converts
messages and calls a core object:

* ``sim_node`` (:mod:`skel_ros.nodes.sim_node`): a ``SimEngine`` stepped in (scaled)
  real time, publishing simulated time on ``/clock``;
* ``hardware_node`` (:mod:`skel_ros.nodes.hardware_node`): a ``HardwareManager``;
* ``trajectory_player`` (:mod:`skel_ros.nodes.trajectory_player`): plays a trajectory file;
* shared by the simulation and the hardware node:
  :mod:`skel_ros.nodes.robot_publisher` (what a robot node publishes: ``joint_states``,
  ``/tf``, ``/tf_static``, ``robot_description``, ``/clock``), :mod:`skel_ros.nodes.markers`
  (``~/markers``), :mod:`skel_ros.nodes.commands` (the command-message parsers),
  :mod:`skel_ros.nodes.names` (joint and frame names, stamps), :mod:`skel_ros.nodes.qos`
  and :mod:`skel_ros.nodes.throttle`;
* :mod:`skel_ros.nodes.recorder`, :mod:`skel_ros.nodes.sim_to_real`: recording and the
  sim-to-real workflow.

Submodules are imported on demand (``from skel_ros.nodes.sim_node import main``), so
importing this package does not start rclpy.
"""

__all__ = [
    "commands",
    "errors",
    "markers",
    "names",
    "qos",
    "robot_publisher",
    "sim_node",
    "throttle",
]
