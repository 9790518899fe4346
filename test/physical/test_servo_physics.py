"""Physics-backed Dynamixel servos (skel_ros.physical): the control law, the truth file.

Each test builds the servos in this process on a clock it sets (the emulator process does
the same on ``time.monotonic``), talks to them as the bus does (WRITE, READ of the control
table) and checks what the physics and the e-Manual's law predict.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.physical.dynamixel import PhysicalEmulatorConfig
from skel_ros.physical.servo_law import PWM_FULL

if TYPE_CHECKING:
    from skel_ros.emulation.dynamixel import EmulatedServo

DATA = Path(__file__).resolve().parent / "data"
PENDULUM = DATA / "pendulum.skel"  # 0.2 kg, centre of mass 0.1 m out: 0.196 N m at q = 0
TWO_SERVOS = Path(__file__).resolve().parents[1] / "hardware" / "data" / "two_servos.skel"
XM430 = ct.model_by_name("XM430-W350")
assert XM430 is not None
GRAVITY_TORQUE = 0.2 * 9.81 * 0.1
PULSE = ct.RAD_PER_TICK


def stiffness(p_gain: int = 800) -> float:
    """N m per rad of a P-only position loop: stall torque * KPP / 885 per pulse."""
    return XM430.stall_torque * (p_gain / 128) / PWM_FULL / PULSE


class Bench:
    """Servos on a clock of the test's."""

    def __init__(self, model: Path, joints: dict[int, str], tmp_path: Path,
                 truth: str | None = None, start: float = 0.0) -> None:
        self.t = 10.0
        truth_file = None
        if truth is not None:
            truth_file = tmp_path / "truth.yaml"
            truth_file.write_text(truth, encoding="utf-8")
        physics = {"model": str(model), "truth": None if truth_file is None else str(truth_file),
                   "joints": {str(i): {"joint": j} for i, j in joints.items()}}
        config = PhysicalEmulatorConfig(tuple((i, "XM430-W350", start, None) for i in joints),
                                        physics=json.dumps(physics))
        self.bus = config.build(lambda: self.t)
        self.servos: dict[int, EmulatedServo] = self.bus.all_servos

    def write(self, dxl_id: int, fld: ct.Field, value: int) -> None:
        data = value.to_bytes(fld.size, "little", signed=fld.signed)
        assert self.servos[dxl_id].write(fld.address, data, self.t) == 0

    def read(self, dxl_id: int, fld: ct.Field) -> int:
        error, data = self.servos[dxl_id].read(fld.address, fld.size, self.t)
        assert error == 0
        return int.from_bytes(data, "little", signed=fld.signed)

    def goal(self, dxl_id: int, rad: float) -> None:
        self.write(dxl_id, ct.GOAL_POSITION, round(rad / PULSE) + ct.CENTER_TICK)

    def present(self, dxl_id: int) -> float:
        return (self.read(dxl_id, ct.PRESENT_POSITION) - ct.CENTER_TICK) * PULSE

    def run(self, seconds: float) -> None:
        """Time passes; the bus is read every 5 ms meanwhile, as a driver would."""
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(end, self.t + 0.005)
            for servo in self.servos.values():
                servo.sync(self.t)

    def joint(self, dxl_id: int) -> float:
        """The joint's true position (no encoder error)."""
        motor = self.servos[dxl_id].motor
        return float(motor.joint.true_position)  # type: ignore[attr-defined]


def test_the_gains_are_at_their_addresses_with_the_models_defaults(tmp_path: Path) -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1", 2: "joint2"}, tmp_path)
    assert bench.read(1, ct.POSITION_P_GAIN) == 800
    assert bench.read(1, ct.POSITION_I_GAIN) == 0
    assert bench.read(1, ct.POSITION_D_GAIN) == 0
    assert (bench.read(1, ct.VELOCITY_P_GAIN), bench.read(1, ct.VELOCITY_I_GAIN)) == (100, 1920)


def test_a_servo_holding_a_load_sags_as_its_position_loop_predicts(tmp_path: Path) -> None:
    bench = Bench(PENDULUM, {1: "hinge"}, tmp_path)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.run(2.0)
    sag = abs(bench.present(1))  # gravity pulls the link down, the servo pushes back
    predicted = GRAVITY_TORQUE / stiffness()
    assert predicted == pytest.approx(0.0104, abs=1e-4)
    assert sag == pytest.approx(predicted, abs=2 * PULSE)
    # Present Current says the torque that holds it (2.69 mA units, the torque constant).
    current = bench.read(1, ct.PRESENT_CURRENT) * XM430.current_unit * XM430.torque_constant
    assert abs(current) == pytest.approx(GRAVITY_TORQUE, abs=0.05)
    # Twice the P gain: half the sag.
    bench.write(1, ct.POSITION_P_GAIN, 1600)
    bench.run(2.0)
    assert abs(bench.present(1)) == pytest.approx(predicted / 2, abs=2 * PULSE)


def test_a_payload_makes_the_loaded_joint_sag_more(tmp_path: Path) -> None:
    bench = Bench(PENDULUM, {1: "hinge"}, tmp_path,
                  truth="bodies:\n  link: {mass: 0.2, at: [0.1, 0, 0]}\n")
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.run(2.0)
    torque = GRAVITY_TORQUE + 0.2 * 9.81 * 0.2  # the payload 0.2 m from the hinge
    assert abs(bench.present(1)) == pytest.approx(torque / stiffness(), abs=2 * PULSE)


def test_the_command_delay_holds_a_goal_back(tmp_path: Path) -> None:
    def first_motion(truth: str | None) -> float:
        bench = Bench(TWO_SERVOS, {1: "joint1"}, tmp_path, truth=truth)
        bench.write(1, ct.TORQUE_ENABLE, 1)
        bench.run(0.1)
        start = bench.joint(1)
        written = bench.t
        bench.goal(1, 0.5)
        while abs(bench.joint(1) - start) < 1e-3:
            bench.t += 0.001
            bench.servos[1].sync(bench.t)
        return bench.t - written

    assert first_motion(None) < 0.01
    late = first_motion("joints:\n  joint1: {delay: 0.05}\n")
    assert 0.05 <= late < 0.07


def test_the_encoder_offset_moves_the_joint_not_the_reading(tmp_path: Path) -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"}, tmp_path,
                  truth="joints:\n  joint1: {encoder_offset: 0.02}\n", start=0.3)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.goal(1, 0.3)
    bench.run(1.0)
    # The servo holds what its encoder reads at the goal; the joint is 0.02 short of it.
    assert bench.present(1) == pytest.approx(0.3, abs=2 * PULSE)
    assert bench.joint(1) == pytest.approx(0.28, abs=2 * PULSE)


def test_encoder_noise_is_repeatable_with_its_seed(tmp_path: Path) -> None:
    def readings(seed: int) -> list[int]:
        bench = Bench(TWO_SERVOS, {1: "joint1"}, tmp_path,
                      truth=f"seed: {seed}\njoints:\n  joint1: {{encoder_noise: 0.01}}\n")
        bench.write(1, ct.TORQUE_ENABLE, 1)
        out = []
        for _ in range(20):
            bench.run(0.005)
            out.append(bench.read(1, ct.PRESENT_POSITION))
        return out

    first = readings(1)
    assert len(set(first)) > 5  # it is noisy (0.01 rad is 6.5 pulses)
    assert readings(1) == first
    assert readings(2) != first


def test_backlash_lets_the_motor_turn_before_the_joint_does(tmp_path: Path) -> None:
    def moved_after(truth: str | None) -> float:
        bench = Bench(TWO_SERVOS, {1: "joint1"}, tmp_path, truth=truth)
        bench.write(1, ct.TORQUE_ENABLE, 1)
        bench.goal(1, 0.5)
        bench.run(0.02)
        return bench.joint(1)

    free = moved_after(None)
    assert free > 0.01
    # 0.2 rad of play: half of it (the gear starts centred) is crossed without load first.
    assert moved_after("joints:\n  joint1: {backlash: 0.2}\n") < free / 2


def test_profile_velocity_sets_the_speed_of_a_move(tmp_path: Path) -> None:
    bench = Bench(TWO_SERVOS, {1: "joint1"}, tmp_path)
    bench.write(1, ct.PROFILE_VELOCITY, 50)  # 50 * 0.229 rev/min = 1.2 rad/s
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.goal(1, 1.0)
    bench.run(0.3)
    before, t0 = bench.joint(1), bench.t
    bench.run(0.2)
    speed = (bench.joint(1) - before) / (bench.t - t0)
    assert speed == pytest.approx(50 * ct.RAD_S_PER_VELOCITY_UNIT, rel=0.05)
    assert bench.read(1, ct.PRESENT_VELOCITY) == pytest.approx(50, abs=3)
    bench.run(1.5)
    assert bench.present(1) == pytest.approx(1.0, abs=2 * PULSE)


@pytest.mark.parametrize(("ramp_ms", "cruise"), [(0, 1.0 / 0.4), (100, 1.0 / 0.3)])
def test_a_time_based_profile_reaches_each_goal_in_its_time(tmp_path: Path, ramp_ms: int,
                                                            cruise: float) -> None:
    # Drive Mode bit 2: Profile Velocity is the move's time (400 ms), Profile
    # Acceleration its speeding-up time (0: a rectangle of velocity; 100 ms: a trapezoid,
    # whose cruise covers the distance in 400 - 100 ms).
    bench = Bench(TWO_SERVOS, {1: "joint1"}, tmp_path)
    bench.write(1, ct.DRIVE_MODE, ct.DRIVE_MODE_TIME_BASED | 1)  # bit 0 (reverse) kept
    bench.write(1, ct.PROFILE_VELOCITY, 400)
    bench.write(1, ct.PROFILE_ACCELERATION, ramp_ms)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.goal(1, 1.0)
    bench.run(0.15)
    before, t0 = bench.joint(1), bench.t
    bench.run(0.1)
    assert (bench.joint(1) - before) / (bench.t - t0) == pytest.approx(cruise, rel=0.05)
    # Another write while it moves (the Bus Watchdog, as the driver arms it) does not plan
    # the move again: it still arrives 400 ms after its goal.
    bench.write(1, ct.BUS_WATCHDOG, 100)
    bench.run(0.16)
    law = bench.servos[1].motor.law  # type: ignore[attr-defined]
    assert law.desired == pytest.approx(1.0, abs=PULSE)  # the set-point: at the goal
    # Velocity-based again: Profile Velocity 400 is 400 * 0.229 rev/min, about 9.6 rad/s.
    bench.write(1, ct.TORQUE_ENABLE, 0)
    bench.write(1, ct.DRIVE_MODE, 0)
    bench.write(1, ct.PROFILE_VELOCITY, 20)  # 0.48 rad/s
    bench.write(1, ct.PROFILE_ACCELERATION, 0)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.goal(1, 0.5)
    bench.run(0.3)
    before, t0 = bench.joint(1), bench.t
    bench.run(0.2)
    assert (bench.joint(1) - before) / (bench.t - t0) == pytest.approx(
        -20 * ct.RAD_S_PER_VELOCITY_UNIT, rel=0.05)


def test_the_robot_stands_held_until_a_servo_first_drives_it(tmp_path: Path) -> None:
    bench = Bench(PENDULUM, {1: "hinge"}, tmp_path)
    bench.run(0.5)  # every motor off, the link horizontal: it stays (on its stand)
    assert bench.joint(1) == 0.0


def test_torque_off_lets_the_load_fall(tmp_path: Path) -> None:
    bench = Bench(PENDULUM, {1: "hinge"}, tmp_path)
    bench.write(1, ct.TORQUE_ENABLE, 1)
    bench.run(0.5)
    held = bench.joint(1)
    bench.write(1, ct.TORQUE_ENABLE, 0)
    bench.run(0.3)
    assert abs(bench.joint(1) - held) > 0.2
    assert math.isfinite(bench.present(1))
