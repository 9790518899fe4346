"""Two runs on one machine never share a ROS domain (``skel_ros.nodes.sim_to_real``).

``ros_environment`` picks a domain where the caller set none. It was ``1 + pid % 101``:
two sim-to-real runs whose pids differ by a multiple of 101 met on one domain, and one
recorded the other's joints (seen here: an SO-101 run compared 10 joints). Each domain
now has a lock file, held by the process that claimed it until it ends.
"""

from __future__ import annotations

import subprocess
import sys

from skel_ros.nodes.sim_to_real import claim_domain, ros_environment

CHILD = """
import os, sys
os.getpid = lambda: 7  # every run starts from the same id: only the claims set them apart
from skel_ros.nodes.sim_to_real import ros_environment
print(ros_environment({})["ROS_DOMAIN_ID"], flush=True)
sys.stdin.readline()  # hold the claim until told
"""


def _child() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # type: ignore[union-attr]
    return proc, int(line)


def test_runs_alive_at_once_hold_different_domains() -> None:
    """Three runs whose pids give the same id (as 101 apart would) get three domains."""
    children = [_child() for _ in range(3)]
    try:
        domains = [d for _, d in children]
        assert len(set(domains)) == len(domains), domains
        assert all(1 <= d <= 101 for d in domains)
    finally:
        for proc, _ in children:
            proc.communicate("\n", timeout=30)


def test_a_process_keeps_its_domain_and_a_set_one_is_kept() -> None:
    assert claim_domain() == claim_domain()
    assert ros_environment({"ROS_DOMAIN_ID": "42"})["ROS_DOMAIN_ID"] == "42"


def test_a_domain_is_free_again_once_its_process_ended() -> None:
    proc, domain = _child()
    proc.communicate("\n", timeout=30)
    import fcntl
    import tempfile
    from pathlib import Path

    with (Path(tempfile.gettempdir()) / f"skel_ros-ros-domain-{domain}.lock").open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if still held
        fcntl.flock(f, fcntl.LOCK_UN)
