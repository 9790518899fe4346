"""The FT-SCS codec against packets written out from Feetech's protocol document."""

from __future__ import annotations

import pytest

from skel_ros.hardware.errors import ProtocolError
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech import protocol as proto


def test_packets_match_the_protocol_document() -> None:
    # PING id 1: FF FF 01 02 01 ~(1+2+1)
    assert proto.ping(1) == bytes.fromhex("ffff010201fb")
    # READ id 1, 2 bytes at 56 (Present_Position)
    assert proto.read(1, 56, 2) == bytes.fromhex("ffff0104023802be")
    # WRITE id 1: Goal_Position 2048 (STS: low byte first)
    assert proto.write(1, 42, (2048).to_bytes(2, "little")) == bytes.fromhex("ffff0105032a0008c4")
    # SYNC WRITE of 1 byte at 40 to ids 1 and 2, SYNC READ of 2 bytes at 56 from 1 and 2
    assert proto.sync_write(40, 1, {1: b"\x01", 2: b"\x01"}) == bytes.fromhex(
        "fffffe088328010101020148")
    assert proto.sync_read(56, 2, [1, 2]) == bytes.fromhex("fffffe0682380201023c")


def test_sync_write_words_is_sync_write_in_either_byte_order() -> None:
    flat = [1, 2048, 2, 0x8005]
    for big, order in ((False, "little"), (True, "big")):
        assert proto.sync_write_words(42, flat, big_endian=big) == proto.sync_write(
            42, 2, {1: (2048).to_bytes(2, order), 2: (0x8005).to_bytes(2, order)})


def test_the_reader_skips_noise_and_bad_checksums() -> None:
    good = proto.build_status(3, 0x20, b"\x01\x02")
    bad = bytearray(proto.build_status(4, 0, b"\x07"))
    bad[-1] ^= 0xFF
    packets = proto.parse(b"\x00\xff\x13" + bytes(bad) + good + b"\xff")
    assert packets == [proto.Packet(3, 0x20, b"\x01\x02")]
    reader = proto.PacketReader()
    reader.feed(bytes(bad) + good[:4])
    assert reader.next_packet() is None
    assert reader.bad_checksums == 1
    reader.feed(good[4:])
    assert reader.next_packet() == proto.Packet(3, 0x20, b"\x01\x02")
    with pytest.raises(ProtocolError):
        proto.decode(bytes(bad))


@pytest.mark.parametrize(("value", "bit", "raw"), [
    (0, 15, 0), (5, 15, 5), (-5, 15, 0x8005), (-2047, 11, 0xFFF), (100, 11, 100),
    (-1, 10, 0x401), (40000, 15, 0x7FFF)])
def test_sign_magnitude(value: int, bit: int, raw: int) -> None:
    assert ct.encode_sm(value, bit) == raw
    assert ct.decode_sm(raw, bit) == max(-(2**bit - 1), min(2**bit - 1, value))


def test_models() -> None:
    assert ct.model_by_name("sts3215") is ct.MODELS["STS3215-C001"]
    assert {m.voltage for m in ct.models_with_number(777)} == {7.4, 12.0}
    scs = ct.MODELS["SCS0009"]
    assert (scs.protocol_end, scs.lock.address, scs.has_sync_read, scs.has(ct.HOMING_OFFSET)) \
        == (1, 48, False, False)
    sts = ct.MODELS["STS3250"]
    assert (sts.protocol_end, sts.lock.address, sts.has_sync_read, sts.center) \
        == (0, 55, True, 2048)
    assert ct.READ_SIZE == 27
