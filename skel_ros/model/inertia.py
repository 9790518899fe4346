"""Shape volumes and inertias, and the moment DART computes from shapes.

When a body's ``<inertia>`` gives a mass but no ``<moment_of_inertia>``, DART
6.20 computes the moment from the body's rigid shapes: each shape gets a share
of the mass proportional to its volume (a shape with zero or non-finite volume,
e.g. a plane, counts as weight 1), the composite inertia is formed about the
composite centre of the shapes, and it is moved to the declared COM with the
parallel-axis theorem. The per-shape formulas are DART's own (capsule as in
6.20, with the hemisphere offset h/2, and the bounding-box rule for multi-spheres and meshes).
A pyramid's own inertia is the identity matrix, whatever its size and the
mass: DART 6.20's ``PyramidShape::computeInertia`` is not implemented and
returns the identity (checked with dartpy 6.20, test/model/test_pyramid.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from skel_ros.model.types import (
    Array,
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Geometry,
    Mesh,
    MultiSphere,
    Plane,
    Pyramid,
    Sphere,
)


def _box_diagonal(x: float, y: float, z: float, mass: float) -> tuple[float, float, float]:
    x2, y2, z2 = x**2, y**2, z**2
    return mass / 12.0 * (y2 + z2), mass / 12.0 * (x2 + z2), mass / 12.0 * (x2 + y2)


def bounding_box(geometry: Geometry) -> tuple[Array, Array] | None:
    """Axis-aligned bounds (min, max) in the shape frame; None for a plane or unread mesh."""
    if isinstance(geometry, Sphere):
        r = np.full(3, geometry.radius)
        return -r, r
    if isinstance(geometry, (Box, Ellipsoid)):
        h = np.asarray(geometry.size) / 2.0
        return -h, h
    if isinstance(geometry, Cylinder):
        h = np.array([geometry.radius, geometry.radius, geometry.height / 2.0])
        return -h, h
    if isinstance(geometry, Capsule):
        h = np.array([geometry.radius, geometry.radius, geometry.radius + geometry.height / 2.0])
        return -h, h
    if isinstance(geometry, Cone):
        h = np.array([geometry.radius, geometry.radius, geometry.radius + geometry.height / 2.0])
        return -h, h
    if isinstance(geometry, Pyramid):
        h = np.array([geometry.base_width / 2.0, geometry.base_depth / 2.0, geometry.height / 2.0])
        return -h, h
    if isinstance(geometry, MultiSphere):
        lo = np.min([np.asarray(p) - r for r, p in geometry.spheres], axis=0)
        hi = np.max([np.asarray(p) + r for r, p in geometry.spheres], axis=0)
        return lo, hi
    if isinstance(geometry, Mesh):
        return geometry.bounds
    return None


def volume(geometry: Geometry) -> float:
    """The volume DART gives the shape (0 for a plane or an unread mesh)."""
    if isinstance(geometry, Box):
        x, y, z = geometry.size.tolist()
        return float(x * y * z)
    if isinstance(geometry, Sphere):
        return 4.0 / 3.0 * math.pi * geometry.radius**3
    if isinstance(geometry, Ellipsoid):
        a, b, c = (np.asarray(geometry.size) / 2.0).tolist()
        return 4.0 / 3.0 * math.pi * float(a * b * c)
    if isinstance(geometry, Cylinder):
        return math.pi * geometry.radius**2 * geometry.height
    if isinstance(geometry, Capsule):
        return (
            math.pi * geometry.radius**2 * geometry.height
            + 4.0 / 3.0 * math.pi * geometry.radius**3
        )
    if isinstance(geometry, Cone):
        return 1.0 / 3.0 * math.pi * geometry.radius**2 * geometry.height
    if isinstance(geometry, Pyramid):
        return geometry.base_width * geometry.base_depth * geometry.height / 3.0
    if isinstance(geometry, (MultiSphere, Mesh)):
        bounds = bounding_box(geometry)
        if bounds is None:
            return 0.0
        x, y, z = (bounds[1] - bounds[0]).tolist()
        return float(x * y * z)
    return 0.0


def _shape_diagonal(geometry: Geometry, mass: float) -> tuple[float, float, float] | None:
    """Principal moments of the shape about its origin (DART's formulas; all are diagonal).

    None for a pyramid: DART 6.20's ``PyramidShape::computeInertia`` is not
    implemented and returns the identity, whatever the mass.
    """
    if isinstance(geometry, Box):
        x, y, z = geometry.size.tolist()
        return _box_diagonal(x, y, z, mass)
    if isinstance(geometry, Sphere):
        i = 2.0 / 5.0 * mass * geometry.radius**2
        return i, i, i
    if isinstance(geometry, Ellipsoid):
        a, b, c = (np.asarray(geometry.size) / 2.0).tolist()
        a2, b2, c2 = a**2, b**2, c**2
        return mass / 5.0 * (b2 + c2), mass / 5.0 * (a2 + c2), mass / 5.0 * (a2 + b2)
    if isinstance(geometry, Cylinder):
        r2, h2 = geometry.radius**2, geometry.height**2
        ixx = mass * (3.0 * r2 + h2) / 12.0
        return ixx, ixx, mass * r2 / 2.0
    if isinstance(geometry, Capsule):
        r, h = geometry.radius, geometry.height
        v_cyl = math.pi * r * r * h
        v_sph = 4.0 / 3.0 * math.pi * r**3
        density = mass / (v_cyl + v_sph)
        m_cyl, m_sph = density * v_cyl, density * v_sph
        ixx = m_cyl * (h * h / 12.0 + r * r / 4.0) + m_sph * (
            h * h / 4.0 + 3.0 / 8.0 * h * r + 2.0 / 5.0 * r * r
        )
        izz = m_cyl * (r * r / 2.0) + m_sph * (2.0 / 5.0 * r * r)
        return ixx, ixx, izz
    if isinstance(geometry, Cone):
        r2, h2 = geometry.radius**2, geometry.height**2
        ixx = 3.0 / 20.0 * mass * (r2 + 2.0 / 3.0 * h2)
        return ixx, ixx, 3.0 / 10.0 * mass * r2
    if isinstance(geometry, Pyramid):
        return None
    if isinstance(geometry, (MultiSphere, Mesh)):
        bounds = bounding_box(geometry)
        if bounds is None:
            return 0.0, 0.0, 0.0
        x, y, z = (bounds[1] - bounds[0]).tolist()
        return _box_diagonal(x, y, z, mass)
    if isinstance(geometry, Plane):
        return 0.0, 0.0, 0.0
    raise TypeError(f"unknown geometry {geometry!r}")


def shape_inertia(geometry: Geometry, mass: float) -> Array:
    """Moment of inertia of the shape about its own origin, as DART 6.20 computes it.

    A pyramid gets the identity whatever its size and mass: DART 6.20 has no
    pyramid inertia (``PyramidShape::computeInertia`` logs "not implemented" and
    returns the identity).
    """
    diagonal = _shape_diagonal(geometry, mass)
    return np.eye(3) if diagonal is None else np.diag(diagonal)


def moment_from_shapes(
    mass: float, com: Array, shapes: Sequence[tuple[Geometry, Array]]
) -> Array | None:
    """DART 6.20's moment of inertia about ``com`` from rigid shapes.

    Args:
        mass: Body mass.
        com: Declared centre of mass (body frame).
        shapes: (geometry, 4x4 pose in the body frame) of every rigid shape,
            visual and collision alike.

    Returns:
        The 3x3 moment, or None when DART keeps the identity (mass <= 0 or no
        shapes).
    """
    # Plain float arithmetic: on 3x3 matrices numpy's per-call overhead is far
    # larger than the arithmetic. The sums run in the order numpy's matrix
    # products take.
    if not mass > 0.0 or not shapes:
        return None
    weights = []
    for geometry, _ in shapes:
        v = volume(geometry)
        weights.append(v if math.isfinite(v) and v > 0.0 else 1.0)
    total = sum(weights)
    masses = [mass * w / total for w in weights]
    poses = [np.asarray(pose)[:3].tolist() for _, pose in shapes]
    cx = cy = cz = 0.0
    for m, p in zip(masses, poses):
        cx += m * p[0][3]
        cy += m * p[1][3]
        cz += m * p[2][3]
    cx, cy, cz = cx / mass, cy / mass, cz / mass
    # moment = sum over shapes of (R S R^T + m (|d|^2 I - d d^T)), then the shift to ``com``.
    i00 = i01 = i02 = i10 = i11 = i12 = i20 = i21 = i22 = 0.0
    for m, (geometry, _), p in zip(masses, shapes, poses):
        (r00, r01, r02, x), (r10, r11, r12, y), (r20, r21, r22, z) = p
        diagonal = _shape_diagonal(geometry, m)
        if diagonal is None:  # a pyramid: R I R^T
            a00, a01, a02, a10, a11, a12, a20, a21, a22 = r00, r01, r02, r10, r11, r12, r20, r21, r22
        else:  # R S with S diagonal
            s0, s1, s2 = diagonal
            a00, a01, a02 = r00 * s0, r01 * s1, r02 * s2
            a10, a11, a12 = r10 * s0, r11 * s1, r12 * s2
            a20, a21, a22 = r20 * s0, r21 * s1, r22 * s2
        i00 += a00 * r00 + a01 * r01 + a02 * r02
        i01 += a00 * r10 + a01 * r11 + a02 * r12
        i02 += a00 * r20 + a01 * r21 + a02 * r22
        i10 += a10 * r00 + a11 * r01 + a12 * r02
        i11 += a10 * r10 + a11 * r11 + a12 * r12
        i12 += a10 * r20 + a11 * r21 + a12 * r22
        i20 += a20 * r00 + a21 * r01 + a22 * r02
        i21 += a20 * r10 + a21 * r11 + a22 * r12
        i22 += a20 * r20 + a21 * r21 + a22 * r22
        dx, dy, dz = x - cx, y - cy, z - cz
        dd = dx * dx + dy * dy + dz * dz
        i00 += m * (dd - dx * dx)
        i01 += m * (0.0 - dx * dy)
        i02 += m * (0.0 - dx * dz)
        i10 += m * (0.0 - dy * dx)
        i11 += m * (dd - dy * dy)
        i12 += m * (0.0 - dy * dz)
        i20 += m * (0.0 - dz * dx)
        i21 += m * (0.0 - dz * dy)
        i22 += m * (dd - dz * dz)
    x, y, z = np.asarray(com)[:3].tolist()
    dx, dy, dz = x - cx, y - cy, z - cz
    dd = dx * dx + dy * dy + dz * dz
    i00 += mass * (dd - dx * dx)
    i01 += mass * (0.0 - dx * dy)
    i02 += mass * (0.0 - dx * dz)
    i10 += mass * (0.0 - dy * dx)
    i11 += mass * (dd - dy * dy)
    i12 += mass * (0.0 - dy * dz)
    i20 += mass * (0.0 - dz * dx)
    i21 += mass * (0.0 - dz * dy)
    i22 += mass * (dd - dz * dz)
    out = np.array((i00, i01, i02, i10, i11, i12, i20, i21, i22))
    out.shape = (3, 3)
    return out
