"""The contract between the hardware backend and the protocol drivers.

The backend (:mod:`skel_ros.hardware.backend`) owns the joint <-> actuator mapping, safety
and the buses (the runner's loop calls it once per cycle); a *bus driver* owns one
physical bus (a serial port, a CAN channel) and every actuator of one protocol on it.
Per control cycle the backend calls
:meth:`ActuatorBus.write` with the goals and :meth:`ActuatorBus.read` for the measured
values (on Dynamixel one Sync Write and one (Fast) Sync Read; on CAN one round of frames).

Units on this interface are SI **at the actuator's output shaft** (rad, rad/s, N·m, or m,
m/s, N): drivers convert to and from ticks, velocity units, currents and fixed-point
fields; the backend maps joint <-> actuator with direction, gear ratio and zero offset.

Drivers are chosen by name (``protocol:`` in the hardware YAML) through their protocol's
plugin and imported only when a configuration uses them, like python-can's interfaces
(see :mod:`skel_ros.hardware.plugins`).
"""

from __future__ import annotations

import abc
import enum
import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from skel_ros.hardware.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

NAN = math.nan


class ControlMode(enum.Enum):
    """What an actuator is commanded with."""

    POSITION = "position"
    VELOCITY = "velocity"
    EFFORT = "effort"  # torque / current (force for linear actuators)
    # Position, velocity and feed-forward torque through the device's PD law with gains kp,
    # kd: u = kp (p* - p) + kd (v* - v) + t_ff (an MIT-mode motor's one command frame).
    IMPEDANCE = "impedance"


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class ActuatorLimits:
    """A DOF's limits seen at its actuator (direction, gear ratio and zero offset applied).

    A driver encodes every goal so that the value the device decodes stays inside these
    bounds: it rounds to the nearest tick and, when that tick lies outside, takes the next
    tick inward (:func:`quantize_inward`). Safety is measured on the wire.

    Attributes:
        position: ``(lower, upper)`` actuator position (rad or m at the output shaft).
        velocity: ``(lower, upper)`` actuator velocity (rad/s or m/s).
        effort: ``(lower, upper)`` actuator effort (N m or N).
    """

    position: tuple[float, float] = (-math.inf, math.inf)
    velocity: tuple[float, float] = (-math.inf, math.inf)
    effort: tuple[float, float] = (-math.inf, math.inf)


NO_LIMITS = ActuatorLimits()


def quantize_inward(value: float, scale: float, lower: float = -math.inf,
                    upper: float = math.inf, offset: float = 0.0) -> int:
    """The integer ``n`` nearest to ``value / scale - offset`` whose value stays in the bounds.

    A device field holds ``n`` and means ``(n + offset) * scale`` (``scale`` may be negative).
    The nearest ``n`` can decode up to half a step past a bound; then the next ``n`` inward
    is taken, so ``lower <= (n + offset) * scale <= upper`` whenever one step fits between
    the bounds (otherwise the ``n`` nearest to the middle of the bounds).

    Raises:
        ValueError: ``value`` or ``scale`` not finite, ``scale`` zero.
    """
    if not (math.isfinite(value) and math.isfinite(scale)) or scale == 0:
        raise ValueError(f"cannot quantize {value!r} with step {scale!r}")
    value = min(max(value, lower), upper)  # far outside: the bound's tick, not the middle
    n = round(value / scale - offset)
    decoded = (n + offset) * scale
    step = 1 if scale > 0 else -1  # +1 tick moves the decoded value up
    if decoded > upper:
        n -= step
    elif decoded < lower:
        n += step
    decoded = (n + offset) * scale
    if not lower <= decoded <= upper:  # no tick between the bounds: the middle's nearest
        n = round((lower + upper) / 2 / scale - offset) if math.isfinite(lower + upper) else n
    return int(n)


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
        limits: the DOF's limits at this actuator; the backend fills them when it binds
            the configuration to the model (:class:`ActuatorLimits`).
    """

    id: int
    mode: ControlMode
    model: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    limits: ActuatorLimits = NO_LIMITS

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", _frozen(self.options))


@dataclass(frozen=True)
class BusSpec:
    """One physical bus and how to reach it.

    Attributes:
        name: the bus's name in the YAML (``buses: {arm_bus: ...}``).
        protocol: the protocol's name (``"dynamixel"``, ``"canopen"``, ``"mit"`` or any
            other registered one, see :mod:`skel_ros.hardware.plugins`).
        transport: how to open it: for serial ``{"port": "/dev/ttyUSB0" or any
            pyserial URL, "baudrate": 4000000}``; for CAN ``{"interface": "socketcan",
            "channel": "can0", "bitrate": 1000000}`` (any python-can bus arguments).
        options: protocol settings (timeouts, Fast Sync Read, SYNC period, EDS ...).
        device_watchdog: seconds of silence from the host after which each device stops
            by itself (Dynamixel Bus Watchdog, CiA 402 heartbeat consumer with its abort
            connection reaction, an MIT motor's CAN timeout), armed by :meth:`ActuatorBus.
            open` where the device has one; 0 = not armed. From the hardware YAML.
        timeout_margin: seconds added to the computed wire time of a request and its
            replies (bytes or frames at the baud rate / bitrate) before a reply counts as
            missing: USB latency, a loaded host. From the hardware YAML.
        line: the bus's line in the hardware YAML (0: not from a file), for messages.
    """

    name: str
    protocol: str
    transport: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    device_watchdog: float = 0.0
    timeout_margin: float = 0.1
    line: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "transport", _frozen(self.transport))
        object.__setattr__(self, "options", _frozen(self.options))


@dataclass(frozen=True)
class ActuatorCommand:
    """One cycle's goal for one actuator; NaN means "not given".

    Which fields a driver uses follows the actuator's :class:`ControlMode`: POSITION uses
    ``position`` (and ``velocity`` as a profile/feed-forward where the protocol has it),
    VELOCITY ``velocity``, EFFORT ``effort``, IMPEDANCE all five (``kp``/``kd`` NaN: the
    actuator's configured defaults).
    """

    position: float = NAN
    velocity: float = NAN
    effort: float = NAN
    kp: float = NAN
    kd: float = NAN

    @classmethod
    def for_mode(cls, mode: ControlMode, position: float, velocity: float, effort: float,
                 ) -> ActuatorCommand | None:
        """The command an actuator in ``mode`` gets for one cycle's targets (SI, actuator side).

        POSITION: the position, None while it is not finite (nothing to send); IMPEDANCE:
        the position with the velocity as feed-forward, no torque feed-forward and the
        actuator's configured gains (NaN), None likewise; VELOCITY and EFFORT: their value
        as :func:`numpy.nan_to_num` gives it (NaN: 0).
        """
        if mode is ControlMode.POSITION:
            return cls(position=position) if math.isfinite(position) else None
        if mode is ControlMode.IMPEDANCE:
            return (cls(position=position, velocity=velocity, effort=0.0)
                    if math.isfinite(position) else None)
        if mode is ControlMode.VELOCITY:
            return cls(velocity=float(np.nan_to_num(velocity)))
        return cls(effort=float(np.nan_to_num(effort)))


@dataclass(frozen=True)
class ActuatorState:
    """What one actuator reported in one cycle; NaN / None where the protocol is silent.

    Attributes:
        position, velocity, effort: measured, SI at the actuator's output.
        torque_enabled: whether the actuator is producing torque.
        error_code: the protocol's error/fault bits (Dynamixel Hardware Error Status,
            CiA 402 error code, MIT error byte; a driver may add bits above the
            protocol's own for conditions it reports elsewhere, such as an expired device
            watchdog); 0 when healthy. A device in fault is reported here by
            :meth:`ActuatorBus.read`, not raised.
        fault: a readable description of ``error_code`` or ``""``.
        temperature: degrees Celsius.
        voltage: volts.
        stamp: the driver clock's time when the values were measured, as near as the
            driver knows (when they were received; an MIT motor's: when it got the
            frame it answers).
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

    Not thread-safe: the backend calls it from the loop's thread only. Every method raises
    only :class:`~skel_ros.hardware.errors.HardwareError` subclasses for bus and device
    problems (after which the backend calls :meth:`close` and later :meth:`open` again).

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
    def open(self, *, keep_torque: bool = False) -> None:
        """Open the transport, check every actuator answers, configure it.

        Configuration covers what the protocol needs (operating mode, return delay,
        PDO mapping, NMT start, MIT enter-mode, the device watchdog ...), so that after
        ``open`` a :meth:`read` works and a :meth:`set_torque` ``(True)`` makes
        :meth:`write` effective.

        Before changing anything, ``open`` reads what each device is doing (torque,
        fault, position). With ``keep_torque`` False (a first start, ``safe_state:
        torque_off``) every actuator ends with torque off. With ``keep_torque`` True (a
        reconnect under ``safe_state: hold``) an actuator found producing torque with no
        fault keeps its torque and its goal, and its settings are only checked, never
        rewritten; the others are configured and left with torque off. :meth:`read`
        then reports each actuator's true torque state.

        Raises:
            TransportError: the port or channel cannot be opened (the message says which).
            TransportTimeoutError: an actuator does not answer (the message names the ids
                that did, and the baud rate / bitrate).
            DeviceError: an actuator is another model than configured, or refuses a
                setting (the message says what was expected and what was found).
        """

    @abc.abstractmethod
    def close(self, *, torque_off: bool = True) -> None:
        """Release the transport (torque off first where still possible). Never raises.

        ``torque_off`` False leaves the actuators as they are (a bus that failed under
        ``safe_state: hold``: powered servos keep holding, their device watchdogs stay
        armed).
        """

    def clear_faults(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """Run the protocol's own fault recovery for the actuators in fault.

        Dynamixel: the Reboot instruction; CiA 402: fault reset (controlword bit 7); MIT
        motors: their clear-error command where the model has one. Actuators not in
        fault are left alone. Torque stays (or ends) off. Needs an open bus.

        Args:
            ids: the actuators to look at (all when None).

        Returns:
            For each actuator looked at, what was done and what remains, in words
            (``"rebooted; no error"``, ``"fault reset sent; still in fault: 0x2310 ..."``).
        """
        return dict.fromkeys(ids if ids is not None else [a.id for a in self.actuators],
                             f"{self.protocol} has no fault recovery")

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
