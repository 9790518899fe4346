"""Feetech STS/SMS ("protocol 0") and SCS ("protocol 1") serial bus servos.

* :class:`~skel_ros.hardware.feetech.bus.FeetechBus` drives every servo on one line (one
  Sync Write + one Sync Read per cycle on STS/SMS; one READ per servo on SCS).
* :mod:`~skel_ros.hardware.feetech.protocol`: packets, checksum, parser.
* :mod:`~skel_ros.hardware.feetech.control_table`: memory tables, units, models.
* :func:`scan`: which ids answer on a port.
* :data:`PLUGIN`: the protocol ``feetech`` (:mod:`skel_ros.hardware.plugins`).

The emulated servos are :mod:`skel_ros.emulation.feetech`. Reference: docs/feetech.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skel_ros.hardware.base import ControlMode, ScanResult
from skel_ros.hardware.errors import ProtocolError, TransportTimeoutError
from skel_ros.hardware.feetech.bus import _ACTUATOR_OPTIONS, _BUS_OPTIONS, FeetechBus
from skel_ros.hardware.feetech.control_table import BAUD_RATES, DEFAULT_MODEL, MODELS
from skel_ros.hardware.feetech.protocol import MAX_ID
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["DEFAULT_SCAN_TIMEOUT", "MODELS", "PLUGIN", "FeetechBus", "scan"]

DEFAULT_SCAN_TIMEOUT = 0.01  # s per id: a servo answers a PING within its return delay


def scan(transport: Mapping[str, Any], ids: Sequence[int],
         timeout: float = DEFAULT_SCAN_TIMEOUT) -> list[ScanResult]:
    """PING each of ``ids``, one at a time (SCS has no broadcast PING); who answered.

    A servo that answers is then asked its Model_Number and firmware (one READ).

    Raises:
        TransportError: the port cannot be opened (or vanished during the scan).
    """
    from skel_ros.hardware.base import BusSpec
    from skel_ros.hardware.feetech import control_table as ct

    # Wait for a servo still at its factory return delay (500 µs) too.
    spec = BusSpec("scan", "feetech", {**transport, "timeout": max(timeout, 0.002)})
    bus = FeetechBus(spec, [])
    bus.transport.open()
    results = []
    try:
        for servo_id in ids:
            try:
                bus.ping(servo_id)
            except TransportTimeoutError:
                continue
            try:
                table = bus.read_register(servo_id, 0, 5)
            except (TransportTimeoutError, ProtocolError) as exc:
                results.append(ScanResult(servo_id, details=f"answered PING, not READ: {exc}"))
                continue
            little, big = int.from_bytes(table[3:5], "little"), int.from_bytes(table[3:5], "big")
            number = little if ct.model_name(little) else big if ct.model_name(big) else little
            results.append(ScanResult(servo_id, number, ct.model_name(number),
                                      f"v{table[0]}.{table[1]}"))
    finally:
        bus.transport.close()
    return results


PLUGIN = ProtocolPlugin(
    name="feetech",
    bus_class=FeetechBus,
    transport=TransportKind.SERIAL,
    id_range=(0, MAX_ID),
    scan_ids=f"0-{MAX_ID}",
    scan_timeout=DEFAULT_SCAN_TIMEOUT,
    modes=(ControlMode.POSITION, ControlMode.VELOCITY),
    bus_options=_BUS_OPTIONS,
    actuator_options=_ACTUATOR_OPTIONS,
    scan=scan,
    rates=tuple(sorted(BAUD_RATES)),
    default_model=DEFAULT_MODEL,
    device_watchdog=False,
)
"""The protocol ``feetech``: Feetech STS/SMS and SCS servos on a serial line."""
