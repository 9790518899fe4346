"""An in-memory port for driver tests: always open, nothing to open or close."""

from __future__ import annotations

from skel_ros.hardware.transport import Transport


class MemoryPort(Transport):
    """A :class:`Transport` without a device; subclasses answer ``write``/``read``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def open(self) -> None:
        return

    def close(self) -> None:
        return

    @property
    def is_open(self) -> bool:
        return True
