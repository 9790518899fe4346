"""The engine backend under the robot core: the core's cycle once per step, in simulated time.

The same core as on hardware and in test/core (over a numpy double); here the joints are
DART's. ``two_arms.skel``: two skeletons, DOFs ``left/shoulder`` ... ``right/elbow``,
shoulders limited to [-1.5, 1.5].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dartpy")

from skel_ros.core import CommandRefused, FollowOutcome, RobotCore
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind
from skel_ros.sim import SimEngine
from skel_ros.sim.backend import EngineBackend
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

TWO_ARMS = Path(__file__).resolve().parent / "data" / "two_arms.skel"
P = CommandKind.POSITION


class Recorder:
    def __init__(self, tolerance: float | None = None) -> None:
        self.cycles: list[tuple[float, float, np.ndarray, np.ndarray]] = []
        self.ends: list[tuple[float, FollowOutcome, str]] = []
        self.tolerance = tolerance

    def on_cycle(self, now, elapsed, names, desired, actual):  # noqa: ANN001, ANN201, ARG002
        self.cycles.append((now, elapsed, desired[0], actual[0]))
        if (self.tolerance is not None and elapsed > 0.2
                and np.all(np.abs(actual[0] - desired[0]) < self.tolerance)):
            return FollowOutcome.SUCCEEDED, "within the goal tolerance"
        return None

    def on_end(self, now, outcome, message):  # noqa: ANN001, ANN201
        self.ends.append((now, outcome, message))


def rig(**core_options: float) -> tuple[RobotCore, SimEngine, EngineBackend]:
    engine = SimEngine(load_skel(TWO_ARMS))
    backend = EngineBackend(engine)
    backend.activate()
    core = RobotCore(backend, **core_options)
    core.restart_timeout(engine.time)
    return core, engine, backend


def step(core: RobotCore, engine: SimEngine, n: int) -> None:
    """What the simulation node does per step."""
    for _ in range(n):
        core.cycle(engine.time + engine.time_step)
        engine.step()


def test_observer_is_called_once_per_step_in_simulated_time() -> None:
    core, engine, _ = rig()
    trajectory = PointTrajectory(["left/shoulder", "right/elbow"],
                                 [TrajectoryPoint(0.2, (0.5, -0.3))], [0.0, 0.0])
    observer = Recorder(tolerance=0.01)
    core.follow(trajectory, observer=observer)
    step(core, engine, 100)
    dt = engine.time_step
    assert [c[0] for c in observer.cycles] == pytest.approx([(k + 1) * dt for k in range(100)])
    assert [c[1] for c in observer.cycles] == pytest.approx([(k + 1) * dt for k in range(100)])
    for now, _, desired, _ in observer.cycles:
        assert desired == pytest.approx(trajectory.sample(now)[0])
    assert core.following  # still on its way
    step(core, engine, 2000)
    assert [e[1] for e in observer.ends] == [FollowOutcome.SUCCEEDED]
    assert not core.following
    q = dict(zip(engine.dof_names, engine.positions(), strict=True))
    assert q["left/shoulder"] == pytest.approx(0.5, abs=0.01)
    assert q["right/elbow"] == pytest.approx(-0.3, abs=0.01)


def test_commands_across_skeletons_are_gated_as_one() -> None:
    core, engine, _ = rig()
    result = core.command(P, ["right/shoulder", "left/shoulder"], [2.0, -0.25])
    assert result.ok
    assert [(c.name, c.applied) for c in result.clamped] == [("right/shoulder", 1.5)]
    held = engine.commands()
    assert held["right/shoulder"][1] == 1.5
    assert held["left/shoulder"][1] == -0.25
    assert not core.command(CommandKind.VELOCITY, ["left/elbow"], [0.1]).ok  # FORCE joints


def test_trajectory_on_joints_that_cannot_follow_is_refused() -> None:
    core, _, _ = rig()
    with pytest.raises(CommandRefused, match="elbow"):
        core.follow(PointTrajectory(["elbow"], [TrajectoryPoint(1.0, (0.1,))]))


def test_timeout_drops_every_command_once() -> None:
    core, engine, _ = rig(command_timeout=0.05)
    assert engine.commands()  # the initial hold
    step(core, engine, 49)
    assert engine.commands()
    step(core, engine, 2)
    assert engine.commands() == {}
    assert core.timeout_tripped


def test_cancel_holds_where_the_joints_are() -> None:
    core, engine, _ = rig()
    core.follow(PointTrajectory(["left/shoulder"], [TrajectoryPoint(1.0, (1.0,))], [0.0]))
    step(core, engine, 300)
    assert core.cancel_trajectory()
    q = engine.positions()[engine.dof_names.index("left/shoulder")]
    assert engine.commands()["left/shoulder"] == (engine.commands()["left/shoulder"][0], q)
    assert core.start_positions(["left/shoulder"]) == [pytest.approx(q)]
