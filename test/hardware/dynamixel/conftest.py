"""Fixtures: Dynamixel emulators (separate processes on ptys), always stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.emulation.dynamixel import start_emulator
from skel_ros.hardware.base import ActuatorSpec, BusSpec, ControlMode
from skel_ros.hardware.dynamixel.bus import DynamixelBus

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from skel_ros.emulation.dynamixel import DynamixelEmulator

START = {1: 0.3, 2: -0.2, 3: 0.5, 4: 0.1}


@pytest.fixture
def make_emulator() -> Iterator[Callable[..., DynamixelEmulator]]:
    """Start emulators; every one is stopped after the test."""
    started: list[DynamixelEmulator] = []

    def make(actuators: list[ActuatorSpec] | None = None, **options: object,
             ) -> DynamixelEmulator:
        acts = actuators or [ActuatorSpec(i, ControlMode.POSITION, "XM430-W350") for i in START]
        options.setdefault("initial_positions", START)
        emu = start_emulator({"baudrate": 1_000_000}, acts, options)
        started.append(emu)
        return emu

    yield make
    for emu in started:
        emu.stop()
    assert not any(e.running for e in started)


@pytest.fixture
def emulator(make_emulator: Callable[..., DynamixelEmulator]) -> DynamixelEmulator:
    """Four XM430-W350 at ids 1..4, at START."""
    return make_emulator()


@pytest.fixture
def make_bus() -> Iterator[Callable[..., DynamixelBus]]:
    """Build DynamixelBus drivers; every one is closed after the test."""
    made: list[DynamixelBus] = []

    def make(transport: dict[str, object], actuators: list[ActuatorSpec] | None = None,
             clock: Callable[[], float] | None = None, **options: object) -> DynamixelBus:
        acts = actuators or [ActuatorSpec(i, ControlMode.POSITION, "XM430-W350") for i in START]
        spec = BusSpec("arm", "dynamixel", {**transport, "timeout": 0.05}, options)
        bus = DynamixelBus(spec, acts, clock or (lambda: 12.5))
        made.append(bus)
        return bus

    yield make
    for bus in made:
        bus.close()
