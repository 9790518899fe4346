"""The contract between the hardware manager and the protocol drivers.

The manager (``skel_ros.hardware.manager``) owns the joint model, the limits, safety and
the control loop; a *bus driver* owns one physical bus (a serial port, a CAN channel) and
every actuator of one protocol on it. Per control cycle the manager calls
:meth:`ActuatorBus.write` with the goals and :meth:`ActuatorBus.read` for the measured
values (on Dynamixel one Sync Write and one (Fast) Sync Read; on CAN one round of frames).

Units on this interface are SI **at the actuator's output shaft** (rad, rad/s, N·m, or m,
m/s, N): drivers convert to and from ticks, velocity units, currents and fixed-point
fields; the manager maps joint <-> actuator with direction, gear ratio and zero offset.

Drivers are chosen by name (``protocol:`` in the hardware YAML) and imported only when a
configuration uses them, like python-can's interfaces (see :func:`bus_class`).
"""

from __future__ import annotations

import abc
import enum
import importlib
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

from skel_ros.hardware.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

NAN = math.nan


class ControlMode(enum.Enum):
    """What an actuator is commanded with."""

    POSITION = "position"
    VELOCITY = "velocity"
    EFFORT = "effort"  # torque / current (force for linear actuators)
    MIT = "mit"  # impedance: p, v, kp, kd, t_ff in one frame (MIT-mode motors)


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class ActuatorSpec:
    """One actuator on a bus, as the hardware YAML describes it.

    Attributes:
        id: the id on its bus (Dynamixel id, CANopen node id, MIT motor CAN id).
        mode: the control mode it runs in.
        model: the model name (e.g. ``"XM430-W350"``, ``"AK80-9"``) or ``""``.
        options: protocol-specific settings from the YAML (torque constant, MIT ranges,
            profile values ...), read-only.
        name: the joint / DOF it drives, for messages.
    """

    id: int
    mode: ControlMode
    model: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", _frozen(self.options))


@dataclass(frozen=True)
class BusSpec:
    """One physical bus and how to reach it.

    Attributes:
        name: the bus's name in the YAML (``buses: {arm_bus: ...}``).
        protocol: ``"dynamixel"``, ``"canopen"`` or ``"mit"`` (see :data:`PROTOCOLS`).
        transport: how to open it: for serial ``{"port": "/dev/ttyUSB0" or any
            pyserial URL, "baudrate": 4000000}``; for CAN ``{"interface": "socketcan",
            "channel": "can0", "bitrate": 1000000}`` (any python-can bus arguments).
        options: protocol settings (timeouts, Fast Sync Read, SYNC period, EDS ...).
    """

    name: str
    protocol: str
    transport: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "transport", _frozen(self.transport))
        object.__setattr__(self, "options", _frozen(self.options))


@dataclass(frozen=True)
class ActuatorCommand:
    """One cycle's goal for one actuator; NaN means "not given".

    Which fields a driver uses follows the actuator's :class:`ControlMode`: POSITION uses
    ``position`` (and ``velocity`` as a profile/feed-forward where the protocol has it),
    VELOCITY ``velocity``, EFFORT ``effort``, MIT all five (``kp``/``kd`` NaN: the
    actuator's configured defaults).
    """

    position: float = NAN
    velocity: float = NAN
    effort: float = NAN
    kp: float = NAN
    kd: float = NAN


@dataclass(frozen=True)
class ActuatorState:
    """What one actuator reported in one cycle; NaN / None where the protocol is silent.

    Attributes:
        position, velocity, effort: measured, SI at the actuator's output.
        torque_enabled: whether the actuator is producing torque.
        error_code: the protocol's error/fault bits (Dynamixel Hardware Error Status,
            CiA 402 error code, MIT error byte); 0 when healthy.
        fault: a readable description of ``error_code`` or ``""``.
        temperature: degrees Celsius.
        voltage: volts.
        stamp: the driver clock's time when the values were received.
    """

    position: float = NAN
    velocity: float = NAN
    effort: float = NAN
    torque_enabled: bool = False
    error_code: int = 0
    fault: str = ""
    temperature: float | None = None
    voltage: float | None = None
    stamp: float = NAN


@dataclass(frozen=True)
class ScanResult:
    """One device that answered a scan."""

    id: int
    model_number: int | None = None
    model: str = ""
    firmware: str = ""
    details: str = ""


class ActuatorBus(abc.ABC):
    """A driver for every actuator of one protocol on one bus.

    Not thread-safe: the manager calls it from its I/O thread only. Every method raises
    only :class:`~skel_ros.hardware.errors.HardwareError` subclasses for bus and device
    problems (after which the manager calls :meth:`close` and later :meth:`open` again).

    Args:
        spec: the bus.
        actuators: the actuators on it (ids unique).
        clock: monotonic seconds, injected for tests.
    """

    protocol: ClassVar[str]

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],
                 clock: Callable[[], float]) -> None:
        ids = [a.id for a in actuators]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ConfigError(f"bus {spec.name!r}: actuator ids {dup} used more than once")
        self.spec = spec
        self.actuators = tuple(actuators)
        self.clock = clock

    @abc.abstractmethod
    def open(self) -> None:
        """Open the transport, check every actuator answers, configure it, torque OFF.

        Configuration covers what the protocol needs (operating mode, return delay,
        PDO mapping, NMT start, MIT enter-mode ...), so that after ``open`` a
        :meth:`read` works and a :meth:`set_torque` ``(True)`` makes :meth:`write`
        effective.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Torque off where still possible, then release the transport. Never raises."""

    @abc.abstractmethod
    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """Switch torque on or off (all actuators when ``ids`` is None)."""

    @abc.abstractmethod
    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """Send one cycle's goals (one Sync Write / one round of frames)."""

    @abc.abstractmethod
    def read(self) -> dict[int, ActuatorState]:
        """Return every actuator's present values (one Sync Read / one round of replies)."""

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded and :meth:`close` was not called since."""
        return False


# protocol name -> "module:Class"; imported only when a configuration asks for it.
PROTOCOLS: Mapping[str, str] = MappingProxyType({
    "dynamixel": "skel_ros.hardware.dynamixel.bus:DynamixelBus",
    "canopen": "skel_ros.hardware.canopen402.bus:Cia402Bus",
    "mit": "skel_ros.hardware.mit.bus:MitBus",
})


CAN_PROTOCOLS: frozenset[str] = frozenset({"canopen", "mit"})
"""The protocols whose transport is a python-can bus."""


def emulator_transport(spec: BusSpec) -> dict[str, Any]:
    """Where the emulator of ``spec``'s bus goes (``emulate:=true``): never onto real hardware.

    A CAN bus on a python-can ``virtual`` channel keeps it (tests choose their channel);
    any other CAN transport (``socketcan``, ``pcan``, ...) gives ``{}``, a fresh virtual
    channel, so emulation works where that interface is missing and never puts emulated
    motors on a real bus. Serial emulators open their own pseudo-terminal whatever the
    port says, so a serial transport is returned unchanged.
    """
    transport = dict(spec.transport)
    if spec.protocol in CAN_PROTOCOLS and transport.get("interface") != "virtual":
        return {}
    return transport


def bus_class(protocol: str) -> type[ActuatorBus]:
    """Return the driver class of ``protocol``, importing its module now.

    Raises:
        ConfigError: unknown protocol, or its module / library cannot be imported.
    """
    try:
        target = PROTOCOLS[protocol]
    except KeyError:
        raise ConfigError(
            f"unknown protocol {protocol!r}; known: {', '.join(sorted(PROTOCOLS))}"
        ) from None
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"protocol {protocol!r} is not available: {exc}") from None
    cls: type[ActuatorBus] = getattr(module, class_name)
    return cls
