"""What a sim-to-real run emulates: physics where every bus has it, else ideal actuators.

``skel-ros sim-to-real`` and ``demo`` emulate devices that move one physics model of the
robot by default (issue 28: a gate against ideal trackers cannot catch what real robots
do), unless a bus's protocol has no physics-backed emulator (then ideal ones for the
whole run, and the run says why) or ``--ideal-actuators`` asks for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from skel_ros.cli.exit_codes import USAGE
from skel_ros.cli.main import main
from skel_ros.nodes.sim_to_real import RunConfig, emulation, node_commands

if TYPE_CHECKING:
    import pytest

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_HW = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
SO101 = REPO / "examples" / "so101_arm.urdf"
SO101_HW = REPO / "config" / "hardware" / "so101_feetech.yaml"
TRAJECTORY = REPO / "examples" / "arm_trajectory.yaml"


def _config(model: Path, hardware: Path, **kwargs: object) -> RunConfig:
    return RunConfig(skel_file=model, hardware_config=hardware, trajectory=TRAJECTORY,
                     out_dir=Path("out"), **kwargs)  # type: ignore[arg-type]


def _physics_param(config: RunConfig) -> bool:
    return "physics:=true" in " ".join(node_commands(config)["real"])


def test_physics_is_the_default_where_every_bus_has_it() -> None:
    config = _config(ARM, ARM_HW)
    assert emulation(config) == (True, "emulated, physics")
    assert _physics_param(config)


def test_the_feetech_arm_runs_on_physics_too() -> None:
    config = _config(SO101, SO101_HW)
    assert emulation(config) == (True, "emulated, physics")
    assert _physics_param(config)


def test_a_bus_without_physics_makes_the_run_ideal_and_says_which(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # As if the Feetech plugin had no physics-backed emulator (a later plugin may not).
    monkeypatch.setattr("skel_ros.physical.physical_emulator_names",
                        lambda: ("canopen", "dynamixel", "mit"))
    config = _config(SO101, SO101_HW)
    physics, text = emulation(config)
    assert not physics
    assert text == "emulated, ideal actuators (no physics-backed emulator for feetech)"
    assert not _physics_param(config)


def test_ideal_actuators_asked_for_and_the_real_robot() -> None:
    assert emulation(_config(ARM, ARM_HW, physics=False)) == (
        False, "emulated, ideal actuators")
    assert not _physics_param(_config(ARM, ARM_HW, physics=False))
    assert emulation(_config(ARM, ARM_HW, emulate=False)) == (False, "real actuators")
    truth = REPO / "test" / "nodes" / "data" / "truth" / "empty.yaml"
    assert emulation(_config(ARM, ARM_HW, truth=truth))[0]


def test_ideal_actuators_and_a_truth_file_contradict_each_other(
        capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["sim-to-real", "--ideal-actuators", "--truth", str(ARM_HW)])
    assert status == USAGE
    assert "--truth needs the physics emulation" in capsys.readouterr().err
