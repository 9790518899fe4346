"""Feetech section of bench/hardware.py: 6 x STS3215, one Sync Write + one Sync Read.

1. End to end on the emulator (its own process, a pty, ``--wire-time``: every byte takes
   its 10 bits at 1 Mbaud, return delay 0): cycles/s of our ``FeetechBus`` (``write`` of
   6 goals + ``read``) and of Feetech's ``ftservo-python-sdk`` doing the same packets
   (``GroupSyncWrite`` of Goal_Position + ``GroupSyncRead`` of the same 27-byte block)
   and taking out what our state carries: per servo the status packet's error byte
   (``isAvailable``) and the 7 fields our driver decodes (``getData``: Torque_Enable,
   Present_Position, _Velocity, _Load, _Voltage, _Temperature, Status; the signed ones
   through ``scs_tohost``); ours also scales them to SI units and builds the states.
   Goal: ours >= 200 Hz. A cycle whose answer is lost (the emulator starved on a busy
   host) is counted, for both.
2. Driver CPU per cycle without I/O (in-memory ports replaying a captured answer, this
   process's CPU time, median of 5 blocks). Goal: ours <= 0.5x the SDK's.

Usage: .venv/bin/python bench/hw_feetech.py [--cycles N]  (bench/hardware.py runs it too)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from replay import ReplayTransport, cpu_per_cycle  # noqa: E402 - bench/, beside this file

from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec, ControlMode  # noqa: E402
from skel_ros.hardware.errors import TransportTimeoutError  # noqa: E402
from skel_ros.hardware.feetech import control_table as ct  # noqa: E402
from skel_ros.hardware.feetech import protocol as p  # noqa: E402
from skel_ros.hardware.feetech.bus import FeetechBus  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

IDS = list(range(1, 7))
BAUD = 1_000_000
GOAL_RATE = 200.0
GOAL_SPEEDUP = 2.0
# The block's fields the SDK decodes, the ones our driver's state is made of (bus.py's
# read block): (address, size, sign bit or None).
FIELDS = tuple((f.address, f.size, f.sign_bit) for f in (
    ct.TORQUE_ENABLE, ct.PRESENT_POSITION, ct.PRESENT_VELOCITY, ct.PRESENT_LOAD,
    ct.PRESENT_VOLTAGE, ct.PRESENT_TEMPERATURE, ct.STATUS))


def _actuators() -> list[ActuatorSpec]:
    return [ActuatorSpec(i, ControlMode.POSITION, "STS3215") for i in IDS]


def _goal(k: int) -> float:
    return 0.2 * ((k % 40) / 20 - 1)


def _start_emulator() -> tuple[subprocess.Popen[str], str]:
    child = subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "skel_ros.emulation.feetech", "--ids", "1-6", "--baud",
         str(BAUD), "--wire-time"], stdout=subprocess.PIPE, text=True, cwd=REPO)
    assert child.stdout is not None
    line = child.stdout.readline()
    return child, line.split("port: ", 1)[1].strip()


def _ours_end_to_end(port: str, cycles: int) -> tuple[float, int]:
    """Cycles/s, and the cycles whose answer was lost (a starved emulator on a busy host)."""
    bus = FeetechBus(BusSpec("bench", "feetech", {"port": port, "baudrate": BAUD}), _actuators())
    bus.open()
    bus.set_torque(True)
    lost = 0
    start = time.perf_counter()
    for k in range(cycles):
        bus.write({i: ActuatorCommand(position=_goal(k)) for i in IDS})
        try:
            bus.read()
        except TransportTimeoutError:
            lost += 1
    rate = cycles / (time.perf_counter() - start)
    bus.close()
    return rate, lost


def _sdk_cycle(ph: object, sdk: object, failures: list[int] | None = None,
               ) -> Callable[[int], None]:
    """The SDK's cycle: the same packets as ours, and the values our state carries.

    A servo whose answer the SDK lost (``isAvailable`` false: its ``txRxPacket`` may still
    say COMM_SUCCESS) makes a lost cycle, counted in ``failures``.
    """
    writer = sdk.GroupSyncWrite(ph, ct.GOAL_POSITION.address, 2)  # type: ignore[attr-defined]
    reader = sdk.GroupSyncRead(ph, ct.READ_START, ct.READ_SIZE)  # type: ignore[attr-defined]
    for i in IDS:
        reader.addParam(i)
    failures = [] if failures is None else failures

    def cycle(k: int) -> None:
        raw = 2048 + round(_goal(k) / (2 * 3.141592653589793 / 4096))
        writer.clearParam()
        for i in IDS:
            writer.addParam(i, [ph.scs_lobyte(raw), ph.scs_hibyte(raw)])  # type: ignore[attr-defined]
        writer.txPacket()
        if reader.txRxPacket() != sdk.COMM_SUCCESS:  # type: ignore[attr-defined]
            failures.append(k)  # a lost answer: nothing to decode this cycle
            return
        for i in IDS:
            available, _error = reader.isAvailable(i, ct.READ_START, ct.READ_SIZE)
            if not available:
                failures.append(k)
                return
            for address, size, sign in FIELDS:
                value = reader.getData(i, address, size)
                if sign is not None:
                    ph.scs_tohost(value, sign)  # type: ignore[attr-defined]

    return cycle


def _sdk_end_to_end(port: str, cycles: int) -> tuple[float, int]:
    import scservo_sdk as sdk

    handler = sdk.PortHandler(port)
    handler.baudrate = BAUD
    handler.openPort()
    failures: list[int] = []
    cycle = _sdk_cycle(sdk.sms_sts(handler), sdk, failures)
    start = time.perf_counter()
    for k in range(cycles):
        cycle(k)
    rate = cycles / (time.perf_counter() - start)
    handler.closePort()
    return rate, len(failures)


def _reply() -> bytes:
    block = bytes(ct.READ_SIZE)
    return b"".join(p.build_status(i, 0, block[:16] + (2048 + i).to_bytes(2, "little")
                                   + block[18:]) for i in IDS)


def _ours_cpu(cycles: int) -> float:
    bus = FeetechBus(BusSpec("bench", "feetech", {"port": "replay"}), _actuators(),
                     transport=ReplayTransport(_reply()))
    bus._open = bus._verified = True  # noqa: SLF001 - no servos to open: replayed answers
    for servo in bus._servos.values():  # noqa: SLF001 - and the goal ranges open would set
        bus._set_limits(servo, (0, servo.model.max_tick))  # noqa: SLF001

    def cycle(k: int) -> None:
        bus.write({i: ActuatorCommand(position=_goal(k)) for i in IDS})
        bus.read()

    return cpu_per_cycle(cycle, cycles)


def _sdk_cpu(cycles: int) -> float:
    import scservo_sdk as sdk

    reply = _reply()

    class Port(sdk.PortHandler):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__("replay")
            self.is_open, self.tx_time_per_byte = True, 0.01

        def clearPort(self) -> None:  # noqa: N802 - the SDK's name
            return

        def writePort(self, packet: list[int]) -> int:  # noqa: N802
            return len(packet)

        def readPort(self, length: int) -> bytes:  # noqa: N802
            return reply[:length]

    return cpu_per_cycle(_sdk_cycle(sdk.sms_sts(Port()), sdk), cycles)


def run(cycles: int = 2000) -> list[str]:
    """The Feetech section's report lines."""
    lines = [("feetech: 6 x STS3215, Sync Write of Goal_Position + Sync Read of the 27-byte"
              " block 40..66")]
    try:
        import scservo_sdk  # noqa: F401
    except ImportError:
        return [*lines, "  ftservo-python-sdk not installed: nothing to compare with"]
    child, port = _start_emulator()
    try:
        ours, ours_lost = _ours_end_to_end(port, cycles)
        theirs, theirs_lost = _sdk_end_to_end(port, cycles)
    finally:
        child.terminate()
        child.wait(5)
    lines.append(f"  end to end on the emulator at {BAUD / 1e6:g} Mbaud (wire time emulated):"
                 f" ours {ours:.0f} cycles/s ({'met' if ours >= GOAL_RATE else 'NOT met'}:"
                 f" goal >= {GOAL_RATE:g}), ftservo-python-sdk {theirs:.0f} cycles/s (context);"
                 f" answers lost: ours {ours_lost}, the SDK's {theirs_lost} of {cycles}")
    ours_t, sdk_t = _ours_cpu(cycles), _sdk_cpu(cycles)
    lines.append(f"  driver CPU per cycle without I/O: ours {ours_t * 1e6:.1f} us,"
                 f" ftservo-python-sdk {sdk_t * 1e6:.1f} us: {ours_t / sdk_t:.2f}x"
                 f" ({'met' if sdk_t >= GOAL_SPEEDUP * ours_t else 'NOT met'}: goal <= 0.5x)")
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
