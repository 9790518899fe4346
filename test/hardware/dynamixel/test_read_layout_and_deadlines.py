"""Where each model's read block lies, and how long a read waits.

* Indirect Data 1 is at 224 on the X430/X540 series and at 208 on the XL330 (ROBOTIS
  e-Manual control tables): the driver reads each servo at its own model's address, in
  one request per address; the emulator keeps each model's own table.
* A read returns as soon as every answer is complete, also when byte stuffing or noise
  make the answer longer than expected; a request has one deadline (a missing servo
  costs one timeout, not two).
* Return Delay Time counts 2 µs units: the driver counts each unit once and refuses a
  ``return_delay_us`` it cannot write.

Waiting is judged on a simulated line (:class:`_Line`): it records each time the driver
asked for bytes that are not there, which a real port answers only at the timeout.
"""

from __future__ import annotations

import math
import struct
import time
from types import SimpleNamespace
from typing import TYPE_CHECKING

import pytest
from memory_port import MemoryPort
from scripted_servo import ScriptedServo

from skel_ros.emulation.dynamixel import EmulatedServo, start_emulator
from skel_ros.hardware.base import ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.dynamixel import bus as bus_module
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as p
from skel_ros.hardware.dynamixel.bus import READ_STRUCT, DynamixelBus
from skel_ros.hardware.errors import ConfigError, TransportTimeoutError

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.emulation.dynamixel import DynamixelEmulator

START = {1: 0.3, 2: -0.2, 3: 0.5, 4: 0.1}  # as in conftest.py
TICK = 2 * math.pi / 4096
XM430 = ct.MODELS["XM430-W350"]
XL330 = ct.MODELS["XL330-M288"]


# ---------------------------------------------------------------- the models' layouts


def test_each_model_has_the_e_manuals_indirect_layout() -> None:
    for name in ("XL330-M077", "XL330-M288"):  # Indirect Address 1..20, Data 1..20
        assert ct.MODELS[name].indirect == (ct.IndirectArea(168, 208, 20),)
        assert ct.MODELS[name].table_size == 228
    for model in ct.MODELS.values():
        assert model.indirect[0].count >= READ_STRUCT.size  # the read block fits
        if not model.name.startswith("XL330"):  # 1..28 at 168 / 224, 29..56 at 578 / 634
            assert model.indirect == (ct.IndirectArea(168, 224, 28),
                                      ct.IndirectArea(578, 634, 28))
            assert model.table_size == 662


def test_the_emulated_xl330_keeps_its_own_table() -> None:
    now = 5.0
    xl = EmulatedServo.create(1, XL330, 0.0, now)
    xm = EmulatedServo.create(2, XM430, 0.0, now)
    # Factory values: Indirect Address n points at Indirect Data n.
    assert struct.unpack_from("<H", xl.table, 168)[0] == 208
    assert struct.unpack_from("<H", xl.table, 206)[0] == 227
    assert xl.write(168, struct.pack("<HH", 132, 133), now) == 0  # Present Position
    error, data = xl.read(208, 2, now)
    assert (error, data) == (0, xl.table[132:134])
    assert xl.read(208, 20, now)[0] == 0
    # Beyond Indirect Data 20 (227) an XL330 has no table: XM430's addresses are refused.
    assert xl.read(224, 16, now)[0] == p.StatusError.ACCESS
    assert xl.read(634, 1, now)[0] == p.StatusError.ACCESS
    assert xl.write(578, b"\x00\x00", now) == p.StatusError.ACCESS
    assert xm.read(224, 16, now)[0] == 0
    assert xm.read(634, 28, now)[0] == 0


# ---------------------------------------------------------------- D1: the driver


def _acts(models: dict[int, str]) -> list[ActuatorSpec]:
    return [ActuatorSpec(i, ControlMode.POSITION, name) for i, name in models.items()]


@pytest.mark.parametrize("fast", [True, False])
def test_xl330_servos_are_read_at_their_own_indirect_data(
        make_emulator: Callable[..., DynamixelEmulator],
        make_bus: Callable[..., DynamixelBus], fast: bool) -> None:
    acts = _acts(dict.fromkeys(START, "XL330-M288"))
    emulator = make_emulator(acts)
    bus = make_bus(emulator.transport, acts, fast_sync_read=fast)
    bus.open()
    assert bus.model_of(1) is XL330
    before = emulator.counts()["packets"]
    states = bus.read()
    assert emulator.counts()["packets"] == before + 1  # one kind of servo: one request
    for i, start in START.items():
        assert states[i].position == pytest.approx(start, abs=TICK)
        assert states[i].voltage == pytest.approx(12.0)
        assert states[i].temperature == 32.0
        assert not states[i].torque_enabled
    bus.set_torque(True)
    assert all(emulator.state(i).torque_enabled for i in START)


@pytest.mark.parametrize("fast", [True, False])
def test_a_mixed_bus_reads_each_model_at_its_address_in_one_cycle(
        make_emulator: Callable[..., DynamixelEmulator],
        make_bus: Callable[..., DynamixelBus], fast: bool) -> None:
    acts = _acts({1: "XM430-W350", 2: "XL330-M288", 3: "XL330-M077", 4: "XM430-W350"})
    emulator = make_emulator(acts)
    bus = make_bus(emulator.transport, acts, fast_sync_read=fast)
    bus.open()
    assert bus.fast_sync_read is fast
    before = emulator.counts()["packets"]
    states = bus.read()
    assert emulator.counts()["packets"] == before + 2  # a request per Indirect Data address
    assert list(states) == [1, 2, 3, 4]  # the configured order
    for i, start in START.items():
        assert states[i].position == pytest.approx(start, abs=TICK)
        assert states[i].voltage == pytest.approx(12.0)
    bus.set_torque(True)
    assert all(emulator.state(i).torque_enabled for i in START)
    assert all(s.torque_enabled for s in bus.read().values())


# ---------------------------------------------------------------- D2, D3: waiting


class _Line(MemoryPort):
    """A simulated port: each request's answer is on the line at once.

    ``read(size, timeout)`` returns ``size`` bytes when they are there; otherwise a real
    port waits the whole ``timeout``: recorded in :attr:`waits`, the clock advanced by
    it, then what is there returned (nothing: a timeout).
    """

    def __init__(self, answer: Callable[[p.Packet], bytes]) -> None:
        super().__init__("line")
        self.answer = answer
        self.pending = b""
        self.now = 1000.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def write(self, data: bytes) -> None:
        for packet in p.parse(data):
            self.pending += self.answer(packet)

    def read(self, size: int, timeout: float) -> bytes:
        if len(self.pending) < size:
            self.waits.append(timeout)
            self.now += timeout
            if not self.pending:
                raise TransportTimeoutError("line: nothing")
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def reset_input(self) -> None:
        self.pending = b""


def _values(i: int, *, stuffing: bool) -> bytes:
    # With stuffing: Present Current -1 (FF FF), then Present Velocity 0x...FD: FF FF FD.
    current, velocity = (-1, 0x123FD) if stuffing else (10, -3)
    return READ_STRUCT.pack(0, 1, current, velocity, 2048 + 100 * i, 121, 30 + i, 5)


def _answer(fast: bool, *, stuffing: bool = False, noise: bytes = b"",
            silent: frozenset[int] = frozenset()) -> Callable[[p.Packet], bytes]:
    """What the servos send for a Sync Read (``silent`` ones send nothing)."""
    def answer(packet: p.Packet) -> bytes:
        ids = [i for i in packet.params[4:] if i not in silent]
        records = [(i, 0, _values(i, stuffing=stuffing and i == 2)) for i in ids]
        if fast:
            return noise + p.build_fast_status(records)
        return noise + b"".join(p.build_status(i, e, d) for i, e, d in records)
    return answer


def _bus(line: _Line, fast: bool, monkeypatch: pytest.MonkeyPatch) -> DynamixelBus:
    """A bus on ``line`` as open() leaves it (fixed 50 ms timeout), on the line's clock."""
    monkeypatch.setattr(bus_module, "time", SimpleNamespace(monotonic=line.monotonic,
                                                            sleep=time.sleep))
    spec = BusSpec("arm", "dynamixel", {"port": "line", "timeout": 0.05})
    bus = DynamixelBus(spec, _acts(dict.fromkeys(START, "XM430-W350")), line.monotonic,
                       transport=line)
    bus._open = True
    bus.fast_sync_read = fast
    bus._build_read_packet()
    for servo in bus._servos.values():
        servo.effort_scale = 0.004
    return bus


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(("stuffing", "noise"), [
    (True, b""), (False, b"\x00\x11\x22"), (True, b"\xff\xff\x00")],
    ids=["stuffing", "noise", "noise+stuffing"])
def test_a_longer_answer_is_read_without_waiting_for_the_timeout(
        fast: bool, stuffing: bool, noise: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte stuffing (the e-Manual's rule for FF FF FD in a status packet's data) and
    noise before the answers make it longer than expected; every byte is on the line,
    so the read completes without a wait."""
    line = _Line(_answer(fast, stuffing=stuffing, noise=noise))
    bus = _bus(line, fast, monkeypatch)
    states = bus.read()
    assert line.waits == []
    assert line.pending == b""
    assert states[2].effort == pytest.approx((-1 if stuffing else 10) * 0.004)
    assert states[2].velocity == pytest.approx(
        (0x123FD if stuffing else -3) * ct.RAD_S_PER_VELOCITY_UNIT)
    for i in START:
        assert states[i].position == pytest.approx(100 * i * ct.RAD_PER_TICK)
        assert states[i].temperature == 30 + i
    assert bus.stats["garbage_bytes"] == len(noise)


@pytest.mark.parametrize("fast", [True, False])
def test_a_missing_servo_costs_one_timeout(fast: bool,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    line = _Line(_answer(fast, silent=frozenset({2})))
    bus = _bus(line, fast, monkeypatch)
    started = line.now
    with pytest.raises(TransportTimeoutError, match=r"\[2\]"):
        bus.read()
    assert line.now - started == pytest.approx(0.05)  # one deadline for the request
    line.answer = _answer(fast)
    assert sorted(bus.read()) == [1, 2, 3, 4]  # the next cycle starts clean


def test_a_stuffed_answer_on_a_real_port_comes_back_well_within_the_timeout(
        make_bus: Callable[..., DynamixelBus]) -> None:
    """The same on a pty with the serial transport: a 2 s timeout, the answer there at
    once. Before the fix this read took the whole timeout; the bound is half of it."""
    servos = ScriptedServo(_answer(fast=False, stuffing=True))
    try:
        bus = make_bus({"port": servos.port, "baudrate": 1_000_000},
                       _acts(dict.fromkeys(START, "XM430-W350")), fast_sync_read=False,
                       timeout=2.0)
        assert bus.timeout == 2.0
        bus.transport.open()
        bus._open = True
        bus._build_read_packet()
        started = time.monotonic()
        states = bus.read()
        assert time.monotonic() - started < 1.0
        assert states[2].position == pytest.approx(200 * ct.RAD_PER_TICK)
        bus.close(torque_off=False)
    finally:
        servos.close()


# ---------------------------------------------------------------- Return Delay Time


@pytest.mark.parametrize("value", [1, 3, 501])
def test_an_odd_return_delay_is_refused(value: int) -> None:
    spec = BusSpec("arm", "dynamixel", {"port": "/dev/null"}, {"return_delay_us": value})
    with pytest.raises(ConfigError, match=rf"return_delay_us {value} is not a multiple of 2"):
        DynamixelBus(spec, _acts({1: "XM430-W350"}))
    with pytest.raises(ConfigError, match="return_delay_us"):
        start_emulator({"baudrate": 1_000_000}, _acts({1: "XM430-W350"}),
                       {"return_delay_us": value})


def test_the_return_delay_counts_once_in_the_timeout(
        make_emulator: Callable[..., DynamixelEmulator]) -> None:
    """``return_delay_us: 500`` is Return Delay Time 250 (2 µs units): each of the four
    answers may come 500 µs late, not 1 ms."""
    emulator = make_emulator()
    spec = BusSpec("arm", "dynamixel", dict(emulator.transport),
                   {"return_delay_us": 500, "fast_sync_read": False}, timeout_margin=0.5)
    bus = DynamixelBus(spec, _acts(dict.fromkeys(START, "XM430-W350")))
    try:
        bus.open()
        assert emulator.register(1, "Return Delay Time") == 250
        [group] = bus._read_groups
        wire = (len(group.packet) + group.reply_size) * 10 / 1_000_000
        assert group.timeout == pytest.approx(wire + 4 * 500e-6 + 0.5, abs=1e-9)
    finally:
        bus.close()


def test_a_shorter_late_answer_before_its_own_costs_no_wait(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two servo kinds, two Fast Sync Reads a cycle. The [1, 2] request finds a late
    answer to an earlier [3] request on the line before its own: the late one is dropped
    (counted), and only the rest of its own answer is asked for, not a whole answer's
    worth, which a real port would wait the whole timeout for."""
    late = p.build_fast_status([(3, 0, _values(3, stuffing=False))])
    own = _answer(True)
    asked: list[list[int]] = []

    def answer(packet: p.Packet) -> bytes:
        ids = list(packet.params[4:])
        asked.append(ids)
        return (late if len(asked) == 1 else b"") + own(packet)

    line = _Line(answer)
    monkeypatch.setattr(bus_module, "time", SimpleNamespace(monotonic=line.monotonic,
                                                            sleep=time.sleep))
    spec = BusSpec("arm", "dynamixel", {"port": "line", "timeout": 0.05})
    bus = DynamixelBus(spec, _acts({1: "XM430-W350", 2: "XM430-W350", 3: "XL330-M288"}),
                       line.monotonic, transport=line)
    bus._open = True
    bus.fast_sync_read = True
    bus._build_read_packet()
    states = bus.read()
    assert asked == [[1, 2], [3]]
    assert line.waits == []
    assert bus.stats["late_answers"] == 1
    for i in (1, 2, 3):
        assert states[i].position == pytest.approx(100 * i * ct.RAD_PER_TICK)
