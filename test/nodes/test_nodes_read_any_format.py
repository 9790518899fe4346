"""Both nodes take a model in any format ``load_model`` reads, chosen by content.

The bundled arm exported as a Phobos YAML file (named ``.skel`` on purpose: the content
decides) runs in the simulation node and the hardware node (emulated servos), which see
the same DOFs and limits as from the SKEL file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.model import load_model
from skel_ros.model.phobos import write_phobos
from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")


@pytest.fixture
def phobos_arm(tmp_path: Path) -> Path:
    path = tmp_path / "arm_as_phobos.skel"
    write_phobos(load_model(example("arm.skel")), path, fmt="yaml")
    assert not path.read_text(encoding="utf-8").lstrip().startswith("<")  # YAML, not XML
    return path


def _limits(world: object) -> list[tuple[str, float, float, float]]:
    return [(d.name, d.position_lower, d.position_upper, d.velocity_upper)
            for s in world.skeletons for d in s.dofs]  # type: ignore[attr-defined]


def test_sim_node_runs_a_phobos_model(ros_env: dict[str, str], phobos_arm: Path) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.sim_node import SimNode

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(phobos_arm))])
        try:
            assert node.engine.dof_names == ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
            assert _limits(node.engine.model) == _limits(load_model(example("arm.skel")))
            node.run_steps(100)
            assert node.engine.time == pytest.approx(0.1)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


def test_hardware_node_runs_a_phobos_model(ros_env: dict[str, str], phobos_arm: Path) -> None:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = HardwareNode(context=context, parameter_overrides=[
            Parameter("skel_file", value=str(phobos_arm)),
            Parameter("hardware_config", value=str(
                resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml"))),
            Parameter("emulate", value=True)])
        try:
            assert list(node.shell.robot.joint_names) == ["shoulder_yaw", "shoulder_pitch",
                                                    "elbow", "wrist"]
            assert _limits(node.world) == _limits(load_model(example("arm.skel")))
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
