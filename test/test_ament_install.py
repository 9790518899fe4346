"""skel_ros as a ROS user gets it from ``colcon build``: the command on PATH, and every mesh
of every example's ``robot_description`` found through the ament index.

One ``colcon build`` (about 10 s) into a temporary workspace serves the module. Where colcon
is not installed, the test lays out the same install prefix itself, as colcon's ament_python
build does: ``setup.py install_data`` for the share files and the ament index marker
(``data_files``), ``setup.py install_scripts`` into ``lib/skel_ros``, and the package on
``PYTHONPATH``; that fallback cannot check colcon's PATH hook, so that test is then skipped.

The mesh URIs are resolved here without skel_ros: the first prefix on ``AMENT_PREFIX_PATH``
whose ``share/ament_index/resource_index/packages/<package>`` exists gives
``share/<package>``, as RViz's resource retriever does (through ament_index_cpp).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from lxml import etree

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Install:
    """An install of skel_ros: the prefix that holds it and the environment that uses it."""

    base: Path  # colcon's --install-base (holds local_setup.bash), or the prefix itself
    prefix: Path  # <prefix>/share/skel_ros, <prefix>/lib/skel_ros
    env: dict[str, str]  # AMENT_PREFIX_PATH and PYTHONPATH of the install, cwd-independent
    colcon: bool


def _colcon() -> str | None:
    beside_python = Path(sys.executable).parent / "colcon"
    return str(beside_python) if beside_python.is_file() else shutil.which("colcon")


def _site_packages(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    assert found, f"no site-packages under {prefix}"
    return found[0]


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Install:
    tmp = tmp_path_factory.mktemp("ws")
    env = dict(os.environ)
    env.pop("COLCON_DEFAULTS_FILE", None)
    env["COLCON_HOME"] = str(tmp / "colcon_home")
    # The ROS packages ament_python's build finds: the venv's (or a sourced distro's).
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in (sys.prefix, os.environ.get("AMENT_PREFIX_PATH", "")) if p)
    colcon = _colcon()
    if colcon is not None:
        base = tmp / "install"
        command = [colcon, "--log-base", str(tmp / "log"), "build", "--base-paths", str(REPO),
                   "--packages-select", "skel_ros", "--build-base", str(tmp / "build"),
                   "--install-base", str(base), "--event-handlers", "console_direct-"]
        result = subprocess.run(command, cwd=tmp, env=env, capture_output=True, text=True,
                                timeout=300, check=False)
        assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
        prefix = base / "skel_ros"
    else:
        base = prefix = tmp / "install"
        for step in (["install_data", "--install-dir", str(prefix)],
                     ["install_scripts", "--install-dir", str(prefix / "lib" / "skel_ros")]):
            result = subprocess.run([sys.executable, "setup.py", "-q", *step], cwd=REPO,
                                    env=env, capture_output=True, text=True, timeout=300,
                                    check=False)
            assert result.returncode == 0, result.stderr
        site = prefix / "lib" / "python3" / "site-packages"
        site.mkdir(parents=True)
        shutil.copytree(REPO / "skel_ros", site / "skel_ros",
                        ignore=shutil.ignore_patterns("__pycache__"))
    run_env = dict(os.environ)
    run_env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in (str(prefix), os.environ.get("AMENT_PREFIX_PATH", "")) if p)
    run_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(_site_packages(prefix)), os.environ.get("PYTHONPATH", "")) if p)
    return Install(base, prefix, run_env, colcon is not None)


def _share_of(package: str, env: dict[str, str]) -> Path | None:
    """The ament index's share directory of ``package`` (the first prefix that lists it)."""
    for prefix in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix and (Path(prefix) / "share/ament_index/resource_index/packages"
                       / package).is_file():
            return Path(prefix) / "share" / package
    return None


_DESCRIPTIONS = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import skel_ros
    from skel_ros.model import load_model
    from skel_ros.nodes.robot_publisher import robot_description
    from skel_ros.resources import share_dirs
    examples = sorted((share_dirs()[0] / "examples").glob("*.skel"))
    out = {"skel_ros": skel_ros.__file__, "examples": {}}
    for path in examples:
        world = load_model(path)
        out["examples"][path.name] = [robot_description(world, prefix)
                                      for prefix in ("", "robot1/")]
    json.dump(out, sys.stdout)
""")


def test_every_example_mesh_resolves_through_the_ament_index(install: Install,
                                                             tmp_path: Path) -> None:
    """What the nodes publish as ``robot_description`` (RobotPublisher's document), from the
    installed package, for every bundled example: only package:// mesh URIs, each a file."""
    env = dict(install.env, XDG_CACHE_HOME=str(tmp_path / "cache"))
    result = subprocess.run([sys.executable, "-c", _DESCRIPTIONS], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert Path(out["skel_ros"]).is_relative_to(install.prefix)  # the installed code ran
    examples = out["examples"]
    assert set(examples) == {p.name for p in (REPO / "examples").glob("*.skel")}
    resolved = 0
    shipped_used = set()
    for name, documents in examples.items():
        for document in documents:
            root = etree.fromstring(document.encode())
            uris = [m.get("filename") for m in root.iter("mesh")]
            for uri in uris:
                assert uri.startswith("package://"), f"{name}: {uri}"
                package, _, rel = uri[len("package://"):].partition("/")
                share = _share_of(package, install.env)
                assert share is not None, f"{name}: {package} is not in the ament index"
                path = share / rel
                assert path.is_file(), f"{name}: {uri} -> {path} missing"
                assert path.stat().st_size > 84, f"{name}: {uri} is no mesh"  # binary STL
                resolved += 1
                if uri.startswith("package://skel_ros/examples/meshes/"):
                    shipped_used.add(Path(rel).name)
    assert resolved >= 4  # the arm's capsule and ellipsoid, the quadruped's capsules
    # No stale shipped mesh (docs/packaging.md says how to write them again).
    assert shipped_used == {p.name for p in (REPO / "examples" / "meshes").iterdir()}


def test_skel_ros_is_on_path_after_sourcing(install: Install, tmp_path: Path) -> None:
    """``source install/local_setup.bash`` puts ``skel-ros`` on PATH; it takes package://."""
    if not install.colcon:
        pytest.skip("colcon is not installed: no environment hooks to source")
    script = (f"source {install.base / 'local_setup.bash'} && command -v skel-ros && "
              "skel-ros validate package://skel_ros/examples/arm.skel")
    env = {k: v for k, v in install.env.items() if k not in ("PYTHONPATH", "AMENT_PREFIX_PATH")}
    env["PATH"] = os.pathsep.join(["/usr/bin", "/bin"])  # not the venv: skel-ros is there too
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    where, report = result.stdout.splitlines()[:2]
    assert Path(where) == install.prefix / "bin" / "skel-ros"
    assert report.startswith(str(install.prefix / "share" / "skel_ros" / "examples" / "arm.skel"))
    assert report.endswith("0 warning(s))")
    # ros2 run still finds it (and the nodes) in lib/skel_ros.
    assert (install.prefix / "lib" / "skel_ros" / "skel-ros").is_file()
