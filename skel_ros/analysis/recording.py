"""Read a recorded run (MCAP, as written by ``ros2 bag`` or skel_ros's recorder).

Decoding uses ``mcap-ros2-support`` and the message definitions stored in the file, so
no ROS installation is needed to analyse a recording.

Times: a measured stream (``sim``, ``real``, a further engine's) is placed at its
messages' header stamps when those are on the recorder's clock, which is the case in a
sim-to-real session (the hardware node stamps each read with ROS time, the simulation
node with ``time_base`` wall the ROS time its step was due). Delivery delays on a loaded
machine (tens to hundreds of milliseconds) then do not count as lag or error. The rule,
decided per stream from the recording itself: stamps are used when the stream's median
``|log time - stamp|`` is at most :data:`STAMP_WINDOW`; otherwise (a simulation stamped in
simulated time, zero stamps, an old recording) the stream keeps its log times (when the
recorder received each message). Commands always keep their log times: that is when the
robots got them. :attr:`JointSeries.time_base` says which was used.
"""

from __future__ import annotations

import math
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
# s: a stream whose stamps lie within this of its log times (median) is placed at its stamps.
STAMP_WINDOW = 1.0


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
        self.stamps: list[float] = []  # header stamps (s), one per row of a JointState stream

    def add(self, t: float, names: Iterable[str], pos: Any, vel: Any, eff: Any,  # noqa: ANN401, PLR0917 - decoded ROS messages are dynamic
            stamp: float = math.nan) -> None:
        names = list(names)
        n = len(names)

        def get(seq: Any, i: int) -> float:  # noqa: ANN401 - decoded ROS messages are dynamic
            return float(seq[i]) if len(seq) == n else float("nan")

        row = {}
        for i, joint in enumerate(names):
            j = self.joints.setdefault(joint, len(self.joints))
            row[j] = (get(pos, i), get(vel, i), get(eff, i))
        self.rows.append((t, row))
        self.stamps.append(stamp)

    def stamps_usable(self) -> bool:
        """Whether the header stamps are on the recorder's clock (see the module's doc)."""
        if self.name == "command" or not self.rows:
            return False
        log = np.array([t for t, _ in self.rows])
        stamps = np.array(self.stamps)
        if not np.all(np.isfinite(stamps)):
            return False
        return float(np.median(np.abs(log - stamps))) <= STAMP_WINDOW

    def series(self, origin: float) -> JointSeries:
        """The samples, at their stamps when usable, else log times; seconds from ``origin``."""
        shape = (len(self.rows), len(self.joints))
        data = np.full((3, *shape), np.nan)
        for r, (_, row) in enumerate(self.rows):
            for j, values in row.items():
                data[:, r, j] = values
        stamped = self.stamps_usable()
        times = np.array(self.stamps if stamped else [t for t, _ in self.rows]) - origin
        return JointSeries.from_samples(self.name, times, list(self.joints), data[0], data[1],
                                        data[2], time_base="stamp" if stamped else "log")


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


def read_recording(
    path: str | Path, topics: StreamTopics | None = None) -> dict[str, JointSeries]:
    """Read the command, simulation and hardware streams of a recorded run.

    Commands may be JointState messages (streamed targets: their positions are the
    command) or JointTrajectory messages (each sampled from its arrival until the next
    one replaces it). Times are seconds from the first message of the file (log time):
    a measured stream's header stamps when they are on the recorder's clock, else its
    log times (see the module's doc; :attr:`JointSeries.time_base` says which).

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
                stamp = float(msg.header.stamp.sec) + 1e-9 * float(msg.header.stamp.nanosec)
                collectors.setdefault(stream, _Collector(stream)).add(
                    t, msg.name, msg.position, msg.velocity, msg.effort, stamp)
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
    return {name: c.series(origin) for name, c in collectors.items()}
