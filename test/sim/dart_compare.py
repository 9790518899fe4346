"""Compare two dartpy Worlds part by part (ours from the model, DART's from SkelParser).

``describe_world`` flattens everything the simulation depends on into
``{path: value}``; ``diff_worlds`` returns the paths whose values differ, split into
*discrete* differences (names, types, flags, counts: never allowed) and *numeric*
ones with their size, so a test can tell a bit-identical build from one whose
numbers differ in the last bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_Q_TEST = np.array([0.3, -0.2, 0.5])  # a configuration that tells euler axis orders apart


def _shape(s: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": s.getType(), "volume": s.getVolume()}
    for getter in ("getSize", "getRadius", "getHeight", "getDiameters", "getNormal",
                   "getOffset", "getScale", "getNumSpheres", "getMeshPath"):
        fn = getattr(s, getter, None)
        if fn is not None:
            out[getter] = fn()
    if s.getType() != "PlaneShape":  # a plane's box is infinite (and not always set)
        box = s.getBoundingBox()
        out["bbox"] = np.concatenate([box.getMin(), box.getMax()])
    return out


def _joint(j: Any) -> dict[str, Any]:
    parent = j.getParentBodyNode()
    out: dict[str, Any] = {
        "type": j.getType(),
        "parent": None if parent is None else parent.getName(),
        "child": j.getChildBodyNode().getName(),
        "actuator": str(j.getActuatorType()),
        "ndofs": j.getNumDofs(),
        "T_parent": j.getTransformFromParentBodyNode().matrix(),
        "T_child": j.getTransformFromChildBodyNode().matrix(),
        "limits_enforced": j.areLimitsEnforced(),
        "jacobian": j.getRelativeJacobian(),
    }
    for getter in ("getAxis", "getAxis1", "getAxis2", "getPitch", "getTranslationalAxis1",
                   "getTranslationalAxis2", "getRotationalAxis"):
        fn = getattr(j, getter, None)
        if fn is not None:
            out[getter] = fn()
    if j.getType() == "EulerJoint":
        out["rotation(q)"] = j.convertToRotation(_Q_TEST)
    n = j.getNumDofs()
    for name in ("PositionLowerLimit", "PositionUpperLimit", "VelocityLowerLimit",
                 "VelocityUpperLimit", "AccelerationLowerLimit", "AccelerationUpperLimit",
                 "ForceLowerLimit", "ForceUpperLimit", "InitialPosition", "InitialVelocity",
                 "DampingCoefficient", "CoulombFriction", "SpringStiffness", "RestPosition"):
        out[name] = np.array([getattr(j, f"get{name}")(i) for i in range(n)])
    out["dof_names"] = tuple(j.getDofName(i) for i in range(n))
    out["dof_preserved"] = tuple(j.isDofNamePreserved(i) for i in range(n))
    if n:
        out["positions"] = j.getPositions()
        out["velocities"] = j.getVelocities()
    return out


def _body(b: Any) -> dict[str, Any]:
    inertia = b.getInertia()
    out: dict[str, Any] = {
        "mass": inertia.getMass(),
        "com": inertia.getLocalCOM(),
        "moment": inertia.getMoment(),
        "total_mass": b.getMass(),
        "gravity": b.getGravityMode(),
        "collidable": b.isCollidable(),
        "world_transform": b.getWorldTransform().matrix(),
        "markers": b.getNumMarkers(),
        "shape_nodes": b.getNumShapeNodes(),
    }
    for k, sn in enumerate(b.getShapeNodes()):
        p = f"shape[{k}]"
        out[f"{p}.name"] = sn.getName()
        out[f"{p}.transform"] = sn.getRelativeTransform().matrix()
        out[f"{p}.aspects"] = (sn.hasVisualAspect(), sn.hasCollisionAspect(),
                               sn.hasDynamicsAspect())
        if sn.hasVisualAspect():
            out[f"{p}.rgba"] = sn.getVisualAspect().getRGBA()
        if sn.hasCollisionAspect():
            out[f"{p}.collidable"] = sn.getCollisionAspect().isCollidable()
        if sn.hasDynamicsAspect():
            dyn = sn.getDynamicsAspect()
            out[f"{p}.friction"] = dyn.getFrictionCoeff()
            out[f"{p}.restitution"] = dyn.getRestitutionCoeff()
        for key, value in _shape(sn.getShape()).items():
            out[f"{p}.{key}"] = value
    return out


def describe_world(world: Any) -> dict[str, Any]:
    """Everything the simulation depends on, as ``{path: value}``."""
    cd = world.getConstraintSolver().getCollisionDetector()
    out: dict[str, Any] = {
        "time_step": world.getTimeStep(),
        "gravity": world.getGravity(),
        "detector": cd.getType(),
        "skeletons": world.getNumSkeletons(),
    }
    if cd.getType() == "fcl":
        out["detector.primitive"] = str(cd.getPrimitiveShapeType())
        out["detector.contact_points"] = str(cd.getContactPointComputationMethod())
    for i in range(world.getNumSkeletons()):
        sk = world.getSkeleton(i)
        p = f"skel[{i}]"
        out[f"{p}.name"] = sk.getName()
        out[f"{p}.mobile"] = sk.isMobile()
        out[f"{p}.soft_bodies"] = sk.getNumSoftBodyNodes()
        out[f"{p}.dofs"] = tuple(dof.getName() for dof in sk.getDofs())
        for k, j in enumerate(sk.getJoints()):
            for key, value in _joint(j).items():
                out[f"{p}.joint[{k}:{j.getName()}].{key}"] = value
        for k, b in enumerate(sk.getBodyNodes()):
            for key, value in _body(b).items():
                out[f"{p}.body[{k}:{b.getName()}].{key}"] = value
    return out


@dataclass
class WorldDiff:
    """The differences between two described worlds."""

    discrete: list[str] = field(default_factory=list)
    numeric: dict[str, float] = field(default_factory=dict)

    @property
    def max_numeric(self) -> float:
        return max(self.numeric.values(), default=0.0)


def _is_number(v: Any) -> bool:
    return isinstance(v, (float, np.ndarray, np.floating)) and not isinstance(v, bool)


def _numeric_diff(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return math.inf
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if same.all():
        return 0.0
    with np.errstate(invalid="ignore"):
        return float(np.max(np.where(same, 0.0, np.abs(a - b) / np.maximum(1.0, np.abs(b)))))


def diff_worlds(ours: Any, dart: Any) -> WorldDiff:
    """Differences of ``ours`` from ``dart`` (numeric ones: relative size, 1 for small values)."""
    a, b = describe_world(ours), describe_world(dart)
    out = WorldDiff()
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            out.discrete.append(f"{key}: only in {'ours' if key in a else 'DART'}")
            continue
        va, vb = a[key], b[key]
        if _is_number(va) or _is_number(vb):
            d = _numeric_diff(va, vb)
            if d:
                out.numeric[key] = d
        elif va != vb:
            out.discrete.append(f"{key}: ours {va!r}, DART {vb!r}")
    return out


def trajectory_gap(engine: Any, ref: Any, steps: int) -> float:
    """Largest gap in positions and velocities over ``steps`` zero-command steps.

    ``engine`` is our ``SimEngine`` (stepped as the node and ``skel-ros simulate``
    step it), ``ref`` a dartpy World built by SkelParser from the same text; both
    are stepped side by side and compared after every step (absolute difference,
    every DOF of every skeleton, in world order; NaN in one only counts as inf).
    """
    skels = [ref.getSkeleton(i) for i in range(ref.getNumSkeletons())]
    worst = 0.0
    for _ in range(steps):
        engine.step()
        ref.step()
        for ours, theirs in ((engine.positions(), [s.getPositions() for s in skels]),
                             (engine.velocities(), [s.getVelocities() for s in skels])):
            a = np.asarray(ours, dtype=float)
            b = np.concatenate([np.zeros(0), *theirs])
            if a.shape != b.shape:
                return math.inf
            if a.size:
                both_nan = np.isnan(a) & np.isnan(b)
                gap = np.where(both_nan, 0.0, np.abs(a - b))
                worst = max(worst, float(np.max(np.where(np.isnan(gap), math.inf, gap))))
    return worst



def align_last_bits(ours: Any, ref: Any) -> None:
    """Give ``ref`` our joint frames, inertias and shape poses where they differ.

    Call it after ``diff_worlds`` has found them equal within its tolerance: the
    two builds then differ only in the last bits of those numbers (rest
    transforms and shape-derived inertias are computed in another order than
    Eigen's), and from here on every other property is compared by demanding
    bit-identical steps. Without this, last-bit differences are amplified without
    bound by chaotic motion and jump through DART's LCP (servo motors, Coulomb
    friction, contacts): DART's own World jumps by 1e-3 in one step when one entry
    of one joint frame moves by one ulp.
    """
    from dartpy import dynamics
    from dartpy import math as dmath

    for i in range(ours.getNumSkeletons()):
        a, b = ours.getSkeleton(i), ref.getSkeleton(i)
        for ja, jb in zip(a.getJoints(), b.getJoints(), strict=True):
            for get, put in (("getTransformFromParentBodyNode", "setTransformFromParentBodyNode"),
                             ("getTransformFromChildBodyNode", "setTransformFromChildBodyNode")):
                t = getattr(ja, get)().matrix()
                if not np.array_equal(t, getattr(jb, get)().matrix()):
                    getattr(jb, put)(dmath.Isometry3(t))
        for ba, bb in zip(a.getBodyNodes(), b.getBodyNodes(), strict=True):
            ia, ib = ba.getInertia(), bb.getInertia()
            if not (ia.getMass() == ib.getMass()
                    and np.array_equal(ia.getLocalCOM(), ib.getLocalCOM())
                    and np.array_equal(ia.getMoment(), ib.getMoment())):
                # setInertia ignores a value DART finds approximately equal: go by
                # another one first.
                bb.setInertia(dynamics.Inertia(ia.getMass() + 1.0, ia.getLocalCOM(), np.eye(3)))
                bb.setInertia(dynamics.Inertia(ia.getMass(), ia.getLocalCOM(), ia.getMoment()))
            for sa, sb in zip(ba.getShapeNodes(), bb.getShapeNodes(), strict=True):
                t = sa.getRelativeTransform().matrix()
                if not np.array_equal(t, sb.getRelativeTransform().matrix()):
                    sb.setRelativeTransform(dmath.Isometry3(t))
