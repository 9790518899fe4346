"""SKEL writer: model -> SKEL -> the same model, for us and for DART.

1. For every loadable corpus file (and the fuzzer's synthetic file and the
   simulation tests' ``features.skel``, which hold what the corpus lacks): write,
   ``load_skel`` the text, and every field of the model is equal within 1e-9
   (``model_compare.diff_models``; locations, source and warnings are provenance).
2. For every corpus fixture: write the file, let dartpy 6.20's
   ``SkelParser.readWorld`` read it, dump what DART built in the fixtures' layout,
   and compare with DART's fixture of the *original* file (``corpus_data.compare``,
   1e-9).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from corpus_data import (
    compare,
    corpus_file,
    fixture_files,
    fixture_id,
    load_fixture,
    requires_corpus,
)
from model_compare import diff_models

from skel_ros.model import ExportError, SkelError, load_skel, world_to_skel, write_skel

REPO = Path(__file__).resolve().parents[2]
FIXTURES = fixture_files()
EXTRA = [REPO / "test" / "sim" / "data" / "features.skel", REPO / "test" / "sim" / "data" / "two_arms.skel"]  # noqa: E501


def _fuzz_module() -> Any:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import fuzz_skel
    finally:
        sys.path.pop(0)
    return fuzz_skel


@requires_corpus
@pytest.mark.parametrize("fixture_path", FIXTURES, ids=[fixture_id(p) for p in FIXTURES])
def test_write_then_load_gives_the_same_model(fixture_path: Path, tmp_path: Path) -> None:
    src = corpus_file(load_fixture(fixture_path))
    original = load_skel(src)
    out = write_skel(original, tmp_path / "out.skel")
    again = load_skel(out)
    diffs = diff_models(original, again)
    assert not diffs, "\n".join(diffs[:20])
    # The same from a string, with the original directory as the base for meshes.
    text = world_to_skel(original, base_dir=src.parent)
    assert not diff_models(original, load_skel(text, name=str(src)))


@pytest.mark.parametrize("path", EXTRA, ids=lambda p: p.name)
def test_features_round_trip(path: Path) -> None:
    original = load_skel(path)
    again = load_skel(world_to_skel(original))  # absolute mesh paths: loads from anywhere
    assert not diff_models(original, again)


@requires_corpus
def test_synthetic_fuzz_seed_round_trips() -> None:
    seed = _fuzz_module().synthetic_seed()
    original = load_skel(seed.text, name=seed.name)
    again = load_skel(world_to_skel(original), name=seed.name)
    assert not diff_models(original, again)
    types = {j.type.value for s in original.skeletons for j in s.joints}
    assert {"screw", "universal", "euler", "planar", "translational"} <= types


def test_comparison_can_fail() -> None:
    world = load_skel(EXTRA[0])
    text = world_to_skel(world).replace("<mass>", "<mass>1", 1)
    assert diff_models(world, load_skel(text))


def test_names_that_xml_cannot_hold_are_an_export_error() -> None:
    import dataclasses

    world = load_skel(EXTRA[0])
    skel = dataclasses.replace(world.skeletons[0], name="bad\x01name")
    with pytest.raises(ExportError) as info:
        world_to_skel(dataclasses.replace(world, skeletons=(skel, *world.skeletons[1:])))
    assert isinstance(info.value, SkelError)
    assert "cannot be written in XML" in str(info.value)


# --------------------------------------------------------------------------- DART


def _dart_fixture(world: Any) -> dict[str, Any]:
    """What dartpy built, in the corpus fixtures' layout (the keys the model is compared on)."""
    from skel_ros.model.report import number

    def mat(m: Any) -> list[list[float]]:
        return [[float(v) for v in row] for row in np.asarray(m)]

    cd = world.getConstraintSolver().getCollisionDetector()
    out: dict[str, Any] = {
        "time_step": world.getTimeStep(),
        "gravity": [float(v) for v in world.getGravity()],
        "collision_detector": cd.getType(),
        "num_skeletons": world.getNumSkeletons(),
        "skeletons": [],
    }
    for i in range(world.getNumSkeletons()):
        sk = world.getSkeleton(i)
        joints = []
        for j in sk.getJoints():
            parent = j.getParentBodyNode()
            joints.append({
                "name": j.getName(), "type": j.getType(),
                "parent_body": None if parent is None else parent.getName(),
                "child_body": j.getChildBodyNode().getName(),
                "actuator_type": str(j.getActuatorType()).split(".")[-1],
                "num_dofs": j.getNumDofs(),
                "T_parent_to_joint": mat(j.getTransformFromParentBodyNode().matrix()),
                "T_child_to_joint": mat(j.getTransformFromChildBodyNode().matrix()),
            })
        dofs = []
        index = 0
        for j in sk.getJoints():
            for k in range(j.getNumDofs()):
                dofs.append(_dof(sk.getDof(index), j.getName(), k, number))
                index += 1
        bodies = []
        for b in sk.getBodyNodes():
            inertia = b.getInertia()
            bodies.append({
                "name": b.getName(), "parent_joint": b.getParentJoint().getName(),
                "mass": inertia.getMass(),
                "local_com": [float(v) for v in inertia.getLocalCOM()],
                "moment_of_inertia": mat(inertia.getMoment()),
                "gravity_mode": b.getGravityMode(),
                "num_markers": b.getNumMarkers(),
                "world_transform": mat(b.getWorldTransform().matrix()),
                "shapes": [{"name": sn.getName(), "type": sn.getShape().getType(),
                            "relative_transform": mat(sn.getRelativeTransform().matrix())}
                           for sn in b.getShapeNodes()],
            })
        out["skeletons"].append({
            "name": sk.getName(), "mobile": sk.isMobile(), "num_dofs": sk.getNumDofs(),
            "joints": joints, "dofs": dofs, "bodies": bodies,
        })
    return out


def _dof(d: Any, joint: str, k: int, number: Any) -> dict[str, Any]:
    return {
        "name": d.getName(), "joint": joint, "index_in_joint": k,
        "position_lower": number(d.getPositionLowerLimit()),
        "position_upper": number(d.getPositionUpperLimit()),
        "initial_position": number(d.getInitialPosition()),
        "initial_velocity": number(d.getInitialVelocity()),
        "velocity_lower": number(d.getVelocityLowerLimit()),
        "velocity_upper": number(d.getVelocityUpperLimit()),
        "force_lower": number(d.getForceLowerLimit()),
        "force_upper": number(d.getForceUpperLimit()),
        "damping": number(d.getDampingCoefficient()),
        "coulomb_friction": number(d.getCoulombFriction()),
        "spring_stiffness": number(d.getSpringStiffness()),
        "rest_position": number(d.getRestPosition()),
        "name_preserved": d.isNamePreserved(),
    }


def _subset(fixture: Any, ours: Any) -> Any:
    """The fixture restricted to the keys the dump has (shape params, after_steps ... dropped)."""
    if isinstance(fixture, dict) and isinstance(ours, dict):
        return {k: _subset(v, ours[k]) for k, v in fixture.items() if k in ours}
    if isinstance(fixture, list) and isinstance(ours, list) and len(fixture) == len(ours):
        return [_subset(a, b) for a, b in zip(fixture, ours, strict=True)]
    return fixture


@requires_corpus
@pytest.mark.parametrize("fixture_path", FIXTURES, ids=[fixture_id(p) for p in FIXTURES])
def test_dart_reads_the_written_file_as_the_original(fixture_path: Path, tmp_path: Path) -> None:
    dartpy = pytest.importorskip("dartpy")
    fixture = load_fixture(fixture_path)
    world = load_skel(corpus_file(fixture))
    out = write_skel(world, tmp_path / "written.skel")
    dart_world = dartpy.utils.SkelParser.readWorld(f"file://{out}")
    assert dart_world is not None
    ours = _dart_fixture(dart_world)
    expected = _subset(fixture, ours)
    assert (expected["skeletons"] and all(s["joints"] is not None for s in expected["skeletons"])) \
        or fixture["num_skeletons"] == 0
    errors: list[str] = []
    compare(ours, expected, "", errors)
    assert not errors, f"{len(errors)} difference(s):\n" + "\n".join(errors[:30])


@requires_corpus
def test_dart_comparison_can_fail(tmp_path: Path) -> None:
    dartpy = pytest.importorskip("dartpy")
    fixture = load_fixture(FIXTURES[1])
    world = load_skel(corpus_file(fixture))
    text = world_to_skel(world, base_dir=tmp_path).replace("<mass>", "<mass>2", 1)
    path = tmp_path / "changed.skel"
    path.write_text(text)
    ours = _dart_fixture(dartpy.utils.SkelParser.readWorld(f"file://{path}"))
    errors: list[str] = []
    compare(ours, _subset(fixture, ours), "", errors)
    assert any(".mass" in e for e in errors)
