"""skel_ros: DART SKEL robot models in ROS 2.

Layers, each importing only those below it (docs/architecture.md#layers,
test/test_layering.py):

* ``skel_ros.model``: SKEL parsing and the robot model (no ROS, no DART).
* ``skel_ros.core`` (the robot core) and ``skel_ros.trajectory``: no ROS, no engine.
* ``skel_ros.sim`` (DART, MuJoCo), ``skel_ros.hardware`` (serial, CAN) and
  ``skel_ros.analysis``: no ROS.
* ``skel_ros.emulation``: emulated devices for each protocol, above the hardware.
* ``skel_ros.nodes`` and ``skel_ros.cli``: the ROS 2 nodes and the command line.

Importing this package imports none of them.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
