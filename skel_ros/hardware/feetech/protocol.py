"""The Feetech FT-SCS serial protocol: packets, checksum, instruction builders, parser.

An instruction packet is ``FF FF | ID | LEN | INST | PARAMS... | SUM`` and a status packet
``FF FF | ID | LEN | ERR | DATA... | SUM``: ``LEN`` counts what follows it (INST or ERR,
the parameters, SUM), ``SUM`` is the complement of the low byte of the sum of ID, LEN,
INST/ERR and the parameters. There is no byte stuffing: a reader resynchronises on the
next ``FF FF`` with a plausible length and a matching checksum.

Instructions: PING 0x01, READ 0x02 (address, count), WRITE 0x03 (address, data),
REG WRITE 0x04, ACTION 0x05, SYNC READ 0x82 (address, count, ids; STS/SMS only: one
status packet per servo, in the order asked), SYNC WRITE 0x83 (address, count, then id and
data per servo; nobody answers). 0xFE is the broadcast id.
"""

from __future__ import annotations

import enum
import functools
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from skel_ros.hardware.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

HEADER: Final = b"\xff\xff"
BROADCAST_ID: Final = 0xFE
MAX_ID: Final = 253  # 0..253; 254 is the broadcast id
STATUS_OVERHEAD: Final = 6  # header, id, length, error, checksum
MAX_LENGTH: Final = 250  # longer LEN bytes are noise, not packets (the SDK's limit too)


class Instruction(enum.IntEnum):
    """Instruction codes."""

    PING = 0x01
    READ = 0x02
    WRITE = 0x03
    REG_WRITE = 0x04
    ACTION = 0x05
    SYNC_READ = 0x82
    SYNC_WRITE = 0x83


def checksum(body: bytes | bytearray | memoryview) -> int:
    """The complement of the low byte of the sum of ``body`` (ID .. last parameter)."""
    return ~sum(body) & 0xFF


def build_packet(servo_id: int, instruction: int, params: bytes = b"") -> bytes:
    """An instruction packet (or, with the error byte as ``instruction``, a status)."""
    body = bytes((servo_id, len(params) + 2, instruction)) + params
    if len(params) + 2 > MAX_LENGTH:
        raise ValueError(f"packet of {len(params)} parameter bytes is too long")
    return HEADER + body + bytes((checksum(body),))


def build_status(servo_id: int, error: int, data: bytes = b"") -> bytes:
    """A status packet."""
    return build_packet(servo_id, error, data)


def ping(servo_id: int) -> bytes:
    """PING."""
    return build_packet(servo_id, Instruction.PING)


def read(servo_id: int, address: int, size: int) -> bytes:
    """READ ``size`` bytes from ``address``."""
    return build_packet(servo_id, Instruction.READ, bytes((address, size)))


def write(servo_id: int, address: int, data: bytes) -> bytes:
    """WRITE ``data`` at ``address``."""
    return build_packet(servo_id, Instruction.WRITE, bytes((address,)) + data)


def sync_read(address: int, size: int, ids: Sequence[int]) -> bytes:
    """SYNC READ of ``size`` bytes at ``address`` from ``ids`` (STS/SMS)."""
    return build_packet(BROADCAST_ID, Instruction.SYNC_READ, bytes((address, size, *ids)))


def sync_write(address: int, size: int, data: Mapping[int, bytes]) -> bytes:
    """SYNC WRITE: ``size`` bytes at ``address`` for every id of ``data``."""
    params = bytearray((address, size))
    for servo_id, value in data.items():
        if len(value) != size:
            raise ValueError(f"id {servo_id}: {len(value)} bytes, expected {size}")
        params.append(servo_id)
        params += value
    return build_packet(BROADCAST_ID, Instruction.SYNC_WRITE, bytes(params))


def sync_write_words(address: int, flat: Sequence[int], *, big_endian: bool) -> bytes:
    """SYNC WRITE of one 2-byte field from ``[id, raw, id, raw, ...]`` in one ``struct`` pack."""
    head, head_sum, words = _words_layout(address, len(flat) // 2, big_endian=big_endian)
    data = words.pack(*flat)
    return head + data + bytes((~(head_sum + sum(data)) & 0xFF,))


@functools.lru_cache(maxsize=64)
def _words_layout(address: int, count: int, *, big_endian: bool,
                  ) -> tuple[bytes, int, struct.Struct]:
    """The fixed parts of a Sync Write of ``count`` 2-byte fields.

    Its head (header .. data size), the head's part of the checksum (ID onwards), and the
    ``struct`` of its ids and values.
    """
    length = 2 + 3 * count + 2  # address, size, (id, 2 bytes) each; INST and SUM
    if length > MAX_LENGTH:
        raise ValueError(f"SYNC WRITE of {count} words is too long")
    body = bytes((BROADCAST_ID, length, Instruction.SYNC_WRITE, address, 2))
    return HEADER + body, sum(body), struct.Struct((">" if big_endian else "<") + "BH" * count)


@dataclass(frozen=True)
class Packet:
    """One decoded packet: ``code`` is the instruction, or a status packet's error byte."""

    id: int
    code: int
    params: bytes


class PacketReader:
    """A stream parser: feed bytes, take packets; noise before a packet is skipped.

    A candidate ``FF FF`` whose length is impossible or whose checksum fails is dropped
    one byte at a time (counted in :attr:`discarded`), so a packet after noise is found.
    A checksum failure is remembered in :attr:`bad_checksums` (the caller decides).
    """

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.discarded = 0
        self.bad_checksums = 0
        self.bad_id: int | None = None

    def clear(self) -> None:
        """Drop everything buffered."""
        self.buffer.clear()

    def feed(self, data: bytes) -> None:
        """Append received bytes."""
        self.buffer += data

    def next_packet(self) -> Packet | None:
        """The next complete, valid packet, or None until more bytes come."""
        buf = self.buffer
        while True:
            start = buf.find(HEADER)
            if start < 0:
                keep = 1 if buf[-1:] == b"\xff" else 0
                self.discarded += len(buf) - keep
                del buf[:len(buf) - keep]
                return None
            if start:
                self.discarded += start
                del buf[:start]
            if len(buf) < 4:  # noqa: PLR2004 - header, id, length
                return None
            servo_id, length = buf[2], buf[3]
            if servo_id == 0xFF or not 2 <= length <= MAX_LENGTH:  # noqa: PLR2004
                self.discarded += 1
                del buf[:1]
                continue
            end = 4 + length
            if len(buf) < end:
                return None
            if checksum(memoryview(buf)[2:end - 1]) != buf[end - 1]:
                self.bad_checksums += 1
                self.bad_id = servo_id
                self.discarded += 1
                del buf[:1]
                continue
            packet = Packet(servo_id, buf[4], bytes(buf[5:end - 1]))
            del buf[:end]
            return packet


def parse(data: bytes) -> list[Packet]:
    """Every valid packet in ``data``."""
    reader = PacketReader()
    reader.feed(data)
    packets = []
    while (packet := reader.next_packet()) is not None:
        packets.append(packet)
    return packets


def decode(data: bytes) -> Packet:
    """Exactly one packet.

    Raises:
        ProtocolError: ``data`` is not one valid packet.
    """
    packets = parse(data)
    if len(packets) != 1 or len(data) != 5 + len(packets[0].params) + 1:
        raise ProtocolError(f"not one valid packet: {data.hex(' ')}")
    return packets[0]
