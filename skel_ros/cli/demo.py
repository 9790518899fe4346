"""``skel-ros demo``: the bundled example, end to end, on a machine with no robot.

It loads the bundled arm, prints its joint model and limits, and writes its
URDF and its DART-layout JSON into the output directory.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def run_demo(args: argparse.Namespace) -> int:
    """Run the demo; returns the exit status."""
    from skel_ros.cli.inspect_cmd import render
    from skel_ros.model import load_skel
    from skel_ros.model.report import world_to_dict
    from skel_ros.model.urdf import world_to_urdf
    from skel_ros.resources import example

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    skel_file = example("arm.skel")
    world = load_skel(skel_file)
    print(render(world))
    urdf_path = out / "arm.urdf"
    urdf_path.write_text(world_to_urdf(world), encoding="utf-8")
    json_path = out / "arm.json"
    json_path.write_text(json.dumps(world_to_dict(world), indent=1), encoding="utf-8")
    print()
    print(f"model of {skel_file}:")
    print(f"  URDF: {urdf_path.resolve()}")
    print(f"  JSON (DART fixture layout): {json_path.resolve()}")
    return 0
