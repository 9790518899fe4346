"""The hardware node as a managed (lifecycle) node, on emulated Dynamixel servos.

ros2_control's meaning of the states: inactive = communicating with torque off, active =
torque on holding the measured positions. The servos are the test's own emulator (the
node reaches them through ``port:=``), so torque is checked where it matters: on the
servos, after each transition, including after the node has let go of the bus.

The transitions go through rclpy's lifecycle services (``~/change_state``,
``~/get_state``) over real DDS, from a node in a subprocess; the error path (a torque-off
the control loop does not confirm) runs in-process, where the test can stall the loop.
Waits spin with generous timeouts, never sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from polling import spin_until
from service_call import spin_call

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = [pytest.mark.ros, pytest.mark.timeout(240)]

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("lifecycle_msgs")
pytest.importorskip("skel_ros.hardware.dynamixel")

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
IDS = (1, 2, 3, 4)
NS = "/lc"
NODE = f"{NS}/hardware_node"
TIMEOUT = 60.0  # s: generous, the machine is shared


@pytest.fixture(scope="module")
def servos() -> Iterator[Any]:
    """The arm's four emulated Dynamixel servos, owned by the module's tests.

    One process for both tests that use it (a start takes about a second): each node
    opens the servos with torque off and leaves them so; the tests read torque now and
    the last torque write, never the history, and set the positions they need.
    """
    from skel_ros.emulation import emulator_for
    from skel_ros.hardware import load_hardware_config

    config = load_hardware_config(ARM_YAML)
    (bus,) = config.buses
    emulator = emulator_for(bus.protocol)(bus.transport,
                                          [m.actuator for m in config.joints_on(bus.name)], {})
    try:
        yield emulator
    finally:
        emulator.stop()


def _torque(servos: Any) -> list[bool]:
    return [servos.state(i).torque_enabled for i in IDS]


def _last_torque_writes(servos: Any) -> list[int]:
    return [servos.torque_writes(i)[-1][1] for i in IDS]


class Probe:
    """A client node: the lifecycle services, ``~/enable``, ``joint_states``."""

    def __init__(self, context: Any, node: str = NODE) -> None:
        from lifecycle_msgs.srv import ChangeState, GetState
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from std_srvs.srv import SetBool

        self.node = rclpy.create_node("lifecycle_probe", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.states: list[Any] = []
        self.node.create_subscription(JointState, f"{NS}/joint_states", self.states.append, 10)
        self.change = self.node.create_client(ChangeState, f"{node}/change_state")
        self.get = self.node.create_client(GetState, f"{node}/get_state")
        self.enable_client = self.node.create_client(SetBool, f"{node}/enable")
        self.proc: subprocess.Popen[str] | None = None

    def spin_until(self, done: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
        spin_until(self.executor, done, what, timeout, check=lambda: self._check_node(what))

    def _check_node(self, what: str = "an answer") -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"the node exited ({self.proc.returncode}) waiting for {what}")

    def call(self, client: Any, request: Any, *, idempotent: bool) -> Any:
        """The answer; asked for again when lost if ``idempotent`` (test/service_call.py)."""
        return spin_call(self.executor, client, request, idempotent=idempotent,
                         timeout=TIMEOUT, check=self._check_node)

    def state(self) -> str:
        from lifecycle_msgs.srv import GetState

        return str(self.call(self.get, GetState.Request(), idempotent=True).current_state.label)

    def transition(self, transition_id: int) -> bool:
        from lifecycle_msgs.msg import Transition
        from lifecycle_msgs.srv import ChangeState

        reply = self.call(self.change, ChangeState.Request(  # a second one would be refused
            transition=Transition(id=transition_id)), idempotent=False)
        return bool(reply.success)

    def enable(self, on: bool) -> Any:
        from std_srvs.srv import SetBool

        return self.call(self.enable_client, SetBool.Request(data=on), idempotent=True)

    def joint_states_publishers(self) -> int:
        return int(self.node.count_publishers(f"{NS}/joint_states"))

    def fresh_state(self) -> Any:
        seen = len(self.states)
        self.spin_until(lambda: len(self.states) > seen, "joint_states")
        return self.states[-1]


@pytest.fixture
def probe(ros_env: dict[str, str]) -> Iterator[Probe]:
    context = rclpy.Context()
    rclpy.init(context=context)
    p = Probe(context)
    try:
        yield p
    finally:
        p.node.destroy_node()
        rclpy.try_shutdown(context=context)


def _start(ros_env: dict[str, str], log: Path, *params: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-c", "from skel_ros.nodes.hardware_node import main; main()",
           "--ros-args", "-r", f"__ns:={NS}", "-p", f"skel_file:={ARM}",
           "-p", f"hardware_config:={ARM_YAML}", "-p", "autostart:=unconfigured"]
    for p in params:
        cmd += ["-p", p]
    with log.open("w") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True,
                                env=ros_env, start_new_session=True)


def _stop(proc: subprocess.Popen[str], log: Path) -> str:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    return log.read_text()


def _activate_holds(probe: Probe, servos: Any) -> None:
    """activate: torque on, holding where the joints are (nothing jumps)."""
    from lifecycle_msgs.msg import Transition

    before = probe.fresh_state()
    servo_before = [servos.state(i).position for i in IDS]
    assert probe.transition(Transition.TRANSITION_ACTIVATE)
    assert probe.state() == "active"
    assert _torque(servos) == [True] * 4
    after = probe.fresh_state()
    assert list(after.name) == list(before.name)
    for a, b in zip(after.position, before.position, strict=True):
        assert abs(a - b) < 0.02
    for i, q in zip(IDS, servo_before, strict=True):
        assert abs(servos.state(i).position - q) < 0.02


def test_each_transition_sets_torque_on_the_servos(probe: Probe, servos: Any,
                                                   ros_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    from lifecycle_msgs.msg import Transition

    log = tmp_path / "node.log"
    probe.proc = _start(ros_env, log, f"port:={servos.transport['port']}")
    try:
        assert probe.state() == "unconfigured"
        reply = probe.enable(True)
        assert not reply.success
        assert "configure" in reply.message
        assert probe.joint_states_publishers() == 0
        assert _torque(servos) == [False] * 4

        # configure: the buses open, torque stays off, the measurements are published.
        assert probe.transition(Transition.TRANSITION_CONFIGURE)
        assert probe.state() == "inactive"
        assert _torque(servos) == [False] * 4
        _activate_holds(probe, servos)

        # ~/enable false from active is the deactivate transition; true activates again.
        reply = probe.enable(False)
        assert reply.success, reply.message
        assert probe.state() == "inactive"
        assert _torque(servos) == [False] * 4
        assert _last_torque_writes(servos) == [0] * 4
        reply = probe.enable(True)
        assert reply.success, reply.message
        assert probe.state() == "active"
        assert _torque(servos) == [True] * 4

        # deactivate: torque off.
        assert probe.transition(Transition.TRANSITION_DEACTIVATE)
        assert probe.state() == "inactive"
        assert _torque(servos) == [False] * 4

        # cleanup: the bus is let go, the configured topics disappear.
        assert probe.transition(Transition.TRANSITION_CLEANUP)
        assert probe.state() == "unconfigured"
        probe.spin_until(lambda: probe.joint_states_publishers() == 0,
                         "joint_states to lose its publisher")
        assert _torque(servos) == [False] * 4

        # configured again (same parameters), activated, then shut down from active.
        assert probe.transition(Transition.TRANSITION_CONFIGURE)
        assert probe.state() == "inactive"
        probe.fresh_state()
        assert probe.transition(Transition.TRANSITION_ACTIVATE)
        assert _torque(servos) == [True] * 4
        assert probe.transition(Transition.TRANSITION_ACTIVE_SHUTDOWN)
        assert probe.state() == "finalized"
        assert _torque(servos) == [False] * 4
        assert _last_torque_writes(servos) == [0] * 4
        assert probe.proc.poll() is None  # finalized, still answering
    finally:
        output = _stop(probe.proc, log)
    assert probe.proc.returncode == 0, output
    assert "Traceback" not in output, output


def test_configure_without_the_device_fails_back_to_unconfigured(
        probe: Probe, ros_env: dict[str, str], tmp_path: Path) -> None:
    from lifecycle_msgs.msg import Transition

    port = tmp_path / "ttyUSB9"
    log = tmp_path / "node.log"
    probe.proc = _start(ros_env, log, f"port:={port}", "connect_timeout:=1.0")
    try:
        assert probe.state() == "unconfigured"
        assert not probe.transition(Transition.TRANSITION_CONFIGURE)
        assert probe.state() == "unconfigured"
        # The failed configure's publishers are destroyed; the graph says so a moment later.
        probe.spin_until(lambda: probe.joint_states_publishers() == 0,
                         "joint_states to lose the failed configure's publisher")
        # Not possible from unconfigured: answered false, and the node goes on.
        assert not probe.transition(Transition.TRANSITION_ACTIVATE)
        assert probe.state() == "unconfigured"
        assert not probe.enable(True).success
    finally:
        output = _stop(probe.proc, log)
    assert probe.proc.returncode == 0, output
    assert "configure failed: not connected after connect_timeout" in output
    assert str(port) in output
    assert "Traceback" not in output, output


def _soon(condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` holds within TIMEOUT (polled each millisecond)."""
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True


def test_autostart_active_refusal_and_error_processing(ros_env: dict[str, str],
                                                       servos: Any) -> None:
    """In-process: autostart active, an activate refused, a torque-off not confirmed.

    Shoulder pitch starts outside its limits: autostart's activate is refused and the
    node stays inactive with torque off. Once it is back inside, activate succeeds. Then
    the control loop is stalled (the test holds its I/O lock) while deactivate asks for
    torque off: not confirmed -> ERROR -> on_error, whose teardown switches torque off as
    soon as the bus is free and closes it: unconfigured, torque off on every servo.
    """
    from rclpy.lifecycle import TransitionCallbackReturn
    from rclpy.parameter import Parameter

    from skel_ros.nodes.hardware_node import HardwareNode

    servos.set_position(2, 2.0)  # direction -1: the joint at -2.0, limits [-1.5, 1.5]
    context = rclpy.Context()
    rclpy.init(context=context)
    node = None
    try:
        node = HardwareNode(context=context, node_name="hardware_node", parameter_overrides=[
            Parameter("skel_file", value=str(ARM)),
            Parameter("hardware_config", value=str(ARM_YAML)),
            Parameter("port", value=servos.transport["port"]),
            Parameter("autostart", value="active"),
        ])
        probe = Probe(context, node="/hardware_node")
        probe.executor.add_node(node)
        assert probe.state() == "inactive"
        assert not node.active
        assert _torque(servos) == [False] * 4

        servos.set_position(2, 0.0)
        probe.spin_until(lambda: node.backend.status().position[1] > -0.1,
                         "the measured shoulder pitch back inside its limits")
        reply = probe.enable(True)
        assert reply.success, reply.message
        assert probe.state() == "active"
        assert _torque(servos) == [True] * 4

        backend, runner = node.backend, node.runner
        stalled = threading.Event()

        def stall() -> None:
            with backend._io:
                stalled.set()
                # Until on_error's teardown stops the loop (it has given up on the loop
                # thread and waits for the bus); 30 s at most.
                poll = threading.Event()
                for _ in range(3000):
                    if not runner.running:
                        break
                    poll.wait(0.01)

        holder = threading.Thread(target=stall)
        holder.start()
        stalled.wait(TIMEOUT)
        # The loop's next cycle blocks on the bus holding the core's lock: deactivate must
        # not wait for it longer than its own bound (a deactivate that waited as long as the
        # loop was stuck ended in SUCCESS 30 s later on a loaded CI run).
        assert _soon(lambda: runner.lock._depth > 0), "the loop never took the core's lock"
        result = node.trigger_deactivate()
        holder.join(TIMEOUT)
        assert result == TransitionCallbackReturn.ERROR
        assert probe.state() == "unconfigured"
        assert node._backend is None
        assert _torque(servos) == [False] * 4
        assert _last_torque_writes(servos) == [0] * 4
        # Error processing ended in unconfigured: configure works again.
        assert node.trigger_configure() == TransitionCallbackReturn.SUCCESS
        assert probe.state() == "inactive"
        probe.node.destroy_node()
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
