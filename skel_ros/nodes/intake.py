"""Command intake, one for both robot nodes: joint commands, trajectories, FollowJointTrajectory.

:class:`CommandIntake` takes a node, as tf2_ros's helpers do, and creates on it:

* the ``joint_commands`` subscription (sensor_msgs/JointState, :data:`COMMAND_QOS`):
  each message read by the one parser (:mod:`skel_ros.nodes.commands`, over
  :mod:`skel_ros.trajectory.messages`) and handed to :meth:`RobotCore.command
  <skel_ros.core.RobotCore.command>`;
* the ``joint_trajectory`` subscription (trajectory_msgs/JointTrajectory): parsed the
  same way, its first segment starting at the core's start positions
  (:meth:`RobotCore.start_positions <skel_ros.core.RobotCore.start_positions>`: the
  targets held now), its header stamp read through the node's
  :class:`~skel_ros.nodes.time_base.TimeBase`, handed to :meth:`RobotCore.follow
  <skel_ros.core.RobotCore.follow>`; an empty one cancels (the joints hold);
* the :class:`~skel_ros.nodes.follow_joint_trajectory.FollowJointTrajectoryServer`
  (``trajectory_controller.*`` parameters); its ``controller_state`` is the owner's to
  publish from its loop (:meth:`~skel_ros.nodes.follow_joint_trajectory.
  FollowJointTrajectoryServer.publish_state`).

Each message names its source (:mod:`skel_ros.nodes.sources`: the publisher's node where
rclpy says which publisher sent it, else the topic), so the core tells commanders apart
(:mod:`skel_ros.core.commanders`): a second source on the same joints while the first is
active is said once per pair, and refused with the ``exclusive_commands`` parameter
(:data:`PARAMETERS`, declared here for both nodes).

Refusals and clamps are logged in one wording, throttled per problem (1 s)::

    joint_commands: unknown joint 'hinj'; did you mean 'hinge'? (message ignored)
    joint_commands: position command ignored: motion is not enabled (...) (message ignored)
    joint_commands: position command clamped to limits: 'elbow' 3 -> 2.2
    joint_trajectory: trajectory ignored: motion is not enabled (...) (message ignored)

Joint names: a message names public joints (:mod:`skel_ros.nodes.names`), the core its
DOFs; public name = ``joint_prefix`` + DOF name. The simulation's core drives every DOF
of its world under its public name (prefix ``""``); the hardware's drives the mapped DOFs
of one skeleton under their own names (prefix ``"<skeleton>/"`` when the world has
several). Entries of a ``joint_commands`` message for other skeletons are ignored (said);
a trajectory naming them is refused whole. A DOF of the driven skeleton without an
actuator is the core's to refuse (said once for a command; a trajectory is refused).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from skel_ros.core import CommandRefused
from skel_ros.nodes.commands import parse_joint_command, parse_joint_trajectory
from skel_ros.nodes.errors import CommandMessageError
from skel_ros.nodes.follow_joint_trajectory import FollowJointTrajectoryServer
from skel_ros.nodes.parameters import Param, declare, read
from skel_ros.nodes.qos import COMMAND_QOS
from skel_ros.nodes.sources import subscribe_with_source
from skel_ros.nodes.throttle import Throttle
from skel_ros.trajectory.points import PointTrajectory

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from rclpy.node import Node

    from skel_ros.core import RobotCore
    from skel_ros.core.commanders import Source
    from skel_ros.nodes.time_base import TimeBase

__all__ = ["PARAMETERS", "CommandIntake"]

PARAMETERS: dict[str, Param] = {
    "exclusive_commands": Param(
        default=False, read_only=True,
        description="refuse a second command source (another publisher or the"
                    " FollowJointTrajectory action) on joints another source is commanding,"
                    " until that one has been quiet for command_timeout (1 s when 0);"
                    " false: the latest command wins, the two are logged once"),
}
"""The intake's parameters, declared on the node (both nodes)."""


class CommandIntake:
    """The command subscriptions and the FollowJointTrajectory server of a robot node.

    Args:
        node: The node (an rclpy ``Node`` or ``LifecycleNode``) to create them on.
        core: The robot core the commands go to.
        known: Public joint name -> index: every joint a message may name (the world's,
            ``RobotPublisher.joint_index``); another name is refused by the parser.
        time_base: Header stamps <-> the core's time.
        joint_prefix: Public joint name = ``joint_prefix`` + the core's DOF name.

    Raises:
        NodeSetupError: A ``trajectory_controller.*`` parameter or ``exclusive_commands``
            is unusable.
    """

    def __init__(self, node: Node, core: RobotCore, known: Mapping[str, int],
                 time_base: TimeBase, *, joint_prefix: str = "") -> None:
        declare(node, PARAMETERS)
        core.exclusive_commands = read(node, PARAMETERS)["exclusive_commands"]
        self.core = core
        self.time_base = time_base
        self.warn = Throttle(node.get_logger().warning)
        """The throttled warnings (replace it to collect them: tests)."""
        self._info = node.get_logger().info
        self._known = known
        self._prefix = joint_prefix
        self._commands = subscribe_with_source(node, JointState, "joint_commands",
                                               self.on_joint_command, COMMAND_QOS)
        self._trajectories = subscribe_with_source(node, JointTrajectory, "joint_trajectory",
                                                   self.on_trajectory, COMMAND_QOS)
        self.trajectory_controller = FollowJointTrajectoryServer(
            node, core, time_base=time_base, joint_prefix=joint_prefix, state_timer=False)
        """FollowJointTrajectory, as joint_trajectory_controller offers it."""

    def destroy(self) -> None:
        """Destroy the action server (the node's ``destroy_node`` does not)."""
        self.trajectory_controller.destroy()

    # ---------------------------------------------------------------- joint_commands

    def on_joint_command(self, msg: JointState, source: Source | None = None) -> None:
        """A ``joint_commands`` message: the driven skeleton's joints go to the core.

        ``source``: who sent it (None: the topic's, publisher unknown).
        """
        try:
            command = parse_joint_command(msg, self._known)
        except CommandMessageError as exc:
            self.warn(f"{exc} (message ignored)", key=f"joint_commands {exc.reason}")
            return
        kind, names, values = command.kind, command.names, command.values
        if self._prefix:
            own = [i for i, n in enumerate(names) if n.startswith(self._prefix)]
            if len(own) < len(names):
                self.warn("joint_commands: joints of other skeletons are ignored (this node"
                          f" drives {self._prefix}*)", key="joint_commands other skeletons")
            if not own:
                return
            names, values = tuple(self._dof(names[i]) for i in own), values[own]
        result = self.core.command(kind, names, values,
                                   source or self._commands.anonymous)
        if not result.ok:
            self.warn(f"joint_commands: {result.message} (message ignored)",
                      key=f"joint_commands {result.message}")
        for clamp in result.clamped:  # throttled per joint and kind, whatever the values
            self.warn(f"joint_commands: {kind.value} command clamped to limits: {clamp.name!r}"
                      f" {clamp.requested:.6g} -> {clamp.applied:.6g}",
                      key=f"clamped {kind.value} {clamp.name}")

    # ---------------------------------------------------------------- joint_trajectory

    def on_trajectory(self, msg: JointTrajectory, source: Source | None = None) -> None:
        """A ``joint_trajectory`` message: followed from the targets held now, or a cancel.

        ``source``: who sent it (None: the topic's, publisher unknown).
        """
        source = source or self._trajectories.anonymous
        with self.core.lock:  # its start positions are the targets the loop holds now
            try:
                command = parse_joint_trajectory(msg, self._known, self._start_positions)
                if command.trajectory is None:
                    if self.core.cancel_trajectory(source):
                        self._info(f"empty joint_trajectory from {source}: stopped, holding"
                                   " position")
                    return
                start = None if command.start is None else self.time_base.to_core(command.start)
                self.core.follow(self._for_core(command.trajectory), start, source=source)
            except CommandMessageError as exc:
                self.warn(f"{exc} (message ignored)", key=f"joint_trajectory {exc.reason}")
            except CommandRefused as exc:
                self.warn(f"joint_trajectory: {exc.reason} (message ignored)",
                          key=f"joint_trajectory {exc.key}")

    def _dof(self, name: str) -> str:
        """The core's DOF name of a public joint name."""
        return name[len(self._prefix):] if name.startswith(self._prefix) else name

    def _start_positions(self, names: Sequence[str]) -> list[float]:
        """Where a trajectory for the public ``names`` starts: the core's targets now.

        A core that takes no motion now (hardware with torque off) has none: that is the
        refusal. A name the core does not drive (another skeleton's joint, a DOF without
        an actuator) gets a placeholder, as the trajectory is refused for it
        (:meth:`_for_core`, :meth:`RobotCore.follow <skel_ros.core.RobotCore.follow>`).
        """
        self.core.check_motion()
        dofs = [self._dof(n) for n in names]
        driven = [d for d in dofs if d in self.core.index]
        at = dict(zip(driven, self.core.start_positions(driven), strict=True))
        return [at.get(d, 0.0) for d in dofs]

    def _for_core(self, trajectory: PointTrajectory) -> PointTrajectory:
        """The trajectory in the core's DOF names (refused: joints of other skeletons)."""
        if not self._prefix:
            return trajectory
        names = trajectory.joint_names
        if not all(n.startswith(self._prefix) for n in names):
            raise CommandRefused("trajectory rejected: joints of other skeletons (this node"
                                 f" drives {self._prefix}*)", "other skeletons")
        return PointTrajectory([self._dof(n) for n in names], trajectory.points,
                               trajectory.start_positions)
