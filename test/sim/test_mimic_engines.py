"""Mimic joints in the engines: DART and MuJoCo move each follower as the model's rule says.

DART through servo motors on the followers (skel_ros/sim/followers.py), MuJoCo through
the export's joint equality. Both start and reset with the followers on the rule, take
no command for a follower, and keep every follower within 1e-6 of the rule after 1 s
of its leader driven back and forth (small robots for each kind of coupling and the
gripper example).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import load_model
from skel_ros.model.mimic import independent_dofs, with_followers
from skel_ros.sim.engine import SimEngine
from skel_ros.sim.errors import CommandError

DATA = Path(__file__).parents[1] / "model" / "data" / "mimic"
ROBOTS = [*sorted(DATA.glob("*.urdf")), Path(__file__).parents[2] / "examples" / "gripper_arm.urdf"]
TOL = 1e-6


def _engine(name: str, path: Path) -> SimEngine:
    if name == "mujoco":
        pytest.importorskip("mujoco")
        from skel_ros.sim.mujoco_engine import MujocoEngine

        return MujocoEngine(load_model(path))
    return SimEngine(load_model(path))


def _rule_error(engine: SimEngine) -> float:
    skel = engine.model.skeletons[0]
    q = engine.positions()
    return float(np.abs(with_followers(skel, q) - q).max())


@pytest.fixture(params=["dart", "mujoco"])
def engine_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.mark.parametrize("path", ROBOTS, ids=[p.stem for p in ROBOTS])
def test_followers_move_with_their_leader(engine_name: str, path: Path) -> None:
    """Leaders driven back and forth for 1 s (position commands every step, a sine).

    A gentle motion (half a period of 0.5 Hz over half the range): MuJoCo's equality is
    a stiff spring, whose lag grows with the leader's acceleration (docs/mujoco.md).
    """
    engine = _engine(engine_name, path)
    skel = engine.model.skeletons[0]
    leaders = [d.name for d in independent_dofs(skel)]
    middle = np.array([0.5 * (engine.limits[n].position_lower + engine.limits[n].position_upper)
                       for n in leaders])
    span = np.array([engine.limits[n].position_upper - engine.limits[n].position_lower
                     for n in leaders])
    index = [skel.dof_index(n) for n in leaders]
    start = engine.positions()[index]
    errors, moved = [], np.zeros(len(leaders))
    for k in range(round(1.0 / engine.time_step)):
        t = k * engine.time_step
        engine.set_commands("position", leaders, middle + 0.25 * span * np.sin(np.pi * t))
        engine.step()
        errors.append(_rule_error(engine))
        moved = np.maximum(moved, np.abs(engine.positions()[index] - start))
    assert (moved > 0.1 * span).any()
    assert errors[-1] < TOL
    assert max(errors) < 1e-3  # a new command's first steps only


def test_dart_followers_hold_through_steps_without_commands() -> None:
    """Limp leaders swinging under gravity, many steps at once: the followers keep up."""
    engine = SimEngine(load_model(DATA / "gear_finger.urdf"))
    engine.set_commands("effort", ["proximal"], [0.05])
    engine.step(200)
    engine.clear_commands()
    before = engine.positions()
    engine.step(100)
    assert abs(engine.positions()[0] - before[0]) > 0.01  # it swings
    assert _rule_error(engine) < TOL


@pytest.mark.parametrize("path", ROBOTS, ids=[p.stem for p in ROBOTS])
def test_followers_start_and_reset_on_the_rule(engine_name: str, path: Path) -> None:
    engine = _engine(engine_name, path)
    skel = engine.model.skeletons[0]
    expected = with_followers(skel, np.zeros(skel.num_dofs))
    np.testing.assert_allclose(engine.positions(), expected, atol=1e-12)
    engine.hold_initial_positions()  # a powered robot: the leaders held, the followers coupled
    engine.step(100)
    engine.reset()
    np.testing.assert_allclose(engine.positions(), expected, atol=1e-12)
    assert _rule_error(engine) < 1e-12


def test_a_command_to_a_follower_is_refused(engine_name: str) -> None:
    engine = _engine(engine_name, ROBOTS[-1])
    with pytest.raises(CommandError, match=r"'finger_right' is a mimic joint.*'finger_left'"):
        engine.set_commands("position", ["finger_right"], [0.0])
    assert "finger_right" not in engine.hold_initial_positions()
