"""Emulated actuators start a joint inside its limits, where a real one always is.

A URDF has no initial positions: every joint starts at 0, which a joint limited to
[-3.0, -0.07] (the Panda's fourth) cannot reach on a real robot. The emulated robot starts
it just inside the nearer limit (``BoundConfig.emulated_start``), so the hardware node
enables; before, it refused ("outside its limits") and the physics bench could not run
such a robot at all.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from hardware_in_process import emulated_hardware
from polling import spin_until
from service_call import spin_call

from skel_ros.cli.main import main
from skel_ros.hardware.config import START_INSIDE, load_hardware_config
from skel_ros.model import load_model
from skel_ros.model.limits import LimitSet

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

LOWER, UPPER = -3.0, -0.07
URDF = f"""<robot name="bent">
  <link name="world"/>
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"
    ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="base_joint" type="fixed"><parent link="world"/><child link="base"/></joint>
  <link name="forearm"><inertial><origin xyz="0.1 0 0"/><mass value="0.2"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="elbow" type="revolute"><parent link="base"/><child link="forearm"/>
    <axis xyz="0 0 1"/><limit lower="{LOWER}" upper="{UPPER}" effort="3" velocity="2"/>
  </joint>
</robot>
"""


@pytest.fixture
def bent(tmp_path: Path) -> tuple[Path, Path]:
    model = tmp_path / "bent.urdf"
    model.write_text(URDF, encoding="utf-8")
    config = tmp_path / "bent.yaml"
    assert main(["init-hardware", str(model), "--protocol", "dynamixel", "-o",
                 str(config)]) == 0
    return model, config


def test_a_joint_the_model_starts_past_its_limit_starts_inside_it(bent: tuple[Path, Path]
                                                                  ) -> None:
    model, config = bent
    world = load_model(model)
    bound = load_hardware_config(config).bind(next(s for s in world.skeletons if s.num_dofs))
    assert bound.skeleton.dof("elbow").initial_position == 0.0
    assert bound.emulated_start() == {
        "elbow": pytest.approx(UPPER - START_INSIDE * (UPPER - LOWER))}
    # A limit on one side only: START_INSIDE of a radian inside it, never on it.
    one_sided = replace(bound.skeleton, dofs=tuple(
        replace(d, position_lower=-math.inf) for d in bound.skeleton.dofs))
    bound = replace(bound, skeleton=one_sided, limits=LimitSet.from_skeleton(one_sided))
    assert bound.emulated_start() == {"elbow": pytest.approx(UPPER - START_INSIDE)}


def test_the_hardware_node_enables_a_robot_its_model_starts_past_a_limit(
        ros_env: dict[str, str], bent: tuple[Path, Path]) -> None:
    from std_srvs.srv import SetBool

    model, config = bent
    context = rclpy.Context()
    rclpy.init(context=context)
    hw = emulated_hardware(context, "bent_hw", model, config)
    try:
        spin_until(hw.executor, lambda: bool(hw.states), "joint_states", 30.0)
        reply = spin_call(hw.executor, hw.enable, SetBool.Request(data=True), idempotent=True)
        assert reply.success, reply.message
        position = hw.states[-1].position[list(hw.states[-1].name).index("elbow")]
        assert LOWER < position < UPPER
    finally:
        hw.close()
        rclpy.try_shutdown(context=context)
