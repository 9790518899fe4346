"""The ROS shell both robot nodes share, in this process, over the test suite's numpy backend.

The parameter idiom (:mod:`skel_ros.nodes.parameters`), the time base, the command intake
(:mod:`skel_ros.nodes.intake`: one wording, joints of other skeletons) and the state
publishing from the core's read (:class:`skel_ros.nodes.shell.RobotShell`: a DOF the core
does not drive, or that is not fresh, is left out).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))


def _node(context: Any, node_name: str, **overrides: Any) -> Any:
    from rclpy.node import Node
    from rclpy.parameter import Parameter

    return Node(node_name, context=context, parameter_overrides=[
        Parameter(k, value=v) for k, v in overrides.items()])


# ---------------------------------------------------------------- parameters


def _specs() -> dict[str, Any]:
    from skel_ros.nodes.parameters import Param, at_least, required, within

    def flag(value: object) -> bool | None:
        if isinstance(value, bool) or value is None:
            return value
        raise ValueError(f"must be true or false, got {value!r}")

    return {
        "name": Param("", "a name", read_only=True, convert=required),
        "rate": Param(50.0, "Hz", number=True, convert=within(0.0, 100.0, open_low=True,
                                                                 unit="Hz")),
        "timeout": Param(0.0, "s", number=True, convert=at_least(0.0, note="0 = never")),
        "mode": Param("a", "a or b", choices=("a", "b")),
        "on": Param(default=False, description="a bool"),
        "flag": Param("", "dynamic", dynamic=True, convert=flag),
    }


def test_parameters_are_read_as_used_and_every_problem_is_named(context: Any) -> None:
    from skel_ros.nodes.errors import NodeSetupError
    from skel_ros.nodes.parameters import check, declare, read

    specs = _specs()
    node = _node(context, "good", name="x", rate=20, flag=True)  # an integer for a double
    declare(node, specs)
    assert read(node, specs) == {"name": "x", "rate": 20.0, "timeout": 0.0, "mode": "a",
                                 "on": False, "flag": True}
    declare(node, specs)  # declared already (a lifecycle node configured again): kept
    node.destroy_node()
    node = _node(context, "bad", rate=0.0, timeout=math.nan, mode="c", flag=3)
    declare(node, specs)
    with pytest.raises(NodeSetupError) as info:
        read(node, specs)
    assert str(info.value) == (
        "invalid parameters: name is required; rate must be in (0, 100] Hz, got 0.0;"
        " timeout must be finite and >= 0 (0 = never), got nan; mode must be one of a, b,"
        " got 'c'; flag must be true or false, got 3")
    node.destroy_node()
    node = _node(context, "types", on="yes", mode=2)
    with pytest.raises(NodeSetupError) as info:  # a string or bool of another type: at once
        declare(node, specs)
    assert "mode must be a string: " in str(info.value)
    assert "on must be a bool (true or false): " in str(info.value)
    node.destroy_node()
    assert check(specs, "rate", "fast") == (None, "rate must be a number, got 'fast'")
    assert check(specs, "rate", True) == (None, "rate must be a number, got True")
    assert check(specs, "on", "yes") == (None, "on must be a bool (true or false), got 'yes'")


# ---------------------------------------------------------------- time base


def test_time_base_stamps_and_reads_stamps_with_one_offset() -> None:
    from skel_ros.nodes.time_base import TimeBase

    offset = [100.0]
    base = TimeBase(lambda: offset[0])
    assert base.to_stamp(2.5) == 102.5
    assert base.to_core(102.5) == 2.5
    stamp = base.stamp(2.5)
    assert (stamp.sec, stamp.nanosec) == (102, 500_000_000)
    offset[0] = -10.0  # asked anew each time; a stamp is never before 0
    assert (base.stamp(2.5).sec, base.stamp(2.5).nanosec) == (0, 0)
    assert TimeBase.core_time().to_core(7.0) == 7.0


# ---------------------------------------------------------------- command intake


class _Robot:
    """A core over the numpy backend (DOFs a, b, c of skeleton 'arm'), and its intake."""

    def __init__(self, context: Any) -> None:
        from numpy_backend import NumpyBackend  # type: ignore[import-not-found]

        from skel_ros.core import ALL_KINDS, RobotCore
        from skel_ros.nodes.intake import CommandIntake
        from skel_ros.nodes.throttle import Throttle
        from skel_ros.nodes.time_base import TimeBase

        self.backend = NumpyBackend(modes=[ALL_KINDS] * 3)
        self.core = RobotCore(self.backend)
        self.node = _node(context, "intake")
        known = {n: i for i, n in enumerate(["arm/a", "arm/b", "arm/c", "leg/d"])}
        self.intake = CommandIntake(self.node, self.core, known, TimeBase(lambda: 100.0),
                                    joint_prefix="arm/")
        self.lines: list[str] = []
        self.intake.warn = Throttle(self.lines.append, period=60.0)

    def close(self) -> None:
        self.intake.destroy()
        self.node.destroy_node()


def _trajectory(names: list[str], *positions: float, stamp: float = 0.0) -> Any:
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.nodes.names import stamp_from_seconds

    point = JointTrajectoryPoint(positions=list(positions))
    point.time_from_start.sec = 1
    msg = JointTrajectory(joint_names=names, points=[point])
    msg.header.stamp = stamp_from_seconds(stamp)
    return msg


def test_intake_hands_the_driven_skeletons_joints_to_the_core(context: Any) -> None:
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from skel_ros.model.limits import CommandKind

    robot = _Robot(context)
    try:
        robot.intake.on_joint_command(JointState(name=["arm/a", "leg/d"], position=[0.5, 0.1]))
        assert robot.backend.writes[-1][1:] == (CommandKind.POSITION, ("a",), (0.5,))
        assert robot.lines == [("joint_commands: joints of other skeletons are ignored (this"
                                " node drives arm/*)")]
        robot.intake.on_joint_command(JointState(name=["arm/b"], position=[3.0]))
        assert robot.lines[-1] == ("joint_commands: position command clamped to limits: 'b'"
                                   " 3 -> 1")
        robot.intake.on_joint_command(JointState(name=["arm/q"], position=[0.0]))
        assert robot.lines[-1].startswith("joint_commands: unknown joint 'arm/q'")
        assert robot.lines[-1].endswith("(message ignored)")
        robot.intake.on_trajectory(_trajectory(["arm/a", "leg/d"], 0.1, 0.2))
        assert robot.lines[-1] == ("joint_trajectory: trajectory rejected: joints of other"
                                   " skeletons (this node drives arm/*) (message ignored)")
        assert not robot.core.following
        # A header stamp in ROS time (offset 100 s): the core's time 0.5.
        robot.intake.on_trajectory(_trajectory(["arm/a", "arm/b"], 0.1, 0.2, stamp=100.5))
        active = robot.core.active_trajectory
        assert active is not None
        assert active.names == ("a", "b")
        assert active.start == pytest.approx(0.5)
        assert active.trajectory.start_positions == (0.5, 1.0)  # the targets held now
        robot.intake.on_trajectory(JointTrajectory())  # empty: stop, hold
        assert not robot.core.following
        robot.backend.refused = "torque off"
        robot.intake.on_trajectory(_trajectory(["arm/a"], 0.1))
        assert robot.lines[-1] == ("joint_trajectory: trajectory ignored: torque off"
                                   " (message ignored)")
    finally:
        robot.close()


def test_a_message_names_its_publisher_s_node_where_rclpy_says_which_sent_it(
        context: Any) -> None:
    """Kilted on: the publisher's node, looked up in the graph by the message's GID; a GID
    the graph does not show, by itself; with no identity (Humble, Jazzy), the topic."""
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.sources import PUBLISHER_IDENTITY, PublisherSources
    from skel_ros.nodes.sources import subscribe_with_source as subscribe

    node = _node(context, "robot")
    teleop = _node(context, "teleop")
    executor = SingleThreadedExecutor(context=context)
    for n in (node, teleop):
        executor.add_node(n)
    got: list[Any] = []
    try:
        sources = subscribe(node, JointState, "joint_commands",
                            lambda _msg, source: got.append(source), 10)
        blind = subscribe(node, JointState, "joint_commands",
                          lambda _msg, source: got.append(source), 10,
                          sources=PublisherSources(node, "joint_commands", identify=False))
        assert sources.identify is PUBLISHER_IDENTITY
        publisher = teleop.create_publisher(JointState, "joint_commands", 10)
        for _ in range(500):
            if len(got) >= 2:
                break
            publisher.publish(JointState(name=["a"], position=[0.1]))
            executor.spin_once(timeout_sec=0.01)
        assert blind.anonymous in got
        assert str(blind.anonymous) == "joint_commands"
        named = [source for source in got if source != blind.anonymous]
        if PUBLISHER_IDENTITY:
            assert named
            assert str(named[0]) == "joint_commands (/teleop)"
            assert named[0].key[0] == "gid"  # the publisher, whatever its name
            unknown = sources.source({"publisher_gid": {"data": bytes(range(1, 17))}})
            assert str(unknown) == "joint_commands (publisher 010203040506)"
        assert sources.source(None) == sources.anonymous
    finally:
        for n in (node, teleop):
            n.destroy_node()


# ---------------------------------------------------------------- state publishing


class _Capture:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    def publish(self, msg: Any) -> None:
        self.sent.append(msg)


def test_published_state_is_what_the_core_read_and_only_that(context: Any) -> None:
    """The core drives two of the arm's four DOFs (as a hardware YAML that maps only
    those): joint_states names those two, fresh ones only, stamped through the time base;
    /tf has the transforms that move with them only."""
    from numpy_backend import NumpyBackend  # type: ignore[import-not-found]

    from skel_ros.core import RobotCore
    from skel_ros.model import load_model
    from skel_ros.nodes.shell import RobotShell
    from skel_ros.nodes.time_base import TimeBase
    from skel_ros.resources import example

    core = RobotCore(NumpyBackend(names=("shoulder_yaw", "elbow")))
    node = _node(context, "shell")
    shell = RobotShell(node, core, load_model(example("arm.skel")), frame_prefix="r/",
                       time_base=TimeBase(lambda: 10.0))
    try:
        js, tf = _Capture(), _Capture()
        shell.robot._joint_states_pub, shell.robot._tf_pub = js, tf  # type: ignore[assignment]
        state = core.read()
        shell.publish(state)
        (msg,) = js.sent
        assert list(msg.name) == ["shoulder_yaw", "elbow"]
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (10, 0)
        assert {t.child_frame_id for t in tf.sent[0].transforms} == {
            "r/turret__joint_frame", "r/forearm__joint_frame"}
        fresh = np.array([True, False])
        shell.publish(type(state)(1.5, state.positions, state.velocities, state.efforts,
                                  fresh), tf=False)
        assert list(js.sent[-1].name) == ["shoulder_yaw"]
        assert (js.sent[-1].header.stamp.sec, js.sent[-1].header.stamp.nanosec) == (
            11, 500_000_000)
        assert len(tf.sent) == 1
    finally:
        shell.destroy()
        node.destroy_node()
