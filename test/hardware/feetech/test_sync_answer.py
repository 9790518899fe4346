"""The Sync Read answer, decoded without the packet parser when it is clean.

On in-process emulated servos (no pty, no thread) whose Sync Read answer the test
replaces: a clean answer is split and decoded in a few calls, anything else by the
packet parser; both give the same states, decoded as the memory table says, and a packet
out of order or with a bad checksum is never taken for another servo's or as valid.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skel_ros.emulation.feetech import EmulatedServo, ServoBus
from skel_ros.hardware.base import BusSpec
from skel_ros.hardware.errors import TransportTimeoutError
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech import protocol as p
from skel_ros.hardware.feetech.bus import FeetechBus

if TYPE_CHECKING:
    from collections.abc import Callable

from feetech_arm import START, arm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "dynamixel"))
from memory_port import MemoryPort  # the in-memory port of the driver tests

MODEL = ct.MODELS["STS3215-C001"]
# Per id: Present_Position, Present_Velocity, Present_Load, Status (raw register values).
# Sign-magnitude: 0x8000 | 25 is -25 ticks/s; 0x400 | 300 is -300 load units, and the
# bits above Present_Load's sign (0x800) are not part of its value; 0x8000 is "-0", a
# position of 0; 5000 lies beyond one turn (multi-turn): no joint position.
RAW = {1: (3000, 0x8000 | 25, 0x0800 | 0x400 | 300, 0),
       2: (0x8000, 40, 120, 0x20),
       3: (5000, 0, 0x400, 0x04)}


class _Wire(MemoryPort):
    """A port to in-process emulated servos; ``answer`` replaces Sync Read answers."""

    def __init__(self) -> None:
        super().__init__("wire")
        now = time.monotonic()
        self.bus = ServoBus({i: EmulatedServo.create(i, MODEL, START[i], now, return_delay=0)
                             for i in START}, time.monotonic)
        self.pending = b""
        self.answer: Callable[[bytes], bytes] | None = None

    def write(self, data: bytes) -> None:
        for packet in p.parse(data):
            reply = b"".join(r for _, r in self.bus.handle(packet, time.monotonic()))
            if packet.code == p.Instruction.SYNC_READ and self.answer is not None:
                reply = self.answer(reply)
            self.pending += reply

    def read(self, size: int, timeout: float) -> bytes:  # noqa: ARG002 - answers are there
        if not self.pending:
            raise TransportTimeoutError("wire: nothing")
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def reset_input(self) -> None:
        self.pending = b""


def _packet(servo_id: int) -> bytes:
    """Servo ``servo_id``'s answer to the Sync Read of the block, with ``RAW``'s values."""
    position, speed, load, status = RAW[servo_id]
    block = bytearray(ct.READ_SIZE)

    def put(fld: ct.Field, value: int) -> None:
        at = fld.address - ct.READ_START
        block[at:at + fld.size] = value.to_bytes(fld.size, "little")

    put(ct.TORQUE_ENABLE, 1)
    put(ct.PRESENT_POSITION, position)
    put(ct.PRESENT_VELOCITY, speed)
    put(ct.PRESENT_LOAD, load)
    put(ct.PRESENT_VOLTAGE, 70 + servo_id)
    put(ct.PRESENT_TEMPERATURE, 30 + servo_id)
    put(ct.STATUS, status)
    return p.build_status(servo_id, 0, bytes(block))


def _expected(servo_id: int) -> tuple[object, ...]:
    """A state's values (as _read lists them), from the table."""
    position, speed, load, status = RAW[servo_id]
    tick = ct.decode_sm(position, 15)
    inside = 0 <= tick <= MODEL.max_tick
    code = status | (0 if inside else ct.POSITION_RANGE_FAULT)
    return ((tick - MODEL.center) * MODEL.rad_per_tick if inside else math.nan,
            ct.decode_sm(speed, 15) * MODEL.rad_per_tick,
            ct.decode_sm(load, 10) * ct.LOAD_UNIT * MODEL.stall_torque,
            True, code, ct.describe_error(code), 30.0 + servo_id,
            (70 + servo_id) * ct.VOLTAGE_UNIT)


@pytest.fixture(scope="module")
def rig() -> tuple[FeetechBus, _Wire]:
    """Three STS3215 on the wire, opened and configured by the driver."""
    wire = _Wire()
    bus = FeetechBus(BusSpec("arm", "feetech", {"port": "wire", "timeout": 0.05}), arm(),
                     transport=wire)
    bus.open()
    return bus, wire


def _read(rig: tuple[FeetechBus, _Wire], answer: Callable[[bytes], bytes]) -> dict:
    bus, wire = rig
    wire.answer = answer
    before = time.monotonic()
    try:
        states = bus.read()
    finally:
        wire.answer = None
    assert all(before <= s.stamp <= time.monotonic() for s in states.values())
    return {i: (s.position, s.velocity, s.effort, s.torque_enabled, s.error_code, s.fault,
                s.temperature, s.voltage) for i, s in states.items()}


def _same(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for servo_id, values in want.items():
        numbers = [k for k, v in enumerate(values) if isinstance(v, float)]
        assert [got[servo_id][k] for k in numbers] == pytest.approx(
            [values[k] for k in numbers], nan_ok=True), servo_id
        assert [v for k, v in enumerate(got[servo_id]) if k not in numbers] == [
            v for k, v in enumerate(values) if k not in numbers], servo_id


def test_a_clean_answer_and_a_noisy_one_decode_as_the_table_says(
        rig: tuple[FeetechBus, _Wire]) -> None:
    bus = rig[0]
    clean = b"".join(_packet(i) for i in START)
    want = {i: _expected(i) for i in START}
    garbage = bus.stats["garbage_bytes"]
    _same(_read(rig, lambda _: clean), want)
    assert bus.stats["garbage_bytes"] == garbage  # taken whole: no parser on it
    _same(_read(rig, lambda _: b"\x00\xff" + clean), want)  # noise first: the parser's
    assert bus.stats["garbage_bytes"] == garbage + 2
    states = bus.read()  # the emulated servos themselves again
    assert [round(states[i].position, 3) for i in START] == pytest.approx(
        [round(START[i], 3) for i in START], abs=2e-3)


def test_packets_out_of_order_go_to_the_servos_that_sent_them(
        rig: tuple[FeetechBus, _Wire]) -> None:
    swapped = _packet(2) + _packet(1) + _packet(3)
    _same(_read(rig, lambda _: swapped), {i: _expected(i) for i in START})


def test_a_packet_with_a_bad_checksum_is_not_taken(rig: tuple[FeetechBus, _Wire]) -> None:
    bad = bytearray(_packet(2))
    bad[5 + ct.PRESENT_POSITION.address - ct.READ_START] ^= 0x01  # one bit of the position
    answer = _packet(1) + bytes(bad) + _packet(3)
    with pytest.raises(TransportTimeoutError,
                       match=r"Sync Read: no complete answer from id\(s\) \[2\]"):
        _read(rig, lambda _: answer)
    assert len(rig[0].read()) == len(START)  # the next cycle reads again
