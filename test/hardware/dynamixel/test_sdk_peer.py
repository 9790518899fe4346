"""Peer tests against ROBOTIS' own code (dynamixel-sdk, which nobody here wrote).

1. The SDK pings, sync-writes and (fast) sync-reads our emulator through its pty.
2. Our packets equal, byte for byte, what the SDK sends for the same instructions: the
   SDK writes into a pty whose other side this test reads.
3. Packets that need byte stuffing equal the SDK's ``addStuffing`` + ``updateCRC``
   output. (dynamixel-sdk 4.1's ``txPacket`` drops ``addStuffing``'s result when the
   length grows, so on the wire it sends such packets unstuffed, against the protocol;
   we compare with its stuffer instead of its wire bytes there.)
"""

from __future__ import annotations

import os
import select
import tty
from typing import TYPE_CHECKING

import pytest

from skel_ros.hardware.dynamixel import protocol as p

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from skel_ros.emulation.dynamixel import DynamixelEmulator

sdk = pytest.importorskip("dynamixel_sdk")


@pytest.fixture
def sdk_port(emulator: DynamixelEmulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    # The SDK waits 2 x LATENCY_TIMER (16 ms, an FTDI adapter's default) + 2 ms for an
    # answer; on a loaded shared machine the scheduler alone can take longer (round trips
    # of 35-100 ms were measured at load 9). A longer wait keeps the test about bytes.
    monkeypatch.setattr(sdk.port_handler, "LATENCY_TIMER", 250)
    port = sdk.PortHandler(emulator.transport["port"])
    assert port.openPort()
    yield port
    port.closePort()


def test_sdk_pings_reads_and_writes_the_emulator(sdk_port: object,
                                                 emulator: DynamixelEmulator) -> None:
    ph = sdk.PacketHandler(2.0)
    assert ph.ping(sdk_port, 3) == (1020, sdk.COMM_SUCCESS, 0)
    _, result, _ = ph.ping(sdk_port, 9)
    assert result == sdk.COMM_RX_TIMEOUT
    position, result, error = ph.read4ByteTxRx(sdk_port, 3, 132)
    assert (result, error) == (sdk.COMM_SUCCESS, 0)
    assert position == 2048 + round(0.5 / (2 * 3.141592653589793 / 4096))
    assert ph.write1ByteTxRx(sdk_port, 3, 64, 1) == (sdk.COMM_SUCCESS, 0)
    assert emulator.state(3).torque_enabled
    # EEPROM with torque on: access error; goal beyond Max Position Limit: limit error.
    assert ph.write1ByteTxRx(sdk_port, 3, 11, 1) == (sdk.COMM_SUCCESS, 7)
    assert ph.write4ByteTxRx(sdk_port, 3, 116, 5000) == (sdk.COMM_SUCCESS, 6)


@pytest.mark.parametrize("fast", [False, True])
def test_sdk_sync_write_then_sync_read(sdk_port: object, emulator: DynamixelEmulator,
                                       fast: bool) -> None:
    ph = sdk.PacketHandler(2.0)
    ids = [1, 2, 3, 4]
    torque = sdk.GroupSyncWrite(sdk_port, ph, 64, 1)
    goals = sdk.GroupSyncWrite(sdk_port, ph, 116, 4)
    for i in ids:
        assert torque.addParam(i, [1])
        assert goals.addParam(i, list((1000 + 500 * i).to_bytes(4, "little")))
    assert torque.txPacket() == sdk.COMM_SUCCESS
    assert goals.txPacket() == sdk.COMM_SUCCESS
    reader = sdk.GroupSyncRead(sdk_port, ph, 116, 4)  # Goal Position: exact, not moving
    for i in ids:
        assert reader.addParam(i)
    result = reader.fastSyncRead() if fast else reader.txRxPacket()
    assert result == sdk.COMM_SUCCESS
    assert [reader.getData(i, 116, 4) for i in ids] == [1500, 2000, 2500, 3000]
    assert all(emulator.state(i).torque_enabled for i in ids)


def _capture(build: Callable[[object, object], object]) -> bytes:
    """The bytes the SDK writes for ``build(port, packet_handler)``."""
    master, slave = os.openpty()
    tty.setraw(slave)
    port = sdk.PortHandler(os.ttyname(slave))
    try:
        assert port.openPort()
        port.setPacketTimeoutMillis(1)
        build(port, sdk.PacketHandler(2.0))
        chunks = b""
        while select.select([master], [], [], 0.05)[0]:
            chunks += os.read(master, 4096)
        return chunks
    finally:
        port.closePort()
        os.close(master)
        os.close(slave)


def _sdk_sync_write(port: object, ph: object) -> None:
    group = sdk.GroupSyncWrite(port, ph, 116, 4)
    for i, value in ((1, 2048), (2, -5), (3, 0x00FEFFFF), (12, 4095)):
        group.addParam(i, list(value.to_bytes(4, "little", signed=True)))
    group.txPacket()


def _sdk_sync_read(fast: bool) -> Callable[[object, object], None]:
    def build(port: object, ph: object) -> None:
        group = sdk.GroupSyncRead(port, ph, 224, 15)
        for i in range(1, 13):
            group.addParam(i)
        group.fastSyncReadTxPacket() if fast else group.txPacket()

    return build


CASES = {
    "ping": (lambda port, ph: ph.ping(port, 7), p.ping(7)),
    "read": (lambda port, ph: ph.read4ByteTxRx(port, 5, 132), p.read(5, 132, 4)),
    "write": (lambda port, ph: ph.write4ByteTxRx(port, 5, 116, 3000),
              p.write(5, 116, (3000).to_bytes(4, "little"))),
    "sync write": (_sdk_sync_write, p.sync_write(116, 4, {
        1: (2048).to_bytes(4, "little"), 2: (-5).to_bytes(4, "little", signed=True),
        3: (0x00FEFFFF).to_bytes(4, "little"), 12: (4095).to_bytes(4, "little")})),
    "sync read": (_sdk_sync_read(fast=False), p.sync_read(224, 15, list(range(1, 13)))),
    "fast sync read": (_sdk_sync_read(fast=True),
                       p.sync_read(224, 15, list(range(1, 13)), fast=True)),
    "reboot": (lambda port, ph: ph.reboot(port, 2), p.reboot(2)),
    "bulk read": (lambda port, ph: ph.bulkReadTx(port, [1, 132, 0, 4, 0, 2, 64, 0, 1, 0], 10,
                                                 False),
                  p.bulk_read([(1, 132, 4), (2, 64, 1)])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_our_packets_equal_the_sdk_bytes(name: str) -> None:
    build, ours = CASES[name]
    assert _capture(build) == ours


def test_our_crc_equals_the_sdk_crc() -> None:
    ph = sdk.PacketHandler(2.0)
    data = bytes(range(256)) * 2
    for n in (0, 1, 2, 3, 17, 255, 512):
        assert p.crc16(data[:n]) == ph.updateCRC(0, list(data[:n]), n)


def _sdk_stuffed(dxl_id: int, instruction: int, params: bytes) -> bytes:
    """What the SDK's txPacket would send if it kept addStuffing's result."""
    ph = sdk.PacketHandler(2.0)
    packet = [0xFF, 0xFF, 0xFD, 0, dxl_id, (len(params) + 3) & 0xFF, (len(params) + 3) >> 8,
              instruction, *params, 0, 0]
    packet = ph.addStuffing(packet)
    total = (packet[5] | packet[6] << 8) + 7
    crc = ph.updateCRC(0, packet, total - 2)
    packet[total - 2:total] = [crc & 0xFF, crc >> 8]
    return bytes(packet[:total])


@pytest.mark.parametrize("value", [b"\xff\xff\xfd\x00", b"\x00\xff\xff\xfd",
                                   b"\xff\xff\xfd\xff"])
def test_stuffed_packets_equal_the_sdk_stuffer(value: bytes) -> None:
    assert p.write(5, 116, value) == _sdk_stuffed(5, 0x03, b"\x74\x00" + value)
    params = b"\x74\x00\x04\x00" + b"\x01" + value + b"\x02" + value
    assert p.sync_write(116, 4, {1: value, 2: value}) == _sdk_stuffed(0xFE, 0x83, params)
