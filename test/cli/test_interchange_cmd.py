"""``skel-ros convert``: every direction through the real command, then read back."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skel_ros.cli.main import main
from skel_ros.model import load_model, load_skel

REPO = Path(__file__).resolve().parents[2]
ARM_SKEL = REPO / "examples" / "arm.skel"
CASPR = REPO / "test" / "model" / "data" / "caspr" / "arm_bodies.xml"
HARDWARE = REPO / "config" / "hardware" / "arm_dynamixel.yaml"


def test_caspr_to_skel_to_phobos_to_urdf(tmp_path: Path) -> None:
    skel = tmp_path / "arm.skel"
    assert main(["convert", str(CASPR), "-o", str(skel)]) == 0
    assert load_skel(skel).skeletons[0].num_dofs == 4
    phobos = tmp_path / "arm.json"
    assert main(["convert", str(skel), "-o", str(phobos)]) == 0
    assert [d.name for d in load_model(phobos).skeletons[0].dofs] == [
        d.name for d in load_skel(skel).skeletons[0].dofs]
    urdf = tmp_path / "arm.urdf"
    assert main(["convert", str(phobos), "-o", str(urdf)]) == 0
    assert "<robot" in urdf.read_text()


def test_hardware_motors_and_explicit_target(tmp_path: Path) -> None:
    out = tmp_path / "arm.out"
    assert main(["convert", str(ARM_SKEL), "-o", str(out), "--to", "phobos-yaml",
                 "--hardware", str(HARDWARE)]) == 0
    doc = yaml.safe_load(out.read_text())
    assert doc["motors"]
    motor = next(iter(doc["motors"].values()))
    assert motor["type"] == "dynamixel"
    assert motor["hardware"]["id"] >= 0


def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yml"
    bad.write_text("links: {a: {inertial: {mass: heavy}}}\njoints: {}\n")
    assert main(["convert", str(bad), "-o", str(tmp_path / "x.skel")]) == 1
    assert "bad.yml:1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["convert", str(ARM_SKEL), "-o", str(tmp_path / "x.unknown")])


def test_help_names_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    """``convert`` writes MJCF too; ``validate`` reads every model format, not SKEL only."""
    with pytest.raises(SystemExit):
        main(["--help"])
    summary = " ".join(capsys.readouterr().out.split())
    assert "to SKEL/Phobos/URDF/MJCF" in summary
    assert "check SKEL files" not in summary
    assert "validate check model files (SKEL, URDF/xacro, SMURF, Phobos, CASPR)" in summary
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    assert "URDF or MJCF" in " ".join(capsys.readouterr().out.split())


ONE_ROBOT = """<skel version="1.0"><world name="w"><skeleton name="bot">
<body name="base"><inertia><mass>1</mass></inertia></body>
<body name="arm"><inertia><mass>1</mass></inertia></body>
<joint type="weld" name="fix"><parent>world</parent><child>base</child></joint>
<joint type="revolute" name="elbow"><parent>base</parent><child>arm</child>
<axis><xyz>0 0 1</xyz></axis><init_pos>0.5</init_pos></joint>
</skeleton></world></skel>
"""


def test_urdf_keeps_the_robots_name_and_says_what_it_drops(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The one robot of a world keeps its name (as SKEL, MJCF and Phobos keep it; the file's
    stem renamed it on the way back); the initial positions URDF cannot hold are named."""
    skel = tmp_path / "bot_bodies.skel"
    skel.write_text(ONE_ROBOT, encoding="utf-8")
    urdf = tmp_path / "bot.urdf"
    assert main(["convert", str(skel), "-o", str(urdf)]) == 0
    err = capsys.readouterr().err
    assert "URDF holds no initial positions or velocities: 1 DOF(s)" in err
    assert "'elbow' at 0.5" in err
    assert '<robot name="bot">' in urdf.read_text(encoding="utf-8")
    assert [s.name for s in load_model(urdf).skeletons if s.bodies] == ["bot"]
