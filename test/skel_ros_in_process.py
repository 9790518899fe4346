"""``skel-ros``'s ``main(argv)`` run in the test process, with what a process would give.

For the tests that check a command's answer to bad input: a new interpreter costs about a
second (importing Python, rclpy, the engines), and ``main(argv)`` is what the console
script calls. Each test file that uses this keeps at least one case that runs the real
console script, for its exit status and output as a user sees them.
"""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest


def skel_ros_main(capsys: pytest.CaptureFixture[str],
                  *args: str) -> subprocess.CompletedProcess[str]:
    """``skel-ros ARGS`` in this process: its exit status, stdout and stderr."""
    from skel_ros.cli.main import main

    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors; sys.exit(message)
        if isinstance(exc.code, str):  # what the interpreter does with it: say it, status 1
            print(exc.code, file=sys.stderr)  # noqa: T201
            code = 1
        else:
            code = int(exc.code or 0)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["skel-ros", *args], code, out.out, out.err)
