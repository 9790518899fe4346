"""Benchmark: one physics world for several buses against a world per bus (issue 28).

The 12-DOF quadruped (``examples/quadruped.skel`` on ``config/hardware/quadruped_mit.yaml``:
two CAN buses of six MIT motors) emulated in this process as the hardware node starts it
(:func:`skel_ros.physical.host.start_emulators`), on a clock this script sets: every
motor enters motor mode holding its initial position, then the world is advanced
``--seconds`` of its time in 5 ms steps (a 200 Hz bus cycle: each motor's state read, as
a reply does). Measured: the CPU seconds this process spends per second of world time,
with the two buses moving one world (``shared``) and with a world each (``per bus``,
the way before the shared world: each bus's world is the whole robot, the other side's
legs limp), and the ratio. Below 1 s/s the emulation can hold real time on one core.

Asserts nothing. Usage: ``.venv/bin/python bench/shared_world.py [--seconds S]``
(default 5).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKEL = REPO / "examples" / "quadruped.skel"
YAML = REPO / "config" / "hardware" / "quadruped_mit.yaml"


def measure(seconds: float, *, shared: bool) -> float:
    """CPU seconds per second of world time, the buses in one world or a world each."""
    import can

    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.hardware.mit.codec import ENTER_MODE, MitCodec
    from skel_ros.hardware.mit.models import resolve
    from skel_ros.model import load_model
    from skel_ros.physical.host import BusEmulation, start_emulators
    from skel_ros.physical.mit import start_emulator
    from skel_ros.physical.option import emulator_options

    config = load_hardware_config(YAML)
    bound = config.bind(config.select_skeleton(load_model(SKEL)))
    initial = {d.name: d.initial_position for d in bound.skeleton.dofs}
    clock = [10.0]
    buses = []
    for spec in config.buses:
        maps = config.joints_on(spec.name)
        options = emulator_options(maps, initial, {"model": str(SKEL)})
        options["clock"] = lambda: clock[0]
        buses.append(BusEmulation(spec.name, spec.protocol, {}, [m.actuator for m in maps],
                                  options))
    emulators = (start_emulators(buses, clock=lambda: clock[0]) if shared
                 else [start_emulator(b.transport, b.actuators, b.options) for b in buses])
    cans = [can.Bus(interface="virtual", channel=e.transport["channel"],
                    receive_own_messages=False) for e in emulators]
    try:
        for bus, link in zip(buses, cans, strict=True):
            for act in bus.actuators:
                codec = MitCodec(*resolve(act.model, act.options))
                position = bus.options["initial_positions"][act.id]
                for data in (ENTER_MODE, codec.encode(position, 0.0, 30.0, 0.8, 0.0)):
                    link.send(can.Message(arbitration_id=act.id, data=data,
                                          is_extended_id=False))
                    assert link.recv(timeout=10.0) is not None, f"motor {act.id}: no reply"
        start = time.process_time()
        end = clock[0] + seconds
        while clock[0] < end:
            clock[0] += 0.005
            for bus, emulator in zip(buses, emulators, strict=True):
                for act in bus.actuators:
                    emulator.state(act.id)
        return (time.process_time() - start) / seconds
    finally:
        for link in cans:
            link.shutdown()
        for emulator in emulators:
            emulator.stop()


def main() -> None:
    """Print the CPU per world second of both ways and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    shared = measure(args.seconds, shared=True)
    apart = measure(args.seconds, shared=False)
    print(f"quadruped (12 MIT motors, 2 CAN buses), {args.seconds:g} s of world time, load"
          f" average {load:.2f} at the start")
    print(f"  CPU-s per world second: shared world {shared:.3f}, a world per bus {apart:.3f}"
          f" (ratio {shared / apart:.2f})")


if __name__ == "__main__":
    main()
