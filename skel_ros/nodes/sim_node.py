"""The simulation node: a :class:`~skel_ros.sim.SimEngine` behind ROS topics.

Thin: it declares and validates parameters, converts messages
(:mod:`skel_ros.nodes.commands`, :mod:`skel_ros.nodes.robot_publisher`) and hands
commands and trajectories to a :class:`~skel_ros.core.RobotCore` over a
:class:`~skel_ros.sim.backend.EngineBackend` (the arbitration, the limits gate, the
trajectory follower and the command timeout are the core's, as on hardware). A stepping
thread advances the engine so that simulated time follows
wall time times ``real_time_factor`` (scheduled against an anchor, so it does not
drift), publishing on a schedule of simulated time; the executor thread runs the
callbacks. The stamps follow ``time_base``: ``sim`` (the default) stamps simulated time
and publishes it on ``/clock``; ``wall`` locks the simulation to the wall clock
(real-time factor 1), stamps every state with the ROS time it stands for and publishes
no ``/clock``, so it shares one time base with the hardware node (sim-to-real).
docs/sim_node.md is the user documentation.

Parameters (read-only ones are fixed at start):
    skel_file (string, read-only): the world (path or ``package://skel_ros/...``), in
        any format ``load_model`` reads (SKEL, URDF/xacro, SMURF, Phobos, CASPR).
    model_args (string, read-only): xacro arguments of a ``.xacro`` skel_file,
        ``"name:=value name:=value"``.
    fixed_base (bool, read-only): URDF/SMURF: weld the root link to the world (default:
        a floating joint, unless the root link is ``world``).
    gains_file (string, read-only): controller gains YAML ("" = built-in defaults).
    frame_prefix (string, read-only): prefix of every TF frame, the world included;
        default ``<namespace>/`` (the node's namespace, "" in the root namespace).
    engine (string, read-only): ``dart`` (default) or ``mujoco``: the engine that steps
        the world (:data:`skel_ros.sim.ENGINES`); same topics, services, names and
        command semantics with either.
    time_base (string, read-only): ``sim`` = stamps are simulated time, published on
        ``/clock``; ``wall`` = the simulation runs locked to the wall clock (real-time
        factor 1) and stamps the ROS time each state stands for; no ``/clock``.
    real_time_factor (double): simulated seconds per wall second; 0 = as fast as possible
        (time_base wall: 1, fixed).
    joint_states_rate (double): Hz of simulated time.
    tf_rate (double): Hz of simulated time.
    enforce_limits (bool): the engine's position-limit constraints (velocity and
        acceleration joints stopped on their limits too).
    paused (bool): stop stepping (``~/step`` steps once).
    command_timeout (double): simulated seconds without a command after which all
        commands are dropped (every DOF goes to its actuator's safe state:
        :mod:`skel_ros.sim.backend`); 0 = never.
    hold_initial (bool, read-only): at start and after ``~/reset``, hold every actuated
        DOF at its ``<init_pos>`` with its position controller, as a powered robot
        does before its first command; false = every DOF in its actuator's safe state
        until commanded (force and passive joints limp).

Topics: publishes ``joint_states``, ``/tf``, ``/tf_static``, ``robot_description``,
``~/markers``, ``/clock`` (time_base sim only), and ``~/urdf_joint_states`` for worlds
with ball / free joints; subscribes ``joint_commands`` (sensor_msgs/JointState) and
``joint_trajectory`` (trajectory_msgs/JointTrajectory). Services: ``~/reset``,
``~/pause``, ``~/step``. FollowJointTrajectory for MoveIt and arm tools:
:mod:`skel_ros.nodes.follow_joint_trajectory` (``trajectory_controller.*`` parameters).
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import rclpy
from rcl_interfaces.msg import (  # type: ignore[import-untyped]
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory

from skel_ros.core import CommandRefused, RobotCore
from skel_ros.model import SkelError, load_model
from skel_ros.model.urdf import UrdfExportError
from skel_ros.model.urdf_reader import parse_xacro_args
from skel_ros.nodes.commands import parse_joint_command, parse_joint_trajectory
from skel_ros.nodes.errors import CommandMessageError, NodeSetupError
from skel_ros.nodes.follow_joint_trajectory import FollowJointTrajectoryServer
from skel_ros.nodes.names import NAMESPACE_FRAME_PREFIX, namespace_frame_prefix, stamp_from_seconds
from skel_ros.nodes.qos import COMMAND_QOS
from skel_ros.nodes.robot_publisher import ClockPublisher, RobotPublisher
from skel_ros.nodes.throttle import Throttle
from skel_ros.resources import resolve
from skel_ros.sim import ENGINES, SimEngine, SimError, load_gains
from skel_ros.sim.backend import EngineBackend

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from rclpy.context import Context

__all__ = ["PARAMETERS", "RealTimePacer", "SimNode", "main"]

MAX_RATE = 10_000.0  # Hz, joint_states_rate / tf_rate
MAX_REAL_TIME_FACTOR = 1_000.0
CLOCK_MIN_RATE = 100.0  # Hz of simulated time: /clock at least this often
_BATCH_WALL = 0.005  # s: the stepping thread lets go of the engine at least this often
# s of wall time behind schedule before the schedule is re-anchored: within it, the
# simulation catches up (time_base wall: a stamp, the time its step was due, is at most
# this much plus one batch older than the step); beyond it, the time is lost.
_MAX_LAG = 0.25
# s: ahead of the schedule, the stepping thread sleeps at least this long and then takes
# the steps that fell due meanwhile in one batch (their stamps are still the times they
# were due), rather than waking once per step: at a 1 ms step on a loaded 2-core machine
# the arm's node went from ~51 % to ~43 % of a core under a 100 Hz command stream.
_MIN_SLEEP = 0.002
_PUBLISH_BATCH = 8  # steps whose messages wait at most (fewer than the depth-10 queues)
TIME_BASES = ("sim", "wall")


@dataclass(frozen=True)
class _Param:
    default: bool | float | str
    description: str
    read_only: bool = False
    number: bool = False  # a double that may be given as an integer


PARAMETERS: dict[str, _Param] = {
    "skel_file": _Param("package://skel_ros/examples/arm.skel",
                        "the world to simulate, any format load_model reads: path or"
                        " package:// URI",
                        read_only=True),
    "model_args": _Param("", "xacro arguments of a .xacro skel_file: 'name:=value ...'",
                         read_only=True),
    "fixed_base": _Param(default=False,
                         description="URDF/SMURF skel_file: weld the root link to the world "
                                     "(default: floating, unless the root link is 'world')",
                         read_only=True),
    "gains_file": _Param("package://skel_ros/config/sim_gains.yaml",
                         "position-controller gains YAML ('' = built-in defaults)",
                         read_only=True),
    "frame_prefix": _Param(NAMESPACE_FRAME_PREFIX,
                           "prefix of every TF frame, the world frame included (e.g. 'sim/'"
                           f" -> sim/world); {NAMESPACE_FRAME_PREFIX!r} = the node's namespace"
                           " and '/' ('' in the root namespace)", read_only=True),
    "engine": _Param("dart", f"the engine that steps the world: {', '.join(ENGINES)}",
                     read_only=True),
    "time_base": _Param("sim", "'sim': stamps are simulated time, published on /clock; "
                               "'wall': locked to the wall clock (real-time factor 1), stamps "
                               "are ROS time, no /clock (one time base with the hardware)",
                        read_only=True),
    "real_time_factor": _Param(1.0, "simulated seconds per wall-clock second; 0 = as fast "
                                    f"as possible; at most {MAX_REAL_TIME_FACTOR:g} "
                                    "(time_base wall: 1, fixed)",
                               number=True),
    "joint_states_rate": _Param(100.0, "joint_states rate in Hz of simulated time, "
                                       f"(0, {MAX_RATE:g}]", number=True),
    "tf_rate": _Param(50.0, f"/tf rate in Hz of simulated time, (0, {MAX_RATE:g}]",
                      number=True),
    "enforce_limits": _Param(default=True,
                             description="the engine's position-limit constraints on every "
                                         "limited DOF (velocity and acceleration joints "
                                         "stopped on their limits too)"),
    "paused": _Param(default=False, description="stop stepping; ~/step advances one step"),
    "command_timeout": _Param(0.0, "simulated seconds without a command after which every "
                                   "command is dropped (each DOF to its actuator's safe"
                                   " state: force/passive limp, servo/velocity held still,"
                                   " acceleration braked to rest); 0 = never",
                              number=True),
    "hold_initial": _Param(default=True,
                           description="hold every actuated DOF at its initial position "
                                       "until commanded (false: each DOF in its actuator's "
                                       "safe state until commanded; force/passive limp)",
                           read_only=True),
}


def check_parameter(name: str, value: Any) -> tuple[Any, str]:  # noqa: ANN401 - any type
    """Check one parameter value.

    Returns:
        (the value converted, "") or (None, why it is refused).
    """
    spec = PARAMETERS[name]
    if spec.number:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"{name} must be a number, got {value!r}"
        v = float(value)
        if name == "real_time_factor":
            ok = math.isfinite(v) and 0.0 <= v <= MAX_REAL_TIME_FACTOR
            problem = (f"real_time_factor must be in [0, {MAX_REAL_TIME_FACTOR:g}] (0 = as"
                       f" fast as possible), got {value}")
            return (v, "") if ok else (None, problem)
        if name in ("joint_states_rate", "tf_rate"):
            ok = math.isfinite(v) and 0.0 < v <= MAX_RATE
            problem = f"{name} must be in (0, {MAX_RATE:g}] Hz, got {value}"
            return (v, "") if ok else (None, problem)
        ok = math.isfinite(v) and v >= 0.0
        problem = f"{name} must be finite and >= 0 (0 = never), got {value}"
        return (v, "") if ok else (None, problem)
    expected = type(spec.default)
    if not isinstance(value, expected):
        return None, f"{name} must be a {expected.__name__}, got {value!r}"
    choices = {"engine": ENGINES, "time_base": TIME_BASES}.get(name)
    ok = choices is None or value in choices
    return (value, "") if ok else (
        None, f"{name} must be one of {', '.join(choices or ())}, got {value!r}")


class RealTimePacer:
    """When to step: simulated time follows ``anchor + factor * (wall - wall anchor)``.

    Steps are scheduled against an anchor, not one after the other, so rounding and
    sleeping late do not add up (no drift). Falling more than ``max_lag`` wall seconds
    behind (a world slower than real time) re-anchors the schedule at the present, so
    the simulation then runs as fast as it can instead of rushing to catch up; the
    wall time dropped is counted in :attr:`lost`.

    A clock that steps back (the system clock of ``time_base`` wall, set back) re-anchors
    the schedule too, instead of holding the simulation until it catches up.

    Args:
        factor: Real-time factor; 0 = as fast as possible.
        clock: Wall seconds: monotonic, or the ROS clock for ``time_base`` wall (injected
            for tests).
        max_lag: Wall seconds behind schedule before re-anchoring.
    """

    def __init__(self, factor: float, clock: Callable[[], float] = time.monotonic,
                 max_lag: float = _MAX_LAG) -> None:
        self._clock = clock
        self._max_lag = max_lag
        self.factor = float(factor)
        # (wall, simulated) time of the anchor: one attribute, replaced whole, so another
        # thread reading it (wall_at) never sees half of a re-anchoring.
        self._anchor = (clock(), 0.0)
        self.lagging = False
        """True after the last :meth:`due` found the schedule more than ``max_lag`` behind."""
        self.lost = 0.0
        """Wall seconds skipped by re-anchoring when behind (the simulation did not run)."""

    def anchor(self, sim_time: float, factor: float | None = None) -> None:
        """Restart the schedule at ``sim_time`` now (after a pause, reset or factor change)."""
        if factor is not None:
            self.factor = float(factor)
        self._anchor = (self._clock(), float(sim_time))

    def wall_at(self, sim_time: float) -> float:
        """The clock's time at which ``sim_time`` is scheduled (factor > 0)."""
        wall, sim = self._anchor
        return wall + (sim_time - sim) / self.factor

    def due(self, sim_time: float, time_step: float) -> int:
        """How many steps are due now at ``sim_time`` (unbounded when the factor is 0)."""
        if self.factor == 0.0:
            self.lagging = False
            return sys.maxsize
        now = self._clock()
        wall, sim = self._anchor
        target = sim + (now - wall) * self.factor
        behind = (target - sim_time) / self.factor  # wall seconds
        self.lagging = behind > self._max_lag
        if self.lagging:  # one step due now (not one step from now: stamps never ahead)
            self._anchor = (now - time_step / self.factor, sim_time)
            self.lost += behind - time_step / self.factor
            return 1
        if behind < -time_step / self.factor - self._max_lag:  # the clock went back
            self._anchor = (now, sim_time)
            return 0
        return max(0, math.floor((target - sim_time) / time_step + 1e-9))

    def wait(self, sim_time: float, time_step: float) -> float:
        """Wall seconds until the next step is due (0 when it already is)."""
        if self.factor == 0.0:
            return 0.0
        return max(0.0, self.wall_at(sim_time + time_step) - self._clock())


class _Schedule:
    """Publish every ``period`` seconds of simulated time."""

    def __init__(self, rate: float) -> None:
        self.period = 1.0 / rate
        self.next = 0.0

    def set_rate(self, rate: float, now: float) -> None:
        self.period = 1.0 / rate
        self.next = min(self.next, now + self.period)

    def due(self, now: float, time_step: float) -> bool:
        # Half a step of slack: a period that is a multiple of the step lands on it.
        if now + 0.5 * time_step < self.next:
            return False
        self.next = max(self.next + self.period, now + 0.5 * time_step)
        return True

    def restart(self, now: float) -> None:
        self.next = now


class _CoreLog:
    """The core's log lines on the node's logger (warnings and errors throttled per key)."""

    def __init__(self, node: Node, warn: Throttle) -> None:
        self._info = node.get_logger().info
        self._warn = warn
        self._error = Throttle(node.get_logger().error)

    def info(self, message: str) -> None:
        self._info(message)

    def warning(self, message: str, key: str) -> None:
        self._warn(message, key=key)

    def error(self, message: str, key: str) -> None:
        self._error(message, key=key)


class _EngineLock:
    """The engine's lock (reentrant, a context manager) that knows whether a thread waits.

    The stepping thread lets go of it between batches, and yields the processor to a
    waiting ROS callback only when there is one: a yield (``time.sleep(0)``) can cost
    a scheduler time slice, milliseconds, on a loaded machine.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._waiting: list[None] = []  # one entry per waiting thread (append, pop: atomic)

    @property
    def contended(self) -> bool:
        """Whether another thread waits for the lock."""
        return bool(self._waiting)

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            self._waiting.append(None)
            try:
                self._lock.acquire()
            finally:
                self._waiting.pop()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class SimNode(Node):
    """The simulation node; see the module docstring.

    Args:
        parameter_overrides: Parameters (tests, benchmarks), as for :class:`rclpy.node.Node`.
        node_name: The node's name.
        context: The rclpy context.
        start: Start the stepping thread (False: the caller steps with :meth:`run_steps`
            or starts it with :meth:`start`).

    Raises:
        NodeSetupError: A parameter, the world or the gains cannot be used.
    """

    def __init__(self, *, parameter_overrides: Sequence[Parameter[Any]] | None = None,
                 node_name: str = "sim_node", context: Context | None = None,
                 start: bool = True) -> None:
        super().__init__(node_name, parameter_overrides=list(parameter_overrides or []),
                         context=context)
        self._lock = _EngineLock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._warn = Throttle(self.get_logger().warning)
        p = self._declare_parameters()
        self.engine = self._build_engine(p)
        self.backend = EngineBackend(self.engine, hold_initial=bool(p["hold_initial"]))
        self.core = RobotCore(self.backend, command_timeout=p["command_timeout"],
                              log=_CoreLog(self, self._warn))
        """The robot core (commands, trajectories, timeout) over the engine's backend."""
        self._apply_hold()
        self.core.restart_timeout(self.engine.time)
        try:
            self.io = RobotPublisher(self, self.engine.model, frame_prefix=namespace_frame_prefix(
                p["frame_prefix"], self.get_namespace()))
        except UrdfExportError as exc:
            raise NodeSetupError(f"cannot export {p['skel_file']} as URDF: {exc}") from None
        if self.io.joint_names != self.engine.dof_names:  # pragma: no cover - one naming rule
            raise NodeSetupError("joint names of the engine and of the publisher differ")
        self._wall = p["time_base"] == "wall"
        # not _clock: rclpy's Node has one. time_base wall: no /clock, the session's
        # time is the wall clock (one /clock would make every use_sim_time node follow us).
        self._clock_out = None if self._wall else ClockPublisher(self)
        self._rtf = p["real_time_factor"]
        self._paused = p["paused"]
        # time_base wall: paced by the ROS clock itself, which the stamps come from.
        self._pacer = (RealTimePacer(self._rtf, clock=self._ros_seconds) if self._wall
                       else RealTimePacer(self._rtf))
        self._js = _Schedule(p["joint_states_rate"])
        self._tf = _Schedule(p["tf_rate"])
        self._clock_schedule = _Schedule(max(CLOCK_MIN_RATE, p["joint_states_rate"],
                                             p["tf_rate"]))
        # (stamp time, /clock due, /tf due, (positions or None, velocities or None, efforts))
        # per step with something to publish, until run_steps publishes it.
        self._pending: list[tuple[float, bool, bool, tuple[Any, Any, Any]]] = []
        self.steps_taken = 0
        """Steps since the node started (resets do not zero it)."""
        self._step_wall = 1e-3  # wall seconds per step, as last measured (caps a batch)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.create_subscription(JointState, "joint_commands", self._on_joint_command, COMMAND_QOS)
        self.create_subscription(JointTrajectory, "joint_trajectory", self._on_trajectory,
                                 COMMAND_QOS)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.create_service(SetBool, "~/pause", self._on_pause)
        self.create_service(Trigger, "~/step", self._on_step)
        self.trajectory_controller = FollowJointTrajectoryServer(
            self, self.core, lock=self._lock,
            clock_offset=self.stamp_offset if self._wall else None, state_timer=False)
        """FollowJointTrajectory, as joint_trajectory_controller offers it."""
        # Its controller_state goes out from the stepping thread, in simulated time.
        self._controller_state = _Schedule(self.trajectory_controller.settings.state_rate)
        self._controller_state_due = False
        self._publish_all(self.engine.time)
        names = self.engine.dof_names
        self.get_logger().info(
            f"simulating {self.engine.model.source} in {p['engine']}: "
            f"{len(self.engine.model.skeletons)} "
            f"skeleton(s), {len(names)} DOF(s), step {self.engine.time_step * 1e3:g} ms, "
            f"real-time factor {self._rtf:g}{' (paused)' if self._paused else ''}, "
            + ("stamps in ROS (wall-clock) time, no /clock" if self._wall
               else "stamps in simulated time, on /clock"))
        if start:
            self.start()

    # ---------------------------------------------------------------- setup

    def _declare_parameters(self) -> dict[str, Any]:
        try:
            for name, spec in PARAMETERS.items():
                self.declare_parameter(name, spec.default, ParameterDescriptor(
                    description=spec.description, read_only=spec.read_only,
                    dynamic_typing=spec.number))
        except (InvalidParameterTypeException, InvalidParameterValueException) as exc:
            raise NodeSetupError(f"bad parameter type: {exc}") from None
        values: dict[str, Any] = {}
        problems = []
        for name in PARAMETERS:
            value, problem = check_parameter(name, self.get_parameter(name).value)
            if problem:
                problems.append(problem)
            values[name] = value
        if values["time_base"] == "wall":
            if values["real_time_factor"] not in (None, 1.0):
                problems.append("time_base wall runs locked to the wall clock: "
                                f"real_time_factor must be 1, got {values['real_time_factor']}")
            if self.get_parameter("use_sim_time").value:
                problems.append("time_base wall stamps ROS time from the system clock: "
                                "use_sim_time must be false (no /clock is published)")
        if problems:
            raise NodeSetupError("invalid parameters: " + "; ".join(problems))
        return values

    def _build_engine(self, p: dict[str, Any]) -> SimEngine:
        try:
            path = resolve(p["skel_file"])
            world = load_model(path, xacro_args=parse_xacro_args(p["model_args"]) or None,
                               fixed_base=p["fixed_base"])
        except (FileNotFoundError, OSError, SkelError, ValueError) as exc:
            raise NodeSetupError(f"cannot load skel_file {p['skel_file']!r}: {exc}") from None
        for warning in world.warnings:
            self.get_logger().warning(str(warning))
        try:
            gains = load_gains(resolve(p["gains_file"])) if p["gains_file"] else None
            return ENGINES[p["engine"]](world, enforce_limits=p["enforce_limits"], gains=gains)
        except (FileNotFoundError, OSError, SimError) as exc:
            raise NodeSetupError(str(exc)) from None

    def _apply_hold(self) -> None:
        self.backend.activate()
        if self.backend.held:
            self.get_logger().debug(f"holding {len(self.backend.held)} DOF(s) at their initial"
                                    " positions")

    # ---------------------------------------------------------------- parameters

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        checked = {}
        for param in params:
            if param.name not in PARAMETERS:
                continue
            value, problem = check_parameter(param.name, param.value)
            if not problem and self._wall and param.name == "real_time_factor" and value != 1.0:
                problem = ("time_base wall runs locked to the wall clock: real_time_factor "
                           f"stays 1, got {param.value}")
            if problem:
                return SetParametersResult(successful=False, reason=problem)
            checked[param.name] = value
        with self._lock:
            for name, value in checked.items():
                self._apply_parameter(name, value, self.engine.time)
        self._wake.set()
        return SetParametersResult(successful=True)

    def _apply_parameter(self, name: str, value: Any, now: float) -> None:  # noqa: ANN401
        if name == "real_time_factor":
            self._rtf = value
            self._pacer.anchor(now, value)
        elif name in ("joint_states_rate", "tf_rate"):
            (self._js if name == "joint_states_rate" else self._tf).set_rate(value, now)
            rate = max(CLOCK_MIN_RATE, 1.0 / self._js.period, 1.0 / self._tf.period)
            self._clock_schedule.set_rate(rate, now)
        elif name == "enforce_limits":
            self.engine.set_limit_enforcement(value)
        elif name == "paused":
            if self._paused and not value:
                self._pacer.anchor(now)
            if value and not self._paused:
                self._publish_all(now)  # subscribers see the state it stopped in
            self._paused = value
        elif name == "command_timeout":
            self.core.set_command_timeout(value, now)

    # ---------------------------------------------------------------- stepping

    def _run(self) -> None:
        """The stepping thread: step what is due, sleep until the next step is."""
        while not self._stop.is_set():
            wait = 0.05
            try:
                with self._lock:
                    if not self._paused:
                        self.run_steps(self._pacer.due(self.engine.time, self.engine.time_step),
                                       budget=_BATCH_WALL)
                        if self._pacer.lagging:
                            self._warn(self._lagging_message(), key="lagging")
                        wait = self._pacer.wait(self.engine.time, self.engine.time_step)
                        if wait > 0.0:  # ahead of the schedule: come back for a batch
                            wait = max(wait, _MIN_SLEEP)
            except Exception as exc:  # noqa: BLE001 - keep the node up, say what happened
                if not self.context.ok():
                    return  # shut down under us (Ctrl-C): publishing fails, nothing to say
                self.get_logger().error(f"simulation step failed, pausing: {exc!r}")
                with self._lock:
                    self._paused = True
                continue
            if wait > 0.0:
                self._wake.wait(wait)
                self._wake.clear()
            elif self._lock.contended:
                time.sleep(0)  # let the executor thread take the GIL and the lock

    def _lagging_message(self) -> str:
        if self._wall:
            return ("cannot keep up with the wall clock (time_base wall): the simulation is "
                    f"slower than real time; {self._pacer.lost:.3f} s lost so far (simulated "
                    "time stood still, the stamps skip it: each stays the ROS time of its "
                    "step)")
        return (f"cannot keep real_time_factor {self._rtf:g}: the simulation is slower; "
                "running as fast as it can")

    def stamp_offset(self) -> float:
        """Stamp time minus simulated time, in seconds, now.

        0 for ``time_base`` sim. For wall: the ROS time the pacer's schedule puts at
        simulated time 0, so a state's stamp is the ROS time its step was due: never
        later than the step, and at most ``_MAX_LAG`` plus one batch earlier (further
        behind, the schedule is re-anchored and the time lost).
        Re-anchoring (a pause, a reset, falling behind) moves it forward, never back.
        """
        return self._pacer.wall_at(0.0) if self._wall else 0.0

    def _ros_seconds(self) -> float:
        return float(self.get_clock().now().nanoseconds) * 1e-9

    def run_steps(self, count: int, budget: float = math.inf) -> int:
        """Take up to ``count`` steps (each publishing what is due), for at most ``budget`` s.

        The steps go to the engine in batches: every step up to the next event in one
        ``engine.step(k)`` (:meth:`_batch_size`), so a world with nothing commanded is
        stepped by the engine's own loop (MuJoCo's ``nstep``) between publications.
        An event is a step that publishes (joint_states, /tf, /clock, controller_state)
        or whose core cycle acts (a trajectory, followed every step; the command
        timeout's expiry). What the steps publish goes out in order at the end of the
        call (or every :data:`_PUBLISH_BATCH` steps that publish), before the lock is let
        go: the same messages, stamps and order as stepping and publishing one step at a
        time, a few milliseconds of wall time later at most (``budget``).

        Returns:
            The number of steps taken.
        """
        start = time.monotonic()
        taken = 0
        with self._lock:
            try:
                while taken < count:
                    limit = count - taken
                    if budget != math.inf:  # the steps that fit in the rest of the budget
                        left = budget - (time.monotonic() - start)
                        limit = min(limit, max(1, int(left / self._step_wall)))
                    k = self._batch_size(limit)
                    called = time.monotonic()
                    self._step_once(k)
                    self._step_wall = max((time.monotonic() - called) / k, 1e-7)
                    taken += k
                    if len(self._pending) >= _PUBLISH_BATCH:
                        self._flush()
                    if budget != math.inf and time.monotonic() - start >= budget:
                        break
            finally:
                self._flush()
        return taken

    def _batch_size(self, limit: int) -> int:
        """How many steps, at most ``limit``, to hand the engine at once (at least 1).

        Every step up to and including the next one on which a schedule is due, as long
        as the core says their cycles are no-ops (:meth:`RobotCore.quiet_until`, with half
        a step of margin for rounding); 1 (a step with its cycle) when the next cycle may
        act. Only the last step of a batch can be due: the count per schedule errs on
        the short side (a batch that stops a step early is simply followed by another).
        """
        engine = self.engine
        now, dt = engine.time, engine.time_step
        # Steps j = 1, 2, ... end at now + j dt. A schedule is due on step j once
        # now + j dt + dt / 2 >= its next time (_Schedule.due).
        first = min(self._js.next, self._tf.next, self._controller_state.next,
                    math.inf if self._clock_out is None else self._clock_schedule.next)
        steps = min(limit, math.ceil((first - now) / dt - 0.5 - 1e-3))
        if steps <= 1:
            return 1
        # The cycle of step j is for now + j dt: quiet while that is before quiet_until.
        quiet_until = self.core.quiet_until()
        if quiet_until == -math.inf:  # a trajectory: every cycle samples it
            return 1
        quiet = (quiet_until - now) / dt - 0.5
        if quiet <= steps + 1:
            steps = math.ceil(quiet) - 1
        return max(1, steps)

    def _step_once(self, count: int = 1, *, publish_all: bool = False) -> None:
        """Take ``count`` steps; the last may publish. More than one: quiet core cycles.

        One step: the core's cycle for the time it ends at (the trajectory's sample, the
        command timeout), then the step. Several (:meth:`_batch_size`): no cycle (the
        core is quiet through them) and nothing due before the last step.
        """
        engine = self.engine
        if count == 1:
            self.core.cycle(engine.time + engine.time_step)
        engine.step(count)
        self.steps_taken += count
        now = engine.time
        if publish_all:
            self._flush()
            self._publish_all(now)
        else:
            dt = engine.time_step
            clock = self._clock_out is not None and self._clock_schedule.due(now, dt)
            js, tf = self._js.due(now, dt), self._tf.due(now, dt)
            if self._controller_state.due(now, dt):
                self._controller_state_due = True
            if js or clock or tf:  # /clock alone reads nothing from the engine
                state = engine.state() if js else (engine.positions() if tf else None, None, None)
                self._pending.append((now + self.stamp_offset(), clock, tf, state))

    def _flush(self) -> None:
        """Publish what the steps taken since the last flush had due, in order."""
        pending = self._pending
        self._pending = []
        io = self.io
        for stamp_time, clock, tf, (positions, velocities, efforts) in pending:
            stamp = stamp_from_seconds(stamp_time)
            if clock and self._clock_out is not None:
                self._clock_out.publish(stamp)
            if velocities is not None:
                io.publish_joint_states(positions, velocities, efforts, stamp)
            if tf:
                io.publish_kinematics(positions, stamp)
        if self._controller_state_due:  # the state now: the last step's
            self._controller_state_due = False
            self.trajectory_controller.publish_state()

    def _publish_all(self, now: float) -> None:
        """Publish /clock, joint_states and /tf now (start, reset, ~/step)."""
        stamp = stamp_from_seconds(now + self.stamp_offset())
        if self._clock_out is not None:
            self._clock_out.publish(stamp)
        positions, velocities, efforts = self.engine.state()
        self.io.publish_joint_states(positions, velocities, efforts, stamp)
        self.io.publish_kinematics(positions, stamp)
        self.trajectory_controller.publish_state()
        for schedule in (self._js, self._tf, self._clock_schedule, self._controller_state):
            schedule.restart(now + schedule.period)

    # ---------------------------------------------------------------- commands

    def _on_joint_command(self, msg: JointState) -> None:
        try:
            command = parse_joint_command(msg, self.io.joint_index)
        except CommandMessageError as exc:
            self._warn(f"{exc} (message ignored)", key=f"joint_commands {exc.reason}")
            return
        with self._lock:
            result = self.core.command(command.kind, command.names, command.values)
        if not result.ok:
            self._warn(f"joint_commands: {result.message} (message ignored)",
                       key=f"joint_commands {result.message}")
        for clamp in result.clamped:  # throttled per joint and kind, as the hardware node
            kind = command.kind.value
            self._warn(f"joint_commands: {kind} command clamped to limits: {clamp.name!r}"
                       f" {clamp.requested:.6g} -> {clamp.applied:.6g}",
                       key=f"clamped {kind} {clamp.name}")

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        with self._lock:
            try:
                command = parse_joint_trajectory(msg, self.io.joint_index,
                                                 self.core.start_positions)
            except CommandMessageError as exc:
                self._warn(f"{exc} (message ignored)", key=f"joint_trajectory {exc.reason}")
                return
            if command.trajectory is None:
                if self.core.cancel_trajectory():
                    self.get_logger().info("empty joint_trajectory: stopped, holding position")
                return
            # A header stamp -> the core's time base (simulated time).
            start = None if command.start is None else command.start - self.stamp_offset()
            try:
                self.core.follow(command.trajectory, start)
            except CommandRefused as exc:
                self._warn(f"joint_trajectory: {exc.reason} (message ignored)",
                           key=f"joint_trajectory {exc.key}")

    # ---------------------------------------------------------------- services

    def _on_reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self.core.stop_trajectory("reset")
            self.engine.reset()
            self._apply_hold()
            self.core.restart_timeout(self.engine.time)
            self._pacer.anchor(self.engine.time)
            self._publish_all(self.engine.time)
        self.get_logger().info("reset to the initial state (t = 0)")
        response.success = True
        response.message = "reset to the initial state; simulated time is 0"
        return response

    def _on_pause(self, request: SetBool.Request, response: SetBool.Response) -> SetBool.Response:
        result = self.set_parameters([Parameter("paused", value=bool(request.data))])[0]
        response.success = result.successful
        with self._lock:
            now = self.engine.time
        response.message = (f"{'paused' if request.data else 'running'} at t = {now:.6f} s"
                             if result.successful else result.reason)
        return response

    def _on_step(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            if not self._paused:
                response.success = False
                response.message = "not paused: pause first (~/pause or the paused parameter)"
                return response
            if self._wall:  # the stepped state stands for now
                self._pacer.anchor(self.engine.time + self.engine.time_step)
            self._step_once(publish_all=True)
            response.success = True
            response.message = f"t = {self.engine.time:.6f} s"
        return response

    # ---------------------------------------------------------------- shutdown

    def start(self) -> None:
        """Start the stepping thread (once; the constructor does unless told not to)."""
        if self._thread is None:
            self._stop.clear()
            with self._lock:  # the schedule starts now, not when the node was built
                self._pacer.anchor(self.engine.time)
            self._thread = threading.Thread(target=self._run, name="sim_stepping", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop the stepping thread (idempotent)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._thread = None

    def destroy_node(self) -> None:
        """Stop stepping, then destroy the node."""
        self.stop()
        controller = getattr(self, "trajectory_controller", None)  # None: __init__ failed
        if controller is not None:
            controller.destroy()
        super().destroy_node()


def main(args: Sequence[str] | None = None) -> None:
    """Console script ``sim_node``: ``sim_node --ros-args -p skel_file:=... -p ...``."""
    from skel_ros.nodes.shutdown import NodeStopSignal

    # Before rclpy.init (its handler calls the one it finds): the first SIGINT stops the
    # node, a second one (a terminal's Ctrl-C under launch) waits for the cleanup.
    stop = NodeStopSignal("sim_node").install()
    try:
        rclpy.init(args=None if args is None else list(args))
    except Exception as exc:  # noqa: BLE001 - unparsable --ros-args: one clear line
        print(f"sim_node: {exc}", file=sys.stderr)  # noqa: T201 - ROS logging is not up
        sys.exit(2)
    node: SimNode | None = None
    try:
        node = SimNode()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        executor.spin()
    except NodeSetupError as exc:
        logging.getLogger("skel_ros.sim_node").critical("%s", exc)
        print(f"sim_node: {exc}", file=sys.stderr)  # noqa: T201 - the reason, plainly
        sys.exit(2)
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
