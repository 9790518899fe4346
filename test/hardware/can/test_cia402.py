"""Cia402Bus against the CiA 402 emulator (canopen LocalNodes) on python-can's virtual bus.

The emulated shafts move on a manual clock (advanced by the tests, applied at each SYNC),
and the driver's clock is a manual one too where heartbeat supervision is tested, so no
test waits for anything in real time.
"""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING, Any

import pytest

from skel_ros.emulation.canopen402 import Cia402Emulator
from skel_ros.hardware import canopen402
from skel_ros.hardware.base import (
    ActuatorCommand,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.canopen402.bus import Cia402Bus, state_of, units_for
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)
from skel_ros.hardware.plugins import bus_class

if TYPE_CHECKING:
    from collections.abc import Iterator

CPR = 65536 / (2 * math.pi)  # default counts per rad


class Clock:
    def __init__(self, t: float = 50.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _acts() -> list[ActuatorSpec]:
    return [ActuatorSpec(1, ControlMode.POSITION, name="hip"),
            ActuatorSpec(2, ControlMode.VELOCITY, options={"counts_per_rev": 4096},
                         name="knee"),
            ActuatorSpec(3, ControlMode.EFFORT, options={"rated_torque": 2.0}, name="ankle")]


class Rig:
    def __init__(self, actuators: list[ActuatorSpec], emulated: list[ActuatorSpec] | None = None,
                 bus_clock: Any = time.monotonic, **options: Any) -> None:
        self.clock = Clock()
        self.emulator = Cia402Emulator({}, actuators if emulated is None else emulated,
                                       {"clock": self.clock,
                                        "initial_positions": {1: 0.3, 2: -0.2}})
        self.spec = BusSpec("arm", "canopen", self.emulator.transport,
                            {"sync_timeout": 0.5, **options})
        self.bus = Cia402Bus(self.spec, actuators, bus_clock)

    def close(self) -> None:
        self.bus.close()
        self.emulator.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig(_acts())
    yield r
    r.close()


def test_protocol_table_loads_the_driver() -> None:
    assert bus_class("canopen") is Cia402Bus


def test_open_nmt_pdos_torque_off(rig: Rig) -> None:
    assert rig.emulator.nmt_state(1) == "PRE-OPERATIONAL"
    rig.bus.open()
    assert [rig.emulator.nmt_state(i) for i in (1, 2, 3)] == ["OPERATIONAL"] * 3
    assert [rig.emulator.drive_state(i) for i in (1, 2, 3)] == ["READY TO SWITCH ON"] * 3
    states = rig.bus.read()
    assert states[1].position == pytest.approx(0.3, abs=1 / CPR)
    assert states[2].position == pytest.approx(-0.2, abs=2 * math.pi / 4096)
    assert not any(s.torque_enabled for s in states.values())
    rig.bus.close()
    assert rig.emulator.nmt_state(1) == "PRE-OPERATIONAL"
    assert rig.emulator.drive_state(1) == "READY TO SWITCH ON"


def test_enable_move_disable_in_csp_csv_cst(rig: Rig) -> None:
    rig.bus.open()
    rig.bus.set_torque(True)
    assert [rig.emulator.drive_state(i) for i in (1, 2, 3)] == ["OPERATION ENABLED"] * 3
    assert rig.emulator.state(1).position == pytest.approx(0.3, abs=1e-4)  # no jump
    rig.bus.write({1: ActuatorCommand(position=1.0), 2: ActuatorCommand(velocity=0.5),
                   3: ActuatorCommand(effort=0.01)})
    rig.clock.t += 1.0
    # Synchronous RPDOs: nothing applied before the SYNC.
    assert rig.emulator.state(1).position == pytest.approx(0.3, abs=1e-4)
    rig.bus.read()            # SYNC: the drives take the targets
    rig.clock.t += 2.0
    states = rig.bus.read()   # SYNC: the shafts advanced 2 s
    assert states[1].position == pytest.approx(1.0, abs=1e-3)
    assert states[2].velocity == pytest.approx(0.5, abs=2 * math.pi / 4096)
    assert states[3].effort == pytest.approx(0.01, abs=2.0 / 1000)
    assert rig.emulator.state(3).effort == pytest.approx(0.01)
    assert all(s.torque_enabled for s in states.values())
    rig.bus.set_torque(False, [2])
    assert rig.emulator.drive_state(2) == "READY TO SWITCH ON"
    assert not rig.emulator.state(2).torque_enabled
    assert rig.emulator.state(1).torque_enabled


def test_profile_position_takes_set_points_on_the_edge() -> None:
    r = Rig([ActuatorSpec(1, ControlMode.POSITION, options={"op_mode": "pp"})])
    try:
        r.bus.open()
        r.bus.set_torque(True)
        for goal in (0.8, -0.5):
            r.bus.write({1: ActuatorCommand(position=goal)})
            r.bus.read()
            r.clock.t += 2.0
            r.bus.write({1: ActuatorCommand(position=goal)})  # bit 4 back to 0
            assert r.bus.read()[1].position == pytest.approx(goal, abs=1e-3)
    finally:
        r.close()


def test_emcy_fault_is_reported_and_a_reopen_with_reset_faults_resets_it() -> None:
    r = Rig(_acts(), reset_faults=True)
    try:
        r.bus.open()
        r.bus.set_torque(True)
        r.emulator.inject_fault(2, 0x2310)
        time.sleep(0.05)  # the EMCY reaches the driver
        state = r.bus.read()[2]
        assert (state.error_code, state.torque_enabled) == (0x2310, False)
        assert re.search(r"FAULT.*0x2310.*EMCY 0x2310 Current", state.fault)
        assert not r.emulator.state(2).torque_enabled
        with pytest.raises(DeviceError, match=r"node 2.*FAULT.*0x2310") as info:
            r.bus.set_torque(True, [2])
        assert (info.value.actuator_id, info.value.code) == (2, 0x2310)
        r.bus.close()
        r.bus.open()  # reset_faults: fault reset by SDO, then shutdown
        assert r.emulator.drive_state(2) == "READY TO SWITCH ON"
        assert r.bus.read()[2].error_code == 0
        r.bus.set_torque(True)
        assert r.emulator.drive_state(2) == "OPERATION ENABLED"
    finally:
        r.close()


def test_clear_faults_and_a_fault_found_when_opening() -> None:
    r = Rig(_acts())
    try:
        r.bus.open()
        r.emulator.inject_fault(1, 0x4310)
        time.sleep(0.05)
        assert "Temperature" in r.bus.read()[1].fault
        r.bus.clear_faults([1])
        assert r.emulator.drive_state(1) == "SWITCH ON DISABLED"
        r.bus.set_torque(True)
        assert r.emulator.drive_state(1) == "OPERATION ENABLED"
        r.emulator.inject_fault(1, 0x4310)
        r.bus.close()
        r.bus.open()   # opens; the fault is reported until clear_faults
        assert r.bus.is_open
        assert r.bus.read()[1].error_code == 0x4310
        assert r.emulator.drive_state(1) == "FAULT"
    finally:
        r.close()


def test_heartbeat_loss_is_a_transport_error() -> None:
    bus_clock = Clock(0.0)
    r = Rig(_acts(), bus_clock=bus_clock, heartbeat_ms=20, heartbeat_timeout=0.5)
    try:
        r.bus.open()
        r.bus.read()
        r.emulator.stop_heartbeat(1)
        bus_clock.t += 5.0  # on the driver's clock: far past the timeout for node 1
        with pytest.raises(TransportError, match=r"node 1\).*heartbeat lost") as info:
            r.bus.read()
        assert not isinstance(info.value, TransportTimeoutError)
    finally:
        r.close()


def test_reboot_is_noticed() -> None:
    r = Rig(_acts(), heartbeat_ms=10)
    try:
        r.bus.open()
        r.emulator.reboot(3)
        # The rebooted drive is PRE-OPERATIONAL: no TPDO, and its boot-up is reported.
        with pytest.raises(TransportError, match="node 3"):
            r.bus.read()
        r.bus.close()
        r.bus.open()
        assert set(r.bus.read()) == {1, 2, 3}
    finally:
        r.close()


def test_missing_drive_fails_open() -> None:
    acts = _acts()
    r = Rig(acts, emulated=acts[:2], sdo_timeout=0.1)
    try:
        with pytest.raises(TransportTimeoutError, match=r"node\(s\) \[3\] did not answer"):
            r.bus.open()
        assert not r.bus.is_open
    finally:
        r.close()


def test_nan_target_is_refused(rig: Rig) -> None:
    rig.bus.open()
    with pytest.raises(ProtocolError, match="not a finite number"):
        rig.bus.write({1: ActuatorCommand(position=math.nan)})
    with pytest.raises(ConfigError, match="no CiA 402 drive"):
        rig.bus.write({7: ActuatorCommand(position=0.0)})


def test_config_errors(tmp_path: Any) -> None:
    spec = BusSpec("b", "canopen", {"interface": "virtual", "channel": "unused"})
    cases = [
        (ActuatorSpec(1, ControlMode.IMPEDANCE), "not available on CiA 402"),
        (ActuatorSpec(1, ControlMode.POSITION, options={"op_mode": "csv"}), "does not fit"),
        (ActuatorSpec(1, ControlMode.POSITION, options={"op_mode": "homing"}), "op_mode must"),
        (ActuatorSpec(1, ControlMode.POSITION, options={"counts_per_rev": 1,
                                                        "counts_per_rad": 1}), "not both"),
        (ActuatorSpec(1, ControlMode.POSITION, options={"eds": str(tmp_path / "x.eds")}),
         "not found"),
        (ActuatorSpec(1, ControlMode.POSITION, options={"gear": 2}), "unknown option"),
        (ActuatorSpec(200, ControlMode.POSITION), "1..127"),
    ]
    for act, match in cases:
        with pytest.raises(ConfigError, match=match):
            Cia402Bus(spec, [act], time.monotonic)
    with pytest.raises(ConfigError, match="unknown CANopen bus option"):
        Cia402Bus(BusSpec("b", "canopen", {}, {"sync_period": 1}),
                  [ActuatorSpec(1, ControlMode.POSITION)], time.monotonic)


def test_units_and_states() -> None:
    u = units_for({"counts_per_rev": 4096, "rated_torque": 3.0})
    assert u.counts_per_rad == pytest.approx(4096 / (2 * math.pi))
    assert u.velocity_per_rad_s == u.counts_per_rad
    assert u.rated_torque == 3.0
    assert state_of(0x0237) == "OPERATION ENABLED"
    assert state_of(0x0218) == "FAULT"
    assert state_of(0x0250) == "SWITCH ON DISABLED"


def test_scan_reads_identity(rig: Rig) -> None:
    found = canopen402.scan(rig.emulator.transport, [1, 2, 3, 4], timeout=0.1)
    assert [r.id for r in found] == [1, 2, 3]
    assert found[0].model == "skel_ros CiA 402 drive"
    assert found[0].model_number == 0x00020192
    assert found[0].firmware == "skel_ros 1"
    assert "profile 402" in found[0].details
    assert rig.emulator.nmt_state(1) == "PRE-OPERATIONAL"  # scanning changes nothing


def test_udp_multicast_is_refused() -> None:
    with pytest.raises(TransportError, match="udp_multicast"):
        canopen402.scan({"interface": "udp_multicast", "channel": "239.74.163.2"}, [1], 0.1)




def test_a_tpdo_taken_late_keeps_the_time_it_arrived(rig: Rig) -> None:
    """The drive samples at the SYNC and sends its TPDOs at once; the driver's notifier
    thread may take them later (another thread holding the interpreter or, here, holding
    the thread itself for 0.5 s at the first TPDO). Their values are stamped when they
    arrived, not when the thread got to them (planted: the thread's time, 0.5 s late)."""
    rig.bus.open()
    rig.bus.read()
    network = rig.bus._require_open()
    drives = rig.bus._drives
    first = drives[1].node.tpdo[1]
    with rig.bus._cond:
        for d in drives.values():
            d.received.clear()
    with first.receive_condition:  # the notifier thread waits here for the first TPDO
        sent = time.monotonic()
        network.sync.transmit()
        time.sleep(0.5)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        with rig.bus._cond:
            if all({1, 2} <= d.received for d in drives.values()):
                break
        time.sleep(0.01)
    stamps = [d.stamp - sent for d in drives.values()]
    assert all(0.0 <= s < 0.35 for s in stamps), stamps  # the emulator's own lateness
