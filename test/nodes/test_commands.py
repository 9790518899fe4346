"""Command messages checked and converted (skel_ros.nodes.commands), and warnings throttled
per problem (skel_ros.nodes.throttle)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_throttle_keys_on_the_problem_and_counts_what_it_hid() -> None:
    from skel_ros.nodes.throttle import Throttle

    lines: list[str] = []
    clock = FakeClock()
    warn = Throttle(lines.append, period=1.0, clock=clock)
    assert warn("unknown joint 'a'")
    assert not warn("unknown joint 'a'")
    assert not warn("unknown joint 'a'")
    assert warn("NaN in 'b'")  # another problem is not hidden by the first
    clock.now += 1.5
    assert warn("unknown joint 'a'")
    assert lines == ["unknown joint 'a'", "NaN in 'b'",
                     "unknown joint 'a' (2 more like this suppressed)"]


# ----------------------------------------------------------------------------- parsing


KNOWN = {"elbow": 0, "wrist": 1}


def test_joint_command_is_checked_and_converted() -> None:
    from sensor_msgs.msg import JointState

    from skel_ros.model.limits import CommandKind
    from skel_ros.nodes.commands import parse_joint_command

    cmd = parse_joint_command(JointState(name=["wrist"], effort=[0.5]), KNOWN)
    assert cmd.kind is CommandKind.EFFORT
    assert cmd.names == ("wrist",)
    np.testing.assert_array_equal(cmd.values, [0.5])


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"name": ["elbow"], "position": [1.0, 2.0]}, "1 names but 2 position values"),
        ({"name": ["elbo"], "position": [1.0]}, "unknown joint 'elbo'; did you mean 'elbow'?"),
        ({"name": ["x"], "position": [1.0]}, "unknown joint 'x'; the joints are 'elbow', 'wrist'"),
        ({"name": ["elbow", "elbow"], "position": [1.0, 1.0]}, "appears twice"),
        ({"name": ["elbow"], "velocity": [-math.inf]}, "velocity of joint 'elbow' is -inf"),
        ({"name": ["elbow"]}, "fill exactly one of position, velocity, effort (filled: none)"),
        ({"name": [], "position": []}, "no joint names"),
        ({"name": [""], "position": [1.0]}, "name[0] is '', not a joint name"),
    ],
)
def test_bad_joint_commands_are_rejected(fields: dict[str, Any], problem: str) -> None:
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.commands import parse_joint_command
    from skel_ros.nodes.errors import CommandMessageError

    with pytest.raises(CommandMessageError) as info:
        parse_joint_command(JointState(**fields), KNOWN)
    assert problem in str(info.value)
    assert str(info.value).startswith("joint_commands: ")


def test_joint_trajectory_starts_where_the_joints_are() -> None:
    from builtin_interfaces.msg import Duration, Time
    from std_msgs.msg import Header
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.nodes.commands import parse_joint_trajectory

    msg = JointTrajectory(joint_names=["wrist"], points=[JointTrajectoryPoint(
        positions=[1.0], time_from_start=Duration(sec=2))])
    cmd = parse_joint_trajectory(msg, KNOWN, lambda names: [0.25] * len(names))
    assert cmd.start is None  # zero stamp: on receipt
    assert cmd.trajectory is not None
    assert cmd.trajectory.sample(0.0)[0][0] == pytest.approx(0.25)
    assert cmd.trajectory.sample(2.0)[0][0] == pytest.approx(1.0)
    msg.header = Header(stamp=Time(sec=3, nanosec=500_000_000))
    assert parse_joint_trajectory(msg, KNOWN, lambda _: [0.0]).start == pytest.approx(3.5)
    stop = parse_joint_trajectory(JointTrajectory(), KNOWN, lambda _: [])
    assert stop.trajectory is None
