"""Sweeps of tiny real trial processes (``tiny_trials``): the driver, resume, a hung
trial, the aggregated report, and the Ray backend giving the local backend's verdicts.

The trials are processes that write what ``sim-to-real --json`` writes in a fraction of
a second; the code under test (job list, pool, time limit, result files, report) is the
sweep's own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from polling import wait_until
from tiny_trials import tiny_command

from skel_ros.sweep import parse_spec, run_sweep
from skel_ros.sweep.report import write_reports
from skel_ros.sweep.trial import RESULT, read_result

HERE = Path(__file__).resolve().parent
CRITERIA = "criteria: package://skel_ros/config/criteria/arm.yaml\n"
FOUR = CRITERIA + "engines: [dart, mujoco]\nvary:\n  joints.elbow.friction: [0.1, 0.3]\n"


def _runs(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def _verdicts(spec_text: str, out: Path) -> dict[str, str]:
    spec = parse_spec(spec_text, "s.yaml")
    return {t.id: (read_result(out / "trials" / t.id) or {}).get("verdict", "none")
            for t in spec.trials}


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """Four tiny trials on two workers, their report; and the progress lines."""
    out = tmp_path_factory.mktemp("local")
    log = out / "runs.log"
    lines: list[str] = []
    spec = parse_spec(FOUR, "s.yaml")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ROS_DOMAIN_ID", "77")  # the driver's: no trial may inherit it
        run_sweep(spec, out, workers=2, command=tiny_command(log), write=lines.append)
    write_reports(spec, out)
    return out, log, lines


def test_each_trial_runs_once_and_its_result_is_its_verdict(local_sweep: tuple[Path, Path,
                                                                               list[str]]) -> None:
    out, log, lines = local_sweep
    spec = parse_spec(FOUR, "s.yaml")
    assert sorted(_runs(log)) == sorted(t.id for t in spec.trials)
    for trial in spec.trials:
        result = read_result(out / "trials" / trial.id)
        assert result is not None
        friction = dict(trial.values)["joints.elbow.friction"]
        assert result["verdict"] == ("failed" if friction > 0.2 else "passed")
        assert result["exit_status"] == (3 if friction > 0.2 else 0)
        # ROS_DOMAIN_ID taken out: each sim-to-real claims a free domain of its own
        assert "ROS domain unset\n" in (out / "trials" / trial.id / "trial.log").read_text()
    assert lines[0] == "sweep: 4 trials, 0 with a result already, 4 to run (local, 2 workers)"
    assert len(lines) == 5
    assert lines[-1].startswith("[4/4] ")
    assert lines[-1].endswith("| done 4, failed or not judged 2, running 0, left 0")


def test_the_report_aggregates_and_links_the_failed_trials(local_sweep: tuple[Path, Path,
                                                                              list[str]]) -> None:
    out, _, _ = local_sweep
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["trials"], summary["passed"], summary["failed"]) == (4, 2, 2)
    assert summary["pass_rate"] == 0.5
    assert summary["verdict"] == "failed"
    assert summary["worst_joints"][0] == {"joint": "elbow", "failing_trials": 2,
                                          "max_error": pytest.approx(0.4),
                                          "mean_error": pytest.approx(0.3)}
    by_friction = summary["by_parameter"]["vary:joints.elbow.friction"]
    assert [(r["value"], r["passed"], r["max_error"]) for r in by_friction] == [
        (0.1, 2, pytest.approx(0.2)), (0.3, 0, pytest.approx(0.4))]
    page = (out / "report.html").read_text()
    failed = [r["id"] for r in summary["results"] if r["verdict"] == "failed"]
    for trial_id in failed:
        assert f"<a href='trials/{trial_id}/report.html'>{trial_id}</a>" in page
    assert page.count("<img ") == 2  # one plot per swept axis: engines, friction
    junit = ET.parse(out / "junit.xml").getroot()
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("4", "2", "0")


def test_a_hung_trial_is_stopped_and_not_judged(tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    text = CRITERIA + "vary:\n  joints.elbow.friction: [0.1, 0.95]\n"
    spec = parse_spec(text, "s.yaml")
    lines: list[str] = []
    run_sweep(spec, tmp_path, workers=2, timeout=1.0, command=tiny_command(log),
              write=lines.append)
    hung = next(t for t in spec.trials if dict(t.values)["joints.elbow.friction"] > 0.9)
    result = read_result(tmp_path / "trials" / hung.id)
    assert result is not None
    assert result["verdict"] == "not judged"
    assert result["reason"] == "stopped at its time limit (1 s)"
    pid = int((tmp_path / "trials" / hung.id / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped and reaped
    sweep, _ = write_reports(spec, tmp_path)
    assert sweep.outcome.value == "not judged"


DRIVER = """
import signal, sys
from pathlib import Path
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a script's background job: its children too
sys.path.insert(0, sys.argv[1])
from tiny_trials import tiny_command
from skel_ros.sweep import parse_spec, run_sweep
out = Path(sys.argv[2])
run_sweep(parse_spec(sys.argv[3], "s.yaml"), out, workers=1,
          command=tiny_command(out / "runs.log"))
"""


def test_a_killed_driver_resumes_without_running_a_trial_twice_or_losing_one(
        tmp_path: Path) -> None:
    """Kill -9 the driver while its third trial runs: that trial's process ends with it (even
    though the driver ignored SIGINT, the signal it is sent) and leaves no result; the same
    sweep run again runs that trial and the three never run."""
    text = CRITERIA + "vary:\n  joints.elbow.friction: [0.0, 0.05, 0.1, 0.15, 0.25, 0.3]\n"
    spec = parse_spec(text, "s.yaml")
    ids = [t.id for t in spec.trials]
    log = tmp_path / "runs.log"
    (tmp_path / f"hang-{ids[2]}").touch()  # the third trial hangs while the file is there
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(HERE), str(tmp_path), text],
                              stdout=subprocess.DEVNULL)
    try:
        pid_file = tmp_path / "trials" / ids[2] / "pid"
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text() != "", 60.0)
        driver.send_signal(signal.SIGKILL)
    finally:
        driver.wait(timeout=60)
    trial_pid = int(pid_file.read_text())
    assert wait_until(lambda: not _alive(trial_pid), 30.0)  # it died with its driver
    assert [read_result(tmp_path / "trials" / i) is not None for i in ids] == [
        True, True, False, False, False, False]
    assert _runs(log) == ids[:3]
    (tmp_path / f"hang-{ids[2]}").unlink()
    lines: list[str] = []
    run_sweep(spec, tmp_path, workers=1, command=tiny_command(log), write=lines.append)
    assert lines[0] == "sweep: 6 trials, 2 with a result already, 4 to run (local, 1 workers)"
    assert _runs(log) == ids[:3] + ids[2:]  # the stopped one again, then the others, once
    assert all((tmp_path / "trials" / i / RESULT).is_file() for i in ids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ray_backend_gives_the_local_backends_verdicts(
        local_sweep: tuple[Path, Path, list[str]], tmp_path: Path) -> None:
    pytest.importorskip("ray")
    local_out, _, _ = local_sweep
    log = tmp_path / "runs.log"
    lines: list[str] = []
    run_sweep(parse_spec(FOUR, "s.yaml"), tmp_path, backend="ray", workers=2,
              command=tiny_command(log), write=lines.append)
    assert lines[:2] == ["sweep: 4 trials, 0 with a result already, 4 to run (ray, 2 workers)",
                         "ray: a local cluster on 127.0.0.1 (2 CPUs), stopped after the sweep"]
    assert len(_runs(log)) == 4
    for folder in (tmp_path / "trials").iterdir():
        printed = (folder / "trial.log").read_text()
        assert f"niceness {os.nice(0)}\n" in printed  # not Ray's nice 15 (starved under load)
        # Not the SIGINT its Ray worker blocks: every SIGINT below (sim-to-real stopping its
        # nodes, the time limit, a lost worker's) would wait for a SIGKILL.
        assert "blocked []\n" in printed
    assert _verdicts(FOUR, tmp_path) == _verdicts(FOUR, local_out)
    assert set(_verdicts(FOUR, tmp_path).values()) == {"passed", "failed"}
