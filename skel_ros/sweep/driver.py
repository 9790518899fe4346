"""Run a sweep's trials on a backend, resumably, with progress on the terminal.

:func:`run_sweep` lists the trials of a spec, leaves out those that already have a
result (``OUT/trials/<id>/result.json``: a sweep started again runs only the others),
runs the rest on a backend and writes each result when its trial ended, then the
aggregated report (:mod:`skel_ros.sweep.report`). Backends (:data:`BACKENDS`):

* ``local``: a pool of threads on this machine, each waiting for one trial's process
  (the trials are processes; the threads only wait), ``workers`` at once;
* ``ray``: each trial a Ray task that runs the same process on a worker of the cluster
  at ``address``, or of a local one started for the sweep (bound to 127.0.0.1, no
  dashboard) and stopped after it.

Progress: one line per finished trial (its verdict and the counts done / failed or not judged /
running / left, and the time left at the pace so far).

No ROS: each trial's own process runs it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.sweep.errors import SweepError
from skel_ros.sweep.trial import (
    RUNNING,
    TrialJob,
    commands_for,
    read_result,
    run_trial,
    sim_to_real_command,
    write_result,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skel_ros.sweep.spec import Spec, Trial

__all__ = ["BACKENDS", "MissingExtraError", "Progress", "default_workers", "run_sweep"]

BACKENDS = ("local", "ray")
RAY_RETRIES = 2  # a trial whose Ray worker died is run again, from an emptied folder


class MissingExtraError(SweepError):
    """The backend's optional dependency is not installed (``pip install skel_ros[ray]``)."""


def default_workers() -> int:
    """Trials at once on this machine: one per CPU it lets this process use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclass
class Progress:
    """Counts of a sweep's trials, said one line per finished trial."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    write: Callable[[str], object] = print
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._start = self.clock()
        self._finished_here = 0

    def started(self) -> None:
        """A trial's process started (local backend)."""
        with self._lock:
            self.running += 1

    def finished(self, job: TrialJob, result: dict[str, Any] | None, *, counted: bool = True,
                 why: str = "") -> None:
        """A trial ended (``result`` None: it has no result, e.g. its worker was lost)."""
        with self._lock:
            self.running = max(0, self.running - 1) if counted else self.running
            left = self.total - self.done - 1
            if result is not None:
                self.done += 1
                self.failed += result["verdict"] != "passed"
                self._finished_here += 1
                what = f"{result['verdict']} ({result['seconds']:.1f} s)"
                if result.get("reason"):
                    what += f": {result['reason'][:120]}"
            else:
                left += 1
                what = f"lost ({why or 'no result'}): run again by the next sweep"
            elapsed = self.clock() - self._start
            rest = (f"~{_duration(elapsed / self._finished_here * left)} left"
                    if self._finished_here and left else "")
            self.write(f"[{self.done}/{self.total}] {job.trial_id} {what}  | done {self.done},"
                       f" failed or not judged {self.failed}, running {self.running},"
                       f" left {self.total - self.done}" + (f", {rest}" if rest else ""))


def _duration(seconds: float) -> str:
    if seconds < 90:  # noqa: PLR2004 - below a minute and a half, in seconds
        return f"{seconds:.0f} s"
    if seconds < 5400:  # noqa: PLR2004 - below an hour and a half, in minutes
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def run_sweep(spec: Spec, out: Path, *, backend: str = "local", workers: int | None = None,
              address: str | None = None, timeout: float = 600.0,
              command: Callable[[Spec, Trial, Path], Sequence[str]] = sim_to_real_command,
              write: Callable[[str], object] = print) -> list[TrialJob]:
    """Run every trial of ``spec`` without a result in ``out``; every trial's job.

    Args:
        spec: the sweep.
        out: the output folder (``trials/<id>/`` each).
        backend: ``"local"`` or ``"ray"``.
        workers: trials at once (default: :func:`default_workers`); with ``ray`` and an
            ``address``, the cluster decides (one CPU per trial).
        address: ``ray``: an existing cluster (``host:port`` or ``auto``).
        timeout: seconds per trial before it is stopped and counted not judged.
        command: the command line of a trial (default: ``skel-ros sim-to-real``).
        write: where progress lines go.

    Raises:
        SweepError: an unknown backend; MissingExtraError: ``ray`` is not installed.
        KeyboardInterrupt: Ctrl-C; every running trial was stopped first, the results of
            those that ended are kept.
    """
    if backend not in BACKENDS:
        raise SweepError(f"unknown backend {backend!r}; known: {', '.join(BACKENDS)}")
    jobs = commands_for(spec, out, command, timeout)
    todo = [j for j in jobs if read_result(Path(j.folder)) is None]
    workers = workers or default_workers()
    progress = Progress(len(jobs), done=len(jobs) - len(todo), write=write)
    progress.failed = sum(read_result(Path(j.folder))["verdict"] != "passed"  # type: ignore[index]
                          for j in jobs if j not in todo)
    where = (f"ray at {address}" if backend == "ray" and address else f"{backend}, {workers}"
             " workers")
    write(f"sweep: {len(jobs)} trials, {len(jobs) - len(todo)} with a result already,"
          f" {len(todo)} to run ({where})")
    if not todo:
        return jobs

    def finished(job: TrialJob, result: dict[str, Any] | None, *, counted: bool = True,
                 why: str = "") -> None:
        if result is not None:
            write_result(Path(job.folder), result)
        progress.finished(job, result, counted=counted, why=why)

    if backend == "local":
        _run_local(todo, workers, progress, finished)
    else:
        _run_ray(todo, workers, address, progress, finished)
    return jobs


def _run_local(jobs: Sequence[TrialJob], workers: int, progress: Progress,
               finished: Callable[..., None]) -> None:
    def run(job: TrialJob) -> dict[str, Any] | None:
        if RUNNING.stopping:
            return None
        progress.started()
        return run_trial(job)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trial")
    futures: dict[Future[dict[str, Any] | None], TrialJob] = {
        pool.submit(run, job): job for job in jobs}
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    result = future.result()
                except OSError as exc:  # its folder could not be written
                    finished(futures[future], None, why=str(exc))
                    continue
                if result is not None:
                    finished(futures[future], result)
    except BaseException:  # Ctrl-C, or a result that could not be written or read
        RUNNING.stop_all()  # the trials are in sessions of their own: Ctrl-C did not reach them
        pool.shutdown(wait=True, cancel_futures=True)  # no queued trial starts after this
        raise
    pool.shutdown(wait=True)


def _run_ray(jobs: Sequence[TrialJob], workers: int, address: str | None,
             progress: Progress, finished: Callable[..., None]) -> None:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("--backend ray needs Ray: pip install skel_ros[ray]") from None
    if address:
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except (ConnectionError, TimeoutError, ValueError, RuntimeError) as exc:
            raise SweepError(f"cannot connect to the Ray cluster at {address}: {exc}") from None
    else:
        _start_local_ray(ray, workers, progress.write)
    try:
        task = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(run_trial)
        refs = {task.remote(job): job for job in jobs}
        cpus = int(ray.cluster_resources().get("CPU", workers))
        pending = list(refs)
        try:
            while pending:
                progress.running = min(cpus, len(pending))
                ready, pending = ray.wait(pending, num_returns=1)
                for ref in ready:
                    why = ""
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayError as exc:  # a lost worker, or an OSError
                        result, why = None, str(exc).strip().splitlines()[0][:200]
                    progress.running = min(cpus, len(pending))
                    finished(refs[ref], result, counted=False, why=why)
        except KeyboardInterrupt:
            for ref in pending:
                ray.cancel(ref, force=True)  # the worker dies; its trial gets SIGINT
            raise
    finally:
        ray.shutdown()


LOOPBACK = "127.0.0.1"


def _start_local_ray(ray: Any, workers: int, write: Callable[[str], object]) -> None:  # noqa: ANN401
    """A Ray cluster on this machine for the sweep, every server bound to 127.0.0.1.

    Ray's job API (and its other servers) must not be reachable from the network. Ray
    replaces a ``127.0.0.1`` node address by this machine's network address (so that
    other machines could join) unless clusters are switched off, as Ray does on macOS
    and Windows; it is switched off here, for the start only, and the node's address is
    checked: anything but loopback stops the sweep before a trial runs.

    Ray also starts its workers at nice 15, and a trial inherits it: on a machine where
    anything else runs, its nodes would starve (runs not judged, twice as long). The
    cluster's workers run at the niceness of this process instead.

    Raises:
        SweepError: the cluster's node is not on 127.0.0.1.
    """
    from ray._private import ray_constants  # the switch is read at import: set it here too

    saved = {name: os.environ.get(name) for name in _RAY_SETTINGS}
    os.environ.update(_RAY_SETTINGS)
    switch = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.WARNING)
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = switch
        for name, value in saved.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    addresses = {n.get("NodeManagerAddress") for n in ray.nodes()}
    if addresses != {LOOPBACK}:
        with contextlib.suppress(Exception):
            ray.shutdown()
        raise SweepError(f"the local Ray cluster is not bound to {LOOPBACK} only (its node:"
                         f" {', '.join(map(str, addresses))}); start one yourself and give"
                         " its --address (docs/sweep.md)")
    write(f"ray: a local cluster on {LOOPBACK} ({workers} CPUs), stopped after the sweep")


_RAY_SETTINGS = {
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",  # Ray's switch: "0" keeps a node on loopback
    "RAY_worker_niceness": "0",  # added to this process's niceness (Ray's default: 15)
}
