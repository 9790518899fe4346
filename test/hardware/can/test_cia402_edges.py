"""Cia402Bus at the edges (issue 14), against the CiA 402 emulator on python-can's virtual bus.

Reopening without dropping an enabled drive, faults reported and cleared, the drive-side
heartbeat consumer with its abort connection reaction, targets rounded inward of the
limits, COB-IDs from the node id, open errors that say what was found, timeouts from the
bitrate and bounded retries.

The emulated drives run on a manual clock (``Clock``): shafts move, and heartbeat
consumers expire, only when a test advances it. python-can ``virtual`` channels exist
inside one process only, so a host killed with ``kill -9`` is simulated by shutting down
the driver's python-can bus without calling ``close`` (what the kernel does to a dead
process's socket: its frames, the periodic heartbeat included, stop), and no longer
calling the driver.
"""

from __future__ import annotations

import logging
import math
import random
import re
import time
from typing import TYPE_CHECKING, Any

import can
import pytest
from can_buses import OpenedBuses
from polling import wait_until

from skel_ros.emulation.canopen402 import Cia402Emulator
from skel_ros.hardware.base import (
    ActuatorCommand,
    ActuatorLimits,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.canopen402 import DEFAULT_EDS
from skel_ros.hardware.canopen402.bus import Cia402Bus
from skel_ros.hardware.errors import ConfigError, DeviceError, TransportTimeoutError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

CPR = 65536 / (2 * math.pi)
ENABLED = "OPERATION ENABLED"


class Clock:
    def __init__(self, t: float = 50.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def _acts(**limits: ActuatorLimits) -> list[ActuatorSpec]:
    return [ActuatorSpec(1, ControlMode.POSITION, name="hip",
                         limits=limits.get("hip", ActuatorLimits())),
            ActuatorSpec(2, ControlMode.VELOCITY, options={"counts_per_rev": 4096},
                         name="knee", limits=limits.get("knee", ActuatorLimits())),
            ActuatorSpec(3, ControlMode.EFFORT, options={"rated_torque": 2.0}, name="ankle",
                         limits=limits.get("ankle", ActuatorLimits()))]


class Rig:
    def __init__(self, actuators: list[ActuatorSpec],
                 emulated: list[ActuatorSpec] | None = None, *, watchdog: float = 0.0,
                 margin: float = 0.05, emulator_options: dict[str, Any] | None = None,
                 **options: Any) -> None:
        self.clock = Clock()
        self.emulator = Cia402Emulator(
            {}, actuators if emulated is None else emulated,
            {"clock": self.clock, "initial_positions": {1: 0.3, 2: -0.2, 5: 0.4, 6: -0.6},
             **(emulator_options or {})})
        self.spec = BusSpec("arm", "canopen", self.emulator.transport,
                            {"sync_timeout": 0.5, **options}, device_watchdog=watchdog,
                            timeout_margin=margin)
        self.bus = Cia402Bus(self.spec, actuators, time.monotonic)

    def close(self) -> None:
        self.bus.close()
        self.emulator.stop()


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig(_acts())
    yield r
    r.close()


def _enable_and_move(rig: Rig) -> None:
    rig.bus.open()
    rig.bus.set_torque(True)
    rig.bus.write({1: ActuatorCommand(position=0.8), 2: ActuatorCommand(velocity=0.5),
                   3: ActuatorCommand(effort=0.01)})
    rig.bus.read()
    if rig.spec.device_watchdog:
        for _ in range(100):   # 2 s in cycles: the host's heartbeat goes with each SYNC
            rig.clock.t += 0.02
            rig.bus.read()
    else:
        rig.clock.t += 2.0
        rig.bus.read()


# ------------------------------------------------------------------ 2: keep torque


def test_reopen_with_keep_torque_keeps_enabled_drives_at_their_targets(rig: Rig) -> None:
    _enable_and_move(rig)
    before = {i: rig.emulator.transitions(i) for i in (1, 2, 3)}
    nmt_before = {i: len(rig.emulator.nmt_commands(i)) for i in (1, 2, 3)}
    rig.bus.close(torque_off=False)       # the bus glitched: closed, drives untouched
    assert [rig.emulator.drive_state(i) for i in (1, 2, 3)] == [ENABLED] * 3
    rig.clock.t += 0.5
    rig.bus.open(keep_torque=True)
    # Nothing that leaves OPERATION ENABLED reached any drive (no shutdown, no disable
    # voltage, no NMT reset or pre-operational): only NMT start, a no-op for them.
    for i in (1, 2, 3):
        assert rig.emulator.transitions(i) == before[i]
        assert set(rig.emulator.nmt_commands(i)[nmt_before[i]:]) <= {0x01}
        assert rig.emulator.drive_state(i) == ENABLED
    assert rig.emulator.target(1) == pytest.approx(0.8, abs=1 / CPR)
    states = rig.bus.read()
    assert all(s.torque_enabled and not s.error_code for s in states.values())
    assert states[1].position == pytest.approx(0.8, abs=1e-3)
    assert rig.emulator.target(1) == pytest.approx(0.8, abs=1 / CPR)   # still its target
    assert rig.emulator.state(2).velocity == pytest.approx(0.5, abs=1e-2)
    # The driver took over: a new target moves the kept drive.
    rig.bus.write({1: ActuatorCommand(position=0.2)})
    rig.bus.read()
    rig.clock.t += 2.0
    assert rig.bus.read()[1].position == pytest.approx(0.2, abs=1e-3)
    # Without keep_torque every drive ends torque off, as on a first start.
    rig.bus.close(torque_off=False)
    rig.bus.open()
    assert [rig.emulator.drive_state(i) for i in (1, 2, 3)] == ["READY TO SWITCH ON"] * 3
    assert not any(s.torque_enabled for s in rig.bus.read().values())


def test_keep_torque_reconfigures_a_drive_whose_settings_differ(
        rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    _enable_and_move(rig)
    rig.bus.close(torque_off=False)
    acts = _acts()
    acts[0] = ActuatorSpec(1, ControlMode.POSITION, options={"op_mode": "pp"}, name="hip")
    other = Cia402Bus(rig.spec, acts, time.monotonic)
    try:
        with caplog.at_level(logging.WARNING):
            other.open(keep_torque=True)
        assert rig.emulator.drive_state(1) == "READY TO SWITCH ON"   # rewritten: torque off
        assert [rig.emulator.drive_state(i) for i in (2, 3)] == [ENABLED] * 2
        assert re.search(r"node 1\).*OPERATION ENABLED, but mode of operation 8 instead of 1"
                         r".*torque off", caplog.text)
        states = other.read()
        assert [states[i].torque_enabled for i in (1, 2, 3)] == [False, True, True]
    finally:
        other.close()


def test_keep_torque_does_not_keep_a_drive_in_fault(rig: Rig) -> None:
    _enable_and_move(rig)
    rig.bus.close(torque_off=False)
    rig.emulator.inject_fault(2, 0x2310)
    rig.bus.open(keep_torque=True)
    states = rig.bus.read()
    assert states[2].error_code == 0x2310
    assert not states[2].torque_enabled
    assert rig.emulator.drive_state(2) == "FAULT"      # reported, not reset behind the back
    assert states[1].torque_enabled


# ------------------------------------------------------------------ 3: faults


def test_fault_is_reported_the_bus_stays_usable_and_clear_faults_resets_it(rig: Rig) -> None:
    _enable_and_move(rig)
    rig.emulator.inject_fault(2, 0x2310)
    time.sleep(0.05)   # the EMCY reaches the driver (notifier thread)
    states = rig.bus.read()
    assert states[2].error_code == 0x2310
    assert "FAULT" in states[2].fault
    assert "EMCY 0x2310 Current" in states[2].fault
    assert not states[2].torque_enabled
    assert states[1].torque_enabled
    assert states[1].error_code == 0
    rig.bus.write({1: ActuatorCommand(position=0.5)})     # the others keep working
    rig.bus.read()
    with pytest.raises(DeviceError, match=r"node 2.*FAULT.*clear_faults") as info:
        rig.bus.set_torque(True, [2])
    assert (info.value.actuator_id, info.value.code) == (2, 0x2310)
    answer = rig.bus.clear_faults()
    assert answer[1] == "no fault (OPERATION ENABLED)"
    assert answer[3] == "no fault (OPERATION ENABLED)"
    assert re.fullmatch(r"fault reset sent \(was error code 0x2310 \(EMCY 0x2310 Current\)\);"
                        r" now SWITCH ON DISABLED, no fault, torque off", answer[2]), answer[2]
    assert rig.emulator.drive_state(2) == "SWITCH ON DISABLED"
    assert not rig.emulator.state(2).torque_enabled
    states = rig.bus.read()
    assert states[2].error_code == 0
    assert not states[2].torque_enabled
    rig.bus.set_torque(True, [2])
    assert rig.emulator.drive_state(2) == ENABLED


def test_clear_faults_says_what_remains(rig: Rig) -> None:
    rig.bus.open()
    rig.emulator.inject_fault(1, 0x4310, persistent=True)   # still too hot
    answer = rig.bus.clear_faults([1])
    assert list(answer) == [1]
    assert re.fullmatch(r"fault reset sent \(was error code 0x4310 .*\); still in FAULT: "
                        r"error code 0x4310 .*", answer[1]), answer[1]
    assert rig.bus.read()[1].error_code == 0x4310


def test_open_leaves_a_fault_to_clear_faults_unless_reset_faults() -> None:
    r = Rig(_acts())
    try:
        r.emulator.inject_fault(3, 0x3210)
        r.bus.open()
        assert r.emulator.drive_state(3) == "FAULT"
        assert r.bus.read()[3].error_code == 0x3210
        r.bus.close()
        opted = Cia402Bus(BusSpec("arm", "canopen", r.emulator.transport,
                                  {"sync_timeout": 0.5, "reset_faults": True}),
                          _acts(), time.monotonic)
        opted.open()
        assert r.emulator.drive_state(3) == "READY TO SWITCH ON"
        opted.close()
    finally:
        r.close()


# ------------------------------------------------------------------ 4: device watchdog


def _passes_after(emulator: Cia402Emulator, n: int = 3) -> None:
    start = emulator.supervisor_passes()
    assert wait_until(lambda: emulator.supervisor_passes() >= start + n)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.parametrize(("option", "code", "state"), [
    ("fault", 1, "FAULT"),
    ("quick_stop", 3, "QUICK STOP ACTIVE"),
    ("disable_voltage", 2, "SWITCH ON DISABLED"),
])
def test_drives_react_when_the_host_heartbeat_stops(
        monkeypatch: pytest.MonkeyPatch, option: str, code: int, state: str) -> None:
    capture = OpenedBuses(monkeypatch)
    # Quick stop option code 6: decelerate on the quick stop ramp, then hold in QUICK STOP
    # ACTIVE (the EDS's default 2 ends in SWITCH ON DISABLED).
    r = Rig(_acts(), watchdog=0.1, abort_connection=option,
            emulator_options={"quick_stop_option": 6})
    spy = can.Bus(**r.emulator.transport)   # a bus analyser on the same wire
    try:
        _enable_and_move(r)
        assert r.emulator.last_heartbeat(1, 127) is not None   # the host's heartbeat arrives
        while spy.recv(0) is not None:
            pass
        # The host dies: no close(), its socket is gone, nothing calls the driver anymore.
        capture.buses[-1].shutdown()
        time.sleep(0.2)   # frames already on their way are delivered (real time)
        while spy.recv(0) is not None:
            pass
        dead = r.clock.t
        assert all(r.emulator.last_heartbeat(i, 127) == dead for i in (1, 2, 3))
        r.clock.t = dead + 0.09          # within the watchdog: nothing happens
        _passes_after(r.emulator)
        assert [r.emulator.drive_state(i) for i in (1, 2, 3)] == [ENABLED] * 3
        assert not r.emulator.watchdog_events(1)
        r.clock.t = dead + 0.1 + 1e-3    # past it: every drive reacts on its own clock
        assert wait_until(lambda: all(r.emulator.watchdog_events(i) for i in (1, 2, 3)))
        for i in (1, 2, 3):
            assert r.emulator.watchdog_events(i) == [(dead + 0.1 + 1e-3, 127, code)]
            assert r.emulator.drive_state(i) == state
        emcy = {}
        while (msg := spy.recv(0.5)) is not None and len(emcy) < 3:
            if 0x81 <= msg.arbitration_id <= 0x83:
                emcy[msg.arbitration_id - 0x80] = bytes(msg.data)
        for i in (1, 2, 3):   # EMCY 0x8130, error register: generic + communication
            assert emcy[i][:3] == bytes((0x30, 0x81, 0x11)), (i, emcy)
        assert not r.emulator.state(1).torque_enabled or state == "QUICK STOP ACTIVE"
        if state == "QUICK STOP ACTIVE":
            r.clock.t += 2.0   # the velocity drive came to a standstill and holds
            assert r.emulator.state(2).velocity == pytest.approx(0.0, abs=1e-3)
    finally:
        spy.shutdown()
        r.close()


def test_close_with_torque_off_disarms_the_consumer() -> None:
    r = Rig(_acts(), watchdog=0.1)
    try:
        _enable_and_move(r)
        r.bus.close()
        r.clock.t += 5.0
        _passes_after(r.emulator)
        assert not any(r.emulator.watchdog_events(i) for i in (1, 2, 3))
        assert [r.emulator.drive_state(i) for i in (1, 2, 3)] == ["READY TO SWITCH ON"] * 3
    finally:
        r.close()


def test_a_glitch_longer_than_the_watchdog_ends_in_the_drives_reaction() -> None:
    r = Rig(_acts(), watchdog=0.1)
    try:
        _enable_and_move(r)
        r.bus.close(torque_off=False)      # consumers stay armed
        r.clock.t += 0.5
        assert wait_until(lambda: all(r.emulator.watchdog_events(i) for i in (1, 2, 3)))
        r.bus.open(keep_torque=True)       # finds them in FAULT: reported, not kept
        states = r.bus.read()
        assert all(s.error_code == 0x8130 and not s.torque_enabled for s in states.values())
        assert "0x8130" in states[1].fault
        assert set(r.bus.clear_faults()) == {1, 2, 3}
        assert not any(s.error_code for s in r.bus.read().values())
    finally:
        r.close()


def _without(index: str, tmp_path: Path) -> Path:
    """drive.eds without object ``index`` (its sections and its entry in the list)."""
    text = DEFAULT_EDS.read_text()
    text = re.sub(rf"\[{index}(sub\d+)?\]\n(?:[^\[]*\n)", "", text)
    listed = re.search(r"\[OptionalObjects\]\nSupportedObjects=\d+\n((?:\d+=0x\w+\n)+)", text)
    assert listed is not None
    objects = [line.split("=")[1] for line in listed.group(1).splitlines()
               if line.split("=")[1] != f"0x{index}"]
    block = "".join(f"{i}={o}\n" for i, o in enumerate(objects, 1))
    text = text.replace(listed.group(0), "[OptionalObjects]\nSupportedObjects="
                        f"{len(objects)}\n{block}")
    path = tmp_path / f"no{index}.eds"
    path.write_text(text)
    return path


def test_watchdog_needs_a_heartbeat_consumer(tmp_path: Path) -> None:
    eds = _without("1016", tmp_path)
    acts = [ActuatorSpec(1, ControlMode.POSITION, options={"eds": str(eds)})]
    r = Rig(acts, emulated=[ActuatorSpec(1, ControlMode.POSITION,
                                          options={"eds": str(eds)})], watchdog=0.1)
    try:
        with pytest.raises(DeviceError, match=r"node 1\).*no heartbeat consumer \(0x1016\)"
                                              r".*device_watchdog: 0"):
            r.bus.open()
    finally:
        r.close()


# ------------------------------------------------------------------ 5: limits on the wire


def test_a_target_at_a_limit_is_not_rounded_past_it() -> None:
    hi = 10430.6 / CPR            # the nearest count, 10431, lies past it
    lim = {"hip": ActuatorLimits(position=(-hi, hi)),
           "knee": ActuatorLimits(velocity=(-0.5, 100.6 / (4096 / (2 * math.pi)))),
           "ankle": ActuatorLimits(effort=(-0.0113, 0.0113))}
    r = Rig(_acts(**lim))
    try:
        r.bus.open()
        r.bus.set_torque(True)
        r.bus.write({1: ActuatorCommand(position=hi), 2: ActuatorCommand(velocity=lim[
            "knee"].velocity[1]), 3: ActuatorCommand(effort=-0.0113)})
        r.bus.read()
        assert r.emulator.target(1) <= hi
        assert r.emulator.target(2) <= lim["knee"].velocity[1]
        assert r.emulator.target(3) >= -0.0113
    finally:
        r.close()


def test_random_targets_decode_inside_the_limits_with_no_tolerance() -> None:
    rng = random.Random(14)  # noqa: S311 - test data, not cryptography
    cases = []
    for _ in range(3):
        a, b = sorted(rng.uniform(-3, 3) for _ in range(2))
        cases.append((a, b))
    lim = {"hip": ActuatorLimits(position=cases[0]),
           "knee": ActuatorLimits(velocity=cases[1]),
           "ankle": ActuatorLimits(effort=(-1.0, 0.5))}   # exact multiples of 2 mN m
    r = Rig(_acts(**lim))
    try:
        r.bus.open()
        r.bus.set_torque(True)
        for k in range(150):
            values = []
            for lo, hi in (cases[0], cases[1], (-1.0, 0.5)):
                pick = k % 3
                values.append(lo if pick == 0 else hi if pick == 1 else rng.uniform(lo, hi))
            r.bus.write({1: ActuatorCommand(position=values[0]),
                         2: ActuatorCommand(velocity=values[1]),
                         3: ActuatorCommand(effort=values[2])})
            r.bus.read()
            for i, (lo, hi) in zip((1, 2, 3), (cases[0], cases[1], (-1.0, 0.5)),
                                   strict=True):
                assert lo <= r.emulator.target(i) <= hi, (i, values)
    finally:
        r.close()


# ------------------------------------------------------------------ 6: COB-IDs


def _commissioned(tmp_path: Path, node: int) -> Path:
    """drive.eds with the PDO COB-IDs commissioned (ParameterValue) for ``node``, as a DCF."""
    out = []
    section = ""
    for line in DEFAULT_EDS.read_text().splitlines():
        out.append(line)
        if line.startswith("["):
            section = line
        elif section in ("[1400sub1]", "[1401sub1]", "[1800sub1]", "[1801sub1]") and (
                line.startswith("DefaultValue=$NODEID+")):
            base = int(line.split("+")[1], 0)
            out.append(f"ParameterValue=0x{base + node:X}")
    path = tmp_path / f"commissioned{node}.eds"
    path.write_text("\n".join(out) + "\n")
    return path


def _frames(transport: dict[str, Any], action: Callable[[], Any]) -> set[int]:
    with can.Bus(**transport) as spy:
        action()
        seen = set()
        while (msg := spy.recv(0.05)) is not None:
            seen.add(msg.arbitration_id)
    return seen


def test_cob_ids_come_from_the_node_id_not_a_commissioned_eds(tmp_path: Path) -> None:
    eds = str(_commissioned(tmp_path, 32))
    acts = [ActuatorSpec(5, ControlMode.POSITION, options={"eds": eds}, name="a")]
    r = Rig(acts, emulated=[ActuatorSpec(5, ControlMode.POSITION)])
    try:
        r.bus.open()
        seen = _frames(dict(r.emulator.transport), r.bus.read)
        assert {0x185, 0x285} <= seen
        assert not seen & {0x1A0, 0x2A0}
        assert r.bus.read()[5].position == pytest.approx(0.4, abs=1 / CPR)
    finally:
        r.close()


def test_two_drives_share_one_commissioned_eds(tmp_path: Path) -> None:
    eds = str(_commissioned(tmp_path, 32))
    acts = [ActuatorSpec(5, ControlMode.POSITION, options={"eds": eds}, name="a"),
            ActuatorSpec(6, ControlMode.POSITION, options={"eds": eds}, name="b")]
    r = Rig(acts, emulated=[ActuatorSpec(5, ControlMode.POSITION),
                            ActuatorSpec(6, ControlMode.POSITION)])
    try:
        r.bus.open()
        states = r.bus.read()
        assert states[5].position == pytest.approx(0.4, abs=1 / CPR)
        assert states[6].position == pytest.approx(-0.6, abs=1 / CPR)
        r.bus.set_torque(True)
        r.bus.write({5: ActuatorCommand(position=0.0), 6: ActuatorCommand(position=0.1)})
        r.bus.read()
        r.clock.t += 2.0
        states = r.bus.read()
        assert states[5].position == pytest.approx(0.0, abs=1e-3)
        assert states[6].position == pytest.approx(0.1, abs=1e-3)
    finally:
        r.close()


def test_cob_ids_from_the_yaml() -> None:
    acts = [ActuatorSpec(5, ControlMode.POSITION,
                         options={"cob_ids": {"tpdo1": 0x190, "tpdo2": 0x290,
                                              "rpdo1": 0x210}})]
    r = Rig(acts)
    try:
        r.bus.open()
        r.bus.set_torque(True)
        seen = _frames(dict(r.emulator.transport), r.bus.read)
        assert {0x190, 0x290} <= seen
        assert not seen & {0x185, 0x285}
    finally:
        r.close()
    spec = BusSpec("b", "canopen", {"interface": "virtual", "channel": "unused"})
    with pytest.raises(ConfigError, match=r"node 6\): tpdo1 COB-ID 0x185 is already tpdo1 "
                                          r"of node 5's"):
        Cia402Bus(spec, [ActuatorSpec(5, ControlMode.POSITION),
                         ActuatorSpec(6, ControlMode.POSITION,
                                      options={"cob_ids": {"tpdo1": 0x185}})], time.monotonic)
    with pytest.raises(ConfigError, match="cob_ids key 'tpdo9' unknown"):
        Cia402Bus(spec, [ActuatorSpec(5, ControlMode.POSITION,
                                      options={"cob_ids": {"tpdo9": 0x185}})], time.monotonic)


# ------------------------------------------------------------------ 7: open errors


def test_a_silent_drive_names_who_answered() -> None:
    acts = _acts()
    others = [*acts[:2], ActuatorSpec(9, ControlMode.POSITION)]
    r = Rig(acts, emulated=others, sdo_timeout=0.1, sdo_retries=0)
    try:
        with pytest.raises(TransportTimeoutError) as info:
            r.bus.open()
        text = str(info.value)
        assert re.search(r"node\(s\) \[3\] did not answer an SDO read of 0x1000", text), text
        assert "drives of this bus that answered: [1, 2]" in text
        assert "other nodes on the bus: 9 (SDO)" in text
        assert "bitrate" in text
        assert not r.bus.is_open
    finally:
        r.close()


def test_another_device_type_or_model_is_a_device_error(tmp_path: Path) -> None:
    eds = tmp_path / "io.eds"
    eds.write_text(DEFAULT_EDS.read_text().replace("DefaultValue=0x00020192",
                                                   "DefaultValue=0x00000191", 1))
    r = Rig([ActuatorSpec(1, ControlMode.POSITION)],
            emulated=[ActuatorSpec(1, ControlMode.POSITION, options={"eds": str(eds)})])
    try:
        with pytest.raises(DeviceError, match=r"node 1\): expected a CiA 402 drive .*found "
                                              r"device type 0x00000191 \(profile 401\)"):
            r.bus.open()
    finally:
        r.close()
    r = Rig([ActuatorSpec(1, ControlMode.POSITION, model="ACME-X7")])
    try:
        with pytest.raises(DeviceError, match=r"expected model 'ACME-X7', the drive says "
                                              r"'skel_ros CiA 402 drive'"):
            r.bus.open()
    finally:
        r.close()


# ------------------------------------------------------------------ 8: timeouts, retries


def test_timeouts_come_from_bitrate_frames_and_margin() -> None:
    spec = BusSpec("b", "canopen", {"interface": "virtual", "channel": "u", "bitrate": 125000},
                   timeout_margin=0.2)
    bus = Cia402Bus(spec, _acts(), time.monotonic)
    # SYNC (0 bytes, 55 bits), heartbeat (1 byte, 65), per drive RPDO and TPDO1 (6 bytes,
    # 115 each) and TPDO2 (8 bytes, 135), stuff bits included.
    bits = 55 + 65 + 3 * (115 + 115 + 135)
    assert bus.sync_timeout == pytest.approx(bits / 125000 + 0.01 + 0.2)
    assert bus.sdo_timeout == pytest.approx(2 * 135 / 125000 + 0.25 + 0.2)
    fast = Cia402Bus(BusSpec("b", "canopen", {"interface": "virtual", "channel": "u",
                                              "bitrate": 1000000}, timeout_margin=0.0),
                     _acts(), time.monotonic)
    assert fast.sync_timeout == pytest.approx(bits / 1e6 + 0.01)


def test_open_and_enable_survive_lost_frames() -> None:
    # A SYNC's TPDOs come within a few ms; 0.3 s leaves room for a loaded machine (0.1 s
    # once failed the second rig's open in a full suite run, 2026-11-30).
    r = Rig(_acts(), sdo_timeout=0.1, sync_timeout=0.3)
    try:
        r.emulator.drop_sdo_requests(2, 1)   # the device type read of node 2 goes unanswered
        r.emulator.drop_syncs(1)             # the first SYNC after NMT start is lost
        r.bus.open()
        r.emulator.drop_syncs(2)             # two SYNCs of the enable walk are lost
        r.bus.set_torque(True)
        assert [r.emulator.drive_state(i) for i in (1, 2, 3)] == [ENABLED] * 3
    finally:
        r.close()
    r = Rig(_acts(), sdo_timeout=0.1, sync_timeout=0.3, sync_retries=0)
    try:
        r.bus.open()
        r.emulator.drop_syncs(1)
        with pytest.raises(TransportTimeoutError, match=r"no TPDO from node\(s\) \[1, 2, 3\]"):
            r.bus.set_torque(True)
    finally:
        r.close()
