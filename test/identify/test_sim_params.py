"""identified.yaml read back for the simulation: ``sim-to-real --sim-params``, the
simulation node's ``sim_params``; every mistake at its line, before anything starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.identify.output import (
    IdentifiedServo,
    SimParamsError,
    load_sim_params,
    parse_sim_params,
)
from skel_ros.resources import example, resolve
from skel_ros.sim.gains import parse_gains
from skel_ros.sim.joint_dynamics import JointDynamics

if TYPE_CHECKING:
    from pathlib import Path

# As skel-ros identify writes it (output.identified_document), cut short.
IDENTIFIED = """\
# skel-ros identify: values with 95 % intervals (half-widths)
recordings: [run.mcap]
joints:
  elbow:
    armature: {value: 0.0105, model: 0.0, unit: kg m^2, interval: 0.002}
    damping: {value: 0.06, model: 0.04, unit: N m s/rad, interval: 0.007}
    friction: {value: 0.015, model: 0.01, unit: N m, interval: 0.007}
    not_identified: {}
    servo: {delay: 0.012, delay_interval: [0.009, 0.015], kp: 19.1, kd: 0.33, r2: 0.99}
  wrist:
    armature: {value: 0.0, model: 0.0, unit: kg m^2}
    damping: {value: 0.02, model: 0.02, unit: N m s/rad}
    friction: {value: 0.005, model: 0.005, unit: N m}
    not_identified: {armature: noise, damping: noise, friction: noise}
    servo: {delay: 0.1, delay_interval: [0.0, 0.1], kp: 2.0, kd: 0.1, r2: 0.85,
            not_identified: the torque does not follow a linear servo law}
model_file: {path: model.skel, carries: [damping, friction], not_carried: [armature]}
"""


def test_the_values_are_read_per_joint() -> None:
    params = parse_sim_params(IDENTIFIED, "identified.yaml")
    assert params.joints == {"elbow": JointDynamics(0.0105, 0.06, 0.015),
                             "wrist": JointDynamics(0.0, 0.02, 0.005)}
    assert params.lines == {"elbow": 4, "wrist": 10}
    assert params.servos == {"elbow": IdentifiedServo(kp=19.1, kd=0.33, delay=0.012)}
    assert params.unused_servos == {
        "wrist": "not identified: the torque does not follow a linear servo law"}


def test_an_identified_servo_runs_its_law_over_the_gains_file() -> None:
    """The elbow gets the servo's kp, kd and delay, with no integral, gravity compensation
    or feed-forward (a Dynamixel in position mode has none); the others keep the file's."""
    base = parse_gains({"default": {"natural_frequency": 30.0},
                        "dofs": {"elbow": {"kp_vel": 5.0, "ki": 3.0}, "wrist": {"kp": 2.0}}},
                       "gains.yaml")
    gains = parse_sim_params(IDENTIFIED, "identified.yaml").gains(base)
    elbow = gains.gains_for("elbow", 0.01)
    assert (elbow.kp, elbow.kd, elbow.ki, elbow.delay) == (19.1, 0.33, 0.0, 0.012)
    assert not elbow.gravity_compensation
    assert not elbow.velocity_feedforward
    assert elbow.kp_vel == 5.0  # the file's, for what the servo does not say
    assert gains.gains_for("wrist", 0.01) == base.gains_for("wrist", 0.01)
    assert gains.defaults == base.defaults
    assert gains.source == "gains.yaml, servos of identified.yaml"
    assert parse_sim_params(IDENTIFIED.replace("    servo: {delay: 0.012", "    x: {delay: 0"),
                            "identified.yaml").gains(base) is base


def test_an_mit_motors_impedance_law_feeds_the_velocity_forward() -> None:
    """A servo written as an MIT motor's impedance law (``velocity_feedforward: true``, the
    hardware YAML's gains): the simulation runs kp (q* - q) + kd (v* - qd), no integral,
    no gravity compensation; a value that is not true or false is refused at its line."""
    text = IDENTIFIED.replace(
        "servo: {delay: 0.012, delay_interval: [0.009, 0.015], kp: 19.1, kd: 0.33, r2: 0.99}",
        "servo: {kp: 30.0, kd: 0.8, velocity_feedforward: true, delay: 0.0, gains_from: hw,"
        " delay_not_identified: impedance}")
    params = parse_sim_params(text, "identified.yaml")
    assert params.servos == {"elbow": IdentifiedServo(30.0, 0.8, 0.0, velocity_feedforward=True)}
    elbow = params.gains().gains_for("elbow", 0.01)
    assert (elbow.kp, elbow.kd, elbow.ki, elbow.delay) == (30.0, 0.8, 0.0, 0.0)
    assert elbow.velocity_feedforward
    assert not elbow.gravity_compensation
    with pytest.raises(SimParamsError, match="velocity_feedforward must be true or false"
                       ) as caught:
        parse_sim_params(text.replace("velocity_feedforward: true", "velocity_feedforward: 1"),
                         "identified.yaml")
    assert str(caught.value).startswith("identified.yaml:9: ")


@pytest.mark.parametrize(("edit", "why"), [
    ("kp: 19.1", "kp -19.1: not a servo's position law (kp > 0, kd and delay >= 0)"),
    ("kd: 0.33", "kd -0.33: not a servo's position law"),
    ("delay: 0.012", "delay -0.012: not a servo's position law"),
])
def test_a_servo_law_no_servo_has_is_not_run(edit: str, why: str) -> None:
    key, value = edit.split(": ")
    params = parse_sim_params(IDENTIFIED.replace(edit, f"{key}: -{value}"), "identified.yaml")
    assert "elbow" not in params.servos
    assert params.unused_servos["elbow"].startswith(why)


@pytest.mark.parametrize(("text", "line", "message"), [
    # A truth file is no identify output (its values are numbers, and no model_file).
    ("joints:\n  elbow: {damping: 0.06}\n", 1, "not an output of skel-ros identify"),
    (IDENTIFIED.replace("model_file:", "model_files:"), 1, "not an output"),
    (IDENTIFIED.replace("damping: {value: 0.06,", "damping: {valeur: 0.06,"), 6,
     "damping must be a mapping with a 'value'"),
    (IDENTIFIED.replace("friction: {value: 0.005,", "friction: {value: -0.005,"), 13,
     r"friction value must be a finite number >= 0 \(N m\), got -0.005"),
    (IDENTIFIED.replace("{value: 0.0105,", "{value: nan,"), 5, "got 'nan'"),
    ("joints:\n  elbow: 3\nmodel_file: {}\n", 2, "joint 'elbow': expected a mapping"),
    ("joints: [\n", 2, "invalid YAML"),
    (IDENTIFIED.replace("kd: 0.33", "kd: fast"), 9,
     "joint 'elbow': servo kd must be a finite number, got 'fast'"),
    (IDENTIFIED.replace("servo: {delay: 0.012, delay_interval: [0.009, 0.015], kp: 19.1, kd: 0.33,"
                        " r2: 0.99}", "servo: 3"), 9, "servo must be a mapping with kp, kd"),
])
def test_a_bad_file_is_refused_at_its_line(text: str, line: int, message: str) -> None:
    with pytest.raises(SimParamsError, match=message) as caught:
        parse_sim_params(text, "identified.yaml")
    assert str(caught.value).startswith(f"identified.yaml:{line}: ")


def test_a_joint_the_model_lacks_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "identified.yaml"
    path.write_text(IDENTIFIED.replace("  wrist:", "  wirst:"), encoding="utf-8")
    with pytest.raises(SimParamsError, match=r"identified.yaml:10: unknown joint 'wirst'.*"
                                             r"did you mean 'wrist'"):
        load_sim_params(path).check_joints(["shoulder_yaw", "shoulder_pitch", "elbow",
                                            "wrist"])
    with pytest.raises(SimParamsError, match="cannot read it"):
        load_sim_params(tmp_path / "missing.yaml")


@pytest.mark.parametrize(("edit", "expected"), [
    (("  wrist:", "  wirst:"), "identified.yaml:10: unknown joint 'wirst'"),
    (("{value: 0.0105,", "{value: -1,"), "identified.yaml:5: joint 'elbow': armature value"),
])
def test_sim_to_real_refuses_a_bad_file_before_starting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str],
        expected: str) -> None:
    from skel_ros.cli.main import main

    path = tmp_path / "identified.yaml"
    path.write_text(IDENTIFIED.replace(*edit), encoding="utf-8")
    status = main(["sim-to-real", "--sim-params", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 1
    assert expected in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing started


def test_sim_to_real_gives_the_file_to_every_simulation_node(tmp_path: Path) -> None:
    from skel_ros.nodes.sim_to_real import RunConfig, node_commands

    path = tmp_path / "identified.yaml"
    config = RunConfig(skel_file=example("arm.skel"),
                       hardware_config=resolve("package://skel_ros/config/hardware/"
                                               "arm_dynamixel.yaml"),
                       trajectory=example("arm_trajectory.xml"), out_dir=tmp_path,
                       engines=("dart", "mujoco"), sim_params=path)
    commands = node_commands(config)
    for name in ("sim", "mujoco"):
        assert f'sim_params:="{path}"' in commands[name]
    assert not any("sim_params" in word for word in commands["real"])
    assert not any("sim_params" in word for word in node_commands(
        RunConfig(**{**config.__dict__, "sim_params": None}))["sim"])


@pytest.mark.ros
def test_the_simulation_node_runs_with_the_files_values(ros_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    """The node gives its engine the file's values (each engine applies them:
    test/sim/test_joint_dynamics.py); a joint the world lacks stops it at the line."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.parameter import Parameter

    from skel_ros.nodes.errors import NodeSetupError
    from skel_ros.nodes.sim_node import SimNode

    del ros_env
    good, bad = tmp_path / "identified.yaml", tmp_path / "bad.yaml"
    good.write_text(IDENTIFIED, encoding="utf-8")
    bad.write_text(IDENTIFIED.replace("  wrist:", "  wirst:"), encoding="utf-8")
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        def node(path: Path) -> SimNode:
            return SimNode(context=context, start=False, parameter_overrides=[
                Parameter("skel_file", value=str(example("arm.skel"))),
                Parameter("sim_params", value=str(path))])

        sim = node(good)
        try:
            elbow = sim.engine.dof_names.index("elbow")
            assert sim.engine.armature == {("arm", "elbow"): 0.0105}
            assert sim.engine.model.skeletons[0].dofs[elbow].damping == 0.06
            assert sim.engine.model.skeletons[0].dofs[elbow].coulomb_friction == 0.015
            gains = sim.engine.position_gains()
            assert (gains[elbow].kp, gains[elbow].kd, gains[elbow].delay) == (19.1, 0.33, 0.012)
            assert not gains[elbow].velocity_feedforward
            wrist = sim.engine.dof_names.index("wrist")  # its servo not identified: defaults
            assert gains[wrist].velocity_feedforward
            assert gains[wrist].delay == 0.0
        finally:
            sim.destroy_node()
        with pytest.raises(NodeSetupError, match=r"bad.yaml:10: unknown joint 'wirst'"):
            node(bad)
    finally:
        rclpy.try_shutdown(context=context)
