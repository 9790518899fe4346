"""Benchmark of the hardware layer, one run; prints ratios, asserts nothing.

1. Cycles/s of a 12-servo Dynamixel control cycle (Sync Write of 12 goals + Sync Read of
   12 servos' present values) on the emulator (its own process, a pty), our
   ``DynamixelBus`` against ROBOTIS' ``dynamixel-sdk`` doing the same (same packets: the
   15-byte indirect block, decoded into the same 7 values per servo), both with plain and
   with Fast Sync Read. Goal: ours >= 2x the SDK. (Both include the emulator's time.)
2. Our encode + decode CPU time per cycle (driver against an in-memory transport that
   replays a captured answer) against the wire time of that cycle's bytes at 4 Mbaud.
   Goal: < 10 %.
3. ``bench/hw_mit.py`` (MIT codec vs the CAN wire) and ``bench/hw_latency.py`` (command
   -> bytes written in the hardware node), when those files exist.

Usage: .venv/bin/python bench/hardware.py [--cycles N]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode  # noqa: E402
from skel_ros.hardware.dynamixel import start_emulator  # noqa: E402
from skel_ros.hardware.dynamixel.bus import READ_ADDRESS, READ_SIZE, DynamixelBus  # noqa: E402
from skel_ros.hardware.errors import TransportTimeoutError  # noqa: E402
from skel_ros.hardware.transport import Transport  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

IDS = list(range(1, 13))
BAUD = 4_000_000
GOAL_SPEEDUP = 2.0
GOAL_CPU_FRACTION = 0.10


def _actuators() -> list[ActuatorSpec]:
    return [ActuatorSpec(i, ControlMode.POSITION, "XM430-W350") for i in IDS]


# Goals prepared once: the bench times the drivers, not building the commands.
_GOALS = [{i: ActuatorCommand(position=0.001 * ((k + i) % 200)) for i in IDS} for k in range(200)]
_TICKS = [{i: list((round(c.position / (6.283185307179586 / 4096)) + 2048).to_bytes(4, "little"))
           for i, c in goals.items()} for goals in _GOALS]


def _commands(k: int) -> dict[int, ActuatorCommand]:
    return _GOALS[k % len(_GOALS)]


def _rate(cycle: Callable[[int], None], cycles: int) -> float:
    for k in range(20):  # warm up
        cycle(k)
    start = time.perf_counter()
    for k in range(cycles):
        cycle(k)
    return cycles / (time.perf_counter() - start)


def _ours(transport: dict[str, object], fast: bool, cycles: int) -> float:  # noqa: FBT001
    bus = DynamixelBus(BusSpec("bench", "dynamixel", transport, {"fast_sync_read": fast}),
                       _actuators())
    bus.open()
    bus.set_torque(True)
    try:
        def cycle(k: int) -> None:
            bus.write(_commands(k))
            bus.read()

        return _rate(cycle, cycles)
    finally:
        bus.close()


def _sdk(port_name: str, fast: bool, cycles: int) -> float:  # noqa: FBT001
    import dynamixel_sdk as sdk

    port = sdk.PortHandler(port_name)
    port.openPort()
    port.setBaudRate(BAUD)
    ph = sdk.PacketHandler(2.0)
    writer = sdk.GroupSyncWrite(port, ph, 116, 4)
    reader = sdk.GroupSyncRead(port, ph, READ_ADDRESS, READ_SIZE)
    for i in IDS:
        reader.addParam(i)
    fields = ((224, 1), (225, 1), (226, 2), (228, 4), (232, 4), (236, 2), (238, 1))

    def cycle(k: int) -> None:
        writer.clearParam()
        for i, ticks in _TICKS[k % len(_TICKS)].items():
            writer.addParam(i, ticks)
        writer.txPacket()
        result = reader.fastSyncRead() if fast else reader.txRxPacket()
        if result != sdk.COMM_SUCCESS:
            raise RuntimeError(f"dynamixel-sdk: {ph.getTxRxResult(result)}")
        for i in IDS:
            for address, size in fields:
                reader.getData(i, address, size)

    try:
        return _rate(cycle, cycles)
    finally:
        port.closePort()


class _Replay(Transport):
    """An in-memory transport: records writes, answers reads with a canned reply."""

    def __init__(self, reply: bytes) -> None:
        self.name = "replay"
        self.reply = reply
        self.written = 0
        self._open = False

    def open(self) -> None:
        self._open = True

    def close(self) -> None:
        self._open = False

    @property
    def is_open(self) -> bool:
        return self._open

    def write(self, data: bytes) -> None:
        self.written += len(data)

    def read(self, size: int, timeout: float) -> bytes:  # noqa: ARG002 - answers at once
        if not self.reply:
            raise TransportTimeoutError("replay: nothing to answer")
        return self.reply[:size]

    def reset_input(self) -> None:
        return


def _codec_cost(reply: bytes, cycles: int) -> tuple[float, int]:
    """Seconds of CPU per write()+read() cycle and the bytes of one cycle on the wire."""
    replay = _Replay(reply)
    bus = DynamixelBus(BusSpec("bench", "dynamixel", {"port": "replay"}), _actuators(),
                       transport=replay)
    # Skip open(): configure what it would have found (firmware >= 45, default limits).
    bus._open = True  # noqa: SLF001 - bench of the cycle alone
    bus._dirty = False  # noqa: SLF001
    bus.fast_sync_read = True
    bus._build_read_packet()  # noqa: SLF001
    for servo in bus._servos.values():  # noqa: SLF001
        servo.min_goal, servo.max_goal = 0, 4095
        servo.effort_scale = 2.69e-3 * 1.78
    bus.write(_commands(0))
    bus.read()
    per_cycle_bytes = replay.written + len(reply)
    start = time.perf_counter()
    for k in range(cycles):
        bus.write(_commands(k))
        bus.read()
    return (time.perf_counter() - start) / cycles, per_cycle_bytes


def _sdk_codec_cost(replies: dict[bool, bytes], fast: bool, cycles: int) -> float:  # noqa: C901, FBT001
    """Seconds of CPU per SDK cycle against a replaying in-memory port (no I/O)."""
    import dynamixel_sdk as sdk

    from skel_ros.hardware.dynamixel import protocol as p

    class ReplayPort(sdk.PortHandler):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__("replay")
            self.is_open = True
            self.buffer = b""

        def clearPort(self) -> None:  # noqa: N802 - the SDK's name
            return

        def writePort(self, packet: list[int]) -> int:  # noqa: N802
            if packet[7] in (p.Instruction.SYNC_READ, p.Instruction.FAST_SYNC_READ):
                self.buffer = replies[packet[7] == p.Instruction.FAST_SYNC_READ]
            return len(packet)

        def readPort(self, length: int) -> bytes:  # noqa: N802
            out, self.buffer = self.buffer[:length], self.buffer[length:]
            return out

    port = ReplayPort()
    ph = sdk.PacketHandler(2.0)
    writer = sdk.GroupSyncWrite(port, ph, 116, 4)
    reader = sdk.GroupSyncRead(port, ph, READ_ADDRESS, READ_SIZE)
    for i in IDS:
        reader.addParam(i)
    fields = ((224, 1), (225, 1), (226, 2), (228, 4), (232, 4), (236, 2), (238, 1))
    start = time.perf_counter()
    for k in range(cycles):
        writer.clearParam()
        for i, ticks in _TICKS[k % len(_TICKS)].items():
            writer.addParam(i, ticks)
        writer.txPacket()
        result = reader.fastSyncRead() if fast else reader.txRxPacket()
        if result != sdk.COMM_SUCCESS:
            raise RuntimeError(f"dynamixel-sdk: {ph.getTxRxResult(result)}")
        for i in IDS:
            for address, size in fields:
                reader.getData(i, address, size)
    return (time.perf_counter() - start) / cycles


def _plain_codec_cost(reply: bytes, cycles: int) -> float:
    replay = _Replay(reply)
    bus = DynamixelBus(BusSpec("bench", "dynamixel", {"port": "replay"}), _actuators(),
                       transport=replay)
    bus._open = True  # noqa: SLF001 - bench of the cycle alone
    bus._dirty = False  # noqa: SLF001
    bus._build_read_packet()  # noqa: SLF001
    for servo in bus._servos.values():  # noqa: SLF001
        servo.min_goal, servo.max_goal = 0, 4095
    start = time.perf_counter()
    for k in range(cycles):
        bus.write(_commands(k))
        bus.read()
    return (time.perf_counter() - start) / cycles


def _capture_fast_reply(transport: dict[str, object]) -> bytes:
    from skel_ros.hardware.dynamixel import protocol as p
    from skel_ros.hardware.transport import serial_transport

    port = serial_transport(transport)
    port.open()
    try:
        port.write(p.sync_read(READ_ADDRESS, READ_SIZE, IDS, fast=True))
        size = 8 + len(IDS) * (READ_SIZE + 4)
        data = b""
        while len(data) < size:
            data += port.read(size - len(data), 1.0)
        return data
    finally:
        port.close()


def _other(name: str) -> list[str]:
    path = REPO / "bench" / f"{name}.py"
    if not path.exists():
        return [f"{name}: not available yet"]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    if spec is None or spec.loader is None:
        return [f"{name}: cannot be loaded"]
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        return list(module.run())
    except Exception as exc:  # noqa: BLE001 - a broken sibling bench must not hide ours
        return [f"{name}: failed: {type(exc).__name__}: {exc}"]


def run(cycles: int = 2000) -> list[str]:
    """Run every section; the report lines."""
    lines = [(f"Dynamixel: {len(IDS)} emulated XM430-W350 (own process, pty, return delay 0),"
              f" {cycles} cycles of Sync Write (12 goals) + Sync Read (12 x {READ_SIZE} bytes)")]
    emulator = start_emulator({"baudrate": BAUD}, _actuators(), {"return_delay_us": 0})
    try:
        transport = dict(emulator.transport)
        for fast in (False, True):
            ours = _ours(transport, fast, cycles)  # also sets up the indirect addresses
            theirs = _sdk(str(transport["port"]), fast, cycles)
            kind = "Fast Sync Read" if fast else "Sync Read     "
            lines.append(f"  {kind}: ours {ours:7.0f} cycles/s, dynamixel-sdk {theirs:7.0f}"
                         f" cycles/s, ratio {ours / theirs:.2f}"
                         f" ({'met' if ours >= GOAL_SPEEDUP * theirs else 'NOT met'}:"
                         f" goal >= {GOAL_SPEEDUP:g}x)")
        reply = _capture_fast_reply(transport)
    finally:
        emulator.stop()
    cpu, nbytes = _codec_cost(reply, cycles * 5)
    from skel_ros.hardware.dynamixel import protocol as p

    records = p.split_fast_status(p.parse(reply)[0], READ_SIZE)
    plain = b"".join(p.build_status(i, e, d) for i, e, d in records)
    sdk_fast = _sdk_codec_cost({True: reply, False: plain}, fast=True, cycles=cycles)
    sdk_plain = _sdk_codec_cost({True: reply, False: plain}, fast=False, cycles=cycles)
    ours_plain = _plain_codec_cost(plain, cycles * 5)
    lines.append("  driver CPU per cycle without I/O (in-memory port replaying the answers):")
    for kind, ours_t, sdk_t in (("Sync Read", ours_plain, sdk_plain),
                                ("Fast Sync Read", cpu, sdk_fast)):
        lines.append(f"    {kind:14s}: ours {ours_t * 1e6:6.1f} us, dynamixel-sdk"
                     f" {sdk_t * 1e6:6.1f} us, ratio {sdk_t / ours_t:.1f}x"
                     f" ({'met' if sdk_t >= GOAL_SPEEDUP * ours_t else 'NOT met'}:"
                     f" goal >= {GOAL_SPEEDUP:g}x)")
    wire = nbytes * 10 / BAUD
    lines.append(f"  encode + decode per cycle (Fast Sync Read, in-memory transport):"
                 f" {cpu * 1e6:.1f} us; the cycle's {nbytes} bytes take {wire * 1e6:.0f} us"
                 f" at {BAUD / 1e6:g} Mbaud: {cpu / wire:.1%}"
                 f" ({'met' if cpu / wire < GOAL_CPU_FRACTION else 'NOT met'}:"
                 f" goal < {GOAL_CPU_FRACTION:.0%})")
    lines.extend(_other("hw_mit"))
    lines.extend(_other("hw_latency"))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2000)
    args = parser.parse_args()
    for line in run(args.cycles):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
