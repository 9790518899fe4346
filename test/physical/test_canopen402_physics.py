"""Physics-backed CiA 402 drives (skel_ros.physical.canopen402) under the real driver.

Each test runs one drive at the pendulum's hinge (``data/pendulum.skel``: gravity pulls
with 0.196 N m at q = 0) on a clock of its own, through :class:`~skel_ros.hardware.
canopen402.bus.Cia402Bus` on a python-can ``virtual`` channel: the driver writes its RPDO,
the test moves the clock one cycle, the driver's SYNC round reads what the drive reports.
Loop settings go to the drive as SDO downloads on the wire before the driver opens it.
What is checked is what the drive's loops predict: a CSP stream followed within a few
counts of lag, the load's torque in 0x6077, a PP move no faster than 0x6081, a quick stop
at 0x6085, and a following-error fault (0x8611) under a payload the torque limit cannot
hold, reported by the driver and by the hardware backend's diagnostics.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import can
import numpy as np
import pytest

from skel_ros.hardware import HardwareBackend, MotionState, parse_hardware_config
from skel_ros.hardware.backend import hardware_runner
from skel_ros.hardware.base import (
    ActuatorCommand,
    ActuatorLimits,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.canopen402.bus import Cia402Bus
from skel_ros.hardware.diagnostics import Level
from skel_ros.hardware.errors import ConfigError
from skel_ros.model import load_skel
from skel_ros.physical import physical_emulator_for
from skel_ros.physical.canopen402 import FOLLOWING_ERROR

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.hardware.backend import HardwareStatus
    from skel_ros.hardware.base import ActuatorState

DATA = Path(__file__).resolve().parent / "data"
PENDULUM = DATA / "pendulum.skel"
HEAVY = DATA / "pendulum_heavy_payload.yaml"
GRAVITY_TORQUE = 0.2 * 9.81 * 0.1
CPR = 65536 / (2 * math.pi)    # counts per rad (the default counts_per_rev)
PERIOD = 0.01                  # s: the driver's cycle
LIMITS = ActuatorLimits(position=(-2.5, 2.5), velocity=(-8.0, 8.0), effort=(-5.0, 5.0))


def sdo_download(channel: str, node: int, index: int, value: int) -> None:
    """An expedited SDO download of a 32-bit ``value`` to ``index``:0, answered."""
    bus = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
    try:
        data = bytes((0x23,)) + index.to_bytes(2, "little") + b"\0" + value.to_bytes(
            4, "little")
        bus.send(can.Message(arbitration_id=0x600 + node, data=data, is_extended_id=False))
        while (reply := bus.recv(timeout=5.0)) is not None:
            if reply.arbitration_id == 0x580 + node:
                assert reply.data[0] == 0x60, f"SDO abort: {bytes(reply.data).hex()}"
                return
        pytest.fail(f"no SDO answer for 0x{index:04X}")
    finally:
        bus.shutdown()


class Bench:
    """One physics-backed drive at the pendulum's hinge, and the driver talking to it."""

    def __init__(self, mode: ControlMode = ControlMode.POSITION, *,
                 options: dict[str, Any] | None = None,
                 settings: dict[int, int] | None = None, truth: Path | None = None) -> None:
        self.t = 20.0
        spec = ActuatorSpec(1, mode, options=options or {}, name="hinge", limits=LIMITS)
        self.emulator: Any = physical_emulator_for("canopen")({}, [spec], {
            "clock": lambda: self.t, "initial_positions": {1: 0.0},
            "physics": {"model": str(PENDULUM), "truth": str(truth) if truth else None,
                        "joints": {1: {"joint": "hinge"}}}})
        for index, value in (settings or {}).items():
            sdo_download(self.emulator.transport["channel"], 1, index, value)
        self.bus = Cia402Bus(BusSpec("bench", "canopen", self.emulator.transport,
                                     {"sync_timeout": 0.5}), [spec], time.monotonic)
        self.bus.open()
        self.bus.set_torque(True)

    def cycle(self, command: ActuatorCommand) -> ActuatorState:
        """The command out, one period on, the SYNC round: what the drive reports."""
        self.bus.write({1: command})
        self.t += PERIOD
        return self.bus.read()[1]

    def close(self) -> None:
        self.bus.close()
        self.emulator.stop()


@pytest.fixture
def bench(request: pytest.FixtureRequest) -> Iterator[Bench]:
    made = Bench(**getattr(request, "param", {}))
    yield made
    made.close()


def test_the_drive_holds_its_load_and_follows_a_csp_stream(bench: Bench) -> None:
    for _ in range(50):
        state = bench.cycle(ActuatorCommand(position=0.0))
    # Held where it was told, gravity's torque in Torque actual value (per mille of 1 N m).
    assert state.position == pytest.approx(0.0, abs=2 / CPR)
    assert abs(state.effort) == pytest.approx(GRAVITY_TORQUE, abs=2e-3)
    # A sine of 0.3 rad at 0.5 Hz, one target per cycle: the interpolating loop follows
    # within about a milliradian (a loop without the stream's feed-forward lags by
    # speed / kp, 19 mrad at the sine's 0.94 rad/s).
    errors = []
    for k in range(1, 201):
        q = 0.3 * math.sin(math.pi * k * PERIOD)
        state = bench.cycle(ActuatorCommand(position=q))
        errors.append(state.position - q)
        assert state.torque_enabled
        assert state.error_code == 0
    assert max(abs(e) for e in errors[5:]) < 5e-3
    assert bench.emulator.drive_state(1) == "OPERATION ENABLED"


@pytest.mark.parametrize("bench", [{
    "options": {"op_mode": "pp"},
    "settings": {0x6081: round(1.0 * CPR), 0x6083: round(10.0 * CPR),
                 0x6084: round(10.0 * CPR)}}], indirect=True)
def test_profile_position_moves_at_the_profile_velocity(bench: Bench) -> None:
    # 0 -> 0.6 rad at 1 rad/s, 10 rad/s^2 each way: 0.1 s up to speed, 0.5 s at it,
    # 0.1 s down (the default 0x6081 would go at 9.6 rad/s, within the motor's 6).
    states = [bench.cycle(ActuatorCommand(position=0.6)) for _ in range(100)]
    speeds = [s.velocity for s in states]
    assert max(speeds) == pytest.approx(1.0, abs=0.05)
    assert min(speeds) > -0.1   # a bounce at arrival at most
    assert states[39].position == pytest.approx(0.05 + 0.3 * 1.0, abs=0.02)  # at 0.4 s
    assert states[-1].position == pytest.approx(0.6, abs=2e-3)
    assert abs(states[-1].velocity) < 0.01


@pytest.mark.parametrize("bench", [{"mode": ControlMode.VELOCITY,
                                    "settings": {0x6085: round(5.0 * CPR)}}], indirect=True)
def test_quick_stop_ramps_down_at_the_quick_stop_deceleration(bench: Bench) -> None:
    for _ in range(30):
        state = bench.cycle(ActuatorCommand(velocity=2.0))
    assert state.velocity == pytest.approx(2.0, abs=0.05)
    bench.emulator.inject_quick_stop(1)   # option 2 (the EDS's): 0x6085, then disabled
    speeds = [bench.cycle(ActuatorCommand(velocity=2.0)).velocity for _ in range(30)]
    # 5 rad/s^2 from 2 rad/s: 0.4 s to stop; the slope while it ramps.
    slope = np.polyfit(np.arange(2, 30) * PERIOD, speeds[2:30], 1)[0]
    assert slope == pytest.approx(-5.0, rel=0.05)
    for _ in range(20):
        state = bench.cycle(ActuatorCommand(velocity=2.0))
    assert bench.emulator.drive_state(1) == "SWITCH ON DISABLED"
    assert not state.torque_enabled
    assert "QUICK STOP" in state.fault


class BackendRig:
    """The drive under the hardware backend, on the same manual clock (its diagnostics)."""

    CONFIG = """\
control_rate: 100.0
device_watchdog: 0.0
buses:
  b:
    protocol: canopen
    transport: {interface: virtual, channel: x}
    options: {sync_timeout: 0.5, heartbeat_ms: 0}
joints:
  hinge: {bus: b, id: 1, mode: position}
"""

    def __init__(self, truth: Path) -> None:
        self.t = 0.0
        skeleton = load_skel(PENDULUM).skeletons[0]
        config = parse_hardware_config(self.CONFIG, "rig.yaml")
        self.emulator: Any = physical_emulator_for("canopen")(
            {}, [m.actuator for m in config.joints],
            {"clock": lambda: self.t, "initial_positions": {1: 0.0},
             "physics": {"model": str(PENDULUM), "truth": str(truth),
                         "joints": {1: {"joint": "hinge"}}}})
        config = config.with_transport("b", self.emulator.transport)
        self.backend = HardwareBackend(config.bind(skeleton), clock=lambda: self.t)
        self.runner = hardware_runner(self.backend)

    def cycle(self) -> HardwareStatus:
        self.t += self.backend.period
        self.runner.cycle()
        return self.backend.status()

    def close(self) -> None:
        self.runner.cleanup()
        self.emulator.stop()


@pytest.mark.parametrize("bench", [{"truth": HEAVY}], indirect=True)
def test_a_payload_the_torque_limit_cannot_hold_trips_the_following_error(
        bench: Bench) -> None:
    # 6 N m of payload on a drive limited to 3 N m (0x6072): the link falls, the error
    # leaves the 0x6065 window (2000 counts) and after 0x6066 (20 ms) the drive trips; the
    # driver's "enable operation" in every RPDO meanwhile does not switch it on again.
    for _ in range(100):
        state = bench.cycle(ActuatorCommand(position=0.0))
        if state.error_code:
            break
    assert state.error_code == FOLLOWING_ERROR
    assert "FAULT" in state.fault
    assert not state.torque_enabled
    for _ in range(5):
        state = bench.cycle(ActuatorCommand(position=0.0))
    assert bench.emulator.drive_state(1) == "FAULT"
    assert not bench.emulator.state(1).torque_enabled


def test_the_following_error_fault_reaches_the_hardware_diagnostics() -> None:
    rig = BackendRig(HEAVY)
    try:
        rig.cycle()
        request = rig.backend.enable()
        for _ in range(100):
            status = rig.cycle()
            if request.done:
                break
        assert request.ok, request.message
        assert rig.emulator.drive_state(1) == "OPERATION ENABLED"
        for _ in range(100):
            status = rig.cycle()
            if rig.emulator.drive_state(1) == "FAULT":
                break
        for _ in range(10):   # diagnostics are refreshed every 50 ms
            status = rig.cycle()
        assert rig.emulator.drive_state(1) == "FAULT"
        truth = rig.emulator.state(1)
        assert not truth.torque_enabled
        assert truth.effort == 0.0
        actuator = status.actuators[0]
        assert actuator.level is Level.ERROR
        assert actuator.error_code == FOLLOWING_ERROR
        assert "0x8611" in actuator.message
        assert actuator.torque_enabled is False
        assert abs(actuator.position) > rig.emulator.law(1).window   # it fell
        assert status.state is MotionState.FAULT
        assert "'hinge'" in status.message
        assert "0x8611" in status.message
    finally:
        rig.close()


@pytest.mark.parametrize(("objects", "message"), [
    ({0x1234: 1}, r"node 1: objects: cannot store 1 in 0x1234"),
    ({"0x6065": -1}, r"cannot store -1 in 0x6065 .*range"),
    ({"window": 1}, r"objects: 'window' is not an object index"),
])
def test_commissioned_objects_that_cannot_be_stored_are_refused(
        objects: dict[Any, int], message: str) -> None:
    spec = ActuatorSpec(1, ControlMode.POSITION, name="hinge")
    with pytest.raises(ConfigError, match=message):
        physical_emulator_for("canopen")({}, [spec], {
            "objects": objects,
            "physics": {"model": str(PENDULUM), "joints": {1: {"joint": "hinge"}}}})



class ArmBench:
    """The bundled arm, a physics-backed drive at each joint, under the driver."""

    NAMES = ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")

    def __init__(self, truth: Path | None = None) -> None:
        self.t = 0.0
        arm = Path(__file__).resolve().parents[2] / "examples" / "arm.skel"
        specs = [ActuatorSpec(i, ControlMode.POSITION, name=n, limits=LIMITS)
                 for i, n in enumerate(self.NAMES, 1)]
        self.emulator: Any = physical_emulator_for("canopen")({}, specs, {
            "clock": lambda: self.t, "initial_positions": {3: 0.3},
            "physics": {"model": str(arm), "truth": str(truth) if truth else None,
                        "joints": {i: {"joint": n} for i, n in enumerate(self.NAMES, 1)}}})
        self.bus = Cia402Bus(BusSpec("arm", "canopen", self.emulator.transport,
                                     {"sync_timeout": 0.5}), specs, time.monotonic)
        self.bus.open()
        self.bus.set_torque(True)
        self.states = self.bus.read()

    def move(self, goal: dict[int, float], cycles: int) -> float:
        """A smooth CSP stream to ``goal`` over ``cycles``: the largest error reported."""
        start = {i: s.position for i, s in self.states.items()}
        worst = 0.0
        for k in range(1, cycles + 1):
            a = 0.5 - 0.5 * math.cos(math.pi * k / cycles)
            command = {i: start[i] + a * (q - start[i]) for i, q in goal.items()}
            self.bus.write({i: ActuatorCommand(position=q) for i, q in command.items()})
            self.t += PERIOD
            self.states = self.bus.read()
            worst = max(worst, *(abs(self.states[i].position - q) for i, q in command.items()))
        return worst

    def close(self) -> None:
        self.bus.close()
        self.emulator.stop()


def test_a_light_joint_coupled_to_heavy_ones_holds_still() -> None:
    # The arm's wrist with 0.5 kg in the hand: the inertia its drive is tuned to (the
    # others held) is 11 times what it moves when they yield, so a velocity loop computed
    # explicitly at the world's 1 ms step would ring at its torque limit; the drive's
    # damping, integrated by the engine, holds every joint still.
    arm = ArmBench(DATA / "arm_hand_payload.yaml")
    try:
        assert arm.move({1: 0.0, 2: 0.0, 3: 0.3, 4: 0.0}, 50) < 5e-3  # the load caught
        assert all(s.torque_enabled and not s.error_code for s in arm.states.values())
        assert max(abs(s.velocity) for s in arm.states.values()) < 0.05
    finally:
        arm.close()


def test_the_drives_stay_tuned_as_the_arm_stretches_out() -> None:
    # Folded, the shoulder's yaw moves 8.7e-4 kg m^2; stretched out, 45 times more: a
    # drive kept at its power-up tuning trips its following error turning the yaw there.
    arm = ArmBench()
    try:
        assert arm.move({1: 0.0, 2: 1.4, 3: 0.0, 4: 0.0}, 150) < 5e-3
        assert arm.move({1: 1.0, 2: 1.4, 3: 0.0, 4: 0.0}, 100) < 5e-3
        assert not any(s.error_code for s in arm.states.values())
    finally:
        arm.close()
