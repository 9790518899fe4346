"""The hardware node: real (or emulated) actuators behind the simulation node's interface.

Thin: it declares and validates its parameters, builds a
:class:`~skel_ros.hardware.manager.HardwareManager` (which runs the control loop in its
own thread), and converts messages. Commands and trajectories go to the manager's
:class:`~skel_ros.core.RobotCore` (the same core as the simulation node's, over a
:class:`~skel_ros.hardware.backend.HardwareBackend`); enable, e-stop and clear_faults to
the manager. ROS callbacks only hand things over and read the latest status; they never
touch a bus.

Parameters:
    skel_file (string): the robot's model (path or ``package://...``), in any format
        ``load_model`` reads (SKEL, URDF/xacro, SMURF, Phobos, CASPR).
    model_args (string): xacro arguments of a ``.xacro`` skel_file, ``"name:=value ..."``.
    fixed_base (bool): URDF/SMURF: weld the root link to the world (default: floating,
        unless the root link is ``world``).
    hardware_config (string): the joint -> actuator YAML.
    control_rate (double): control loop rate in Hz; 0 = the YAML's ``control_rate``.
    command_timeout (double): seconds without a command before the safe state;
        -1 = the YAML's ``command_timeout``; 0 = never.
    auto_resume (string): "" = the YAML's; "true"/"false" override it.
    frame_prefix (string): prefix of every TF frame (``real/`` next to a simulation).
    emulate (bool): start each bus's emulator and drive it instead of the hardware.
    publish_rate (double): rate of ``joint_states`` and ``/tf`` in Hz.
    port, can_interface, can_channel (string): override every serial / CAN bus's
        transport ("" = as in the YAML).
    connect_timeout (double): seconds for every bus to connect at start, else the node
        exits with code 1 (scripts, CI); 0 = keep trying for ever (an ERROR every 10 s).
    max_trajectory_delay (double): a trajectory whose header stamp is further ahead
        than this many seconds is refused.

Topics: subscribes ``joint_commands`` (sensor_msgs/JointState), ``joint_trajectory``
(trajectory_msgs/JointTrajectory), ``~/estop`` (std_msgs/Bool, true = stop); publishes
``joint_states``, ``/tf``, ``/tf_static``, ``robot_description``, ``/diagnostics``.
Services: ``~/enable`` (std_srvs/SetBool: true = enable, false = torque off),
``~/estop`` (std_srvs/Trigger), ``~/clear_faults`` (std_srvs/Trigger: each protocol's
fault recovery; the answer lists what was done per actuator). FollowJointTrajectory for
MoveIt and arm tools: :mod:`skel_ros.nodes.follow_joint_trajectory`
(``trajectory_controller.*`` parameters).

``joint_states`` and ``/tf`` carry only what was measured: a DOF whose bus missed the
last read is left out (and the transforms that depend on it) until a fresh read, and
messages are stamped with the time of the read, never re-sent with a newer stamp.
"""

from __future__ import annotations

import logging
import math
import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor  # type: ignore[import-untyped]
from rclpy.duration import Duration
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from skel_ros.core import CommandRefused, RobotCore
from skel_ros.hardware import HardwareManager, Level, MotionState, load_hardware_config
from skel_ros.hardware.errors import ConfigError, HardwareError
from skel_ros.hardware.manager import MAX_START_DELAY
from skel_ros.hardware.plugins import protocol
from skel_ros.model import SkelError, load_model
from skel_ros.model.limits import LimitError
from skel_ros.model.urdf import UrdfExportError, skeleton_namespace
from skel_ros.model.urdf_reader import parse_xacro_args
from skel_ros.nodes.commands import parse_joint_command, parse_joint_trajectory
from skel_ros.nodes.errors import CommandMessageError, NodeSetupError
from skel_ros.nodes.follow_joint_trajectory import FollowJointTrajectoryServer
from skel_ros.nodes.qos import COMMAND_QOS
from skel_ros.nodes.robot_publisher import RobotPublisher
from skel_ros.nodes.throttle import Throttle
from skel_ros.resources import resolve
from skel_ros.trajectory.points import PointTrajectory

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rclpy.context import Context
    from rclpy.parameter import Parameter

    from skel_ros.hardware import ActuatorDiagnostics, BusDiagnostics, HardwareStatus

MAX_CONTROL_RATE = 10_000.0  # Hz
MAX_PUBLISH_RATE = 1_000.0  # Hz
DIAGNOSTICS_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
_DIAGNOSTICS_PERIOD = 1.0  # s, the diagnostics convention
_LOGGERS = ("skel_ros.hardware",)
EXIT_NOT_CONNECTED = 1  # connect_timeout expired


def _descriptor(description: str, *, read_only: bool = True) -> ParameterDescriptor:
    return ParameterDescriptor(description=description, read_only=read_only)


PARAMETERS: dict[str, tuple[Any, str]] = {
    "skel_file": ("", "the robot's model, any format load_model reads (path or package://)"),
    "model_args": ("", "xacro arguments of a .xacro skel_file: 'name:=value ...'"),
    "fixed_base": (False, "URDF/SMURF skel_file: weld the root link to the world"),
    "hardware_config": ("", "joint -> actuator mapping YAML (config/hardware/*.yaml)"),
    "control_rate": (0.0, "control loop rate in Hz; 0 = the YAML's control_rate"),
    "command_timeout": (-1.0, ("seconds without a command before the safe state; -1 = the"
                              " YAML's, 0 = never")),
    "auto_resume": ("", "resume by itself after a fault: '' = as in the YAML, 'true', 'false'"),
    "frame_prefix": ("", "prefix of every TF frame, e.g. 'real/'"),
    "emulate": (False, "start emulated actuators (each protocol's emulator) instead of hardware"),
    "publish_rate": (50.0, "rate of joint_states and /tf in Hz"),
    "port": ("", "serial port for every serial bus ('' = as in the YAML)"),
    "can_interface": ("", "python-can interface for every CAN bus ('' = as in the YAML)"),
    "can_channel": ("", "CAN channel for every CAN bus ('' = as in the YAML)"),
    "connect_timeout": (0.0, ("seconds for every bus to connect at start, else exit with"
                              " code 1; 0 = keep trying (an ERROR every 10 s)")),
    "max_trajectory_delay": (MAX_START_DELAY, ("a trajectory stamped further ahead than"
                                               " this (s) is refused")),
}


class HardwareNotConnectedError(RuntimeError):
    """``connect_timeout`` expired before every bus connected."""


class _RosLogHandler(logging.Handler):
    """Forwards the hardware layer's ``logging`` records to the node's ROS logger."""

    def __init__(self, node: Node) -> None:
        super().__init__(logging.DEBUG)
        self._logger = node.get_logger()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        if record.levelno >= logging.ERROR:
            self._logger.error(message)
        elif record.levelno >= logging.WARNING:
            self._logger.warning(message)
        elif record.levelno >= logging.INFO:
            self._logger.info(message)
        else:
            self._logger.debug(message)


class HardwareNode(Node):
    """The hardware node; see the module docstring.

    Args:
        parameter_overrides: parameters (tests, benchmarks), as for :class:`rclpy.node.Node`.
        record_latency: keep command -> bytes-written latencies (bench/hw_latency.py).

    Raises:
        NodeSetupError: a parameter, the model or the hardware configuration is invalid.
    """

    def __init__(self, *, parameter_overrides: Sequence[Parameter[Any]] | None = None,
                 record_latency: bool = False, node_name: str = "hardware_node",
                 context: Context | None = None) -> None:
        super().__init__(node_name, parameter_overrides=list(parameter_overrides or []),
                         context=context)
        self._emulators: list[Any] = []
        self._published_read = math.nan
        self._manager: HardwareManager | None = None
        self._log_handler = _RosLogHandler(self)
        for name in _LOGGERS:
            logging.getLogger(name).addHandler(self._log_handler)
            logging.getLogger(name).setLevel(logging.INFO)
        try:
            self._setup(record_latency=record_latency)
        except BaseException:
            self.shutdown()
            raise

    # ---------------------------------------------------------------- setup

    def _setup(self, *, record_latency: bool) -> None:
        for name, (default, text) in PARAMETERS.items():
            self.declare_parameter(name, default, _descriptor(text))
        p = {name: self.get_parameter(name).value for name in PARAMETERS}
        self._check_parameters(p)
        try:
            skel_path = resolve(p["skel_file"])
            world = load_model(skel_path, xacro_args=parse_xacro_args(p["model_args"]) or None,
                               fixed_base=p["fixed_base"])
            config = load_hardware_config(resolve(p["hardware_config"]))
            config = config.with_overrides(port=p["port"], can_interface=p["can_interface"],
                                           can_channel=p["can_channel"])
            skeleton = config.select_skeleton(world)
            bound = config.bind(skeleton)
        except (FileNotFoundError, SkelError, ConfigError, LimitError, ValueError) as exc:
            raise NodeSetupError(str(exc)) from None
        if p["emulate"]:
            config = self._start_emulators(config, bound)
            bound = config.bind(skeleton)
        auto_resume = {"": None, "true": True, "false": False}[p["auto_resume"]]
        try:
            self._manager = HardwareManager(
                bound, control_rate=p["control_rate"] or None,
                command_timeout=None if p["command_timeout"] < 0 else p["command_timeout"],
                auto_resume=auto_resume, record_latency=record_latency,
                max_start_delay=p["max_trajectory_delay"])
        except (ConfigError, LimitError) as exc:
            raise NodeSetupError(str(exc)) from None
        self.world, self.skeleton, self.bound = world, skeleton, bound
        self.frame_prefix = p["frame_prefix"]
        self._prefix = skeleton_namespace(world, skeleton)  # public DOF names, as the sim
        self._create_interfaces(p)
        self._connect_deadline = (math.inf if p["connect_timeout"] == 0
                                  else self._manager.now() + p["connect_timeout"])
        self._connected_logged = False
        self._manager.start()
        self.get_logger().info(
            f"connecting {len(config.buses)} bus(es){' (emulated)' if p['emulate'] else ''}"
            f" for {len(bound.names)} DOF(s) of {skeleton.name!r}, control loop at"
            f" {self._manager.control_rate:g} Hz; torque stays off until ~/enable")

    def _check_parameters(self, p: dict[str, Any]) -> None:
        problems = []
        if not p["skel_file"]:
            problems.append("skel_file is required")
        if not p["hardware_config"]:
            problems.append("hardware_config is required")
        rate = p["control_rate"]
        if not (math.isfinite(rate) and 0.0 <= rate <= MAX_CONTROL_RATE):
            problems.append(f"control_rate must be in [0, 10000] Hz, got {rate}")
        timeout = p["command_timeout"]
        if not (math.isfinite(timeout) and (timeout >= 0.0 or timeout == -1.0)):
            problems.append(f"command_timeout must be >= 0 or -1, got {timeout}")
        if p["auto_resume"] not in ("", "true", "false"):
            problems.append(f"auto_resume must be '', 'true' or 'false', got {p['auto_resume']!r}")
        connect = p["connect_timeout"]
        if not (math.isfinite(connect) and connect >= 0.0):
            problems.append(f"connect_timeout must be >= 0, got {connect}")
        delay = p["max_trajectory_delay"]
        if not (math.isfinite(delay) and delay >= 0.0):
            problems.append(f"max_trajectory_delay must be >= 0, got {delay}")
        publish = p["publish_rate"]
        if not (math.isfinite(publish) and 0.0 < publish <= MAX_PUBLISH_RATE):
            problems.append(f"publish_rate must be in (0, 1000] Hz, got {publish}")
        if problems:
            raise NodeSetupError("invalid parameters: " + "; ".join(problems))

    def _start_emulators(self, config: Any, bound: Any) -> Any:  # noqa: ANN401 - HardwareConfig
        """Start each bus's emulator (actuators at the model's initial positions)."""
        initial = {d.name: d.initial_position for d in bound.skeleton.dofs}
        for spec in config.buses:
            maps = config.joints_on(spec.name)
            if not maps:
                continue
            try:
                plugin = protocol(spec.protocol)
            except ConfigError as exc:
                raise NodeSetupError(f"bus {spec.name!r}: no emulator: {exc}") from None
            options = {"initial_positions": {m.actuator.id: m.to_actuator(initial[m.name])
                                             for m in maps}}
            try:
                emulator = plugin.start_emulator(plugin.emulator_transport(spec.transport),
                                                 [m.actuator for m in maps], options)
            except HardwareError as exc:
                raise NodeSetupError(f"bus {spec.name!r}: emulator failed to start: {exc}"
                                     ) from None
            self._emulators.append(emulator)
            config = config.with_transport(spec.name, emulator.transport)
            self.get_logger().info(f"bus {spec.name!r}: emulated {spec.protocol} actuators"
                                   f" at {dict(emulator.transport)}")
        return config

    def _create_interfaces(self, p: dict[str, Any]) -> None:
        try:
            self.robot = RobotPublisher(self, self.world, frame_prefix=p["frame_prefix"])
        except UrdfExportError as exc:
            raise NodeSetupError(f"robot_description: {exc}") from None
        self._throttle = Throttle(self.get_logger().warning)
        # Where the manager's DOFs sit in the world's public joint list (joint_states).
        public = [self._prefix + n for n in self.manager.names]
        self._state_index = np.array([self.robot.joint_index[n] for n in public],
                                     dtype=np.intp)
        self.create_subscription(Bool, "~/estop", self._on_estop_topic, 10)
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/estop", self._on_estop)
        self.create_service(Trigger, "~/clear_faults", self._on_clear_faults)
        self.create_timer(0.1, self._check_connection)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics",
                                                      DIAGNOSTICS_QOS)
        self.create_timer(_DIAGNOSTICS_PERIOD, self._publish_diagnostics)
        self.create_timer(1.0 / p["publish_rate"], self._publish_state)
        self.create_subscription(JointState, "joint_commands", self._on_joint_command,
                                 COMMAND_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self._on_trajectory,
                                 COMMAND_QOS)
        # FollowJointTrajectory, as joint_trajectory_controller offers it; header stamps are
        # ROS time, the core runs on the manager's clock.
        self.trajectory_controller = FollowJointTrajectoryServer(
            self, self.core, joint_prefix=self._prefix,
            clock_offset=lambda: self.get_clock().now().nanoseconds * 1e-9 - self.manager.now())

    # ---------------------------------------------------------------- commands and state

    def _own(self, public: Sequence[str]) -> tuple[list[int], list[str]]:
        """Indices and DOF names of the public names that belong to the driven skeleton."""
        p = self._prefix
        keep = [i for i, n in enumerate(public) if n.startswith(p)]
        return keep, [public[i][len(p):] for i in keep]

    def _on_joint_command(self, msg: JointState) -> None:
        try:
            cmd = parse_joint_command(msg, self.robot.joint_index)
        except CommandMessageError as exc:
            self._throttle(f"rejected: {exc}", key=exc.reason)
            return
        keep, names = self._own(cmd.names)
        if len(keep) < len(cmd.names):
            self._throttle("joint_commands: joints of other skeletons are ignored (this node"
                           f" drives {self.skeleton.name!r})", key="other skeletons")
        if not keep:
            return
        result = self.core.command(cmd.kind, names, np.asarray(cmd.values)[keep])
        if not result.ok:
            self._throttle(f"joint_commands: {result.message}", key=result.reason or None)
        for clamp in result.clamped:  # throttled per joint, whatever the values
            self._throttle(f"joint_commands: {cmd.kind.value} of {clamp.name!r} clamped to"
                           f" its limits: {clamp.requested:.6g} -> {clamp.applied:.6g}",
                           key=f"clamped {cmd.kind.value} {clamp.name}")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        status = self.manager.status()
        target = {self._prefix + n: float(q) for n, q in zip(status.names, status.target,
                                                               strict=True)}

        def start_positions(names: Sequence[str]) -> list[float]:
            # The first segment starts where the targets are now.
            return [target.get(n, math.nan) for n in names]

        try:
            cmd = parse_joint_trajectory(msg, self.robot.joint_index, start_positions)
        except CommandMessageError as exc:
            self._throttle(f"rejected: {exc}", key=exc.reason)
            return
        start = None
        if cmd.start is not None:  # a stamp on the node's clock -> the manager's clock
            now = self.get_clock().now().nanoseconds * 1e-9
            start = self.manager.now() + (cmd.start - now)
        trajectory = cmd.trajectory
        if trajectory is not None and self._prefix:
            _, names = self._own(trajectory.joint_names)
            if len(names) < len(trajectory.joint_names):
                self._throttle("joint_trajectory: joints of other skeletons; rejected whole")
                return
            trajectory = PointTrajectory(names, trajectory.points, trajectory.start_positions)
        if trajectory is None:
            self.core.cancel_trajectory()
            return
        try:
            self.core.follow(trajectory, start)
        except CommandRefused as exc:
            self._throttle(f"joint_trajectory: {exc.reason}", key=exc.key)

    def _publish_state(self) -> None:
        status = self.manager.status()
        if not math.isfinite(status.read_stamp) or status.read_stamp == self._published_read:
            return  # nothing measured since the last message: send nothing
        self._published_read = status.read_stamp
        # Every DOF of the world, as the simulation publishes: measured where an actuator
        # drives it, the model's initial position (velocity, effort NaN) elsewhere; DOFs
        # whose bus missed the read are left out (RobotPublisher.publish_measured).
        q = self.robot.initial_positions.copy()
        v = np.full(q.size, np.nan)
        e = np.full(q.size, np.nan)
        known = np.ones(q.size, dtype=bool)
        q[self._state_index] = status.position
        v[self._state_index] = status.velocity
        e[self._state_index] = status.effort
        known[self._state_index] = status.measured
        age = max(self.manager.now() - status.read_stamp, 0.0)
        stamp = (self.get_clock().now() - Duration(nanoseconds=int(age * 1e9))).to_msg()
        self.robot.publish_measured(q, v, e, known & np.isfinite(q), stamp)

    def _check_connection(self) -> None:
        if self._connected_logged:
            return
        status = self.manager.status()
        if status.buses and all(b.connected for b in status.buses):
            self._connected_logged = True
            self.get_logger().info(f"every bus connected ({status.state.value}): "
                                   f"{status.message}")
        elif self.manager.now() > self._connect_deadline:
            missing = "; ".join(f"{b.name}: {b.message}" for b in status.buses
                                if not b.connected)
            raise HardwareNotConnectedError(f"not connected after connect_timeout: {missing}")

    @property
    def core(self) -> RobotCore:
        """The robot core: commands, trajectories (with observers), the command timeout."""
        return self.manager.core

    @property
    def manager(self) -> HardwareManager:
        """The manager (exists once the node is constructed)."""
        if self._manager is None:
            raise RuntimeError("the hardware node is not set up")
        return self._manager

    def _on_enable(self, request: SetBool.Request, response: SetBool.Response,
                   ) -> SetBool.Response:
        req = self.manager.enable(wait=2.0) if request.data else self.manager.disable(wait=2.0)
        response.success = req.done and req.ok
        response.message = req.message if req.done else "the control loop did not answer"
        return response

    def _on_estop(self, _request: Trigger.Request, response: Trigger.Response,
                  ) -> Trigger.Response:
        req = self.manager.estop(wait=1.0)
        response.success = req.done and req.ok
        response.message = req.message if req.done else "estop requested; loop did not answer"
        return response

    def _on_clear_faults(self, _request: Trigger.Request, response: Trigger.Response,
                         ) -> Trigger.Response:
        req = self.manager.clear_faults(wait=5.0)
        response.success = req.done and req.ok
        if not req.done:
            response.message = "clear_faults requested; the control loop did not answer"
        else:
            response.message = req.message + "".join(
                f"\n{name}: {what}" for name, what in req.details.items())
        return response

    def _on_estop_topic(self, msg: Bool) -> None:
        if msg.data:
            self.manager.estop()

    # ---------------------------------------------------------------- diagnostics

    def _publish_diagnostics(self) -> None:
        status = self.manager.status()
        msg = DiagnosticArray()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.status = [self._summary(status)]
        msg.status += [_bus_status(b, self.get_name()) for b in status.buses]
        msg.status += [_actuator_status(a, self.get_name()) for a in status.actuators]
        self._diagnostics_pub.publish(msg)

    def _summary(self, status: HardwareStatus) -> DiagnosticStatus:
        levels = [int(b.level) for b in status.buses] + [int(a.level) for a in status.actuators]
        level = max(levels, default=0)
        if status.state in (MotionState.FAULT, MotionState.ESTOP):
            level = max(level, int(Level.ERROR))
        return DiagnosticStatus(
            level=bytes([min(level, 3)]), name=f"{self.get_name()}: hardware",
            message=f"{status.state.value}: {status.message}", hardware_id=self.skeleton.name,
            values=[KeyValue(key="state", value=status.state.value),
                    KeyValue(key="control_rate", value=f"{self.manager.control_rate:g}"),
                    KeyValue(key="cycles", value=str(status.cycles)),
                    KeyValue(key="overruns", value=str(status.overruns)),
                    KeyValue(key="guard_corrections", value=str(status.guard_corrections)),
                    KeyValue(key="watchdog_tripped", value=str(status.watchdog_tripped))])

    # ---------------------------------------------------------------- shutdown

    def shutdown(self) -> None:
        """Stop the loop (torque off, buses closed) and the emulators. Idempotent."""
        if self._manager is not None:
            self._manager.stop()
        for emulator in self._emulators:
            emulator.stop()
        self._emulators.clear()
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(self._log_handler)

    def destroy_node(self) -> None:
        """Shut the hardware down, then destroy the node."""
        self.shutdown()
        controller = getattr(self, "trajectory_controller", None)  # None: __init__ failed
        if controller is not None:
            controller.destroy()
        super().destroy_node()


def _bus_status(bus: BusDiagnostics, node: str) -> DiagnosticStatus:
    values = [KeyValue(key="protocol", value=bus.protocol),
              KeyValue(key="connected", value=str(bus.connected)),
              KeyValue(key="consecutive_failures", value=str(bus.consecutive_failures)),
              KeyValue(key="reconnects", value=str(bus.reconnects)),
              KeyValue(key="reconnect_attempts", value=str(bus.reconnect_attempts))]
    values += [KeyValue(key=f"errors.{k}", value=str(v)) for k, v in bus.errors.items()]
    if bus.last_error:
        values.append(KeyValue(key="last_error", value=bus.last_error))
    return DiagnosticStatus(level=bytes([int(bus.level)]), name=f"{node}: bus {bus.name}",
                            message=bus.message, hardware_id=bus.name, values=values)


def _actuator_status(act: ActuatorDiagnostics, node: str) -> DiagnosticStatus:
    values = [KeyValue(key="bus", value=act.bus), KeyValue(key="id", value=str(act.id)),
              KeyValue(key="model", value=act.model),
              KeyValue(key="torque_enabled",
                       value="unknown" if act.torque_enabled is None else str(act.torque_enabled)),
              KeyValue(key="error_code", value=str(act.error_code)),
              KeyValue(key="position", value=f"{act.position:.6g}"),
              KeyValue(key="target", value=f"{act.target:.6g}")]
    if act.fault:
        values.append(KeyValue(key="fault", value=act.fault))
    if act.temperature is not None:
        values.append(KeyValue(key="temperature", value=f"{act.temperature:g}"))
    if act.voltage is not None:
        values.append(KeyValue(key="voltage", value=f"{act.voltage:g}"))
    values += [KeyValue(key=f"errors.{k}", value=str(v)) for k, v in act.errors.items()]
    return DiagnosticStatus(level=bytes([int(act.level)]), name=f"{node}: {act.name}",
                            message=act.message, hardware_id=f"{act.bus}/{act.id}",
                            values=values)


def main(args: Sequence[str] | None = None) -> None:
    """Console script ``hardware_node``."""
    from skel_ros.nodes.shutdown import NodeStopSignal

    # Before rclpy.init (its handler calls the one it finds): the first SIGINT stops the
    # node, a second one (a terminal's Ctrl-C under launch) cannot cut the torque-off short.
    stop = NodeStopSignal("hardware_node").install()
    rclpy.init(args=None if args is None else list(args))
    node: HardwareNode | None = None
    try:
        node = HardwareNode()
        # One executor thread: the control loop has its own thread, and callbacks only
        # hand things over (a MultiThreadedExecutor's pool starves the loop of the GIL).
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except NodeSetupError as exc:
        logging.getLogger("skel_ros.hardware_node").critical("%s", exc)
        print(f"hardware_node: {exc}", file=sys.stderr)  # noqa: T201 - before ROS logging
        sys.exit(2)
    except HardwareNotConnectedError as exc:
        if node is not None:
            node.get_logger().fatal(str(exc))
        print(f"hardware_node: {exc}", file=sys.stderr)  # noqa: T201 - a script's reason
        with stop.stopping():
            if node is not None:
                node.destroy_node()
                node = None
            if rclpy.ok():
                rclpy.try_shutdown()
        sys.exit(EXIT_NOT_CONNECTED)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        with stop.stopping():
            if node is not None:
                node.destroy_node()
            if rclpy.ok():
                rclpy.try_shutdown()


