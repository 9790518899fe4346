"""A Dynamixel bus and a CAN bus of one robot moving one physics world (skel_ros.physical.host).

The bundled arm with its shoulder and elbow on MIT motors (bus ``upper_bus``: python-can
``virtual``, emulated by threads of this process) and its wrist on a Dynamixel servo (bus
``hand_bus``: a pty). The MIT emulators must live in the driver's process, so the
Dynamixel bus is served there too, by a thread running the emulator process's loop on the
same pty, its servo a joint of the same world. Driven through the real drivers
(:class:`~skel_ros.hardware.dynamixel.bus.DynamixelBus`, :class:`~skel_ros.hardware.mit.
bus.MitBus`): the wrist servo's torque on lets the robot go, so the MIT motors, unpowered,
read the upper arm falling (with a world per kind, theirs would stay held). The handle's
control requests are direct calls; stopping it closes the pty and joins the thread.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from skel_ros.emulation import emulated_transport
from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.plugins import bus_class, protocol
from skel_ros.model import load_model
from skel_ros.physical.host import BusEmulation, emulator_places, start_emulators, world_names
from skel_ros.physical.option import coupled_buses, emulator_options
from skel_ros.resources import example

if TYPE_CHECKING:
    from collections.abc import Iterator

ARM = example("arm.skel")
MIXED = Path(__file__).resolve().parent / "data" / "arm_mit_dynamixel.yaml"
ELBOW = 3  # the MIT motor's id


@dataclasses.dataclass
class Rig:
    """The two buses' emulators (as the hardware node starts them) and their drivers."""

    emulators: dict[str, Any]
    drivers: dict[str, Any]


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    config = load_hardware_config(MIXED)
    bound = config.bind(config.select_skeleton(load_model(ARM)))
    initial = {d.name: d.initial_position for d in bound.skeleton.dofs}
    buses = [BusEmulation(spec.name, spec.protocol,
                          emulated_transport(protocol(spec.protocol), spec.transport),
                          [m.actuator for m in config.joints_on(spec.name)],
                          emulator_options(config.joints_on(spec.name), initial,
                                           {"model": str(ARM)}))
             for spec in config.buses]
    emulators = dict(zip([b.name for b in buses], start_emulators(buses), strict=True))
    drivers: dict[str, Any] = {}
    try:
        for spec, bus in zip(config.buses, buses, strict=True):
            driver = bus_class(spec.protocol)(
                dataclasses.replace(spec, transport=emulators[spec.name].transport),
                bus.actuators, time.monotonic)
            driver.open()
            drivers[spec.name] = driver
        yield Rig(emulators, drivers)
    finally:
        for driver in drivers.values():
            driver.close()
        for emulator in emulators.values():
            emulator.stop()


def test_the_servos_torque_on_lets_the_can_motors_arm_fall(rig: Rig) -> None:
    """One world: the wrist servo's torque on (its driver's) releases the MIT motors' joints.

    The robot stands held until a device drives it; the MIT motors stay off, so the upper
    arm falls, as their driver reads. In a world of their own (no device of theirs on),
    it would stay held at its initial pose.
    """
    servo, motors = rig.drivers["hand_bus"], rig.drivers["upper_bus"]
    assert motors.read()[ELBOW].position == pytest.approx(0.3, abs=0.01)  # held
    servo.set_torque(True)
    deadline = time.monotonic() + 10.0
    while abs(motors.read()[ELBOW].position - 0.3) < 0.2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert abs(motors.read()[ELBOW].position - 0.3) >= 0.2, "the elbow stayed held"
    state = servo.read()[1]
    assert state.torque_enabled
    assert state.position == pytest.approx(0.0, abs=0.05)  # the servo holds its wrist
    assert not rig.emulators["upper_bus"].state(ELBOW).torque_enabled
    world = rig.emulators["upper_bus"].world
    assert rig.emulators["hand_bus"].config.world is world
    # The servos act under the world's lock, as the MIT motors' frames do.
    assert rig.emulators["hand_bus"]._host._servers[0].lock is world.lock


def test_the_served_bus_answers_its_handle_in_this_process(rig: Rig) -> None:
    """The in-thread handle's requests: direct calls, the emulator process's answers."""
    hand = rig.emulators["hand_bus"]
    assert hand.pid == os.getpid()
    assert hand.running
    assert hand.state(1).position == pytest.approx(rig.drivers["hand_bus"].read()[1].position,
                                                   abs=0.01)
    assert hand.counts()["packets"] > 0
    assert hand.register(1, "Operating Mode") == 3  # position control, as the driver set
    assert hand.watchdog(1)[0] > 0  # the driver armed the Bus Watchdog
    with pytest.raises(ValueError, match="no emulated servo with id 9"):
        hand.state(9)
    hand.inject_fault(1, 0x20)
    assert not hand.state(1).torque_enabled  # an overload cuts the torque


def test_a_mixed_robot_is_one_world_and_says_where_each_bus_runs() -> None:
    """Nothing to refuse: a Dynamixel bus and a CAN bus share this process's world."""
    protocols = {"upper_bus": "mit", "hand_bus": "dynamixel"}
    arm = load_model(ARM).skeletons[-1]
    buses = {"upper_bus": ["shoulder_yaw", "shoulder_pitch", "elbow"], "hand_bus": ["wrist"]}
    assert coupled_buses(arm, buses, world_names(protocols)) is None
    assert emulator_places(protocols) == {
        "upper_bus": "threads of this process",
        "hand_bus": "a thread of this process (one loop for the Dynamixel buses)"}
    assert emulator_places({"a": "dynamixel", "b": "dynamixel"})["a"] == (
        "one emulator process for the Dynamixel buses")


def test_stopping_closes_the_port_and_joins_the_thread() -> None:
    """Each bus's stop removes its port; the last one ends the loop's thread.

    Unplugged by a call, a port comes back by the loop's doing, as in a process.
    """
    from skel_ros.hardware.base import ActuatorSpec, ControlMode

    def bus(name: str, protocol: str, joint: str, mode: ControlMode, model: str) -> BusEmulation:
        return BusEmulation(name, protocol, {}, [ActuatorSpec(1, mode, model, {}, name=joint)],
                            {"initial_positions": {1: 0.0},
                             "physics": {"model": str(ARM), "joints": {1: {"joint": joint}}}})

    before = set(threading.enumerate())
    motors, hand, gripper = start_emulators([
        bus("upper", "mit", "shoulder_yaw", ControlMode.IMPEDANCE, "AK80-9"),
        bus("hand", "dynamixel", "wrist", ControlMode.POSITION, "XM430-W350"),
        bus("fingers", "dynamixel", "elbow", ControlMode.POSITION, "XM430-W350")])
    loops = [t for t in set(threading.enumerate()) - before if t.name == "dynamixel-emulator"]
    try:
        assert len(loops) == 1  # one loop for both Dynamixel buses
        assert hand.config.world is gripper.config.world is motors.world
        ports = [Path(hand.transport["port"]), Path(gripper.transport["port"])]
        assert all(p.exists() for p in ports)
        hand.stop()
        assert not ports[0].exists()
        assert ports[1].exists()
        assert gripper.state(1).position == pytest.approx(0.0, abs=0.01)
        with pytest.raises(OSError, match="stopped"):
            hand.state(1)
        gripper.vanish(0.1)  # unplugged: the loop brings a new pty back at the same path
        assert not ports[1].exists()
        deadline = time.monotonic() + 10.0
        while not ports[1].exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ports[1].exists(), "the port did not come back"
    finally:
        for emulator in (hand, gripper, motors):
            emulator.stop()
    assert not any(p.exists() for p in ports)
    assert not loops[0].is_alive()
    assert not gripper.running
