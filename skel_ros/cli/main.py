"""Entry point of the ``skel-ros`` console script.

Subcommands import what they need only when run, so ``skel-ros validate`` works
on a machine without DART or ROS.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import signal
import sys
from typing import TYPE_CHECKING

from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file, write_output
from skel_ros.model.errors import SkelError

if TYPE_CHECKING:
    from collections.abc import Sequence


def _cmd_inspect(args: argparse.Namespace) -> int:
    from skel_ros.cli.model_args import load_model_from_args

    world = load_model_from_args(args.file, args)
    if args.json:
        from skel_ros.model.report import world_to_dict

        print(json.dumps(world_to_dict(world), indent=1))
    else:
        from skel_ros.cli.inspect_cmd import render

        print(render(world))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from skel_ros.cli.model_args import load_model_from_args

    status = 0
    # NAME:=VALUE words among the files are xacro arguments for every .xacro file, as are
    # those of --model-args.
    args.xacro_args = [*(args.xacro_args or []), *(f for f in args.files if ":=" in f)]
    for file in (f for f in args.files if ":=" not in f):
        try:
            world = load_model_from_args(file, args)
        except SkelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 1
            continue
        for warning in world.warnings:
            print(str(warning), file=sys.stderr)
        if args.strict and world.warnings:
            status = 1
        dofs = sum(s.num_dofs for s in world.skeletons)
        print(f"{file}: OK ({len(world.skeletons)} skeleton(s), {dofs} DOFs, "
              f"{len(world.warnings)} warning(s))")
    return status


def _cmd_urdf(args: argparse.Namespace) -> int:
    from skel_ros.cli.model_args import load_model_from_args
    from skel_ros.mesh_uris import generated_mesh_dirs, portable_mesh_uris
    from skel_ros.model.urdf import world_to_urdf

    world = load_model_from_args(args.file, args)
    text = world_to_urdf(world, mesh_dir=args.mesh_dir,
                         **({"skeleton": args.skeleton} if args.skeleton else {}))
    if not args.file_uris:
        text = portable_mesh_uris(text, generated_mesh_dirs(world.source), args.mesh_dir)
    write_output(text, args.output)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``skel-ros``."""
    parser = argparse.ArgumentParser(
        prog="skel-ros",
        description="DART SKEL robot models for ROS 2: inspect, validate, convert, simulate.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("inspect", help="show skeletons, bodies, joints, DOF limits, warnings")
    p.add_argument("file", type=input_file,
                   help="model file: SKEL, URDF/xacro, SMURF, Phobos, CASPR (path or"
                        " package:// URI)")
    p.add_argument("--json", action="store_true",
                   help="print the model as JSON in the layout of DART's corpus fixtures")
    add_model_arguments(p)
    p.set_defaults(func=_cmd_inspect)

    p = sub.add_parser("validate",
                       help="check model files (SKEL, URDF/xacro, SMURF, Phobos, CASPR);"
                            " exit 1 on any error")
    p.add_argument("files", nargs="+", metavar="FILE", type=input_file,
                   help="model files, any format; NAME:=VALUE words are xacro arguments")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    add_model_arguments(p, positional=False)
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("urdf", help="export URDF (for RViz / robot_state_publisher)")
    p.add_argument("file", type=input_file,
                   help="model file: SKEL, URDF/xacro, SMURF, Phobos, CASPR (path or"
                        " package:// URI)")
    add_model_arguments(p)
    p.add_argument("-o", "--output", help="output file (default: standard output)")
    p.add_argument("--skeleton", help="export only this skeleton (default: all, under 'world')")
    p.add_argument("--mesh-dir", metavar="DIR",
                   help="write the generated meshes (ellipsoids, capsules, ...) here (default:"
                        " the user cache); MODEL_DIR/meshes ships them with the model")
    p.add_argument("--file-uris", action="store_true",
                   help="name every mesh by its file:// URI (default: package:// where the"
                        " ament index resolves it to the same file)")
    p.set_defaults(func=_cmd_urdf)

    from skel_ros.cli import extra_commands

    extra_commands.register(sub)
    return parser


def dump_stacks_on_sigusr1() -> None:
    """``kill -USR1 PID`` prints the stack of every thread of this process to stderr.

    For a command that seems stuck (a run that does not end): what each thread waits
    for, without stopping it. Where the platform has no SIGUSR1, or stderr is no file
    (nowhere to write), nothing.
    """
    if hasattr(signal, "SIGUSR1"):
        with contextlib.suppress(AttributeError, OSError, ValueError):  # no file behind it
            faulthandler.register(signal.SIGUSR1, all_threads=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``skel-ros``; returns the exit status.

    Run as the program (``argv`` None: its own process, the console script), it also
    dumps its threads' stacks on SIGUSR1 (:func:`dump_stacks_on_sigusr1`); called with
    arguments from other Python code, it installs no signal handler in that process.
    """
    if argv is None:
        dump_stacks_on_sigusr1()
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except SkelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
