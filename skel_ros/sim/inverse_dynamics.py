"""The model's rigid-body torques along a recorded motion (inverse dynamics).

``M(q) qdd + c(q, qd) + g(q)``: what the joints' motors must give to move the model's
links as recorded, before any damping, friction or rotor inertia. Computed by MuJoCo's
``mj_inverse`` on the model's MJCF export (:func:`skel_ros.model.world_to_mjcf`) with the
model's damping, friction and limits taken out and every constraint off, so what is left
is the links' own dynamics, the same in either engine. ``mujoco`` is imported when a
:class:`RigidDynamics` is built.

A mimic follower (:mod:`skel_ros.model.mimic`) not among the DOFs given moves with its
leader (``multiplier * leader + offset``); one without an actuator of its own (a gear, a
rack, a linkage: :attr:`~skel_ros.model.types.FollowerDrive.COUPLED`) is moved by its
leader's motor, which then gives, by virtual work, ``multiplier`` times what the follower
needs: its links' torque, its damping and its Coulomb friction as the model has them
(the follower's own values are not identified: they cannot be told from the leader's).

:meth:`RigidDynamics.with_point_mass` gives the same model with a point mass fixed to a
body (a payload): inverse dynamics is linear in each body's mass, first moment and
inertia, so differences of such models are the columns of a payload's regressor
(:mod:`skel_ros.identify.payload`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from skel_ros.model.mimic import couplings
from skel_ros.model.types import FollowerDrive

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.model.types import Skeleton, World

__all__ = ["DynamicsError", "RigidDynamics", "bare_world"]

Vector = npt.NDArray[np.float64]


class DynamicsError(ValueError):
    """A model whose inverse dynamics cannot be computed here.

    A joint that is not a hinge or a slide among the identified ones, or a model MJCF
    cannot express.
    """


def bare_world(world: World) -> World:
    """``world`` without damping, Coulomb friction, springs and position limits."""
    return replace(world, skeletons=tuple(_bare(s) for s in world.skeletons))


def _bare(skel: Skeleton) -> Skeleton:
    return replace(skel, dofs=tuple(
        replace(d, damping=0.0, coulomb_friction=0.0, spring_stiffness=0.0,
                position_lower=-math.inf, position_upper=math.inf) for d in skel.dofs))


class RigidDynamics:
    """Inverse dynamics of one skeleton's DOFs (module docstring).

    Args:
        world: the model.
        skeleton: the skeleton whose DOFs are given (its name).

    Raises:
        DynamicsError: the model cannot be exported, or a DOF is not a hinge or a slide.
    """

    def __init__(self, world: World, skeleton: str) -> None:
        import mujoco

        from skel_ros.model.errors import SkelError
        from skel_ros.model.mjcf import world_to_mjcf

        bare = bare_world(world)
        try:
            export = world_to_mjcf(bare)
            self._model = mujoco.MjModel.from_xml_string(export.xml)
        except (SkelError, ValueError) as exc:
            raise DynamicsError(f"{world.source}: cannot compute the model's inverse dynamics:"
                                f" {exc}") from None
        self._model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        self._data = mujoco.MjData(self._model)
        self._mujoco = mujoco
        skel = world.skeleton(skeleton)
        self._world, self._skeleton = world, skeleton
        self.names: tuple[str, ...] = tuple(d.name for d in skel.dofs)
        addresses, slides = {}, set()
        for joint in export.joints:
            if joint.skeleton != skeleton:
                continue
            if joint.kind in {"hinge", "slide"}:
                jid = mujoco.mj_name2id(self._model, mujoco.mjtObj.mjOBJ_JOINT, joint.name)
                name = skel.dofs[joint.dofs[0]].name
                addresses[name] = (int(self._model.jnt_qposadr[jid]),
                                   int(self._model.jnt_dofadr[jid]), float(joint.scale))
                if joint.kind == "slide":
                    slides.add(name)
        self._addresses = addresses
        self.slides: frozenset[str] = frozenset(slides)
        """The DOFs that slide (their motion in m, their effort in N)."""
        self._followers = [_Follower(d.name, m.leader, m.multiplier, m.offset,
                                     m.drive is FollowerDrive.COUPLED, d.damping,
                                     d.coulomb_friction)
                           for d, m in couplings(skel)
                           if d.name in addresses and m.leader in addresses]

    def with_point_mass(self, body: str, mass: float, at: Sequence[float]) -> RigidDynamics:
        """The same model with a point mass ``mass`` (kg) fixed at ``at`` (m, ``body``'s frame).

        The body's mass, centre of mass and inertia become the sum's
        (:func:`skel_ros.model.truth.with_point_mass`, as a truth file's added mass).

        Raises:
            DynamicsError: ``body`` is no body of the skeleton.
        """
        from skel_ros.model.truth import with_point_mass

        skel = self._world.skeleton(self._skeleton)
        if body not in {b.name for b in skel.bodies}:
            raise DynamicsError(f"{self._world.source}: skeleton {self._skeleton!r} has no body "
                                f"{body!r}")
        point = (float(at[0]), float(at[1]), float(at[2]))
        bodies = tuple(replace(b, inertia=with_point_mass(b.inertia, mass, point))
                       if b.name == body else b for b in skel.bodies)
        loaded = replace(self._world, skeletons=tuple(
            replace(s, bodies=bodies) if s.name == self._skeleton else s
            for s in self._world.skeletons))
        return RigidDynamics(loaded, self._skeleton)

    def supports(self, name: str) -> bool:
        """Whether DOF ``name`` is a hinge or slide this can give torques for."""
        return name in self._addresses

    def torques(self, names: Sequence[str], q: Vector, qd: Vector, qdd: Vector) -> Vector:
        """The torques ``(samples, len(names))`` the DOFs ``names`` need along a motion.

        ``q``, ``qd``, ``qdd``: ``(samples, len(names))``; DOFs not named stay at rest at 0.

        Raises:
            DynamicsError: a DOF that is not a hinge or slide of the skeleton.
        """
        missing = [n for n in names if n not in self._addresses]
        if missing:
            raise DynamicsError(f"no inverse dynamics for {', '.join(map(repr, missing))}: "
                                "only hinge and slide DOFs are identified")
        model, data, mujoco = self._model, self._data, self._mujoco
        # The followers of named leaders that are not named themselves move with them:
        # their motion is their leaders', as extra columns of the motion given.
        moved = [f for f in self._followers if f.leader in names and f.name not in names]
        lead = np.array([list(names).index(f.leader) for f in moved], dtype=np.intp)
        gain = np.array([f.multiplier for f in moved])
        offset = np.array([f.offset for f in moved])
        q = np.hstack([q, gain * q[:, lead] + offset])
        qd = np.hstack([qd, gain * qd[:, lead]])
        qdd = np.hstack([qdd, gain * qdd[:, lead]])
        adr = [self._addresses[n] for n in [*names, *(f.name for f in moved)]]
        qadr = np.array([a[0] for a in adr], dtype=np.intp)
        dadr = np.array([a[1] for a in adr], dtype=np.intp)
        scale = np.array([a[2] for a in adr])
        out = np.zeros((q.shape[0], len(adr)))
        data.qpos[:] = model.qpos0
        data.qvel[:] = 0.0
        data.qacc[:] = 0.0
        for k in range(q.shape[0]):
            data.qpos[qadr] = q[k] * scale
            data.qvel[dadr] = qd[k] * scale
            data.qacc[dadr] = qdd[k] * scale
            mujoco.mj_inverse(model, data)
            out[k] = data.qfrc_inverse[dadr] * scale
        # A follower without a motor of its own is its leader's load: multiplier times
        # its links' torque, damping and friction.
        for j, f in enumerate(moved, start=len(names)):
            if f.carried:
                need = out[:, j] + f.damping * qd[:, j] + f.friction * np.sign(qd[:, j])
                out[:, lead[j - len(names)]] += f.multiplier * need
        return out[:, :len(names)]


@dataclass(frozen=True)
class _Follower:
    """A mimic follower as :meth:`RigidDynamics.torques` moves it (module docstring)."""

    name: str
    leader: str
    multiplier: float
    offset: float
    carried: bool  # moved by its leader's motor (no actuator of its own)
    damping: float
    friction: float
