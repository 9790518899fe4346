"""Subcommands of the other layers (simulation, hardware, workflow, interchange).

Each module listed in ``COMMAND_MODULES`` has a ``register(sub)`` function adding its
argument parsers; it must import its implementation (dartpy, rclpy, python-can ...) only
inside the command's function, so ``skel-ros inspect`` stays fast and works where those
are not installed.
"""

from __future__ import annotations

import importlib
from typing import Any

COMMAND_MODULES = (
    "skel_ros.cli.demo_cmd",  # demo
    "skel_ros.cli.sim_cmd",  # simulate
    "skel_ros.cli.hardware_cmd",  # scan, emulate
    "skel_ros.cli.workflow_cmd",  # play
    "skel_ros.cli.compare_cmd",  # compare, sim-to-real
    "skel_ros.cli.sweep_cmd",  # sweep (many sim-to-real trials, local pool or Ray)
    "skel_ros.cli.interchange_cmd",  # convert (Phobos, CASPR, SKEL writer)
    "skel_ros.cli.init_hardware_cmd",  # init-hardware (a hardware YAML for any model)
    "skel_ros.cli.calibration_cmd",  # export-calibration (LeRobot calibration files)
    "skel_ros.cli.identify_cmd",  # excite, identify (fit joint parameters to recordings)
    "skel_ros.cli.ros2_control_cmd",  # ros2-control (a topic-based <ros2_control> tag)
    "skel_ros.cli.view_cmd",  # view (a model, a recording, the live robots in a browser)
)


def register(sub: Any) -> None:  # noqa: ANN401 - argparse subparsers action (private type)
    """Add every layer's subcommands to the ``skel-ros`` parser."""
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
