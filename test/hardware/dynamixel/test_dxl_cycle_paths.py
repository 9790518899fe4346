"""The control cycle's paths: the emulator's Sync Write, the driver's two read decoders.

* The emulator: a Sync Write is a WRITE per servo, applied or refused per servo.
* The driver: a complete, clean Sync / Fast Sync Read answer is decoded with one
  ``struct`` unpack; anything else (stuffing, another order, garbage, a split read)
  goes through the packet reader. Both give the same states.
"""

from __future__ import annotations

import random
import struct

import pytest
from memory_port import MemoryPort

from skel_ros.emulation.dynamixel import EmulatedServo, ServoBus
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as p
from skel_ros.hardware.dynamixel.bus import READ_STRUCT, DynamixelBus
from skel_ros.hardware.errors import DeviceError, ProtocolError, TransportTimeoutError

NOW = 100.0
XM430 = ct.MODELS["XM430-W350"]


def test_sync_write_applies_per_servo_and_refuses_per_servo() -> None:
    servos = {i: EmulatedServo.create(i, ct.MODELS["XM430-W350"], 0.0, NOW - 1.0)
              for i in (1, 2, 3)}
    bus = ServoBus(servos, lambda: NOW)
    for s in servos.values():
        assert s.write(ct.TORQUE_ENABLE.address, b"\x01", NOW - 0.5) == 0
    # id 2's goal is beyond Max Position Limit (4095): refused, the others applied.
    [packet] = p.parse(p.sync_write_values(116, "i", [1, 1000, 2, 5000, 3, 3000, 9, 7]))
    assert bus.handle(packet) == []
    goals = {i: int.from_bytes(s.table[116:120], "little", signed=True)
             for i, s in servos.items()}
    assert goals == {1: 1000, 2: 2048, 3: 3000}
    assert servos[1].motor._target_p == pytest.approx((1000 - 2048) * ct.RAD_PER_TICK)
    # A Sync Write reaching the indirect area: refused while torque is on.
    [packet] = p.parse(p.sync_write(XM430.indirect[0].data, 1, {1: b"\x00", 2: b"\x00"}))
    bus.handle(packet)
    assert servos[1].table[ct.TORQUE_ENABLE.address] == 1  # torque on: indirect refused


class _Replay(MemoryPort):
    """Answers every read with the next chunk of ``chunks``."""

    def __init__(self) -> None:
        super().__init__("replay")
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> None:  # noqa: ARG002 - nobody answers writes here
        return

    def read(self, size: int, timeout: float) -> bytes:  # noqa: ARG002
        if not self.chunks:
            raise TransportTimeoutError("replay: nothing left")
        chunk = self.chunks[0][:size]
        self.chunks[0] = self.chunks[0][size:]
        if not self.chunks[0]:
            self.chunks.pop(0)
        return chunk

    def reset_input(self) -> None:
        return


IDS = (1, 2, 3, 4)


def _bus(fast: bool) -> tuple[DynamixelBus, _Replay]:
    replay = _Replay()
    acts = [ActuatorSpec(i, ControlMode.POSITION, "XM430-W350") for i in IDS]
    bus = DynamixelBus(BusSpec("arm", "dynamixel", {"port": "replay"}), acts, lambda: 7.0,
                       transport=replay)
    bus._open = True
    bus._link.dirty = False
    bus.fast_sync_read = fast
    bus._build_read_packet()
    for servo in bus._servos.values():
        servo.effort_scale = 0.004
    return bus, replay


def _records(stuffing: bool) -> list[tuple[int, int, bytes]]:
    # With stuffing: Present Current -1 (FF FF) then Present Velocity 0x...FD: FF FF FD.
    current, velocity = (-1, 0x123FD) if stuffing else (10, -3)
    return [(i, 0x80 * (i == 3), READ_STRUCT.pack(0x20 * (i == 2), 1, current, velocity,
                                                  2048 + 100 * i, 121, 30 + i,
                                                  0xFF if i == 4 else 5))  # 4: watchdog expired
            for i in IDS]


def _answers(fast: bool, records: list[tuple[int, int, bytes]]) -> list[bytes]:
    if fast:
        return [p.build_fast_status(records)]
    return [p.build_status(i, e, d) for i, e, d in records]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("stuffing", [False, True])
def test_split_reordered_and_garbled_answers_decode_alike(fast: bool, stuffing: bool) -> None:
    records = _records(stuffing)
    answers = _answers(fast, records)
    clean = b"".join(answers)
    variants = {"clean": [clean], "split": [clean[:5], clean[5:40], clean[40:]],
                "garbage first": [b"\x00\xff\x13" + clean],
                "garbage after": [clean + b"\xff\xff"]}
    if not fast:
        variants["reordered"] = [b"".join(answers[::-1])]
    reference, _ = _bus(fast)
    reference._transport.chunks = [clean]
    expected = reference.read()
    assert expected[2].error_code == 0x20
    assert expected[2].fault
    assert expected[1].position == pytest.approx(100 * ct.RAD_PER_TICK)
    assert expected[4].temperature == 34.0
    assert expected[4].error_code == ct.BUS_WATCHDOG_FAULT
    assert expected[4].fault == "bus watchdog expired"
    assert expected[3].error_code == 0
    assert expected[1].effort == pytest.approx((-1 if stuffing else 10) * 0.004)
    for name, chunks in variants.items():
        bus, replay = _bus(fast)
        replay.chunks = list(chunks)
        assert bus.read() == expected, name


@pytest.mark.parametrize("fast", [True, False])
def test_a_status_error_in_a_clean_answer_raises(fast: bool) -> None:
    records = _records(stuffing=False)
    records[1] = (2, 0x80 | p.StatusError.DATA_RANGE, records[1][2])
    bus, replay = _bus(fast)
    replay.chunks = [b"".join(_answers(fast, records))]
    with pytest.raises(DeviceError, match=r"id 2.*data range error"):
        bus.read()


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("flip", range(0, 108, 7))
def test_a_damaged_byte_in_a_whole_answer_is_never_decoded(fast: bool, flip: int) -> None:
    """A complete answer of the right size with one byte changed anywhere (header, id,
    length, error, data, CRC) does not pass as clean: the packet reader refuses it."""
    answer = bytearray(b"".join(_answers(fast, _records(stuffing=False))))
    assert len(answer) == (88 if fast else 108)
    answer[flip % len(answer)] ^= 0x10
    bus, replay = _bus(fast)
    replay.chunks = [bytes(answer)]
    with pytest.raises((ProtocolError, TransportTimeoutError, DeviceError)):
        bus.read()


@pytest.mark.parametrize("fast", [True, False])
def test_random_cycles_decode_like_the_packet_reader(fast: bool) -> None:
    rng = random.Random(3)  # noqa: S311 - reproducible test data
    for _ in range(200):
        records = [(i, rng.choice((0, 0x80)),
                    bytes(rng.randrange(256) for _ in range(READ_STRUCT.size))) for i in IDS]
        answers = b"".join(_answers(fast, records))
        fast_bus, replay = _bus(fast)
        replay.chunks = [answers]
        slow_bus, slow = _bus(fast)
        slow.chunks = [answers[:3], answers[3:]]  # never one complete read: the reader
        got, want = fast_bus.read(), slow_bus.read()
        assert got == want
        for i, _, data in records:
            hw, torque, _, _, position, voltage, temperature, watchdog = struct.unpack(
                "<BBhiiHBB", data)
            assert got[i].error_code == hw | (0x100 if watchdog == 0xFF else 0)
            assert got[i].torque_enabled == (torque == 1)
            assert got[i].position == pytest.approx((position - 2048) * ct.RAD_PER_TICK)
            assert got[i].voltage == pytest.approx(voltage * 0.1)
            assert got[i].temperature == temperature


def test_write_still_clamps_and_skips_nan() -> None:
    bus, _ = _bus(fast=True)
    sent: list[bytes] = []
    bus._transport.write = sent.append  # type: ignore[method-assign]
    for servo in bus._servos.values():
        servo.goal_lo, servo.goal_hi = 1000, 3000
    bus.write({1: ActuatorCommand(position=0.0), 2: ActuatorCommand(),
               3: ActuatorCommand(position=10.0), 4: ActuatorCommand(position=-10.0)})
    assert sent == [p.sync_write_values(116, "i", [1, 2048, 3, 3000, 4, 1000])]
