"""Benchmark: what the hardware node costs on a robot computer, as ratios and CPU-s/s.

Three processes, as on a robot: the hardware node exactly as ``ros2 run skel_ros
hardware_node`` starts it (the bundled arm, ``examples/arm.skel`` on
``config/hardware/arm_dynamixel.yaml``: 4 Dynamixel servos, control at 200 Hz, on the
emulated bus, whose emulator is a process of its own; ``autostart:=active``: torque on,
holding); a **reference**, a bare rclpy node that subscribes to the same ``joint_commands``
and does nothing with them, spun by the same executor as the node; and this script, which
publishes the commands and reads the node's ``/diagnostics`` (its loop's cycle count).

CPU is each process's own (``/proc/<pid>/stat``: user + system time of every thread),
so the emulator's and this script's are not counted. Phases, each ``--seconds`` long:

1. **holding**: no commands. The node's CPU-s/s (goal <= 0.10), the reference's idle CPU.
2. **stream**: ``joint_commands`` for the 4 joints at 200 Hz. The node's CPU-s/s (goal
   <= 0.25); **per command**: each process's added CPU over phase 1 divided by the
   commands sent; the ratio node / reference (goal <= 1.5: a command costs the node at
   most half again what merely receiving it costs any rclpy node).
3. **beside one busy process** (``python3 -c 'while 1: pass'``) with the stream on: the
   share of its 200 cycles a second the loop ran (goal >= 99 %).

Context, not a goal: a second reference, started once the node is up, is the node as it
was before ``joint_commands`` had a node and an executor thread of its own
(``<node>_commands``, docs/hardware.md "The node"): one node with the hardware node's ROS
entities beyond those every rclpy node has (as many more services and subscriptions as
the ROS graph shows the node and its command stream's node with, ``joint_commands`` told
its publisher as the node's is, a FollowJointTrajectory action server, three timers), on
one executor, doing nothing with a command. Its CPU per command over the bare
subscriber's is what rclpy's executor alone charged a command on a node of that size.

Asserts nothing. Usage: .venv/bin/python bench/hardware_node.py [--seconds S]
[--param NAME:=VALUE ...] (more parameters of the hardware node, e.g.
``control_rate:=100.0``; the hardware YAML's keys, such as ``write_on_command``, are not
parameters)
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

COMMAND_RATE = 200.0  # Hz
GOALS = {"holding": 0.10, "stream": 0.25, "per_command": 1.5, "cycles": 0.99}
_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14, 15)


# ---------------------------------------------------------------- the reference process

def reference(like: tuple[int, int] | None = None) -> None:
    """A bare subscriber of ``joint_commands``, spun as the hardware node is spun.

    ``like`` ``(services, subscriptions)``: the context reference instead, a node with
    the hardware node's ROS entities beside those every rclpy node has (that many more
    services, that many subscriptions, ``joint_commands``'s told its publisher as the
    node's is, a FollowJointTrajectory action server, three timers), doing nothing.
    """
    import rclpy
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.shutdown import make_executor

    rclpy.init()
    if like is None:
        node = rclpy.create_node("bench_reference")
        node.create_subscription(JointState, "joint_commands", lambda _msg: None, 10)
    else:
        node = _entities_node(*like)
    executor = make_executor()
    executor.add_node(node)
    try:
        executor.spin()
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def _entities_node(services: int, subscriptions: int) -> Any:  # noqa: ANN401 - an rclpy Node
    """The context reference's node (:func:`reference`)."""
    import rclpy
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionServer, GoalResponse
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger

    from skel_ros.nodes.sources import subscribe_with_source

    node = rclpy.create_node("bench_reference_entities")
    for i in range(services):
        node.create_service(Trigger, f"~/service_{i}", lambda _req, res: res)
    subscribe_with_source(node, JointState, "joint_commands", lambda _msg, _source: None, 10)
    for i in range(subscriptions - 1):
        node.create_subscription(JointState, f"~/topic_{i}", lambda _msg: None, 10)
    ActionServer(node, FollowJointTrajectory, "~/follow_joint_trajectory",
                 execute_callback=lambda _handle: FollowJointTrajectory.Result(),
                 goal_callback=lambda _goal: GoalResponse.REJECT)
    for _ in range(3):
        node.create_timer(1.0, lambda: None)
    return node


def _entities(driver: Driver, name: str, bare: str) -> tuple[int, int]:
    """(services, subscriptions) node ``name`` and its command stream's node have beyond
    what node ``bare`` has, less the action server's own three services."""
    graph = driver.node

    def count(node: str) -> tuple[int, int]:
        return (len(graph.get_service_names_and_types_by_node(node, "/")),
                len(graph.get_subscriber_names_and_types_by_node(node, "/")))

    (node_services, node_subs), (bare_services, bare_subs) = count(name), count(bare)
    node_subs += count(f"{name}_commands")[1]
    actions = sum("/_action/" in n for n, _ in
                  graph.get_service_names_and_types_by_node(name, "/"))
    return node_services - bare_services - actions, node_subs - bare_subs + 1


# ---------------------------------------------------------------- the driver (this process)

class Driver:
    """Publishes ``joint_commands`` when asked; keeps the node's newest cycle count."""

    def __init__(self, names: list[str]) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        self.node = rclpy.create_node("bench_driver")
        self.names = names
        self.sent = 0
        self.streaming = False
        self.cycles: tuple[float, int] | None = None  # (arrival, cycles)
        self.state = ""
        self._message = JointState
        self._pub = self.node.create_publisher(JointState, "joint_commands", 10)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._diagnostics, 10)
        self._start = time.monotonic()
        self.node.create_timer(1.0 / COMMAND_RATE, self._tick)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)

    def _tick(self) -> None:
        if not self.streaming:
            return
        t = time.monotonic() - self._start
        self._pub.publish(self._message(name=self.names, position=[
            0.3 * math.sin(2 * math.pi * 0.5 * t + i) for i in range(len(self.names))]))
        self.sent += 1

    def _diagnostics(self, msg: Any) -> None:  # noqa: ANN401 - DiagnosticArray
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if "cycles" in values:
                self.cycles = (time.monotonic(), int(values["cycles"]))
                self.state = values.get("state", "")

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def matched(self, subscribers: int, limit: float = 10.0) -> None:
        """Spin until ``joint_commands`` has ``subscribers`` (at most ``limit`` s)."""
        end = time.monotonic() + limit
        while self._pub.get_subscription_count() < subscribers and time.monotonic() < end:
            self.spin(0.05)

    def fresh_cycles(self) -> tuple[float, int]:
        """The next diagnostics' (arrival, cycles), waiting for it (at most 5 s)."""
        self.cycles = None
        end = time.monotonic() + 5.0
        while self.cycles is None and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        if self.cycles is None:
            raise RuntimeError("the hardware node publishes no /diagnostics")
        return self.cycles


def phase(driver: Driver, pids: dict[str, int], seconds: float) -> dict[str, float]:
    """CPU-s/s of each process, commands sent a second and the loop's cycles a second."""
    t0, c0 = driver.fresh_cycles()
    cpu0 = {k: process_cpu(p) for k, p in pids.items()}
    sent0, w0 = driver.sent, time.monotonic()
    driver.spin(seconds)
    wall = time.monotonic() - w0
    cpu = {k: (process_cpu(p) - cpu0[k]) / wall for k, p in pids.items()}
    sent = driver.sent - sent0
    t1, c1 = driver.fresh_cycles()
    return {**cpu, "sent": sent, "rate": sent / wall, "cycles": (c1 - c0) / (t1 - t0)}


def _wait_or_kill(proc: subprocess.Popen[Any], timeout: float = 15.0) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(seconds: float, params: list[str]) -> list[str]:
    import yaml

    from skel_ros.nodes.sim_to_real import ros_environment

    env = ros_environment()
    os.environ.update(env)
    import rclpy

    arm = REPO / "examples" / "arm.skel"
    config = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
    names = list(yaml.safe_load(config.read_text())["joints"])
    node = subprocess.Popen([  # noqa: S603 - the node as `ros2 run` starts it
        sys.executable, "-m", "skel_ros.nodes.hardware_node", "--ros-args",
        "-p", f"skel_file:={arm}",
        "-p", f"hardware_config:={config}",
        "-p", "emulate:=true", "-p", "autostart:=active", "-p", "command_timeout:=0.0",
        *[arg for param in params for arg in ("-p", param)],
        "--log-level", "warn"], env=env)
    ref = subprocess.Popen([sys.executable, __file__, "--reference"], env=env)  # noqa: S603
    alike: subprocess.Popen[bytes] | None = None
    busy: subprocess.Popen[bytes] | None = None
    rclpy.init(args=[])  # this script's own arguments are not ROS arguments
    from skel_ros.nodes.shutdown import make_executor

    executor = type(make_executor()).__name__
    try:
        driver = Driver(names)
        end = time.monotonic() + 30.0
        while driver.state != "enabled" and time.monotonic() < end:
            driver.spin(0.1)
        if driver.state != "enabled":
            return [f"the hardware node did not come up enabled (state {driver.state!r})"]
        driver.spin(1.0)  # settle
        like = _entities(driver, "hardware_node", "bench_reference")
        alike = subprocess.Popen([sys.executable, __file__, "--reference-like",  # noqa: S603
                                  *map(str, like)], env=env)
        driver.matched(3)  # the node, the bare reference and this one
        pids = {"node": node.pid, "reference": ref.pid, "entities": alike.pid}
        load = os.getloadavg()[0]
        hold = phase(driver, pids, seconds)
        driver.streaming = True
        driver.spin(1.0)
        stream = phase(driver, pids, seconds)
        busy = subprocess.Popen([sys.executable, "-c", "while 1: pass"])
        driver.spin(1.0)
        loaded = phase(driver, pids, seconds)
        driver.streaming = False
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
        procs = [p for p in (node, ref, alike) if p is not None]
        for proc in procs:
            proc.send_signal(2)
        for proc in procs:
            _wait_or_kill(proc)
        rclpy.try_shutdown()

    return _report(executor, load, seconds, params, like, (hold, stream, loaded))


def _report(executor: str, load: float, seconds: float, params: list[str],  # noqa: PLR0917
            like: tuple[int, int], phases: tuple[dict[str, float], ...]) -> list[str]:
    """The printed lines: the goals, then the figures behind them."""
    hold, stream, loaded = phases

    def per_command(who: str) -> float:
        return (stream[who] - hold[who]) / stream["rate"]

    ratio = per_command("node") / per_command("reference")
    rows = [
        ("holding, node CPU-s/s", hold["node"], GOALS["holding"], "<="),
        (f"{COMMAND_RATE:g} Hz stream, node CPU-s/s", stream["node"], GOALS["stream"], "<="),
        ("per command, node / bare subscriber", ratio, GOALS["per_command"], "<="),
        ("loop cycles kept beside 1 busy process", loaded["cycles"] / 200.0,
         GOALS["cycles"], ">="),
    ]
    lines = [(f"hardware node, arm (4 emulated Dynamixel servos, 200 Hz), executor {executor};"
              f" {os.cpu_count()} CPU(s), load average {load:.2f} at the start,"
              f" {seconds:g} s a phase"
              + (f"; node parameters {' '.join(params)}" if params else ""))]
    for label, value, goal, sense in rows:
        met = value <= goal if sense == "<=" else value >= goal
        lines.append(f"  {label:42s} {value:7.3f}  (goal {sense} {goal:g}:"
                     f" {'met' if met else 'MISSED'})")
    lines += [
        (f"  per command: node {per_command('node') * 1e3:.3f} ms of CPU, bare subscriber"
         f" {per_command('reference') * 1e3:.3f} ms; {stream['rate']:.1f} commands/s sent"),
        (f"  context: per command, one node with the node's ROS entities on one executor"
         f" ({like[0]} more services, {like[1]} subscriptions, the action server; doing"
         f" nothing) / bare subscriber"
         f" {per_command('entities') / per_command('reference'):.3f}"
         f" ({per_command('entities') * 1e3:.3f} ms); node / that node"
         f" {per_command('node') / per_command('entities'):.3f}"),
        (f"  reference CPU-s/s: idle {hold['reference']:.3f}, stream {stream['reference']:.3f};"
         f" node loop cycles/s: holding {hold['cycles']:.1f}, stream {stream['cycles']:.1f},"
         f" beside a busy process {loaded['cycles']:.1f} (node CPU-s/s there"
         f" {loaded['node']:.3f})"),
    ]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--param", action="append", default=[], metavar="NAME:=VALUE",
                        help="one more parameter of the hardware node (repeatable)")
    parser.add_argument("--reference", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--reference-like", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reference or args.reference_like:
        reference(tuple(args.reference_like) if args.reference_like else None)
        return 0
    for line in run(args.seconds, args.param):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
