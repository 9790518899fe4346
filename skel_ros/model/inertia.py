"""Shape volumes and inertias, and the moment DART computes from shapes.

When a body's ``<inertia>`` gives a mass but no ``<moment_of_inertia>``, DART
6.20 computes the moment from the body's rigid shapes: each shape gets a share
of the mass proportional to its volume (a shape with zero or non-finite volume,
e.g. a plane, counts as weight 1), the composite inertia is formed about the
composite centre of the shapes, and it is moved to the declared COM with the
parallel-axis theorem. The per-shape formulas are DART's own (capsule as in
6.20, with the hemisphere offset h/2, and the bounding-box rule for multi-spheres and meshes).
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


def _box_inertia(size: Array, mass: float) -> Array:
    x2, y2, z2 = (float(s) ** 2 for s in size)
    return np.diag([mass / 12.0 * (y2 + z2), mass / 12.0 * (x2 + z2), mass / 12.0 * (x2 + y2)])


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
    if isinstance(geometry, Sphere):
        return 4.0 / 3.0 * math.pi * geometry.radius**3
    if isinstance(geometry, Box):
        return float(np.prod(geometry.size))
    if isinstance(geometry, Ellipsoid):
        return 4.0 / 3.0 * math.pi * float(np.prod(geometry.radii))
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
        return 0.0 if bounds is None else float(np.prod(bounds[1] - bounds[0]))
    return 0.0


def shape_inertia(geometry: Geometry, mass: float) -> Array:
    """Moment of inertia of the shape about its own origin, DART's formulas."""
    if isinstance(geometry, Sphere):
        return np.eye(3) * (2.0 / 5.0 * mass * geometry.radius**2)
    if isinstance(geometry, Box):
        return _box_inertia(np.asarray(geometry.size), mass)
    if isinstance(geometry, Ellipsoid):
        a2, b2, c2 = (float(r) ** 2 for r in geometry.radii)
        return np.diag([mass / 5.0 * (b2 + c2), mass / 5.0 * (a2 + c2), mass / 5.0 * (a2 + b2)])
    if isinstance(geometry, Cylinder):
        r2, h2 = geometry.radius**2, geometry.height**2
        ixx = mass * (3.0 * r2 + h2) / 12.0
        return np.diag([ixx, ixx, mass * r2 / 2.0])
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
        return np.diag([ixx, ixx, izz])
    if isinstance(geometry, Cone):
        r2, h2 = geometry.radius**2, geometry.height**2
        ixx = 3.0 / 20.0 * mass * (r2 + 2.0 / 3.0 * h2)
        return np.diag([ixx, ixx, 3.0 / 10.0 * mass * r2])
    if isinstance(geometry, (Pyramid, MultiSphere, Mesh)):
        bounds = bounding_box(geometry)
        if bounds is None:
            return np.zeros((3, 3))
        return _box_inertia(bounds[1] - bounds[0], mass)
    if isinstance(geometry, Plane):
        return np.zeros((3, 3))
    raise TypeError(f"unknown geometry {geometry!r}")


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
    if not mass > 0.0 or not shapes:
        return None
    weights = []
    for geometry, _ in shapes:
        v = volume(geometry)
        weights.append(v if math.isfinite(v) and v > 0.0 else 1.0)
    total = sum(weights)
    masses = [mass * w / total for w in weights]
    centre = sum(m * np.asarray(pose)[:3, 3] for m, (_, pose) in zip(masses, shapes)) / mass
    moment = np.zeros((3, 3))
    for m, (geometry, pose) in zip(masses, shapes):
        rot = np.asarray(pose)[:3, :3]
        d = np.asarray(pose)[:3, 3] - centre
        moment += rot @ shape_inertia(geometry, m) @ rot.T
        moment += m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    d = np.asarray(com) - centre
    moment += mass * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return moment
