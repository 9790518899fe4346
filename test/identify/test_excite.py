"""The excitation designer: within the limits, at rest at both ends, conditioned, seeded."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from skel_ros.cli.main import main
from skel_ros.identify import ExcitationError, design_excitation, trajectory_yaml
from skel_ros.model import load_model
from skel_ros.model.limits import LimitSet
from skel_ros.trajectory import check_limits, model_limits, parse_trajectory_yaml

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"


@pytest.fixture(scope="module")
def arm() -> tuple[object, LimitSet]:
    world = load_model(ARM)
    skel = next(s for s in world.skeletons if s.num_dofs)
    return world, LimitSet.from_skeleton(skel)


@pytest.fixture(scope="module")
def excitation(arm: tuple[object, LimitSet]) -> object:
    return design_excitation(arm[1], duration=10.0, harmonics=4, base_frequency=0.3, seed=3)


def test_the_trajectory_stays_within_the_limits_and_the_players_read_it(
        arm: tuple[object, LimitSet], excitation: object) -> None:
    world, limits = arm
    trajectory = parse_trajectory_yaml(trajectory_yaml(excitation), "excite.yaml")
    check_limits(trajectory, model_limits(world))  # raises past any limit
    t = np.linspace(0.0, excitation.lead_in + excitation.duration, 20001)
    q, qd, qdd = excitation.sample(t)
    for k, name in enumerate(excitation.joint_names):
        jl = limits[name]
        assert jl.position_lower < q[:, k].min()
        assert q[:, k].max() < jl.position_upper
        assert np.abs(qd[:, k]).max() <= 0.8 * jl.velocity_upper * (1 + 1e-6)
        # No acceleration limit in the arm: the default bound, times the fraction.
        assert np.abs(qdd[:, k]).max() <= 0.8 * 5.0 * 1.01
        assert np.ptp(q[:, k]) > 0.2  # every joint really moves


def test_it_starts_and_ends_at_rest_at_the_centre(excitation: object) -> None:
    ends = np.array([excitation.lead_in, excitation.lead_in + excitation.duration])
    q, qd, qdd = excitation.sample(ends)
    centres = [j.centre for j in excitation.joints]
    assert np.allclose(q, [centres, centres], atol=1e-9)
    assert np.allclose(qd, 0.0, atol=1e-9)
    assert np.allclose(qdd, 0.0, atol=1e-9)


def test_it_is_well_conditioned_and_the_seed_decides(arm: tuple[object, LimitSet],
                                                     excitation: object) -> None:
    assert 1.0 <= excitation.condition < 10.0
    options = {"duration": 5.0, "harmonics": 3, "base_frequency": 0.4, "joints": ["elbow"]}
    first = design_excitation(arm[1], seed=3, **options)
    again = design_excitation(arm[1], seed=3, **options)
    other = design_excitation(arm[1], seed=4, **options)
    assert np.array_equal(again.joints[0].a, first.joints[0].a)
    assert not np.allclose(other.joints[0].a, first.joints[0].a)


def test_joints_not_asked_for_hold_their_centre(arm: tuple[object, LimitSet]) -> None:
    e = design_excitation(arm[1], duration=5.0, harmonics=3, base_frequency=0.4,
                          joints=["elbow"], pose={"wrist": 0.5})
    assert [j.name for j in e.joints] == ["elbow"]
    assert dict(e.held)["wrist"] == 0.5
    q, _, _ = e.sample(np.linspace(0.0, 7.0, 50))
    assert np.all(q[:, e.joint_names.index("wrist")] == 0.5)


@pytest.mark.parametrize(("options", "words"), [
    ({"harmonics": 1}, "harmonics must be >= 2"),
    ({"duration": -1.0}, "duration must be > 0"),
    ({"fraction": 1.5}, "fraction must be in (0, 1]"),
    ({"joints": ["knee"]}, "unknown joint(s) 'knee'"),
    ({"pose": {"elbow": 9.0}}, "outside its position limits"),
    ({"harmonics": 40, "base_frequency": 1.0}, "below a quarter of the sample rate"),
])
def test_bad_options_are_refused_with_the_reason(arm: tuple[object, LimitSet],
                                                 options: dict, words: str) -> None:
    with pytest.raises(ExcitationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        design_excitation(arm[1], **options)


def test_the_command_writes_the_file_and_prints_the_condition_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "excite.yaml"
    assert main(["excite", "--skel", str(ARM), "--hardware-config",
                 str(REPO / "config/hardware/arm_dynamixel.yaml"), "-o", str(out),
                 "--duration", "5", "--harmonics", "3", "--base-frequency", "0.4"]) == 0
    printed = capsys.readouterr().out
    assert "condition number of the identification problem:" in printed
    assert "skel-ros sim-to-real ... --publish-rate 200 " in printed  # the YAML's loop rate
    number = float(printed.split("problem:")[1].split()[0])
    assert math.isfinite(number)
    trajectory = parse_trajectory_yaml(out.read_text(), str(out))
    # The hardware YAML's tighter limits: shoulder_pitch within +-1.5, wrist below 4 rad/s.
    q = np.array([p.positions for p in trajectory.points])
    qd = np.array([p.velocities for p in trajectory.points])
    assert np.abs(q[:, trajectory.joint_names.index("shoulder_pitch")]).max() <= 0.8 * 1.5
    assert np.abs(qd[:, trajectory.joint_names.index("wrist")]).max() <= 0.8 * 4.0 + 1e-6
    assert main(["excite", "--skel", str(ARM), "-o", str(out), "--pose", "elbow"]) == 1
    assert "expected JOINT=VALUE" in capsys.readouterr().err


@pytest.mark.parametrize("seed", range(3))
def test_a_short_slide_is_moved_fast_enough_to_count(seed: int) -> None:
    """A gripper's finger (4 cm of travel, 0.1 m/s) reaches the speed identify counts from.

    Identify leaves out samples slower than STILL_SPEED (a Coulomb friction's sign says
    nothing there); the finger reaches it only with its upper harmonics. Before, every
    random start of the design was that slow, rated alike (no samples), and the finger
    came out with a condition number of infinity: nothing to identify it from.
    """
    from skel_ros.identify.regressor import STILL_SPEED

    world = load_model(REPO / "examples" / "gripper_arm.urdf")
    skel = next(s for s in world.skeletons if s.num_dofs)
    limits = LimitSet.from_skeleton(skel)
    excitation = design_excitation(limits, duration=20.0, seed=seed, joints=["finger_left"])
    (finger,) = excitation.joints
    assert math.isfinite(finger.condition)
    t = np.linspace(0.0, excitation.duration, 20001)
    _, qd, _ = finger.sample(t)
    assert np.mean(np.abs(qd) >= STILL_SPEED) > 0.05  # 20 s at 50 Hz: 50 samples or more
    trajectory = parse_trajectory_yaml(trajectory_yaml(excitation), "excite.yaml")
    check_limits(trajectory, model_limits(world))
