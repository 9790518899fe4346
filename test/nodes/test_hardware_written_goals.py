"""``written_goals`` (``publish_goals``): the goals the servos received, each write once.

The hardware node runs in this process on the arm's emulated Dynamixel servos behind a
tap (test/sync_write_tap.py) that decodes every Sync Write. A second node streams
``joint_commands`` to a far elbow target, which the limits gate slows (after an enable,
``reenable_velocity`` of the velocity limit): what the node publishes on
``written_goals`` is then not what was commanded but what the gate let through, and it
must be, write for write, what the servos got (``skel-ros identify`` fits a servo's delay
to it). Waits spin with timeouts, never sleep.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from sync_write_tap import CENTER, TICK, SyncWriteTap

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
ELBOW = 3  # its id; direction 1, zero 0, gear 1 in the YAML: ticks -> rad directly
TARGET = 1.2  # rad: far enough that the gate slows the way there
TIMEOUT = 30.0  # s: generous, the machine is shared


class Rig:
    """The node over the tapped servos, a streaming node, a listener, one executor."""

    def __init__(self, context: Any, tmp: Path, *, publish_goals: bool) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState

        from skel_ros.emulation import emulator_for
        from skel_ros.hardware import load_hardware_config
        from skel_ros.nodes.hardware_node import HardwareNode

        yaml_file = tmp / "arm_dynamixel.yaml"  # a longer device watchdog: a loaded host
        yaml_file.write_text(ARM_YAML.read_text(encoding="utf-8")
                             + "\ndevice_watchdog: 2.0\n", encoding="utf-8")
        config = load_hardware_config(yaml_file)
        (bus,) = config.buses
        self.servos = emulator_for(bus.protocol)(
            bus.transport, [m.actuator for m in config.joints_on(bus.name)], {})
        self.tap = SyncWriteTap(self.servos.transport["port"], tmp / "ttyDXL")
        self.node = HardwareNode(context=context, node_name="goals_hw", parameter_overrides=[
            Parameter("skel_file", value=str(ARM)),
            Parameter("hardware_config", value=str(yaml_file)),
            Parameter("port", value=str(tmp / "ttyDXL")),
            Parameter("publish_goals", value=publish_goals),
        ])
        self.stream = rclpy.create_node("stream", context=context)
        publisher = self.stream.create_publisher(JointState, "joint_commands", 10)
        message = JointState(name=["elbow"], position=[TARGET])
        self.stream.create_timer(0.01, lambda: publisher.publish(message))
        self.written: list[Any] = []
        self.stream.create_subscription(JointState, "written_goals", self.written.append, 1000)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.stream)

    def spin_until(self, done: Callable[[], bool], what: str) -> None:
        clock = self.stream.get_clock()
        end = clock.now().nanoseconds + int(TIMEOUT * 1e9)
        while not done():
            if clock.now().nanoseconds > end:
                raise AssertionError(f"timed out waiting for {what}")
            self.executor.spin_once(timeout_sec=0.01)

    def close(self) -> None:
        self.node.destroy_node()
        self.stream.destroy_node()
        self.tap.close()
        self.servos.stop()


@pytest.fixture
def context(ros_env: dict[str, str]) -> Iterator[Any]:
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    try:
        yield context
    finally:
        rclpy.shutdown(context=context)


def _elbow_ticks(positions: list[float]) -> list[int]:
    return [CENTER + round(q / TICK) for q in positions]


def test_the_goals_published_are_the_goals_on_the_wire(context: Any, tmp_path: Path) -> None:
    from rclpy.lifecycle import TransitionCallbackReturn

    rig = Rig(context, tmp_path, publish_goals=True)

    def wire() -> list[int]:
        return [g[ELBOW] for g in rig.tap.goals if ELBOW in g]

    def published() -> list[float]:
        return [m.position[list(m.name).index("elbow")] for m in rig.written
                if "elbow" in m.name]

    try:
        rig.spin_until(lambda: rig.stream.count_publishers("written_goals") > 0,
                       "the listener to meet written_goals")
        assert rig.node.trigger_activate() == TransitionCallbackReturn.SUCCESS
        at_target = CENTER + round(TARGET / TICK)
        rig.spin_until(lambda: at_target in wire(), "the elbow's goal at its target")
        assert rig.node.trigger_deactivate() == TransitionCallbackReturn.SUCCESS  # no more
        sent = wire()
        try:
            rig.spin_until(lambda: len(published()) >= len(sent), "every write published")
        except AssertionError:
            got = _elbow_ticks(published())
            raise AssertionError((len(sent), len(got), sent[:8], got[:8], sent[-5:], got[-5:])) from None
    finally:
        rig.close()
    ticks = _elbow_ticks(published())
    # Every write, in order, as the servos got it: the gate's slowed steps, not the command.
    assert ticks == sent
    assert len(set(ticks)) > 20
    stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in rig.written]
    assert stamps == sorted(stamps)
    assert len(set(stamps)) == len(stamps)


def test_without_publish_goals_there_is_no_such_topic(context: Any, tmp_path: Path) -> None:
    rig = Rig(context, tmp_path, publish_goals=False)
    try:
        assert not rig.node.get_publishers_info_by_topic("/written_goals")
    finally:
        rig.close()
