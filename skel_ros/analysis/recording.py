"""Read a recorded run (MCAP, as written by ``ros2 bag`` or skel_ros's recorder).

Decoding uses ``mcap-ros2-support`` and the message definitions stored in the file, so
no ROS installation is needed to analyse a recording.

Times: a measured stream (``sim``, ``real``, a further engine's) is placed at its
messages' header stamps when those are on the recorder's clock, which is the case in a
sim-to-real session (the hardware node stamps each read with ROS time, the simulation
node with ``time_base`` wall the ROS time its step was due). Delivery delays on a loaded
machine (tens to hundreds of milliseconds) then do not count as lag or error. The rule,
decided per stream from the recording itself: stamps are used when the stream's median
``|log time - stamp|`` is at most :data:`STAMP_WINDOW` and its median ``stamp - log time``
at most :data:`STAMP_AHEAD` (a message cannot be stamped on the recorder's clock after
it arrived: stamps ahead of their arrival come from a clock that runs ahead); otherwise
(a simulation stamped in simulated time, zero stamps, an old recording, a clock ahead)
the stream keeps its log times (when the recorder received each message), and
:attr:`JointSeries.time_base_note` says why when the stamps were near. Commands always
keep their log times: that is when the robots got them. :attr:`JointSeries.time_base`
says which was used.

JointTrajectory commands are sampled as the receiving node follows them
(:func:`skel_ros.trajectory.parse_joint_trajectory` builds the trajectory, as in the
nodes): from its header stamp (a zero stamp: its arrival), starting from the joints'
present target (the last command for them, else the position the robot measured at the
arrival: what it holds before any command), holding its last point after its end, until
the next trajectory, or a JointState command for one of its joints, replaces it. A
command stream of JointState targets only is marked :attr:`JointSeries.held`: the robots
hold each target until the next one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from skel_ros.analysis.errors import AnalysisError, RecordingError
from skel_ros.analysis.series import JointSeries
from skel_ros.trajectory.messages import parse_joint_trajectory

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from skel_ros.model.types import World

    Followers = Mapping[str, tuple[str, float, float]]
    """Mimic joints by public name: follower -> (leader, multiplier, offset)."""

JOINT_STATE = "sensor_msgs/msg/JointState"
JOINT_TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"
COMMAND_SAMPLE_RATE = 100.0  # Hz, for commands recorded as whole trajectories
# s: a stream whose stamps lie within this of its log times (median) is placed at its stamps.
STAMP_WINDOW = 1.0
# s: a stream whose stamps are later than its log times by more than this (median) is not
# on the recorder's clock (a stamp after the arrival); a few ms of clock skew pass.
STAMP_AHEAD = 0.01
# The measured streams, in the order their position stands for a robot's target before
# any command (the start of a first trajectory): the hardware first.
START_STREAMS = ("real", "sim", "dart", "mujoco")


@dataclass(frozen=True)
class StreamTopics:
    """Which topic holds which stream."""

    command: tuple[str, ...] = ("/joint_commands", "/joint_trajectory")
    sim: str = "/sim/joint_states"
    real: str = "/real/joint_states"
    engines: tuple[tuple[str, str], ...] = (("dart", "/dart/joint_states"),
                                            ("mujoco", "/mujoco/joint_states"))
    """A further simulation per engine (stream name, topic): ``sim-to-real --engines``."""
    written: str = "/real/written_goals"
    """The hardware's goals as it wrote them (``sim-to-real --record-goals``)."""


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

    def stamps_refused(self) -> str | None:
        """None when the header stamps are on the recorder's clock, else why not.

        See the module's doc; the reason is "" when the stamps are plainly on another
        clock (simulated time, zero, missing), a sentence when they were near but ahead.
        """
        if self.name == "command" or not self.rows:
            return ""
        log = np.array([t for t, _ in self.rows])
        stamps = np.array(self.stamps)
        if not np.all(np.isfinite(stamps)) or \
                float(np.median(np.abs(log - stamps))) > STAMP_WINDOW:
            return ""
        ahead = float(np.median(stamps - log))
        if ahead > STAMP_AHEAD:
            return (f"placed at its receive times: its header stamps are {ahead:.3f} s after"
                    f" its arrival (median), so not on the recorder's clock (a clock ahead)")
        return None

    def series(self, origin: float) -> JointSeries:
        """The samples, at their stamps when usable, else log times; seconds from ``origin``."""
        shape = (len(self.rows), len(self.joints))
        data = np.full((3, *shape), np.nan)
        for r, (_, row) in enumerate(self.rows):
            for j, values in row.items():
                data[:, r, j] = values
        refused = self.stamps_refused()
        stamped = refused is None
        times = np.array(self.stamps if stamped else [t for t, _ in self.rows]) - origin
        return JointSeries.from_samples(self.name, times, list(self.joints), data[0], data[1],
                                        data[2], time_base="stamp" if stamped else "log",
                                        time_base_note=refused or "")


class _Names(dict):  # type: ignore[type-arg]
    """Every joint name is known: the recording has no model to check them against."""

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)


class _CommandCollector(_Collector):
    """The command stream, where a leader's command also commands its followers.

    A command names leaders only (followers take none: docs/model.md, "Mimic joints"),
    yet the robot moves its followers by ``multiplier * leader + offset``: that is what a
    follower's measured stream is compared with.
    """

    def __init__(self, followers: Followers) -> None:
        super().__init__("command")
        self.followers = followers

    def add(self, t: float, names: Iterable[str], pos: Any, vel: Any, eff: Any,  # noqa: ANN401, PLR0917 - decoded ROS messages are dynamic
            stamp: float = math.nan) -> None:
        names = list(names)
        given = {n: i for i, n in enumerate(names)}
        derived = [(f, given[lead], m, o) for f, (lead, m, o) in self.followers.items()
                   if lead in given and f not in given]
        if derived:
            n = len(names)
            pos = list(pos) if len(pos) == n else [math.nan] * n
            vel = list(vel) if len(vel) == n else [math.nan] * n
            eff = list(eff) if len(eff) == n else [math.nan] * n
            for follower, i, m, o in derived:
                names.append(follower)
                pos.append(m * float(pos[i]) + o)
                vel.append(m * float(vel[i]))
                eff.append(math.nan)
        super().add(t, names, pos, vel, eff, stamp)


def _commands(events: list[tuple[float, str, Any]], measured: Mapping[str, JointSeries],
              origin: float, end: float, followers: Followers) -> _Collector:
    """The command stream: JointState targets as they are, trajectories as followed.

    Args:
        events: ``(log time, kind, message)`` of every command message, in time order.
        measured: the measured streams (seconds from ``origin``), for the start of a
            trajectory on joints no command has set yet.
        origin: log time of the recording's first message (s).
        end: log time of its last message (s): the last trajectory holds until then.
        followers: mimic joints, commanded through their leaders.

    Raises:
        ValueError: a trajectory the nodes reject.
    """
    collector = _CommandCollector(followers)
    target: dict[str, float] = {}  # the present target of each joint commanded so far

    def measured_at(joint: str, t: float) -> float:
        for name in START_STREAMS:
            series = measured.get(name)
            if series is not None and joint in series.joint_names:
                q = float(series.resample(joint, np.array([t - origin]))[0])
                if math.isfinite(q):
                    return q
        return math.nan

    for i, (t, kind, msg) in enumerate(events):
        if kind == JOINT_STATE:
            collector.add(t, msg.name, msg.position, msg.velocity, msg.effort)
            target.update((n, float(q)) for n, q in zip(msg.name, msg.position, strict=False))
            continue
        command = parse_joint_trajectory(
            msg, _Names(), lambda names, t=t: [target.get(n, measured_at(n, t)) for n in names],
            topic="joint_trajectory")
        trajectory = command.trajectory
        if trajectory is None:  # "stop following": the joints hold their targets
            continue
        names = trajectory.joint_names
        begin = t if command.start is None else command.start
        until = next((u for u, k, m in events[i + 1:]
                      if k == JOINT_TRAJECTORY or set(m.name) & set(names)), None)
        last = until is None
        stop = end if last else until
        for s in np.arange(t, stop, 1.0 / COMMAND_SAMPLE_RATE):
            pos, vel, _ = trajectory.sample(float(s) - begin)
            collector.add(float(s), names, pos, vel, ())
        if last:  # up to the end of the recording
            pos, vel, _ = trajectory.sample(stop - begin)
            collector.add(stop, names, pos, vel, ())
        pos, _, _ = trajectory.sample(stop - begin)
        target.update(zip(names, (float(q) for q in pos), strict=True))
    return collector


def read_recording(
    path: str | Path, topics: StreamTopics | None = None, *,
    followers: Followers | None = None, goals: bool = False) -> dict[str, JointSeries]:
    """Read the command, simulation and hardware streams of a recorded run.

    Commands may be JointState messages (streamed targets: their positions are the
    command) or JointTrajectory messages (sampled as the nodes follow them: see the
    module's doc). Times are seconds from the first message of the file (log time):
    a measured stream's header stamps when they are on the recorder's clock, else its
    log times (see the module's doc; :attr:`JointSeries.time_base` says which).
    ``followers`` (mimic joints by public name, :func:`model_followers`) are added to the
    command stream from their leaders' commands. ``goals``: also the hardware's goals as
    it wrote them (:attr:`StreamTopics.written`), held from each write to the next, at
    their stamps: not a measurement, so never among the streams compared.

    Returns:
        ``{"command": ..., "sim": ..., "real": ...}`` (and ``"dart"``, ``"mujoco"``
        for further engines; ``"written"`` with ``goals``), only the streams present.

    Raises:
        RecordingError: the file cannot be read or decoded, a topic has another type,
            or a trajectory is one the nodes reject.
        AnalysisError: the file holds none of the topics (no stream to compare).
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    topics = topics or StreamTopics()
    path = Path(path)
    wanted: Mapping[str, str] = {topics.sim: "sim", topics.real: "real",
                                 **{topic: name for name, topic in topics.engines},
                                 **dict.fromkeys(topics.command, "command"),
                                 **({topics.written: "written"} if goals else {})}
    collectors: dict[str, _Collector] = {}
    commands: list[tuple[float, str, Any]] = []
    t_first: float | None = None
    t_last = 0.0
    try:
        with path.open("rb") as f:
            messages = list(make_reader(f, decoder_factories=[DecoderFactory()])
                            .iter_decoded_messages(topics=list(wanted), log_time_order=True))
        for schema, channel, message, msg in messages:
            t = message.log_time * 1e-9
            t_first = t if t_first is None else t_first
            t_last = t
            stream = wanted[channel.topic]
            kind = _schema_name(schema.name) if schema else ""
            if stream == "command" and kind in {JOINT_STATE, JOINT_TRAJECTORY}:
                commands.append((t, kind, msg))
            elif kind == JOINT_STATE:
                stamp = float(msg.header.stamp.sec) + 1e-9 * float(msg.header.stamp.nanosec)
                collectors.setdefault(stream, _Collector(stream)).add(
                    t, msg.name, msg.position, msg.velocity, msg.effort, stamp)
            else:
                raise RecordingError(  # noqa: TRY301 - re-raised as is below
                    f"{path}: topic {channel.topic} has type {kind!r}; "
                    f"expected {JOINT_STATE} or {JOINT_TRAJECTORY}")
    except RecordingError:
        raise
    except Exception as exc:  # noqa: BLE001 - mcap raises many kinds on a damaged file
        raise RecordingError(f"{path}: cannot read the recording: {_why(exc, path)}") from None
    if not collectors and not commands:
        raise AnalysisError(f"{path}: none of the topics {sorted(wanted)} was recorded")
    origin = t_first or 0.0
    streams = {name: c.series(origin) for name, c in collectors.items()}
    if "written" in streams:  # each write's goals stay on the wire until the next
        streams["written"] = replace(streams["written"], held=True)
    if commands:
        try:
            command = _commands(commands, streams, origin, t_last, followers or {})
        except ValueError as exc:
            raise RecordingError(f"{path}: a command the nodes reject: {exc}") from None
        # Streamed targets are held by the robot until the next one; trajectories are
        # sampled as followed (a continuous signal between the samples).
        streams["command"] = replace(command.series(origin),
                                     held=all(k == JOINT_STATE for _, k, _ in commands))
    return streams


def model_followers(world: World, *, joint_prefix: str = "") -> dict[str, tuple[str, float, float]]:
    """The mimic joints of ``world`` for :func:`read_recording`, by public joint name."""
    return {joint_prefix + d.name: (joint_prefix + d.mimic.leader, d.mimic.multiplier,
                                    d.mimic.offset)
            for s in world.skeletons for d in s.dofs if d.mimic is not None}


def _why(exc: Exception, path: Path) -> str:
    """What is wrong with the file, in words, also when the exception says nothing."""
    text = str(exc)
    if text:
        return text
    try:
        empty = path.stat().st_size == 0
    except OSError:
        empty = False
    return "the file is empty" if empty else f"not a complete MCAP file ({type(exc).__name__})"
