"""The truth file (skel_ros.model.truth): every key, its checks, and the real model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import load_model
from skel_ros.model.truth import (
    EMPTY_TRUTH,
    AddedMass,
    JointTruth,
    TruthError,
    apply_truth,
    load_truth,
    parse_truth,
    with_point_mass,
)
from skel_ros.model.types import Inertia

ARM = Path(__file__).resolve().parents[2] / "examples" / "arm.skel"

FULL = """\
seed: 7
model: real_arm.skel
joints:
  elbow:
    friction: 0.05
    damping: 0.2
    armature: 0.002
    backlash: 0.01
    delay: 0.01
    encoder_offset: -0.02
    encoder_noise: 0.001
bodies:
  hand:
    mass: 0.2
    at: [0, 0, 0.04]
"""


def test_every_key_with_its_unit() -> None:
    truth = parse_truth(FULL, "t.yaml", base=Path("/robots"))
    assert truth.seed == 7
    assert truth.model == Path("/robots/real_arm.skel")
    assert truth.joint("elbow") == JointTruth(0.05, 0.2, 0.002, 0.01, 0.01, -0.02, 0.001, line=4)
    assert truth.bodies["hand"] == AddedMass(0.2, (0.0, 0.0, 0.04), line=13)
    assert not truth.empty
    # A joint not named is the model's, with perfect devices.
    assert truth.joint("wrist") == JointTruth()


@pytest.mark.parametrize("text", ["", "# nothing\n", "joints: {}\nbodies: {}\n",
                                  "joints:\n  elbow: {}\n"])
def test_the_empty_truth(text: str) -> None:
    truth = parse_truth(text, "t.yaml")
    assert truth.empty
    assert truth.seed == 0


@pytest.mark.parametrize(("text", "line", "words"), [
    ("seed: 1\nfriction: 2\n", 2, "unknown key 'friction' in the truth file"),
    ("joints:\n  elbow:\n    damping: 0.1\n    stiction: 0.2\n", 4,
     "unknown key 'stiction' in joint 'elbow'; known: friction, damping, armature"),
    ("bodies:\n  hand:\n    mass: 1\n    where: [0, 0, 0]\n", 4,
     "unknown key 'where' in body 'hand'; known: mass, at"),
    ("joints:\n  elbow:\n    friction: -0.1\n", 3, "friction must be a finite number >= 0"),
    ("joints:\n  elbow:\n    delay: .nan\n", 3, "delay must be a finite number >= 0"),
    ("joints:\n  elbow:\n    backlash: wide\n", 3, "backlash must be a finite number >= 0"),
    ("joints:\n  elbow:\n    damping: true\n", 3, "damping must be a finite number"),
    ("bodies:\n  hand:\n    at: [0, 0, 0]\n", 3, "missing 'mass'"),
    ("bodies:\n  hand:\n    mass: 1\n    at: [0, 0]\n", 4, "at must be [x, y, z]"),
    ("seed: -1\n", 1, "seed must be an integer >= 0"),
    ("seed: 1.5\n", 1, "seed must be an integer >= 0"),
    ("joints: [elbow]\n", 1, "joints must be a mapping"),
    ("joints:\n  elbow: 3\n", 2, "joint 'elbow' must be a mapping"),
    ("joints:\n  elbow: {}\n  elbow: {}\n", 3, "duplicate key 'elbow'"),
    ("joints: {elbow: [\n", 2, "invalid YAML"),
])
def test_mistakes_are_errors_at_their_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TruthError) as caught:
        parse_truth(text, "t.yaml")
    assert caught.value.line == line
    assert words in caught.value.message
    assert str(caught.value).startswith(f"t.yaml:{line}: ")


def test_load_truth_reads_a_file_and_says_which(tmp_path: Path) -> None:
    path = tmp_path / "truth.yaml"
    path.write_text("seed: 3\nmodel: other.skel\n", encoding="utf-8")
    truth = load_truth(path)
    assert (truth.seed, truth.model, truth.source) == (3, tmp_path / "other.skel", str(path))
    with pytest.raises(TruthError, match="cannot read the truth file"):
        load_truth(tmp_path / "missing.yaml")


def test_applying_the_empty_truth_changes_nothing() -> None:
    world = load_model(ARM)
    real = apply_truth(world, EMPTY_TRUTH)
    for a, b in zip(world.skeletons[0].dofs, real.skeletons[0].dofs, strict=True):
        assert (a.damping, a.coulomb_friction) == (b.damping, b.coulomb_friction)
    for a, b in zip(world.skeletons[0].bodies, real.skeletons[0].bodies, strict=True):
        assert a.inertia.mass == b.inertia.mass


def test_friction_damping_and_a_payload_go_into_the_real_model() -> None:
    world = load_model(ARM)
    truth = parse_truth("joints:\n  elbow: {friction: 0.05, damping: 0.3}\n"
                        "  wrist: {delay: 0.01}\n"
                        "bodies:\n  hand: {mass: 0.3, at: [0, 0, 0.04]}\n", "t.yaml")
    real = apply_truth(world, truth).skeletons[0]
    model = world.skeletons[0]
    assert (real.dof("elbow").coulomb_friction, real.dof("elbow").damping) == (0.05, 0.3)
    # Not said: the model's.
    assert real.dof("wrist").damping == model.dof("wrist").damping
    hand, before = real.body("hand").inertia, model.body("hand").inertia
    assert hand.mass == pytest.approx(before.mass + 0.3)
    expected = (before.mass * np.asarray(before.com) + 0.3 * np.array([0, 0, 0.04])) / hand.mass
    np.testing.assert_allclose(hand.com, expected)
    # The model itself is untouched.
    assert model.body("hand").inertia.mass == before.mass


def test_unknown_joints_and_bodies_are_errors_at_their_line() -> None:
    world = load_model(ARM)
    with pytest.raises(TruthError, match=r"t.yaml:2: joint 'elbw' is no DOF of .*known: "):
        apply_truth(world, parse_truth("joints:\n  elbw: {delay: 0.01}\n", "t.yaml"))
    with pytest.raises(TruthError, match=r"t.yaml:3: body 'palm' is no body"):
        apply_truth(world, parse_truth("seed: 1\nbodies:\n  palm: {mass: 1}\n", "t.yaml"))


def test_a_point_mass_moves_the_centre_and_adds_its_parallel_axis_moment() -> None:
    body = Inertia(2.0, np.zeros(3), np.diag([0.01, 0.01, 0.01]))
    loaded = with_point_mass(body, 1.0, (0.3, 0.0, 0.0))
    assert loaded.mass == 3.0
    np.testing.assert_allclose(loaded.com, [0.1, 0.0, 0.0])
    # About the new centre: 2 kg at 0.1 m and 1 kg at 0.2 m, off the x axis.
    np.testing.assert_allclose(np.diag(loaded.moment),
                               [0.01, 0.01 + 2 * 0.01 + 0.04, 0.01 + 2 * 0.01 + 0.04])
    assert with_point_mass(body, 0.0, (1.0, 0.0, 0.0)) is body
