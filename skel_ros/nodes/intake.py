"""Command intake, one for both robot nodes: joint commands, trajectories, FollowJointTrajectory.

:class:`CommandIntake` takes a node, as tf2_ros's helpers do, and creates on it (or, for
``joint_commands``, beside it: Threads, below):

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

**Threads.** ``joint_commands``, the stream, has a node and an executor thread of its own
(:class:`CommandStream`): ``<node name>_commands``, in the node's namespace, subscribed to
the topic as the node resolves it (its remappings hold), with no parameter services, no
rosout and no type description service. rclpy's executors go through every entity of
their nodes in Python at each wake-up, and a robot node has many (parameter and
lifecycle services, its own services, the action server, timers, QoS event handlers): on
the node's own executor each command paid for all of them. On its own, a command costs
what it costs any small rclpy subscriber, plus what the core does with it. The rest (a
``joint_trajectory`` message carries a whole motion; the action server) stays on the
node and its executor; the core's lock orders what the two threads hand in. A
``joint_commands`` callback that raises (a defect) is logged with its traceback
(throttled) and the thread takes the next message: the core holds what it had.

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

import threading
import traceback
from typing import TYPE_CHECKING, Any

from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from skel_ros.core import CommandRefused
from skel_ros.nodes.commands import parse_joint_command, parse_joint_trajectory
from skel_ros.nodes.errors import CommandMessageError
from skel_ros.nodes.follow_joint_trajectory import FollowJointTrajectoryServer
from skel_ros.nodes.parameters import Param, declare, read
from skel_ros.nodes.qos import COMMAND_QOS
from skel_ros.nodes.shutdown import SPIN_WAKE, make_executor, spin
from skel_ros.nodes.sources import PublisherSources, subscribe_with_source
from skel_ros.nodes.throttle import Throttle
from skel_ros.trajectory.points import PointTrajectory

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.core import RobotCore
    from skel_ros.core.commanders import Source
    from skel_ros.nodes.time_base import TimeBase

__all__ = ["PARAMETERS", "CommandIntake", "CommandStream"]

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
        self.trajectory_controller = FollowJointTrajectoryServer(
            node, core, time_base=time_base, joint_prefix=joint_prefix, state_timer=False)
        """FollowJointTrajectory, as joint_trajectory_controller offers it."""
        self.stream = CommandStream(node)
        """``joint_commands``' own node and executor thread."""
        try:
            self._commands = self.stream.subscribe(JointState, "joint_commands",
                                                   self.on_joint_command)
            self._trajectories = subscribe_with_source(
                node, JointTrajectory, "joint_trajectory", self.on_trajectory, COMMAND_QOS)
        except BaseException:  # the caller gets no intake to destroy: leave no node behind
            self.stream.destroy()
            self.trajectory_controller.destroy()
            raise
        self.stream.start()

    def destroy(self) -> None:
        """Stop ``joint_commands``' thread, then destroy the action server.

        The node's ``destroy_node`` does neither.
        """
        self.stream.destroy()
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


class CommandStream:
    """A node for a robot node's command stream, spun by an executor thread of its own.

    ``<node name>_commands`` in the node's namespace and context. It takes no process-wide
    arguments (a ``__node:=`` remapping would give it the node's own name): the caller
    subscribes it (:meth:`subscribe`) to the name the node resolves
    (``node.resolve_topic_name``), so the node's remappings hold. No parameter services,
    rosout or type description service: it has only its subscription, and its
    executor's wake-ups cost a small node's.

    Args:
        node: The robot node (its name, namespace, context and logger).
    """

    def __init__(self, node: Node) -> None:
        self.node = Node(f"{node.get_name()}_commands", namespace=node.get_namespace(),
                         context=node.context, use_global_arguments=False,
                         enable_rosout=False, start_parameter_services=False,
                         parameter_overrides=[Parameter("start_type_description_service",
                                                        value=False)])
        self._robot = node
        self._context = node.context
        self._error = Throttle(node.get_logger().error, period=10.0)
        self._executor = make_executor(node.context)
        self._executor.add_node(self.node)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="skel_ros-commands",
                                        daemon=True)

    def subscribe(self, msg_type: Any, topic: str,  # noqa: ANN401 - a message type
                  callback: Callable[[Any, Source], None]) -> PublisherSources:
        """Subscribe ``callback(message, source)`` to ``topic`` as the robot node resolves it.

        :data:`COMMAND_QOS`; the sources are named by ``topic`` as given (the name the
        docs use), whatever it is remapped to.
        """
        resolved = self._robot.resolve_topic_name(topic)
        return subscribe_with_source(self.node, msg_type, resolved, callback, COMMAND_QOS,
                                     sources=PublisherSources(self.node, resolved, topic))

    def start(self) -> None:
        """Start the executor thread (once the subscription exists)."""
        self._thread.start()

    def _run(self) -> None:
        while self._context.ok() and not self._stop.is_set():
            try:
                spin(self._executor, self._context, self._stop)
            except ExternalShutdownException:  # noqa: PERF203 - the process stops (Ctrl-C)
                return
            except Exception as exc:  # noqa: BLE001 - a defect: said, spin on
                if not self._context.ok() or self._stop.is_set():
                    return  # the context went down under the wait (rclpy's own error)
                self._said(exc)

    def _said(self, exc: Exception) -> None:
        lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
        self._error(f"a command callback failed (the message is lost; the joints keep"
                    f" their targets): {''.join(lines).rstrip()}",
                    key=f"{type(exc).__name__}: {exc}")

    def destroy(self) -> None:
        """Stop the thread, then destroy the node (idempotent)."""
        if self._stop.is_set():
            return
        self._stop.set()
        # Ends the executor's wait at once (a wake() would not: rclpy's wait goes on until
        # its timeout when no callback is ready); the thread then sees the stop.
        self._executor.shutdown(timeout_sec=0)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(2.0 * SPIN_WAKE)  # its wait ends within SPIN_WAKE anyway
        self.node.destroy_node()
