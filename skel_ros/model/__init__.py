"""The shared robot model: ROS-free and DART-free.

``load_skel`` reads a SKEL file into the immutable model DART 6.20 builds from
it; ``Kinematics`` gives body transforms for any joint positions; ``limits``
validates and clamps commands; ``urdf`` exports URDF for RViz.

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

__all__ = [
    "ActuatorType",
    "Body",
    "CollisionDetector",
    "Dof",
    "EulerOrder",
    "Inertia",
    "Joint",
    "JointType",
    "Kinematics",
    "Location",
    "Marker",
    "PlaneType",
    "Shape",
    "ShapeRole",
    "Skeleton",
    "SkelError",
    "SkelLegacyFormatError",
    "SkelMissingElementError",
    "SkelReferenceError",
    "SkelSyntaxError",
    "SkelUnsupportedError",
    "SkelValueError",
    "SkelWarning",
    "SoftShape",
    "World",
    "body_transforms",
    "joint_motion",
    "load_skel",
]
