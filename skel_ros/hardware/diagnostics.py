"""Diagnostics data of the hardware: one record per bus and per actuator, no ROS.

The hardware node turns these into ``diagnostic_msgs/DiagnosticArray``; :class:`Level`
has the same values as ``DiagnosticStatus.OK/WARN/ERROR/STALE``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.hardware.errors import HardwareError


class Level(enum.IntEnum):
    """Severity, as ``diagnostic_msgs/DiagnosticStatus`` numbers it."""

    OK = 0
    WARN = 1
    ERROR = 2
    STALE = 3


class ErrorKind(enum.Enum):
    """What went wrong, for the error counters."""

    TIMEOUT = "timeout"  # no (complete) answer in time
    PROTOCOL = "protocol"  # CRC, length, garbage bytes
    TRANSPORT = "transport"  # port gone, cannot open
    DEVICE = "device"  # an actuator reported an error or a fault


def classify(exc: HardwareError) -> ErrorKind:
    """The counter an exception of the hardware layer goes to."""
    from skel_ros.hardware.errors import (
        DeviceError,
        ProtocolError,
        TransportError,
        TransportTimeoutError,
    )

    if isinstance(exc, TransportTimeoutError):
        return ErrorKind.TIMEOUT
    if isinstance(exc, TransportError):
        return ErrorKind.TRANSPORT
    if isinstance(exc, DeviceError):
        return ErrorKind.DEVICE
    if isinstance(exc, ProtocolError):
        return ErrorKind.PROTOCOL
    return ErrorKind.TRANSPORT


class ErrorCounts:
    """Mutable error counters of one bus or actuator (used by the loop's thread only)."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(ErrorKind, 0)

    def add(self, kind: ErrorKind) -> None:
        """Count one error of ``kind``."""
        self.counts[kind] += 1

    @property
    def total(self) -> int:
        """All errors counted."""
        return sum(self.counts.values())

    def frozen(self) -> Mapping[str, int]:
        """A read-only copy keyed by the kinds' names."""
        return MappingProxyType({k.value: v for k, v in self.counts.items()})


def _empty() -> Mapping[str, int]:
    return MappingProxyType({k.value: 0 for k in ErrorKind})


@dataclass(frozen=True)
class BusDiagnostics:
    """One bus.

    Attributes:
        name: the bus's name in the YAML.
        protocol: its protocol.
        level: OK, WARN (recent errors), ERROR (not connected).
        message: one line for humans.
        connected: whether it is open.
        errors: error counts since start, by :class:`ErrorKind` value.
        consecutive_failures: failed cycles in a row now.
        reconnects: successful reopenings after a failure.
        reconnect_attempts: failures in a row (the failure itself, then each failed or
            short-lived reopening); the backoff grows with it; 0 once a read is healthy.
        last_error: the last error's message.
    """

    name: str
    protocol: str
    level: Level
    message: str
    connected: bool
    errors: Mapping[str, int] = field(default_factory=_empty)
    consecutive_failures: int = 0
    reconnects: int = 0
    reconnect_attempts: int = 0
    last_error: str = ""


@dataclass(frozen=True)
class ActuatorDiagnostics:
    """One actuator.

    Attributes:
        name: the DOF it drives.
        bus: its bus.
        id: its id on the bus.
        model: its model name from the YAML.
        level: OK, WARN, ERROR (fault), STALE (no fresh data: its bus is down or missed
            the last read).
        message: one line for humans.
        torque_enabled: as reported in the last read; None when that read is stale
            (unknown: a device on a bus that is down may have lost power or torque).
        error_code: the protocol's error bits as last reported (0: healthy).
        fault: ``error_code`` in words.
        temperature: degrees Celsius, where reported.
        voltage: volts, where reported.
        effort: the load it reported in its last fresh read, SI at its output (N m or N;
            a Feetech servo's Present Load, a Dynamixel's Present Current through its
            torque constant); None when stale or not reported.
        errors: errors attributed to this actuator (device errors), by kind.
        position: last measured DOF position.
        target: last position target sent (DOF side; NaN if none).
    """

    name: str
    bus: str
    id: int
    model: str
    level: Level
    message: str
    torque_enabled: bool | None = None
    error_code: int = 0
    fault: str = ""
    temperature: float | None = None
    voltage: float | None = None
    effort: float | None = None
    errors: Mapping[str, int] = field(default_factory=_empty)
    position: float = float("nan")
    target: float = float("nan")
