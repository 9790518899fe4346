"""Emulated devices: each protocol's actuators, for machines without hardware.

An emulator answers a protocol's driver as the real devices would, on a transport the
driver opens as it opens hardware: the Dynamixel servos (:mod:`.dynamixel`) in a process
of their own on a pseudo-terminal, the CiA 402 drives (:mod:`.canopen402`) and the MIT
motors (:mod:`.mit`) as threads on python-can's ``virtual`` interface. Each shaft moves
with :class:`~skel_ros.emulation.motor.MotorModel`.

This part stands above :mod:`skel_ros.hardware` (it uses the protocols' codecs and
constants) and never below it: a robot computer runs the drivers without ever importing
an emulator (or, later, the physics engine an emulator may move). Only the command line,
the nodes and the tests import it.

Emulators are found by protocol name, as protocols are
(:class:`~skel_ros.hardware.plugins.Registry`): the built-in table :data:`BUILTIN` plus
the entry-point group ``skel_ros.emulators`` (:data:`GROUP`) that installed
distributions declare, e.g.::

    entry_points={"skel_ros.protocols": ["myproto = my_package.myproto:PLUGIN"],
                  "skel_ros.emulators": ["myproto = my_package.myproto_emulator:start"]}

Each is a ``start(transport, actuators, options) -> Emulator`` function, imported only when
a command or a node starts that protocol's emulator: listing the names imports nothing.

Typical use (what the hardware node does with ``emulate:=true``)::

    from skel_ros.emulation import emulated_transport, emulator_for
    from skel_ros.hardware.plugins import protocol
    start = emulator_for(spec.protocol)
    emulator = start(emulated_transport(protocol(spec.protocol), spec.transport),
                     actuators, {"initial_positions": {1: 0.3}})
    config = config.with_transport(spec.name, emulator.transport)
    ...
    emulator.stop()
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, cast

from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.plugins import Registry, TransportKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.hardware.base import ActuatorSpec
    from skel_ros.hardware.plugins import ProtocolPlugin

__all__ = [
    "BUILTIN",
    "GROUP",
    "Emulator",
    "EmulatorFunction",
    "emulated_transport",
    "emulator_for",
    "emulator_names",
]

GROUP = "skel_ros.emulators"
"""The entry-point group a distribution declares its protocols' emulators in."""

# protocol name -> "module:attribute" of its emulator's start function; imported when used.
BUILTIN: Mapping[str, str] = MappingProxyType({
    "dynamixel": "skel_ros.emulation.dynamixel:start_emulator",
    "canopen": "skel_ros.emulation.canopen402:start_emulator",
    "mit": "skel_ros.emulation.mit:start_emulator",
    "feetech": "skel_ros.emulation.feetech:start_emulator",
})

_EMULATORS = Registry("emulator", GROUP, BUILTIN)


class Emulator(Protocol):
    """Emulated devices, running, as an :class:`EmulatorFunction` returns them."""

    @property
    def transport(self) -> Mapping[str, Any]:
        """How to reach the emulated devices (a ``transport:`` mapping)."""
        ...

    def stop(self) -> None:
        """Stop the emulated devices and release what they hold; idempotent, never raises."""
        ...


class EmulatorFunction(Protocol):
    """``start(transport, actuators, options)``: emulated devices for ``actuators``, running."""

    def __call__(self, transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                 options: Mapping[str, Any]) -> Emulator:
        """Start them; ``transport`` may be ``{}`` (the emulator chooses where it is reached).

        ``options`` are the emulator's own; every built-in one takes ``initial_positions``
        (``{id: rad}``).
        """
        ...


def emulator_names() -> tuple[str, ...]:
    """The protocols that have a registered emulator, sorted; nothing is imported."""
    return _EMULATORS.names()


def emulator_for(name: str) -> EmulatorFunction:
    """The function that starts protocol ``name``'s emulator, importing its module now.

    Raises:
        ConfigError: no emulator for that protocol; registered twice with different
            targets; its module (or a library it needs) cannot be imported; the target is
            not callable.
    """
    start, reference = _EMULATORS.load(name)
    if not callable(start):
        raise ConfigError(f"emulator {name!r}: {reference} is {start!r}, not a function that"
                          " starts an emulator")
    return cast("EmulatorFunction", start)


def emulated_transport(plugin: ProtocolPlugin, transport: Mapping[str, Any]) -> dict[str, Any]:
    """Where the emulator of a configured bus on ``transport`` goes: never onto hardware.

    A CAN bus on a python-can ``virtual`` channel keeps it (tests choose their channel);
    any other CAN transport (``socketcan``, ``pcan``, ...) gives ``{}``, a fresh virtual
    channel, so emulation works where that interface is missing and never puts emulated
    devices on a real bus. Serial emulators open their own pseudo-terminal whatever the
    port says, so a serial transport is returned unchanged.
    """
    given = dict(transport)
    if plugin.transport is TransportKind.CAN and given.get("interface") != "virtual":
        return {}
    return given
