"""Triangle meshes of a model's visual shapes, in their body frames (numpy, trimesh).

Each visual shape becomes one mesh (vertices in the body frame, the shape's pose
applied) with its colour, as ``~/markers`` draws it, with trimesh's primitives in
DART's conventions (a cone and a pyramid centred on their height, a capsule's height
its cylinder's): a multi-sphere is its spheres, an infinite plane the URDF export's
thin box (:data:`~skel_ros.model.urdf.PLANE_SIZE`), a soft body its rest shape, and a
mesh file what trimesh reads of it (STL, OBJ; COLLADA when pycollada is installed). A
mesh file that cannot be read is left out with a warning, not an error: the rest of the
robot still draws.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

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
    ShapeRole,
    Sphere,
)
from skel_ros.model.urdf import DEFAULT_VISUAL_RGBA, PLANE_SIZE, PLANE_THICKNESS

if TYPE_CHECKING:
    import trimesh

    from skel_ros.model.types import Array, Body, Geometry, Shape, SoftShape

__all__ = ["BodyMesh", "body_meshes"]

_SPHERE_SUBDIVISIONS = 2


@dataclass(frozen=True)
class BodyMesh:
    """One visual shape of a body as triangles in the body frame.

    Attributes:
        vertices: (n, 3) float32 vertices in the body frame.
        faces: (m, 3) uint32 vertex indices, outward.
        rgb: Colour, 0-255 each.
    """

    vertices: Array
    faces: Array
    rgb: tuple[int, int, int]


def body_meshes(body: Body) -> list[BodyMesh]:
    """The visual shapes (and soft rest shape) of ``body``, each as a :class:`BodyMesh`."""
    out = []
    for shape in body.shapes:
        if shape.role is not ShapeRole.VISUAL:
            continue
        mesh = _geometry_mesh(shape.geometry)
        if mesh is None:
            continue
        out.append(_placed(mesh, np.asarray(shape.transform, dtype=float), _rgb(shape)))
    if body.soft is not None:
        mesh, pose = _soft_mesh(body.soft)
        out.append(_placed(mesh, pose, _rgb(None)))
    return out


def _rgb(shape: Shape | None) -> tuple[int, int, int]:
    color = DEFAULT_VISUAL_RGBA[:3] if shape is None or shape.color is None else shape.color[:3]
    r, g, b = (round(255 * min(max(float(c), 0.0), 1.0)) for c in color)
    return r, g, b


def _placed(mesh: trimesh.Trimesh, pose: Array, rgb: tuple[int, int, int]) -> BodyMesh:
    vertices = np.asarray(mesh.vertices, dtype=float) @ pose[:3, :3].T + pose[:3, 3]
    return BodyMesh(vertices.astype(np.float32), np.asarray(mesh.faces, dtype=np.uint32), rgb)


def _geometry_mesh(g: Geometry) -> trimesh.Trimesh | None:  # noqa: C901, PLR0911 - one case per geometry
    import trimesh

    if isinstance(g, Sphere):
        return trimesh.creation.icosphere(subdivisions=_SPHERE_SUBDIVISIONS, radius=g.radius)
    if isinstance(g, Ellipsoid):
        sphere = trimesh.creation.icosphere(subdivisions=_SPHERE_SUBDIVISIONS)
        return sphere.apply_scale(np.asarray(g.radii, dtype=float))
    if isinstance(g, Box):
        return trimesh.creation.box(extents=np.asarray(g.size, dtype=float))
    if isinstance(g, Cylinder):
        return trimesh.creation.cylinder(radius=g.radius, height=g.height)
    if isinstance(g, Capsule):  # trimesh's height is the cylinder's, as DART's
        return trimesh.creation.capsule(height=g.height, radius=g.radius, count=(16, 16))
    if isinstance(g, Cone):  # trimesh's base is at z = 0; DART centres the cone
        cone = trimesh.creation.cone(radius=g.radius, height=g.height)
        return cone.apply_translation((0.0, 0.0, -g.height / 2.0))
    if isinstance(g, Pyramid):  # rectangular base at -h/2, apex at +h/2 (DART's)
        w, d, h = g.base_width / 2.0, g.base_depth / 2.0, g.height / 2.0
        vertices = [[0.0, 0.0, h], [w, d, -h], [-w, d, -h], [-w, -d, -h], [w, -d, -h]]
        faces = [[0, 1, 2], [0, 2, 3], [0, 3, 4], [0, 4, 1], [1, 3, 2], [1, 4, 3]]
        return trimesh.Trimesh(vertices, faces, process=False)
    if isinstance(g, MultiSphere):  # its spheres (as the markers draw it), not their hull
        spheres = [trimesh.creation.icosphere(subdivisions=_SPHERE_SUBDIVISIONS, radius=r)
                   .apply_translation(np.asarray(c, dtype=float)) for r, c in g.spheres]
        return trimesh.util.concatenate(spheres) if spheres else None
    if isinstance(g, Plane):  # the URDF export's thin box, its top face on the plane
        n = np.asarray(g.normal, dtype=float)
        n = n / np.linalg.norm(n)
        pose = trimesh.geometry.align_vectors([0.0, 0.0, 1.0], n)
        pose[:3, 3] = n * (g.offset - PLANE_THICKNESS / 2.0)
        box = trimesh.creation.box(extents=(PLANE_SIZE, PLANE_SIZE, PLANE_THICKNESS))
        return box.apply_transform(pose)
    if isinstance(g, Mesh):
        return _mesh_file(g)
    return None  # type: ignore[unreachable]  # pragma: no cover - every geometry is above


def _mesh_file(g: Mesh) -> trimesh.Trimesh | None:
    import trimesh

    if g.path is None:
        warnings.warn(f"mesh {g.file_name!r} was not found; it is not drawn", stacklevel=3)
        return None
    try:
        loaded = trimesh.load(g.path, force="mesh")
    except Exception as exc:  # noqa: BLE001 - trimesh raises many kinds on a bad file
        warnings.warn(f"mesh {g.path} cannot be read ({exc}); it is not drawn", stacklevel=3)
        return None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        warnings.warn(f"mesh {g.path} has no triangles; it is not drawn", stacklevel=3)
        return None
    loaded.apply_scale(np.asarray(g.scale, dtype=float))
    return loaded


def _soft_mesh(soft: SoftShape) -> tuple[trimesh.Trimesh, Array]:
    """A soft body's rest shape and its pose in the body frame (DART deforms it)."""
    import trimesh

    eye = np.eye(4)
    if soft.kind == "box":
        return (trimesh.creation.box(extents=np.asarray(soft.size, dtype=float)),
                np.asarray(soft.transform, dtype=float))
    if soft.kind == "sphere":
        return trimesh.creation.icosphere(subdivisions=_SPHERE_SUBDIVISIONS,
                                          radius=soft.radius), eye
    if soft.kind == "ellipsoid":
        sphere = trimesh.creation.icosphere(subdivisions=_SPHERE_SUBDIVISIONS, radius=0.5)
        return sphere.apply_scale(np.asarray(soft.size, dtype=float)), eye
    return trimesh.creation.cylinder(radius=soft.radius, height=soft.height), eye
