"""``skel-ros emulate --physics``: what it refuses, before any device starts.

The happy path runs as a documented command (test/test_docs.py: the Dynamixel buses of
``config/hardware/arm_dynamixel.yaml`` moving the arm with a truth file, until the
pseudo-terminal is printed); here, in this process, the command line's mistakes and the
files' (exit 2 for usage, 1 for a file, with its line), each said before an emulator is
started.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from skel_ros_in_process import skel_ros_main

if TYPE_CHECKING:
    from subprocess import CompletedProcess

    import pytest

REPO = Path(__file__).resolve().parents[2]
ARM = str(REPO / "examples" / "arm.skel")
DXL = str(REPO / "config" / "hardware" / "arm_dynamixel.yaml")


def emulate(capsys: pytest.CaptureFixture[str], *args: str) -> CompletedProcess[str]:
    return skel_ros_main(capsys, "emulate", *args)


def test_physics_needs_the_model_and_the_hardware_yaml(
        capsys: pytest.CaptureFixture[str]) -> None:
    done = emulate(capsys, "dynamixel", "--physics", "--skel", ARM)
    assert done.returncode == 2
    assert "--physics (and --truth) need --skel MODEL and --config" in done.stderr
    done = emulate(capsys, "dynamixel", "--truth", "t.yaml", "--config", DXL)
    assert done.returncode == 2
    done = emulate(capsys, "dynamixel", "--physics", "--skel", ARM, "--config", DXL,
                   "--ids", "1-2")
    assert done.returncode == 2
    assert "--ids and --model come from --config's YAML" in done.stderr


def test_a_truth_file_mistake_is_said_at_its_line_before_any_device_starts(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    truth = tmp_path / "truth.yaml"
    truth.write_text("joints:\n  elbow:\n    stiction: 0.1\n")
    done = emulate(capsys, "dynamixel", "--skel", ARM, "--config", DXL, "--truth",
                   str(truth))
    assert done.returncode == 1
    assert f"error: {truth}:3: unknown key 'stiction' in joint 'elbow'" in done.stderr
    assert "cannot start" not in done.stderr
    assert not done.stdout


def test_a_protocol_without_its_buses_or_its_physics_emulator_is_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    done = emulate(capsys, "mit", "--physics", "--skel", ARM, "--config", DXL)
    assert done.returncode == 1
    assert "arm_dynamixel.yaml: no mit bus with joints" in done.stderr
    done = emulate(capsys, "feetech", "--physics", "--skel", ARM, "--config", DXL)
    assert done.returncode == 1
    assert "feetech" in done.stderr
    assert not done.stdout
