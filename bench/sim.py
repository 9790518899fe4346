"""Simulation speed: raw dartpy, our engine, and the whole simulation node, on one world.

    .venv/bin/python bench/sim.py [--skel FILE] [--steps N]

1. raw DART: ``dartpy.utils.SkelParser.readWorld(FILE)`` and ``world.step()`` in a loop;
2. engine: ``SimEngine.step()`` (commands applied, efforts recorded), same world;
3. node: ``SimNode`` in this process, ``real_time_factor`` 0 (as fast as possible),
   ``joint_states`` at 1 kHz and ``/tf`` at 100 Hz of simulated time, a subscriber on
   both in another context of this process (so the middleware delivers every message);
   its stepping thread runs while the main thread spins the executor, as in
   ``sim_node``.

All three start from the file's initial state and take the same number of steps, so
they simulate the same motion (the cost of a step changes as bodies touch the ground).

Prints steps/s of each, the ratios to raw DART and the real-time factor (simulated
seconds per wall second). Goals: node >= 0.8x raw DART; real-time factor >= 5 (which
no loop can reach when raw DART itself is slower than that on the world).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FULLBODY = Path("/work/shared/skel-corpus/data/skel/fullbody1.skel")
GOAL_RATIO = 0.8  # node steps/s over raw DART steps/s
GOAL_RTF = 5.0  # simulated seconds per wall second


def _raw_dart(path: Path, steps: int) -> float:
    import dartpy as dart

    world = dart.utils.SkelParser.readWorld(str(path))
    world.step()  # warm up (collision detector caches)
    start = time.perf_counter()
    for _ in range(steps):
        world.step()
    return steps / (time.perf_counter() - start)


def _engine(path: Path, steps: int) -> float:
    from skel_ros.model import load_skel
    from skel_ros.sim import SimEngine

    engine = SimEngine(load_skel(path))
    engine.step()
    start = time.perf_counter()
    engine.step(steps)
    return steps / (time.perf_counter() - start)


def _node(path: Path, steps: int) -> tuple[float, int, int]:
    """Steps/s of the node's own stepping thread over ``steps`` steps; messages received."""
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
            Parameter("joint_states_rate", value=1000.0), Parameter("tf_rate", value=100.0)])
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        listener_executor = SingleThreadedExecutor(context=listener_context)
        listener_executor.add_node(listener)
        # Let discovery match the subscriber before timing.
        for _ in range(40):
            executor.spin_once(timeout_sec=0.05)
            if node.count_subscribers("joint_states") and node.count_subscribers("/tf"):
                break
        node.run_steps(10)
        first = node.steps_taken
        start = time.perf_counter()
        node.start()
        while node.steps_taken - first < steps:
            executor.spin_once(timeout_sec=0.05)  # as sim_node's main thread does
        node.stop()
        elapsed = time.perf_counter() - start
        steps = node.steps_taken - first
        # Take what is queued (not timed): proves the messages were delivered.
        for _ in range(200):
            listener_executor.spin_once(timeout_sec=0.01)
        node.destroy_node()
        listener.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
        rclpy.try_shutdown(context=listener_context)
    return steps / elapsed, counts["joint_states"], counts["tf"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skel", type=lambda p: Path(p).resolve(), default=FULLBODY)
    parser.add_argument("--steps", type=int, default=3000, help="steps of each run")
    args = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE",
                          str(REPO / "config" / "fastdds_localhost.xml"))
    from skel_ros.model import load_skel

    dt = load_skel(args.skel).time_step
    print(f"world: {args.skel} (time step {dt * 1e3:g} ms); {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}")
    raw = _raw_dart(args.skel, args.steps)
    engine = _engine(args.skel, args.steps)
    node, js, tf = _node(args.skel, args.steps)
    rows = [("raw DART world.step()", raw), ("SimEngine.step()", engine),
            ("sim_node loop (joint_states 1 kHz, /tf 100 Hz)", node)]
    for label, rate in rows:
        print(f"  {label:<48} {rate:9.0f} steps/s  {rate / raw:5.2f}x raw DART  "
              f"real-time factor {rate * dt:6.2f}")
    print(f"  node run: the subscriber held {js} joint_states and {tf} /tf messages"
          " (its depth-10 queues)")
    ratio = node / raw
    verdict = "met" if ratio >= GOAL_RATIO else "NOT met"
    print(f"goal node >= {GOAL_RATIO}x raw DART: {verdict} ({ratio:.2f}x)")
    rtf = node * dt
    verdict = "met" if rtf >= GOAL_RTF else "NOT met"
    bound = "" if raw * dt >= GOAL_RTF else f"; raw DART alone reaches only {raw * dt:.2f}"
    print(f"goal real-time factor >= 5: {verdict} ({rtf:.2f}{bound})")


if __name__ == "__main__":
    sys.exit(main())
