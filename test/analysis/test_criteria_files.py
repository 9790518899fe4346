"""Criteria files read in full: what the JSON report shows of them, ``max_gap``, and the
exact text (file, line, what was expected) of each mistake.

Beside test_criteria.py, which checks the bounds a joint gets; these pin what mutation
testing (issue 35, docs/testing.md) showed no test read: the report's copy of the file,
the gap bound, and the line a message points at when the mistake is not on line 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.analysis import CriteriaError, load_criteria, parse_criteria
from skel_ros.analysis.criteria import DEFAULT_MAX_GAP

if TYPE_CHECKING:
    from pathlib import Path

FULL = """\
min_duration: 5.0
min_rate: 20
max_gap: 0.5
all:
  sim_real: {rms: 0.1, max: 0.3}
  limit_hits: {real: 0}
joints:
  elbow:
    real_command: {lag: 0.2}
"""


def test_the_report_shows_every_value_of_the_file() -> None:
    c = parse_criteria(FULL, "c.yaml")
    assert c.as_dict() == {
        "source": "c.yaml",
        "min_duration": 5.0,
        "min_rate": 20.0,
        "max_gap": 0.5,
        "all": {"sim_real": {"rms": 0.1, "max": 0.3}, "limit_hits": {"real": 0.0}},
        "joints": {"elbow": {"real_command": {"lag": 0.2}}},
    }


def test_an_empty_file_reports_only_the_default_gap() -> None:
    c = parse_criteria("", "c.yaml")
    assert c.as_dict() == {"source": "c.yaml", "max_gap": DEFAULT_MAX_GAP, "all": {},
                           "joints": {}}
    assert c.max_gap.where == "default max_gap"


def test_max_gap_is_read_with_its_line() -> None:
    c = parse_criteria(FULL, "c.yaml")
    assert c.max_gap.value == 0.5
    assert c.max_gap.where == "c.yaml:3"
    assert c.joint_where == {"elbow": "c.yaml:8"}
    assert c.all.errors["sim", "real", "rms"].where == "c.yaml:5"
    assert c.all.limit_hits["real"].where == "c.yaml:6"


def test_a_string_without_a_name_is_called_string() -> None:
    with pytest.raises(CriteriaError) as info:
        parse_criteria("min_rate: -1\n")
    assert str(info.value) == "<string>:1: min_rate must be a finite number >= 0, got -1"


def test_a_file_is_read_as_utf8_and_named_in_its_bounds(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("# Grenzwerte für den Arm (°, µ)\nmax_gap: 0.3\n", encoding="utf-8")
    c = load_criteria(path)
    assert c.source == str(path)
    assert c.max_gap.where == f"{path}:2"


def test_a_missing_file_says_why(tmp_path: Path) -> None:
    path = tmp_path / "none.yaml"
    with pytest.raises(CriteriaError) as info:
        load_criteria(path)
    assert str(info.value) == f"{path}: cannot read the criteria: No such file or directory"


def test_a_file_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"# f\xfcr\nmax_gap: 0.3\n")
    with pytest.raises(CriteriaError, match=r"latin1\.yaml: cannot read the criteria: "
                                            r"'utf-8' codec can't decode"):
        load_criteria(path)


@pytest.mark.parametrize(("text", "message"), [
    # The message names the key, its line (not line 1) and, for an unknown key, the keys
    # that are known.
    ("min_rate: 1\nmax_gap: -0.1\n",
     "c.yaml:2: max_gap must be a finite number >= 0, got -0.1"),
    ("min_rate: 1\nspeed: 3\n",
     ("c.yaml:2: unknown key 'speed' in the criteria file; "
      "known: min_duration, min_rate, max_gap, all, joints")),
    ("min_rate: 1\nall:\n  limit_hits: {sim: -1}\n",
     "c.yaml:3: all limit_hits sim must be a whole number >= 0, got -1"),
    ("min_rate: 1\nall:\n  limit_hits: 3\n",
     "c.yaml:3: all limit_hits must be a mapping, got 3"),
    (("min_rate: 1\nall:\n  limit_hits: {sim: 1}\n  sim_real: {rms: 2}\n"
      "  real_sim: {}\n"),
     "c.yaml:5: unknown key 'real_sim' in all; known: "),
    ("min_rate: 1\nall:\n  limit_hits: {sim: 1, lab: 2}\n",
     "c.yaml:3: unknown key 'lab' in all limit_hits; known: command, sim, real"),
    ("min_rate: 1\nall: 3\n", "c.yaml:2: all must be a mapping, got 3"),
    ("min_rate: 1\njoints: [elbow]\n", "c.yaml:2: joints must be a mapping, got ['elbow']"),
    ("min_rate: 1\njoints:\n  elbow: {}\n  wrist: 4\n",
     "c.yaml:4: joint 'wrist' must be a mapping, got 4"),
    ("min_rate: 1\njoints:\n  elbow:\n    sim_real: {rms: 1}\n    sim_real: {max: 1}\n",
     "c.yaml:5: duplicate key 'sim_real'"),
    # A mapping that is not its entry's first key: its own line, not the entry's.
    ("all:\n  limit_hits: {sim: 1}\n  sim_real: 0.1\n", "c.yaml:3: all sim_real must be a mapping"),
    ("all:\n  sim_real: {rms: 1}\n  limit_hits: 3\n",
     "c.yaml:3: all limit_hits must be a mapping, got 3"),
    ("2024-01-01: 1\n", "c.yaml:1: mapping key datetime.date(2024, 1, 1) is not a scalar"),
])
def test_a_mistake_is_reported_in_full(text: str, message: str) -> None:
    with pytest.raises(CriteriaError) as info:
        parse_criteria(text, "c.yaml")
    assert str(info.value).startswith(message), str(info.value)


def test_a_whole_number_is_asked_for_limit_hits_only() -> None:
    with pytest.raises(CriteriaError) as info:
        parse_criteria("all:\n  limit_hits: {sim: .inf}\n", "c.yaml")
    assert str(info.value) == "c.yaml:2: all limit_hits sim must be a whole number >= 0, got inf"
    with pytest.raises(CriteriaError) as info:
        parse_criteria("all:\n  sim_real: {rms: .inf}\n", "c.yaml")
    assert str(info.value) == "c.yaml:2: all sim_real rms must be a finite number >= 0, got inf"
