"""Small worlds for the engine tests, and stepping helpers; no engine is imported here.

Shared by the engine conformance suite (``test_engine_conformance.py``, every engine) and
the tests of one engine (``test_engine.py`` for DART, ``test_mujoco_engine.py``), so that
a suite whose engine package is missing is skipped, not broken at import.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from skel_ros.sim import SimEngine

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))
TWO_ARMS = DATA / "two_arms.skel"
ARM = REPO / "examples" / "arm.skel"
QUADRUPED = REPO / "examples" / "quadruped.skel"
EXAMPLES = [ARM, QUADRUPED]

DT = 0.001
MASS, LEVER = 1.0, 0.5  # the pendulum's point-like link: 1 kg at 0.5 m from the hinge
GRAVITY = 9.81
INERTIA = MASS * LEVER**2 + 0.001  # about the hinge


def pendulum(
    actuator: str = "force",
    *,
    limits: tuple[float, float] | None = None,
    dof: str = "",
    gravity: bool = True,
    init: float = 0.0,
    name: str = "pendulum",
) -> str:
    """A SKEL world: one link on a z-axis hinge ``hinge``, its centre of mass 0.5 m along x.

    With gravity along -y the link starts horizontal, where gravity pulls hardest.
    """
    limit = "" if limits is None else (
        f"<limit><lower>{limits[0]}</lower><upper>{limits[1]}</upper></limit>")
    g = f"0 -{GRAVITY} 0" if gravity else "0 0 0"
    return f"""<skel version="1.0"><world name="w">
<physics><time_step>{DT}</time_step><gravity>{g}</gravity></physics>
<skeleton name="{name}">
 <body name="link"><inertia><mass>{MASS}</mass><offset>{LEVER} 0 0</offset>
  <moment_of_inertia><ixx>0.001</ixx><iyy>0.001</iyy><izz>0.001</izz>
  <ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia></inertia></body>
 <joint type="revolute" name="hinge" actuator="{actuator}">
  <parent>world</parent><child>link</child>
  <axis><xyz>0 0 1</xyz>{limit}</axis>{dof}<init_pos>{init}</init_pos>
 </joint>
</skeleton></world></skel>"""


def pendulums(actuators: tuple[str, ...], *, init: float = 0.2) -> str:
    """One pendulum per actuator type, side by side (skeleton = actuator; DOFs ``<type>/j``)."""
    skeletons = "".join(f"""<skeleton name="{kind}">
  <body name="link"><transformation>{i} 0 0 0 0 0</transformation>
    <inertia><mass>{MASS}</mass><offset>{LEVER} 0 0</offset></inertia></body>
  <joint type="revolute" name="j" actuator="{kind}">
    <parent>world</parent><child>link</child>
    <axis><xyz>0 1 0</xyz></axis><init_pos>{init}</init_pos></joint></skeleton>"""
                        for i, kind in enumerate(actuators))
    return (f'<skel version="1.0"><world name="w"><physics><time_step>{DT}</time_step>'
            f"<gravity>0 0 -{GRAVITY}</gravity></physics>{skeletons}</world></skel>")


# A free-floating base (its joint frame away from the body's origin, so DART's free-joint
# velocity and MuJoCo's differ), a ball joint and a hinge below it.
FLOATING = """<skel version="1.0"><world name="w">
<physics><time_step>0.001</time_step><gravity>0 0 -9.81</gravity></physics>
<skeleton name="floating">
 <body name="base"><inertia><mass>2</mass></inertia></body>
 <body name="head"><transformation>0 0 0.3 0 0 0</transformation>
  <inertia><mass>0.5</mass></inertia></body>
 <body name="arm"><transformation>0.2 0 0.3 0 0 0</transformation>
  <inertia><mass>0.3</mass></inertia></body>
 <joint type="free" name="root"><parent>world</parent><child>base</child>
  <transformation>0.1 -0.2 0.05 0.3 -0.4 0.2</transformation></joint>
 <joint type="ball" name="neck"><parent>base</parent><child>head</child>
  <transformation>0 0 -0.1 0 0 0</transformation></joint>
 <joint type="revolute" name="shoulder"><parent>base</parent><child>arm</child>
  <axis><xyz>0 1 0</xyz></axis></joint>
</skeleton></world></skel>"""


def trajectory(engine: SimEngine, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Position and velocity of DOF 0 after each of ``steps`` steps."""
    q, v = np.empty(steps), np.empty(steps)
    for k in range(steps):
        engine.step()
        q[k], v[k] = engine.positions()[0], engine.velocities()[0]
    return q, v
