"""A Feetech servo's health in the hardware node's diagnostics, from what the servo reports.

Issue 30 asks for each servo's temperature, load, voltage and error bits on
``/diagnostics`` (the node publishes them at 1 Hz). Here the bundled SO-101's six emulated
STS3215s (7.4 V variant) behind the hardware backend, on a manual clock: each actuator's
diagnostics carry the servo's own Present_Temperature, Present_Voltage and load, rendered
as the node's ``DiagnosticStatus`` key/values; an overheating servo's error bits are the
actuator's ERROR, named.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from polling import wait_until

from skel_ros.emulation.feetech import start_emulator
from skel_ros.hardware import HardwareBackend, hardware_runner
from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.diagnostics import Level
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.model import load_model
from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.core.runner import Runner
    from skel_ros.emulation.feetech import FeetechEmulator

SO101_YAML = str(resolve("package://skel_ros/config/hardware/so101_feetech.yaml"))


class Rig:
    def __init__(self) -> None:
        config = load_hardware_config(SO101_YAML)
        self.emulator: FeetechEmulator = start_emulator(
            {"baudrate": 1_000_000}, [j.actuator for j in config.joints], {})
        config = config.with_transport("arm_bus", self.emulator.transport)
        bound = config.bind(config.select_skeleton(load_model(example("so101_arm.urdf"))))
        self.t = 0.0
        self.backend = HardwareBackend(bound, clock=lambda: self.t)
        self.runner: Runner = hardware_runner(self.backend)

    def cycle(self) -> None:
        self.t += 0.06  # past the diagnostics' 50 ms refresh at every cycle
        self.runner.cycle()

    def actuator(self, servo_id: int) -> object:
        (act,) = [a for a in self.backend.status().actuators if a.id == servo_id]
        return act

    def close(self) -> None:
        self.runner.cleanup()
        self.emulator.stop()


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    r = Rig()
    yield r
    r.close()


def test_each_servos_temperature_voltage_and_load_are_its_own(rig: Rig) -> None:
    from skel_ros.nodes.hardware_node import _actuator_status

    rig.emulator.set_register(3, "Present_Temperature", 47)
    rig.emulator.set_register(3, "Present_Voltage", 71)  # 7.1 V, in 0.1 V

    def fresh() -> bool:
        rig.cycle()
        act = rig.actuator(3)
        return act.temperature == 47  # type: ignore[attr-defined]

    assert wait_until(fresh, 10.0), rig.actuator(3)
    act = rig.actuator(3)
    assert act.voltage == pytest.approx(7.1)  # type: ignore[attr-defined]
    assert act.effort is not None  # type: ignore[attr-defined]
    assert act.level is Level.OK  # type: ignore[attr-defined]
    other = rig.actuator(1)
    assert other.voltage == pytest.approx(ct.model_by_name("STS3215-C001").voltage, abs=0.05)  # type: ignore[attr-defined]
    values = {kv.key: kv.value for kv in _actuator_status(act, "hardware_node").values}  # type: ignore[arg-type]
    assert values["temperature"] == "47"
    assert values["voltage"] == "7.1"
    assert "effort" in values
    assert values["error_code"] == "0"


def test_an_overheating_servo_is_an_error_named_by_its_bits(rig: Rig) -> None:
    rig.emulator.inject_fault(4, 0x04, persistent=True)  # overheating, and still hot
    try:
        def faulted() -> bool:
            rig.cycle()
            return rig.actuator(4).error_code == 0x04  # type: ignore[attr-defined]

        assert wait_until(faulted, 10.0), rig.actuator(4)
        act = rig.actuator(4)
        assert act.level is Level.ERROR  # type: ignore[attr-defined]
        assert "overheat" in act.fault.lower()  # type: ignore[attr-defined]
        assert rig.actuator(1).level is not Level.ERROR  # type: ignore[attr-defined]
    finally:
        rig.emulator.inject_fault(4, 0)
