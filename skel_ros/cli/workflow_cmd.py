"""Subcommands of the workflow layer: ``skel-ros play``."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0.0):
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def _cmd_play(args: argparse.Namespace) -> int:
    if not args.print:
        return _play_to_ros(args)
    from skel_ros.model import SkelError
    from skel_ros.model.urdf_reader import parse_xacro_args
    from skel_ros.resources import resolve
    from skel_ros.trajectory import (
        TrajectoryError,
        check_limits,
        load_trajectory,
        load_trajectory_model,
    )

    try:
        model = load_trajectory_model(resolve(args.skel),
                                      xacro_args=parse_xacro_args(args.xacro_args),
                                      fixed_base=args.fixed_base)
        trajectory = load_trajectory(resolve(args.file), model.q_columns,
                                     resolve(args.mapping) if args.mapping else None,
                                     trajectory_id=args.trajectory_id,
                                     on_note=_note if args.verbose else None)
        trajectory = check_limits(trajectory, model.limits)
    except (SkelError, TrajectoryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("# t " + " ".join(trajectory.joint_names))
    count = math.floor(trajectory.duration * args.rate + 1e-9)
    times = [k / args.rate for k in range(count + 1)]
    if times[-1] < trajectory.duration:
        times.append(trajectory.duration)
    for t in times:
        positions, _, _ = trajectory.sample(t)
        print(f"{t:.4f} " + " ".join(f"{x:.6f}" for x in positions))
    return 0


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def _play_to_ros(args: argparse.Namespace) -> int:
    from skel_ros.nodes.trajectory_player import main

    ros_args = ["--ros-args", "-p", f"trajectory_file:={args.file}", "-p",
                f"skel_file:={args.skel}", "-p", f"mode:={args.mode}", "-p",
                f"rate:={float(args.rate)}", "-p", f"loop:={'true' if args.loop else 'false'}"]
    if args.xacro_args:
        ros_args += ["-p", f"model_args:={' '.join(args.xacro_args)}"]
    if args.fixed_base:
        ros_args += ["-p", "fixed_base:=true"]
    if args.mapping:
        ros_args += ["-p", f"mapping_file:={args.mapping}"]
    if args.trajectory_id:
        ros_args += ["-p", f"trajectory_id:={args.trajectory_id}"]
    try:
        main([sys.argv[0], *ros_args])
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's subparsers action is private
    """Add this layer's subcommands to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "play",
        help="play a CASPR trajectories.xml or trajectory YAML (to ROS, or --print it)",
        description="Load FILE (CASPR trajectories.xml or trajectory_msgs-style YAML), map it "
        "onto the DOFs of the model (CASPR q columns: in CASPR's q order for a CASPR "
        "bodies.xml, the model's DOF order otherwise, or --mapping), refuse it if it leaves "
        "the joint limits, then "
        "either print sampled positions (--print, no ROS needed) or run the "
        "trajectory_player node to publish it.",
    )
    p.add_argument("file", metavar="FILE", type=input_file, help="trajectory file")
    p.add_argument("--skel", required=True, metavar="MODEL", type=input_file,
                   help="the robot's model, any format (SKEL, URDF/xacro, SMURF, CASPR"
                   " bodies.xml, Phobos YAML/JSON): DOF names and limits")
    add_model_arguments(p, positional=False)
    p.add_argument("--mapping", metavar="M", type=input_file,
                   help="YAML mapping CASPR q columns to DOF names")
    p.add_argument("--trajectory-id", metavar="ID",
                   help="which CASPR joint trajectory of the file (default: the first)")
    p.add_argument("--print", action="store_true",
                   help="print 't positions...' lines at --rate Hz instead of playing to ROS")
    p.add_argument("--rate", type=_positive, default=None, metavar="HZ",
                   help="sample rate: --print lines (default 10) or streamed commands"
                   " (default 50)")
    p.add_argument("--mode", choices=("trajectory", "stream"), default="trajectory",
                   help="ROS: one JointTrajectory, or JointState commands at --rate Hz")
    p.add_argument("--loop", action="store_true", help="ROS: play again until stopped")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="--print: also say what the trajectory file holds that is ignored"
                   " (a CASPR <description>)")
    p.set_defaults(func=_cmd_play_defaults)


def _cmd_play_defaults(args: argparse.Namespace) -> int:
    if args.rate is None:
        args.rate = 10.0 if args.print else 50.0
    return _cmd_play(args)
