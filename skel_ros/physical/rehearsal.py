"""A trajectory played on the physics-backed Dynamixel servos in this process, without ROS.

:func:`rehearse` builds the emulated servos of a hardware YAML's Dynamixel joints
(:mod:`skel_ros.physical.dynamixel`: one physics world of the robot, the truth file's
real robot) on a clock of its own, writes each joint's goal to its servo's control
table every ``period`` (the hardware node's control loop: 200 Hz for the bundled arm),
as the driver writes Goal Position, and reads Present Position after each step of the
clock. What comes back is the command and what the servos read, sample by sample: the
``command`` and ``real`` streams of a sim-to-real run, with no node, no transport and
no scheduler between them, so two runs of the same inputs give the same figures on any
machine. What it leaves out is the rest of a run: the simulation, the nodes' own
latency (part of a ROS run's lag) and the wire.

Used by the gate's fault tests (``test/physical/test_fault_gate.py``) and
``bench/truth_cases.py --in-process``.
"""

from __future__ import annotations

import json
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

__all__ = ["Rehearsal", "rehearse"]


@dataclass(frozen=True)
class Rehearsal:
    """What a trajectory did on the emulated servos.

    Attributes:
        joints: the joints, in the hardware YAML's order.
        times: s, each sample's clock time (shape (N,)).
        command: rad, the goal written at each time (shape (N, J)).
        real: rad, what each servo read one period later, at ``times + period``.
        period: s, between two goals.
    """

    joints: tuple[str, ...]
    times: npt.NDArray[np.float64]
    command: npt.NDArray[np.float64]
    real: npt.NDArray[np.float64]
    period: float


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
    protocols = {b.name: b.protocol for b in config.buses}
    maps = config.joints
    for m in maps:
        if protocols.get(m.bus) != "dynamixel":
            raise ConfigError(f"{config.source}:{m.line}: joint {m.name!r} is on a "
                              f"{protocols.get(m.bus)} bus: only Dynamixel servos rehearse here")
        if m.name not in trajectory.joint_names:
            raise ConfigError(f"{config.source}:{m.line}: joint {m.name!r} is not in the "
                              "trajectory")
    column = [trajectory.joint_names.index(m.name) for m in maps]
    first = trajectory.sample(0.0)[0]
    options = emulator_options(maps, {m.name: float(first[c]) for m, c in zip(maps, column,
                                                                          strict=True)},
                               {"model": str(model), "truth": truth and str(truth)})
    now = [0.0]
    servos = PhysicalEmulatorConfig(
        tuple((m.actuator.id, m.actuator.model, options["initial_positions"][m.actuator.id],
               None) for m in maps),
        physics=json.dumps(options["physics"])).build(lambda: now[0]).all_servos
    for m in maps:
        _write(servos[m.actuator.id], ct.TORQUE_ENABLE, 1, now[0])
    steps = round((trajectory.duration + tail) / period)
    command = np.zeros((steps, len(maps)))
    real = np.zeros((steps, len(maps)))
    for k in range(steps):
        goal = trajectory.sample(min(k * period, trajectory.duration))[0]
        for j, m in enumerate(maps):
            command[k, j] = goal[column[j]]
            ticks = round(m.to_actuator(command[k, j]) / ct.RAD_PER_TICK) + ct.CENTER_TICK
            _write(servos[m.actuator.id], ct.GOAL_POSITION, ticks, now[0])
        now[0] = (k + 1) * period
        for servo in servos.values():
            servo.sync(now[0])
        for j, m in enumerate(maps):
            error, data = servos[m.actuator.id].read(ct.PRESENT_POSITION.address,
                                                     ct.PRESENT_POSITION.size, now[0])
            ticks = int.from_bytes(data, "little", signed=True) - ct.CENTER_TICK
            real[k, j] = m.from_actuator(ticks * ct.RAD_PER_TICK) if error == 0 else np.nan
    return Rehearsal(tuple(m.name for m in maps), period * np.arange(steps, dtype=np.float64),
                     command, real, period)


def _write(servo: EmulatedServo, fld: ct.Field, value: int, t: float) -> None:
    data = value.to_bytes(fld.size, "little", signed=fld.signed)
    error = servo.write(fld.address, data, t)
    if error:
        raise ConfigError(f"emulated servo: writing {fld.name} = {value} failed "
                          f"(error 0x{error:02x})")
