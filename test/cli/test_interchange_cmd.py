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
