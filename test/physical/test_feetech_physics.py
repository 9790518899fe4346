"""Physics-backed Feetech servos (skel_ros.physical.feetech): the control law, the reports.

Each test builds the servos in this process on a clock it sets (the emulator's thread does
the same on ``time.monotonic``), talks to them as the bus does (WRITE, READ of the memory
table, in the series' byte order and sign-magnitude) and checks what the physics and the
servo's law predict. The driver's side, the same suite as on the protocol-level emulator,
is ``test/hardware/test_protocol_conformance.py``'s case ``feetech-physics``.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech.control_table import (
    CCW_DEAD_ZONE,
    CW_DEAD_ZONE,
    D_COEFFICIENT,
    I_COEFFICIENT,
    P_COEFFICIENT,
)
from skel_ros.physical import physical_emulator_for
from skel_ros.physical.feetech import (
    DUTY_PER_STEP,
    TORQUE_CONSTANTS,
    PhysicalServo,
    physical_servos,
)

DATA = Path(__file__).resolve().parent / "data"
PENDULUM = DATA / "pendulum.skel"  # 0.2 kg, centre of mass 0.1 m out: 0.196 N m at q = 0
TWO_SERVOS = Path(__file__).resolve().parents[1] / "hardware" / "data" / "two_servos.skel"
STS3215 = ct.model_by_name("STS3215-C001")
SCS0009 = ct.model_by_name("SCS0009")
assert STS3215 is not None
assert SCS0009 is not None
GRAVITY_TORQUE = 0.2 * 9.81 * 0.1
STEP = STS3215.rad_per_tick


def stiffness(p: int = 32) -> float:
    """N m per rad of the P loop at rest: stall torque * duty per rad."""
    return STS3215.stall_torque * p * DUTY_PER_STEP / STEP


class Bench:
    """Servos on a clock of the test's."""

    def __init__(self, model: Path, joints: dict[int, str], servo_model: str = "STS3215-C001",
                 start: float = 0.0) -> None:
        self.t = 10.0
        physics = {"model": str(model), "joints": {i: {"joint": j} for i, j in joints.items()}}
        actuators = [ActuatorSpec(i, ControlMode.POSITION, servo_model) for i in joints]
        self.servos: dict[int, PhysicalServo] = physical_servos(
            actuators, {"physics": physics, "initial_positions": dict.fromkeys(joints, start)},
            self.t)

    def write(self, servo_id: int, fld: ct.Field, value: int) -> None:
        servo = self.servos[servo_id]
        raw = value if fld.sign_bit is None else ct.encode_sm(value, fld.sign_bit)
        servo.write(fld.address, raw.to_bytes(fld.size, servo.model.byte_order), self.t)

    def read(self, servo_id: int, fld: ct.Field) -> int:
        servo = self.servos[servo_id]
        raw = int.from_bytes(servo.read(fld.address, fld.size, self.t), servo.model.byte_order)
        return raw if fld.sign_bit is None else ct.decode_sm(raw, fld.sign_bit)

    def present(self, servo_id: int) -> float:
        model = self.servos[servo_id].model
        return (self.read(servo_id, ct.PRESENT_POSITION) - model.center) * model.rad_per_tick

    def goal(self, servo_id: int, rad: float) -> None:
        model = self.servos[servo_id].model
        self.write(servo_id, ct.GOAL_POSITION, round(rad / model.rad_per_tick) + model.center)

    def run(self, seconds: float) -> None:
        """Time passes; the bus is read every 5 ms meanwhile, as a driver would."""
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(end, self.t + 0.005)
            for servo in self.servos.values():
                servo.sync(self.t)

    def mean(self, servo_id: int, fld: ct.Field, seconds: float = 0.2) -> float:
        """A field's mean over ``seconds`` of reads every 5 ms (the P loop hunts a step)."""
        values = []
        for _ in range(round(seconds / 0.005)):
            self.run(0.005)
            values.append(self.read(servo_id, fld))
        return sum(values) / len(values)

    def joint(self, servo_id: int) -> float:
        """The joint's true position (no encoder error)."""
        return self.servos[servo_id].physical.joint.true_position


def test_the_loop_ships_with_its_factory_coefficients_and_keeps_writes() -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"})
    assert [bench.read(1, f) for f in (P_COEFFICIENT, D_COEFFICIENT, I_COEFFICIENT)] == [
        32, 32, 0]
    bench.write(1, P_COEFFICIENT, 16)  # LeRobot's SO-101 setting
    assert bench.read(1, P_COEFFICIENT) == 16
    assert bench.servos[1].physical.law.kp == pytest.approx(16 * DUTY_PER_STEP)
    # EEPROM under Lock 1 (as powered on): lost at the next power cycle.
    bench.servos[1].power_on(bench.t)
    assert bench.read(1, P_COEFFICIENT) == 32
    assert bench.servos[1].physical.law.kp == pytest.approx(32 * DUTY_PER_STEP)


def test_a_servo_holding_a_load_sags_by_its_p_law_and_reports_duty_and_current() -> None:
    bench = Bench(PENDULUM, {1: "hinge"})
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.run(1.5)
    predicted = GRAVITY_TORQUE / stiffness()
    assert predicted == pytest.approx(0.0193, abs=1e-4)
    assert abs(bench.present(1)) == pytest.approx(predicted, abs=1.5 * STEP)
    # At rest the duty is the torque's share of the stall torque; the current its torque.
    load = bench.mean(1, ct.PRESENT_LOAD) * ct.LOAD_UNIT * STS3215.stall_torque
    assert abs(load) == pytest.approx(GRAVITY_TORQUE, abs=0.02)
    current = bench.mean(1, ct.PRESENT_CURRENT) * 6.5e-3 * TORQUE_CONSTANTS["STS3215"]
    assert abs(current) == pytest.approx(GRAVITY_TORQUE, abs=0.02)
    # Twice the P coefficient: half the sag.
    bench.write(1, P_COEFFICIENT, 64)
    bench.run(1.0)
    assert abs(bench.present(1)) == pytest.approx(predicted / 2, abs=1.5 * STEP)
    # Torque_Limit 5 %: the duty stops there, too little to hold the link (0.096 N m at
    # stall), which sinks, braked by the motor's back EMF, towards where gravity's torque
    # (m g l cos q) is what 5 % gives.
    bench.write(1, ct.TORQUE_LIMIT, 50)
    bench.run(1.0)
    assert abs(bench.read(1, ct.PRESENT_LOAD)) == 50
    assert 10 * predicted < abs(bench.joint(1)) < math.acos(0.05 * STS3215.stall_torque
                                                            / GRAVITY_TORQUE)


def test_the_profile_runs_at_goal_speed_after_acceleration() -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"})
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.write(1, ct.GOAL_VELOCITY, 1000)       # steps/s: 1.53 rad/s
    bench.write(1, ct.ACCELERATION, 20)          # 2000 steps/s^2: full speed after 0.5 s
    bench.goal(1, 2.0)
    bench.run(0.25)
    accelerating = bench.read(1, ct.PRESENT_VELOCITY)
    assert 300 < accelerating < 700             # about 500 steps/s, 40 ms behind
    bench.run(0.5)
    assert bench.read(1, ct.PRESENT_VELOCITY) == pytest.approx(1000, abs=30)
    # Present_Load is the duty: nearly all of it turns the unloaded disc (back EMF).
    duty = bench.read(1, ct.PRESENT_LOAD) * ct.LOAD_UNIT
    assert duty == pytest.approx(1000 * STEP / STS3215.no_load_speed, abs=0.05)
    bench.run(1.5)                               # 2 rad at 1.53 rad/s: there by 1.6 s
    assert bench.present(1) == pytest.approx(2.0, abs=2 * STEP)
    assert bench.read(1, ct.PRESENT_VELOCITY) == 0


def test_within_the_dead_zone_the_servo_drives_nothing() -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"})
    bench.write(1, CW_DEAD_ZONE, 10)
    bench.write(1, CCW_DEAD_ZONE, 10)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    start = bench.read(1, ct.PRESENT_POSITION)
    bench.write(1, ct.GOAL_POSITION, start + 8)   # within 10 steps: nothing moves
    bench.run(0.3)
    assert bench.read(1, ct.PRESENT_POSITION) == start
    assert bench.read(1, ct.PRESENT_LOAD) == 0
    bench.write(1, ct.GOAL_POSITION, start + 40)  # out of it: driven to its edge
    bench.run(0.5)
    assert 40 - 10 - 2 <= bench.read(1, ct.PRESENT_POSITION) - start <= 40


def test_constant_speed_mode_turns_at_goal_speed_both_ways() -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"})
    bench.write(1, ct.OPERATING_MODE, ct.MODE_VELOCITY)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.write(1, ct.GOAL_VELOCITY, -800)
    bench.run(0.5)
    assert bench.read(1, ct.PRESENT_VELOCITY) == pytest.approx(-800, abs=30)
    assert bench.servos[1].get(ct.PRESENT_VELOCITY) & 0x8000  # sign-magnitude, bit 15


def test_an_scs_servo_reports_its_1024_steps_over_300_degrees() -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"}, servo_model="SCS0009", start=0.5)
    step = SCS0009.rad_per_tick
    assert bench.read(1, ct.PRESENT_POSITION) == 512 + round(0.5 / step)
    raw = bench.servos[1].table[ct.PRESENT_POSITION.address:ct.PRESENT_POSITION.address + 2]
    assert int.from_bytes(raw, "big") == 512 + round(0.5 / step)  # high byte first
    assert [bench.read(1, f) for f in (P_COEFFICIENT, D_COEFFICIENT)] == [15, 15]
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.goal(1, -0.3)
    bench.run(1.0)
    assert bench.present(1) == pytest.approx(-0.3, abs=2 * step)


def test_a_servo_without_a_joint_is_refused_before_anything_starts() -> None:
    start = physical_emulator_for("feetech")
    with pytest.raises(ConfigError, match="no joint for device id"):
        start({}, [ActuatorSpec(7, ControlMode.POSITION, "STS3215")],
              {"physics": {"model": str(TWO_SERVOS), "joints": {1: {"joint": "joint1"}}}})
