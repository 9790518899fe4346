"""A node process that a native library aborts prints every thread's Python stack first.

On 2026-11-30 one full run of the suite saw ``sim_node`` end with status -6 and only
"terminate called without an active exception" (a C++ thread destroyed while joinable)
when stopped right after it started; thirty reruns under load did not repeat it. A node
now enables :mod:`faulthandler` (``skel_ros.nodes.shutdown.run_node``), so the next such
exit shows where each thread was. Planted: no ``faulthandler.enable``: the abort prints
nothing of Python.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from polling import wait_for_line

pytestmark = [pytest.mark.ros, pytest.mark.timeout(180)]

ARM = Path(__file__).resolve().parents[2] / "examples" / "arm.skel"


def test_an_aborted_node_prints_its_threads_stacks(ros_env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "from skel_ros.nodes.sim_node import main; main()",
         "--ros-args", "-p", f"skel_file:={ARM}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ros_env)
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        wait_for_line(proc.stdout, "simulating", lines)
        proc.send_signal(signal.SIGABRT)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    output = "".join(lines) + rest
    assert proc.returncode == -signal.SIGABRT, output
    assert "Fatal Python error: Aborted" in output, output
    assert "most recent call first" in output, output
