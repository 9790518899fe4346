"""MCAP recording from a node, read back without ROS by skel_ros.analysis.

The schema text is generated from the message classes; decoding the file with
mcap-ros2-support (an independent CDR decoder that only knows that text) proves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    # The trajectory became a sampled command stream: linear from 0 to 1 over 1 s.
    assert command.joint_names == ("a", "b")
    assert command.positions[-1] == pytest.approx([1.0, -1.0])


def test_unreadable_recording_is_a_clear_error(tmp_path: Path) -> None:
    from skel_ros.analysis import RecordingError, read_recording

    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"\x89MCAP0\r\n garbage")
    with pytest.raises(RecordingError, match=r"bad\.mcap"):
        read_recording(bad)
    with pytest.raises(RecordingError, match=r"missing\.mcap"):
        read_recording(tmp_path / "missing.mcap")
