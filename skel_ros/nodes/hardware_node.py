"""The hardware node: real (or emulated) actuators behind the simulation node's interface.

A managed (lifecycle) node, with ros2_control's meaning of the states:

* ``unconfigured``: nothing open; parameters declared, ``~/enable`` answers "configure first".
* ``configure``: read the model and the hardware YAML, start the emulators (``emulate``),
  start the control loop, which opens every bus with torque off; wait for the buses
  (``connect_timeout``). Fails (back to ``unconfigured``, everything closed) on a bad
  parameter, model or YAML, or when ``connect_timeout`` > 0 expires.
* ``inactive``: communicating, torque off: ``joint_states``, ``/tf``, ``/diagnostics`` are
  published from the measurements; commands are refused.
* ``activate``: torque on, holding the measured positions (the backend's enable). Fails
  (stays ``inactive``, torque off) when a bus is not connected, an actuator is in fault
  or outside its limits; the log says which.
* ``active``: torque on; commands, trajectories, FollowJointTrajectory. The backend's own
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

Thin: it builds a :class:`~skel_ros.hardware.backend.HardwareBackend` (passive: buses,
safety, reconnects) and the :class:`~skel_ros.core.Runner` over it
(:func:`~skel_ros.hardware.backend.hardware_runner`: the loop thread and the
:class:`~skel_ros.core.RobotCore`, the same as the simulation node's) and drives the
lifecycle through the runner. What it shares with the simulation node is the ROS shell
(:class:`~skel_ros.nodes.shell.RobotShell`: the parameter idiom, the command intake
``joint_commands`` / ``joint_trajectory`` / FollowJointTrajectory, the time base, state
publishing from the core's read); what is its own: the lifecycle, ``emulate``,
``~/enable``, ``~/estop``, ``~/clear_faults``, ``/diagnostics`` and the waits for the
buses. Commands and trajectories go to the core; enable, e-stop and clear_faults to the
backend. ROS callbacks only hand things over and read the latest status; they never
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
    reenable_velocity (double): after an enable, the fraction of each joint's velocity
        limits it may use until it reached a commanded goal, in (0, 1]; -1 = the YAML's
        ``reenable_velocity`` (default 0.2).
    exclusive_commands (bool): refuse a second command source on joints another source
        commands, until it has been quiet for ``command_timeout`` (the shell's parameter,
        :mod:`skel_ros.nodes.intake`).
    frame_prefix (string): prefix of every TF frame (``real/`` next to a simulation);
        default ``<namespace>/`` (the node's namespace, "" in the root namespace).
    emulate (bool): start each bus's emulator and drive it instead of the hardware.
    physics (bool): with ``emulate``, the emulated devices move one physics model of the
        robot (:mod:`skel_ros.physical`: Dynamixel, Feetech, MIT and CiA 402 buses) instead
        of a motor each.
    truth (string): with ``emulate``, a truth file (:mod:`skel_ros.model.truth`): how the
        real robot differs from the model; implies ``physics``. "" = none.
    publish_rate (double): rate of ``joint_states`` and ``/tf`` in Hz.
    publish_goals (bool): also publish ``written_goals`` (sensor_msgs/JointState): the
        position goals of every write to the buses, after the limits, stamped when they
        were written; ``skel-ros identify`` fits a servo's delay to them (``skel-ros
        sim-to-real --record-goals`` records them). Default false.
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
``joint_states``, ``/tf``, ``/tf_static``, ``robot_description``, ``/diagnostics`` (and
``written_goals`` with ``publish_goals``).
Services: ``~/enable`` (std_srvs/SetBool: true = enable, false = torque off; see above),
``~/estop`` (std_srvs/Trigger), ``~/clear_faults`` (std_srvs/Trigger: each protocol's
fault recovery; the answer lists what was done per actuator). FollowJointTrajectory for
MoveIt and arm tools: :mod:`skel_ros.nodes.follow_joint_trajectory`
(``trajectory_controller.*`` parameters). The lifecycle services (``~/change_state``,
``~/get_state``, ...) are rclpy's. Every topic, service and action except ``~/enable``,
``~/estop``, ``~/clear_faults`` and the lifecycle services exists only while configured.

``joint_states`` and ``/tf`` carry only what was measured (the core's read): a DOF whose
bus missed the last read is left out (and the transforms that depend on it) until a fresh
read, a DOF the hardware YAML maps to no actuator (and a joint of another skeleton) is
never published, and messages are stamped with the time of the read (the backend's clock
through a :class:`~skel_ros.nodes.time_base.TimeBase` into ROS time), never re-sent with
a newer stamp.

Threads: the executor (one thread: callbacks only hand things over), the control loop
(the runner's), and a state publisher, as ros2_control's realtime publisher: the loop
tells the node of each cycle (``_after_cycle``), which picks one read per ``publish_rate`` period
and wakes the publisher thread; it sends ``joint_states``, ``/tf`` and, at
``state_publish_rate``, ``controller_state`` from that read, right after it. No timer
polls the loop, and the executor, whose every wake-up costs a pass over all the node's
services, subscriptions and event handlers, wakes only for what it receives and for the
diagnostics. A publisher that falls behind sends only the newest read.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import traceback
from functools import wraps
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Bool
from std_srvs.srv import SetBool, Trigger

from skel_ros.hardware import HardwareBackend, Level, MotionState, load_hardware_config
from skel_ros.hardware.backend import (
    LIFECYCLE_WAIT,
    MAX_START_DELAY,
    WRITES_KEPT,
    LoopNotAnsweringError,
    hardware_runner,
)
from skel_ros.hardware.errors import ConfigError, HardwareError
from skel_ros.hardware.plugins import protocol
from skel_ros.model.limits import LimitError
from skel_ros.model.truth import TruthError, apply_truth, load_truth
from skel_ros.model.urdf import skeleton_namespace
from skel_ros.model.urdf_reader import parse_xacro_args
from skel_ros.nodes.errors import NodeSetupError
from skel_ros.nodes.parameters import Param, at_least, declare, read, required, within
from skel_ros.nodes.qos import GOALS_QOS, quiet_publisher_events
from skel_ros.nodes.shell import MODEL_PARAMETERS, RobotShell, load_world
from skel_ros.nodes.shutdown import run_node
from skel_ros.nodes.throttle import NodeLog, Throttle
from skel_ros.nodes.time_base import TimeBase
from skel_ros.resources import resolve

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rclpy.context import Context
    from rclpy.parameter import Parameter
    from rclpy.publisher import Publisher

    from skel_ros.core import RobotCore, Runner
    from skel_ros.core.commanders import Conflict
    from skel_ros.hardware import ActuatorDiagnostics, BusDiagnostics, HardwareStatus
    from skel_ros.hardware.backend import Request

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
# auto_resume: "" (the YAML's), or a bool ("-p auto_resume:=true"), or "true" / "false".
AUTO_RESUME: dict[str, bool | None] = {"": None, "true": True, "false": False}


def _auto_resume(value: Any) -> bool | None:  # noqa: ANN401 - a bool or a string
    """``auto_resume`` as the backend takes it: None (the YAML's) or a bool."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in AUTO_RESUME:
        return AUTO_RESUME[value]
    raise ValueError(f"must be true, false or '' (the YAML's), got {value!r}")


def _reenable_velocity(value: float) -> float:
    if not (value == -1.0 or 0.0 < value <= 1.0):
        raise ValueError(f"must be in (0, 1] (a fraction of the velocity limits) or -1 (the"
                         f" YAML's), got {value}")
    return value


def _command_timeout(value: float) -> float:
    if not (math.isfinite(value) and (value >= 0.0 or value == -1.0)):
        raise ValueError(f"must be >= 0 or -1, got {value}")
    return value


PARAMETERS: dict[str, Param] = {
    "skel_file": Param("", "the robot's model, any format load_model reads (path or"
                       " package://)", read_only=True, convert=required),
    **MODEL_PARAMETERS,
    "hardware_config": Param("", "joint -> actuator mapping YAML (config/hardware/*.yaml)",
                             read_only=True, convert=required),
    "control_rate": Param(0.0, "control loop rate in Hz; 0 = the YAML's control_rate",
                          read_only=True, number=True,
                          convert=within(0.0, MAX_CONTROL_RATE, unit="Hz")),
    "command_timeout": Param(-1.0, "seconds without a command before the safe state; -1 ="
                             " the YAML's, 0 = never", read_only=True, number=True,
                             convert=_command_timeout),
    "auto_resume": Param("", "resume by itself after a bus failure and reconnection: '' ="
                         " as in the YAML, true, false", read_only=True, dynamic=True,
                         convert=_auto_resume),
    "reenable_velocity": Param(-1.0, "after an enable: the fraction of each joint's velocity"
                               " limits it may use until it reached a commanded goal, in (0,"
                               " 1]; -1 = the YAML's reenable_velocity", read_only=True,
                               number=True, convert=_reenable_velocity),
    "emulate": Param(default=False, description="start emulated actuators (each protocol's"
                     " emulator) instead of hardware", read_only=True),
    "physics": Param(default=False, description="with emulate: the emulated devices move one"
                     " physics model of the robot (skel_ros.physical)", read_only=True),
    "truth": Param("", "with emulate: a truth file, how the real robot differs from the"
                   " model (implies physics); '' = none", read_only=True),
    "publish_rate": Param(50.0, "rate of joint_states and /tf in Hz", read_only=True,
                          number=True, convert=within(0.0, MAX_PUBLISH_RATE, open_low=True,
                                                      unit="Hz")),
    "publish_goals": Param(default=False, description="publish written_goals: the position"
                           " goals of every write to the buses, stamped when written (for"
                           " skel-ros identify)", read_only=True),
    "port": Param("", "serial port for every serial bus ('' = as in the YAML)",
                  read_only=True),
    "can_interface": Param("", "python-can interface for every CAN bus ('' = as in the"
                           " YAML)", read_only=True),
    "can_channel": Param("", "CAN channel for every CAN bus ('' = as in the YAML)",
                         read_only=True),
    "connect_timeout": Param(0.0, "seconds configure waits for every bus, else it fails (an"
                             " unmanaged start exits with code 1); 0 = wait up to 5 s, then"
                             " keep trying (an ERROR every 10 s)", read_only=True,
                             number=True, convert=at_least(0.0)),
    "max_trajectory_delay": Param(MAX_START_DELAY, "a trajectory stamped further ahead than"
                                  " this (s) is refused", read_only=True, number=True,
                                  convert=at_least(0.0)),
    "autostart": Param("inactive", "the lifecycle state the node brings itself to at start:"
                       " 'inactive' (torque off), 'active' (torque on) or 'unconfigured' (a"
                       " lifecycle manager drives it)", read_only=True, choices=AUTOSTART),
}
"""The node's parameters (:mod:`skel_ros.nodes.parameters`); numbers and ``auto_resume``
are checked at configure, the types of the others when the node starts."""


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


class _LoopNews:
    """What the runner's loop tells the node (a :class:`~skel_ros.core.LoopListener`)."""

    def __init__(self, node: HardwareNode) -> None:
        self._node = node

    def next_event(self) -> float:
        return math.inf  # the hardware runs one cycle at a time: no batches to end

    def after_cycles(self, now: float, count: int) -> None:  # noqa: ARG002
        self._node._after_cycle()  # noqa: SLF001 - the node's own listener

    def flush(self) -> None:
        pass  # nothing waits: the publisher thread sends

    def on_lagging(self) -> None:
        pass  # a grid pacer skips late deadlines (counted as overruns)

    def on_error(self, exc: Exception) -> bool:
        return self._node._loop_failed(exc)  # noqa: SLF001


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

    Raises:
        NodeSetupError: a parameter, the model or the hardware configuration is invalid
            (with ``autostart`` ``inactive`` or ``active``; else the configure transition
            fails and logs why).
        HardwareNotConnectedError: autostart's configure: ``connect_timeout`` expired.
    """

    def __init__(self, *, parameter_overrides: Sequence[Parameter[Any]] | None = None,
                 node_name: str = "hardware_node", context: Context | None = None) -> None:
        super().__init__(node_name, parameter_overrides=list(parameter_overrides or []),
                         context=context)
        self._emulators: list[Any] = []
        self._state_thread: threading.Thread | None = None
        self._published_read = math.nan
        self._backend: HardwareBackend | None = None
        self._runner: Runner | None = None
        self._active = False  # torque on by the activate transition (until deactivate)
        self._transition_message = ""  # why the last transition failed, for ~/enable
        self._configure_error: NodeSetupError | HardwareNotConnectedError | None = None
        self.shell: RobotShell | None = None
        """The ROS side shared with the simulation node (exists while configured)."""
        self._goals_pub: Publisher | None = None  # written_goals, with publish_goals
        self._writes_lost = 0
        self._warn = Throttle(self.get_logger().warning)
        self._log_handler = _RosLogHandler(self)
        for name in _LOGGERS:
            logging.getLogger(name).addHandler(self._log_handler)
            logging.getLogger(name).setLevel(logging.INFO)
        try:
            declare(self, PARAMETERS)  # the types of strings and bools: checked now
            autostart = read(self, {"autostart": PARAMETERS["autostart"]})["autostart"]
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

    def _autostart(self, autostart: str) -> None:
        if autostart == "unconfigured":
            self.get_logger().info("unconfigured: waiting for a lifecycle manager"
                                   " (~/change_state: configure, then activate)")
            return
        if self.trigger_configure() != SUCCESS:
            raise self._configure_error or NodeSetupError(
                f"configure failed: {self._transition_message or 'see the log'}")
        if autostart == "active" and self.trigger_activate() != SUCCESS:
            where = ("inactive (torque off): ~/enable to retry" if self._backend is not None
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
        try:
            self.runner.activate()
        except HardwareError as exc:
            if isinstance(exc, LoopNotAnsweringError):  # it may still do it: end with torque off
                self.backend.disable(wait=_REQUEST_WAIT)
            self._transition_message = str(exc)
            self.get_logger().error(f"activate failed: {exc}; torque off")
            return FAILURE
        self._active = True
        self._transition_message = self.backend.message
        self.get_logger().info(f"active: {self._transition_message}")
        return SUCCESS

    @_transition("deactivate")
    def on_deactivate(self) -> TransitionCallbackReturn:
        """Torque off; a torque off not confirmed is an error (``on_error``)."""
        self._active = False
        try:
            self.runner.deactivate(wait=LIFECYCLE_WAIT)
        except HardwareError as exc:
            self._transition_message = str(exc)
            self.get_logger().error(f"deactivate: torque off not confirmed: {exc}")
            return ERROR
        self._transition_message = "torque off"
        self.get_logger().info("inactive: torque off")
        return SUCCESS

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

        Idempotent; never raises for the hardware part (the runner's cleanup never does).
        """
        self._active = False
        if self._runner is not None:
            self._runner.cleanup()  # the loop stops; torque off, every bus closed
        self._stop_state_publisher()  # after the loop: nothing wakes it any more
        self._runner = self._backend = None
        for emulator in self._emulators:
            emulator.stop()
        self._emulators.clear()
        if self.shell is not None:
            self.shell.destroy()
            self.shell = None
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
        p = read(self, PARAMETERS)
        world = load_world(self, p["skel_file"], p["model_args"], fixed_base=p["fixed_base"])
        try:
            config = load_hardware_config(resolve(p["hardware_config"]))
            config = config.with_overrides(port=p["port"], can_interface=p["can_interface"],
                                           can_channel=p["can_channel"])
            skeleton = config.select_skeleton(world)
            bound = config.bind(skeleton)
        except (FileNotFoundError, ConfigError, LimitError, ValueError) as exc:
            raise NodeSetupError(str(exc)) from None
        if p["emulate"]:
            physics = None
            if p["physics"] or p["truth"]:
                if p["truth"]:  # its mistakes said here, at their line
                    try:
                        truth = load_truth(resolve(p["truth"]))
                        apply_truth(world if truth.model is None else
                                    load_world(self, str(truth.model), "",
                                               fixed_base=False), truth)
                    except (TruthError, FileNotFoundError) as exc:
                        raise NodeSetupError(f"truth: {exc}") from None
                physics = {"model": str(resolve(p["skel_file"])),
                           "model_args": parse_xacro_args(p["model_args"]),
                           "fixed_base": p["fixed_base"],
                           "truth": str(resolve(p["truth"])) if p["truth"] else None}
            config = self._start_emulators(config, bound, physics)
            bound = config.bind(skeleton)
        try:
            self._backend = HardwareBackend(
                bound, control_rate=p["control_rate"] or None,
                command_timeout=None if p["command_timeout"] < 0 else p["command_timeout"],
                auto_resume=p["auto_resume"],
                reenable_velocity=None if p["reenable_velocity"] < 0 else p["reenable_velocity"],
                record_writes=p["publish_goals"])
        except (ConfigError, LimitError) as exc:
            raise NodeSetupError(str(exc)) from None
        self._runner = hardware_runner(self._backend, log=NodeLog(self.get_logger()),
                                       listener=_LoopNews(self),
                                       max_start_delay=p["max_trajectory_delay"])
        self.world, self.skeleton, self.bound = world, skeleton, bound
        # Header stamps are ROS time; the core runs on the backend's clock.
        shell = self.shell = RobotShell(self, self.core, world, frame_prefix=p["frame_prefix"],
                                        time_base=TimeBase.clock(self, self._backend.now),
                                        joint_prefix=skeleton_namespace(world, skeleton))
        self._create_interfaces(p, shell.trajectory_controller.settings.state_rate)
        self._connected_logged = False
        self._heard_read = math.nan
        self._start_state_publisher()
        self._runner.configure()  # the loop runs: it opens the buses, torque off
        self.get_logger().info(
            f"connecting {len(config.buses)} bus(es){' (emulated)' if p['emulate'] else ''}"
            f" for {len(bound.names)} DOF(s) of {skeleton.name!r}, control loop at"
            f" {self._backend.control_rate:g} Hz; torque stays off until activate"
            " (or ~/enable)")
        self._wait_for_buses(p["connect_timeout"])

    def _wait_for_buses(self, connect_timeout: float) -> None:
        """Wait for every bus to connect: ``connect_timeout``, or CONNECT_WAIT if it is 0.

        Raises:
            HardwareNotConnectedError: ``connect_timeout`` > 0 expired.
        """
        backend = self.backend
        end = backend.now() + (connect_timeout or CONNECT_WAIT)
        while True:
            status = backend.status()
            if status.buses and all(b.connected for b in status.buses):
                self._check_connection()
                return
            if backend.now() >= end:
                break
            time.sleep(_CONNECT_POLL)  # the loop thread connects; nothing to spin here
        missing = "; ".join(f"{b.name}: {b.message}" for b in status.buses if not b.connected)
        if connect_timeout > 0:
            raise HardwareNotConnectedError(f"not connected after connect_timeout: {missing}")
        self.get_logger().warning(f"not every bus connected after {CONNECT_WAIT:g} s; still"
                                  f" trying (activate needs them): {missing}")

    def _start_emulators(self, config: Any, bound: Any,  # noqa: ANN401 - HardwareConfig
                         physics: dict[str, Any] | None) -> Any:  # noqa: ANN401
        """Start each bus's emulator (actuators at the model's initial positions).

        Each joint starts inside its limits
        (:meth:`~skel_ros.hardware.config.BoundConfig.emulated_start`).

        With ``physics`` (the ``physics`` option but its joints), the physics-backed ones:
        the buses move one world of the robot (:mod:`skel_ros.physical.host`), unless
        buses of worlds apart are coupled (refused, before any starts); the log says
        each bus's world and where its emulator runs.
        """
        from skel_ros.emulation import emulated_transport, emulator_for
        from skel_ros.physical.host import emulator_places
        from skel_ros.physical.option import emulator_options

        initial = bound.emulated_start()
        buses = [(spec, config.joints_on(spec.name)) for spec in config.buses]
        buses = [(spec, maps) for spec, maps in buses if maps]
        worlds = None if physics is None else _physics_worlds(bound, buses)
        requests = []
        for spec, maps in buses:
            try:
                plugin = protocol(spec.protocol)
                start = emulator_for(spec.protocol)
            except ConfigError as exc:
                raise NodeSetupError(f"bus {spec.name!r}: no emulator: {exc}") from None
            requests.append((spec, start, emulated_transport(plugin, spec.transport),
                             [m.actuator for m in maps], emulator_options(maps, initial, physics)))
        emulators = []
        if worlds is None:
            for spec, start, transport, actuators, options in requests:
                try:
                    emulator = start(transport, actuators, options)
                except HardwareError as exc:
                    raise NodeSetupError(f"bus {spec.name!r}: emulator failed to start: {exc}"
                                         ) from None
                self._emulators.append(emulator)  # stopped at cleanup, even if a later fails
                emulators.append(emulator)
        else:
            emulators = _start_physical(requests)
            self._emulators.extend(emulators)
        places = emulator_places({spec.name: spec.protocol for spec, *_ in requests})
        for (spec, *_), emulator in zip(requests, emulators, strict=True):
            config = config.with_transport(spec.name, emulator.transport)
            world = (f"; physics: {worlds[spec.name]}, run by {places[spec.name]}"
                     if worlds and len(requests) > 1 else "")
            self.get_logger().info(f"bus {spec.name!r}: emulated {spec.protocol} actuators"
                                   f" at {dict(emulator.transport)}{world}")
        return config

    def _create_interfaces(self, p: dict[str, Any], state_rate: float) -> None:
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics",
                                                      DIAGNOSTICS_QOS,
                                                      event_callbacks=quiet_publisher_events())
        self.create_timer(_DIAGNOSTICS_PERIOD, self._publish_diagnostics)
        # The goals as written go out with the reads (the publisher thread), every one in
        # order, unless it falls WRITES_KEPT writes behind (said: _publish_goals).
        self._goals_pub = (self.create_publisher(JointState, "written_goals", GOALS_QOS,
                                                 event_callbacks=quiet_publisher_events())
                           if p["publish_goals"] else None)
        self._writes_lost = 0  # this configure's backend's count
        prefix = skeleton_namespace(self.world, self.skeleton)
        self._goal_names = [prefix + n for n in self.backend.names]
        # The loop's reads pick the moments to publish (_after_cycle): one read per period of
        # publish_rate, on a fixed grid; a read may come up to half a loop period early.
        half_cycle = 0.5 * self.backend.period
        self._publish_due = _Decimator(1.0 / p["publish_rate"], half_cycle)
        # controller_state goes with joint_states (same read), at its own rate.
        self._controller_state_due = _Decimator(1.0 / state_rate,
                                                max(half_cycle, 0.5 / p["publish_rate"]))

    # ---------------------------------------------------------------- the loop's news

    def _after_cycle(self) -> None:
        """The loop thread's news of a cycle: a new read wakes the publisher (once per period)."""
        read_stamp = self.core.read().stamp
        if read_stamp != self._heard_read and math.isfinite(read_stamp):
            self._heard_read = read_stamp
            if self._publish_due(read_stamp):
                self._state_ready.set()

    def _loop_failed(self, exc: Exception) -> bool:
        """A cycle raised (a bug: the backend handles bus errors): say it; the loop pauses."""
        self.get_logger().error(f"the control loop failed and stopped: {exc!r}; the devices'"
                                " own watchdogs stop them; configure again to recover")
        return True

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
        """The publisher thread: one message per read that ``_after_cycle`` picked."""
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
        shell = self.shell
        state = self.core.read()
        if shell is None or not math.isfinite(state.stamp) or state.stamp == self._published_read:
            return  # nothing measured since the last message: send nothing
        self._published_read = state.stamp
        shell.publish(state)
        self._publish_goals(shell)
        if self._controller_state_due(state.stamp):
            shell.trajectory_controller.publish_state()

    def _publish_goals(self, shell: RobotShell) -> None:
        """``written_goals``: each write since the last message (publisher thread)."""
        if self._goals_pub is None:
            return
        backend = self.backend
        if backend.writes_lost > self._writes_lost:  # the publisher fell behind: said
            self._writes_lost = backend.writes_lost
            self._warn(f"written_goals: {self._writes_lost} write(s) in all were not"
                       " published (the publisher fell more than"
                       f" {WRITES_KEPT} writes behind the loop)", key="written_goals lost")
        for written in backend.take_writes():
            sent = np.isfinite(written.positions)
            msg = JointState()
            msg.header.stamp = shell.time_base.stamp(written.stamp)
            msg.name = [n for n, s in zip(self._goal_names, sent, strict=True) if s]
            msg.position = written.positions[sent].tolist()
            self._goals_pub.publish(msg)

    def _check_connection(self) -> None:
        if self._connected_logged:
            return
        status = self.backend.status()
        if status.buses and all(b.connected for b in status.buses):
            self._connected_logged = True
            self.get_logger().info(f"every bus connected ({status.state.value}): "
                                   f"{status.message}")

    @property
    def core(self) -> RobotCore:
        """The robot core: commands, trajectories (with observers), the command timeout."""
        return self.runner.core

    @property
    def runner(self) -> Runner:
        """The loop and the lifecycle (exists while the node is configured)."""
        if self._runner is None:
            raise RuntimeError("the hardware node is not configured")
        return self._runner

    @property
    def backend(self) -> HardwareBackend:
        """The buses and their safety (exists while the node is configured)."""
        if self._backend is None:
            raise RuntimeError("the hardware node is not configured")
        return self._backend

    @property
    def active(self) -> bool:
        """True between a successful activate and the next deactivate (or cleanup)."""
        return self._active

    def _on_enable(self, request: SetBool.Request, response: SetBool.Response,
                   ) -> SetBool.Response:
        if self._backend is None:
            return _answer(response, ok=False, message="unconfigured: no bus is open;"
                           " configure first (lifecycle ~/change_state)")
        if request.data != self._active:  # the transition: activate / deactivate
            result = self.trigger_activate() if request.data else self.trigger_deactivate()
            return _answer(response, ok=result == SUCCESS, message=self._transition_message)
        # Re-enable while active (after an e-stop or a fault), torque off while inactive.
        req = (self.backend.enable(wait=_REQUEST_WAIT) if request.data
               else self.backend.disable(wait=_REQUEST_WAIT))
        return _answered(response, req, "the control loop did not answer")

    def _on_estop(self, _request: Trigger.Request, response: Trigger.Response,
                  ) -> Trigger.Response:
        if self._backend is None:
            return _answer(response, ok=True,
                           message="unconfigured: no bus is open (closed with torque off)")
        return _answered(response, self.backend.estop(wait=1.0),
                         "estop requested; loop did not answer")

    def _on_clear_faults(self, _request: Trigger.Request, response: Trigger.Response,
                         ) -> Trigger.Response:
        if self._backend is None:
            return _answer(response, ok=False,
                           message="unconfigured: no bus is open; configure first")
        req = self.backend.clear_faults(wait=5.0)
        return _answered(response, req, "clear_faults requested; the control loop did not"
                         " answer", req.message + "".join(f"\n{name}: {what}"
                                                          for name, what in req.details.items()))

    def _on_estop_topic(self, msg: Bool) -> None:
        if msg.data and self._backend is not None:
            self._backend.estop()

    # ---------------------------------------------------------------- diagnostics

    def _publish_diagnostics(self) -> None:
        status = self.backend.status()
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
        core = self.core
        conflict = core.conflict()
        activity = core.activity()
        if conflict is not None:  # two sources on the same joints, recently
            level = max(level, Level.WARN)
        if status.state in (MotionState.FAULT, MotionState.ESTOP):
            level = Level.ERROR
        values = [KeyValue(key="state", value=status.state.value),
                  KeyValue(key="activity", value=activity),
                  KeyValue(key="control_rate", value=f"{self.backend.control_rate:g}"),
                  KeyValue(key="cycles", value=str(status.cycles)),
                  KeyValue(key="overruns", value=str(self._overruns())),
                  KeyValue(key="guard_corrections", value=str(status.guard_corrections)),
                  KeyValue(key="watchdog_tripped", value=str(status.watchdog_tripped)),
                  KeyValue(key="exclusive_commands", value=str(core.exclusive_commands)),
                  KeyValue(key="refused_commands", value=str(core.refused_commands)),
                  KeyValue(key="reenable_bounded", value=", ".join(status.reenable_bounded)),
                  # Followers without an actuator: published, but derived from their leader.
                  KeyValue(key="derived_joints", value=", ".join(status.derived))]
        if conflict is not None:
            values.append(KeyValue(key="second_source", value=str(conflict)))
        return DiagnosticStatus(
            level=bytes([int(level)]), name=f"{self.get_name()}: hardware",
            message=summary_message(status.state, status.message, activity,
                                    conflict=conflict, bounded=status.reenable_bounded),
            hardware_id=self.skeleton.name, values=values)

    def _overruns(self) -> int:
        """Cycles that ended after the next deadline (the runner's grid pacer counts them)."""
        return int(getattr(self.runner.pacer, "overruns", 0))

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


def summary_message(state: MotionState, message: str, activity: str, *,
                    conflict: Conflict | None = None, bounded: Sequence[str] = ()) -> str:
    """The diagnostics summary: ``<state>: <what the node is doing now>``, no word twice.

    Enabled, it is the core's activity (``enabled: tracking a joint_commands stream from
    /teleop``, ``enabled: following a trajectory from ...``, ``enabled: holding``), with
    the joints the re-enable bound still slows and a second source, when there is one;
    otherwise the backend's message (``estop: torque off; enable to move again``,
    ``disabled: torque off``, ``fault: bus 'arm_bus' failed: ...``), its first words
    dropped when they repeat the state.
    """
    word = state.value
    if state is MotionState.ENABLED:
        detail = activity
        if bounded:
            detail += f" (re-enable: {', '.join(bounded)} at reenable_velocity)"
        if conflict is not None:
            detail += f"; second source: {conflict}"
    else:
        detail = message
        for prefix in (f"{word}: ", f"{word}; ", "emergency stop: "):
            if detail.startswith(prefix):
                detail = detail[len(prefix):]
    return f"{word}: {detail}" if detail else word


class _Response(Protocol):
    """A std_srvs answer (SetBool, Trigger)."""

    success: bool
    message: str


_R = TypeVar("_R", bound=_Response)


def _answer(response: _R, *, ok: bool, message: str) -> _R:
    response.success = ok
    response.message = message
    return response


def _answered(response: _R, req: Request, unanswered: str, message: str | None = None) -> _R:
    """The answer of a request to the loop: its outcome, or that it was not answered."""
    if not req.done:
        return _answer(response, ok=False, message=unanswered)
    return _answer(response, ok=req.ok, message=req.message if message is None else message)


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
    if act.effort is not None:
        values.append(KeyValue(key="effort", value=f"{act.effort:.4g}"))
    values += [KeyValue(key=f"errors.{k}", value=str(v)) for k, v in act.errors.items()]
    return DiagnosticStatus(level=bytes([int(act.level)]), name=f"{node}: {act.name}",
                            message=act.message, hardware_id=f"{act.bus}/{act.id}",
                            values=values)


def _physics_worlds(bound: Any, buses: list[tuple[Any, Any]]) -> dict[str, str]:  # noqa: ANN401
    """Bus name -> the physics world its emulator moves (``buses``: ``(spec, maps)``).

    Raises:
        NodeSetupError: buses of worlds apart are coupled (:func:`skel_ros.physical.option.
            coupled_buses`).
    """
    from skel_ros.physical.host import world_names
    from skel_ros.physical.option import coupled_buses

    worlds = world_names({spec.name: spec.protocol for spec, _ in buses})
    coupled = coupled_buses(bound.skeleton, {spec.name: [m.name for m in maps]
                                             for spec, maps in buses}, worlds)
    if coupled:
        raise NodeSetupError(f"physics emulation: {coupled}")
    return worlds


def _start_physical(requests: list[tuple[Any, ...]]) -> list[Any]:
    """The physics-backed emulators of ``requests``, in order: every one started, or none.

    Each request: ``(spec, _, transport, actuators, options)``.

    Raises:
        NodeSetupError: a bus's emulator does not exist or cannot start.
    """
    from skel_ros.physical.host import BusEmulation, EmulatorStartError, start_emulators

    try:
        return start_emulators([BusEmulation(spec.name, spec.protocol, transport, actuators,
                                             options)
                                for spec, _, transport, actuators, options in requests])
    except EmulatorStartError as exc:
        raise NodeSetupError(f"bus {exc.bus!r}: emulator failed to start: {exc}") from None


def main(args: Sequence[str] | None = None) -> None:
    """Console script ``hardware_node``."""
    # A second SIGINT (a terminal's Ctrl-C under launch) cannot cut the torque-off short.
    run_node("hardware_node", HardwareNode, args,
             exit_codes={HardwareNotConnectedError: EXIT_NOT_CONNECTED})


if __name__ == "__main__":
    main()
