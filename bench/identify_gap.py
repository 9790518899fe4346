"""Benchmark: does the identified model narrow the gate's sim-vs-real error?

Issue 29's goal "The gap shrinks": on a trajectory the fit never saw (by default the
bundled 10 s ``examples/arm_trajectory.yaml``), the physics bench's arm with a truth whose
damping, friction and armature are off the model's by 30-60 % (``bench/identify.py``'s),
run through ``skel-ros sim-to-real --truth`` twice per engine and repeat:

* **model**: the simulation with the original model (``examples/arm.skel``);
* **identified**: with the fitted model and every identified value
  (``--skel OUT/identified/model.skel --sim-params OUT/identified/identified.yaml``).

Printed per run: the gate's verdict with the shipped criteria (``config/criteria/arm.yaml``,
or ``--criteria``), the sim-vs-real RMS error per joint, and over the joints the
sim-vs-command and real-vs-command RMS errors (how much of the gap is each side's own
tracking); then per engine the mean over the repeats and the ratio identified / model (the
issue asks <= 1/3), and the load average.

Then, without ROS, how much the identified values move the simulation at all: each
engine alone follows the same trajectory (position commands streamed at 100 Hz, as
sim-to-real streams them) with the model and with the identified values, and the RMS of
the difference between the two simulated motions is printed per joint, beside each
one's RMS error against the command. A difference far below the sim-vs-real gap means
no joint value can close the gap in this simulation: its position controller (gains
derived from each DOF's inertia and damping, ``config/sim_gains.yaml``) takes them out.

With ``--servo-gains``, two more runs per engine and repeat, the model and the identified
values, each with the simulation's position controllers given the servo gains
``identify`` measured (``kp``,
``kd`` of each joint whose servo fit explains the torque, its delay found or not; no
integral, no gravity compensation, as a Dynamixel in position mode), through the
simulation node's ``gains_file`` (in process,
:func:`skel_ros.nodes.sim_to_real.run_sim_to_real`: the command line has no option for
it). It tells how much of the gap is the simulated controller's.

The identified values come from ``--from DIR``, a folder ``bench/identify.py --out DIR``
wrote (its ``truth.yaml`` and ``identified/``); without it, ``bench/identify.py`` is run
first into ``--out`` (a 60 s excitation recorded and fitted: about 3 minutes).

Asserts nothing. Usage: ``.venv/bin/python bench/identify_gap.py [--from DIR] [--out DIR]
[--trajectory FILE] [--engines dart mujoco] [--repeat N] [--criteria FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SKEL_ROS = str(REPO / ".venv" / "bin" / "skel-ros")
ARM = REPO / "examples" / "arm.skel"
HARDWARE = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
HELD_OUT = REPO / "examples" / "arm_trajectory.yaml"
CRITERIA = REPO / "config" / "criteria" / "arm.yaml"


def gate(folder: Path, truth: Path, trajectory: Path, criteria: Path, *, engine: str,
         extra: list[str]) -> dict[str, Any]:
    """One sim-to-real run (:func:`read_verdict`)."""
    verdict = folder / "verdict.json"
    done = subprocess.run(  # noqa: S603 - our own command line
        [SKEL_ROS, "sim-to-real", "--skel", str(ARM), "--hardware-config", str(HARDWARE),
         "--truth", str(truth), "--trajectory", str(trajectory), "--criteria", str(criteria),
         "--engines", engine, "--json", str(verdict), "--format", "md", "--out",
         str(folder), *extra], capture_output=True, text=True, check=False,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if not verdict.exists():
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        return {"verdict": f"no verdict (status {done.returncode}): {' | '.join(tail)}",
                "rms": {}, "pairs": {}}
    return read_verdict(verdict)


def read_verdict(path: Path) -> dict[str, Any]:
    """A run's verdict, per joint its sim-vs-real RMS error (rad), and per pair of streams
    (sim-real, sim-command, real-command) the RMS over the joints of their RMS errors."""
    run = json.loads(path.read_text(encoding="utf-8"))["runs"][0]
    metrics = run["metrics"] or {"joints": []}
    pairs: dict[str, dict[str, float]] = {}
    for j in metrics["joints"]:
        for e in j["errors"]:
            if e["rms"] is not None:
                pairs.setdefault("-".join(sorted((e["a"], e["b"]))), {})[j["joint"]] = \
                    float(e["rms"])
    failed = sorted({f"{c.get('joint') or ''} {c['check']} {c['metric']}".strip()
                     for c in run["checks"] if c["outcome"] == "failed"})
    return {"verdict": run["verdict"] + (f" ({'; '.join(failed)})" if failed else ""),
            "rms": pairs.get("real-sim", {}),
            "pairs": {k: overall(v) for k, v in pairs.items()}}


def follow(engine_name: str, skel: Path, trajectory: Path, params: Path | None
           ) -> tuple[np.ndarray, np.ndarray]:
    """One engine alone following ``trajectory``: (commanded, simulated) positions at 100 Hz."""
    from skel_ros.identify.output import load_sim_params
    from skel_ros.model import load_model
    from skel_ros.resources import resolve
    from skel_ros.sim import ENGINES, load_gains
    from skel_ros.sim.backend import EngineBackend
    from skel_ros.trajectory import load_trajectory, load_trajectory_model

    model = load_trajectory_model(skel)
    traj = load_trajectory(trajectory, model)
    engine = ENGINES[engine_name](
        load_model(skel), gains=load_gains(resolve("package://skel_ros/config/sim_gains.yaml")),
        joint_dynamics=None if params is None else load_sim_params(params).joints)
    EngineBackend(engine).activate()  # held at the initial pose, as the node does
    names = list(traj.joint_names)
    index = [engine.dof_names.index(n) for n in names]
    period = 0.01
    steps = round(period / engine.time_step)
    commanded, simulated = [], []
    for k in range(round(traj.duration / period) + 100):  # and 1 s of settling
        q = traj.sample(k * period)[0]
        engine.set_commands("position", names, q)
        engine.step(steps)
        commanded.append(q)
        simulated.append(engine.positions()[index])
    return np.array(commanded), np.array(simulated)


def sensitivity(engine: str, identified: Path, trajectory: Path) -> str:
    """Per joint: RMS of sim(identified) - sim(model), and of sim(model) - command (rad)."""
    command, before = follow(engine, ARM, trajectory, None)
    _, after = follow(engine, identified / "model.skel", trajectory,
                      identified / "identified.yaml")
    moved = np.sqrt(np.mean((after - before) ** 2, axis=0))
    lag = np.sqrt(np.mean((before - command) ** 2, axis=0))
    names = load_names(trajectory)
    return ", ".join(f"{n} {m:.5f} (sim-command {e:.4f})"
                     for n, m, e in zip(names, moved, lag, strict=True))


def load_names(trajectory: Path) -> list[str]:
    """The joints of ``trajectory``, in its order."""
    from skel_ros.trajectory import load_trajectory, load_trajectory_model

    return list(load_trajectory(trajectory, load_trajectory_model(ARM)).joint_names)


def servo_gains(identified: Path, folder: Path) -> Path:
    """A gains YAML with the servo gains of identified.yaml (joints whose fit holds)."""
    import yaml

    from skel_ros.identify.fit import SERVO_R2

    joints = yaml.safe_load((identified / "identified.yaml").read_text())["joints"]
    dofs = {j: {"kp": e["servo"]["kp"], "kd": e["servo"]["kd"], "ki": 0.0,
                "gravity_compensation": False}
            for j, e in joints.items()
            if "kp" in e.get("servo", {}) and e["servo"]["r2"] >= SERVO_R2
            and e["servo"]["kd"] >= 0.0}
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "servo_gains.yaml"
    path.write_text(yaml.safe_dump({"dofs": dofs}), encoding="utf-8")
    return path


def gate_with_gains(folder: Path, truth: Path, trajectory: Path, criteria: Path, *,
                    engine: str, identified: Path | None, gains: Path) -> dict[str, Any]:
    """A run with the servo gains (module docstring), in process; the model's without
    ``identified``."""
    from skel_ros.analysis.criteria import load_criteria
    from skel_ros.analysis.verdict import judge
    from skel_ros.nodes.sim_to_real import RunConfig, RunError, run_sim_to_real

    config = RunConfig(skel_file=ARM if identified is None else identified / "model.skel",
                       hardware_config=HARDWARE, trajectory=trajectory, out_dir=folder,
                       truth=truth, engines=(engine,),
                       sim_params=None if identified is None
                       else identified / "identified.yaml",
                       extra_sim_params={"gains_file": str(gains)}, report_format="md")
    try:
        result = run_sim_to_real(config)
    except RunError as exc:
        return {"verdict": f"no verdict: {exc}", "rms": {}, "pairs": {}}
    pairs: dict[str, dict[str, float]] = {}
    for j in result.comparison.joints:
        for e in j.errors:
            pairs.setdefault("-".join(sorted((e.a, e.b))), {})[j.joint] = float(e.rms)
    verdict = judge(result.comparison, load_criteria(criteria))
    return {"verdict": verdict.outcome.value,
            "rms": pairs.get("real-sim", {}), "pairs": {k: overall(v) for k, v in pairs.items()}}


def overall(rms: dict[str, float]) -> float:
    """The RMS over every joint of the per-joint RMS errors."""
    return float(np.sqrt(np.mean(np.square(list(rms.values()))))) if rms else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path,
                        help="a bench/identify.py output folder (truth.yaml, identified/)")
    parser.add_argument("--out", type=Path, help="folder (default: a temporary one)")
    parser.add_argument("--trajectory", type=Path, default=HELD_OUT,
                        help="the held-out trajectory (default: %(default)s)")
    parser.add_argument("--engines", nargs="+", default=["dart", "mujoco"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--criteria", type=Path, default=CRITERIA)
    parser.add_argument("--servo-gains", action="store_true",
                        help="a third run: the identified values and the servo's gains")
    parser.add_argument("--skip-baseline", action="store_true",
                        help="with --servo-gains: only that run")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_identify_gap_"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()[0]:.2f}  (folder {out})")
    source = args.source
    if source is None:
        source = out / "identify"
        subprocess.run([sys.executable, str(REPO / "bench" / "identify.py"), "--out",  # noqa: S603
                        str(source)], check=True)
    truth = source / "truth.yaml"
    identified = source / "identified"
    variants = {"model": [],
                "identified": ["--skel", str(identified / "model.skel"), "--sim-params",
                               str(identified / "identified.yaml")]}
    if args.skip_baseline:
        variants = {}
    gains = servo_gains(identified, out) if args.servo_gains else None
    for engine in args.engines:
        print(f"{engine} alone, RMS of sim(identified) - sim(model) per joint: "
              f"{sensitivity(engine, identified, args.trajectory)}", flush=True)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for engine in args.engines:
        for k in range(args.repeat):
            for name, extra in variants.items():
                # --skel given twice: argparse keeps the last (the identified model).
                r = gate(out / f"{engine}_{name}_{k}", truth, args.trajectory, args.criteria,
                         engine=engine, extra=extra)
                results.setdefault((engine, name), []).append(r)
                report(engine, name, k, r)
            for name, source in {"model+servo": None, "ident+servo": identified}.items():
                if gains is None:
                    break
                r = gate_with_gains(out / f"{engine}_{name}_{k}", truth, args.trajectory,
                                    args.criteria, engine=engine, identified=source,
                                    gains=gains)
                results.setdefault((engine, name), []).append(r)
                report(engine, name, k, r)
    for engine in args.engines:
        summarize(engine, {n: rs for (e, n), rs in results.items() if e == engine})
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


def summarize(engine: str, results: dict[str, list[dict[str, Any]]]) -> None:
    """Per variant the mean over its runs; the ratio identified / model."""
    means = {}
    for name, rs in results.items():
        runs = [r for r in rs if r["rms"]]
        joints = sorted({j for r in runs for j in r["rms"]})
        means[name] = {j: float(np.mean([r["rms"][j] for r in runs if j in r["rms"]]))
                       for j in joints}
        print(f"{engine}: {name}: sim-vs-real RMS (mean of {len(runs)}) "
              f"{overall(means[name]):.4f} rad; per joint "
              + ", ".join(f"{j} {v:.4f}" for j, v in means[name].items()))
    for name in ("identified", "model+servo", "ident+servo"):
        if "model" in means and name in means:
            print(f"{engine}: ratio {name} / model "
                  f"{overall(means[name]) / overall(means['model']):.2f} (goal <= 0.33)")


def report(engine: str, name: str, k: int, r: dict[str, Any]) -> None:
    """Print one run's line."""
    joints = ", ".join(f"{j} {v:.4f}" for j, v in r["rms"].items())
    own = ", ".join(f"{p} {v:.4f}" for p, v in sorted(r["pairs"].items()) if p != "real-sim")
    print(f"{engine:6} {name:11} #{k}: {r['verdict']}; sim-vs-real RMS "
          f"{overall(r['rms']):.4f} rad ({joints}); {own}; load "
          f"{os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
