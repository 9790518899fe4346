"""The launch files: each LaunchDescription builds, with the nodes, parameters, remappings,
conditions and launch arguments the documentation promises.

``launch`` and ``launch_ros`` come with a ROS 2 distro; no package registry carries
them, so where they are not importable (the PyPI-wheel environment of scripts/setup.sh)
these tests are skipped with that reason. On a distro (Humble, Jazzy, Kilted) they run.

Each node goes through launch_ros's own substitution step (``Node._perform_substitutions``,
what ``Node.execute`` does before starting the process), so the checks see what the
process would get: the full node name and namespace, the remapping rules, and the
parameters as launch_ros writes them into the ``--params-file`` YAML (types included:
``emulate`` a bool, ``can_channel:=0`` the string ``"0"``). That step and the raw
``arguments`` are private (``_perform_substitutions``, name-mangled attributes); they are
the same in Humble, Jazzy and Kilted. The launch files themselves use only public API.
"""

from __future__ import annotations

import importlib.util
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:
    from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
LAUNCH_FILES = ("sim.launch.py", "hardware.launch.py", "sim_to_real.launch.py",
                "two_arms.launch.py")
# launch_ros first: from the repository root, ``import launch`` alone can find the
# repository's launch/ directory as a namespace package.
launch_ros = pytest.importorskip(
    "launch_ros",
    reason="launch_ros is not importable: it comes with a ROS 2 distro, no registry has it")
launch = pytest.importorskip(
    "launch", reason="launch is not importable: it comes with a ROS 2 distro, no registry has it")

# I001 off: ruff takes `launch` for first-party (the repository's launch/ directory).
from launch import LaunchContext, LaunchDescription  # noqa: E402, I001
from launch.actions import DeclareLaunchArgument  # noqa: E402
from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions  # noqa: E402
from launch_ros.actions import LifecycleNode, Node  # noqa: E402

COMMAND_REMAPS = {"joint_commands": "/joint_commands", "joint_trajectory": "/joint_trajectory"}


@pytest.fixture(autouse=True)
def _package_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ament prefix where FindPackageShare('skel_ros') is this repository."""
    marker = tmp_path / "share" / "ament_index" / "resource_index" / "packages" / "skel_ros"
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    (tmp_path / "share" / "skel_ros").symlink_to(REPO)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), REPO / "launch" / name)
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _params_of(node: Node, key: str) -> tuple[dict[str, Any], list[Path]]:
    """The parameters the node would get, in order, and the parameter files given as such.

    launch_ros writes each parameter dictionary into a temporary YAML file
    (``launch_params_*``) under ``key``: the node's full name, or ``/**`` for a node
    without a namespace; those are read back and removed.
    """
    params: dict[str, Any] = {}
    files: list[Path] = []
    for argument, is_file in node._Node__expanded_parameter_arguments or []:
        assert is_file, f"{key}: unexpected -p rule {argument}"
        path = Path(argument)
        content = yaml.safe_load(path.read_text())
        generated = (path.name.startswith("launch_params_")
                     and path.parent == Path(tempfile.gettempdir()))
        if generated:
            path.unlink()
            assert list(content) == [key]
            params.update(content[key]["ros__parameters"])
        else:
            files.append(path)
            for section in ("/**", key, key.lstrip("/")):
                params.update((content.get(section) or {}).get("ros__parameters", {}))
    return params, files


def _describe(name: str, *, by_full_name: bool = False,
              **arguments: str) -> dict[str, dict[str, Any]]:
    """Build the launch file's description and return its active nodes by node name.

    The arguments are set as on the command line; the DeclareLaunchArgument actions then
    run as in a launch (defaults for the rest, ``choices`` checked). With
    ``by_full_name``, nodes are keyed by their full name without the leading slash
    (``robot1/sim_node``), for launch files with one node name in several namespaces.
    """
    description = _load(name).generate_launch_description()
    context = LaunchContext()
    context.launch_configurations.update(arguments)
    nodes: dict[str, dict[str, Any]] = {}
    for entity in description.entities:
        if isinstance(entity, DeclareLaunchArgument):
            entity.visit(context)
            continue
        assert isinstance(entity, Node), f"{name}: this test does not know {entity!r}"
        if entity.condition is not None and not entity.condition.evaluate(context):
            continue
        entity._perform_substitutions(context)  # what Node.execute does first
        # Without namespace= the node name is "<node_namespace_unspecified>/name": the node
        # lands in the root namespace (or ROS_NAMESPACE); namespace None below.
        full_name = entity.node_name.replace(Node.UNSPECIFIED_NODE_NAMESPACE, "")
        fully_specified = entity.is_node_name_fully_specified()
        params, files = _params_of(entity, full_name if fully_specified else "/**")
        arguments_ = [perform_substitutions(context, normalize_to_list_of_substitutions(a))
                      for a in (entity._Node__arguments or [])]
        short = full_name.lstrip("/") if by_full_name else full_name.rsplit("/", 1)[1]
        assert short not in nodes, f"{name}: two nodes named {short}"
        nodes[short] = {"package": entity.node_package, "executable": entity.node_executable,
                        "full_name": full_name,
                        "namespace": entity.expanded_node_namespace if fully_specified else None,
                        "params": params, "files": files,
                        "remaps": dict(entity.expanded_remapping_rules or []),
                        "arguments": arguments_, "lifecycle": isinstance(entity, LifecycleNode)}
    return nodes


def _expand(name: str, namespace: str) -> str:
    """A topic name as rclcpp expands it for a node in ``namespace``."""
    return name if name.startswith("/") else f"{namespace.rstrip('/')}/{name}"


def _rviz_topics(rviz: dict[str, Any]) -> dict[str, str]:
    """Display name -> the topic RViz subscribes to, as its node resolves the config's name.

    The config is the ``-d`` argument; relative names are expanded in RViz's namespace,
    then its remapping rules apply (a rule's names are expanded the same way).
    """
    config = yaml.safe_load(Path(rviz["arguments"][1]).read_text())
    namespace = rviz["namespace"] or "/"
    rules = {_expand(a, namespace): _expand(b, namespace) for a, b in rviz["remaps"].items()}
    topics = {}
    for display in config["Visualization Manager"]["Displays"]:
        field = display.get("Description Topic") or display.get("Topic")
        if field is not None:
            topic = _expand(field["Value"], namespace)
            topics[display["Name"]] = rules.get(topic, topic)
    return topics


def _fixed_frame(rviz: dict[str, Any]) -> str:
    """The fixed frame RViz uses: ``-f`` when given, else the config's."""
    arguments = rviz["arguments"]
    if "-f" in arguments:
        return arguments[arguments.index("-f") + 1]
    config = yaml.safe_load(Path(arguments[1]).read_text())
    return config["Visualization Manager"]["Global Options"]["Fixed Frame"]


def _published(node: dict[str, Any]) -> tuple[str, str]:
    """A robot node's ``robot_description`` and ``~/markers`` topics."""
    namespace = (node["namespace"] or "/").rstrip("/")
    return f"{namespace}/robot_description", f"{node['full_name']}/markers"


def _check_rviz_shows(rviz: dict[str, Any], robot: dict[str, Any], model: str,
                      shapes: str) -> None:
    """RViz's displays ``model`` (RobotModel) and ``shapes`` (MarkerArray) read what
    ``robot`` publishes, and the fixed frame is the robot's world frame."""
    topics = _rviz_topics(rviz)
    assert (topics[model], topics[shapes]) == _published(robot)
    assert _fixed_frame(rviz) == robot["params"]["frame_prefix"] + "world"


def _console_scripts() -> set[str]:
    return set(re.findall(r'"([\w-]+) = skel_ros\.', (REPO / "setup.py").read_text()))


def _check_skel_ros_executables(nodes: dict[str, dict[str, Any]]) -> None:
    scripts = _console_scripts()
    for node in nodes.values():
        if node["package"] == "skel_ros":
            assert node["executable"] in scripts


def test_sim_launch() -> None:
    nodes = _describe("sim.launch.py")
    assert set(nodes) == {"sim_node", "rviz2"}
    _check_skel_ros_executables(nodes)
    sim = nodes["sim_node"]
    assert (sim["package"], sim["executable"]) == ("skel_ros", "sim_node")
    assert (sim["full_name"], sim["namespace"]) == ("/sim_node", "/")
    assert [f.name for f in sim["files"]] == ["sim.yaml"]
    assert sim["files"][0].resolve() == (REPO / "config" / "sim.yaml").resolve()
    assert sim["params"]["skel_file"] == "package://skel_ros/examples/arm.skel"
    assert sim["params"]["hold_initial"] is True  # from sim.yaml, read under /**
    assert "time_base" not in sim["params"]  # the default: simulated time, on /clock
    assert sim["remaps"] == {}
    rviz = nodes["rviz2"]
    assert (rviz["package"], rviz["executable"]) == ("rviz2", "rviz2")
    assert rviz["arguments"][0] == "-d"
    rviz_config = Path(rviz["arguments"][1])
    assert rviz_config.name == "skel_ros.rviz"
    assert rviz_config.exists()
    assert rviz["params"] == {"use_sim_time": True}
    assert sim["params"]["frame_prefix"] == ""
    _check_rviz_shows(rviz, sim, "RobotModel", "SKEL shapes")

    nodes = _describe("sim.launch.py", rviz="false", namespace="robot1", skel_file="on",
                      config=str(REPO / "config" / "sim_gains.yaml"))
    assert set(nodes) == {"sim_node"}
    sim = nodes["sim_node"]
    assert (sim["full_name"], sim["namespace"]) == ("/robot1/sim_node", "/robot1")
    assert sim["params"]["skel_file"] == "on"  # a string, not YAML's True
    assert sim["params"]["frame_prefix"] == "robot1/"  # a namespace implies a frame prefix
    assert [f.name for f in sim["files"]] == ["sim_gains.yaml"]

    # RViz in the robot's namespace shows that robot, in its world frame.
    for namespace, prefix in (("robot1", "robot1/"), ("/a/b/", "a/b/")):
        nodes = _describe("sim.launch.py", namespace=namespace)
        assert nodes["sim_node"]["params"]["frame_prefix"] == prefix
        assert nodes["rviz2"]["namespace"] == "/" + prefix.rstrip("/")
        _check_rviz_shows(nodes["rviz2"], nodes["sim_node"], "RobotModel", "SKEL shapes")
    nodes = _describe("sim.launch.py", namespace="robot1", frame_prefix="")
    assert nodes["sim_node"]["params"]["frame_prefix"] == ""
    _check_rviz_shows(nodes["rviz2"], nodes["sim_node"], "RobotModel", "SKEL shapes")

    nodes = _describe("sim.launch.py", use_sim_time="False")
    assert nodes["rviz2"]["params"] == {"use_sim_time": False}

    # A URDF or xacro model: its arguments and the fixed base reach the node as typed.
    nodes = _describe("sim.launch.py", skel_file="robot.urdf.xacro", model_args="n:=1",
                      fixed_base="true")
    params = nodes["sim_node"]["params"]
    assert (params["model_args"], params["fixed_base"]) == ("n:=1", True)  # "n:=1" a string
    assert _describe("sim.launch.py")["sim_node"]["params"]["fixed_base"] is False


def test_hardware_launch() -> None:
    nodes = _describe("hardware.launch.py")
    assert set(nodes) == {"hardware_node"}
    _check_skel_ros_executables(nodes)
    hw = nodes["hardware_node"]
    assert (hw["package"], hw["executable"]) == ("skel_ros", "hardware_node")
    assert (hw["full_name"], hw["namespace"]) == ("/hardware_node", "/")
    assert hw["files"] == []
    assert hw["remaps"] == {}
    config = Path(hw["params"].pop("hardware_config"))
    assert config.name == "arm_dynamixel.yaml"
    assert config.exists()
    assert hw["params"] == {"skel_file": "package://skel_ros/examples/arm.skel", "port": "",
                            "can_interface": "", "can_channel": "", "emulate": False,
                            "frame_prefix": "", "model_args": "", "fixed_base": False,
                            "autostart": "inactive"}
    # A lifecycle node that configures itself: connected, torque off, as before the lifecycle.
    assert hw["lifecycle"]

    nodes = _describe("hardware.launch.py", emulate="true", port="/dev/ttyUSB1",
                      can_interface="socketcan", can_channel="0", namespace="robot1",
                      rviz="true")
    assert set(nodes) == {"hardware_node", "rviz2"}
    hw = nodes["hardware_node"]
    assert hw["full_name"] == "/robot1/hardware_node"
    assert hw["params"]["emulate"] is True
    assert hw["params"]["port"] == "/dev/ttyUSB1"
    assert hw["params"]["can_interface"] == "socketcan"
    assert hw["params"]["can_channel"] == "0"  # a string parameter, not YAML's 0
    assert hw["params"]["frame_prefix"] == "robot1/"
    assert Path(nodes["rviz2"]["arguments"][1]).exists()
    _check_rviz_shows(nodes["rviz2"], hw, "RobotModel", "SKEL shapes")
    nodes = _describe("hardware.launch.py", skel_file="robot.urdf.xacro",
                      model_args="arm:=ur5 n:=1", fixed_base="true")
    params = nodes["hardware_node"]["params"]
    assert (params["model_args"], params["fixed_base"]) == ("arm:=ur5 n:=1", True)
    nodes = _describe("hardware.launch.py", rviz="true")
    _check_rviz_shows(nodes["rviz2"], nodes["hardware_node"], "RobotModel", "SKEL shapes")

    with pytest.raises(Exception, match="emulate"):  # not one of the choices
        _describe("hardware.launch.py", emulate="maybe")

    # autostart: where the node brings itself (a lifecycle manager: unconfigured).
    for state in ("active", "unconfigured"):
        params = _describe("hardware.launch.py", autostart=state)["hardware_node"]["params"]
        assert params["autostart"] == state
    with pytest.raises(Exception, match="autostart"):
        _describe("hardware.launch.py", autostart="true")


def test_sim_to_real_launch() -> None:
    nodes = _describe("sim_to_real.launch.py", rviz="false")
    assert set(nodes) == {"sim_node", "hardware_node", "sim_world_offset", "real_world_offset"}
    _check_skel_ros_executables(nodes)
    sim, hw = nodes["sim_node"], nodes["hardware_node"]
    assert (sim["package"], sim["executable"]) == ("skel_ros", "sim_node")
    assert (hw["package"], hw["executable"]) == ("skel_ros", "hardware_node")
    assert (sim["full_name"], hw["full_name"]) == ("/sim/sim_node", "/real/hardware_node")
    assert (sim["namespace"], hw["namespace"]) == ("/sim", "/real")
    assert (sim["params"]["frame_prefix"], hw["params"]["frame_prefix"]) == ("sim/", "real/")
    assert [f.name for f in sim["files"]] == ["sim.yaml"]
    assert hw["files"] == []
    # One time base, the wall clock: the simulation locked to it, nobody on /clock.
    assert sim["params"]["time_base"] == "wall"
    assert sim["params"]["real_time_factor"] == 1.0  # sim.yaml's, the only one wall accepts
    assert sim["params"]["skel_file"] == hw["params"]["skel_file"] == (
        "package://skel_ros/examples/arm.skel")
    assert hw["params"]["emulate"] is True
    assert Path(hw["params"]["hardware_config"]).exists()
    # A lifecycle node, as in hardware.launch.py: configured at start, torque off.
    assert hw["lifecycle"]
    assert hw["params"]["autostart"] == "inactive"
    params = _describe("sim_to_real.launch.py", autostart="unconfigured")["hardware_node"]["params"]
    assert params["autostart"] == "unconfigured"
    with pytest.raises(Exception, match="autostart"):
        _describe("sim_to_real.launch.py", autostart="true")
    # One command input reaches both robots.
    assert sim["remaps"] == COMMAND_REMAPS
    assert hw["remaps"] == COMMAND_REMAPS
    for side, y in (("sim", "0.3"), ("real", "-0.3")):
        offset = nodes[f"{side}_world_offset"]
        assert offset["package"] == "tf2_ros"
        assert offset["executable"] == "static_transform_publisher"
        assert offset["arguments"] == ["--x", "0", "--y", y, "--z", "0", "--frame-id", "world",
                                       "--child-frame-id", f"{side}/world"]

    # A path with a quote and a space: no expression quoting to break.
    trajectory = "/data/it's a trajectory.yaml"
    nodes = _describe("sim_to_real.launch.py", trajectory=trajectory, emulate="false",
                      spacing="1", can_channel="1")
    assert set(nodes) == {"sim_node", "hardware_node", "sim_world_offset", "real_world_offset",
                          "trajectory_player", "rviz2"}
    assert nodes["hardware_node"]["params"]["emulate"] is False
    assert nodes["hardware_node"]["params"]["can_channel"] == "1"
    assert nodes["sim_world_offset"]["arguments"][3] == "0.5"
    assert nodes["real_world_offset"]["arguments"][3] == "-0.5"
    player = nodes["trajectory_player"]
    assert (player["package"], player["executable"]) == ("skel_ros", "trajectory_player")
    assert (player["full_name"], player["namespace"]) == ("/trajectory_player", None)
    assert player["params"] == {"trajectory_file": trajectory,
                                "skel_file": "package://skel_ros/examples/arm.skel",
                                "mode": "stream", "enable_service": "/real/hardware_node/enable",
                                "subscribers": 2, "wait_for_subscribers": 60.0}
    assert player["remaps"] == {}  # joint_commands from the root namespace is /joint_commands
    rviz = nodes["rviz2"]
    rviz_config = Path(rviz["arguments"][1])
    assert rviz_config.name == "skel_ros_sim_to_real.rviz"
    assert rviz_config.exists()
    topics = _rviz_topics(rviz)
    assert (topics["Simulation"], topics["SKEL shapes (sim)"]) == _published(nodes["sim_node"])
    assert (topics["Hardware"], topics["SKEL shapes (hardware)"]) == _published(
        nodes["hardware_node"])
    assert _fixed_frame(rviz) == "world"
    assert not any(node["params"].get("use_sim_time") for node in nodes.values())

    assert "trajectory_player" not in _describe("sim_to_real.launch.py", trajectory=" ")
    # With a second engine, the player waits for three robots' subscriptions.
    nodes = _describe("sim_to_real.launch.py", trajectory=trajectory, second_engine="mujoco",
                      by_full_name=True)
    assert nodes["trajectory_player"]["params"]["subscribers"] == 3


def test_two_arms_launch() -> None:
    nodes = _describe("two_arms.launch.py", by_full_name=True)
    robots = ("robot1", "robot2")
    assert set(nodes) == {"rviz2", "robot1/sim_node", "robot2/sim_node",
                          "robot1_world_offset", "robot2_world_offset"}
    _check_skel_ros_executables(nodes)
    sims = {robot: nodes[f"{robot}/sim_node"] for robot in robots}
    # Two robots: distinct topics and frames.
    for robot, sim in sims.items():
        assert (sim["package"], sim["executable"]) == ("skel_ros", "sim_node")
        assert (sim["full_name"], sim["namespace"]) == (f"/{robot}/sim_node", f"/{robot}")
        assert sim["params"]["frame_prefix"] == f"{robot}/"
        assert sim["params"]["skel_file"] == "package://skel_ros/examples/arm.skel"
        assert [f.name for f in sim["files"]] == ["sim.yaml"]
    # One /clock: the second simulation's goes to its namespace.
    assert sims["robot1"]["remaps"] == {}
    assert sims["robot2"]["remaps"] == {"/clock": "/robot2/clock"}
    for robot, y in (("robot1", "0.3"), ("robot2", "-0.3")):
        offset = nodes[f"{robot}_world_offset"]
        assert offset["arguments"] == ["--x", "0", "--y", y, "--z", "0", "--frame-id", "world",
                                       "--child-frame-id", f"{robot}/world"]
    rviz = nodes["rviz2"]
    topics = _rviz_topics(rviz)
    for robot, sim in sims.items():
        assert (topics[robot], topics[f"SKEL shapes ({robot})"]) == _published(sim)
    assert _fixed_frame(rviz) == "world"
    assert rviz["params"] == {"use_sim_time": True}

    nodes = _describe("two_arms.launch.py", by_full_name=True, rviz="false", spacing="1",
                      skel_file="package://skel_ros/examples/quadruped.skel")
    assert "rviz2" not in nodes
    assert nodes["robot2_world_offset"]["arguments"][3] == "-0.5"
    assert nodes["robot2/sim_node"]["params"]["skel_file"].endswith("quadruped.skel")


def _documented_arguments(doc: str) -> set[str]:
    """The launch arguments a launch file's docstring lists after ``Arguments:``.

    Either an indented block, one ``name  description`` a line, or running text:
    ``Arguments: a, b (note), c.`` up to the next blank line.
    """
    text = doc.split("Arguments:", 1)[1]
    head, _, rest = text.partition("\n")
    if head.strip():
        paragraph = re.sub(r"\([^)]*\)", "", head + " " + rest.split("\n\n", 1)[0])
        names = {word.strip(" \n.") for word in paragraph.split(",") if word.strip(" \n.")}
    else:
        names = {line.split()[0] for line in rest.split("\n\n", 1)[0].splitlines()
                 if line.strip()}
    assert all(re.fullmatch(r"\w+", n) for n in names), names
    return names


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_documented_arguments_are_declared(name: str) -> None:
    module = _load(name)
    description: LaunchDescription = module.generate_launch_description()
    declared = {a.name for a in description.get_launch_arguments()}
    doc = module.__doc__ or ""
    assert _documented_arguments(doc) == declared
    # Every name:=value in the usage examples is a declared argument; a quoted value
    # (xacro's own "name:=value" arguments inside model_args) is a value, not an argument.
    unquoted = re.sub(r"\"[^\"\n]*\"|'[^'\n]*'", "", doc)
    assert set(re.findall(r"(\w+):=", unquoted)) <= declared


@pytest.mark.parametrize("name", LAUNCH_FILES)
def test_other_packages_nodes_come_first(name: str) -> None:
    """A missing package (rviz2 is not in ros-base) makes launch abort at that node; nodes
    started before it would be left running, so this package's nodes come last."""
    nodes = [e for e in _load(name).generate_launch_description().entities
             if isinstance(e, Node)]
    ours = [e.node_package == "skel_ros" for e in nodes]
    assert ours == sorted(ours), [e.node_package for e in nodes]
