"""Protocol 2.0 codec: CRC (e-Manual vectors), stuffing, builders, parser with garbage."""

from __future__ import annotations

import random

import pytest

from skel_ros.hardware.dynamixel import protocol as p
from skel_ros.hardware.errors import ProtocolError

# Packets printed in the ROBOTIS e-Manual (Protocol 2.0 page, instruction examples).
EMANUAL = {
    "ping id 1": ("FF FF FD 00 01 03 00 01 19 4E", lambda: p.ping(1)),
    "read id 1, 132, 4": ("FF FF FD 00 01 07 00 02 84 00 04 00 1D 15",
                          lambda: p.read(1, 132, 4)),
    "write id 1, 116, 512": ("FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89",
                             lambda: p.write(1, 116, (512).to_bytes(4, "little"))),
    "sync read 132, 4, ids 1 2": ("FF FF FD 00 FE 09 00 82 84 00 04 00 01 02 CE FA",
                                  lambda: p.sync_read(132, 4, [1, 2])),
}


@pytest.mark.parametrize("name", list(EMANUAL))
def test_emanual_packets(name: str) -> None:
    expected, build = EMANUAL[name]
    assert build().hex(" ").upper() == expected


def test_emanual_status_packets_have_valid_crc() -> None:
    # Ping answer of an XM430-W210 (model 1030, firmware 0x26) and a read answer, e-Manual.
    for text in ("FF FF FD 00 01 07 00 55 00 06 04 26 65 5D",
                 "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0"):
        packet = bytes.fromhex(text)
        assert p.crc16(packet[:-2]) == int.from_bytes(packet[-2:], "little")
    [status] = p.parse(bytes.fromhex("FF FF FD 00 01 07 00 55 00 06 04 26 65 5D"))
    assert (status.id, status.error, status.data) == (1, 0, bytes([0x06, 0x04, 0x26]))


def test_word_crc_equals_bytewise_crc() -> None:
    rng = random.Random(1)  # noqa: S311 - reproducible test data
    for n in range(70):
        data = bytes(rng.randrange(256) for _ in range(n))
        assert p.crc16(data) == p.crc16_bytewise(data)
        assert p.crc16(data[n // 2:], p.crc16(data[:n // 2])) == p.crc16(data)


def test_crc_of_each_packet_laid_end_to_end() -> None:
    rng = random.Random(2)  # noqa: S311 - reproducible test data
    for size in range(3, 40):  # odd and even CRC spans
        for count in (0, 1, 5, 12):
            data = bytes(rng.randrange(256) for _ in range(size * count))
            assert p.crc16_each(data, size, count) == [
                p.crc16_bytewise(data[k * size:(k + 1) * size - 2]) for k in range(count)]
    answers = b"".join(p.build_status(i, 0, bytes(range(i, i + 16))) for i in range(1, 13))
    assert p.crc16_each(answers, 27, 12) == [
        int.from_bytes(answers[k * 27 + 25:k * 27 + 27], "little") for k in range(12)]


def test_stuffing() -> None:
    assert p.stuff(b"\x03\xff\xff\xfd\x01") == b"\x03\xff\xff\xfd\xfd\x01"
    assert p.stuff(b"\xff\xff\xff\xfd\xff\xff\xfd") == b"\xff\xff\xff\xfd\xfd\xff\xff\xfd\xfd"
    for body in (b"", b"\xff\xff", b"\xff\xff\xfd", b"a\xff\xff\xfd\xfdb"):
        assert p.unstuff(p.stuff(body)) == body
    packet = p.write(1, 116, b"\xff\xff\xfd\x00")
    assert b"\xff\xff\xfd\xfd" in packet
    assert packet[5] == 0x0A  # the length counts the stuffed byte
    [decoded] = p.parse(packet)
    assert decoded.params == b"\x74\x00\xff\xff\xfd\x00"


def test_parser_skips_garbage_and_resyncs_after_bad_crc() -> None:
    good = [p.build_status(i, 0, bytes([i, 0, 0, 0])) for i in (1, 2, 3)]
    corrupt = bytearray(good[1])
    corrupt[9] ^= 0x40
    stream = b"\x00\xff\x13\xff\xff" + good[0] + b"\xfd\xff" + bytes(corrupt) + good[2]
    reader = p.PacketReader()
    got, errors = [], 0
    for k in range(0, len(stream), 5):  # arrives in small chunks
        reader.feed(stream[k:k + 5])
        while True:
            try:
                packet = reader.next_packet()
            except ProtocolError:
                errors += 1
                assert reader.bad_id == 2
                continue
            if packet is None:
                break
            got.append(packet.id)
    assert got == [1, 3]
    assert errors == 1
    assert reader.discarded >= 7


def test_parser_refuses_impossible_lengths() -> None:
    reader = p.PacketReader()
    reader.feed(b"\xff\xff\xfd\x00\x01\x01\x00" + p.ping(4))
    with pytest.raises(ProtocolError, match="length"):
        reader.next_packet()
    packet = reader.next_packet()
    assert packet is not None
    assert packet.id == 4


def test_fast_status_roundtrip() -> None:
    records = [(1, 0, b"\x01\x02\x03"), (7, 0x80, b"\xff\xff\xfd"), (9, 0, b"\x00\x00\x00")]
    packet = p.build_fast_status(records)
    assert p.crc16(packet[:-2]) == int.from_bytes(packet[-2:], "little")
    [decoded] = p.parse(packet)
    assert decoded.id == p.BROADCAST_ID
    assert p.split_fast_status(decoded, 3) == [(i, e, d) for i, e, d in records]
    with pytest.raises(ProtocolError):
        p.split_fast_status(decoded, 4)


def test_status_error_text() -> None:
    assert p.describe_status_error(0x07) == "access error"
    assert p.describe_status_error(0x80) == "hardware alert"
    assert "CRC" in p.describe_status_error(0x83)


def test_sync_write_values_equals_sync_write() -> None:
    flat = [1, 2048, 2, -5, 7, 4095]
    expected = p.sync_write(116, 4, {i: v.to_bytes(4, "little", signed=True)
                                     for i, v in zip(flat[::2], flat[1::2], strict=True)})
    assert p.sync_write_values(116, "i", flat) == expected
    assert p.sync_write_values(102, "h", [3, -1]) == p.sync_write(102, 2, {3: b"\xff\xff"})
    # Values whose bytes need stuffing (FF FF FD inside one value, and across two).
    for flat in ([1, 0x00FDFFFF, 2, 0], [1, -0x010000, 2, 0x7FFFFFFD], [0xFF, -1, 0xFD, 3]):
        expected = p.sync_write(116, 4, {i: v.to_bytes(4, "little", signed=True)
                                         for i, v in zip(flat[::2], flat[1::2], strict=True)})
        assert p.sync_write_values(116, "i", flat) == expected


def test_fast_status_records_end_with_the_crc_so_far() -> None:
    records = [(i, 0x80 * (i % 2), bytes(range(i, i + 15))) for i in range(1, 13)]
    packet = p.build_fast_status(records)
    offset = 8
    for dxl_id, error, data in records:
        assert packet[offset:offset + 2] == bytes((error, dxl_id))
        assert packet[offset + 2:offset + 17] == data
        crc = p.crc16_bytewise(packet[:offset + 17])
        assert packet[offset + 17:offset + 19] == crc.to_bytes(2, "little")
        offset += 19
    assert offset == len(packet)
