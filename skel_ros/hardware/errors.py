"""The hardware layer's exceptions.

::

    HardwareError
    ├── ConfigError            hardware YAML wrong (carries file:line)
    ├── TransportError         a port or bus cannot be opened, or vanished
    │   └── TransportTimeoutError   no (complete) answer in time        (also a TimeoutError)
    ├── ProtocolError          bytes or frames that break the protocol (CRC, length, ...)
    └── DeviceError            an actuator answered, reporting an error or a fault

Everything a bus driver raises during a cycle is one of these; the hardware backend
catches ``HardwareError`` only, so a programming error still surfaces.
"""

from __future__ import annotations


class HardwareError(Exception):
    """Base of every error of the hardware layer."""


class ConfigError(HardwareError, ValueError):
    """The hardware configuration is invalid; the message names the file and line."""


class TransportError(HardwareError, OSError):
    """A port or bus cannot be opened, read or written (unplugged, wrong name, ...)."""


class TransportTimeoutError(TransportError, TimeoutError):
    """No complete answer arrived in time."""


class ProtocolError(HardwareError):
    """Received bytes or frames that do not follow the protocol (CRC, length, id ...)."""


class DeviceError(HardwareError):
    """An actuator reported an error (Dynamixel error byte, CiA 402 fault, EMCY ...).

    Attributes:
        actuator_id: the id on its bus.
        code: the protocol's error code (0 if none).
    """

    def __init__(self, message: str, actuator_id: int, code: int = 0) -> None:
        super().__init__(message)
        self.actuator_id = actuator_id
        self.code = code
