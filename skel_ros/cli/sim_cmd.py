"""Subcommands of the sim layer: ``skel-ros simulate``.

dartpy (or mujoco, with ``--engine mujoco``) is imported only when the command runs
(``skel_ros.sim.cli``), so the other subcommands work where neither is installed.
"""

from __future__ import annotations

import argparse
from typing import Any

from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file


def _steps(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _cmd_simulate(args: argparse.Namespace) -> int:
    from skel_ros.model.urdf_reader import parse_xacro_args
    from skel_ros.sim.cli import simulate

    return simulate(args.file, args.steps, args.json, enforce_limits=not args.no_limits,
                    engine_name=args.engine, xacro_args=parse_xacro_args(args.xacro_args),
                    fixed_base=args.fixed_base)


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's subparsers action is private
    """Add this layer's subcommands to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "simulate",
        help="step a model in DART (or MuJoCo) with zero commands; print every DOF's state",
        description="Build the DART world of FILE (from the parsed model, through DART's "
        "API; with --engine mujoco, MuJoCo's model of its MJCF export), take N steps with "
        "zero commands and print every DOF's position and "
        "velocity. Joint limits are enforced unless --no-limits is given (DART's own "
        "SkelParser world never enforces them).",
    )
    p.add_argument("file", metavar="FILE", type=input_file,
                   help="the model (SKEL, URDF/xacro, SMURF, CASPR, Phobos)")
    add_model_arguments(p)
    p.add_argument("--steps", type=_steps, default=100, metavar="N",
                   help="number of world steps (default: 100)")
    p.add_argument("--json", action="store_true",
                   help="print JSON in the layout of the corpus fixtures' after_steps")
    p.add_argument("--no-limits", action="store_true",
                   help="do not enforce joint position limits (as DART's SkelParser world)")
    p.add_argument("--engine", choices=("dart", "mujoco"), default="dart",
                   help="the engine that steps the world (default: dart; mujoco steps the "
                        "model's MJCF export)")
    p.set_defaults(func=_cmd_simulate)
