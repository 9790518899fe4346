"""``kill -USR1`` on a ``skel-ros`` command prints every thread's stack and lets it run on:
how a run that does not end is diagnosed (the tests that start ``skel-ros sim-to-real``
send it before they give up on one)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from typing import IO

# A command of the console script's main() that says when it runs, then waits.
_STUCK = textwrap.dedent("""
    import sys, threading, time
    import skel_ros.cli.main as cli

    def waits_for_nothing(args):
        print("running", flush=True)
        time.sleep(60)
        return 0

    class Parser:
        def parse_args(self, argv):
            return type("Args", (), {"func": staticmethod(waits_for_nothing)})()

    cli.build_parser = Parser
    sys.exit(cli.main())  # as the console script runs it: its arguments from sys.argv
""")


def _read_dump(stream: IO[str]) -> str:
    """The lines of ``stream`` up to the dump's outermost frame ("" at EOF)."""
    lines = []
    while line := stream.readline():
        lines.append(line)
        if "in <module>" in line:
            return "".join(lines)
    return ""


def test_sigusr1_prints_every_threads_stack_and_the_command_runs_on() -> None:
    process = subprocess.Popen([sys.executable, "-c", _STUCK], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        assert process.stdout.readline() == "running\n"
        process.send_signal(signal.SIGUSR1)
        dump = _read_dump(process.stderr)
        assert "in waits_for_nothing" in dump, dump
        assert "skel_ros/cli/main.py" in dump, dump
        assert process.poll() is None  # it runs on
    finally:
        process.kill()
        process.communicate()
