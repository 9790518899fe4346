"""Peer tests against Feetech's own code (ftservo-python-sdk, which nobody here wrote).

1. The SDK pings, reads, writes, sync-writes and sync-reads our emulator through its pty
   (STS little-endian; SCS big-endian through its ``scscl`` class).
2. Our packets equal, byte for byte, what the SDK sends for the same instructions: the
   SDK writes into a pty whose other side this test reads.
3. Our driver reads and writes a servo the SDK configured (Homing_Offset, angle limits,
   Return_Delay_Time under Lock), and finds nothing to rewrite.
"""

from __future__ import annotations

import math
import os
import select
import tty
from typing import TYPE_CHECKING

import pytest
from feetech_arm import START, arm
from polling import wait_until

from skel_ros.hardware.base import ActuatorCommand
from skel_ros.hardware.feetech import protocol as p

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from skel_ros.emulation.feetech import FeetechEmulator
    from skel_ros.hardware.feetech.bus import FeetechBus

sdk = pytest.importorskip("scservo_sdk")
TICK = 2 * math.pi / 4096


@pytest.fixture
def emulator(make_emulator: Callable[..., FeetechEmulator]) -> FeetechEmulator:
    return make_emulator(return_delay_us=0)


@pytest.fixture
def sdk_port(emulator: FeetechEmulator) -> Iterator[object]:
    port = sdk.PortHandler(emulator.transport["port"])
    assert port.openPort()
    yield port
    port.closePort()


def test_sdk_pings_reads_and_writes_the_emulator(sdk_port: object,
                                                 emulator: FeetechEmulator) -> None:
    ph = sdk.sms_sts(sdk_port)
    assert ph.ping(2) == (777, sdk.COMM_SUCCESS, 0)
    assert ph.ping(9)[1] == sdk.COMM_RX_TIMEOUT
    position, result, error = ph.ReadPos(1)
    assert (result, error) == (sdk.COMM_SUCCESS, 0)
    assert position == 2048 + round(START[1] / TICK)
    assert ph.write1ByteTxRx(1, sdk.SMS_STS_TORQUE_ENABLE, 1) == (sdk.COMM_SUCCESS, 0)
    assert ph.WritePosEx(1, 2048 + 300, 0, 0) == (sdk.COMM_SUCCESS, 0)
    assert wait_until(lambda: abs(emulator.state(1).position - 300 * TICK) < 2 * TICK, 5)
    speed, result, _ = ph.ReadSpeed(1)
    assert result == sdk.COMM_SUCCESS
    assert isinstance(speed, int)


def test_sdk_sync_write_then_sync_read(sdk_port: object, emulator: FeetechEmulator) -> None:
    ph = sdk.sms_sts(sdk_port)
    for i in START:
        assert ph.write1ByteTxRx(i, sdk.SMS_STS_TORQUE_ENABLE, 1) == (sdk.COMM_SUCCESS, 0)
        assert ph.SyncWritePosEx(i, 2048 + 100 * i, 0, 0)
    assert ph.groupSyncWrite.txPacket() == sdk.COMM_SUCCESS
    reader = sdk.GroupSyncRead(ph, sdk.SMS_STS_PRESENT_POSITION_L, 4)
    for i in START:
        reader.addParam(i)

    def there() -> bool:
        if reader.txRxPacket() != sdk.COMM_SUCCESS:
            return False
        return all(abs(reader.getData(i, 56, 2) - (2048 + 100 * i)) <= 1 for i in START)

    assert wait_until(there, 5)


def test_sdk_reads_an_scs_servo_big_endian(make_emulator: Callable[..., FeetechEmulator],
                                           ) -> None:
    emu = make_emulator(arm("SCS0009", (1,)), return_delay_us=0)
    port = sdk.PortHandler(emu.transport["port"])
    assert port.openPort()
    try:
        ph = sdk.scscl(port)
        assert ph.ping(1)[:2] == (1284, sdk.COMM_SUCCESS)
        position, result, _ = ph.ReadPos(1)
        assert result == sdk.COMM_SUCCESS
        assert position == 512 + round(START[1] / (math.radians(300) / 1024))
        assert ph.write1ByteTxRx(1, sdk.SCSCL_TORQUE_ENABLE, 1) == (sdk.COMM_SUCCESS, 0)
        assert ph.WritePos(1, 600, 0, 0) == (sdk.COMM_SUCCESS, 0)
        assert emu.register(1, "Goal_Position") == 600
    finally:
        port.closePort()


class _Tap:
    """A pty the SDK writes into; the test reads what it sent."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = sdk.PortHandler(os.ttyname(self.slave))
        assert self.port.openPort()

    def sent(self) -> bytes:
        data = b""
        while select.select([self.master], [], [], 0.05)[0]:
            data += os.read(self.master, 4096)
        return data

    def close(self) -> None:
        self.port.closePort()
        for fd in (self.master, self.slave):
            os.close(fd)


@pytest.fixture
def tap(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Tap]:
    monkeypatch.setattr(sdk.port_handler, "LATENCY_TIMER", 1)  # nobody answers: time out fast
    t = _Tap()
    yield t
    t.close()


def test_our_packets_are_the_sdks(tap: _Tap) -> None:
    ph = sdk.sms_sts(tap.port)
    ph.read2ByteTxRx(3, 56)
    assert tap.sent() == p.read(3, 56, 2)
    ph.write2ByteTxRx(3, 42, 0x8123)
    assert tap.sent() == p.write(3, 42, (0x8123).to_bytes(2, "little"))
    ph.write1ByteTxRx(3, 55, 0)
    assert tap.sent() == p.write(3, 55, b"\x00")
    ph.action(sdk.BROADCAST_ID)
    assert tap.sent() == p.build_packet(p.BROADCAST_ID, p.Instruction.ACTION)
    ph.txRxPacket([0, 0, 7, 2, sdk.INST_PING, 0])
    assert tap.sent() == p.ping(7)
    writer = sdk.GroupSyncWrite(ph, 42, 2)
    for i, raw in ((1, 2048), (2, 0x8010), (6, 4095)):
        writer.addParam(i, [ph.scs_lobyte(raw), ph.scs_hibyte(raw)])
    writer.txPacket()
    assert tap.sent() == p.sync_write_words(42, [1, 2048, 2, 0x8010, 6, 4095], big_endian=False)
    reader = sdk.GroupSyncRead(ph, 40, 27)
    for i in (1, 2, 6):
        reader.addParam(i)
    reader.txPacket()
    assert tap.sent() == p.sync_read(40, 27, [1, 2, 6])
    tap.port.is_using = False  # its syncReadTx leaves the port busy until syncReadRx
    scs = sdk.scscl(tap.port)
    writer = sdk.GroupSyncWrite(scs, 42, 2)
    writer.addParam(4, [scs.scs_lobyte(700), scs.scs_hibyte(700)])
    writer.txPacket()
    assert tap.sent() == p.sync_write_words(42, [4, 700], big_endian=True)


def test_our_driver_drives_a_servo_the_sdk_configured(
        sdk_port: object, emulator: FeetechEmulator, make_bus: Callable[..., FeetechBus],
) -> None:
    ph = sdk.sms_sts(sdk_port)
    for i in START:
        assert ph.unLockEprom(i) == (sdk.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(i, sdk.SMS_STS_OFS_L, ph.scs_toscs(-300, 11)) \
            == (sdk.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(i, sdk.SMS_STS_MIN_ANGLE_LIMIT_L, 200) == (sdk.COMM_SUCCESS, 0)
        assert ph.write2ByteTxRx(i, sdk.SMS_STS_MAX_ANGLE_LIMIT_L, 3900) == (sdk.COMM_SUCCESS, 0)
        assert ph.LockEprom(i) == (sdk.COMM_SUCCESS, 0)
        emulator.power_cycle(i)
    sdk_positions = {i: ph.ReadPos(i)[0] for i in START}
    sdk_port.closePort()  # type: ignore[attr-defined]
    bus = make_bus(dict(emulator.transport),
                   arm(homing_offset=-300, angle_limits=[200, 3900]))
    bus.open()
    states = bus.read()
    for i in START:
        assert states[i].position == pytest.approx((sdk_positions[i] - 2048) * TICK, abs=1e-12)
        assert emulator.register(i, "Homing_Offset") == -300
    bus.set_torque(True)
    bus.write({1: ActuatorCommand(position=-0.25)})
    assert wait_until(lambda: abs(bus.read()[1].position + 0.25) < 2 * TICK, 5)
