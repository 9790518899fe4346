"""Forward kinematics of a skeleton, with DART's joint conventions (numpy).

For joint j with parent body p and child body c::

    W(c) = W(p) . T_parent_to_joint . M_j(q) . T_child_to_joint^-1

with ``W(world) = I`` and ``M_j`` the joint motion:

* revolute: rotation about the axis by q; prismatic: translation axis * q;
* screw: rotation about the axis by q plus translation axis * pitch * q / 2pi;
* universal: Rot(axis1, q0) . Rot(axis2, q1);
* ball: exp(q) (rotation vector); free: [exp(q[0:3]) | q[3:6]];
* euler xyz: Rx(q0) Ry(q1) Rz(q2); euler zyx: Rz(q0) Ry(q1) Rx(q2);
* translational: translation q; translational2d: q0 a1 + q1 a2;
* planar: translation q0 a1 + q1 a2, then rotation about a1 x a2 by q2.

Everything is batched over configurations: ``(m, ndof)`` in, ``(m, nbody, 4, 4)``
out; one configuration costs the same code path with m = 1.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.types import Array, EulerOrder, Joint, JointType, PlaneType, Skeleton

if TYPE_CHECKING:
    from collections.abc import Callable

_TWO_PI = 2.0 * math.pi
_SMALL_ANGLE = 1e-7  # below this, the series expansions are exact to rounding
_BATCH_NDIM = 2


def _rodrigues(axes: Array, angles: Array) -> Array:
    """Batched rotation matrices: ``axes`` (m, 3) rotation vectors scaled by ``angles`` (m,)."""
    w = axes * angles[:, None]
    theta = np.linalg.norm(w, axis=1)
    m = w.shape[0]
    k = np.zeros((m, 3, 3))
    k[:, 0, 1], k[:, 0, 2] = -w[:, 2], w[:, 1]
    k[:, 1, 0], k[:, 1, 2] = w[:, 2], -w[:, 0]
    k[:, 2, 0], k[:, 2, 1] = -w[:, 1], w[:, 0]
    small = theta < _SMALL_ANGLE
    safe = np.where(small, 1.0, theta)
    a = np.where(small, 1.0 - theta**2 / 6.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - theta**2 / 24.0, (1.0 - np.cos(safe)) / (safe * safe))
    rot: Array = np.eye(3)[None] + a[:, None, None] * k + b[:, None, None] * (k @ k)
    return rot


def _unit_rotation(axis: int, angles: Array) -> Array:
    e = np.zeros((angles.shape[0], 3))
    e[:, axis] = 1.0
    return _rodrigues(e, angles)


def _const_axis(axis: Array, n: int) -> Array:
    return np.broadcast_to(np.asarray(axis, dtype=float), (n, 3))


def _weld(out: Array, joint: Joint, q: Array, m: int) -> None:
    pass  # the identity


def _revolute(out: Array, joint: Joint, q: Array, m: int) -> None:
    out[:, :3, :3] = _rodrigues(_const_axis(joint.axes[0], m), q[:, 0])


def _prismatic(out: Array, joint: Joint, q: Array, _m: int) -> None:
    out[:, :3, 3] = np.asarray(joint.axes[0])[None] * q[:, :1]


def _screw(out: Array, joint: Joint, q: Array, m: int) -> None:
    axis = np.asarray(joint.axes[0])
    out[:, :3, :3] = _rodrigues(_const_axis(axis, m), q[:, 0])
    out[:, :3, 3] = axis[None] * (joint.pitch * q[:, :1] / _TWO_PI)


def _universal(out: Array, joint: Joint, q: Array, m: int) -> None:
    out[:, :3, :3] = _rodrigues(_const_axis(joint.axes[0], m), q[:, 0]) @ _rodrigues(
        _const_axis(joint.axes[1], m), q[:, 1]
    )


def _ball(out: Array, _joint: Joint, q: Array, m: int) -> None:
    out[:, :3, :3] = _rodrigues(q[:, :3], np.ones(m))


def _free(out: Array, _joint: Joint, q: Array, m: int) -> None:
    out[:, :3, :3] = _rodrigues(q[:, :3], np.ones(m))
    out[:, :3, 3] = q[:, 3:6]


def _euler(out: Array, joint: Joint, q: Array, _m: int) -> None:
    if joint.euler_order is EulerOrder.ZYX:
        out[:, :3, :3] = (
            _unit_rotation(2, q[:, 0]) @ _unit_rotation(1, q[:, 1]) @ _unit_rotation(0, q[:, 2])
        )
    else:
        out[:, :3, :3] = (
            _unit_rotation(0, q[:, 0]) @ _unit_rotation(1, q[:, 1]) @ _unit_rotation(2, q[:, 2])
        )


def _translational(out: Array, _joint: Joint, q: Array, _m: int) -> None:
    out[:, :3, 3] = q[:, :3]


def _planar(out: Array, joint: Joint, q: Array, m: int) -> None:
    a1, a2 = (np.asarray(a) for a in joint.plane_axes)
    out[:, :3, 3] = q[:, :1] * a1[None] + q[:, 1:2] * a2[None]
    if joint.type is JointType.PLANAR:
        out[:, :3, :3] = _rodrigues(_const_axis(planar_rotation_axis(joint), m), q[:, 2])


# Each type fills its motion into identity transforms out (m, 4, 4) from q (m, ndof).
_MOTIONS: dict[JointType, Callable[[Array, Joint, Array, int], None]] = {
    JointType.WELD: _weld,
    JointType.REVOLUTE: _revolute,
    JointType.PRISMATIC: _prismatic,
    JointType.SCREW: _screw,
    JointType.UNIVERSAL: _universal,
    JointType.BALL: _ball,
    JointType.FREE: _free,
    JointType.EULER: _euler,
    JointType.TRANSLATIONAL: _translational,
    JointType.TRANSLATIONAL2D: _planar,
    JointType.PLANAR: _planar,
}


def joint_motion(joint: Joint, q: Array) -> Array:
    """The joint's motion transforms ``M_j(q)`` for a batch ``q`` of shape (m, ndof_j)."""
    q = np.asarray(q, dtype=float)
    m = q.shape[0] if q.ndim == _BATCH_NDIM else 1
    q = q.reshape(m, joint.num_dofs)
    out: Array = np.broadcast_to(np.eye(4), (m, 4, 4)).copy()
    _MOTIONS[joint.type](out, joint, q, m)
    return out


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


class Kinematics:
    """Forward kinematics of one skeleton, with the per-joint constants precomputed.

    Args:
        skeleton: The skeleton.
    """

    def __init__(self, skeleton: Skeleton) -> None:
        self.skeleton = skeleton
        self._parent_index = [
            -1 if j.parent is None else skeleton.bodies.index(skeleton.body(j.parent))
            for j in skeleton.joints
        ]
        self._t_parent = [np.asarray(j.T_parent_to_joint) for j in skeleton.joints]
        self._t_child_inv = [
            np.linalg.inv(np.asarray(j.T_child_to_joint)) for j in skeleton.joints
        ]
        self._slices = [slice(j.first_dof, j.first_dof + j.num_dofs) for j in skeleton.joints]

    def body_transforms(self, q: Array | None = None) -> Array:
        """World transforms (nbody, 4, 4) of every body at positions ``q`` (default: initial)."""
        if q is None:
            q = np.asarray(self.skeleton.initial_positions)
        transforms: Array = self.body_transforms_batch(np.asarray(q, dtype=float)[None])[0]
        return transforms

    def body_transforms_batch(self, q: Array) -> Array:
        """World transforms (m, nbody, 4, 4) for a batch of configurations (m, ndof)."""
        q = np.asarray(q, dtype=float)
        if q.ndim != _BATCH_NDIM or q.shape[1] != self.skeleton.num_dofs:
            raise ValueError(
                f"expected positions of shape (m, {self.skeleton.num_dofs}), got {q.shape}"
            )
        m = q.shape[0]
        out = np.empty((m, len(self.skeleton.bodies), 4, 4))
        for i, joint in enumerate(self.skeleton.joints):
            motion = joint_motion(joint, q[:, self._slices[i]])
            local = self._t_parent[i] @ motion @ self._t_child_inv[i]
            p = self._parent_index[i]
            out[:, i] = local if p < 0 else out[:, p] @ local
        return out

    def joint_local_transforms(self, q: Array) -> Array:
        """Parent-body-to-child-body transforms (njoint, 4, 4) at positions ``q``."""
        q = np.asarray(q, dtype=float)
        out = np.empty((len(self.skeleton.joints), 4, 4))
        for i, joint in enumerate(self.skeleton.joints):
            out[i] = self._t_parent[i] @ joint_motion(joint, q[None, self._slices[i]])[0] @ (
                self._t_child_inv[i]
            )
        return out


def body_transforms(skeleton: Skeleton, q: Array | None = None) -> Array:
    """World transforms (nbody, 4, 4) of ``skeleton``'s bodies at ``q`` (default: initial)."""
    return Kinematics(skeleton).body_transforms(q)
