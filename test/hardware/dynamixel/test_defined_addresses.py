"""Every request covers only addresses the servo defines (e-Manual, Protocol 2.0).

The e-Manual's status packet error 0x07, Access Error: writing an address that is read
only or has not been defined, reading an address that is write only or has not been
defined, writing EEPROM with torque on. A servo (or an emulator written from that
sentence) answers Access Error to any READ or Sync Read whose range covers a gap of its
control table (66-67, 71-75 ... on the X430s) or a field its model lacks (Current Limit
on XL430 / XC430 / 2XL430; Bus Watchdog before firmware v38).

* The driver: every READ, Sync Read, Fast Sync Read, WRITE and Sync Write it sends at
  open, configure, set_torque, clear_faults, write and read covers defined addresses of
  that servo's model only (checked against ``ModelInfo.defined``, not the emulator), and
  Indirect Address 1..16 point at defined fields only.
* A servo without Bus Watchdog (firmware < 38): refused at open while
  ``device_watchdog`` is set (it would not stop when the host dies); with
  ``device_watchdog: 0`` driven without ever being sent 98.
* The emulator answers Access Error as the e-Manual says, per model and firmware.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

import pytest
from memory_port import MemoryPort

from skel_ros.emulation.dynamixel import EmulatedServo, ServoBus
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as p
from skel_ros.hardware.dynamixel.bus import DynamixelBus
from skel_ros.hardware.errors import ConfigError, TransportTimeoutError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from skel_ros.emulation.dynamixel import DynamixelEmulator

Inst = p.Instruction
ACCESS = p.StatusError.ACCESS
OLD_FIRMWARE = ct.BUS_WATCHDOG_FIRMWARE - 1


class _Wire(MemoryPort):
    """A port to in-process emulated servos; records every instruction packet sent."""

    def __init__(self, servos: Mapping[int, EmulatedServo]) -> None:
        import time

        super().__init__("wire")
        self.bus = ServoBus(servos, time.monotonic)
        self.sent: list[p.Packet] = []
        self.pending = b""

    def write(self, data: bytes) -> None:
        for packet in p.parse(data):
            self.sent.append(packet)
            self.pending += b"".join(reply for _, reply in self.bus.handle(packet))

    def read(self, size: int, timeout: float) -> bytes:  # noqa: ARG002 - answers are there
        if not self.pending:
            raise TransportTimeoutError("wire: nothing")
        out, self.pending = self.pending[:size], self.pending[size:]
        return out

    def reset_input(self) -> None:
        self.pending = b""


def _covered(packet: p.Packet) -> range | None:
    """The addresses a READ / WRITE / Sync Read / Sync Write covers (None: no range)."""
    inst, params = packet.instruction, packet.params
    if inst in (Inst.READ, Inst.SYNC_READ, Inst.FAST_SYNC_READ, Inst.SYNC_WRITE):
        address, size = struct.unpack_from("<HH", params)
        return range(address, address + size)
    if inst == Inst.WRITE:
        address, = struct.unpack_from("<H", params)
        return range(address, address + len(params) - 2)
    assert inst in (Inst.PING, Inst.REBOOT), inst  # nothing else is sent
    return None


def _check_requests(wire: _Wire, firmware: int) -> None:
    """Every request covers defined addresses of each servo it reaches; Indirect Address
    values written point at defined fields."""
    for packet in wire.sent:
        covered = _covered(packet)
        if covered is None:
            continue
        if packet.instruction in (Inst.SYNC_READ, Inst.FAST_SYNC_READ):
            ids = list(packet.params[4:])
        elif packet.instruction == Inst.SYNC_WRITE:
            size = len(covered)
            ids = list(packet.params[4::size + 1])
        else:
            ids = [packet.id]
        for dxl_id in ids:
            model = wire.bus.all_servos[dxl_id].model
            defined = model.defined(firmware)
            undefined = [a for a in covered if a not in defined]
            assert not undefined, (f"{Inst(packet.instruction).name} {covered.start}.."
                                   f"{covered.stop - 1} to id {dxl_id} ({model.name},"
                                   f" firmware {firmware}) covers undefined {undefined}")
            area = model.indirect[0]
            if packet.instruction == Inst.WRITE and covered.start == area.address:
                targets = struct.unpack_from(f"<{len(covered) // 2}H", packet.params, 2)
                fields = {a for f in model.fields(firmware)
                          for a in range(f.address, f.address + f.size)}
                assert set(targets) <= fields, (model.name, targets)


def _bus(wire: _Wire, actuators: list[ActuatorSpec], watchdog: float) -> DynamixelBus:
    spec = BusSpec("arm", "dynamixel", {"port": "wire", "timeout": 1.0},
                   device_watchdog=watchdog)
    return DynamixelBus(spec, actuators, transport=wire)


def _servos(models: Mapping[int, str], firmware: int) -> dict[int, EmulatedServo]:
    import time

    return {i: EmulatedServo.create(i, ct.MODELS[m], 0.1 * i, time.monotonic(),
                                    firmware=firmware) for i, m in models.items()}


@pytest.mark.parametrize("model", sorted(ct.MODELS))
def test_every_request_covers_defined_addresses_only(model: str) -> None:
    """Open, enable, a cycle, clear_faults (a reboot), disable, a keep_torque open: on
    every model, no request covers an undefined address. Before the fix open read
    64..135 and 38..55 in one READ each (gaps, and Current Limit on the XL430s)."""
    info = ct.MODELS[model]
    second = ControlMode.EFFORT if info.senses_current else ControlMode.VELOCITY
    acts = [ActuatorSpec(1, ControlMode.POSITION, model), ActuatorSpec(2, second, model)]
    wire = _Wire(_servos({1: model, 2: model}, ct.FAST_SYNC_READ_FIRMWARE))
    bus = _bus(wire, acts, 0.1)
    bus.open()
    bus.set_torque(True)
    bus.write({1: ActuatorCommand(position=0.2), 2: ActuatorCommand(velocity=0.5, effort=0.01)})
    assert sorted(bus.read()) == [1, 2]
    wire.bus.all_servos[2].inject_fault(0x20, wire.bus.clock())  # overload: torque off
    answers = bus.clear_faults()
    assert answers[2].startswith("rebooted (overload error); no error now")
    bus.set_torque(True)
    bus.close(torque_off=False)
    again = _bus(wire, acts, 0.1)
    again.open(keep_torque=True)
    assert all(s.torque_enabled for s in again.read().values())
    again.set_torque(False)
    _check_requests(wire, ct.FAST_SYNC_READ_FIRMWARE)


def test_old_firmware_is_refused_while_a_device_watchdog_is_configured() -> None:
    """Firmware v37 has no Bus Watchdog (98): with ``device_watchdog`` set, open fails
    before writing anything, naming the servo, its firmware and v38."""
    wire = _Wire(_servos({1: "XM430-W350", 2: "XL430-W250"}, OLD_FIRMWARE))
    acts = [ActuatorSpec(1, ControlMode.POSITION, "XM430-W350"),
            ActuatorSpec(2, ControlMode.POSITION, "XL430-W250")]
    with pytest.raises(ConfigError, match=rf"id 1 \(XM430-W350\) has firmware v{OLD_FIRMWARE},"
                       r" which has no Bus Watchdog \(98, from firmware v38 on\);"
                       r" device_watchdog 0.1 s needs it"):
        _bus(wire, acts, 0.1).open()
    assert [q.instruction for q in wire.sent if q.instruction == Inst.WRITE] == []
    _check_requests(wire, OLD_FIRMWARE)


def test_old_firmware_without_device_watchdog_is_never_sent_the_bus_watchdog() -> None:
    """``device_watchdog: 0``: servos with firmware v37 are driven; nothing covers 98,
    Indirect Address 16 points at Torque Enable (never 0xFF: no expired watchdog)."""
    models = {1: "XM430-W350", 2: "XL430-W250", 3: "XL330-M288"}
    wire = _Wire(_servos(models, OLD_FIRMWARE))
    acts = [ActuatorSpec(i, ControlMode.POSITION, m) for i, m in models.items()]
    bus = _bus(wire, acts, 0.0)
    bus.open()
    bus.set_torque(True)
    bus.write({i: ActuatorCommand(position=0.3) for i in models})
    states = bus.read()
    assert all(s.torque_enabled and s.error_code == 0 for s in states.values())
    bus.close(torque_off=False)
    again = _bus(wire, acts, 0.0)
    again.open(keep_torque=True)
    assert all(s.torque_enabled for s in again.read().values())
    _check_requests(wire, OLD_FIRMWARE)
    assert not any(ct.BUS_WATCHDOG.address in (_covered(q) or ()) for q in wire.sent)
    for dxl_id, servo in wire.bus.all_servos.items():
        area = servo.model.indirect[0]
        entry16, = struct.unpack_from("<H", servo.table, area.address + 2 * 15)
        assert entry16 == ct.TORQUE_ENABLE.address, dxl_id


def test_the_emulator_option_firmware_reaches_the_driver(
        make_emulator: Callable[..., DynamixelEmulator]) -> None:
    """Through the emulator process: ``firmware: 37`` and a device watchdog: refused."""
    emulator = make_emulator(firmware=OLD_FIRMWARE)
    spec = BusSpec("arm", "dynamixel", {**emulator.transport, "timeout": 0.5},
                   device_watchdog=0.2)
    bus = DynamixelBus(spec, [ActuatorSpec(i, ControlMode.POSITION, "XM430-W350")
                              for i in (1, 2, 3, 4)])
    try:
        with pytest.raises(ConfigError, match=f"firmware v{OLD_FIRMWARE}"):
            bus.open()
    finally:
        bus.close()
    assert emulator.register(1, "Torque Enable") == 0


# ---------------------------------------------------------------- the emulator


def _reply(bus: ServoBus, packet: bytes) -> list[p.Packet]:
    return [p.decode(r) for _, r in bus.handle(p.decode(packet))]


def _one(model: str, firmware: int = ct.FAST_SYNC_READ_FIRMWARE) -> ServoBus:
    return ServoBus(_servos({1: model, 2: model}, firmware), lambda: 100.0)


@pytest.mark.parametrize(("model", "address", "size", "error"), [
    ("XM430-W350", 64, 72, ACCESS),  # the old state block: 66-67, 71-75, 86-99 ...
    ("XM430-W350", 38, 18, ACCESS),  # the old limits block: 40-43
    ("XM430-W350", 64, 2, 0),  # Torque Enable, LED
    ("XM430-W350", 66, 1, ACCESS),
    ("XM430-W350", 68, 3, 0),  # Status Return Level .. Hardware Error Status
    ("XM430-W350", 38, 2, 0),  # Current Limit
    ("XM430-W350", 44, 12, 0),  # Velocity Limit .. Min Position Limit
    ("XM430-W350", 148, 1, ACCESS),  # between Backup Ready and Indirect Address 1
    ("XM430-W350", 252, 1, ACCESS),  # after Indirect Data 28
    ("XL430-W250", 38, 2, ACCESS),  # no Current Limit
    ("XL430-W250", 102, 2, ACCESS),  # no Goal Current
    ("2XL430-W250", 38, 2, ACCESS),
    ("XC430-W150", 100, 8, ACCESS),  # Goal PWM .. Goal Velocity over Goal Current
    ("XL430-W250", 104, 4, 0),
    ("XL330-M288", 38, 2, 0),
    ("XL330-M288", 228, 1, ACCESS),  # after its table
])
def test_the_emulator_refuses_reads_of_undefined_addresses(model: str, address: int,
                                                           size: int, error: int) -> None:
    bus = _one(model)
    [status] = _reply(bus, p.read(1, address, size))
    assert status.error == error
    assert len(status.data) == (0 if error else size)
    sync = _reply(bus, p.sync_read(address, size, [1, 2]))
    assert [s.error for s in sync] == [error, error]
    [fast] = _reply(bus, p.sync_read(address, size, [1, 2], fast=True))
    assert [e for _, e, _ in p.split_fast_status(fast, size)] == [error, error]


@pytest.mark.parametrize(("model", "address", "data"), [
    ("XM430-W350", 70, b"\x00"),  # Hardware Error Status: read only
    ("XM430-W350", 66, b"\x00"),  # undefined
    ("XM430-W350", 64, b"\x00\x00\x00"),  # Torque Enable, LED, then undefined 66
    ("XL430-W250", 102, b"\x00\x00"),  # no Goal Current
    ("XL430-W250", 38, b"\x10\x00"),  # no Current Limit
])
def test_the_emulator_refuses_writes_to_read_only_or_undefined_addresses(
        model: str, address: int, data: bytes) -> None:
    bus = _one(model)
    before = bytes(bus.all_servos[1].table)
    [status] = _reply(bus, p.write(1, address, data))
    assert status.error == ACCESS
    assert bytes(bus.all_servos[1].table) == before


@pytest.mark.parametrize(("firmware", "error"), [(OLD_FIRMWARE, ACCESS),
                                                 (ct.BUS_WATCHDOG_FIRMWARE, 0)])
def test_the_emulated_bus_watchdog_exists_from_firmware_38(firmware: int, error: int) -> None:
    bus = _one("XM430-W350", firmware)
    assert _reply(bus, p.read(1, ct.BUS_WATCHDOG.address, 1))[0].error == error
    assert _reply(bus, p.write(1, ct.BUS_WATCHDOG.address, b"\x05"))[0].error == error
    # Through Indirect Data too: Indirect Address 1 -> 98, then a write of Indirect Data 1.
    area = ct.MODELS["XM430-W350"].indirect[0]
    assert _reply(bus, p.write(1, area.address, struct.pack("<H", 98)))[0].error == 0
    assert _reply(bus, p.write(1, area.data, b"\x05"))[0].error == error


@pytest.mark.parametrize("firmware", ["48", 256, -1, True, 4.5])
def test_a_bad_emulator_firmware_is_a_config_error(firmware: object) -> None:
    from skel_ros.emulation.dynamixel import start_emulator

    with pytest.raises(ConfigError, match=r"firmware must be an integer in 0\.\.255"):
        start_emulator({"baudrate": 1_000_000},
                       [ActuatorSpec(1, ControlMode.POSITION, "XM430-W350")],
                       {"firmware": firmware})
