"""The bundled examples load cleanly, and DART builds the same robot from them.

They are what the demo, the launch files and the README run, so they must stay valid
SKEL for DART itself: dartpy's SkelParser (the oracle, as in test/model) must give the
same DOFs, limits, masses and body transforms as our model, and our parser must record
no warning.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import Kinematics, load_skel

dart = pytest.importorskip("dartpy", reason="dartpy (the oracle) is installed by scripts/setup.sh")

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.skel"))


def test_there_are_examples() -> None:
    assert {p.name for p in EXAMPLES} >= {"arm.skel", "quadruped.skel"}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_loads_cleanly_and_equals_dart(path: Path) -> None:
    world = load_skel(path)
    assert world.warnings == ()
    dart_world = dart.utils.SkelParser.readWorld(str(path))
    assert dart_world is not None
    assert dart_world.getNumSkeletons() == len(world.skeletons)
    rng = np.random.default_rng(7)
    for s, skel in enumerate(world.skeletons):
        dskel = dart_world.getSkeleton(s)
        assert [d.getName() for d in dskel.getDofs()] == [d.name for d in skel.dofs]
        for i, dof in enumerate(skel.dofs):
            # Every DOF of a bundled example is fully limited: the hardware needs it.
            limits = (dof.position_lower, dof.position_upper, dof.velocity_lower,
                      dof.velocity_upper, dof.force_lower, dof.force_upper)
            assert all(np.isfinite(limits)), dof.name
            assert limits == (dskel.getPositionLowerLimit(i), dskel.getPositionUpperLimit(i),
                              dskel.getVelocityLowerLimit(i), dskel.getVelocityUpperLimit(i),
                              dskel.getForceLowerLimit(i), dskel.getForceUpperLimit(i))
        assert [b.inertia.mass for b in skel.bodies] == [
            dskel.getBodyNode(b).getMass() for b in range(len(skel.bodies))]
        kin = Kinematics(skel)
        lower = np.array([d.position_lower for d in skel.dofs])
        upper = np.array([d.position_upper for d in skel.dofs])
        for q in [None, *rng.uniform(lower, upper, size=(3, skel.num_dofs))]:
            if q is not None:
                dskel.setPositions(q)
            ours = kin.body_transforms(q)
            for b in range(len(skel.bodies)):
                np.testing.assert_allclose(
                    ours[b], dskel.getBodyNode(b).getWorldTransform().matrix(), atol=1e-9, rtol=0)
