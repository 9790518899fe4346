"""What the driver benchmarks share: a transport that replays one answer, and CPU per cycle.

``bench/hardware.py`` (Dynamixel) and ``bench/hw_feetech.py`` (Feetech) time a driver's
cycle without I/O: every read answers at once with a captured Sync Read answer.
"""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING

from skel_ros.hardware.errors import TransportTimeoutError
from skel_ros.hardware.transport import Transport

if TYPE_CHECKING:
    from collections.abc import Callable


class ReplayTransport(Transport):
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


def cpu_per_cycle(cycle: Callable[[int], None], cycles: int, blocks: int = 5) -> float:
    """CPU seconds per cycle: the median of ``blocks`` blocks.

    This process's CPU time (``time.process_time``), not the wall clock: no I/O here, so
    the CPU time is the cycle's cost, and the time other processes hold the CPUs of a
    busy machine does not count.
    """
    for k in range(20):  # warm up
        cycle(k)
    per_block = max(1, cycles // blocks)
    times = []
    for b in range(blocks):
        start = time.process_time()
        for k in range(b * per_block, (b + 1) * per_block):
            cycle(k)
        times.append((time.process_time() - start) / per_block)
    return statistics.median(times)
