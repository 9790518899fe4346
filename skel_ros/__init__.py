"""skel_ros: DART SKEL robot models in ROS 2.

Layers, each importing only those before it:

* ``skel_ros.model``: SKEL parsing and the robot model (no ROS, no DART).
* ``skel_ros.sim`` (DART) and ``skel_ros.hardware`` (serial, CAN): no ROS.
* ``skel_ros.nodes`` and ``skel_ros.cli``: the ROS 2 nodes and the command line.

Importing this package imports none of them.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
