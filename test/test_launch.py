"""The launch files: each LaunchDescription builds, with the nodes, parameters and
remappings the documentation promises.

``launch`` and ``launch_ros`` come with a ROS 2 distro; no package registry carries
them, so where they are not importable (the PyPI-wheel environment of scripts/setup.sh)
these tests are skipped with that reason. On a distro (Humble, Jazzy, Kilted) they run.
The launch files themselves use only the public launch / launch_ros API; reading the
configured values back out of the actions needs launch_ros's name-mangled attributes,
which are the same in all three distros.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
launch = pytest.importorskip(
    "launch", reason="launch is not importable: it comes with a ROS 2 distro, no registry has it")
launch_ros = pytest.importorskip(
    "launch_ros",
    reason="launch_ros is not importable: it comes with a ROS 2 distro, no registry has it")

from launch import LaunchContext  # noqa: E402
from launch.actions import DeclareLaunchArgument  # noqa: E402
from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions  # noqa: E402
from launch_ros.actions import Node  # noqa: E402
from launch_ros.utilities import evaluate_parameters  # noqa: E402


@pytest.fixture(autouse=True)
def _package_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ament prefix where FindPackageShare('skel_ros') is this repository."""
    marker = tmp_path / "share" / "ament_index" / "resource_index" / "packages" / "skel_ros"
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    (tmp_path / "share" / "skel_ros").symlink_to(REPO)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))


def _describe(name: str, **arguments: str) -> dict[str, dict[str, Any]]:
    """Build the launch file's description and return its active nodes by name."""
    spec = importlib.util.spec_from_file_location(name, REPO / "launch" / name)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    context = LaunchContext()
    context.launch_configurations.update(arguments)
    nodes: dict[str, dict[str, Any]] = {}
    for entity in description.entities:
        if isinstance(entity, DeclareLaunchArgument):
            if entity.name not in arguments:
                entity.visit(context)  # sets the default
            continue
        if not isinstance(entity, Node):
            continue
        if entity.condition is not None and not entity.condition.evaluate(context):
            continue
        params: dict[str, Any] = {}
        files: list[str] = []
        for p in evaluate_parameters(context, entity._Node__parameters):  # noqa: SLF001
            if isinstance(p, dict):
                params.update(p)
            else:
                files.append(str(p))
        remaps = {perform_substitutions(context, list(a)): perform_substitutions(context, list(b))
                  for a, b in entity._Node__remappings}  # noqa: SLF001
        ns = entity._Node__node_namespace  # noqa: SLF001
        namespace = perform_substitutions(context, normalize_to_list_of_substitutions(ns)) if ns else ""
        node_name = perform_substitutions(
            context, normalize_to_list_of_substitutions(entity._Node__node_name))  # noqa: SLF001
        arguments_ = [perform_substitutions(context, normalize_to_list_of_substitutions(a))
                      for a in (entity._Node__arguments or [])]  # noqa: SLF001
        nodes[node_name] = {"package": entity.node_package, "executable": entity.node_executable,
                            "namespace": namespace, "params": params, "files": files,
                            "remaps": remaps, "arguments": arguments_}
    return nodes


def test_sim_launch() -> None:
    nodes = _describe("sim.launch.py")
    assert set(nodes) == {"sim_node", "rviz2"}
    sim = nodes["sim_node"]
    assert (sim["package"], sim["executable"], sim["namespace"]) == ("skel_ros", "sim_node", "")
    assert sim["params"]["skel_file"] == "package://skel_ros/examples/arm.skel"
    assert [Path(f).name for f in sim["files"]] == ["sim.yaml"]
    assert all(Path(f).exists() for f in sim["files"])
    rviz_config = Path(nodes["rviz2"]["arguments"][1])
    assert rviz_config.name == "skel_ros.rviz" and rviz_config.exists()
    assert nodes["rviz2"]["params"]["use_sim_time"] is True

    nodes = _describe("sim.launch.py", rviz="false", namespace="robot1", skel_file="/x.skel")
    assert set(nodes) == {"sim_node"}
    assert nodes["sim_node"]["namespace"] == "robot1"
    assert nodes["sim_node"]["params"]["skel_file"] == "/x.skel"


def test_hardware_launch() -> None:
    nodes = _describe("hardware.launch.py", emulate="true", port="/dev/ttyUSB1")
    assert set(nodes) == {"hardware_node"}
    hw = nodes["hardware_node"]
    assert (hw["package"], hw["executable"]) == ("skel_ros", "hardware_node")
    assert hw["params"]["emulate"] is True
    assert hw["params"]["port"] == "/dev/ttyUSB1"
    assert Path(hw["params"]["hardware_config"]).name == "arm_dynamixel.yaml"
    assert Path(hw["params"]["hardware_config"]).exists()


def test_sim_to_real_launch() -> None:
    nodes = _describe("sim_to_real.launch.py", rviz="false")
    assert set(nodes) == {"sim_node", "hardware_node", "sim_world_offset", "real_world_offset"}
    sim, hw = nodes["sim_node"], nodes["hardware_node"]
    assert (sim["namespace"], hw["namespace"]) == ("sim", "real")
    assert (sim["params"]["frame_prefix"], hw["params"]["frame_prefix"]) == ("sim/", "real/")
    assert hw["params"]["emulate"] is True
    # One command input reaches both robots.
    expected = {"joint_commands": "/joint_commands", "joint_trajectory": "/joint_trajectory"}
    assert sim["remaps"] == expected
    assert hw["remaps"] == expected
    offsets = {n: nodes[n]["arguments"] for n in ("sim_world_offset", "real_world_offset")}
    assert offsets["sim_world_offset"][3] == "0.3"
    assert offsets["real_world_offset"][3] == "-0.3"
    assert offsets["sim_world_offset"][-1] == "sim/world"

    nodes = _describe("sim_to_real.launch.py", trajectory="/t.xml")
    assert nodes["trajectory_player"]["params"]["trajectory_file"] == "/t.xml"
    rviz_config = Path(nodes["rviz2"]["arguments"][1])
    assert rviz_config.exists()
