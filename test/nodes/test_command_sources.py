"""One commander at a time: two real publishers on ``joint_commands`` of the hardware node.

The node runs in this process (``emulate:=true``), spun by the test's executor with two
publisher nodes, ``teleop`` and ``script``, which stream the elbow to different targets,
as a teleop node and a forgotten test script would. What the node says goes to
``/rosout`` (its logger) and ``/diagnostics``; what it does, to its motion limiter's
targets (``backend.status().target``).

Which publisher sent a message is known where rclpy says so (Kilted on:
``MessageInfo.publisher_gid``); on Humble and Jazzy a topic is one source, and the tests
that need two publishers of one topic are skipped there (docs/hardware.md, "Command
sources"). Waits spin with timeouts, never sleep.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from polling import spin_until

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

from skel_ros.nodes.sources import PUBLISHER_IDENTITY  # noqa: E402 - after the skips

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
TIMEOUT = 30.0  # s: generous, the machine is shared
ELBOW = 2  # its index in the node's DOFs

needs_identity = pytest.mark.skipif(
    not PUBLISHER_IDENTITY, reason="this rclpy does not say which publisher sent a message")


class Rig:
    """The hardware node (active, reenable_velocity 1: full speed at once) and two
    publisher nodes, one executor."""

    def __init__(self, context: Any, name: str, *, exclusive: bool) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from rcl_interfaces.msg import Log
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter
        from sensor_msgs.msg import JointState

        from skel_ros.nodes.hardware_node import HardwareNode

        # A name per test: rcl keeps one /rosout publisher per logger name, process-wide.
        self.name = name
        # The node's loop shares this process with the test's executor: on a loaded
        # machine it can stall past the servos' default 0.25 s Bus Watchdog, which then
        # (rightly) faults them. 1 s here, as the other in-process hardware node tests.
        import tempfile

        config = Path(tempfile.mkdtemp(prefix="sources_")) / "arm.yaml"
        config.write_text(ARM_YAML.read_text() + "\ndevice_watchdog: 1.0\n")
        self.node = HardwareNode(context=context, node_name=name, parameter_overrides=[
            Parameter("skel_file", value=str(ARM)),
            Parameter("hardware_config", value=str(config)),
            Parameter("emulate", value=True),
            Parameter("autostart", value="active"),
            Parameter("reenable_velocity", value=1.0),
            Parameter("exclusive_commands", value=exclusive),
        ])
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.publishers: dict[str, Any] = {}
        self.streaming: dict[str, float | None] = {}
        # Different rates, so neither publisher's message is always the later one of a
        # control cycle (with equal timers the order inside one cycle decides alone).
        for publisher, period in (("teleop", 0.02), ("script", 0.03)):
            node = rclpy.create_node(publisher, context=context)
            self.publishers[publisher] = node.create_publisher(JointState, "joint_commands", 10)
            self.streaming[publisher] = None
            node.create_timer(period, self._publisher(publisher))  # while streaming
            self.executor.add_node(node)
        self.listener = rclpy.create_node("listener", context=context)
        self.executor.add_node(self.listener)
        self.log: list[str] = []
        self.diagnostics: list[Any] = []
        self.listener.create_subscription(
            Log, "/rosout", lambda m: self.log.append(m.msg) if m.name == self.name else None,
            100)
        self.listener.create_subscription(DiagnosticArray, "/diagnostics",
                                          self.diagnostics.append, 10)

    def _publisher(self, name: str) -> Callable[[], None]:
        from sensor_msgs.msg import JointState

        def publish() -> None:
            target = self.streaming[name]
            if target is not None:
                self.publishers[name].publish(JointState(name=["elbow"], position=[target]))
        return publish

    def spin_until(self, done: Callable[[], bool], what: str) -> None:
        spin_until(self.executor, done, what, TIMEOUT, step=0.01)

    def spin_for(self, seconds: float) -> None:
        clock = self.listener.get_clock()
        end = clock.now().nanoseconds + int(seconds * 1e9)
        while clock.now().nanoseconds < end:
            self.executor.spin_once(timeout_sec=0.01)

    def target(self) -> float:
        return float(self.node.backend.status().target[ELBOW])

    def summary(self) -> tuple[str, dict[str, str]]:
        """The message and the values of the node's newest /diagnostics summary."""
        self.diagnostics.clear()
        self.spin_until(lambda: bool(self.diagnostics), "/diagnostics")
        status = next(s for s in self.diagnostics[-1].status
                      if s.name == f"{self.name}: hardware")
        return status.message, {kv.key: kv.value for kv in status.values}

    def close(self) -> None:
        for node in list(self.executor.get_nodes()):
            node.destroy_node()


def _rig(context: Any, name: str, *, exclusive: bool) -> Rig:
    from skel_ros.hardware import MotionState

    rig = Rig(context, name, exclusive=exclusive)
    rig.spin_until(lambda: rig.node.backend.status().state is MotionState.ENABLED, "enabled")
    return rig


@needs_identity
def test_two_publishers_by_default_the_latest_wins_and_both_are_named(context: Any) -> None:
    rig = _rig(context, "sources_default", exclusive=False)
    try:
        message, values = rig.summary()
        assert message == "enabled: holding: no command for 0.5 s"  # the command timeout
        rig.streaming["teleop"] = 0.3
        rig.spin_until(lambda: abs(rig.target() - 0.3) < 1e-3, "the teleop's target")
        message, values = rig.summary()
        assert message == "enabled: tracking a joint_commands stream from /teleop"
        assert values["activity"] == "tracking a joint_commands stream from /teleop"
        rig.streaming["script"] = 0.6  # both stream: both are taken, the latest wins
        # The motion limiter moves the target at most 4 rad/s toward the latest command,
        # and the commands alternate every few milliseconds: the target leaves 0.3 toward
        # 0.6 without reaching it. (Refused, as with exclusive_commands, it stays at 0.3.)
        rig.spin_until(lambda: rig.target() > 0.32, "the script's commands taken")
        # The log line comes through /rosout, after the target moved (a loaded machine).
        rig.spin_until(lambda: any("two sources" in line for line in rig.log),
                       "the log line naming both sources")
        said = [line for line in rig.log if "two sources" in line]
        assert said == [("two sources command elbow: joint_commands (/teleop) and"
                        " joint_commands (/script); the latest command wins;"
                        " exclusive_commands: true refuses the second (said once for these"
                        " two)")]
        message, values = rig.summary()
        assert "; second source: joint_commands (/" in message
        assert "the latest command wins" in message
        assert {values["second_source"].split(" while ")[0],
                values["second_source"].split(" while ")[1].split(" commands ")[0]} == {
            "joint_commands (/teleop)", "joint_commands (/script)"}
        assert values["refused_commands"] == "0"
        rig.spin_for(1.0)
        assert len([line for line in rig.log if "two sources" in line]) == 1  # said once
    finally:
        rig.close()


@needs_identity
def test_two_publishers_exclusive_refuses_the_second_until_the_first_stops(
        context: Any) -> None:
    rig = _rig(context, "sources_exclusive", exclusive=True)
    try:
        rig.streaming["teleop"] = 0.3
        rig.spin_until(lambda: abs(rig.target() - 0.3) < 1e-3, "the teleop's target")
        rig.streaming["script"] = 0.6
        rig.spin_until(lambda: any("is refused until" in line for line in rig.log),
                       "the refusal said")
        rig.spin_for(0.5)
        assert abs(rig.target() - 0.3) < 1e-3  # the script's commands never reached it
        message, values = rig.summary()
        assert message == ("enabled: tracking a joint_commands stream from /teleop; second"
                           " source: joint_commands (/script) while joint_commands (/teleop)"
                           " commands elbow: refused (exclusive_commands)")
        assert int(values["refused_commands"]) > 0
        assert values["exclusive_commands"] == "True"
        refusals = [line for line in rig.log if "command refused" in line]
        assert refusals, rig.log
        assert refusals[0] == (
            "joint_commands: position command refused: joint_commands (/teleop) commands"
            " elbow (it commanded them within the last 0.5 s); exclusive_commands:"
            " joint_commands (/script) may command them once joint_commands (/teleop) has"
            " been quiet for 0.5 s (message ignored)")
        rig.streaming["teleop"] = None  # the teleop stops: 0.5 s later, the script's turn
        rig.spin_until(lambda: abs(rig.target() - 0.6) < 1e-3, "the script's target")
    finally:
        rig.close()


def test_a_stream_and_a_trajectory_are_two_sources_on_every_distro(context: Any) -> None:
    """Sources on different channels are told apart everywhere (Humble and Jazzy too):
    with exclusive_commands, a joint_trajectory is refused while a stream commands."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    rig = _rig(context, "sources_channels", exclusive=True)
    try:
        rig.streaming["teleop"] = 0.3
        rig.spin_until(lambda: abs(rig.target() - 0.3) < 1e-3, "the teleop's target")
        other = rclpy.create_node("planner", context=rig.listener.context)
        rig.executor.add_node(other)
        trajectories = other.create_publisher(JointTrajectory, "joint_trajectory", 10)
        point = JointTrajectoryPoint(positions=[0.6])
        point.time_from_start.sec = 1
        message = JointTrajectory(joint_names=["elbow"], points=[point])
        other.create_timer(0.1, lambda: trajectories.publish(message))
        rig.spin_until(lambda: any("trajectory refused" in line for line in rig.log),
                       "the trajectory refused")
        assert not rig.node.core.following
        teleop = "joint_commands (/teleop)" if PUBLISHER_IDENTITY else "joint_commands"
        line = next(line for line in rig.log if "trajectory refused" in line)
        assert line.startswith(f"joint_trajectory: trajectory refused: {teleop} commands"
                               " elbow"), line
    finally:
        rig.close()


GOALS = "joint_trajectory_controller/follow_joint_trajectory"


@pytest.mark.parametrize(("state", "message", "activity", "summary"), [
    # It said "enabled: enabled: holding the measured positions" while tracking a stream.
    ("enabled", "holding the measured positions",
     "tracking a joint_commands stream from /teleop",
     "enabled: tracking a joint_commands stream from /teleop"),
    ("enabled", "holding the measured positions", "holding", "enabled: holding"),
    ("enabled", "no command for 0.5 s: holding position", "holding: no command for 0.5 s",
     "enabled: holding: no command for 0.5 s"),
    ("enabled", "", f"following a trajectory from {GOALS} (goal 5f3a1c2e)",
     f"enabled: following a trajectory from {GOALS} (goal 5f3a1c2e)"),
    ("estop", "emergency stop: torque off; enable to move again", "holding",
     "estop: torque off; enable to move again"),
    ("disabled", "torque off", "holding", "disabled: torque off"),
    ("disabled", "disabled: torque off", "holding", "disabled: torque off"),
    ("disabled", "connected; torque off: enable to move", "holding",
     "disabled: connected; torque off: enable to move"),
    ("holding", "reconnected, torque on where the devices kept it: enable to move",
     "holding", "holding: reconnected, torque on where the devices kept it: enable to move"),
    ("fault", "bus 'arm_bus' failed: timeout", "holding",
     "fault: bus 'arm_bus' failed: timeout"),
])
def test_the_summary_says_what_the_node_does_without_a_word_twice(
        state: str, message: str, activity: str, summary: str) -> None:
    from skel_ros.hardware import MotionState
    from skel_ros.nodes.hardware_node import summary_message

    assert summary_message(MotionState(state), message, activity) == summary


def test_the_summary_names_the_joints_slowed_and_a_second_source() -> None:
    from skel_ros.core.commanders import Conflict, Source
    from skel_ros.hardware import MotionState
    from skel_ros.nodes.hardware_node import summary_message

    conflict = Conflict(Source("joint_commands", "/teleop"), Source("joint_commands", "/script"),
                        ("elbow",), refused=False, at=0.0)
    assert summary_message(MotionState.ENABLED, "", "tracking a joint_commands stream from"
                           " /script", conflict=conflict, bounded=("elbow",)) == (
        "enabled: tracking a joint_commands stream from /script (re-enable: elbow at"
        " reenable_velocity); second source: joint_commands (/script) while joint_commands"
        " (/teleop) commands elbow: the latest command wins")


def test_a_publisher_stays_one_commander_when_its_node_name_is_found() -> None:
    """A publisher the ROS graph does not show yet is named by its GID, later by its node:
    it is the same commander throughout. It was keyed by its GID, then by its node name,
    so its own stream became a second source (under load, where discovery lags: with
    exclusive_commands the node refused the publisher that commanded it first)."""
    from types import SimpleNamespace

    from skel_ros.nodes import sources

    gid = bytes(range(1, 17))
    graph: list[Any] = []  # what get_publishers_info_by_topic answers: nothing yet
    node = SimpleNamespace(get_publishers_info_by_topic=lambda _topic: list(graph))
    look = sources.PublisherSources(node, "joint_commands", identify=True)  # type: ignore[arg-type]
    info = {"publisher_gid": {"data": gid + b"\0" * 8}}
    early = look.source(info)
    assert "publisher" in early.who
    graph.append(SimpleNamespace(endpoint_gid=gid, node_namespace="/", node_name="teleop"))
    look._known[gid] = (early, 0.0)  # its retry is due: the graph is asked again
    late = look.source(info)
    assert late.who == "/teleop"
    assert late.key == early.key
