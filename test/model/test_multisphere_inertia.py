"""Bodies with a ``multi_sphere`` shape and no ``<moment_of_inertia>``: DART 6.20's inertia.

DART 6.20 shares a mass-only body's mass among its shapes by volume, and a
``MultiSphereConvexHullShape`` reports volume 0 (its volume is computed from a
bounding box that has not been computed yet), so it counts with weight 1, as a
plane does, while its own moment is the box moment of its bounding box. These
tests load generated bodies that mix multi-spheres with other shapes in DART's
``SkelParser`` (the same text) and compare mass, COM and moment, and check that
the URDF and Phobos exports carry DART's values.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

import numpy as np
import pytest
from lxml import etree

from skel_ros.model import load_skel
from skel_ros.model.phobos import phobos_to_world, world_to_phobos
from skel_ros.model.urdf import world_to_urdf

if TYPE_CHECKING:
    from pathlib import Path

dartpy = pytest.importorskip("dartpy")

RTOL = 1e-12  # relative to the largest entry of DART's moment


def _num(rng: random.Random, lo: float, hi: float) -> str:
    return repr(round(rng.uniform(lo, hi), 6))


def _vec(rng: random.Random, n: int, lo: float, hi: float) -> str:
    return " ".join(_num(rng, lo, hi) for _ in range(n))


def _multi_sphere(rng: random.Random) -> str:
    spheres = "".join(
        f"<sphere><radius>{_num(rng, 0.01, 0.2)}</radius>"
        f"<position>{_vec(rng, 3, -0.3, 0.3)}</position></sphere>"
        for _ in range(rng.randint(1, 4))
    )
    return f"<multi_sphere>{spheres}</multi_sphere>"


def _other(rng: random.Random) -> str:
    kind = rng.choice(["box", "sphere", "ellipsoid", "cylinder", "capsule", "cone"])
    if kind == "box":
        return f"<box><size>{_vec(rng, 3, 0.02, 0.5)}</size></box>"
    if kind == "sphere":
        return f"<sphere><radius>{_num(rng, 0.02, 0.3)}</radius></sphere>"
    if kind == "ellipsoid":
        return f"<ellipsoid><size>{_vec(rng, 3, 0.02, 0.5)}</size></ellipsoid>"
    return (f"<{kind}><radius>{_num(rng, 0.02, 0.3)}</radius>"
            f"<height>{_num(rng, 0.02, 0.6)}</height></{kind}>")


def _shape(rng: random.Random, geometry: str) -> str:
    tag = rng.choice(["visualization_shape", "collision_shape"])
    pose = _vec(rng, 3, -0.3, 0.3) + " " + _vec(rng, 3, -3.0, 3.0)
    return f"<{tag}><transformation>{pose}</transformation><geometry>{geometry}</geometry></{tag}>"


def _body(rng: random.Random, name: str) -> str:
    shapes = [_shape(rng, _multi_sphere(rng)) for _ in range(rng.randint(1, 2))]
    shapes += [_shape(rng, _other(rng)) for _ in range(rng.randint(0, 3))]
    rng.shuffle(shapes)
    offset = f"<offset>{_vec(rng, 3, -0.1, 0.1)}</offset>" if rng.random() < 0.5 else ""
    return (f'<body name="{name}"><transformation>{_vec(rng, 6, -0.5, 0.5)}</transformation>'
            f"<inertia><mass>{_num(rng, 0.1, 20.0)}</mass>{offset}</inertia>"
            f"{''.join(shapes)}</body>")


def generated_skel(seed: int) -> str:
    """A chain of 1-4 mass-only bodies, each with at least one multi-sphere."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test data, not secrets
    n = rng.randint(1, 4)
    bodies = "".join(_body(rng, f"b{i}") for i in range(n))
    joints = '<joint type="free" name="j0"><parent>world</parent><child>b0</child></joint>'
    joints += "".join(
        f'<joint type="revolute" name="j{i}"><parent>b{i - 1}</parent><child>b{i}</child>'
        "<axis><xyz>0 0 1</xyz></axis></joint>"
        for i in range(1, n)
    )
    return f'<skel><world name="w"><skeleton name="s">{bodies}{joints}</skeleton></world></skel>'


# The case the issue reports in words: one multi-sphere and one box, where weighting the
# multi-sphere by its bounding-box volume gave a visibly different moment.
MS_AND_BOX = (
    '<skel><world name="w"><skeleton name="s"><body name="b"><inertia><mass>2</mass></inertia>'
    "<visualization_shape><transformation>0 0 0 0 0 0</transformation><geometry><multi_sphere>"
    "<sphere><radius>0.05</radius><position>0 0 0.1</position></sphere>"
    "<sphere><radius>0.02</radius><position>0.1 0.03 -0.2</position></sphere>"
    "</multi_sphere></geometry></visualization_shape>"
    "<collision_shape><transformation>0.1 0 0 0.3 0 0</transformation><geometry><box>"
    "<size>0.1 0.2 0.3</size></box></geometry></collision_shape></body>"
    '<joint type="free" name="j"><parent>world</parent><child>b</child></joint>'
    "</skeleton></world></skel>"
)

SEEDS = range(40)


def _dart_inertias(text: str) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
    world = dartpy.utils.SkelParser.readWorldXML(text)
    assert world is not None
    skel = world.getSkeleton(0)
    out = {}
    for i in range(skel.getNumBodyNodes()):
        body = skel.getBodyNode(i)
        inertia = body.getInertia()
        out[body.getName()] = (inertia.getMass(), np.asarray(inertia.getLocalCOM()),
                               np.asarray(inertia.getMoment()))
    return out


def _assert_moment(ours: np.ndarray, dart: np.ndarray) -> None:
    scale = float(np.max(np.abs(dart)))
    np.testing.assert_allclose(ours, dart, rtol=0, atol=RTOL * scale)


def test_multisphere_and_box_equals_dart() -> None:
    dart = _dart_inertias(MS_AND_BOX)["b"]
    ours = load_skel(MS_AND_BOX).skeletons[0].bodies[0].inertia
    assert ours.moment_from_shapes
    _assert_moment(np.asarray(ours.moment), dart[2])


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_bodies_equal_dart(seed: int) -> None:
    text = generated_skel(seed)
    dart = _dart_inertias(text)
    bodies = load_skel(text).skeletons[0].bodies
    assert {b.name for b in bodies} == set(dart)
    for body in bodies:
        mass, com, moment = dart[body.name]
        assert body.inertia.mass == mass
        np.testing.assert_allclose(body.inertia.com, com, rtol=0, atol=1e-15)
        _assert_moment(np.asarray(body.inertia.moment), moment)


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_urdf_export_carries_dart_inertia(seed: int, tmp_path: Path) -> None:
    text = generated_skel(seed)
    dart = _dart_inertias(text)
    urdf = etree.fromstring(world_to_urdf(load_skel(text), mesh_dir=tmp_path).encode())
    for name, (mass, com, moment) in dart.items():
        inertial = urdf.find(f"link[@name='{name}']/inertial")
        assert inertial is not None, name
        assert float(inertial.find("mass").get("value")) == pytest.approx(mass, rel=1e-15)
        assert inertial.find("origin").get("rpy") == "0.0 0.0 0.0"
        xyz = [float(v) for v in inertial.find("origin").get("xyz").split()]
        np.testing.assert_allclose(xyz, com, rtol=0, atol=1e-15)
        i = {k: float(v) for k, v in inertial.find("inertia").attrib.items()}
        got = np.array([[i["ixx"], i["ixy"], i["ixz"]],
                        [i["ixy"], i["iyy"], i["iyz"]],
                        [i["ixz"], i["iyz"], i["izz"]]])
        _assert_moment(got, moment)


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_phobos_export_carries_dart_inertia(seed: int) -> None:
    text = generated_skel(seed)
    dart = _dart_inertias(text)
    doc = world_to_phobos(load_skel(text))
    back = phobos_to_world(doc).skeletons[0]
    for body in back.bodies:
        _assert_moment(np.asarray(body.inertia.moment), dart[body.name][2])
        # The dictionary itself (no rotation of the inertial pose here: no child transform).
        ixx, ixy, ixz, iyy, iyz, izz = doc["links"][body.name]["inertial"]["inertia"]
        got = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        _assert_moment(got, dart[body.name][2])
