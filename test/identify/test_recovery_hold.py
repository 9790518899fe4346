"""A bus servo's held goal: its reads' phase biases damping and armature; the bound says so.

One physics-backed XM430 (:mod:`skel_ros.physical.dynamixel`) on the pendulum's hinge,
on the test's clock, driven as the hardware loop drives it: every 5 ms a read of Present
Current, Velocity and Position, then a new Goal Position along two sines. The truth's
command delay sets when each goal takes effect: 10 ms (two periods) makes every read the
last moment of a hold, 13 ms one 1 ms into it. Fitted as ``identify`` fits (every
sample: the loop's rate), the damping comes out short in the first and long in the
second, by ``kp`` times the reads' offset from the hold's middle
(:mod:`skel_ros.identify.hold_phase`), and outside its statistical interval;
:func:`~skel_ros.identify.hold_phase.widen_for_hold` with the servo's fitted gains puts
the truth inside the widened interval, or reports the value not identified where the
bound exceeds it. The friction, outside that span, comes back on this single joint at
either phase (an arm's does not: test_recovery_coupled.py); its interval is widened too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("scipy")

from skel_ros.analysis.series import JointSeries
from skel_ros.hardware.dynamixel import control_table as ct
from skel_ros.identify import fit as f
from skel_ros.identify.hold_phase import widen_for_hold
from skel_ros.model import load_model
from skel_ros.physical.dynamixel import PhysicalEmulatorConfig
from skel_ros.physical.servo_law import rotor_inertia
from skel_ros.sim.inverse_dynamics import RigidDynamics

PENDULUM = Path(__file__).resolve().parents[1] / "physical" / "data" / "pendulum.skel"
XM430 = ct.model_by_name("XM430-W350")
assert XM430 is not None
TRUTH = {"damping": 0.06, "friction": 0.015, "armature": 0.003}
REAL = {**TRUTH, "armature": TRUTH["armature"]
        + rotor_inertia(XM430.stall_torque, XM430.no_load_speed)}
PERIOD = 0.005  # s, the loop's
KP = XM430.stall_torque * (800 / 128) / 885 / ct.RAD_PER_TICK  # N m/rad: P gain 800, PWM 885
DURATION = 12.0  # s of motion after a 0.5 s start


def _wanted(t: float) -> float:
    """The joint's goal at ``t``: two sines, few reversals."""
    w1, w2 = 2 * math.pi * 0.2, 2 * math.pi * 0.55
    return 0.7 * math.sin(w1 * t) + 0.2 * math.sin(w2 * t)


def _record(delay: float, tmp: Path) -> tuple[JointSeries, JointSeries]:
    """(readings, commands) of one run with the truth's ``delay``."""
    truth = tmp / f"truth_{delay * 1e3:.0f}ms.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + f", delay: {delay}}}\n", encoding="utf-8")
    clock = [10.0]
    physics = {"model": str(PENDULUM), "truth": str(truth), "joints": {"1": {"joint": "hinge"}}}
    config = PhysicalEmulatorConfig(((1, "XM430-W350", 0.0, None),), physics=json.dumps(physics))
    servo = config.build(lambda: clock[0]).all_servos[1]

    def read(field: ct.Field) -> int:
        error, data = servo.read(field.address, field.size, clock[0])
        assert error == 0
        return int.from_bytes(data, "little", signed=field.signed)

    assert servo.write(ct.TORQUE_ENABLE.address, b"\x01", clock[0]) == 0
    rows, commands = [], []
    start = clock[0]
    for k in range(round((DURATION + 0.5) / PERIOD)):
        clock[0] = start + k * PERIOD
        rows.append((clock[0], (read(ct.PRESENT_POSITION) - ct.CENTER_TICK) * ct.RAD_PER_TICK,
                     read(ct.PRESENT_VELOCITY) * ct.RAD_S_PER_VELOCITY_UNIT,
                     read(ct.PRESENT_CURRENT) * XM430.current_unit * XM430.torque_constant))
        goal = _wanted(max(0.0, k * PERIOD - 0.5))
        commands.append((clock[0], goal))
        tick = round(goal / ct.RAD_PER_TICK) + ct.CENTER_TICK
        assert servo.write(ct.GOAL_POSITION.address, tick.to_bytes(4, "little"), clock[0]) == 0
    t, q, v, tau = (np.array(c) for c in zip(*rows, strict=True))
    ct_, cq = (np.array(c) for c in zip(*commands, strict=True))
    return (JointSeries.from_samples("real", t, ["hinge"], q[:, None], v[:, None], tau[:, None]),
            JointSeries.from_samples("command", ct_, ["hinge"], cq[:, None]))


@pytest.fixture(scope="module")
def fits(tmp_path_factory: pytest.TempPathFactory) -> dict[float, tuple[f.JointFit, f.ServoFit]]:
    tmp = tmp_path_factory.mktemp("hold")
    world = load_model(PENDULUM)
    dynamics = RigidDynamics(world, "bench")
    model = {"hinge": {"armature": 0.0, "damping": 0.01, "friction": 0.0}}
    out = {}
    for delay in (0.010, 0.013):
        real, command = _record(delay, tmp)
        part = f.prepare("pendulum", real, command, ["hinge"])
        servo = f.fit_servo([part], "hinge")
        assert servo is not None
        (fit,) = f.fit_joints([part], f.residual_torques([part], dynamics), model)
        out[delay] = (fit, servo)
    return out


def test_the_reads_phase_shifts_damping_by_kp_times_the_offset(fits: dict) -> None:
    (late, servo), (early, _) = fits[0.010], fits[0.013]
    assert servo.kp == pytest.approx(KP, rel=0.2)
    # Read 4 ms into a hold (its end, world step 1 ms) against 1 ms into it: 3 ms apart.
    shift = early.values["damping"] - late.values["damping"]
    assert shift == pytest.approx(KP * 0.003, rel=0.1)
    assert late.values["damping"] < 0.7 * REAL["damping"] < REAL["damping"] * 1.2 \
        < early.values["damping"]
    for fit in (late, early):  # the bias is not noise: the intervals miss the truth
        assert abs(fit.values["damping"] - REAL["damping"]) > fit.intervals["damping"]


def test_the_widened_intervals_hold_the_truth_or_say_not_identified(fits: dict) -> None:
    for fit, servo in fits.values():
        widened = widen_for_hold(fit, f.HoldCorrection(servo.kp, servo.kd, 1.0, PERIOD, 0.001))
        for name in ("damping", "armature", "friction"):
            if name in widened.intervals:
                assert abs(widened.values[name] - REAL[name]) <= widened.intervals[name], (
                    name, widened.values, widened.intervals)
            else:  # the bound is larger than the value: no value claimed
                assert "hold" in widened.fixed[name]
        # Read late, the damping (0.022 for 0.06) is below its bound: not identified.
        assert ("damping" in widened.fixed) == (fit is fits[0.010][0])
        assert widened.values["friction"] == fit.values["friction"]
        assert fit.values["friction"] == pytest.approx(REAL["friction"], rel=0.2)
        assert any("hold" in note for note in widened.notes)


def test_a_bound_larger_than_the_value_keeps_the_models_value(fits: dict) -> None:
    fit, servo = fits[0.013]
    widened = widen_for_hold(fit, f.HoldCorrection(10 * servo.kp, servo.kd, 1.0, PERIOD, 0.0))
    assert "damping" not in widened.intervals
    assert widened.values["damping"] == fit.model["damping"]
    assert "hold" in widened.fixed["damping"]
    assert widened.intervals["armature"] > fit.intervals["armature"]
    with pytest.raises(f.IdentifyError, match="period"):
        f.HoldCorrection(servo.kp, servo.kd, 1.0, 0.0, 0.0)
    with pytest.raises(f.IdentifyError, match="kp, kd"):
        f.HoldCorrection(-1.0, servo.kd, 1.0, PERIOD, 0.0)
