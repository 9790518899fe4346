"""Rigid-transform helpers: Euler angles exact at gimbal lock, plain-float transforms.

``matrix_to_euler_xyz`` is the one Euler-angle extraction of the package (the
URDF exporter uses it too). Near b = +-pi/2 the angles a and c are not unique
(only a +- c is), so the property checked there is the round trip matrix ->
angles -> matrix, to 1e-12; away from it the angles themselves come back.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from skel_ros.model import urdf
from skel_ros.model.transforms import (
    adjoint,
    euler_xyz,
    inverse,
    matrix_to_euler_xyz,
    rigid_from_skel,
    rigid_inverse,
    rigid_mul,
    rigid_to_matrix,
    rot_x,
    rot_y,
    rot_z,
    skel_transform,
)

TOL = 1e-12
HALF_PI = math.pi / 2

# b at, and just off, gimbal lock; the old extraction (asin of r02, then a fixed
# branch within 1e-12 of the lock) was off by up to ~1e-6 here.
NEAR_LOCK = [
    s * HALF_PI + d
    for s in (1.0, -1.0)
    for d in (0.0, 1e-16, -1e-16, 1e-15, -1e-15, 1e-13, -1e-13, 1e-12, -1e-12, 1e-10, -1e-9, 1e-7,
              -1e-6, 1e-4)
]


def _angle_pairs(seed: int, count: int) -> list[tuple[float, float]]:
    rnd = np.random.default_rng(seed)
    return [(float(a), float(c)) for a, c in rnd.uniform(-math.pi, math.pi, size=(count, 2))]


@pytest.mark.parametrize("b", NEAR_LOCK)
def test_near_gimbal_lock_round_trips_the_matrix(b: float) -> None:
    for a, c in [(0.0, 0.0), (0.3, -0.3), (1.0, 2.5), (-3.0, 3.1), *_angle_pairs(1, 50)]:
        rot = euler_xyz(a, b, c)
        a2, b2, c2 = matrix_to_euler_xyz(rot)
        assert -HALF_PI <= b2 <= HALF_PI
        assert np.max(np.abs(euler_xyz(a2, b2, c2) - rot)) <= TOL, (a, b, c)


def test_near_gimbal_lock_keeps_the_defined_combination() -> None:
    # At b = +pi/2, R depends on a + c only; at b = -pi/2 on a - c.
    for a, c in _angle_pairs(2, 50):
        a2, _, c2 = matrix_to_euler_xyz(euler_xyz(a, HALF_PI, c))
        assert math.isclose(math.remainder(a2 + c2 - (a + c), 2 * math.pi), 0.0, abs_tol=TOL)
        a2, _, c2 = matrix_to_euler_xyz(euler_xyz(a, -HALF_PI, c))
        assert math.isclose(math.remainder(a2 - c2 - (a - c), 2 * math.pi), 0.0, abs_tol=TOL)


def test_angles_come_back_away_from_the_lock() -> None:
    rnd = np.random.default_rng(3)
    for _ in range(500):
        a, c = (float(v) for v in rnd.uniform(-3.1, 3.1, size=2))
        b = float(rnd.uniform(-HALF_PI + 0.01, HALF_PI - 0.01))
        # The error grows as 1 / cos(b); 0.01 from the lock it is still far below TOL.
        got = matrix_to_euler_xyz(euler_xyz(a, b, c))
        assert np.max(np.abs(np.subtract(got, (a, b, c)))) <= TOL, (a, b, c)


def test_random_rotations_round_trip() -> None:
    rnd = np.random.default_rng(4)
    for _ in range(500):
        q, _ = np.linalg.qr(rnd.normal(size=(3, 3)))
        rot = q * np.sign(np.linalg.det(q))  # a proper rotation
        a, b, c = matrix_to_euler_xyz(rot)
        assert np.max(np.abs(euler_xyz(a, b, c) - rot)) <= TOL


def test_takes_the_rotation_block_of_a_transform() -> None:
    t = skel_transform(np.array([1.0, 2.0, 3.0, 0.4, HALF_PI - 1e-9, -0.2]))
    a, b, c = matrix_to_euler_xyz(t)
    assert np.max(np.abs(euler_xyz(a, b, c) - t[:3, :3])) <= TOL


def test_urdf_uses_the_same_implementation() -> None:
    assert urdf.euler_xyz_angles is matrix_to_euler_xyz


def test_euler_xyz_is_rx_ry_rz() -> None:
    for a, c in _angle_pairs(5, 100):
        b = a / 2
        assert np.max(np.abs(euler_xyz(a, b, c) - rot_x(a) @ rot_y(b) @ rot_z(c))) <= 1e-15


def test_rigid_helpers_equal_the_matrix_products() -> None:
    rnd = np.random.default_rng(6)

    def random_rigid() -> tuple[float, ...]:
        return rigid_from_skel([*rnd.uniform(-2.0, 2.0, size=3).tolist(),
                                *rnd.uniform(-math.pi, math.pi, size=3).tolist()])

    for _ in range(200):
        p, q = random_rigid(), random_rigid()
        mp, mq = rigid_to_matrix(p), rigid_to_matrix(q)
        assert np.max(np.abs(rigid_to_matrix(rigid_mul(p, q)) - mp @ mq)) <= 1e-14
        assert np.max(np.abs(rigid_to_matrix(rigid_inverse(p)) - np.linalg.inv(mp))) <= 1e-14
        assert np.array_equal(rigid_to_matrix(p)[3], [0.0, 0.0, 0.0, 1.0])


def test_rigid_to_matrix_is_read_only() -> None:
    m = rigid_to_matrix(rigid_from_skel((1.0, 2.0, 3.0, 0.1, 0.2, 0.3)))
    assert m.shape == (4, 4)
    assert m.dtype == np.float64
    with pytest.raises(ValueError, match="read-only"):
        m[0, 0] = 2.0


def test_skel_transform_matches_the_parser() -> None:
    # sim/dart_gaps relies on skel_transform rebuilding the parser's matrices bit for bit.
    values = [0.1, -0.2, 0.3, 0.7, -1.2, 2.9]
    parsed = rigid_to_matrix(rigid_from_skel(values))
    assert np.array_equal(skel_transform(np.array(values)), parsed)


def test_adjoint_maps_twists_between_frames() -> None:
    """adjoint(T) carries a twist (angular, linear) from T's child frame to its parent."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = skel_transform(rng.uniform(-2.0, 2.0, 6))
        b = skel_transform(rng.uniform(-2.0, 2.0, 6))
        np.testing.assert_allclose(adjoint(a @ b), adjoint(a) @ adjoint(b), atol=1e-12)
        np.testing.assert_allclose(adjoint(inverse(a)), np.linalg.inv(adjoint(a)), atol=1e-12)
        # A point p fixed in the child frame moves at v + w x (R p + t) in the parent frame.
        w, v = rng.normal(size=3), rng.normal(size=3)
        p = rng.normal(size=3)
        parent = adjoint(a) @ np.concatenate([w, v])
        point = a[:3, :3] @ p + a[:3, 3]
        child_speed = a[:3, :3] @ (v + np.cross(w, p))
        np.testing.assert_allclose(parent[3:] + np.cross(parent[:3], point), child_speed,
                                   atol=1e-12)
