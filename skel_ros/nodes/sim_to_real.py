"""One sim-to-real run without ``ros2 launch``, as ``skel-ros demo`` and ``sim-to-real`` do.

1. start the simulation node (namespace ``sim``, ``time_base`` wall: locked to the wall
   clock, stamped in ROS time as the hardware is) and the hardware node (namespace
   ``real``; on emulated actuators unless told otherwise) as separate processes, both
   taking their commands from ``/joint_commands`` and ``/joint_trajectory`` — exactly
   the graph ``launch/sim_to_real.launch.py`` builds;
   With several engines (``RunConfig.engines``, e.g. ``("dart", "mujoco")``), the first
   one's simulation node is ``sim`` and each other one runs beside it in a namespace
   named after its engine (``mujoco``, frames ``mujoco/``), on the same command stream;
2. record ``/joint_commands``, ``/joint_trajectory``, ``/sim/joint_states`` (and
   ``/<engine>/joint_states``) and ``/real/joint_states`` to MCAP from this process,
   with what draws the robots in Foxglove or Lichtblick: each node's
   ``robot_description`` (meshes embedded), ``/tf_static`` and ``/tf``
   (:func:`skel_ros.nodes.recorder.robot_topics`); a robot's joint states are recorded
   from when its description and transforms are, so every one can be drawn;
3. enable the hardware (``/real/hardware_node/enable``; a lost answer is asked of its
   lifecycle ``get_state``, never re-sent blindly: :mod:`skel_ros.nodes.enable_call`), play
   the trajectory with the ``trajectory_player`` (streaming position commands), let the
   robots settle; an ``estop`` or ``fault`` the hardware node reports on ``/diagnostics``
   from the enable on ends the run with a :class:`RunError` (its commands were refused);
4. stop everything and write the comparison report (:mod:`skel_ros.analysis`).

DDS stays on this machine: unless the caller's environment says otherwise, discovery
is limited to localhost, a domain id is derived from this process id, and Fast DDS
gets the loopback-only profile ``config/fastdds_localhost.xml``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skel_ros.child_process import ending_with_parent

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from rclpy.context import Context
    from rclpy.executors import Executor

    from skel_ros.analysis import Comparison
    from skel_ros.model.types import World

HARDWARE_ENABLE = "/real/hardware_node/enable"
"""The hardware node's ``~/enable``; its lifecycle ``get_state`` is beside it."""

ENABLE_TIMEOUT = 60.0
"""Seconds for the enable to be known done (:mod:`skel_ros.nodes.enable_call`)."""

COMMAND_REMAPS = ("-r", "joint_commands:=/joint_commands",
                  "-r", "joint_trajectory:=/joint_trajectory")


ParamValue = str | bool | int | float
"""A node parameter given on the command line (see ``_param_text``)."""


RECORDING = "run.mcap"
"""The run's recording in its output folder; a run that stops half-way leaves what it had."""


class RunError(RuntimeError):
    """The run could not be completed; the message says which step failed and why."""


@dataclass(frozen=True)
class RunConfig:
    """What to run.

    Attributes:
        skel_file: the robot's model.
        model_args: a ``.xacro`` model's arguments, ``"NAME:=VALUE ..."`` (every node's
            ``model_args`` parameter).
        fixed_base: URDF/SMURF: weld the root link to the world (every node's).
        hardware_config: joint -> actuator mapping YAML.
        trajectory: CASPR trajectories.xml or trajectory YAML, played to both robots.
        out_dir: where the recording, the logs and the report go.
        mapping_file: maps a CASPR trajectory's q entries to DOF names (optional).
        emulate: emulated actuators (True) or the real hardware of the YAML.
        physics: the emulated actuators move one physics model of the robot (the
            hardware node's ``physics``); False: ideal first-order trackers; None (the
            default): physics when every bus of the hardware config has a physics-backed
            emulator (:func:`emulation`).
        truth: a truth file, how the real robot differs from the model (the hardware
            node's ``truth``; implies ``physics``).
        sim_params: an identified.yaml (``skel-ros identify``): the simulation nodes'
            ``sim_params``, the joints' armature, damping and friction.
        command_rate: rate of the streamed position commands, Hz.
        publish_rate: the hardware node's ``publish_rate`` (Hz of ``/real/joint_states``);
            None: the node's default (50 Hz). An identification run records at the
            control loop's rate (docs/identify.md, the workflow).
        record_goals: the hardware node publishes the goals as it wrote them (its
            ``publish_goals``) and the recording keeps them (``/real/written_goals``):
            what ``skel-ros identify`` fits a servo's delay to.
        settle: seconds recorded after the trajectory ends.
        startup_timeout: seconds to wait for both nodes to publish joint_states.
        report_format: ``"html"`` or ``"md"``.
        write_report: write the report into ``out_dir`` (False: the caller writes one,
            e.g. with the verdict of several runs).
        port, can_interface, can_channel: the hardware node's transport overrides
            ("" = as in the hardware config).
        engines: the simulation engines, one simulation node each (``skel_ros.sim.ENGINES``
            names, no repeats): the first is the stream ``sim``, each other one the
            stream named after its engine.
    """

    skel_file: Path
    hardware_config: Path
    trajectory: Path
    out_dir: Path
    mapping_file: Path | None = None
    emulate: bool = True
    physics: bool | None = None
    truth: Path | None = None
    sim_params: Path | None = None
    command_rate: float = 100.0
    publish_rate: float | None = None
    record_goals: bool = False
    settle: float = 1.0
    startup_timeout: float = 60.0
    report_format: str = "html"
    write_report: bool = True
    port: str = ""
    can_interface: str = ""
    can_channel: str = ""
    extra_sim_params: Mapping[str, ParamValue] = field(default_factory=dict)
    engines: tuple[str, ...] = ("dart",)
    model_args: str = ""
    fixed_base: bool = False

    def __post_init__(self) -> None:
        from skel_ros.sim import ENGINES

        if not self.engines or len(set(self.engines)) != len(self.engines) \
                or any(e not in ENGINES for e in self.engines):
            raise ValueError(f"engines must be distinct names among {', '.join(ENGINES)}, "
                             f"got {', '.join(self.engines) or 'none'}")

    def simulations(self) -> dict[str, str]:
        """Namespace (= stream name) -> engine of each simulation node."""
        return {"sim": self.engines[0], **{e: e for e in self.engines[1:]}}


@dataclass(frozen=True)
class RunResult:
    """Where the results are, and the comparison itself."""

    report: Path | None  # None: not written (``RunConfig.write_report``)
    recording: Path
    logs: Path
    comparison: Comparison
    notes: tuple[str, ...] = ()  # what was run: model, hardware, trajectory, recording


_DOMAINS = range(1, 102)  # ROS 2's safe domain ids on Linux, 0 (everyone's default) left out
_claimed: list[tuple[int, Any]] = []  # (domain, its open lock file): held until exit


def claim_domain() -> int:
    """A ROS domain id no other run of this package on this machine holds now.

    Each id has a lock file in the temporary directory; this process takes the first
    free one from an id derived from its pid (an exclusive ``flock``, held until the
    process ends, by the kernel even when it is killed) and keeps it for its lifetime:
    two sim-to-real runs started at once never meet on one domain (a pid modulo 101 alone
    gave two runs the same one). Where no lock can be taken (no ``fcntl``, a read-only
    temporary directory) the pid-derived id is returned, as before.
    """
    if _claimed:
        return _claimed[0][0]
    start = os.getpid() % len(_DOMAINS)
    order = [_DOMAINS[(start + k) % len(_DOMAINS)] for k in range(len(_DOMAINS))]
    try:
        import fcntl
        import tempfile
    except ImportError:  # not POSIX
        return order[0]
    folder = Path(tempfile.gettempdir())
    for domain in order:
        try:
            handle = (folder / f"skel_ros-ros-domain-{domain}.lock").open("a")
        except OSError:
            return order[0]
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _claimed.append((domain, handle))
        return domain
    return order[0]  # every id held: share one, as before


def ros_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: ``os.environ``) with DDS confined to this machine.

    Only settings the caller has not made are added: ``ROS_AUTOMATIC_DISCOVERY_RANGE``
    (LOCALHOST), ``ROS_DOMAIN_ID`` (:func:`claim_domain`: one no other run of this
    package on this machine holds, so a run does not meet other ROS graphs here) and
    Fast DDS's loopback profile.
    """
    from skel_ros.resources import resolve

    env = dict(os.environ if base is None else base)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if "ROS_DOMAIN_ID" not in env:
        env["ROS_DOMAIN_ID"] = str(claim_domain())
    if "FASTDDS_DEFAULT_PROFILES_FILE" not in env:
        with contextlib.suppress(FileNotFoundError):
            env["FASTDDS_DEFAULT_PROFILES_FILE"] = str(
                resolve("package://skel_ros/config/fastdds_localhost.xml"))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _param_text(value: ParamValue) -> str:
    """A ``-p name:=value`` value that ROS (which reads it as YAML) reads back as given.

    Strings are double-quoted (JSON is YAML), so ``can0`` stays a string and ``0``,
    ``on`` or a path with ``: `` do not turn into a number, a bool or a mapping.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value)


def _node_command(module: str, namespace: str, params: Mapping[str, ParamValue],
                  remaps: Sequence[str] = COMMAND_REMAPS) -> list[str]:
    args = [sys.executable, "-c", f"from {module} import main; main()", "--ros-args"]
    if namespace:
        args += ["-r", f"__ns:=/{namespace}"]
    args += list(remaps)
    for name, value in params.items():
        args += ["-p", f"{name}:={_param_text(value)}"]
    return args


def emulation(config: RunConfig, world: World | None = None) -> tuple[bool, str]:
    """Whether the run's emulated actuators move a physics model, and what the real side is.

    ``physics`` None: physics when every bus of the hardware config that drives a joint has
    a physics-backed emulator (:func:`skel_ros.physical.physical_emulator_names`) and the
    worlds the buses move are the robot's motion (:func:`skel_ros.physical.option.
    coupled_buses` on :func:`skel_ros.physical.host.world_names`: the buses of this
    package's emulators move one world; on ``world``: the run's model, read here if not
    given), else ideal trackers for the whole run (one robot, one kind of emulation), and
    the text says why.

    Raises:
        RunError: The hardware config cannot be read (``physics`` None only).
    """
    if not config.emulate:
        return False, "real actuators"
    if config.truth is not None or config.physics:
        truth = f", truth {config.truth.name}" if config.truth is not None else ""
        return True, f"emulated, physics{truth}"
    if config.physics is False:
        return False, "emulated, ideal actuators"
    from skel_ros.hardware import load_hardware_config
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.physical import physical_emulator_names

    try:
        hardware = load_hardware_config(config.hardware_config)
    except (ConfigError, OSError) as exc:
        raise RunError(f"hardware config: {exc}") from None
    with_physics = set(physical_emulator_names())
    missing = sorted({b.protocol for b in hardware.buses if hardware.joints_on(b.name)}
                     - with_physics)
    if missing:
        return False, ("emulated, ideal actuators (no physics-backed emulator for "
                       f"{', '.join(missing)})")
    coupled = _coupled_buses(config, hardware, world)
    if coupled:
        return False, f"emulated, ideal actuators ({coupled})"
    return True, "emulated, physics"


def _coupled_buses(config: RunConfig, hardware: Any,  # noqa: ANN401 - HardwareConfig
                   world: World | None) -> str | None:
    """Why the worlds the hardware config's buses move are not the robot's motion, or None."""
    if len([b for b in hardware.buses if hardware.joints_on(b.name)]) < 2:  # noqa: PLR2004
        return None
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.model.errors import SkelError
    from skel_ros.physical.host import world_names
    from skel_ros.physical.option import coupled_buses

    try:
        skeleton = hardware.select_skeleton(world if world is not None else _model(config))
    except (SkelError, ConfigError, OSError) as exc:
        raise RunError(f"model: {exc}") from None
    return coupled_buses(skeleton, {b.name: [m.name for m in hardware.joints_on(b.name)]
                                    for b in hardware.buses},
                         world_names({b.name: b.protocol for b in hardware.buses}))


def _model(config: RunConfig) -> World:
    """The run's model, read as every node of the run reads it (:func:`_model_params`)."""
    from skel_ros.model import load_model
    from skel_ros.model.urdf_reader import parse_xacro_args

    return load_model(config.skel_file, xacro_args=parse_xacro_args(config.model_args) or None,
                      fixed_base=config.fixed_base)


def _model_params(config: RunConfig) -> dict[str, ParamValue]:
    """The model parameters every node of the run takes: the file and how to read it."""
    return {"skel_file": str(config.skel_file), "model_args": config.model_args,
            "fixed_base": config.fixed_base}


def node_commands(config: RunConfig) -> dict[str, list[str]]:
    """The command lines of a run's nodes: ``"sim"``, one per further engine, ``"real"``.

    The simulation nodes: ``"sim"`` in the first engine, each further engine's under its
    name; the hardware node: ``"real"``.

    One time base for the session: the simulation runs locked to the wall clock
    (``time_base`` wall) and stamps ROS time, as the hardware node does; no ``/clock``.
    """
    transport = {k: v for k, v in (("port", config.port), ("can_interface", config.can_interface),
                                   ("can_channel", config.can_channel)) if v}
    sims = {
        namespace: _node_command("skel_ros.nodes.sim_node", namespace, {
            **_model_params(config), "frame_prefix": f"{namespace}/",
            "time_base": "wall", "engine": engine,
            **({"sim_params": str(config.sim_params)} if config.sim_params else {}),
            **config.extra_sim_params})
        for namespace, engine in config.simulations().items()}
    return {
        **sims,
        "real": _node_command("skel_ros.nodes.hardware_node", "real", {
            **_model_params(config), "hardware_config": str(config.hardware_config),
            "emulate": config.emulate, "frame_prefix": "real/", **transport,
            **({"physics": True} if emulation(config)[0] else {}),
            **({"publish_rate": float(config.publish_rate)} if config.publish_rate else {}),
            **({"publish_goals": True} if config.record_goals else {}),
            **({"truth": str(config.truth)} if config.truth else {})}),
    }


class _Processes:
    """Child processes with their logs; stopped (SIGINT, then SIGKILL) on exit.

    A child that is not known to run its node yet (still importing: the signal would end
    it with a KeyboardInterrupt traceback) gets SIGTERM instead of SIGINT: it ends at once,
    quietly, or, once rclpy runs, rclpy turns it into a normal shutdown.
    """

    def __init__(self, log_dir: Path, env: Mapping[str, str]) -> None:
        self.log_dir = log_dir
        self.env = dict(env)
        self.children: dict[str, tuple[subprocess.Popen[bytes], TextIO]] = {}
        self.ready: dict[str, Callable[[], bool]] = {}

    def start(self, name: str, command: list[str],
              ready: Callable[[], bool] = lambda: False) -> subprocess.Popen[bytes]:
        """Start ``command``; ``ready`` says when it runs its node (it publishes)."""
        self.ready[name] = ready
        log = (self.log_dir / f"{name}.log").open("w", encoding="utf-8")
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and modules
            command, stdout=log, stderr=subprocess.STDOUT, env=self.env,
            start_new_session=True,
            # SIGTERM when this run is killed: its nodes must not outlive it (its ROS
            # domain is free again then, and a later run would hear them).
            preexec_fn=ending_with_parent(signal.SIGTERM))  # noqa: PLW1509
        self.children[name] = (proc, log)
        return proc

    def check(self) -> None:
        for name, (proc, _) in self.children.items():
            if proc.poll() is not None and name != "player":
                raise RunError(f"the {name} process exited with status {proc.returncode}:\n"
                               f"{self.tail(name)}")

    def tail(self, name: str, lines: int = 25) -> str:
        path = self.log_dir / f"{name}.log"
        try:
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return "(no log)"
        return "\n".join(f"    {line}" for line in text[-lines:]) + f"\n  (full log: {path})"

    def stop(self) -> None:
        for name, (proc, _) in self.children.items():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGINT if self.ready[name]() else signal.SIGTERM)
        deadline = time.monotonic() + 10.0
        for proc, log in self.children.values():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()


def _missing_states(states: Sequence[str], counts: Mapping[str, int]) -> str:
    """Which robots' joint states the recording still lacks, and what it has of each."""
    lacking = []
    for topic in (t for t in states if counts.get(t, 0) == 0):
        described = counts.get(topic.replace("joint_states", "robot_description"), 0) > 0
        state = ("recorded: no TF path from every link to its root yet" if described
                 else "not recorded either")
        lacking.append(f"{topic} (its robot_description {state})")
    return ("joint_states from every node (recorded once its robot_description and TF are): "
            "none yet of " + "; ".join(lacking))


def _published(counts: Mapping[str, int], topic: str) -> Callable[[], bool]:
    """Whether a message of ``topic`` has been recorded (its publisher runs its node)."""
    return lambda: counts[topic] > 0


def _wait(condition: Callable[[], bool], timeout: float, what: str | Callable[[], str],
          check: Callable[[], None], interrupted: threading.Event) -> None:
    """Wait for ``condition``; KeyboardInterrupt here, and only here, on Ctrl-C.

    ``what``: what is waited for, in words (or a function that says it at the timeout).
    """
    deadline = time.monotonic() + timeout
    while not condition():
        check()
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise RunError(f"timed out after {timeout:.0f} s waiting for {said}")
        if interrupted.wait(0.05):
            raise KeyboardInterrupt


def run_sim_to_real(  # noqa: C901, PLR0915 - one linear script of steps
    config: RunConfig, log: Callable[[str], None] = print
) -> RunResult:
    """Run the whole workflow; see the module docstring.

    Raises:
        RunError: a node did not start, the hardware could not be enabled or stopped
            (e-stop, fault) during the run, the trajectory failed; the message includes
            the end of the relevant log.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage
    from trajectory_msgs.msg import JointTrajectory

    from skel_ros.analysis import compare, model_followers, read_recording, write_report
    from skel_ros.analysis.recording import StreamTopics
    from skel_ros.nodes.enable_call import start_enable
    from skel_ros.nodes.qos import LATCHED_QOS
    from skel_ros.nodes.recorder import McapRecorder, robot_topics
    from skel_ros.nodes.robot_publisher import side_by_side
    from skel_ros.nodes.service_calls import ServiceTimeoutError
    from skel_ros.nodes.shutdown import sigint_flag

    out = config.out_dir
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    env = ros_environment()
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID")})
    if "FASTDDS_DEFAULT_PROFILES_FILE" in env:
        os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = env["FASTDDS_DEFAULT_PROFILES_FILE"]
    world = _model(config)
    # What the real side is, decided once (physics None: read from the hardware YAML).
    physics, real_side = emulation(config, world)
    config = replace(config, physics=physics)
    limits = {d.name: (d.position_lower, d.position_upper)
              for s in world.skeletons for d in s.dofs}
    log(f"robot: {config.skel_file} ({len(limits)} DOFs); ROS domain {env['ROS_DOMAIN_ID']}, "
        "discovery on localhost")

    procs = _Processes(logs, env)
    context = rclpy.Context()
    # Ctrl-C: no rclpy handler (it would shut the context down under the running steps);
    # SIGINT sets `interrupted` (sigint_flag), which the waits check; the `finally`
    # stops every child whatever comes, a second Ctrl-C included.
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    executor = SingleThreadedExecutor(context=context)
    recording = out / RECORDING
    recorder: McapRecorder | None = None
    spin_thread: threading.Thread | None = None
    stop_spin = threading.Event()  # set: the spin thread ends (within SPIN_WAKE)
    stack = contextlib.ExitStack()
    interrupted = stack.enter_context(sigint_flag())
    try:
        node = rclpy.create_node("sim_to_real_run", context=context)
        executor.add_node(node)
        sims = config.simulations()
        recorder = McapRecorder(node, recording, {
            "/joint_commands": JointState, "/joint_trajectory": JointTrajectory,
            **{f"/{name}/joint_states": JointState for name in sims},
            "/real/joint_states": JointState, **robot_topics((*sims, "real")),
            **({StreamTopics.written: JointState} if config.record_goals else {})},
            drawn_first={f"/{ns}/joint_states": f"/{ns}/robot_description"
                         for ns in (*sims, "real")})
        counts = recorder.counts
        # One fixed frame for all: `world` -> each robot's `<ns>/world`, as the launch file
        # places them, so RViz or one 3D panel of a recording shows every robot.
        placement = node.create_publisher(TFMessage, "/tf_static", LATCHED_QOS)
        placement.publish(side_by_side(("real", *sims)))
        # The one spin loop (skel_ros.nodes.shutdown.spin): its waits end within SPIN_WAKE,
        # so a lost wake-up cannot keep the thread, or the run's end, waiting for ever.
        spin_thread = threading.Thread(target=_spin_quietly,
                                       args=(executor, context, stop_spin), daemon=True)
        spin_thread.start()

        for name, command in node_commands(config).items():
            procs.start(name, command, _published(counts, f"/{name}/joint_states"))
        in_engines = ", ".join(f"/{name} in {engine}" for name, engine in sims.items())
        log(f"started the simulation node(s) ({in_engines}) and the hardware node (/real,"
            f" {real_side}); waiting for joint_states ...")
        states = [f"/{name}/joint_states" for name in (*sims, "real")]
        _wait(lambda: all(counts[topic] > 0 for topic in states), config.startup_timeout,
              lambda: _missing_states(states, counts), procs.check, interrupted)

        def pause(seconds: float) -> None:  # spin_thread spins the executor meanwhile
            procs.check()
            if interrupted.wait(seconds):
                raise KeyboardInterrupt

        # Not re-sent blindly when its answer is lost: a second enable would clear an
        # e-stop pressed since (skel_ros.nodes.enable_call).
        enabling = start_enable(node, HARDWARE_ENABLE, timeout=ENABLE_TIMEOUT, log=log)
        try:
            enabled = enabling.run(pause)
        except ServiceTimeoutError as exc:
            raise RunError(f"the hardware was not enabled: {exc}\n{procs.tail('real')}") \
                from None
        if not enabled.success:
            what = ("the hardware node refused to enable: " if enabled.answered
                    else "the hardware was not enabled: ")
            raise RunError(f"{what}{enabled.message}\n{procs.tail('real')}")
        log(f"hardware enabled: {enabled.message}")
        watch = enabling.watch
        mark = 0 if watch is None else watch.count

        def check() -> None:
            """The children run, and the hardware reported no stop since the enable."""
            procs.check()
            if watch is not None and (stop := watch.stopped_since(mark)) is not None:
                raise RunError(
                    f"the hardware stopped during the run: {watch.hardware_node} reports"
                    f" {stop.state} ({stop.message}); it refused the commands from then on,"
                    " so the run does not compare the model with the robot (the recording"
                    f" is {recording})\n{procs.tail('real')}")

        player_params: dict[str, ParamValue] = {
            "trajectory_file": str(config.trajectory), **_model_params(config),
            "mode": "stream", "rate": float(config.command_rate),
            # Every robot and the recorder hear the stream from its first sample.
            "subscribers": len(sims) + 2, "wait_for_subscribers": 60.0}
        if config.mapping_file:
            player_params["mapping_file"] = str(config.mapping_file)
        player = procs.start("player", _node_command(
            "skel_ros.nodes.trajectory_player", "", player_params, remaps=()),
            _published(counts, "/joint_commands"))
        log(f"playing {config.trajectory} to every robot ...")
        _wait(lambda: player.poll() is not None, 3600.0, "the trajectory to finish", check,
              interrupted)
        if player.returncode != 0:
            raise RunError(f"the trajectory player failed (status {player.returncode}):\n"
                           f"{procs.tail('player')}")
        if interrupted.wait(config.settle):
            raise KeyboardInterrupt
        check()
    finally:
        with stack:  # SIGINT sets the flag until every child is stopped
            if recorder is not None:
                recorder.close()
            procs.stop()
            stop_spin.set()
            executor.shutdown()
            rclpy.try_shutdown(context=context)
            if spin_thread is not None:
                spin_thread.join(timeout=5.0)
    if interrupted.is_set():  # Ctrl-C during the stop of a run that had ended
        raise KeyboardInterrupt

    streams = read_recording(recording, followers=model_followers(world))
    comparison = compare(list(streams.values()), limits)
    worst = _largest(comparison, "sim", "real")
    emulated = f" ({real_side})"
    engines = ", ".join(f"{name} = {engine}" for name, engine in config.simulations().items())
    notes = (f"model: {config.skel_file}", f"hardware: {config.hardware_config}{emulated}",
             f"simulation: {engines}"
             + (f", joint dynamics from {config.sim_params}" if config.sim_params else ""),
             f"trajectory: {config.trajectory}",
             f"recording: {recording.name} (MCAP)")
    report = (write_report(comparison, out, fmt=config.report_format, notes=notes).page
              if config.write_report else None)
    log(f"compared {len(comparison.joints)} joints over {comparison.duration:.1f} s; "
        f"largest sim-vs-real error {worst:.4g}")
    for other in config.engines[1:]:
        log(f"largest {config.engines[0]}-vs-{other} error "
            f"{_largest(comparison, 'sim', other):.4g}")
    return RunResult(report, recording, logs, comparison, notes)


def _spin_quietly(executor: Executor, context: Context, stop: threading.Event) -> None:
    """``spin(executor, context, stop)``, ending quietly when the context goes down first."""
    from rclpy.executors import ExternalShutdownException

    from skel_ros.nodes.shutdown import spin

    with contextlib.suppress(ExternalShutdownException):
        spin(executor, context, stop)


def _largest(comparison: Comparison, a: str, b: str) -> float:
    """The largest finite error of stream ``a`` against ``b`` over every joint (NaN: none)."""
    return max((e.max_abs for j in comparison.joints for e in j.errors
                if (e.a, e.b) == (a, b) and math.isfinite(e.max_abs)), default=math.nan)
