"""Benchmark: a Dynamixel bus served in the driver's process or in its own (issue 28).

The bundled arm (``examples/arm.skel``, ``test/physical/data/arm_mit_dynamixel.yaml``)
with its shoulder and elbow on three MIT motors (a python-can ``virtual`` bus, emulated
by threads of this process) and its wrist on a Dynamixel servo (a pty), driven through
the real drivers (``MitBus``, ``DynamixelBus``) at 200 Hz for ``--seconds`` of wall
time: each cycle writes every actuator's hold command and reads them all. Two ways:

* ``one world``: as the hardware node now starts them (:func:`skel_ros.physical.host.
  start_emulators`): the Dynamixel bus served by a thread of this process, its servo a
  joint of the MIT motors' world;
* ``a world per kind``: the way before, the Dynamixel servo in an emulator process of its
  own moving a world of its own (each world the whole robot, the other kind's joints limp).

Measured: the CPU seconds per second of wall time of this process plus the Dynamixel
emulator process (if any; read from ``/proc``), their ratio, and how long a cycle's
writes and reads took (median and 99th percentile: the replies' latency).

Asserts nothing. Usage: ``.venv/bin/python bench/mixed_world.py [--seconds S]``
(default 5).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SKEL = REPO / "examples" / "arm.skel"
MIXED = REPO / "test" / "physical" / "data" / "arm_mit_dynamixel.yaml"
PERIOD = 0.005


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(seconds: float, *, shared: bool) -> tuple[float, list[float]]:
    """(CPU seconds per wall second of both processes, each cycle's duration), one way."""
    from skel_ros.emulation import emulated_transport
    from skel_ros.hardware.base import ActuatorCommand
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.hardware.plugins import bus_class, protocol
    from skel_ros.model import load_model
    from skel_ros.physical import physical_emulator_for
    from skel_ros.physical.host import BusEmulation, start_emulators
    from skel_ros.physical.option import emulator_options

    config = load_hardware_config(MIXED)
    bound = config.bind(config.select_skeleton(load_model(SKEL)))
    initial = {d.name: d.initial_position for d in bound.skeleton.dofs}
    buses = [BusEmulation(s.name, s.protocol, emulated_transport(protocol(s.protocol),
                                                                 s.transport),
                          [m.actuator for m in config.joints_on(s.name)],
                          emulator_options(config.joints_on(s.name), initial,
                                           {"model": str(SKEL)})) for s in config.buses]
    emulators = (start_emulators(buses) if shared else
                 [physical_emulator_for(b.protocol)(b.transport, b.actuators, b.options)
                  for b in buses])
    drivers: list[Any] = []
    try:
        for spec, bus, emulator in zip(config.buses, buses, emulators, strict=True):
            driver = bus_class(spec.protocol)(dataclasses.replace(
                spec, transport=emulator.transport), bus.actuators, time.monotonic)
            driver.open()
            driver.set_torque(True)
            drivers.append(driver)
        holds = [{a.id: ActuatorCommand(position=bus.options["initial_positions"][a.id])
                  for a in bus.actuators} for bus in buses]
        pids = {os.getpid(), *(e.pid for e in emulators if getattr(e, "pid", None))}
        cpu0, start = sum(_cpu(p) for p in pids), time.monotonic()
        took: list[float] = []
        while (now := time.monotonic()) < start + seconds:
            for driver, hold in zip(drivers, holds, strict=True):
                driver.write(hold)
                driver.read()
            took.append(time.monotonic() - now)
            time.sleep(max(0.0, start + len(took) * PERIOD - time.monotonic()))
        return (sum(_cpu(p) for p in pids) - cpu0) / (now - start), took
    finally:
        for driver in drivers:
            driver.close()
        for emulator in emulators:
            emulator.stop()


def main() -> None:
    """Print both ways' CPU per wall second, their ratio and their cycles' durations."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    shared, took_shared = measure(args.seconds, shared=True)
    apart, took_apart = measure(args.seconds, shared=False)
    print(f"arm (3 MIT motors + 1 Dynamixel servo), {args.seconds:g} s at 200 Hz, load"
          f" average {load:.2f} at the start")
    print(f"  CPU-s per second: one world (servo in a thread) {shared:.3f}, a world per"
          f" kind (servo in its own process) {apart:.3f}; ratio {shared / apart:.2f}")
    for name, took in (("one world", took_shared), ("a world per kind", took_apart)):
        s = sorted(took)
        print(f"  a cycle's writes and reads, {name}: median {1e3 * s[len(s) // 2]:.2f} ms,"
              f" p99 {1e3 * s[int(0.99 * (len(s) - 1))]:.2f} ms ({len(s)} cycles)")


if __name__ == "__main__":
    main()
