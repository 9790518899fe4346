"""MujocoEngine against DART on one world: servo motion and the published efforts.

Six 1 kg pendulums, one per SKEL actuator type (position limits +-1.5, velocity +-2,
force +-5, starting at 0.2 rad), built in both engines through ``skel_ros.sim.ENGINES``
and driven alike. What the MuJoCo engine must match, and within what (docs/mujoco.md,
docs/simulation.md "The MuJoCo engine"):

* a SERVO joint reaches its commanded velocity in a step, within its force limits, as
  DART's servo motor (the servo force is solved before each step): velocity and effort
  as DART's to rounding, never chattering between the force limits;
* VELOCITY, ACCELERATION and LOCKED joints publish the force that realised the step's
  motion: a kinematic drive's within 1e-4 of DART's (its velocity actuator leaves 1e-5 of
  the velocity error; 0.0015 N m of the 144 N m of a 1 rad/s jump), a locked joint's
  within 1e-3 N m (MuJoCo's joint equality is soft: the link sags 5e-4 rad).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("dartpy")

from skel_ros.model import load_skel
from skel_ros.sim import ENGINES, SimEngine

TYPES = ("force", "servo", "velocity", "acceleration", "locked", "passive")
_PENDULUM = """<skeleton name="{kind}">
  <body name="link"><transformation>{x} 0 0 0 0 0</transformation>
    <inertia><mass>1.0</mass><offset>0.25 0 0</offset></inertia>
    <visualization_shape><geometry><box><size>0.5 0.05 0.05</size></box></geometry>
    </visualization_shape></body>
  <joint type="revolute" name="j" actuator="{kind}">
    <parent>world</parent><child>link</child>
    <axis><xyz>0 1 0</xyz><limit><lower>-1.5</lower><upper>1.5</upper></limit></axis>
    <init_pos>0.2</init_pos>
    <dof><velocity lower="-2" upper="2"/><force lower="-5" upper="5"/></dof>
  </joint></skeleton>"""
WORLD = ('<skel version="1.0"><world name="w"><physics><time_step>0.001</time_step>'
         "<gravity>0 0 -9.81</gravity></physics>"
         + "".join(_PENDULUM.format(kind=k, x=i) for i, k in enumerate(TYPES))
         + "</world></skel>")


def both() -> dict[str, SimEngine]:
    return {name: ENGINES[name](load_skel(WORLD, name="act.skel")) for name in ("dart", "mujoco")}


def run(engine: SimEngine, steps: int, command: dict[str, tuple[str, float]] | None = None
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and efforts after each step (the command re-sent each step)."""
    rows = []
    for _ in range(steps):
        for dof, (kind, value) in (command or {}).items():
            engine.set_commands(kind, [dof], [value])
        engine.step()
        rows.append(engine.state())
    q, v, f = (np.array([r[k] for r in rows]) for k in range(3))
    return q, v, f


def test_servo_reaches_its_velocity_without_chattering() -> None:
    """1 rad/s commanded, +-5 N m: DART's servo is at 1.00000 rad/s from step 20 on with
    about -2.27 N m against gravity; MuJoCo's velocity actuator (before: gain 1e5 M / dt,
    clamped at +-5) swung 0.98-1.05 rad/s with the effort flipping between -5 and 5."""
    runs = {name: run(engine, 400, {"servo/j": ("velocity", 1.0)})
            for name, engine in both().items()}
    i = TYPES.index("servo")
    (_, v_dart, f_dart), (q_mj, v_mj, f_mj) = runs["dart"], runs["mujoco"]
    np.testing.assert_allclose(v_mj[50:, i], 1.0, atol=1e-9)
    assert np.abs(f_mj[50:, i]).max() < 2.5  # never at the +-5 limits
    np.testing.assert_allclose(v_mj[:, i], v_dart[:, i], atol=1e-9)
    np.testing.assert_allclose(f_mj[:, i], f_dart[:, i], atol=1e-6)
    assert q_mj[-1, i] == pytest.approx(runs["dart"][0][-1, i], abs=1e-9)


def test_a_servo_holds_and_brakes_as_dart_s() -> None:
    """Nothing commanded: held at 0.2 rad against gravity (-2.4036 N m), as DART (MuJoCo's
    drifted and sat at -5 before); then moving at 1.5 rad/s and told 0: braked at the
    -5 N m limit to rest, on DART's trajectory."""
    runs = {name: run(engine, 300) for name, engine in both().items()}
    i = TYPES.index("servo")
    q, _, f = runs["mujoco"]
    np.testing.assert_allclose(q[:, i], 0.2, atol=1e-12)
    np.testing.assert_allclose(f[:, i], runs["dart"][2][:, i], atol=1e-9)
    assert f[-1, i] == pytest.approx(-0.25 * 9.81 * np.cos(0.2) / 1.0, rel=2e-3)
    moving = {}
    for name, engine in both().items():
        run(engine, 150, {"servo/j": ("velocity", 1.5)})
        moving[name] = run(engine, 300, {"servo/j": ("velocity", 0.0)})
    (q_dart, v_dart, f_dart), (q_mj, v_mj, f_mj) = moving["dart"], moving["mujoco"]
    assert f_mj[0, i] == pytest.approx(-5.0)  # braking at the limit
    np.testing.assert_allclose(q_mj[:, i], q_dart[:, i], atol=1e-9)
    np.testing.assert_allclose(v_mj[:, i], v_dart[:, i], atol=1e-9)
    np.testing.assert_allclose(f_mj[:, i], f_dart[:, i], atol=1e-6)
    assert abs(v_mj[-1, i]) < 1e-12


@pytest.mark.parametrize("actuator", ["velocity", "acceleration", "locked"])
def test_efforts_are_the_forces_that_realised_the_motion(actuator: str) -> None:
    """The audit's case: held 200 steps, then 1 rad/s on the velocity joint and a position
    command 1.0 on the acceleration joint. MuJoCo published its velocity actuator's
    explicit force (14,604,166 N m for DART's 143.64 on the first step; 107,616.8 for
    DART's -1.3165) and nothing for the locked joint (DART's -2.4036)."""
    i = TYPES.index(actuator)
    figures = {}
    for name, engine in both().items():
        engine.hold_initial_positions()
        engine.step(200)
        hold = engine.efforts()[i]
        engine.set_commands("velocity", ["velocity/j"], [1.0])
        engine.set_commands("position", ["acceleration/j"], [1.0])
        engine.step()
        first = engine.efforts()[i]
        engine.step(100)
        figures[name] = np.array([hold, first, engine.efforts()[i]])
    dart, mujoco = figures["dart"], figures["mujoco"]
    if actuator == "locked":
        np.testing.assert_allclose(dart, -2.4036, atol=1e-4)
        np.testing.assert_allclose(mujoco, dart, atol=1e-3)
    else:
        np.testing.assert_allclose(mujoco, dart, rtol=1e-4, atol=1e-4)
