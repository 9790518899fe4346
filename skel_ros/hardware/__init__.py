"""Real actuators: transports, protocol drivers, emulators, safety; no rclpy, no dartpy.

Drivers for each protocol live in their own subpackage and are imported only when a
hardware configuration names them (:func:`skel_ros.hardware.base.bus_class`).
"""

from skel_ros.hardware.base import (
    PROTOCOLS,
    ActuatorBus,
    ActuatorCommand,
    ActuatorSpec,
    ActuatorState,
    BusSpec,
    ControlMode,
    ScanResult,
    bus_class,
)
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)

__all__ = [
    "PROTOCOLS",
    "ActuatorBus",
    "ActuatorCommand",
    "ActuatorSpec",
    "ActuatorState",
    "BusSpec",
    "ConfigError",
    "ControlMode",
    "DeviceError",
    "HardwareError",
    "ProtocolError",
    "ScanResult",
    "TransportError",
    "TransportTimeoutError",
    "bus_class",
]
