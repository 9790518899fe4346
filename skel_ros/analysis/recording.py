"""Read a recorded run (MCAP, as written by ``ros2 bag`` or skel_ros's recorder).

Decoding uses ``mcap-ros2-support`` and the message definitions stored in the file, so
no ROS installation is needed to analyse a recording. Times are the recording's log
times (when the recorder received each message): every stream is on the recorder's
clock whatever the nodes stamped. A sim-to-real session stamps both robots in ROS time
(the simulation node's ``time_base`` wall), but a recording of a simulation in simulated
time, or an older one, compares the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skel_ros.analysis.errors import RecordingError
from skel_ros.analysis.series import JointSeries

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

JOINT_STATE = "sensor_msgs/msg/JointState"
JOINT_TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
COMMAND_SAMPLE_RATE = 100.0  # Hz, for commands recorded as whole trajectories


@dataclass(frozen=True)
class StreamTopics:
    """Which topic holds which stream."""

    command: tuple[str, ...] = ("/joint_commands", "/joint_trajectory")
    sim: str = "/sim/joint_states"
    real: str = "/real/joint_states"
    engines: tuple[tuple[str, str], ...] = (("dart", "/dart/joint_states"),
                                            ("mujoco", "/mujoco/joint_states"))
    """A further simulation per engine (stream name, topic): ``sim-to-real --engines``."""


def _schema_name(name: str) -> str:
    # ros2 bag writes "pkg/msg/Type"; some writers "pkg/Type".
    pkg, _, typ = name.rpartition("/")
    pkg = pkg.removesuffix("/msg")
    return f"{pkg}/msg/{typ}"


class _Collector:
    """Accumulates JointState samples of one stream, joint names possibly varying."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.joints: dict[str, int] = {}
        self.rows: list[tuple[float, dict[int, tuple[float, float, float]]]] = []

    def add(self, t: float, names: Iterable[str], pos: Any, vel: Any, eff: Any) -> None:  # noqa: ANN401 - decoded ROS messages are dynamic
        names = list(names)
        n = len(names)

        def get(seq: Any, i: int) -> float:  # noqa: ANN401 - decoded ROS messages are dynamic
            return float(seq[i]) if len(seq) == n else float("nan")

        row = {}
        for i, joint in enumerate(names):
            j = self.joints.setdefault(joint, len(self.joints))
            row[j] = (get(pos, i), get(vel, i), get(eff, i))
        self.rows.append((t, row))

    def series(self) -> JointSeries:
        shape = (len(self.rows), len(self.joints))
        data = np.full((3, *shape), np.nan)
        for r, (_, row) in enumerate(self.rows):
            for j, values in row.items():
                data[:, r, j] = values
        return JointSeries.from_samples(self.name, [t for t, _ in self.rows], list(self.joints),
                                        data[0], data[1], data[2])


def _trajectory_samples(collector: _Collector, t0: float, msg: Any, until: float | None) -> None:  # noqa: ANN401 - decoded ROS messages are dynamic
    from skel_ros.trajectory.points import PointTrajectory, TrajectoryPoint

    def tfs(d: Any) -> float:  # noqa: ANN401 - decoded ROS messages are dynamic
        return float(d.sec) + 1e-9 * float(d.nanosec)

    points = [TrajectoryPoint(tfs(p.time_from_start), tuple(p.positions),
                              tuple(p.velocities) or None, tuple(p.accelerations) or None)
              for p in msg.points]
    if not points:
        return
    traj = PointTrajectory(list(msg.joint_names), points)
    end = t0 + traj.duration if until is None else min(until, t0 + traj.duration)
    for t in np.arange(t0, end + 1e-9, 1.0 / COMMAND_SAMPLE_RATE):
        pos, vel, _ = traj.sample(t - t0)
        collector.add(float(t), traj.joint_names, pos, vel, ())


def read_recording(  # noqa: C901 - one loop, two message kinds
    path: str | Path, topics: StreamTopics | None = None) -> dict[str, JointSeries]:
    """Read the command, simulation and hardware streams of a recorded run.

    Commands may be JointState messages (streamed targets: their positions are the
    command) or JointTrajectory messages (each sampled from its arrival until the next
    one replaces it). Times are seconds from the first message of the file.

    Returns:
        ``{"command": ..., "sim": ..., "real": ...}`` (and ``"dart"``, ``"mujoco"``
        for further engines), only the streams present.

    Raises:
        RecordingError: the file cannot be read or decoded.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    topics = topics or StreamTopics()
    path = Path(path)
    wanted: Mapping[str, str] = {topics.sim: "sim", topics.real: "real",
                                 **{topic: name for name, topic in topics.engines},
                                 **dict.fromkeys(topics.command, "command")}
    collectors: dict[str, _Collector] = {}
    trajectories: list[tuple[float, Any]] = []
    t_first: float | None = None
    try:
        with path.open("rb") as f:
            messages = list(make_reader(f, decoder_factories=[DecoderFactory()])
                            .iter_decoded_messages(topics=list(wanted), log_time_order=True))
        for schema, channel, message, msg in messages:
            t = message.log_time * 1e-9
            t_first = t if t_first is None else t_first
            stream = wanted[channel.topic]
            kind = _schema_name(schema.name) if schema else ""
            if kind == JOINT_STATE:
                collectors.setdefault(stream, _Collector(stream)).add(
                    t, msg.name, msg.position, msg.velocity, msg.effort)
            elif kind == JOINT_TRAJECTORY and stream == "command":
                trajectories.append((t, msg))
            else:
                raise RecordingError(  # noqa: TRY301 - re-raised as is below
                    f"{path}: topic {channel.topic} has type {kind!r}; "
                    f"expected {JOINT_STATE} or {JOINT_TRAJECTORY}")
    except RecordingError:
        raise
    except Exception as exc:  # noqa: BLE001 - mcap raises many kinds on a damaged file
        raise RecordingError(f"{path}: cannot read the recording: {exc}") from None
    if trajectories:
        command = collectors.setdefault("command", _Collector("command"))
        for i, (t0, msg) in enumerate(trajectories):
            until = trajectories[i + 1][0] if i + 1 < len(trajectories) else None
            try:
                _trajectory_samples(command, t0, msg, until)
            except ValueError as exc:
                raise RecordingError(f"{path}: invalid trajectory at {t0:.3f} s: {exc}") from None
    if not collectors:
        raise RecordingError(f"{path}: none of the topics {sorted(wanted)} was recorded")
    origin = t_first or 0.0
    out = {}
    for name, c in collectors.items():
        s = c.series()
        out[name] = JointSeries.from_samples(name, s.times - origin, s.joint_names, s.positions,
                                             s.velocities, s.efforts)
    return out
