"""The robot nodes as ros2_control hardware, through topic_based_ros2_control.

``topic_based_ros2_control/TopicBasedSystem`` (PickNik; continued in ros-controls'
topic_based_hardware_interfaces as ``joint_state_topic_hardware_interface/
JointStateTopicSystem``, same conventions) is a ros2_control hardware plugin that talks to
a robot over two topics. :class:`TopicBasedSystem` below does what its ``read()`` and
``write()`` do (docs/ros2_control.md lists the conventions, from the plugin's source):

* it **subscribes** ``joint_states_topic`` (default ``/robot_joint_states``) with
  ``SensorDataQoS`` (best effort, volatile, keep last 5) and keeps the latest message;
  ``read()`` copies, for every name of the message that is a joint of its
  ``<ros2_control>`` tag, ``position[i]`` (always read), ``velocity[i]`` and
  ``effort[i]`` (when those arrays are not empty); other names are ignored;
* it **publishes** ``joint_commands_topic`` (default ``/robot_joint_commands``) with
  ``rclcpp::QoS(1)`` (reliable, volatile, keep last 1) a JointState with *every* joint
  of the tag in tag order, ``header.stamp`` = now and ``position`` filled (a tag whose
  joints have a ``position`` command interface), velocity and effort empty;
* at the controller manager's ``update_rate``, but **only while** the sum over the
  joints of ``|state position - command position|`` exceeds
  ``trigger_joint_command_threshold`` (1e-5): a robot that has reached its command
  gets no commands at all;
* state and command start at the state interfaces' ``initial_value`` (else 0).

The plugin is configured from the tag ``skel-ros ros2-control`` writes (topics, joints,
initial values). The controller is what joint_trajectory_controller does at activation
(command = the state read) followed by a step to a new position. The nodes run as
processes, over real DDS (loopback, the session's domain).
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
from lxml import etree

from skel_ros.cli.main import main

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

REPO = Path(__file__).resolve().parents[2]
JOINTS = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]  # the arm's DOFs
UPDATE_RATE = 100.0  # Hz, the controller manager's update_rate
THRESHOLD = 1e-5  # trigger_joint_command_threshold's default


class TopicBasedSystem:
    """topic_based_ros2_control's TopicBasedSystem (module docstring), driven by a loop that
    does what the controller manager does each cycle: read, update the controller, write.

    Args:
        context: The rclpy context.
        tag: The ``<ros2_control>`` element: its hardware parameters, its joints (each
            with a ``position`` command interface and ``position``, ``velocity``,
            ``effort`` state interfaces) and their ``initial_value``.
    """

    def __init__(self, context: Any, tag: Any) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, qos_profile_sensor_data
        from sensor_msgs.msg import JointState

        params = {p.get("name"): p.text for p in tag.findall("hardware/param")}
        self.joints = [j.get("name") for j in tag.findall("joint")]
        assert [j.find("command_interface").get("name") for j in tag.findall("joint")] == [
            "position"] * len(self.joints)
        start = [float(j.findtext("state_interface[@name='position']/param"
                                  "[@name='initial_value']") or 0.0)
                 for j in tag.findall("joint")]
        self.node = rclpy.create_node(f"topic_based_ros2_control_{tag.get('name')}",
                                      context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.states_topic = params.get("joint_states_topic", "/robot_joint_states")
        self._commands = self.node.create_publisher(
            JointState, params.get("joint_commands_topic", "/robot_joint_commands"),
            QoSProfile(depth=1))
        self.node.create_subscription(JointState, self.states_topic, self._on_state,
                                      qos_profile_sensor_data)
        self.position = list(start)
        self.velocity = [0.0] * len(self.joints)
        self.effort = [0.0] * len(self.joints)
        self.command = list(start)
        self.latest: Any = None
        self.received = 0
        self.sent = 0
        self.states_seen: list[Any] = []

    def _on_state(self, msg: Any) -> None:
        self.latest = msg
        self.received += 1
        self.states_seen.append(msg)

    def read(self) -> None:
        """``TopicBasedSystem::read``: the latest joint_states into the state interfaces."""
        msg = self.latest
        if msg is None:
            return
        index = {name: j for j, name in enumerate(self.joints)}
        for i, name in enumerate(msg.name):
            j = index.get(name)
            if j is None:
                continue
            self.position[j] = msg.position[i]
            if len(msg.velocity):
                self.velocity[j] = msg.velocity[i]
            if len(msg.effort):
                self.effort[j] = msg.effort[i]

    def write(self) -> bool:
        """``TopicBasedSystem::write``: publish the commands unless the robot is there."""
        from sensor_msgs.msg import JointState

        diff = sum(abs(s - c) for s, c in zip(self.position, self.command, strict=True))
        if diff <= THRESHOLD:
            return False
        msg = JointState(name=list(self.joints), position=list(self.command))
        msg.header.stamp = self.node.get_clock().now().to_msg()
        self._commands.publish(msg)
        self.sent += 1
        return True

    def run(self, seconds: float, controller: Callable[[], None] | None = None, *,
            write: bool = True, until: Callable[[], bool] | None = None) -> None:
        """The controller manager's loop at :data:`UPDATE_RATE` for ``seconds`` (ROS time).

        Each cycle spins the node (``spin_some``), reads, runs ``controller`` and writes;
        ``write=False`` leaves writing out, as the plugin does once the robot is there.
        Stops early when ``until()`` is true.
        """
        clock = self.node.get_clock()
        period = int(1e9 / UPDATE_RATE)
        end = clock.now().nanoseconds + int(seconds * 1e9)
        next_cycle = clock.now().nanoseconds
        while clock.now().nanoseconds < end:
            while (now := clock.now().nanoseconds) < next_cycle:
                self.executor.spin_once(timeout_sec=(next_cycle - now) / 1e9)
            next_cycle += period
            self.read()
            if controller is not None:
                controller()
            if write:
                self.write()
            if until is not None and until():
                return

    def wait_for_state(self, timeout: float = 60.0) -> None:
        self.run(timeout, until=lambda: self.latest is not None)
        assert self.latest is not None, f"no {self.states_topic} within {timeout} s"

    def activate_controller(self) -> None:
        """As joint_trajectory_controller on activation: command = the state read now."""
        self.read()
        self.command = list(self.position)

    def error(self, target: Sequence[float]) -> float:
        return max(abs(p - t) for p, t in zip(self.position, target, strict=True))


def _start(env: dict[str, str], log: Path, module: str, *params: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-c", f"from skel_ros.nodes.{module} import main; main()",
           "--ros-args", "-r", "__ns:=/tb", *(a for p in params for a in ("-p", p))]
    with log.open("w") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env,
                                start_new_session=True)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def _tag(tmp_path: Path, *arguments: str) -> Any:
    """The ``<ros2_control>`` element of ``skel-ros ros2-control`` for the arm."""
    out = tmp_path / "arm_ros2_control.urdf"
    assert main(["ros2-control", "package://skel_ros/examples/arm.skel", *arguments,
                 "-o", str(out)]) == 0
    tags = etree.parse(str(out)).getroot().findall("ros2_control")
    assert len(tags) == 1
    return tags[0]


def test_ros2_control_tag(tmp_path: Path) -> None:
    tag = _tag(tmp_path, "--namespace", "/tb/")
    assert tag.get("type") == "system"
    assert tag.findtext("hardware/plugin") == "topic_based_ros2_control/TopicBasedSystem"
    params = {p.get("name"): p.text for p in tag.findall("hardware/param")}
    assert params == {"joint_commands_topic": "/tb/joint_commands",
                      "joint_states_topic": "/tb/joint_states"}
    assert [j.get("name") for j in tag.findall("joint")] == JOINTS
    initial = [j.findtext("state_interface[@name='position']/param[@name='initial_value']")
               for j in tag.findall("joint")]
    assert initial == ["0.0", "0.0", "0.3", "0.0"]  # the SKEL's <init_pos> (elbow)
    for joint in tag.findall("joint"):
        assert [c.get("name") for c in joint.findall("command_interface")] == ["position"]
        assert [c.get("name") for c in joint.findall("state_interface")] == [
            "position", "velocity", "effort"]
    # The URDF around it is the node's robot_description: frames under the prefix.
    links = {link.get("name") for link in tag.getparent().findall("link")}
    assert {"tb/world", "tb/base", "tb/hand"} <= links
    tag = _tag(tmp_path, "--interface", "velocity", "--frame-prefix", "")
    params = {p.get("name"): p.text for p in tag.findall("hardware/param")}
    assert params["joint_commands_topic"] == "/joint_commands"
    assert {c.get("name") for c in tag.iter("command_interface")} == {"velocity"}
    assert "world" in {link.get("name") for link in tag.getparent().findall("link")}


def test_ros2_control_tag_leaves_out_joints_that_refuse_commands(tmp_path: Path) -> None:
    """The plugin sends every joint of its tag in each message; the nodes take a message
    whole or not at all, and a passive or locked joint refuses every command."""
    from skel_ros.model import load_model
    from skel_ros.ros2_control import ros2_control_urdf

    text = (REPO / "examples" / "arm.skel").read_text()
    assert text.count('name="elbow" actuator="force"') == 1
    model = tmp_path / "arm.skel"
    model.write_text(text.replace('name="elbow" actuator="force"',
                                  'name="elbow" actuator="passive"'))
    world = load_model(model)
    urdf = ros2_control_urdf('<robot name="arm"><link name="world"/></robot>', world,
                             commands_topic="/c", states_topic="/s")
    tag = etree.fromstring(urdf.encode()).find("ros2_control")
    assert [j.get("name") for j in tag.findall("joint")] == ["shoulder_yaw", "shoulder_pitch",
                                                             "wrist"]
    with pytest.raises(ValueError, match="absolute"):
        ros2_control_urdf(urdf, world, commands_topic="joint_commands", states_topic="/s")
    with pytest.raises(ValueError, match="command interface"):
        ros2_control_urdf(urdf, world, commands_topic="/c", states_topic="/s",
                          command_interface="torque")


@pytest.fixture
def system(ros_env: dict[str, str], tmp_path: Path) -> Iterator[TopicBasedSystem]:
    context = rclpy.Context()
    rclpy.init(context=context)
    tb = TopicBasedSystem(context, _tag(tmp_path, "--namespace", "tb"))
    assert tb.joints == JOINTS
    yield tb
    tb.node.destroy_node()
    rclpy.try_shutdown(context=context)


def _check_states_are_what_the_plugin_reads(tb: TopicBasedSystem) -> None:
    """Every joint_states message: names of the tag, a finite position per name, velocity
    and effort empty or one finite value per name (the plugin copies them unchecked)."""
    assert tb.states_seen
    for msg in tb.states_seen:
        assert set(msg.name) <= set(JOINTS)
        assert len(msg.position) == len(msg.name)
        for field in (msg.position, msg.velocity, msg.effort):
            assert len(field) in (0, len(msg.name))
            assert all(math.isfinite(v) for v in field)


def test_sim_node_as_topic_based_hardware(ros_env: dict[str, str], tmp_path: Path,
                                          system: TopicBasedSystem) -> None:
    proc = _start(ros_env, tmp_path / "sim.log", "sim_node",
                  f"skel_file:={REPO / 'examples' / 'arm.skel'}")
    tb = system
    try:
        tb.wait_for_state()
        tb.activate_controller()
        target = [0.4, 0.3, 0.6, -0.5]

        def step() -> None:
            tb.command = list(target)

        tb.run(20.0, step, until=lambda: tb.error(target) < 0.02)
        assert tb.error(target) < 0.02, (tb.position, (tmp_path / "sim.log").read_text()[-2000:])
        assert tb.sent > 0
        # There: the plugin would stop writing once within the threshold. The simulation
        # keeps holding without commands (command_timeout 0, its default): 1 s, a hundred
        # joint_states.
        tb.run(1.0, write=False)
        assert tb.error(target) < 0.02, tb.position
        _check_states_are_what_the_plugin_reads(tb)
        assert proc.poll() is None
    finally:
        _stop(proc)


def test_hardware_node_as_topic_based_hardware(ros_env: dict[str, str], tmp_path: Path,
                                               system: TopicBasedSystem) -> None:
    """Emulated Dynamixel servos; the YAML's command_timeout (0.5 s) and safe_state hold."""
    from std_srvs.srv import SetBool

    from skel_ros.nodes.service_calls import ServiceCall, ServiceTimeoutError

    log = tmp_path / "hw.log"
    proc = _start(ros_env, log, "hardware_node",
                  f"skel_file:={REPO / 'examples' / 'arm.skel'}",
                  f"hardware_config:={REPO / 'config' / 'hardware' / 'arm_dynamixel.yaml'}",
                  "emulate:=true")
    tb = system
    enable = tb.node.create_client(SetBool, "/tb/hardware_node/enable")
    try:
        tb.wait_for_state()
        # Controllers first, then torque: the plugin's commands are the state by then.
        tb.activate_controller()
        # The loop runs on while ~/enable is called (idempotent: asked again if lost).
        enabling = ServiceCall(enable, SetBool.Request(data=True), idempotent=True,
                               timeout=20.0)
        try:
            tb.run(30.0, until=lambda: enabling.poll() is not None)
        except ServiceTimeoutError as exc:
            pytest.fail(f"{exc}\n{log.read_text()[-2000:]}")
        assert enabling.response.success, enabling.response.message
        target = [0.3, -0.2, 0.5, 0.4]

        def step() -> None:
            tb.command = list(target)

        tb.run(20.0, step, until=lambda: tb.error(target) < 0.01)
        assert tb.error(target) < 0.01, (tb.position, log.read_text()[-2000:])
        # No commands while the robot is there: twice command_timeout, and the watchdog's
        # safe state (hold) keeps the joints where they are, torque on.
        tb.run(1.0, write=False)
        assert tb.error(target) < 0.01, tb.position
        # The next command moves again.
        target = [0.0, 0.0, 0.3, 0.0]
        tb.run(20.0, step, until=lambda: tb.error(target) < 0.01)
        assert tb.error(target) < 0.01, (tb.position, log.read_text()[-2000:])
        _check_states_are_what_the_plugin_reads(tb)
        assert proc.poll() is None
    finally:
        _stop(proc)
