"""Every node module runs its ``main`` when started with ``python -m`` (as its console script).

Each is started with a parameter it must refuse, so it ends at once: what is checked is
that ``main`` ran (the node's own error, exit status 1), not that the module was merely
imported (no output, status 0).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.ros


@pytest.mark.parametrize(("module", "params", "words"), [
    ("sim_node", ["skel_file:=/nonexistent.skel"], "cannot load skel_file"),
    ("hardware_node", [], "hardware_config is required"),
    ("trajectory_player", [], "trajectory_file is required"),
])
def test_python_m_runs_the_node(ros_env: dict[str, str], module: str, params: list[str],
                                words: str) -> None:
    args = [arg for p in params for arg in ("-p", p)]
    done = subprocess.run([sys.executable, "-m", f"skel_ros.nodes.{module}", "--ros-args",
                           *args], env=ros_env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert words in done.stderr + done.stdout
    assert done.returncode != 0
