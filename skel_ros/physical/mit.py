"""Emulated MIT-mode motors that move one physics model of the robot.

The same emulator as :mod:`skel_ros.emulation.mit` (the same thread on a python-can bus,
the same frames, *enter* / *exit* / *zero*, retained command, CAN timeouts, errors: the
same bytes on the wire), with one difference: each motor's shaft is a joint of a
:class:`~skel_ros.physical.world.PhysicalWorld` of the whole robot (the emulator's own, or
one the emulators of the robot's other buses move too: :mod:`skel_ros.physical.host`),
driven by the motor's own law (:class:`MitLaw`) instead of a motor model of its own.

The law is the firmware's: ``torque = kp (p_des - p) + kd (v_des - v) + t_ff`` from the
encoder's position ``p`` and the shaft's velocity ``v``, within the motor's torque limit
(its model's T range, :mod:`skel_ros.hardware.mit.models`, or the emulator's ``motor``
option's ``max_effort``), evaluated at every step of the world with the last command held
(the real firmware runs it at its current loop's rate, tens of kHz; the world's step, 1 ms
for the bundled models, stands for it: an explicit ``kd`` needs ``kd * dt`` well below the
joint's inertia). A command reaches the law after the joint's command delay (the truth
file); the reply reports the encoder's position (the truth's offset and noise), the
shaft's velocity and the law's torque, quantised as the wire encodes them, the position
wrapping by its span past ``p_max`` as the protocol-level emulator's does. The truth's
backlash and armature apply as for every device of the world; the motor adds no rotor
inertia of its own (the models' datasheets give none: a truth's ``armature`` does).

A motor's shaft cannot be put somewhere by hand (:meth:`~skel_ros.emulation.mit.
MitEmulator.move_to`): its world moves it.

Started by :func:`start_emulator` with the MIT emulator's options and ``physics``
(:data:`~skel_ros.physical.option.PHYSICS_KEYS`).
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from skel_ros.emulation.mit import MitEmulator
from skel_ros.hardware.base import ControlMode
from skel_ros.physical.option import JointMotor, build_world, split_physics

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from contextlib import AbstractContextManager

    from skel_ros.emulation.motor import MotorParams
    from skel_ros.hardware.base import ActuatorSpec
    from skel_ros.hardware.mit.codec import MitRanges
    from skel_ros.physical.world import DeviceJoint

__all__ = ["MitLaw", "PhysicalMitEmulator", "PhysicalMitMotor", "start_emulator"]


class MitLaw:
    """An MIT motor's torque law, stepped by the world (a :class:`DeviceLaw`).

    Args:
        position: the shaft's position at power-up (the held ``p_des``, with zero gains).
        max_torque: N m, the torque limit.
        max_velocity: rad/s, the fastest the motor turns (its unloaded speed's bound).
    """

    damping = 0.0  # the whole torque is explicit (DeviceLaw)
    encoder_at_output = False  # the encoder reads the rotor, before the gears

    def __init__(self, position: float, max_torque: float, max_velocity: float) -> None:
        self.command = (float(position), 0.0, 0.0, 0.0, 0.0)  # p_des, v_des, kp, kd, t_ff
        self.enabled = False
        self.max_torque = max_torque
        self.max_velocity = max_velocity
        self._position = float(position)  # the last step's encoder reading

    def set(self, position: float, velocity: float, kp: float, kd: float,
            effort: float) -> None:
        """The command held from now on (gains below 0 as 0; not finite: ignored)."""
        values = (position, velocity, kp, kd, effort)
        if all(math.isfinite(x) for x in values):
            self.command = (float(position), float(velocity), max(0.0, float(kp)),
                            max(0.0, float(kd)), float(effort))

    def torque(self, position: float, velocity: float, dt: float) -> float:  # noqa: ARG002
        """``kp (p_des - p) + kd (v_des - v) + t_ff`` within the limit; 0 in rest mode."""
        self._position = position
        if not self.enabled:
            return 0.0
        p, v, kp, kd, ff = self.command
        u = kp * (p - position) + kd * (v - velocity) + ff
        return max(-self.max_torque, min(self.max_torque, u))

    def free_speed(self) -> float:
        """The speed at which the law gives no torque on an unloaded shaft (within the play).

        ``v_des + (kp (p_des - p) + t_ff) / kd``; without ``kd``, full speed the way the
        law pushes.
        """
        if not self.enabled:
            return 0.0
        p, v, kp, kd, ff = self.command
        push = kp * (p - self._position) + ff
        if kd > 0.0:
            speed = v + push / kd
        else:
            speed = math.copysign(self.max_velocity, push) if push else 0.0
        return max(-self.max_velocity, min(self.max_velocity, speed))


class PhysicalMitMotor(JointMotor):
    """An MIT motor's shaft as a joint of the physics world (the emulator's motion).

    What the motor reports is what its encoder reads (:attr:`state`); commands reach its
    law after the joint's command delay; torque on and off at once.
    """

    law: MitLaw

    def __init__(self, joint: DeviceJoint, law: MitLaw, params: MotorParams) -> None:
        super().__init__(joint, law, params, ControlMode.IMPEDANCE)

    def _limit(self, params: MotorParams) -> None:
        """The law bounded by new limits: its torque and its speed."""
        super()._limit(params)
        self.law.max_velocity = params.max_velocity

    def _torque_on(self) -> bool:
        return self.law.enabled

    def set_torque(self, enabled: bool, t: float | None = None) -> None:  # noqa: FBT001
        """Motor mode (the law drives the joint; the world is released) or rest mode."""
        if t is not None:
            self.step(t)
        if enabled:
            self.joint.world.release()
        self.law.enabled = bool(enabled)

    def set_impedance(self, position: float, velocity: float, kp: float, kd: float,
                      effort: float) -> None:
        """The firmware's command, after the joint's command delay."""
        law = self.law
        self.joint.later(lambda: law.set(position, velocity, kp, kd, effort))

    def set_position_target(self, position: float) -> None:
        """``p_des`` (rad), the rest of the command kept."""
        _, v, kp, kd, ff = self.law.command
        self.set_impedance(position, v, kp, kd, ff)

    def set_velocity_target(self, velocity: float) -> None:
        """``v_des`` (rad/s), the rest of the command kept."""
        p, _, kp, kd, ff = self.law.command
        self.set_impedance(p, velocity, kp, kd, ff)

    def set_effort_target(self, effort: float) -> None:
        """``t_ff`` (N m), the rest of the command kept."""
        p, v, kp, kd, _ = self.law.command
        self.set_impedance(p, v, kp, kd, effort)

    def on_table(self, table: bytearray, touched: frozenset[int]) -> None:
        """An MIT motor has no control table."""


class PhysicalMitEmulator(MitEmulator):
    """MIT motors whose shafts are the joints of one physics world (module docstring).

    Args:
        transport, actuators: as :class:`~skel_ros.emulation.mit.MitEmulator`'s.
        options: its options plus ``physics`` (:data:`~skel_ros.physical.option.
            PHYSICS_KEYS`).

    Raises:
        ConfigError: a ``physics`` without model or joints, unknown keys, a motor without
            a joint, a model or truth file that cannot be used; the MIT emulator's own.
    """

    def __init__(self, transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                 options: Mapping[str, Any]) -> None:
        physics, rest = split_physics(options)
        clock = rest.get("clock", time.monotonic)
        initial = dict(rest.get("initial_positions") or {})
        self.world, self._joints = build_world(
            physics, {a.id: float(initial.get(a.id, 0.0)) for a in actuators}, clock())
        super().__init__(transport, actuators, rest)

    def _motion_lock(self) -> AbstractContextManager[Any]:
        """The world's lock: the emulators of every bus moving it hold it (one at a time)."""
        return self.world.lock

    def _motion(self, actuator: ActuatorSpec, ranges: MitRanges,  # noqa: ARG002
                params: MotorParams, position: float, now: float,  # noqa: ARG002
                ) -> PhysicalMitMotor:
        law = MitLaw(position, params.max_effort, params.max_velocity)
        return PhysicalMitMotor(self.world.joints[self._joints[actuator.id][0]], law, params)


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> PhysicalMitEmulator:
    """Start physics-backed MIT motors for ``actuators`` (a thread of this process).

    The MIT emulator's arguments (:func:`skel_ros.emulation.mit.start_emulator`) plus the
    option ``physics``.
    """
    return PhysicalMitEmulator(transport, actuators, options)
