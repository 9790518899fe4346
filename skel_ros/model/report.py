"""The model as plain data, in the layout of the corpus fixtures (DART's own dump).

``world_to_dict`` gives the same structure and keys as the reference dumps of DART's own
build for the SKEL corpus the tests compare against (``SKEL_CORPUS``), so ``skel-ros
inspect --json`` output can be diffed against what DART built. Non-finite numbers are
the strings ``"inf"``, ``"-inf"``, ``"nan"`` as in the fixtures.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from skel_ros.model.kinematics import Kinematics
from skel_ros.model.types import (
    Body,
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Joint,
    Mesh,
    MultiSphere,
    Plane,
    Pyramid,
    Shape,
    Skeleton,
    Sphere,
    World,
)

_SHAPE_TYPES = {
    Sphere: "SphereShape",
    Box: "BoxShape",
    Ellipsoid: "EllipsoidShape",
    Cylinder: "CylinderShape",
    Capsule: "CapsuleShape",
    Cone: "ConeShape",
    Pyramid: "PyramidShape",
    Plane: "PlaneShape",
    MultiSphere: "MultiSphereConvexHullShape",
    Mesh: "MeshShape",
}


def number(x: float) -> float | str:
    """A float, or the fixtures' string for a non-finite value."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _matrix(a: npt.ArrayLike) -> list[list[float]]:
    return [[float(v) for v in row] for row in np.asarray(a)]


def _vector(a: npt.ArrayLike) -> list[float]:
    return [float(v) for v in np.asarray(a)]


def _shape_params(shape: Shape) -> dict[str, Any]:  # noqa: PLR0911 - one return per geometry kind
    g = shape.geometry
    if isinstance(g, Sphere):
        return {"radius": g.radius}
    if isinstance(g, Box):
        return {"size": _vector(g.size)}
    if isinstance(g, Ellipsoid):
        return {"radii": _vector(g.radii)}
    if isinstance(g, (Cylinder, Capsule, Cone)):
        return {"radius": g.radius, "height": g.height}
    if isinstance(g, Pyramid):
        return {"base_width": g.base_width, "base_depth": g.base_depth, "height": g.height}
    if isinstance(g, Plane):
        return {}
    if isinstance(g, MultiSphere):
        return {"numspheres": float(len(g.spheres))}
    # The last kind of Geometry: a mesh.
    return {"scale": _vector(g.scale), "meshpath": str(g.path) if g.path else g.file_name}


def _joint(j: Joint) -> dict[str, Any]:
    return {
        "name": j.name,
        "type": j.type.dart_class,
        "parent_body": j.parent,
        "child_body": j.child,
        "actuator_type": j.actuator.name,
        "num_dofs": j.num_dofs,
        "T_parent_to_joint": _matrix(j.T_parent_to_joint),
        "T_child_to_joint": _matrix(j.T_child_to_joint),
    }


def _body(b: Body, world_tf: npt.ArrayLike) -> dict[str, Any]:
    shapes = []
    if b.soft is not None:
        shapes.append({
            "name": f"{b.name}_SoftMeshShape",
            "role": "visualcollision",
            "type": "SoftMeshShape",
            "relative_transform": _matrix(np.eye(4)),
            "params": {},
        })
    for s in b.shapes:
        shapes.append({  # noqa: PERF401 - one dict per shape
            "name": s.name,
            "role": s.role.value,
            "type": _SHAPE_TYPES[type(s.geometry)],
            "relative_transform": _matrix(s.transform),
            "params": _shape_params(s),
        })
    return {
        "name": b.name,
        "parent_joint": b.parent_joint,
        "is_soft": b.is_soft,
        "mass": b.inertia.mass,
        "local_com": _vector(b.inertia.com),
        "moment_of_inertia": _matrix(b.inertia.moment),
        "gravity_mode": b.gravity_mode,
        "num_markers": len(b.markers),
        "world_transform": _matrix(world_tf),
        "shapes": shapes,
    }


def skeleton_to_dict(skel: Skeleton) -> dict[str, Any]:
    """One skeleton in the fixtures' layout."""
    transforms = Kinematics(skel).body_transforms()
    return {
        "name": skel.name,
        "mobile": skel.mobile,
        "num_dofs": skel.num_dofs,
        "joints": [_joint(j) for j in skel.joints],
        "dofs": [
            {
                "name": d.name,
                "joint": d.joint,
                "index_in_joint": d.index_in_joint,
                "position_lower": number(d.position_lower),
                "position_upper": number(d.position_upper),
                "initial_position": number(d.initial_position),
                "initial_velocity": number(d.initial_velocity),
                "velocity_lower": number(d.velocity_lower),
                "velocity_upper": number(d.velocity_upper),
                "force_lower": number(d.force_lower),
                "force_upper": number(d.force_upper),
                "damping": number(d.damping),
                "coulomb_friction": number(d.coulomb_friction),
                "spring_stiffness": number(d.spring_stiffness),
                "rest_position": number(d.rest_position),
                "name_preserved": d.name_preserved,
            }
            for d in skel.dofs
        ],
        "bodies": [_body(b, transforms[i]) for i, b in enumerate(skel.bodies)],
        "initial_positions": [number(d.initial_position) for d in skel.dofs],
        "initial_velocities": [number(d.initial_velocity) for d in skel.dofs],
    }


def world_to_dict(world: World) -> dict[str, Any]:
    """The world in the fixtures' layout (without ``after_steps``), plus warnings."""
    return {
        "source": world.source,
        "time_step": world.time_step,
        "gravity": _vector(world.gravity),
        "collision_detector": world.collision_detector.dart_type,
        "num_skeletons": len(world.skeletons),
        "skeletons": [skeleton_to_dict(s) for s in world.skeletons],
        "warnings": [str(w) for w in world.warnings],
    }
