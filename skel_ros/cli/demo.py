"""``skel-ros demo``: the whole product on the bundled arm, on a machine with no robot.

1. loads the bundled arm (examples/arm.skel), prints its joint model and limits, and
   writes its URDF and its DART-layout JSON;
2. runs the sim-to-real workflow (:mod:`skel_ros.nodes.sim_to_real`): the simulation
   node (in DART, and a second one in MuJoCo when mujoco is installed) and the hardware
   node on emulated Dynamixel servos, the bundled CASPR trajectory played to all,
   recorded to MCAP, compared (engine vs hardware, engine vs engine) and judged against
   the arm's criteria (``config/criteria/arm.yaml``);
3. prints the verdict and where the report is; the exit status is the gate's
   (:mod:`skel_ros.cli.exit_codes`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse

CRITERIA = "package://skel_ros/config/criteria/arm.yaml"


def run_demo(args: argparse.Namespace) -> int:
    """Run the demo; returns the exit status."""
    from skel_ros.analysis.criteria import load_criteria
    from skel_ros.analysis.errors import AnalysisError
    from skel_ros.analysis.report import RunSection
    from skel_ros.analysis.verdict import Verdict, judge
    from skel_ros.cli import exit_codes, gate
    from skel_ros.cli.inspect_cmd import render
    from skel_ros.model import load_skel
    from skel_ros.model.report import world_to_dict
    from skel_ros.model.urdf import world_to_urdf
    from skel_ros.nodes.sim_to_real import RunConfig, RunError, run_sim_to_real
    from skel_ros.resources import example, resolve

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skel_file = example("arm.skel")
    world = load_skel(skel_file)
    print(render(world))
    urdf_path = out / "arm.urdf"
    urdf_path.write_text(world_to_urdf(world), encoding="utf-8")
    json_path = out / "arm.json"
    json_path.write_text(json.dumps(world_to_dict(world), indent=1), encoding="utf-8")
    print(f"\nURDF: {urdf_path.resolve()}\nJSON (DART fixture layout): {json_path.resolve()}\n")

    criteria = load_criteria(resolve(CRITERIA))
    trajectory = example("arm_trajectory.xml")
    config = RunConfig(
        skel_file=skel_file,
        hardware_config=resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml"),
        trajectory=trajectory,
        out_dir=out / "sim_to_real",
        write_report=False,
        engines=_engines(),
    )
    try:
        result = run_sim_to_real(config)
    except (RunError, AnalysisError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        section = RunSection(trajectory.stem, None, Verdict.not_judged(str(exc)))
        gate.finish([section], config.out_dir, criteria, title="skel-ros demo: sim-to-real",
                    fmt="html")
        return exit_codes.NOT_JUDGED
    print()
    section = RunSection(trajectory.stem, result.comparison,
                         judge(result.comparison, criteria), result.notes)
    status = gate.finish([section], config.out_dir, criteria,
                         title="skel-ros demo: sim-to-real", fmt="html")
    print(f"recording: {result.recording.resolve()}  (MCAP: open with Foxglove or ros2 bag)")
    print(f"node logs: {result.logs.resolve()}")
    return status


def _engines() -> tuple[str, ...]:
    """DART and MuJoCo side by side when both are installed, else the one that is."""
    import importlib.util

    found = tuple(engine for engine, module in (("dart", "dartpy"), ("mujoco", "mujoco"))
                  if importlib.util.find_spec(module) is not None)
    return found or ("dart",)
