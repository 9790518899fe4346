"""With mujoco and no dartpy, everything but the DART engine works.

Each test runs a child Python whose import system refuses ``dartpy`` (a meta-path finder
raising ImportError for it and its submodules, as on a machine where it is not
installed): ``skel-ros simulate --engine mujoco`` and the simulation node with
``engine:=mujoco`` run; the DART engine says which extra to install.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mujoco")

REPO = Path(__file__).resolve().parents[2]

BLOCK_DARTPY = """
import importlib.abc, sys

class NoDartpy(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "dartpy" or name.startswith("dartpy."):
            raise ImportError(f"No module named {name!r} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, NoDartpy())
for loaded in [n for n in sys.modules if n == "dartpy" or n.startswith("dartpy.")]:
    del sys.modules[loaded]
"""

CLI = BLOCK_DARTPY + """
import contextlib, io
from skel_ros.cli.main import main

out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["simulate", "examples/arm.skel", "--engine", "mujoco", "--steps", "200"]) == 0
assert "200 steps in mujoco, t = 0.200000 s" in out.getvalue(), out.getvalue()
err = io.StringIO()
with contextlib.redirect_stderr(err):
    assert main(["simulate", "examples/arm.skel", "--steps", "10"]) == 1
assert "engine 'dart' needs dartpy: pip install 'skel_ros[sim]'" in err.getvalue(), err.getvalue()
assert "dartpy" not in sys.modules
print("ok")
"""

NODE = BLOCK_DARTPY + """
import rclpy
from rclpy.parameter import Parameter
from skel_ros.nodes.errors import NodeSetupError
from skel_ros.nodes.sim_node import SimNode

context = rclpy.Context()
rclpy.init(context=context)
node = SimNode(context=context, start=False, parameter_overrides=[
    Parameter("engine", value="mujoco")])
assert node.run_steps(300) == 300
assert abs(node.engine.time - 0.3) < 1e-9
q = node.engine.positions()
assert abs(q[node.engine.dof_names.index("elbow")] - 0.3) < 0.01, q  # held at its init_pos
node.destroy_node()
try:
    SimNode(context=context, start=False)
except NodeSetupError as exc:
    assert "engine 'dart' needs dartpy" in str(exc), exc
else:
    raise AssertionError("the DART engine started without dartpy")
rclpy.try_shutdown(context=context)
assert "dartpy" not in sys.modules
print("ok")
"""


def _run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                          text=True, timeout=180, check=False, env=env)


def test_the_blocker_hides_dartpy() -> None:
    """The check can fail: with the blocker, importing dartpy fails."""
    result = _run(BLOCK_DARTPY + "import dartpy\n")
    assert result.returncode != 0
    assert "hidden by the test" in result.stderr


def test_simulate_runs_in_mujoco_without_dartpy() -> None:
    result = _run(CLI)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"


@pytest.mark.ros
def test_the_sim_node_runs_in_mujoco_without_dartpy(ros_env: dict[str, str]) -> None:
    result = _run(NODE, env=ros_env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
