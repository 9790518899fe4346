"""The bundled Feetech arm (examples/so101_arm.urdf and its files) is what its docs say.

The model loads cleanly and DART's own URDF loader (the oracle, as test_examples.py's
SkelParser) builds the same robot from it; every link's inertia is its box's; the limits
are the STS3215-C001's; the hardware YAML maps every DOF to an STS3215 on one Feetech bus
with no device watchdog; the trajectory stays inside the limits, slowly. The full
sim-to-real run is test/nodes/test_sim_to_real_so101.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.feetech.control_table import model_by_name
from skel_ros.model import Kinematics, load_model
from skel_ros.model.types import Box, ShapeRole
from skel_ros.trajectory.loader import load_trajectory

if TYPE_CHECKING:
    from skel_ros.model.types import Skeleton

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "examples" / "so101_arm.urdf"
HARDWARE = REPO / "config" / "hardware" / "so101_feetech.yaml"
TRAJECTORY = REPO / "examples" / "so101_trajectory.yaml"
JOINTS = ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"]
SERVO = model_by_name("STS3215-C001")


def _skeleton() -> Skeleton:
    world = load_model(MODEL)
    assert world.warnings == ()
    (skeleton,) = world.skeletons
    return skeleton


def test_the_model_has_the_so101_joints_and_the_servo_limits() -> None:
    skeleton = _skeleton()
    assert [d.name for d in skeleton.dofs] == JOINTS
    assert SERVO is not None
    for dof in skeleton.dofs:
        # The limits are the servo's, rounded down: 1.9 N m of 1.91, 4.7 rad/s of 4.71.
        assert -dof.force_lower == dof.force_upper == 1.9 <= SERVO.stall_torque, dof.name
        assert -dof.velocity_lower == dof.velocity_upper == 4.7 <= SERVO.no_load_speed
        assert dof.position_lower < 0.0 < dof.position_upper, dof.name
    mass = sum(b.inertia.mass for b in skeleton.bodies)
    assert 0.5 <= mass <= 0.6  # kg, an SO-101's figure


def test_every_link_is_a_uniform_box() -> None:
    for body in _skeleton().bodies:
        (shape,) = [s for s in body.shapes if s.role is ShapeRole.COLLISION]
        box = shape.geometry
        assert isinstance(box, Box), body.name
        centre = shape.transform[:3, 3]
        np.testing.assert_allclose(body.inertia.com, centre, atol=1e-12)
        a, b, c = box.size
        m = body.inertia.mass
        expected = np.diag([m * (b * b + c * c), m * (a * a + c * c), m * (a * a + b * b)]) / 12
        # The file gives three significant figures.
        np.testing.assert_allclose(body.inertia.moment, expected, rtol=5e-3, atol=1e-12,
                                   err_msg=body.name)


def test_dart_builds_the_same_robot() -> None:
    dart = pytest.importorskip("dartpy", reason="dartpy (the oracle) is installed by setup.sh")
    skeleton = _skeleton()
    dskel = dart.utils.DartLoader().parseSkeleton(str(MODEL))
    assert dskel is not None
    assert [d.getName() for d in dskel.getDofs()] == JOINTS
    for i, dof in enumerate(skeleton.dofs):
        assert (dof.position_lower, dof.position_upper) == (
            dskel.getPositionLowerLimit(i), dskel.getPositionUpperLimit(i)), dof.name
        assert dof.velocity_upper == dskel.getVelocityUpperLimit(i)
        assert dof.force_upper == dskel.getForceUpperLimit(i)
        assert dof.damping == dskel.getDof(i).getDampingCoefficient()
    kin = Kinematics(skeleton)
    lower = np.array([d.position_lower for d in skeleton.dofs])
    upper = np.array([d.position_upper for d in skeleton.dofs])
    for q in np.random.default_rng(7).uniform(lower, upper, size=(3, len(JOINTS))):
        dskel.setPositions(q)
        ours = kin.body_transforms(q)
        for b, body in enumerate(skeleton.bodies):
            dbody = dskel.getBodyNode(body.name)
            assert dbody.getMass() == body.inertia.mass
            np.testing.assert_allclose(ours[b], dbody.getWorldTransform().matrix(),
                                       atol=1e-9, rtol=0, err_msg=body.name)


def test_the_hardware_yaml_is_six_sts3215_on_one_feetech_bus() -> None:
    config = load_hardware_config(HARDWARE)
    (bus,) = config.buses
    assert bus.protocol == "feetech"
    assert bus.transport["baudrate"] == 1_000_000
    assert config.device_watchdog == 0.0  # Feetech servos have none
    assert [j.name for j in config.joints] == JOINTS
    assert [j.actuator.id for j in config.joints] == [1, 2, 3, 4, 5, 6]
    assert {j.actuator.model for j in config.joints} == {"STS3215-C001"}
    bound = config.bind(_skeleton())
    assert bound.skeleton.name == "so101_arm"


def test_the_trajectory_stays_inside_the_limits_slowly() -> None:
    skeleton = _skeleton()
    trajectory = load_trajectory(TRAJECTORY, JOINTS)
    assert list(trajectory.joint_names) == JOINTS
    assert trajectory.duration == pytest.approx(10.0)
    lower = np.array([d.position_lower for d in skeleton.dofs])
    upper = np.array([d.position_upper for d in skeleton.dofs])
    for t in np.arange(0.0, trajectory.duration + 1e-9, 0.01):
        position, velocity, _ = trajectory.sample(float(t))
        inside = 0.2 - 1e-9  # rad, the file's margin (the closed gripper: exactly 0.2)
        assert np.all(position >= lower + inside), t
        assert np.all(position <= upper - inside), t
        assert np.all(np.abs(velocity) <= 1.0), t  # rad/s, a fifth of the servo's speed
