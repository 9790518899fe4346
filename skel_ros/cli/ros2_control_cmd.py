"""``skel-ros ros2-control``: the model's URDF with a topic-based ``<ros2_control>`` tag."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skel_ros.cli.model_args import add_model_arguments, load_model_from_args
from skel_ros.cli.paths import input_file, write_output

if TYPE_CHECKING:
    import argparse


def _cmd(args: argparse.Namespace) -> int:
    from skel_ros.nodes.names import NAMESPACE_FRAME_PREFIX, namespace_frame_prefix
    from skel_ros.nodes.robot_publisher import robot_description
    from skel_ros.ros2_control import ros2_control_urdf

    namespace = "/" + args.namespace.strip("/") if args.namespace.strip("/") else ""
    prefix = namespace_frame_prefix(
        NAMESPACE_FRAME_PREFIX if args.frame_prefix is None else args.frame_prefix, namespace)
    world = load_model_from_args(args.file, args)
    text = ros2_control_urdf(robot_description(world, prefix), world,
                             commands_topic=f"{namespace}/joint_commands",
                             states_topic=f"{namespace}/joint_states",
                             command_interface=args.interface)
    write_output(text, args.output)
    return 0


def register(sub: Any) -> None:  # noqa: ANN401 - argparse subparsers action (private type)
    """Add ``ros2-control``."""
    p = sub.add_parser(
        "ros2-control",
        help="URDF with a <ros2_control> tag: the robot node as topic_based_ros2_control hardware")
    p.add_argument("file", type=input_file, help="model file (path or package:// URI)")
    add_model_arguments(p)
    p.add_argument("--namespace", default="",
                   help="the robot node's namespace (its joint_commands / joint_states topics)")
    p.add_argument("--frame-prefix", default=None,
                   help="the node's frame_prefix (default: NAMESPACE/, as the launch files)")
    p.add_argument("--interface", choices=("position", "velocity", "effort"),
                   default="position", help="the command interface of every joint")
    p.add_argument("-o", "--output", help="output file (default: standard output)")
    p.set_defaults(func=_cmd)
