"""End to end, a gripper: one emulated servo drives both fingers (finger_right mimics
finger_left, left out of the hardware YAML); the sim node, the hardware node, the player
and the comparison as ``skel-ros sim-to-real`` runs them (about 15-35 s here).

The follower is in both robots' ``joint_states`` (the hardware node derives it from the
leader's measurement) and its sim-vs-real error is judged like any joint's.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pytest
from test_sim_to_real import _skip_if_the_hardware_starved

from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

BOUND = 0.1  # rad or m, RMS and max sim-vs-real, as test_sim_to_real.py's tracking bound


def test_gripper_sim_to_real_run(ros_env: dict[str, str], tmp_path: Path) -> None:
    from skel_ros.nodes.sim_to_real import RunConfig, RunError, run_sim_to_real

    try:
        result = run_sim_to_real(RunConfig(
            skel_file=example("gripper_arm.urdf"),
            hardware_config=resolve(
                "package://skel_ros/config/hardware/gripper_arm_dynamixel.yaml"),
            trajectory=example("gripper_arm_trajectory.yaml"), out_dir=tmp_path / "run"))
    except RunError as exc:  # a machine that starved the hardware node: not judged
        _skip_if_the_hardware_starved(str(exc), "gripper_arm", tmp_path / "run" / "run.mcap")
        raise
    comparison = result.comparison
    joints = {j.joint: j for j in comparison.joints}
    assert list(joints) == ["shoulder", "elbow", "finger_left", "finger_right"]
    for joint in joints.values():
        sim_real = next(e for e in joint.errors if (e.a, e.b) == ("sim", "real"))
        assert math.isfinite(sim_real.rms), joint.joint
        assert sim_real.rms < BOUND, (joint.joint, sim_real)
        assert sim_real.max_abs < 2 * BOUND, (joint.joint, sim_real)
    # The fingers move: the follower's error is about a motion, not a joint at rest.
    left = next(e for e in joints["finger_left"].errors if (e.a, e.b) == ("real", "command"))
    assert left.rms < 0.005
    # The shipped criteria judge it, the follower included: its command is the leader's
    # through the rule (docs/model.md, "Mimic joints").
    from skel_ros.analysis import load_criteria
    from skel_ros.analysis.verdict import Outcome, judge

    right = next(e for e in joints["finger_right"].errors if (e.a, e.b) == ("real", "command"))
    assert math.isfinite(right.rms)
    verdict = judge(comparison, load_criteria(
        resolve("package://skel_ros/config/criteria/gripper_arm.yaml")))
    failed = [c for c in verdict.checks if c.outcome is Outcome.FAILED]
    assert verdict.outcome is Outcome.PASSED, failed
    assert {c.joint for c in verdict.checks if c.joint} >= {"finger_left", "finger_right"}
