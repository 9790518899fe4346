"""Benchmark: command received -> bytes written, inside the hardware node.

The hardware node runs in this process on 12 emulated Dynamixel servos (the quadruped
example, one bus, the emulator in its own process on a pty) with its control loop at
1 kHz. A second node publishes ``joint_commands`` (all 12 positions) at 500 Hz. For each
command this script measures the time from the goal being handed to the hardware backend
(through the core's limits gate) to the driver's Sync Write returning (bytes written to
the port), by wrapping the backend's and the driver's ``write`` (:class:`LatencyProbe`;
nothing in the product records it). Prints p50 / p99 and the ratio p99 / 1 ms (goal: < 1).

Usage: .venv/bin/python bench/hw_latency.py [--seconds S]
(prints the machine's load average and the date first: the latencies move with the load)
(``bench/hardware.py`` imports :func:`run`.)
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOAL_P99 = 1e-3  # s
LEGS = ("fl", "fr", "hl", "hr")
DOFS = ("hip_abd", "hip_pitch", "knee")


def quadruped_dynamixel_yaml(control_rate: float) -> str:
    """A 12-servo, one-bus Dynamixel mapping of examples/quadruped.skel."""
    lines = [f"control_rate: {control_rate}", "command_timeout: 0.0", "buses:",
             "  legs:", "    protocol: dynamixel",
             "    transport: {port: /dev/null, baudrate: 4000000}", "joints:"]
    for i, (leg, dof) in enumerate((leg, dof) for leg in LEGS for dof in DOFS):
        lines.append(f"  {leg}_{dof}: {{bus: legs, id: {i + 1}, model: XM430-W350}}")
    return "\n".join(lines) + "\n"


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of ``values``; NaN when there are none."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def enable_emulated(node: Any) -> str:  # noqa: ANN401 - a HardwareNode
    """Wait (20 s at most) for the emulated buses to connect, then activate (torque on).

    Returns:
        "" when the node is active, else why not.
    """
    from skel_ros.hardware import MotionState

    deadline = time.monotonic() + 20.0
    while node.backend.state is not MotionState.DISABLED and time.monotonic() < deadline:
        time.sleep(0.05)
    node.trigger_activate()
    return "" if node.active else node.backend.message or "activate failed"


class LatencyProbe:
    """Goal handed in -> bytes written, measured from this script.

    Wraps, on these objects only, the hardware backend's ``write`` (the core hands it a
    goal that passed the limits gate: the time is noted) and each bus driver's ``write``
    (when it returns the bytes are out: every goal noted since gets its latency). The
    backend calls ``write`` from the ROS executor's thread, the drivers' from the loop's.

    Args:
        backend: the node's :class:`~skel_ros.hardware.backend.HardwareBackend`.
    """

    def __init__(self, backend: Any) -> None:  # noqa: ANN401 - HardwareBackend
        self.samples: list[float] = []  # s
        self._pending: list[float] = []  # perf_counter of the goals not written yet
        self._lock = threading.Lock()
        hand_in = backend.write

        def write(*args: Any, **kwargs: Any) -> None:  # noqa: ANN401
            with self._lock:
                self._pending.append(time.perf_counter())
            hand_in(*args, **kwargs)

        backend.write = write
        for slot in backend._slots:  # noqa: SLF001 - the drivers are the bench's probe points
            self._wrap(slot.driver)

    def _wrap(self, driver: Any) -> None:  # noqa: ANN401 - an ActuatorBus
        send = driver.write

        def write(commands: Any) -> None:  # noqa: ANN401
            send(commands)
            now = time.perf_counter()
            with self._lock:
                pending, self._pending = self._pending, []
                self.samples.extend(now - t for t in pending)

        driver.write = write

    def clear(self) -> None:
        """Forget the samples so far."""
        with self._lock:
            self.samples.clear()


def _publish(pub: Any, msg_type: Any, names: list[str], seconds: float,  # noqa: ANN401
             rate: float) -> int:
    """Publish position commands (gentle sines around the stance) at ``rate`` for ``seconds``."""
    start = now = time.monotonic()
    sent = 0
    while now - start < seconds:
        phase = now - start
        pub.publish(msg_type(name=names, position=[
            0.2 * math.sin(2 * math.pi * 0.5 * phase + i) - (0.8 if "knee" in n else 0.0)
            for i, n in enumerate(names)]))
        sent += 1
        time.sleep(max(0.0, start + sent / rate - time.monotonic()))
        now = time.monotonic()
    return sent


def run(seconds: float = 3.0, control_rate: float = 1000.0,
        command_rate: float = 500.0) -> list[str]:
    """Measure and return the report lines."""
    from skel_ros.nodes.sim_to_real import ros_environment

    os.environ.update(ros_environment())
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.hardware_node import HardwareNode

    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "quadruped_dynamixel.yaml"
        config.write_text(quadruped_dynamixel_yaml(control_rate), encoding="utf-8")
        context = rclpy.Context()
        rclpy.init(context=context)
        node = commander = None
        executor = SingleThreadedExecutor(context=context)
        try:
            node = HardwareNode(context=context, parameter_overrides=[
                Parameter("skel_file", value=str(REPO / "examples" / "quadruped.skel")),
                Parameter("hardware_config", value=str(config)),
                Parameter("emulate", value=True),
            ])
            commander = rclpy.create_node("hw_latency_commander", context=context)
            pub = commander.create_publisher(JointState, "joint_commands", 10)
            executor.add_node(node)
            executor.add_node(commander)
            spinner = threading.Thread(target=executor.spin, daemon=True)
            spinner.start()
            backend = node.backend
            probe = LatencyProbe(backend)
            problem = enable_emulated(node)
            if problem:
                return [f"hw_latency: could not enable the emulated servos: {problem}"]
            sent = _publish(pub, JointState, list(backend.names), seconds, command_rate)
            time.sleep(0.05)
            status = backend.status()
            overruns = getattr(node.runner.pacer, "overruns", 0)  # the hardware's GridPacer
            samples = list(probe.samples)
        finally:
            executor.shutdown()
            if commander is not None:
                commander.destroy_node()
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown(context=context)
    if not samples:
        return ["hw_latency: no command reached the bus"]
    p50, p99 = percentile(samples, 0.50), percentile(samples, 0.99)
    return [
        (f"hw_latency: 12 emulated Dynamixel joints, control loop {control_rate:g} Hz,"
        f" commands {command_rate:g} Hz for {seconds:g} s"),
        (f"  commands published {sent}, written {len(samples)}; cycles {status.cycles},"
        f" overruns {overruns}"),
        (f"  goal handed in -> bytes written: p50 {p50 * 1e6:.0f} us, p99 {p99 * 1e6:.0f} us,"
        f" max {max(samples) * 1e6:.0f} us"),
        f"  p99 / goal (1 ms): {p99 / GOAL_P99:.2f} ({'met' if p99 < GOAL_P99 else 'NOT met'})",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    print(f"bench/hw_latency.py: {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    for line in run(seconds=args.seconds):
        print(line)
    print(f"(load average now {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
