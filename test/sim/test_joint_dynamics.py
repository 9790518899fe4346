"""Joint dynamics beyond the model file (identified values): each engine applies them.

Read back from the engines themselves: DART's damping coefficient, Coulomb friction and
mass matrix; MuJoCo's ``dof_armature``, ``dof_damping``, ``dof_frictionloss`` and mass
matrix. A reset keeps them; a DOF the world lacks is refused.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import load_model
from skel_ros.sim import ENGINES, SimBuildError
from skel_ros.sim.joint_dynamics import JointDynamics

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
# The model's: shoulder_yaw 0.05 / 0.01, elbow 0.04 / 0.01 (damping / friction).
DYNAMICS = {"elbow": JointDynamics(armature=0.0105, damping=0.06, friction=0.015),
            "shoulder_yaw": JointDynamics(armature=0.0115)}


def _diagonal(engine: object) -> np.ndarray:
    return np.diag(engine._skeletons[0].getMassMatrix())  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def world() -> object:
    return load_model(ARM)


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_each_engine_runs_with_the_identified_values(world: object, name: str) -> None:
    if name == "mujoco":
        pytest.importorskip("mujoco")
    plain = ENGINES[name](world)
    engine = ENGINES[name](world, joint_dynamics=DYNAMICS)
    yaw, elbow = engine.dof_names.index("shoulder_yaw"), engine.dof_names.index("elbow")
    for _ in range(2):  # as built, and after a reset (the world is rebuilt)
        added = _diagonal(engine) - _diagonal(plain)
        assert added[yaw] == pytest.approx(0.0115, rel=1e-6)
        assert added[elbow] == pytest.approx(0.0105, rel=1e-6)
        if name == "mujoco":
            m = engine.world
            assert m.dof_armature[[yaw, elbow]] == pytest.approx([0.0115, 0.0105])
            assert m.dof_damping[[yaw, elbow]] == pytest.approx([0.05, 0.06])
            assert m.dof_frictionloss[[yaw, elbow]] == pytest.approx([0.01, 0.015])
        else:
            dofs = engine.world.getSkeleton(0)
            assert dofs.getDof(elbow).getDampingCoefficient() == pytest.approx(0.06)
            assert dofs.getDof(elbow).getCoulombFriction() == pytest.approx(0.015)
            assert dofs.getDof(yaw).getDampingCoefficient() == pytest.approx(0.05)  # model's
        engine.reset()


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_an_unknown_joint_or_a_negative_value_is_refused(world: object, name: str) -> None:
    if name == "mujoco":
        pytest.importorskip("mujoco")
    with pytest.raises(SimBuildError, match=r"unknown joint 'elbw'.*did you mean 'elbow'"):
        ENGINES[name](world, joint_dynamics={"elbw": JointDynamics(damping=0.1)})
    with pytest.raises(SimBuildError, match="armature must be a finite number >= 0"):
        JointDynamics(armature=-0.01)
