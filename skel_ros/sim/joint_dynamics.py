"""Joint dynamics the model file cannot carry: armature, and damping and friction to override.

An identified robot (``skel-ros identify``) has per joint an armature (the rotor inertia
seen at the joint), a viscous damping and a Coulomb friction. SKEL and URDF carry the last
two in a DOF's ``<dynamics>``; none of them carries an armature. A :class:`JointDynamics`
per DOF gives the engines all three (``SimEngine(..., joint_dynamics=...)``):

* damping and friction replace the model's in its DOFs (:func:`with_joint_dynamics`), so
  each engine builds them as it builds the model's (DART's joint damping coefficient and
  Coulomb friction, MuJoCo's ``damping`` and ``frictionloss``), and the position
  controllers' gains, derived from the DOF's damping, see them too;
* the armature is added by each engine to its world (MuJoCo's ``dof_armature``; DART 6
  has none: a rotor spinning with the child link about the joint's axis,
  :mod:`skel_ros.sim.engine`), before the controllers' gains are derived from the DOFs'
  effective inertia, and again on every reset.

No ROS, no engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from skel_ros.sim.errors import SimBuildError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.model.types import Dof, World

__all__ = ["JointDynamics", "with_joint_dynamics"]


@dataclass(frozen=True)
class JointDynamics:
    """One DOF's dynamics beyond the model file; None: the model's (armature: none).

    Attributes:
        armature: kg m^2 (kg for a slide), rotor inertia added to the DOF's own.
        damping: N m s/rad (N s/m), viscous damping replacing the model's.
        friction: N m (N), Coulomb friction replacing the model's.
    """

    armature: float | None = None
    damping: float | None = None
    friction: float | None = None

    def __post_init__(self) -> None:
        for name in ("armature", "damping", "friction"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not math.isfinite(value)
                                      or value < 0.0):
                raise SimBuildError(f"{name} must be a finite number >= 0, got {value!r}")


def with_joint_dynamics(world: World, dynamics: Mapping[tuple[str, str], JointDynamics]
                        ) -> World:
    """``world`` with the damping and friction of ``dynamics`` in its DOFs.

    Args:
        world: the model.
        dynamics: (skeleton name, DOF name) -> its dynamics; a None value keeps the model's.
    """
    if not dynamics:
        return world

    def dof(skeleton: str, d: Dof) -> Dof:
        jd = dynamics.get((skeleton, d.name))
        if jd is None:
            return d
        return replace(d, damping=d.damping if jd.damping is None else jd.damping,
                       coulomb_friction=(d.coulomb_friction if jd.friction is None
                                         else jd.friction))

    return replace(world, skeletons=tuple(
        replace(s, dofs=tuple(dof(s.name, d) for d in s.dofs)) for s in world.skeletons))
