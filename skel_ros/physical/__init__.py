"""Emulated devices whose shafts move one physics simulation of the whole robot.

The protocol-level emulators (:mod:`skel_ros.emulation`) move each shaft with a motor of
its own; here every device of a bus is a joint of one :class:`PhysicalWorld` (an engine of
:mod:`skel_ros.sim` stepped on the emulator's clock), driven by the device's own control
law from its vendor's manual (Dynamixel X-series: :mod:`.servo_law`; Feetech STS/SMS and
SCS servos: :mod:`.feetech`'s position loop; MIT-mode motors:
:mod:`.mit`'s ``kp``/``kd``/``t_ff`` law; CiA 402 drives: :mod:`.canopen402`'s cascaded
position and velocity loops, profiles, quick stop and following error), and the real robot
may differ from the model the simulation and the gate are given, as a truth file says
(:mod:`skel_ros.model.truth`). The devices speak their protocol byte for byte as the
protocol-level emulators do (they are those emulators, with another motion source).

This part stands above both :mod:`skel_ros.sim` and :mod:`skel_ros.emulation`; only the
nodes, the command line and the tests import it. Emulators are found by protocol name
(:func:`physical_emulator_for`), as :mod:`skel_ros.emulation`'s are: the built-in table
:data:`BUILTIN` plus the entry-point group :data:`GROUP`; each is a ``start(transport,
actuators, options)`` function taking its protocol emulator's options plus ``physics``.
So far: Dynamixel, Feetech, MIT and CiA 402 (``canopen``); the ``physics`` option they share:
:mod:`.option`; the buses of one robot moving one world: :mod:`.host`. :mod:`.rehearsal`
plays a trajectory on the Dynamixel ones in this process, without ROS (the gate's fault
tests and ``bench/truth_cases.py --in-process``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, cast

from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.plugins import Registry
from skel_ros.physical.world import DeviceJoint, PhysicalWorld, Transmission, real_world

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.emulation import EmulatorFunction

__all__ = ["BUILTIN", "GROUP", "DeviceJoint", "PhysicalWorld", "Transmission",
           "physical_emulator_for", "physical_emulator_names", "real_world"]

GROUP = "skel_ros.physical_emulators"
"""The entry-point group a distribution declares its physics-backed emulators in."""

BUILTIN: Mapping[str, str] = MappingProxyType({
    "dynamixel": "skel_ros.physical.dynamixel:start_emulator",
    "mit": "skel_ros.physical.mit:start_emulator",
    "canopen": "skel_ros.physical.canopen402:start_emulator",
    "feetech": "skel_ros.physical.feetech:start_emulator",
})

_EMULATORS = Registry("physics-backed emulator", GROUP, BUILTIN)


def physical_emulator_names() -> tuple[str, ...]:
    """The protocols with a physics-backed emulator, sorted; nothing is imported."""
    return _EMULATORS.names()


def physical_emulator_for(name: str) -> EmulatorFunction:
    """The function that starts protocol ``name``'s physics-backed emulator.

    Raises:
        ConfigError: none for that protocol (yet), or it cannot be imported.
    """
    start, reference = _EMULATORS.load(name)
    if not callable(start):
        raise ConfigError(f"physics-backed emulator {name!r}: {reference} is not a function")
    return cast("EmulatorFunction", start)
