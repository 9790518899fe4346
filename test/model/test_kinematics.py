"""Forward kinematics equals DART's: dartpy is the oracle.

For every loadable corpus file and random configurations, the world transform
of every body from ``Kinematics`` equals the one dartpy computes for the same
joint positions, within 1e-9. dartpy is used only here, as an independent
reference; the model itself never imports it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import JointType, Kinematics, load_skel

from corpus_data import corpus_file, fixture_files, fixture_id, load_fixture, requires_corpus

dart = pytest.importorskip("dartpy", reason="dartpy (the oracle) is installed by scripts/setup.sh")

TOL = 1e-9
FIXTURES = fixture_files()


def _random_positions(skel, rng: np.random.Generator) -> np.ndarray:
    q = np.empty(skel.num_dofs)
    for i, dof in enumerate(skel.dofs):
        lo, hi = dof.position_lower, dof.position_upper
        lo = lo if np.isfinite(lo) else -np.pi
        hi = hi if np.isfinite(hi) else np.pi
        q[i] = rng.uniform(lo, hi)
    return q


@requires_corpus
@pytest.mark.parametrize("fixture_path", FIXTURES, ids=[fixture_id(p) for p in FIXTURES])
def test_body_transforms_equal_dart(fixture_path: Path) -> None:
    path = corpus_file(load_fixture(fixture_path))
    world = load_skel(path)
    dart_world = dart.utils.SkelParser.readWorld(str(path))
    assert dart_world is not None
    rng = np.random.default_rng(abs(hash(fixture_id(fixture_path))) % 2**32)
    for s, skel in enumerate(world.skeletons):
        dskel = dart_world.getSkeleton(s)
        assert dskel.getNumBodyNodes() == len(skel.bodies)
        kin = Kinematics(skel)
        configs = np.array([_random_positions(skel, rng) for _ in range(5)])
        ours_batch = kin.body_transforms_batch(configs)
        for c, q in enumerate(configs):
            dskel.setPositions(q)
            for b, body in enumerate(skel.bodies):
                node = dskel.getBodyNode(b)
                assert node.getName() == body.name
                expected = node.getWorldTransform().matrix()
                np.testing.assert_allclose(ours_batch[c, b], expected, atol=TOL, rtol=0)
            np.testing.assert_allclose(kin.body_transforms(q), ours_batch[c], atol=1e-12, rtol=0)


def _single_joint_skel(joint_xml: str) -> str:
    return f"""<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="a"><transformation>0.1 0.2 0.3 0.4 0.5 0.6</transformation></body>
      <body name="b"><transformation>0.5 -0.2 0.1 0.3 -0.2 0.1</transformation></body>
      <joint type="free" name="j0"><parent>world</parent><child>a</child></joint>
      {joint_xml}
    </skeleton></world></skel>"""


# Joint types the corpus lacks (planar in every plane); screw and translational2d,
# which DART cannot build, are checked against their defining formulas instead.
PLANAR = [
    '<plane type="xy"/>',
    '<plane type="yz"/>',
    '<plane type="zx"/>',
    '<plane type="arbitrary"><translation_axis1><xyz>1 1 0</xyz></translation_axis1>'
    '<translation_axis2><xyz>0 0 1</xyz></translation_axis2></plane>',
]


@pytest.mark.parametrize("plane", PLANAR)
def test_planar_joint_equals_dart(plane: str) -> None:
    xml = _single_joint_skel(
        f'<joint type="planar" name="p"><parent>a</parent><child>b</child>'
        f"<transformation>0.05 0 0 0.1 0 0</transformation>{plane}</joint>"
    )
    world = load_skel(xml)
    dskel = dart.utils.SkelParser.readWorldXML(xml).getSkeleton(0)
    skel = world.skeletons[0]
    assert [d.getName() for d in dskel.getDofs()] == [d.name for d in skel.dofs]
    rng = np.random.default_rng(1)
    for _ in range(10):
        q = rng.uniform(-2, 2, skel.num_dofs)
        dskel.setPositions(q)
        ours = Kinematics(skel).body_transforms(q)
        for b in range(2):
            np.testing.assert_allclose(
                ours[b], dskel.getBodyNode(b).getWorldTransform().matrix(), atol=TOL, rtol=0
            )


def test_screw_joint_follows_its_definition() -> None:
    xml = _single_joint_skel(
        '<joint type="screw" name="sc"><parent>a</parent><child>b</child>'
        "<axis><xyz>0 0 2</xyz><pitch>0.5</pitch></axis></joint>"
    )
    skel = load_skel(xml).skeletons[0]
    joint = skel.joint("sc")
    assert joint.type is JointType.SCREW
    kin = Kinematics(skel)
    q0 = np.zeros(skel.num_dofs)
    q1 = q0.copy()
    q1[-1] = np.pi  # half a turn: translation pitch / 2 along the axis
    rel0 = np.linalg.inv(kin.body_transforms(q0)[0]) @ kin.body_transforms(q0)[1]
    rel1 = np.linalg.inv(kin.body_transforms(q1)[0]) @ kin.body_transforms(q1)[1]
    # Expressed in the joint frame (child-to-joint is identity here).
    t_pj = np.asarray(joint.T_parent_to_joint)
    motion = np.linalg.inv(t_pj) @ rel1 @ np.linalg.inv(np.linalg.inv(t_pj) @ rel0)
    np.testing.assert_allclose(motion[:3, 3], [0, 0, 0.25], atol=1e-12)
    np.testing.assert_allclose(motion[:3, :3], np.diag([-1.0, -1.0, 1.0]), atol=1e-12)


def test_batch_rejects_wrong_shape() -> None:
    skel = load_skel(_single_joint_skel("")).skeletons[0]
    with pytest.raises(ValueError, match="shape"):
        Kinematics(skel).body_transforms_batch(np.zeros((2, skel.num_dofs + 1)))
