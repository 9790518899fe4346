"""Real actuators: transports, protocol drivers, safety; no rclpy, no dartpy, no emulator.

Drivers for each protocol live in their own subpackage, described by a protocol plugin,
and are imported only when a hardware configuration names them
(:mod:`skel_ros.hardware.plugins`).

Typical use (what the hardware node does)::

    from skel_ros.core import Runner
    from skel_ros.hardware import HardwareBackend, load_hardware_config
    config = load_hardware_config("config/hardware/arm_dynamixel.yaml")
    bound = config.bind(config.select_skeleton(load_skel("examples/arm.skel")))
    backend = HardwareBackend(bound)     # passive: buses, safety, reconnects
    runner = Runner.over(backend, command_timeout=backend.command_timeout)
    runner.configure()                   # the loop runs; it connects the buses, torque off
    runner.activate()                    # torque on, holding the measured positions
    runner.core.command(CommandKind.POSITION, ["elbow"], [0.5])
    runner.cleanup()                     # torque off, buses closed
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skel_ros.hardware.backend import HardwareBackend, HardwareStatus, Request, hardware_runner
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
    from skel_ros.hardware.plugins import (
        ProtocolPlugin,
        TransportKind,
        bus_class,
        protocol,
        protocol_names,
    )
    from skel_ros.hardware.safety import MotionState

# Each name is imported from its module when first used (PEP 562), so a process that
# needs one part (an emulator process, the scan command) does not import the others (the
# model readers, the backend) at start.
_EXPORTS: dict[str, str] = {
    "ActuatorBus": "skel_ros.hardware.base",
    "ActuatorCommand": "skel_ros.hardware.base",
    "ActuatorDiagnostics": "skel_ros.hardware.diagnostics",
    "ActuatorSpec": "skel_ros.hardware.base",
    "ActuatorState": "skel_ros.hardware.base",
    "BoundConfig": "skel_ros.hardware.config",
    "BusDiagnostics": "skel_ros.hardware.diagnostics",
    "BusSpec": "skel_ros.hardware.base",
    "ConfigError": "skel_ros.hardware.errors",
    "ControlMode": "skel_ros.hardware.base",
    "DeviceError": "skel_ros.hardware.errors",
    "HardwareConfig": "skel_ros.hardware.config",
    "HardwareError": "skel_ros.hardware.errors",
    "HardwareBackend": "skel_ros.hardware.backend",
    "HardwareStatus": "skel_ros.hardware.backend",
    "JointMapping": "skel_ros.hardware.config",
    "Level": "skel_ros.hardware.diagnostics",
    "MotionState": "skel_ros.hardware.safety",
    "ProtocolError": "skel_ros.hardware.errors",
    "ProtocolPlugin": "skel_ros.hardware.plugins",
    "ReconnectPolicy": "skel_ros.hardware.config",
    "Request": "skel_ros.hardware.backend",
    "SafeState": "skel_ros.hardware.config",
    "ScanResult": "skel_ros.hardware.base",
    "TransportError": "skel_ros.hardware.errors",
    "TransportKind": "skel_ros.hardware.plugins",
    "TransportTimeoutError": "skel_ros.hardware.errors",
    "bus_class": "skel_ros.hardware.plugins",
    "hardware_runner": "skel_ros.hardware.backend",
    "load_hardware_config": "skel_ros.hardware.config",
    "parse_hardware_config": "skel_ros.hardware.config",
    "protocol": "skel_ros.hardware.plugins",
    "protocol_names": "skel_ros.hardware.plugins",
}


def __getattr__(name: str) -> Any:  # noqa: ANN401 - any of the exported objects
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "ActuatorBus",
    "ActuatorCommand",
    "ActuatorDiagnostics",
    "ActuatorSpec",
    "ActuatorState",
    "BoundConfig",
    "BusDiagnostics",
    "BusSpec",
    "ConfigError",
    "ControlMode",
    "DeviceError",
    "HardwareBackend",
    "HardwareConfig",
    "HardwareError",
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
    "hardware_runner",
    "load_hardware_config",
    "parse_hardware_config",
    "protocol",
    "protocol_names",
]
