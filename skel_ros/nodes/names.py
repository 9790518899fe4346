"""Public joint and frame names, and message stamps, shared by the robot nodes.

Stamps are written here (:func:`stamp_from_seconds` builds the message); they are read
by :func:`skel_ros.trajectory.stamp_to_seconds`, which needs no ROS.

*Joint names* are the model's DOF names, made unique across skeletons by the rule of
the URDF export (:func:`~skel_ros.model.urdf.skeleton_namespace`): a world in which at
most one skeleton has bodies uses the SKEL names; otherwise every name is
``"<skeleton>/<dof>"``. The URDF joint that carries a DOF has the DOF's name, so the
names of ``joint_states``, of ``robot_description``'s joints and of
``joint_commands`` are one set.

*Frame names* are ``frame_prefix + <public body name>`` (the URDF link names); the
root of every skeleton hangs under ``frame_prefix + "world"``. The nodes' ``frame_prefix``
defaults to :data:`NAMESPACE_FRAME_PREFIX`: the node's namespace, as the launch files
give it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from builtin_interfaces.msg import Time

from skel_ros.model.urdf import skeleton_namespace

if TYPE_CHECKING:
    from skel_ros.model.types import World

__all__ = ["NAMESPACE_FRAME_PREFIX", "namespace_frame_prefix", "public_dof_names",
           "public_frame_names", "stamp_from_seconds"]

_NANO = 1_000_000_000

NAMESPACE_FRAME_PREFIX = "<namespace>/"
"""The ``frame_prefix`` parameter's default: ``<namespace>/`` of the node, ``""`` in the
root namespace (what the launch files' ``frame_prefix`` argument defaults to)."""


def namespace_frame_prefix(frame_prefix: str, namespace: str) -> str:
    """``frame_prefix`` with :data:`NAMESPACE_FRAME_PREFIX` replaced by the namespace's.

    ``/robot1`` -> ``robot1/``, ``/a/b`` -> ``a/b/``, ``/`` -> ``""``; any other value is
    returned as given.
    """
    if frame_prefix != NAMESPACE_FRAME_PREFIX:
        return frame_prefix
    namespace = namespace.strip("/")
    return f"{namespace}/" if namespace else ""


def public_dof_names(world: World) -> tuple[str, ...]:
    """Joint names of ``joint_states`` / ``joint_commands``: every DOF, model order."""
    return tuple(skeleton_namespace(world, s) + d.name for s in world.skeletons for d in s.dofs)


def public_frame_names(world: World, frame_prefix: str = "") -> tuple[str, ...]:
    """TF frame of every body (the URDF link names), model order."""
    return tuple(frame_prefix + skeleton_namespace(world, s) + b.name
                 for s in world.skeletons for b in s.bodies)


def stamp_from_seconds(seconds: float) -> Time:
    """``builtin_interfaces/Time`` of ``seconds`` (>= 0), rounded to the nanosecond."""
    total = round(seconds * _NANO)
    return Time(sec=total // _NANO, nanosec=total % _NANO)
