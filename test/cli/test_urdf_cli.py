"""The URDF workflow on the command line: inspect / validate / convert a URDF or xacro
(with ``name:=value`` arguments), and ``init-hardware``'s YAML, read by the hardware
configuration loader and bound to the model."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
import yaml

from skel_ros.cli.main import main
from skel_ros.hardware.config import load_hardware_config
from skel_ros.model import load_model, load_skel

if TYPE_CHECKING:
    from pathlib import Path

URDF = """<?xml version="1.0"?>
<robot name="bot">
  <link name="base"><inertial><mass value="2"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="hand"><inertial><mass value="0.3"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2" velocity="3" effort="5"/></joint>
  <joint name="wrist" type="continuous"><parent link="arm"/><child link="hand"/>
    <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/><limit velocity="4" effort="1"/></joint>
</robot>
"""

XACRO = """<?xml version="1.0"?>
<robot name="bot" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="reach" default="0.2"/>
  <link name="world"/>
  <link name="base"><inertial><mass value="2"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="world"/><child link="base"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="$(arg reach)" velocity="1" effort="9"/></joint>
</robot>
"""


@pytest.fixture
def urdf(tmp_path: Path) -> Path:
    path = tmp_path / "bot.urdf"
    path.write_text(URDF)
    return path


def test_inspect_and_convert_a_urdf(urdf: Path, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(urdf)]) == 0
    out = capsys.readouterr().out
    assert "shoulder (revolute" in out
    assert "floating_base (free" in out  # the root link floats
    assert main(["inspect", str(urdf), "--fixed-base"]) == 0
    assert "floating_base (weld" in capsys.readouterr().out
    skel = tmp_path / "bot.skel"
    assert main(["convert", str(urdf), "-o", str(skel), "--fixed-base"]) == 0
    converted = load_skel(skel).skeletons[0]
    assert [d.name for d in converted.dofs] == ["shoulder", "wrist"]
    assert converted.dof("shoulder").position_upper == 2.0
    assert math.isinf(converted.dof("wrist").position_upper)
    phobos = tmp_path / "bot.yml"
    assert main(["convert", str(urdf), "-o", str(phobos)]) == 0
    assert [d.name for d in load_model(phobos).skeletons[0].dofs] == [
        d.name for d in load_model(urdf).skeletons[0].dofs]


def test_xacro_arguments_on_the_command_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("xacro", reason="xacro reads .urdf.xacro files")
    path = tmp_path / "bot.urdf.xacro"
    path.write_text(XACRO)
    assert main(["inspect", str(path), "reach:=0.7"]) == 0
    assert "[0, 0.7]" in capsys.readouterr().out
    assert main(["validate", str(path), "reach:=0.5"]) == 0
    assert "OK (1 skeleton(s), 1 DOFs" in capsys.readouterr().out
    skel = tmp_path / "bot.skel"
    assert main(["convert", str(path), "reach:=0.4", "-o", str(skel)]) == 0  # after the file
    assert load_skel(skel).skeletons[0].dof("slide").position_upper == pytest.approx(0.4)
    assert main(["inspect", str(path), "reach=0.4"]) == 1
    assert "'reach=0.4' is not a xacro argument NAME:=VALUE" in capsys.readouterr().err


def test_init_hardware_maps_every_one_dof_joint(urdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "hw.yaml"
    assert main(["init-hardware", str(urdf), "--protocol", "dynamixel", "-o", str(out)]) == 0
    text = out.read_text()
    assert "Not mapped" in text  # the floating base's six DOFs
    doc = yaml.safe_load(text)
    assert list(doc["joints"]) == ["shoulder", "wrist"]
    assert [j["id"] for j in doc["joints"].values()] == [1, 2]
    assert doc["joints"]["shoulder"]["limits"] == {
        "position": {"lower": -2.0, "upper": 2.0}, "velocity": {"lower": -3.0, "upper": 3.0},
        "effort": {"lower": -5.0, "upper": 5.0}}
    assert "position" not in doc["joints"]["wrist"]["limits"]  # continuous
    config = load_hardware_config(out)
    skeleton = config.select_skeleton(load_model(urdf))
    bound = config.bind(skeleton)
    assert bound.names == ("shoulder", "wrist")
    assert len(bound.unmapped) == 6
    # The written limits are the model's: binding changes none of them.
    shoulder = bound.limits["shoulder"]
    assert (shoulder.position_lower, shoulder.position_upper) == (-2.0, 2.0)
    assert (shoulder.effort_lower, shoulder.effort_upper) == (-5.0, 5.0)


@pytest.mark.parametrize("name", ["dynamixel", "canopen", "mit"])
def test_init_hardware_writes_the_protocols_own_defaults(urdf: Path, tmp_path: Path,
                                                         name: str) -> None:
    """Mode, actuator model, options and a transport to edit: each asked of the plugin."""
    from skel_ros.hardware.plugins import protocol

    plugin = protocol(name)
    out = tmp_path / "hw.yaml"
    assert main(["init-hardware", str(urdf), "--protocol", name, "-o", str(out)]) == 0
    doc = yaml.safe_load(out.read_text())
    shoulder = doc["joints"]["shoulder"]
    assert shoulder["mode"] == plugin.modes[0].value
    assert shoulder.get("model", "") == plugin.default_model
    assert shoulder.get("options", {}) == dict(plugin.default_options)
    assert doc["buses"][f"{name}_bus"]["transport"] == plugin.transport.example
    if name == "mit":  # an MIT motor's one frame: PD gains and feed-forward
        assert (shoulder["mode"], shoulder["options"]) == ("impedance", {"kp": 30.0, "kd": 0.8})
    load_hardware_config(out)  # what it wrote reads back


def test_init_hardware_errors(urdf: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match=r"unknown protocol|not registered|protocol"):
        main(["init-hardware", str(urdf), "--protocol", "nope", "-o", str(tmp_path / "x")])
    assert main(["init-hardware", str(tmp_path / "missing.urdf"), "--protocol", "dynamixel",
                 "-o", str(tmp_path / "x.yaml")]) == 1
    assert "missing.urdf" in capsys.readouterr().err


@pytest.mark.parametrize(("protocol", "known"), [("dynamixel", "XM430-W350"), ("mit", "AK80-9")])
def test_init_hardware_refuses_an_unknown_actuator_model(
        urdf: Path, tmp_path: Path, protocol: str, known: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--model NOPE`` wrote ``model: NOPE`` on every joint (exit 0); the protocol's driver
    knows its models: refused as ``--first-id 300`` is, naming the known ones."""
    out = tmp_path / "hw.yaml"
    with pytest.raises(SystemExit) as exited:
        main(["init-hardware", str(urdf), "--protocol", protocol, "--model", "NOPE",
              "-o", str(out)])
    message = str(exited.value.code)
    assert message.startswith("error: --model NOPE: ")
    assert "unknown" in message
    assert known in message
    assert not out.exists()
    # The driver's spellings are accepted (Dynamixel -T/-R suffixes, MIT aliases) ...
    spelled = {"dynamixel": "xm430-w350-t", "mit": "ak80-9"}[protocol]
    assert main(["init-hardware", str(urdf), "--protocol", protocol, "--model", spelled,
                 "-o", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["joints"]["shoulder"]["model"] == spelled
    capsys.readouterr()


def test_init_hardware_takes_any_model_for_a_protocol_without_a_model_list(
        urdf: Path, tmp_path: Path) -> None:
    """CANopen drives are checked against the name they report when the bus opens."""
    out = tmp_path / "hw.yaml"
    assert main(["init-hardware", str(urdf), "--protocol", "canopen", "--model", "Any Drive",
                 "-o", str(out)]) == 0
    assert yaml.safe_load(out.read_text())["joints"]["shoulder"]["model"] == "Any Drive"


@pytest.mark.parametrize(("protocol", "missing"), [
    ("dynamixel", "--port"), ("mit", "--can-interface"), ("canopen", "--can-interface")])
def test_scan_without_its_transport_is_a_usage_error(
        protocol: str, missing: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``scan --protocol dynamixel`` without ``--port`` exited 1 without "error:": it is a
    command-line error, exit 2 in argparse's format."""
    assert main(["scan", "--protocol", protocol]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: skel-ros scan")
    assert (f"skel-ros scan: error: the following arguments are required for {protocol}:"
            f" {missing}") in err
