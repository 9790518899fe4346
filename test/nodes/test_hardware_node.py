"""The hardware node in a subprocess on emulated Dynamixel servos (``emulate:=true``).

One node process for the whole module (start-up costs seconds); the tests talk to it
over real DDS (loopback only, the session's domain) and spin with timeouts, never sleep.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from polling import spin_until
from service_call import spin_call

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("skel_ros.hardware.dynamixel")

REPO = Path(__file__).resolve().parents[2]
NAMES = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
NODE = "/hw_test/hardware_node"


class Client:
    """A test node with an executor; waits by spinning."""

    def __init__(self, context: Any) -> None:
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Bool
        from std_srvs.srv import SetBool, Trigger

        self.node = rclpy.create_node("hardware_node_test", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.states: list[Any] = []
        self.diagnostics: list[Any] = []
        self.node.create_subscription(JointState, "/hw_test/joint_states",
                                      self.states.append, 10)
        self.node.create_subscription(DiagnosticArray, "/diagnostics",
                                      self.diagnostics.append, 10)
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage
        from trajectory_msgs.msg import JointTrajectory

        self.tf: list[Any] = []
        self.descriptions: list[Any] = []
        self.node.create_subscription(TFMessage, "/tf", self.tf.append, 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(String, "/hw_test/robot_description",
                                      self.descriptions.append, latched)
        self.trajectories = self.node.create_publisher(JointTrajectory,
                                                       "/hw_test/joint_trajectory", 10)
        self.commands = self.node.create_publisher(JointState, "/hw_test/joint_commands", 10)
        self.estop_topic = self.node.create_publisher(Bool, f"{NODE}/estop", 10)
        self.enable = self.node.create_client(SetBool, f"{NODE}/enable")
        self.estop = self.node.create_client(Trigger, f"{NODE}/estop")

    def spin_until(self, done: Callable[[], bool], timeout: float, what: str,
                   proc: subprocess.Popen[str] | None = None) -> None:
        def alive() -> None:
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"the node exited ({proc.returncode}) waiting for {what}")

        spin_until(self.executor, done, what, timeout, step=0.05, check=alive)

    def call(self, client: Any, request: Any) -> Any:
        """The answer (``~/enable``, ``~/estop``: idempotent, asked again if lost)."""
        return spin_call(self.executor, client, request, idempotent=True)

    def latest(self) -> dict[str, float]:
        msg = self.states[-1]
        return dict(zip(msg.name, msg.position, strict=True))


@pytest.fixture(scope="module")
def node_process(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory,
                 ) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    log = tmp_path_factory.mktemp("hw_node") / "node.log"
    cmd = [sys.executable, "-c", "from skel_ros.nodes.hardware_node import main; main()",
           "--ros-args", "-r", "__ns:=/hw_test",
           "-p", f"skel_file:={REPO / 'examples' / 'arm.skel'}",
           "-p", f"hardware_config:={REPO / 'config' / 'hardware' / 'arm_dynamixel.yaml'}",
           "-p", "emulate:=true", "-p", "command_timeout:=5.0", "-p", "frame_prefix:=real/"]
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True,
                                env=ros_env, start_new_session=True)
    yield proc, log
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


@pytest.fixture(scope="module")
def client(node_process: tuple[subprocess.Popen[str], Path]) -> Iterator[Client]:
    context = rclpy.Context()
    rclpy.init(context=context)
    c = Client(context)
    proc, log = node_process
    try:
        c.spin_until(lambda: bool(c.states), 60.0, "joint_states", proc)
    except AssertionError:
        raise AssertionError(log.read_text()[-3000:]) from None
    yield c
    c.node.destroy_node()
    rclpy.try_shutdown(context=context)


def test_joint_states_carry_the_model_names(client: Client) -> None:
    msg = client.states[-1]
    assert list(msg.name) == NAMES
    assert all(math.isfinite(p) for p in msg.position)
    # The emulator starts at the model's initial positions (elbow 0.3).
    assert client.latest()["elbow"] == pytest.approx(0.3, abs=0.01)


def test_enable_and_position_command_move_the_joint(client: Client) -> None:
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool

    reply = client.call(client.enable, SetBool.Request(data=True))
    assert reply.success, reply.message
    client.commands.publish(JointState(name=["wrist"], position=[0.6]))
    client.spin_until(lambda: abs(client.latest()["wrist"] - 0.6) < 0.02, 20.0,
                      "the wrist to reach 0.6")
    assert client.latest()["elbow"] == pytest.approx(0.3, abs=0.02)


def test_tf_and_robot_description(client: Client) -> None:
    client.spin_until(lambda: bool(client.tf) and bool(client.descriptions), 10.0,
                      "/tf and robot_description")
    frames = {t.child_frame_id for msg in client.tf for t in msg.transforms}
    # The moving URDF joints' child links (the bodies hang under them on /tf_static).
    assert {"real/turret__joint_frame", "real/forearm__joint_frame",
            "real/hand__joint_frame"} <= frames
    assert '<joint name="elbow"' in client.descriptions[-1].data


def test_trajectory_moves_the_joint(client: Client) -> None:
    from std_srvs.srv import SetBool
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    assert client.call(client.enable, SetBool.Request(data=True)).success
    point = JointTrajectoryPoint(positions=[-0.4])
    point.time_from_start.nanosec = 300_000_000
    client.trajectories.publish(JointTrajectory(joint_names=["shoulder_yaw"], points=[point]))
    client.spin_until(lambda: abs(client.latest()["shoulder_yaw"] + 0.4) < 0.02, 20.0,
                      "shoulder_yaw to follow the trajectory to -0.4")


def test_bad_commands_do_not_crash_the_node(
        client: Client, node_process: tuple[subprocess.Popen[str], Path]) -> None:
    from sensor_msgs.msg import JointState

    for msg in [JointState(name=["wrist"], position=[math.nan]),
                JointState(name=["wrist"], position=[math.inf]),
                JointState(name=["nope"], position=[0.0]),
                JointState(name=["wrist", "elbow"], position=[0.0]),
                JointState(name=["wrist"], position=[1.0], velocity=[1.0]),
                JointState(name=["wrist"], velocity=[1.0]),
                JointState(name=["wrist"], position=[1e308])]:
        client.commands.publish(msg)
    count = len(client.states)
    client.spin_until(lambda: len(client.states) > count + 10, 10.0, "more joint_states")
    assert node_process[0].poll() is None
    # The clamped 1e308 was the only valid one: the wrist heads for its 1.9 limit (YAML
    # velocity 4 rad/s), never beyond. Wait until it is there: the next tests cut torque,
    # and a shaft still moving would coast on past the limit.
    seen: list[float] = []

    def arrived() -> bool:
        seen.append(client.latest()["wrist"])
        return len(seen) > 5 and all(abs(q - 1.9) < 0.005 for q in seen[-5:])

    client.spin_until(arrived, 20.0, "the wrist to arrive at its limit")
    assert max(seen) <= 1.9 + 0.01


def test_diagnostics_arrive_per_actuator(client: Client) -> None:
    # Any message of the node will do (the names do not change): one that came during
    # the earlier tests, else the next (once a second).
    client.spin_until(lambda: bool(client.diagnostics), 10.0, "/diagnostics")
    names = [s.name for s in client.diagnostics[-1].status]
    for dof in NAMES:
        assert any(n.endswith(f": {dof}") for n in names), names
    assert any("bus arm_bus" in n for n in names)


def test_estop_cuts_torque_and_enable_recovers(client: Client) -> None:
    from std_srvs.srv import SetBool, Trigger

    reply = client.call(client.estop, Trigger.Request())
    assert reply.success, reply.message
    client.diagnostics.clear()
    client.spin_until(lambda: any(s.message.startswith("estop") for d in client.diagnostics
                                  for s in d.status), 10.0, "estop in /diagnostics")
    reply = client.call(client.enable, SetBool.Request(data=True))
    assert reply.success, reply.message


def test_estop_topic(client: Client) -> None:
    from std_msgs.msg import Bool
    from std_srvs.srv import SetBool

    reply = client.call(client.enable, SetBool.Request(data=True))
    assert reply.success
    client.spin_until(lambda: client.estop_topic.get_subscription_count() > 0, 10.0,
                      "the estop subscription")
    client.estop_topic.publish(Bool(data=True))
    client.diagnostics.clear()
    client.spin_until(lambda: any(s.message.startswith("estop") for d in client.diagnostics
                                  for s in d.status), 10.0, "estop in /diagnostics")


def test_missing_parameters_stop_the_node_with_a_message(ros_env: dict[str, str]) -> None:
    cmd = [sys.executable, "-c", "from skel_ros.nodes.hardware_node import main; main()",
           "--ros-args", "-p", "control_rate:=-3.0"]
    result = subprocess.run(cmd, capture_output=True, text=True, env=ros_env, timeout=60,
                            check=False)
    assert result.returncode == 2
    assert "skel_file is required" in result.stderr
    assert "control_rate must be in" in result.stderr

