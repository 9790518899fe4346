"""The gate against the faults of issue 28, on the physics-backed servos in this process.

The bundled arm's four emulated Dynamixel servos (``config/hardware/arm_dynamixel.yaml``)
move one physics model of the arm in this process (:func:`skel_ros.physical.rehearsal.
rehearse`: their goals written every 5 ms as the hardware node's 200 Hz loop does, read
after each step of their own clock) along a short trajectory in which every joint turns
back once (``data/reversal_trajectory.yaml``). The command and what the servos read are
the gate's ``command`` and ``real`` streams, judged by :func:`~skel_ros.analysis.judge`
with ``data/bench_criteria.yaml`` (the shipped real-vs-command bounds, a lag bound half a
grid step above the model's own lag per joint, a reversal bound). No ROS and no
scheduler are in the loop: the servos keep their own clock, every run of the model gives
the same lags on a loaded machine as on an idle one, so a lag one 10 ms grid step longer
is the fault, not the machine (a ROS run's lags move with the load: docs/sim_to_real.md,
"What the gate caught").

One run of the model itself (it must pass), one of a robot whose forearm weighs three
times the model's (the gate must name the shoulder pitch that carries it), and one of a
robot with three faults, each on its own joint (the gate must name exactly those): a
sticking elbow (friction 30x the model's: its lag), 10 ms more delay on the shoulder
pitch (its lag, one grid step) and 0.05 rad of play in the shoulder yaw's gears (the
motion lost where it turns back). The wrist, faultless, must pass. That each fault acts
in the emulator at all has its own tests: the delay in test_servo_physics.py, friction
in test_friction_physics.py, the play in test_backlash_physics.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skel_ros.analysis import JointSeries, Outcome, compare, judge, load_criteria
from skel_ros.physical.rehearsal import rehearse
from skel_ros.resources import example, resolve
from skel_ros.trajectory import load_trajectory, load_trajectory_model

if TYPE_CHECKING:
    from skel_ros.analysis import Verdict

DATA = Path(__file__).resolve().parent / "data"
HARDWARE = "package://skel_ros/config/hardware/arm_dynamixel.yaml"
# The real robot's own model, with a forearm three times the model's (the truth's `model`).
FOREARM = Path(__file__).resolve().parents[1] / "nodes/data/truth/forearm_mass.yaml"
# 0.5 kg in the real arm's hand (the model has 0.1 kg).
PAYLOAD = "bodies:\n  hand: {mass: 0.5, at: [0, 0, 0.04]}\n"
FAULTS = """\
joints:
  elbow: {friction: 0.3}
  shoulder_pitch: {delay: 0.01}
  shoulder_yaw: {backlash: 0.05}
"""


def play(tmp: Path, truth: str | Path | None) -> list[JointSeries]:
    """The trajectory on the emulated servos: the command and real streams."""
    truth_file = truth if isinstance(truth, Path) else None
    if isinstance(truth, str):
        truth_file = tmp / "truth.yaml"
        truth_file.write_text(truth, encoding="utf-8")
    model = example("arm.skel")
    run = rehearse(model, resolve(HARDWARE),
                   load_trajectory(DATA / "reversal_trajectory.yaml",
                                   load_trajectory_model(model)), truth=truth_file)
    return [JointSeries.from_samples("command", run.times, run.joints, run.command),
            JointSeries.from_samples("real", run.times + run.period, run.joints, run.real)]


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdict]:
    criteria = load_criteria(DATA / "bench_criteria.yaml")
    tmp = tmp_path_factory.mktemp("faults")
    return {name: judge(compare(play(tmp, truth)), criteria)
            for name, truth in (("model", None), ("faults", FAULTS), ("forearm", FOREARM),
                                ("payload", PAYLOAD))}


def failed(verdict: Verdict) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for check in verdict.with_outcome(Outcome.FAILED):
        out.setdefault(str(check.joint), set()).add(check.metric)
    return out


def test_the_model_itself_passes(verdicts: dict[str, Verdict]) -> None:
    verdict = verdicts["model"]
    assert verdict.outcome is Outcome.PASSED, [c.message for c in verdict.checks]


def test_each_fault_fails_the_gate_naming_its_joint(verdicts: dict[str, Verdict]) -> None:
    verdict = verdicts["faults"]
    assert verdict.outcome is Outcome.FAILED
    named = failed(verdict)
    assert set(named) == {"elbow", "shoulder_pitch", "shoulder_yaw"}, named  # not the wrist
    assert "lag" in named["elbow"]
    assert named["shoulder_pitch"] == {"lag"}
    assert named["shoulder_yaw"] == {"reversal"}


def test_a_wrong_link_mass_fails_the_gate_naming_the_joint_that_carries_it(
        verdicts: dict[str, Verdict]) -> None:
    """The real forearm weighs 0.6 kg where the model says 0.2: the shoulder pitch, which
    carries it farthest out, sags and trails (its lag, a grid step longer); the elbow,
    the yaw (a vertical axis) and the wrist do not show it on this bench."""
    verdict = verdicts["forearm"]
    assert verdict.outcome is Outcome.FAILED
    assert failed(verdict) == {"shoulder_pitch": {"lag"}}


def test_a_payload_in_the_hand_fails_the_gate_naming_the_joints_that_carry_it(
        verdicts: dict[str, Verdict]) -> None:
    """0.5 kg in the hand where the model has 0.1: the joints with a horizontal axis carry
    it and trail; the shoulder's yaw (its axis vertical) does not. (Was a 17 s ROS run of
    ``sim-to-real --truth``; the same emulator moves the same physics here.)"""
    verdict = verdicts["payload"]
    assert verdict.outcome is Outcome.FAILED
    assert set(failed(verdict)) == {"shoulder_pitch", "elbow", "wrist"}, failed(verdict)


def test_only_dynamixel_joints_of_the_trajectory_rehearse(tmp_path: Path) -> None:
    from skel_ros.hardware.errors import ConfigError

    trajectory = load_trajectory(DATA / "reversal_trajectory.yaml",
                                 load_trajectory_model(example("arm.skel")))
    mit = tmp_path / "mit.yaml"
    mit.write_text("buses:\n  can: {protocol: mit, transport: {interface: virtual, channel: x}}\n"
                   "joints:\n  wrist: {bus: can, id: 1, model: AK80-9}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mit.yaml:4: joint 'wrist' is on a mit bus"):
        rehearse(example("arm.skel"), mit, trajectory)
    dxl = tmp_path / "dxl.yaml"
    dxl.write_text("buses:\n  b: {protocol: dynamixel, transport: {port: /dev/null}}\njoints:\n"
                   "  wrist: {bus: b, id: 4, model: XL430-W250}\n"
                   "  gripper: {bus: b, id: 5, model: XL430-W250}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"dxl.yaml:5: joint 'gripper' is not in the traj"):
        rehearse(example("arm.skel"), dxl, trajectory)
