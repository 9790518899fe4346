"""Benchmark: what the hardware node costs, per thread, and how timely its loop is.

The hardware node runs in this process as ``hardware_node`` runs it (one
``SingleThreadedExecutor`` thread; the control loop in its own thread), driving the bundled
arm (``examples/arm.skel``, ``config/hardware/arm_dynamixel.yaml``: 4 Dynamixel servos,
200 Hz) on the emulated bus (the emulator in its own process on a pty), torque on. A probe
in another process plays the sim-to-real recorder and player: it publishes
``joint_commands`` at 50 Hz (the trajectory player's stream rate) and receives
``joint_states``.

For each phase (idle machine; then with two busy loops ``python3 -c 'while 1: pass'``,
one per core of the 2-core development machine, stopped afterwards) it prints:

* CPU seconds per second of the executor thread, the control loop thread and the whole
  process (``time.pthread_getcpuclockid``: the threads' own clocks);
* the loop's achieved rate (cycles per second) against its configured rate, and its
  overruns;
* goal handed in -> bytes written (p50 / p99 / max; measured by wrapping the backend's
  and the driver's ``write`` from this script: ``hw_latency.LatencyProbe``);
* ``joint_states`` at the probe: messages per second, age (arrival - header stamp: the
  read's time) p50 / p99 / max, and the longest gap between two messages;
* the load average.

Asserts nothing; one run. Usage: .venv/bin/python bench/hardware_node.py [--seconds S]
[--no-load] [--busy N]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from hw_latency import LatencyProbe, enable_emulated, percentile  # noqa: E402 - bench/, beside this file

COMMAND_RATE = 50.0  # Hz, the trajectory player's default stream rate
SETTLE = 1.0  # s after the load starts, before measuring


def _ms(values: list[float]) -> str:
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    return (f"p50 {p50 * 1e3:6.1f} ms, p99 {p99 * 1e3:6.1f} ms,"
            f" max {max(values, default=math.nan) * 1e3:6.1f} ms")


# ---------------------------------------------------------------- the probe (another process)

def probe(seconds: float) -> None:
    """Publish joint_commands at COMMAND_RATE, receive joint_states; print one JSON line."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node("bench_probe")
    names = [n.strip() for n in sys.stdin.readline().split(",")]
    arrivals: list[tuple[float, float]] = []  # (arrival, stamp) in ROS (wall) time

    def on_state(msg: JointState) -> None:
        now = node.get_clock().now().nanoseconds * 1e-9
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        arrivals.append((now, stamp))

    node.create_subscription(JointState, "joint_states", on_state, 10)
    pub = node.create_publisher(JointState, "joint_commands", 10)
    start = time.monotonic()

    def tick() -> None:
        t = time.monotonic() - start
        pub.publish(JointState(name=names, position=[
            0.3 * math.sin(2 * math.pi * 0.5 * t + i) for i in range(len(names))]))

    node.create_timer(1.0 / COMMAND_RATE, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    print("ready", flush=True)
    window: list[tuple[float, float]] = []
    for line in sys.stdin:  # "start" / "stop" / "quit"
        command = line.strip()
        if command == "start":
            drain = time.monotonic() + 0.3  # messages queued while not spinning: dropped
            while time.monotonic() < drain:
                executor.spin_once(timeout_sec=0.01)
            arrivals.clear()
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                executor.spin_once(timeout_sec=0.01)
            window = list(arrivals)
            ages = [a - s for a, s in window]
            gaps = [b[0] - a[0] for a, b in itertools.pairwise(window)]
            print(json.dumps({"count": len(window), "ages": ages,
                              "max_gap": max(gaps, default=math.nan)}), flush=True)
        else:
            break
    node.destroy_node()
    rclpy.try_shutdown()


# ---------------------------------------------------------------- the node (this process)

class _Cpu:
    """CPU seconds of one thread (its own clock) or of the process."""

    def __init__(self, thread: threading.Thread | None) -> None:
        self.clock = (time.CLOCK_PROCESS_CPUTIME_ID if thread is None
                      else time.pthread_getcpuclockid(thread.ident))  # type: ignore[arg-type]

    def __call__(self) -> float:
        return time.clock_gettime(self.clock)


def measure(node: Any, spinner: threading.Thread, probe_proc: subprocess.Popen[str],  # noqa: ANN401
            latency: LatencyProbe, label: str) -> list[str]:
    backend, runner = node.backend, node.runner
    loop = runner._thread  # noqa: SLF001 - the loop thread's CPU clock
    clocks = {"executor": _Cpu(spinner), "loop": _Cpu(loop), "process": _Cpu(None)}
    before = {k: c() for k, c in clocks.items()}
    status0 = backend.status()
    overruns0 = runner.pacer.overruns
    latency.clear()
    wall0 = time.monotonic()
    probe_proc.stdin.write("start\n")  # type: ignore[union-attr]
    probe_proc.stdin.flush()  # type: ignore[union-attr]
    result = json.loads(probe_proc.stdout.readline())  # type: ignore[union-attr]
    wall = time.monotonic() - wall0
    after = {k: c() for k, c in clocks.items()}
    status = backend.status()
    latencies = list(latency.samples)
    load = os.getloadavg()
    rate = (status.cycles - status0.cycles) / wall
    cpu = {k: (after[k] - before[k]) / wall for k in clocks}
    return [
        (f"{label} (load average {load[0]:.2f} {load[1]:.2f}, {wall:.1f} s, state"
         f" {status.state.value}{'' if status.state.value == 'enabled' else ': '}"
         f"{'' if status.state.value == 'enabled' else status.message})"),
        (f"  CPU s/s: executor thread {cpu['executor']:.3f}, loop thread {cpu['loop']:.3f},"
         f" whole process {cpu['process']:.3f}"),
        (f"  loop: {rate:6.1f} cycles/s of {backend.control_rate:g} Hz configured;"
         f" overruns {runner.pacer.overruns - overruns0}"),
        f"  command -> bytes written ({len(latencies)}): {_ms(latencies)}",
        (f"  joint_states at the probe: {result['count'] / wall:5.1f} msg/s; age"
         f" {_ms(result['ages'])}; longest gap {result['max_gap'] * 1e3:.1f} ms"),
    ]


def run(seconds: float, busy: int, *, no_load: bool) -> list[str]:
    from skel_ros.nodes.sim_to_real import ros_environment

    env = ros_environment()
    os.environ.update(env)
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    rclpy.init()
    node = None
    executor = SingleThreadedExecutor()
    probe_proc = subprocess.Popen(  # noqa: S603 - this script, another role
        [sys.executable, __file__, "--probe", "--seconds", str(seconds)], env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    busy_procs: list[subprocess.Popen[bytes]] = []
    lines: list[str] = []
    try:
        node = HardwareNode(parameter_overrides=[
            Parameter("skel_file", value=str(REPO / "examples" / "arm.skel")),
            Parameter("hardware_config",
                      value=str(REPO / "config" / "hardware" / "arm_dynamixel.yaml")),
            Parameter("emulate", value=True),
            Parameter("command_timeout", value=0.0),
        ])
        executor.add_node(node)
        spinner = threading.Thread(target=executor.spin, name="executor", daemon=True)
        spinner.start()
        latency = LatencyProbe(node.backend)
        problem = enable_emulated(node)
        if problem:
            return [f"could not enable the emulated servos: {problem}"]
        probe_proc.stdin.write(",".join(node.shell.robot.joint_names) + "\n")  # type: ignore[union-attr]
        probe_proc.stdin.flush()  # type: ignore[union-attr]
        probe_proc.stdout.readline()  # type: ignore[union-attr]  # "ready"
        time.sleep(SETTLE)
        lines += [(f"hardware node, arm on the emulated Dynamixel bus, commands at"
                   f" {COMMAND_RATE:g} Hz from another process; {os.cpu_count()} CPU(s)")]
        lines += measure(node, spinner, probe_proc, latency, "no load")
        if not no_load:
            busy_procs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"])
                          for _ in range(busy)]
            time.sleep(SETTLE)
            lines += measure(node, spinner, probe_proc, latency, f"{busy} busy loop(s)")
    finally:
        for proc in busy_procs:
            proc.kill()
            proc.wait()
        if probe_proc.stdin is not None:
            probe_proc.stdin.write("quit\n")
            probe_proc.stdin.close()
        probe_proc.wait(timeout=10)
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--busy", type=int, default=2, help="busy loops in the loaded phase")
    parser.add_argument("--no-load", action="store_true", help="only the idle phase")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe(args.seconds)
        return 0
    for line in run(args.seconds, args.busy, no_load=args.no_load):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
