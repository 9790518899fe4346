"""Forward kinematics of a skeleton, with DART's joint conventions (numpy).

For joint j with parent body p and child body c::

    W(c) = W(p) . T_parent_to_joint . M_j(q) . T_child_to_joint^-1

with ``W(world) = I`` and ``M_j`` the joint motion. Every joint type's motion is a
*chain* of single-DOF motions (:func:`joint_chain`), parent side first, each a
rotation about or a translation along a fixed axis; ``M_j`` is their product:

* revolute: rotation about the axis by q; prismatic: translation axis * q;
* screw: rotation about the axis by q, then translation along it by pitch * q / 2pi;
* universal: rotation about axis 1 by q0, then about axis 2 by q1;
* euler xyz: rotations about x, y, z by q0, q1, q2; euler zyx: about z, y, x;
* translational: translations along x, y, z; translational2d: along a1, then a2;
* planar: translations along a1 and a2, then rotation about a1 x a2 by q2;
* ball: DART's ``exp(q)`` (q a rotation vector), as rotations about x, y, z by the
  XYZ Euler angles of ``exp(q)`` (:func:`~skel_ros.model.transforms.matrix_to_euler_xyz`,
  which rebuild the rotation to rounding everywhere);
* free: ``[exp(q[0:3]) | q[3:6]]``: translations along x, y, z by q3, q4, q5, then
  the rotations of a ball joint.

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

from skel_ros.model.transforms import exp_rot, inverse, matrix_to_euler_xyz
from skel_ros.model.types import Array, EulerOrder, Joint, JointType, PlaneType, Skeleton

if TYPE_CHECKING:
    from collections.abc import Sequence

_BATCH_NDIM = 2
_X, _Y, _Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


@dataclass(frozen=True)
class ChainMotion:
    """One single-DOF motion of a joint's chain (one URDF joint of the export).

    Attributes:
        kind: ``"revolute"`` (rotation about ``axis``) or ``"prismatic"`` (translation
            along ``axis``).
        axis: The axis, in the frame of the motion before it (the joint frame for the
            first).
        dof: Index of the DOF in the joint whose position drives it.
        euler: Its position is the ``dof``-th XYZ Euler angle of a ball / free joint's
            rotation ``exp(q[0:3])``, not a DOF position.
        screw_pitch: The translation half of a screw: its position is
            ``pitch / 2pi`` times the rotation's (None otherwise).
    """

    kind: str
    axis: tuple[float, float, float]
    dof: int
    euler: bool = False
    screw_pitch: float | None = None


def _axis(v: Array) -> tuple[float, float, float]:
    a = np.asarray(v, dtype=float)
    return (float(a[0]), float(a[1]), float(a[2]))


def planar_rotation_axis(joint: Joint) -> Array:
    """Rotation axis of a planar joint: z for xy, x for yz, y for zx, a1 x a2 otherwise."""
    fixed = {PlaneType.XY: (0.0, 0.0, 1.0), PlaneType.YZ: (1.0, 0.0, 0.0),
             PlaneType.ZX: (0.0, 1.0, 0.0)}
    if joint.plane in fixed:
        return np.array(fixed[joint.plane])
    a1, a2 = (np.asarray(a) for a in joint.plane_axes)
    n = np.cross(a1, a2)
    axis: Array = n / np.linalg.norm(n)
    return axis


def joint_chain(joint: Joint) -> tuple[ChainMotion, ...]:
    """The single-DOF motions of ``joint``, parent side first (none for a weld)."""
    t = joint.type
    xyz = (_X, _Y, _Z)
    out: list[ChainMotion] = []
    if t in (JointType.REVOLUTE, JointType.PRISMATIC):
        out = [ChainMotion(t.value, _axis(joint.axes[0]), 0)]
    elif t is JointType.SCREW:
        axis = _axis(joint.axes[0])
        out = [ChainMotion("revolute", axis, 0),
               ChainMotion("prismatic", axis, 0, screw_pitch=joint.pitch)]
    elif t is JointType.UNIVERSAL:
        out = [ChainMotion("revolute", _axis(a), i) for i, a in enumerate(joint.axes[:2])]
    elif t is JointType.EULER:
        axes = (_Z, _Y, _X) if joint.euler_order is EulerOrder.ZYX else xyz
        out = [ChainMotion("revolute", a, i) for i, a in enumerate(axes)]
    elif t is JointType.TRANSLATIONAL:
        out = [ChainMotion("prismatic", a, i) for i, a in enumerate(xyz)]
    elif t in (JointType.TRANSLATIONAL2D, JointType.PLANAR):
        out = [ChainMotion("prismatic", _axis(a), i) for i, a in enumerate(joint.plane_axes[:2])]
        if t is JointType.PLANAR:
            out.append(ChainMotion("revolute", _axis(planar_rotation_axis(joint)), 2))
    elif t is JointType.BALL:
        out = [ChainMotion("revolute", a, i, euler=True) for i, a in enumerate(xyz)]
    elif t is JointType.FREE:
        # M = [exp(w) | t] = translate by t, then rotate: the translations come first.
        out = [ChainMotion("prismatic", a, 3 + i) for i, a in enumerate(xyz)]
        out += [ChainMotion("revolute", a, i, euler=True) for i, a in enumerate(xyz)]
    return tuple(out)


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
        local = self._closing
        for k in reversed(range(self._chains.shape[1])):
            local = motions[:, self._chains[:, k]] @ local
        if local.ndim < motions.ndim:  # no joint has a motion: the fixed transforms alone
            local = np.repeat(local[None], q.shape[0], axis=0)
        return local, motions, positions

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

    def joint_local_transforms(self, q: Array) -> Array:
        """Parent-body-to-child-body transforms (njoint, 4, 4) at positions ``q``."""
        local: Array = self._evaluate(self._check(np.asarray(q, dtype=float)[None]))[0][0]
        return local

    def local_frames(self, q: Array) -> LocalFrames:
        """Every joint's and every chain motion's transform at positions ``q`` (one vector)."""
        local, motions, positions = self._evaluate(self._check(np.asarray(q, dtype=float)[None]))
        return LocalFrames(local[0], motions[0, :-1], positions[0])


def body_transforms(skeleton: Skeleton, q: Array | None = None) -> Array:
    """World transforms (nbody, 4, 4) of ``skeleton``'s bodies at ``q`` (default: initial)."""
    return Kinematics(skeleton).body_transforms(q)
