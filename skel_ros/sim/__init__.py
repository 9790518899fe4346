"""The simulation engine: our model run in DART, without ROS.

``build_dart_world`` builds the dartpy World DART's SkelParser would build, from
the model and through DART's API; ``SimEngine`` owns one, steps it, takes joint
commands as each joint's actuator type allows (through the shared limits module),
and turns position commands into per-DOF controller output.

Example::

    from skel_ros.model import load_skel
    from skel_ros.sim import SimEngine

    engine = SimEngine(load_skel("robot.skel"))
    for result in engine.set_commands("position", ["elbow"], [0.5]):
        if result.clamped:
            print(result.message)
    engine.step(1000)
    print(dict(zip(engine.dof_names, engine.positions())))

Joint names are *public names* (``engine.dof_names``): the SKEL DOF names, with
``"<skeleton>/"`` in front when the world has several skeletons with bodies (see
:mod:`skel_ros.sim.engine`). docs/simulation.md describes the whole layer.

Two engines take the same model, commands and names (:data:`ENGINES`): ``"dart"``
(:class:`SimEngine`) and ``"mujoco"`` (:class:`MujocoEngine`, the model's MJCF export).
dartpy and mujoco are imported when an engine is built, not when this package is
imported: either one alone is enough for its engine.
"""

from skel_ros.sim.actuation import ActuationMode
from skel_ros.sim.engine import SimEngine, public_names
from skel_ros.sim.errors import CommandError, SimBuildError, SimError, SimUnsupportedError
from skel_ros.sim.gains import (
    GainDefaults,
    GainsError,
    PositionGains,
    SimGains,
    load_gains,
    parse_gains,
)
from skel_ros.sim.mujoco_engine import MujocoEngine
from skel_ros.sim.world_builder import build_dart_world

ENGINES: dict[str, type[SimEngine]] = {"dart": SimEngine, "mujoco": MujocoEngine}
"""Engine name (the node's ``engine`` parameter, ``--engine``) -> engine class."""

__all__ = [
    "ENGINES",
    "ActuationMode",
    "CommandError",
    "GainDefaults",
    "GainsError",
    "MujocoEngine",
    "PositionGains",
    "SimBuildError",
    "SimEngine",
    "SimError",
    "SimGains",
    "SimUnsupportedError",
    "build_dart_world",
    "load_gains",
    "parse_gains",
    "public_names",
]
