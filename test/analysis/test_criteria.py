"""Criteria files: what they hold, and every mistake reported at its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from skel_ros.analysis import CriteriaError, load_criteria, parse_criteria

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
min_duration: 5.0
min_rate: 20
all:
  sim_real: {rms: 0.1, max: 0.3}
  real_command: {lag: 0.2}
  limit_hits: {real: 0}
joints:
  elbow:
    sim_real: {max: 0.5}
    limit_hits: {sim: 3}
"""


def test_bounds_and_per_joint_overrides() -> None:
    c = parse_criteria(GOOD, "c.yaml")
    assert c.min_duration is not None
    assert c.min_duration.value == 5.0
    assert c.min_duration.where == "c.yaml:1"
    assert c.min_rate is not None
    assert c.min_rate.value == 20.0
    wrist = c.for_joint("wrist")
    assert {k: b.value for k, b in wrist.errors.items()} == {
        ("sim", "real", "rms"): 0.1, ("sim", "real", "max"): 0.3,
        ("real", "command", "lag"): 0.2}
    elbow = c.for_joint("elbow")
    assert elbow.errors["sim", "real", "max"].value == 0.5  # replaced
    assert elbow.errors["sim", "real", "max"].where == "c.yaml:9"
    assert elbow.errors["sim", "real", "rms"].value == 0.1  # kept from `all`
    assert {s: b.value for s, b in elbow.limit_hits.items()} == {"real": 0.0, "sim": 3.0}
    assert c.joint_where == {"elbow": "c.yaml:8"}
    assert c.as_dict()["joints"]["elbow"] == {"sim_real": {"max": 0.5},
                                              "limit_hits": {"sim": 3.0}}


def test_an_empty_file_checks_nothing() -> None:
    c = parse_criteria("", "c.yaml")
    assert c.min_duration is None
    assert c.min_rate is None
    assert not c.for_joint("any").errors


@pytest.mark.parametrize(("name", "count"), [("arm.yaml", 9), ("quadruped.yaml", 8),
                                           ("arm_identified.yaml", 10),
                                           ("quadruped_identified.yaml", 8)])
def test_shipped_criteria_load(name: str, count: int) -> None:
    c = load_criteria(REPO / "config" / "criteria" / name)
    bounds = c.for_joint("any joint")
    # rms and max for 3 pairs, lag for the 2 against the command; the arm's servos (gears
    # with play) also the reversal error of real against the command
    assert len(bounds.errors) == count
    assert set(bounds.limit_hits) == {"command", "sim", "real"}
    assert c.min_duration is not None
    assert c.min_rate is not None


@pytest.mark.parametrize(("text", "line", "message"), [
    ("min_duration: -1\n", 1, "min_duration must be a finite number >= 0"),
    ("min_rate: fast\n", 1, "min_rate must be a finite number >= 0"),
    ("min_rate: .nan\n", 1, "must be a finite number"),
    ("speed: 3\n", 1, "unknown key 'speed' in the criteria file"),
    ("all:\n  sim_real: {rms: 0.1, mean: 0.2}\n", 2, "unknown key 'mean' in all sim_real"),
    ("all:\n  sim_reel: {rms: 0.1}\n", 2, "unknown key 'sim_reel' in all"),
    ("all:\n  sim_real: 0.1\n", 2, "all sim_real must be a mapping"),
    ("all:\n  limit_hits: {real: 1.5}\n", 2, "must be a whole number"),
    ("all:\n  limit_hits: {hardware: 1}\n", 2, "unknown key 'hardware'"),
    ("joints:\n  elbow:\n    sim_real: {max: true}\n", 3, "joint 'elbow' sim_real max"),
    ("joints:\n  elbow:\n", 2, "joint 'elbow' must be a mapping"),
    ("joints:\n  7: {}\n", 2, "a joint name must be a non-empty string"),
    ("min_rate: 1\nmin_rate: 2\n", 2, "duplicate key 'min_rate'"),
    ("all: [1, 2\n", 2, "invalid YAML"),
    ("- 1\n", 1, "the criteria file must be a mapping"),
])
def test_mistakes_are_reported_at_their_line(text: str, line: int, message: str) -> None:
    with pytest.raises(CriteriaError, match=message) as info:
        parse_criteria(text, "c.yaml")
    assert str(info.value).startswith(f"c.yaml:{line}: "), str(info.value)


def test_unreadable_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CriteriaError, match=r"none\.yaml: cannot read the criteria"):
        load_criteria(tmp_path / "none.yaml")
