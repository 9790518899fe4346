"""Benchmark: MIT codec frames/s against what a 1 Mbit/s CAN bus can carry.

A standard CAN 2.0A data frame with 8 data bytes is 111 bits including the 3-bit
interframe space (44 + 64 + 3), so 1 Mbit/s carries at most ~9,000 such frames a second
(~7,400 with worst-case bit stuffing). The codec should be far faster than the wire:
one command encode + one reply decode per frame, per motor. Also measured: the numpy
batch path, damiao-motor's encoder (if installed) for comparison, and one MitBus cycle
(12 motors, write + read) over python-can's virtual bus against the emulator.

Usage: .venv/bin/python bench/hw_mit.py [--frames N] [--cycles N]
(prints the machine's load average and the date first: the rates move with the load)
(``bench/hardware.py`` imports :func:`run`.)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skel_ros.emulation.mit import MitEmulator  # noqa: E402
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode  # noqa: E402
from skel_ros.hardware.mit.bus import MitBus  # noqa: E402
from skel_ros.hardware.mit.codec import MitCodec, Variant  # noqa: E402
from skel_ros.hardware.mit.models import MODELS  # noqa: E402

BITRATE = 1_000_000
FRAME_BITS = 111          # SOF..EOF of an 8-byte standard frame + 3-bit interframe space
FRAME_BITS_STUFFED = 135  # the same with worst-case bit stuffing
WIRE_FPS = BITRATE / FRAME_BITS


def _commands(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.uniform([-12.5, -50, 0, 0, -18], [12.5, 50, 500, 5, 18], size=(n, 5))


def _scalar(codec: MitCodec, x: np.ndarray) -> float:
    rows = [tuple(float(v) for v in r) for r in x]
    reply = codec.encode_reply(1, 0.5, 1.0, -2.0, temperature=40)
    encode, decode = codec.encode, codec.decode_reply
    t0 = time.perf_counter()
    for p, v, kp, kd, t in rows:
        encode(p, v, kp, kd, t)
        decode(reply)
    return len(rows) / (time.perf_counter() - t0)


def _batch(codec: MitCodec, x: np.ndarray) -> float:
    replies = np.tile(np.frombuffer(codec.encode_reply(1, 0.5, 1.0, -2.0), dtype=np.uint8),
                      (len(x), 1))
    t0 = time.perf_counter()
    codec.encode_batch(x)
    codec.decode_batch(replies)
    return len(x) / (time.perf_counter() - t0)


def _peer(x: np.ndarray) -> float | None:
    try:
        import damiao_motor
    except ImportError:
        return None
    motor = damiao_motor.DaMiaoMotor(1, 0x11, None, motor_type="4310")
    reply = MitCodec(MODELS["DM4310"].ranges, Variant.DAMIAO).encode_reply(1, 0.5, 1.0, -2.0)
    rows = [tuple(float(v) for v in r) for r in x]
    t0 = time.perf_counter()
    for p, v, kp, kd, t in rows:
        motor.encode_cmd_msg(p, v, t, kp, kd)
        motor.decode_sensor_feedback(reply)
    return len(rows) / (time.perf_counter() - t0)


def _bus_cycles(cycles: int) -> float:
    acts = [ActuatorSpec(i, ControlMode.IMPEDANCE, "AK80-9", {"kp": 20.0, "kd": 0.5})
            for i in range(1, 13)]
    emulator = MitEmulator({}, acts, {})
    bus = MitBus(BusSpec("legs", "mit", emulator.transport, {"reply_timeout": 0.5}), acts,
                 time.monotonic)
    try:
        bus.open()
        bus.set_torque(True)
        cmds = {a.id: ActuatorCommand(position=0.1, velocity=0.0, effort=0.0) for a in acts}
        t0 = time.perf_counter()
        for _ in range(cycles):
            bus.write(cmds)
            bus.read()
        return cycles / (time.perf_counter() - t0)
    finally:
        bus.close()
        emulator.stop()


def run(frames: int = 50_000, cycles: int = 200) -> list[str]:
    """Run every measurement; the report lines."""
    codec = MitCodec(MODELS["AK80-9"].ranges, Variant.CUBEMARS)
    x = _commands(frames)
    scalar = _scalar(codec, x)
    batch = _batch(codec, x)
    lines = [(f"MIT codec (AK80-9 ranges), {frames} frames; 1 Mbit/s CAN carries at most"
             f" {WIRE_FPS:,.0f} 8-byte frames/s ({BITRATE / FRAME_BITS_STUFFED:,.0f} with"
             " worst-case stuffing):"),
             (f"  encode + decode, per frame : {scalar:12,.0f} frames/s = {scalar / WIRE_FPS:6.1f}x"
             " the wire"),
             (f"  encode + decode, numpy batch: {batch:11,.0f} frames/s = {batch / WIRE_FPS:6.1f}x"
             " the wire")]
    peer = _peer(x)
    if peer is None:
        lines.append("  damiao-motor: not installed (requirements/dev.txt)")
    else:
        lines.append(f"  damiao-motor encode + decode: {peer:10,.0f} frames/s; ours per frame"
                     f" is {scalar / peer:.1f}x that")
    per_s = _bus_cycles(cycles)
    lines.append(f"  MitBus, 12 emulated motors on python-can virtual (threads, this process):"
                 f" {per_s:,.0f} write+read cycles/s = {per_s * 24:,.0f} frames/s"
                 f" ({per_s * 24 / WIRE_FPS:.2f}x a real 1 Mbit/s bus)")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=50_000)
    parser.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args()
    print(f"bench/hw_mit.py: {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{time.strftime('%Y-%m-%d %H:%M')}")
    for line in run(args.frames, args.cycles):
        print(line)
    print(f"(load average now {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
