"""Build a model from another format: a draft ``World``, then the model DART would build.

Importers (Phobos, CASPR) describe what they read as plain model objects (a
"draft": file order, provisional DOF names, indices 0), then :func:`canonical`
writes the draft as SKEL and reads it back with ``load_skel``. The result is
exactly the model DART's ``SkelParser`` builds from the equivalent SKEL file:
DART's build order, DOF names (``J_x``, ``default``), de-duplicated names,
inertias from shapes, rest transforms, mesh bounds. Locations in the result
point at the imported file's elements, and the loader's warnings about the
generated text are replaced by the importer's own.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.errors import Location, SkelError, SkelWarning
from skel_ros.model.skel_parser import load_skel
from skel_ros.model.skel_writer import world_to_skel
from skel_ros.model.transforms import inverse
from skel_ros.model.types import (
    IDENTITY4,
    ActuatorType,
    Array,
    Body,
    CollisionDetector,
    Dof,
    EulerOrder,
    Inertia,
    Joint,
    JointType,
    PlaneType,
    Skeleton,
    World,
    frozen_array,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from skel_ros.model.interchange_errors import InterchangeError

INF = math.inf


def make_dof(name: str, joint: str, k: int, *, preserved: bool = False,
             position: tuple[float, float] = (-INF, INF),
             velocity: tuple[float, float] = (-INF, INF),
             acceleration: tuple[float, float] = (-INF, INF),
             force: tuple[float, float] = (-INF, INF),
             initial_position: float = 0.0, initial_velocity: float = 0.0,
             damping: float = 0.0, coulomb_friction: float = 0.0,
             spring_stiffness: float = 0.0, rest_position: float = 0.0) -> Dof:
    """A draft DOF (index filled in by :func:`skeleton`)."""
    return Dof(
        name=name, index=0, joint=joint, index_in_joint=k,
        position_lower=position[0], position_upper=position[1],
        velocity_lower=velocity[0], velocity_upper=velocity[1],
        acceleration_lower=acceleration[0], acceleration_upper=acceleration[1],
        force_lower=force[0], force_upper=force[1],
        initial_position=initial_position, initial_velocity=initial_velocity,
        damping=damping, coulomb_friction=coulomb_friction,
        spring_stiffness=spring_stiffness, rest_position=rest_position,
        name_preserved=preserved,
    )


def make_joint(name: str, jtype: JointType, parent: str | None, child: str, *,
               t_parent: Array, t_child: Array = IDENTITY4,
               axes: Sequence[Sequence[float]] = (), pitch: float = 0.0,
               euler_order: EulerOrder | None = None, plane: PlaneType | None = None,
               plane_axes: Sequence[Sequence[float]] = (), dofs: Sequence[str] = (),
               actuator: ActuatorType = ActuatorType.FORCE, implicit: bool = False,
               location: Location) -> Joint:
    """A draft joint (index and first DOF filled in by :func:`skeleton`)."""
    return Joint(
        name=name, type=jtype, index=0, parent=parent, child=child, actuator=actuator,
        T_parent_to_joint=frozen_array(t_parent), T_child_to_joint=frozen_array(t_child),
        axes=tuple(frozen_array(a) for a in axes), pitch=pitch, euler_order=euler_order,
        plane=plane, plane_axes=tuple(frozen_array(a) for a in plane_axes),
        dofs=tuple(dofs), first_dof=0, implicit=implicit, location=location,
    )


def rest_poses(joints: Iterable[Joint]) -> dict[str, Array]:
    """World pose at zero joint positions of every child body: ``W(p) T_pj T_cj^-1``.

    Joints may come in any order; a parent that is never a child is at the
    identity (the importers only hand in trees).
    """
    by_child = {j.child: j for j in joints}
    out: dict[str, Array] = {}
    for child in by_child:
        # The chain of joints up to a body whose pose is known (or a root), then its
        # poses top-down: a loop, not recursion, as chains may be thousands deep.
        chain: list[Joint] = []
        on_chain: set[str] = set()
        body = child
        while body in by_child and body not in out and body not in on_chain:
            joint = by_child[body]
            chain.append(joint)
            on_chain.add(body)
            if joint.parent is None:
                break
            body = joint.parent
        w = out.get(body, np.eye(4))
        for joint in reversed(chain):
            w = w @ np.asarray(joint.T_parent_to_joint) @ inverse(
                np.asarray(joint.T_child_to_joint))
            out[joint.child] = w
    return out


def skeleton(name: str, joints: Sequence[Joint], bodies: Sequence[Body], dofs: Sequence[Dof], *,
             frame: Array = IDENTITY4, mobile: bool = True, location: Location) -> Skeleton:
    """A draft skeleton; bodies get their rest poses from the joints."""
    poses = rest_poses(joints)
    fixed_bodies = tuple(
        dataclasses.replace(b, index=i, rest_transform=frozen_array(poses.get(b.name, np.eye(4))))
        for i, b in enumerate(bodies)
    )
    first = 0
    fixed_joints = []
    for i, j in enumerate(joints):
        fixed_joints.append(dataclasses.replace(j, index=i, first_dof=first))
        first += len(j.dofs)
    fixed_dofs = tuple(dataclasses.replace(d, index=i) for i, d in enumerate(dofs))
    return Skeleton(name=name, mobile=mobile, frame=frozen_array(frame),
                    joints=tuple(fixed_joints), bodies=fixed_bodies, dofs=fixed_dofs,
                    location=location)


def default_inertia() -> Inertia:
    """DART's inertia of a body without ``<inertia>``: 1 kg, COM 0, identity moment."""
    return Inertia(mass=1.0, com=frozen_array(np.zeros(3)), moment=frozen_array(np.eye(3)))


def canonical(draft: World, label: str, error: type[InterchangeError],
              warnings: Sequence[SkelWarning] = ()) -> World:
    """The model DART builds from ``draft``, with locations and warnings of the source.

    Raises:
        error: When the draft does not load (the message names the source file).
    """
    try:
        text = world_to_skel(draft)
        world = load_skel(text, name=label)
    except SkelError as exc:
        raise error(f"the model read from this file cannot be built: {exc.reason}",
                    Location(label), exc.hint) from None
    return _with_source_locations(world, draft, label, warnings)


def _with_source_locations(world: World, draft: World, label: str,
                           warnings: Sequence[SkelWarning]) -> World:
    skeletons = []
    for skel, dskel in zip(world.skeletons, draft.skeletons, strict=False):
        jloc = {j.name: j.location for j in dskel.joints}
        bloc = {b.name: b.location for b in dskel.bodies}
        bodies = []
        for body in skel.bodies:
            where = bloc.get(body.name, Location(label))
            shapes = tuple(dataclasses.replace(s, location=where) for s in body.shapes)
            bodies.append(dataclasses.replace(body, location=where, shapes=shapes))
        joints = tuple(
            dataclasses.replace(j, location=jloc.get(j.name, bloc.get(j.child, Location(label))))
            for j in skel.joints
        )
        skeletons.append(dataclasses.replace(skel, joints=joints, bodies=tuple(bodies),
                                             location=dskel.location))
    return dataclasses.replace(world, skeletons=tuple(skeletons), source=label,
                               warnings=tuple(warnings))


def world(skeletons: Sequence[Skeleton], source: str, *, time_step: float = 0.001,
          gravity: Sequence[float] = (0.0, 0.0, -9.81),
          detector: CollisionDetector = CollisionDetector.FCL) -> World:
    """A draft world."""
    return World(time_step=time_step, gravity=frozen_array(gravity),
                 collision_detector=detector, skeletons=tuple(skeletons), source=source,
                 warnings=())
