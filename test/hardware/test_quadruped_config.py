"""The bundled quadruped's hardware YAML and trajectory fit examples/quadruped.skel.

``config/hardware/quadruped_mit.yaml`` puts the 12 DOFs on MIT-mode CAN motors. It must
load, bind (every DOF mapped, no limit widened), be accepted by the MIT driver (known
models, gains, ids), and drive the emulated motors as the hardware node's ``emulate``
path starts them: on the transports written in the file, at the model's initial positions.
``examples/quadruped_trajectory.yaml`` must start and end at the initial pose and stay well
inside the limits of both the model and the YAML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.emulation import emulated_transport
from skel_ros.emulation.mit import start_emulator
from skel_ros.hardware import HardwareBackend, MotionState, hardware_runner, load_hardware_config
from skel_ros.hardware.base import BusSpec, ControlMode
from skel_ros.hardware.mit import lookup
from skel_ros.hardware.mit.bus import MitBus
from skel_ros.hardware.plugins import protocol
from skel_ros.model import load_skel
from skel_ros.model.limits import CommandKind, LimitSet
from skel_ros.resources import example, resolve
from skel_ros.trajectory import check_limits, load_trajectory
from skel_ros.trajectory.limits import DofLimits

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.emulation.mit import MitEmulator
    from skel_ros.hardware import HardwareStatus
    from skel_ros.hardware.config import BoundConfig, HardwareConfig
    from skel_ros.model.types import Skeleton

CONFIG = resolve("package://skel_ros/config/hardware/quadruped_mit.yaml")
TRAJECTORY = example("quadruped_trajectory.yaml")
LEGS = ("fl", "fr", "hl", "hr")
# The trajectory keeps this far inside every position limit (rad), and this fraction of
# every velocity limit: "slow, well inside the limits".
POSITION_MARGIN = 0.25
SPEED_FRACTION = 0.1


@pytest.fixture(scope="module")
def skeleton() -> Skeleton:
    return load_skel(example("quadruped.skel")).skeletons[0]


@pytest.fixture(scope="module")
def config() -> HardwareConfig:
    return load_hardware_config(CONFIG)


@pytest.fixture(scope="module")
def bound(config: HardwareConfig, skeleton: Skeleton) -> BoundConfig:
    return config.bind(skeleton)


def test_every_dof_is_mapped_and_no_limit_is_widened(bound: BoundConfig,
                                                     skeleton: Skeleton) -> None:
    dofs = tuple(d.name for d in skeleton.dofs)
    assert len(dofs) == 12
    assert bound.unmapped == ()
    assert bound.names == dofs
    model = LimitSet.from_skeleton(skeleton)
    for name in dofs:
        ours, theirs = bound.limits[name], model[name]
        for kind in ("position", "velocity", "acceleration", "effort"):
            lo, hi = getattr(ours, f"{kind}_lower"), getattr(ours, f"{kind}_upper")
            assert getattr(theirs, f"{kind}_lower") <= lo <= hi <= getattr(
                theirs, f"{kind}_upper"), (name, kind)


def test_motors_are_mit_models_the_driver_accepts(config: HardwareConfig,
                                                  bound: BoundConfig) -> None:
    assert {b.protocol for b in config.buses} == {"mit"}
    ids = [j.actuator.id for j in config.joints]
    assert sorted(ids) == list(range(1, 13))  # unique over both buses: one bus works too
    for jm in config.joints:
        assert jm.actuator.mode is ControlMode.IMPEDANCE, jm.name
        model = lookup(jm.actuator.model)
        assert model is not None, jm.name
        assert jm.actuator.options["kp"] > 0, jm.name
        assert jm.actuator.options["kd"] > 0, jm.name
        assert jm.gear_ratio == 1.0
        assert jm.zero_offset == 0.0
    # As the manager builds them: each with its DOF's limits at the motor.
    with_limits = dict(zip(bound.names, bound.actuators(), strict=True))
    for spec in config.buses:
        # The constructor checks models, ranges, gains, ids and that the position limits
        # lie inside the motor's range; it opens nothing.
        MitBus(spec, [with_limits[m.name] for m in config.joints_on(spec.name)], lambda: 0.0)


def test_directions_mirror_the_sides(config: HardwareConfig, skeleton: Skeleton) -> None:
    direction = {j.name: j.direction for j in config.joints}
    for leg in LEGS:
        right = leg[1] == "r"
        hind = leg[0] == "h"
        assert direction[f"{leg}_hip_pitch"] == direction[f"{leg}_knee"] == (-1 if right else 1)
        assert direction[f"{leg}_hip_abd"] == (-1 if hind else 1)
    # Every model position, mirrored or not, is inside the motors' fixed-point range.
    for jm in config.joints:
        dof = next(d for d in skeleton.dofs if d.name == jm.name)
        model = lookup(jm.actuator.model)
        assert model is not None, jm.name
        for q in (dof.position_lower, dof.position_upper):
            assert model.ranges.p_min < jm.to_actuator(q) < model.ranges.p_max


def emulator_transport(spec: BusSpec) -> dict[str, object]:
    """Where the hardware node puts the emulator of ``spec``'s bus (``emulate:=true``)."""
    return emulated_transport(protocol(spec.protocol), spec.transport)


def test_the_real_interface_and_the_emulate_path(config: HardwareConfig) -> None:
    # The file names the real robot's buses ...
    assert [(b.transport["interface"], b.transport["channel"]) for b in config.buses] == [
        ("socketcan", "can0"), ("socketcan", "can1")]
    # ... emulate:=true puts the emulators on fresh in-process virtual channels instead ...
    assert [emulator_transport(b) for b in config.buses] == [{}, {}]
    # ... and an explicit virtual override (tests) is kept.
    virtual = config.with_overrides(can_interface="virtual")
    assert [emulator_transport(b)["interface"] for b in virtual.buses] == ["virtual", "virtual"]
    # Serial transports are left to the Dynamixel emulator (it opens its own pty).
    serial = BusSpec("s", "dynamixel", {"port": "/dev/ttyUSB0", "baudrate": 1000000})
    assert emulator_transport(serial) == {"port": "/dev/ttyUSB0", "baudrate": 1000000}


class _Rig:
    """The node's emulate path without ROS: emulators on the file's transports, one clock."""

    def __init__(self, config: HardwareConfig, skeleton: Skeleton) -> None:
        self.t = 0.0
        initial = {d.name: d.initial_position for d in skeleton.dofs}
        self.mappings = {m.name: m for m in config.joints}
        self.emulators: dict[int, MitEmulator] = {}
        try:
            for spec in config.buses:
                maps = config.joints_on(spec.name)
                emulator = start_emulator(emulator_transport(spec), [m.actuator for m in maps], {
                    "clock": lambda: self.t,
                    "initial_positions": {m.actuator.id: m.to_actuator(initial[m.name])
                                          for m in maps}})
                self.emulators.update(dict.fromkeys((m.actuator.id for m in maps), emulator))
                config = config.with_transport(spec.name, emulator.transport)
            self.attach(HardwareBackend(config.bind(skeleton), clock=lambda: self.t))
        except BaseException:
            self._stop_emulators()
            raise

    def attach(self, backend: HardwareBackend) -> None:
        """Drive ``backend`` under a runner and a core, as the hardware node does."""
        self.backend = backend
        self.runner = hardware_runner(backend)
        self.core = self.runner.core

    def step(self) -> HardwareStatus:
        self.t += self.backend.period
        self.runner.cycle()
        return self.backend.status()

    def until(self, predicate: Callable[[], bool], limit: int = 400) -> None:
        for _ in range(limit):
            self.step()
            if predicate():
                return
        raise AssertionError(f"not reached in {limit} cycles: {self.backend.status().message}")

    def motor_position(self, name: str) -> float:
        """The emulated motor's shaft position (actuator side) of DOF ``name``."""
        motor_id = self.mappings[name].actuator.id
        return self.emulators[motor_id].state(motor_id).position

    def close(self) -> None:
        self.runner.cleanup()
        self._stop_emulators()

    def _stop_emulators(self) -> None:
        for emulator in {id(e): e for e in self.emulators.values()}.values():
            emulator.stop()


def test_the_yaml_drives_the_emulated_motors(config: HardwareConfig,
                                             skeleton: Skeleton) -> None:
    rig = _Rig(config, skeleton)
    try:
        status = rig.step()
        assert status.state is MotionState.DISABLED, status.message
        initial = np.array([d.initial_position for d in skeleton.dofs])
        np.testing.assert_allclose(status.position, initial, atol=1e-3)
        request = rig.backend.enable()
        rig.until(lambda: request.done)
        assert request.ok, request.message
        squat = {"fl_hip_pitch": 0.65, "fl_knee": -1.3, "fr_hip_pitch": 0.65, "fr_knee": -1.3,
                 "hl_hip_abd": 0.2, "hr_hip_abd": -0.2}
        result = rig.core.command(CommandKind.POSITION, list(squat), list(squat.values()))
        assert result.ok, result.message
        index = {n: i for i, n in enumerate(rig.backend.names)}
        rig.until(lambda: all(abs(rig.backend.status().position[index[n]] - q) < 5e-3
                              for n, q in squat.items()))
        for name, q in squat.items():
            # The motor turned the way its direction says (mirrored on the right / hind).
            jm = rig.mappings[name]
            assert rig.motor_position(name) == pytest.approx(jm.direction * q, abs=5e-3)
    finally:
        rig.close()


def test_the_trajectory_is_slow_and_inside_the_limits(bound: BoundConfig,
                                                      skeleton: Skeleton) -> None:
    names = [d.name for d in skeleton.dofs]
    trajectory = load_trajectory(TRAJECTORY, names)
    assert sorted(trajectory.joint_names) == sorted(names)  # all 12 DOFs move
    assert 6.0 <= trajectory.duration <= 8.0
    initial = {d.name: d.initial_position for d in skeleton.dofs}
    start = np.array([initial[n] for n in trajectory.joint_names])
    for t in (0.0, trajectory.duration):
        q, v, _ = trajectory.sample(t)
        np.testing.assert_allclose(q, start, atol=1e-12)
        np.testing.assert_allclose(v, 0.0, atol=1e-12)
    # Well inside the YAML's limits (the model's, tightened): a margin in position, a
    # fraction of the speed.
    narrowed = {}
    for n in trajectory.joint_names:
        lim = bound.limits[n]
        narrowed[n] = DofLimits(lim.position_lower + POSITION_MARGIN,
                                lim.position_upper - POSITION_MARGIN,
                                SPEED_FRACTION * lim.velocity_lower,
                                SPEED_FRACTION * lim.velocity_upper)
    check_limits(trajectory, narrowed)
    samples = np.array([trajectory.sample(t)[0] for t in np.linspace(0, trajectory.duration, 81)])
    assert (np.ptp(samples, axis=0) > 0.15).all()  # every DOF really moves
