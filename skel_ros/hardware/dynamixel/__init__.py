"""Dynamixel Protocol 2.0 (X series): driver, codec, control table, scan.

* :class:`~skel_ros.hardware.dynamixel.bus.DynamixelBus` drives every servo on one line
  (one Sync Write + one (Fast) Sync Read per cycle; one read per Indirect Data address
  when XL330 and X430/X540 servos share the bus).
* :mod:`~skel_ros.hardware.dynamixel.protocol`: packets, CRC-16, stuffing, parser.
* :mod:`~skel_ros.hardware.dynamixel.control_table`: addresses, units, supported models.
* :func:`scan`: which ids answer on a port.
* :data:`PLUGIN`: the protocol ``dynamixel`` (:mod:`skel_ros.hardware.plugins`).

The emulated servos are :mod:`skel_ros.emulation.dynamixel`. Reference: docs/dynamixel.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skel_ros.hardware.base import ControlMode, ScanResult
from skel_ros.hardware.dynamixel.bus import _ACTUATOR_OPTIONS, _BUS_OPTIONS, DynamixelBus
from skel_ros.hardware.dynamixel.control_table import DEFAULT_MODEL, MODELS
from skel_ros.hardware.dynamixel.protocol import MAX_ID
from skel_ros.hardware.errors import DeviceError, ProtocolError, TransportTimeoutError
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["DEFAULT_SCAN_TIMEOUT", "MODELS", "PLUGIN", "scan"]

DEFAULT_SCAN_TIMEOUT = 0.01  # s per id: a servo answers a PING within its return delay


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
    # X series, Baud Rate (8) values 0..7 (ROBOTIS e-Manual); XL330/XC330/XM335 stop at 6, 4M.
    rates=(9_600, 57_600, 115_200, 1_000_000, 2_000_000, 3_000_000, 4_000_000, 4_500_000),
    default_model=DEFAULT_MODEL,
)
"""The protocol ``dynamixel``: Dynamixel Protocol 2.0 servos on a serial line."""
