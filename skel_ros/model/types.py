"""The immutable, typed robot model built from a SKEL file.

Plain frozen dataclasses and Enums; vectors and matrices are read-only numpy
arrays (``float64``). Transforms are 4x4 homogeneous matrices. Names, order and
values are those DART 6.20's ``SkelParser`` builds (docs/model.md), so the
simulation node and the hardware node run exactly the joint model DART would.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

# The joint types and their parameters' enums live with the joint-type table; they
# are part of this module's API too (a Joint's type, euler_order and plane).
from skel_ros.model.joint_types import EulerOrder, JointType, PlaneType

if TYPE_CHECKING:
    from pathlib import Path

    from skel_ros.model.errors import Location, SkelWarning
    from skel_ros.model.joint_types import JointTypeSpec

__all__ = [
    "IDENTITY4",
    "ActuatorType",
    "Array",
    "Body",
    "Box",
    "Capsule",
    "CollisionDetector",
    "Cone",
    "Cylinder",
    "Dof",
    "Ellipsoid",
    "EulerOrder",
    "FollowerDrive",
    "Geometry",
    "Inertia",
    "Joint",
    "JointType",
    "Marker",
    "Mesh",
    "Mimic",
    "MultiSphere",
    "Plane",
    "PlaneType",
    "Pyramid",
    "Shape",
    "ShapeRole",
    "Skeleton",
    "SoftShape",
    "Sphere",
    "World",
    "frozen_array",
]

Array = npt.NDArray[np.float64]


def frozen_array(values: object, shape: tuple[int, ...] | None = None) -> Array:
    """Return a read-only float64 copy of ``values`` (optionally reshaped)."""
    arr = np.array(values, dtype=np.float64)
    if shape is not None:
        arr.shape = shape  # a fresh array: reshaped in place
    arr.setflags(write=False)
    return arr


IDENTITY4 = frozen_array(np.eye(4))


class ActuatorType(enum.Enum):
    """Joint actuator types (the ``actuator`` attribute); DART's name is ``.name``."""

    FORCE = "force"
    PASSIVE = "passive"
    SERVO = "servo"
    ACCELERATION = "acceleration"
    VELOCITY = "velocity"
    LOCKED = "locked"


class CollisionDetector(enum.Enum):
    """The collision detector named in ``<physics><collision_detector>``.

    ``FCL`` and ``FCL_MESH`` are both DART's FCL detector (native primitives or
    primitives approximated by meshes); ``.dart_type`` is DART's detector type.
    """

    FCL = "fcl"
    FCL_MESH = "fcl_mesh"
    DART = "dart"
    BULLET = "bullet"
    ODE = "ode"

    @property
    def dart_type(self) -> str:
        """The type string DART's detector reports (``fcl`` for both FCL modes)."""
        return "fcl" if self is CollisionDetector.FCL_MESH else self.value


class ShapeRole(enum.Enum):
    """Whether a shape node is visual or collision geometry."""

    VISUAL = "visual"
    COLLISION = "collision"


# --------------------------------------------------------------------------- geometry


@dataclass(frozen=True, eq=False)
class Sphere:
    """A sphere. ``radius`` in metres."""

    radius: float

    kind = "sphere"


@dataclass(frozen=True, eq=False)
class Box:
    """A box of full edge lengths ``size`` (x, y, z)."""

    size: Array

    kind = "box"


@dataclass(frozen=True, eq=False)
class Ellipsoid:
    """An ellipsoid; SKEL gives ``size`` as the three *diameters*."""

    size: Array

    kind = "ellipsoid"

    @property
    def radii(self) -> Array:
        """Semi-axes (half of ``size``)."""
        return frozen_array(np.asarray(self.size) / 2.0)


@dataclass(frozen=True, eq=False)
class Cylinder:
    """A cylinder along z, centred on its origin."""

    radius: float
    height: float

    kind = "cylinder"


@dataclass(frozen=True, eq=False)
class Capsule:
    """A capsule along z: a cylinder of ``height`` with hemispherical caps."""

    radius: float
    height: float

    kind = "capsule"


@dataclass(frozen=True, eq=False)
class Cone:
    """A cone along z, base at -height/2, apex at +height/2 (DART's convention)."""

    radius: float
    height: float

    kind = "cone"


@dataclass(frozen=True, eq=False)
class Pyramid:
    """A pyramid along z with a rectangular base (DART's convention)."""

    base_width: float
    base_depth: float
    height: float

    kind = "pyramid"


@dataclass(frozen=True, eq=False)
class Plane:
    """An infinite plane ``normal . x = offset``."""

    normal: Array
    offset: float

    kind = "plane"


@dataclass(frozen=True, eq=False)
class MultiSphere:
    """Convex hull of spheres: ``spheres`` is a tuple of (radius, position)."""

    spheres: tuple[tuple[float, Array], ...]

    kind = "multi_sphere"


@dataclass(frozen=True, eq=False)
class Mesh:
    """A mesh file, scaled by ``scale``.

    Attributes:
        file_name: The text of ``<file_name>`` as written.
        path: The file resolved relative to the SKEL file (None when the model
            came from a string without a base directory).
        scale: Scale per axis.
        bounds: Axis-aligned bounding box (min, max) of the scaled mesh as DART
            loads it, or None when the file could not be read.
    """

    file_name: str
    path: Path | None
    scale: Array
    bounds: tuple[Array, Array] | None = None

    kind = "mesh"


Geometry = (Sphere | Box | Ellipsoid | Cylinder | Capsule | Cone | Pyramid | Plane | MultiSphere
            | Mesh)


@dataclass(frozen=True, eq=False)
class Shape:
    """A visual or collision shape attached to a body.

    Attributes:
        name: DART's shape-node name, e.g. ``"link 1 - visual shape"``.
        role: Visual or collision.
        geometry: The geometry.
        transform: Pose of the shape in the body frame (4x4).
        color: RGBA for visual shapes that give one, else None.
        collidable: For collision shapes (always True for visual ones).
        location: Where the shape element is.
    """

    name: str
    role: ShapeRole
    geometry: Geometry
    transform: Array
    color: Array | None
    collidable: bool
    location: Location


@dataclass(frozen=True, eq=False)
class Marker:
    """A named point on a body (translation only)."""

    name: str
    offset: Array


@dataclass(frozen=True, eq=False)
class SoftShape:
    """Soft-body (deformable) data of a body with ``<soft_shape>``.

    Attributes:
        kind: ``sphere``, ``box``, ``ellipsoid`` or ``cylinder``.
        total_mass: Mass of the soft point masses.
        transform: ``<transformation>`` of the soft shape (used by the box kind).
        size: Box edge lengths / ellipsoid diameters (zeros otherwise).
        radius: Sphere / cylinder radius (0 otherwise).
        height: Cylinder height (0 otherwise).
        frags: Box subdivisions per axis (zeros otherwise).
        num_slices: Sphere / ellipsoid / cylinder slices (0 otherwise).
        num_stacks: Sphere / ellipsoid / cylinder stacks (0 otherwise).
        num_rings: Cylinder rings (0 otherwise).
        kv: Vertex spring stiffness, None when not given (DART default).
        ke: Edge spring stiffness, None when not given.
        damp: Damping coefficient, None when not given.
    """

    kind: str
    total_mass: float
    transform: Array
    size: Array
    radius: float
    height: float
    frags: tuple[int, int, int]
    num_slices: int
    num_stacks: int
    num_rings: int
    kv: float | None
    ke: float | None
    damp: float | None


@dataclass(frozen=True, eq=False)
class Inertia:
    """Mass properties of a body.

    Attributes:
        mass: Mass in kg.
        com: Centre of mass in the body frame.
        moment: 3x3 moment of inertia about the COM, in body axes.
        moment_from_shapes: True when the moment was computed from the shapes
            (``<inertia>`` with a mass but no ``<moment_of_inertia>``).
    """

    mass: float
    com: Array
    moment: Array
    moment_from_shapes: bool = False


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid (or soft) body, in DART's order.

    Attributes:
        name: Body name.
        index: Index in the skeleton (DART's body-node index).
        parent_joint: Name of the joint whose child this body is.
        inertia: Mass properties.
        gravity_mode: Whether gravity acts on it.
        rest_transform: World pose written in the file (skeleton frame times body
            transformation), before initial joint positions are applied.
        shapes: Visual shapes first, then collision shapes, each in file order.
        markers: Markers.
        soft: Soft-body data, or None for a rigid body.
        location: Where the body element is (None for nothing).
    """

    name: str
    index: int
    parent_joint: str
    inertia: Inertia
    gravity_mode: bool
    rest_transform: Array
    shapes: tuple[Shape, ...]
    markers: tuple[Marker, ...]
    soft: SoftShape | None
    location: Location

    @property
    def is_soft(self) -> bool:
        """True for a soft body."""
        return self.soft is not None


class FollowerDrive(enum.Enum):
    """What moves a follower (a mimic joint's DOF) on the robot.

    The model's readers say ``COUPLED`` (URDF and SKEL cannot say more); a hardware
    description may say that the follower has its own actuator.
    """

    COUPLED = "coupled"
    """No actuator of its own: a gear, a linkage or the engine's constraint moves it."""
    FROM_LEADER = "from_leader"
    """Its own actuator, commanded ``multiplier * leader command + offset``."""


@dataclass(frozen=True)
class Mimic:
    """A follower DOF's coupling to its leader: ``follower = multiplier * leader + offset``.

    The one statement of that rule is :func:`skel_ros.model.mimic.with_followers`
    (positions) and :func:`~skel_ros.model.mimic.follower_velocities`.

    Attributes:
        leader: The leader DOF's name (a DOF that is no follower itself).
        multiplier: Follower motion per unit of leader motion (may be negative).
        offset: Follower position when the leader is at 0.
        drive: What moves the follower on the robot.
    """

    leader: str
    multiplier: float = 1.0
    offset: float = 0.0
    drive: FollowerDrive = FollowerDrive.COUPLED


@dataclass(frozen=True, eq=False)
class Dof:
    """One degree of freedom, in DART's order.

    Limits default to +-inf, everything else to 0 (DART's defaults). ``mimic`` is
    set on a follower (a mimic joint's DOF): its position is its leader's, scaled and
    offset (docs/model.md, "Mimic joints").
    """

    name: str
    index: int
    joint: str
    index_in_joint: int
    position_lower: float = -math.inf
    position_upper: float = math.inf
    velocity_lower: float = -math.inf
    velocity_upper: float = math.inf
    acceleration_lower: float = -math.inf
    acceleration_upper: float = math.inf
    force_lower: float = -math.inf
    force_upper: float = math.inf
    initial_position: float = 0.0
    initial_velocity: float = 0.0
    damping: float = 0.0
    coulomb_friction: float = 0.0
    spring_stiffness: float = 0.0
    rest_position: float = 0.0
    name_preserved: bool = False
    mimic: Mimic | None = None


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint, in DART's order.

    Attributes:
        name: Joint name (made unique per skeleton as DART does: ``J(1)``).
        type: Joint type.
        index: Index in the skeleton.
        parent: Parent body name, None for the world.
        child: Child body name.
        actuator: Actuator type.
        T_parent_to_joint: Joint frame in the parent body frame (4x4).
        T_child_to_joint: Joint frame in the child body frame (4x4).
        axes: Unit axes, as many as the type has (``type.spec.axes``).
        pitch: Screw pitch (translation per turn); 0 for a type without one.
        euler_order: Axis order of a type that has one (euler), else None.
        plane: Plane of a type that has one (planar, translational2d), else None.
        plane_axes: The two in-plane translation axes of a type with a plane.
        dofs: Names of its DOFs, in order.
        first_dof: Index of its first DOF in the skeleton.
        implicit: True for a joint DART adds itself (the ``root`` free joint of a
            body that is parent of a joint but child of none).
        location: Where the joint element is.
    """

    name: str
    type: JointType
    index: int
    parent: str | None
    child: str
    actuator: ActuatorType
    T_parent_to_joint: Array
    T_child_to_joint: Array
    axes: tuple[Array, ...]
    pitch: float
    euler_order: EulerOrder | None
    plane: PlaneType | None
    plane_axes: tuple[Array, ...]
    dofs: tuple[str, ...]
    first_dof: int
    implicit: bool
    location: Location

    @property
    def num_dofs(self) -> int:
        """Number of degrees of freedom."""
        return self.type.num_dofs

    @property
    def spec(self) -> JointTypeSpec:
        """The facts of its type (:mod:`skel_ros.model.joint_types`)."""
        return self.type.spec


@dataclass(frozen=True, eq=False)
class Skeleton:
    """One skeleton (robot or object) of the world.

    Attributes:
        name: Name (made unique by the world as DART does: ``name(1)``).
        mobile: ``<mobile>`` flag.
        frame: Skeleton frame S (4x4).
        joints: Joints in DART's order.
        bodies: Bodies in DART's order (``bodies[i]`` is the child of ``joints[i]``).
        dofs: DOFs in DART's order.
        location: Where the skeleton element is.
    """

    name: str
    mobile: bool
    frame: Array
    joints: tuple[Joint, ...]
    bodies: tuple[Body, ...]
    dofs: tuple[Dof, ...]
    location: Location
    _by_name: dict[str, dict[str, int]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        lookup = {
            "joint": {j.name: i for i, j in enumerate(self.joints)},
            "body": {b.name: i for i, b in enumerate(self.bodies)},
            "dof": {d.name: i for i, d in enumerate(self.dofs)},
        }
        object.__setattr__(self, "_by_name", lookup)

    @property
    def num_dofs(self) -> int:
        """Number of DOFs."""
        return len(self.dofs)

    def joint(self, name: str) -> Joint:
        """The joint called ``name`` (KeyError if none)."""
        return self.joints[self._by_name["joint"][name]]

    def body(self, name: str) -> Body:
        """The body called ``name`` (KeyError if none)."""
        return self.bodies[self._by_name["body"][name]]

    def dof(self, name: str) -> Dof:
        """The DOF called ``name`` (KeyError if none)."""
        return self.dofs[self._by_name["dof"][name]]

    def dof_index(self, name: str) -> int:
        """Index of the DOF called ``name`` (KeyError if none)."""
        return self._by_name["dof"][name]

    @property
    def initial_positions(self) -> Array:
        """Initial positions of all DOFs."""
        return frozen_array([d.initial_position for d in self.dofs])

    @property
    def initial_velocities(self) -> Array:
        """Initial velocities of all DOFs."""
        return frozen_array([d.initial_velocity for d in self.dofs])


@dataclass(frozen=True, eq=False)
class World:
    """A SKEL world: physics settings and skeletons.

    Attributes:
        time_step: Integration step in seconds.
        gravity: Gravity vector.
        collision_detector: The detector DART uses.
        skeletons: Skeletons in file order.
        source: File path or the name given to an XML string.
        warnings: Everything suspicious met while reading, with locations.
    """

    time_step: float
    gravity: Array
    collision_detector: CollisionDetector
    skeletons: tuple[Skeleton, ...]
    source: str
    warnings: tuple[SkelWarning, ...]

    def skeleton(self, name: str) -> Skeleton:
        """The skeleton called ``name`` (KeyError if none)."""
        for skel in self.skeletons:
            if skel.name == name:
                return skel
        raise KeyError(name)
