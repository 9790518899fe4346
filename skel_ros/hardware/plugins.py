"""Protocols as plugins: one :class:`ProtocolPlugin` per protocol, found by name.

Everything the rest of the package knows about a protocol is in its plugin object: the
driver class, whether its transport is a serial line or a CAN bus, the ids it can address,
the baud rates (or bitrates) its devices can be set to, what ``skel-ros scan`` asks by
default and how long it waits, the control modes its actuators run in, the option names a
hardware YAML may give its buses and actuators, what a new hardware YAML starts with
(``skel-ros init-hardware``) and its scan. The configuration reader, the backend, the
hardware node and the command line ask the plugin; none of them keeps a list of protocol
names. A protocol's emulator is not the plugin's: emulated devices live above this layer,
in :mod:`skel_ros.emulation`, found by the protocol's name the same way.

Plugins are found the way python-can finds its interfaces: a table of the built-in ones
(:data:`BUILTIN`) plus the entry points of the group ``skel_ros.protocols`` (:data:`GROUP`)
that installed distributions declare, e.g. in a third-party ``setup.py``::

    entry_points={"skel_ros.protocols": ["myproto = my_package.myproto:PLUGIN"]}

Both are references ``"module:attribute"`` loaded by the same code (a :class:`Registry`,
which :mod:`skel_ros.emulation` uses too) when a configuration (or a command) names the
protocol, and not before: listing the names imports nothing, so a missing CAN library never
breaks a Dynamixel robot. docs/architecture.md lists the files a new protocol touches.
"""

from __future__ import annotations

import enum
import posixpath
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from skel_ros.hardware.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.hardware.base import ActuatorBus, ControlMode, ScanResult

__all__ = [
    "BUILTIN",
    "GROUP",
    "ProtocolPlugin",
    "Registry",
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
    "feetech": "skel_ros.hardware.feetech:PLUGIN",
})


class TransportKind(enum.Enum):
    """How a protocol's bus is reached (what ``transport:`` in the hardware YAML holds)."""

    SERIAL = "serial"  # {"port": "/dev/ttyUSB0" or a pyserial URL, "baudrate": ...}
    CAN = "can"  # python-can arguments: {"interface": ..., "channel": ..., "bitrate": ...}

    @property
    def example(self) -> dict[str, Any]:
        """A ``transport:`` of this kind for a new hardware YAML, for the user to edit."""
        if self is TransportKind.SERIAL:
            return {"port": "/dev/ttyUSB0", "baudrate": 1_000_000}
        return {"interface": "socketcan", "channel": "can0", "bitrate": 1_000_000}

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


class ScanFunction(Protocol):
    """``scan(transport, ids, timeout)``: the devices among ``ids`` that answer."""

    def __call__(self, transport: Mapping[str, Any], ids: Sequence[int], timeout: float,
                 ) -> list[ScanResult]: ...


@dataclass(frozen=True)
class ProtocolPlugin:
    """Everything the package needs to know about one protocol.

    Attributes:
        name: the protocol's name, as ``protocol:`` in the hardware YAML writes it.
        bus_class: the driver (:class:`~skel_ros.hardware.base.ActuatorBus`).
        transport: serial line or CAN bus: which ``transport:`` keys apply, which launch
            arguments (``port`` or ``can_interface``/``can_channel``) override them, what
            a new hardware YAML starts with (:attr:`TransportKind.example`), and where an
            emulator may go (:func:`skel_ros.emulation.emulated_transport`).
        id_range: ``(lowest, highest)`` id the protocol can address; the YAML reader
            refuses other ids at the line of ``id:``.
        scan_ids: the ids ``skel-ros scan`` asks when ``--ids`` is not given (``"1-32"``).
        scan_timeout: seconds ``skel-ros scan`` waits for each answer by default.
        modes: the control modes its actuators can run in, the protocol's usual one first
            (``skel-ros emulate`` and ``skel-ros init-hardware`` give its actuators that one).
        bus_options: the keys ``buses.<name>.options`` may hold.
        actuator_options: the keys ``joints.<name>.options`` may hold.
        scan: ``scan(transport, ids, timeout) -> [ScanResult]``.
        rates: the values ``transport:`` may give its ``transport.rate_key`` (the baud
            rates or bitrates the devices can be set to), ascending; ``()``: any positive
            integer. The YAML reader refuses others at their line, naming these.
        default_model: the actuator ``model:`` a new hardware YAML writes ("": none).
        default_options: the actuator ``options:`` a new hardware YAML writes, what the
            usual mode needs to run (an MIT motor's PD gains: a moderate start to tune).
        device_watchdog: whether its devices have a watchdog the driver arms from
            ``device_watchdog`` (Feetech servos have none: a new hardware YAML for them
            writes ``device_watchdog: 0``, and their driver refuses another value).
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
    rates: tuple[int, ...] = ()
    default_model: str = ""
    default_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    device_watchdog: bool = True


@dataclass(frozen=True)
class Registry:
    """Names bound to ``"module:attribute"`` references, imported when a name is asked for.

    A built-in table plus an entry-point group, as python-can finds its interfaces.

    Attributes:
        kind: what is registered, as messages name it (``"protocol"``, ``"emulator"``).
        group: the entry-point group installed distributions declare theirs in.
        builtin: name -> ``"module:attribute"`` of the package's own.
    """

    kind: str
    group: str
    builtin: Mapping[str, str]

    def registered(self) -> dict[str, list[EntryPoint]]:
        """Every registration per name: the built-in table first, then the entry points."""
        found = {name: [EntryPoint(name, value, self.group)]
                 for name, value in self.builtin.items()}
        for ep in entry_points(group=self.group):
            same = found.setdefault(ep.name, [])
            if all(ep.value != other.value for other in same):  # one dist seen twice
                same.append(ep)
        return found

    def names(self) -> tuple[str, ...]:
        """Every registered name, sorted; nothing is imported."""
        return tuple(sorted(self.registered()))

    def load(self, name: str) -> tuple[Any, str]:
        """The object registered as ``name``, imported now, and its reference.

        Raises:
            ConfigError: unknown name; registered twice with different targets; its
                module (or a library it needs) cannot be imported, or has no such
                attribute.
        """
        registered = self.registered()
        entries = registered.get(name)
        if not entries:
            raise ConfigError(f"unknown {self.kind} {name!r}; known:"
                              f" {', '.join(sorted(registered))}")
        if len(entries) > 1:
            raise ConfigError(f"{self.kind} {name!r} is registered more than once (entry-point"
                              f" group {self.group}): {', '.join(ep.value for ep in entries)}")
        entry = entries[0]
        try:
            return entry.load(), entry.value
        except ImportError as exc:
            raise ConfigError(f"{self.kind} {name!r} is not available: {exc}") from None
        except AttributeError as exc:
            raise ConfigError(f"{self.kind} {name!r}: {entry.value} cannot be loaded: {exc}"
                              ) from None


_PROTOCOLS = Registry("protocol", GROUP, BUILTIN)


def protocol_names() -> tuple[str, ...]:
    """The names of every registered protocol, sorted; nothing is imported."""
    return _PROTOCOLS.names()


def protocol(name: str) -> ProtocolPlugin:
    """The plugin of protocol ``name``, importing its module now.

    Raises:
        ConfigError: unknown protocol; registered twice with different targets; its
            module (or a library it needs) cannot be imported; the target is not a
            :class:`ProtocolPlugin` of that name.
    """
    plugin, reference = _PROTOCOLS.load(name)
    if not isinstance(plugin, ProtocolPlugin) or plugin.name != name:
        raise ConfigError(f"protocol {name!r}: {reference} is {plugin!r}, not the"
                          f" ProtocolPlugin named {name!r}")
    return plugin


def bus_class(name: str) -> type[ActuatorBus]:
    """The driver class of protocol ``name`` (see :func:`protocol` for the errors)."""
    return protocol(name).bus_class
