"""JointTrajectory commands in a recording are sampled as the receiving node follows them.

The nodes (:func:`skel_ros.nodes.commands.parse_joint_trajectory` and the robot core)
start a trajectory at its header stamp (0: on receipt), from the joints' present targets
(before any command: where the robot holds, its measured position), and hold its last
point until another command replaces it. Each recording here has robots that do exactly
that; the command stream must then match them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.analysis import compare, read_recording
from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

WALL = 1_790_000_000.0  # s: ROS time, the recorder's and the nodes' clock
STEP = 0.01


def _time(seconds: float) -> dict[str, int]:
    sec = int(seconds // 1)
    return {"sec": sec, "nanosec": round((seconds - sec) * 1e9)}


def _write(path: Path, robot: np.ndarray, t: np.ndarray,
           trajectories: Sequence[tuple[float, float, list[tuple[float, float]]]]) -> Path:
    """``robot``: the measured position at ``t`` (both robots); ``trajectories``: ``(arrival,
    header stamp or 0, [(time_from_start, position)])`` of joint ``j``."""
    from mcap_ros2.writer import Writer
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory

    from skel_ros.nodes.recorder import message_definition

    messages: list[tuple[float, str, str, dict[str, Any]]] = [
        (x, topic, "js", {"header": {"stamp": _time(WALL + x), "frame_id": ""}, "name": ["j"],
                          "position": [float(q)], "velocity": [], "effort": []})
        for x, q in zip(t, robot, strict=True)
        for topic in ("/sim/joint_states", "/real/joint_states")]
    for arrival, stamp, points in trajectories:
        messages.append((arrival, "/joint_trajectory", "jt", {
            "header": {"stamp": _time(WALL + stamp) if stamp else _time(0.0), "frame_id": ""},
            "joint_names": ["j"],
            "points": [{"positions": [q], "velocities": [], "accelerations": [], "effort": [],
                        "time_from_start": _time(tfs)} for tfs, q in points]}))
    messages.sort(key=lambda m: m[0])
    with path.open("wb") as f:
        writer = Writer(f)
        schemas = {key: writer.register_msgdef(*message_definition(cls))
                   for key, cls in (("js", JointState), ("jt", JointTrajectory))}
        for x, topic, key, msg in messages:
            ns = round((WALL + x) * 1e9)
            writer.write_message(topic, schemas[key], msg, log_time=ns, publish_time=ns)
        writer.finish()
    return path


def _follow(t: np.ndarray, segments: Sequence[tuple[float, float, PointTrajectory]],
            initial: float) -> np.ndarray:
    """What a node does: each trajectory from its arrival, timed from its start."""
    out = np.full(t.shape, initial)
    for arrival, start, trajectory in segments:
        after = t >= arrival
        out[after] = [trajectory.sample(x - start)[0][0] for x in t[after]]
    return out


def _errors(path: Path) -> tuple[float, float]:
    streams = read_recording(path)
    assert not streams["command"].held  # a trajectory's samples: a continuous signal
    comparison = compare(list(streams.values()))
    error = comparison.joints[0].error("real", "command")
    return error.max_abs, comparison.duration


@pytest.mark.parametrize("case", ["stamped start", "first point later", "hold, then next"])
def test_trajectory_commands_are_sampled_as_the_nodes_follow_them(tmp_path: Path,
                                                                 case: str) -> None:
    t = np.arange(0, 6.0, STEP)
    line = PointTrajectory(["j"], [TrajectoryPoint(0.0, (0.0,)), TrajectoryPoint(2.0, (1.0,))])
    if case == "stamped start":  # arrives at 0, starts at its stamp, 1 s later
        messages = [(0.0, 1.0, [(0.0, 0.0), (2.0, 1.0)])]
        robot = _follow(t, [(0.0, 1.0, line)], 0.0)
    elif case == "first point later":  # one point at 2 s: from the held 0.3 rad to 1 rad
        messages = [(0.5, 0.0, [(2.0, 1.0)])]
        later = PointTrajectory(["j"], [TrajectoryPoint(2.0, (1.0,))], [0.3])
        robot = _follow(t, [(0.5, 0.5, later)], 0.3)
    else:  # 0 -> 1 over 1 s, held, then 1 -> 0 over 1 s arriving at 4 s
        up = PointTrajectory(["j"], [TrajectoryPoint(0.0, (0.0,)), TrajectoryPoint(1.0, (1.0,))])
        down = PointTrajectory(["j"], [TrajectoryPoint(1.0, (0.0,))], [1.0])
        messages = [(0.0, 0.0, [(0.0, 0.0), (1.0, 1.0)]), (4.0, 0.0, [(1.0, 0.0)])]
        robot = _follow(t, [(0.0, 0.0, up), (4.0, 4.0, down)], 0.0)
    max_error, duration = _errors(_write(tmp_path / "run.mcap", robot, t, messages))
    assert max_error < 1e-4  # stamps in ns of ROS time: rounding only
    # From the first command to the end of the run: the last trajectory holds.
    assert duration == pytest.approx(t[-1] - messages[0][0], abs=2 * STEP)
