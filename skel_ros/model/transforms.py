"""Small rigid-transform helpers, with DART's conventions.

Two representations:

* numpy 4x4 homogeneous matrices (the model's public type);
* :data:`Rigid`, a flat tuple of 12 floats ``(r00, r01, r02, x, r10, r11, r12,
  y, r20, r21, r22, z)`` (the top three rows, row-major). The parser works in
  this form: plain float arithmetic in the order Eigen uses gives DART's own
  last bits on every machine.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.types import frozen_array

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.model.types import Array

Rigid = tuple[float, float, float, float, float, float, float, float, float, float, float, float]
"""A rigid transform as the top three rows of its 4x4 matrix, row-major."""

RIGID_IDENTITY: Rigid = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)

_SMALL_ANGLE = 1e-7  # below this, series expansions are exact to rounding
_NEAR_PI = 1e-6


def rot_x(a: float) -> Array:
    """Rotation matrix about x by ``a`` radians."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> Array:
    """Rotation matrix about y by ``a`` radians."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> Array:
    """Rotation matrix about z by ``a`` radians."""
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rigid_from_skel(values: Sequence[float]) -> Rigid:
    """SKEL's ``<transformation>`` ``x y z a b c``: translation, then R = Rx(a) Ry(b) Rz(c).

    The rotation entries are DART's ``eulerXYZToMatrix`` expressions, evaluated
    in the same order.

    Args:
        values: The six numbers ``x y z a b c``.
    """
    x, y, z, a, b, c = values
    cx, sx = math.cos(a), math.sin(a)
    cy, sy = math.cos(b), math.sin(b)
    cz, sz = math.cos(c), math.sin(c)
    return (
        cy * cz, -cy * sz, sy, x,
        cx * sz + cz * sx * sy, cx * cz - sx * sy * sz, -cy * sx, y,
        sx * sz - cx * cz * sy, cz * sx + cx * sy * sz, cx * cy, z,
    )


def rigid_mul(p: Rigid, q: Rigid) -> Rigid:
    """The product ``p q`` (Eigen's isometry product: R = Rp Rq, t = Rp tq + tp)."""
    p00, p01, p02, p03, p10, p11, p12, p13, p20, p21, p22, p23 = p
    q00, q01, q02, q03, q10, q11, q12, q13, q20, q21, q22, q23 = q
    return (
        p00 * q00 + p01 * q10 + p02 * q20,
        p00 * q01 + p01 * q11 + p02 * q21,
        p00 * q02 + p01 * q12 + p02 * q22,
        p00 * q03 + p01 * q13 + p02 * q23 + p03,
        p10 * q00 + p11 * q10 + p12 * q20,
        p10 * q01 + p11 * q11 + p12 * q21,
        p10 * q02 + p11 * q12 + p12 * q22,
        p10 * q03 + p11 * q13 + p12 * q23 + p13,
        p20 * q00 + p21 * q10 + p22 * q20,
        p20 * q01 + p21 * q11 + p22 * q21,
        p20 * q02 + p21 * q12 + p22 * q22,
        p20 * q03 + p21 * q13 + p22 * q23 + p23,
    )


def rigid_inverse(p: Rigid) -> Rigid:
    """Inverse of a rigid transform: R^T, -R^T t."""
    r00, r01, r02, x, r10, r11, r12, y, r20, r21, r22, z = p
    return (
        r00, r10, r20, -(r00 * x + r10 * y + r20 * z),
        r01, r11, r21, -(r01 * x + r11 * y + r21 * z),
        r02, r12, r22, -(r02 * x + r12 * y + r22 * z),
    )


def rigid_to_matrix(p: Rigid) -> Array:
    """A read-only 4x4 float64 matrix of ``p``."""
    return frozen_array((*p, 0.0, 0.0, 0.0, 1.0), (4, 4))


def euler_xyz(a: float, b: float, c: float) -> Array:
    """R = Rx(a) Ry(b) Rz(c): SKEL's ``<transformation>`` rotation."""
    p = rigid_from_skel((0.0, 0.0, 0.0, a, b, c))
    return np.array(((p[0], p[1], p[2]), (p[4], p[5], p[6]), (p[8], p[9], p[10])))


def matrix_to_euler_xyz(rot: Array) -> tuple[float, float, float]:
    """Angles (a, b, c) with ``rot = Rx(a) Ry(b) Rz(c)``, the inverse of :func:`euler_xyz`.

    Exact to rounding everywhere, gimbal lock (b = +-pi/2) included: ``a`` is
    taken from the last column, and ``b`` and ``c`` from ``Rx(a)^T rot`` =
    ``Ry(b) Rz(c)``, so the angles always rebuild the matrix (at the lock, where
    only a +- c is defined, this picks one pair that does).

    Args:
        rot: A 3x3 rotation matrix (or the rotation block of a 4x4 transform).

    Returns:
        The angles in radians; b in [-pi/2, pi/2].
    """
    r = np.asarray(rot, dtype=float)[:3, :3].tolist()
    (_, _, r02), (r10, r11, r12), (r20, r21, r22) = r
    a = math.atan2(-r12, r22)
    ca, sa = math.cos(a), math.sin(a)
    # m = Rx(a)^T rot = Ry(b) Rz(c): m0 = row 0, m1 = ca row1 + sa row2, m2 = -sa row1 + ca row2.
    # m2[2] = hypot(r12, r22) >= 0, so b lands in [-pi/2, pi/2].
    b = math.atan2(r02, -sa * r12 + ca * r22)
    c = math.atan2(ca * r10 + sa * r20, ca * r11 + sa * r21)
    return a, b, c


def skel_transform(values: Array) -> Array:
    """4x4 transform from SKEL's 6 numbers ``x y z a b c`` (writable)."""
    v = np.asarray(values, dtype=float).tolist()
    out = np.array((*rigid_from_skel(v[:6]), 0.0, 0.0, 0.0, 1.0))
    out.shape = (4, 4)
    return out


def translation(p: Array) -> Array:
    """4x4 pure translation."""
    t = np.eye(4)
    t[:3, 3] = p
    return t


def inverse(t: Array) -> Array:
    """Inverse of a rigid 4x4 transform."""
    out = np.eye(4)
    rt = t[:3, :3].T
    out[:3, :3] = rt
    out[:3, 3] = -rt @ t[:3, 3]
    return out


def skew(v: Array) -> Array:
    """Cross-product matrix of a 3-vector."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def adjoint(t: Array) -> Array:
    """The 6x6 adjoint of a rigid 4x4 transform, for twists ordered (angular, linear)."""
    r = t[:3, :3]
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = r
    out[3:, :3] = skew(t[:3, 3]) @ r
    return out


def exp_rot(w: Array) -> Array:
    """Rotation matrix of a rotation vector (exponential map, DART's ``expMapRot``)."""
    theta = math.sqrt(float(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    k = skew(w)
    if theta < _SMALL_ANGLE:
        # Taylor expansion: accurate to rounding near zero.
        return np.eye(3) + k + 0.5 * (k @ k)
    a = math.sin(theta) / theta
    b = (1.0 - math.cos(theta)) / (theta * theta)
    return np.eye(3) + a * k + b * (k @ k)


def axis_angle(axis: Array, angle: float) -> Array:
    """Rotation by ``angle`` about unit ``axis``."""
    return exp_rot(np.asarray(axis, dtype=float) * angle)


def log_rot(rot: Array) -> Array:
    """Rotation vector of a rotation matrix (inverse of :func:`exp_rot`)."""
    cos_theta = max(-1.0, min(1.0, (float(np.trace(rot)) - 1.0) / 2.0))
    theta = math.acos(cos_theta)
    if theta < _SMALL_ANGLE:
        return np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]]) / 2.0
    if math.pi - theta < _NEAR_PI:
        # Near pi: axis from the symmetric part.
        m = (rot + np.eye(3)) / 2.0
        i = int(np.argmax(np.diag(m)))
        axis = m[:, i] / math.sqrt(max(m[i, i], 1e-300))
        out: Array = axis / np.linalg.norm(axis) * theta
        return out
    w = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    return w * (theta / (2.0 * math.sin(theta)))


def _shepperd_map() -> tuple[Array, Array]:
    """``4 q q^T`` (``q = (x, y, z, w)``) as a linear map of a rotation's nine entries.

    Returns:
        ``(a, b)``: ``4 q q^T`` flattened (16) is ``r.reshape(9) @ a + b``.
    """
    a = np.zeros((3, 3, 4, 4))
    # The diagonal: 1 +- r00 +- r11 +- r22.
    for i, signs in enumerate(((1, -1, -1), (-1, 1, -1), (-1, -1, 1), (1, 1, 1))):
        for d, sign in enumerate(signs):
            a[d, d, i, i] = sign
    # The rest (symmetric): x y, x z, y z from the symmetric part, w x, w y, w z from the
    # antisymmetric one.
    for (i, j), terms in {(0, 1): ((0, 1, 1), (1, 0, 1)), (0, 2): ((0, 2, 1), (2, 0, 1)),
                          (1, 2): ((1, 2, 1), (2, 1, 1)), (0, 3): ((2, 1, 1), (1, 2, -1)),
                          (1, 3): ((0, 2, 1), (2, 0, -1)), (2, 3): ((1, 0, 1), (0, 1, -1))
                          }.items():
        for row, col, sign in terms:
            a[row, col, i, j] = a[row, col, j, i] = sign
    return a.reshape(9, 16), np.eye(4).reshape(16)


_SHEPPERD, _SHEPPERD_ONE = _shepperd_map()
_DIAGONAL = [0, 5, 10, 15]  # the diagonal of a flattened 4x4


def matrix_to_quaternions(rot: Array) -> Array:
    """Unit quaternions ``(x, y, z, w)`` with ``w >= 0`` of rotation matrices (..., 3, 3).

    Shepperd's method: the entries of ``4 q q^T`` are sums and differences of the
    matrix entries (its diagonal ``1 +- r00 +- r11 +- r22``; one linear map of the
    nine entries for every matrix at once, :func:`_shepperd_map`); the quaternion is
    the row of the largest diagonal entry (``4 q_i q``) normalised, so nothing small is
    ever divided by and every rotation, half-turns included, is exact to rounding. The
    last axis of a 4x4 transform's rotation block works too.
    """
    r = np.asarray(rot, dtype=float)[..., :3, :3]
    shape = r.shape[:-2]
    k = r.reshape(-1, 9) @ _SHEPPERD + _SHEPPERD_ONE  # (n, 16): 4 q q^T, flattened
    best = np.argmax(k[:, _DIAGONAL], axis=1)
    q = k.reshape(-1, 4, 4)[np.arange(k.shape[0]), best]  # 4 q_best q
    q *= np.where(q[:, 3:] < 0.0, -1.0, 1.0)
    q /= np.sqrt((q * q).sum(axis=1, keepdims=True))
    out: Array = q.reshape(*shape, 4)
    return out
