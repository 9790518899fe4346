"""``joint_commands``' own node and executor thread (:class:`skel_ros.nodes.intake.CommandStream`).

A robot node's ``joint_commands`` is served by a node of its own, ``<node name>_commands``,
spun by an executor thread of its own, so a command does not pay for rclpy's walk over
the robot node's many entities at each wake-up (issue 33: the hardware node's CPU per
command, ``bench/hardware_node.py``). Here, in this process,
with the hardware node on emulated servos (``autostart:=active``, so it is enabled when
constructed):

* commands are taken while nobody spins the hardware node itself;
* the topic is the one the node resolves: its remappings and a ``__node:=`` rename
  (which would otherwise give the second node the robot node's own name) hold;
* destroying the node stops the thread and removes the second node from the graph.

Waits spin or poll with timeouts (the machine is shared), never fixed sleeps.
"""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tapped_arm import ARM, ARM_YAML, TIMEOUT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = [pytest.mark.ros, pytest.mark.timeout(180)]

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

ELBOW = 2  # its index in the node's DOFs


def _node(context: Any, name: str) -> Any:
    """The hardware node on emulated servos, active (torque on, holding), full speed."""
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    # This process's threads may stall the loop past the servos' default 0.25 s Bus
    # Watchdog on a loaded machine (as in the other in-process hardware node tests).
    config = Path(tempfile.mkdtemp(prefix="topics_")) / "arm.yaml"
    config.write_text(ARM_YAML.read_text() + "\ndevice_watchdog: 1.0\n")
    return HardwareNode(context=context, node_name=name, parameter_overrides=[
        Parameter("skel_file", value=str(ARM)),
        Parameter("hardware_config", value=str(config)),
        Parameter("emulate", value=True),
        Parameter("autostart", value="active"),
        Parameter("reenable_velocity", value=1.0),
        Parameter("command_timeout", value=0.0),
    ])


def _wait(done: Callable[[], bool], what: str, spin: Callable[[], None] | None = None) -> None:
    end = time.monotonic() + TIMEOUT
    while not done():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        if spin is not None:
            spin()
        else:
            time.sleep(0.01)


@pytest.fixture
def remapped() -> Iterator[Any]:
    """A context whose process-wide arguments remap ``joint_commands`` and rename nodes."""
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx, args=["--ros-args", "-r", "joint_commands:=/arm/cmd",
                                  "-r", "__node:=renamed_arm"])
    yield ctx
    rclpy.try_shutdown(context=ctx)


def test_commands_are_taken_while_nobody_spins_the_robot_node(ros_env: dict[str, str],
                                                              context: Any) -> None:
    """A stream on ``joint_commands`` moves the elbow's target though the test spins only
    the publisher: ``joint_commands`` has an executor thread of its own. (On the
    node's own executor, as before, nothing took them here.)"""
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    node = _node(context, "topics_unspun")
    talker = rclpy.create_node("topics_talker", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(talker)  # the hardware node is in no executor of this test
    pub = talker.create_publisher(JointState, "joint_commands", 10)
    try:
        _wait(lambda: pub.get_subscription_count() >= 1, "the node's subscription",
              lambda: executor.spin_once(timeout_sec=0.01))

        def target() -> float:
            return float(node.backend.status().target[ELBOW])

        def send() -> None:
            pub.publish(JointState(name=["elbow"], position=[0.4]))
            executor.spin_once(timeout_sec=0.01)

        _wait(lambda: abs(target() - 0.4) < 1e-3, "the elbow's target at 0.4", send)
    finally:
        talker.destroy_node()
        node.destroy_node()


def test_the_command_stream_follows_the_node_s_remappings_and_name(ros_env: dict[str, str],
                                                                  remapped: Any) -> None:
    """With ``-r joint_commands:=/arm/cmd -r __node:=renamed_arm`` for the whole process,
    the second node is ``renamed_arm_commands`` (not a second ``renamed_arm``) and
    subscribes ``/arm/cmd``, where the elbow's commands then arrive; destroying the
    hardware node stops its thread and takes it off the graph."""
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    node = _node(remapped, "topics_remapped")
    talker = rclpy.create_node("talker", context=remapped, use_global_arguments=False)
    executor = SingleThreadedExecutor(context=remapped)
    executor.add_node(talker)
    pub = talker.create_publisher(JointState, "/arm/cmd", 10)
    threads = {t.name for t in threading.enumerate()}
    try:
        assert node.get_name() == "renamed_arm"
        assert "skel_ros-commands" in threads

        def graph() -> list[tuple[str, str]]:
            return talker.get_node_names_and_namespaces()

        _wait(lambda: ("renamed_arm_commands", "/") in graph(), "renamed_arm_commands",
              lambda: executor.spin_once(timeout_sec=0.01))
        assert [n for n, _ in graph()].count("renamed_arm") == 1
        subscribed = dict(talker.get_subscriber_names_and_types_by_node(
            "renamed_arm_commands", "/"))
        assert "/arm/cmd" in subscribed
        assert "/joint_commands" not in subscribed

        def send() -> None:
            pub.publish(JointState(name=["elbow"], position=[-0.3]))
            executor.spin_once(timeout_sec=0.01)

        _wait(lambda: abs(float(node.backend.status().target[ELBOW]) + 0.3) < 1e-3,
              "the elbow's target at -0.3", send)
    finally:
        node.destroy_node()
    try:
        assert "skel_ros-commands" not in {t.name for t in threading.enumerate()}
        _wait(lambda: ("renamed_arm_commands", "/") not in talker.get_node_names_and_namespaces(),
              "renamed_arm_commands gone", lambda: executor.spin_once(timeout_sec=0.01))
    finally:
        talker.destroy_node()


def test_an_error_from_a_context_gone_down_is_no_defect(ros_env: dict[str, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The process stops (SIGINT shuts the context down) while the thread is between two
    waits: rclpy raises from the next one (``RCLError: failed to initialize wait set: the
    given context is not valid``, seen once under ``sim_node``'s Ctrl-C). The thread ends
    quietly; it logged that error as a failed command callback, with its traceback."""
    from rclpy.context import Context

    from skel_ros.nodes import intake

    ctx = Context()
    rclpy.init(context=ctx)
    robot = rclpy.create_node("stream_shutdown", context=ctx)
    said: list[str] = []
    monkeypatch.setattr(robot.get_logger(), "error", said.append)

    def spin_then_shutdown(*_args: object) -> None:  # the context goes down mid-spin
        rclpy.shutdown(context=ctx)
        raise RuntimeError("failed to initialize wait set: the given context is not valid")

    monkeypatch.setattr(intake, "spin", spin_then_shutdown)
    stream = intake.CommandStream(robot)
    stream.start()
    stream._thread.join(5.0)
    assert not stream._thread.is_alive()
    assert said == []
    stream.destroy()
    robot.destroy_node()
