"""The model options every ``skel-ros`` command that reads a model takes.

``name:=value`` words right after the model file are xacro arguments (as ``xacro``
and ``ros2 launch`` write them): ``skel-ros convert robot.urdf.xacro arm:=ur5 -o
robot.skel``; ``--fixed-base`` welds a URDF's root link to the world instead of
giving it a floating joint (:mod:`skel_ros.model.urdf_reader`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from skel_ros.model.types import World


def add_model_arguments(parser: argparse.ArgumentParser, *, positional: bool = True) -> None:
    """Add ``NAME:=VALUE`` (positional, after the file) and ``--fixed-base``.

    ``positional`` False (the model is an option's value, e.g. ``--skel``): the xacro
    arguments are one option, ``--model-args "NAME:=VALUE ..."``, as the launch files'
    ``model_args``.
    """
    if positional:
        parser.add_argument("xacro_args", nargs="*", metavar="NAME:=VALUE", default=[],
                            help="xacro arguments of a .xacro model (right after the file)")
    else:
        parser.add_argument("--model-args", dest="xacro_args", metavar='"NAME:=VALUE ..."',
                            type=_xacro_words, default=[],
                            help="xacro arguments of a .xacro model, in one word")
    parser.add_argument("--fixed-base", action="store_true",
                        help="URDF/SMURF: weld the root link to the world (default: a"
                             " floating joint, unless the root link is 'world')")


def load_model_from_args(path: str, args: Any) -> World:  # noqa: ANN401 - argparse Namespace
    """``load_model`` with the xacro arguments and ``--fixed-base`` of ``args``."""
    from skel_ros.model import load_model  # commands import lazily
    from skel_ros.model.urdf_reader import parse_xacro_args

    xacro_args = parse_xacro_args(getattr(args, "xacro_args", None) or [])
    return load_model(path, xacro_args=xacro_args or None,
                      fixed_base=bool(getattr(args, "fixed_base", False)))


def _xacro_words(text: str) -> list[str]:
    """``--model-args``'s value: its words, each checked to be ``NAME:=VALUE``."""
    import argparse

    from skel_ros.model.urdf_reader import parse_xacro_args

    words = text.split()
    try:
        parse_xacro_args(words)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return words
