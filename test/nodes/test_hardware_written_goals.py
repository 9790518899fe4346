"""``written_goals`` (``publish_goals``): the goals the servos received, each write once.

The hardware node on the arm's emulated Dynamixel servos behind a tap that decodes every
Sync Write (test/tapped_arm.py). A second node streams ``joint_commands`` to a far elbow
target, which the limits gate slows (after an enable, ``reenable_velocity`` of the
velocity limit): what the node publishes on ``written_goals`` is then not what was
commanded but what the gate let through, and it must be, write for write, what the
servos got (``skel-ros identify`` fits a servo's delay to it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from sync_write_tap import CENTER, TICK
from tapped_arm import TappedArm

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

TARGET = 1.2  # rad: far enough that the gate slows the way there


@pytest.fixture
def context(ros_env: dict[str, str]) -> Iterator[Any]:
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.shutdown(context=context)


def test_the_goals_published_are_the_goals_on_the_wire(context: Any, tmp_path: Path) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn
    from sensor_msgs.msg import JointState

    rig = TappedArm(context, tmp_path, target=TARGET, node_name="goals_hw",
                    parameters={"publish_goals": True})
    written: list[Any] = []
    rig.stream.create_subscription(JointState, "written_goals", written.append, 1000)

    def published() -> list[int]:
        return [CENTER + round(m.position[list(m.name).index("elbow")] / TICK)
                for m in written if "elbow" in m.name]

    try:
        rig.spin_until(lambda: rig.stream.count_publishers("written_goals") > 0,
                       "the listener to meet written_goals")
        assert rig.node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        at_target = CENTER + round(TARGET / TICK)
        rig.spin_until(lambda: at_target in rig.elbow_ticks(), "the elbow's goal at its target")
        assert rig.node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS  # no more
        sent = rig.elbow_ticks()
        rig.spin_until(lambda: len(published()) >= len(sent), "every write published")
    finally:
        rig.close()
    # Every write, in order, as the servos got it: the gate's slowed steps, not the command.
    assert published() == sent
    assert len(set(sent)) > 20
    stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in written]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == len(stamps)


def test_without_publish_goals_there_is_no_such_topic(context: Any, tmp_path: Path) -> None:
    rig = TappedArm(context, tmp_path, target=TARGET, node_name="goals_hw")
    try:
        assert not rig.node.get_publishers_info_by_topic("/written_goals")
    finally:
        rig.close()
