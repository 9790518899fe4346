"""The shared robot model: ROS-free and DART-free.

``load_skel`` reads a SKEL file into the immutable model DART 6.20 builds from
it; ``Kinematics`` gives body transforms for any joint positions; ``LimitSet``
and friends (``limits``) validate and clamp commands; ``world_to_urdf`` and
friends (``urdf``) export URDF for RViz.

Example::

    from skel_ros.model import load_skel
    world = load_skel("robot.skel")
    for dof in world.skeletons[0].dofs:
        print(dof.name, dof.position_lower, dof.position_upper)
"""

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
from skel_ros.model.skel_parser import load_skel
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

__all__ = [
    "ActuatorType",
    "Body",
    "CheckResult",
    "Clamp",
    "CollisionDetector",
    "CommandKind",
    "Dof",
    "EulerOrder",
    "Inertia",
    "Joint",
    "JointLimits",
    "JointType",
    "Kinematics",
    "LimitError",
    "LimitKind",
    "LimitOverrides",
    "LimitSet",
    "Location",
    "Marker",
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
    "UrdfCoordinates",
    "UrdfExportError",
    "UrdfJoint",
    "World",
    "body_transforms",
    "default_mesh_dir",
    "joint_motion",
    "load_limit_overrides",
    "load_skel",
    "parse_limit_overrides",
    "skeleton_namespace",
    "skeleton_to_urdf",
    "urdf_joint_map",
    "urdf_joint_values",
    "world_joint_values",
    "world_to_urdf",
]
