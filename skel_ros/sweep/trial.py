"""One trial of a sweep: its command, its run as a child process, its result.

A trial is one ``skel-ros sim-to-real`` run (:func:`sim_to_real_command`) in its own
folder ``OUT/trials/<id>/``: ``truth.yaml`` (when it has one), the run's recording,
logs and report, ``verdict.json`` and ``junit.xml`` (``--json``, ``--junit``) and
``trial.log`` (what it printed). :func:`run_trial` runs one such command and returns
the trial's result; the driver writes it to ``result.json`` (:func:`write_result`,
atomically) once the trial ended, so a trial whose worker or driver was killed has no
result and is run again, from an emptied folder, by the next ``sweep``.

Each trial finds its own ROS domain: ``ROS_DOMAIN_ID`` is taken out of its environment,
so ``sim-to-real`` claims a free one (:func:`skel_ros.nodes.sim_to_real.claim_domain`);
discovery stays on localhost. A trial past its time limit gets SIGINT (``sim-to-real``
then stops its nodes), and SIGKILL on its process group :data:`GRACE` seconds later; it
is *not judged*. On Linux each trial also gets SIGINT when the thread that started it
dies (a killed driver or Ray worker), so no trial outlives whoever waits for it.

A trial starts with no signal blocked, whatever its starter blocks
(:func:`skel_ros.child_process.ending_with_parent`): a Ray worker blocks SIGINT, and
every process below inherits a blocked mask. Under Ray every SIGINT of a
trial waited for the SIGKILL after it: ``sim-to-real`` stopping its nodes at the end of
a run (10 s lost by every trial), the time limit, and the signal of a lost worker.

No ROS: the trial's own process runs it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.child_process import ending_with_parent

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skel_ros.sweep.spec import Spec, Trial

__all__ = ["PYTHON", "RESULT", "RUNNING", "TrialJob", "commands_for", "read_result",
           "run_trial", "sim_to_real_command", "write_result"]

RESULT = "result.json"
"""A trial's result in its folder; present only for a trial that ended."""

PYTHON = "{python}"
"""A command's word replaced by the interpreter of the worker that runs it."""

VERDICT = "verdict.json"  # the run's ``--json``
RESULT_FORMAT = 1  # bumped when a key changes meaning
GRACE = 15.0  # s from SIGINT to SIGKILL of a trial past its time limit
_DOMAIN = re.compile(r"ROS domain (\d+)")
_VERDICTS = ("passed", "failed", "not judged")


@dataclass(frozen=True)
class TrialJob:
    """What a worker needs to run one trial: plain data, sent as is to a Ray task.

    Attributes:
        trial_id: the trial's id.
        command: the command line.
        folder: the trial's folder (absolute; on a cluster, a path every machine sees).
        truth_text: the trial's truth file, written to ``folder/truth.yaml`` first.
        timeout: seconds before the trial is stopped and not judged.
    """

    trial_id: str
    command: tuple[str, ...]
    folder: str
    truth_text: str | None
    timeout: float


def sim_to_real_command(spec: Spec, trial: Trial, folder: Path) -> list[str]:
    """The ``skel-ros sim-to-real`` command line of ``trial``, writing into ``folder``."""
    command = [PYTHON, "-m", "skel_ros.cli.main", "sim-to-real",
               "--skel", str(spec.path(trial.model)),
               "--hardware-config", str(spec.path(trial.hardware)),
               "--trajectory", str(spec.path(trial.trajectory)),
               "--engines", trial.engines, "--criteria", str(spec.criteria),
               "--out", str(folder), "--json", str(folder / VERDICT),
               "--junit", str(folder / "junit.xml")]
    if trial.has_truth:
        command += ["--truth", str(folder / "truth.yaml")]
    elif trial.physics is not None:
        command.append("--physics" if trial.physics else "--ideal-actuators")
    return command




def trial_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) for a trial: no ``ROS_DOMAIN_ID``, so each claims one."""
    env = dict(os.environ if base is None else base)
    env.pop("ROS_DOMAIN_ID", None)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT to the trial's process group, SIGKILL :data:`GRACE` s later."""
    for sig, wait in ((signal.SIGINT, GRACE), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        return


class Running:
    """The trials' processes running in this process, to stop them all on Ctrl-C."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self.stopping = False

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs[proc.pid] = proc
            stopping = self.stopping
        if stopping:
            _stop(proc)

    def remove(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.pop(proc.pid, None)

    def stop_all(self) -> None:
        """Stop every running trial (SIGINT, then SIGKILL) and any started from now on."""
        with self._lock:
            self.stopping = True
            procs = list(self._procs.values())
        threads = [threading.Thread(target=_stop, args=(p,)) for p in procs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


RUNNING = Running()
"""This process's running trials (a driver's local backend, a Ray worker's task)."""


def run_trial(job: TrialJob) -> dict[str, Any]:
    """Run one trial from an emptied folder; its result (see :func:`outcome`).

    Never raises for what the trial does (a crash, a hang: not judged, with the reason);
    only for a folder that cannot be written (OSError).
    """
    folder = Path(job.folder)
    if folder.exists():  # what a killed run left: never mixed with this one
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if job.truth_text is not None:
        (folder / "truth.yaml").write_text(job.truth_text, encoding="utf-8")
    started = time.monotonic()
    timed_out = False
    with (folder / "trial.log").open("wb") as log:
        command = [sys.executable if word == PYTHON else word for word in job.command]
        proc = subprocess.Popen(  # noqa: S603 - the sweep's own command lines
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=trial_environment(), start_new_session=True,
            # No signal blocked, and SIGINT when this thread ends (SIGINT given its default
            # action back: a driver started with it ignored would pass that on).
            preexec_fn=ending_with_parent(signal.SIGINT))  # noqa: PLW1509
        RUNNING.add(proc)
        try:
            proc.wait(timeout=job.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(proc)
        finally:
            RUNNING.remove(proc)
    seconds = time.monotonic() - started
    return outcome(job, proc.returncode, seconds, timed_out=timed_out)


def _tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:])


def outcome(job: TrialJob, status: int | None, seconds: float, *,
            timed_out: bool) -> dict[str, Any]:
    """The result of a trial that ended: its verdict, why, and its metrics.

    The verdict is the run's ``--json`` one (``passed``, ``failed``, ``not judged``); a
    trial stopped at its time limit, or that wrote no verdict (a crash, bad input), is
    ``not judged`` with the reason.
    """
    folder = Path(job.folder)
    log = folder / "trial.log"
    result: dict[str, Any] = {"format": RESULT_FORMAT, "id": job.trial_id,
                              "exit_status": status, "seconds": round(seconds, 3),
                              "verdict": "not judged", "reason": "", "joints": [],
                              "problems": [], "ros_domain": None}
    with contextlib.suppress(OSError):
        found = _DOMAIN.search(log.read_text(encoding="utf-8", errors="replace"))
        result["ros_domain"] = int(found.group(1)) if found else None
    if timed_out:
        result["reason"] = f"stopped at its time limit ({job.timeout:g} s)"
        return result
    try:
        data = json.loads((folder / VERDICT).read_text(encoding="utf-8"))
        runs = data["runs"]
        verdict = data["verdict"]
    except (OSError, ValueError, KeyError, TypeError):
        result["reason"] = (f"no verdict (exit status {status})"
                            + (f": {tail}" if (tail := _tail(log)) else ""))
        return result
    result["verdict"] = verdict if verdict in _VERDICTS else "not judged"
    for run in runs if isinstance(runs, list) else []:
        metrics = run.get("metrics") or {}
        for joint in metrics.get("joints", []):
            result["joints"].append({"joint": joint["joint"], "errors": joint["errors"]})
        result["problems"] += [
            {"joint": c.get("joint"), "check": c.get("check"), "outcome": c.get("outcome"),
             "message": c.get("message")}
            for c in run.get("checks", []) if c.get("outcome") in {"failed", "not judged"}]
    if result["verdict"] != "passed" and result["problems"]:
        result["reason"] = str(result["problems"][0]["message"])
    return result


def write_result(folder: Path, result: dict[str, Any]) -> Path:
    """Write ``result`` to ``folder/result.json`` at once (a temporary file renamed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / RESULT
    tmp = folder / f".{RESULT}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(result, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_result(folder: Path) -> dict[str, Any] | None:
    """A trial's result, or None when it has none (not run, or stopped before its end)."""
    try:
        data = json.loads((folder / RESULT).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("verdict") in _VERDICTS else None


def commands_for(spec: Spec, out: Path,
                 command: Callable[[Spec, Trial, Path], Sequence[str]] = sim_to_real_command,
                 timeout: float = 600.0) -> list[TrialJob]:
    """A job per trial of ``spec`` (folders under ``out/trials/``)."""
    jobs = []
    for trial in spec.trials:
        folder = (out / "trials" / trial.id).resolve()
        jobs.append(TrialJob(trial.id, tuple(command(spec, trial, folder)), str(folder),
                             spec.truth_text(trial), timeout))
    return jobs
