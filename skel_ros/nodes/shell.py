"""The ROS shell both robot nodes share: model, state publishing, command intake, time base.

The simulation node and the hardware node differ in their backend (an engine, the
buses) and in the services their capabilities call for; everything else a robot node
does in ROS is here, written once, and each node holds one :class:`RobotShell` (by
composition: a plain ``Node`` and a ``LifecycleNode`` use it alike, as tf2_ros's helpers):

* the model: :data:`MODEL_PARAMETERS` (``model_args``, ``fixed_base``,
  ``frame_prefix``, in the one parameter idiom of :mod:`skel_ros.nodes.parameters`)
  and :func:`load_world`;
* state publishing from the core's read (:meth:`RobotShell.publish`): ``joint_states``
  and ``/tf`` of a :class:`~skel_ros.core.RobotState` (what the backend measured, per
  DOF fresh or not), stamped through the node's :class:`~skel_ros.nodes.time_base.
  TimeBase`; a DOF that is not fresh, or that the core does not drive (a joint the
  hardware YAML maps to no actuator, a joint of another skeleton), is left out, and so
  is every ``/tf`` transform that moves with it (:meth:`RobotPublisher.publish_measured
  <skel_ros.nodes.robot_publisher.RobotPublisher.publish_measured>`);
* the latched topics (``robot_description``, ``/tf_static``, ``~/markers``):
  :class:`~skel_ros.nodes.robot_publisher.RobotPublisher`;
* command intake (``joint_commands``, ``joint_trajectory``, FollowJointTrajectory):
  :class:`~skel_ros.nodes.intake.CommandIntake`.

When to publish stays the node's: the simulation on a schedule of simulated time from its
loop (batched), the hardware from a publisher thread woken by the loop's reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from skel_ros.model import SkelError, load_model
from skel_ros.model.urdf import UrdfExportError
from skel_ros.model.urdf_reader import parse_xacro_args
from skel_ros.nodes.errors import NodeSetupError
from skel_ros.nodes.intake import CommandIntake
from skel_ros.nodes.names import NAMESPACE_FRAME_PREFIX, namespace_frame_prefix
from skel_ros.nodes.parameters import Param
from skel_ros.nodes.robot_publisher import RobotPublisher
from skel_ros.resources import resolve

if TYPE_CHECKING:
    import numpy.typing as npt
    from builtin_interfaces.msg import Time
    from rclpy.node import Node

    from skel_ros.core import RobotCore, RobotState
    from skel_ros.model.types import World
    from skel_ros.nodes.follow_joint_trajectory import FollowJointTrajectoryServer
    from skel_ros.nodes.time_base import TimeBase

__all__ = ["MODEL_PARAMETERS", "RobotShell", "load_world"]

MODEL_PARAMETERS: dict[str, Param] = {
    "model_args": Param("", "xacro arguments of a .xacro skel_file: 'name:=value ...'",
                        read_only=True),
    "fixed_base": Param(default=False,
                        description="URDF/SMURF skel_file: weld the root link to the world "
                                    "(default: floating, unless the root link is 'world')",
                        read_only=True),
    "frame_prefix": Param(NAMESPACE_FRAME_PREFIX,
                          "prefix of every TF frame, the world frame included (e.g. 'sim/'"
                          f" -> sim/world); {NAMESPACE_FRAME_PREFIX!r} = the node's namespace"
                          " and '/' ('' in the root namespace)", read_only=True),
}
"""The parameters of the model every robot node reads, besides its ``skel_file``."""


def load_world(node: Node, skel_file: str, model_args: str, *, fixed_base: bool) -> World:
    """The model of ``skel_file`` (any format ``load_model`` reads); its warnings logged.

    Raises:
        NodeSetupError: It cannot be read (the file and why).
    """
    try:
        world = load_model(resolve(skel_file), xacro_args=parse_xacro_args(model_args) or None,
                           fixed_base=fixed_base)
    except (FileNotFoundError, OSError, SkelError, ValueError) as exc:
        raise NodeSetupError(f"cannot load skel_file {skel_file!r}: {exc}") from None
    for warning in world.warnings:
        node.get_logger().warning(str(warning))
    return world


class RobotShell:
    """What a robot node publishes and takes in ROS, over its robot core.

    Creates on ``node`` the publishers of :class:`~skel_ros.nodes.robot_publisher.
    RobotPublisher` (publishing the latched ones at once), the command subscriptions and
    the FollowJointTrajectory server (:class:`~skel_ros.nodes.intake.CommandIntake`).

    Args:
        node: The node (``Node`` or ``LifecycleNode``).
        core: Its robot core (commands go there; :meth:`publish` takes its reads).
        world: The model (every skeleton: ``robot_description`` and the TF tree).
        frame_prefix: The ``frame_prefix`` parameter (:data:`~skel_ros.nodes.names.
            NAMESPACE_FRAME_PREFIX`: the node's namespace).
        time_base: Header stamps <-> the core's time.
        joint_prefix: Public joint name = ``joint_prefix`` + the core's DOF name
            (``"<skeleton>/"`` when the hardware drives one skeleton of several).

    Raises:
        NodeSetupError: The model cannot be exported as URDF, a DOF of the core is not a
            joint of the model, or a ``trajectory_controller.*`` parameter is unusable.
    """

    def __init__(self, node: Node, core: RobotCore, world: World, *, frame_prefix: str,
                 time_base: TimeBase, joint_prefix: str = "") -> None:
        try:
            self.robot = RobotPublisher(node, world, frame_prefix=namespace_frame_prefix(
                frame_prefix, node.get_namespace()))
            """joint_states, /tf, /tf_static, robot_description, ~/markers."""
        except UrdfExportError as exc:
            raise NodeSetupError(f"cannot export {world.source or 'the model'} as URDF"
                                 f" (robot_description): {exc}") from None
        self.time_base = time_base
        """Header stamps <-> the core's time."""
        public = [joint_prefix + n for n in core.names]
        missing = [n for n in public if n not in self.robot.joint_index]
        if missing:  # pragma: no cover - one naming rule (skel_ros.nodes.names)
            raise NodeSetupError(f"DOF(s) of the core not in the model: {missing}")
        # Where the core's DOFs sit among the model's joints; None: the same list.
        self._index = (None if tuple(public) == self.robot.joint_names else
                       np.array([self.robot.joint_index[n] for n in public], dtype=np.intp))
        self.intake = CommandIntake(node, core, self.robot.joint_index, time_base,
                                    joint_prefix=joint_prefix)
        """joint_commands, joint_trajectory and FollowJointTrajectory."""

    @property
    def trajectory_controller(self) -> FollowJointTrajectoryServer:
        """FollowJointTrajectory, as joint_trajectory_controller offers it."""
        return self.intake.trajectory_controller

    def publish(self, state: RobotState, stamp: Time | None = None, *,
                joint_states: bool = True, tf: bool = True) -> None:
        """Publish ``joint_states`` and ``/tf`` of a core reading (``core.read()``).

        Only what it measured: a DOF not fresh in ``state``, or not driven by the core,
        is left out of ``joint_states``, and every ``/tf`` transform moving with it out of
        ``/tf``.

        Args:
            state: The reading.
            stamp: Its header stamp (default: ``state.stamp`` through the time base).
            joint_states: Publish ``joint_states``.
            tf: Publish ``/tf`` (and ``~/urdf_joint_states`` when the model has one).
        """
        if stamp is None:
            stamp = self.time_base.stamp(state.stamp)
        q, v, e, fresh = state.positions, state.velocities, state.efforts, state.fresh
        index = self._index
        if index is not None:  # scattered into the model's joints; the others unknown
            size = len(self.robot.joint_names)
            q, v, e = (_scatter(size, index, x) for x in (q, v, e))
            fresh = _scatter(size, index, fresh, fill=False)
        self.robot.publish_measured(q, v, e, fresh & np.isfinite(q), stamp,
                                    joint_states=joint_states, tf=tf)

    def destroy(self) -> None:
        """Destroy what ``destroy_node`` does not (the action server)."""
        self.intake.destroy()


def _scatter(size: int, index: npt.NDArray[np.intp], values: npt.NDArray[Any], *,
             fill: float = np.nan) -> npt.NDArray[Any]:
    """``values`` at ``index`` of an array of ``size``, ``fill`` elsewhere."""
    out = np.full(size, fill, dtype=values.dtype)
    out[index] = values
    return out
