"""``skel-ros demo``: the bundled example end to end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse


def _cmd_demo(args: argparse.Namespace) -> int:
    from skel_ros.cli.demo import run_demo

    return run_demo(args)


def register(sub: Any) -> None:  # noqa: ANN401 - argparse subparsers action (private type)
    """Add ``demo`` to the ``skel-ros`` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run the bundled example end to end and say where the results are"
    )
    p.add_argument("--out", default="out/demo", help="output directory (default: out/demo)")
    p.set_defaults(func=_cmd_demo)
