"""Build a dartpy World from our model, through DART's API.

:func:`build_dart_world` reproduces what DART 6.20's ``SkelParser`` builds from the
SKEL file the model came from, step by step as the parser does it:

1. a World with the model's time step, gravity and collision detector;
2. per skeleton, in model order: every joint with its child body, in DART's
   joint order, through ``create<X>JointAndBodyNodePair(parent, joint_props,
   body_props)`` with names, joint frames, axes, planes, actuator type, DOF names
   (and whether they are preserved), all limits, damping, Coulomb friction,
   springs, initial positions and velocities. The properties are final at
   creation, as in SkelParser: changing a joint afterwards can rename its DOFs
   (only translational2d, which SkelParser cannot build, gets its plane later).
   Then the body's name, gravity mode and inertia, and the joint's current
   positions and velocities;
3. then the shapes, body by body in file order: per body all visual shape nodes
   (visual aspect, colour), then all collision shape nodes (collision + dynamics
   aspects, collidable flag), each with its relative transform. A soft body's
   soft-mesh node comes first, as in DART;
4. the skeleton is reset to its initial positions and velocities and added to
   the World.

Joint-limit enforcement stays off, as SkelParser leaves it; the engine turns it
on. Where dartpy 6.20 has no API (meshes, pyramids, ZYX euler joints, planar planes,
soft bodies, markers) a DART factory fills the hole; see :mod:`skel_ros.sim.dart_gaps`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from skel_ros.model.types import (
    Box,
    Capsule,
    CollisionDetector,
    Cone,
    Cylinder,
    Ellipsoid,
    EulerOrder,
    Mesh,
    MultiSphere,
    Plane,
    PlaneType,
    Pyramid,
    ShapeRole,
    Sphere,
)
from skel_ros.sim.dart_gaps import DartFactories
from skel_ros.sim.errors import SimBuildError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from skel_ros.model.joint_types import JointTypeSpec
    from skel_ros.model.types import Body, Dof, Joint, Shape, Skeleton, World
    from skel_ros.sim._typing import Dart, Vector

__all__ = [
    "DartpyJoint",
    "build_dart_world",
    "build_skeleton",
    "dartpy_joint",
    "make_collision_detector",
]

DARTPY_MISSING = ("engine 'dart' needs dartpy: pip install 'skel_ros[sim]' (or pip install"
                  " 'dartpy>=6.20,<7'), or simulate with engine mujoco")


@dataclass(frozen=True)
class DartpyJoint:
    """How dartpy creates a joint type whose DART class is ``dart_class``.

    Attributes:
        properties: The dartpy properties class.
        bare: Created without properties and given them with ``setProperties`` at once.
        plane_in_properties: Its plane is set through the properties (else after creation).
    """

    properties: str
    bare: bool = False
    plane_in_properties: bool = True


# The joint-type table names each type's DART class (``spec.dart_class``); dartpy
# creates it with ``create<dart_class>AndBodyNodePair`` and ``<dart_class>Properties``,
# except where dartpy 6.20's bindings have gaps, listed here. ``WeldJoint::Properties``
# and ``TranslationalJoint::Properties`` are bound without any fields (or as an
# unregistered type), so those two joints are created bare and given their generic
# properties right away; ``TranslationalJoint2DProperties`` has no plane fields.
_DARTPY_GAPS = {
    "WeldJoint": DartpyJoint("JointProperties", bare=True),
    "TranslationalJoint": DartpyJoint("GenericJointProperties_R3", bare=True),
    "TranslationalJoint2D": DartpyJoint("TranslationalJoint2DProperties",
                                        plane_in_properties=False),
}


def dartpy_joint(spec: JointTypeSpec) -> DartpyJoint:
    """How dartpy creates joints of the type ``spec``."""
    gap = _DARTPY_GAPS.get(spec.dart_class)
    return gap if gap is not None else DartpyJoint(f"{spec.dart_class}Properties")


def build_dart_world(world: World) -> Dart:
    """Build the ``dartpy.simulation.World`` DART's SkelParser would build for ``world``.

    Args:
        world: The model (``load_skel``).

    Returns:
        The dartpy World: skeletons, DOFs and bodies in the model's order, at the
        initial state, time 0, joint limits not enforced.

    Raises:
        SimBuildError: A part cannot be built (e.g. a mesh file DART cannot load).
        SimUnsupportedError: A part neither dartpy nor a DART factory can build.
    """
    try:
        import dartpy
    except ImportError:
        raise SimBuildError(DARTPY_MISSING) from None

    factories = DartFactories()
    out = dartpy.simulation.World()
    out.setTimeStep(float(world.time_step))
    out.setGravity(np.asarray(world.gravity, dtype=float))
    out.setCollisionDetector(make_collision_detector(world.collision_detector))
    for skel in world.skeletons:
        out.addSkeleton(build_skeleton(skel, factories))
    for i, skel in enumerate(world.skeletons):
        name = out.getSkeleton(i).getName()
        if name != skel.name:
            raise SimBuildError(
                f"{skel.location}: DART named skeleton {skel.name!r} {name!r} in the world"
            )
    return out


def make_collision_detector(kind: CollisionDetector) -> Dart:
    """The collision detector SkelParser sets for ``<collision_detector>`` ``kind``."""
    from dartpy import collision

    if kind in (CollisionDetector.FCL, CollisionDetector.FCL_MESH):
        fcl = collision.FCLCollisionDetector()
        shape_type = (
            collision.FCLCollisionDetector.PrimitiveShape.MESH
            if kind is CollisionDetector.FCL_MESH
            else collision.FCLCollisionDetector.PrimitiveShape.PRIMITIVE
        )
        fcl.setPrimitiveShapeType(shape_type)
        fcl.setContactPointComputationMethod(
            collision.FCLCollisionDetector.ContactPointComputationMethod.DART
        )
        return fcl
    factory = {
        CollisionDetector.DART: "DARTCollisionDetector",
        CollisionDetector.BULLET: "BulletCollisionDetector",
        CollisionDetector.ODE: "OdeCollisionDetector",
    }[kind]
    return getattr(collision, factory)()


def build_skeleton(skel: Skeleton, factories: DartFactories | None = None) -> Dart:
    """Build one ``dartpy.dynamics.Skeleton`` (see the module docstring for the steps).

    Args:
        skel: The model skeleton.
        factories: Factories for the parts dartpy cannot create; a new one if None.

    Returns:
        The skeleton, at its initial positions and velocities.
    """
    from dartpy import dynamics

    factories = factories or DartFactories()
    out = dynamics.Skeleton(skel.name)
    out.setMobile(bool(skel.mobile))
    nodes: dict[str, Any] = {}
    for joint, body in zip(skel.joints, skel.bodies, strict=True):
        if body.parent_joint != joint.name or joint.child != body.name:
            raise SimBuildError(
                f"{joint.location}: model order broken: joint {joint.name!r} and body "
                f"{body.name!r} are not a joint/child pair"
            )
        parent = None if joint.parent is None else nodes[joint.parent]
        nodes[body.name] = _add_pair(out, parent, joint, body, skel, factories=factories)
    for body in sorted(skel.bodies, key=lambda b: (b.location.line, b.index)):
        node = nodes[body.name]
        for shape in body.shapes:
            shape_node = _add_shape_node(node, shape, factories)
            if body.inertia.moment_from_shapes and isinstance(shape.geometry, MultiSphere):
                # SkelParser asks every shape of such a body for its volume before
                # anything computes a multi-sphere's bounding box, and DART 6.20
                # keeps the 0 it finds then (the model's inertia already follows
                # that rule); the shape is left in the same state.
                shape_node.getShape().getVolume()
    out.resetPositions()
    out.resetVelocities()
    _check_dofs(out, skel)
    return out


# --------------------------------------------------------------------------- joints


def _add_pair(
    out: Dart, parent: Dart, joint: Joint, body: Body, skel: Skeleton, *, factories: DartFactories
) -> Dart:
    """Create ``joint`` and its child ``body`` in ``out``; return the body node."""
    from dartpy import dynamics

    dofs = skel.dofs[joint.first_dof : joint.first_dof + joint.num_dofs]
    spec = joint.type.spec
    if body.soft is not None or body.markers:
        # dartpy cannot make soft bodies or markers: take the body from a DART
        # template (whose joint has our joint's type, euler order and plane), move
        # it here and give it our joint's properties.
        node = factories.template_body(body, joint)
        if not node.moveTo(out, parent):
            raise SimBuildError(f"{body.location}: DART could not attach body {body.name!r}")
        dart_joint = node.getParentJoint()
        # An euler joint keeps the template's axis order (dartpy cannot set it).
        base = (getattr(dart_joint, f"get{spec.dart_class}Properties")()
                if spec.euler_order else None)
        dart_joint.setProperties(_joint_properties(joint, dofs, factories, base))
    else:
        # Every joint is created with its final properties: a property changed
        # afterwards can rename DOFs (a planar joint created in the XY plane names
        # them J_x, J_y, and DART's name manager then suffixes a clash).
        props = _joint_properties(joint, dofs, factories)
        create = getattr(out, f"create{spec.dart_class}AndBodyNodePair")
        if dartpy_joint(spec).bare:
            dart_joint, node = create(parent)
            dart_joint.setProperties(props)
        else:
            dart_joint, node = create(parent, props, dynamics.BodyNodeProperties())
    if spec.plane and not dartpy_joint(spec).plane_in_properties:
        _set_plane_after_creation(dart_joint, joint)
    node.setName(body.name)
    node.setGravityMode(bool(body.gravity_mode))
    node.setInertia(
        dynamics.Inertia(
            float(body.inertia.mass),
            np.asarray(body.inertia.com, dtype=float),
            np.asarray(body.inertia.moment, dtype=float),
        )
    )
    if joint.num_dofs:
        dart_joint.setPositions(np.array([d.initial_position for d in dofs]))
        dart_joint.setVelocities(np.array([d.initial_velocity for d in dofs]))
    for i, dof in enumerate(dofs):
        if (dart_joint.getDofName(i) != dof.name
                or dart_joint.isDofNamePreserved(i) != dof.name_preserved):
            dart_joint.setDofName(i, dof.name, bool(dof.name_preserved))
    return node


def _joint_properties(
    joint: Joint, dofs: Sequence[Dof], factories: DartFactories, base: Dart = None
) -> Dart:
    """The dartpy ``<X>JointProperties`` of ``joint`` (``base``: an object to fill instead)."""
    from dartpy import dynamics

    spec = joint.type.spec
    how = dartpy_joint(spec)
    if base is not None:
        props = base
    elif spec.euler_order and joint.euler_order is EulerOrder.ZYX:
        props = factories.euler_zyx_properties()
    elif spec.plane and how.plane_in_properties:
        props = factories.planar_properties(joint.plane or PlaneType.XY)
        if joint.plane is PlaneType.ARBITRARY:
            # The constructor normalises them and derives the rotation axis
            # (PlanarJoint::setArbitraryPlane), as for SkelParser's joint.
            props.mTransAxis1, props.mTransAxis2 = (
                np.asarray(a, dtype=float) for a in joint.plane_axes)
    else:
        props = getattr(dynamics, how.properties)()
    props.mName = joint.name
    props.mT_ParentBodyToJoint = np.asarray(joint.T_parent_to_joint, dtype=float)
    props.mT_ChildBodyToJoint = np.asarray(joint.T_child_to_joint, dtype=float)
    props.mActuatorType = getattr(dynamics.ActuatorType, joint.actuator.name)
    props.mIsPositionLimitEnforced = False
    if joint.num_dofs == 0:
        return props

    def column(attr: str) -> Vector:
        return np.array([float(getattr(d, attr)) for d in dofs])

    props.mDofNames = [d.name for d in dofs]
    props.mPreserveDofNames = [bool(d.name_preserved) for d in dofs]
    props.mPositionLowerLimits = column("position_lower")
    props.mPositionUpperLimits = column("position_upper")
    props.mInitialPositions = column("initial_position")
    props.mVelocityLowerLimits = column("velocity_lower")
    props.mVelocityUpperLimits = column("velocity_upper")
    props.mInitialVelocities = column("initial_velocity")
    props.mAccelerationLowerLimits = column("acceleration_lower")
    props.mAccelerationUpperLimits = column("acceleration_upper")
    props.mForceLowerLimits = column("force_lower")
    props.mForceUpperLimits = column("force_upper")
    props.mSpringStiffnesses = column("spring_stiffness")
    props.mRestPositions = column("rest_position")
    props.mDampingCoefficients = column("damping")
    props.mFrictions = column("coulomb_friction")
    if spec.axes == 1:
        props.mAxis = np.asarray(joint.axes[0], dtype=float)
    elif spec.axes:
        props.mAxis = [np.asarray(a, dtype=float) for a in joint.axes]
    if spec.pitch:
        props.mPitch = float(joint.pitch)
    return props


def _set_plane_after_creation(dart_joint: Dart, joint: Joint) -> None:
    """Set the plane of a translational2d joint after its creation.

    dartpy 6.20's ``TranslationalJoint2DProperties`` has no plane fields and no
    DART loader builds this joint (so there is no template to take them from).
    Its DOF names, given in the properties, are kept: unlike the planar joint,
    its constructor does not rename them, and ``renameDofs=False`` here.
    """
    plane = joint.plane or PlaneType.XY
    if plane is PlaneType.ARBITRARY:
        a1, a2 = (np.asarray(a, dtype=float) for a in joint.plane_axes)
        dart_joint.setArbitraryPlane(a1, a2, renameDofs=False)
    else:
        getattr(dart_joint, f"set{plane.name}Plane")(renameDofs=False)
    # DART 6.20's TranslationalJoint2D keeps the Jacobian of its old plane after
    # set*Plane (it is constant, so only a mandatory update recomputes it);
    # setting the child transform forces that update.
    dart_joint.setTransformFromChildBodyNode(dart_joint.getTransformFromChildBodyNode())


def _check_dofs(out: Dart, skel: Skeleton) -> None:
    if out.getNumDofs() != skel.num_dofs or out.getNumBodyNodes() != len(skel.bodies):
        raise SimBuildError(
            f"{skel.location}: DART built {out.getNumDofs()} DOFs / {out.getNumBodyNodes()} "
            f"bodies for skeleton {skel.name!r}, the model has {skel.num_dofs} / "
            f"{len(skel.bodies)}"
        )
    for i, dof in enumerate(skel.dofs):
        name = out.getDof(i).getName()
        if name != dof.name:
            raise SimBuildError(
                f"{skel.location}: DOF {i} of skeleton {skel.name!r} is {name!r} in DART, "
                f"{dof.name!r} in the model"
            )


# --------------------------------------------------------------------------- shapes


def _add_shape_node(node: Dart, shape: Shape, factories: DartFactories) -> Dart:
    """Create ``shape`` as a ShapeNode of ``node`` with the aspects SkelParser gives it."""
    dart_shape = _make_shape(shape, factories)
    shape_node = node.createShapeNode(dart_shape, shape.name)
    shape_node.setRelativeTransform(_isometry(shape.transform))
    if shape.role is ShapeRole.VISUAL:
        visual = shape_node.createVisualAspect()
        if shape.color is not None:
            color = np.asarray(shape.color, dtype=float)
            if color.size == 3:  # noqa: PLR2004 - RGB, else RGBA
                visual.setColor(color)
            else:
                visual.setRGBA(color)
    else:
        collision = shape_node.createCollisionAspect()
        shape_node.createDynamicsAspect()
        collision.setCollidable(bool(shape.collidable))
    return shape_node


def _isometry(t: npt.ArrayLike) -> Dart:
    from dartpy import math as dmath

    return dmath.Isometry3(np.asarray(t, dtype=float))


def _make_shape(shape: Shape, factories: DartFactories) -> Dart:  # noqa: PLR0911 - one per kind
    from dartpy import dynamics

    g = shape.geometry
    if isinstance(g, Sphere):
        return dynamics.SphereShape(float(g.radius))
    if isinstance(g, Box):
        return dynamics.BoxShape(np.asarray(g.size, dtype=float))
    if isinstance(g, Ellipsoid):
        # dartpy 6.20's EllipsoidShape takes the diameters, as SKEL's <size> gives.
        return dynamics.EllipsoidShape(np.asarray(g.size, dtype=float))
    if isinstance(g, (Cylinder, Capsule, Cone)):
        cls = {Cylinder: dynamics.CylinderShape, Capsule: dynamics.CapsuleShape,
               Cone: dynamics.ConeShape}[type(g)]
        return cls(float(g.radius), float(g.height))
    if isinstance(g, Plane):
        return dynamics.PlaneShape(np.asarray(g.normal, dtype=float), float(g.offset))
    if isinstance(g, MultiSphere):
        return dynamics.MultiSphereConvexHullShape(
            [(float(r), np.asarray(p, dtype=float)) for r, p in g.spheres]
        )
    if isinstance(g, Pyramid):
        return factories.pyramid_shape(g)
    if isinstance(g, Mesh):
        return _make_mesh(shape, g, factories)
    raise SimBuildError(f"{shape.location}: unknown geometry {type(g).__name__}")


def _make_mesh(shape: Shape, g: Mesh, factories: DartFactories) -> Dart:
    if g.path is None:
        raise SimBuildError(
            f"{shape.location}: mesh {g.file_name!r} has no resolved path (the model "
            "was read from a string without a base directory)"
        )
    try:
        return factories.mesh_shape(g.path, g.scale)
    except SimBuildError as exc:
        raise SimBuildError(f"{shape.location}: {exc}") from None
