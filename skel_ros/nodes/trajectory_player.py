"""``trajectory_player``: plays a trajectory file to the simulation or the hardware node.

Reads a CASPR ``trajectories.xml`` or a trajectory YAML (:mod:`skel_ros.trajectory`),
maps it onto the DOFs of ``skel_file`` (a CASPR trajectory's columns by ``mapping_file``,
else as :func:`~skel_ros.trajectory.load_trajectory_model` says: the
``<skel_file>.q_mapping.yaml`` that ``skel-ros convert`` writes is used when found),
refuses it if any DOF leaves its position or
velocity limits (naming the DOF and the time), then

* ``mode: trajectory`` publishes it once as ``trajectory_msgs/JointTrajectory`` on
  ``joint_trajectory`` (header stamp zero: "start on receipt") and waits its duration;
* ``mode: stream`` publishes ``sensor_msgs/JointState`` position commands on
  ``joint_commands`` at ``rate`` Hz, sampled from the trajectory in the node's clock
  (``use_sim_time`` works).

Before playing it waits up to ``wait_for_subscribers`` seconds until ``subscribers``
subscribers are matched (default 1): every robot the commands are for, and a recorder if
one runs (``sim_to_real.launch.py`` and ``skel-ros sim-to-real`` count theirs). A robot
matched after the start would miss the one JointTrajectory, or the start of the stream,
so when they are not all there in time the player does not play: it names the
subscribers it reached and says how many it did not, and exits with status 2. One that
matches after the start is warned about (it missed what was sent before). Then,
if ``enable_service`` names std_srvs/SetBool services (comma-separated, e.g. the
hardware node's ``/real/hardware_node/enable``), it calls each with ``true`` and plays
only once all have answered success (a hardware node starts with torque off), 60 s at
most. An enable is not re-sent blindly when its answer is lost (a second one would clear
an e-stop pressed since): the node's lifecycle ``get_state`` says whether it was served
(:mod:`skel_ros.nodes.enable_call`: ``active``, then the node's ``/diagnostics`` say
whether it is still enabled; only ``inactive`` sends it again); then it waits
``start_delay`` seconds. While it waits and plays it watches those nodes' ``/diagnostics``
summaries: a node reporting ``estop`` or ``fault`` refuses the commands, and the player
stops and says so (status 3) rather than play on and end "done". It logs progress every
10 % and exits when done (status 0), unless ``loop`` is set. Bad parameters, unreadable
files, out-of-limit trajectories, subscribers not reached and a refused or failed enable
end it with status 2 and one line on stderr saying why.

Parameters (all read-only): ``trajectory_file``, ``skel_file`` (paths or
``package://skel_ros/...``), ``model_args`` and ``fixed_base`` (as the simulation
node's), ``mapping_file``, ``trajectory_id``, ``mode``, ``rate``,
``start_delay``, ``loop``, ``wait_for_subscribers``, ``subscribers``, ``enable_service``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import rclpy
from builtin_interfaces.msg import Duration
from rclpy.duration import Duration as RclpyDuration
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from skel_ros.model import SkelError
from skel_ros.model.urdf_reader import parse_xacro_args
from skel_ros.nodes.enable_call import EnableCall, HardwareStateWatch, start_enable
from skel_ros.nodes.errors import NodeSetupError
from skel_ros.nodes.parameters import Param, at_least, declare, read, within
from skel_ros.nodes.service_calls import ServiceTimeoutError
from skel_ros.resources import resolve
from skel_ros.trajectory import (
    MAX_PLAY_RATE,
    PointTrajectory,
    TrajectoryError,
    check_limits,
    duration_parts,
    load_trajectory,
    load_trajectory_model,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rclpy.context import Context
    from rclpy.parameter import Parameter

MODES = ("trajectory", "stream")
MAX_RATE = MAX_PLAY_RATE  # Hz
COMMAND_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
_TRAJECTORY_TICK = 0.05  # s between progress checks in trajectory mode


class PlayerSetupError(NodeSetupError):
    """The player cannot play: a bad parameter or file, subscribers not reached, no enable."""


class PlayerStoppedError(RuntimeError):
    """A robot the player enabled stopped (e-stop, fault) while it waited or played."""


def _given(value: str) -> str:
    if not value:
        raise ValueError("is required (the player checks the trajectory against the model's"
                         " DOFs and limits before playing)")
    return value


def _count(value: int) -> int:
    if value < 1:
        raise ValueError(f"must be an integer >= 1 (every robot, and a recorder), got {value}")
    return value


PARAMETERS: dict[str, Param] = {
    "trajectory_file": Param("", "CASPR trajectories.xml or trajectory YAML (path or"
                             " package://)", read_only=True, convert=_given),
    "skel_file": Param("", "the robot's model, any format (SKEL, URDF/xacro, SMURF, CASPR"
                       " bodies.xml, Phobos; path or package://)", read_only=True,
                       convert=_given),
    "model_args": Param("", "xacro arguments of a .xacro skel_file: 'name:=value ...'",
                        read_only=True),
    "fixed_base": Param(default=False, read_only=True,
                        description="URDF/SMURF skel_file: weld the root link to the world"),
    "mapping_file": Param("", "YAML mapping CASPR q columns to DOF names ('' = CASPR's q order"
                          " for a bodies.xml, else <skel_file>.q_mapping.yaml if found, else"
                          " model order; refused on a model whose order is unknown)",
                          read_only=True),
    "trajectory_id": Param("", "which CASPR joint trajectory of the file ('' = the first)",
                           read_only=True),
    "mode": Param("trajectory", "'trajectory': one JointTrajectory on joint_trajectory;"
                  " 'stream': JointState position commands on joint_commands at rate Hz",
                  read_only=True, choices=MODES),
    "rate": Param(50.0, f"stream mode: command rate in Hz (0, {MAX_RATE:g}]", read_only=True,
                  number=True, convert=within(0.0, MAX_RATE, open_low=True, unit="Hz")),
    "start_delay": Param(0.0, "seconds to wait before playing (>= 0)", read_only=True,
                         number=True, convert=at_least(0.0)),
    "loop": Param(default=False, read_only=True,
                  description="play again and again until stopped"),
    "wait_for_subscribers": Param(5.0, "seconds to wait for the subscribers before playing"
                                  " (>= 0); not all there by then: not playing, status 2",
                                  read_only=True, number=True, convert=at_least(0.0)),
    "subscribers": Param(1, "how many subscribers to wait for (>= 1): every robot the commands"
                         " are for, and a recorder", read_only=True, convert=_count),
    "enable_service": Param("", "std_srvs/SetBool service(s) to call with true before playing,"
                            " comma-separated (e.g. /real/hardware_node/enable); '' = none",
                            read_only=True),
}
ACK_WAIT = 2.0  # s the player waits, at the end, for its last message to be acknowledged
ENABLE_TIMEOUT = 60.0  # s for an enable to be known done (skel_ros.nodes.enable_call)


class TrajectoryPlayer(Node):
    """The player node; see the module docstring.

    Raises:
        NodeSetupError: A parameter is invalid (each named, the shared
            :mod:`skel_ros.nodes.parameters` check), or (:class:`PlayerSetupError`) the
            model or the trajectory is.
    """

    def __init__(self, *, parameter_overrides: Sequence[Parameter[Any]] | None = None,
                 node_name: str = "trajectory_player", context: Context | None = None) -> None:
        super().__init__(node_name, parameter_overrides=list(parameter_overrides or []),
                         context=context)
        declare(self, PARAMETERS)
        p = read(self, PARAMETERS)
        self.mode: str = p["mode"]
        self.rate: float = p["rate"]
        self.loop: bool = p["loop"]
        self.start_delay: float = p["start_delay"]
        self.wait_for_subscribers: float = p["wait_for_subscribers"]
        self.subscribers: int = p["subscribers"]
        self.trajectory = self._load(p)
        self._enable_names = [n.strip() for n in p["enable_service"].split(",") if n.strip()]
        self._enable: list[EnableCall] = []  # the calls not done yet
        self._watches: list[tuple[HardwareStateWatch, int]] = []  # enabled nodes, and marks
        self.done = False
        self._decile = -1
        self._phase = "waiting"
        self._phase_start = self._now()
        self._matched = 0  # subscribers matched, last seen
        self._started_with = 0  # subscribers matched when playing started
        self._t0 = 0.0
        if self.mode == "stream":
            self._publisher = self.create_publisher(JointState, "joint_commands", COMMAND_QOS)
            self._timer = self.create_timer(1.0 / self.rate, self._tick)
        else:
            self._publisher = self.create_publisher(JointTrajectory, "joint_trajectory",
                                                    COMMAND_QOS)
            self._timer = self.create_timer(_TRAJECTORY_TICK, self._tick)
        t = self.trajectory
        self.get_logger().info(
            f"loaded {p['trajectory_file']}: {len(t.joint_names)} DOF(s)"
            f" ({', '.join(t.joint_names)}), {t.duration:.3f} s, {len(t.points)} point(s);"
            f" within the limits of {p['skel_file']}; mode {self.mode}")

    # ---------------------------------------------------------------- setup

    def _load(self, p: dict[str, Any]) -> PointTrajectory:
        try:
            model = load_trajectory_model(
                resolve(p["skel_file"]), xacro_args=parse_xacro_args(p["model_args"]),
                fixed_base=p["fixed_base"])
            mapping = resolve(p["mapping_file"]) if p["mapping_file"] else None
            trajectory = load_trajectory(resolve(p["trajectory_file"]), model, mapping,
                                         trajectory_id=p["trajectory_id"] or None)
        except (FileNotFoundError, SkelError, TrajectoryError, ValueError) as exc:
            raise PlayerSetupError(str(exc)) from None
        try:
            trajectory = check_limits(trajectory, model.limits)
        except TrajectoryError as exc:
            raise PlayerSetupError(f"refusing to play {exc}") from None  # exc names the file
        return trajectory

    # ---------------------------------------------------------------- playing

    def _now(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _tick(self) -> None:
        if self.done:
            return
        now = self._now()
        if self._phase == "waiting":
            if not self._subscribers_matched(now - self._phase_start):
                return
            self._phase, self._phase_start = "enabling", now
            self._enable = [self._call_enable(name) for name in self._enable_names]
        if self._phase == "enabling":
            if not self._enabled():
                return
            self._phase, self._phase_start = "delay", now
        self._check_stopped()
        if self._phase == "delay":
            if now - self._phase_start < self.start_delay:
                return
            self._start(now)
        self._play(now - self._t0)

    def _subscriber_names(self) -> str:
        """The nodes subscribed to the command topic, as the graph knows them."""
        infos = self.get_subscriptions_info_by_topic(self._publisher.topic_name)
        names = sorted(f"{info.node_namespace.rstrip('/')}/{info.node_name}" for info in infos)
        return ", ".join(names) or "none"

    def _subscribers_matched(self, waited: float) -> bool:
        """True once ``subscribers`` are matched; logs each change of the count.

        Raises:
            PlayerSetupError: Not all of them within ``wait_for_subscribers``: which were
                reached, how many were not (nothing is played).
        """
        matched = self._publisher.get_subscription_count()
        topic = self._publisher.topic_name
        if matched != self._matched:
            self._matched = matched
            self.get_logger().info(f"{matched} of {self.subscribers} subscriber(s) of {topic}"
                                   f" matched ({self._subscriber_names()})")
        if matched >= self.subscribers:
            return True
        if waited < self.wait_for_subscribers:
            return False
        missing = self.subscribers - matched
        what = "the trajectory" if self.mode == "trajectory" else "the start of the stream"
        raise PlayerSetupError(
            f"{missing} of {self.subscribers} subscriber(s) of {topic} not reached within"
            f" {self.wait_for_subscribers:g} s (wait_for_subscribers); reached {matched}:"
            f" {self._subscriber_names()}. Not playing: a robot matched late would miss"
            f" {what}. Start every robot (and recorder) first, on this ROS_DOMAIN_ID, or"
            " set subscribers to how many there are")

    def _check_late_subscribers(self) -> None:
        """Warn (once per count) about subscribers matched after playing started."""
        matched = self._publisher.get_subscription_count()
        if matched > self._matched and matched > self._started_with:
            what = ("the trajectory was sent" if self.mode == "trajectory"
                    else f"{self._now() - self._t0:.2f} s into the stream")
            self.get_logger().warning(
                f"{matched - self._started_with} subscriber(s) of {self._publisher.topic_name}"
                f" matched after {what} (now {matched}: {self._subscriber_names()}): they"
                f" missed what was sent before; subscribers ({self.subscribers}) should count"
                " every robot and recorder")
        self._matched = matched

    def _call_enable(self, name: str) -> EnableCall:
        """Start enabling ``name``; a lost answer is asked for, not re-sent blindly."""
        self.get_logger().info(f"calling {name} (enable)")
        return start_enable(self, name, timeout=ENABLE_TIMEOUT, log=self.get_logger().warning)

    def _enabled(self) -> bool:
        """Poll the enable calls; True once every one has succeeded.

        Raises:
            PlayerSetupError: An enable did not succeed within ENABLE_TIMEOUT (the message
                says why), was refused (its message says why), or the node is not enabled
                (its answer lost, the node in e-stop since: left in e-stop).
        """
        pending = []
        for call in self._enable:
            try:
                result = call.poll()
            except ServiceTimeoutError as exc:
                raise PlayerSetupError(f"{exc}; not playing") from None
            if result is None:
                pending.append(call)
                continue
            if not result.success:
                why = (f"{call.service} refused to enable: {result.message}" if result.answered
                       else result.message)
                raise PlayerSetupError(f"{why}; not playing")
            if result.answered:
                self.get_logger().info(f"{call.service}: {result.message}")
            else:
                self.get_logger().warning(result.message)
            if call.watch is not None:  # from now on, a stop it reports ends the play
                self._watches.append((call.watch, call.watch.count))
        self._enable = pending
        return not pending

    def _check_stopped(self) -> None:
        """Raise if an enabled node reported a stop (``estop``, ``fault``) since its enable.

        Raises:
            PlayerStoppedError: It did: its commands are refused.
        """
        for watch, mark in self._watches:
            stop = watch.stopped_since(mark)
            if stop is not None:
                played = (f" after {self._now() - self._t0:.2f} s of"
                          f" {self.trajectory.duration:.2f} s" if self._phase == "playing"
                          else " before playing")
                raise PlayerStoppedError(
                    f"{watch.hardware_node} reports {stop.state} ({stop.message}): it refuses"
                    f" the commands; stopped playing{played}")

    def _start(self, now: float) -> None:
        self._phase, self._t0, self._decile = "playing", now, -1
        self._matched = self._started_with = self._publisher.get_subscription_count()
        self.get_logger().info(f"playing {self.trajectory.duration:.3f} s")
        if self.mode == "trajectory":
            self._publisher.publish(trajectory_message(self.trajectory))

    def _play(self, t: float) -> None:
        self._check_late_subscribers()
        duration = self.trajectory.duration
        finished = t >= duration
        if self.mode == "stream":
            self._publisher.publish(self._command(min(t, duration)))
        self._progress(1.0 if finished or duration <= 0.0 else t / duration, min(t, duration))
        if not finished:
            return
        if self.loop:
            self.get_logger().info("done; looping")
            self._start(self._now())
        else:
            self._timer.cancel()
            # The process ends next: a message still on its way would be lost with the
            # publisher (a reliable subscriber that has not acknowledged it never gets it).
            if not self._publisher.wait_for_all_acked(RclpyDuration(seconds=ACK_WAIT)):
                self.get_logger().warning(f"the last command was not acknowledged by every"
                                          f" subscriber within {ACK_WAIT:g} s")
            self.get_logger().info("done")
            self.done = True

    def _progress(self, fraction: float, t: float) -> None:
        decile = min(10, int(fraction * 10.0 + 1e-9))
        if decile > self._decile:
            self._decile = decile
            self.get_logger().info(f"progress {decile * 10:3d} % ({t:.2f} s of"
                                   f" {self.trajectory.duration:.2f} s)")

    def _command(self, t: float) -> JointState:
        positions, _, _ = self.trajectory.sample(t)
        msg = JointState()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.name = list(self.trajectory.joint_names)
        msg.position = [float(x) for x in positions]
        return msg


def trajectory_message(trajectory: PointTrajectory) -> JointTrajectory:
    """``trajectory`` as a ``JointTrajectory`` (stamp zero: the receiver starts it on receipt)."""
    msg = JointTrajectory()
    msg.joint_names = list(trajectory.joint_names)
    for point in trajectory.points:
        out = JointTrajectoryPoint()
        out.positions = [float(x) for x in point.positions]
        if point.velocities:
            out.velocities = [float(x) for x in point.velocities]
        if point.accelerations:
            out.accelerations = [float(x) for x in point.accelerations]
        sec, nanosec = duration_parts(point.time_from_start)
        out.time_from_start = Duration(sec=sec, nanosec=nanosec)
        msg.points.append(out)
    return msg


def main(args: Sequence[str] | None = None) -> None:
    """Console script ``trajectory_player``: exit status 0 done, 2 refused, 3 stopped.

    2: it refuses to play (bad parameters, files, limits, no enable); 3: a robot it enabled
    reported a stop (e-stop, fault) before the end.
    """
    try:
        rclpy.init(args=list(args) if args is not None else None)
    except RuntimeError as exc:  # rclpy's RCLError: unparsable --ros-args
        print(f"trajectory_player: cannot start: {exc}", file=sys.stderr)  # noqa: T201
        sys.exit(2)
    node: TrajectoryPlayer | None = None
    status = 0
    try:
        node = TrajectoryPlayer()
        while rclpy.ok() and not node.done:
            rclpy.spin_once(node, timeout_sec=0.1)
    except (NodeSetupError, PlayerStoppedError) as exc:
        # One line, printed: the ROS logger would say it a second time on the console.
        print(f"trajectory_player: {exc}", file=sys.stderr)  # noqa: T201
        status = 2 if isinstance(exc, NodeSetupError) else 3
    except (KeyboardInterrupt, ExternalShutdownException):
        status = 130 if node is None or not node.done else 0
    finally:
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.try_shutdown()
    sys.exit(status)


__all__ = ["PlayerSetupError", "PlayerStoppedError", "TrajectoryPlayer", "main",
           "trajectory_message"]


if __name__ == "__main__":
    main()
