"""Dynamixel Protocol 2.0 packets the driver builds and parses, at their edges: the other
instructions, lengths above 255, the parser's resynchronisation and its byte counts,
and the text of what it refuses.

Beside test_protocol.py (e-Manual packets, CRC, stuffing) and test_sdk_peer.py (the same
bytes as dynamixel-sdk): these pin what mutation testing (issue 35, docs/testing.md)
showed no protocol test checked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.hardware.dynamixel import protocol as p
from skel_ros.hardware.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Callable


def _packet(dxl_id: int, instruction: int, params: bytes) -> str:
    """The packet as the e-Manual lays it out, with the bytewise (e-Manual) CRC."""
    length = len(params) + 3
    body = p.HEADER + bytes((dxl_id, length & 0xFF, length >> 8, instruction)) + params
    crc = p.crc16_bytewise(body)
    return (body + bytes((crc & 0xFF, crc >> 8))).hex(" ").upper()


# Built in the test (not when the module loads), so that the code under test runs there.
OTHER_INSTRUCTIONS: dict[str, tuple[Callable[[], bytes], str]] = {
    "reboot id 1 (e-Manual)": (lambda: p.reboot(1), "FF FF FD 00 01 03 00 08 2F 4E"),
    "action id 1 (e-Manual)": (lambda: p.action(1), "FF FF FD 00 01 03 00 05 02 CE"),
    "action broadcast": (p.action, _packet(0xFE, 0x05, b"")),
    "reg write": (lambda: p.reg_write(1, 104, bytes((0xC8, 0, 0, 0))),
                  _packet(1, 0x04, bytes.fromhex("6800C8000000"))),
    "bulk read": (lambda: p.bulk_read([(1, 132, 4), (2, 124, 2)]),
                  _packet(0xFE, 0x92, bytes.fromhex("01 8400 0400 02 7C00 0200"))),
    "fast bulk read": (lambda: p.bulk_read([(1, 132, 4)], fast=True),
                       _packet(0xFE, 0x9A, bytes.fromhex("01 8400 0400"))),
    "bulk write": (lambda: p.bulk_write([(1, 116, b"\x01\x02"), (3, 0x1234, b"\x05")]),
                   _packet(0xFE, 0x93, bytes.fromhex("01 7400 0200 0102 03 3412 0100 05"))),
    "fast sync read": (lambda: p.sync_read(132, 4, [1, 2], fast=True),
                       _packet(0xFE, 0x8A, bytes.fromhex("8400 0400 01 02"))),
    "status without data": (lambda: p.build_status(1, 0), _packet(1, 0x55, b"\x00")),
    # Addresses and sizes are unsigned 16-bit fields: the whole range encodes.
    "read at 0xFFFF": (lambda: p.read(1, 0xFFFF, 0x8000),
                       _packet(1, 0x02, bytes.fromhex("FFFF 0080"))),
    "write at 0x8001": (lambda: p.write(1, 0x8001, b"\x07"),
                        _packet(1, 0x03, bytes.fromhex("0180 07"))),
    "sync read at 0x9000": (lambda: p.sync_read(0x9000, 0x8000, [1]),
                            _packet(0xFE, 0x82, bytes.fromhex("0090 0080 01"))),
    "sync write at 0xA000": (lambda: p.sync_write(0xA000, 1, {1: b"\x05"}),
                             _packet(0xFE, 0x83, bytes.fromhex("00A0 0100 01 05"))),
    "bulk read at 0xFFFE": (lambda: p.bulk_read([(1, 0xFFFE, 0x8000)]),
                            _packet(0xFE, 0x92, bytes.fromhex("01 FEFF 0080"))),
    "bulk write at 0x8000": (lambda: p.bulk_write([(1, 0x8000, b"\x09")]),
                             _packet(0xFE, 0x93, bytes.fromhex("01 0080 0100 09"))),
}


@pytest.mark.parametrize("name", list(OTHER_INSTRUCTIONS))
def test_other_instructions(name: str) -> None:
    build, expected = OTHER_INSTRUCTIONS[name]
    assert build().hex(" ").upper() == expected


def test_a_packet_longer_than_255_bytes_has_a_two_byte_length() -> None:
    data = bytes(range(200)) + bytes(range(100))
    packet = p.write(7, 0x1234, data)
    assert packet[5:7] == (len(data) + 5).to_bytes(2, "little")  # inst, address, CRC
    [back] = p.parse(packet)
    assert (back.id, back.instruction, back.params) == (7, p.Instruction.WRITE,
                                                        b"\x34\x12" + data)


def test_sync_write_refuses_a_value_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="sync_write: id 3 has 2 bytes, not 4"):
        p.sync_write(116, 4, {1: b"\x00" * 4, 3: b"\x00\x00"})


def test_an_unknown_status_error_is_shown_in_hex() -> None:
    assert p.describe_status_error(0x7E) == "unknown error 0x7E"
    assert p.describe_status_error(0x80 | 0x7E) == "unknown error 0x7E; hardware alert"


def test_the_crc_of_an_odd_packet_with_a_high_first_byte() -> None:
    packets = bytes.fromhex("F1 02 03 00 00") + bytes.fromhex("80 FF 7F 00 00")
    assert p.crc16_each(packets, 5, 2) == [p.crc16_bytewise(bytes.fromhex("F1 02 03")),
                                           p.crc16_bytewise(bytes.fromhex("80 FF 7F"))]


def test_a_fresh_reader_has_dropped_nothing() -> None:
    reader = p.PacketReader()
    assert (reader.discarded, reader.bad_id) == (0, None)
    reader.feed(p.ping(1))
    assert reader.next_packet() == p.Packet(1, p.Instruction.PING, b"")
    assert (reader.discarded, reader.bad_id) == (0, None)


@pytest.mark.parametrize(("tail", "kept"), [
    (b"", 0), (b"\xff", 1), (b"\xff\xff", 2), (b"\xff\xff\xfd", 3), (b"\xfd", 0),
    (b"\xff\xfd", 0),
])
def test_garbage_is_dropped_but_a_partial_header_is_kept(tail: bytes, kept: int) -> None:
    reader = p.PacketReader()
    reader.feed(b"\x01\x02\x03\x04" + tail)
    assert reader.next_packet() is None
    assert reader.discarded == 4 + len(tail) - kept
    assert bytes(reader.buffer) == tail[len(tail) - kept:]
    # The rest of the packet arrives: it is found.
    reader.feed(p.ping(1)[kept:] if kept else p.ping(1))
    assert reader.next_packet() == p.Packet(1, p.Instruction.PING, b"")
    assert reader.discarded == 4 + len(tail) - kept


def test_bytes_before_a_header_are_counted() -> None:
    reader = p.PacketReader()
    reader.feed(b"\x00\x11\x22" + p.ping(2))
    assert reader.next_packet() == p.Packet(2, p.Instruction.PING, b"")
    assert reader.discarded == 3
    reader.feed(b"\x33" + p.ping(3))
    assert reader.next_packet() == p.Packet(3, p.Instruction.PING, b"")
    assert reader.discarded == 4


def test_a_header_without_its_length_waits() -> None:
    reader = p.PacketReader()
    packet = p.ping(1)
    for n in range(1, len(packet)):
        reader.clear()
        reader.feed(packet[:n])
        assert reader.next_packet() is None, n
        assert bytes(reader.buffer) == packet[:n]


@pytest.mark.parametrize("length", [0, 2, p.MAX_LENGTH + 1, 0xFFFF])
@pytest.mark.parametrize("more", [b"", b"\x55\x00"])
def test_an_impossible_length_drops_the_header(length: int, more: bytes) -> None:
    reader = p.PacketReader()
    rest = bytes((1, length & 0xFF, length >> 8)) + more  # the length is enough to tell
    reader.feed(b"\xaa\xbb" + p.HEADER + rest)
    with pytest.raises(ProtocolError, match=f"impossible packet length {length}$"):
        reader.next_packet()
    assert reader.discarded == 2 + 4
    assert bytes(reader.buffer) == rest
    assert reader.bad_id is None


@pytest.mark.parametrize("length", [p.MIN_LENGTH, 0x100, p.MAX_LENGTH])
def test_a_possible_length_waits_for_the_packet(length: int) -> None:
    reader = p.PacketReader()
    reader.feed(p.HEADER + bytes((1, length & 0xFF, length >> 8)))
    assert reader.next_packet() is None
    assert reader.discarded == 0


def test_a_bad_crc_is_named_and_the_bytes_after_its_header_are_searched() -> None:
    good = p.ping(5)
    # A "packet" from id 9 whose body hides a real one: its CRC cannot match.
    bad = p.HEADER + bytes((9, len(good) + 3, 0, 0x55)) + good + b"\x00\x00"
    reader = p.PacketReader()
    reader.feed(b"\xaa" + bad)
    with pytest.raises(ProtocolError, match=r"^CRC mismatch in a packet from id 9 "
                                            r"\(got 0x0000\)$"):
        reader.next_packet()
    assert reader.bad_id == 9
    assert reader.discarded == 1 + 4
    assert bytes(reader.buffer) == bad[4:]
    assert reader.next_packet() == p.Packet(5, p.Instruction.PING, b"")
    assert reader.discarded == 1 + 4 + 4  # id, length, instruction of the bad one


def test_valid_packets_goes_on_after_a_bad_one() -> None:
    corrupt = bytearray(p.ping(1))
    corrupt[-1] ^= 0xFF
    reader = p.PacketReader()
    reader.feed(bytes(corrupt) + p.ping(2) + p.ping(3))
    assert [q.id for q in reader.valid_packets()] == [2, 3]
    assert reader.bad_id == 1


def test_an_impossible_length_does_not_stop_valid_packets() -> None:
    reader = p.PacketReader()
    reader.feed(p.HEADER + b"\x01\x00\x00" + p.ping(4))
    assert [q.id for q in reader.valid_packets()] == [4]


def test_only_a_broadcast_status_is_left_stuffed() -> None:
    stuffed = b"\xff\xff\xfd\xfd"
    normal = p.build_packet(1, p.Instruction.STATUS, b"\x00" + stuffed, stuffing=False)
    assert p.decode(normal).params == b"\x00\xff\xff\xfd"
    instruction = p.build_packet(p.BROADCAST_ID, p.Instruction.SYNC_WRITE, stuffed,
                                 stuffing=False)
    assert p.decode(instruction).params == b"\xff\xff\xfd"
    fast = p.build_packet(p.BROADCAST_ID, p.Instruction.STATUS, b"\x00" + stuffed,
                          stuffing=False)
    assert p.decode(fast) == p.Packet(p.BROADCAST_ID, p.Instruction.STATUS, b"\x00" + stuffed)


def test_a_fast_status_longer_than_255_bytes_round_trips() -> None:
    records = [(i, i % 3, bytes(range(i, i + 30))) for i in range(1, 13)]
    [packet] = p.parse(p.build_fast_status(records))
    assert p.split_fast_status(packet, 30) == records


def test_a_fast_status_of_the_wrong_size_is_refused() -> None:
    [packet] = p.parse(p.build_fast_status([(1, 0, b"\x01\x02\x03\x04")]))
    with pytest.raises(ProtocolError, match=r"^Fast Sync Read reply of 8 bytes is not a "
                                            r"multiple of 7$"):
        p.split_fast_status(packet, 3)


def _crc_bitwise(data: bytes) -> int:
    """CRC-16 with polynomial 0x8005, initial value 0, not reflected: bit by bit."""
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def test_the_crc_tables_are_those_of_the_polynomial() -> None:
    """The byte and word tables the CRC reads (built once, when the module loads)."""
    byte_table = p._byte_table()
    assert byte_table[:8] == [0x0000, 0x8005, 0x800F, 0x000A, 0x801B, 0x001E, 0x0014, 0x8011]
    assert byte_table == [_crc_bitwise(bytes((i,))) for i in range(256)]
    word_table = p._word_table()
    assert len(word_table) == 65536
    for w in (*range(0, 65536, 97), 0xFFFF, 0x8000, 0x00FF):
        assert word_table[w] == _crc_bitwise(w.to_bytes(2, "big")), hex(w)
