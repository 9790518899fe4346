"""Benchmark: how much faster does ``skel-ros sweep`` run trials than one after the other?

Issue 32, goals. N trials of the bundled arm (``examples/arm.skel`` on its emulated
Dynamixel servos, physics-backed, playing ``examples/arm_trajectory.xml``; the trials
differ by the truth's noise seed only, ``seeds: {count: N}``) are run three times, each
into a folder of its own, through :func:`skel_ros.sweep.run_sweep` as ``skel-ros sweep``
runs them:

1. **sequential**: the local backend with one worker (N runs one after the other);
2. **local**: the local backend with ``--workers`` (default 2);
3. **ray**: the Ray backend on a local cluster with as many CPUs (``--no-ray``: not run;
   left out, with the reason, when Ray is not installed).

``--modes`` runs some of them, in its order (``local,ray``: the Ray goal alone, without
the hour of a sequential run of 100 trials; ``ray,local``: the other way round, since the
load of a shared machine drifts between the modes).

Printed: each mode's wall time, the speed-up sequential / local (goal >= 1.6 with two
workers on a 2-core machine) and the ratio ray / local (goal <= 1.10), whether every
trial has the same verdict in every mode (and among the trials judged in both: a loaded
machine starves some runs, not judged), and how far apart the modes' metrics are (the
largest difference of a trial's largest sim-vs-real error between two modes: what the
machine's timing changes in a run), with the load average at the start and the end.

Asserts nothing; prints each goal with met / MISSED. Usage:
``.venv/bin/python bench/sweep.py [--trials N] [--workers W] [--modes M,M] [--no-ray]
[--out DIR]`` (default 100 trials, every mode: about two hours on 2 cores); ``--quick``:
2 trials, no goal judged.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = """criteria: {repo}/config/criteria/arm.yaml
models: {repo}/examples/arm.skel
trajectories: {repo}/examples/arm_trajectory.xml
hardware: {repo}/config/hardware/arm_dynamixel.yaml
seeds: {{count: {trials}}}
"""
SPEED_UP_GOAL = 1.6  # sequential / local, two workers
RAY_GOAL = 1.10  # ray / local
MODES = ("sequential", "local", "ray")


def _run(spec_path: Path, out: Path, backend: str, workers: int) -> tuple[float, dict]:
    from skel_ros.sweep import load_spec, run_sweep
    from skel_ros.sweep.report import collect

    spec = load_spec(spec_path)
    start = time.monotonic()
    run_sweep(spec, out, backend=backend, workers=workers, write=lambda _line: None)
    seconds = time.monotonic() - start
    results = {t.trial.id: (t.verdict, t.worst_error()) for t in collect(spec, out).trials}
    return seconds, results


def _goal(value: float, goal: float, *, at_least: bool, judged: bool) -> str:
    if not judged:
        return "(not judged: --quick)"
    met = value >= goal if at_least else value <= goal
    return f"(goal {'>=' if at_least else '<='} {goal:g}: {'met' if met else 'MISSED'})"


def _compare(timed: dict[str, tuple[float, dict]], *, judged: bool) -> None:
    """Print the goals of the modes run, and how far their verdicts and errors agree."""
    if "sequential" in timed and "local" in timed:
        speed_up = timed["sequential"][0] / timed["local"][0]
        print(f"speed-up sequential / local: {speed_up:.2f} "
              f"{_goal(speed_up, SPEED_UP_GOAL, at_least=True, judged=judged)}")
    if "ray" in timed and "local" in timed:
        ratio = timed["ray"][0] / timed["local"][0]
        print(f"ray / local: {ratio:.2f} {_goal(ratio, RAY_GOAL, at_least=False, judged=judged)}")
    first = next(iter(timed))
    base = timed[first][1]
    for name, (_, results) in timed.items():
        if name == first:
            continue
        same = sum(results[i][0] == base[i][0] for i in base)
        # A starved run is not judged: that says the machine's load, not the trial.
        judged = [i for i in base if {results[i][0], base[i][0]} <= {"passed", "failed"}]
        same_judged = sum(results[i][0] == base[i][0] for i in judged)
        gaps = [abs(results[i][1] - base[i][1]) for i in base
                if math.isfinite(results[i][1]) and math.isfinite(base[i][1])]
        print(f"{name} vs {first}: {same} of {len(base)} verdicts the same ({same_judged} of"
              f" the {len(judged)} judged in both); largest"
              f" difference of a trial's largest sim-real error"
              f" {max(gaps, default=math.nan):.4f} rad")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--modes", default=",".join(MODES),
                        help="the modes to run, in this order (default: %(default)s)")
    parser.add_argument("--no-ray", action="store_true", help="leave the Ray backend out")
    parser.add_argument("--quick", action="store_true", help="2 trials; no goal judged")
    parser.add_argument("--out", help="folder of the three sweeps (default: a temporary one)")
    args = parser.parse_args()
    trials = 2 if args.quick else args.trials
    if trials < 1 or args.workers < 1:
        print("bench/sweep.py: --trials and --workers must be >= 1", file=sys.stderr)
        return 2
    names = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not names or set(names) - set(MODES) or len(set(names)) != len(names):
        print(f"bench/sweep.py: --modes: each of {', '.join(MODES)} at most once, got"
              f" {args.modes!r}", file=sys.stderr)
        return 2
    if "ray" in names and args.no_ray:
        names.remove("ray")
    elif "ray" in names:
        try:
            import ray  # noqa: F401 - only whether it is there
        except ImportError:
            print("ray: not measured (Ray not installed: pip install skel_ros[ray])")
            names.remove("ray")
    if not names:
        print("bench/sweep.py: no mode left to run", file=sys.stderr)
        return 2
    backends = {"sequential": ("local", 1), "local": ("local", args.workers),
                "ray": ("ray", args.workers)}
    modes = [(name, *backends[name]) for name in names]
    with tempfile.TemporaryDirectory(prefix="bench_sweep_") as tmp:
        root = Path(args.out) if args.out else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        spec_path = root / "spec.yaml"
        spec_path.write_text(SPEC.format(repo=REPO, trials=trials), encoding="utf-8")
        load = os.getloadavg()
        print(f"{trials} trials of the bundled arm (physics, seeds 0..{trials - 1}), "
              f"{os.cpu_count()} CPUs, load average at the start {load[0]:.2f} {load[1]:.2f}"
              f" {load[2]:.2f}")
        timed: dict[str, tuple[float, dict]] = {}
        for name, backend, workers in modes:
            if (root / name).exists():  # its results would be reused, nothing timed
                print(f"bench/sweep.py: {root / name} exists; give a new --out", file=sys.stderr)
                return 2
            seconds, results = _run(spec_path, root / name, backend, workers)
            timed[name] = (seconds, results)
            verdicts = [v for v, _ in results.values()]
            print(f"{name:10s} {workers} worker(s): {seconds:7.1f} s  ({seconds / trials:.1f} s"
                  f" a trial; {verdicts.count('passed')} passed, {verdicts.count('failed')}"
                  f" failed, {len(verdicts) - verdicts.count('passed') - verdicts.count('failed')}"
                  " not judged or none)")
        _compare(timed, judged=not args.quick)
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        if args.out:
            summary = {name: {"seconds": s, "verdicts": {i: v for i, (v, _) in r.items()}}
                       for name, (s, r) in timed.items()}
            (root / "bench.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
