"""The python-can buses the drivers open, kept by a test: a host whose socket dies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skel_ros.hardware import can_transport

if TYPE_CHECKING:
    import can
    import pytest


class OpenedBuses:
    """Wraps ``can_transport.open_bus`` to keep every python-can bus a driver opens.

    ``buses[-1].shutdown()`` is what the kernel does to a dead process's socket, or a CAN
    adapter unplugged: the driver's frames (its periodic heartbeat included) stop, and its
    next send or receive fails.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.buses: list[can.BusABC] = []
        real = can_transport.open_bus

        def open_bus(transport: Any) -> can.BusABC:
            bus = real(transport)
            self.buses.append(bus)
            return bus

        monkeypatch.setattr(can_transport, "open_bus", open_bus)
