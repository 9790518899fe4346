"""Import layering: the model is ROS-free and DART-free; the robot core is ROS-, engine- and bus-free.

Each check runs in a fresh interpreter with the forbidden packages blocked in
``sys.modules`` (set to None, so any ``import`` of them raises ImportError),
then imports every module of the package under test.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROS = ["rclpy", "sensor_msgs", "geometry_msgs", "tf2_msgs", "std_msgs", "trajectory_msgs",
       "visualization_msgs", "rosgraph_msgs", "diagnostic_msgs", "std_srvs", "builtin_interfaces", "control_msgs"]

CHECK = """
import importlib, pkgutil, sys
for name in {blocked!r}:
    sys.modules[name] = None
import {package} as pkg
names = [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
for name in names:
    importlib.import_module(name)
leaked = sorted(n for n in {blocked!r} if sys.modules.get(n) is not None)
print(len(names), "modules", "leaked:", leaked)
assert not leaked
"""


def _run(package: str, blocked: list[str]) -> subprocess.CompletedProcess[str]:
    code = CHECK.format(package=package, blocked=blocked)
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize(
    ("package", "blocked"),
    [
        ("skel_ros.model", ROS + ["dartpy", "mujoco"]),
        # The robot core knows backends only through RobotBackend: no engine, no bus.
        ("skel_ros.core", ROS + ["dartpy", "skel_ros.sim", "skel_ros.hardware",
                                 "skel_ros.nodes", "serial", "can"]),
        ("skel_ros.hardware", ROS + ["dartpy", "skel_ros.sim"]),
        # dartpy is imported when a DART world is built (mujoco alone runs the other engine).
        ("skel_ros.sim", ROS + ["skel_ros.hardware", "dartpy", "mujoco"]),
        ("skel_ros.trajectory", ROS + ["dartpy"]),
    ],
)
def test_core_imports_without_forbidden_packages(package: str, blocked: list[str]) -> None:
    if not (REPO / package.replace(".", "/") / "__init__.py").exists():
        pytest.skip(f"{package} does not exist yet")
    result = _run(package, blocked)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "modules" in result.stdout


def test_blocking_works() -> None:
    """The check can fail: a module importing a blocked package is caught."""
    result = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['numpy'] = None; import skel_ros.model"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode != 0
    assert "numpy" in result.stderr


def _private_imports(root: Path) -> list[str]:
    """``from skel_ros.x import _name`` across modules (a package's ``__init__`` may take
    the private names of its own submodules: it is their public face)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        package = ".".join(path.relative_to(root.parent).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.module
                    and node.module.startswith("skel_ros")):
                continue
            own = path.name == "__init__.py" and node.module.startswith(package + ".")
            found += [f"{path.relative_to(root.parent)}:{node.lineno} {node.module}.{a.name}"
                      for a in node.names if a.name.startswith("_") and not own]
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    """A helper two modules share has one public home; nobody reaches into a private one."""
    assert _private_imports(REPO / "skel_ros") == []


def test_private_import_check_can_fail(tmp_path: Path) -> None:
    pkg = tmp_path / "skel_ros"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "__init__.py").write_text("from skel_ros.a.m import _ok\n")
    (pkg / "b.py").write_text("from skel_ros.a.m import _helper as helper\n")
    assert _private_imports(pkg) == ["skel_ros/b.py:1 skel_ros.a.m._helper"]
