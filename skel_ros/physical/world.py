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
* ``backlash``: the gear's play, between the motor side (the rotor: the device's own
  rotor inertia through the gears and the truth's ``armature``) and the joint. While a
  flank of the play is in contact the two move as one (the rotor's inertia is the joint's
  armature in the engine), as long as the contact pushes: the motor's torque towards
  that flank, more than the rotor's share of the joint's acceleration. Within the play
  the joint moves without the rotor (gravity may carry it through the play), and the
  rotor turns by the motor's torque alone (the device's damping on it, integrated
  implicitly), until it meets a flank: an impact in which the two velocities become one
  and momentum is kept (:meth:`DeviceJoint._engage`). Without rotor inertia the motor
  side is massless and crosses the play at the speed its drive would reach unloaded;
* ``armature``: the rotor inertia at the joint, on the motor side of the play, with the
  device's own rotor (:meth:`DeviceJoint.add_rotor`).

Where the encoder sits is the device's (:attr:`DeviceLaw.encoder_at_output`): a Dynamixel
or Feetech servo's encoder reads the output shaft, so the play is inside its position
loop; a motor whose encoder is on the rotor (MIT motors, CiA 402 drives) reads the motor
side, and the play is outside its loop.

Until a device first drives its joint (:meth:`PhysicalWorld.release`: a servo's first
torque on) the robot stands held at its initial pose, as on its stand or in a hand, and
the simulation node holds it there until its first command: with every motor off, an arm
would otherwise fall before the run starts. Time passes; nothing moves.

The world may be the robot of several buses' devices, their emulators stepping it from
threads of their own: one lock (:attr:`PhysicalWorld.lock`, re-entrant) is held while it
steps (:meth:`PhysicalWorld.advance`), while a command waits for its time
(:meth:`PhysicalWorld.at`) and while a device reads its joint; each emulator of
:mod:`skel_ros.physical` holds it as its own lock, so whatever a device does to its law
and joint between two steps is done whole. Alone, a bus's emulator takes it uncontended.

Friction, damping and added masses are in the real model itself. Positions, velocities
and torques given to and taken from devices are at the actuator (its side of the
:class:`Transmission`); the world works at the joint.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
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
    def encoder_at_output(self) -> bool:
        """Whether the encoder reads the output shaft (else the rotor, before the gears)."""
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
    encoder_at_output = True

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
        self._contact = 0  # +1 / -1: the motor side on that flank of the play; 0: within it
        self._motor_velocity = 0.0  # the motor side's within the play (joint side)
        self._pushed = 0.0  # the motor's torque on the joint in the last step (joint side)
        self._qd = 0.0  # the joint's velocity at the last reading (joint side)
        self._pushed_at = 0.0  # the joint's velocity when the motor last pushed it
        self.rotor = truth.armature  # kg m^2 at the joint, motor side of the gears
        self._damping = 0.0  # the law's damping in the engine now (actuator side)
        self.position = 0.0  # the encoder's last reading (actuator side)
        self.velocity = 0.0  # the encoder's velocity (actuator side)
        self.torque = 0.0  # the motor's last torque (actuator side)
        self._couple()

    @property
    def true_position(self) -> float:
        """The joint's position (joint side, no encoder error)."""
        return float(self.world.engine.positions()[self.index])

    @property
    def _play(self) -> bool:
        """Whether the joint has backlash and a rotor of some inertia on its motor side."""
        return self.truth.backlash > 0.0 and self.rotor > 0.0

    def add_rotor(self, inertia: float) -> None:
        """The device's rotor: ``inertia`` (kg m^2) at the actuator.

        The rotor inertia at the joint is its share through the gears plus the truth's
        ``armature``.
        """
        ratio = self.transmission.gear_ratio
        self.rotor = inertia * ratio * ratio + self.truth.armature
        self._couple()

    def _couple(self, *, switch: bool = False) -> None:
        """The rotor's inertia in the engine when it moves with the joint (module docstring).

        ``switch``: a flank met or left while the world runs (:meth:`PhysicalWorld.
        _set_armature`: the engine's value alone, not its compiled constants).
        """
        coupled = not self._play or self._contact != 0
        armature = self.rotor if coupled else 0.0
        if switch:
            self.world._set_armature(self, armature)  # noqa: SLF001
        elif (coupled and self.rotor > 0.0) or self._play:
            self.world.engine.set_armature(self.name, armature)

    def later(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the joint's command delay has passed (now, without one)."""
        self.world.at(self.world.time + self.truth.delay, action)

    def _read(self, q: float, qd: float) -> None:
        t = self.truth
        self._qd = qd
        noise = self._rng.normal(0.0, t.encoder_noise) if t.encoder_noise else 0.0
        at, speed = q, qd
        if not self.law.encoder_at_output:  # the rotor's encoder: the motor side
            at += self._gap
            speed = self._motor_speed(qd)
        tr = self.transmission
        self.position = tr.to_actuator(at + t.encoder_offset + noise)
        self.velocity = tr.direction * tr.gear_ratio * speed

    def _motor_speed(self, qd: float) -> float:
        """The motor side's velocity (joint side): the joint's while a flank is in contact.

        (A massless motor side is taken at the joint's.)
        """
        return self._motor_velocity if self._play and not self._contact else qd

    def _motor(self, speed: float, dt: float, *, coupled: bool) -> tuple[float, float]:
        """``(torque, damping)`` of the motor at ``speed`` for one step (joint side).

        The law's damping goes to the engine while the motor moves with the joint
        (``coupled``); otherwise it is the caller's to apply (to the rotor).
        """
        tr, law = self.transmission, self.law
        velocity = tr.direction * tr.gear_ratio * speed
        torque = law.torque(self.position, velocity, dt)
        self._engine_damping(law.damping if coupled else 0.0)
        self.torque = torque - law.damping * velocity  # the motor's, all of it
        return tr.direction * tr.gear_ratio * torque, law.damping * tr.gear_ratio ** 2

    def _engine_damping(self, damping: float) -> None:
        if damping != self._damping:
            self._damping = damping
            ratio = self.transmission.gear_ratio
            self.world._set_damping(self, damping * ratio * ratio)  # noqa: SLF001

    def _joint_torque(self, dt: float) -> float:
        half = 0.5 * self.truth.backlash
        if half <= 0.0:
            return self._motor(self._qd, dt, coupled=True)[0]
        if not self._play:
            return self._massless(half, dt)
        qd, contact = self._qd, self._contact
        if contact and (self._pushed - self.rotor * (qd - self._pushed_at) / dt) * contact < 0.0:
            self._release()  # the joint ran ahead of the rotor: the contact would pull
            contact = 0
        torque, damping = self._motor(self._motor_speed(qd), dt, coupled=bool(contact))
        if contact and torque * contact >= 0.0:  # pushes on its flank: one body
            self._pushed, self._pushed_at = torque, qd
            return torque
        if contact:  # the motor pulls away from the flank: into the play
            self._release()
        # Within the play: the rotor turns by the motor's torque, its damping implicit.
        rotor = self.rotor
        speed = (rotor * self._motor_velocity + dt * torque) / (rotor + dt * damping)
        self._motor_velocity = speed
        gap = self._gap + (speed - qd) * dt
        if abs(gap) < half:
            self._gap = gap
        else:
            self._engage(1 if gap > 0.0 else -1, half)
        return 0.0

    def _release(self) -> None:
        """The motor side leaves its flank, at the joint's velocity."""
        self._contact, self._motor_velocity = 0, self._qd
        self._engine_damping(0.0)
        self._couple(switch=True)

    def _engage(self, side: int, half: float) -> None:
        """The rotor meets flank ``side``: the impact, then one body (momentum kept).

        An impulse ``p`` between rotor and joint makes their velocities one: the joint's
        changes by ``M^-1 e_i p`` (the engine's mass matrix without the rotor), the
        rotor's by ``-p / rotor``.
        """
        from skel_ros.sim.mujoco_engine import import_mujoco

        mujoco = import_mujoco()
        world = self.world
        model, data = world.engine.world, world.engine.data
        world.inertia(self.name)  # its DOF's address, taken once
        address = world._address[self.name]  # noqa: SLF001
        unit, column = np.zeros(model.nv), np.zeros(model.nv)
        unit[address] = 1.0
        mujoco.mj_solveM(model, data, column.reshape(1, -1), unit.reshape(1, -1))
        impulse = (self._motor_velocity - float(data.qvel[address])) / (
            column[address] + 1.0 / self.rotor)
        data.qvel[:] += column * impulse
        self._gap, self._contact = side * half, side
        self._pushed, self._pushed_at = 0.0, float(data.qvel[address])
        self._qd = self._pushed_at
        self._couple(switch=True)

    def _massless(self, half: float, dt: float) -> float:
        """Backlash with a massless motor side (no rotor inertia): it crosses the play unloaded."""
        tr = self.transmission
        joint_torque = self._motor(self._qd, dt, coupled=True)[0]
        if joint_torque == 0.0:
            return joint_torque
        push = 1.0 if joint_torque > 0.0 else -1.0
        if self._gap * push >= half:  # in contact on the side it pushes
            return joint_torque
        # Within the play: the motor side turns unloaded, the joint gets nothing.
        motor = tr.direction * self.law.free_speed() / tr.gear_ratio  # joint side
        self._gap = max(-half, min(half, self._gap + (motor - self._qd) * dt))
        return 0.0


class PhysicalWorld:
    """The real robot in an engine, stepped on a clock (module docstring).

    Args:
        world: the real robot (:func:`real_world`: the model with the truth applied).
        joints: driven DOF name -> its transmission.
        truth: how the devices differ from perfect ones (delay, encoder, backlash,
            armature) and the noise seed.
        t0: the clock's time of the world's start.

    Attributes:
        lock: held while the world steps and while a device acts on its joint (module
            docstring); the emulators whose devices move this world use it as theirs.
    """

    def __init__(self, world: World, joints: Mapping[str, Transmission],
                 truth: Truth = EMPTY_TRUTH, t0: float = 0.0) -> None:
        self.lock = threading.RLock()
        self.engine = MujocoEngine(_driven(world, set(joints)), enforce_limits=True)
        names = self.engine.dof_names
        self.joints: dict[str, DeviceJoint] = {}
        for name, transmission in joints.items():
            index = names.index(name)
            jt = truth.joint(name)
            self.joints[name] = DeviceJoint(self, name, index, transmission=transmission,
                                             truth=jt, seed=truth.seed)
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
        with self.lock:
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

    def _set_armature(self, joint: DeviceJoint, armature: float) -> None:
        """The joint's armature (kg m^2) in the engine's model, at once.

        For a flank of a backlash met or left at a step: the engine's :meth:`~skel_ros.sim.
        MujocoEngine.set_armature` also remakes the constants MuJoCo compiled (milliseconds
        each), which the mass matrix of the next steps does not need.

        Raises:
            ValueError: a joint the engine has no hinge or slide DOF for.
        """
        if self.inertia(joint.name) is None:
            raise ValueError(f"joint {joint.name!r}: backlash needs a hinge or slide joint "
                             "of that name in the engine")
        self.engine.world.dof_armature[self._address[joint.name]] = armature

    def advance(self, t: float) -> None:
        """Take every step that ends by clock time ``t`` (an earlier ``t``: none).

        While :attr:`held`, the time passes without a step.
        """
        with self.lock:
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
