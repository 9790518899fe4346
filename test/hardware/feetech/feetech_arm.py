"""The servos the Feetech tests use: their start positions and their specs.

A module of its own (not ``conftest``): the Dynamixel tests have a ``conftest`` too, and
a bare ``from conftest import`` takes whichever folder's came first.
"""

from __future__ import annotations

from skel_ros.hardware.base import ActuatorSpec, ControlMode

START = {1: 0.3, 2: -0.2, 3: 0.5}


def arm(model: str = "STS3215", ids: tuple[int, ...] = tuple(START), **options: object,
        ) -> list[ActuatorSpec]:
    """Position actuators of ``model`` with the same ``options``."""
    return [ActuatorSpec(i, ControlMode.POSITION, model, options, name=f"j{i}") for i in ids]
