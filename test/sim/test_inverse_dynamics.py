"""The model's inverse dynamics with mimic followers: moved by their leader, and carried by
its motor where they have none of their own (skel_ros/sim/inverse_dynamics.py)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import load_model
from skel_ros.model.types import FollowerDrive
from skel_ros.sim import MujocoEngine
from skel_ros.sim.inverse_dynamics import RigidDynamics

GRIPPER = Path(__file__).resolve().parents[2] / "examples" / "gripper_arm.urdf"


def _with_drive(world: object, drive: FollowerDrive) -> object:
    return replace(world, skeletons=tuple(replace(s, dofs=tuple(
        replace(d, mimic=replace(d.mimic, drive=drive)) if d.mimic is not None else d
        for d in s.dofs)) for s in world.skeletons))


@pytest.fixture(scope="module")
def run() -> tuple[object, dict[str, np.ndarray]]:
    """The gripper in MuJoCo (the engine's equality constraint moves finger_right with
    finger_left, -1 x): the arm held, finger_left pushed back and forth by a force."""
    world = load_model(GRIPPER)
    free = replace(world, skeletons=tuple(replace(s, dofs=tuple(
        replace(d, force_lower=-math.inf, force_upper=math.inf) for d in s.dofs))
        for s in world.skeletons))
    engine = MujocoEngine(free, enforce_limits=False)
    names = engine.dof_names
    finger = names.index("finger_left")
    rows: dict[str, list[np.ndarray]] = {"q": [], "qd": [], "tau": []}
    dt = engine.time_step
    for k in range(3000):
        q, qd = engine.positions(), engine.velocities()
        tau = -200.0 * q - 5.0 * qd  # the arm held near 0
        tau[names.index("finger_right")] = 0.0  # no actuator of its own
        tau[finger] = 0.5 * math.sin(2.0 * math.pi * 1.5 * k * dt)
        engine.apply_checked("effort", np.arange(len(names)), tau)
        for key, value in (("q", q), ("qd", qd), ("tau", tau)):
            rows[key].append(value)
        engine.step(1)
    out = {key: np.array(value) for key, value in rows.items()}
    out["qdd"] = np.gradient(out["qd"], dt, axis=0)
    out["names"] = names  # type: ignore[assignment]
    return world, out


def _leader_residual(world: object, run: dict[str, np.ndarray]) -> tuple[float, float]:
    """RMS of finger_left's force the model does not explain, and of the force itself."""
    names = list(run["names"])
    skel = next(s for s in world.skeletons if s.num_dofs)
    leaders = ["shoulder", "elbow", "finger_left"]
    cols = [names.index(n) for n in leaders]
    rigid = RigidDynamics(world, skel.name).torques(
        leaders, run["q"][:, cols], run["qd"][:, cols], run["qdd"][:, cols])
    k = names.index("finger_left")
    own = skel.dof("finger_left").damping * run["qd"][:, k]
    residual = (run["tau"][:, k] - rigid[:, 2] - own)[100:-100]
    return (float(np.sqrt(np.mean(residual ** 2))),
            float(np.sqrt(np.mean(run["tau"][100:-100, k] ** 2))))


def test_a_coupled_followers_load_is_its_leaders(run: tuple[object, dict]) -> None:
    # Its mass and damping (1 N s/m) are half the force the finger's motor gives; with
    # them carried, what is left is the finite differences' error (before: 50 %).
    world, data = run
    residual, applied = _leader_residual(world, data)
    assert residual < 0.03 * applied, (residual, applied)


def test_a_follower_with_its_own_actuator_is_not_its_leaders_load(
        run: tuple[object, dict]) -> None:
    # The same motion, the model saying finger_right has a motor of its own: that motor
    # moved it, so the leader's force the model gives leaves the follower's load out.
    world, data = run
    residual, applied = _leader_residual(_with_drive(world, FollowerDrive.FROM_LEADER), data)
    assert residual > 0.3 * applied, (residual, applied)

