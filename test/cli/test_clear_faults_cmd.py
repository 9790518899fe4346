"""``skel-ros clear-faults``: the bench's way out of a device fault (Dynamixel emulator)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from skel_ros_in_process import skel_ros_main

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.emulation.dynamixel import DynamixelEmulator

dynamixel = pytest.importorskip("skel_ros.emulation.dynamixel")

REPO = Path(__file__).resolve().parents[2]
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"


@pytest.fixture
def emulator() -> Iterator[DynamixelEmulator]:
    from skel_ros.hardware.config import load_hardware_config

    config = load_hardware_config(ARM_YAML)
    emu = dynamixel.start_emulator({"baudrate": 1_000_000},
                                   [j.actuator for j in config.joints], {})
    yield emu
    emu.stop()


def _clear_faults(*args: str) -> subprocess.CompletedProcess[str]:
    """``skel-ros clear-faults`` in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "skel_ros.cli.main", "clear-faults", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=60, check=False)


def test_reboots_the_servo_in_fault_only(emulator: DynamixelEmulator) -> None:
    emulator.inject_fault(3, 0x20)  # overload
    run = _clear_faults(str(ARM_YAML), "--port", emulator.transport["port"])
    assert run.returncode == 0, run.stderr
    line = next(x for x in run.stdout.splitlines() if "id 3 " in x)
    assert "(elbow)" in line
    assert "reboot" in line.lower()
    assert emulator.register(3, "Hardware Error Status") == 0
    assert not emulator.state(3).torque_enabled
    assert "reboot" not in run.stdout.split("id 3 ")[0].lower()  # ids 1, 2: left alone


def test_a_fault_that_stays_exits_1(emulator: DynamixelEmulator,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    emulator.inject_fault(2, 0x20, persistent=True)  # the cause is still there
    run = skel_ros_main(capsys, "clear-faults", str(ARM_YAML), "--port",
                        emulator.transport["port"])
    assert run.returncode == 1
    assert "id 2: still in fault" in run.stderr


def test_bad_invocations_say_what_is_wrong(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    missing = skel_ros_main(capsys, "clear-faults", str(ARM_YAML), "--port",
                            str(tmp_path / "ttyNone"))
    assert missing.returncode == 1
    assert "ttyNone" in missing.stderr
    assert "Traceback" not in missing.stderr
    bus = skel_ros_main(capsys, "clear-faults", str(ARM_YAML), "--bus", "nope")
    assert bus.returncode == 2
    assert "no bus 'nope'" in bus.stderr
