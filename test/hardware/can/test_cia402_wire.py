"""Cia402Bus checked on the wire: what the drive receives, against CiA 402.

Profile position set-points (every new target goes out with a rising edge of controlword
bit 4), quick stop (never "enable operation" after one: no transition 16 without an
explicit enable), the mode of operation display 0x6061 that follows 0x6060 late, and
torque off before the mode changes when opening.

A second python-can bus on the same virtual channel is the bus analyser: it sees the
RPDOs and SDO requests exactly as the drives do. The emulated drives run on a manual
clock; nothing waits for real time except deliveries between threads (bounded waits).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import can
import pytest
from polling import wait_until

from skel_ros.emulation.canopen402 import Cia402Emulator
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.canopen402.bus import MODE_SWITCH_TIMEOUT, Cia402Bus
from skel_ros.hardware.errors import ProtocolError

if TYPE_CHECKING:
    from collections.abc import Iterator

CPR = 65536 / (2 * math.pi)
ENABLED, QUICK_STOP = "OPERATION ENABLED", "QUICK STOP ACTIVE"
PP = ActuatorSpec(1, ControlMode.POSITION, options={"op_mode": "pp"}, name="hip")
CSP = ActuatorSpec(1, ControlMode.POSITION, name="hip")


class Clock:
    def __init__(self, t: float = 50.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


class Rig:
    """One emulated drive, the driver and a bus analyser on one virtual channel."""

    def __init__(self, actuator: ActuatorSpec, emulator_options: dict[str, Any] | None = None,
                 **options: Any) -> None:
        self.clock = Clock()
        self.emulator = Cia402Emulator({}, [actuator], {"clock": self.clock,
                                                        **(emulator_options or {})})
        self.spy = can.Bus(**self.emulator.transport)
        self.bus = self.driver(actuator, **options)

    def driver(self, actuator: ActuatorSpec, **options: Any) -> Cia402Bus:
        spec = BusSpec("arm", "canopen", self.emulator.transport,
                       {"sync_timeout": 0.5, "heartbeat_ms": 0, **options})
        return Cia402Bus(spec, [actuator], time.monotonic)

    def frames(self) -> list[can.Message]:
        """Every frame the analyser received since the last call."""
        out = []
        while (msg := self.spy.recv(0)) is not None:
            out.append(msg)
        return out

    def close(self) -> None:
        self.bus.close()
        self.spy.shutdown()
        self.emulator.stop()


@pytest.fixture
def pp() -> Iterator[Rig]:
    r = Rig(PP)
    yield r
    r.close()


def _rpdos(frames: list[can.Message], node: int = 1) -> list[tuple[int, int]]:
    """(controlword, target) of every RPDO1 of the node, in order."""
    return [(int.from_bytes(m.data[0:2], "little"),
             int.from_bytes(m.data[2:6], "little", signed=True))
            for m in frames if m.arbitration_id == 0x200 + node]


def _sdo_downloads(frames: list[can.Message], node: int = 1) -> list[tuple[int, int]]:
    """(index, value) of every expedited SDO download request to the node, in order."""
    out = []
    for m in frames:
        if m.arbitration_id == 0x600 + node and m.data[0] & 0xE0 == 0x20 and m.data[0] & 0x02:
            size = 4 - (m.data[0] >> 2 & 0x03) if m.data[0] & 0x01 else 4
            out.append((m.data[1] | m.data[2] << 8,
                        int.from_bytes(m.data[4:4 + size], "little")))
    return out


def _cycle(r: Rig, position: float) -> None:
    """One control cycle as the manager runs it: read (SYNC), then write."""
    r.bus.read()
    r.bus.write({1: ActuatorCommand(position=position)})


# ------------------------------------------------------------------ profile position


def test_pp_a_target_right_after_another_new_target_is_taken(pp: Rig) -> None:
    pp.bus.open()
    pp.bus.set_torque(True)
    pp.frames()
    a, b = 1.0, 2.0
    for goal in (a, b, b, b, b):
        _cycle(pp, goal)
    pp.bus.read()
    rpdos = _rpdos(pp.frames())
    rising = [target for (cw, target), (before, _) in zip(rpdos[1:], rpdos, strict=False)
              if cw & 0x10 and not before & 0x10]
    if rpdos[0][0] & 0x10:
        rising.insert(0, rpdos[0][1])
    assert all(cw & 0x2F == 0x2F for cw, _ in rpdos)   # enable operation + bit 5
    # Every new target went out with a rising edge of bit 4, the last one B.
    assert rising == [round(a * CPR), round(b * CPR)], rpdos
    pp.clock.t += 2.0
    _cycle(pp, b)
    assert pp.bus.read()[1].position == pytest.approx(b, abs=1e-3)   # the drive went to B


def test_pp_streaming_targets_end_at_the_newest(pp: Rig) -> None:
    pp.bus.open()
    pp.bus.set_torque(True)
    pp.frames()
    goals = [0.1 * k for k in range(1, 8)]
    for goal in goals:
        _cycle(pp, goal)
    for _ in range(3):                      # the last one held
        _cycle(pp, goals[-1])
    pp.bus.read()
    rpdos = _rpdos(pp.frames())
    edges = [target for i, (cw, target) in enumerate(rpdos)
             if cw & 0x10 and (i == 0 or not rpdos[i - 1][0] & 0x10)]
    assert len(edges) >= len(goals) // 2, rpdos   # at least every second cycle
    assert edges[-1] == round(goals[-1] * CPR), rpdos
    assert pp.emulator.target(1) == pytest.approx(goals[-1], abs=1 / CPR)
    pp.clock.t += 2.0
    _cycle(pp, goals[-1])
    assert pp.bus.read()[1].position == pytest.approx(goals[-1], abs=1e-3)


def test_pp_emulator_takes_a_set_point_only_on_the_rising_edge(pp: Rig) -> None:
    pp.bus.open()
    pp.bus.set_torque(True)
    start = pp.bus.read()[1].position
    pdo = pp.bus._drives[1].node.rpdo[1]
    # Bit 4: 0, then 1 (an edge: taken), then 1 again with another target (no edge).
    for cw, goal in ((0x2F, start), (0x3F, start + 1.0), (0x3F, start - 1.0)):
        pdo[0x6040].raw = cw
        pdo[0x607A].raw = round(goal * CPR)
        pdo.transmit()
        pp.bus.read()
    pp.clock.t += 2.0
    pp.bus.read()
    assert pp.emulator.state(1).position == pytest.approx(start + 1.0, abs=1e-3)


# ------------------------------------------------------------------ quick stop


@pytest.mark.parametrize("announced", [True, False], ids=["emcy_before_sync", "statusword"])
def test_a_quick_stop_is_never_left_by_the_drivers_own_enable(announced: bool) -> None:
    # Option code 6: the drive holds in QUICK STOP ACTIVE, where "enable operation" would
    # be transition 16 back to OPERATION ENABLED.
    r = Rig(CSP, {"quick_stop_option": 6})
    try:
        r.bus.open()
        r.bus.set_torque(True)
        for _ in range(3):
            _cycle(r, 0.5)
        r.frames()
        if announced:
            # An RPDO with "enable operation" waits in the drive for the next SYNC, and
            # the quick stop's EMCY (a heartbeat event) reaches the host before it.
            seen = len(r.bus._drives[1].emcy)
            r.emulator.inject_quick_stop(1, 0x8130)
            assert wait_until(lambda: len(r.bus._drives[1].emcy) > seen)
        else:
            # No EMCY, only the statusword says so (nothing waiting in the drive: with
            # an enable waiting, that SYNC would end a code 5..8 quick stop before any
            # host could know; see docs/can.md on 0x605A).
            r.bus.read()
            r.emulator.inject_quick_stop(1)
        for _ in range(5):   # the manager keeps cycling (safe_state: hold)
            r.bus.read()
            r.bus.write({1: ActuatorCommand(position=0.5)})
        state = r.bus.read()[1]
        assert (QUICK_STOP, ENABLED) not in r.emulator.transitions(1)
        assert r.emulator.drive_state(1) == QUICK_STOP
        assert state.error_code
        assert "QUICK STOP" in state.fault
        sent = _rpdos(r.frames())
        assert len(sent) >= 5, sent
        # Every RPDO since the quick stop: the quick stop command, never enable operation.
        assert all(cw & 0x8F == 0x02 for cw, _ in sent), sent
        answer = r.bus.clear_faults()[1]
        assert "disable voltage" in answer
        assert "SWITCH ON DISABLED" in answer
        assert r.bus.read()[1].error_code == 0
        r.bus.set_torque(True)   # the explicit way back
        assert r.emulator.drive_state(1) == ENABLED
    finally:
        r.close()


def test_a_finished_quick_stop_stays_reported_until_cleared() -> None:
    r = Rig(CSP)   # the EDS's option code 2: quick stop ramp, then SWITCH ON DISABLED
    try:
        r.bus.open()
        r.bus.set_torque(True)
        _cycle(r, 1.0)
        r.bus.read()
        r.clock.t += 0.02                  # moving
        r.emulator.inject_quick_stop(1)
        assert r.bus.read()[1].error_code  # QUICK STOP ACTIVE, decelerating
        r.bus.write({1: ActuatorCommand(position=1.0)})
        r.clock.t += 1.0
        state = r.bus.read()[1]
        assert r.emulator.drive_state(1) == "SWITCH ON DISABLED"
        assert state.error_code
        assert not state.torque_enabled
        assert "QUICK STOP" in state.fault
        assert "SWITCH ON DISABLED" in state.fault
        r.bus.clear_faults()
        assert r.bus.read()[1].error_code == 0
    finally:
        r.close()


@pytest.mark.parametrize(("option", "after"), [(0, "SWITCH ON DISABLED"),
                                               (2, "SWITCH ON DISABLED"), (6, QUICK_STOP)])
def test_emulator_quick_stop_follows_the_option_code(option: int, after: str) -> None:
    clock = Clock()
    emu = Cia402Emulator({}, [CSP], {"clock": clock, "quick_stop_option": option})
    sdo = can.Bus(**emu.transport)
    try:
        def controlword(cw: int) -> None:   # expedited SDO download of 0x6040
            sdo.send(can.Message(arbitration_id=0x601, is_extended_id=False,
                                 data=[0x2B, 0x40, 0x60, 0, cw, 0, 0, 0]))
            assert wait_until(
                lambda: (m := sdo.recv(0.05)) is not None and m.arbitration_id == 0x581)

        for cw in (0x06, 0x07, 0x0F, 0x02):
            controlword(cw)
        assert (ENABLED, QUICK_STOP) in emu.transitions(1)
        clock.t += 1.0                     # standstill long since
        assert emu.drive_state(1) == after
        controlword(0x0F)                  # transition 16 only for codes 5..8
        assert emu.drive_state(1) == (ENABLED if option >= 5 else after)
    finally:
        sdo.shutdown()
        emu.stop()


# ------------------------------------------------------------------ opening


def test_open_waits_for_the_mode_display() -> None:
    r = Rig(PP, {"mode_display_lag": 3})   # the emulated drive starts in csp
    try:
        r.bus.open()
        assert r.emulator.drive_state(1) == "READY TO SWITCH ON"
    finally:
        r.close()


def test_a_mode_display_that_never_follows_fails_open_naming_both_modes() -> None:
    r = Rig(PP, {"mode_display_lag": 10**9})
    try:
        started = time.monotonic()
        with pytest.raises(ProtocolError, match=r"node 1\).*mode 1 \(pp\).*shows mode 8 "
                                                r"\(csp\).*0\.5 s"):
            r.bus.open()
        assert time.monotonic() - started >= MODE_SWITCH_TIMEOUT
        assert not r.bus.is_open
    finally:
        r.close()


def test_open_turns_torque_off_before_it_changes_the_mode() -> None:
    r = Rig(CSP)
    try:
        r.bus.open()
        r.bus.set_torque(True)
        _cycle(r, 0.8)
        r.bus.close(torque_off=False)   # the drive keeps OPERATION ENABLED
        assert r.emulator.drive_state(1) == ENABLED
        r.frames()
        # Re-opened for velocity (csv) without keep_torque.
        r.bus = r.driver(ActuatorSpec(1, ControlMode.VELOCITY, options={"op_mode": "csv"}))
        r.bus.open()
        writes = [w for w in _sdo_downloads(r.frames()) if w[0] in (0x6040, 0x6060)]
        assert writes[:2] == [(0x6040, 0x06), (0x6060, 9)], writes   # shutdown first
        assert r.emulator.drive_state(1) == "READY TO SWITCH ON"
    finally:
        r.close()


def test_enable_leaves_a_quick_stop_on_a_drive_that_samples_before_it_applies() -> None:
    """A drive may send its SYNC's TPDO with the state from before that SYNC's RPDO (CiA
    301 leaves the order open): while enable walks it out of QUICK STOP ACTIVE, the old
    statusword is not a new quick stop (before: latched again, the next RPDOs carried the
    quick stop command and enable failed after 6 steps)."""
    r = Rig(CSP, {"quick_stop_option": 6, "sample_before_apply": True})
    try:
        r.bus.open()
        r.bus.set_torque(True)
        for _ in range(3):
            _cycle(r, 0.5)
        r.bus.read()
        r.emulator.inject_quick_stop(1)
        for _ in range(3):
            state = r.bus.read()[1]
        assert r.emulator.drive_state(1) == QUICK_STOP
        assert "QUICK STOP" in state.fault
        r.bus.set_torque(True)   # the operator's enable: transition 16
        for _ in range(3):
            _cycle(r, 0.5)
        state = r.bus.read()[1]
        assert r.emulator.drive_state(1) == ENABLED
        assert (state.error_code, state.torque_enabled) == (0, True)
    finally:
        r.close()
