"""Equal to DART on the corpus: our model vs DART 6.20's own dump of every loadable file.

For each fixture in the SKEL corpus's ``reference`` folder (``SKEL_CORPUS``) (written by dartpy 6.20's
``SkelParser.readWorld``), the model ``load_skel`` builds must have the same
skeletons, joints, DOFs and bodies, in the same order, with the same names,
types, actuator types, limits, initial values, dynamics parameters, masses,
COMs, inertias, ``T_parent_to_joint``, ``T_child_to_joint``, body world
transforms at the initial configuration and shapes, all within 1e-9.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skel_ros.model import load_skel
from skel_ros.model.report import world_to_dict

from corpus_data import (
    compare,
    corpus_file,
    fixture_files,
    fixture_id,
    load_fixture,
    requires_corpus,
)

FIXTURES = fixture_files()


@requires_corpus
def test_every_loadable_corpus_file_has_a_fixture() -> None:
    assert len(FIXTURES) >= 60


@requires_corpus
@pytest.mark.parametrize("fixture_path", FIXTURES, ids=[fixture_id(p) for p in FIXTURES])
def test_model_equals_dart(fixture_path: Path) -> None:
    dart = load_fixture(fixture_path)
    world = load_skel(corpus_file(dart))
    errors: list[str] = []
    compare(world_to_dict(world), dart, "", errors)
    assert not errors, f"{len(errors)} difference(s):\n" + "\n".join(errors[:40])


@requires_corpus
def test_comparison_detects_a_difference() -> None:
    """The comparison itself can fail: a 1e-6 change in one inertia entry is caught."""
    dart = load_fixture(FIXTURES[0])
    ours = world_to_dict(load_skel(corpus_file(dart)))
    body = next(b for s in ours["skeletons"] for b in s["bodies"])
    body["moment_of_inertia"][0][0] += 1e-6
    errors: list[str] = []
    compare(ours, dart, "", errors)
    assert any("moment_of_inertia[0][0]" in e for e in errors)
