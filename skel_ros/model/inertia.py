"""Shape volumes and inertias, and the moment DART computes from shapes.

When a body's ``<inertia>`` gives a mass but no ``<moment_of_inertia>``, DART
6.20 computes the moment from the body's rigid shapes: each shape gets a share
of the mass proportional to its volume (a shape with zero or non-finite volume,
e.g. a plane, counts as weight 1), the composite inertia is formed about the
composite centre of the shapes, and it is moved to the declared COM with the
parallel-axis theorem. The per-shape formulas are DART's own (capsule as in
6.20, with the hemisphere offset h/2, and the bounding-box rule for multi-spheres and meshes).
A multi-sphere's volume is 0 in DART 6.20, so it always weighs 1: its
``updateVolume`` computes the box volume of the cached bounding box before that
box has been computed (it is filled only on the first ``getBoundingBox``), and
the 0 stays cached (checked with dartpy 6.20,
test/model/test_multisphere_inertia.py). Its own moment is still the box moment
of its true bounding box.
A pyramid's own inertia is the identity matrix, whatever its size and the
mass: DART 6.20's ``PyramidShape::computeInertia`` is not implemented and
returns the identity (checked with dartpy 6.20, test/model/test_pyramid.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skel_ros.model.transforms import Rigid

Diagonal = tuple[float, float, float]


def _box_diagonal(x: float, y: float, z: float, mass: float) -> Diagonal:
    x2, y2, z2 = x**2, y**2, z**2
    return mass / 12.0 * (y2 + z2), mass / 12.0 * (x2 + z2), mass / 12.0 * (x2 + y2)


def _half_extents(g: Any) -> Array:  # noqa: ANN401 - one of the geometry classes below
    if isinstance(g, Sphere):
        return np.full(3, g.radius)
    if isinstance(g, (Box, Ellipsoid)):
        return np.asarray(g.size) / 2.0
    if isinstance(g, Cylinder):
        return np.array([g.radius, g.radius, g.height / 2.0])
    if isinstance(g, (Capsule, Cone)):
        return np.array([g.radius, g.radius, g.radius + g.height / 2.0])
    return np.array([g.base_width / 2.0, g.base_depth / 2.0, g.height / 2.0])  # Pyramid


def bounding_box(geometry: Geometry) -> tuple[Array, Array] | None:
    """Axis-aligned bounds (min, max) in the shape frame; None for a plane or unread mesh."""
    if isinstance(geometry, (Sphere, Box, Ellipsoid, Cylinder, Capsule, Cone, Pyramid)):
        h = _half_extents(geometry)
        return -h, h
    if isinstance(geometry, MultiSphere):
        lo = np.min([np.asarray(p) - r for r, p in geometry.spheres], axis=0)
        hi = np.max([np.asarray(p) + r for r, p in geometry.spheres], axis=0)
        return lo, hi
    if isinstance(geometry, Mesh):
        return geometry.bounds
    return None


def _bounds_volume(geometry: Geometry) -> float:
    bounds = bounding_box(geometry)
    if bounds is None:
        return 0.0
    x, y, z = (bounds[1] - bounds[0]).tolist()
    return float(x * y * z)


def _box_volume(g: Box) -> float:
    x, y, z = g.size.tolist()
    return float(x * y * z)


def _ellipsoid_volume(g: Ellipsoid) -> float:
    a, b, c = (np.asarray(g.size) / 2.0).tolist()
    return 4.0 / 3.0 * math.pi * float(a * b * c)


# The volume DART gives each kind of shape.
_VOLUME: dict[type, Callable[[Any], float]] = {
    Box: _box_volume,
    Sphere: lambda g: 4.0 / 3.0 * math.pi * g.radius**3,
    Ellipsoid: _ellipsoid_volume,
    Cylinder: lambda g: math.pi * g.radius**2 * g.height,
    Capsule: lambda g: math.pi * g.radius**2 * g.height + 4.0 / 3.0 * math.pi * g.radius**3,
    Cone: lambda g: 1.0 / 3.0 * math.pi * g.radius**2 * g.height,
    Pyramid: lambda g: g.base_width * g.base_depth * g.height / 3.0,
    MultiSphere: lambda _: 0.0,  # DART 6.20's value (module docstring): weight 1
    Mesh: _bounds_volume,
    Plane: lambda _: 0.0,
}


def volume(geometry: Geometry) -> float:
    """The volume DART gives the shape (0 for a plane, a multi-sphere or an unread mesh)."""
    compute = _VOLUME.get(type(geometry))
    return 0.0 if compute is None else float(compute(geometry))


def _box_shape_diagonal(g: Box, mass: float) -> Diagonal:
    x, y, z = g.size.tolist()
    return _box_diagonal(x, y, z, mass)


def _sphere_diagonal(g: Sphere, mass: float) -> Diagonal:
    i = 2.0 / 5.0 * mass * g.radius**2
    return i, i, i


def _ellipsoid_diagonal(g: Ellipsoid, mass: float) -> Diagonal:
    a, b, c = (np.asarray(g.size) / 2.0).tolist()
    a2, b2, c2 = a**2, b**2, c**2
    return mass / 5.0 * (b2 + c2), mass / 5.0 * (a2 + c2), mass / 5.0 * (a2 + b2)


def _cylinder_diagonal(g: Cylinder, mass: float) -> Diagonal:
    r2, h2 = g.radius**2, g.height**2
    ixx = mass * (3.0 * r2 + h2) / 12.0
    return ixx, ixx, mass * r2 / 2.0


def _capsule_diagonal(g: Capsule, mass: float) -> Diagonal:
    r, h = g.radius, g.height
    v_cyl = math.pi * r * r * h
    v_sph = 4.0 / 3.0 * math.pi * r**3
    density = mass / (v_cyl + v_sph)
    m_cyl, m_sph = density * v_cyl, density * v_sph
    ixx = m_cyl * (h * h / 12.0 + r * r / 4.0) + m_sph * (
        h * h / 4.0 + 3.0 / 8.0 * h * r + 2.0 / 5.0 * r * r
    )
    izz = m_cyl * (r * r / 2.0) + m_sph * (2.0 / 5.0 * r * r)
    return ixx, ixx, izz


def _cone_diagonal(g: Cone, mass: float) -> Diagonal:
    r2, h2 = g.radius**2, g.height**2
    ixx = 3.0 / 20.0 * mass * (r2 + 2.0 / 3.0 * h2)
    return ixx, ixx, 3.0 / 10.0 * mass * r2


def _bounds_diagonal(g: Geometry, mass: float) -> Diagonal:
    bounds = bounding_box(g)
    if bounds is None:
        return 0.0, 0.0, 0.0
    x, y, z = (bounds[1] - bounds[0]).tolist()
    return _box_diagonal(x, y, z, mass)


# Principal moments of each kind of shape about its origin (DART's formulas; all
# are diagonal). None for a pyramid: DART 6.20's PyramidShape::computeInertia is
# not implemented and returns the identity, whatever the mass.
_DIAGONAL: dict[type, Callable[[Any, float], Diagonal | None]] = {
    Box: _box_shape_diagonal,
    Sphere: _sphere_diagonal,
    Ellipsoid: _ellipsoid_diagonal,
    Cylinder: _cylinder_diagonal,
    Capsule: _capsule_diagonal,
    Cone: _cone_diagonal,
    Pyramid: lambda _g, _m: None,
    MultiSphere: _bounds_diagonal,
    Mesh: _bounds_diagonal,
    Plane: lambda _g, _m: (0.0, 0.0, 0.0),
}


def _shape_diagonal(geometry: Geometry, mass: float) -> Diagonal | None:
    compute = _DIAGONAL.get(type(geometry))
    if compute is None:
        raise TypeError(f"unknown geometry {geometry!r}")
    return compute(geometry, mass)


def moment_from_shapes(
    mass: float, com: Sequence[float], shapes: Sequence[tuple[Geometry, Rigid]]
) -> Array | None:
    """DART 6.20's moment of inertia about ``com`` from rigid shapes.

    The arithmetic is written out on floats, in the order numpy's 3x3 matrix
    products take, so the result is the same to the last bit on every machine.

    Args:
        mass: Body mass.
        com: Declared centre of mass (body frame), x y z.
        shapes: (geometry, pose in the body frame as a :data:`Rigid`) of every
            rigid shape, visual and collision alike.

    Returns:
        The 3x3 moment, or None when DART keeps the identity (mass <= 0 or no
        shapes).
    """
    if not mass > 0.0 or not shapes:
        return None
    weights = []
    for geometry, _ in shapes:
        v = volume(geometry)
        weights.append(v if math.isfinite(v) and v > 0.0 else 1.0)
    total = sum(weights)
    cx = cy = cz = 0.0
    masses = []
    for w, (_, p) in zip(weights, shapes, strict=True):
        m = mass * w / total
        masses.append(m)
        cx += m * p[3]
        cy += m * p[7]
        cz += m * p[11]
    cx, cy, cz = cx / mass, cy / mass, cz / mass
    i00 = i01 = i02 = i10 = i11 = i12 = i20 = i21 = i22 = 0.0
    for m, (geometry, p) in zip(masses, shapes, strict=True):
        r00, r01, r02, x, r10, r11, r12, y, r20, r21, r22, z = p
        diagonal = _shape_diagonal(geometry, m)
        if diagonal is None:  # a pyramid: R I R^T
            a00, a01, a02 = r00, r01, r02
            a10, a11, a12 = r10, r11, r12
            a20, a21, a22 = r20, r21, r22
        else:  # R S with S diagonal
            s0, s1, s2 = diagonal
            a00, a01, a02 = r00 * s0, r01 * s1, r02 * s2
            a10, a11, a12 = r10 * s0, r11 * s1, r12 * s2
            a20, a21, a22 = r20 * s0, r21 * s1, r22 * s2
        # Each sum: the shape's own moment R S R^T, then its point mass at the centre.
        d00, d01, d02, d10, d11, d12, d20, d21, d22 = _point_mass(m, x - cx, y - cy, z - cz)
        i00 = i00 + (a00 * r00 + a01 * r01 + a02 * r02) + d00
        i01 = i01 + (a00 * r10 + a01 * r11 + a02 * r12) + d01
        i02 = i02 + (a00 * r20 + a01 * r21 + a02 * r22) + d02
        i10 = i10 + (a10 * r00 + a11 * r01 + a12 * r02) + d10
        i11 = i11 + (a10 * r10 + a11 * r11 + a12 * r12) + d11
        i12 = i12 + (a10 * r20 + a11 * r21 + a12 * r22) + d12
        i20 = i20 + (a20 * r00 + a21 * r01 + a22 * r02) + d20
        i21 = i21 + (a20 * r10 + a21 * r11 + a22 * r12) + d21
        i22 = i22 + (a20 * r20 + a21 * r21 + a22 * r22) + d22
    x, y, z = com
    d00, d01, d02, d10, d11, d12, d20, d21, d22 = _point_mass(mass, x - cx, y - cy, z - cz)
    out = np.array([i00 + d00, i01 + d01, i02 + d02,
                    i10 + d10, i11 + d11, i12 + d12,
                    i20 + d20, i21 + d21, i22 + d22])
    out.shape = (3, 3)
    return out


def _point_mass(m: float, dx: float, dy: float, dz: float) -> tuple[float, ...]:
    """``m (|d|^2 I - d d^T)`` (parallel-axis theorem), row-major."""
    dd = dx * dx + dy * dy + dz * dz
    return (
        m * (dd - dx * dx), m * (0.0 - dx * dy), m * (0.0 - dx * dz),
        m * (0.0 - dy * dx), m * (dd - dy * dy), m * (0.0 - dy * dz),
        m * (0.0 - dz * dx), m * (0.0 - dz * dy), m * (dd - dz * dz),
    )
