"""Emulated Dynamixel X-series servos that move one physics model of the robot.

The same emulator as :mod:`skel_ros.emulation.dynamixel` (the same process on a pty, the
same control table, instructions, status packets, faults, watchdog: the same bytes on the
wire), with one difference: each servo's shaft is a joint of a :class:`~skel_ros.
physical.world.PhysicalWorld` of the whole robot, driven by the servo's own control law
(:class:`~skel_ros.physical.servo_law.XServoLaw`: profile, position PID with the gains of
its control table, DC motor), instead of a first-order motor of its own. Present
Position, Velocity and Current (or Load) come from the world, through the servo's
encoder (4096 pulses per turn, the truth file's offset and noise) and the table's units.

The servos' power-on RAM holds their model's default gains (the e-Manual's), where the
protocol-level emulator leaves 0. A servo's shaft cannot be put somewhere by hand
(the control channel's ``set_position``): its world moves it.

Started by :func:`start_emulator` with the Dynamixel emulator's options and ``physics``
(:data:`PHYSICS_KEYS`: the model file, its arguments, the truth file and each servo's
joint and transmission); ``python -m skel_ros.physical.dynamixel --control --config
JSON`` is the process.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skel_ros.emulation import dynamixel as emu
from skel_ros.emulation.motor import MotorParams
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.hardware.errors import ConfigError
from skel_ros.physical.option import (
    PHYSICS_KEYS,
    ServoMotor,
    build_world,
    load_real_world,
    split_physics,
)
from skel_ros.physical.servo_law import XServoLaw, default_gains

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.hardware.base import ActuatorSpec

__all__ = ["PHYSICS_KEYS", "PhysicalEmulatorConfig", "PhysicalServoMotor", "load_real_world",
           "main", "physical_config", "start_emulator"]


class PhysicalServoMotor(ServoMotor):
    """A Dynamixel X-series servo's shaft as a joint of the physics world.

    An emulated servo's ``motor``: its law is :class:`XServoLaw`; :attr:`params` are the
    limits the servo's settings allow.
    """

    law: XServoLaw

    def set_effort_target(self, effort: float) -> None:
        """Goal Current's torque (N m), after the joint's command delay."""
        law = self.law
        self.joint.later(lambda: setattr(law, "goal_torque", float(effort)))

    def on_table(self, table: bytearray, touched: frozenset[int]) -> None:  # noqa: ARG002
        """The servo's gains, limits, profile and mode, as its table now says."""
        self.law.configure(table)


@dataclass(frozen=True)
class PhysicalEmulatorConfig(emu.EmulatorConfig):
    """An emulator configuration whose servos move a physics world.

    ``physics``: the ``physics`` option (:data:`PHYSICS_KEYS`), as JSON; ``world``: in
    the process that serves the servos only, a world the devices of several buses move
    (the ``physics`` option's ``world``: :mod:`skel_ros.physical.host`; an emulator
    process's, or the caller's when a thread of it serves them), never in the JSON.
    """

    physics: str = "{}"
    world: Any = field(default=None, compare=False, repr=False)

    def to_json(self) -> str:
        """One line of JSON."""
        raw = json.loads(super().to_json())
        raw["physics"] = json.loads(self.physics)
        return json.dumps(raw)

    @classmethod
    def from_json(cls, text: str) -> PhysicalEmulatorConfig:
        """Parse :meth:`to_json`'s output."""
        base = emu.EmulatorConfig.from_json(text)
        physics = json.dumps(json.loads(text).get("physics", {}))
        return cls(base.servos, base.baudrate, base.firmware, base.return_delay,
                   base.wire_time, physics)

    def build(self, clock: Callable[[], float]) -> emu.ServoBus:
        """The servos, each a joint of one physics world started now."""
        now = clock()
        physics = json.loads(self.physics)
        if self.world is not None:
            physics["world"] = self.world
        physical, joints = build_world(physics, {i: p for i, _, p, _ in self.servos}, now)
        servos = {}
        for dxl_id, model_name, position, kt in self.servos:
            model = ct.model_by_name(model_name)
            if model is None:
                raise ConfigError(f"emulator: unknown Dynamixel model {model_name!r}")
            law = XServoLaw(model)
            law.hold(position)
            motor = PhysicalServoMotor(physical.joints[joints[dxl_id][0]], law,
                                       MotorParams(max_velocity=model.no_load_speed,
                                                   max_effort=model.stall_torque))
            servos[dxl_id] = emu.EmulatedServo.create(
                dxl_id, model, position, now, firmware=self.firmware,
                return_delay=self.return_delay, torque_constant=kt, motor=motor,
                ram_defaults=default_gains(model.name).fields())
        return emu.ServoBus(servos, clock)


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> emu.DynamixelEmulator:
    """Start physics-backed servos for ``actuators``.

    The Dynamixel emulator's arguments (:func:`skel_ros.emulation.dynamixel.
    start_emulator`) plus the option ``physics``.

    Raises:
        ConfigError: unknown options, a ``physics`` without model or joints, models, ids.
        TransportError: the process did not start (a model or truth file it cannot read
            is said so).
    """
    return emu.DynamixelEmulator(physical_config(transport, actuators, options),
                                 module="skel_ros.physical.dynamixel")


def physical_config(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                    options: Mapping[str, Any]) -> PhysicalEmulatorConfig:
    """What :func:`start_emulator` starts: its arguments, checked (``physics`` in JSON).

    Raises:
        ConfigError: unknown options, a ``physics`` without model or joints, models, ids.
    """
    physics, rest = split_physics(options)
    if physics.get("world") is not None:
        raise ConfigError("physics emulation: Dynamixel servos move a world of their"
                          " emulator's process; 'world' is for the emulators of this process"
                          " (several Dynamixel buses: skel_ros.physical.host)")
    base = emu.emulator_config(transport, actuators, rest)
    return PhysicalEmulatorConfig(base.servos, base.baudrate, base.firmware,
                                  base.return_delay, base.wire_time, json.dumps(physics))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the emulator process (``--control --config JSON``, as :func:`start_emulator`)."""
    parser = argparse.ArgumentParser(prog="skel_ros.physical.dynamixel",
                                     description="Physics-backed Dynamixel servos on a pty.")
    parser.add_argument("--config", required=True, help="the configuration as JSON")
    parser.add_argument("--control", action="store_true", help="JSON control on stdin/stdout")
    args = parser.parse_args(argv)
    return emu.run(PhysicalEmulatorConfig.from_json(args.config), control=args.control)


if __name__ == "__main__":
    sys.exit(main())
