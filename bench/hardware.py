"""Benchmark of the hardware layer, one run; prints ratios, asserts nothing.

1. Cycles/s of a 12-servo Dynamixel control cycle (Sync Write of 12 goals + Sync Read of
   12 servos' present values) on the emulator (its own process, a pty), our
   ``DynamixelBus`` against ROBOTIS' ``dynamixel-sdk`` doing the same (same packets: the
   16-byte indirect block, decoded into the same 8 values per servo), both with plain and
   with Fast Sync Read: context (both wait on the same emulator, whose share grows with
   the machine's load; the goal is item 3's). The two drivers take turns in rounds
   on the same emulator, so a drift in the machine's load is spread over both. (The SDK
   polls the port without sleeping: other processes wanting the two CPUs slow it, and the
   emulator it waits for, more than ours; the ratio grows with the machine's load.)
2. Where a cycle's time goes: the emulator process's CPU time per cycle (its CPU clock,
   read from here: reading, answering, writing), the driver process's CPU time per
   cycle (``time.process_time``: the SDK polls the port without sleeping, so its CPU is
   about its whole cycle), and the floor of the pty itself (a process that answers each
   cycle's bytes with a canned reply at once, our transport on the other side).
3. Driver CPU per cycle without I/O (in-memory ports replaying captured answers; this
   process's CPU time, so a busy machine does not inflate it), ours against the SDK's.
   Goal (issue 26): ours <= 0.5x the SDK's, i.e. the SDK / ours >= 2x. Also the
   end-to-end ratio if a cycle were only that CPU + the emulator's time + the pty floor
   (an idle machine's ratio; context).
4. Our encode + decode CPU time per cycle against the wire time of that cycle's bytes at
   4 Mbaud. Goal: < 10 %.
5. ``bench/hw_mit.py`` (MIT codec vs the CAN wire) and ``bench/hw_latency.py`` (command
   -> bytes written in the hardware node), when those files exist.
6. ``bench/hw_feetech.py``: the Feetech section (6 x STS3215 at 1 Mbaud on the emulator,
   ours against ``ftservo-python-sdk``; ``--feetech-only`` runs only it).

Usage: .venv/bin/python bench/hardware.py [--cycles N] [--rounds R] [--dynamixel-only]
[--feetech-only]
[--profile-emulator FILE]  (the emulator process then runs under ``python -m cProfile``)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from replay import ReplayTransport, cpu_per_cycle  # noqa: E402 - bench/, beside this file

from skel_ros.emulation.dynamixel import DEFAULT_FIRMWARE, EmulatorConfig, start_emulator  # noqa: E402
from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode  # noqa: E402
from skel_ros.hardware.dynamixel import control_table as ct  # noqa: E402
from skel_ros.hardware.dynamixel import protocol as p  # noqa: E402
from skel_ros.hardware.dynamixel.bus import READ_SIZE, DynamixelBus  # noqa: E402
from skel_ros.hardware.errors import HardwareError  # noqa: E402
from skel_ros.hardware.transport import SerialTransport, serial_transport  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

IDS = list(range(1, 13))
MODEL = "XM430-W350"
BAUD = 4_000_000
# Where the driver reads its 16-byte block on these servos (their Indirect Data 1).
READ_ADDRESS = ct.MODELS[MODEL].indirect[0].data
GOAL_SPEEDUP = 2.0
GOAL_CPU_FRACTION = 0.10
FIELDS = ((224, 1), (225, 1), (226, 2), (228, 4), (232, 4), (236, 2), (238, 1), (239, 1))


def _actuators() -> list[ActuatorSpec]:
    return [ActuatorSpec(i, ControlMode.POSITION, MODEL) for i in IDS]


class _Emulator(Protocol):
    """What the bench needs of an emulator: its port, its process, stopping it."""

    transport: Mapping[str, object]

    @property
    def pid(self) -> int | None: ...

    def stop(self) -> None: ...


class _ProfiledEmulator:
    """The emulator process started under ``python -m cProfile -o path``.

    The process is the one :func:`start_emulator` starts (the same ``--control`` channel,
    the same configuration); cProfile writes its stats when the process exits (its stdin
    closed, by :meth:`stop`).
    """

    def __init__(self, path: str) -> None:
        config = EmulatorConfig(tuple((i, MODEL, 0.0, None) for i in IDS), BAUD,
                                DEFAULT_FIRMWARE, 0, wire_time=False)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(x for x in (str(REPO), env.get("PYTHONPATH")) if x)
        self._process = subprocess.Popen(  # noqa: S603 - this interpreter, the emulator module
            [sys.executable, "-m", "cProfile", "-o", path, "-m", "skel_ros.emulation.dynamixel",
             "--control", "--config", config.to_json()],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        if self._process.stdout is None:  # pragma: no cover - Popen(stdout=PIPE)
            raise RuntimeError("no pipe from the emulator process")
        first = json.loads(self._process.stdout.readline())
        self.transport: Mapping[str, object] = {"port": first["port"], "baudrate": BAUD}

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def stop(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()  # the emulator exits, cProfile writes its stats
        self._process.wait(10)


def _cpu_seconds(pid: int | None) -> float:
    """CPU seconds the process ``pid`` has used so far (Linux).

    Its CPU-time clock, the id ``clock_getcpuclockid(pid)`` gives (``(~pid << 3) | 2``,
    which Python does not wrap); ``/proc/<pid>/stat`` (clock ticks) where that fails.
    """
    if pid is None:
        return math.nan
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except OSError:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Goals prepared once: the bench times the drivers, not building the commands.
_GOALS = [{i: ActuatorCommand(position=0.001 * ((k + i) % 200)) for i in IDS} for k in range(200)]
_TICKS = [{i: list((round(c.position / (6.283185307179586 / 4096)) + 2048).to_bytes(4, "little"))
           for i, c in goals.items()} for goals in _GOALS]


def _commands(k: int) -> dict[int, ActuatorCommand]:
    return _GOALS[k % len(_GOALS)]


class _Driver(NamedTuple):
    cycle: Callable[[int], None]
    close: Callable[[], None]


def _ours(transport: dict[str, object], fast: bool) -> _Driver:  # noqa: FBT001
    bus = DynamixelBus(BusSpec("bench", "dynamixel", transport, {"fast_sync_read": fast}),
                       _actuators())
    bus.open()
    bus.set_torque(True)

    def cycle(k: int) -> None:
        bus.write(_commands(k))
        bus.read()

    return _Driver(cycle, bus.close)


def _sdk_cycle(port: object, fast: bool) -> Callable[[int], None]:  # noqa: FBT001
    """The SDK's control cycle on ``port`` (a ``PortHandler``): what :func:`_ours` does."""
    import dynamixel_sdk as sdk

    ph = sdk.PacketHandler(2.0)
    writer = sdk.GroupSyncWrite(port, ph, 116, 4)
    reader = sdk.GroupSyncRead(port, ph, READ_ADDRESS, READ_SIZE)
    for i in IDS:
        reader.addParam(i)

    def cycle(k: int) -> None:
        writer.clearParam()
        for i, ticks in _TICKS[k % len(_TICKS)].items():
            writer.addParam(i, ticks)
        writer.txPacket()
        result = reader.fastSyncRead() if fast else reader.txRxPacket()
        if result != sdk.COMM_SUCCESS:
            raise RuntimeError(f"dynamixel-sdk: {ph.getTxRxResult(result)}")
        for i in IDS:
            for address, size in FIELDS:
                reader.getData(i, address, size)

    return cycle


def _sdk(port_name: str, fast: bool) -> _Driver:  # noqa: FBT001
    import dynamixel_sdk as sdk

    port = sdk.PortHandler(port_name)
    port.openPort()
    port.setBaudRate(BAUD)
    return _Driver(_sdk_cycle(port, fast), port.closePort)


class _Run(NamedTuple):
    """One driver's totals over its rounds."""

    cycles: int
    wall: float  # s
    cpu: float  # s of this process (user + system)
    emulator: float  # CPU s of the emulator process
    failed: int  # cycles that raised (a timeout on a loaded machine); their time counts

    @property
    def rate(self) -> float:
        return self.cycles / self.wall

    def per_cycle_us(self, seconds: float) -> float:
        return seconds / self.cycles * 1e6


def _race(emulator: _Emulator, drivers: dict[str, _Driver], cycles: int,
          rounds: int) -> dict[str, _Run]:
    """Run the drivers in turns, ``cycles / rounds`` cycles a turn; totals per driver."""
    for driver in drivers.values():
        for k in range(20):  # warm up (a timeout on a loaded machine is not counted here)
            with contextlib.suppress(HardwareError, RuntimeError):
                driver.cycle(k)
    totals = {name: _Run(0, 0.0, 0.0, 0.0, 0) for name in drivers}
    per_round = max(1, cycles // rounds)
    for _ in range(rounds):
        for name, driver in drivers.items():
            failed = 0
            busy0 = _cpu_seconds(emulator.pid)
            cpu0 = time.process_time()
            start = time.perf_counter()
            for k in range(per_round):
                try:
                    driver.cycle(k)
                except (HardwareError, RuntimeError):  # noqa: PERF203 - free in 3.11 when nothing raises
                    failed += 1  # both drivers start the next cycle clean
                    if failed > per_round // 20:
                        raise
            wall = time.perf_counter() - start
            cpu = time.process_time() - cpu0
            busy1 = _cpu_seconds(emulator.pid)
            t = totals[name]
            totals[name] = _Run(t.cycles + per_round, t.wall + wall, t.cpu + cpu,
                                t.emulator + busy1 - busy0, t.failed + failed)
    return totals


# A process answering each cycle's request (its byte count) with a canned reply at once:
# what the pty and two processes' wake-ups cost with no emulation and no codec.
_ECHO = """
import os, select, sys, tty
request, reply = int(sys.argv[1]), bytes(int(sys.argv[2]))
master, slave = os.openpty()
tty.setraw(slave)
print(os.ttyname(slave), flush=True)
pending = 0
while True:
    ready, _, _ = select.select([master, 0], [], [])
    if 0 in ready:
        break
    pending += len(os.read(master, 65536))
    while pending >= request:
        pending -= request
        os.write(master, reply)
"""


def _pty_floor(sync_write: bytes, sync_read: bytes, reply_size: int, cycles: int) -> float:
    """Seconds per cycle of write + write + read of the reply through a pty, no emulator."""
    child = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", _ECHO, str(len(sync_write) + len(sync_read)), str(reply_size)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout is None:  # pragma: no cover - Popen(stdout=PIPE)
            raise RuntimeError("no pipe from the echo process")
        port = SerialTransport(child.stdout.readline().strip(), BAUD)
        port.open()

        def cycle() -> None:
            port.write(sync_write)
            port.write(sync_read)
            got = 0
            while got < reply_size:
                got += len(port.read(reply_size - got, 1.0))

        for _ in range(50):
            cycle()
        start = time.perf_counter()
        for _ in range(cycles):
            cycle()
        seconds = (time.perf_counter() - start) / cycles
        port.close()
        return seconds
    finally:
        if child.stdin is not None:
            child.stdin.close()
        child.wait(5)


def _codec_cost(reply: bytes, cycles: int, *, fast: bool) -> tuple[float, int]:
    """Seconds of CPU per write()+read() cycle and the bytes of one cycle on the wire.

    ``reply``: the (Fast, with ``fast``) Sync Read's answer, replayed at every read.
    """
    replay = ReplayTransport(reply)
    bus = DynamixelBus(BusSpec("bench", "dynamixel", {"port": "replay"}), _actuators(),
                       transport=replay)
    # Skip open(): configure what it would have found (firmware >= 45, default limits).
    bus._open = True  # noqa: SLF001 - bench of the cycle alone
    bus._link.dirty = False  # noqa: SLF001
    bus.fast_sync_read = fast
    bus._build_read_packet()  # noqa: SLF001
    for servo in bus._servos.values():  # noqa: SLF001
        servo.min_goal, servo.max_goal = 0, 4095
        servo.effort_scale = 2.69e-3 * 1.78
    bus.write(_commands(0))
    bus.read()
    per_cycle_bytes = replay.written + len(reply)

    def cycle(k: int) -> None:
        bus.write(_commands(k))
        bus.read()

    return cpu_per_cycle(cycle, cycles), per_cycle_bytes


def _sdk_codec_cost(replies: dict[bool, bytes], fast: bool, cycles: int) -> float:  # noqa: FBT001
    """Seconds of CPU per SDK cycle against a replaying in-memory port (no I/O)."""
    import dynamixel_sdk as sdk

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

    return cpu_per_cycle(_sdk_cycle(ReplayPort(), fast), cycles)


def _capture_fast_reply(transport: dict[str, object]) -> bytes:
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


def _end_to_end(cycles: int, rounds: int, profile: str | None,
                ) -> tuple[list[str], bytes, dict[bool, dict[str, _Run]]]:
    lines = [(f"Dynamixel: {len(IDS)} emulated XM430-W350 (own process, pty, return delay 0),"
              f" {cycles} cycles of Sync Write (12 goals) + Sync Read (12 x {READ_SIZE} bytes)"
              f" per driver, in {rounds} alternating rounds")]
    emulator: _Emulator = (
        _ProfiledEmulator(str(Path(profile).resolve())) if profile
        else start_emulator({"baudrate": BAUD}, _actuators(), {"return_delay_us": 0}))
    results: dict[bool, dict[str, _Run]] = {}
    try:
        transport = dict(emulator.transport)
        for fast in (False, True):
            ours = _ours(transport, fast)  # opens first: also sets up the indirect addresses
            theirs = _sdk(str(transport["port"]), fast)
            try:
                results[fast] = _race(emulator, {"ours": ours, "sdk": theirs}, cycles, rounds)
            finally:
                theirs.close()
                ours.close()
            r = results[fast]
            kind = "Fast Sync Read" if fast else "Sync Read     "
            ratio = r["ours"].rate / r["sdk"].rate
            failed = (f"; cycles failed (timeouts): ours {r['ours'].failed}, dynamixel-sdk"
                      f" {r['sdk'].failed}" if r["ours"].failed or r["sdk"].failed else "")
            lines.append(f"  {kind}: ours {r['ours'].rate:7.0f} cycles/s, dynamixel-sdk"
                         f" {r['sdk'].rate:7.0f} cycles/s, ratio {ratio:.2f} (context:"
                         f" end to end, both wait on one emulator){failed}")
        reply = _capture_fast_reply(transport)
    finally:
        emulator.stop()
    if profile:
        lines.append(f"  emulator profile (the whole run, both drivers): {profile}")
    return lines, reply, results


def run(cycles: int = 2000, rounds: int = 4, profile: str | None = None, *,
        others: bool = True, feetech: bool = True) -> list[str]:
    """Run every section; the report lines."""
    load = os.getloadavg()
    lines, reply, results = _end_to_end(cycles, rounds, profile)
    lines.insert(0, "machine's load average (1, 5, 15 min) at the start: "
                    + ", ".join(f"{x:.2f}" for x in load)
                    + "; after the end-to-end rounds: "
                    + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    records = p.split_fast_status(p.parse(reply)[0], READ_SIZE)
    plain = b"".join(p.build_status(i, e, d) for i, e, d in records)
    sync_write = p.sync_write_values(116, "i", [x for i in IDS for x in (i, 2048 + i)])
    floors = {fast: _pty_floor(sync_write, p.sync_read(READ_ADDRESS, READ_SIZE, IDS, fast=fast),
                               len(reply) if fast else len(plain), cycles)
              for fast in (False, True)}
    lines.append("  per cycle, us: the cycle | the emulator process's CPU time on it | the"
                 " driver process's CPU time (includes the SDK's polling)")
    for fast in (False, True):
        kind = "Fast Sync Read" if fast else "Sync Read"
        for name in ("ours", "sdk"):
            r = results[fast][name]
            lines.append(f"    {kind:14s} {'ours' if name == 'ours' else 'dynamixel-sdk':13s}:"
                         f" {r.per_cycle_us(r.wall):6.0f} | {r.per_cycle_us(r.emulator):6.0f} |"
                         f" {r.per_cycle_us(r.cpu):6.0f}")
        lines.append(f"    {kind:14s} {'pty floor':13s}: {floors[fast] * 1e6:6.0f} | (a canned"
                     " reply at once; no emulation, no codec)")
    cpu, nbytes = _codec_cost(reply, cycles * 5, fast=True)
    sdk_fast = _sdk_codec_cost({True: reply, False: plain}, fast=True, cycles=cycles)
    sdk_plain = _sdk_codec_cost({True: reply, False: plain}, fast=False, cycles=cycles)
    ours_plain, _ = _codec_cost(plain, cycles * 5, fast=False)
    lines.append("  driver CPU per cycle without I/O (in-memory port replaying the answers,"
                 " CPU time, median of 5 blocks), and the end-to-end ratio if a cycle were"
                 " just that + the emulator's time + the pty floor (nothing competing for"
                 " the CPUs):")
    for fast, ours_t, sdk_t in ((False, ours_plain, sdk_plain), (True, cpu, sdk_fast)):
        kind = "Fast Sync Read" if fast else "Sync Read"
        r = results[fast]["ours"]
        shared = r.emulator / r.cycles + floors[fast]  # what both drivers wait for
        lines.append(f"    {kind:14s}: ours {ours_t * 1e6:6.1f} us, dynamixel-sdk"
                     f" {sdk_t * 1e6:6.1f} us, ratio {sdk_t / ours_t:.1f}x"
                     f" ({'met' if sdk_t >= GOAL_SPEEDUP * ours_t else 'NOT met'}:"
                     f" goal >= {GOAL_SPEEDUP:g}x); + {shared * 1e6:.0f} us"
                     f" -> {(sdk_t + shared) / (ours_t + shared):.2f}x end to end"
                     f" (2x needs <= {max(0.0, sdk_t - 2 * ours_t) * 1e6:.0f} us)")
    wire = nbytes * 10 / BAUD
    lines.append(f"  encode + decode per cycle (Fast Sync Read, in-memory transport):"
                 f" {cpu * 1e6:.1f} us; the cycle's {nbytes} bytes take {wire * 1e6:.0f} us"
                 f" at {BAUD / 1e6:g} Mbaud: {cpu / wire:.1%}"
                 f" ({'met' if cpu / wire < GOAL_CPU_FRACTION else 'NOT met'}:"
                 f" goal < {GOAL_CPU_FRACTION:.0%})")
    if others:
        lines.extend(_other("hw_mit"))
        lines.extend(_other("hw_latency"))
    if feetech:
        lines.extend(_other("hw_feetech"))
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2000, help="cycles per driver and mode")
    parser.add_argument("--rounds", type=int, default=4,
                        help="alternating rounds the cycles are split into")
    parser.add_argument("--dynamixel-only", action="store_true",
                        help="skip bench/hw_mit.py and bench/hw_latency.py")
    parser.add_argument("--profile-emulator", metavar="FILE",
                        help="run the emulator process under cProfile; pstats written to"
                             " FILE when it exits")
    parser.add_argument("--feetech-only", action="store_true",
                        help="only the Feetech section (bench/hw_feetech.py)")
    args = parser.parse_args()
    if args.feetech_only:
        for line in _other("hw_feetech"):
            print(line)
        return 0
    for line in run(args.cycles, args.rounds, args.profile_emulator,
                    others=not args.dynamixel_only, feetech=not args.dynamixel_only):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
