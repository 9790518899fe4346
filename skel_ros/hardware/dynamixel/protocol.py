"""Dynamixel Protocol 2.0: packets, CRC-16, byte stuffing, instruction builders, parser.

A packet is ``FF FF FD 00 | ID | LEN_L LEN_H | INST | PARAMS... | CRC_L CRC_H`` where
``LEN`` counts INST + PARAMS + CRC after stuffing, and the CRC-16 (polynomial 0x8005,
initial value 0, not reflected: CRC-16/BUYPASS) covers everything before it. Inside
INST + PARAMS every ``FF FF FD`` is sent as ``FF FF FD FD`` (byte stuffing), so the
header never appears inside a packet. Status packets have INST = 0x55 and an error byte
first in PARAMS.

Fast Sync Read (0x8A) answers with one status packet from ID 0xFE holding, per device,
``ERR ID DATA CRC_L CRC_H`` (the last device's CRC is the packet's CRC); like the
ROBOTIS SDK, its body is neither stuffed nor unstuffed.

Speed: the CRC runs on 16-bit words through a 65,536-entry table (half the Python loop
iterations of the byte table), stuffing uses ``bytes.replace``, and the fixed packets of a
control cycle are built once by the driver.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from skel_ros.hardware.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

HEADER: Final = b"\xff\xff\xfd\x00"
BROADCAST_ID: Final = 0xFE
MAX_ID: Final = 252
HEADER_SIZE: Final = 7  # header (4) + id + length (2)
STATUS_OVERHEAD: Final = 11  # header, id, length, 0x55, error, CRC
MAX_LENGTH: Final = 4096  # bigger LEN fields are garbage, not packets
MIN_LENGTH: Final = 3  # INST + CRC

_STUFF_FROM: Final = b"\xff\xff\xfd"
_STUFF_TO: Final = b"\xff\xff\xfd\xfd"


class Instruction(enum.IntEnum):
    """Instruction codes."""

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    FACTORY_RESET = 0x06
    REBOOT = 0x08
    CLEAR = 0x10
    STATUS = 0x55
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83
    FAST_SYNC_READ = 0x8A
    BULK_READ = 0x92
    BULK_WRITE = 0x93
    FAST_BULK_READ = 0x9A


class StatusError(enum.IntEnum):
    """The low 7 bits of a status packet's error byte."""

    RESULT_FAIL = 0x01
    INSTRUCTION = 0x02
    CRC = 0x03
    DATA_RANGE = 0x04
    DATA_LENGTH = 0x05
    DATA_LIMIT = 0x06
    ACCESS = 0x07


ALERT: Final = 0x80  # error-byte flag: read Hardware Error Status

STATUS_ERROR_TEXT: Final = {
    StatusError.RESULT_FAIL: "result fail",
    StatusError.INSTRUCTION: "instruction error",
    StatusError.CRC: "CRC error",
    StatusError.DATA_RANGE: "data range error",
    StatusError.DATA_LENGTH: "data length error",
    StatusError.DATA_LIMIT: "data limit error",
    StatusError.ACCESS: "access error",
}


def describe_status_error(error: int) -> str:
    """The readable meaning of a status packet's error byte."""
    code = error & 0x7F
    try:
        text = STATUS_ERROR_TEXT[StatusError(code)] if code else ""
    except ValueError:
        text = f"unknown error 0x{code:02X}"
    if error & ALERT:
        text = f"{text}; hardware alert" if text else "hardware alert"
    return text


# ---------------------------------------------------------------- CRC-16


def _byte_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
        table.append(crc & 0xFFFF)
    return table


_T8: Final = _byte_table()


def _word_table() -> list[int]:
    # T16[w] = CRC of the two bytes of w from state 0; for a 16-bit unreflected CRC,
    # feeding word w into state r gives T16[r ^ w].
    import numpy as np

    t8 = np.array(_T8, dtype=np.uint32)
    words = np.arange(65536, dtype=np.uint32)
    first = t8[words >> 8]
    second = ((first << 8) & 0xFFFF) ^ t8[(first >> 8) ^ (words & 0xFF)]
    return [int(x) for x in second.tolist()]


_T16: Final = _word_table()


def crc16(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """CRC-16 of Protocol 2.0 over ``data``, continuing from ``crc``."""
    n = len(data)
    start = n & 1
    if start:
        crc = ((crc << 8) ^ _T8[(crc >> 8) ^ data[0]]) & 0xFFFF
    for word in struct.unpack_from(f">{n >> 1}H", data, start):
        crc = _T16[crc ^ word]
    return crc


def crc16_each(data: bytes | bytearray | memoryview, size: int, count: int) -> list[int]:
    """The CRC-16 of each of ``count`` packets of ``size`` bytes laid end to end in ``data``.

    Each CRC covers its packet's bytes but the last two (where the packet's own CRC is),
    so the result compares with the CRC fields. Equal to :func:`crc16` per packet; one
    ``struct`` unpack reads every packet's words (a plain Sync Read's twelve status
    packets, checked in one call instead of twelve).
    """
    body = size - 2
    odd = body & 1  # an odd count: the first byte alone, as crc16 does
    one = ("B" if odd else "") + f"{body >> 1}H2x"
    values = struct.unpack_from(">" + one * count, data)
    per = odd + (body >> 1)  # values per packet
    crcs = []
    for k in range(0, len(values), per):
        crc = _T8[values[k]] if odd else 0  # from state 0: T8[byte]
        for word in values[k + odd:k + per]:
            crc = _T16[crc ^ word]
        crcs.append(crc)
    return crcs


def crc16_bytewise(data: bytes | bytearray | memoryview, crc: int = 0) -> int:
    """The same CRC, one byte at a time (the e-Manual's algorithm; for tests)."""
    for byte in data:
        crc = ((crc << 8) ^ _T8[(crc >> 8) ^ byte]) & 0xFFFF
    return crc


# ---------------------------------------------------------------- stuffing


def stuff(body: bytes) -> bytes:
    """Byte-stuff INST + PARAMS: every ``FF FF FD`` becomes ``FF FF FD FD``."""
    return body.replace(_STUFF_FROM, _STUFF_TO) if _STUFF_FROM in body else body


def unstuff(body: bytes) -> bytes:
    """Undo :func:`stuff`."""
    return body.replace(_STUFF_TO, _STUFF_FROM) if _STUFF_TO in body else body


# ---------------------------------------------------------------- packets


def build_packet(dxl_id: int, instruction: int, params: bytes = b"", *,
                 stuffing: bool = True) -> bytes:
    """A complete packet (header, stuffing, length, CRC).

    Args:
        dxl_id: 0..252 or :data:`BROADCAST_ID`.
        instruction: an :class:`Instruction` (or 0x55 for status packets).
        params: the parameters, unstuffed.
        stuffing: False for Fast Sync/Bulk Read status packets.
    """
    body = bytes((instruction,)) + params
    if stuffing:
        body = stuff(body)
    length = len(body) + 2
    head = HEADER + bytes((dxl_id, length & 0xFF, length >> 8))
    packet = head + body
    crc = crc16(packet)
    return packet + bytes((crc & 0xFF, crc >> 8))


def build_status(dxl_id: int, error: int, data: bytes = b"") -> bytes:
    """A status packet."""
    return build_packet(dxl_id, Instruction.STATUS, bytes((error,)) + data)


def ping(dxl_id: int) -> bytes:
    """PING."""
    return build_packet(dxl_id, Instruction.PING)


def read(dxl_id: int, address: int, size: int) -> bytes:
    """READ ``size`` bytes from ``address``."""
    return build_packet(dxl_id, Instruction.READ, struct.pack("<HH", address, size))


def write(dxl_id: int, address: int, data: bytes) -> bytes:
    """WRITE ``data`` at ``address``."""
    return build_packet(dxl_id, Instruction.WRITE, struct.pack("<H", address) + data)


def reg_write(dxl_id: int, address: int, data: bytes) -> bytes:
    """REG WRITE (applied at the next ACTION)."""
    return build_packet(dxl_id, Instruction.REG_WRITE, struct.pack("<H", address) + data)


def action(dxl_id: int = BROADCAST_ID) -> bytes:
    """ACTION."""
    return build_packet(dxl_id, Instruction.ACTION)


def reboot(dxl_id: int) -> bytes:
    """REBOOT."""
    return build_packet(dxl_id, Instruction.REBOOT)


def sync_read(address: int, size: int, ids: Sequence[int], *, fast: bool = False) -> bytes:
    """SYNC READ (or FAST SYNC READ) of ``size`` bytes at ``address`` from ``ids``."""
    instruction = Instruction.FAST_SYNC_READ if fast else Instruction.SYNC_READ
    return build_packet(BROADCAST_ID, instruction,
                        struct.pack("<HH", address, size) + bytes(ids))


def sync_write(address: int, size: int, data: Mapping[int, bytes]) -> bytes:
    """SYNC WRITE: ``data[id]`` (``size`` bytes each) at ``address`` of every id."""
    parts = [struct.pack("<HH", address, size)]
    for dxl_id, value in data.items():
        if len(value) != size:
            raise ValueError(f"sync_write: id {dxl_id} has {len(value)} bytes, not {size}")
        parts.append(bytes((dxl_id,)))
        parts.append(value)
    return build_packet(BROADCAST_ID, Instruction.SYNC_WRITE, b"".join(parts))


def sync_write_values(address: int, kind: str, flat: Sequence[int]) -> bytes:
    """SYNC WRITE of one integer per servo: ``flat = [id, value, id, value, ...]``.

    Equal to :func:`sync_write` of the packed values; the packet up to the CRC is one
    ``struct`` pack (a control cycle's Sync Write).

    Args:
        address: the field's address.
        kind: the ``struct`` code of the field (``"i"`` 4-byte signed, ``"h"``, ``"B"`` ...).
        flat: ids and values, alternating.
    """
    # The header, id, length, instruction, address and size, then n (id, value) pairs.
    fmt = "<4sBHBHH" + ("B" + kind) * (len(flat) // 2)
    length = struct.calcsize(fmt) - HEADER_SIZE + 2
    size = struct.calcsize("<" + kind)
    packet = struct.pack(fmt, HEADER, BROADCAST_ID, length, Instruction.SYNC_WRITE, address,
                         size, *flat)
    if packet.find(_STUFF_FROM, HEADER_SIZE) >= 0:  # needs stuffing: the general builder
        return build_packet(BROADCAST_ID, Instruction.SYNC_WRITE, packet[HEADER_SIZE + 1:])
    crc = crc16(packet)
    return packet + bytes((crc & 0xFF, crc >> 8))


def bulk_read(items: Iterable[tuple[int, int, int]], *, fast: bool = False) -> bytes:
    """BULK READ: ``(id, address, size)`` per device."""
    params = b"".join(struct.pack("<BHH", i, a, s) for i, a, s in items)
    instruction = Instruction.FAST_BULK_READ if fast else Instruction.BULK_READ
    return build_packet(BROADCAST_ID, instruction, params)


def bulk_write(items: Iterable[tuple[int, int, bytes]]) -> bytes:
    """BULK WRITE: ``(id, address, data)`` per device."""
    params = b"".join(struct.pack("<BHH", i, a, len(d)) + d for i, a, d in items)
    return build_packet(BROADCAST_ID, Instruction.BULK_WRITE, params)


# ---------------------------------------------------------------- parsing


@dataclass(frozen=True, slots=True)
class Packet:
    """A received packet, unstuffed.

    Attributes:
        id: the sender (status) or addressee (instruction).
        instruction: the instruction byte (0x55 for status packets).
        params: the parameters; for status packets the error byte comes first.
    """

    id: int
    instruction: int
    params: bytes

    @property
    def is_status(self) -> bool:
        """Whether this is a status packet."""
        return self.instruction == Instruction.STATUS

    @property
    def error(self) -> int:
        """A status packet's error byte."""
        return self.params[0] if self.params else 0

    @property
    def data(self) -> bytes:
        """A status packet's data (after the error byte)."""
        return self.params[1:]


class PacketReader:
    """Finds packets in a byte stream; skips garbage, resynchronises after bad packets.

    Feed bytes with :meth:`feed`; :meth:`next_packet` returns the next complete packet or
    None when more bytes are needed. Bytes before a header are dropped (counted in
    :attr:`discarded`). A packet with a bad CRC or an impossible length raises
    :class:`ProtocolError` after its header is dropped, so the next call continues
    with the bytes after it.
    """

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.discarded = 0
        self.bad_id: int | None = None  # the id field of the last packet refused

    def feed(self, data: bytes | bytearray) -> None:
        """Append received bytes."""
        self.buffer += data

    def clear(self) -> None:
        """Forget buffered bytes."""
        self.buffer.clear()

    def valid_packets(self) -> list[Packet]:
        """Every complete packet buffered now, skipping bad ones (their bytes are dropped)."""
        packets: list[Packet] = []
        while True:
            try:
                packet = self.next_packet()
            except ProtocolError:
                continue
            if packet is None:
                return packets
            packets.append(packet)

    def next_packet(self) -> Packet | None:
        """The next complete, valid packet, or None if it has not fully arrived.

        Raises:
            ProtocolError: a CRC mismatch or an impossible length field.
        """
        buf = self.buffer
        start = buf.find(HEADER)
        if start < 0:
            keep = 3 if buf.endswith(b"\xff\xff\xfd") else 2 if buf.endswith(b"\xff\xff") \
                else 1 if buf.endswith(b"\xff") else 0
            self.discarded += len(buf) - keep
            del buf[: len(buf) - keep]
            return None
        if start:
            self.discarded += start
            del buf[:start]
        if len(buf) < HEADER_SIZE:
            return None
        length = buf[5] | buf[6] << 8
        if length < MIN_LENGTH or length > MAX_LENGTH:
            del buf[:4]
            self.discarded += 4
            self.bad_id = None
            raise ProtocolError(f"impossible packet length {length}")
        total = HEADER_SIZE + length
        if len(buf) < total:
            return None
        packet = bytes(buf[:total])
        del buf[:total]
        crc = packet[-2] | packet[-1] << 8
        if crc16(memoryview(packet)[:-2]) != crc:
            # The header may have been garbage: rescan the bytes after it.
            self.buffer[:0] = packet[4:]
            self.discarded += 4
            self.bad_id = packet[4]
            raise ProtocolError(f"CRC mismatch in a packet from id {packet[4]}"
                                f" (got 0x{crc:04X})")
        return decode(packet)


def decode(packet: bytes) -> Packet:
    """Decode one complete packet whose CRC was checked."""
    dxl_id, instruction = packet[4], packet[7]
    body = packet[8:-2]
    if not (dxl_id == BROADCAST_ID and instruction == Instruction.STATUS):
        body = unstuff(body)
    return Packet(dxl_id, instruction, body)


def parse(data: bytes) -> list[Packet]:
    """Every valid packet in ``data`` (garbage and bad packets skipped)."""
    reader = PacketReader()
    reader.feed(data)
    return reader.valid_packets()


def split_fast_status(packet: Packet, size: int) -> list[tuple[int, int, bytes]]:
    """Split a Fast Sync Read status packet into ``(id, error, data)`` per device.

    Raises:
        ProtocolError: the packet's length is not a whole number of device records.
    """
    params = packet.params  # ERR ID DATA (CRC ERR ID DATA)* ; the final CRC is stripped
    record = size + 4
    if (len(params) + 2) % record:
        raise ProtocolError(f"Fast Sync Read reply of {len(params) + 2} bytes is not a"
                            f" multiple of {record}")
    return [(params[k + 1], params[k], params[k + 2:k + 2 + size])
            for k in range(0, len(params), record)]


def build_fast_status(records: Sequence[tuple[int, int, bytes]]) -> bytes:
    """A Fast Sync/Bulk Read status packet from ``(id, error, data)`` per device.

    Each record ends with the CRC of the packet so far (what the device that sent it
    computed); the last one is the packet's CRC.
    """
    length = 1 + sum(len(data) + 4 for _, _, data in records)
    packet = bytearray(HEADER + bytes((BROADCAST_ID, length & 0xFF, length >> 8,
                                       Instruction.STATUS)))
    crc = crc16(packet)
    for dxl_id, error, data in records:
        chunk = bytes((error, dxl_id)) + data
        crc = crc16(chunk, crc)
        record_crc = bytes((crc & 0xFF, crc >> 8))
        packet += chunk + record_crc
        crc = crc16(record_crc, crc)
    return bytes(packet)
