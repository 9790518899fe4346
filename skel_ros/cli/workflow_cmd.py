"""Subcommands of the workflow layer: ``skel-ros play``."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

from skel_ros.cli.exit_codes import ERROR, USAGE
from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    from skel_ros.trajectory import PointTrajectory


def _rate(text: str) -> float:
    """A ``--rate`` in (0, MAX_PLAY_RATE] Hz, the trajectory_player node's own range."""
    from skel_ros.trajectory import MAX_PLAY_RATE

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and 0.0 < value <= MAX_PLAY_RATE):
        raise argparse.ArgumentTypeError(f"must be in (0, {MAX_PLAY_RATE:g}] Hz, got {text}")
    return value


def _count(text: str) -> int:
    """``--subscribers``: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return value


def _seconds(text: str) -> float:
    """``--wait``: a finite number of seconds >= 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value >= 0.0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return value


def _load(args: argparse.Namespace) -> PointTrajectory | None:
    """The trajectory mapped onto the model and checked against its limits.

    None after printing ``error: file:line: ...`` (exit status 1).
    """
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
        trajectory = load_trajectory(resolve(args.file), model,
                                     resolve(args.mapping) if args.mapping else None,
                                     trajectory_id=args.trajectory_id,
                                     on_note=_note if args.verbose else None)
        return check_limits(trajectory, model.limits)
    except (SkelError, TrajectoryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _cmd_play(args: argparse.Namespace) -> int:
    # Checked here, as --print does, so that a bad file is one "error:" line and status 1
    # whether or not it is played to ROS (the node's status 2 is for its parameters).
    trajectory = _load(args)
    if trajectory is None:
        return ERROR
    if not args.print:
        return _play_to_ros(args)
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


def _yaml_string(text: str) -> str:
    """``text`` as a YAML string, quoted.

    ROS reads each ``-p name:=value`` value as YAML, where ``1``, ``true`` or ``null``
    would be a number, a bool or nothing.
    """
    return "'" + text.replace("'", "''") + "'"


def _play_to_ros(args: argparse.Namespace) -> int:
    from skel_ros.nodes.trajectory_player import main

    strings = {"trajectory_file": args.file, "skel_file": args.skel,
               "mode": args.mode or "trajectory"}
    if args.xacro_args:
        strings["model_args"] = " ".join(args.xacro_args)
    if args.mapping:
        strings["mapping_file"] = args.mapping
    if args.trajectory_id:
        strings["trajectory_id"] = args.trajectory_id
    ros_args = ["--ros-args"]
    for name, value in strings.items():
        ros_args += ["-p", f"{name}:={_yaml_string(value)}"]
    ros_args += ["-p", f"rate:={float(args.rate)}", "-p",
                 f"loop:={'true' if args.loop else 'false'}"]
    if args.fixed_base:
        ros_args += ["-p", "fixed_base:=true"]
    if args.subscribers is not None:
        ros_args += ["-p", f"subscribers:={args.subscribers}"]
    if args.wait is not None:
        ros_args += ["-p", f"wait_for_subscribers:={args.wait}"]
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
        "onto the DOFs of the model (CASPR q columns: --mapping, else CASPR's q order for a "
        "CASPR bodies.xml, else the MODEL.q_mapping.yaml beside the model that convert "
        "writes, else the model's DOF order; refused on a model with a planar zx or euler "
        "zyx joint and no mapping, whose column order cannot be told), refuse it if it "
        "leaves the joint limits, then "
        "either print sampled positions (--print, no ROS needed) or run the "
        "trajectory_player node to publish it.",
    )
    p.add_argument("file", metavar="FILE", type=input_file, help="trajectory file")
    p.add_argument("--skel", required=True, metavar="MODEL", type=input_file,
                   help="the robot's model, any format (SKEL, URDF/xacro, SMURF, CASPR"
                   " bodies.xml, Phobos YAML/JSON): DOF names and limits")
    add_model_arguments(p, positional=False)
    p.add_argument("--mapping", metavar="M", type=input_file,
                   help="YAML mapping CASPR q columns to DOF names (default: MODEL.q_mapping"
                   ".yaml when it exists, as convert writes it)")
    p.add_argument("--trajectory-id", metavar="ID",
                   help="which CASPR joint trajectory of the file (default: the first)")
    p.add_argument("--print", action="store_true",
                   help="print 't positions...' lines at --rate Hz instead of playing to ROS")
    p.add_argument("--rate", type=_rate, default=None, metavar="HZ",
                   help="sample rate in Hz, up to the trajectory_player's maximum: --print"
                   " lines (default 10) or streamed commands (default 50)")
    p.add_argument("--mode", choices=("trajectory", "stream"), default=None,
                   help="ROS only (not with --print): one JointTrajectory (default), or"
                   " JointState commands at --rate Hz")
    p.add_argument("--loop", action="store_true",
                   help="ROS only (not with --print): play again until stopped")
    p.add_argument("--subscribers", type=_count, metavar="N",
                   help="ROS only: play once N subscribers are matched, every robot (and"
                   " recorder) the commands are for (default 1)")
    p.add_argument("--wait", type=_seconds, metavar="S",
                   help="ROS only: seconds to wait for them (default 5); not all there by"
                   " then: nothing is played, status 2")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also say what the trajectory file holds that is ignored"
                   " (a CASPR <description>)")
    p.set_defaults(func=_cmd_play_defaults, usage=p.format_usage)


def _cmd_play_defaults(args: argparse.Namespace) -> int:
    ros_only = {"--mode": args.mode is not None, "--loop": args.loop,
                "--subscribers": args.subscribers is not None, "--wait": args.wait is not None}
    if args.print and any(ros_only.values()):
        given = next(name for name, set_ in ros_only.items() if set_)
        print(f"{args.usage().rstrip()}\nskel-ros play: error: argument {given}: not allowed"
              " with --print (it applies to playing to ROS)", file=sys.stderr)
        return USAGE
    if args.rate is None:
        args.rate = 10.0 if args.print else 50.0
    return _cmd_play(args)
