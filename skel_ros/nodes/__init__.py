"""The ROS 2 nodes: thin rclpy wrappers around the ROS-free core.

Only this package imports rclpy. Each node declares validated parameters, converts
messages and calls a core object:

* ``sim_node`` (:mod:`skel_ros.nodes.sim_node`): a ``SimEngine`` stepped in (scaled)
  real time, publishing simulated time on ``/clock``;
* ``hardware_node`` (:mod:`skel_ros.nodes.hardware_node`): a ``HardwareManager``;
* ``trajectory_player`` (:mod:`skel_ros.nodes.trajectory_player`): plays a trajectory file;
* :mod:`skel_ros.nodes.robot_io`: what a robot node publishes (``joint_states``, ``/tf``,
  ``/tf_static``, ``robot_description``, markers) and the command-message parsers,
  shared by the simulation and the hardware node;
* :mod:`skel_ros.nodes.recorder`, :mod:`skel_ros.nodes.sim_to_real`: recording and the
  sim-to-real workflow.

Submodules are imported on demand (``from skel_ros.nodes.sim_node import main``), so
importing this package does not start rclpy.
"""

__all__ = ["errors", "robot_io", "sim_node"]
