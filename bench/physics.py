"""Benchmark: does the physics-backed emulation hold real time beside the simulation node?

Issue 28, item 5. The bundled arm (``examples/arm.skel`` on
``config/hardware/arm_dynamixel.yaml``: 4 Dynamixel servos, control at 200 Hz) as
``skel-ros sim-to-real --physics`` starts it: the hardware node with ``emulate:=true
physics:=true`` (its emulator, ``python -m skel_ros.physical.dynamixel``, a process of its
own that steps one MuJoCo model of the arm on its clock) in namespace ``real`` and the
simulation node (DART, ``time_base`` wall) in namespace ``sim``, the command lines of
:func:`skel_ros.nodes.sim_to_real.node_commands`; plus ``autostart:=active`` and
``command_timeout:=0`` on the hardware node, so it holds torque without the run's enable
call. This script streams ``/joint_commands`` at 100 Hz (as the player streams a
trajectory) so that the emulated arm moves, for ``--seconds``.

What is measured, over ``--seconds`` of wall time after the arm is enabled and 1 s of
settling:

* **real-time factor of the emulated robot**: simulated seconds its physics world
  advanced per wall second. The world steps lazily: each packet that reaches the
  emulator first steps the world up to the packet's arrival time, so a world that keeps
  up is within one bus cycle of the clock, and one that cannot keep up falls behind. It
  is read from outside the package, without touching ``skel_ros/physical``: this script
  puts a ``sitecustomize`` module on the hardware node's ``PYTHONPATH`` (the emulator
  inherits it) that, in an emulator process only (its command line names
  ``skel_ros.physical``) or a hardware node (an in-process emulator), finds the
  :class:`~skel_ros.physical.world.PhysicalWorld` objects and samples their public
  ``time`` (the clock time the world is at) and ``held`` 20 times a second beside
  ``time.monotonic()`` (the emulator's clock), into a file. RTF = the world's time
  advanced / the monotonic time advanced between the first and last samples of the
  window; also the **lag** of the world behind the clock at each sample (p50 / max).
  Goal: RTF >= 0.99 (holds real time). The RTF is the window's average: a stall the
  emulator catches up within the window (the world steps to the next packet's time at
  once) leaves it at 1 and shows in the lag's max and in the stamps' gaps below.
* **CPU-s/s** of the emulator process, the hardware node and the simulation node
  (``/proc/<pid>/stat``, user + system of every thread).
* the load average at the start, and the longest gap between consecutive
  ``/real/joint_states`` and ``/sim/joint_states`` stamps in the window: the gate's
  ``max_gap`` (0.2 s) rule, so a run in which the emulation (or anything) could not keep
  up shows as what ``sim-to-real`` would call it: *not judged*.

The 12-DOF quadruped (``examples/quadruped.skel`` on ``config/hardware/quadruped_mit.yaml``:
12 MIT motors on 2 CAN buses) is measured the same way when a physics-backed MIT emulator
exists (:func:`skel_ros.physical.physical_emulator_names`); else the script says
``quadruped: not measured (MIT physics not available)``. Its emulators run in the hardware
node's process (python-can ``virtual`` channels), both buses moving one physics world
(:mod:`skel_ros.physical.host`; the tracer samples every world it finds, an RTF line
each), and the emulation's CPU is inside the hardware node's.

The commands are a 0.5 Hz sine of up to 0.3 rad about each joint's initial position,
within its limits.

Asserts nothing; prints each goal with met / MISSED. Usage:
``.venv/bin/python bench/physics.py [--seconds S]`` (default 10).
"""

from __future__ import annotations

import argparse
import contextlib
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
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

GOAL_RTF = 0.99
MAX_GAP = 0.2  # s, the criteria's default max_gap (docs/sim_to_real.md, "Starved nodes")
COMMAND_RATE = 100.0  # Hz, sim-to-real's default command_rate
SAMPLE_PERIOD = 0.05  # s, the tracer's
TRACE_FIELDS = 4  # a tracer's line: monotonic time, world id, world time, held
_TICK = os.sysconf("SC_CLK_TCK")

ROBOTS = {
    "arm": ("examples/arm.skel", "config/hardware/arm_dynamixel.yaml", "dynamixel",
            "4 Dynamixel servos"),
    "quadruped": ("examples/quadruped.skel", "config/hardware/quadruped_mit.yaml", "mit",
                  "12 MIT motors on 2 CAN buses"),
}

# The tracer, written as sitecustomize.py into a temporary folder on the hardware node's
# PYTHONPATH. Every Python process started with that path imports it at start; it does
# nothing unless the process is an emulator or a hardware node.
TRACER = """
import os, sys, threading, time, gc
def _cmdline():
    try:
        return open("/proc/self/cmdline", "rb").read().decode(errors="replace")
    except OSError:
        return ""
_line = _cmdline()
_out = os.environ.get("SKEL_BENCH_PHYSICS_TRACE")
_node = os.environ.get("SKEL_BENCH_PHYSICS_TRACE_NODE") == "1" and "hardware_node" in _line
if _out and ("skel_ros.physical" in _line or _node):
    def _sample():
        path = f"{_out}.{os.getpid()}"
        worlds, last_scan, scans, tries = [], 0.0, 0, 0
        with open(path, "w", buffering=1) as f:
            while True:
                time.sleep(SAMPLE_PERIOD)
                now = time.monotonic()
                module = sys.modules.get("skel_ros.physical.world")
                cls = getattr(module, "PhysicalWorld", None)  # None: still importing
                if cls is not None and scans < 3 and tries < 20 and now - last_scan > 1.0:
                    found = [o for o in gc.get_objects() if isinstance(o, cls)]
                    worlds = found or worlds
                    scans += bool(found)
                    tries += 1
                    last_scan = now
                for w in worlds:
                    try:
                        f.write(f"{time.monotonic():.6f} {id(w)} {w.time:.6f} {int(w.held)}\\n")
                    except Exception:  # a world mid-change: skip this sample
                        pass
    threading.Thread(target=_sample, name="bench-physics-tracer", daemon=True).start()
""".replace("SAMPLE_PERIOD", repr(SAMPLE_PERIOD))


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system, all threads) of process ``pid`` so far (0: gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime (fields 14, 15)


def emulator_pids(parent: int) -> list[int]:
    """The physics emulator processes the hardware node ``parent`` started."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if ppid == parent and b"skel_ros.physical" in cmd:
            pids.append(int(entry.name))
    return pids


@dataclass
class Window:
    """What the tracer saw of one world in the window."""

    rtf: float
    lag_p50: float
    lag_max: float
    samples: int


def read_traces(prefix: str, start: float, end: float) -> dict[str, Window]:
    """Per world (file and id), RTF and lag over the samples in [start, end], not held."""
    worlds: dict[str, list[tuple[float, float]]] = {}
    for path in Path(prefix).parent.glob(Path(prefix).name + ".*"):
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) != TRACE_FIELDS:
                continue
            mono, wid, t, held = float(parts[0]), parts[1], float(parts[2]), parts[3]
            if start <= mono <= end and held == "0":
                worlds.setdefault(f"{path.suffix[1:]}:{wid}", []).append((mono, t))
    out = {}
    for key, samples in worlds.items():
        if len(samples) < 2:  # noqa: PLR2004 - two ends of the window
            continue
        (m0, t0), (m1, t1) = samples[0], samples[-1]
        lags = [m - t for m, t in samples]
        out[key] = Window((t1 - t0) / (m1 - m0), statistics.median(lags), max(lags),
                          len(samples))
    return out


class Driver:
    """Streams ``/joint_commands``; records stamps of joint_states and the node's state."""

    def __init__(self, names: list[str], centre: list[float], amplitude: list[float]) -> None:
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState

        self.node = rclpy.create_node("bench_physics_driver")
        self.names = names
        self.centre, self.amplitude = centre, amplitude
        self.state = ""
        self.stamps: dict[str, list[tuple[float, float]]] = {"real": [], "sim": []}
        self._message = JointState
        self._pub = self.node.create_publisher(JointState, "/joint_commands", 10)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._diagnostics, 10)
        for ns in self.stamps:
            self.node.create_subscription(JointState, f"/{ns}/joint_states",
                                          lambda msg, ns=ns: self._state(ns, msg), 50)
        self._start = time.monotonic()
        self.node.create_timer(1.0 / COMMAND_RATE, self._tick)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)

    def _tick(self) -> None:
        t = time.monotonic() - self._start
        self._pub.publish(self._message(name=self.names, position=[
            c + a * math.sin(2 * math.pi * 0.5 * t + i)
            for i, (c, a) in enumerate(zip(self.centre, self.amplitude, strict=True))]))

    def _state(self, ns: str, msg: Any) -> None:  # noqa: ANN401 - JointState
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.stamps[ns].append((time.monotonic(), stamp))

    def _diagnostics(self, msg: Any) -> None:  # noqa: ANN401 - DiagnosticArray
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            if "cycles" in values and "state" in values:
                self.state = values["state"]

    def spin(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def longest_gap(self, ns: str, start: float, end: float) -> float:
        """The longest interval between consecutive stamps received in [start, end]."""
        stamps = [s for arrival, s in self.stamps[ns] if start <= arrival <= end]
        return max((b - a for a, b in itertools.pairwise(stamps)), default=math.inf)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGINT)
    deadline = time.monotonic() + 10.0
    for proc in procs:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:  # noqa: PERF203 - one wait per process
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def measure(robot: str, seconds: float, env: dict[str, str],  # noqa: PLR0915 - one script
            tmp: Path) -> list[str]:
    """One robot's run: its lines of output."""
    import yaml

    from skel_ros.model import load_model
    from skel_ros.nodes.sim_to_real import RunConfig, node_commands

    skel, config, _protocol, what = ROBOTS[robot]
    skel_file, hw = REPO / skel, REPO / config
    names = list(yaml.safe_load(hw.read_text())["joints"])
    dofs = {d.name: d for s in load_model(skel_file).skeletons for d in s.dofs}
    # A 0.5 Hz sine of up to 0.3 rad about each joint's initial position, within its limits.
    centre = [dofs[n].initial_position for n in names]
    amplitude = [max(0.0, min(0.3, 0.9 * (dofs[n].position_upper - c),
                              0.9 * (c - dofs[n].position_lower)))
                 for n, c in zip(names, centre, strict=True)]
    commands = node_commands(RunConfig(skel_file=skel_file, hardware_config=hw,
                                       trajectory=skel_file, out_dir=tmp, physics=True))
    commands["real"] += ["-p", "autostart:=active", "-p", "command_timeout:=0.0"]
    trace = str(tmp / f"trace-{robot}")
    tracer_dir = tmp / "tracer"
    tracer_dir.mkdir(exist_ok=True)
    (tracer_dir / "sitecustomize.py").write_text(TRACER)
    real_env = dict(env, SKEL_BENCH_PHYSICS_TRACE=trace,
                    SKEL_BENCH_PHYSICS_TRACE_NODE="1" if robot != "arm" else "0",
                    PYTHONPATH=os.pathsep.join(
        p for p in (str(tracer_dir), str(REPO), env.get("PYTHONPATH")) if p))
    logs = {name: (tmp / f"{robot}-{name}.log").open("wb") for name in ("sim", "real")}
    procs = {
        "sim": subprocess.Popen(commands["sim"], env=env, stdout=logs["sim"],  # noqa: S603
                                stderr=subprocess.STDOUT, start_new_session=True),
        "real": subprocess.Popen(commands["real"], env=real_env,  # noqa: S603
                                 stdout=logs["real"], stderr=subprocess.STDOUT,
                                 start_new_session=True),
    }
    driver: Driver | None = None
    try:
        driver = Driver(names, centre, amplitude)
        end = time.monotonic() + 60.0
        while driver.state != "enabled" and time.monotonic() < end:
            driver.spin(0.1)
            if any(p.poll() is not None for p in procs.values()):
                break
        if driver.state != "enabled":
            logs["real"].flush()
            tail = (tmp / f"{robot}-real.log").read_text(errors="replace").strip()
            tail = tail.splitlines()[-1] if tail else "(no output)"
            return [(f"{robot}: the hardware node did not come up enabled"
                     f" (state {driver.state!r}): {tail}")]
        driver.spin(1.0)  # settle
        emulators = emulator_pids(procs["real"].pid)
        pids = {"emulator": emulators, "hardware node": [procs["real"].pid],
                "sim node": [procs["sim"].pid]}
        load = os.getloadavg()[0]
        cpu0 = {k: sum(process_cpu(p) for p in v) for k, v in pids.items()}
        w0 = time.monotonic()
        driver.spin(seconds)
        w1 = time.monotonic()
        cpu = {k: (sum(process_cpu(p) for p in v) - cpu0[k]) / (w1 - w0)
               for k, v in pids.items()}
        time.sleep(2 * SAMPLE_PERIOD)  # the tracer's last samples of the window
        windows = read_traces(trace, w0, w1)
        gaps = {ns: driver.longest_gap(ns, w0, w1) for ns in ("real", "sim")}
    finally:
        if driver is not None:
            driver.executor.shutdown()
            driver.node.destroy_node()
        _stop(list(procs.values()))
        for log in logs.values():
            log.close()
    lines = [(f"{robot} ({what}), hardware node emulate:=true physics:=true beside the"
              f" simulation node, {seconds:g} s; {os.cpu_count()} CPU(s), load average"
              f" {load:.2f} at the start")]
    if not windows:
        lines.append(f"  real-time factor of the emulated robot: not measured (no physics"
                     f" world seen; emulator processes {emulators})")
    for k, (_key, w) in enumerate(sorted(windows.items()), 1):
        met = "met" if w.rtf >= GOAL_RTF else "MISSED"
        label = "real-time factor of the emulated robot" if len(windows) == 1 else \
            f"real-time factor, physics world {k} of {len(windows)}"
        lines.append(f"  {label:42s} {w.rtf:7.3f}  (goal >= {GOAL_RTF:g}: {met})")
        lines.append(f"    lag of the world behind the clock: p50 {w.lag_p50 * 1e3:.1f} ms,"
                     f" max {w.lag_max * 1e3:.1f} ms ({w.samples} samples)")
    where = "in its own process" if emulators else "in the hardware node's process"
    lines.append("  CPU-s/s: " + ", ".join(
        f"{k} {v:.3f}" for k, v in cpu.items() if k != "emulator" or emulators)
        + f" (the emulator {where})")
    judged = all(g <= MAX_GAP for g in gaps.values())
    lines.append("  longest gap in joint_states stamps: " + ", ".join(
        f"{ns} {g:.3f} s" for ns, g in gaps.items())
        + f" (max_gap {MAX_GAP:g} s: a sim-to-real run here would be"
        f" {'judged' if judged else 'not judged'})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    from skel_ros.nodes.sim_to_real import ros_environment
    from skel_ros.physical import physical_emulator_names

    env = ros_environment()
    os.environ.update(env)
    import rclpy

    rclpy.init()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-physics-") as tmp:
            for robot in ROBOTS:
                protocol = ROBOTS[robot][2]
                if protocol not in physical_emulator_names():
                    name = "MIT" if protocol == "mit" else protocol
                    print(f"{robot}: not measured ({name} physics not available)", flush=True)
                    continue
                for line in measure(robot, args.seconds, env, Path(tmp)):
                    print(line, flush=True)
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
