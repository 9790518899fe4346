"""``~/markers``: every shape of the model drawn as RViz markers in its body frame.

One marker per shape (a capsule is a cylinder and two spheres, a multi-sphere its
spheres, a cone or pyramid a triangle list, an infinite plane the thin box the URDF
export draws), frame-locked to the body's TF frame, so RViz moves them with ``/tf``.
Namespaces ``visual`` and ``collision``, ids counted per namespace.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from skel_ros.model.transforms import matrix_to_quaternions
from skel_ros.model.types import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Mesh,
    MultiSphere,
    Plane,
    Pyramid,
    Shape,
    ShapeRole,
    Sphere,
)
from skel_ros.model.urdf import (
    DEFAULT_VISUAL_RGBA,
    PLANE_SIZE,
    PLANE_THICKNESS,
    skeleton_namespace,
)
from skel_ros.resources import package_uri

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.model.types import Body, SoftShape, World

__all__ = ["shape_markers"]

_MARKER_SLICES = 48


def shape_markers(world: World, frame_prefix: str = "", *,
                  collision: bool = False) -> MarkerArray:
    """Markers of every visual shape (and collision shape with ``collision``) of ``world``.

    Args:
        world: The model.
        frame_prefix: Put before every frame name (as the robot's TF frames).
        collision: Also draw the collision shapes (namespace ``collision``).
    """
    out = MarkerArray()
    ids = {"visual": 0, "collision": 0}
    for skel in world.skeletons:
        ns = skeleton_namespace(world, skel)
        for body in skel.bodies:
            frame = frame_prefix + ns + body.name
            for shape in body.shapes:
                if shape.role is ShapeRole.COLLISION and not collision:
                    continue
                for marker in _shape_markers(shape):
                    _finish_marker(marker, frame, shape.role.value, ids)
                    out.markers.append(marker)
            if body.soft is not None:
                for marker in _soft_markers(body, body.soft):
                    _finish_marker(marker, frame, "visual", ids)
                    out.markers.append(marker)
    return out


def _pose(marker: Marker, transform: npt.NDArray[np.float64]) -> None:
    q = matrix_to_quaternions(np.asarray(transform, dtype=float)[:3, :3]).tolist()
    p = np.asarray(transform, dtype=float)[:3, 3].tolist()
    pose = marker.pose
    pose.position.x, pose.position.y, pose.position.z = p
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q


def _finish_marker(marker: Marker, frame: str, namespace: str, ids: dict[str, int]) -> None:
    marker.header.frame_id = frame
    marker.ns = namespace
    marker.id = ids[namespace]
    ids[namespace] += 1
    marker.action = Marker.ADD
    marker.frame_locked = True  # follows its body frame as /tf moves it


def _color(shape: Shape) -> ColorRGBA:
    if shape.role is ShapeRole.COLLISION:
        return ColorRGBA(r=1.0, g=0.55, b=0.0, a=0.4)
    if shape.color is None:
        if isinstance(shape.geometry, Mesh):
            return ColorRGBA()  # all zero: RViz uses the mesh's own materials
        return ColorRGBA(r=DEFAULT_VISUAL_RGBA[0], g=DEFAULT_VISUAL_RGBA[1],
                         b=DEFAULT_VISUAL_RGBA[2], a=DEFAULT_VISUAL_RGBA[3])
    c = [float(v) for v in shape.color] + [1.0]
    return ColorRGBA(r=c[0], g=c[1], b=c[2], a=c[3])


def _primitive(kind: int, transform: npt.NDArray[np.float64], scale: npt.ArrayLike,
               color: ColorRGBA) -> Marker:
    m = Marker()
    m.type = kind
    _pose(m, transform)
    m.scale.x, m.scale.y, m.scale.z = (float(s) for s in np.asarray(scale, dtype=float))
    m.color = color
    return m


def _triangles(transform: npt.NDArray[np.float64], vertices: npt.NDArray[np.float64],
               faces: Sequence[Sequence[int]], color: ColorRGBA) -> Marker:
    m = _primitive(Marker.TRIANGLE_LIST, transform, (1.0, 1.0, 1.0), color)
    m.points = [Point(x=float(vertices[i][0]), y=float(vertices[i][1]), z=float(vertices[i][2]))
                for face in faces for i in face]
    return m


def _cone_mesh(radius: float, height: float) -> tuple[npt.NDArray[np.float64], list[list[int]]]:
    """Cone along z, base at -h/2, apex at +h/2 (DART's), outward triangles."""
    n = _MARKER_SLICES
    a = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a), np.full(n, -height / 2)])
    apex, centre = n, n + 1
    vertices = np.vstack([ring, [[0.0, 0.0, height / 2]], [[0.0, 0.0, -height / 2]]])
    faces = [[i, (i + 1) % n, apex] for i in range(n)]
    faces += [[(i + 1) % n, i, centre] for i in range(n)]
    return vertices, faces


def _pyramid_mesh(width: float, depth: float,
                  height: float) -> tuple[npt.NDArray[np.float64], list[list[int]]]:
    """Pyramid along z, rectangular base at -h/2, apex at +h/2 (DART's)."""
    w, d, h = width / 2, depth / 2, height / 2
    vertices = np.array([[-w, -d, -h], [w, -d, -h], [w, d, -h], [-w, d, -h], [0.0, 0.0, h]])
    faces = [[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4], [0, 2, 1], [0, 3, 2]]
    return vertices, faces


def _plane_pose(plane: Plane) -> npt.NDArray[np.float64]:
    """Pose of the thin box drawn for an infinite plane: top face on the plane (as the URDF)."""
    n = np.asarray(plane.normal, dtype=float)
    n = n / np.linalg.norm(n)
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    x = np.cross(helper, n)
    x /= np.linalg.norm(x)
    t = np.eye(4)
    t[:3, :3] = np.column_stack([x, np.cross(n, x), n])
    t[:3, 3] = n * (plane.offset - PLANE_THICKNESS / 2.0)
    return t


def _shape_markers(shape: Shape) -> list[Marker]:  # noqa: C901, PLR0911 - one case per geometry
    """The markers drawing one shape exactly (in its body frame)."""
    g = shape.geometry
    t = np.asarray(shape.transform, dtype=float)
    color = _color(shape)
    if isinstance(g, Sphere):
        return [_primitive(Marker.SPHERE, t, [2 * g.radius] * 3, color)]
    if isinstance(g, Box):
        return [_primitive(Marker.CUBE, t, np.asarray(g.size, dtype=float), color)]
    if isinstance(g, Ellipsoid):
        return [_primitive(Marker.SPHERE, t, np.asarray(g.size, dtype=float), color)]
    if isinstance(g, Cylinder):
        return [_primitive(Marker.CYLINDER, t, (2 * g.radius, 2 * g.radius, g.height), color)]
    if isinstance(g, Capsule):
        out = [_primitive(Marker.CYLINDER, t, (2 * g.radius, 2 * g.radius, g.height), color)]
        for z in (-g.height / 2, g.height / 2):
            cap = np.eye(4)
            cap[2, 3] = z
            out.append(_primitive(Marker.SPHERE, t @ cap, [2 * g.radius] * 3, color))
        return out
    if isinstance(g, Cone):
        return [_triangles(t, *_cone_mesh(g.radius, g.height), color)]
    if isinstance(g, Pyramid):
        return [_triangles(t, *_pyramid_mesh(g.base_width, g.base_depth, g.height), color)]
    if isinstance(g, Plane):
        return [_primitive(Marker.CUBE, t @ _plane_pose(g),
                           (PLANE_SIZE, PLANE_SIZE, PLANE_THICKNESS), color)]
    if isinstance(g, MultiSphere):
        # RViz has no convex hull primitive: the spheres themselves.
        out = []
        for radius, position in g.spheres:
            at = np.eye(4)
            at[:3, 3] = np.asarray(position, dtype=float)
            out.append(_primitive(Marker.SPHERE, t @ at, [2 * radius] * 3, color))
        return out
    if isinstance(g, Mesh):
        m = _primitive(Marker.MESH_RESOURCE, t, np.asarray(g.scale, dtype=float), color)
        # package:// where the ament index finds this file (RViz on another machine).
        m.mesh_resource = ((package_uri(g.path) or g.path.resolve().as_uri())
                           if g.path is not None else g.file_name)
        m.mesh_use_embedded_materials = shape.color is None
        return [m]
    return []  # type: ignore[unreachable]  # pragma: no cover - every geometry is above


def _soft_markers(body: Body, soft: SoftShape) -> list[Marker]:
    """A soft body's rest shape (DART deforms it while simulating)."""
    color = ColorRGBA(r=DEFAULT_VISUAL_RGBA[0], g=DEFAULT_VISUAL_RGBA[1],
                      b=DEFAULT_VISUAL_RGBA[2], a=DEFAULT_VISUAL_RGBA[3])
    eye = np.eye(4)
    if soft.kind == "box":
        return [_primitive(Marker.CUBE, np.asarray(soft.transform, dtype=float),
                           np.asarray(soft.size, dtype=float), color)]
    if soft.kind == "sphere":
        return [_primitive(Marker.SPHERE, eye, [2 * soft.radius] * 3, color)]
    if soft.kind == "ellipsoid":
        return [_primitive(Marker.SPHERE, eye, np.asarray(soft.size, dtype=float), color)]
    del body
    return [_primitive(Marker.CYLINDER, eye, (2 * soft.radius, 2 * soft.radius, soft.height),
                       color)]
