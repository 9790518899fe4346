"""identified.yaml read back for the simulation: ``sim-to-real --sim-params``, the
simulation node's ``sim_params``; every mistake at its line, before anything starts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.identify.output import SimParamsError, load_sim_params, parse_sim_params
from skel_ros.resources import example, resolve
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
  wrist:
    armature: {value: 0.0, model: 0.0, unit: kg m^2}
    damping: {value: 0.02, model: 0.02, unit: N m s/rad}
    friction: {value: 0.005, model: 0.005, unit: N m}
    not_identified: {armature: noise, damping: noise, friction: noise}
model_file: {path: model.skel, carries: [damping, friction], not_carried: [armature]}
"""


def test_the_values_are_read_per_joint() -> None:
    params = parse_sim_params(IDENTIFIED, "identified.yaml")
    assert params.joints == {"elbow": JointDynamics(0.0105, 0.06, 0.015),
                             "wrist": JointDynamics(0.0, 0.02, 0.005)}
    assert params.lines == {"elbow": 4, "wrist": 9}


@pytest.mark.parametrize(("text", "line", "message"), [
    # A truth file is no identify output (its values are numbers, and no model_file).
    ("joints:\n  elbow: {damping: 0.06}\n", 1, "not an output of skel-ros identify"),
    (IDENTIFIED.replace("model_file:", "model_files:"), 1, "not an output"),
    (IDENTIFIED.replace("damping: {value: 0.06,", "damping: {valeur: 0.06,"), 6,
     "damping must be a mapping with a 'value'"),
    (IDENTIFIED.replace("friction: {value: 0.005,", "friction: {value: -0.005,"), 12,
     r"friction value must be a finite number >= 0 \(N m\), got -0.005"),
    (IDENTIFIED.replace("{value: 0.0105,", "{value: nan,"), 5, "got 'nan'"),
    ("joints:\n  elbow: 3\nmodel_file: {}\n", 2, "joint 'elbow': expected a mapping"),
    ("joints: [\n", 2, "invalid YAML"),
])
def test_a_bad_file_is_refused_at_its_line(text: str, line: int, message: str) -> None:
    with pytest.raises(SimParamsError, match=message) as caught:
        parse_sim_params(text, "identified.yaml")
    assert str(caught.value).startswith(f"identified.yaml:{line}: ")


def test_a_joint_the_model_lacks_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "identified.yaml"
    path.write_text(IDENTIFIED.replace("  wrist:", "  wirst:"), encoding="utf-8")
    with pytest.raises(SimParamsError, match=r"identified.yaml:9: unknown joint 'wirst'.*"
                                             r"did you mean 'wrist'"):
        load_sim_params(path).check_joints(["shoulder_yaw", "shoulder_pitch", "elbow",
                                            "wrist"])
    with pytest.raises(SimParamsError, match="cannot read it"):
        load_sim_params(tmp_path / "missing.yaml")


@pytest.mark.parametrize(("edit", "expected"), [
    (("  wrist:", "  wirst:"), "identified.yaml:9: unknown joint 'wirst'"),
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
        finally:
            sim.destroy_node()
        with pytest.raises(NodeSetupError, match=r"bad.yaml:9: unknown joint 'wirst'"):
            node(bad)
    finally:
        rclpy.try_shutdown(context=context)
