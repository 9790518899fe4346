"""Simulation speed: the raw engine, our engine, and the whole simulation node, on one world.

    .venv/bin/python bench/sim.py [--skel FILE] [--steps N] [--rounds R] [--no-context]
                                  [--joint-states-rate HZ] [--tf-rate HZ]
                                  [--engine dart|mujoco] [--compare-engines]

``--engine mujoco`` runs the same three loops in MuJoCo: the raw loop is
``mujoco.mj_step`` on the model :class:`~skel_ros.sim.MujocoEngine` compiles (the
model's MJCF export with its actuators, at the same initial state), then
``MujocoEngine.step()``, then the node with ``engine:=mujoco``; the goal is the same,
node >= 0.9x the raw loop at the default rates. ``--compare-engines`` prints, for
context, raw and engine steps/s of DART and MuJoCo on fullbody1, the arm and the
quadruped (nothing commanded, and holding the initial positions).

1. raw DART: ``dartpy.utils.SkelParser.readWorld(FILE)`` and ``world.step()`` in a loop;
2. engine: ``SimEngine.step()`` (commands applied, efforts recorded), same world;
3. node: ``SimNode`` in this process, ``real_time_factor`` 0 (as fast as possible),
   ``joint_states`` and ``/tf`` at the shipped default rates (``config/sim.yaml``:
   100 Hz and 50 Hz of simulated time) unless ``--joint-states-rate`` / ``--tf-rate``
   say otherwise, a subscriber on both in another context of this process (so the
   middleware delivers every message); its stepping thread runs while the main thread
   spins the executor, as in ``sim_node``, and hands the engine the steps between two
   publications at once (docs/sim_node.md, Performance).

Like with like: raw DART commands nothing, so the engine commands nothing and the
node runs with ``hold_initial`` false (by default it holds every actuated DOF at its
initial position, and a robot that stays up touches the ground less, which makes its
steps cheaper than raw DART's collapsing robot: not a comparison of loop costs). All
three start from the file's initial state, take the same warm-up steps and then time
the same steps, so they simulate the same motion (the cost of a step changes as
bodies touch the ground).

Context rows (not the goal; raw DART cannot hold a pose): the engine holding the
initial positions (``hold_initial_positions``) and the node with its default
``hold_initial`` true, and the ratio of the two, the node's overhead as users run it.

Every loop runs once per round, the rounds one after another (default 5; with 3,
single runs' medians moved by +-0.05 on a quiet 2-core machine), so a change of
load on a shared machine hits all loops alike; it prints the median steps/s of each
(and the range), the median of the per-round ratios to raw DART and the
real-time factor (simulated seconds per wall second). Goals, at the default rates:
node >= 0.9x raw DART; real-time factor >= 5 (which no loop can reach when raw DART
itself is slower than that on the world). With other rates (e.g. ``--joint-states-rate
1000 --tf-rate 100``) the ratio is context: no goal is judged.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from skel_ros.nodes.sim_node import SimNode

REPO = Path(__file__).resolve().parents[1]
# DART's fullbody1 from the SKEL corpus (SKEL_CORPUS: the corpus folder, as for the tests).
FULLBODY = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus")
                ) / "data" / "skel" / "fullbody1.skel"
GOAL_RATIO = 0.9  # node steps/s over raw DART steps/s, at the default publish rates
GOAL_RTF = 5.0  # simulated seconds per wall second
WARMUP = 10  # untimed steps first, in every loop (collision-detector caches, first messages)


class _Timer:
    """Wall and CPU seconds (this process, every thread) of a stretch of code."""

    def __enter__(self) -> _Timer:
        self.wall, self.cpu = -time.perf_counter(), -time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter()
        self.cpu += time.process_time()


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
    model, data, step = engine.world, engine.data, mujoco.mj_step
    for _ in range(WARMUP):
        step(model, data)
    with _Timer() as t:
        for _ in range(steps):
            step(model, data)
    return steps / t.wall, steps / t.cpu


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


def _time_stepping_thread(node: SimNode, executor: SingleThreadedExecutor, first: int,
                          steps: int) -> tuple[float, float]:
    """Wall and CPU seconds of the node's stepping thread over ``steps`` steps from ``first``.

    The stepping thread (the node's runner) takes exactly ``steps`` steps (the same motion
    as the other loops: a step's cost changes along it), notes the time and stops itself:
    this script wraps the runner's ``run_cycles``, which its loop calls for the steps due.
    """
    runner = node.runner
    run_cycles = runner.run_cycles
    ended: list[tuple[float, float]] = []

    def run_timed_steps(count: int, budget: float = math.inf) -> int:
        taken = run_cycles(min(count, first + steps - node.steps_taken), budget)
        if node.steps_taken - first >= steps and not ended:
            ended.append((time.perf_counter(), time.process_time()))
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
    return ended[0][0] - wall, ended[0][1] - cpu


def _node(path: Path, steps: int, *, hold: bool, rates: list[Parameter],
          engine_name: str = "dart") -> tuple[float, float, int, int]:
    """Steps/s (wall, CPU) of the node's stepping thread over ``steps`` steps; messages held.

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

    context = rclpy.Context()
    rclpy.init(context=context)
    listener_context = rclpy.Context()
    rclpy.init(context=listener_context)
    counts = {"joint_states": 0, "tf": 0}
    try:
        listener = rclpy.create_node("bench_listener", context=listener_context)
        qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)

        def count(key: str) -> object:
            def callback(_msg: object) -> None:
                counts[key] += 1
            return callback

        listener.create_subscription(JointState, "joint_states", count("joint_states"), qos)
        listener.create_subscription(TFMessage, "/tf", count("tf"), qos)
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(path)), Parameter("real_time_factor", value=0.0),
            *rates, Parameter("hold_initial", value=hold), Parameter("engine", value=engine_name)])
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        listener_executor = SingleThreadedExecutor(context=listener_context)
        listener_executor.add_node(listener)
        # Let discovery match the subscriber before timing.
        for _ in range(40):
            executor.spin_once(timeout_sec=0.05)
            if node.count_subscribers("joint_states") and node.count_subscribers("/tf"):
                break
        node.run_steps(WARMUP)
        first = node.steps_taken
        wall, cpu = _time_stepping_thread(node, executor, first, steps)
        # Take what is queued (not timed): proves the messages were delivered.
        for _ in range(200):
            listener_executor.spin_once(timeout_sec=0.01)
        node.destroy_node()
        listener.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        rclpy.try_shutdown(context=listener_context)
    return steps / wall, steps / cpu, counts["joint_states"], counts["tf"]


def _round(path: Path, steps: int, *, context: bool, rates: list[Parameter],
           engine_name: str = "dart") -> dict[str, float]:
    """One run of every loop, back to back (steps/s each; messages the subscriber held)."""
    out: dict[str, float] = {}
    raw = _raw_dart if engine_name == "dart" else _raw_mujoco
    out["raw"], out["raw cpu"] = raw(path, steps)
    out["engine"], out["engine cpu"] = _engine(path, steps, hold=False, engine_name=engine_name)
    out["node"], out["node cpu"], out["js"], out["tf"] = _node(
        path, steps, hold=False, rates=rates, engine_name=engine_name)
    if context:
        out["engine held"], out["engine held cpu"] = _engine(path, steps, hold=True,
                                                             engine_name=engine_name)
        out["node held"], out["node held cpu"], _, _ = _node(
            path, steps, hold=True, rates=rates, engine_name=engine_name)
    return out


def compare_engines(steps: int, rounds: int) -> None:
    """Context: raw and engine steps/s of DART and MuJoCo on three worlds (medians)."""
    worlds = [FULLBODY, REPO / "examples" / "arm.skel", REPO / "examples" / "quadruped.skel"]
    print(f"DART vs MuJoCo, {max(1, rounds)} interleaved round(s) of {steps} steps, median "
          f"steps/s; load average {os.getloadavg()[0]:.2f} (context, no goal)")
    print(f"  {'world':<16} {'raw DART':>9} {'raw MuJoCo':>11} {'SimEngine':>10} "
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
        print(f"  {path.name:<16} {m['raw DART']:9.0f} {m['raw MuJoCo']:11.0f} "
              f"{m['SimEngine']:10.0f} {m['MujocoEngine']:13.0f} {m['held: Sim']:10.0f} "
              f"{m['held: Mujoco']:13.0f}")
    print(f"  (load average now {os.getloadavg()[0]:.2f})")


def main() -> None:  # noqa: PLR0915 - one report, printed in order
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skel", type=lambda p: Path(p).resolve(), default=FULLBODY)
    parser.add_argument("--steps", type=int, default=3000, help="steps of each run")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds of all loops, interleaved; medians are reported")
    parser.add_argument("--no-context", action="store_true",
                        help="skip the context rows (engine and node holding the initial pose)")
    parser.add_argument("--joint-states-rate", type=float, default=None, metavar="HZ",
                        help="the node's joint_states_rate (default: the node's default)")
    parser.add_argument("--tf-rate", type=float, default=None, metavar="HZ",
                        help="the node's tf_rate (default: the node's default)")
    parser.add_argument("--engine", choices=("dart", "mujoco"), default="dart",
                        help="the engine of the three loops (default: dart)")
    parser.add_argument("--compare-engines", action="store_true",
                        help="only the context table: DART vs MuJoCo on fullbody1, the arm "
                             "and the quadruped")
    args = parser.parse_args()
    if args.compare_engines:
        compare_engines(args.steps, args.rounds)
        return
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE",
                          str(REPO / "config" / "fastdds_localhost.xml"))
    from rclpy.parameter import Parameter

    from skel_ros.model import load_model
    from skel_ros.nodes.sim_node import PARAMETERS

    rates = [Parameter(name, value=value) for name, value in (
        ("joint_states_rate", args.joint_states_rate), ("tf_rate", args.tf_rate))
        if value is not None]
    js_rate = PARAMETERS["joint_states_rate"].default if args.joint_states_rate is None \
        else args.joint_states_rate
    tf_rate = PARAMETERS["tf_rate"].default if args.tf_rate is None else args.tf_rate
    default_rates = not rates
    dt = load_model(args.skel).time_step
    print(f"world: {args.skel} (time step {dt * 1e3:g} ms); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; {args.rounds} interleaved round(s) of "
          f"{args.steps} steps, medians (min-max)")
    # Rounds interleave the loops, so a change of load on a shared machine hits them
    # alike; ratios are taken within a round, then the median.
    rounds = [_round(args.skel, args.steps, context=not args.no_context, rates=rates,
                     engine_name=args.engine)
              for _ in range(max(1, args.rounds))]
    raw_name, engine_class = (("raw DART world.step()", "SimEngine") if args.engine == "dart"
                              else ("raw MuJoCo mj_step()", "MujocoEngine"))
    raw_label = "raw DART" if args.engine == "dart" else "raw MuJoCo"

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rounds)

    def spread(key: str) -> str:
        values = [r[key] for r in rounds]
        return f"({min(values):.0f}-{max(values):.0f})"

    def ratio(key: str, base: str) -> float:
        return statistics.median(r[key] / r[base] for r in rounds)

    print(f"engine {args.engine}; nothing commanded (the raw loop's world; node hold_initial "
          "false):")
    rows = [(raw_name, "raw"), (f"{engine_class}.step()", "engine"),
            (f"sim_node loop (joint_states {js_rate:g} Hz, /tf {tf_rate:g} Hz)", "node")]
    for label, key in rows:
        print(f"  {label:<48} {med(key):7.0f} steps/s {spread(key):<12} "
              f"{ratio(key, 'raw'):5.2f}x {raw_label}  real-time factor {med(key) * dt:5.2f}")
    overhead = statistics.median(1e6 / r["node"] - 1e6 / r["engine"] for r in rounds)
    print(f"  node cost over the engine's step: {overhead:.0f} us/step; the subscriber held "
          f"{rounds[-1]['js']:.0f} joint_states and {rounds[-1]['tf']:.0f} /tf messages "
          "(its depth-10 queues)")
    # CPU time is less moved by other jobs than wall time (not the goal: context).
    print(f"  by CPU time of this process: {raw_label} {med('raw cpu'):.0f} steps/s, engine "
          f"{ratio('engine cpu', 'raw cpu'):.2f}x, node {ratio('node cpu', 'raw cpu'):.2f}x "
          "(the node's includes the middleware's threads)")
    if not args.no_context:
        print("context, initial positions held (node default hold_initial true; not the goal):")
        for label, key in ((f"{engine_class}.step() holding", "engine held"),
                           ("sim_node loop holding", "node held")):
            print(f"  {label:<48} {med(key):7.0f} steps/s {spread(key):<12} "
                  f"{ratio(key, 'engine held'):5.2f}x engine holding  "
                  f"real-time factor {med(key) * dt:5.2f}")
        held = statistics.median(1e6 / r["node held"] - 1e6 / r["engine held"] for r in rounds)
        print(f"  node cost over the engine's step: {held:.0f} us/step; by CPU time the node "
              f"is {ratio('node held cpu', 'engine held cpu'):.2f}x the engine")
    node_ratio = ratio("node", "raw")
    if default_rates:
        verdict = "met" if node_ratio >= GOAL_RATIO else "NOT met"
        print(f"goal node >= {GOAL_RATIO}x {raw_label} at the default rates: {verdict} "
              f"({node_ratio:.2f}x)")
    else:
        print(f"node {node_ratio:.2f}x {raw_label} at the rates given (context, no goal)")
    rtf, raw_rtf = med("node") * dt, med("raw") * dt
    verdict = "met" if rtf >= GOAL_RTF else "NOT met"
    bound = "" if raw_rtf >= GOAL_RTF else f"; {raw_label} alone reaches only {raw_rtf:.2f}"
    print(f"goal real-time factor >= 5: {verdict} ({rtf:.2f}{bound})")


if __name__ == "__main__":
    sys.exit(main())
