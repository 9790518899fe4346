"""Sim-to-sim beside sim-to-real: DART, MuJoCo and the emulated hardware on one command stream.

``run_sim_to_real`` with ``engines=("dart", "mujoco")`` (what ``skel-ros sim-to-real
--engines dart,mujoco`` and ``skel-ros demo`` run): a simulation node per engine (``/sim``
in DART, ``/mujoco`` in MuJoCo) and the hardware node on emulated servos, the bundled
arm played a 3 s motion (test_sim_to_real.py's SHORT_TRAJECTORY: what is checked here is
the third robot on the stream, not the bundled 10 s trajectory, which test_sim_to_real_run
plays), one recording, one report with the engine-vs-engine columns.
"""

from __future__ import annotations

import math
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

pytest.importorskip("mujoco")
pytest.importorskip("dartpy")

from test_sim_to_real import (
    SHORT_TRAJECTORY,
    TRACKING_BOUND,
    _skip_if_the_hardware_starved,
    stall_allowance,
)

from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

# Both engines track the same position commands with the same controllers, each within
# test_sim_to_real.py's TRACKING_BOUND of the command: the largest error between them is
# held to twice that (test_sim_to_real's rule for two robots on one stream) plus what a
# stall the gate still judges can add (stall_allowance: a judged full run here reached
# max 0.126 rad, RMS 0.028, with no gap; typical runs: max 0.02-0.05, RMS 0.003-0.01),
# and their RMS error to the tracking bound itself. Judged only when both kept up with
# the wall clock (a starved node's simulated time stands still). The engines' own
# agreement, without any timing, is test/sim/test_engine_agreement.py's (1e-9 on hinges).
DOFS = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]


def test_dart_mujoco_and_hardware_on_one_command_stream(ros_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    from skel_ros.analysis import Outcome, judge, load_criteria
    from skel_ros.nodes.sim_to_real import RunConfig, RunError, run_sim_to_real

    del ros_env  # the environment fixture: DDS on localhost, a domain of its own
    trajectory = tmp_path / "short.yaml"
    trajectory.write_text(SHORT_TRAJECTORY.format(a=0.4), encoding="utf-8")
    lines: list[str] = []
    try:
        result = run_sim_to_real(RunConfig(
            skel_file=example("arm.skel"),
            hardware_config=resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml"),
            trajectory=trajectory, out_dir=tmp_path / "run",
            engines=("dart", "mujoco")), log=lines.append)
    except RunError as exc:
        _skip_if_the_hardware_starved(str(exc), "arm", tmp_path / "run" / "run.mcap")
        raise
    comparison = result.comparison
    assert set(comparison.streams) == {"command", "sim", "mujoco", "real"}
    assert [j.joint for j in comparison.joints] == DOFS
    assert comparison.duration > 2.5
    for joint in comparison.joints:
        pairs = {(e.a, e.b) for e in joint.errors}
        assert {("sim", "mujoco"), ("mujoco", "real"), ("mujoco", "command")} <= pairs
        between = joint.error("sim", "mujoco")
        assert between is not None
        assert math.isfinite(between.max_abs), joint.joint
        assert joint.limit_hits["mujoco"] == 0, joint.joint
    page = result.report.read_text(encoding="utf-8")
    assert "RMS sim-mujoco" in page
    assert "simulation: sim = dart, mujoco = mujoco" in page
    assert any("/mujoco in mujoco" in line for line in lines)
    assert any(line.startswith("largest dart-vs-mujoco error") for line in lines)
    # The gate's rule: a simulation that fell behind the wall clock during the compared
    # span has a gap in its stamps (its simulated time stood still); then the engines'
    # agreement cannot be judged. Falling behind outside it (start-up) does not matter.
    verdict = judge(comparison, load_criteria(resolve(
        "package://skel_ros/config/criteria/arm.yaml")))
    starved = [c.message for c in verdict.checks
               if c.metric == "gap" and c.outcome is Outcome.NOT_JUDGED]
    if starved:
        pytest.skip("the machine starved a simulation, the engines' agreement is not judged: "
                    + "; ".join(starved))
    stall = stall_allowance(trajectory, DOFS, "arm")
    for joint in comparison.joints:
        between = joint.error("sim", "mujoco")
        assert between is not None
        assert between.rms < TRACKING_BOUND, (joint.joint, between)
        assert between.max_abs < 2 * TRACKING_BOUND + stall[joint.joint], (joint.joint, between,
                                                                            stall)


@pytest.mark.parametrize("value", ["dart,dart", "bullet", "dart,"])
def test_bad_engines_are_a_usage_error(value: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "skel_ros.cli.main", "sim-to-real", "--engines", value],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 2, result.stderr
    assert "expected distinct engines among dart, mujoco" in result.stderr
