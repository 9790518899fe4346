"""MIT-mode CAN motors (Mini Cheetah, T-motor/CubeMars AK, Damiao): codec, models, driver.

:class:`~skel_ros.hardware.mit.bus.MitBus` is the driver (protocol ``mit``); the codec
packs the 8-byte commands and decodes the replies; :data:`~.models.MODELS` holds the
ranges of common motors. :func:`scan` is what ``skel-ros scan`` calls, through
:data:`PLUGIN` (:mod:`skel_ros.hardware.plugins`). The emulated motors are
:mod:`skel_ros.emulation.mit`.
"""

from __future__ import annotations

import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from skel_ros.hardware import can_transport
from skel_ros.hardware.base import ControlMode, ScanResult
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.mit.bus import _BUS_OPTIONS, MitBus
from skel_ros.hardware.mit.codec import (
    EXIT_MODE,
    CommandError,
    MitCodec,
    MitRanges,
    MitReply,
    Variant,
)
from skel_ros.hardware.mit.models import MODELS, RANGE_OPTIONS, MitModel, lookup, resolve
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["MODELS", "PLUGIN", "CommandError", "MitCodec", "MitModel", "MitRanges", "MitReply",
           "Variant", "lookup", "resolve", "scan"]

_REGISTER_ID = 0x7FF
_SW_VER = 14


def scan(transport: Mapping[str, Any], ids: Sequence[int], timeout: float,
         ) -> list[ScanResult]:
    """List the MIT-mode motors among ``ids`` that answer.

    What is sent, and why it is safe:

    1. a Damiao *register read* (id 0x7FF, ``id_l id_h 0x33 14``: software version):
       it reads, changes nothing, and other firmware ignores id 0x7FF;
    2. to ids that did not answer it: *exit motor mode* (``ff``x7 ``fd``), which every
       MIT firmware answers with a state reply. It can only switch torque **off**; never
       *enter motor mode* (torque on, the motor may jump to a stale command), *set zero*
       (rewrites the calibration) or a command. Do not scan a bus while another
       controller is driving the motors: they would go limp.

    Args:
        transport: python-can mapping (``interface``, ``channel`` ...).
        ids: CAN ids to ask (1..0x7FF).
        timeout: seconds to wait for the answers of each of the two rounds.

    Raises:
        TransportError: the bus cannot be opened.
        ConfigError: an id out of range.
    """
    bad = [i for i in ids if not 1 <= i <= _REGISTER_ID - 1]
    if bad:
        raise ConfigError(f"MIT scan: CAN ids must be in 1..0x7FE, got {bad}")
    bus = can_transport.open_bus(transport)
    found: dict[int, ScanResult] = {}
    try:
        wanted = set(ids)
        for i in ids:
            can_transport.send(bus, _REGISTER_ID,
                               bytes((i & 0xFF, i >> 8, 0x33, _SW_VER, 0, 0, 0, 0)),
                               what=f"Damiao register read of id {i}")
        for msg in _replies(bus, timeout, lambda: wanted <= set(found)):
            d = bytes(msg.data)
            if len(d) == 8 and d[2] == 0x33 and d[3] == _SW_VER:  # noqa: PLR2004
                motor_id = d[0] | (d[1] << 8)
                if motor_id in wanted and motor_id not in found:
                    version = int.from_bytes(d[4:8], "little")
                    found[motor_id] = ScanResult(
                        motor_id, model="damiao", firmware=str(version),
                        details=f"Damiao (register reply on 0x{msg.arbitration_id:03X})")
        rest = [i for i in ids if i not in found]
        for i in rest:
            can_transport.send(bus, i, EXIT_MODE, what=f"exit motor mode to id {i}")
        pending = set(rest)
        for msg in _replies(bus, timeout, lambda: not pending):
            d = bytes(msg.data)
            if msg.arbitration_id in wanted or len(d) < 6 or d[0] not in pending:  # noqa: PLR2004
                continue
            pending.discard(d[0])
            kind = "cheetah" if len(d) == 6 else "cubemars"  # noqa: PLR2004
            found[d[0]] = ScanResult(
                d[0], model=kind,
                details=f"MIT reply of {len(d)} bytes on 0x{msg.arbitration_id:03X} "
                        f"({'id, p, v, t' if len(d) == 6 else 'id, p, v, t, temp, error'}"  # noqa: PLR2004
                        "); torque now off")
    finally:
        bus.shutdown()
    return [found[i] for i in sorted(found)]


def _replies(bus: Any, timeout: float, done: Any) -> Any:  # noqa: ANN401
    deadline = time.monotonic() + timeout
    while not done():
        msg = can_transport.recv(bus, deadline)
        if msg is None:
            return
        if not (msg.is_error_frame or msg.is_remote_frame):
            yield msg


PLUGIN = ProtocolPlugin(
    name="mit",
    bus_class=MitBus,
    transport=TransportKind.CAN,
    id_range=(1, _REGISTER_ID - 1),  # standard 11-bit ids; 0x7FF is the Damiao register id
    scan_ids="1-32",
    scan_timeout=0.05,
    modes=(ControlMode.IMPEDANCE, ControlMode.POSITION, ControlMode.VELOCITY, ControlMode.EFFORT),
    bus_options=frozenset(_BUS_OPTIONS),
    # The ranges and variant (resolve), the gains of position, velocity and impedance mode.
    actuator_options=RANGE_OPTIONS | {"kp", "kd"},
    scan=scan,
    default_model="AK80-9",
    # Moderate PD gains to start tuning from (docs/can.md): impedance mode needs them.
    default_options=MappingProxyType({"kp": 30.0, "kd": 0.8}),
)
"""The protocol ``mit``: MIT-mode motors (Mini Cheetah, CubeMars AK, Damiao) on a CAN bus."""
