"""Benchmark: what the sim-to-real gate catches of each realistic fault, with its plots.

Issue 28, items 4 and "Done when": the bundled arm (``examples/arm.skel`` on
``config/hardware/arm_dynamixel.yaml``, its 10 s CASPR trajectory) is run once per truth
file with ``skel-ros sim-to-real --truth TRUTH --criteria CRITERIA --json`` (the emulated
servos move one physics model of the arm, the real robot as the truth file says), and
for each case this script prints the verdict, the joints the failed checks name, and the
largest real-vs-command error per joint, and copies the report's plot of the joint the
fault is about to ``--plots`` (default ``out/truth_cases/plots``; the docs' figures in
docs/img/ are copies of one such run, named in docs/sim_to_real.md).

The cases (truth files written into the output folder, from the texts below, or the ones
of ``test/nodes/data/truth/``):

* ``empty``: the model itself (must pass);
* ``payload``: 0.5 kg in the hand (the model has 0.1);
* ``forearm``: a forearm of 0.6 kg where the model says 0.2 (a wrong model);
* ``friction``: 0.3 N m of Coulomb friction on the elbow (30x the model's);
* ``delay``: 10 ms more between a command on the wire and the motor acting on it;
* ``backlash``: 0.05 rad of play in the wrist's gear train (gravity holds the wrist on one
  flank all along the trajectory: nothing shows);
* ``backlash_yaw``: the same play in the shoulder yaw's, a vertical axis whose load turns
  with its motion: the play is crossed at each reversal.

The shipped criteria (``config/criteria/arm.yaml``) judge each run, and the lag criteria
of ``test/nodes/data/truth/lag_criteria.yaml`` too (the friction and the delay move lags
by a step or a few, which the shipped 0.2 s allows: docs/sim_to_real.md).

With ``--in-process`` each case is played instead on the emulated servos alone, in this
process, on their own clock (:func:`skel_ros.physical.rehearsal.rehearse`: no ROS, no
simulation), along the short trajectory of ``test/physical/data/reversal_trajectory.yaml``
and judged by ``test/physical/data/bench_criteria.yaml``: the figures of
``test/physical/test_fault_gate.py``, the same on any machine (a few seconds a case).

Asserts nothing. Usage: ``.venv/bin/python bench/truth_cases.py [--case NAME ...]
[--in-process] [--out DIR] [--plots DIR]``; about 20 s a case, two gates per case from
one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TRUTHS = REPO / "test" / "nodes" / "data" / "truth"
CRITERIA = {"shipped": REPO / "config" / "criteria" / "arm.yaml",
            "lag": TRUTHS / "lag_criteria.yaml"}
CASES: dict[str, tuple[str | Path, str]] = {  # name -> (truth text or file, joint to plot)
    "empty": ("# the real robot is the model\n", "shoulder_pitch"),
    "payload": ("bodies:\n  hand: {mass: 0.5, at: [0, 0, 0.04]}\n", "elbow"),
    "forearm": (TRUTHS / "forearm_mass.yaml", "shoulder_pitch"),
    "friction": (TRUTHS / "elbow_friction.yaml", "elbow"),
    "delay": (TRUTHS / "delay_10ms.yaml", "shoulder_pitch"),
    "backlash": (TRUTHS / "wrist_backlash.yaml", "wrist"),
    "backlash_yaw": (TRUTHS / "yaw_backlash.yaml", "shoulder_yaw"),
}


def run_case(name: str, out: Path) -> dict[str, Any]:
    """One sim-to-real run of the case; its verdicts (shipped and lag criteria) and errors."""
    truth, _ = CASES[name]
    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(truth, str):
        path = folder / "truth.yaml"
        path.write_text(truth, encoding="utf-8")
    else:
        path = truth
    skel_ros = Path(sys.executable).with_name("skel-ros")
    run = subprocess.run(  # noqa: S603 - our own command line
        [str(skel_ros), "sim-to-real", "--truth", str(path), "--criteria",
         str(CRITERIA["shipped"]), "--json", str(folder / "verdict.json"), "--format", "md",
         "--out", str(folder / "run")], capture_output=True, text=True, check=False,
        env=os.environ)
    result: dict[str, Any] = {"status": run.returncode}
    if not (folder / "verdict.json").exists():
        result["error"] = run.stderr.strip().splitlines()[-1:] or ["no output"]
        return result
    data = json.loads((folder / "verdict.json").read_text(encoding="utf-8"))
    result["shipped"] = _failed(data)
    result["errors"] = _largest(data)
    result["follow"] = _follow(folder / "run" / "run.mcap")
    lag = subprocess.run(  # noqa: S603 - the same recording, judged by the lag criteria
        [str(skel_ros), "compare", str(folder / "run" / "run.mcap"), "--skel",
         str(REPO / "examples" / "arm.skel"), "--criteria", str(CRITERIA["lag"]),
         "--json", str(folder / "lag.json"), "--out", str(folder / "lag"), "--format", "md"],
        capture_output=True, text=True, check=False, env=os.environ)
    if (folder / "lag.json").exists():
        result["lag"] = _failed(json.loads((folder / "lag.json").read_text(encoding="utf-8")))
    else:
        result["lag"] = f"not judged (status {lag.returncode})"
    return result


def _failed(data: dict[str, Any]) -> str:
    """The verdict and the joints of its failed checks, from a ``--json`` file."""
    run = data["runs"][0]
    named = sorted({str(c["joint"]) for c in run["checks"]
                    if c["outcome"] == "failed" and c.get("joint")})
    return f"{run['verdict']}" + (f" ({', '.join(named)})" if named else "")


def _largest(data: dict[str, Any]) -> dict[str, float]:
    """Per joint, the largest real-vs-command error of the run (rad)."""
    metrics = data["runs"][0]["metrics"] or {"joints": []}
    return {j["joint"]: float(e["max"]) for j in metrics["joints"] for e in j["errors"]
            if (e["a"], e["b"]) == ("real", "command") and e["max"] is not None}


def _follow(recording: Path) -> dict[str, tuple[float, float, float]]:
    """Per joint, the real stream's RMS error, lag and reversal error against the command."""
    from skel_ros.analysis import compare, read_recording

    comparison = compare(list(read_recording(recording).values()))
    out = {}
    for joint in comparison.joints:
        error = joint.error("real", "command")
        if error is not None:
            out[joint.joint] = (error.rms, error.lag, error.reversal)
    return out


def in_process(name: str, out: Path) -> str:
    """One case played in this process (module docstring): its verdict and figures."""
    from skel_ros.analysis import JointSeries, Outcome, compare, judge, load_criteria
    from skel_ros.physical.rehearsal import rehearse
    from skel_ros.trajectory import load_trajectory, load_trajectory_model

    data = REPO / "test" / "physical" / "data"
    truth, _ = CASES[name]
    if isinstance(truth, str):
        (out / name).mkdir(parents=True, exist_ok=True)
        path = out / name / "truth.yaml"
        path.write_text(truth, encoding="utf-8")
        truth = path
    model = REPO / "examples" / "arm.skel"
    run = rehearse(model, REPO / "config" / "hardware" / "arm_dynamixel.yaml",
                   load_trajectory(data / "reversal_trajectory.yaml",
                                   load_trajectory_model(model)), truth=truth)
    comparison = compare([
        JointSeries.from_samples("command", run.times, run.joints, run.command),
        JointSeries.from_samples("real", run.times + run.period, run.joints, run.real)])
    verdict = judge(comparison, load_criteria(data / "bench_criteria.yaml"))
    named = sorted({f"{c.joint} ({c.metric})" for c in verdict.with_outcome(Outcome.FAILED)})
    figures = []
    for joint in comparison.joints:
        e = joint.error("real", "command")
        if e is not None:
            figures.append(f"{joint.joint} {e.rms:.3f}/{e.max_abs:.3f}/{e.lag:.2f}/"
                           f"{e.reversal:.4f}")
    return (f"{name}: {verdict.outcome.value}" + (f" ({', '.join(named)})" if named else "")
            + "; real-command RMS/max/lag/reversal: " + ", ".join(figures))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES),
                        help="run only this case (repeatable; default: all)")
    parser.add_argument("--in-process", action="store_true",
                        help="the emulated servos alone, in this process (module docstring)")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "truth_cases")
    parser.add_argument("--plots", type=Path, default=None,
                        help="where the plots go (default: OUT/plots)")
    args = parser.parse_args()
    plots = args.plots or args.out / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    if args.in_process:
        for name in args.case or list(CASES):
            print(in_process(name, args.out))
        return 0
    for name in args.case or list(CASES):
        result = run_case(name, args.out)
        joint = CASES[name][1]
        png = args.out / name / "run" / f"joint_{joint}.png"
        if png.exists():
            shutil.copyfile(png, plots / f"truth_{name}_{joint}.png")
        if "error" in result:
            print(f"{name}: run failed (status {result['status']}): {result['error']}")
            continue
        errors = ", ".join(f"{j} {e:.3f}" for j, e in result["errors"].items())
        follow = ", ".join(f"{j} {r:.3f}/{lag:.2f}/{rev:.4f}"
                           for j, (r, lag, rev) in result["follow"].items())
        print(f"{name}: shipped criteria {result['shipped']}; lag criteria {result['lag']};"
              f" largest real-command error: {errors}; real-command RMS/lag/reversal: "
              f"{follow}")
    print(f"plots: {plots}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
