"""The one JointTrajectory / JointState parser, on messages that are not ROS messages.

``skel_ros.trajectory.messages`` reads a message by its fields alone: the nodes hand it
rclpy messages (``test/nodes/test_commands.py``), the recording analysis messages decoded
from MCAP (``test/analysis/test_trajectory_commands.py``), here plain objects.
"""

from __future__ import annotations

from types import SimpleNamespace as Msg

import numpy as np
import pytest

from skel_ros.model.limits import CommandKind
from skel_ros.trajectory import (
    MessageError,
    PointFields,
    TrajectoryError,
    build_trajectory,
    parse_joint_command,
    parse_joint_trajectory,
    read_joint_trajectory,
    stamp_to_seconds,
)

KNOWN = {"shoulder": 0, "elbow": 1}


def _time(seconds: float) -> Msg:
    return Msg(sec=int(seconds), nanosec=round((seconds % 1) * 1e9))


def _point(t: float, positions: list[float], velocities: list[float] | None = None,
           effort: list[float] | None = None) -> Msg:
    return Msg(time_from_start=_time(t), positions=positions, velocities=velocities or [],
               accelerations=[], effort=effort or [])


def _trajectory(*points: Msg, names: tuple[str, ...] = ("elbow", "shoulder"),
                stamp: float = 0.0) -> Msg:
    return Msg(header=Msg(stamp=_time(stamp)), joint_names=list(names), points=list(points))


def test_fields_are_read_as_plain_data() -> None:
    msg = _trajectory(_point(0.5, [0.1, 0.2], [0.0, 1.0]), _point(1.25, [0.3, 0.4]), stamp=7.5)
    fields = read_joint_trajectory(msg)
    assert fields.joint_names == ("elbow", "shoulder")
    assert fields.stamp == 7.5
    assert fields.points == (PointFields(0.5, (0.1, 0.2), (0.0, 1.0)),
                             PointFields(1.25, (0.3, 0.4)))
    assert stamp_to_seconds(_time(2.000000001)) == pytest.approx(2.000000001)


def test_a_trajectory_starts_from_the_given_positions() -> None:
    msg = _trajectory(_point(1.0, [0.5, -0.5]), stamp=3.0)
    command = parse_joint_trajectory(msg, KNOWN, lambda names: [0.0] * len(names))
    assert command.start == 3.0
    assert command.trajectory is not None
    positions, _, _ = command.trajectory.sample(1.0)
    assert list(positions) == pytest.approx([0.5, -0.5])
    assert parse_joint_trajectory(_trajectory(), KNOWN, lambda _: []).trajectory is None


@pytest.mark.parametrize(("msg", "reason"), [
    (_trajectory(_point(1.0, [0.5, 0.1]), names=("elbw", "shoulder")),
     "unknown joint 'elbw'; did you mean 'elbow'?"),
    (_trajectory(_point(1.0, [0.5])), "2 names but 1 point 0 positions values"),
    (_trajectory(_point(1.0, [0.5, float("nan")])),
     "point 0 positions of joint 'shoulder' is nan, not a finite number"),
    (_trajectory(_point(1.0, [])), "point 0 has no positions"),
    (_trajectory(_point(1.0, [0.1, 0.2], effort=[1.0, 1.0])),
     "point 0: effort trajectories are not supported; give positions"),
    (_trajectory(_point(1.0, [0.1, 0.2]), _point(0.5, [0.1, 0.2])), "time"),
])
def test_a_bad_trajectory_is_rejected_whole(msg: Msg, reason: str) -> None:
    with pytest.raises(MessageError) as info:
        parse_joint_trajectory(msg, KNOWN, lambda names: [0.0] * len(names), topic="jt")
    assert info.value.topic == "jt"
    assert reason in info.value.reason
    assert str(info.value).startswith("jt: ")
    assert isinstance(info.value, TrajectoryError)


def test_a_joint_command_takes_one_kind_of_value() -> None:
    command = parse_joint_command(Msg(name=["elbow"], position=[], velocity=[0.5], effort=[]),
                                  KNOWN)
    assert (command.kind, command.names, list(command.values)) == (
        CommandKind.VELOCITY, ("elbow",), [0.5])
    with pytest.raises(MessageError, match="fill exactly one of position, velocity, effort"):
        parse_joint_command(Msg(name=["elbow"], position=[1.0], velocity=[0.5], effort=[]),
                            KNOWN)


def test_points_build_the_trajectory_the_action_server_follows() -> None:
    trajectory = build_trajectory(["a"], [PointFields(1.0, (1.0,), (0.0,))], [0.0])
    positions, velocities, _ = trajectory.sample(1.0)
    assert positions == pytest.approx(np.array([1.0]))
    assert velocities == pytest.approx(np.array([0.0]))
