"""The sweep spec (``skel_ros.sweep.spec``): axes, trial ids, truth files, errors at their line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skel_ros.model.truth import TruthError, parse_truth
from skel_ros.sweep import SpecError, load_spec, parse_spec

REPO = Path(__file__).resolve().parents[2]
CRITERIA = "criteria: package://skel_ros/config/criteria/arm.yaml\n"
TRUTHS = REPO / "test" / "nodes" / "data" / "truth"


def test_axes_give_every_combination_with_stable_distinct_ids() -> None:
    text = (CRITERIA + "engines: [dart, 'dart, mujoco']\n"
            "vary:\n  joints.elbow.friction: {from: 0.0, to: 0.2, steps: 3}\n"
            "seeds: {count: 2}\n")
    spec = parse_spec(text, "a.yaml", base=REPO)
    assert len(spec.trials) == 2 * 3 * 2
    assert spec.swept == ("engines", "seed", "vary:joints.elbow.friction")
    ids = [t.id for t in spec.trials]
    assert len(set(ids)) == len(ids)
    assert ids == [t.id for t in parse_spec(text, "b.yaml", base=REPO).trials]  # same spec
    frictions = sorted({dict(t.values)["joints.elbow.friction"] for t in spec.trials})
    assert frictions == [0.0, 0.1, 0.2]
    assert {t.engines for t in spec.trials} == {"dart", "dart,mujoco"}


def test_a_trials_truth_is_its_base_with_its_values_and_seed(tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text("model: heavy.skel\njoints:\n  wrist: {backlash: 0.05}\n")
    (tmp_path / "heavy.skel").write_text((TRUTHS / "arm_heavy_forearm.skel").read_text())
    spec = parse_spec(CRITERIA + "truths: [~, base.yaml]\nvary:\n  joints.wrist.delay: [0.01]\n"
                      "seeds: [4]\n", "s.yaml", base=tmp_path)
    plain, based = spec.trials
    truth = parse_truth(spec.truth_text(based) or "", "t")
    assert truth.seed == 4
    assert truth.joint("wrist").backlash == 0.05
    assert truth.joint("wrist").delay == 0.01
    assert truth.model == tmp_path / "heavy.skel"  # absolute: the trial's file is elsewhere
    assert parse_truth(spec.truth_text(plain) or "", "t").joint("wrist").backlash == 0.0
    assert parse_spec(CRITERIA, "s.yaml").truth_text(parse_spec(CRITERIA).trials[0]) is None


@pytest.mark.parametrize(("text", "line", "message"), [
    ("models: [a.skel]\n", 1, "missing 'criteria'"),
    (CRITERIA + "colours: [red]\n", 2, "unknown key 'colours'"),
    (CRITERIA + "\ntrajectories: [nowhere.xml]\n", 3, "nowhere.xml: no such file"),
    (CRITERIA + "engines: [dart, bullet]\n", 2, "got 'bullet'"),
    (CRITERIA + "seeds: [1, 1]\n", 2, "listed twice"),
    (CRITERIA + "seeds: {count: 0}\n", 2, "seeds: expected"),
    (CRITERIA + "vary:\n  joints.elbow.friction: [0.1]\n  joints.elbow.grip: [1]\n", 4,
     "'joints.elbow.grip' is no truth parameter"),
    (CRITERIA + "vary:\n\n  joints.elbow.friction: [0.1, -0.2]\n", 4,
     "friction must be a finite number >= 0, got -0.2"),
    (CRITERIA + "vary:\n  joints.knee.friction: [0.1]\n", 3, "'knee' is no DOF of"),
    (CRITERIA + "vary:\n  bodies.hand.mass:\n    from: 0\n    to: 1\n    steps: 0\n", 6,
     "steps must be an integer"),
    (CRITERIA + "physics: maybe\n", 2, "physics must be true or false"),
    (CRITERIA + "seeds: [1]\nseeds: [2]\n", 3, "duplicate key 'seeds'"),
])
def test_errors_are_at_their_line(text: str, line: int, message: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(text, "spec.yaml", base=REPO)
    assert caught.value.line == line, caught.value
    assert str(caught.value).startswith(f"spec.yaml:{line}: ")
    assert message in str(caught.value)


def test_a_bad_base_truth_is_reported_at_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("joints:\n  elbow:\n    friction: -1\n")
    with pytest.raises(TruthError, match=r"t\.yaml:3: .*friction must be"):
        parse_spec(CRITERIA + "truths: [t.yaml]\n", "s.yaml", base=tmp_path)


def test_the_command_says_the_spec_error_and_exits_1(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(CRITERIA + "vary:\n  joints.elbow.friction: []\n")
    done = subprocess.run([sys.executable, "-m", "skel_ros.cli.main", "sweep", str(spec), "-o",
                           str(tmp_path / "out")], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (f"error: {spec}:3: vary: joints.elbow.friction: an empty list"
                           " gives no trial\n")
    assert not (tmp_path / "out").exists()
    assert load_spec(REPO / "examples" / "sweep.yaml").trials  # the bundled example reads


def test_the_ray_backend_without_ray_says_which_extra_and_exits_2(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(CRITERIA)
    code = ("import sys; sys.modules['ray'] = None\n"  # import ray raises ImportError
            "from skel_ros.cli.main import main\n"
            f"sys.exit(main(['sweep', {str(spec)!r}, '-o', {str(tmp_path / 'out')!r},"
            " '--backend', 'ray']))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr == "error: --backend ray needs Ray: pip install skel_ros[ray]\n"
    assert "Traceback" not in done.stderr


def test_other_criteria_make_other_trials() -> None:
    """A trial's result is its verdict against the spec's criteria: a spec judged by other
    bounds gives other ids, so a resumed sweep does not reuse verdicts judged by the old."""
    arm = parse_spec(CRITERIA, "a.yaml", base=REPO).trials
    gripper = parse_spec("criteria: package://skel_ros/config/criteria/gripper_arm.yaml\n",
                         "a.yaml", base=REPO).trials
    assert [t.id for t in arm] != [t.id for t in gripper]


@pytest.mark.parametrize(("line", "flag", "absent"), [
    ("", None, ("--physics", "--ideal-actuators")),
    ("physics: true\n", "--physics", ("--ideal-actuators",)),
    ("physics: false\n", "--ideal-actuators", ("--physics",)),
])
def test_physics_true_false_or_sim_to_reals_own_choice(
        tmp_path: Path, line: str, flag: str | None, absent: tuple[str, ...]) -> None:
    """``physics: false`` asks for ideal actuators (sim-to-real's default is physics where
    every bus has it); without the key, sim-to-real chooses; the ids differ."""
    from skel_ros.sweep.trial import sim_to_real_command

    spec = parse_spec(CRITERIA + line, "a.yaml", base=REPO)
    command = sim_to_real_command(spec, spec.trials[0], tmp_path)
    if flag is not None:
        assert flag in command
    assert not set(absent) & set(command)
    assert spec.trials[0].params()["physics"] == {"": None, "physics: true\n": True,
                                                  "physics: false\n": False}[line]
