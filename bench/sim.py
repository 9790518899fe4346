"""Simulation node speed: the node against the raw engine loop, and the bundled arm in real time.

    .venv/bin/python bench/sim.py [--steps N] [--rounds R] [--seconds S] [--corpus DIR]
                                  [--engines dart,mujoco]
                                  [--worlds fullbody1,humanoid,quadruped,FILE]
                                  [--no-ratio] [--no-arm] [--held] [--quick]
                                  [--joint-states-rate HZ] [--tf-rate HZ]
    .venv/bin/python bench/sim.py --compare-engines [--steps N] [--rounds R]

The defaults take 1-2 minutes; ``--rounds 1 --steps 500 --seconds 3`` about half a minute
(500 steps are before fullbody1 falls: its steps are cheaper then). One run reports the goals
of issue 26, each against a reference measured in the same run, with PASS or MISS:

1. **node >= 0.9x the raw engine loop** at the shipped default rates (``config/sim.yaml``:
   joint_states 100 Hz, /tf 50 Hz, /clock 100 Hz, controller_state 25 Hz), for DART and for
   MuJoCo, on DART's fullbody1 (from the SKEL corpus: ``--corpus DIR`` or ``SKEL_CORPUS``)
   and ``examples/quadruped.skel``. The corpus is optional: without it fullbody1's goal is
   not measured (the script says so) and a generated humanoid of its kind
   (``bench/generated_models.py``, world ``humanoid``) runs in its place, its ratios
   printed as context, not as fullbody1's. Per
   engine and world, every round runs three loops over the same steps from the same
   initial state (a step's cost changes as bodies touch the ground, so they simulate the
   same motion):

   * raw: ``dartpy.utils.SkelParser.readWorld(FILE)`` and ``world.step()``, or a bare
     ``mujoco.mj_step`` loop on the model :class:`~skel_ros.sim.MujocoEngine` compiles;
   * engine: ``SimEngine.step()`` / ``MujocoEngine.step()`` (context);
   * node: ``SimNode`` in this process at ``real_time_factor`` 0 (as fast as possible), its
     stepping thread timed while the main thread spins the executor, as ``sim_node`` does;
     a subscriber on joint_states and /tf in another context of this process, so the
     middleware delivers every message.

   Like with like: the raw loop commands nothing, so the engine commands nothing and the
   node runs with ``hold_initial`` false (holding the robot up makes its steps cheaper than
   the raw loop's collapsing robot: ``--held`` prints those loops as context). Rounds
   interleave the loops, so a change of load on the shared machine hits them alike; ratios
   are taken within a round, then the median. Also printed: the node's cost per step over
   the raw loop, the part of it spent inside rclpy's ``Publisher.publish`` (the message's
   conversion, serialisation and the middleware's delivery, measured by wrapping it in
   this script), and the ratio a node doing nothing but those publish calls would reach
   (``raw / (raw + publish)``): a bound for any rclpy node publishing these messages; and
   the ratios by CPU time: of the node's stepping thread alone (its own work, rclpy's
   publish calls included) and of this whole process (the middleware's threads, the
   subscriber's included).

2. **the bundled arm's node at real-time factor 1 uses <= 10 % of one core**: ``sim_node``
   in a process of its own (``python -m skel_ros.nodes.sim_node``, defaults, in a namespace
   of this run), a subscriber on its joint_states in this process; after it settles, its
   process's CPU time (``/proc/<pid>/stat``: every thread, the middleware's included) over
   ``--seconds`` of wall time. Also printed: the wake-ups per second of its busiest thread
   (the stepping thread; voluntary context switches, ``/proc/<pid>/task/*/status``). The
   node is started with ``-m`` from the current directory: run the bench from the
   checkout it measures (or from elsewhere for the installed package).

``--quick`` is a smoke run (one round of 100 steps, the arm for 1 s; nothing judged).

Reported without a goal: the period of ``joint_states`` at 100 Hz and real-time factor 1 as
the subscriber in this process receives it (the arm's node above): p50 / p99 / max of the
intervals between arrivals, and the messages per second. ``--compare-engines`` prints raw
and engine steps/s of DART and MuJoCo on fullbody1, the arm and the quadruped (context).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from skel_ros.nodes.sim_node import SimNode

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import generated_models  # noqa: E402 - bench/, after the path setup

FULLBODY = Path("data") / "skel" / "fullbody1.skel"  # in DART's SKEL corpus
QUADRUPED = REPO / "examples" / "quadruped.skel"
WORLDS = ("fullbody1", "humanoid", "quadruped")  # fullbody1: the corpus's; humanoid: generated
GOAL_WORLDS = ("fullbody1", "quadruped")
ARM = REPO / "examples" / "arm.skel"
GOAL_RATIO = 0.9  # node steps/s over the raw loop's, at the default publish rates
GOAL_ARM_CPU = 0.10  # of one core: the arm's node at real-time factor 1
WARMUP = 10  # untimed steps first, in every loop (collision-detector caches, first messages)
SETTLE = 1.0  # s: the arm's node runs this long (after its first messages) before measuring
FIRST_MESSAGES = 20  # joint_states received before the arm's node counts as started


class _Timer:
    """Wall and CPU seconds (this process, every thread) of a stretch of code."""

    def __enter__(self) -> _Timer:
        self.wall, self.cpu = -time.perf_counter(), -time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter()
        self.cpu += time.process_time()


def _percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank); NaN when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


# ---------------------------------------------------------------- the three loops


def _raw_dart(path: Path, steps: int) -> tuple[float, float]:
    """Steps/s by wall time and by CPU time."""
    import dartpy as dart

    world = dart.utils.SkelParser.readWorld(str(path))
    for _ in range(WARMUP):
        world.step()
    with _Timer() as t:
        for _ in range(steps):
            world.step()
    return steps / t.wall, steps / t.cpu


def _raw_mujoco(path: Path, steps: int) -> tuple[float, float]:
    """Steps/s of a bare ``mujoco.mj_step`` loop on the model MujocoEngine compiles."""
    import mujoco

    from skel_ros.model import load_model
    from skel_ros.sim import MujocoEngine

    engine = MujocoEngine(load_model(path))  # its model and data, at the initial state
    model, data = engine.world, engine.data
    for _ in range(WARMUP):
        mujoco.mj_step(model, data)
    with _Timer() as t:
        for _ in range(steps):
            mujoco.mj_step(model, data)
    return steps / t.wall, steps / t.cpu


RAW: dict[str, Callable[[Path, int], tuple[float, float]]] = {
    "dart": _raw_dart, "mujoco": _raw_mujoco}


def _engine(path: Path, steps: int, *, hold: bool, engine_name: str = "dart",
            ) -> tuple[float, float]:
    from skel_ros.model import load_model
    from skel_ros.sim import ENGINES

    engine = ENGINES[engine_name](load_model(path))
    if hold:
        engine.hold_initial_positions()
    engine.step(WARMUP)
    with _Timer() as t:
        engine.step(steps)
    return steps / t.wall, steps / t.cpu


class _PublishClock:
    """Wall seconds spent inside rclpy's ``Publisher.publish`` while it is installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._original: Any = None

    def __enter__(self) -> _PublishClock:
        from rclpy.publisher import Publisher

        original = self._original = Publisher.publish

        def publish(publisher: Any, msg: Any) -> None:  # noqa: ANN401 - rclpy's
            start = time.perf_counter()
            try:
                original(publisher, msg)
            finally:
                self.seconds += time.perf_counter() - start

        Publisher.publish = publish  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        from rclpy.publisher import Publisher

        Publisher.publish = self._original  # type: ignore[method-assign]


def _time_stepping_thread(node: SimNode, executor: SingleThreadedExecutor, first: int,
                          steps: int) -> tuple[float, float, float]:
    """Seconds the node's stepping thread takes for ``steps`` steps from ``first``.

    The stepping thread (the node's runner) takes exactly ``steps`` steps (the same motion
    as the other loops: a step's cost changes along it), notes the time and stops itself:
    this script wraps the runner's ``run_cycles``, which its loop calls for the steps due.

    Returns:
        Wall seconds, CPU seconds of the process, CPU seconds of the stepping thread.
    """
    runner = node.runner
    run_cycles = runner.run_cycles
    ended: list[tuple[float, float, float]] = []
    thread_start: list[float] = []

    def run_timed_steps(count: int, budget: float = math.inf) -> int:
        if not thread_start:
            thread_start.append(time.thread_time())
        taken = run_cycles(min(count, first + steps - node.steps_taken), budget)
        if node.steps_taken - first >= steps and not ended:
            ended.append((time.perf_counter(), time.process_time(),
                          time.thread_time() - thread_start[0]))
            node.stop()  # from the stepping thread: ends its loop, no join
        return taken

    runner.run_cycles = run_timed_steps  # type: ignore[method-assign]
    wall, cpu = time.perf_counter(), time.process_time()
    node.start()
    # sim_node's main thread spins without a timeout (executor.spin()): it wakes only
    # for work. A short poll here would add wake-ups, each a hand-over of the GIL the
    # stepping thread waits for; the time is taken by the stepping thread.
    while not ended:
        executor.spin_once(timeout_sec=0.5)
    node.stop()
    del runner.run_cycles  # the class's again
    return ended[0][0] - wall, ended[0][1] - cpu, ended[0][2]


def _node(path: Path, steps: int, *, hold: bool, rates: list[Parameter[Any]],
          engine_name: str) -> dict[str, float]:
    """The node's stepping thread over ``steps`` steps: steps/s (wall, CPU), publish time.

    The CPU time is the whole process's: the stepping thread, the executor thread and
    the middleware's threads, the subscriber's included.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.sim_node import SimNode

    namespace = f"/bench_sim_{os.getpid()}"  # topics of this run only (a shared domain id)
    context = rclpy.Context()
    rclpy.init(context=context, args=["--ros-args", "-r", f"__ns:={namespace}"])
    listener_context = rclpy.Context()
    rclpy.init(context=listener_context)
    try:
        listener = rclpy.create_node("bench_listener", context=listener_context)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        listener.create_subscription(JointState, f"{namespace}/joint_states",
                                     lambda _msg: None, qos)
        listener.create_subscription(TFMessage, "/tf", lambda _msg: None, qos)
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(path)), Parameter("real_time_factor", value=0.0),
            *rates, Parameter("hold_initial", value=hold), Parameter("engine", value=engine_name)])
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        # Let discovery match the subscriber before timing.
        for _ in range(40):
            executor.spin_once(timeout_sec=0.05)
            if node.count_subscribers("joint_states") and node.count_subscribers("/tf"):
                break
        node.run_steps(WARMUP)
        first = node.steps_taken
        with _PublishClock() as publishing:
            wall, cpu, thread = _time_stepping_thread(node, executor, first, steps)
        node.destroy_node()
        listener.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        rclpy.try_shutdown(context=listener_context)
    return {"node": steps / wall, "node cpu": steps / cpu, "node thread": steps / thread,
            "publish": publishing.seconds / steps}


def _round(path: Path, steps: int, *, held: bool, rates: list[Parameter[Any]],
           engine_name: str) -> dict[str, float]:
    """One run of every loop, back to back (steps/s each; the node's publish time per step)."""
    out: dict[str, float] = {}
    out["raw"], out["raw cpu"] = RAW[engine_name](path, steps)
    out["engine"], out["engine cpu"] = _engine(path, steps, hold=False, engine_name=engine_name)
    out.update(_node(path, steps, hold=False, rates=rates, engine_name=engine_name))
    if held:
        out["engine held"], _ = _engine(path, steps, hold=True, engine_name=engine_name)
        out["node held"] = _node(path, steps, hold=True, rates=rates,
                                 engine_name=engine_name)["node"]
    return out


@dataclass
class RatioResult:
    """The node against the raw loop on one world, in one engine (medians of the rounds)."""

    engine: str
    world: str
    ratio: float  # node / raw by wall time
    cpu_ratio: float
    cost: float  # s per step over the raw loop
    publish: float  # s per step inside rclpy's Publisher.publish
    bound: float  # raw / (raw + publish): a node doing only the publish calls


def world_path(world: str, corpus: Path | None, tmp: Path) -> Path:
    """The model file of a world name (:data:`WORLDS`) or a file given.

    Raises:
        FileNotFoundError: fullbody1 without the corpus.
    """
    if world == "fullbody1":
        if corpus is None:
            raise FileNotFoundError("fullbody1 is in DART's SKEL corpus: --corpus DIR or"
                                    " SKEL_CORPUS (without it: the generated 'humanoid')")
        return corpus / FULLBODY
    if world == "humanoid":
        path = tmp / generated_models.HUMANOID_NAME
        if not path.is_file():
            generated_models.write(tmp, path.name, generated_models.humanoid())
        return path
    if world == "quadruped":
        return QUADRUPED
    return Path(world).resolve()


def ratio(engine_name: str, world: str, args: argparse.Namespace,
          rates: list[Parameter[Any]]) -> RatioResult:
    """Run the rounds of one engine and world; print them; the medians."""
    from skel_ros.model import load_model

    path = world_path(world, args.corpus, args.tmp)
    dt = load_model(path).time_step
    rounds = [_round(path, args.steps, held=args.held, rates=rates, engine_name=engine_name)
              for _ in range(max(1, args.rounds))]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    def per_round(key: str, base: str) -> float:
        return statistics.median(r[key] / r[base] for r in rounds)

    def spread(key: str) -> str:
        values = [r[key] for r in rounds]
        return f"({min(values):.0f}-{max(values):.0f})"

    raw_name = "raw DART world.step()" if engine_name == "dart" else "raw MuJoCo mj_step()"
    engine_class = "SimEngine" if engine_name == "dart" else "MujocoEngine"
    print(f"{engine_name}, {world} (step {dt * 1e3:g} ms), {len(rounds)} round(s) of "
          f"{args.steps} steps, nothing commanded; load average {os.getloadavg()[0]:.2f}:")
    for label, key in ((raw_name, "raw"), (f"{engine_class}.step()", "engine"),
                       ("sim_node loop", "node")):
        print(f"  {label:<24} {med(key):8.0f} steps/s {spread(key):<15} "
              f"{per_round(key, 'raw'):5.2f}x raw  real-time factor {med(key) * dt:6.2f}")
    cost = statistics.median(1.0 / r["node"] - 1.0 / r["raw"] for r in rounds)
    publish = med("publish")
    bound = statistics.median((1.0 / r["raw"]) / (1.0 / r["raw"] + r["publish"])
                              for r in rounds)
    print(f"  node cost over the raw step {cost * 1e6:.1f} us/step, of which rclpy's "
          f"Publisher.publish {publish * 1e6:.1f} us (a node doing only those calls: "
          f"{bound:.2f}x)")
    print(f"  by CPU time: the node's stepping thread {per_round('node thread', 'raw cpu'):.2f}x"
          f" raw, this process (the middleware's threads and the subscriber's too) "
          f"{per_round('node cpu', 'raw cpu'):.2f}x")
    if args.held:
        print(f"  context, initial positions held: {engine_class} {med('engine held'):.0f} "
              f"steps/s, node {med('node held'):.0f} steps/s "
              f"({per_round('node held', 'engine held'):.2f}x the engine)")
    return RatioResult(engine_name, world, per_round("node", "raw"),
                       per_round("node cpu", "raw cpu"), cost, publish, bound)


# ---------------------------------------------------------------- the arm at real time


@dataclass
class ArmResult:
    """The arm's node at real-time factor 1 (its own process), over ``wall`` seconds."""

    cpu: float  # of one core, the node's process
    wakeups: float  # per second, its busiest thread's voluntary context switches
    received: int  # joint_states messages
    wall: float
    intervals: list[float]  # s between joint_states arrivals


def _proc_ticks(pid: int) -> tuple[int, dict[int, tuple[int, int]]]:
    """The process's CPU ticks, and per thread (its CPU ticks, voluntary context switches)."""

    def ticks(stat: str) -> int:
        fields = stat.rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    threads: dict[int, tuple[int, int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
            status = (task / "status").read_text()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        switches = int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
        threads[int(task.name)] = (ticks(stat), switches)
    return ticks(Path(f"/proc/{pid}/stat").read_text()), threads


def arm(seconds: float) -> ArmResult:
    """``sim_node`` on the arm in its own process at its defaults, measured from here."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    namespace = f"/bench_arm_{os.getpid()}"
    proc = subprocess.Popen(  # noqa: S603 - this interpreter, this package's node
        [sys.executable, "-m", "skel_ros.nodes.sim_node", "--ros-args", "-r",
         f"__ns:={namespace}", "-p", f"skel_file:={ARM}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rclpy.init()
    arrivals: list[float] = []
    try:
        node = rclpy.create_node("bench_arm_listener")
        node.create_subscription(
            JointState, f"{namespace}/joint_states", lambda _msg: arrivals.append(
                time.monotonic()), QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        deadline = time.monotonic() + 60.0
        while len(arrivals) < FIRST_MESSAGES:  # started and matched
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("sim_node did not publish joint_states: "
                                   + (proc.stderr.read() if proc.poll() is not None
                                      and proc.stderr else "timed out"))
            executor.spin_once(timeout_sec=0.1)
        settle = time.monotonic() + SETTLE
        while time.monotonic() < settle:
            executor.spin_once(timeout_sec=0.05)
        arrivals.clear()
        cpu0, threads0 = _proc_ticks(proc.pid)
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            executor.spin_once(timeout_sec=0.05)
        cpu1, threads1 = _proc_ticks(proc.pid)
        wall = time.monotonic() - start
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    hz = os.sysconf("SC_CLK_TCK")
    busiest = max((t for t in threads1 if t in threads0),
                  key=lambda t: threads1[t][0] - threads0[t][0])
    return ArmResult(cpu=(cpu1 - cpu0) / hz / wall,
                     wakeups=(threads1[busiest][1] - threads0[busiest][1]) / wall,
                     received=len(arrivals), wall=wall,
                     intervals=[b - a for a, b in itertools.pairwise(arrivals)])


# ---------------------------------------------------------------- context


def compare_engines(steps: int, rounds: int, corpus: Path | None, tmp: Path) -> None:
    """Context: raw and engine steps/s of DART and MuJoCo on three worlds (medians)."""
    worlds = [world_path("fullbody1" if corpus else "humanoid", corpus, tmp), ARM, QUADRUPED]
    print(f"DART vs MuJoCo, {max(1, rounds)} interleaved round(s) of {steps} steps, median "
          f"steps/s; load average {os.getloadavg()[0]:.2f} (context, no goal)")
    print(f"  {'world':<24} {'raw DART':>9} {'raw MuJoCo':>11} {'SimEngine':>10} "
          f"{'MujocoEngine':>13} {'held: Sim':>10} {'held: Mujoco':>13}")
    for path in worlds:
        runs: dict[str, list[float]] = {}
        for _ in range(max(1, rounds)):
            for key, (rate, _) in (
                    ("raw DART", _raw_dart(path, steps)),
                    ("raw MuJoCo", _raw_mujoco(path, steps)),
                    ("SimEngine", _engine(path, steps, hold=False)),
                    ("MujocoEngine", _engine(path, steps, hold=False, engine_name="mujoco")),
                    ("held: Sim", _engine(path, steps, hold=True)),
                    ("held: Mujoco", _engine(path, steps, hold=True, engine_name="mujoco"))):
                runs.setdefault(key, []).append(rate)
        m = {k: statistics.median(v) for k, v in runs.items()}
        print(f"  {path.name:<24} {m['raw DART']:9.0f} {m['raw MuJoCo']:11.0f} "
              f"{m['SimEngine']:10.0f} {m['MujocoEngine']:13.0f} {m['held: Sim']:10.0f} "
              f"{m['held: Mujoco']:13.0f}")
    print(f"  (load average now {os.getloadavg()[0]:.2f})")


# ---------------------------------------------------------------- the report


def _names(text: str, known: tuple[str, ...]) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {unknown}; known: {', '.join(known)}")
    return names


def corpus_folder(option: str | None) -> Path | None:
    """DART's SKEL corpus: ``--corpus``, else ``SKEL_CORPUS``, else none."""
    text = option or os.environ.get("SKEL_CORPUS", "")
    return Path(text) if text else None


def _worlds(text: str) -> list[str]:
    """World names (:data:`WORLDS`) or model files."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORLDS and not Path(n).is_file()]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {unknown}: not {', '.join(WORLDS)} nor a file")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="steps of each loop")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds of the three loops, interleaved; medians are reported")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="wall seconds the arm's node is measured at real-time factor 1")
    parser.add_argument("--engines", type=lambda s: _names(s, ("dart", "mujoco")),
                        default=["dart", "mujoco"], help="dart,mujoco (default: both)")
    parser.add_argument("--worlds", type=_worlds, default=None,
                        help="fullbody1,humanoid,quadruped or model files (context); default:"
                             " fullbody1,quadruped with the corpus, else humanoid,quadruped")
    parser.add_argument("--corpus", metavar="DIR",
                        help="DART's SKEL corpus, for fullbody1 (default: SKEL_CORPUS)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: one round of 100 steps, the arm for 1 s; no goal"
                             " judged")
    parser.add_argument("--no-ratio", action="store_true", help="skip the node/raw loops")
    parser.add_argument("--no-arm", action="store_true", help="skip the arm at real time")
    parser.add_argument("--held", action="store_true",
                        help="context: also the engine and the node holding the initial pose")
    parser.add_argument("--joint-states-rate", type=float, default=None, metavar="HZ",
                        help="the node's joint_states_rate (not the default: no goal judged)")
    parser.add_argument("--tf-rate", type=float, default=None, metavar="HZ",
                        help="the node's tf_rate (not the default: no goal judged)")
    parser.add_argument("--compare-engines", action="store_true",
                        help="only the context table: DART vs MuJoCo on fullbody1, the arm "
                             "and the quadruped")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.steps, args.seconds = 1, 100, 1.0
    args.corpus = corpus_folder(args.corpus)
    if args.corpus is not None and not (args.corpus / FULLBODY).is_file():
        print(f"bench/sim.py: {args.corpus}: no {FULLBODY} in it (not DART's SKEL corpus)",
              file=sys.stderr)
        return 2
    if args.corpus is None and "fullbody1" in (args.worlds or ()):
        print("bench/sim.py: fullbody1 is in DART's SKEL corpus: --corpus DIR or SKEL_CORPUS"
              " (without it: --worlds humanoid)", file=sys.stderr)
        return 2
    if args.worlds is None:
        args.worlds = ["fullbody1" if args.corpus else "humanoid", "quadruped"]
    with tempfile.TemporaryDirectory() as tmp:
        args.tmp = Path(tmp)
        _run(args)
    return 0


def _run(args: argparse.Namespace) -> None:
    if args.compare_engines:
        compare_engines(args.steps, args.rounds, args.corpus, args.tmp)
        return
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE",
                          str(REPO / "config" / "fastdds_localhost.xml"))
    from rclpy.parameter import Parameter

    rates = [Parameter(name, value=value) for name, value in (
        ("joint_states_rate", args.joint_states_rate), ("tf_rate", args.tf_rate))
        if value is not None]
    print(f"bench/sim.py: {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    if args.corpus is None:
        print("no SKEL corpus (--corpus or SKEL_CORPUS): fullbody1's goal not measured; the"
              " generated humanoid runs in its place, as context")
    if args.quick:
        print("--quick: one round of 100 steps, the arm for 1 s: a smoke run, nothing judged")
    ratios = [] if args.no_ratio else [ratio(engine, world, args, rates)
                                       for engine in args.engines for world in args.worlds]
    arm_result = None if args.no_arm else arm(args.seconds)
    print(f"goals (load average now {os.getloadavg()[0]:.2f}):")
    for r in ratios:
        if rates or r.world not in GOAL_WORLDS or args.quick:
            print(f"  node / raw {r.engine} {r.world}: {r.ratio:.2f}x (context: not the "
                  "goal's rates or worlds, or --quick)")
            continue
        verdict = "PASS" if r.ratio >= GOAL_RATIO else "MISS"
        print(f"  node >= {GOAL_RATIO}x raw, {r.engine:<6} {r.world:<9}  {r.ratio:5.2f}x  "
              f"{verdict}  (rclpy's publish calls alone: {r.bound:.2f}x)")
    if arm_result is not None:
        a = arm_result
        verdict = "PASS" if a.cpu <= GOAL_ARM_CPU else "MISS"
        if args.quick:
            verdict = "(--quick: not judged)"
        print(f"  arm node at real-time factor 1 <= {GOAL_ARM_CPU:.0%} of one core  "
              f"{a.cpu:6.1%}  {verdict}  (its stepping thread wakes {a.wakeups:.0f} times/s)")
        ms = [x * 1e3 for x in a.intervals]
        print(f"report: joint_states at 100 Hz, real-time factor 1 (the arm's node in its own "
              f"process, received in this one): {a.received / a.wall:.1f} messages/s, "
              f"interval p50 {_percentile(ms, 0.5):.2f} ms, p99 {_percentile(ms, 0.99):.2f} "
              f"ms, max {max(ms, default=math.nan):.2f} ms")


if __name__ == "__main__":
    sys.exit(main())
