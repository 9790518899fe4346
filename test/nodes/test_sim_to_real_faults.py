"""End to end, the faults of issue 28 on the physics bench: each one must fail the gate
naming the joints it affects (the empty truth passes: the default run of
test_sim_to_real.py, on the same physics bench).

The bundled arm (examples/arm.skel) on its emulated Dynamixel servos moving one physics
model of the robot (skel_ros.physical), its 10 s trajectory, one full run per case (about
20 s here). The truth files are in ``data/truth/``; docs/sim_to_real.md ("What the gate
caught") has the figures and why each case is judged by the criteria it is:

* the shipped ``config/criteria/arm.yaml`` catches the wrong forearm mass (its sag);
* a sticking elbow and 10 ms of delay move only the servos' lag behind the command, by
  one 10 ms grid step (the delay) or a few (the friction), within the shipped 0.2 s;
  ``data/truth/lag_criteria.yaml`` catches them on an idle machine with one grid step of
  margin, too little for a ROS run on a shared machine. They are tested, with backlash, on
  the physics emulator in one process, where timing does not move the figures
  (``test/physical/test_fault_gate.py``).

A run whose nodes the machine starved cannot be judged; the case is skipped with the
gate's reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from skel_ros.analysis import Verdict

pytestmark = [pytest.mark.ros, pytest.mark.slow, pytest.mark.timeout(300)]

DATA = Path(__file__).parent / "data" / "truth"
SHIPPED = "package://skel_ros/config/criteria/arm.yaml"


class Case(NamedTuple):
    """A truth file, the criteria judging it and the joints the verdict must name."""

    truth: str  # in DATA
    criteria: str
    named: frozenset[str] = frozenset()  # each must fail (none: the verdict passes)
    may_name: frozenset[str] = frozenset()  # and no other may


@pytest.mark.parametrize("case", [
    # The model itself passes the shipped criteria: test_sim_to_real.py's
    # test_sim_to_real_run, the default run (physics, no truth file: the same robot).
    # 0.6 kg of forearm for the model's 0.2: the joints that carry it sag more. The
    # shoulder pitch carries it the farthest out (RMS 0.068 rad for 0.034); the elbow's
    # sag nearly doubles too (0.037 for 0.021), still within 0.06. The wrist and the
    # vertical yaw axis do not carry it.
    pytest.param(Case("forearm_mass.yaml", SHIPPED, frozenset({"shoulder_pitch"}),
                      frozenset({"shoulder_pitch", "elbow"})), id="wrong-link-mass"),
    # Not here: the sticking elbow (elbow_friction.yaml) and 10 ms of delay
    # (delay_10ms.yaml) move only the servos' lag, by one to a few 10 ms grid steps, and
    # lag_criteria.yaml catches them with one grid step of margin over the empty truth on
    # an idle machine: a loaded machine's lags alone cross it, so as tests they would
    # judge the machine, not the fault (docs/sim_to_real.md, "What the gate caught").
])
def test_a_fault_fails_the_gate_naming_its_joints(ros_env: dict[str, str], tmp_path: Path,
                                                  case: Case) -> None:
    from skel_ros.analysis import Outcome, judge, load_criteria
    from skel_ros.nodes.sim_to_real import RunConfig, RunError, run_sim_to_real

    try:
        result = run_sim_to_real(RunConfig(
            skel_file=example("arm.skel"),
            hardware_config=resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml"),
            trajectory=example("arm_trajectory.yaml"), out_dir=tmp_path / "run",
            truth=DATA / case.truth), log=lambda _line: None)
    except RunError as exc:
        from skel_ros.hardware.dynamixel.control_table import BUS_WATCHDOG_TEXT

        if BUS_WATCHDOG_TEXT in str(exc):
            pytest.skip(f"the machine starved the hardware node: {exc}")
        raise
    verdict = judge(result.comparison, load_criteria(resolve(case.criteria)))
    _skip_if_starved(verdict)
    failed = {c.joint for c in verdict.checks if c.outcome is Outcome.FAILED}
    report = "\n".join(c.message for c in verdict.checks if c.outcome is Outcome.FAILED)
    if not case.named:
        assert verdict.outcome is Outcome.PASSED, report
        return
    assert verdict.outcome is Outcome.FAILED, report
    assert case.named <= failed <= case.may_name, (failed, report)


def _skip_if_starved(verdict: Verdict) -> None:
    from skel_ros.analysis import Outcome

    starved = [c.message for c in verdict.checks if c.outcome is Outcome.NOT_JUDGED]
    if starved:
        pytest.skip("the machine starved a node, the run cannot be judged: "
                    + "; ".join(starved))
