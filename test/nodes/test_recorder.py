"""MCAP recording from a node, read back without ROS by skel_ros.analysis.

The schema text is generated from the message classes; decoding the file with
mcap-ros2-support (an independent CDR decoder that only knows that text) proves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")


def test_recorded_joint_states_read_back(ros_env: dict[str, str], tmp_path: Path) -> None:
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from skel_ros.analysis import read_recording
    from skel_ros.nodes.recorder import RECORD_QOS, McapRecorder

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("recorder_test", context=context)
        fake_ns = iter(range(10**9, 10**12, 10**7))  # 10 ms apart
        recorder = McapRecorder(
            node, tmp_path / "run.mcap",
            {"/sim/joint_states": JointState, "/real/joint_states": JointState,
             "/joint_trajectory": JointTrajectory},
            clock=lambda: next(fake_ns))
        pubs = {t: node.create_publisher(JointState, t, RECORD_QOS)
                for t in ("/sim/joint_states", "/real/joint_states")}
        traj_pub = node.create_publisher(JointTrajectory, "/joint_trajectory", RECORD_QOS)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        # Wait for the subscriptions to match the publishers (same node: immediate on
        # most RMWs, but spin until they are, with a bound).
        for _ in range(100):
            if all(p.get_subscription_count() for p in [*pubs.values(), traj_pub]):
                break
            executor.spin_once(timeout_sec=0.05)
        traj = JointTrajectory(joint_names=["a", "b"])
        traj.points = [JointTrajectoryPoint(positions=[0.0, 0.0]),
                       JointTrajectoryPoint(positions=[1.0, -1.0])]
        traj.points[1].time_from_start.sec = 1
        traj_pub.publish(traj)
        sent = 50
        for i in range(sent):
            for k, (_topic, pub) in enumerate(pubs.items()):
                pub.publish(JointState(name=["a", "b"], position=[0.01 * i, -0.01 * i - k],
                                       velocity=[1.0, 2.0], effort=[]))
            executor.spin_once(timeout_sec=0.0)
        for _ in range(200):
            if all(n >= sent for t, n in recorder.counts.items() if t != "/joint_trajectory"):
                break
            executor.spin_once(timeout_sec=0.05)
        recorder.close()
        recorder.close()  # idempotent
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)

    streams = read_recording(tmp_path / "run.mcap")
    assert set(streams) == {"sim", "real", "command"}
    sim, real, command = streams["sim"], streams["real"], streams["command"]
    assert len(sim) == len(real) == sent
    assert sim.joint_names == ("a", "b")
    np.testing.assert_allclose(sim.positions[:, 0], 0.01 * np.arange(sent))
    np.testing.assert_allclose(real.positions[:, 1] - sim.positions[:, 1], -1.0)
    assert np.all(sim.velocities == [1.0, 2.0])
    assert np.all(np.isnan(sim.efforts))  # not sent: NaN, not zero
    # The trajectory became a sampled command stream: linear from 0 to 1 over 1 s, up to
    # the end of the recording (where it would hold its last point).
    assert command.joint_names == ("a", "b")
    since = command.times - command.times[0]
    np.testing.assert_allclose(command.positions[:, 0], np.clip(since, 0, 1), atol=1e-9)
    np.testing.assert_allclose(command.positions[:, 1], -command.positions[:, 0])
    assert command.times[-1] == pytest.approx(max(sim.times[-1], real.times[-1]))


def test_unreadable_recording_is_a_clear_error(tmp_path: Path) -> None:
    from skel_ros.analysis import RecordingError, read_recording

    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"\x89MCAP0\r\n garbage")
    with pytest.raises(RecordingError, match=r"bad\.mcap"):
        read_recording(bad)
    with pytest.raises(RecordingError, match=r"missing\.mcap"):
        read_recording(tmp_path / "missing.mcap")


def _record_with_publishers(tmp_path: Path, warn: Any = None) -> tuple[dict[str, int], list[str]]:
    """A best-effort publisher on /real/joint_states and a reliable one on
    /sim/joint_states before the recorder subscribes; a best-effort one on
    /sim/joint_states after. Returns the recorder's counts and what it warned."""
    from rclpy.event_handler import PublisherEventCallbacks
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    from skel_ros.nodes.recorder import McapRecorder

    context = rclpy.Context()
    rclpy.init(context=context)
    warnings: list[str] = []
    try:
        node = rclpy.create_node("recorder_qos_test", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        best_effort = node.create_publisher(JointState, "/real/joint_states",
                                            qos_profile_sensor_data)
        reliable = node.create_publisher(JointState, "/sim/joint_states", 10)
        for _ in range(100):  # the graph sees both before the recorder subscribes
            if all(node.get_publishers_info_by_topic(t)
                   for t in ("/real/joint_states", "/sim/joint_states")):
                break
            executor.spin_once(timeout_sec=0.05)
        topics = {"/real/joint_states": JointState, "/sim/joint_states": JointState}
        recorder = (McapRecorder(node, tmp_path / "run.mcap", topics) if warn is None else
                    McapRecorder(node, tmp_path / "run.mcap", topics, warn=warnings.append))
        late = node.create_publisher(  # the reliable subscription cannot hear it
            JointState, "/sim/joint_states",
            QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT),
            event_callbacks=PublisherEventCallbacks(incompatible_qos=lambda _info: None))
        for _ in range(100):
            if best_effort.get_subscription_count() and reliable.get_subscription_count():
                break
            executor.spin_once(timeout_sec=0.05)
        for i in range(20):
            for pub in (best_effort, reliable, late):
                pub.publish(JointState(name=["a"], position=[0.1 * i]))
            executor.spin_once(timeout_sec=0.01)
        for _ in range(100):
            if recorder.counts["/real/joint_states"] >= 20 and (warn is None or warnings):
                break
            executor.spin_once(timeout_sec=0.05)
        recorder.close()
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    return dict(recorder.counts), warnings


def test_qos_adapts_to_the_publishers_and_is_written_as_rosbag2_does(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """A best-effort publisher (sensor-data QoS, as many hardware drivers) is recorded;
    every channel carries ``offered_qos_profiles`` (the MCAP ros2 profile requires it),
    the publishers' QoS as YAML, as rosbag2 writes it."""
    import yaml
    from mcap.reader import make_reader

    counts, _ = _record_with_publishers(tmp_path)
    assert counts["/real/joint_states"] >= 15  # best effort may drop a few
    with (tmp_path / "run.mcap").open("rb") as f:
        channels = {c.topic: c for c in make_reader(f).get_summary().channels.values()}
    for topic, reliability in (("/real/joint_states", 2), ("/sim/joint_states", 1)):
        offers = yaml.safe_load(channels[topic].metadata.get("offered_qos_profiles", "null"))
        assert isinstance(offers, list), channels[topic].metadata
        assert len(offers) == 1, offers
        (offer,) = offers
        assert offer["reliability"] == reliability  # rmw: 1 reliable, 2 best effort
        assert set(offer) == {"history", "depth", "reliability", "durability", "deadline",
                              "lifespan", "liveliness", "liveliness_lease_duration",
                              "avoid_ros_namespace_conventions"}
        assert offer["deadline"] == {"sec": 9223372036, "nsec": 854775807}  # infinite


def test_a_later_publisher_the_recording_cannot_hear_is_warned_about_once(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    _, warnings = _record_with_publishers(tmp_path, warn=True)
    assert len(warnings) == 1, warnings
    assert "/sim/joint_states" in warnings[0]
    assert "RELIABILITY" in warnings[0]


def test_a_late_recorder_records_what_draws_the_robots(ros_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    """Two robot nodes (``sim``, ``real``) publish before the recorder starts: their
    latched descriptions and static transforms are recorded (a description published
    again adds nothing), the meshes embedded as ``data:`` URIs, and
    every link of each robot has a TF path to its root at every joint_states after the
    first, as a viewer (Foxglove, Lichtblick) needs to draw them moving."""
    from rclpy.executors import SingleThreadedExecutor
    from robot_recording import assert_draws_robots
    from sensor_msgs.msg import JointState

    from skel_ros.analysis import read_recording
    from skel_ros.model import load_skel
    from skel_ros.nodes.recorder import McapRecorder, robot_topics
    from skel_ros.nodes.robot_publisher import RobotPublisher
    from skel_ros.resources import example

    world = load_skel(example("arm.skel"))
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        executor = SingleThreadedExecutor(context=context)
        robots = {}
        for ns in ("sim", "real"):
            robot_node = rclpy.create_node("robot", namespace=ns, context=context)
            executor.add_node(robot_node)
            robots[ns] = RobotPublisher(robot_node, world, frame_prefix=f"{ns}/")
        node = rclpy.create_node("recorder_robot_test", context=context)
        executor.add_node(node)
        topics = {"/sim/joint_states": JointState, "/real/joint_states": JointState,
                  **robot_topics(robots)}
        recorder = McapRecorder(node, tmp_path / "run.mcap", topics)
        for _ in range(100):  # the latched messages reach the late subscriptions
            if all(recorder.counts[t] for t in ("/sim/robot_description",
                                                "/real/robot_description")) and \
                    recorder.counts["/tf_static"] >= len(robots):  # each robot's
                break
            executor.spin_once(timeout_sec=0.05)
        sent = 20
        for i in range(sent):
            for robot in robots.values():
                q = robot.initial_positions + 0.01 * i
                stamp = robot.now()
                robot.publish_joint_states(q, [], [], stamp)
                robot.publish_tf(q, stamp)
            if i == sent // 2:
                robots["sim"].publish_latched()  # again: the same messages
            for _ in range(200):  # recorded before the next (a robot node's order)
                if recorder.counts["/tf"] >= len(robots) * (i + 1) and all(
                        recorder.counts[f"/{ns}/joint_states"] > i for ns in robots):
                    break
                executor.spin_once(timeout_sec=0.05)
        recorder.close()
    finally:
        rclpy.shutdown(context=context)

    path = tmp_path / "run.mcap"
    checked = assert_draws_robots(path, ("sim", "real"))
    assert checked == {"sim": sent - 1, "real": sent - 1}
    # One per robot, and sim's repeat: its stamp is new, so it is another message (the
    # repeated description, the same bytes, is recorded once: assert_draws_robots).
    assert recorder.counts["/tf_static"] >= 3
    _assert_meshes_embedded(path, "/sim/robot_description", robots["sim"].urdf)
    assert set(read_recording(path)) == {"sim", "real"}  # reads only its topics


def _assert_meshes_embedded(path: Path, topic: str, published: str) -> None:
    """The recorded description's meshes are the published ones' files, as data: URIs."""
    import base64
    import xml.etree.ElementTree as ET

    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    from skel_ros.resources import resolve

    with path.open("rb") as f:
        (description,) = [msg.data for *_, msg in make_reader(
            f, decoder_factories=[DecoderFactory()]).iter_decoded_messages(topics=[topic])]
    meshes = [m.get("filename", "") for m in ET.fromstring(description).iter("mesh")]
    assert meshes, "the arm has generated meshes (capsule, ellipsoid)"
    files = {m.get("filename", "") for m in ET.fromstring(published).iter("mesh")}
    prefix = "data:model/stl;base64,"
    assert all(uri.startswith(prefix) for uri in meshes), [u[:60] for u in meshes]
    assert {base64.b64decode(uri[len(prefix):]) for uri in meshes} == {
        resolve(uri).read_bytes() for uri in files}


def test_joint_states_are_recorded_once_the_robot_can_be_drawn(ros_env: dict[str, str],
                                                                tmp_path: Path) -> None:
    """``drawn_first``: a robot's joint states before its description, or before the
    transforms that join its links to its root, are left out (and not counted)."""
    from rclpy.executors import SingleThreadedExecutor
    from robot_recording import assert_draws_robots
    from sensor_msgs.msg import JointState

    from skel_ros.model import load_skel
    from skel_ros.nodes.recorder import McapRecorder, robot_topics
    from skel_ros.nodes.robot_publisher import RobotPublisher
    from skel_ros.resources import example

    world = load_skel(example("arm.skel"))
    topics = {"/sim/joint_states": JointState, **robot_topics(["sim"])}
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("recorder_gate_test", context=context)
        with pytest.raises(ValueError, match="/tf"):
            McapRecorder(node, tmp_path / "bad.mcap", {"/sim/joint_states": JointState},
                         drawn_first={"/sim/joint_states": "/sim/robot_description"})
        recorder = McapRecorder(node, tmp_path / "run.mcap", topics,
                                drawn_first={"/sim/joint_states": "/sim/robot_description"})
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        robot_node = rclpy.create_node("robot", namespace="sim", context=context)
        executor.add_node(robot_node)

        def spin_until(done: Any) -> None:
            for _ in range(200):
                if done():
                    return
                executor.spin_once(timeout_sec=0.05)
            raise AssertionError(recorder.counts)

        robot = RobotPublisher(robot_node, world, frame_prefix="sim/")
        spin_until(lambda: recorder.counts["/tf_static"] and recorder.counts[
            "/sim/robot_description"])
        q = robot.initial_positions
        robot.publish_joint_states(q, [], [])  # no /tf yet: its links hang loose
        for _ in range(20):
            executor.spin_once(timeout_sec=0.01)
        assert recorder.counts["/sim/joint_states"] == 0
        for k in range(3):
            robot.publish_tf(q)
            spin_until(lambda k=k: recorder.counts["/tf"] > k)
            robot.publish_joint_states(q, [], [])
            spin_until(lambda k=k: recorder.counts["/sim/joint_states"] > k)
        recorder.close()
    finally:
        rclpy.shutdown(context=context)
    assert recorder.counts["/sim/joint_states"] == 3, recorder.counts
    assert_draws_robots(tmp_path / "run.mcap", ["sim"])


def test_a_robot_is_drawn_from_its_links_below_a_joint_it_never_measures() -> None:
    """A hardware node on a floating-base robot measures its legs, never its base: the
    base's transforms never come. Its joint states are recorded once every link reaches
    the root or a link that hangs from such a joint (before: never, and sim-to-real
    timed out after 60 s waiting for them: example-robot-data's Go1)."""
    from types import SimpleNamespace

    from skel_ros.nodes.recorder import _DrawnGate

    urdf = """<robot name="r"><link name="world"/><link name="base"/><link name="trunk"/>
      <link name="leg"/>
      <joint name="float_z" type="prismatic"><parent link="world"/><child link="base"/>
      </joint>
      <joint name="weld" type="fixed"><parent link="base"/><child link="trunk"/></joint>
      <joint name="knee" type="revolute"><parent link="trunk"/><child link="leg"/></joint>
    </robot>"""

    def tf(*pairs: tuple[str, str]) -> Any:
        return SimpleNamespace(transforms=[SimpleNamespace(
            child_frame_id=child, header=SimpleNamespace(frame_id=parent))
            for parent, child in pairs])

    gate = _DrawnGate()
    gate.describe(urdf)
    gate.transforms(tf(("base", "trunk"), ("trunk", "leg")))
    assert not gate.open  # which joints the states carry: not known yet
    gate.states(["knee"])
    assert gate.open  # float_z is never measured: the legs are drawn from the base down
    measured = _DrawnGate()
    measured.describe(urdf)
    measured.transforms(tf(("base", "trunk"), ("trunk", "leg")))
    measured.states(["float_z", "knee"])
    assert not measured.open  # a measured joint's transform is waited for, as before
    measured.transforms(tf(("world", "base")))
    assert measured.open


def test_a_live_recording_records_joint_states_once_the_robot_can_be_drawn(
        ros_env: dict[str, str], tmp_path: Path) -> None:
    """``skel-ros compare --record`` (``record_live``): a robot whose description is in
    the graph has its joint states recorded from when its links join its root, not
    before; a namespace with no description keeps all of its joint states."""
    import threading
    import time

    from rclpy.executors import SingleThreadedExecutor
    from robot_recording import assert_draws_robots
    from sensor_msgs.msg import JointState

    from skel_ros.model import load_skel
    from skel_ros.nodes.recorder import record_live
    from skel_ros.nodes.robot_publisher import RobotPublisher
    from skel_ros.resources import example

    context = rclpy.Context()
    rclpy.init(context=context)
    counts: dict[str, int] = {}
    try:
        executor = SingleThreadedExecutor(context=context)
        robot_node = rclpy.create_node("robot", namespace="sim", context=context)
        executor.add_node(robot_node)
        robot = RobotPublisher(robot_node, load_skel(example("arm.skel")), frame_prefix="sim/")
        bare = robot_node.create_publisher(JointState, "/bare/joint_states", 10)
        path = tmp_path / "live.mcap"
        recording = threading.Thread(target=lambda: counts.update(record_live(
            path, (), ("/sim/joint_states", "/bare/joint_states"), duration=4.0,
            log=lambda _line: None, discovery=0.5)))
        recording.start()
        q = robot.initial_positions
        start = time.monotonic()
        while recording.is_alive():
            if time.monotonic() - start > 2.5:  # from now on its links join its root
                robot.publish_tf(q)
            robot.publish_joint_states(q, [], [])
            bare.publish(JointState(name=["x"], position=[0.0]))
            executor.spin_once(timeout_sec=0.02)
        recording.join()
    finally:
        rclpy.shutdown(context=context)
    assert counts["/bare/joint_states"] > 20, counts  # no gate: everything heard
    assert 5 < counts["/sim/joint_states"] < counts["/bare/joint_states"] * 0.7, counts
    assert_draws_robots(path, ["sim"])
