"""The hardware node: real (or emulated) actuators behind the simulation node's interface.

A managed (lifecycle) node, with ros2_control's meaning of the states:

* ``unconfigured``: nothing open; parameters declared, ``~/enable`` answers "configure first".
* ``configure``: read the model and the hardware YAML, start the emulators (``emulate``),
  start the control loop, which opens every bus with torque off; wait for the buses
  (``connect_timeout``). Fails (back to ``unconfigured``, everything closed) on a bad
  parameter, model or YAML, or when ``connect_timeout`` > 0 expires.
* ``inactive``: communicating, torque off: ``joint_states``, ``/tf``, ``/diagnostics`` are
  published from the measurements; commands are refused.
* ``activate``: torque on, holding the measured positions (the manager's enable). Fails
  (stays ``inactive``, torque off) when a bus is not connected, an actuator is in fault
  or outside its limits; the log says which.
* ``active``: torque on; commands, trajectories, FollowJointTrajectory. The manager's own
  safety still applies inside it: an e-stop, a bus fault or the command timeout
  (``safe_state: torque_off``) cut torque without a transition; ``~/enable`` true
  switches it on again.
* ``deactivate``: torque off. ``cleanup`` / ``shutdown``: torque off, buses closed,
  emulators stopped, every topic, service and timer of the configured node destroyed.
* An exception in a transition, or a torque-off that the buses did not confirm, goes to
  ``on_error``: the same teardown (torque off on every bus that still answers, buses
  closed), then ``unconfigured``.

``autostart`` chooses where the node brings itself at start, without a lifecycle manager:
``inactive`` (the default, as before the lifecycle: connected, torque off until
``~/enable``), ``active`` (torque on once the buses answer) or ``unconfigured`` (a
lifecycle manager or ``ros2 lifecycle set`` drives it). ``~/enable`` stays as a
convenience and follows the lifecycle: true from ``inactive`` runs the activate
transition, false from ``active`` the deactivate transition; true while ``active``
re-enables after an e-stop or a fault, and changes nothing while motion is enabled.

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
    auto_resume (bool or string): "" = the YAML's; true / false (``-p auto_resume:=true``
        passes a bool; the strings "true" / "false" are taken too) override it.
    frame_prefix (string): prefix of every TF frame (``real/`` next to a simulation);
        default ``<namespace>/`` (the node's namespace, "" in the root namespace).
    emulate (bool): start each bus's emulator and drive it instead of the hardware.
    publish_rate (double): rate of ``joint_states`` and ``/tf`` in Hz.
    port, can_interface, can_channel (string): override every serial / CAN bus's
        transport ("" = as in the YAML).
    connect_timeout (double): seconds the configure transition waits for every bus to
        connect, else it fails (at an unmanaged start the node exits with code 1:
        scripts, CI); 0 = wait up to 5 s, then go on and keep trying for ever in the
        background (an ERROR every 10 s).
    autostart (string): the state the node brings itself to at start: ``inactive``
        (default), ``active`` or ``unconfigured``.
    max_trajectory_delay (double): a trajectory whose header stamp is further ahead
        than this many seconds is refused.

Double parameters take integers too (``-p control_rate:=200``). A value of the wrong type
is refused naming the parameter: for a number or ``auto_resume``, configure fails (as for
a bad value); for a string or bool parameter, the node refuses to start (exit code 2).

Topics: subscribes ``joint_commands`` (sensor_msgs/JointState), ``joint_trajectory``
(trajectory_msgs/JointTrajectory), ``~/estop`` (std_msgs/Bool, true = stop); publishes
``joint_states``, ``/tf``, ``/tf_static``, ``robot_description``, ``/diagnostics``.
Services: ``~/enable`` (std_srvs/SetBool: true = enable, false = torque off; see above),
``~/estop`` (std_srvs/Trigger), ``~/clear_faults`` (std_srvs/Trigger: each protocol's
fault recovery; the answer lists what was done per actuator). FollowJointTrajectory for
MoveIt and arm tools: :mod:`skel_ros.nodes.follow_joint_trajectory`
(``trajectory_controller.*`` parameters). The lifecycle services (``~/change_state``,
``~/get_state``, ...) are rclpy's. Every topic, service and action except ``~/enable``,
``~/estop``, ``~/clear_faults`` and the lifecycle services exists only while configured.

``joint_states`` and ``/tf`` carry only what was measured: a DOF whose bus missed the
last read is left out (and the transforms that depend on it) until a fresh read, and
messages are stamped with the time of the read, never re-sent with a newer stamp.

Threads: the executor (one thread: callbacks only hand things over), the control loop
(the manager's), and a state publisher, as ros2_control's realtime publisher: the loop
hands each new read to ``_on_read``, which picks one read per ``publish_rate`` period
and wakes the publisher thread; it sends ``joint_states``, ``/tf`` and, at
``state_publish_rate``, ``controller_state`` from that read, right after it. No timer
polls the loop, and the executor, whose every wake-up costs a pass over all the node's
services, subscriptions and event handlers, wakes only for what it receives and for the
diagnostics. A publisher that falls behind sends only the newest read.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
import traceback
from functools import wraps
from typing import TYPE_CHECKING, Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import ParameterDescriptor  # type: ignore[import-untyped]
from rclpy.duration import Duration
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
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
from skel_ros.nodes.names import NAMESPACE_FRAME_PREFIX, namespace_frame_prefix
from skel_ros.nodes.qos import COMMAND_QOS
from skel_ros.nodes.robot_publisher import RobotPublisher
from skel_ros.nodes.throttle import Throttle
from skel_ros.resources import resolve
from skel_ros.trajectory.points import PointTrajectory

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rclpy.context import Context
    from rclpy.parameter import Parameter

    from skel_ros.hardware import ActuatorDiagnostics, BusDiagnostics, HardwareStatus

MAX_CONTROL_RATE = 10_000.0  # Hz
MAX_PUBLISH_RATE = 1_000.0  # Hz
DIAGNOSTICS_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
_DIAGNOSTICS_PERIOD = 1.0  # s, the diagnostics convention
_LOGGERS = ("skel_ros.hardware",)
EXIT_NOT_CONNECTED = 1  # connect_timeout expired
CONNECT_WAIT = 5.0  # s, configure's wait for the buses when connect_timeout is 0
_CONNECT_POLL = 0.02  # s
_REQUEST_WAIT = 2.0  # s, enable / disable answered by the control loop
AUTOSTART = ("inactive", "active", "unconfigured")
SUCCESS = TransitionCallbackReturn.SUCCESS
FAILURE = TransitionCallbackReturn.FAILURE
ERROR = TransitionCallbackReturn.ERROR


PARAMETERS: dict[str, tuple[Any, str]] = {
    "skel_file": ("", "the robot's model, any format load_model reads (path or package://)"),
    "model_args": ("", "xacro arguments of a .xacro skel_file: 'name:=value ...'"),
    "fixed_base": (False, "URDF/SMURF skel_file: weld the root link to the world"),
    "hardware_config": ("", "joint -> actuator mapping YAML (config/hardware/*.yaml)"),
    "control_rate": (0.0, "control loop rate in Hz; 0 = the YAML's control_rate"),
    "command_timeout": (-1.0, ("seconds without a command before the safe state; -1 = the"
                              " YAML's, 0 = never")),
    "auto_resume": ("", ("resume by itself after a bus failure and reconnection: '' = as in"
                         " the YAML, true, false")),
    "frame_prefix": (NAMESPACE_FRAME_PREFIX, (f"prefix of every TF frame, e.g. 'real/';"
                                              f" {NAMESPACE_FRAME_PREFIX!r} = the node's"
                                              " namespace and '/' ('' in the root namespace)")),
    "emulate": (False, "start emulated actuators (each protocol's emulator) instead of hardware"),
    "publish_rate": (50.0, "rate of joint_states and /tf in Hz"),
    "port": ("", "serial port for every serial bus ('' = as in the YAML)"),
    "can_interface": ("", "python-can interface for every CAN bus ('' = as in the YAML)"),
    "can_channel": ("", "CAN channel for every CAN bus ('' = as in the YAML)"),
    "connect_timeout": (0.0, ("seconds configure waits for every bus, else it fails (an"
                              " unmanaged start exits with code 1); 0 = wait up to 5 s, then"
                              " keep trying (an ERROR every 10 s)")),
    "max_trajectory_delay": (MAX_START_DELAY, ("a trajectory stamped further ahead than"
                                               " this (s) is refused")),
    "autostart": ("inactive", ("the lifecycle state the node brings itself to at start:"
                               " 'inactive' (torque off), 'active' (torque on) or"
                               " 'unconfigured' (a lifecycle manager drives it)")),
}
# Doubles that may be given as integers ("-p control_rate:=200" is an integer).
NUMBERS = ("control_rate", "command_timeout", "connect_timeout", "max_trajectory_delay",
           "publish_rate")
# auto_resume: "" (the YAML's), or a bool ("-p auto_resume:=true"), or "true" / "false".
AUTO_RESUME: dict[str, bool | None] = {"": None, "true": True, "false": False}
_DYNAMIC = (*NUMBERS, "auto_resume")  # declared with dynamic typing: checked at configure
_TYPE_NAMES = {bool: "bool (true or false)", str: "string"}


class _Decimator:
    """Picks one stamp per ``period`` from a stream of stamps, on a fixed grid.

    A stamp up to ``early`` before the next grid point counts (the stamps come from a
    loop with its own period); a late one does not shift the grid, and after a gap
    longer than a period the grid restarts at the next stamp.
    """

    def __init__(self, period: float, early: float) -> None:
        self._period = period
        self._early = early
        self._next = -math.inf

    def __call__(self, stamp: float) -> bool:
        if stamp < self._next - self._early:
            return False
        behind = stamp - self._next >= self._period
        self._next = stamp + self._period if behind else self._next + self._period
        return True


class HardwareNotConnectedError(RuntimeError):
    """``connect_timeout`` expired before every bus connected."""


class _RosLogHandler(logging.Handler):
    """Forwards the hardware layer's ``logging`` records to the node's ROS logger."""

    def __init__(self, node: LifecycleNode) -> None:
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


def _typed(given: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The dynamically typed parameters as the node uses them, and their type problems.

    Numbers become floats (integers are taken); ``auto_resume`` becomes None (the YAML's)
    or a bool. A value of the wrong type is named, and its default used in its place.
    """
    p = dict(given)
    problems = []
    for name in NUMBERS:
        value = p[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{name} must be a number, got {value!r}")
            value = PARAMETERS[name][0]
        p[name] = float(value)
    resume = p["auto_resume"]
    if isinstance(resume, bool):
        p["auto_resume"] = resume
    elif isinstance(resume, str) and resume in AUTO_RESUME:
        p["auto_resume"] = AUTO_RESUME[resume]
    else:
        problems.append(f"auto_resume must be true, false or '' (the YAML's), got {resume!r}")
        p["auto_resume"] = None
    return p, problems


def _autostart(value: str) -> str:
    if value not in AUTOSTART:
        raise NodeSetupError(f"invalid parameters: autostart must be one of"
                             f" {', '.join(AUTOSTART)}, got {value!r}")
    return value


def _transition(name: str) -> Callable[[Callable[[HardwareNode], TransitionCallbackReturn]],
                                       Callable[[HardwareNode, LifecycleState],
                                                TransitionCallbackReturn]]:
    """A lifecycle callback that logs an unexpected exception before it becomes ERROR.

    rclpy turns an exception in a transition callback into ERROR (then ``on_error``)
    without a word in the log (Humble, Jazzy); this says what happened.
    """
    def decorate(body: Callable[[HardwareNode], TransitionCallbackReturn],
                 ) -> Callable[[HardwareNode, LifecycleState], TransitionCallbackReturn]:
        @wraps(body)
        def callback(self: HardwareNode, _state: LifecycleState) -> TransitionCallbackReturn:
            try:
                return body(self)
            except Exception as exc:  # noqa: BLE001 - the lifecycle's error handling
                self.get_logger().error(f"{name} failed: {exc!r}\n{traceback.format_exc()}")
                return ERROR
        return callback
    return decorate


class HardwareNode(LifecycleNode):
    """The hardware node; see the module docstring.

    Constructing it declares the parameters and brings the node to ``autostart``'s state
    (by default ``inactive``: configured, buses connecting, torque off).

    Args:
        parameter_overrides: parameters (tests, benchmarks), as for :class:`rclpy.node.Node`.
        record_latency: keep command -> bytes-written latencies (bench/hw_latency.py).

    Raises:
        NodeSetupError: a parameter, the model or the hardware configuration is invalid
            (with ``autostart`` ``inactive`` or ``active``; else the configure transition
            fails and logs why).
        HardwareNotConnectedError: autostart's configure: ``connect_timeout`` expired.
    """

    def __init__(self, *, parameter_overrides: Sequence[Parameter[Any]] | None = None,
                 record_latency: bool = False, node_name: str = "hardware_node",
                 context: Context | None = None) -> None:
        super().__init__(node_name, parameter_overrides=list(parameter_overrides or []),
                         context=context)
        self._record_latency = record_latency
        self._emulators: list[Any] = []
        self._state_thread: threading.Thread | None = None
        self._published_read = math.nan
        self._manager: HardwareManager | None = None
        self._active = False  # torque on by the activate transition (until deactivate)
        self._transition_message = ""  # why the last transition failed, for ~/enable
        self._configure_error: NodeSetupError | HardwareNotConnectedError | None = None
        self.trajectory_controller: FollowJointTrajectoryServer | None = None
        self._log_handler = _RosLogHandler(self)
        for name in _LOGGERS:
            logging.getLogger(name).addHandler(self._log_handler)
            logging.getLogger(name).setLevel(logging.INFO)
        try:
            self._declare_parameters()
            autostart = _autostart(self.get_parameter("autostart").value)
            self.create_subscription(Bool, "~/estop", self._on_estop_topic, 10)
            self.create_service(SetBool, "~/enable", self._on_enable)
            self.create_service(Trigger, "~/estop", self._on_estop)
            self.create_service(Trigger, "~/clear_faults", self._on_clear_faults)
            self._guard_change_state()
            # Everything created from here on belongs to the configured node (cleanup).
            self._unconfigured_entities = self._entities()
            self._autostart(autostart)
        except BaseException:
            self.shutdown()
            raise

    def _declare_parameters(self) -> None:
        """Declare every parameter (read-only); numbers and ``auto_resume`` of any type.

        Their types are checked with their values at configure (:meth:`_check_parameters`);
        a string or bool parameter given another type is refused here.

        Raises:
            NodeSetupError: parameters of the wrong type, each named.
        """
        problems = []
        for name, (default, text) in PARAMETERS.items():
            try:
                self.declare_parameter(name, default, ParameterDescriptor(
                    description=text, read_only=True, dynamic_typing=name in _DYNAMIC))
            except (InvalidParameterTypeException,  # noqa: PERF203 - each one is said
                    InvalidParameterValueException) as exc:
                problems.append(f"{name} must be a {_TYPE_NAMES[type(default)]}: {exc.args[0]}")
        if problems:
            raise NodeSetupError("invalid parameters: " + "; ".join(problems))

    def _autostart(self, autostart: str) -> None:
        if autostart == "unconfigured":
            self.get_logger().info("unconfigured: waiting for a lifecycle manager"
                                   " (~/change_state: configure, then activate)")
            return
        if self.trigger_configure() != SUCCESS:
            raise self._configure_error or NodeSetupError(
                f"configure failed: {self._transition_message or 'see the log'}")
        if autostart == "active" and self.trigger_activate() != SUCCESS:
            where = ("inactive (torque off): ~/enable to retry" if self._manager is not None
                     else "unconfigured after error processing: configure to retry")
            self.get_logger().error(f"autostart active: {self._transition_message}; the node"
                                    f" is {where}")

    def _guard_change_state(self) -> None:
        """Answer an impossible ``~/change_state`` with ``success: false``.

        Humble's and Jazzy's rclpy raise out of the service callback when a transition is
        not possible from the current state (``activate`` while ``unconfigured``), which
        would end the node (torque off, but gone); Kilted logs it and answers false.
        """
        for service in self.services:
            if service.srv_name.endswith("/change_state"):
                service.callback = self._guarded(service.callback)

    def _guarded(self, change_state: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def guarded(request: Any, response: Any) -> Any:  # noqa: ANN401 - ChangeState
            try:
                return change_state(request, response)
            except Exception as exc:  # noqa: BLE001 - rclpy's RCLError (Humble, Jazzy)
                self.get_logger().error(
                    f"~/change_state: transition {request.transition.id}"
                    f" {request.transition.label!r} is not possible now: {exc}")
                response.success = False
                return response
        return guarded

    # ---------------------------------------------------------------- lifecycle

    @_transition("configure")
    def on_configure(self) -> TransitionCallbackReturn:
        """Read the model and the YAML, open the buses (torque off), wait for them."""
        self._configure_error = None
        try:
            self._setup()
        except (NodeSetupError, HardwareNotConnectedError) as exc:
            self._configure_error = exc
            self._transition_message = str(exc)
            self.get_logger().error(f"configure failed: {exc}")
            self._teardown()
            return FAILURE
        self._transition_message = ""
        return SUCCESS

    @_transition("activate")
    def on_activate(self) -> TransitionCallbackReturn:
        """Torque on, holding the measured positions; FAILURE (torque off) if refused."""
        req = self.manager.enable(wait=_REQUEST_WAIT)
        if req.done and req.ok:
            self._active = True
            self._transition_message = req.message
            self.get_logger().info(f"active: {req.message}")
            return SUCCESS
        if not req.done:  # the loop may still do it: make sure it ends with torque off
            self.manager.disable(wait=_REQUEST_WAIT)
        self._transition_message = (req.message if req.done
                                    else "the control loop did not answer")
        self.get_logger().error(f"activate failed: {self._transition_message}; torque off")
        return FAILURE

    @_transition("deactivate")
    def on_deactivate(self) -> TransitionCallbackReturn:
        """Torque off; a torque off not confirmed is an error (``on_error``)."""
        self._active = False
        req = self.manager.disable(wait=_REQUEST_WAIT)
        if req.done and req.ok:
            self._transition_message = req.message
            self.get_logger().info("inactive: torque off")
            return SUCCESS
        self._transition_message = (req.message if req.done
                                    else "the control loop did not answer")
        self.get_logger().error(f"deactivate: torque off not confirmed:"
                                f" {self._transition_message}")
        return ERROR

    @_transition("cleanup")
    def on_cleanup(self) -> TransitionCallbackReturn:
        """Torque off, buses closed, emulators stopped, the configured interfaces gone."""
        self._teardown()
        self.get_logger().info("unconfigured: buses closed")
        return SUCCESS

    @_transition("shutdown")
    def on_shutdown(self) -> TransitionCallbackReturn:
        """As cleanup, from any state."""
        self._teardown()
        self.get_logger().info("finalized: torque off, buses closed")
        return SUCCESS

    @_transition("error processing")
    def on_error(self) -> TransitionCallbackReturn:
        """The safe state: torque off where a bus still answers, buses closed."""
        self._teardown()
        self.get_logger().error("after an error: torque off where the buses answered, buses"
                                " closed; unconfigured")
        return SUCCESS

    def _entities(self) -> dict[str, list[Any]]:
        return {"publisher": list(self.publishers), "subscription": list(self.subscriptions),
                "client": list(self.clients), "service": list(self.services),
                "timer": list(self.timers), "guard_condition": list(self.guards)}

    def _teardown(self) -> None:
        """Torque off, buses closed, emulators stopped, configured interfaces destroyed.

        Idempotent; never raises for the hardware part (the manager's stop never does).
        """
        self._active = False
        if self._manager is not None:
            self._manager.stop()  # torque off, every bus closed
        self._stop_state_publisher()  # after the loop: nothing wakes it any more
        self._manager = None
        for emulator in self._emulators:
            emulator.stop()
        self._emulators.clear()
        if self.trajectory_controller is not None:
            self.trajectory_controller.destroy()
            self.trajectory_controller = None
        keep = getattr(self, "_unconfigured_entities", None)
        if keep is None:  # __init__ failed before: destroy_node destroys everything
            return
        for kind, now in self._entities().items():
            kept = {id(e) for e in keep[kind]}
            for entity in now:
                if id(entity) not in kept:
                    getattr(self, f"destroy_{kind}")(entity)
        self._published_read = math.nan

    # ---------------------------------------------------------------- setup

    def _setup(self) -> None:
        p = self._check_parameters({name: self.get_parameter(name).value
                                    for name in PARAMETERS})
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
        try:
            self._manager = HardwareManager(
                bound, control_rate=p["control_rate"] or None,
                command_timeout=None if p["command_timeout"] < 0 else p["command_timeout"],
                auto_resume=p["auto_resume"], record_latency=self._record_latency,
                max_start_delay=p["max_trajectory_delay"], on_read=self._on_read)
        except (ConfigError, LimitError) as exc:
            raise NodeSetupError(str(exc)) from None
        self.world, self.skeleton, self.bound = world, skeleton, bound
        self.frame_prefix = namespace_frame_prefix(p["frame_prefix"], self.get_namespace())
        self._prefix = skeleton_namespace(world, skeleton)  # public DOF names, as the sim
        self._create_interfaces(p)
        self._connected_logged = False
        self._start_state_publisher()
        self._manager.start()
        self.get_logger().info(
            f"connecting {len(config.buses)} bus(es){' (emulated)' if p['emulate'] else ''}"
            f" for {len(bound.names)} DOF(s) of {skeleton.name!r}, control loop at"
            f" {self._manager.control_rate:g} Hz; torque stays off until activate"
            " (or ~/enable)")
        self._wait_for_buses(p["connect_timeout"])

    def _wait_for_buses(self, connect_timeout: float) -> None:
        """Wait for every bus to connect: ``connect_timeout``, or CONNECT_WAIT if it is 0.

        Raises:
            HardwareNotConnectedError: ``connect_timeout`` > 0 expired.
        """
        manager = self.manager
        end = manager.now() + (connect_timeout or CONNECT_WAIT)
        while True:
            status = manager.status()
            if status.buses and all(b.connected for b in status.buses):
                self._check_connection()
                return
            if manager.now() >= end:
                break
            time.sleep(_CONNECT_POLL)  # the loop thread connects; nothing to spin here
        missing = "; ".join(f"{b.name}: {b.message}" for b in status.buses if not b.connected)
        if connect_timeout > 0:
            raise HardwareNotConnectedError(f"not connected after connect_timeout: {missing}")
        self.get_logger().warning(f"not every bus connected after {CONNECT_WAIT:g} s; still"
                                  f" trying (activate needs them): {missing}")

    def _check_parameters(self, given: dict[str, Any]) -> dict[str, Any]:
        """The parameters checked: numbers as floats, ``auto_resume`` as None / bool.

        Raises:
            NodeSetupError: every problem found, each naming its parameter.
        """
        p, problems = _typed(given)
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
        return p

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
            self.robot = RobotPublisher(self, self.world, frame_prefix=self.frame_prefix)
        except UrdfExportError as exc:
            raise NodeSetupError(f"robot_description: {exc}") from None
        self._throttle = Throttle(self.get_logger().warning)
        # Where the manager's DOFs sit in the world's public joint list (joint_states).
        public = [self._prefix + n for n in self.manager.names]
        self._state_index = np.array([self.robot.joint_index[n] for n in public],
                                     dtype=np.intp)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics",
                                                      DIAGNOSTICS_QOS)
        self.create_timer(_DIAGNOSTICS_PERIOD, self._publish_diagnostics)
        # The loop's reads pick the moments to publish (_on_read): one read per period of
        # publish_rate, on a fixed grid; a read may come up to half a loop period early.
        half_cycle = 0.5 * self.manager.period
        self._publish_due = _Decimator(1.0 / p["publish_rate"], half_cycle)
        self.create_subscription(JointState, "joint_commands", self._on_joint_command,
                                 COMMAND_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self._on_trajectory,
                                 COMMAND_QOS)
        # FollowJointTrajectory, as joint_trajectory_controller offers it; header stamps are
        # ROS time, the core runs on the manager's clock.
        self.trajectory_controller = FollowJointTrajectoryServer(
            self, self.core, joint_prefix=self._prefix, state_timer=False,
            clock_offset=lambda: self.get_clock().now().nanoseconds * 1e-9 - self.manager.now())
        # controller_state goes with joint_states (same read), at its own rate.
        self._controller_state_due = _Decimator(
            1.0 / self.trajectory_controller.settings.state_rate,
            max(half_cycle, 0.5 / p["publish_rate"]))

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
            # The first segment starts where the targets are now: none before motion is
            # enabled, which is then the reason to give.
            start = [target.get(n, math.nan) for n in names]
            if not all(map(math.isfinite, start)):
                self.core.check_motion()
            return start

        try:
            cmd = parse_joint_trajectory(msg, self.robot.joint_index, start_positions)
        except CommandMessageError as exc:
            self._throttle(f"rejected: {exc}", key=exc.reason)
            return
        except CommandRefused as exc:
            self._throttle(f"joint_trajectory: {exc.reason}", key=exc.key)
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

    def _on_read(self, status: HardwareStatus) -> None:
        """The loop thread's news of a read: wake the publisher once per publish period."""
        if self._publish_due(status.read_stamp):
            self._state_ready.set()

    def _start_state_publisher(self) -> None:
        self._state_ready = threading.Event()
        self._publisher_stop = threading.Event()
        self._state_thread = threading.Thread(target=self._state_publisher,
                                              name="skel_ros-state-publisher", daemon=True)
        self._state_thread.start()

    def _stop_state_publisher(self) -> None:
        thread, self._state_thread = self._state_thread, None
        if thread is not None:
            self._publisher_stop.set()
            self._state_ready.set()
            thread.join()

    def _state_publisher(self) -> None:
        """The publisher thread: one message per read that ``_on_read`` picked."""
        failed = False
        while True:
            self._state_ready.wait()
            self._state_ready.clear()
            if self._publisher_stop.is_set():
                return
            try:
                self._publish_state()
            except Exception as exc:  # noqa: BLE001 - the thread must go on; said once
                if not self.context.ok() or "context is invalid" in str(exc):
                    # ROS shut down (SIGINT) before the node's teardown: stop quietly. The
                    # message is checked too: rcl invalidates the context from its signal
                    # handler, and the wrapper's ok() has been seen to say True a moment later.
                    return
                if not failed:
                    failed = True
                    self.get_logger().error(f"publishing the state failed: {exc!r}\n"
                                            f"{traceback.format_exc()}")

    def _publish_state(self) -> None:
        """joint_states, /tf and controller_state of the newest read (publisher thread)."""
        self._check_connection()
        status = self.manager.status()
        if not math.isfinite(status.read_stamp) or status.read_stamp == self._published_read:
            return  # nothing measured since the last message: send nothing
        self._published_read = status.read_stamp
        self._publish_measured(status)
        if (self.trajectory_controller is not None
                and self._controller_state_due(status.read_stamp)):
            self.trajectory_controller.publish_state()

    def _publish_measured(self, status: HardwareStatus) -> None:
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

    @property
    def core(self) -> RobotCore:
        """The robot core: commands, trajectories (with observers), the command timeout."""
        return self.manager.core

    @property
    def manager(self) -> HardwareManager:
        """The manager (exists while the node is configured: inactive or active)."""
        if self._manager is None:
            raise RuntimeError("the hardware node is not configured")
        return self._manager

    @property
    def active(self) -> bool:
        """True between a successful activate and the next deactivate (or cleanup)."""
        return self._active

    def _on_enable(self, request: SetBool.Request, response: SetBool.Response,
                   ) -> SetBool.Response:
        if self._manager is None:
            response.success = False
            response.message = ("unconfigured: no bus is open; configure first"
                                " (lifecycle ~/change_state)")
            return response
        if request.data != self._active:  # the transition: activate / deactivate
            result = self.trigger_activate() if request.data else self.trigger_deactivate()
            response.success = result == SUCCESS
            response.message = self._transition_message
            return response
        # Re-enable while active (after an e-stop or a fault), torque off while inactive.
        req = (self.manager.enable(wait=_REQUEST_WAIT) if request.data
               else self.manager.disable(wait=_REQUEST_WAIT))
        response.success = req.done and req.ok
        response.message = req.message if req.done else "the control loop did not answer"
        return response

    def _on_estop(self, _request: Trigger.Request, response: Trigger.Response,
                  ) -> Trigger.Response:
        if self._manager is None:
            response.success = True
            response.message = "unconfigured: no bus is open (closed with torque off)"
            return response
        req = self.manager.estop(wait=1.0)
        response.success = req.done and req.ok
        response.message = req.message if req.done else "estop requested; loop did not answer"
        return response

    def _on_clear_faults(self, _request: Trigger.Request, response: Trigger.Response,
                         ) -> Trigger.Response:
        if self._manager is None:
            response.success = False
            response.message = "unconfigured: no bus is open; configure first"
            return response
        req = self.manager.clear_faults(wait=5.0)
        response.success = req.done and req.ok
        if not req.done:
            response.message = "clear_faults requested; the control loop did not answer"
        else:
            response.message = req.message + "".join(
                f"\n{name}: {what}" for name, what in req.details.items())
        return response

    def _on_estop_topic(self, msg: Bool) -> None:
        if msg.data and self._manager is not None:
            self._manager.estop()

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
        # The summary is computed now, so never STALE itself: a bus or actuator without
        # fresh data counts as WARN here (its bus says ERROR when it is down); a fault or an
        # e-stop is ERROR.
        levels = [b.level for b in status.buses] + [a.level for a in status.actuators]
        level = max((Level.WARN if x is Level.STALE else x for x in levels), default=Level.OK)
        if status.state in (MotionState.FAULT, MotionState.ESTOP):
            level = Level.ERROR
        return DiagnosticStatus(
            level=bytes([int(level)]), name=f"{self.get_name()}: hardware",
            message=f"{status.state.value}: {status.message}", hardware_id=self.skeleton.name,
            values=[KeyValue(key="state", value=status.state.value),
                    KeyValue(key="control_rate", value=f"{self.manager.control_rate:g}"),
                    KeyValue(key="cycles", value=str(status.cycles)),
                    KeyValue(key="overruns", value=str(status.overruns)),
                    KeyValue(key="guard_corrections", value=str(status.guard_corrections)),
                    KeyValue(key="watchdog_tripped", value=str(status.watchdog_tripped))])

    # ---------------------------------------------------------------- shutdown

    def shutdown(self) -> None:
        """Torque off, buses closed, emulators stopped (no transition). Idempotent."""
        self._teardown()
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(self._log_handler)

    def destroy_node(self) -> None:
        """Shut the hardware down, then destroy the node."""
        self.shutdown()
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


if __name__ == "__main__":
    main()
