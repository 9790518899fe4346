"""A tap on the wire between a Dynamixel driver and its emulator: every Goal Position sent.

A pty pair between driver and emulator: the driver opens ``path`` (a symlink to the
tap's pty), the tap forwards every byte both ways and decodes each Sync Write it
forwards with its own Protocol 2.0 parser (independent of the driver's codec), keeping
the Goal Positions (ticks by id) and when they passed. Used by the limits property test
(test/hardware/test_limits_on_wire.py) and the re-enable test of the hardware node
(test/nodes/test_hardware_reenable.py).
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import threading
import time
import tty
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["CENTER", "GOAL_POSITION", "TICK", "SyncWriteTap"]

GOAL_POSITION = 116  # X-series control table: Goal Position, 4 bytes
CENTER = 2048  # ticks at 0 rad
TICK = 2 * math.pi / 4096  # rad per tick


class SyncWriteTap:
    """A pty pair between driver and emulator that decodes every Sync Write it forwards."""

    def __init__(self, target: str, path: Path) -> None:
        self._target = os.open(target, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._target)
        self._master, slave = os.openpty()
        tty.setraw(slave)
        self._slave = slave
        path.symlink_to(os.ttyname(slave))
        self.goals: list[dict[int, int]] = []  # one dict id -> ticks per Sync Write
        self.times: list[float] = []  # when each of them passed (time.monotonic)
        self.other_writes: list[int] = []  # instructions writing Goal Position otherwise
        self._buffer = bytearray()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        for fd in (self._master, self._slave, self._target):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _pump(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master, self._target], [], [], 0.01)
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    continue
                if fd == self._master:
                    self._buffer += data
                    self._decode()
                # Nobody at the other end (an emulator gone for a while): the bytes are
                # lost, as on an unplugged line.
                with contextlib.suppress(OSError):
                    os.write(self._target if fd == self._master else self._master, data)

    def _decode(self) -> None:
        buf = self._buffer
        while True:
            start = buf.find(b"\xff\xff\xfd\x00")
            if start < 0:
                del buf[:max(0, len(buf) - 3)]
                return
            if len(buf) < start + 7:
                del buf[:start]
                return
            length = buf[start + 5] | buf[start + 6] << 8
            end = start + 7 + length
            if len(buf) < end:
                del buf[:start]
                return
            body = bytes(buf[start + 7:end - 2]).replace(b"\xff\xff\xfd\xfd", b"\xff\xff\xfd")
            self._packet(buf[start + 4], body)
            del buf[:end]

    def _packet(self, dxl_id: int, body: bytes) -> None:
        instruction, params = body[0], body[1:]
        if instruction == 0x83 and dxl_id == 0xFE and len(params) >= 4:  # Sync Write
            addr = params[0] | params[1] << 8
            size = params[2] | params[3] << 8
            if not addr <= GOAL_POSITION <= addr + size - 4:
                return
            offset = GOAL_POSITION - addr
            goals = {}
            for k in range(4, len(params) - size + 1, size + 1):
                raw = params[k + 1 + offset:k + 1 + offset + 4]
                goals[params[k]] = int.from_bytes(raw, "little", signed=True)
            self.goals.append(goals)
            self.times.append(time.monotonic())
        elif instruction in (0x03, 0x04, 0x93) and len(params) >= 2:  # Write, Reg Write, Bulk
            addr = params[0] | params[1] << 8
            if instruction != 0x93 and addr <= GOAL_POSITION < addr + len(params) - 2:
                self.other_writes.append(instruction)
