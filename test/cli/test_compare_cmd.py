"""``skel-ros compare``: record a running graph (``--record``), read a recording, report."""

from __future__ import annotations

import json
import math
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pytest
from joint_state_mcap import joint_state, write_joint_states

from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

REPO = Path(__file__).resolve().parents[2]
SKEL_ROS = REPO / ".venv" / "bin" / "skel-ros"
JOINTS = ["elbow", "wrist"]
OFFSET = 0.1  # rad: the fake "real" robot sits this far above the command
# rad/s: the command's frequency. Slow, because the command is recorded when it arrives
# and the robots at their header stamps: a delivery delay d then differs by ~0.18 d from
# the robots (RMS), which stays under OFFSET / 5 up to d ~ 0.1 s (a loaded machine).
FREQUENCY = 0.25


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SKEL_ROS), *args], capture_output=True, text=True, timeout=120,
                          env=env, check=False)


def test_missing_recording_is_a_clear_error(tmp_path: Path) -> None:
    result = _main("compare", str(tmp_path / "none.mcap"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: ")
    assert "none.mcap" in result.stderr


def test_bad_model_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.skel"
    bad.write_text("<skel><world>", encoding="utf-8")
    result = _main("compare", str(tmp_path / "none.mcap"), "--skel", str(bad))
    assert result.returncode == 1
    assert "bad.skel:1" in result.stderr


@pytest.mark.parametrize("duration", ["0", "-1", "nan"])
def test_bad_duration_is_refused(tmp_path: Path, duration: str) -> None:
    """The first case runs the console script (its exit status as a user gets it); the
    others main(argv) in this process, as _gate does (a new interpreter costs a second)."""
    args = ("compare", str(tmp_path / "r.mcap"), "--record", "--duration", duration)
    result = _run(*args) if duration == "0" else _main(*args)
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
            base = math.sin(FREQUENCY * t)
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


# ---------------------------------------------------------------- the gate: criteria, exit codes

GATE_CRITERIA = """\
min_duration: 3.0
min_rate: 20
all:
  sim_real: {rms: 0.05, max: 0.1}
  real_command: {max: 0.1}
"""


def _write_run(path: Path, *, real_offset: float = 0.01, seconds: float = 5.0,
               streams: tuple[str, ...] = ("command", "sim", "real"), stamped: bool = False,
               real_stall: tuple[float, float] | None = None) -> Path:
    """A recording as ``skel-ros sim-to-real`` writes one (JointState streams at 50 Hz).

    ``stamped``: the measured streams carry their log times as header stamps (else 0, as
    an old recording); ``real_stall``: no hardware message from .. to (s into the run).
    """
    def messages() -> Iterator[tuple[int, str, dict[str, Any]]]:
        for k in range(int(seconds * 50)):
            t = k / 50
            base = math.sin(t)
            for stream in streams:
                if stream == "real" and real_stall and real_stall[0] < t < real_stall[1]:
                    continue
                value = base + {"command": 0.0, "sim": 0.0, "real": real_offset}[stream]
                ns = int(1e9 * (1000 + t)) + 1000 * len(stream)
                stamp = divmod(ns, 10**9) if stamped and stream != "command" else (0, 0)
                yield ns, stream, joint_state(stamp, JOINTS, [value, -value])

    write_joint_states(path, messages())
    return path


@pytest.fixture
def criteria(tmp_path: Path) -> Path:
    path = tmp_path / "criteria.yaml"
    path.write_text(GATE_CRITERIA, encoding="utf-8")
    return path


class Gate(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def _gate(tmp_path: Path, criteria: Path, *recordings: Path) -> Gate:
    """``skel-ros compare ... --criteria`` in this process (a new interpreter costs seconds)."""
    import contextlib
    import io

    from skel_ros.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["compare", *map(str, recordings), "--criteria", str(criteria),
                     "--format", "md", "--out", str(tmp_path / "report"),
                     "--junit", str(tmp_path / "junit.xml"),
                     "--json", str(tmp_path / "report.json")])
    return Gate(code, out.getvalue(), err.getvalue())


def test_gate_passes_with_status_0(tmp_path: Path, criteria: Path) -> None:
    from skel_ros.cli import exit_codes

    result = _gate(tmp_path, criteria, _write_run(tmp_path / "good.mcap"))
    assert result.returncode == exit_codes.OK, result.stdout + result.stderr
    assert "verdict: PASSED" in result.stdout
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert report.index("**Verdict: PASSED**") < report.index("| elbow |")
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert data["verdict"] == "passed"
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert root.get("failures") == "0"
    assert root.get("errors") == "0"
    assert int(root.get("tests", "0")) == 1 + 3 + 2 + 2 * 3  # duration, rates, gaps, 3 bounds x 2


def test_gate_fails_with_status_3(tmp_path: Path, criteria: Path) -> None:
    from skel_ros.cli import exit_codes

    result = _gate(tmp_path, criteria, _write_run(tmp_path / "off.mcap", real_offset=0.3))
    assert result.returncode == exit_codes.FAILED, result.stdout + result.stderr
    assert "verdict: FAILED" in result.stdout
    assert "elbow: max error sim-real = 0.3 > bound 0.1 (by 0.2)" in result.stdout
    assert f"{criteria}:4" in result.stdout
    failures = [c for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
                if c.find("failure") is not None]
    assert len(failures) == 2 * 3  # both joints, every bound


@pytest.mark.parametrize(("run", "reason"), [
    ({"seconds": 2.0}, "too short"),
    ({"streams": ("command", "sim")}, "no real stream"),
    ({"streams": ("sim",)}, "need at least two non-empty streams"),
])
def test_gate_cannot_judge_with_status_4(tmp_path: Path, criteria: Path, run: dict,
                                         reason: str) -> None:
    from skel_ros.cli import exit_codes

    result = _gate(tmp_path, criteria, _write_run(tmp_path / "r.mcap", **run))
    assert result.returncode == exit_codes.NOT_JUDGED, result.stdout + result.stderr
    assert "verdict: NOT JUDGED" in result.stdout
    assert reason in result.stdout + result.stderr
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert int(root.get("errors", "0")) >= 1


def test_a_starved_stream_is_not_judged_with_status_4(tmp_path: Path, criteria: Path) -> None:
    """The hardware node sent nothing for 0.7 s: status 4, the stream, when and how long,
    in the output, the JUnit file and the JSON (with the time bases used)."""
    from skel_ros.cli import exit_codes

    result = _gate(tmp_path, criteria, _write_run(tmp_path / "r.mcap", stamped=True,
                                                  real_stall=(2.0, 2.7)))
    assert result.returncode == exit_codes.NOT_JUDGED, result.stdout + result.stderr
    assert "verdict: NOT JUDGED" in result.stdout
    assert "the real stream starved: no sample for 0.700 s from 2.00 s" in result.stdout
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    (run,) = data["runs"]
    assert run["metrics"]["time_bases"] == {"command": "log", "sim": "stamp", "real": "stamp"}
    assert data["criteria"]["max_gap"] == 0.2
    (gap,) = [c for c in run["checks"] if c["outcome"] == "not judged"]
    assert (gap["metric"], gap["stream"]) == ("gap", "real")
    errors = [c for c in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
              if c.find("error") is not None]
    assert [c.get("name") for c in errors] == ["gaps real"]
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "sim, real at their header stamps; command at their receive times" in report


def test_bad_criteria_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    from skel_ros.cli import exit_codes

    bad = tmp_path / "bad.yaml"
    bad.write_text("all:\n  sim_real: {max: -0.1}\n", encoding="utf-8")
    result = _gate(tmp_path, bad, _write_run(tmp_path / "good.mcap"))
    assert result.returncode == exit_codes.ERROR
    assert f"error: {bad}:2: all sim_real max must be a finite number >= 0" in result.stderr
    assert not (tmp_path / "junit.xml").exists()


def test_several_runs_one_verdict(tmp_path: Path, criteria: Path) -> None:
    from skel_ros.cli import exit_codes

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    good = _write_run(tmp_path / "a" / "run.mcap")
    off = _write_run(tmp_path / "b" / "run.mcap", real_offset=0.3)
    result = _gate(tmp_path, criteria, good, off)
    assert result.returncode == exit_codes.FAILED, result.stdout + result.stderr
    assert "b_run: elbow: max error sim-real" in result.stdout
    data = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert [(r["name"], r["verdict"]) for r in data["runs"]] == [("a_run", "passed"),
                                                                 ("b_run", "failed")]
    suites = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["a_run", "b_run"]
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert report.index("## a_run: passed") < report.index("## b_run: failed")
    assert (tmp_path / "report" / "b_run" / "joint_elbow.png").exists()
    # one run that cannot be judged makes the whole gate not judged
    short = _write_run(tmp_path / "short.mcap", seconds=2.0)
    assert _gate(tmp_path, criteria, good, off, short).returncode == exit_codes.NOT_JUDGED


def _main(*argv: str) -> Gate:
    import contextlib
    import io

    from skel_ros.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return Gate(code, out.getvalue(), err.getvalue())


def test_junit_without_criteria_is_a_usage_error(tmp_path: Path) -> None:
    from skel_ros.cli import exit_codes

    result = _main("compare", str(_write_run(tmp_path / "r.mcap")), "--junit",
                   str(tmp_path / "j.xml"))
    assert result.returncode == exit_codes.USAGE
    assert "--junit needs --criteria" in result.stderr


@pytest.mark.parametrize("mistake", ["criteria", "trajectory", "hardware"])
def test_sim_to_real_checks_its_files_before_starting(tmp_path: Path, mistake: str) -> None:
    """A bad criteria, trajectory or hardware file: status 1 at its line, nothing started."""
    from skel_ros.cli import exit_codes

    bad = tmp_path / "bad.yaml"
    bad.write_text("all:\n  sim_real: {max: -1}\n" if mistake == "criteria" else
                   "joint_names: [elbow]\npoints: 3\n" if mistake == "trajectory" else
                   "buses: {}\njoints: {}\nspeed: 3\n", encoding="utf-8")
    option = {"criteria": "--criteria", "trajectory": "--trajectory",
              "hardware": "--hardware-config"}[mistake]
    result = _main("sim-to-real", option, str(bad), "--out", str(tmp_path / "out"))
    assert result.returncode == exit_codes.ERROR, result
    assert result.stderr.startswith(f"error: {bad}:"), result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("damage", ["empty", "garbage", "truncated"])
def test_an_unreadable_recording_is_bad_input_status_1_without_a_report(
        tmp_path: Path, criteria: Path, damage: str) -> None:
    from skel_ros.cli import exit_codes

    path = tmp_path / "r.mcap"
    data = _write_run(tmp_path / "good.mcap").read_bytes()
    path.write_bytes({"empty": b"", "garbage": b"garbage " * 64,
                      "truncated": data[: len(data) // 2]}[damage])
    result = _gate(tmp_path, criteria, path)
    assert result.returncode == exit_codes.ERROR, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: {path}: cannot read the recording: ")
    reason = result.stderr.split("cannot read the recording: ", 1)[1].strip()
    assert reason  # says why, also for an empty file
    assert not (tmp_path / "report").exists()
    assert not (tmp_path / "junit.xml").exists()


@pytest.mark.parametrize("rate", ["0", "nan", "-5", "inf", "fast"])
def test_a_bad_rate_is_a_usage_error_before_anything_runs(tmp_path: Path, rate: str) -> None:
    """argparse's own status 2; the first case as a user gets it from the console script."""
    args = ("compare", str(_write_run(tmp_path / "r.mcap")), "--rate", rate,
            "--out", str(tmp_path / "report"))
    if rate == "0":
        result = _run(*args)
        code, stderr = result.returncode, result.stderr
    else:
        with pytest.raises(SystemExit) as exit_info:
            _main(*args)
        code, stderr = exit_info.value.code, ""
    assert code == 2
    assert "--rate" in stderr or rate != "0"
    assert not (tmp_path / "report").exists()


def test_a_joint_missing_from_the_hardware_stream_is_not_judged(tmp_path: Path) -> None:
    """Criteria with only `all:`: every joint of the command must be judged; one the
    hardware does not publish makes the run not judged, naming the joint and the stream.
    Without criteria the report says which joint was left out and why."""
    from skel_ros.cli import exit_codes

    def messages() -> Iterator[tuple[int, str, dict[str, Any]]]:
        for k in range(250):
            t = k / 50
            ns = int(1e9 * (1000 + t))
            for stream in ("command", "sim", "real"):
                names = JOINTS if stream != "real" else JOINTS[:1]
                yield ns + len(stream), stream, joint_state((0, 0), names,
                                                            [math.sin(t)] * len(names))

    recording = write_joint_states(tmp_path / "r.mcap", messages())
    criteria = tmp_path / "all.yaml"
    criteria.write_text("all:\n  sim_real: {rms: 0.05}\n", encoding="utf-8")
    result = _gate(tmp_path, criteria, recording)
    assert result.returncode == exit_codes.NOT_JUDGED, result.stdout + result.stderr
    assert "wrist: present: not judged" in result.stdout
    assert "real stream" in result.stdout
    plain = _main("compare", str(recording), "--format", "md", "--out", str(tmp_path / "p"))
    assert plain.returncode == exit_codes.OK, plain.stderr
    report = (tmp_path / "p" / "report.md").read_text(encoding="utf-8")
    assert "Left out: wrist (the joint is not in the real stream(s)" in report
