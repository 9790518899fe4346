"""Several buses' physics-backed emulators moving one world (skel_ros.physical.host).

The bundled arm split over two buses: the shoulder on bus ``upper`` (ids 1, 2), the elbow
and the wrist on bus ``hand`` (ids 1, 2 again: ids are per bus). On MIT motors (threads
of this process, on a clock the test sets) the two buses move one world: every motor
ends where the same commands leave it on one bus holding all four (to 1e-6); on Dynamixel
servos the two buses are one emulator process, the shoulder's torque on the end of the
robot's hold for the hand's joints too. CiA 402, Feetech and MIT buses share one world and
its lock; a Dynamixel bus and a CAN bus share it too (test_mixed_world.py). A robot whose
buses cannot share one world (a bus of another distribution's emulator, coupled to one of
these) is refused, naming both; so are buses that disagree on the robot.
"""

from __future__ import annotations

import json
import os
import select
import time
from typing import TYPE_CHECKING, Any

import can
import pytest

from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.dynamixel import protocol as dxl
from skel_ros.hardware.mit.codec import ENTER_MODE, MitCodec
from skel_ros.hardware.mit.models import resolve
from skel_ros.model import load_model
from skel_ros.physical.host import BusEmulation, EmulatorStartError, start_emulators, world_names
from skel_ros.physical.option import coupled_buses
from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path

ARM = example("arm.skel")
SPLIT = {"upper": {1: "shoulder_yaw", 2: "shoulder_pitch"}, "hand": {1: "elbow", 2: "wrist"}}
ALL = {"arm": {1: "shoulder_yaw", 2: "shoulder_pitch", 3: "elbow", 4: "wrist"}}
INITIAL = {"shoulder_yaw": 0.0, "shoulder_pitch": 0.0, "elbow": 0.3, "wrist": 0.0}


def _bus(name: str, protocol: str, joints: Mapping[int, str], *, mode: ControlMode,
         model: str, extra: Mapping[str, Any]) -> BusEmulation:
    actuators = [ActuatorSpec(i, mode, model, {}, name=j) for i, j in joints.items()]
    physics = {"model": str(ARM), "joints": {i: {"joint": j} for i, j in joints.items()}}
    return BusEmulation(name, protocol, {}, actuators, {
        **extra, "initial_positions": {i: INITIAL[j] for i, j in joints.items()},
        "physics": physics})


class MitArm:
    """The arm's MIT motors on the buses of ``layout`` (bus -> id -> joint), clock the test's."""

    def __init__(self, layout: Mapping[str, Mapping[int, str]]) -> None:
        self.t = 10.0
        self.codec = MitCodec(*resolve("AK80-9", {}))
        buses = [_bus(name, "mit", joints, mode=ControlMode.IMPEDANCE, model="AK80-9",
                      extra={"clock": lambda: self.t}) for name, joints in layout.items()]
        self.emulators = dict(zip(layout, start_emulators(buses, clock=lambda: self.t),
                                  strict=True))
        self.where = {j: (name, i) for name, joints in layout.items() for i, j in joints.items()}
        self.cans = {name: can.Bus(interface="virtual", receive_own_messages=False,
                                   channel=e.transport["channel"])
                     for name, e in self.emulators.items()}

    def close(self) -> None:
        for bus in self.cans.values():
            bus.shutdown()
        for emulator in self.emulators.values():
            emulator.stop()

    def send(self, joint: str, data: bytes) -> None:
        name, motor = self.where[joint]
        self.cans[name].send(can.Message(arbitration_id=motor, data=data, is_extended_id=False))
        assert self.cans[name].recv(timeout=10.0) is not None, f"{joint}: no reply"

    def command(self, joint: str, p: float, kp: float = 40.0, kd: float = 1.0) -> None:
        self.send(joint, self.codec.encode(p, 0.0, kp, kd, 0.0))

    def run(self, seconds: float) -> None:
        """Time passes; every motor is looked at every 5 ms (the world steps meanwhile)."""
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(end, self.t + 0.005)
            for name, motor in self.where.values():
                self.emulators[name].state(motor)

    def states(self) -> dict[str, tuple[float, float]]:
        """Joint -> (position, torque) as each motor measures it."""
        out = {}
        for joint, (name, motor) in self.where.items():
            s = self.emulators[name].state(motor)
            out[joint] = (s.position, s.effort)
        return out

    def play(self) -> dict[str, tuple[float, float]]:
        """Every motor holds where it is; the shoulder pitches up fast; then the states."""
        for joint, position in INITIAL.items():
            self.send(joint, ENTER_MODE)
            self.command(joint, position)
        self.run(0.3)
        self.command("shoulder_pitch", 0.8, kp=60.0)
        self.run(0.25)
        return self.states()


@pytest.fixture(scope="module")
def one_bus() -> Iterator[dict[str, tuple[float, float]]]:
    arm = MitArm(ALL)
    try:
        yield arm.play()
    finally:
        arm.close()


def test_two_can_buses_move_one_world_as_one_bus_would(
        one_bus: dict[str, tuple[float, float]]) -> None:
    """Bus ``hand``'s motors feel the shoulder's motion, as on the robot (one bus here).

    A world per bus (the old way) leaves the shoulder limp in the hand's world: its elbow
    and wrist motors then measure another arm altogether.
    """
    arm = MitArm(SPLIT)
    try:
        assert arm.emulators["upper"].world is arm.emulators["hand"].world
        split = arm.play()
    finally:
        arm.close()
    assert one_bus["shoulder_pitch"][0] == pytest.approx(0.8, abs=0.1)  # it moved
    for joint, (position, torque) in one_bus.items():
        assert split[joint][0] == pytest.approx(position, abs=1e-6), joint
        assert split[joint][1] == pytest.approx(torque, abs=1e-6), joint
    assert abs(one_bus["elbow"][1]) > 0.05  # the elbow's motor works: there is a load


def _read_status(fd: int, deadline: float) -> bytes:
    data = b""
    while time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            data += os.read(fd, 1024)
            if len(data) >= 11:  # a WRITE's status packet
                return data
    raise AssertionError("no status packet")


def test_two_dynamixel_buses_are_one_process_moving_one_world() -> None:
    """The shoulder's servo turning torque on lets the robot go: the hand's unpowered joints fall.

    Each bus keeps its own control requests (id 1 is the shoulder's yaw on ``upper``, the
    elbow on ``hand``). With a world per bus, the hand's world would stay held until a
    servo of its own drives it.
    """
    buses = [_bus(name, "dynamixel", joints, mode=ControlMode.POSITION, model="XM430-W350",
                  extra={})
             for name, joints in SPLIT.items()]
    upper, hand = start_emulators(buses)
    fd = -1
    try:
        assert upper.pid == hand.pid  # one process
        assert upper.transport["port"] != hand.transport["port"]
        assert hand.state(1).position == pytest.approx(0.3, abs=0.01)  # the elbow, held
        assert upper.state(1).position == pytest.approx(0.0, abs=0.01)
        fd = os.open(upper.transport["port"], os.O_RDWR | os.O_NOCTTY)
        for servo in (1, 2):
            os.write(fd, dxl.write(servo, ct.TORQUE_ENABLE.address, b"\x01"))
            _read_status(fd, time.monotonic() + 10.0)
        deadline = time.monotonic() + 10.0
        while abs(hand.state(1).position - 0.3) < 0.2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert abs(hand.state(1).position - 0.3) >= 0.2, "the elbow stayed held"
        assert upper.state(2).torque_enabled
        assert not hand.state(2).torque_enabled
        hand.stop()  # its bus ends; the process serves the other
        assert upper.running
        assert upper.state(1).torque_enabled
    finally:
        if fd >= 0:
            os.close(fd)
        upper.stop()
        hand.stop()
    assert not upper.running


def test_only_a_world_of_its_own_is_refused() -> None:
    """Every kind of this package shares one world; another distribution's bus cannot.

    A Dynamixel shoulder and a CAN hand are one world (this process's); an entry point's
    emulator moves a world of its own, so its hand coupled to the shoulder is refused,
    the message naming both.
    """
    arm = load_model(ARM).skeletons[-1]
    buses = {"upper": ["shoulder_yaw", "shoulder_pitch"], "hand": ["elbow", "wrist"]}
    for kinds in ({"upper": "dynamixel", "hand": "mit"}, {"upper": "mit", "hand": "canopen"},
                  {"upper": "dynamixel", "hand": "dynamixel"},
                  {"upper": "feetech", "hand": "dynamixel"}):
        assert coupled_buses(arm, buses, world_names(kinds)) is None, kinds
    why = coupled_buses(arm, buses, world_names({"upper": "dynamixel", "hand": "acme"}))
    assert why is not None
    assert why.startswith("joint 'elbow' (bus 'hand', a world of bus 'hand''s own) moves with"
                          " joint 'shoulder_pitch' (bus 'upper', the world of the Dynamixel"
                          " emulator process)")
    why = coupled_buses(arm, buses, world_names({"upper": "mit", "hand": "acme"}))
    assert why is not None
    assert "(bus 'upper', the world of this process's emulators)" in why


def test_buses_that_disagree_on_the_robot_are_refused(tmp_path: Path) -> None:
    """Two buses naming one joint, or two models: one world is one robot."""
    twice = [_bus(name, "mit", {1: "elbow"}, mode=ControlMode.IMPEDANCE, model="AK80-9", extra={})
             for name in ("a", "b")]
    with pytest.raises(EmulatorStartError, match=r"buses 'a', 'b': .*joint 'elbow' is driven"
                                                 r" by two devices") as info:
        start_emulators(twice)
    assert info.value.bus == "a"
    other = tmp_path / "arm.skel"
    other.write_text(ARM.read_text(encoding="utf-8"), encoding="utf-8")
    apart = [_bus("a", "mit", {1: "elbow"}, mode=ControlMode.IMPEDANCE, model="AK80-9", extra={}),
             _bus("b", "mit", {1: "wrist"}, mode=ControlMode.IMPEDANCE, model="AK80-9", extra={})]
    apart[1].options["physics"]["model"] = str(other)
    with pytest.raises(EmulatorStartError, match=r"bus 'b' moves another model"):
        start_emulators(apart)


def test_the_options_of_a_shared_bus_stay_in_this_process() -> None:
    """A Dynamixel bus handed a world of this process says it cannot take it."""
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.physical.dynamixel import physical_config

    bus = _bus("a", "dynamixel", {1: "elbow"}, mode=ControlMode.POSITION, model="XM430-W350",
               extra={})
    options = json.loads(json.dumps(dict(bus.options)))
    options["physics"]["world"] = object()
    with pytest.raises(ConfigError, match="'world' is for the emulators of this process"):
        physical_config({}, bus.actuators, options)


def test_the_emulators_of_one_world_hold_its_one_lock() -> None:
    """CiA 402, Feetech and MIT buses in this process: one world, its lock each emulator's.

    Each emulator's lock guards what a frame does to its devices' laws and joints; one
    lock of their own each would let a bus's frame change a law while another bus's
    thread steps the world with it.
    """
    buses = [_bus("a", "canopen", {1: "shoulder_yaw", 2: "shoulder_pitch"},
                  mode=ControlMode.POSITION, model="", extra={}),
             _bus("b", "feetech", {1: "elbow"}, mode=ControlMode.POSITION, model="", extra={}),
             _bus("c", "mit", {5: "wrist"}, mode=ControlMode.IMPEDANCE, model="AK80-9",
                  extra={})]
    drives, servos, motors = emulators = start_emulators(buses)
    try:
        world = motors.world
        assert drives.world is world
        assert servos.bus.servos[1].physical.joint.world is world
        for emulator in emulators:
            assert emulator._lock is world.lock
        assert servos.state(1).position == pytest.approx(INITIAL["elbow"], abs=0.01)
    finally:
        for emulator in emulators:
            emulator.stop()
