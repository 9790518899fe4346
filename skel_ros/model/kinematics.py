"""Forward kinematics of a skeleton, with DART's joint conventions (numpy).

For joint j with parent body p and child body c::

    W(c) = W(p) . T_parent_to_joint . M_j(q) . T_child_to_joint^-1

with ``W(world) = I`` and ``M_j`` the joint motion. Every joint type's motion is a
*chain* of single-DOF motions (:func:`joint_chain`), parent side first, each a
rotation about or a translation along a fixed axis; ``M_j`` is their product. The
chain of each type is its entry of the joint-type table
(:mod:`skel_ros.model.joint_types`, which lists them all).

The *position* of a chain motion is what its URDF joint takes: the DOF position, an
Euler angle (ball, free) or pitch / 2pi times the rotation (a screw's translation).
The URDF export (:mod:`skel_ros.model.urdf`) writes exactly this chain, one URDF joint
per motion through massless intermediate links, so the frames this module computes
along a chain (:meth:`Kinematics.local_frames`) are the URDF's links.

Everything is batched over configurations: ``(m, ndof)`` in, ``(m, nbody, 4, 4)``
out; one configuration costs the same code path with m = 1. All motions of a
skeleton are evaluated together, a few array operations whatever the joint count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.joint_types import ChainMotion, planar_rotation_axis
from skel_ros.model.transforms import exp_rot, inverse, matrix_to_euler_xyz

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.model.types import Array, Joint, Skeleton

__all__ = [
    "ChainLink",
    "ChainMotion",
    "Kinematics",
    "LocalFrames",
    "body_transforms",
    "joint_chain",
    "joint_motion",
    "planar_rotation_axis",
]

_BATCH_NDIM = 2


def joint_chain(joint: Joint) -> tuple[ChainMotion, ...]:
    """The single-DOF motions of ``joint``, parent side first (none for a weld).

    The chain is its type's (:meth:`~skel_ros.model.joint_types.JointTypeSpec.chain`).
    """
    return joint.type.spec.chain(joint)


@dataclass(frozen=True)
class ChainLink:
    """One motion of a skeleton's chains, where it sits and what moves it.

    Attributes:
        joint: Index of its joint in ``skeleton.joints``.
        index: Its position in the joint's chain (:func:`joint_chain`).
        motion: The motion.
        dofs: The skeleton DOFs its position depends on (three for an Euler angle).
    """

    joint: int
    index: int
    motion: ChainMotion
    dofs: tuple[int, ...]


@dataclass(frozen=True)
class LocalFrames:
    """Parent-to-child transforms of one configuration (:meth:`Kinematics.local_frames`).

    Attributes:
        joints: (njoint, 4, 4) parent body -> child body of every joint (the root
            bodies' from the world frame).
        links: (nlink, 4, 4) every chain motion's frame from the frame before it: the
            parent body's for a joint's first motion (``T_parent_to_joint`` included),
            the previous motion's otherwise. Which are the URDF joint transforms.
        positions: (nlink,) the chain motions' positions (the URDF joint positions).
    """

    joints: Array
    links: Array
    positions: Array


class _Motions:
    """Any number of chain motions evaluated together, each after a fixed origin.

    Motion k's transform is ``origins[k] @ motion(position)``. A rotation by v about
    the unit axis with cross-product matrix K is ``I + sin(v) K + (1 - cos(v)) K^2``
    (Rodrigues), so ``origin @ rotation = origin + sin(v) (origin K) + (1 - cos(v))
    (origin K^2)`` with the products fixed; a translation by v adds ``v * (origin's
    rotation @ axis)`` to the origin's translation.

    Args:
        motions: The motions.
        origins: (n, 4, 4) each motion's origin.
    """

    def __init__(self, motions: Sequence[ChainMotion], origins: Array) -> None:
        n = len(motions)
        self.size = n
        origins = np.asarray(origins, dtype=float).reshape(n, 4, 4)
        self._revolute = np.array([k for k, m in enumerate(motions) if m.kind == "revolute"],
                                  dtype=np.intp)
        self._prismatic = np.array([k for k, m in enumerate(motions) if m.kind != "revolute"],
                                   dtype=np.intp)
        axes = np.array([m.axis for m in motions], dtype=float).reshape(n, 3)
        a = axes[self._revolute]
        k = np.zeros((a.shape[0], 4, 4))
        k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
        k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
        self._rev_origins = origins[self._revolute]
        self._sin_part = self._rev_origins @ k
        self._cos_part = self._rev_origins @ (k @ k)
        self._pri_origins = origins[self._prismatic]
        self._shift = np.zeros((self._prismatic.size, 4, 4))
        self._shift[:, :3, 3] = np.einsum("nij,nj->ni", self._pri_origins[:, :3, :3],
                                          axes[self._prismatic])

    def transforms(self, positions: Array) -> Array:
        """(m, n + 1, 4, 4) for positions (m, n); index n is the identity (for chains' ends)."""
        m = positions.shape[0]
        out = np.empty((m, self.size + 1, 4, 4))
        out[:, self.size] = np.eye(4)
        v = positions[:, self._revolute, None, None]
        out[:, self._revolute] = (self._rev_origins + np.sin(v) * self._sin_part
                                  + (1.0 - np.cos(v)) * self._cos_part)
        out[:, self._prismatic] = (self._pri_origins
                                   + positions[:, self._prismatic, None, None] * self._shift)
        return out


class _ChainPositions:
    """The positions of chain motions from DOF positions (see the module docstring).

    Args:
        motions: Each motion with the index of its joint's first DOF.
    """

    def __init__(self, motions: Sequence[tuple[ChainMotion, int]]) -> None:
        self._sources = np.array([first + m.dof for m, first in motions], dtype=np.intp)
        self._scales = np.array([1.0 if m.screw_pitch is None else m.screw_pitch / (2.0 * math.pi)
                                 for m, _ in motions])
        self._euler_starts = tuple(sorted({first for m, first in motions if m.euler}))

    def positions(self, q: Array) -> Array:
        """(m, n) motion positions for DOF positions (m, ndof)."""
        if self._euler_starts:
            q = q.copy()
            for row in q:
                for start in self._euler_starts:
                    row[start:start + 3] = matrix_to_euler_xyz(exp_rot(row[start:start + 3]))
        out: Array = q[:, self._sources] * self._scales
        return out


def joint_motion(joint: Joint, q: Array) -> Array:
    """The joint's motion transforms ``M_j(q)`` for a batch ``q`` of shape (m, ndof_j)."""
    q = np.asarray(q, dtype=float)
    m = q.shape[0] if q.ndim == _BATCH_NDIM else 1
    q = q.reshape(m, joint.num_dofs)
    chain = joint_chain(joint)
    motions = _Motions(chain, np.broadcast_to(np.eye(4), (len(chain), 4, 4)))
    each = motions.transforms(_ChainPositions([(c, 0) for c in chain]).positions(q))
    out: Array = each[:, len(chain)].copy()  # the identity
    for k in range(len(chain)):
        out = out @ each[:, k]
    return out


class Kinematics:
    """Forward kinematics of one skeleton, with the per-joint constants precomputed.

    Attributes:
        skeleton: The skeleton.
        links: Every joint's chain motions, joint order then chain order (the order of
            :attr:`LocalFrames.links`).

    Args:
        skeleton: The skeleton.
    """

    def __init__(self, skeleton: Skeleton) -> None:
        self.skeleton = skeleton
        joints = skeleton.joints
        self._parent_index = [
            -1 if j.parent is None else skeleton.bodies.index(skeleton.body(j.parent))
            for j in joints
        ]
        links: list[ChainLink] = []
        origins: list[Array] = []
        closing: list[Array] = []  # after a joint's last motion: T_child_to_joint^-1
        per_joint: list[list[int]] = []
        for i, joint in enumerate(joints):
            t_parent = np.asarray(joint.T_parent_to_joint, dtype=float)
            chain = joint_chain(joint)
            rotation = tuple(joint.first_dof + d for d in range(3))
            per_joint.append(list(range(len(links), len(links) + len(chain))))
            for k, motion in enumerate(chain):
                dofs = rotation if motion.euler else (joint.first_dof + motion.dof,)
                links.append(ChainLink(i, k, motion, dofs))
                origins.append(t_parent if k == 0 else np.eye(4))
            t_child_inv = inverse(np.asarray(joint.T_child_to_joint, dtype=float))
            closing.append(t_child_inv if chain else t_parent @ t_child_inv)  # weld: fixed
        self.links = tuple(links)
        n = len(links)
        self._motions = _Motions([lk.motion for lk in links], np.array(origins).reshape(n, 4, 4))
        self._positions = _ChainPositions([(lk.motion, joints[lk.joint].first_dof)
                                           for lk in links])
        self._closing = np.array(closing).reshape(len(joints), 4, 4)
        # A joint's local transform is the product of its motions, then closing: every
        # joint's motions padded with the identity (index n) to the longest chain.
        depth = max((len(c) for c in per_joint), default=0)
        self._chains = np.array([c + [n] * (depth - len(c)) for c in per_joint],
                                dtype=np.intp).reshape(len(joints), depth)

    def _check(self, q: Array) -> Array:
        q = np.asarray(q, dtype=float)
        if q.ndim != _BATCH_NDIM or q.shape[1] != self.skeleton.num_dofs:
            raise ValueError(
                f"expected positions of shape (m, {self.skeleton.num_dofs}), got {q.shape}"
            )
        return q

    def _evaluate(self, q: Array) -> tuple[Array, Array, Array]:
        """(joint local (m, njoint, 4, 4), motions (m, nlink + 1, 4, 4), positions (m, nlink))."""
        positions = self._positions.positions(q)
        motions = self._motions.transforms(positions)
        return self._joint_frames(motions, q.shape[0]), motions, positions

    def _joint_frames(self, motions: Array, m: int) -> Array:
        """Every joint's local transform (m, njoint, 4, 4): its motions', then closing."""
        local = self._closing
        for k in reversed(range(self._chains.shape[1])):
            local = motions[:, self._chains[:, k]] @ local
        if local.ndim < motions.ndim:  # no joint has a motion: the fixed transforms alone
            local = np.repeat(local[None], m, axis=0)
        return local

    def body_transforms(self, q: Array | None = None) -> Array:
        """World transforms (nbody, 4, 4) of every body at positions ``q`` (default: initial)."""
        if q is None:
            q = np.asarray(self.skeleton.initial_positions)
        transforms: Array = self.body_transforms_batch(np.asarray(q, dtype=float)[None])[0]
        return transforms

    def body_transforms_batch(self, q: Array) -> Array:
        """World transforms (m, nbody, 4, 4) for a batch of configurations (m, ndof)."""
        local = self._evaluate(self._check(q))[0]
        out = np.empty_like(local)
        for i, p in enumerate(self._parent_index):
            out[:, i] = local[:, i] if p < 0 else out[:, p] @ local[:, i]
        return out

    def local_frames(self, q: Array) -> LocalFrames:
        """Every joint's and every chain motion's transform at positions ``q`` (one vector)."""
        local, motions, positions = self._evaluate(self._check(np.asarray(q, dtype=float)[None]))
        return LocalFrames(local[0], motions[0, :-1], positions[0])

    def link_frames(self, q: Array) -> tuple[Array, Array]:
        """:attr:`LocalFrames.links` and :attr:`LocalFrames.positions` alone, at ``q``.

        What ``/tf`` needs (the URDF joints' transforms and positions), without the
        joints' own transforms.
        """
        q = self._check(np.asarray(q, dtype=float)[None])
        positions = self._positions.positions(q)
        return self._motions.transforms(positions)[0, :-1], positions[0]


def body_transforms(skeleton: Skeleton, q: Array | None = None) -> Array:
    """World transforms (nbody, 4, 4) of ``skeleton``'s bodies at ``q`` (default: initial)."""
    return Kinematics(skeleton).body_transforms(q)
