"""Moving bodies without mass in the MJCF export: which are folded, bounded or refused.

MuJoCo's compiler moves a body with joints only when it, or a body welded to it, has a
mass and three principal moments of inertia of at least ``mjMINVAL``
(:data:`MJ_MINVAL`). DART has no such rule: a planar root made of massless bodies with
one DOF each (DartEnv's hopper, walker2d, half_cheetah...) simulates, because the
bodies further down carry the inertia. :func:`mass_plan` decides, per skeleton, what the
export does with each moving body MuJoCo would refuse:

* **Folded** (:class:`Fold`): a body that adds nothing to DART's dynamics (mass 0, and no
  moment of inertia or an orientation that never changes) with exactly one child body,
  on a joint, no shapes, and a joint that is neither a ball nor free. Its joints become
  joints of the child's MuJoCo body, placed before the child's own, as MuJoCo's own
  ``hopper.xml`` puts ``rootx``, ``rootz`` and ``rooty`` in its torso. MuJoCo applies a
  body's joints in order, each about its ``pos`` and along its ``axis`` in the body
  frame as the earlier ones left it, so a motion ``M`` of the folded body, followed by
  the fixed transform ``E`` to the child's MuJoCo frame, is ``E (E^-1 M E)``: a hinge
  about ``E^-1`` of the origin along ``R_E^T axis``, a slide along ``R_E^T axis``.
  Kinematics and mass matrix are exact, whatever the offsets and rotations between the
  joints.
* **Bounded** (:class:`Bound`): any other such body gets :data:`MASS_BOUND_RATIO` of its
  skeleton's mass and/or of the largest principal moment of inertia a body of the
  skeleton has about its own origin (what it lacks), and a warning that says how much
  was added to which body.
* **Refused**: a massless body on a free joint, with nothing welded to it that has
  mass and inertia (a free-floating body: DART's mass matrix is singular too).

Soft bodies are refused before this (the export's skeleton check).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.interchange_errors import ExportError
from skel_ros.model.transforms import inverse
from skel_ros.model.types import JointType

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.model.types import Array, Body, Inertia, Joint, Skeleton

__all__ = ["MASS_BOUND_RATIO", "MJ_MINVAL", "Bound", "Fold", "MassPlan", "carries_mass",
           "mass_plan", "what_it_lacks"]

# MuJoCo's mjMINVAL: the least mass and principal moment of inertia its compiler takes
# for the body that carries a moving body.
MJ_MINVAL = 1e-15
# A bounded body gets this fraction of its skeleton's total mass (when it lacks mass)
# and of the largest principal moment of inertia a body of the skeleton has about its
# own origin (when it lacks inertia), about each axis: small against the robot, far
# above mjMINVAL (_bounds).
MASS_BOUND_RATIO = 1e-6
# Joints whose motion never turns the child body: a body below only these never turns.
_TRANSLATIONS = frozenset({JointType.WELD, JointType.PRISMATIC, JointType.TRANSLATIONAL,
                           JointType.TRANSLATIONAL2D})


@dataclass(frozen=True)
class Fold:
    """Massless bodies whose joints the MuJoCo body of a descendant carries.

    Attributes:
        bodies: The folded bodies, parent side first; each one's only child is the next,
            the last one's is :attr:`into`.
        into: The body whose MuJoCo body carries their joints, before its own.
        offsets: Per folded body, ``E``: its joint frame (after the joint's motion) seen
            from :attr:`into`'s MuJoCo frame (its joint frame, after its motion) with the
            joints in between at zero. The MuJoCo joints of that body are its motions
            conjugated by ``E`` (module docstring).
    """

    bodies: tuple[str, ...]
    into: str
    offsets: tuple[Array, ...]

    def placement(self, skeleton: Skeleton) -> Array:
        """The MuJoCo body's frame in the first folded body's parent side, at q = 0.

        ``T_parent_to_joint`` of the first folded body's joint times its ``E``: the MuJoCo
        frame of :attr:`into` in the parent body frame (the world for a root).
        """
        first = skeleton.joint(skeleton.body(self.bodies[0]).parent_joint)
        out: Array = np.asarray(first.T_parent_to_joint, dtype=float) @ self.offsets[0]
        return out

    def below(self, skeleton: Skeleton, body: str) -> tuple[Joint, ...]:
        """The joints between folded ``body`` and :attr:`into`, parent side first."""
        names = [*self.bodies, self.into]
        return tuple(skeleton.joint(skeleton.body(b).parent_joint)
                     for b in names[names.index(body) + 1:])


@dataclass(frozen=True)
class Bound:
    """What the export adds to a moving body MuJoCo would refuse and folding cannot remove.

    Attributes:
        inertia: The body's mass properties as written (the model's plus the bound).
        mass: The mass added, kg.
        moment: The moment of inertia added about each axis (at the centre of mass), kg m^2.
        message: The warning: the body, why it is not folded, and what was added.
    """

    inertia: Inertia
    mass: float
    moment: float
    message: str


@dataclass(frozen=True)
class MassPlan:
    """One skeleton's folds and bounds (:func:`mass_plan`).

    Attributes:
        folds: Every fold.
        bounds: Body name -> its bound.
    """

    folds: tuple[Fold, ...]
    bounds: Mapping[str, Bound]

    def folded(self, body: str) -> Fold | None:
        """The fold ``body`` is one of the folded bodies of, if any."""
        return next((f for f in self.folds if body in f.bodies), None)

    def carrier(self, body: str) -> Fold | None:
        """The fold whose joints ``body``'s MuJoCo body carries, if any."""
        return next((f for f in self.folds if f.into == body), None)


def carries_mass(body: Body) -> bool:
    """Whether MuJoCo lets ``body`` carry a moving body: mass and principal moments >= mjMINVAL."""
    if body.inertia.mass < MJ_MINVAL:
        return False
    return bool(_principal(body.inertia)[0] >= MJ_MINVAL)


def what_it_lacks(body: Body) -> str:
    """What keeps ``body`` from carrying a moving body (:func:`carries_mass`), in words."""
    light = body.inertia.mass < MJ_MINVAL
    principal = _principal(body.inertia)
    flat = bool(principal[0] < MJ_MINVAL)
    if light and flat:
        return "no mass and no inertia"
    if light:
        return "no mass" if body.inertia.mass == 0.0 else f"no mass (mass {body.inertia.mass:g} kg)"
    return (f"a mass of {body.inertia.mass:g} kg but no inertia about every axis (principal"
            f" moments {' '.join(f'{v:g}' for v in principal)})")


def mass_plan(skeleton: Skeleton) -> MassPlan:
    """What the export does with the moving bodies of ``skeleton`` MuJoCo would refuse.

    Args:
        skeleton: A mobile skeleton without soft bodies.

    Returns:
        The folds and bounds (module docstring); both empty when MuJoCo takes every body.

    Raises:
        ExportError: A massless body on a free joint, with the body's location.
    """
    joint_of = {j.child: j for j in skeleton.joints}
    children: dict[str, list[str]] = {}
    for joint in skeleton.joints:
        if joint.parent is not None:
            children.setdefault(joint.parent, []).append(joint.child)
    jointed = {name: j.type is not JointType.WELD for name, j in joint_of.items()}
    turns = _turning(skeleton)
    into: dict[str, str] = {}
    bounds: dict[str, Bound] = {}
    mass_bound, moment_bound = _bounds(skeleton)
    for body in skeleton.bodies:
        joint = joint_of[body.name]
        if not jointed[body.name] or _carried(skeleton, body.name, children, jointed):
            continue
        if joint.type is JointType.FREE and body.inertia.mass < MJ_MINVAL:
            raise ExportError(
                f"body {body.name!r} has {what_it_lacks(body)} and floats on free joint"
                f" {joint.name!r} with nothing welded to it that has both: a free-floating"
                " body needs its own (DART's mass matrix is singular without them)",
                body.location, hint="give it a mass and a moment of inertia")
        why = _not_foldable(body, joint, children.get(body.name, []),
                            turns=turns[body.name], jointed=jointed)
        if why is None:
            into[body.name] = children[body.name][0]
        else:
            bounds[body.name] = _bound(body, why, mass_bound, moment_bound)
    return MassPlan(_folds(skeleton, into), bounds)


def _turning(skeleton: Skeleton) -> dict[str, bool]:
    """Body name -> whether its orientation can change (a joint that turns above it)."""
    turns: dict[str, bool] = {}
    for joint in skeleton.joints:  # parents before children
        turns[joint.child] = joint.type not in _TRANSLATIONS or (
            joint.parent is not None and turns[joint.parent])
    return turns


def _carried(skeleton: Skeleton, name: str, children: Mapping[str, list[str]],
             jointed: Mapping[str, bool]) -> bool:
    """MuJoCo's rule: the body, or one welded to it, has mass and inertia (carries_mass)."""
    group = [name]  # the body, then what is welded to it
    while group:
        body = group.pop()
        if carries_mass(skeleton.body(body)):
            return True
        group.extend(c for c in children.get(body, ()) if not jointed[c])
    return False


def _not_foldable(body: Body, joint: Joint, children: list[str], *, turns: bool,
                  jointed: Mapping[str, bool]) -> str | None:
    """Why ``body``'s joints cannot go into its child's MuJoCo body exactly (None: they can)."""
    child = children[0] if len(children) == 1 else None
    reasons = (  # what DART's dynamics would lose first, then what MJCF cannot hold
        (body.inertia.mass != 0.0, f"its mass of {body.inertia.mass:g} kg would be lost"),
        (turns and bool(np.any(np.asarray(body.inertia.moment, dtype=float))),
         "it turns, and its moment of inertia would be lost"),
        (joint.type is JointType.BALL,
         "its joint is a ball joint, whose MuJoCo quaternion would turn in another frame"),
        (bool(body.shapes), f"it has {len(body.shapes)} shape(s), which would move with its child"),
        (not children, "it has no child body"),
        (len(children) > 1, f"it has {len(children)} child bodies"),
        (child is not None and not jointed[child], f"its child {child!r} is welded to it"),
    )
    return next((why for applies, why in reasons if applies), None)


def _folds(skeleton: Skeleton, into: Mapping[str, str]) -> tuple[Fold, ...]:
    """Chains of folded bodies, each ending at the first body below them that is not folded."""
    out: list[Fold] = []
    for body in skeleton.bodies:
        parent = skeleton.joint(body.parent_joint).parent
        if body.name not in into or (parent is not None and parent in into):
            continue  # not folded, or not the top of its chain
        chain = [body.name]
        while into[chain[-1]] in into:
            chain.append(into[chain[-1]])
        target = into[chain[-1]]
        # E of the last folded body: its joint frame -> the target's joint frame, at rest;
        # each body above: its joint frame -> the next one's, then that one's E.
        offsets = [np.eye(4)]
        for name, below in zip(reversed(chain), reversed([*chain[1:], target]), strict=True):
            own = skeleton.joint(skeleton.body(name).parent_joint)
            nxt = skeleton.joint(skeleton.body(below).parent_joint)
            step = (inverse(np.asarray(own.T_child_to_joint, dtype=float))
                    @ np.asarray(nxt.T_parent_to_joint, dtype=float))
            offsets.insert(0, step @ offsets[0])
        out.append(Fold(tuple(chain), target, tuple(offsets[:-1])))
    return tuple(out)


def _bounds(skeleton: Skeleton) -> tuple[float, float]:
    """(mass, moment) a bounded body of ``skeleton`` gets where it lacks them.

    :data:`MASS_BOUND_RATIO` of the skeleton's total mass, and of the largest principal
    moment of inertia of a body with mass about the body's own origin (a point mass off
    its origin counts); 1e-6 kg and 1e-6 kg m^2 for a skeleton without either.
    """
    heavy = [b.inertia for b in skeleton.bodies if b.inertia.mass > 0.0]
    total = sum(i.mass for i in heavy)
    largest = max((_about_origin(i) for i in heavy), default=0.0)
    mass = MASS_BOUND_RATIO * (total if total > 0.0 else 1.0)
    moment = MASS_BOUND_RATIO * (largest if largest > 0.0 else 1.0)
    return max(mass, MJ_MINVAL), max(moment, MJ_MINVAL)


def _about_origin(inertia: Inertia) -> float:
    """The largest principal moment of inertia about the body frame's origin (parallel axes)."""
    c = np.asarray(inertia.com, dtype=float)
    moment = (np.asarray(inertia.moment, dtype=float)
              + inertia.mass * (float(c @ c) * np.eye(3) - np.outer(c, c)))
    return float(np.linalg.eigvalsh(moment)[-1])


def _bound(body: Body, why: str, mass_bound: float, moment_bound: float) -> Bound:
    inertia = body.inertia
    mass = mass_bound - inertia.mass if inertia.mass < MJ_MINVAL else 0.0
    moment = moment_bound if _principal(inertia)[0] < MJ_MINVAL else 0.0
    bounded = dataclasses.replace(
        inertia, mass=inertia.mass + mass,
        moment=np.asarray(inertia.moment, dtype=float) + moment * np.eye(3))
    added = [f"{v:.3g} {unit}" for v, unit in ((mass, "kg"), (moment, "kg m^2 about each axis"))
             if v]
    message = (f"body {body.name!r} moves with {what_it_lacks(body)}, and its joints cannot be"
               f" folded into another body ({why}): MuJoCo moves no such body, so it is given"
               f" {' and '.join(added)} (the dynamics differ by that much)")
    return Bound(bounded, mass, moment, message)


def _principal(inertia: Inertia) -> Array:
    out: Array = np.linalg.eigvalsh(np.asarray(inertia.moment, dtype=float))
    return out
