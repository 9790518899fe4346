"""Dynamixel Protocol 2.0 (X series): driver, codec, control table, emulator, scan.

* :class:`~skel_ros.hardware.dynamixel.bus.DynamixelBus` drives every servo on one line
  (one Sync Write + one (Fast) Sync Read per cycle; one read per Indirect Data address
  when XL330 and X430/X540 servos share the bus).
* :mod:`~skel_ros.hardware.dynamixel.protocol`: packets, CRC-16, stuffing, parser.
* :mod:`~skel_ros.hardware.dynamixel.control_table`: addresses, units, supported models.
* :func:`start_emulator`: emulated servos on a pseudo-terminal, in their own process.
* :func:`scan`: which ids answer on a port.
* :data:`PLUGIN`: the protocol ``dynamixel`` (:mod:`skel_ros.hardware.plugins`).

Reference: docs/dynamixel.md.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from skel_ros.hardware.base import ControlMode, ScanResult
from skel_ros.hardware.dynamixel.bus import (
    _ACTUATOR_OPTIONS,
    _BUS_OPTIONS,
    DynamixelBus,
    _return_delay_units,
)
from skel_ros.hardware.dynamixel.control_table import DEFAULT_MODEL, MODELS, model_by_name
from skel_ros.hardware.dynamixel.protocol import MAX_ID
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    ProtocolError,
    TransportTimeoutError,
)
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.hardware.base import ActuatorSpec
    from skel_ros.hardware.dynamixel.emulator import DynamixelEmulator

__all__ = ["DEFAULT_SCAN_TIMEOUT", "MODELS", "PLUGIN", "scan", "start_emulator"]

DEFAULT_SCAN_TIMEOUT = 0.01  # s per id: a servo answers a PING within its return delay
_EMULATOR_OPTIONS = frozenset({"initial_positions", "firmware", "return_delay_us", "wire_time",
                               "model"})


def scan(transport: Mapping[str, Any], ids: Sequence[int],
         timeout: float = DEFAULT_SCAN_TIMEOUT) -> list[ScanResult]:
    """PING each of ``ids`` on the port; the servos that answered.

    Args:
        transport: ``{"port": ..., "baudrate": ...}`` as in ``BusSpec.transport``.
        ids: the ids to ask (0..252).
        timeout: seconds to wait for each answer.

    Raises:
        TransportError: the port cannot be opened (or vanished during the scan).
    """
    from skel_ros.hardware.base import BusSpec
    from skel_ros.hardware.dynamixel.control_table import model_name

    spec = BusSpec("scan", "dynamixel", {**transport, "timeout": timeout})
    bus = DynamixelBus(spec, [])
    bus.transport.open()
    results = []
    try:
        for dxl_id in ids:
            try:
                number, firmware = bus.ping(dxl_id)
            except TransportTimeoutError:
                continue
            except (DeviceError, ProtocolError) as exc:
                results.append(ScanResult(dxl_id, details=f"answered with an error: {exc}"))
                continue
            results.append(ScanResult(dxl_id, number, model_name(number), f"v{firmware}"))
    finally:
        bus.transport.close()
    return results


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> DynamixelEmulator:
    """Start emulated servos for ``actuators`` in their own process, on a pty.

    Args:
        transport: only ``baudrate`` is used (the port is the new pty).
        actuators: one servo per actuator (id; model, default XM430-W350; the
            ``torque_constant`` option).
        options: ``initial_positions`` ({id: rad}), ``firmware`` (every servo's, 0..255;
            default 48; < 45: no Fast Sync Read; < 38: no Bus Watchdog),
            ``return_delay_us`` (factory value 500; even, 0..508), ``wire_time`` (sleep
            as long as the bytes take at ``baudrate``; default false), ``model`` (for
            actuators without one).

    Returns:
        The running emulator; ``.transport`` reaches it, ``.stop()`` ends it (also at
        interpreter exit).

    Raises:
        ConfigError: unknown options, models or ids.
        TransportError: the process did not start.
    """
    from skel_ros.hardware.dynamixel.emulator import EmulatorConfig, start

    unknown = set(options) - _EMULATOR_OPTIONS
    if unknown:
        raise ConfigError(f"Dynamixel emulator: unknown option(s) {sorted(unknown)}; known:"
                          f" {sorted(_EMULATOR_OPTIONS)}")
    default_model = str(options.get("model", DEFAULT_MODEL))
    initial = {int(k): float(v) for k, v in dict(options.get("initial_positions", {})).items()}
    servos = []
    for act in actuators:
        name = act.model or default_model
        if model_by_name(name) is None:
            raise ConfigError(f"Dynamixel emulator: id {act.id}: unknown model {name!r}")
        if not 0 <= act.id <= 252:  # noqa: PLR2004
            raise ConfigError(f"Dynamixel emulator: id {act.id} outside 0..252")
        position = initial.get(act.id, 0.0)
        if not math.isfinite(position):
            raise ConfigError(f"Dynamixel emulator: id {act.id}: initial position {position}")
        kt = act.options.get("torque_constant")
        servos.append((act.id, name, position, None if kt is None else float(kt)))
    baudrate = int(transport.get("baudrate", 1_000_000))
    delay = _return_delay_units(options.get("return_delay_us", 500), "Dynamixel emulator")
    firmware = options.get("firmware", 48)
    if isinstance(firmware, bool) or not isinstance(firmware, int) or not (
            0 <= firmware <= 255):  # noqa: PLR2004 - one byte
        raise ConfigError(f"Dynamixel emulator: firmware must be an integer in 0..255 (the"
                          f" Firmware Version byte), got {firmware!r}")
    config = EmulatorConfig(tuple(servos), baudrate, firmware, delay,
                            bool(options.get("wire_time", False)))
    return start(config)


PLUGIN = ProtocolPlugin(
    name="dynamixel",
    bus_class=DynamixelBus,
    transport=TransportKind.SERIAL,
    # Protocol 2.0: 253 is reserved, 254 the broadcast id; the driver checks the same MAX_ID.
    id_range=(0, MAX_ID),
    scan_ids=f"0-{MAX_ID}",
    scan_timeout=DEFAULT_SCAN_TIMEOUT,
    modes=(ControlMode.POSITION, ControlMode.VELOCITY, ControlMode.EFFORT),
    bus_options=_BUS_OPTIONS,
    actuator_options=_ACTUATOR_OPTIONS,
    scan=scan,
    start_emulator=start_emulator,
    # X series, Baud Rate (8) values 0..7 (ROBOTIS e-Manual); XL330/XC330/XM335 stop at 6, 4M.
    rates=(9_600, 57_600, 115_200, 1_000_000, 2_000_000, 3_000_000, 4_000_000, 4_500_000),
)
"""The protocol ``dynamixel``: Dynamixel Protocol 2.0 servos on a serial line."""
