"""The shared robot model: ROS-free and DART-free.

``load_skel`` reads a SKEL file into the immutable model DART 6.20 builds from
it; ``Kinematics`` gives body transforms for any joint positions; ``LimitSet``
and friends (``limits``) validate and clamp commands; ``world_to_urdf`` and
friends (``urdf``) export URDF for RViz. ``load_model`` reads SKEL, CASPR
bodies, Phobos dictionaries, URDF (xacro included, ``load_urdf``) and SMURF
(``load_smurf``), chosen by content; ``world_to_skel`` /
``world_to_phobos`` write SKEL and Phobos, ``world_to_mjcf`` MuJoCo's MJCF
(``docs/interchange.md``).

Example::

    from skel_ros.model import load_skel
    world = load_skel("robot.skel")
    for dof in world.skeletons[0].dofs:
        print(dof.name, dof.position_lower, dof.position_upper)
"""

from skel_ros.model.caspr_model import load_caspr_bodies, load_caspr_cables
from skel_ros.model.errors import (
    Location,
    SkelError,
    SkelLegacyFormatError,
    SkelMissingElementError,
    SkelReferenceError,
    SkelSyntaxError,
    SkelUnsupportedError,
    SkelValueError,
    SkelWarning,
)
from skel_ros.model.formats import ModelFormat, detect_format, load_model
from skel_ros.model.interchange_errors import (
    CasprError,
    ExportError,
    InterchangeError,
    PhobosError,
    UnknownFormatError,
    UrdfError,
)
from skel_ros.model.joint_types import JOINT_TYPES, JointTypeSpec
from skel_ros.model.kinematics import Kinematics, body_transforms, joint_motion
from skel_ros.model.limits import (
    CheckResult,
    Clamp,
    CommandKind,
    JointLimits,
    LimitError,
    LimitKind,
    LimitOverrides,
    LimitSet,
    RateLimiter,
    load_limit_overrides,
    parse_limit_overrides,
)
from skel_ros.model.mjcf import MjcfExport, world_to_mjcf, write_mjcf
from skel_ros.model.phobos import load_phobos, world_to_phobos, write_phobos
from skel_ros.model.skel_parser import load_skel
from skel_ros.model.skel_writer import world_to_skel, write_skel
from skel_ros.model.smurf import load_smurf
from skel_ros.model.types import (
    ActuatorType,
    Body,
    CollisionDetector,
    Dof,
    EulerOrder,
    Inertia,
    Joint,
    JointType,
    Marker,
    PlaneType,
    Shape,
    ShapeRole,
    Skeleton,
    SoftShape,
    World,
)
from skel_ros.model.urdf import (
    UrdfCoordinates,
    UrdfExportError,
    UrdfJoint,
    default_mesh_dir,
    skeleton_namespace,
    skeleton_to_urdf,
    urdf_joint_map,
    urdf_joint_values,
    world_joint_values,
    world_to_urdf,
)
from skel_ros.model.urdf_reader import load_urdf

__all__ = [
    "JOINT_TYPES",
    "ActuatorType",
    "Body",
    "CasprError",
    "CheckResult",
    "Clamp",
    "CollisionDetector",
    "CommandKind",
    "Dof",
    "EulerOrder",
    "ExportError",
    "Inertia",
    "InterchangeError",
    "Joint",
    "JointLimits",
    "JointType",
    "JointTypeSpec",
    "Kinematics",
    "LimitError",
    "LimitKind",
    "LimitOverrides",
    "LimitSet",
    "Location",
    "Marker",
    "MjcfExport",
    "ModelFormat",
    "PhobosError",
    "PlaneType",
    "RateLimiter",
    "Shape",
    "ShapeRole",
    "SkelError",
    "SkelLegacyFormatError",
    "SkelMissingElementError",
    "SkelReferenceError",
    "SkelSyntaxError",
    "SkelUnsupportedError",
    "SkelValueError",
    "SkelWarning",
    "Skeleton",
    "SoftShape",
    "UnknownFormatError",
    "UrdfCoordinates",
    "UrdfError",
    "UrdfExportError",
    "UrdfJoint",
    "World",
    "body_transforms",
    "default_mesh_dir",
    "detect_format",
    "joint_motion",
    "load_caspr_bodies",
    "load_caspr_cables",
    "load_limit_overrides",
    "load_model",
    "load_phobos",
    "load_skel",
    "load_smurf",
    "load_urdf",
    "parse_limit_overrides",
    "skeleton_namespace",
    "skeleton_to_urdf",
    "urdf_joint_map",
    "urdf_joint_values",
    "world_joint_values",
    "world_to_mjcf",
    "world_to_phobos",
    "world_to_skel",
    "world_to_urdf",
    "write_mjcf",
    "write_phobos",
    "write_skel",
]
