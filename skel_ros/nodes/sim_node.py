"""The simulation node: a :class:`~skel_ros.sim.SimEngine` behind ROS topics.

Thin: what it shares with the hardware node is the ROS shell
(:class:`~skel_ros.nodes.shell.RobotShell`: the parameter idiom, the command intake
``joint_commands`` / ``joint_trajectory`` / FollowJointTrajectory, the time base, state
publishing from the core's read); the commands go to a :class:`~skel_ros.core.RobotCore`
over an :class:`~skel_ros.sim.backend.EngineBackend` (the arbitration, the limits gate,
the trajectory follower and the command timeout are the core's, as on hardware). What is
its own: building the engine, ``~/pause``, ``~/step``, ``~/reset``, the real-time factor
and ``/clock``. The core's :class:`~skel_ros.core.Runner` owns the loop: its thread steps
the engine so that simulated time follows wall time times ``real_time_factor`` (its
:class:`~skel_ros.core.RealTimePacer`), and the node, its listener, publishes the core's
read on a schedule of simulated time (batched: every step's messages, in order, when the
loop lets go of the lock); the executor thread runs the callbacks. The stamps follow
``time_base`` (:class:`~skel_ros.nodes.time_base.TimeBase`): ``sim`` (the default)
stamps simulated time and publishes it on ``/clock``; ``wall`` locks the simulation to
the wall clock (real-time factor 1), stamps every state with the ROS time its step was
due and publishes no ``/clock``, so it shares one time base with the hardware node
(sim-to-real). docs/sim_node.md is the user documentation.

Parameters (read-only ones are fixed at start):
    skel_file (string, read-only): the world (path or ``package://skel_ros/...``), in
        any format ``load_model`` reads (SKEL, URDF/xacro, SMURF, Phobos, CASPR).
    model_args (string, read-only): xacro arguments of a ``.xacro`` skel_file,
        ``"name:=value name:=value"``.
    fixed_base (bool, read-only): URDF/SMURF: weld the root link to the world (default:
        a floating joint, unless the root link is ``world``).
    gains_file (string, read-only): controller gains YAML ("" = built-in defaults).
    sim_params (string, read-only): an ``identified.yaml`` of ``skel-ros identify``
        ("" = none): every joint's armature, damping and friction from it, the damping
        and friction replacing the model's (:mod:`skel_ros.sim.joint_dynamics`), and
        where a joint's servo was identified (or its MIT motor's impedance law is known),
        its position controller runs that law (``kp``, ``kd``, the command delay, the
        velocity fed forward only where the file says so; no integral or gravity
        compensation) over ``gains_file``'s; a joint the world lacks, a bad value, a
        file of another kind: an error at its line, and the node does not start.
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

import math
import time
from typing import TYPE_CHECKING, Any

from rcl_interfaces.msg import SetParametersResult  # type: ignore[import-untyped]
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_srvs.srv import SetBool, Trigger

from skel_ros.core import RealTimePacer, Runner
from skel_ros.identify.output import SimParamsError, load_sim_params
from skel_ros.nodes.errors import NodeSetupError
from skel_ros.nodes.parameters import Param, at_least, check, declare, read, within
from skel_ros.nodes.robot_publisher import ClockPublisher
from skel_ros.nodes.shell import MODEL_PARAMETERS, RobotShell, load_world
from skel_ros.nodes.shutdown import run_node
from skel_ros.nodes.throttle import NodeLog, Throttle
from skel_ros.nodes.time_base import TimeBase
from skel_ros.resources import resolve
from skel_ros.sim import ENGINES, SimEngine, SimError, load_gains, public_names
from skel_ros.sim.backend import EngineBackend

if TYPE_CHECKING:
    from collections.abc import Sequence

    from builtin_interfaces.msg import Time
    from rclpy.context import Context

    from skel_ros.core import RobotState
    from skel_ros.model.types import World

__all__ = ["PARAMETERS", "SimNode", "main"]

MAX_RATE = 10_000.0  # Hz, joint_states_rate / tf_rate
MAX_REAL_TIME_FACTOR = 1_000.0
CLOCK_MIN_RATE = 100.0  # Hz of simulated time: /clock at least this often
_PUBLISH_BATCH = 8  # steps whose messages wait at most (fewer than the depth-10 queues)
TIME_BASES = ("sim", "wall")
_RATE = within(0.0, MAX_RATE, open_low=True, unit="Hz")

PARAMETERS: dict[str, Param] = {
    "skel_file": Param("package://skel_ros/examples/arm.skel",
                       "the world to simulate, any format load_model reads: path or"
                       " package:// URI", read_only=True),
    **MODEL_PARAMETERS,
    "gains_file": Param("package://skel_ros/config/sim_gains.yaml",
                        "position-controller gains YAML ('' = built-in defaults)",
                        read_only=True),
    "sim_params": Param("", "identified.yaml of skel-ros identify: every joint's armature, "
                            "damping and friction from it, and its servo's law where one"
                            " was identified ('' = the model's alone)",
                        read_only=True),
    "engine": Param("dart", f"the engine that steps the world: {', '.join(ENGINES)}",
                    read_only=True, choices=tuple(ENGINES)),
    "time_base": Param("sim", "'sim': stamps are simulated time, published on /clock; "
                              "'wall': locked to the wall clock (real-time factor 1), stamps "
                              "are ROS time, no /clock (one time base with the hardware)",
                       read_only=True, choices=TIME_BASES),
    "real_time_factor": Param(1.0, "simulated seconds per wall-clock second; 0 = as fast "
                                   f"as possible; at most {MAX_REAL_TIME_FACTOR:g} "
                                   "(time_base wall: 1, fixed)",
                              number=True, convert=within(0.0, MAX_REAL_TIME_FACTOR,
                                                          note="0 = as fast as possible")),
    "joint_states_rate": Param(100.0, "joint_states rate in Hz of simulated time, "
                                      f"(0, {MAX_RATE:g}]", number=True, convert=_RATE),
    "tf_rate": Param(50.0, f"/tf rate in Hz of simulated time, (0, {MAX_RATE:g}]",
                     number=True, convert=_RATE),
    "enforce_limits": Param(default=True,
                            description="the engine's position-limit constraints on every "
                                        "limited DOF (velocity and acceleration joints "
                                        "stopped on their limits too)"),
    "paused": Param(default=False, description="stop stepping; ~/step advances one step"),
    "command_timeout": Param(0.0, "simulated seconds without a command after which every "
                                  "command is dropped (each DOF to its actuator's safe"
                                  " state: force/passive limp, servo/velocity held still,"
                                  " acceleration braked to rest); 0 = never",
                             number=True, convert=at_least(0.0, note="0 = never")),
    "hold_initial": Param(default=True,
                          description="hold every actuated DOF at its initial position "
                                      "until commanded (false: each DOF in its actuator's "
                                      "safe state until commanded; force/passive limp)",
                          read_only=True),
}
"""The node's parameters (:mod:`skel_ros.nodes.parameters`)."""


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


class SimNode(Node):
    """The simulation node; see the module docstring.

    Args:
        parameter_overrides: Parameters (tests, benchmarks), as for :class:`rclpy.node.Node`.
        node_name: The node's name.
        context: The rclpy context.
        start: Start the loop (False: the caller steps with :meth:`run_steps` or starts
            it with :meth:`start`).

    Raises:
        NodeSetupError: A parameter, the world or the gains cannot be used.
    """

    def __init__(self, *, parameter_overrides: Sequence[Parameter[Any]] | None = None,
                 node_name: str = "sim_node", context: Context | None = None,
                 start: bool = True) -> None:
        super().__init__(node_name, parameter_overrides=list(parameter_overrides or []),
                         context=context)
        declare(self, PARAMETERS)
        p = read(self, PARAMETERS, relations=self._relations)
        self._wall = p["time_base"] == "wall"
        self._rtf = p["real_time_factor"]
        self.engine = self._build_engine(
            load_world(self, p["skel_file"], p["model_args"], fixed_base=p["fixed_base"]), p)
        self.backend = EngineBackend(self.engine, hold_initial=bool(p["hold_initial"]))
        # time_base wall: paced by the ROS clock itself, which the stamps come from.
        self.runner = Runner.over(
            self.backend, command_timeout=p["command_timeout"], log=NodeLog(self.get_logger()),
            real_time_factor=self._rtf, clock=self._ros_seconds if self._wall else time.monotonic,
            listener=self, name="sim_stepping")
        """The loop: it steps the engine and runs the core's cycle before every step."""
        self.core = self.runner.core
        """The robot core (commands, trajectories, timeout) over the engine's backend."""
        self._lock = self.runner.lock
        self._pacer: RealTimePacer = self.runner.pacer  # type: ignore[assignment]
        self.runner.paused = p["paused"]
        self.core.configure()  # the world is built: nothing to connect
        self._activate()
        # time_base wall: a state's stamp is the ROS time its step was due.
        self.shell = RobotShell(
            self, self.core, self.engine.model, frame_prefix=p["frame_prefix"],
            time_base=TimeBase.paced(self._pacer) if self._wall else TimeBase.core_time())
        """The ROS side shared with the hardware node: state out, commands in."""
        self._warn = Throttle(self.get_logger().warning)
        # not _clock: rclpy's Node has one. time_base wall: no /clock, the session's
        # time is the wall clock (one /clock would make every use_sim_time node follow us).
        self._clock_out = None if self._wall else ClockPublisher(self)
        self._js = _Schedule(p["joint_states_rate"])
        self._tf = _Schedule(p["tf_rate"])
        self._clock_schedule = _Schedule(max(CLOCK_MIN_RATE, p["joint_states_rate"],
                                             p["tf_rate"]))
        # (stamp, /clock due, joint_states due, /tf due, the core's read or None) per step
        # with something to publish, until the runner flushes it.
        self._pending: list[tuple[Time, bool, bool, bool, RobotState | None]] = []
        self._by_hand = False  # ~/step: everything is published after the step
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.create_service(Trigger, "~/reset", self._on_reset)
        self.create_service(SetBool, "~/pause", self._on_pause)
        self.create_service(Trigger, "~/step", self._on_step)
        # controller_state goes out from the loop thread, in simulated time.
        self._controller_state = _Schedule(self.shell.trajectory_controller.settings.state_rate)
        self._controller_state_due = False
        self._publish_all(self.engine.time)
        names = self.engine.dof_names
        self.get_logger().info(
            f"simulating {self.engine.model.source} in {p['engine']}: "
            f"{len(self.engine.model.skeletons)} "
            f"skeleton(s), {len(names)} DOF(s), step {self.engine.time_step * 1e3:g} ms, "
            f"real-time factor {self._rtf:g}{' (paused)' if self.runner.paused else ''}, "
            + ("stamps in ROS (wall-clock) time, no /clock" if self._wall
               else "stamps in simulated time, on /clock"))
        if start:
            self.start()

    # ---------------------------------------------------------------- setup

    def _relations(self, values: dict[str, Any]) -> list[str]:
        """What time_base wall asks of the other parameters."""
        if values["time_base"] != "wall":
            return []
        problems = []
        if values["real_time_factor"] not in (None, 1.0):
            problems.append("time_base wall runs locked to the wall clock: "
                            f"real_time_factor must be 1, got {values['real_time_factor']}")
        if self.get_parameter("use_sim_time").value:
            problems.append("time_base wall stamps ROS time from the system clock: "
                            "use_sim_time must be false (no /clock is published)")
        return problems

    def _build_engine(self, world: World, p: dict[str, Any]) -> SimEngine:
        try:
            gains = load_gains(resolve(p["gains_file"])) if p["gains_file"] else None
            dynamics = None
            if p["sim_params"]:
                params = load_sim_params(resolve(p["sim_params"]))
                params.check_joints(public_names(world)[0])
                dynamics = params.joints
                gains = params.gains(gains)
                out = self.get_logger()
                out.info(f"joint dynamics from {params.source}: "
                         f"{', '.join(params.joints) or 'no joint'}")
                if params.servos:
                    out.info("position control as the robot's servos (kp, kd, delay; no "
                             "integral or gravity compensation): " + ", ".join(
                                 f"{j} ({s.kp:.3g} N m/rad, {s.kd:.3g} N m s/rad, "
                                 f"{s.delay * 1e3:.0f} ms"
                                 + (", velocity fed forward" if s.velocity_feedforward else "")
                                 + ")" for j, s in params.servos.items()))
                for joint, why in params.unused_servos.items():
                    out.warning(f"{params.source}: joint {joint!r}: its servo is not simulated"
                                f" ({why}); the default position controller runs it")
            return ENGINES[p["engine"]](world, enforce_limits=p["enforce_limits"], gains=gains,
                                        joint_dynamics=dynamics)
        except (FileNotFoundError, OSError, SimError, SimParamsError) as exc:
            raise NodeSetupError(str(exc)) from None

    def _activate(self) -> None:
        """Power on (hold the initial positions); the command timeout counts from now."""
        self.runner.activate()
        if self.backend.held:
            self.get_logger().debug(f"holding {len(self.backend.held)} DOF(s) at their initial"
                                    " positions")

    # ---------------------------------------------------------------- parameters

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        checked = {}
        for param in params:
            if param.name not in PARAMETERS:
                continue
            value, problem = check(PARAMETERS, param.name, param.value)
            if not problem and self._wall and param.name == "real_time_factor" and value != 1.0:
                problem = ("time_base wall runs locked to the wall clock: real_time_factor "
                           f"stays 1, got {param.value}")
            if problem:
                return SetParametersResult(successful=False, reason=problem)
            checked[param.name] = value
        with self._lock:
            for name, value in checked.items():
                self._apply_parameter(name, value, self.engine.time)
        self.runner.wake()
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
            if self.runner.paused and not value:
                self._pacer.anchor(now)
            if value and not self.runner.paused:
                self._publish_all(now)  # subscribers see the state it stopped in
            self.runner.paused = value
        elif name == "command_timeout":
            self.core.set_command_timeout(value, now)

    # ---------------------------------------------------------------- the loop's listener

    def next_event(self) -> float:
        """Simulated time of the next publication (a batch of steps ends on it)."""
        return min(self._js.next, self._tf.next, self._controller_state.next,
                   math.inf if self._clock_out is None else self._clock_schedule.next)

    def after_cycles(self, now: float, count: int) -> None:
        """Steps ended at ``now``: note what is due to publish (sent at :meth:`flush`)."""
        if self._by_hand or count == 0:
            return
        dt = self.engine.time_step
        clock = self._clock_out is not None and self._clock_schedule.due(now, dt)
        js, tf = self._js.due(now, dt), self._tf.due(now, dt)
        if self._controller_state.due(now, dt):
            self._controller_state_due = True
        if js or clock or tf:  # /clock alone reads nothing from the engine
            state = self.core.read(now) if js or tf else None
            self._pending.append((self.shell.time_base.stamp(now), clock, js, tf, state))
            if len(self._pending) >= _PUBLISH_BATCH:
                self.flush()

    def on_lagging(self) -> None:
        """Say (throttled) that the simulation cannot keep its pace."""
        self._warn(self._lagging_message(), key="lagging")

    def on_error(self, exc: Exception) -> bool:
        """A step failed: say so; the runner pauses (nothing to say when shutting down)."""
        if not self.context.ok():
            return False  # shut down under us (Ctrl-C): publishing fails, nothing to say
        self.get_logger().error(f"simulation step failed, pausing: {exc!r}")
        return True

    def _lagging_message(self) -> str:
        if self._wall:
            return ("cannot keep up with the wall clock (time_base wall): the simulation is "
                    f"slower than real time; {self._pacer.lost:.3f} s lost so far (simulated "
                    "time stood still, the stamps skip it: each stays the ROS time of its "
                    "step)")
        return (f"cannot keep real_time_factor {self._rtf:g}: the simulation is slower; "
                "running as fast as it can")

    def _ros_seconds(self) -> float:
        return float(self.get_clock().now().nanoseconds) * 1e-9

    def run_steps(self, count: int, budget: float = math.inf) -> int:
        """Take up to ``count`` steps now, publishing what is due (the runner's cycles).

        The steps go to the engine in batches: every step up to the next event in one
        ``engine.step(k)`` (:meth:`Runner._batch_size <skel_ros.core.Runner>`), so a world
        with nothing commanded is stepped by the engine's own loop (MuJoCo's ``nstep``)
        between publications. An event is a step that publishes (joint_states, /tf,
        /clock, controller_state) or whose core cycle acts (a trajectory, followed every
        step; the command timeout's expiry). What the steps publish goes out in order at
        the end of the call (or every :data:`_PUBLISH_BATCH` steps that publish), before
        the lock is let go: the same messages, stamps and order as stepping and
        publishing one step at a time.

        Returns:
            The number of steps taken.
        """
        return self.runner.run_cycles(count, budget)

    @property
    def steps_taken(self) -> int:
        """Steps since the node started (resets do not zero it)."""
        return self.runner.cycles

    def flush(self) -> None:
        """Publish what the steps taken since the last flush had due, in order."""
        pending = self._pending
        self._pending = []
        for stamp, clock, js, tf, state in pending:
            if clock and self._clock_out is not None:
                self._clock_out.publish(stamp)
            if state is not None:
                self.shell.publish(state, stamp, joint_states=js, tf=tf)
        if self._controller_state_due:  # the state now: the last step's
            self._controller_state_due = False
            self.shell.trajectory_controller.publish_state()

    def _publish_all(self, now: float) -> None:
        """Publish /clock, joint_states and /tf now (start, reset, ~/step, pause)."""
        stamp = self.shell.time_base.stamp(now)
        if self._clock_out is not None:
            self._clock_out.publish(stamp)
        self.shell.publish(self.core.read(now), stamp)
        self.shell.trajectory_controller.publish_state()
        for schedule in (self._js, self._tf, self._clock_schedule, self._controller_state):
            schedule.restart(now + schedule.period)

    # ---------------------------------------------------------------- services

    def _on_reset(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        with self._lock:
            self.core.stop_trajectory("reset")
            self.backend.reset()
            self._activate()
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
            if not self.runner.paused:
                response.success = False
                response.message = "not paused: pause first (~/pause or the paused parameter)"
                return response
            if self._wall:  # the stepped state stands for now
                self._pacer.anchor(self.engine.time + self.engine.time_step)
            self._by_hand = True
            try:
                now = self.runner.step()
            finally:
                self._by_hand = False
            self._publish_all(now)
            response.success = True
            response.message = f"t = {self.engine.time:.6f} s"
        return response

    # ---------------------------------------------------------------- shutdown

    def start(self) -> None:
        """Start the loop (once; the constructor does unless told not to)."""
        self.runner.start()

    def stop(self) -> None:
        """Stop the loop (idempotent)."""
        self.runner.stop()

    def destroy_node(self) -> None:
        """Stop stepping, then destroy the node."""
        runner = getattr(self, "runner", None)  # None: __init__ failed before it
        if runner is not None:
            runner.cleanup()
        shell = getattr(self, "shell", None)  # None: __init__ failed before it
        if shell is not None:
            shell.destroy()
        super().destroy_node()


def main(args: Sequence[str] | None = None) -> None:
    """Console script ``sim_node``: ``sim_node --ros-args -p skel_file:=... -p ...``."""
    run_node("sim_node", SimNode, args)


if __name__ == "__main__":
    main()
