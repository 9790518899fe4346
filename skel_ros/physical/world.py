"""One physics world of the whole robot, its joints driven by emulated devices.

:class:`PhysicalWorld` builds the real robot (the model with the truth file applied,
:func:`skel_ros.model.truth.apply_truth`) in an engine (MuJoCo, through
:mod:`skel_ros.sim`), and steps it on an injected clock: :meth:`PhysicalWorld.advance`
runs every step due up to a time, so devices that answer a bus at the time of each packet
see one world that moved in real time. Before every step, each driven joint's device
computes its motor's torque from what its encoder reads (:class:`DeviceJoint`), and the
world applies it.

Between the device and the joint, what the truth file says of that joint:

* ``delay``: a command reaches the motor ``delay`` seconds after the device took it
  (:meth:`DeviceJoint.later`);
* ``encoder_offset`` and ``encoder_noise``: every reading is the joint's position plus
  the offset plus white noise (seeded by the truth's ``seed`` and the joint's place:
  repeatable runs);
* ``backlash``: the gear's play. The motor side moves within the play without turning the
  joint (massless, at the speed its drive would reach unloaded), and pushes the joint
  only once the play is taken up in the direction it pushes;
* ``armature``: added to the joint in the engine, with the device's own rotor inertia
  (:meth:`DeviceJoint.add_rotor`).

Until a device first drives its joint (:meth:`PhysicalWorld.release`: a servo's first
torque on) the robot stands held at its initial pose, as on its stand or in a hand, and
the simulation node holds it there until its first command: with every motor off, an arm
would otherwise fall before the run starts. Time passes; nothing moves.

Friction, damping and added masses are in the real model itself. Positions, velocities
and torques given to and taken from devices are at the actuator (its side of the
:class:`Transmission`); the world works at the joint.
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from skel_ros.model.truth import EMPTY_TRUTH, apply_truth
from skel_ros.model.types import ActuatorType
from skel_ros.sim import MujocoEngine

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from skel_ros.model.truth import JointTruth, Truth
    from skel_ros.model.types import Skeleton, World

__all__ = ["DeviceJoint", "DeviceLaw", "PhysicalWorld", "Transmission", "real_world"]


@dataclass(frozen=True)
class Transmission:
    """Joint <-> actuator, as a hardware YAML says.

    ``actuator = zero_offset + direction * gear_ratio * joint``;
    ``joint_torque = direction * gear_ratio * actuator_torque``.
    """

    direction: int = 1
    gear_ratio: float = 1.0
    zero_offset: float = 0.0

    def to_actuator(self, joint: float) -> float:
        """The actuator's position for joint position ``joint``."""
        return self.zero_offset + self.direction * self.gear_ratio * joint

    def to_joint(self, actuator: float) -> float:
        """The joint's position for actuator position ``actuator``."""
        return self.direction * (actuator - self.zero_offset) / self.gear_ratio


class DeviceLaw(Protocol):
    """A device's control law, stepped by the world."""

    def torque(self, position: float, velocity: float, dt: float) -> float:
        """The motor's torque (actuator side) for one step of ``dt``.

        From the encoder's ``position`` and the shaft's ``velocity`` (actuator side).
        """
        ...

    def free_speed(self) -> float:
        """The speed (actuator side) the motor would turn at unloaded, as driven now.

        How fast it crosses the gear's play.
        """
        ...

    @property
    def damping(self) -> float:
        """N m s/rad (actuator side) of the motor's torque the engine integrates itself.

        The part ``-damping * velocity`` of the motor's torque: the world puts it in the
        joint's damping, which the engine integrates implicitly, so a stiff velocity loop
        stays stable at the world's step; :meth:`torque` returns the rest. Taken after
        each :meth:`torque`; 0: none.
        """
        ...


class _Still:
    """No device: no torque."""

    damping = 0.0

    def torque(self, position: float, velocity: float, dt: float) -> float:  # noqa: ARG002
        return 0.0

    def free_speed(self) -> float:
        return 0.0


class DeviceJoint:
    """One joint of the world, as its device sees it (actuator side)."""

    def __init__(self, world: PhysicalWorld, name: str, index: int, *,
                 transmission: Transmission, truth: JointTruth, seed: int) -> None:
        self.world = world
        self.name = name
        self.index = index  # in the engine's DOF order
        self.transmission = transmission
        self.truth = truth
        self.law: DeviceLaw = _Still()
        self._rng = np.random.default_rng([seed, index])
        self._gap = 0.0  # motor side - joint side within the backlash, joint rad
        self._damping = 0.0  # the law's damping in the engine now (actuator side)
        self.position = 0.0  # the encoder's last reading (actuator side)
        self.velocity = 0.0  # the shaft's (actuator side)
        self.torque = 0.0  # the motor's last torque (actuator side)

    @property
    def true_position(self) -> float:
        """The joint's position (joint side, no encoder error)."""
        return float(self.world.engine.positions()[self.index])

    def add_rotor(self, inertia: float) -> None:
        """The device's rotor: ``inertia`` (kg m^2) at the actuator.

        The joint's armature is its share through the gears plus the truth's ``armature``.
        """
        ratio = self.transmission.gear_ratio
        self.world.engine.set_armature(self.name, inertia * ratio * ratio + self.truth.armature)

    def later(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the joint's command delay has passed (now, without one)."""
        self.world.at(self.world.time + self.truth.delay, action)

    def _read(self, q: float, qd: float) -> None:
        t = self.truth
        noise = self._rng.normal(0.0, t.encoder_noise) if t.encoder_noise else 0.0
        self.position = self.transmission.to_actuator(q + t.encoder_offset + noise)
        self.velocity = self.transmission.direction * self.transmission.gear_ratio * qd

    def _joint_torque(self, dt: float) -> float:
        tr = self.transmission
        law = self.law
        torque = law.torque(self.position, self.velocity, dt)
        if law.damping != self._damping:
            self._damping = law.damping
            self.world._set_damping(self, law.damping * tr.gear_ratio * tr.gear_ratio)  # noqa: SLF001
        self.torque = torque - self._damping * self.velocity  # the motor's, all of it
        joint_torque = tr.direction * tr.gear_ratio * torque
        half = 0.5 * self.truth.backlash
        if half <= 0.0 or joint_torque == 0.0:
            return joint_torque
        push = 1.0 if joint_torque > 0.0 else -1.0
        if self._gap * push >= half:  # in contact on the side it pushes
            return joint_torque
        # Within the play: the motor side turns unloaded, the joint gets nothing.
        motor = tr.direction * self.law.free_speed() / tr.gear_ratio  # joint side
        joint = self.velocity / (tr.direction * tr.gear_ratio)
        self._gap = max(-half, min(half, self._gap + (motor - joint) * dt))
        return 0.0


class PhysicalWorld:
    """The real robot in an engine, stepped on a clock (module docstring).

    Args:
        world: the real robot (:func:`real_world`: the model with the truth applied).
        joints: driven DOF name -> its transmission.
        truth: how the devices differ from perfect ones (delay, encoder, backlash,
            armature) and the noise seed.
        t0: the clock's time of the world's start.
    """

    def __init__(self, world: World, joints: Mapping[str, Transmission],
                 truth: Truth = EMPTY_TRUTH, t0: float = 0.0) -> None:
        self.engine = MujocoEngine(_driven(world, set(joints)), enforce_limits=True)
        names = self.engine.dof_names
        self.joints: dict[str, DeviceJoint] = {}
        for name, transmission in joints.items():
            index = names.index(name)
            jt = truth.joint(name)
            self.joints[name] = DeviceJoint(self, name, index, transmission=transmission,
                                             truth=jt, seed=truth.seed)
            if jt.armature:
                self.engine.set_armature(name, jt.armature)
        self._index = np.array([j.index for j in self.joints.values()], dtype=np.intp)
        self._torques = np.zeros(len(self.joints))
        self.dt = self.engine.time_step
        self.t0 = t0
        self._steps = 0
        self.held = True  # at the initial pose until release()
        self._due: list[tuple[float, int, Callable[[], None]]] = []
        self._address: dict[str, int | None] = {}  # DOF name -> MuJoCo DOF address
        self._own_damping: dict[str, float] = {}  # DOF name -> the real model's damping
        self._mass: dict[str, tuple[int, float]] = {}  # DOF name -> (step, M_ii)
        self._order = itertools.count()
        self._read()

    @property
    def time(self) -> float:
        """The clock time the world is at."""
        return self.t0 + self._steps * self.dt

    def at(self, t: float, action: Callable[[], None]) -> None:
        """Run ``action`` before the first step that starts at or after clock time ``t``."""
        if t <= self.time:
            action()
        else:
            heapq.heappush(self._due, (t, next(self._order), action))

    def release(self) -> None:
        """Let the robot move: a device drives its joint (module docstring)."""
        self.held = False

    def inertia(self, name: str) -> float | None:
        """Kg m^2: what driven joint ``name`` moves at the present pose, the others held.

        The mass matrix's diagonal ``M_ii`` (armature included), at the joint; None when
        the engine has no hinge or slide joint of that name (a joint of a ball, or one
        renamed in a world of several skeletons). Taken once per step.
        """
        from skel_ros.sim.mujoco_engine import import_mujoco

        mujoco = import_mujoco()
        model, data = self.engine.world, self.engine.data
        if name not in self._address:
            joint = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name))
            hinge_or_slide = joint >= 0 and int(model.jnt_type[joint]) in (
                int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
            self._address[name] = int(model.jnt_dofadr[joint]) if hinge_or_slide else None
        address = self._address[name]
        if address is None:
            return None
        taken = self._mass.get(name)
        if taken is None or taken[0] != self._steps:
            unit, column = np.zeros(model.nv), np.zeros(model.nv)
            unit[address] = 1.0
            mujoco.mj_mulM(model, data, column, unit)  # M's column: M_ii is its i-th
            taken = self._mass[name] = (self._steps, float(column[address]))
        return taken[1]

    def _set_damping(self, joint: DeviceJoint, damping: float) -> None:
        """The joint's damping: its own (the real model's) plus ``damping`` (joint side).

        Raises:
            ValueError: a joint the engine has no hinge or slide DOF for.
        """
        if self.inertia(joint.name) is None:
            raise ValueError(f"joint {joint.name!r}: a device's damping needs a hinge or "
                             "slide joint of that name in the engine")
        address = self._address[joint.name]
        model = self.engine.world
        own = self._own_damping.setdefault(joint.name, float(model.dof_damping[address]))
        model.dof_damping[address] = own + damping

    def advance(self, t: float) -> None:
        """Take every step that ends by clock time ``t`` (an earlier ``t``: none).

        While :attr:`held`, the time passes without a step.
        """
        steps = math.floor((t - self.t0) / self.dt + 1e-9)
        if self.held:
            if steps > self._steps:
                self.t0 += (steps - self._steps) * self.dt
            return
        while self._steps < steps:
            self._step()

    def _read(self) -> None:
        q, qd = self.engine.positions(), self.engine.velocities()
        for joint in self.joints.values():
            joint._read(float(q[joint.index]), float(qd[joint.index]))  # noqa: SLF001

    def _step(self) -> None:
        due, now = self._due, self.time
        while due and due[0][0] <= now + 1e-12:
            heapq.heappop(due)[2]()
        dt = self.dt
        torques = self._torques
        for k, joint in enumerate(self.joints.values()):
            torques[k] = joint._joint_torque(dt)  # noqa: SLF001
        if torques.size:
            self.engine.apply_checked("effort", self._index, torques)
        self.engine.step(1)
        self._steps += 1
        self._read()


def real_world(model: World, truth: Truth, other: World | None = None) -> World:
    """The real robot: ``other`` (the truth's own model, loaded) or ``model``, truth applied.

    (Friction, damping, added masses.)
    """
    return apply_truth(other if other is not None else model, truth)


def _driven(world: World, names: set[str]) -> World:
    """``world`` with each joint of a DOF in ``names`` taking torques (FORCE).

    Without the model's force limits: on the real robot its motor bounds its torque.
    """
    return replace(world, skeletons=tuple(_driven_skeleton(s, names) for s in world.skeletons))


def _driven_skeleton(skel: Skeleton, names: set[str]) -> Skeleton:
    joints = {d.joint for d in skel.dofs if d.name in names}
    dofs = tuple(replace(d, force_lower=-math.inf, force_upper=math.inf)
                 if d.name in names else d for d in skel.dofs)
    return replace(skel, dofs=dofs,
                   joints=tuple(replace(j, actuator=ActuatorType.FORCE) if j.name in joints
                                else j for j in skel.joints))
