"""``skel-ros scan --protocol feetech`` and ``skel-ros clear-faults`` on emulated STS3215s.

The bundled SO-101's hardware YAML on six emulated servos: the scan finds exactly them
(one PING per id; the voltage variants share a model number), and clear-faults says what
it found and did per servo: a protection whose cause is gone is cleared and said (even
when opening the bus, which switches torque off, is what cleared it), one that stays is
an exit status of 1 naming the servo. The driver says a fault its open cleared once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from skel_ros_in_process import skel_ros_main

from skel_ros.emulation.feetech import start_emulator
from skel_ros.hardware.base import BusSpec
from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.feetech.bus import FeetechBus
from skel_ros.resources import resolve

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.emulation.feetech import FeetechEmulator

SO101_YAML = str(resolve("package://skel_ros/config/hardware/so101_feetech.yaml"))


@pytest.fixture(scope="module")
def emulator() -> Iterator[FeetechEmulator]:
    """The SO-101's six servos, ids 1-6."""
    config = load_hardware_config(SO101_YAML)
    emu = start_emulator({"baudrate": 1_000_000}, [j.actuator for j in config.joints], {})
    yield emu
    emu.stop()


def test_scan_finds_the_six_servos(emulator: FeetechEmulator,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = skel_ros_main(capsys, "scan", "--port", emulator.transport["port"], "--protocol",
                        "feetech", "--ids", "0-8")
    assert run.returncode == 0, run.stderr
    found = [line for line in run.stdout.splitlines() if line.startswith("id ")]
    assert [line.split(":")[0] for line in found] == [f"id {i}" for i in range(1, 7)]
    assert "model number 777, STS3215-C001 / STS3215-C044" in found[0]
    assert "6 device(s) on" in run.stderr


def test_clear_faults_says_what_it_found_and_a_fault_that_stays_exits_1(
        emulator: FeetechEmulator, capsys: pytest.CaptureFixture[str]) -> None:
    port = emulator.transport["port"]
    emulator.inject_fault(3, 0x20)  # overload, its cause gone: opening the bus clears it
    run = skel_ros_main(capsys, "clear-faults", SO101_YAML, "--port", port)
    assert run.returncode == 0, run.stderr
    lines = {line.split(" (")[0]: line for line in run.stdout.splitlines()}
    assert "overload error found at open" in lines["arm_bus id 3"]
    assert "no error now" in lines["arm_bus id 3"]
    assert lines["arm_bus id 1"].endswith("no fault; nothing done")
    assert emulator.register(3, "Status") == 0
    emulator.inject_fault(2, 0x04, persistent=True)  # overheating, and still hot
    run = skel_ros_main(capsys, "clear-faults", SO101_YAML, "--port", port)
    assert run.returncode == 1
    assert "arm_bus id 2: still in fault: overheating error" in run.stderr
    assert "arm_bus id 3 (elbow_flex): no fault; nothing done" in run.stdout
    assert not emulator.state(2).torque_enabled
    emulator.inject_fault(2, 0)


def test_the_driver_says_a_fault_its_open_cleared_once(emulator: FeetechEmulator) -> None:
    config = load_hardware_config(SO101_YAML)
    bus = FeetechBus(BusSpec("arm_bus", "feetech", {**emulator.transport, "timeout": 0.05}),
                     [j.actuator for j in config.joints])
    emulator.inject_fault(5, 0x20)
    bus.open()
    try:
        assert bus.clear_faults([5]) == {5: "overload error found at open, where torque off"
                                             " was written; no error now"}
        assert bus.clear_faults([5]) == {5: "no fault; nothing done"}
    finally:
        bus.close()
