"""Mimic joints: followers whose position is their leader's, scaled and offset.

A follower is a one-DOF joint whose DOF carries a :class:`~skel_ros.model.types.Mimic`:
``follower = multiplier * leader + offset`` (URDF's ``<mimic>``). This module is the
one place that rule is computed (positions, velocities, leader bounds) and the one
place the rules of a valid coupling are stated (:func:`mimic_problem`); the readers
raise what it returns with their own file, line and element path.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.model.types import Array, Dof, Joint, Mimic, Skeleton, World

__all__ = ["couplings", "follower_velocities", "followers", "independent_dofs", "leader_bounds",
           "leader_interval", "mimic_problem", "with_followers"]


def mimic_problem(follower: Joint, leader: str, joints: Mapping[str, Joint],
                  mimic: Mimic) -> str | None:
    """What is wrong with ``follower`` mimicking joint ``leader``, or None.

    Args:
        follower: The mimic joint.
        leader: The name of the joint it mimics.
        joints: Every joint of the skeleton by name.
        mimic: The coupling read.
    """
    if leader == follower.name:
        return f"joint {follower.name!r} mimics itself"
    lead = joints.get(leader)
    if lead is None:
        return f"joint {follower.name!r} mimics joint {leader!r}, which does not exist"
    for joint, role in ((follower, "mimic joint"), (lead, "mimicked joint")):
        if joint.num_dofs != 1:
            return (f"the {role} {joint.name!r} is a {joint.type.value} joint with"
                    f" {joint.num_dofs} DOFs; a mimic couples two one-DOF joints")
    if not (math.isfinite(mimic.multiplier) and math.isfinite(mimic.offset)):
        return f"joint {follower.name!r}: mimic multiplier and offset must be finite numbers"
    if mimic.multiplier == 0.0:
        return (f"joint {follower.name!r}: a mimic multiplier of 0 holds the joint at its"
                " offset (make it a fixed joint)")
    return None


def followers(skeleton: Skeleton) -> tuple[Dof, ...]:
    """The follower DOFs of ``skeleton``, in DOF order."""
    return tuple(d for d in skeleton.dofs if d.mimic is not None)


def independent_dofs(skeleton: Skeleton) -> tuple[Dof, ...]:
    """The DOFs that are no follower, in DOF order (what a command may name)."""
    return tuple(d for d in skeleton.dofs if d.mimic is None)


def couplings(skeleton: Skeleton) -> tuple[tuple[Dof, Mimic], ...]:
    """Each follower DOF of ``skeleton`` with its coupling, in DOF order."""
    return tuple((d, d.mimic) for d in skeleton.dofs if d.mimic is not None)


def with_followers(skeleton: Skeleton, q: Array) -> Array:
    """``q`` (one configuration or ``(m, ndof)``) with each follower set from its leader.

    Leaders are never followers (:func:`mimic_problem`), so one pass is enough.
    """
    out = np.array(q, dtype=np.float64)
    for dof, mimic in couplings(skeleton):
        lead = skeleton.dof_index(mimic.leader)
        out[..., dof.index] = mimic.multiplier * out[..., lead] + mimic.offset
    return out


def follower_velocities(skeleton: Skeleton, v: Array) -> Array:
    """Velocities (or accelerations) ``v`` with each follower's set from its leader's."""
    out = np.array(v, dtype=np.float64)
    for dof, mimic in couplings(skeleton):
        out[..., dof.index] = mimic.multiplier * out[..., skeleton.dof_index(mimic.leader)]
    return out


def leader_bounds(skeleton: Skeleton, leader: str) -> tuple[float, float]:
    """The leader positions that keep the leader and all its followers in their limits.

    A follower's limits ``[lo, hi]`` bound its leader to ``(lo - offset) / multiplier``
    .. ``(hi - offset) / multiplier`` (swapped for a negative multiplier); the result
    is the intersection with the leader's own limits (it may be empty: lower > upper).
    """
    lead = skeleton.dof(leader)
    lower, upper = lead.position_lower, lead.position_upper
    for dof, mimic in couplings(skeleton):
        if mimic.leader != leader:
            continue
        a, b = leader_interval(mimic, dof.position_lower, dof.position_upper)
        lower, upper = max(lower, a), min(upper, b)
    return lower, upper


def leader_interval(mimic: Mimic, lower: float, upper: float, *,
                    offset: bool = True) -> tuple[float, float]:
    """The leader values that keep a follower's value in ``[lower, upper]``.

    Positions: ``(lower - offset) / multiplier`` .. ``(upper - offset) / multiplier``,
    swapped for a negative multiplier. With ``offset=False`` the same for velocities,
    accelerations (the offset does not move them).
    """
    shift = mimic.offset if offset else 0.0
    a = (lower - shift) / mimic.multiplier
    b = (upper - shift) / mimic.multiplier
    return min(a, b), max(a, b)


def coupled_start(world: World) -> World:
    """``world`` with every follower's initial position and velocity set from its leader's.

    What an engine starts from (and resets to): a follower starts where the rule puts
    it, whatever its own ``<init_pos>`` says. ``world`` itself when nothing changes.
    """
    skeletons = []
    for skel in world.skeletons:
        if not any(d.mimic is not None for d in skel.dofs):
            skeletons.append(skel)
            continue
        q = with_followers(skel, [d.initial_position for d in skel.dofs])
        v = follower_velocities(skel, [d.initial_velocity for d in skel.dofs])
        dofs = tuple(d if d.mimic is None else dataclasses.replace(
            d, initial_position=float(q[d.index]), initial_velocity=float(v[d.index]))
            for d in skel.dofs)
        skeletons.append(skel if all(a.initial_position == b.initial_position
                                     and a.initial_velocity == b.initial_velocity
                                     for a, b in zip(dofs, skel.dofs, strict=True))
                         else dataclasses.replace(skel, dofs=dofs))
    if all(a is b for a, b in zip(skeletons, world.skeletons, strict=True)):
        return world
    return dataclasses.replace(world, skeletons=tuple(skeletons))
