"""Feetech section of bench/hardware.py: 6 x STS3215, one Sync Write + one Sync Read.

1. End to end on the emulator (its own process, a pty, ``--wire-time``: every byte takes
   its 10 bits at 1 Mbaud, return delay 0): cycles/s of our ``FeetechBus`` (``write`` of
   6 goals + ``read``) and of Feetech's ``ftservo-python-sdk`` doing the same packets
   (``GroupSyncWrite`` of Goal_Position + ``GroupSyncRead`` of the same 27-byte block,
   decoded into the same 14 values per servo with ``getData``). Goal: ours >= 200 Hz.
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
from skel_ros.hardware.feetech import control_table as ct  # noqa: E402
from skel_ros.hardware.feetech import protocol as p  # noqa: E402
from skel_ros.hardware.feetech.bus import FeetechBus  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

IDS = list(range(1, 7))
BAUD = 1_000_000
GOAL_RATE = 200.0
GOAL_SPEEDUP = 2.0
# The block's fields the SDK decodes, as ours does: (address, size, sign bit or None).
FIELDS = ((40, 1, None), (41, 1, None), (42, 2, 15), (44, 2, None), (46, 2, 15), (48, 2, None),
          (55, 1, None), (56, 2, 15), (58, 2, 15), (60, 2, 10), (62, 1, None), (63, 1, None),
          (65, 1, None), (66, 1, None))


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


def _ours_end_to_end(port: str, cycles: int) -> float:
    bus = FeetechBus(BusSpec("bench", "feetech", {"port": port, "baudrate": BAUD}), _actuators())
    bus.open()
    bus.set_torque(True)
    start = time.perf_counter()
    for k in range(cycles):
        bus.write({i: ActuatorCommand(position=_goal(k)) for i in IDS})
        bus.read()
    rate = cycles / (time.perf_counter() - start)
    bus.close()
    return rate


def _sdk_cycle(ph: object, sdk: object) -> Callable[[int], None]:
    writer = sdk.GroupSyncWrite(ph, ct.GOAL_POSITION.address, 2)  # type: ignore[attr-defined]
    reader = sdk.GroupSyncRead(ph, ct.READ_START, ct.READ_SIZE)  # type: ignore[attr-defined]
    for i in IDS:
        reader.addParam(i)
    failures: list[int] = []

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
            for address, size, sign in FIELDS:
                value = reader.getData(i, address, size)
                if sign is not None:
                    ph.scs_tohost(value, sign)  # type: ignore[attr-defined]

    return cycle


def _sdk_end_to_end(port: str, cycles: int) -> float:
    import scservo_sdk as sdk

    handler = sdk.PortHandler(port)
    handler.baudrate = BAUD
    handler.openPort()
    cycle = _sdk_cycle(sdk.sms_sts(handler), sdk)
    start = time.perf_counter()
    for k in range(cycles):
        cycle(k)
    rate = cycles / (time.perf_counter() - start)
    handler.closePort()
    return rate


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
        ours = _ours_end_to_end(port, cycles)
        theirs = _sdk_end_to_end(port, cycles)
    finally:
        child.terminate()
        child.wait(5)
    lines.append(f"  end to end on the emulator at {BAUD / 1e6:g} Mbaud (wire time emulated):"
                 f" ours {ours:.0f} cycles/s ({'met' if ours >= GOAL_RATE else 'NOT met'}:"
                 f" goal >= {GOAL_RATE:g}), ftservo-python-sdk {theirs:.0f} cycles/s (context)")
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
