"""Children that end with their parent (``skel_ros.child_process``), and the sim-to-real run's
nodes, which use it: a run killed outright must not leave its nodes publishing on a ROS
domain the next run may take."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="PR_SET_PDEATHSIG is Linux's")

PARENT = {
    "bare": """
import signal, subprocess, sys, time
from skel_ros.child_process import ending_with_parent
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                         start_new_session=True, preexec_fn=ending_with_parent(signal.SIGTERM))
print(child.pid, flush=True)
time.sleep(60)
""",
    "sim_to_real": """
import sys, tempfile, time
from pathlib import Path
from skel_ros.nodes.sim_to_real import _Processes
procs = _Processes(Path(tempfile.mkdtemp()), {})
child = procs.start("sim", [sys.executable, "-c", "import time; time.sleep(60)"])
print(child.pid, flush=True)
time.sleep(60)
""",
}


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
        return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("parent", sorted(PARENT))
def test_a_child_ends_when_its_parent_is_killed(parent: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", PARENT[parent]], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    child = 0
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        assert _alive(child)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        end = time.monotonic() + 30.0
        while _alive(child) and time.monotonic() < end:
            time.sleep(0.05)
        assert not _alive(child), "the child outlived its killed parent"
    finally:
        proc.kill()
        proc.wait()
        if child and _alive(child):
            os.kill(child, signal.SIGKILL)
