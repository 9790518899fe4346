"""Phobos dictionaries: export, import, round trips over the corpus, errors.

Round trips (every loadable corpus file, plus ``features.skel``):

1. SKEL -> Phobos (YAML and JSON text, with the ``skel`` keys) -> model equals the
   original in every field within 1e-9.
2. Standard Phobos keys only (every ``skel`` key removed, as a dictionary written
   by Phobos itself would be): each skeleton whose joints all have a Phobos type
   comes back with the same structure and, compared in the world frame, the same
   joint frames, axes, masses, COMs, inertias, shape poses and geometry, colours,
   collidability and the limits Phobos holds. What Phobos cannot represent is
   listed in ``NOT_REPRESENTABLE`` and excluded from that comparison; skeletons
   with joint types Phobos lacks are refused with a PhobosError that says so.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from corpus_data import corpus_file, fixture_files, fixture_id, load_fixture, requires_corpus
from model_compare import diff_models

from skel_ros.model import (
    JointType,
    PhobosError,
    SkelError,
    Skeleton,
    World,
    load_model,
    load_phobos,
    load_skel,
    world_to_phobos,
)
from skel_ros.model.phobos import (
    PhobosMotor,
    dump_phobos,
    phobos_motors,
    phobos_to_world,
    write_phobos,
)
from skel_ros.model.types import Plane

REPO = Path(__file__).resolve().parents[2]
FIXTURES = fixture_files()
FEATURES = REPO / "test" / "sim" / "data" / "features.skel"

# What a Phobos dictionary without skel-ros' ``skel`` keys cannot represent
# (docs/interchange.md has the same list).
NOT_REPRESENTABLE = {
    "joint types": "ball, euler, universal, translational, translational2d, screw",
    "T_child_to_joint": "link frame = joint frame; bodies come back framed at their joints",
    "skeleton frame": "root link poses are world poses",
    "mobile": "no such key",
    "world physics": "time step, gravity, collision detector",
    "initial positions / velocities": "no such key",
    "acceleration limits": "no such key",
    "asymmetric velocity / force limits": "Phobos' velocity and effort are one bound",
    "finite bounds of continuous joints and one-sided position limits": "need both bounds",
    "damping, Coulomb friction, spring stiffness, rest position": "no such key",
    "actuator types": "no such key",
    "gravity modes": "no such key",
    "markers": "no such key",
    "soft bodies": "no such key",
    "plane equations": "a Phobos plane is a finite patch; normal and offset are lost",
    "moment_from_shapes": "the moment is written, so it comes back given",
    "preserved DOF names, the implicit flag of DART's root joints": "no such key",
    "planar joints' in-plane axes": "rebuilt from the normal",
}
PHOBOS_TYPES = {JointType.WELD, JointType.REVOLUTE, JointType.PRISMATIC, JointType.FREE,
                JointType.PLANAR}


def _worlds() -> list[tuple[str, World, Path]]:
    out = [(fixture_id(p), load_skel(corpus_file(load_fixture(p))), corpus_file(load_fixture(p)))
           for p in FIXTURES]
    out.append(("features.skel", load_skel(FEATURES), FEATURES))
    return out


# --------------------------------------------------------------------------- full round trip


@requires_corpus
@pytest.mark.parametrize("fixture_path", FIXTURES, ids=[fixture_id(p) for p in FIXTURES])
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_round_trip_with_skel_keys_is_exact(fixture_path: Path, fmt: str, tmp_path: Path) -> None:
    src = corpus_file(load_fixture(fixture_path))
    original = load_skel(src)
    path = write_phobos(original, tmp_path / f"model.{'yml' if fmt == 'yaml' else 'json'}")
    again = load_phobos(path)
    diffs = diff_models(original, again)
    assert not diffs, "\n".join(diffs[:20])
    # load_model picks the format from the content, not the extension.
    disguised = tmp_path / "model.skel"
    disguised.write_text(path.read_text())
    assert not diff_models(original, load_model(disguised))


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_features_round_trip(fmt: str) -> None:
    original = load_skel(FEATURES)
    text = dump_phobos(world_to_phobos(original), fmt)
    assert not diff_models(original, load_phobos(text))


def test_json_is_strict_json() -> None:
    text = dump_phobos(world_to_phobos(load_skel(FEATURES)), "json")
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard constant {c}"))


# --------------------------------------------------------------------------- standard keys only


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k != "skel"}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _rot(t: Any) -> np.ndarray:
    return np.asarray(t)[:3, :3]


def _close(a: Any, b: Any, what: str, errors: list[str]) -> None:
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    same = (x == y) | (np.abs(x - y) <= 1e-9)
    if x.shape != y.shape or not same.all():
        errors.append(f"{what}: {x.tolist()} != {y.tolist()}")


def _standard_diff(orig: Skeleton, imp: Skeleton) -> list[str]:  # noqa: C901, PLR0912
    """Differences in what standard Phobos keys hold, compared in the world frame."""
    errors: list[str] = []
    if [j.name for j in orig.joints] != [j.name for j in imp.joints]:
        return [f"joints {[j.name for j in orig.joints]} != {[j.name for j in imp.joints]}"]
    for jo, ji in zip(orig.joints, imp.joints, strict=True):
        where = f"joint {jo.name}"
        if (jo.type, jo.parent, jo.child) != (ji.type, ji.parent, ji.child):
            errors.append(f"{where}: {(jo.type, jo.parent, jo.child)} != {(ji.type, ji.parent, ji.child)}")  # noqa: E501
            continue
        bo, bi = orig.body(jo.child), imp.body(ji.child)
        w_joint = np.asarray(bo.rest_transform) @ np.asarray(jo.T_child_to_joint)
        _close(w_joint, bi.rest_transform, f"{where} frame in the world", errors)
        w_imp = np.asarray(bi.rest_transform)
        for ao, ai in zip(jo.axes, ji.axes, strict=True):
            _close(_rot(w_joint) @ ao, _rot(w_imp) @ ai, f"{where} axis", errors)
        # Mass properties in the world.
        _close(bo.inertia.mass, bi.inertia.mass, f"{where} mass", errors)
        wo, wi = np.asarray(bo.rest_transform), w_imp
        _close(_rot(wo) @ bo.inertia.com + wo[:3, 3], _rot(wi) @ bi.inertia.com + wi[:3, 3],
               f"{where} COM", errors)
        _close(_rot(wo) @ bo.inertia.moment @ _rot(wo).T,
               _rot(wi) @ bi.inertia.moment @ _rot(wi).T, f"{where} inertia", errors)
        if len(bo.shapes) != len(bi.shapes):
            errors.append(f"{where}: {len(bo.shapes)} shapes != {len(bi.shapes)}")
            continue
        for so, si in zip(bo.shapes, bi.shapes, strict=True):
            sw = f"{where} shape {so.name}"
            if (so.name, so.role, so.geometry.kind, so.collidable) != (
                    si.name, si.role, si.geometry.kind, si.collidable):
                errors.append(f"{sw}: differs")
                continue
            _close(wo @ so.transform, wi @ si.transform, f"{sw} pose", errors)
            if not isinstance(so.geometry, Plane):
                errors.extend(diff_models(so.geometry, si.geometry, path=sw))
            if (so.color is None) != (si.color is None) or (
                    so.color is not None and not np.allclose(so.color, si.color)):
                errors.append(f"{sw}: colour")
        # The limits Phobos holds (one-DOF joints).
        if len(jo.dofs) == 1:
            do, di = orig.dof(jo.dofs[0]), imp.dof(ji.dofs[0])
            both = math.isfinite(do.position_lower) and math.isfinite(do.position_upper)
            if both:
                _close([do.position_lower, do.position_upper],
                       [di.position_lower, di.position_upper], f"{where} position limits", errors)
            if math.isfinite(do.velocity_upper) and do.velocity_lower == -do.velocity_upper:
                _close(do.velocity_upper, di.velocity_upper, f"{where} velocity", errors)
            if math.isfinite(do.force_upper) and do.force_lower == -do.force_upper:
                _close(do.force_upper, di.force_upper, f"{where} effort", errors)
    return errors


def _models(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["models"] if "models" in doc and "links" not in doc else [doc]


@requires_corpus
def test_standard_keys_round_trip_up_to_what_phobos_cannot_represent() -> None:
    compared = refused = 0
    for name, world, src in _worlds():
        doc = world_to_phobos(world, base_dir=src.parent)
        for skel, model in zip(world.skeletons, _models(doc), strict=True):
            plain = _strip(model)
            if {j.type for j in skel.joints} <= PHOBOS_TYPES:
                imported = phobos_to_world(plain, source=name, base_dir=src.parent)
                errors = _standard_diff(skel, imported.skeletons[0])
                assert not errors, f"{name} / {skel.name}:\n" + "\n".join(errors[:20])
                compared += 1
            else:
                with pytest.raises(PhobosError, match="skel") as info:
                    phobos_to_world(plain, source=name, base_dir=src.parent)
                assert "/joints/" in info.value.location.path
                refused += 1
    assert compared >= 60
    assert refused >= 10


def test_standard_comparison_can_fail() -> None:
    world = load_skel(FEATURES)
    skel = next(s for s in world.skeletons if {j.type for j in s.joints} <= PHOBOS_TYPES)
    index = world.skeletons.index(skel)
    model = copy.deepcopy(_models(world_to_phobos(world))[index])
    link = next(iter(model["links"].values()))
    link["inertial"]["mass"] += 0.5
    imported = phobos_to_world(_strip(model))
    assert any("mass" in e for e in _standard_diff(skel, imported.skeletons[0]))


# --------------------------------------------------------------------------- Phobos' own dictionaries  # noqa: E501


PHOBOS_YAML = """\
name: two_link
links:
  base:
    name: base
    pose: {translation: [0, 0, 0.1], rotation_euler: [0, 0, 0]}
    inertial: {mass: 2.0, inertia: [0.02, 0, 0, 0.02, 0, 0.03]}
    visual:
      base_visual:
        geometry: {type: box, size: [0.2, 0.2, 0.1]}
        material: {name: grey, diffuseColor: [0.5, 0.5, 0.5]}
    collision:
      base_collision:
        geometry: {type: box, size: [0.2, 0.2, 0.1]}
        bitmask: 1
  arm:
    name: arm
    pose: [0, 0, 0.05, 1, 0, 0, 0]
    inertial: {mass: 0.5, inertia: [0.001, 0, 0, 0.001, 0, 0.0002], pose: [0, 0, 0.1, 1, 0, 0, 0]}
    collision:
      arm_collision:
        geometry: {type: cylinder, radius: 0.02, length: 0.2}
        pose: [0, 0, 0.1, 1, 0, 0, 0]
        bitmask: 0
joints:
  shoulder:
    parent: base
    child: arm
    type: hinge
    axis: [0, 1, 0]
    limits: {lower: -1.0, upper: 1.5, velocity: 2.0, effort: 10.0}
"""


def test_dictionary_written_by_phobos_loads() -> None:
    world = load_phobos(PHOBOS_YAML)
    skel = world.skeletons[0]
    assert [j.name for j in skel.joints] == ["root", "shoulder"]
    assert skel.joints[0].type is JointType.FREE
    shoulder = skel.joint("shoulder")
    assert shoulder.type is JointType.REVOLUTE
    np.testing.assert_allclose(shoulder.axes[0], [0, 1, 0])
    np.testing.assert_allclose(shoulder.T_parent_to_joint[:3, 3], [0, 0, 0.05])
    dof = skel.dof("shoulder")
    assert (dof.position_lower, dof.position_upper) == (-1.0, 1.5)
    assert (dof.velocity_lower, dof.velocity_upper) == (-2.0, 2.0)
    assert (dof.force_lower, dof.force_upper) == (-10.0, 10.0)
    arm = skel.body("arm")
    np.testing.assert_allclose(arm.inertia.com, [0, 0, 0.1])
    assert arm.shapes[0].geometry.kind == "cylinder"
    assert arm.shapes[0].collidable is False
    np.testing.assert_allclose(skel.body("base").shapes[0].color, [0.5, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(skel.body("base").rest_transform[:3, 3], [0, 0, 0.1])


# --------------------------------------------------------------------------- motors


def test_motors_from_a_hardware_mapping_round_trip() -> None:
    world = load_skel(REPO / "examples" / "arm.skel")
    dof = world.skeletons[0].dofs[0]
    motor = PhobosMotor(name="m1", dof=dof.name, type="dynamixel", model="XM430-W350",
                        bus="arm_bus", id=3, mode="position", gear_ratio=2.0, direction=-1,
                        zero_offset=0.1)
    doc = world_to_phobos(world, motors=[motor])
    entry = doc["motors"]["m1"]
    assert entry["joint"] == dof.joint
    if math.isfinite(dof.velocity_upper):
        assert entry["maxSpeed"] == dof.velocity_upper
    back = phobos_motors(yaml.safe_load(dump_phobos(doc)))
    assert len(back) == 1
    assert (back[0].dof, back[0].id, back[0].gear_ratio, back[0].direction, back[0].model) == (
        dof.name, 3, 2.0, -1, "XM430-W350")
    with pytest.raises(SkelError, match="does not have"):
        world_to_phobos(world, motors=[PhobosMotor(name="x", dof="nope")])


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("mass: 0.5", "mass: heavy", "/links/arm/inertial/mass"),
        ("type: hinge", "type: ball", "/joints/shoulder/type"),
        ("child: arm", "child: nowhere", "/joints/shoulder/child"),
        ("size: [0.2, 0.2, 0.1]}\n        material", "size: [0.2, 0.2]}\n        material",
         "/links/base/visual/base_visual/geometry/size"),
        ("radius: 0.02", "radius: -0.02", "/links/arm/collision/arm_collision/geometry/radius"),
        ("axis: [0, 1, 0]", "axis: [0, 0, 0]", "/joints/shoulder/axis"),
        ("velocity: 2.0", "velocity: .nan", "/joints/shoulder/limits/velocity"),
    ],
)
def test_bad_values_name_line_and_key_path(old: str, new: str, key: str) -> None:
    assert old in PHOBOS_YAML
    text = PHOBOS_YAML.replace(old, new, 1)
    with pytest.raises(PhobosError) as info:
        load_phobos(text, name="robot.yml")
    loc = info.value.location
    assert loc.file == "robot.yml"
    assert loc.path == key
    expected_line = next(i for i, line in enumerate(text.splitlines(), 1)
                         if new.splitlines()[0] in line)
    assert loc.line == expected_line, str(info.value)


def test_malformed_text_and_loops() -> None:
    with pytest.raises(PhobosError, match="malformed YAML") as info:
        load_phobos("links:\n  a: [1, 2\n", name="x.yml")
    assert info.value.location.line >= 2
    with pytest.raises(PhobosError, match="malformed JSON"):
        load_phobos('{"links": {', name="x.json")
    loop = {"links": {"a": {}, "b": {}}, "joints": {
        "j1": {"parent": "a", "child": "b", "type": "fixed"},
        "j2": {"parent": "b", "child": "a", "type": "fixed"}}}
    with pytest.raises(PhobosError, match="loop"):
        phobos_to_world(loop)
    with pytest.raises(PhobosError, match="aliases"):
        load_phobos("a: &x [1]\nlinks: {l: {}}\njoints: {}\nb: *x\n")
