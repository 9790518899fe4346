"""Backlash in the physics world (skel_ros.physical.world): where the rotor and the encoder sit.

A geared servo's rotor is on the motor side of its gears' play: within the play the link
moves without the rotor's inertia, and the rotor turns by the motor's torque alone. Where
the encoder reads decides what a position loop makes of the play: a Dynamixel's encoder
reads the output shaft (the play is inside its loop, taken up), an MIT motor's reads the
rotor (the play is outside its loop: the link hangs on a flank of it, unseen). Each test
drives the pendulum (``data/pendulum.skel``: gravity turns the link towards +q with
0.196 N m at q = 0), or a disc on a vertical axis, with a device's own law in one world,
stepped here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.model import load_model
from skel_ros.model.truth import parse_truth
from skel_ros.physical import PhysicalWorld, Transmission, real_world
from skel_ros.physical.mit import MitLaw
from skel_ros.physical.servo_law import XServoLaw

PENDULUM = Path(__file__).resolve().parent / "data" / "pendulum.skel"
# Two discs on vertical axes: no gravity load.
DISC = Path(__file__).resolve().parents[1] / "hardware" / "data" / "two_servos.skel"
GRAVITY_TORQUE = 0.2 * 9.81 * 0.1
LINK_INERTIA = 0.2 * 0.1**2 + 1e-4  # about the hinge: the centre of mass 0.1 m out, its own
XM430 = ct.model_by_name("XM430-W350")
assert XM430 is not None


def world(truth: str) -> PhysicalWorld:
    parsed = parse_truth(truth)
    made = PhysicalWorld(real_world(load_model(PENDULUM), parsed),
                         {"hinge": Transmission()}, parsed)
    made.release()
    return made


def run(physical: PhysicalWorld, seconds: float) -> None:
    physical.advance(physical.time + seconds)


def test_within_the_play_the_link_falls_without_the_rotor() -> None:
    physical = world("joints:\n  hinge: {backlash: 0.2}\n")
    joint = physical.joints["hinge"]
    law = XServoLaw(XM430)
    law.kpp = 800 / 128  # the XM430's power-on Position P Gain
    joint.law = law
    joint.add_rotor(law.rotor_inertia)  # 8.5e-3 kg m^2: four times the link's
    law.enable(True, 0.0)
    law.hold(0.0)
    run(physical, 1.0)  # held up against gravity: the link rests on the lower flank
    start = joint.true_position
    law.goal_position = 0.5  # down: the motor turns away from the flank
    run(physical, 0.02)
    fallen = joint.true_position - start
    # Gravity alone on the link alone: 0.5 (m g l / I) t^2 = 0.0187 rad in 20 ms. With the
    # rotor's inertia dragged along it would be a fifth of that; the motor, crossing the
    # 0.2 rad of play from the other side, does not reach the link before then.
    free_fall = 0.5 * GRAVITY_TORQUE / LINK_INERTIA * 0.02**2
    assert fallen == pytest.approx(free_fall, rel=0.15)


def test_a_dynamixel_takes_up_the_play_an_mit_motor_leaves_it_outside_its_loop() -> None:
    # The servo reads the output shaft: it holds the link where an unplayed one would be,
    # sagging by the load over its position loop's stiffness (18.9 N m/rad at P 800).
    servo_world = world("joints:\n  hinge: {backlash: 0.1}\n")
    servo = servo_world.joints["hinge"]
    law = XServoLaw(XM430)
    law.kpp = 800 / 128
    servo.law = law
    servo.add_rotor(law.rotor_inertia)
    law.enable(True, 0.0)
    law.hold(0.0)
    run(servo_world, 2.0)
    stiffness = XM430.stall_torque * law.kpp / 885 / ct.RAD_PER_TICK
    assert servo.true_position == pytest.approx(GRAVITY_TORQUE / stiffness, abs=3e-3)
    assert servo.position == pytest.approx(servo.true_position, abs=ct.RAD_PER_TICK)
    # The MIT motor reads its rotor: the rotor sags by m g l / kp, and the link hangs half
    # the play further down, on the flank that carries it; the reading does not show it.
    mit_world = world("joints:\n  hinge: {backlash: 0.1, armature: 0.002}\n")
    motor = mit_world.joints["hinge"]
    mit = MitLaw(0.0, max_torque=18.0, max_velocity=25.0)
    mit.enabled = True
    mit.set(0.0, 0.0, 20.0, 0.3, 0.0)
    motor.law = mit
    run(mit_world, 2.0)
    assert motor.position == pytest.approx(GRAVITY_TORQUE / 20.0, abs=1e-3)
    assert motor.true_position - motor.position == pytest.approx(0.05, abs=1e-3)


def test_an_integral_term_hunts_across_the_play() -> None:
    # A servo with an integral term holding an unloaded disc (a vertical axis): without
    # play it settles; with play inside its loop it never does: the integral winds up
    # while the rotor crosses the play, the rotor knocks the disc past the goal, and back.
    def swing(truth: str) -> float:
        physical = PhysicalWorld(real_world(load_model(DISC), parse_truth(truth)),
                                 {"joint1": Transmission()}, parse_truth(truth))
        physical.release()
        joint = physical.joints["joint1"]
        law = XServoLaw(XM430)
        law.kpp, law.kpi = 800 / 128, 3000 / 65536  # Position P and I Gain 800, 3000
        joint.law = law
        joint.add_rotor(law.rotor_inertia)
        law.enable(True, 0.0)
        law.hold(0.0)
        law.goal_position = 0.1
        run(physical, 3.0)
        seen = []
        for _ in range(400):  # the next 2 s
            run(physical, 0.005)
            seen.append(joint.true_position)
        return max(seen) - min(seen)

    assert swing("") < ct.RAD_PER_TICK
    assert swing("joints:\n  joint1: {backlash: 0.05}\n") > 5 * ct.RAD_PER_TICK
