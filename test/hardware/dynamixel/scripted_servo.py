"""A scripted Dynamixel bus on a pty, for driver tests that need exact bytes on a real port."""

from __future__ import annotations

import os
import select
import threading
import tty
from typing import TYPE_CHECKING

from skel_ros.hardware.dynamixel import protocol as p

if TYPE_CHECKING:
    from collections.abc import Callable


class ScriptedServo:
    """The other end of a pty answering each instruction packet with ``reply(packet)``."""

    def __init__(self, reply: Callable[[p.Packet], bytes]) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.port = os.ttyname(self.slave)
        self.reply = reply
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        reader = p.PacketReader()
        while not self._stop.is_set():
            if not select.select([self.master], [], [], 0.01)[0]:
                continue
            reader.feed(os.read(self.master, 4096))
            while (packet := reader.next_packet()) is not None:
                os.write(self.master, self.reply(packet))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        os.close(self.master)
        os.close(self.slave)
