"""A truth file's friction in the physics world: Coulomb friction holds what it can.

The pendulum (``data/pendulum.skel``: gravity turns its link with 0.196 N m at q = 0),
released with no device driving it: friction above gravity's torque holds the link, friction
below it lets it fall (the real model carries the truth's friction, which the engine
applies: ``test/model/test_truth.py`` checks the model). Held is not still: MuJoCo's
friction loss is a soft constraint, and the link creeps at about 0.1 rad/s whatever the
friction above the load (0.028 rad in 0.3 s at 0.3, 0.5 or 1 N m), where a real joint's
Coulomb friction would hold it dead still.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skel_ros.model import load_model
from skel_ros.model.truth import parse_truth
from skel_ros.physical import PhysicalWorld, Transmission, real_world

PENDULUM = Path(__file__).resolve().parent / "data" / "pendulum.skel"


def fallen_after(truth: str, seconds: float) -> float:
    parsed = parse_truth(truth)
    world = PhysicalWorld(real_world(load_model(PENDULUM), parsed),
                          {"hinge": Transmission()}, parsed)
    world.release()
    world.advance(seconds)
    return abs(world.joints["hinge"].true_position)


@pytest.mark.parametrize(("friction", "holds"), [(0.3, True), (0.1, False)])
def test_coulomb_friction_holds_a_load_below_it(friction: float, holds: bool) -> None:
    fallen = fallen_after(f"joints:\n  hinge: {{friction: {friction}}}\n", 0.3)
    if holds:
        assert fallen < 0.05  # the creep of a soft constraint (module docstring)
    else:
        assert fallen > 0.5  # gravity's 0.196 N m against 0.1: it falls
