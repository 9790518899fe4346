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
