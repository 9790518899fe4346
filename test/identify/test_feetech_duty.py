"""A Feetech servo's effort is its drive's duty: ``identify`` makes it a torque first.

The driver reads Present_Load, the drive's duty cycle times the stall torque, which is
the torque the motor gives at rest; turning, its back-EMF takes ``stall_torque /
no_load_speed`` times its speed off that (0.41 N m s/rad on an STS3215-C001). The
physics bench's servo (:mod:`skel_ros.physical.feetech`) on a pendulum with a truth of
its own, driven on the test's clock as the driver does (a goal and a read every 5 ms),
recorded as sim-to-real records it, then ``skel-ros identify --hardware-config``: the
damping comes back the joint's own, not the joint's plus the motor's (0.45 +- 0.03 for
0.05 before).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("mujoco")
pytest.importorskip("scipy")

from joint_state_mcap import write_run

from skel_ros.analysis.series import JointSeries
from skel_ros.cli.identify_cmd import duty_readings
from skel_ros.cli.main import main
from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.physical.feetech import physical_servos
from skel_ros.physical.servo_law import rotor_inertia

REPO = Path(__file__).resolve().parents[2]
PENDULUM = REPO / "test" / "physical" / "data" / "pendulum.skel"
STS3215 = ct.model_by_name("STS3215-C001")
assert STS3215 is not None
TRUTH = {"damping": 0.05, "friction": 0.01, "armature": 0.002}
PERIOD, DURATION = 0.005, 12.0
READ_AT = 0.0025  # s after each goal: the middle of its hold, where the hold biases nothing
YAML = """\
control_rate: 200.0
buses:
  ttl: {protocol: feetech, transport: {port: /dev/null, baudrate: 1000000}}
joints:
  hinge: {bus: ttl, id: 1, model: STS3215-C001, mode: position}
"""


def _excitation(t: float) -> float:
    """The joint's goal at ``t``: three sines, well inside the servo's torque."""
    return (0.5 * math.sin(2 * math.pi * 0.3 * t) + 0.2 * math.sin(2 * math.pi * 0.8 * t)
            + 0.08 * math.sin(2 * math.pi * 1.7 * t))


def _run(path: Path, truth: Path) -> Path:
    """Goals every 5 ms on the bench's servo, each read the middle of its hold (a read at
    another phase biases damping and armature by the hold: ``identify`` bounds that,
    :mod:`skel_ros.identify.hold_phase`), written as a sim-to-real run."""
    t = 10.0
    physics = {"model": str(PENDULUM), "truth": str(truth), "joints": {1: {"joint": "hinge"}}}
    servo = physical_servos([ActuatorSpec(1, ControlMode.POSITION, "STS3215-C001")],
                            {"physics": physics, "initial_positions": {1: 0.0}}, t)[1]
    order = servo.model.byte_order

    def write(fld: ct.Field, value: int) -> None:
        raw = value if fld.sign_bit is None else ct.encode_sm(value, fld.sign_bit)
        servo.write(fld.address, raw.to_bytes(fld.size, order), t)

    def read(fld: ct.Field) -> int:
        raw = int.from_bytes(servo.read(fld.address, fld.size, t), order)
        return raw if fld.sign_bit is None else ct.decode_sm(raw, fld.sign_bit)

    write(ct.TORQUE_ENABLE, 1)
    start, rows, commands = t, [], []
    tick = STS3215.rad_per_tick
    for k in range(round(DURATION / PERIOD)):
        t = start + k * PERIOD
        servo.sync(t)
        goal = _excitation(k * PERIOD)
        write(ct.GOAL_POSITION, round(goal / tick) + STS3215.center)
        commands.append((t - start, ["hinge"], [goal]))
        t += READ_AT
        servo.sync(t)
        rows.append((t - start, (read(ct.PRESENT_POSITION) - STS3215.center) * tick,
                     read(ct.PRESENT_VELOCITY) * tick,
                     read(ct.PRESENT_LOAD) * ct.LOAD_UNIT * STS3215.stall_torque))
    x, q, v, effort = (np.array(c) for c in zip(*rows, strict=True))
    real = JointSeries.from_samples("real", x, ["hinge"], q[:, None], v[:, None],
                                    effort[:, None])
    return write_run(path, real, commands)


def test_the_back_emf_of_each_feetech_joint_comes_from_its_model(tmp_path: Path) -> None:
    so101 = load_hardware_config(REPO / "config" / "hardware" / "so101_feetech.yaml")
    back_emf = duty_readings(so101)
    assert set(back_emf) == {j.name for j in so101.joints}
    assert back_emf["elbow_flex"] == pytest.approx(STS3215.stall_torque / STS3215.no_load_speed)
    geared = tmp_path / "geared.yaml"
    geared.write_text(YAML.replace("mode: position}", "mode: position, gear_ratio: 2.0}"))
    assert duty_readings(load_hardware_config(geared))["hinge"] == pytest.approx(
        4 * STS3215.stall_torque / STS3215.no_load_speed)
    unnamed = tmp_path / "unnamed.yaml"  # the driver's default model, as it drives it
    unnamed.write_text(YAML.replace("model: STS3215-C001, ", ""))
    assert duty_readings(load_hardware_config(unnamed))["hinge"] == pytest.approx(
        STS3215.stall_torque / STS3215.no_load_speed)
    assert ct.DEFAULT_MODEL == "STS3215-C001"
    arm = load_hardware_config(REPO / "config" / "hardware" / "arm_dynamixel.yaml")
    assert duty_readings(arm) == {}  # Present Current: a torque already


def test_identify_fits_the_joints_own_damping_not_the_motors(tmp_path: Path) -> None:
    truth = tmp_path / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + "}\n")
    run = _run(tmp_path / "run.mcap", truth)
    hardware = tmp_path / "hardware.yaml"
    hardware.write_text(YAML)
    assert main(["identify", str(run), "--skel", str(PENDULUM), "--hardware-config",
                 str(hardware), "-o", str(tmp_path / "out")]) == 0
    joint = yaml.safe_load((tmp_path / "out" / "identified.yaml").read_text())["joints"]["hinge"]
    real = dict(TRUTH, armature=TRUTH["armature"] + rotor_inertia(STS3215.stall_torque,
                                                                  STS3215.no_load_speed))
    damping = joint["damping"]
    assert "interval" in damping, joint
    assert abs(damping["value"] - real["damping"]) <= damping["interval"], joint
    assert damping["value"] < 0.5 * STS3215.stall_torque / STS3215.no_load_speed, joint
    for name in ("armature", "friction"):
        if "interval" in joint[name]:
            assert abs(joint[name]["value"] - real[name]) <= joint[name]["interval"], (name,
                                                                                      joint)
    # The servo's law carries the motor's back-EMF, as a current-reading servo's does.
    assert joint["servo"]["kd"] >= 0.8 * STS3215.stall_torque / STS3215.no_load_speed, joint
