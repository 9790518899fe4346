"""The joint-type table: everything the package knows about each SKEL joint type.

One frozen :class:`JointTypeSpec` per :class:`JointType`, in :data:`JOINT_TYPES`. The
SKEL reader and writer, the Phobos and CASPR importers, the forward kinematics, the
URDF export (and with it the TF of intermediate links) and the DART world builder all
read their per-type facts here; none of them keeps a list of joint types of its own.

The table is engine-free: ``dart_class`` is DART's class *name* (``"RevoluteJoint"``),
which the simulation side resolves in dartpy (``skel_ros.sim.world_builder``).

A joint's motion (its local transform as a function of its DOF positions q) is its
*chain* (:meth:`JointTypeSpec.chain`): single-DOF rotations about or translations
along fixed axes, parent side first, with DART's conventions:

* weld: none; revolute: rotation about the axis by q; prismatic: translation axis * q;
* screw: rotation about the axis by q, then translation along it by pitch * q / 2pi;
* universal: rotation about axis 1 by q0, then about axis 2 by q1;
* euler xyz: rotations about x, y, z by q0, q1, q2; euler zyx: about z, y, x;
* translational: translations along x, y, z; translational2d: along a1, then a2;
* planar: translations along a1 and a2, then rotation about a1 x a2 by q2;
* ball: DART's ``exp(q)`` (q a rotation vector), as rotations about x, y, z by the
  XYZ Euler angles of ``exp(q)`` (:func:`~skel_ros.model.transforms.matrix_to_euler_xyz`,
  which rebuild the rotation to rounding everywhere);
* free: ``[exp(q[0:3]) | q[3:6]]``: translations along x, y, z by q3, q4, q5, then
  the rotations of a ball joint.

The forward kinematics multiplies the chain (:mod:`skel_ros.model.kinematics`), and
the URDF export writes it, one URDF joint per motion (:mod:`skel_ros.model.urdf`), so
both, and the TF of the URDF's intermediate links, follow the same table.

Adding a joint type: a member of :class:`JointType`, its chain function and its entry
in :data:`JOINT_TYPES` (docs/architecture.md lists the rest).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import numpy.typing as npt


__all__ = [
    "JOINT_TYPES",
    "PLANE_AXES",
    "PLANE_NORMALS",
    "ChainMotion",
    "EulerOrder",
    "JointGeometry",
    "JointType",
    "JointTypeSpec",
    "PlaneType",
    "planar_rotation_axis",
    "plane_from_normal",
]

Vec3 = tuple[float, float, float]
_X: Vec3 = (1.0, 0.0, 0.0)
_Y: Vec3 = (0.0, 1.0, 0.0)
_Z: Vec3 = (0.0, 0.0, 1.0)
_XYZ = (_X, _Y, _Z)


class JointType(enum.Enum):
    """SKEL joint types (the ``type`` attribute); the facts of each are in :attr:`spec`."""

    WELD = "weld"
    REVOLUTE = "revolute"
    PRISMATIC = "prismatic"
    SCREW = "screw"
    UNIVERSAL = "universal"
    BALL = "ball"
    EULER = "euler"
    TRANSLATIONAL = "translational"
    TRANSLATIONAL2D = "translational2d"
    PLANAR = "planar"
    FREE = "free"

    @property
    def spec(self) -> JointTypeSpec:
        """This type's entry of :data:`JOINT_TYPES`."""
        return JOINT_TYPES[self]

    @property
    def num_dofs(self) -> int:
        """Number of degrees of freedom."""
        return JOINT_TYPES[self].num_dofs

    @property
    def dart_class(self) -> str:
        """DART's class name, e.g. ``RevoluteJoint``."""
        return JOINT_TYPES[self].dart_class

    @property
    def dart_builds(self) -> bool:
        """False for the types DART 6.x reads but cannot build (screw, translational2d)."""
        return JOINT_TYPES[self].dart_builds


class JointGeometry(Protocol):
    """What the table's functions read of a joint (:class:`skel_ros.model.types.Joint` has it).

    A protocol rather than the model's class: the table sits below the model's types,
    which read it, so it names no class of theirs.
    """

    @property
    def axes(self) -> tuple[npt.NDArray[np.float64], ...]:
        """Unit axes, as many as the type has."""
        ...

    @property
    def pitch(self) -> float:
        """Screw pitch."""
        ...

    @property
    def euler_order(self) -> EulerOrder | None:
        """Axis order of an euler joint (None for other types)."""
        ...

    @property
    def plane(self) -> PlaneType | None:
        """Plane of a planar / translational2d joint (None for other types)."""
        ...

    @property
    def plane_axes(self) -> tuple[npt.NDArray[np.float64], ...]:
        """The two in-plane translation axes."""
        ...


class EulerOrder(enum.Enum):
    """Axis order of an euler joint: ``XYZ`` is R = Rx(q0) Ry(q1) Rz(q2)."""

    XYZ = "xyz"
    ZYX = "zyx"


class PlaneType(enum.Enum):
    """Plane of a planar or translational2d joint."""

    XY = "xy"
    YZ = "yz"
    ZX = "zx"
    ARBITRARY = "arbitrary"


# The two in-plane translation axes of each named plane, its normal (a planar joint's
# rotation axis), and the DOF name suffixes DART gives the translations.
PLANE_AXES: dict[PlaneType, tuple[Vec3, Vec3]] = {
    PlaneType.XY: (_X, _Y),
    PlaneType.YZ: (_Y, _Z),
    PlaneType.ZX: (_Z, _X),
}
PLANE_NORMALS: dict[PlaneType, Vec3] = {PlaneType.XY: _Z, PlaneType.YZ: _X, PlaneType.ZX: _Y}
_PLANE_SUFFIXES: dict[PlaneType, tuple[str, str]] = {
    PlaneType.XY: ("_x", "_y"),
    PlaneType.YZ: ("_y", "_z"),
    PlaneType.ZX: ("_z", "_x"),
    PlaneType.ARBITRARY: ("_1", "_2"),
}
_EULER_AXES: dict[EulerOrder, tuple[Vec3, Vec3, Vec3]] = {
    EulerOrder.XYZ: (_X, _Y, _Z),
    EulerOrder.ZYX: (_Z, _Y, _X),
}
_EULER_SUFFIXES: dict[EulerOrder, tuple[str, str, str]] = {
    EulerOrder.XYZ: ("_x", "_y", "_z"),
    EulerOrder.ZYX: ("_z", "_y", "_x"),
}


@dataclass(frozen=True)
class ChainMotion:
    """One single-DOF motion of a joint's chain (one URDF joint of the export).

    Attributes:
        kind: ``"revolute"`` (rotation about ``axis``) or ``"prismatic"`` (translation
            along ``axis``).
        axis: The axis, in the frame of the motion before it (the joint frame for the
            first).
        dof: Index of the DOF in the joint whose position drives it.
        euler: Its position is the ``dof``-th XYZ Euler angle of a ball / free joint's
            rotation ``exp(q[0:3])``, not a DOF position.
        screw_pitch: The translation half of a screw: its position is
            ``pitch / 2pi`` times the rotation's (None otherwise).
    """

    kind: str
    axis: Vec3
    dof: int
    euler: bool = False
    screw_pitch: float | None = None


def _axis(v: npt.ArrayLike) -> Vec3:
    a = np.asarray(v, dtype=float)
    return (float(a[0]), float(a[1]), float(a[2]))


def planar_rotation_axis(joint: JointGeometry) -> npt.NDArray[np.float64]:
    """Rotation axis of a planar joint: z for xy, x for yz, y for zx, a1 x a2 otherwise."""
    fixed = PLANE_NORMALS.get(joint.plane) if joint.plane is not None else None
    if fixed is not None:
        return np.array(fixed)
    a1, a2 = (np.asarray(a) for a in joint.plane_axes)
    n = np.cross(a1, a2)
    axis: npt.NDArray[np.float64] = n / np.linalg.norm(n)
    return axis


def plane_from_normal(normal: npt.ArrayLike) -> tuple[PlaneType, list[list[float]]]:
    """The plane of a planar joint given as its rotation axis (URDF's and Phobos's ``axis``).

    The inverse of :func:`planar_rotation_axis`: a normal along x, y or z is the named
    plane with DART's translation axes; any other is an ``ARBITRARY`` plane whose two
    orthonormal translation axes ``a1``, ``a2`` have ``a1 x a2`` along the normal.

    Args:
        normal: The plane's normal (any length but zero).

    Returns:
        The plane type and its two translation axes.
    """
    v = np.asarray(normal, dtype=float)
    v = v / np.linalg.norm(v)
    for ptype, named in PLANE_NORMALS.items():
        if np.allclose(v, named, atol=1e-12):
            return ptype, [list(a) for a in PLANE_AXES[ptype]]
    # Any vector far from the normal gives an in-plane axis; x unless the normal is near x.
    helper = np.array([1.0, 0.0, 0.0]) if abs(v[0]) < 0.9 else np.array([0.0, 1.0, 0.0])  # noqa: PLR2004
    a1 = np.cross(helper, v)
    a1 /= np.linalg.norm(a1)
    a2 = np.cross(v, a1)
    return PlaneType.ARBITRARY, [a1.tolist(), a2.tolist()]


# --------------------------------------------------------------------------- chains
# One function per joint type: the joint's single-DOF motions, parent side first.


def _no_motion(_joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return ()


def _rotation(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return (ChainMotion("revolute", _axis(joint.axes[0]), 0),)


def _translation(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return (ChainMotion("prismatic", _axis(joint.axes[0]), 0),)


def _screw(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    axis = _axis(joint.axes[0])
    return (ChainMotion("revolute", axis, 0),
            ChainMotion("prismatic", axis, 0, screw_pitch=joint.pitch))


def _universal(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return tuple(ChainMotion("revolute", _axis(a), i) for i, a in enumerate(joint.axes[:2]))


def _euler(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    axes = _EULER_AXES[joint.euler_order or EulerOrder.XYZ]
    return tuple(ChainMotion("revolute", a, i) for i, a in enumerate(axes))


def _translational(_joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return tuple(ChainMotion("prismatic", a, i) for i, a in enumerate(_XYZ))


def _in_plane(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return tuple(ChainMotion("prismatic", _axis(a), i) for i, a in enumerate(joint.plane_axes[:2]))


def _planar(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    return (*_in_plane(joint),
            ChainMotion("revolute", _axis(planar_rotation_axis(joint)), 2))


def _ball(_joint: JointGeometry) -> tuple[ChainMotion, ...]:
    # DART's exp(q) (q a rotation vector), as rotations about x, y, z by the XYZ Euler
    # angles of exp(q).
    return tuple(ChainMotion("revolute", a, i, euler=True) for i, a in enumerate(_XYZ))


def _free(joint: JointGeometry) -> tuple[ChainMotion, ...]:
    # M = [exp(q[0:3]) | q[3:6]] = translate by q[3:6], then rotate: translations first.
    return (*(ChainMotion("prismatic", a, 3 + i) for i, a in enumerate(_XYZ)), *_ball(joint))


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class JointTypeSpec:
    """What one joint type is, for every reader, writer and backend.

    Attributes:
        type: The joint type.
        num_dofs: Number of degrees of freedom.
        chain_of: The joint's motion as a chain (see :meth:`chain`).
        axes: How many axes the joint has (``Joint.axes``): the ``<xyz>`` of
            ``<axis>`` (and ``<axis2>``) in SKEL.
        default_axes: The axes when the file gives none (DART's defaults).
        normalises_axes: DART normalises the axes (``setAxis``); a universal joint's are
            taken as written, so a reader refuses a non-unit one.
        axis_elements: How many ``<axis>``, ``<axis2>``, ``<axis3>`` elements SKEL
            reads (for their limits and dynamics, also without an ``<xyz>``).
        ignores_axis_elements: DART ignores ``<axis*>`` of this type (ball, free): a
            warning says to use ``<dof>``.
        pitch: The type has a screw pitch (``Joint.pitch``, in ``<axis><pitch>``).
        default_pitch: The pitch when the file gives none (0 without a pitch).
        euler_order: The type has an axis order (``Joint.euler_order``, ``<axis_order>``).
        plane: The type has a plane (``Joint.plane`` and ``plane_axes``, ``<plane>``).
        dof_suffixes: DART's DOF names are the joint name plus these ("" for the
            joint name itself); empty for the types whose names follow their euler
            order or plane (:meth:`dof_name_suffixes`).
        rotation_vector: The first three DOFs are a rotation vector (exponential
            coordinates: ball, free); its chain's rotations take their XYZ Euler angles.
        dart_class: DART's joint class name, e.g. ``"RevoluteJoint"`` (dartpy's
            ``create<dart_class>AndBodyNodePair``).
        dart_builds: DART 6.20's SkelParser builds this type (it reads screw and
            translational2d joints but cannot build them).
        urdf_names: The URDF joint types (Phobos uses the same) that mean this type,
            the one written first (a ``revolute`` without finite position limits is
            written ``continuous``); empty: URDF has none.
    """

    type: JointType
    num_dofs: int
    chain_of: Callable[[JointGeometry], tuple[ChainMotion, ...]] = field(repr=False)
    dart_class: str
    axes: int = 0
    default_axes: tuple[Vec3, ...] = ()
    normalises_axes: bool = True
    axis_elements: int = 0
    ignores_axis_elements: bool = False
    pitch: bool = False
    default_pitch: float = 0.0
    euler_order: bool = False
    plane: bool = False
    dof_suffixes: tuple[str, ...] = ()
    rotation_vector: bool = False
    dart_builds: bool = True
    urdf_names: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The SKEL ``type`` text."""
        return self.type.value

    def chain(self, joint: JointGeometry) -> tuple[ChainMotion, ...]:
        """The single-DOF motions of ``joint`` (of this type), parent side first.

        The joint's local transform at DOF positions q is the product of the motions,
        each at its position: the DOF position, an XYZ Euler angle of the rotation
        vector (``euler``), or pitch / 2pi times the rotation (a screw's translation).
        """
        return self.chain_of(joint)

    def dof_name_suffixes(
        self, euler_order: EulerOrder | None = None, plane: PlaneType | None = None
    ) -> tuple[str | None, ...]:
        """DART's DOF name suffixes, one per DOF (None: DART names that DOF ``default``).

        Args:
            euler_order: The joint's axis order (euler joints).
            plane: The joint's plane (planar, translational2d).
        """
        if self.euler_order:
            return _EULER_SUFFIXES[euler_order or EulerOrder.XYZ]
        if self.plane:
            translations = _PLANE_SUFFIXES[plane or PlaneType.XY]
            # The planar rotation DOF is called "default" by DART.
            return (*translations, *(None,) * (self.num_dofs - len(translations)))
        return self.dof_suffixes


def _specs(*specs: JointTypeSpec) -> Mapping[JointType, JointTypeSpec]:
    return MappingProxyType({s.type: s for s in specs})


#: Every joint type's spec, in the order of :class:`JointType`.
JOINT_TYPES: Mapping[JointType, JointTypeSpec] = _specs(
    JointTypeSpec(JointType.WELD, 0, _no_motion, "WeldJoint", urdf_names=("fixed",)),
    JointTypeSpec(JointType.REVOLUTE, 1, _rotation, "RevoluteJoint", axes=1,
                  default_axes=(_Z,), axis_elements=1, dof_suffixes=("",),
                  urdf_names=("revolute", "continuous")),
    JointTypeSpec(JointType.PRISMATIC, 1, _translation, "PrismaticJoint", axes=1,
                  default_axes=(_Z,), axis_elements=1, dof_suffixes=("",),
                  urdf_names=("prismatic",)),
    JointTypeSpec(JointType.SCREW, 1, _screw, "ScrewJoint", axes=1, default_axes=(_Z,),
                  axis_elements=1, pitch=True, default_pitch=0.1, dof_suffixes=("",),
                  dart_builds=False),
    JointTypeSpec(JointType.UNIVERSAL, 2, _universal, "UniversalJoint", axes=2,
                  default_axes=(_X, _Y), normalises_axes=False, axis_elements=2,
                  dof_suffixes=("_1", "_2")),
    JointTypeSpec(JointType.BALL, 3, _ball, "BallJoint", ignores_axis_elements=True,
                  dof_suffixes=("_x", "_y", "_z"), rotation_vector=True),
    JointTypeSpec(JointType.EULER, 3, _euler, "EulerJoint", axis_elements=3, euler_order=True),
    JointTypeSpec(JointType.TRANSLATIONAL, 3, _translational, "TranslationalJoint",
                  axis_elements=3, dof_suffixes=("_x", "_y", "_z")),
    JointTypeSpec(JointType.TRANSLATIONAL2D, 2, _in_plane, "TranslationalJoint2D",
                  axis_elements=2, plane=True, dart_builds=False),
    JointTypeSpec(JointType.PLANAR, 3, _planar, "PlanarJoint", axis_elements=3, plane=True,
                  urdf_names=("planar",)),
    JointTypeSpec(JointType.FREE, 6, _free, "FreeJoint", ignores_axis_elements=True,
                  dof_suffixes=("_rot_x", "_rot_y", "_rot_z", "_pos_x", "_pos_y", "_pos_z"),
                  rotation_vector=True, urdf_names=("floating",)),
)

