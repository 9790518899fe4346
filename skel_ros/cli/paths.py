"""Input-file arguments of ``skel-ros``: paths, ``package://`` and ``file://`` URIs.

The nodes take ``package://<package>/<path>`` for every file parameter; the
command line takes the same, through :func:`input_file` as the argparse ``type``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skel_ros.resources import resolve

__all__ = ["input_file"]


def input_file(text: str) -> str:
    """An input-file argument as a path: URIs resolved (:func:`skel_ros.resources.resolve`).

    Plain paths are returned as given (a missing file is reported by the command that
    reads it, with its own context).

    Raises:
        argparse.ArgumentTypeError: A URI that resolves to no file (argparse prints it as
            ``argument FILE: ...`` and exits with status 2).
    """
    if not text.startswith(("package://", "file://")):
        return text
    try:
        return str(resolve(text))
    except FileNotFoundError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def write_output(text: str, output: str | None) -> None:
    """Write a command's document to ``output`` (saying so on stderr), or to stdout."""
    if output:
        Path(output).write_text(text, encoding="utf-8")
        print(f"wrote {output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
