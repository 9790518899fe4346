"""skel_ros is a well-formed ROS 2 ament_python package that colcon can build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import skel_ros

REPO_ROOT = Path(__file__).resolve().parent.parent
CONSOLE_SCRIPTS = ("skel-ros", "sim_node", "hardware_node", "trajectory_player")

REQUIRED_EXEC_DEPENDS = {
    "rclpy",
    "sensor_msgs",
    "geometry_msgs",
    "tf2_msgs",
    "control_msgs",
    "std_msgs",
    "trajectory_msgs",
    "visualization_msgs",
    "rosgraph_msgs",
    "diagnostic_msgs",
    "std_srvs",
    "launch",
    "launch_ros",
    "python3-lxml",
    "python3-numpy",
    "python3-serial",
    "python3-can",
    "canopen-pip",
    "python3-yaml",
}
REQUIRED_TEST_DEPENDS = {"python3-pytest", "python3-hypothesis"}


@pytest.fixture(scope="module")
def manifest() -> ET.Element:
    return ET.parse(REPO_ROOT / "package.xml").getroot()


def _texts(root: ET.Element, tag: str) -> set[str]:
    return {(element.text or "").strip() for element in root.findall(tag)}


def test_manifest_is_format_3_ament_python(manifest: ET.Element) -> None:
    assert manifest.tag == "package"
    assert manifest.get("format") == "3"
    assert manifest.findtext("name") == "skel_ros"
    assert manifest.findtext("version") == skel_ros.__version__
    assert manifest.findtext("license") == "BSD-3-Clause"
    assert (manifest.findtext("description") or "").strip()
    maintainer = manifest.find("maintainer")
    assert maintainer is not None
    assert maintainer.get("email")
    assert manifest.findtext("export/build_type") == "ament_python"


def test_manifest_declares_dependencies(manifest: ET.Element) -> None:
    exec_depends = _texts(manifest, "exec_depend") | _texts(manifest, "depend")
    missing = REQUIRED_EXEC_DEPENDS - exec_depends
    assert not missing, f"exec_depend missing: {sorted(missing)}"
    test_depends = _texts(manifest, "test_depend") | _texts(manifest, "depend")
    missing = REQUIRED_TEST_DEPENDS - test_depends
    assert not missing, f"test_depend missing: {sorted(missing)}"


def test_distribution_requires_canopen() -> None:
    """CiA 402 needs the canopen library: a requirement of the package, not of dev only."""
    import importlib.metadata

    try:
        requires = importlib.metadata.requires("skel_ros") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("skel_ros is not installed (scripts/setup.sh installs it)")
    assert any(r.split(";")[0].startswith("canopen") for r in requires), requires


def test_ament_index_marker_exists() -> None:
    assert (REPO_ROOT / "resource" / "skel_ros").is_file()
    assert (REPO_ROOT / "skel_ros" / "py.typed").is_file()


def test_editable_install_put_console_scripts_in_venv_bin() -> None:
    """`pip install -e .` ignores setup.cfg's ament script_dir (see docs/packaging.md)."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("not running in a virtual environment (scripts/setup.sh makes .venv)")
    bin_dir = Path(sys.prefix) / "bin"
    if not (bin_dir / "skel-ros").exists():
        pytest.skip(f"skel_ros is not pip-installed in {sys.prefix}")
    for script in CONSOLE_SCRIPTS:
        assert (bin_dir / script).is_file(), script
    assert not (Path(sys.prefix) / "lib" / "skel_ros").exists()


def _colcon() -> str | None:
    beside_python = Path(sys.executable).parent / "colcon"
    return str(beside_python) if beside_python.is_file() else shutil.which("colcon")


@pytest.mark.slow
@pytest.mark.skipif(
    _colcon() is None,
    reason="colcon is not installed (pip install colcon-common-extensions; scripts/setup.sh does)",
)
@pytest.mark.parametrize("mode", ["install", "symlink-install"])
def test_colcon_build_installs_ros_layout(tmp_path: Path, mode: str) -> None:
    """Scripts land in lib/skel_ros (setup.cfg) both ways colcon runs setup.py."""
    colcon = _colcon()
    assert colcon is not None
    env = dict(os.environ)
    # The ROS packages found by ament_python's build: the venv's (or a sourced distro's).
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(
        p for p in (sys.prefix, os.environ.get("AMENT_PREFIX_PATH", "")) if p
    )
    env.pop("COLCON_DEFAULTS_FILE", None)
    env["COLCON_HOME"] = str(tmp_path / "colcon_home")
    command = [
        colcon,
        "--log-base",
        str(tmp_path / "log"),
        "build",
        "--base-paths",
        str(REPO_ROOT),
        "--packages-select",
        "skel_ros",
        "--build-base",
        str(tmp_path / "build"),
        "--install-base",
        str(tmp_path / "install"),
        "--event-handlers",
        "console_direct-",
    ]
    if mode == "symlink-install":
        command.append("--symlink-install")
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}\n{result.stderr}"

    prefix = tmp_path / "install" / "skel_ros"
    for script in CONSOLE_SCRIPTS:
        path = prefix / "lib" / "skel_ros" / script
        assert path.is_file(), f"{path} missing; colcon output:\n{result.stdout}"
        assert os.access(path, os.X_OK), path
    share = prefix / "share"
    assert (share / "ament_index" / "resource_index" / "packages" / "skel_ros").is_file()
    assert (share / "skel_ros" / "package.xml").is_file()
    for relative in _shared_files():
        assert (share / "skel_ros" / relative).exists(), f"share/skel_ros/{relative} missing"
    if mode == "install":
        site_packages = list(prefix.glob("lib/python3*/site-packages/skel_ros/__init__.py"))
        assert site_packages, "skel_ros not installed as a Python package"
        assert (site_packages[0].parent / "py.typed").is_file()
    else:
        assert list(prefix.glob("lib/python3*/site-packages/*.egg-link"))
    # Only the package's own code is installed: no tests, no tf2_msgs/control_msgs stand-in.
    assert not list(prefix.glob("lib/python3*/site-packages/test"))
    assert not (tmp_path / "install" / "tf2_msgs").exists()
    assert not (tmp_path / "install" / "control_msgs").exists()


def _shared_files() -> list[Path]:
    """Files setup.py's data_files must install under share/skel_ros, relative to it."""
    wanted = [Path("package.xml"), Path("config/fastdds_localhost.xml")]
    patterns = {
        "launch": ("*.launch.py",),
        "config": ("*.yaml", "*.rviz", "*.xml", "*.json"),
        "examples": ("*",),
    }
    for directory, globs in patterns.items():
        for pattern in globs:
            wanted += [
                path.relative_to(REPO_ROOT)
                for path in (REPO_ROOT / directory).rglob(pattern)
                if path.is_file() and "__pycache__" not in path.parts
            ]
    return sorted(set(wanted))


def test_test_module_basenames_are_unique() -> None:
    """pytest imports test modules by basename (no ``__init__.py`` in ``test/``).

    Two ``test_x.py`` in different directories stop the collection of the whole suite
    ("import file mismatch"), which is how CI once failed.
    """
    seen: dict[str, Path] = {}
    for path in sorted((REPO_ROOT / "test").rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        if path.name == "conftest.py":
            continue
        assert path.name not in seen, f"{path} and {seen[path.name]} share a basename"
        seen[path.name] = path
