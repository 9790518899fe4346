"""Emulated actuators for machines without hardware: shared motor model and handle type.

Every protocol package has ``start_emulator(transport, actuators, options) -> Emulator``
(``skel_ros.hardware.dynamixel``, ``.canopen402``, ``.mit``). The Dynamixel emulator runs
in its own process on a pseudo-terminal; the CAN emulators run as threads on python-can's
``virtual`` interface. All of them move their shafts with :class:`MotorModel`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from skel_ros.hardware.emulators.motor import MotorModel, MotorParams, MotorState

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["Emulator", "MotorModel", "MotorParams", "MotorState"]


class Emulator(Protocol):
    """A running emulator, as ``start_emulator`` returns it.

    Attributes:
        transport: what to put in ``BusSpec.transport`` to reach it.
    """

    transport: Mapping[str, Any]

    def stop(self) -> None:
        """Stop the emulator and release its resources; idempotent, never raises."""

    def state(self, actuator_id: int) -> MotorState:
        """The true state of one emulated actuator (for tests)."""
