"""Opening a CAN bus through python-can, from the ``transport:`` mapping of a bus.

Any python-can interface works (``socketcan``, ``slcan``, ``pcan``, ``kvaser``, ``virtual``
...): the mapping holds ``interface``, ``channel``, optionally ``bitrate`` and any other
keyword argument of that interface::

    transport: {interface: socketcan, channel: can0, bitrate: 1000000}
    transport: {interface: slcan, channel: /dev/ttyACM0, bitrate: 1000000}
    transport: {interface: virtual, channel: test, receive_own_messages: false}

``interface`` must be given: python-can would otherwise take it from the environment or
a configuration file, which this project never does silently. ``udp_multicast`` is
refused: it sends CAN frames as IP multicast datagrams to the local network, and this
project never sends traffic off the machine (tests use ``virtual``).

Every failure is a :class:`~skel_ros.hardware.errors.TransportError` naming the interface
and channel.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from skel_ros.hardware.errors import TransportError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    import can

__all__ = ["FORBIDDEN_INTERFACES", "TIMING_BITRATE", "bitrate_text", "describe", "frame_bits",
           "open_bus", "recv", "send", "wire_time"]

#: The bitrate timeouts are computed with when the transport does not name one (python-can
#: then uses the interface's own setting, e.g. ``ip link`` for SocketCAN): 125 kbit/s, the
#: slowest rate CANopen devices commonly run, so the timeouts err on the long side.
TIMING_BITRATE = 125_000

#: python-can interfaces this project refuses to open, with the reason.
FORBIDDEN_INTERFACES: Mapping[str, str] = {
    "udp_multicast": "it sends every frame as an IP multicast datagram to the network; "
                     "this project never sends traffic off the machine "
                     "(use interface: virtual for tests)",
}

# python-can's old name for ``interface``; accepted so existing YAML keeps working.
_ALIASES = {"bustype": "interface", "bus_type": "interface"}


def describe(transport: Mapping[str, Any]) -> str:
    """``"interface 'virtual' channel 'x'"`` for messages."""
    iface = transport.get("interface", transport.get("bustype", "?"))
    return f"CAN interface {iface!r} channel {transport.get('channel', '?')!r}"


def _normalise(transport: Mapping[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    for key, value in transport.items():
        name = _ALIASES.get(str(key), str(key))
        if name in kwargs:
            raise TransportError(f"{describe(transport)}: {key!r} given twice (as {name!r})")
        kwargs[name] = value
    interface = kwargs.get("interface")
    if not isinstance(interface, str) or not interface:
        raise TransportError(
            f"{describe(transport)}: the transport needs 'interface' (socketcan, slcan, pcan, "
            "virtual ...); it is never taken from the environment")
    normalised = interface.strip().lower().replace("-", "_")
    if normalised in FORBIDDEN_INTERFACES:
        raise TransportError(
            f"{describe(transport)}: refused: {FORBIDDEN_INTERFACES[normalised]}")
    if "channel" not in kwargs or kwargs["channel"] in (None, ""):
        raise TransportError(f"{describe(transport)}: the transport needs 'channel'")
    bitrate = kwargs.get("bitrate")
    if bitrate is not None and (isinstance(bitrate, bool) or not isinstance(bitrate, int)
                                or bitrate <= 0):
        raise TransportError(f"{describe(transport)}: bitrate must be a positive integer, "
                             f"got {bitrate!r}")
    kwargs["interface"] = normalised
    return kwargs


def open_bus(transport: Mapping[str, Any]) -> can.BusABC:
    """Open the python-can bus described by ``transport``.

    Args:
        transport: ``interface``, ``channel``, optional ``bitrate`` and any other
            python-can bus argument (``receive_own_messages``, ``fd``, ...).

    Returns:
        The open bus; the caller shuts it down.

    Raises:
        TransportError: missing or forbidden interface, unknown interface, missing
            vendor driver, device absent ... (the message names interface and channel).
    """
    kwargs = _normalise(transport)
    try:
        import can
    except ImportError as exc:  # pragma: no cover - python-can is a runtime dependency
        raise TransportError(f"{describe(transport)}: python-can is not installed: {exc}"
                             ) from None
    if kwargs["interface"] not in can.VALID_INTERFACES:
        known = ", ".join(sorted(i for i in can.VALID_INTERFACES
                                 if i not in FORBIDDEN_INTERFACES))
        raise TransportError(f"{describe(transport)}: unknown python-can interface; "
                             f"known: {known}")
    try:
        return can.Bus(**kwargs)
    except (can.CanError, OSError, ValueError, TypeError, ImportError, AttributeError,
            NotImplementedError) as exc:
        raise TransportError(f"{describe(transport)}: cannot open: "
                             f"{type(exc).__name__}: {exc}") from None


def send(bus: can.BusABC, arbitration_id: int, data: bytes, *,
         is_extended_id: bool = False, what: str = "") -> None:
    """Send one frame; python-can / OS errors become :class:`TransportError`."""
    import can

    msg = can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=is_extended_id)
    try:
        bus.send(msg)
    except (can.CanError, OSError, ValueError) as exc:
        raise TransportError(f"CAN channel {bus.channel_info!r}: cannot send "
                             f"{what or f'frame 0x{arbitration_id:03X}'}: {exc}") from None


def recv(bus: can.BusABC, deadline: float, clock: Callable[[], float] = time.monotonic,
         ) -> can.Message | None:
    """Receive one frame before ``deadline`` (on ``clock``); None when it passed.

    Blocks in the bus's own receive (no polling). Errors become :class:`TransportError`.
    """
    import can

    remaining = deadline - clock()
    if remaining < 0:
        remaining = 0.0
    try:
        return bus.recv(timeout=remaining)
    except (can.CanError, OSError, ValueError) as exc:
        raise TransportError(f"CAN channel {bus.channel_info!r}: cannot receive: {exc}"
                             ) from None


MAX_FRAME_AGE = 1.0
"""s: a frame's age on the wall clock is believed up to this (a wall clock that jumped,
NTP, must not move a time far back); an older frame counts as this old."""


def arrived_at(clock: Callable[[], float], timestamp: float | None) -> float | None:
    """When a frame python-can stamped ``timestamp`` arrived, on ``clock``.

    python-can stamps a frame with the wall clock (``time.time()``) when it is sent on a
    ``virtual`` channel or received from SocketCAN; a thread that takes it later (the
    scheduler, another thread holding the interpreter) sees its age on that clock. None
    without a stamp, or for a ``clock`` other than the host's monotonic one (a manual
    clock has no known relation to the wall clock): the caller takes its clock's now.
    """
    if not timestamp or clock is not time.monotonic:
        return None
    return clock() - min(max(time.time() - timestamp, 0.0), MAX_FRAME_AGE)


def frame_bits(data_bytes: int) -> int:
    """Worst-case bits of one standard (11-bit id) CAN data frame with ``data_bytes`` bytes.

    47 bits of framing (start, id, control, CRC, ACK, end of frame, interframe space) plus
    the data, plus the most stuff bits the 34 + 8n stuffed bits can need (one per four after
    the first): ``8n + 47 + floor((34 + 8n - 1) / 4)``, 135 bits for 8 bytes (Davis et al.,
    "Controller Area Network (CAN) schedulability analysis", 2007).
    """
    n = max(0, min(8, int(data_bytes)))
    return 8 * n + 47 + (34 + 8 * n - 1) // 4


def wire_time(transport: Mapping[str, Any], frames: Iterable[int]) -> float:
    """Seconds the frames (their data byte counts) take on the bus, back to back.

    At the transport's ``bitrate``, or :data:`TIMING_BITRATE` when it names none.
    """
    rate = transport.get("bitrate")
    if isinstance(rate, bool) or not isinstance(rate, int) or rate <= 0:
        rate = TIMING_BITRATE
    return sum(frame_bits(n) for n in frames) / rate


def bitrate_text(transport: Mapping[str, Any]) -> str:
    """``"1000000 bit/s"`` or what is known when the transport does not set it (messages)."""
    rate = transport.get("bitrate")
    if isinstance(rate, int) and not isinstance(rate, bool) and rate > 0:
        return f"{rate} bit/s"
    return "the interface's own bitrate (not set in the transport)"
