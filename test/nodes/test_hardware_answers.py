"""The hardware node says what happened: parameters as ROS passes them, the e-stop's answer
and the diagnostics summary during a bus outage, an enable while already active.

The node runs in this process on emulated Dynamixel servos (``emulate:=true``: the
emulator is its child process, ``node._emulators[0]``), spun by the test's executor with
a client node; the parameter errors run the console entry point in a subprocess. Waits
spin with generous timeouts, never sleep.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from polling import spin_until
from service_call import spin_call

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
NAME = "answers_hw"
ERROR = 2  # diagnostic_msgs/DiagnosticStatus.ERROR


def _node(context: Any, *params: tuple[str, Any]) -> Any:
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    given = [("skel_file", str(ARM)), ("hardware_config", str(ARM_YAML)), ("emulate", True),
             *params]
    return HardwareNode(context=context, node_name=NAME,
                        parameter_overrides=[Parameter(n, value=v) for n, v in given])


def test_numbers_given_as_integers_and_auto_resume_as_a_bool(context: Any) -> None:
    """What ``-p control_rate:=200 -p command_timeout:=1 -p auto_resume:=true`` passes."""
    node = _node(context, ("control_rate", 200), ("command_timeout", 1),
                 ("auto_resume", True), ("publish_rate", 20))
    try:
        backend = node.backend
        assert backend.control_rate == 200.0
        assert node.core.command_timeout == 1.0
        assert backend.auto_resume is True
    finally:
        node.destroy_node()
    node = _node(context, ("auto_resume", "false"))  # the strings are taken too
    try:
        assert node.backend.auto_resume is False
    finally:
        node.destroy_node()


def _run(ros_env: dict[str, str], *params: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "from skel_ros.nodes.hardware_node import main; main()",
           "--ros-args", *(x for p in params for x in ("-p", p))]
    return subprocess.run(cmd, capture_output=True, text=True, env=ros_env, timeout=60,
                          check=False)


def test_joints_the_yaml_does_not_map_are_not_published(context: Any, tmp_path: Path) -> None:
    """A hardware YAML that maps three of the arm's four joints: ``joint_states`` names
    those three only (the wrist is never measured: publishing a value for it would be a
    lie), and ``/tf`` has no transform for the link the wrist moves, as
    robot_state_publisher sends none for a joint it has no state of."""
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    text = ARM_YAML.read_text()
    config = tmp_path / "arm_without_wrist.yaml"
    config.write_text(text[:text.index("\n  wrist:")] + "\n")
    node = _node(context, ("hardware_config", str(config)))
    client = _Client(context, node)
    states: list[Any] = []
    tf: list[Any] = []
    client.node.create_subscription(JointState, "joint_states", states.append, 10)
    client.node.create_subscription(TFMessage, "/tf", tf.append, 100)
    try:
        assert list(node.bound.unmapped) == ["wrist"]
        client.spin_until(lambda: len(states) >= 3 and len(tf) >= 3, 20.0,
                          "joint_states and /tf")
        assert {tuple(m.name) for m in states} == {("shoulder_yaw", "shoulder_pitch", "elbow")}
        frames = {t.child_frame_id for m in tf for t in m.transforms}
        assert {"turret__joint_frame", "upper_arm__joint_frame", "forearm__joint_frame"} <= frames
        assert "hand__joint_frame" not in frames  # moved by the wrist
    finally:
        client.close()
        node.destroy_node()


def test_a_parameter_of_the_wrong_type_is_named_exit_code_2(ros_env: dict[str, str]) -> None:
    # A bool parameter given a number: refused at the start, whatever autostart says.
    done = _run(ros_env, "emulate:=5", "autostart:=unconfigured")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "emulate must be a bool" in done.stderr
    assert "Traceback" not in done.stderr
    # A number given a string, auto_resume an integer: configure fails naming them.
    done = _run(ros_env, f"skel_file:={ARM}", f"hardware_config:={ARM_YAML}",
                "emulate:=true", "control_rate:=fast", "auto_resume:=1")
    assert done.returncode == 2, done.stderr[-2000:]
    assert "control_rate must be a number, got 'fast'" in done.stderr
    assert "auto_resume must be true, false or ''" in done.stderr
    assert "Traceback" not in done.stderr


class _Client:
    """A client node beside the hardware node, both spun here."""

    def __init__(self, context: Any, node: Any) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from std_srvs.srv import SetBool, Trigger

        self.node = rclpy.create_node("answers_client", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(node)
        self.executor.add_node(self.node)
        self.diagnostics: list[Any] = []
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.diagnostics.append,
                                      10)
        self.enable = self.node.create_client(SetBool, f"/{NAME}/enable")
        self.estop = self.node.create_client(Trigger, f"/{NAME}/estop")

    def spin_until(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        spin_until(self.executor, done, what, timeout)

    def call(self, client: Any, request: Any) -> Any:
        """The answer (``~/enable``, ``~/estop``: idempotent, asked again if lost)."""
        return spin_call(self.executor, client, request, idempotent=True)

    def summary(self) -> Any:
        """The hardware summary of the last /diagnostics message."""
        return next(s for s in self.diagnostics[-1].status if s.name == f"{NAME}: hardware")

    def close(self) -> None:
        self.node.destroy_node()


def test_an_outage_is_an_error_and_the_estop_says_what_it_did_not_reach(
        context: Any) -> None:
    """The port vanishes with torque on (safe_state hold: the servos keep holding).

    The summary is ERROR (not STALE) in fault and in e-stop; ``~/estop`` answers no
    success naming the bus it could not reach; the reconnection switches torque off. An
    ``~/enable true`` while already active changes nothing and says so.
    """
    from std_srvs.srv import SetBool, Trigger

    node = _node(context, ("command_timeout", 30.0))
    client = _Client(context, node)
    try:
        emulator = node._emulators[0]
        reply = client.call(client.enable, SetBool.Request(data=True))
        assert reply.success, reply.message
        again = client.call(client.enable, SetBool.Request(data=True))
        assert again.success, again.message
        assert "already enabled" in again.message
        emulator.vanish(5.0)
        client.diagnostics.clear()
        client.spin_until(lambda: bool(client.diagnostics)
                          and client.summary().message.startswith("fault"), 10.0,
                          "a fault in /diagnostics")
        assert client.summary().level[0] == ERROR
        reply = client.call(client.estop, Trigger.Request())
        assert not reply.success, reply.message
        assert "'arm_bus' not reached" in reply.message
        client.spin_until(lambda: not any(emulator.state(i).torque_enabled for i in (1, 2, 3, 4)),
                          30.0, "torque off once the bus is back")
        client.diagnostics.clear()
        client.spin_until(lambda: bool(client.diagnostics), 10.0, "/diagnostics")
        assert client.summary().message.startswith("estop: torque off;")
        assert client.summary().level[0] == ERROR
    finally:
        client.close()
        node.destroy_node()
