"""CANopen CiA 402 servo drives through the ``canopen`` library: driver, scan.

:class:`~skel_ros.hardware.canopen402.bus.Cia402Bus` is the driver (protocol
``canopen``); ``drive.eds`` is the project's object dictionary of the emulated drive
(:mod:`skel_ros.emulation.canopen402`) and the default one; :func:`scan` is what
``skel-ros scan`` calls, through :data:`PLUGIN` (:mod:`skel_ros.hardware.plugins`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skel_ros.hardware import can_transport
from skel_ros.hardware.base import ControlMode, ScanResult
from skel_ros.hardware.canopen402.bus import (
    _ACT_OPTIONS,
    _BUS_OPTIONS,
    DEFAULT_EDS,
    MODE_CODES,
    Cia402Bus,
    Units,
    state_of,
)
from skel_ros.hardware.errors import ConfigError, TransportError
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["DEFAULT_EDS", "MODE_CODES", "PLUGIN", "Units", "scan", "state_of"]


def scan(transport: Mapping[str, Any], ids: Sequence[int], timeout: float,
         ) -> list[ScanResult]:
    """List the CANopen nodes among ``ids`` that answer an SDO read of 0x1000.

    Each node is asked, by SDO upload (reads only, nothing is written): 0x1000 device
    type (profile in the low 16 bits, 402 for drives), 0x1008 device name, 0x100A
    software version (the last two are optional). Boot-up and heartbeat messages seen
    meanwhile are reported in ``details``.

    Args:
        transport: python-can mapping.
        ids: node ids (1..127).
        timeout: seconds to wait for each SDO answer.

    Raises:
        TransportError: the bus cannot be opened.
        ConfigError: an id out of range.
    """
    import canopen

    bad = [i for i in ids if not 1 <= i <= 127]  # noqa: PLR2004
    if bad:
        raise ConfigError(f"CANopen scan: node ids must be in 1..127, got {bad}")
    bus = can_transport.open_bus(transport)
    network = canopen.Network(bus)
    network.NOTIFIER_CYCLE = 0.05
    heartbeats: dict[int, int] = {}

    def on_heartbeat(can_id: int, data: bytearray, _stamp: float) -> None:
        if data:
            heartbeats[can_id - 0x700] = data[0] & 0x7F

    for i in ids:
        network.subscribe(0x700 + i, on_heartbeat)
    try:
        network.connect()
    except Exception as exc:  # noqa: BLE001 - python-can notifier start
        bus.shutdown()
        raise TransportError(f"{can_transport.describe(transport)}: cannot start: {exc}"
                             ) from None
    found = []
    try:
        for i in ids:
            result = _identify(network, i, timeout)
            if result is not None:
                found.append(result)
    finally:
        network.disconnect()
    out = []
    for r in found:
        state = heartbeats.get(r.id)
        extra = f"; heartbeat/boot-up seen (NMT state {state})" if state is not None else ""
        out.append(ScanResult(r.id, r.model_number, r.model, r.firmware, r.details + extra))
    return out


def _identify(network: Any, node_id: int, timeout: float) -> ScanResult | None:  # noqa: ANN401
    """SDO reads of 0x1000, 0x1008, 0x100A; None when 0x1000 gets no answer."""
    import canopen
    from canopen.sdo.exceptions import SdoAbortedError, SdoCommunicationError

    empty: Any = canopen.ObjectDictionary  # untyped library class
    node: Any = canopen.RemoteNode(node_id, empty())
    network.add_node(node)
    node.sdo.RESPONSE_TIMEOUT = timeout
    node.sdo.MAX_RETRIES = 1  # one try (0 would retry forever)
    try:
        device_type = int.from_bytes(node.sdo.upload(0x1000, 0)[:4], "little")
    except (SdoCommunicationError, SdoAbortedError):
        return None
    texts = []
    for index in (0x1008, 0x100A):
        try:
            texts.append(node.sdo.upload(index, 0).decode("latin-1").strip("\0 "))
        except (SdoCommunicationError, SdoAbortedError):  # noqa: PERF203 - optional objects
            texts.append("")
    profile = device_type & 0xFFFF
    return ScanResult(node_id, model_number=device_type,
                      model=texts[0] or f"CiA {profile} device", firmware=texts[1],
                      details=f"device type 0x{device_type:08X} (profile {profile})")


PLUGIN = ProtocolPlugin(
    name="canopen",
    bus_class=Cia402Bus,
    transport=TransportKind.CAN,
    id_range=(1, 127),  # CANopen node ids; 0 addresses every node in NMT
    scan_ids="1-127",
    scan_timeout=0.05,
    modes=(ControlMode.POSITION, ControlMode.VELOCITY, ControlMode.EFFORT),
    bus_options=_BUS_OPTIONS,
    actuator_options=_ACT_OPTIONS,
    scan=scan,
)
"""The protocol ``canopen``: CiA 402 drives on a CAN bus."""
