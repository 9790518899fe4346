"""Real actuators: transports, protocol drivers, emulators, safety; no rclpy, no dartpy.

Drivers for each protocol live in their own subpackage, described by a protocol plugin,
and are imported only when a hardware configuration names them
(:mod:`skel_ros.hardware.plugins`).

Typical use (what the hardware node does)::

    from skel_ros.hardware import HardwareManager, load_hardware_config
    config = load_hardware_config("config/hardware/arm_dynamixel.yaml")
    bound = config.bind(config.select_skeleton(load_skel("examples/arm.skel")))
    manager = HardwareManager(bound)
    manager.start()                      # control loop thread; connects the buses
    manager.enable(wait=1.0)             # torque on, holding the measured positions
    manager.command(CommandKind.POSITION, ["elbow"], [0.5])
"""

from skel_ros.hardware.base import (
    ActuatorBus,
    ActuatorCommand,
    ActuatorSpec,
    ActuatorState,
    BusSpec,
    ControlMode,
    ScanResult,
)
from skel_ros.hardware.config import (
    BoundConfig,
    HardwareConfig,
    JointMapping,
    ReconnectPolicy,
    SafeState,
    load_hardware_config,
    parse_hardware_config,
)
from skel_ros.hardware.diagnostics import ActuatorDiagnostics, BusDiagnostics, Level
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)
from skel_ros.hardware.manager import CommandResult, HardwareManager, HardwareStatus, Request
from skel_ros.hardware.plugins import (
    ProtocolPlugin,
    TransportKind,
    bus_class,
    protocol,
    protocol_names,
)
from skel_ros.hardware.safety import MotionState

__all__ = [
    "ActuatorBus",
    "ActuatorCommand",
    "ActuatorDiagnostics",
    "ActuatorSpec",
    "ActuatorState",
    "BoundConfig",
    "BusDiagnostics",
    "BusSpec",
    "CommandResult",
    "ConfigError",
    "ControlMode",
    "DeviceError",
    "HardwareConfig",
    "HardwareError",
    "HardwareManager",
    "HardwareStatus",
    "JointMapping",
    "Level",
    "MotionState",
    "ProtocolError",
    "ProtocolPlugin",
    "ReconnectPolicy",
    "Request",
    "SafeState",
    "ScanResult",
    "TransportError",
    "TransportKind",
    "TransportTimeoutError",
    "bus_class",
    "load_hardware_config",
    "parse_hardware_config",
    "protocol",
    "protocol_names",
]
