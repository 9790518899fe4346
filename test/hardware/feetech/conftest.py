"""Fixtures: Feetech emulators (a thread each, on a pty) and drivers, always stopped."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from skel_ros.emulation.feetech import start_emulator
from skel_ros.hardware.base import ActuatorSpec, BusSpec
from skel_ros.hardware.feetech.bus import FeetechBus

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from skel_ros.emulation.feetech import FeetechEmulator

from feetech_arm import START, arm


@pytest.fixture
def make_emulator() -> Iterator[Callable[..., FeetechEmulator]]:
    """Start emulators; every one is stopped after the test."""
    started: list[FeetechEmulator] = []

    def make(actuators: list[ActuatorSpec] | None = None, **options: object) -> FeetechEmulator:
        options.setdefault("initial_positions", START)
        emu = start_emulator({"baudrate": 1_000_000}, actuators or arm(), options)
        started.append(emu)
        return emu

    yield make
    for emu in started:
        emu.stop()


@pytest.fixture
def make_bus() -> Iterator[Callable[..., FeetechBus]]:
    """Build drivers; every one is closed after the test."""
    made: list[FeetechBus] = []

    def make(transport: dict[str, object], actuators: list[ActuatorSpec] | None = None,
             **options: object) -> FeetechBus:
        spec = BusSpec("arm", "feetech", {**transport, "timeout": 0.05}, options)
        bus = FeetechBus(spec, actuators or arm(), time.monotonic)
        made.append(bus)
        return bus

    yield make
    for bus in made:
        bus.close()
