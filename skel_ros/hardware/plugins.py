"""Protocols as plugins: one :class:`ProtocolPlugin` per protocol, found by name.

Everything the rest of the package knows about a protocol is in its plugin object: the
driver class, whether its transport is a serial line or a CAN bus, the ids it can address,
the baud rates (or bitrates) its devices can be set to, what ``skel-ros scan`` asks by
default and how long it waits, the control modes its actuators run in, the option names a
hardware YAML may give its buses and actuators, its scan and its emulator. The
configuration reader, the manager, the hardware node and the command line ask the plugin;
none of them keeps a list of protocol names.

Plugins are found the way python-can finds its interfaces: a table of the built-in ones
(:data:`BUILTIN`) plus the entry points of the group ``skel_ros.protocols`` (:data:`GROUP`)
that installed distributions declare, e.g. in a third-party ``setup.py``::

    entry_points={"skel_ros.protocols": ["myproto = my_package.myproto:PLUGIN"]}

Both are references ``"module:attribute"`` loaded by the same code when a configuration
(or a command) names the protocol, and not before: listing the names imports nothing, so a
missing CAN library never breaks a Dynamixel robot. docs/architecture.md lists the files a
new protocol touches.
"""

from __future__ import annotations

import enum
import posixpath
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from skel_ros.hardware.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.hardware.base import ActuatorBus, ActuatorSpec, ControlMode, ScanResult

__all__ = [
    "BUILTIN",
    "GROUP",
    "Emulator",
    "ProtocolPlugin",
    "TransportKind",
    "bus_class",
    "protocol",
    "protocol_names",
]

GROUP = "skel_ros.protocols"
"""The entry-point group a distribution declares its protocols in."""

# protocol name -> "module:attribute" of its ProtocolPlugin; imported only when used.
BUILTIN: Mapping[str, str] = MappingProxyType({
    "dynamixel": "skel_ros.hardware.dynamixel:PLUGIN",
    "canopen": "skel_ros.hardware.canopen402:PLUGIN",
    "mit": "skel_ros.hardware.mit:PLUGIN",
})


class TransportKind(enum.Enum):
    """How a protocol's bus is reached (what ``transport:`` in the hardware YAML holds)."""

    SERIAL = "serial"  # {"port": "/dev/ttyUSB0" or a pyserial URL, "baudrate": ...}
    CAN = "can"  # python-can arguments: {"interface": ..., "channel": ..., "bitrate": ...}

    @property
    def rate_key(self) -> str:
        """The ``transport:`` key of the line's speed: ``baudrate`` or ``bitrate``."""
        return "baudrate" if self is TransportKind.SERIAL else "bitrate"

    def device(self, transport: Mapping[str, Any]) -> str | None:
        """What a bus on ``transport`` opens, as a message names it; None: nothing shared.

        Two buses on one serial port would fight over it; a CAN interface and channel is
        a shared wire, where each id must be unique. A serial port is compared as written
        (a path normalised: ``/dev//ttyUSB0`` is ``/dev/ttyUSB0``; symbolic links are
        not followed: the file may be read where the devices are not); ``loop://`` is a
        new loopback at each open, so it is never shared; no port gives None (the driver
        refuses that). A CAN bus is its ``interface`` and ``channel``, either missing
        meaning python-can's default.
        """
        if self is TransportKind.SERIAL:
            port = transport.get("port")
            if not isinstance(port, str) or not port or port.startswith("loop://"):
                return None
            return f"port {port if '://' in port else posixpath.normpath(port)!r}"
        interface, channel = (transport.get(key) for key in ("interface", "channel"))
        return (f"CAN interface {'(default)' if interface is None else repr(str(interface))}"
                f" channel {'(default)' if channel is None else repr(str(channel))}")


class Emulator(Protocol):
    """A running emulator, as a plugin's ``start_emulator`` returns it."""

    @property
    def transport(self) -> Mapping[str, Any]:
        """How to reach the emulated devices (a ``transport:`` mapping)."""
        ...

    def stop(self) -> None:
        """Stop the emulated devices and release what they hold."""
        ...


class ScanFunction(Protocol):
    """``scan(transport, ids, timeout)``: the devices among ``ids`` that answer."""

    def __call__(self, transport: Mapping[str, Any], ids: Sequence[int], timeout: float,
                 ) -> list[ScanResult]: ...


class EmulatorFunction(Protocol):
    """``start_emulator(transport, actuators, options)``: emulated devices, running."""

    def __call__(self, transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                 options: Mapping[str, Any]) -> Emulator: ...


@dataclass(frozen=True)
class ProtocolPlugin:
    """Everything the package needs to know about one protocol.

    Attributes:
        name: the protocol's name, as ``protocol:`` in the hardware YAML writes it.
        bus_class: the driver (:class:`~skel_ros.hardware.base.ActuatorBus`).
        transport: serial line or CAN bus: which ``transport:`` keys apply, which launch
            arguments (``port`` or ``can_interface``/``can_channel``) override them, and
            where an emulator may go.
        id_range: ``(lowest, highest)`` id the protocol can address; the YAML reader
            refuses other ids at the line of ``id:``.
        scan_ids: the ids ``skel-ros scan`` asks when ``--ids`` is not given (``"1-32"``).
        scan_timeout: seconds ``skel-ros scan`` waits for each answer by default.
        modes: the control modes its actuators can run in, the protocol's usual one first
            (``skel-ros emulate`` gives its actuators that one).
        bus_options: the keys ``buses.<name>.options`` may hold.
        actuator_options: the keys ``joints.<name>.options`` may hold.
        scan: ``scan(transport, ids, timeout) -> [ScanResult]``.
        start_emulator: ``start_emulator(transport, actuators, options) -> Emulator``;
            ``transport`` may be ``{}`` (the emulator chooses where it is reached).
        rates: the values ``transport:`` may give its ``transport.rate_key`` (the baud
            rates or bitrates the devices can be set to), ascending; ``()``: any positive
            integer. The YAML reader refuses others at their line, naming these.
    """

    name: str
    bus_class: type[ActuatorBus]
    transport: TransportKind
    id_range: tuple[int, int]
    scan_ids: str
    scan_timeout: float
    modes: tuple[ControlMode, ...]
    bus_options: frozenset[str]
    actuator_options: frozenset[str]
    scan: ScanFunction
    start_emulator: EmulatorFunction
    rates: tuple[int, ...] = ()

    def emulator_transport(self, transport: Mapping[str, Any]) -> dict[str, Any]:
        """Where this protocol's emulator of a bus on ``transport`` goes: never onto hardware.

        A CAN bus on a python-can ``virtual`` channel keeps it (tests choose their channel);
        any other CAN transport (``socketcan``, ``pcan``, ...) gives ``{}``, a fresh virtual
        channel, so emulation works where that interface is missing and never puts
        emulated devices on a real bus. Serial emulators open their own pseudo-terminal
        whatever the port says, so a serial transport is returned unchanged.
        """
        given = dict(transport)
        if self.transport is TransportKind.CAN and given.get("interface") != "virtual":
            return {}
        return given


def _registered() -> dict[str, list[EntryPoint]]:
    """Every registration per name: the built-in table first, then the entry points."""
    found = {name: [EntryPoint(name, value, GROUP)] for name, value in BUILTIN.items()}
    for ep in entry_points(group=GROUP):
        same = found.setdefault(ep.name, [])
        if all(ep.value != other.value for other in same):  # one dist seen twice on the path
            same.append(ep)
    return found


def protocol_names() -> tuple[str, ...]:
    """The names of every registered protocol, sorted; nothing is imported."""
    return tuple(sorted(_registered()))


def protocol(name: str) -> ProtocolPlugin:
    """The plugin of protocol ``name``, importing its module now.

    Raises:
        ConfigError: unknown protocol; registered twice with different targets; its
            module (or a library it needs) cannot be imported; the target is not a
            :class:`ProtocolPlugin` of that name.
    """
    registered = _registered()
    entries = registered.get(name)
    if not entries:
        raise ConfigError(f"unknown protocol {name!r}; known: {', '.join(sorted(registered))}")
    if len(entries) > 1:
        raise ConfigError(f"protocol {name!r} is registered more than once (entry-point group"
                          f" {GROUP}): {', '.join(ep.value for ep in entries)}")
    entry = entries[0]
    try:
        plugin = entry.load()
    except ImportError as exc:
        raise ConfigError(f"protocol {name!r} is not available: {exc}") from None
    except AttributeError as exc:
        raise ConfigError(f"protocol {name!r}: {entry.value} cannot be loaded: {exc}"
                          ) from None
    if not isinstance(plugin, ProtocolPlugin) or plugin.name != name:
        raise ConfigError(f"protocol {name!r}: {entry.value} is {plugin!r}, not the"
                          f" ProtocolPlugin named {name!r}")
    return plugin


def bus_class(name: str) -> type[ActuatorBus]:
    """The driver class of protocol ``name`` (see :func:`protocol` for the errors)."""
    return protocol(name).bus_class
