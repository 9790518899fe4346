"""A bus servo's friction on an arm: the reads' phase biases it too; the bound says so.

The bundled arm's four physics-backed Dynamixels on the test's clock, driven as the
hardware loop drives them (:func:`skel_ros.physical.rehearsal.drive`): every 5 ms each
one's Goal Position, then one read of its Present Current, Velocity and Position, from a 20 s
``skel-ros excite`` excitation; the truth's 13 ms command delay puts each read 1 ms into
its servo's hold. Fitted as ``identify`` fits, the XM430 joints' frictions miss the truth
by more than their intervals (noise only) allow: with every joint moving, what a read
carries of its hold beyond the linear slide reaches the friction too (a single joint does
not show it: test_recovery_hold.py). :func:`~skel_ros.identify.hold_phase.widen_for_hold`
widens the friction by its share of the hold's slide, and the truth is inside again, or
the value is reported not identified.

Goals on a ramp (the servos' time-based profile over the period, the Dynamixel
backend's ``profile_time``) leave no step to hold: with a delay of whole periods (each
read at a ramp's kink, as with the hardware YAML's ``write_on_command: false`` and a
servo that takes each goal at once) every value comes back within 10 %, where the same
goals stepped leave every damping half short.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml

pytest.importorskip("mujoco")
pytest.importorskip("scipy")

from skel_ros.analysis.series import JointSeries
from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.identify import design_excitation
from skel_ros.identify import fit as f
from skel_ros.identify.hold_phase import widen_for_hold
from skel_ros.identify.regressor import PARAMETERS
from skel_ros.model import load_model
from skel_ros.physical.rehearsal import drive
from skel_ros.physical.servo_law import rotor_inertia
from skel_ros.resources import example, resolve
from skel_ros.sim.inverse_dynamics import RigidDynamics

if TYPE_CHECKING:
    from pathlib import Path

ARM = example("arm.skel")
HARDWARE = resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml")
TRUTH = {"shoulder_yaw": {"damping": 0.075, "friction": 0.015, "armature": 0.003},
         "shoulder_pitch": {"damping": 0.07, "friction": 0.016, "armature": 0.004},
         "elbow": {"damping": 0.06, "friction": 0.015, "armature": 0.002},
         "wrist": {"damping": 0.03, "friction": 0.0075, "armature": 0.001}}
DELAY = 0.013  # s: two periods and 3 ms, each read 1 ms into its hold (world step 1 ms)
XM430 = ("shoulder_yaw", "shoulder_pitch", "elbow")  # the wrist's XL430 reads a load


def _record(tmp: Path, delay: float = DELAY, *, profile: bool = False,
            duration: float = 20.0) -> tuple[JointSeries, JointSeries, list[str]]:
    """(readings, goals, joints) of the excitation on the truth's arm."""
    config = load_hardware_config(HARDWARE)
    skel = config.select_skeleton(load_model(ARM))
    names = [j.name for j in config.joints]
    period = 1.0 / config.control_rate
    excitation = design_excitation(config.bind(skel).limits, duration=duration, seed=0,
                                   joints=names,
                                   start={d.name: d.initial_position for d in skel.dofs})
    truth = tmp / "truth.yaml"
    truth.write_text(yaml.safe_dump({"joints": {n: {**v, "delay": delay}
                                                for n, v in TRUTH.items()}}), encoding="utf-8")
    column = [list(excitation.joint_names).index(n) for n in names]
    times = np.arange(round((excitation.lead_in + excitation.duration + 1.0) / period)) * period
    run = drive(ARM, HARDWARE, excitation.sample(times)[0][:, column], truth=truth,
                period=period, profile=profile)
    return (JointSeries.from_samples("real", run.times + period, names, run.real, run.velocity,
                                     run.effort),
            JointSeries.from_samples("command", run.times, names, run.command), names)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory,
              ) -> tuple[JointSeries, JointSeries, list[str]]:
    """The excitation's readings, goals and joints, DELAY on the truth's arm."""
    return _record(tmp_path_factory.mktemp("coupled"))


@pytest.fixture(scope="module")
def fits(recording: tuple[JointSeries, JointSeries, list[str]],
         ) -> dict[str, tuple[f.JointFit, f.JointFit]]:
    """Joint -> (its fit, the same widened for its servo's hold), for the XM430 joints."""
    real, command, names = recording
    config = load_hardware_config(HARDWARE)
    world = load_model(ARM)
    skel = config.select_skeleton(world)
    part, _ = f.split(f.prepare("arm", real, command, names))
    model = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
             for d in skel.dofs}
    out = {}
    for fit in f.fit_joints([part], f.residual_torques([part], RigidDynamics(world, skel.name)),
                            model):
        if fit.joint in XM430:
            servo = f.fit_servo([part], fit.joint)
            assert servo is not None
            assert not servo.problem, servo.problem
            hold = f.HoldCorrection(servo.kp, servo.kd, 1.0, 1.0 / config.control_rate, 0.0)
            out[fit.joint] = (fit, widen_for_hold(fit, hold))
    return out


def _real(joint: str) -> dict[str, float]:
    """What the joint really has: the truth, its XM430's rotor in the armature."""
    model = ct.model_by_name("XM430-W350")
    assert model is not None
    rotor = rotor_inertia(model.stall_torque, model.no_load_speed)
    return {**TRUTH[joint], "armature": TRUTH[joint]["armature"] + rotor}


def test_the_frictions_bias_is_more_than_its_noise(fits: dict) -> None:
    missed = [j for j, (fit, _) in fits.items()
              if abs(fit.values["friction"] - _real(j)["friction"]) > fit.intervals["friction"]]
    assert missed, {j: (fit.values["friction"], fit.intervals["friction"])
                    for j, (fit, _) in fits.items()}


def test_the_widened_intervals_hold_the_truth_or_say_not_identified(fits: dict) -> None:
    for joint, (_, widened) in fits.items():
        real = _real(joint)
        for name in PARAMETERS:
            if name in widened.intervals:
                assert abs(widened.values[name] - real[name]) <= widened.intervals[name], (
                    joint, name, widened.values[name], widened.intervals[name], real[name])
            else:
                assert "hold" in widened.fixed[name], (joint, name, widened.fixed)
        assert any("friction +-" in note for note in widened.notes), widened.notes


def _errors(tmp: Path, *, profile: bool) -> dict[str, dict[str, float]]:
    """XM430 joint -> parameter -> relative error, delay 10 ms (whole periods)."""
    real, command, names = _record(tmp, 0.010, profile=profile, duration=10.0)
    world = load_model(ARM)
    skel = load_hardware_config(HARDWARE).select_skeleton(world)
    part, _ = f.split(f.prepare("arm", real, command, names))
    model = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
             for d in skel.dofs}
    fits = f.fit_joints([part], f.residual_torques([part], RigidDynamics(world, skel.name)),
                        model)
    return {fit.joint: {name: fit.values[name] / _real(fit.joint)[name] - 1.0
                        for name in PARAMETERS}
            for fit in fits if fit.joint in XM430}


def test_goals_on_a_ramp_read_at_its_kinks_come_back_within_ten_percent(
        tmp_path: Path) -> None:
    ramp = _errors(tmp_path, profile=True)
    assert all(abs(e) < 0.10 for joint in ramp.values() for e in joint.values()), ramp
    step = _errors(tmp_path, profile=False)  # the same goals, each held for the period
    assert all(joint["damping"] < -0.30 for joint in step.values()), step


def test_the_servo_fits_follow_the_goals_as_the_servos_get_them(
        recording: tuple[JointSeries, JointSeries, list[str]]) -> None:
    """The servos follow whole pulses of each goal (the driver rounds, the PID errs in
    pulses): fitted against those (``identify``'s ``sent_goals``), every XM430's servo shows
    the same delay and gain; against the commanded positions, the shoulder yaw, which
    carries no gravity and errs by a few pulses, shows a gain and a delay of its own."""
    from skel_ros.cli.identify_cmd import sent_goals

    real, command, names = recording

    def servos(goals: JointSeries) -> dict[str, f.ServoFit]:
        part, _ = f.split(f.prepare("arm", real, goals, names))
        out = {j: f.fit_servo([part], j) for j in XM430}
        assert all(s is not None and not s.problem for s in out.values()), out
        return out  # type: ignore[return-value]

    sent = servos(sent_goals(command, load_hardware_config(HARDWARE)))  # type: ignore[arg-type]
    delays = {round(s.delay * 1e3) for s in sent.values()}
    assert max(delays) - min(delays) <= 1, sent
    assert all(abs(s.kp / sent["shoulder_pitch"].kp - 1.0) < 0.05 for s in sent.values()), sent
    raw = servos(command)
    assert abs(raw["shoulder_yaw"].delay - sent["shoulder_yaw"].delay) >= 0.003, raw
