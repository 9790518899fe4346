"""``skel-ros init-hardware --from-lerobot`` and ``skel-ros export-calibration --to lerobot``.

A LeRobot calibration file of an SO-101 read into a hardware YAML and written back is the
same file, byte for byte; the YAML is one the hardware node reads for the model; a motor
without a joint, two motors on one joint, a bad file, or a YAML LeRobot cannot describe
is an error naming the motor (or joint) and the file.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test"))
sys.path.insert(0, str(REPO / "test" / "hardware" / "feetech"))

from lerobot_scs import SCS_CALIBRATION, SCS_MOTORS  # noqa: E402
from lerobot_so101 import MOTORS, SO101_CALIBRATION, so101_urdf  # noqa: E402
from skel_ros_in_process import skel_ros_main  # noqa: E402

from skel_ros.hardware.config import load_hardware_config  # noqa: E402
from skel_ros.model import load_model  # noqa: E402

OTHER_NAMES = ("joint1", "joint2", "joint3", "joint4", "joint5", "joint6")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    exe = Path(sys.executable).parent / "skel-ros"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "skel_ros.cli.main"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120,
                          check=False)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """so101.urdf, other_names.urdf and so101_follower.json (as LeRobot wrote it)."""
    (tmp_path / "so101.urdf").write_text(so101_urdf(), encoding="utf-8")
    (tmp_path / "other_names.urdf").write_text(so101_urdf(OTHER_NAMES), encoding="utf-8")
    (tmp_path / "so101_follower.json").write_bytes(SO101_CALIBRATION.encode())
    return tmp_path


def test_a_lerobot_file_round_trips_byte_for_byte(files: Path) -> None:
    model, calib, hw, back = (files / "so101.urdf", files / "so101_follower.json",
                              files / "hw.yaml", files / "back.json")
    result = run("init-hardware", str(model), "--from-lerobot", str(calib), "-o", str(hw))
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stderr
    result = run("export-calibration", str(hw), "--to", "lerobot", "-o", str(back))
    assert result.returncode == 0, result.stderr
    assert back.read_bytes() == calib.read_bytes()
    # The YAML is one the hardware node takes for this model (limits only tighten).
    config = load_hardware_config(hw)
    bound = config.bind(config.select_skeleton(load_model(model)))
    assert bound.names == MOTORS
    assert config.lerobot_motors == tuple((m, m) for m in MOTORS)
    pan = config.joints[0]
    assert (pan.actuator.id, pan.direction, pan.gear_ratio) == (1, 1, 1.0)
    assert pan.actuator.options == {"homing_offset": -1470, "angle_limits": [758, 3292]}
    text = hw.read_text(encoding="utf-8")
    assert "export-calibration THIS_FILE --to lerobot" in text
    assert "device_watchdog: 0.0" in text


def test_an_scs_file_round_trips_without_homing_offsets(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calib, hw = files / "hand.json", files / "hand.yaml"
    calib.write_bytes(SCS_CALIBRATION.encode())
    maps = [w for m, j in zip(SCS_MOTORS, OTHER_NAMES[:3], strict=True)
            for w in ("--map", f"{m}={j}")]
    result = skel_ros_main(capsys, "init-hardware", str(files / "other_names.urdf"),
                           "--from-lerobot", str(calib), "--model", "SCS0009", "-o", str(hw),
                           *maps)
    assert result.returncode == 0, result.stderr
    config = load_hardware_config(hw)
    joints = {j.name: j for j in config.joints}
    assert list(joints) == list(OTHER_NAMES[:3])
    assert joints["joint1"].actuator.model == "SCS0009"
    assert joints["joint1"].actuator.options == {"angle_limits": [310, 702]}  # no offset
    assert joints["joint2"].direction == -1
    result = skel_ros_main(capsys, "export-calibration", str(hw), "--to", "lerobot", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert result.stdout == SCS_CALIBRATION


def test_map_names_the_joints_and_the_file_keeps_lerobots_names(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    maps = [w for m, j in zip(MOTORS, OTHER_NAMES, strict=True) for w in ("--map", f"{m}={j}")]
    hw = files / "hw.yaml"
    result = skel_ros_main(capsys, "init-hardware", str(files / "other_names.urdf"),
                           "--from-lerobot", str(files / "so101_follower.json"), "-o", str(hw),
                           *maps)
    assert result.returncode == 0, result.stderr
    config = load_hardware_config(hw)
    assert [j.name for j in config.joints] == list(OTHER_NAMES)
    assert config.lerobot_motors == tuple(zip(MOTORS, OTHER_NAMES, strict=True))
    result = skel_ros_main(capsys, "export-calibration", str(hw), "--to", "lerobot", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert result.stdout == SO101_CALIBRATION


def test_a_model_joint_without_a_motor_is_left_out_and_listed(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    five = {k: v for k, v in json.loads(SO101_CALIBRATION).items() if k != "gripper"}
    (files / "five.json").write_text(json.dumps(five, indent=4), encoding="utf-8")
    hw = files / "hw.yaml"
    result = skel_ros_main(capsys, "init-hardware", str(files / "so101.urdf"),
                           "--from-lerobot", str(files / "five.json"), "-o", str(hw))
    assert result.returncode == 0, result.stderr
    assert "\n# Not mapped, no motor of the calibration: gripper\n" in hw.read_text(
        encoding="utf-8")
    assert "(5 joints mapped, 1 DOFs not mapped)" in result.stderr
    assert [j.name for j in load_hardware_config(hw).joints] == list(MOTORS[:5])


@pytest.mark.parametrize(("args", "message"), [
    ((), (r"error: .*so101_follower\.json: motor 'shoulder_pan' \(id 1\): no one-DOF joint"
         r" 'shoulder_pan'; name its joint with --map shoulder_pan=JOINT in skeleton"
         r" 'so101' \(joints: joint1, ")),
    (("--map", "elbow=joint3"), (r"error: --map elbow=joint3: .*has no motor 'elbow'"
                                r" \(motors: shoulder_pan, ")),
    (("--map", "shoulder_pan=joint9"), (r"motor 'shoulder_pan' \(id 1\): --map"
                                       r" shoulder_pan=joint9: no one-DOF joint 'joint9'")),
    (("--map", "shoulder_pan=joint1", "--map", "shoulder_lift=joint1"),
     r"motors 'shoulder_pan' and 'shoulder_lift' both map to joint 'joint1'"),
    (("--map", "shoulder_pan"), r"error: --map shoulder_pan: expected MOTOR=JOINT"),
    (("--protocol", "dynamixel"), (r"--from-lerobot maps Feetech servos \(protocol feetech\),"
                                  r" not dynamixel")),
    (("--first-id", "3"), r"--first-id: the ids come from --from-lerobot's file"),
    (("--model", "XL430"), r"error: --model XL430: .*unknown Feetech model 'XL430'"),
])
def test_init_hardware_from_lerobot_errors_name_the_motor(
        files: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...],
        message: str) -> None:
    out = files / "hw.yaml"
    result = skel_ros_main(capsys, "init-hardware", str(files / "other_names.urdf"),
                           "--from-lerobot", str(files / "so101_follower.json"),
                           "-o", str(out), *args)
    assert result.returncode != 0
    assert re.search(message, result.stderr), result.stderr
    assert not out.exists()


def test_a_bad_calibration_file_is_an_error_at_the_file_and_key(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = files / "bad.json"
    bad.write_text(SO101_CALIBRATION.replace('"drive_mode": 0', '"drive_mode": "0"', 1),
                   encoding="utf-8")
    result = skel_ros_main(capsys, "init-hardware", str(files / "so101.urdf"),
                           "--from-lerobot", str(bad), "-o", str(files / "hw.yaml"))
    assert result.returncode == 1
    assert f"error: {bad}: motor 'shoulder_pan': drive_mode must be an integer, got '0'" in (
        result.stderr)
    result = skel_ros_main(capsys, "init-hardware", str(files / "so101.urdf"),
                           "--map", "a=b", "--protocol", "feetech", "-o", str(files / "x.yaml"))
    assert "--map names the joints of --from-lerobot's motors" in result.stderr
    result = skel_ros_main(capsys, "init-hardware", str(files / "so101.urdf"), "-o", "-")
    assert "--protocol is required (or --from-lerobot CALIB.json)" in result.stderr


def test_export_refuses_what_lerobot_cannot_hold(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hw = files / "hw.yaml"
    assert skel_ros_main(capsys, "init-hardware", str(files / "so101.urdf"), "--from-lerobot",
                         str(files / "so101_follower.json"), "-o", str(hw)).returncode == 0
    text = hw.read_text(encoding="utf-8")
    zero = next(line for line in text.splitlines() if line.startswith("    zero_offset:"))
    moved = files / "moved.yaml"
    moved.write_text(text.replace(zero, "    zero_offset: 0.1", 1), encoding="utf-8")
    line = text.splitlines().index("  shoulder_pan:") + 1
    result = skel_ros_main(capsys, "export-calibration", str(moved), "--to", "lerobot",
                           "-o", str(files / "x.json"))
    assert result.returncode == 1
    assert (f"error: {moved}:{line}: joint 'shoulder_pan': zero_offset 0.1 rad is not the"
            " middle of angle_limits [758, 3292]") in result.stderr
    assert not (files / "x.json").exists()
    plain = files / "plain.yaml"
    assert skel_ros_main(capsys, "init-hardware", str(files / "so101.urdf"), "--protocol",
                         "feetech", "-o", str(plain)).returncode == 0
    result = skel_ros_main(capsys, "export-calibration", str(plain), "--to", "lerobot",
                           "-o", "-")
    assert result.returncode == 1
    assert "joint 'shoulder_pan': no options.homing_offset" in result.stderr
