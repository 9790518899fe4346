"""``skel-ros compare``: record a running graph (``--record``), read a recording, report."""

from __future__ import annotations

import math
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REPO = Path(__file__).resolve().parents[2]
SKEL_ROS = REPO / ".venv" / "bin" / "skel-ros"
JOINTS = ["elbow", "wrist"]
OFFSET = 0.01  # rad: the fake "real" robot sits this far above the command


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SKEL_ROS), *args], capture_output=True, text=True, timeout=120,
                          env=env, check=False)


def test_missing_recording_is_a_clear_error(tmp_path: Path) -> None:
    result = _run("compare", str(tmp_path / "none.mcap"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert "none.mcap" in result.stderr


def test_bad_model_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.skel"
    bad.write_text("<skel><world>", encoding="utf-8")
    result = _run("compare", str(tmp_path / "none.mcap"), "--skel", str(bad))
    assert result.returncode == 1
    assert "bad.skel:1" in result.stderr


@pytest.mark.parametrize("duration", ["0", "-1", "nan"])
def test_bad_duration_is_refused(tmp_path: Path, duration: str) -> None:
    result = _run("compare", str(tmp_path / "r.mcap"), "--record", "--duration", duration)
    assert result.returncode == 2
    assert "--duration must be a positive number" in result.stderr
    assert not (tmp_path / "r.mcap").exists()


@pytest.fixture
def publishers(ros_env: dict[str, str]) -> Iterator[Callable[[float], None]]:
    """A node publishing a command stream and two joint_states streams that follow it."""
    import rclpy
    from sensor_msgs.msg import JointState

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("fake_robots", context=context)
    pubs = {name: node.create_publisher(JointState, topic, 10) for name, topic in (
        ("command", "/joint_commands"), ("sim", "/sim/joint_states"),
        ("real", "/real/joint_states"))}

    def publish(t: float) -> None:
        for name, pub in pubs.items():
            msg = JointState()
            msg.header.stamp = node.get_clock().now().to_msg()
            msg.name = JOINTS
            base = math.sin(t)
            value = {"command": base, "sim": base, "real": base + OFFSET}[name]
            msg.position = [value, -value]
            pub.publish(msg)

    yield publish
    node.destroy_node()
    rclpy.shutdown(context=context)


@pytest.mark.ros
def test_record_then_compare(ros_env: dict[str, str], tmp_path: Path,
                             publishers: Callable[[float], None]) -> None:
    from skel_ros.analysis import read_recording

    recording = tmp_path / "run.mcap"
    proc = subprocess.Popen(
        [str(SKEL_ROS), "compare", str(recording), "--record", "--duration", "6",
         "--skel", str(example("arm.skel")), "--format", "md", "--out", str(tmp_path / "rep")],
        env=ros_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    start = time.monotonic()
    while proc.poll() is None and time.monotonic() - start < 60:
        publishers(time.monotonic() - start)
        time.sleep(0.02)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, output
    assert "recording /joint_commands, /joint_trajectory, /sim/joint_states" in output
    assert "report: " in output
    streams = read_recording(recording)
    assert set(streams) == {"command", "sim", "real"}, output
    assert all(len(s) > 20 for s in streams.values()), output
    report = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1]
            for line in report.splitlines() if line.startswith(("| elbow", "| wrist"))}
    assert set(rows) == set(JOINTS), report
    for cells in rows.values():
        rms_sim_real, rms_sim_command = float(cells[0]), float(cells[3])
        assert rms_sim_real == pytest.approx(OFFSET, rel=0.1)  # the constant offset
        assert rms_sim_command < OFFSET / 5  # the same signal, sampled apart
    assert (tmp_path / "rep" / "joint_elbow.png").exists()
