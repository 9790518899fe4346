"""sim_node in its own process, a real test node here (rclpy over Fast DDS on localhost).

One node process serves the whole module (it takes a few seconds to start); each test
leaves it running, unpaused, with the pendulum's commands replaced by its own. Times
are checked in *simulated* time (message stamps), never in wall-clock time; spinning
is bounded so a broken node fails the test instead of hanging it.
"""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from polling import spin_until
from service_call import spin_call

from skel_ros.model import Kinematics, load_skel
from skel_ros.model.urdf import world_to_urdf

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

REPO = Path(__file__).resolve().parents[2]
SIM_NODE = REPO / ".venv" / "bin" / "sim_node"

# Two skeletons with bodies, so every name is "<skeleton>/<name>". The pendulum hangs
# from a welded mount (-> /tf_static); its universal joint adds an intermediate URDF link;
# its joints' frames are not their child bodies' (fixed URDF joints close them).
WORLD = """<?xml version="1.0"?>
<skel version="1.0"><world name="pendulum world">
  <physics><time_step>0.001</time_step><gravity>0 0 -9.81</gravity>
    <collision_detector>fcl</collision_detector></physics>
  <skeleton name="pendulum">
    <body name="mount"><transformation>0 0 1.0 0 0 0</transformation>
      <inertia><mass>1.0</mass></inertia>
      <visualization_shape><geometry><box><size>0.1 0.1 0.05</size></box></geometry>
        <color>0.3 0.3 0.3</color></visualization_shape></body>
    <body name="rod"><transformation>0 0 0.75 0 0 0</transformation>
      <inertia><mass>0.5</mass></inertia>
      <visualization_shape><geometry><capsule><radius>0.02</radius><height>0.4</height>
        </capsule></geometry><color>0.1 0.4 0.8</color></visualization_shape></body>
    <body name="bob"><transformation>0 0 0.5 0 0 0</transformation>
      <inertia><mass>0.3</mass></inertia>
      <visualization_shape><geometry><sphere><radius>0.05</radius></sphere></geometry>
        </visualization_shape></body>
    <joint type="weld" name="fixture"><parent>world</parent><child>mount</child></joint>
    <joint type="revolute" name="hinge"><parent>mount</parent><child>rod</child>
      <transformation>0 0 0.25 0 0 0</transformation>
      <axis><xyz>0 1 0</xyz><limit><lower>-1.2</lower><upper>1.2</upper></limit></axis>
    </joint>
    <joint type="universal" name="wrist"><parent>rod</parent><child>bob</child>
      <transformation>0 0 0.05 0 0 0</transformation>
      <axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2>
      <init_pos>0.1 -0.2</init_pos></joint>
  </skeleton>
  <skeleton name="floor">
    <mobile>false</mobile>
    <body name="slab"><inertia><mass>10</mass></inertia>
      <visualization_shape><geometry><box><size>2 2 0.02</size></box></geometry>
        </visualization_shape></body>
    <joint type="weld" name="floor_weld"><parent>world</parent><child>slab</child></joint>
  </skeleton>
</world></skel>
"""
NAMES = ["pendulum/hinge", "pendulum/wrist_1", "pendulum/wrist_2"]
PREFIX = "sim/"
JS_RATE = 200.0
TF_RATE = 50.0
DT = 0.001
SPIN_LIMIT = 60.0  # s of spinning before a wait gives up (a bound, not a measurement)


@dataclass
class Seen:
    """What the test node has received."""

    joint_states: list[Any] = field(default_factory=list)
    tf: list[Any] = field(default_factory=list)
    clock: list[float] = field(default_factory=list)


def _seconds(stamp: Any) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


class Probe:
    """The test's node: subscriptions, service calls, bounded spinning."""

    def __init__(self, context: Any) -> None:
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage
        from trajectory_msgs.msg import JointTrajectory

        self.node = rclpy.create_node("sim_node_probe", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.seen = Seen()
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(JointState, "/sim/joint_states",
                                      self.seen.joint_states.append, qos)
        self.node.create_subscription(TFMessage, "/tf", self.seen.tf.append, qos)
        self.node.create_subscription(Clock, "/clock",
                                      lambda m: self.seen.clock.append(_seconds(m.clock)), qos)
        self.commands = self.node.create_publisher(JointState, "/sim/joint_commands", 10)
        self.trajectory = self.node.create_publisher(JointTrajectory, "/sim/joint_trajectory", 10)
        self._clients: dict[str, Any] = {}

    def spin_until(self, condition: Callable[[], bool], what: str,
                   limit: float = SPIN_LIMIT) -> None:
        spin_until(self.executor, condition, what, limit, step=0.05)

    def latest_time(self) -> float:
        return _seconds(self.seen.joint_states[-1].header.stamp) if self.seen.joint_states \
            else -1.0

    def wait_sim(self, seconds: float) -> float:
        """Spin until joint_states stamped ``seconds`` later than now arrive; the new time."""
        self.spin_until(lambda: bool(self.seen.joint_states), "joint_states")
        target = self.latest_time() + seconds
        self.spin_until(lambda: self.latest_time() >= target, f"simulated time {target:g} s")
        return self.latest_time()

    def position(self, name: str) -> float:
        msg = self.seen.joint_states[-1]
        return float(msg.position[list(msg.name).index(name)])

    def client(self, srv_type: Any, name: str) -> Any:
        """The client of service ``name``, made on first use and kept: only its first call
        waits for discovery."""
        if name not in self._clients:
            self._clients[name] = self.node.create_client(srv_type, name)
        return self._clients[name]

    def call(self, srv_type: Any, name: str, request: Any, *, idempotent: bool) -> Any:
        """The answer of service ``name``; asked for again when lost if ``idempotent``."""
        return spin_call(self.executor, self.client(srv_type, name), request,
                         idempotent=idempotent, timeout=SPIN_LIMIT)

    def command(self, names: list[str], **fields: list[float]) -> None:
        from sensor_msgs.msg import JointState

        msg = JointState()
        msg.name = names
        for key, values in fields.items():
            setattr(msg, key, values)
        self.spin_until(lambda: self.commands.get_subscription_count() > 0, "a subscriber")
        self.commands.publish(msg)


@dataclass
class SimProcess:
    proc: subprocess.Popen[bytes]
    log: Path
    skel: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _start(env: dict[str, str], log: Path, **params: str) -> subprocess.Popen[bytes]:
    args = [str(SIM_NODE), "--ros-args", "-r", "__ns:=/sim"]
    for name, value in params.items():
        args += ["-p", f"{name}:={value}"]
    with log.open("wb") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def sim(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcess]:
    tmp = tmp_path_factory.mktemp("sim_node")
    skel = tmp / "pendulum.skel"
    skel.write_text(WORLD, encoding="utf-8")
    log = tmp / "sim_node.log"
    proc = _start(ros_env, log, skel_file=str(skel), frame_prefix=PREFIX,
                  joint_states_rate=str(JS_RATE), tf_rate=str(TF_RATE), real_time_factor="1.0")
    try:
        yield SimProcess(proc, log, skel)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def probe(sim: SimProcess) -> Iterator[Probe]:
    context = rclpy.Context()
    rclpy.init(context=context)
    p = Probe(context)
    try:
        p.spin_until(lambda: len(p.seen.joint_states) > 2 or sim.proc.poll() is not None,
                     "the first joint_states")
        assert sim.proc.poll() is None, sim.output()
        yield p
    finally:
        p.node.destroy_node()
        rclpy.shutdown(context=context)
    assert sim.proc.poll() is None, f"sim_node died:\n{sim.output()}"


def _world(sim: SimProcess) -> Any:
    return load_skel(sim.skel)


# ----------------------------------------------------------------------------- streams


def test_joint_states_rate_and_names(probe: Probe) -> None:
    first = len(probe.seen.joint_states)
    probe.spin_until(lambda: len(probe.seen.joint_states) >= first + 100, "100 joint_states")
    msgs = probe.seen.joint_states[first:]
    for msg in msgs:
        assert list(msg.name) == NAMES
        assert len(msg.position) == len(msg.velocity) == len(msg.effort) == 3
    stamps = np.array([_seconds(m.header.stamp) for m in msgs])
    assert (np.diff(stamps) > 0).all()
    rate = (len(stamps) - 1) / (stamps[-1] - stamps[0])
    assert rate == pytest.approx(JS_RATE, rel=0.10)
    # None lost either: every 5 ms of simulated time has its message.
    np.testing.assert_allclose(np.diff(stamps), 1.0 / JS_RATE, atol=DT / 2)


def test_clock_advances_with_simulated_time(probe: Probe) -> None:
    start = len(probe.seen.clock)
    probe.wait_sim(0.2)
    clock = np.array(probe.seen.clock[start:])
    assert clock.size > 10
    assert (np.diff(clock) > 0).all()
    stamps = {_seconds(m.header.stamp) for m in probe.seen.joint_states}
    # /clock runs at max(100 Hz, joint_states_rate, tf_rate) = the joint_states rate here.
    assert set(clock[-10:].tolist()) <= stamps


def _chain(frames: dict[str, tuple[str, np.ndarray]], frame: str, root: str) -> np.ndarray:
    out = np.eye(4)
    while frame != root:
        parent, t = frames[frame]
        out = t @ out
        frame = parent
    return out


def _matrix(tf: Any) -> np.ndarray:
    x, y, z, w = tf.rotation.x, tf.rotation.y, tf.rotation.z, tf.rotation.w
    out = np.eye(4)
    out[:3, :3] = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                   [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                   [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    out[:3, 3] = [tf.translation.x, tf.translation.y, tf.translation.z]
    return out


def test_tf_equals_our_kinematics(sim: SimProcess, probe: Probe) -> None:
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    static: list[Any] = []
    probe.node.create_subscription(TFMessage, "/tf_static", static.append, QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL))
    probe.spin_until(lambda: bool(static), "/tf_static (transient local)")
    start = len(probe.seen.tf)
    probe.spin_until(lambda: len(probe.seen.tf) > start + 2, "/tf")
    tf = probe.seen.tf[-1]
    stamp = _seconds(tf.transforms[0].header.stamp)
    assert all(_seconds(t.header.stamp) == stamp for t in tf.transforms)

    def matching() -> list[Any]:
        return [m for m in probe.seen.joint_states if _seconds(m.header.stamp) == stamp]

    # Published on the same simulated instants; the two topics' deliveries are not ordered.
    probe.spin_until(lambda: bool(matching()), "a joint_states message of /tf's instant")
    q = np.array(matching()[-1].position)

    frames = {t.child_frame_id: (t.header.frame_id, _matrix(t.transform))
              for msg in (static[-1], tf) for t in msg.transforms}
    # Fixed URDF joints: the welds, and the joints closing the hinge and the wrist (their
    # child frames are not their joint frames), as robot_state_publisher sends them.
    assert {t.child_frame_id for t in static[-1].transforms} == {
        "sim/pendulum/mount", "sim/floor/slab", "sim/pendulum/rod", "sim/pendulum/bob"}
    world = _world(sim)
    pendulum = world.skeleton("pendulum")
    expected = Kinematics(pendulum).body_transforms(q)
    for body, want in zip(pendulum.bodies, expected, strict=True):
        got = _chain(frames, f"sim/pendulum/{body.name}", "sim/world")
        np.testing.assert_allclose(got, want, atol=1e-9, err_msg=body.name)
    np.testing.assert_allclose(_chain(frames, "sim/floor/slab", "sim/world"),
                               Kinematics(world.skeleton("floor")).body_transforms()[0], atol=1e-12)
    # The universal joint's intermediate URDF link is there, child of the rod.
    assert frames["sim/pendulum/wrist_1__link"][0] == "sim/pendulum/rod"


def test_robot_description_and_markers_reach_a_late_subscriber(sim: SimProcess,
                                                               probe: Probe) -> None:
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from std_msgs.msg import String
    from visualization_msgs.msg import Marker, MarkerArray

    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    description: list[Any] = []
    markers: list[Any] = []
    # The node has been publishing for a while: these subscribers are late joiners.
    probe.node.create_subscription(String, "/sim/robot_description", description.append, latched)
    probe.node.create_subscription(MarkerArray, "/sim/sim_node/markers", markers.append, latched)
    probe.spin_until(lambda: bool(description) and bool(markers), "latched messages")
    assert description[0].data == world_to_urdf(_world(sim), frame_prefix=PREFIX,
                                                 world_link=PREFIX + "world")
    kinds = sorted((m.header.frame_id, m.type) for m in markers[0].markers)
    assert kinds == sorted([("sim/pendulum/mount", Marker.CUBE),
                            ("sim/pendulum/rod", Marker.CYLINDER),  # capsule: cylinder + caps
                            ("sim/pendulum/rod", Marker.SPHERE),
                            ("sim/pendulum/rod", Marker.SPHERE),
                            ("sim/pendulum/bob", Marker.SPHERE), ("sim/floor/slab", Marker.CUBE)])
    assert all(m.frame_locked for m in markers[0].markers)
    cube = next(m for m in markers[0].markers if m.header.frame_id == "sim/pendulum/mount")
    assert (cube.scale.x, cube.scale.y, cube.scale.z) == pytest.approx((0.1, 0.1, 0.05))
    assert (cube.color.r, cube.color.g, cube.color.b, cube.color.a) == pytest.approx(
        (0.3, 0.3, 0.3, 1.0))


# ----------------------------------------------------------------------------- commands


def test_position_command_reaches_the_target(probe: Probe) -> None:
    probe.command(NAMES, position=[0.5, 0.0, 0.0])
    probe.wait_sim(1.0)
    # Critically damped PD at 20 rad/s: within 0.01 rad after 1 s of simulated time (in
    # both engines it is within 0.001 rad after 0.3 s; 1 s leaves room for the delivery).
    assert probe.position("pendulum/hinge") == pytest.approx(0.5, abs=0.01)
    assert probe.position("pendulum/wrist_1") == pytest.approx(0.0, abs=0.01)


def test_out_of_limit_command_is_clamped_and_reported(sim: SimProcess, probe: Probe) -> None:
    probe.command(["pendulum/hinge"], position=[3.0])
    probe.wait_sim(1.0)  # settled at the limit after 0.3 s in both engines
    assert probe.position("pendulum/hinge") == pytest.approx(1.2, abs=0.02)
    highest = max(m.position[0] for m in probe.seen.joint_states[-300:])  # 1.5 s: all of it
    assert highest <= 1.2 + 0.02
    probe.spin_until(lambda: "'pendulum/hinge' 3 -> 1.2" in sim.output(), "the clamp report")
    assert "joint_commands: position command clamped to limits" in sim.output()


def test_trajectory_is_followed_in_simulated_time(probe: Probe) -> None:
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.nodes.names import stamp_from_seconds

    probe.command(NAMES, position=[0.0, 0.0, 0.0])
    probe.wait_sim(0.6)  # at rest at 0 (from the limit, 1.2 rad away: after 0.3 s)
    msg = JointTrajectory()
    msg.joint_names = ["pendulum/hinge"]
    msg.points = [JointTrajectoryPoint(positions=[0.6], velocities=[0.0],
                                       time_from_start=Duration(sec=1, nanosec=0))]
    probe.spin_until(lambda: probe.trajectory.get_subscription_count() > 0, "a subscriber")
    # The header stamp starts it at a known simulated time, 0.5 s ahead: however late the
    # message arrives within that (the first message of a new publisher can wait for the
    # subscriber's side of discovery; on a loaded machine CI saw it start 0.4 s late when
    # it started on receipt), the halfway point below is 0.5 s into the motion.
    start = probe.latest_time() + 0.5
    msg.header.stamp = stamp_from_seconds(start)
    probe.trajectory.publish(msg)
    probe.spin_until(lambda: probe.latest_time() >= start + 0.5, "0.5 s into the trajectory")
    halfway = probe.position("pendulum/hinge")
    assert 0.1 < halfway < 0.5, halfway  # cubic from 0 to 0.6: 0.3 at 0.5 s, tracking lag
    probe.spin_until(lambda: probe.latest_time() >= start + 2.0, "the end of the trajectory")
    assert probe.position("pendulum/hinge") == pytest.approx(0.6, abs=0.01)


@pytest.mark.parametrize(
    ("fields", "names", "problem"),
    [
        ({"position": [0.1]}, ["pendulum/hinj"], "unknown joint 'pendulum/hinj'; did you mean"),
        ({"position": [0.1, 0.2]}, ["pendulum/hinge"], "1 names but 2 position values"),
        ({"position": [math.nan]}, ["pendulum/hinge"],
         "position of joint 'pendulum/hinge' is nan, not a finite number"),
        ({"velocity": [math.inf]}, ["pendulum/hinge"], "is inf, not a finite number"),
        ({"position": [0.1], "effort": [1.0]}, ["pendulum/hinge"],
         "fill exactly one of position, velocity, effort (filled: position, effort)"),
        ({"position": [0.1]}, ["hinge"], "unknown joint 'hinge'"),
        ({"velocity": [0.1]}, ["pendulum/hinge"], "takes effort or position commands"),
    ],
)
def test_bad_commands_are_rejected_with_a_warning(sim: SimProcess, probe: Probe,
                                                  fields: dict[str, list[float]],
                                                  names: list[str], problem: str) -> None:
    probe.command(names, **fields)
    probe.spin_until(lambda: problem in sim.output(), f"the warning {problem!r}")
    probe.wait_sim(0.05)  # still stepping and publishing
    assert sim.proc.poll() is None


def test_bad_trajectories_are_rejected_and_the_node_goes_on(sim: SimProcess,
                                                            probe: Probe) -> None:
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    def point(t: int, *positions: float) -> JointTrajectoryPoint:
        return JointTrajectoryPoint(positions=list(positions),
                                    time_from_start=Duration(sec=t, nanosec=0))

    bad = [
        (["pendulum/hinge"], [point(2, 0.1), point(1, 0.2)], "times must be strictly increasing"),
        (["pendulum/hinge"], [point(1, 0.1, 0.2)], "1 names but 2 point 0 positions values"),
        (["pendulum/hinge", "pendulum/hinge"], [point(1, 0.1, 0.1)], "appears twice"),
        (["pendulum/hinge"], [point(1, math.nan)], "is nan, not a finite number"),
    ]
    probe.spin_until(lambda: probe.trajectory.get_subscription_count() > 0, "a subscriber")
    for names, points, problem in bad:
        probe.trajectory.publish(JointTrajectory(joint_names=names, points=points))
        probe.spin_until(lambda p=problem: p in sim.output(), f"the warning {problem!r}")
    probe.wait_sim(0.05)
    assert sim.proc.poll() is None


# ----------------------------------------------------------------------------- services


def test_pause_step_and_reset(sim: SimProcess, probe: Probe) -> None:
    from std_srvs.srv import SetBool, Trigger

    # ~/step and ~/reset are not idempotent: their clients first, so that discovery has
    # matched them by the time they are called (a lost answer is not asked for again).
    probe.client(Trigger, "/sim/sim_node/reset")
    # A step while running is refused and changes nothing: safe to ask again.
    refused = probe.call(Trigger, "/sim/sim_node/step", Trigger.Request(), idempotent=True)
    assert not refused.success
    assert "not paused" in refused.message

    probe.command(NAMES, position=[0.4, 0.0, 0.0])
    reply = probe.call(SetBool, "/sim/sim_node/pause", SetBool.Request(data=True),
                       idempotent=True)
    assert reply.success, reply.message
    assert reply.message.startswith("paused at t = ")
    paused_at = float(reply.message.split()[-2])
    # Pausing publishes the state it stopped in; then nothing more comes.
    probe.spin_until(lambda: abs(probe.latest_time() - paused_at) < 1e-9, "the paused state")
    for _ in range(20):
        probe.executor.spin_once(timeout_sec=0.05)
    assert probe.latest_time() == pytest.approx(paused_at, abs=1e-9)

    reply = probe.call(Trigger, "/sim/sim_node/step", Trigger.Request(), idempotent=False)
    assert reply.success, reply.message
    assert reply.message == f"t = {paused_at + DT:.6f} s"
    probe.spin_until(lambda: probe.latest_time() > paused_at + DT / 2, "the stepped state")
    assert probe.latest_time() == pytest.approx(paused_at + DT, abs=1e-9)
    probe.spin_until(lambda: probe.seen.clock[-1] > paused_at + DT / 2, "the stepped /clock")
    assert probe.seen.clock[-1] == pytest.approx(paused_at + DT, abs=1e-9)

    count = len(probe.seen.joint_states)
    reply = probe.call(Trigger, "/sim/sim_node/reset", Trigger.Request(), idempotent=False)
    assert reply.success, reply.message
    probe.spin_until(lambda: len(probe.seen.joint_states) > count, "joint_states after reset")
    after = probe.seen.joint_states[-1]
    assert _seconds(after.header.stamp) == 0.0
    np.testing.assert_allclose(after.position, [0.0, 0.1, -0.2])  # the initial positions
    np.testing.assert_allclose(after.velocity, [0.0, 0.0, 0.0])

    reply = probe.call(SetBool, "/sim/sim_node/pause", SetBool.Request(data=False),
                       idempotent=True)
    assert reply.success, reply.message
    # No command after a reset: hold_initial (default true) holds the initial positions,
    # as powered servos would; the bare world would swing the wrist through 0 by now.
    probe.spin_until(lambda: probe.latest_time() > 0.5, "stepping after the pause")
    np.testing.assert_allclose(probe.seen.joint_states[-1].position, [0.0, 0.1, -0.2],
                               atol=0.02)


# ----------------------------------------------------------------------------- parameters


def test_bad_parameter_values_are_refused_at_run_time(probe: Probe) -> None:
    from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    def set_param(name: str, value: ParameterValue) -> Any:
        request = SetParameters.Request(parameters=[Parameter(name=name, value=value)])
        return probe.call(SetParameters, "/sim/sim_node/set_parameters", request,
                          idempotent=True).results[0]

    double = ParameterType.PARAMETER_DOUBLE
    result = set_param("real_time_factor", ParameterValue(type=double, double_value=-1.0))
    assert not result.successful
    assert "real_time_factor must be in [0, 1000]" in result.reason
    result = set_param("joint_states_rate", ParameterValue(type=double, double_value=0.0))
    assert not result.successful
    assert "joint_states_rate must be in (0, 10000] Hz" in result.reason
    result = set_param("tf_rate", ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                 string_value="fast"))
    assert not result.successful
    assert "tf_rate must be a number" in result.reason
    result = set_param("skel_file", ParameterValue(type=ParameterType.PARAMETER_STRING,
                                                   string_value="/x.skel"))
    assert not result.successful
    assert "read-only" in result.reason
    result = set_param("command_timeout", ParameterValue(type=double, double_value=math.nan))
    assert not result.successful
    # A good value is taken, given as an integer too.
    result = set_param("real_time_factor", ParameterValue(
        type=ParameterType.PARAMETER_INTEGER, integer_value=1))
    assert result.successful, result.reason
    probe.wait_sim(0.05)


def sim_node_main(capsys: pytest.CaptureFixture[str], **params: str) -> tuple[int, str]:
    """sim_node's ``main(argv)`` in this process: (exit status, what it printed).

    For refusals at start: the console script's own ``main``, without the seconds a new
    interpreter costs (importing rclpy and an engine). ``main`` installs its SIGINT
    handling for a process of its own; the test process gets its handler back after.
    """
    import signal

    from skel_ros.nodes.sim_node import main

    args = ["--ros-args", "-r", "__ns:=/sim"]
    for name, value in params.items():
        args += ["-p", f"{name}:={value}"]
    handler = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as exited:
            main(args)
    finally:
        signal.signal(signal.SIGINT, handler)
    captured = capsys.readouterr()
    assert not rclpy.ok(), "main left the default context initialized"
    return int(exited.value.code or 0), captured.out + captured.err


@pytest.mark.parametrize(
    ("params", "message"),
    [
        # The first case runs the real process (the console script's exit status and
        # output); the others run the same main(argv) in this process.
        ({"joint_states_rate": "0.0"}, "joint_states_rate must be in (0, 10000] Hz, got 0.0"),
        ({"skel_file": "/nonexistent/robot.skel"},
         "cannot load skel_file '/nonexistent/robot.skel'"),
        ({"paused": "maybe"}, "paused must be a bool"),
    ],
)
def test_bad_parameters_at_start_end_with_a_message(ros_env: dict[str, str], tmp_path: Path,
                                                     params: dict[str, str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    if "joint_states_rate" in params:  # the first case: the real process
        log = tmp_path / "bad.log"
        proc = _start(ros_env, log, **params)
        proc.wait(timeout=120)
        returncode, output = proc.returncode, log.read_text(encoding="utf-8", errors="replace")
        # One line, as docs/sim_node.md says (a logger printed the reason a second time)
        assert output.splitlines() == [f"sim_node: invalid parameters: {message}"], output
    else:
        returncode, output = sim_node_main(capsys, **params)
    assert returncode == 2, output
    assert message in output


def test_ctrl_c_while_stepping_ends_quietly(ros_env: dict[str, str], tmp_path: Path) -> None:
    """SIGINT while the stepping thread publishes flat out: exit 0, no error, no traceback.

    rclpy shuts the context down from its signal handler while the stepping thread may
    be publishing; that thread's failed publish is the shutdown, not a step failure.
    Three nodes, started together, each interrupted at its own time after it is up.
    """
    import signal
    import time

    skel = tmp_path / "pendulum.skel"
    skel.write_text(WORLD, encoding="utf-8")
    logs = [tmp_path / f"ctrl_c_{attempt}.log" for attempt in range(3)]
    procs = [_start(ros_env, log, skel_file=str(skel), real_time_factor="0.0",
                    joint_states_rate="1000.0", tf_rate="1000.0") for log in logs]
    try:
        up: dict[int, float] = {}  # attempt: when its log said "simulating"
        interrupted: set[int] = set()
        deadline = time.monotonic() + 60.0
        while len(interrupted) < len(procs):
            for attempt, (log, proc) in enumerate(zip(logs, procs, strict=True)):
                if attempt in interrupted:
                    continue
                if attempt not in up:
                    assert proc.poll() is None, log.read_text(errors="replace")
                    if "simulating" in log.read_text(errors="replace"):
                        up[attempt] = time.monotonic()
                # stepping and publishing as fast as it can
                elif time.monotonic() - up[attempt] >= 0.3 + 0.2 * attempt:
                    proc.send_signal(signal.SIGINT)
                    interrupted.add(attempt)
            assert time.monotonic() < deadline, "sim_node did not start"
            time.sleep(0.02)
        for log, proc in zip(logs, procs, strict=True):
            proc.wait(timeout=30)
            output = log.read_text(encoding="utf-8", errors="replace")
            assert proc.returncode == 0, output
            assert "simulation step failed" not in output, output
            assert "Traceback" not in output, output
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# ----------------------------------------------------------------------------- in process


class _Capture:
    """Stands in for the node's publishers: (topic, seconds of the stamp) in publish order."""

    def __init__(self, log: list[tuple[str, float]], topic: str, msg_type: Any) -> None:
        self.log, self.topic, self.msg_type = log, topic, msg_type

    def publish(self, msg: Any) -> None:
        from rclpy.serialization import deserialize_message

        if isinstance(msg, bytes):
            msg = deserialize_message(msg, self.msg_type)
        stamp = msg.clock if self.topic == "/clock" else (
            msg.transforms[0].header.stamp if self.topic == "/tf" else msg.header.stamp)
        self.log.append((self.topic, stamp.sec + 1e-9 * stamp.nanosec))


def test_run_steps_publishes_every_step_in_order(ros_env: dict[str, str]) -> None:
    """Batched or not, each step's /clock, joint_states and /tf, stamped, in step order."""
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.sim_node import SimNode
    from skel_ros.resources import example

    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(example("arm.skel"))),
            Parameter("joint_states_rate", value=1000.0), Parameter("tf_rate", value=100.0)])
        log: list[tuple[str, float]] = []
        node._clock_out._pub = _Capture(log, "/clock", Clock)  # type: ignore[assignment]
        node.shell.robot._joint_states_pub = _Capture(log, "joint_states", JointState)  # type: ignore[assignment]
        node.shell.robot._tf_pub = _Capture(log, "/tf", TFMessage)  # type: ignore[assignment]
        assert node.run_steps(25) == 25
        expected = []
        for k in range(1, 26):
            t = k * 0.001
            expected += [("/clock", t), ("joint_states", t)] + ([("/tf", t)] * (k % 10 == 0))
        assert [topic for topic, _ in log] == [topic for topic, _ in expected]
        np.testing.assert_allclose([t for _, t in log], [t for _, t in expected], atol=1e-9)
        assert not node._pending  # nothing left waiting after run_steps
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


class _Record:
    """Stands in for a publisher: (topic, stamp, the numbers) of every message, in order."""

    def __init__(self, log: list[tuple[str, float, tuple[float, ...]]], topic: str,
                 msg_type: Any) -> None:
        self.log, self.topic, self.msg_type = log, topic, msg_type

    def publish(self, msg: Any) -> None:
        from rclpy.serialization import deserialize_message

        if isinstance(msg, bytes):
            msg = deserialize_message(msg, self.msg_type)
        if self.topic == "/clock":
            stamp, numbers = msg.clock, ()
        elif self.topic == "/tf":
            stamp = msg.transforms[0].header.stamp
            numbers = tuple(x for t in msg.transforms for x in (
                t.transform.translation.x, t.transform.translation.y,
                t.transform.translation.z, t.transform.rotation.x, t.transform.rotation.y,
                t.transform.rotation.z, t.transform.rotation.w))
        else:
            stamp = msg.header.stamp
            numbers = (*msg.position, *msg.velocity, *msg.effort)
        self.log.append((self.topic, stamp.sec + 1e-9 * stamp.nanosec, numbers))


@pytest.mark.parametrize("engine", ["dart", "mujoco"])
def test_batched_stepping_publishes_what_single_steps_do(
        ros_env: dict[str, str], tmp_path: Path, engine: str) -> None:
    """Steps handed to the engine in batches between events publish the same messages.

    Two nodes on one world: one steps as it does (batches up to the next publication or
    core event), the other one step at a time with a core cycle before each (the node as
    it stepped before batching). Same joint_states, /tf and /clock, same stamps, same
    numbers bit for bit, same order; the command timeout fires on the same step; a
    trajectory is sampled on every step. Rates that are not divisors of each other.
    """
    if engine == "mujoco":
        pytest.importorskip("mujoco")
    del ros_env
    world = tmp_path / "pendulum.skel"
    world.write_text(WORLD)
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        batched = _stepping_run(context, world, engine, batched=True)
        single = _stepping_run(context, world, engine, batched=False)
    finally:
        rclpy.try_shutdown(context=context)
    assert batched.steps == single.steps
    assert [m[:2] for m in batched.log] == [m[:2] for m in single.log]  # topics, stamps
    assert batched.log == single.log  # and every number, bit for bit
    assert len(batched.log) > 50
    # It fires in the cycle of the 38th step (0.038 s >= 0.0375 s) after the start, after
    # the command, and after the trajectory's last cycle fed it.
    assert batched.timeouts == single.timeouts
    assert len(batched.timeouts) == 3
    assert batched.timeouts[:2] == [37, 123 + 37]
    assert batched.following == single.following  # a trajectory: a cycle on every step
    assert batched.following[-1] >= 30
    # Batched: one engine call per event (/clock, joint_states, /tf, controller_state,
    # the timeout), not one per step.
    assert batched.quiet_calls <= 123 // 4


@dataclass
class _SteppingRun:
    log: list[tuple[str, float, tuple[float, ...]]] = field(default_factory=list)
    timeouts: list[int] = field(default_factory=list)  # steps taken when it fired
    calls: list[int] = field(default_factory=list)  # engine.step(n) calls: n
    quiet_calls: int = 0  # engine calls over the first 123 steps (nothing commanded)
    following: list[int] = field(default_factory=list)  # observer cycles after each call
    steps: int = 0


def _stepping_run(context: Any, world: Path, engine: str, *, batched: bool) -> _SteppingRun:
    """123 steps with nothing commanded, a command the timeout drops, a trajectory."""
    from rclpy.parameter import Parameter
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from skel_ros.nodes.sim_node import SimNode

    run = _SteppingRun()
    node = SimNode(context=context, start=False, node_name=f"sim_{int(batched)}",
                   parameter_overrides=[
        Parameter("skel_file", value=str(world)), Parameter("engine", value=engine),
        Parameter("hold_initial", value=False), Parameter("joint_states_rate", value=70.0),
        Parameter("tf_rate", value=30.0), Parameter("command_timeout", value=0.0375)])
    node._clock_out._pub = _Record(run.log, "/clock", Clock)  # type: ignore[assignment]
    node.shell.robot._joint_states_pub = _Record(run.log, "joint_states", JointState)  # type: ignore[assignment]
    node.shell.robot._tf_pub = _Record(run.log, "/tf", TFMessage)  # type: ignore[assignment]
    step, on_timeout = node.engine.step, node.backend.on_timeout

    def counted(n: int = 1) -> None:
        run.calls.append(n)
        step(n)

    def spy(now: float, timeout: float) -> str:
        run.timeouts.append(node.steps_taken)
        return str(on_timeout(now, timeout))

    node.engine.step = counted  # type: ignore[method-assign]
    node.backend.on_timeout = spy  # type: ignore[method-assign]
    if not batched:
        node.runner._batch_size = _one_step_at_a_time  # type: ignore[method-assign]
    assert node.run_steps(123) == 123  # nothing commanded
    run.quiet_calls = len(run.calls)
    node.shell.intake.on_joint_command(JointState(name=["pendulum/hinge"], position=[0.4]))
    assert node.run_steps(80) == 80  # the timeout drops it on its step
    assert node.engine.commands() == {}
    core = node.core
    observer = _CycleCounter(0.03)
    core.follow(_hinge_trajectory(core, 0.03), None, observer)
    while core.following and len(run.following) < 100:
        node.run_steps(1 + len(run.following) % 3)
        run.following.append(observer.cycles)
    node.run_steps(47)
    run.steps = node.steps_taken
    node.destroy_node()
    return run


class _CycleCounter:
    """A trajectory observer that counts the core's cycles and ends it after its duration."""

    def __init__(self, duration: float) -> None:
        self.duration = duration
        self.cycles = 0

    def on_cycle(self, _now: float, elapsed: float, *_args: object) -> Any:
        from skel_ros.core import FollowOutcome

        self.cycles += 1
        return (FollowOutcome.SUCCEEDED, "done") if elapsed > self.duration else None

    def on_end(self, *_args: object) -> None:
        return


def _one_step_at_a_time(limit: int) -> int:
    """The node's step as it was before batching: one step, its core cycle before it."""
    return 1


def _hinge_trajectory(core: Any, duration: float) -> Any:
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    return PointTrajectory(["pendulum/hinge"], [TrajectoryPoint(duration, (0.2,))],
                           core.start_positions(["pendulum/hinge"]))


def test_the_node_drives_its_robot_core(ros_env: dict[str, str]) -> None:
    """Messages reach the core; the core's cycle runs once per step in simulated time.

    A trajectory is followed, a joint_commands message for one of its joints takes over,
    an empty trajectory cancels, and the command timeout drops every command.
    """
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.core import FollowOutcome
    from skel_ros.nodes.sim_node import SimNode
    from skel_ros.resources import example

    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(example("arm.skel"))),
            Parameter("command_timeout", value=0.05)])
        core = node.core
        point = JointTrajectoryPoint(positions=[0.3])
        point.time_from_start.nanosec = 200_000_000
        node.shell.intake.on_trajectory(JointTrajectory(joint_names=["elbow"], points=[point]))
        assert core.following
        ends: list[FollowOutcome] = []

        class Observer:
            cycles = 0

            def on_cycle(self, *_args: object) -> None:
                Observer.cycles += 1

            def on_end(self, _now: float, outcome: FollowOutcome, _message: str) -> None:
                ends.append(outcome)

        core.follow(_elbow_trajectory(core), None, Observer())
        node.run_steps(10)
        assert Observer.cycles == 10  # once per step
        node.shell.intake.on_joint_command(JointState(name=["elbow"], position=[0.1]))
        assert ends == [FollowOutcome.TAKEN_OVER]
        assert not core.following
        node.shell.intake.on_trajectory(JointTrajectory(joint_names=["elbow"], points=[point]))
        node.run_steps(5)
        node.shell.intake.on_trajectory(JointTrajectory())  # empty: stop, hold
        assert not core.following
        assert node.engine.commands()
        node.run_steps(60)  # 0.06 s of simulated time without a command
        assert node.engine.commands() == {}
        assert core.timeout_tripped
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


def _elbow_trajectory(core: object) -> object:
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    return PointTrajectory(["elbow"], [TrajectoryPoint(0.2, (0.3,))],
                           core.start_positions(["elbow"]))  # type: ignore[attr-defined]


def test_clamp_warnings_are_throttled_per_joint(ros_env: dict[str, str]) -> None:
    """Clamps of different joints within a second are each said (one key per joint and kind,
    as the hardware node); a repeat of the same joint's clamp is throttled."""
    from rclpy.parameter import Parameter
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.sim_node import SimNode
    from skel_ros.nodes.throttle import Throttle
    from skel_ros.resources import example

    del ros_env
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = SimNode(context=context, start=False, parameter_overrides=[
            Parameter("skel_file", value=str(example("arm.skel")))])
        lines: list[str] = []
        node.shell.intake.warn = Throttle(lines.append, period=60.0)
        for name, kind, value in [("elbow", "position", 3.0), ("wrist", "position", 5.0),
                                  ("shoulder_yaw", "effort", 9.0), ("wrist", "position", 6.0)]:
            msg = JointState(name=[name])
            setattr(msg, kind, [value])
            node.shell.intake.on_joint_command(msg)
        assert len(lines) == 3, lines
        for name in ("'elbow' 3 -> 2.2", "'wrist' 5 -> 1.9", "'shoulder_yaw' 9 -> 1.5"):
            assert any(name in line for line in lines), lines
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
