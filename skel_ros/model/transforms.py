"""Small rigid-transform helpers (numpy), with DART's conventions."""

from __future__ import annotations

import math

import numpy as np

from skel_ros.model.types import Array


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


def euler_xyz(a: float, b: float, c: float) -> Array:
    """R = Rx(a) Ry(b) Rz(c): SKEL's ``<transformation>`` rotation."""
    return rot_x(a) @ rot_y(b) @ rot_z(c)


def matrix_to_euler_xyz(rot: Array) -> tuple[float, float, float]:
    """Inverse of :func:`euler_xyz` (angles a, b, c with R = Rx(a) Ry(b) Rz(c))."""
    b = math.asin(max(-1.0, min(1.0, float(rot[0, 2]))))
    if abs(rot[0, 2]) < 1.0 - 1e-12:
        a = math.atan2(-rot[1, 2], rot[2, 2])
        c = math.atan2(-rot[0, 1], rot[0, 0])
    else:  # gimbal lock: only a + c (or a - c) is defined
        a = math.atan2(rot[2, 1], rot[1, 1])
        c = 0.0
    return a, b, c


def skel_transform(values: Array) -> Array:
    """4x4 transform from SKEL's 6 numbers ``x y z a b c``."""
    t = np.eye(4)
    t[:3, :3] = euler_xyz(values[3], values[4], values[5])
    t[:3, 3] = values[:3]
    return t


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


def exp_rot(w: Array) -> Array:
    """Rotation matrix of a rotation vector (exponential map, DART's ``expMapRot``)."""
    theta = math.sqrt(float(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    k = skew(w)
    if theta < 1e-7:
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
    if theta < 1e-7:
        return np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]]) / 2.0
    if math.pi - theta < 1e-6:
        # Near pi: axis from the symmetric part.
        m = (rot + np.eye(3)) / 2.0
        i = int(np.argmax(np.diag(m)))
        axis = m[:, i] / math.sqrt(max(m[i, i], 1e-300))
        return axis / np.linalg.norm(axis) * theta
    w = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    return w * (theta / (2.0 * math.sin(theta)))
