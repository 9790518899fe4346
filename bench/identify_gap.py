"""Benchmark: does the identified model narrow the gate's sim-vs-real error?

Issue 29's goal "The gap shrinks": on a trajectory the fit never saw (by default the
bundled 10 s ``examples/arm_trajectory.yaml``), the physics bench's arm with a truth whose
damping, friction and armature are off the model's by 30-60 % (``bench/identify.py``'s),
run through ``skel-ros sim-to-real --truth`` twice per engine and repeat:

* **model**: the simulation with the original model (``examples/arm.skel``);
* **identified**: with the fitted model and every identified value
  (``--skel OUT/identified/model.skel --sim-params OUT/identified/identified.yaml``):
  the joints' armature, damping and friction, and each identified servo's law (its
  ``kp``, ``kd`` and delay, no feed-forward, integral or gravity compensation; an MIT
  motor in impedance mode: the hardware YAML's ``kp`` and ``kd`` with the targets'
  velocity fed forward), which the simulation's position controller of that joint then
  runs;
* with ``--joints-only``, **joints only** too: the same without the servos (a copy of
  identified.yaml without its ``servo`` entries), the simulation's own position
  controller running every joint: how much of the gap the joint values close alone.

Printed per run: the gate's verdict with the shipped criteria (``config/criteria/arm.yaml``,
or ``--criteria``), the sim-vs-real RMS error per joint, and over the joints the
sim-vs-command and real-vs-command RMS errors (how much of the gap is each side's own
tracking); then per engine the mean over the repeats and the ratio identified / model (the
issue asks <= 1/3), and the load average.

First, without ROS, how much the identified values move the simulation at all: each
engine alone follows the same trajectory (position commands streamed at 100 Hz, as
sim-to-real streams them) with the model and with the identified values (servos
included), and the RMS of the difference between the two simulated motions is printed
per joint, beside each one's RMS error against the command.

The identified values come from ``--from DIR``, a folder ``bench/identify.py --out DIR``
wrote (its ``truth.yaml`` and ``identified/``, and the ``hardware.yaml`` it ran with
when it was given ``--profile-time`` or ``--no-write-on-command``: the held-out runs use
that one too); without it, ``bench/identify.py`` is run first into ``--out`` (a 60 s
excitation recorded and fitted: about 3 minutes).

``--robot so101`` or ``quadruped``: that robot of ``bench/identify.py`` (its model, hardware
YAML and truth), held out on its bundled trajectory (``examples/so101_trajectory.yaml``,
``examples/quadruped_trajectory.yaml``) with its shipped criteria.

Asserts nothing. Usage: ``.venv/bin/python bench/identify_gap.py [--robot arm|so101|quadruped]
[--from DIR] [--out DIR] [--trajectory FILE] [--engines dart mujoco] [--repeat N]
[--criteria FILE] [--joints-only]``.
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

# The bench beside this one (the script's folder is first on the path): its robots.
from identify import ROBOTS  # isort: skip

REPO = Path(__file__).resolve().parent.parent
SKEL_ROS = str(REPO / ".venv" / "bin" / "skel-ros")
# Per robot of bench/identify.py: its held-out trajectory and the shipped criteria.
HELD_OUT = {"arm": (REPO / "examples" / "arm_trajectory.yaml",
                    REPO / "config" / "criteria" / "arm.yaml"),
            "so101": (REPO / "examples" / "so101_trajectory.yaml",
                      REPO / "config" / "criteria" / "so101.yaml"),
            "quadruped": (REPO / "examples" / "quadruped_trajectory.yaml",
                          REPO / "config" / "criteria" / "quadruped.yaml")}


def gate(folder: Path, truth: Path, trajectory: Path, criteria: Path, *, engine: str,
         extra: list[str], hardware: Path, model: Path) -> dict[str, Any]:
    """One sim-to-real run (:func:`read_verdict`)."""
    verdict = folder / "verdict.json"
    done = subprocess.run(  # noqa: S603 - our own command line
        [SKEL_ROS, "sim-to-real", "--skel", str(model), "--hardware-config", str(hardware),
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
    gains = load_gains(resolve("package://skel_ros/config/sim_gains.yaml"))
    sim_params = None if params is None else load_sim_params(params)
    engine = ENGINES[engine_name](
        load_model(skel), gains=gains if sim_params is None else sim_params.gains(gains),
        joint_dynamics=None if sim_params is None else sim_params.joints)
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


def sensitivity(engine: str, model: Path, identified: Path, trajectory: Path) -> str:
    """Per joint: RMS of sim(identified) - sim(model), and of sim(model) - command (rad)."""
    command, before = follow(engine, model, trajectory, None)
    _, after = follow(engine, identified / f"model{model.suffix}", trajectory,
                      identified / "identified.yaml")
    moved = np.sqrt(np.mean((after - before) ** 2, axis=0))
    lag = np.sqrt(np.mean((before - command) ** 2, axis=0))
    names = load_names(model, trajectory)
    return ", ".join(f"{n} {m:.5f} (sim-command {e:.4f})"
                     for n, m, e in zip(names, moved, lag, strict=True))


def load_names(model: Path, trajectory: Path) -> list[str]:
    """The joints of ``trajectory``, in its order."""
    from skel_ros.trajectory import load_trajectory, load_trajectory_model

    return list(load_trajectory(trajectory, load_trajectory_model(model)).joint_names)


def joints_only(identified: Path, folder: Path) -> Path:
    """A copy of identified.yaml without its servos: the joints' values alone."""
    import yaml

    document = yaml.safe_load((identified / "identified.yaml").read_text(encoding="utf-8"))
    for entry in document["joints"].values():
        entry.pop("servo", None)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "identified_joints_only.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def overall(rms: dict[str, float]) -> float:
    """The RMS over every joint of the per-joint RMS errors."""
    return float(np.sqrt(np.mean(np.square(list(rms.values()))))) if rms else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path,
                        help="a bench/identify.py output folder (truth.yaml, identified/)")
    parser.add_argument("--out", type=Path, help="folder (default: a temporary one)")
    parser.add_argument("--robot", choices=tuple(HELD_OUT), default="arm",
                        help="bench/identify.py's robot (default: arm)")
    parser.add_argument("--trajectory", type=Path,
                        help="the held-out trajectory (default: the robot's bundled one)")
    parser.add_argument("--engines", nargs="+", default=["dart", "mujoco"])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--criteria", type=Path,
                        help="criteria (default: the robot's shipped ones)")
    parser.add_argument("--joints-only", action="store_true",
                        help="a third run: the identified joint values without the servos")
    args = parser.parse_args()
    model, robot_hardware, _ = ROBOTS[args.robot]
    trajectory = args.trajectory or HELD_OUT[args.robot][0]
    criteria = args.criteria or HELD_OUT[args.robot][1]
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_identify_gap_"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {os.getloadavg()[0]:.2f}  (folder {out})")
    source = args.source
    if source is None:
        source = out / "identify"
        subprocess.run([sys.executable, str(REPO / "bench" / "identify.py"), "--out",  # noqa: S603
                        str(source), "--robot", args.robot], check=True)
    truth = source / "truth.yaml"
    identified = source / "identified"
    # The robot runs as it was identified: bench/identify.py's copy of the hardware YAML
    # (--profile-time, --no-write-on-command) when it wrote one.
    hardware = (source / "hardware.yaml" if (source / "hardware.yaml").exists()
                else robot_hardware)
    print(f"hardware YAML: {hardware}")
    fitted = str(identified / f"model{model.suffix}")  # identify writes the model's format
    variants = {"model": [],
                "identified": ["--skel", fitted, "--sim-params",
                               str(identified / "identified.yaml")]}
    if args.joints_only:
        variants["joints only"] = ["--skel", fitted, "--sim-params",
                                   str(joints_only(identified, out))]
    for engine in args.engines:
        print(f"{engine} alone, RMS of sim(identified) - sim(model) per joint: "
              f"{sensitivity(engine, model, identified, trajectory)}", flush=True)
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for engine in args.engines:
        for k in range(args.repeat):
            for name, extra in variants.items():
                # --skel given twice: argparse keeps the last (the identified model).
                r = gate(out / f"{engine}_{name.replace(' ', '_')}_{k}", truth,
                         trajectory, criteria, engine=engine, extra=extra,
                         hardware=hardware, model=model)
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
    for name in ("identified", "joints only"):
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
