"""A trajectory played on the physics-backed Dynamixel servos in this process, without ROS.

:func:`drive` builds the emulated servos of a hardware YAML's Dynamixel joints
(:mod:`skel_ros.physical.dynamixel`: one physics world of the robot, the truth file's
real robot) on a clock of its own, writes each joint's goal to its servo's control
table every ``period`` (the hardware node's control loop: 200 Hz for the bundled arm),
as the driver writes Goal Position, and reads Present Current (or Load), Velocity and
Position after each step of the clock, as the driver's Sync Read does. What comes back
is the command and what the servos read, sample by sample: the ``command`` and ``real``
streams of a sim-to-real run, with no node, no transport and no scheduler between them,
so two runs of the same inputs give the same figures on any machine. What it leaves out
is the rest of a run: the simulation, the nodes' own latency (part of a ROS run's lag)
and the wire. :func:`rehearse` plays a trajectory that way.

Used by the gate's fault tests (``test/physical/test_fault_gate.py``),
``bench/truth_cases.py --in-process``, and the identification's bench and tests of a
servo's hold (``bench/identify_hold.py``, ``test/identify/test_recovery_coupled.py``).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.errors import ConfigError
from skel_ros.physical.dynamixel import PhysicalEmulatorConfig
from skel_ros.physical.option import emulator_options

if TYPE_CHECKING:
    from pathlib import Path

    import numpy.typing as npt

    from skel_ros.emulation.dynamixel import EmulatedServo
    from skel_ros.trajectory import PointTrajectory

__all__ = ["Rehearsal", "drive", "rehearse"]


@dataclass(frozen=True)
class Rehearsal:
    """What a trajectory did on the emulated servos.

    Attributes:
        joints: the joints, in the hardware YAML's order.
        times: s, each sample's clock time (shape (N,)).
        command: rad, the goal written at each time (shape (N, J)).
        real: rad, what each servo read one period later, at ``times + period``.
        period: s, between two goals.
        velocity: rad/s, each servo's Present Velocity, read with ``real``.
        effort: N m, the torque each servo's Present Current (a model without a current
            sensor: Present Load) says, read with ``real``; at the joint.
    """

    joints: tuple[str, ...]
    times: npt.NDArray[np.float64]
    command: npt.NDArray[np.float64]
    real: npt.NDArray[np.float64]
    period: float
    velocity: npt.NDArray[np.float64]
    effort: npt.NDArray[np.float64]


def rehearse(model: Path, hardware: Path, trajectory: PointTrajectory, *,
             truth: Path | None = None, period: float = 0.005,
             tail: float = 0.5) -> Rehearsal:
    """Play ``trajectory`` on the servos of ``hardware``, moving ``model`` (module docstring).

    Every joint of the hardware YAML must be on a Dynamixel bus and in ``trajectory``;
    each starts where the trajectory does. The goals go on for ``tail`` seconds past the
    trajectory's end (its last point held).

    Raises:
        ConfigError: a joint on another protocol or not in the trajectory; the model,
            the YAML or the truth cannot be used (``file:line``).
    """
    config = load_hardware_config(hardware)
    maps = config.joints
    for m in maps:
        if m.name not in trajectory.joint_names:
            raise ConfigError(f"{config.source}:{m.line}: joint {m.name!r} is not in the "
                              "trajectory")
    column = [trajectory.joint_names.index(m.name) for m in maps]
    steps = round((trajectory.duration + tail) / period)
    goals = np.array([trajectory.sample(min(k * period, trajectory.duration))[0][column]
                      for k in range(steps)])
    return drive(model, hardware, goals, truth=truth, period=period)


def drive(model: Path, hardware: Path, goals: npt.NDArray[np.float64], *,
          truth: Path | None = None, period: float = 0.005,
          profile: bool = False) -> Rehearsal:
    """Write ``goals`` to the servos of ``hardware`` moving ``model`` (module docstring).

    ``goals``: rad, shape (N, J), the hardware YAML's joints in its order, one row every
    ``period``; each servo starts at its first goal.

    ``profile``: the servos get the time-based profile the Dynamixel backend sets for
    ``profile_time`` one period (Drive Mode bit 2, Profile Velocity the period in ms,
    Profile Acceleration 0): each ramps to a goal over the period instead of stepping.

    Raises:
        ConfigError: a joint on another protocol; the model, the YAML or the truth
            cannot be used (``file:line``).
    """
    config = load_hardware_config(hardware)
    protocols = {b.name: b.protocol for b in config.buses}
    maps = config.joints
    for m in maps:
        if protocols.get(m.bus) != "dynamixel":
            raise ConfigError(f"{config.source}:{m.line}: joint {m.name!r} is on a "
                              f"{protocols.get(m.bus)} bus: only Dynamixel servos rehearse here")
    goals = np.asarray(goals, dtype=float)
    options = emulator_options(maps, {m.name: float(goals[0, j]) for j, m in enumerate(maps)},
                               {"model": str(model), "truth": truth and str(truth)})
    now = [0.0]
    servos = PhysicalEmulatorConfig(
        tuple((m.actuator.id, m.actuator.model, options["initial_positions"][m.actuator.id],
               None) for m in maps),
        physics=json.dumps(options["physics"])).build(lambda: now[0]).all_servos
    for m in maps:
        if profile:
            servo = servos[m.actuator.id]
            _write(servo, ct.DRIVE_MODE, ct.DRIVE_MODE_TIME_BASED, now[0])
            _write(servo, ct.PROFILE_ACCELERATION, 0, now[0])
            _write(servo, ct.PROFILE_VELOCITY, max(1, round(period * 1e3)), now[0])
        _write(servos[m.actuator.id], ct.TORQUE_ENABLE, 1, now[0])
    torque_unit = [_torque_unit(m.actuator.model) for m in maps]
    steps = goals.shape[0]
    real, velocity, effort = (np.zeros((steps, len(maps))) for _ in range(3))
    for k in range(steps):
        for j, m in enumerate(maps):
            servo = servos[m.actuator.id]
            ticks = round(m.to_actuator(goals[k, j]) / ct.RAD_PER_TICK) + ct.CENTER_TICK
            _write(servo, ct.GOAL_POSITION, ticks, now[0])
        now[0] = (k + 1) * period
        for servo in servos.values():
            servo.sync(now[0])
        for j, m in enumerate(maps):
            error, data = servos[m.actuator.id].read(_PRESENT_START, _PRESENT_SIZE, now[0])
            if error:
                real[k, j] = velocity[k, j] = effort[k, j] = np.nan
                continue
            current, speed, ticks = _PRESENT.unpack(data)
            real[k, j] = m.from_actuator((ticks - ct.CENTER_TICK) * ct.RAD_PER_TICK)
            sign = m.direction * m.gear_ratio
            velocity[k, j] = speed * ct.RAD_S_PER_VELOCITY_UNIT / sign
            effort[k, j] = current * torque_unit[j] * sign
    return Rehearsal(tuple(m.name for m in maps), period * np.arange(steps, dtype=np.float64),
                     goals, real, period, velocity, effort)


# Present Current (or Load), Velocity and Position: one read, as the driver's Sync Read.
_PRESENT = struct.Struct("<hii")
_PRESENT_START = ct.PRESENT_CURRENT.address
_PRESENT_SIZE = ct.PRESENT_POSITION.address + ct.PRESENT_POSITION.size - _PRESENT_START


def _torque_unit(model_name: str) -> float:
    """N m per Present Current unit (a model without a current sensor: per Load unit)."""
    model = ct.model_by_name(model_name)
    if model is None:
        raise ConfigError(f"emulated servo: unknown Dynamixel model {model_name!r}")
    if model.current_unit is not None:
        return model.current_unit * model.torque_constant
    return ct.LOAD_UNIT * model.stall_torque


def _write(servo: EmulatedServo, fld: ct.Field, value: int, t: float) -> None:
    data = value.to_bytes(fld.size, "little", signed=fld.signed)
    error = servo.write(fld.address, data, t)
    if error:
        raise ConfigError(f"emulated servo: writing {fld.name} = {value} failed "
                          f"(error 0x{error:02x})")
