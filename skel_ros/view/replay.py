"""``skel-ros view RUN.mcap``: a recorded run replayed, and exported as one HTML file.

The recording's joint streams are read by :func:`skel_ros.analysis.read_recording`
(``/sim/joint_states``, ``/real/joint_states``, further engines'), each robot's model
from its ``/<namespace>/robot_description`` (recorded once, meshes embedded:
:mod:`skel_ros.view.description`), or from ``model`` for a recording made before the
descriptions were recorded. The simulated robot (``sim``, else the first engine) is
drawn solid and the real one as a ghost coloured by the error of each joint
(:mod:`skel_ros.view.pair`).

The run is sampled on a regular grid (:data:`DEFAULT_FPS`); the interactive replay
has a time slider and a play button, the export (:func:`export_html`) records one
scene update per grid step into viser's scene serializer and writes its offline
player: one HTML file with the viewer and the scene inside, which plays in a loop with
its own time bar.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.analysis.errors import AnalysisError
from skel_ros.analysis.recording import StreamTopics, read_recording
from skel_ros.view.description import world_from_description
from skel_ros.view.errors import ViewError
from skel_ros.view.pair import DEFAULT_ERROR_SCALE, RobotPair

if TYPE_CHECKING:
    import viser

    from skel_ros.analysis.series import JointSeries
    from skel_ros.model.types import Array, World

__all__ = ["DEFAULT_FPS", "Replay", "ReplayView", "export_html", "load_replay"]

DEFAULT_FPS = 30.0
"""Frames per second of the replay grid (and of the exported file)."""

DESCRIPTION = "robot_description"
SOLID_STREAMS = ("sim", "dart", "mujoco")
GHOST_STREAM = "real"


@dataclass(frozen=True)
class Replay:
    """A recorded run ready to draw.

    Attributes:
        source: The recording.
        robots: ``(solid, ghost)`` stream names (the ghost "" when there is none).
        worlds: Each robot's model.
        times: (n,) the grid, seconds from the recording's start.
        positions: Per robot, (n, njoint) positions on the grid (NaN before its first
            sample and after its last).
        joints: Per robot, the joint names of its columns.
    """

    source: Path
    robots: tuple[str, str]
    worlds: dict[str, World]
    times: Array
    positions: dict[str, Array]
    joints: dict[str, tuple[str, ...]]

    @property
    def duration(self) -> float:
        """Seconds from the first to the last grid time."""
        return float(self.times[-1] - self.times[0])

    def frame(self, index: int) -> dict[str, dict[str, float]]:
        """Per robot, joint -> position at grid step ``index``."""
        return {name: dict(zip(self.joints[name], (float(v) for v in self.positions[name][index]),
                               strict=True))
                for name in self.positions}


def recorded_descriptions(path: Path) -> dict[str, str]:
    """Namespace -> the URDF of every ``/<namespace>/robot_description`` in the file.

    Raises:
        ViewError: the file cannot be read as an MCAP file.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    out: dict[str, str] = {}
    try:
        with path.open("rb") as f:
            reader = make_reader(f, decoder_factories=[DecoderFactory()])
            summary = reader.get_summary()
            channels = summary.channels.values() if summary is not None else ()
            topics = [c.topic for c in channels if c.topic.endswith("/" + DESCRIPTION)]
            if topics:
                for _, channel, _, msg in reader.iter_decoded_messages(topics=topics):
                    out[channel.topic.removesuffix("/" + DESCRIPTION).strip("/")] = msg.data
    except OSError as exc:
        raise ViewError(f"{path}: cannot read the recording: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - mcap raises many kinds on a damaged file
        raise ViewError(f"{path}: cannot read the recording: {exc or type(exc).__name__}"
                        ) from None
    return out


def load_replay(path: str | Path, *, mesh_dir: Path, model: World | None = None,
                fps: float = DEFAULT_FPS, start: float = 0.0,
                end: float | None = None) -> Replay:
    """Read the recording at ``path`` for replay (see the module doc).

    Args:
        path: The MCAP file.
        mesh_dir: Where the recorded descriptions' embedded meshes are written.
        model: The model of every robot, instead of the recorded descriptions.
        fps: The grid's rate.
        start: The grid's first time (seconds from the recording's start).
        end: Its last (default: the last joint state).

    Raises:
        ViewError: the file cannot be read, holds no robot's joint states, a robot has
            no recorded description and no ``model`` was given, or ``start`` .. ``end``
            is not within the run.
    """
    path = Path(path)
    if not fps > 0:
        raise ViewError(f"the frame rate must be positive, not {fps}")
    try:
        streams = read_recording(path)
    except AnalysisError as exc:  # RecordingError included: the message names the file
        raise ViewError(str(exc)) from None
    solid = next((s for s in SOLID_STREAMS if s in streams), "")
    ghost = GHOST_STREAM if GHOST_STREAM in streams else ""
    if not solid:
        solid, ghost = ghost, ""
    if not solid:
        raise ViewError(f"{path}: no robot's joint_states (topics"
                        f" {', '.join(_topics())}) in the recording")
    robots = (solid, ghost)
    descriptions = {} if model is not None else recorded_descriptions(path)
    worlds: dict[str, World] = {}
    for name in filter(None, robots):
        if model is not None:
            worlds[name] = model
            continue
        urdf = descriptions.get(name)
        if urdf is None:
            raise ViewError(f"{path}: no /{name}/{DESCRIPTION} recorded (a recording made"
                            " before robots' descriptions were recorded): give the model"
                            " with --model MODEL")
        worlds[name] = world_from_description(urdf, label=f"{path}: /{name}/{DESCRIPTION}",
                                              mesh_dir=mesh_dir)
    series = {name: streams[name] for name in worlds}
    last = max((float(s.times[-1]) for s in series.values() if len(s)), default=0.0)
    end = last if end is None else end
    if not 0.0 <= start <= end <= last:
        raise ViewError(f"{path}: the replay from {start:g} s to {end:g} s is not within"
                        f" the run (0 to {last:.3f} s)")
    times = np.linspace(start, end, round((end - start) * fps) + 1)
    positions = {name: _on_grid(s, times) for name, s in series.items()}
    joints = {name: s.joint_names for name, s in series.items()}
    return Replay(path, robots, worlds, times, positions, joints)


def _topics() -> list[str]:
    topics = StreamTopics()
    return [topics.sim, topics.real, *(t for _, t in topics.engines)]


def _on_grid(series: JointSeries, times: Array) -> Array:
    if not series.joint_names:
        return np.zeros((times.size, 0))
    return np.column_stack([series.resample(j, times) for j in series.joint_names])


def draw_pair(scene: viser.SceneApi, replay: Replay, *,
              error_scale: float = DEFAULT_ERROR_SCALE) -> RobotPair:
    """The replay's robots in ``scene``, at the first grid step."""
    solid, ghost = replay.robots
    pair = RobotPair(scene, solid, ghost or "_ghost", error_scale=error_scale)
    for name in filter(None, replay.robots):
        pair.add_robot(name, replay.worlds[name])
    show_frame(pair, replay, 0)
    return pair


def show_frame(pair: RobotPair, replay: Replay, index: int) -> None:
    """Pose the pair at grid step ``index``."""
    for name, positions in replay.frame(index).items():
        pair.update(name, positions)


class ReplayView:
    """The interactive replay: the pair, a time slider, play / pause and a speed.

    Args:
        server: The viser server.
        replay: The run.
        error_scale: See :data:`skel_ros.view.pair.DEFAULT_ERROR_SCALE`.
    """

    def __init__(self, server: viser.ViserServer, replay: Replay, *,
                 error_scale: float = DEFAULT_ERROR_SCALE) -> None:
        self.replay = replay
        self.pair = draw_pair(server.scene, replay, error_scale=error_scale)
        self._lock = threading.Lock()
        first = float(replay.times[0])
        last = first + max(replay.duration, 1e-3)
        self.time = server.gui.add_slider("time (s)", min=first, max=last,
                                          step=(last - first) / max(replay.times.size - 1, 1),
                                          initial_value=first)
        self.playing = server.gui.add_checkbox("play", initial_value=False)
        self.speed = server.gui.add_slider("speed", min=0.1, max=4.0, step=0.1,
                                           initial_value=1.0)
        self.time.on_update(lambda _event: self.show(float(self.time.value)))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, name="skel_ros view replay",
                                        daemon=True)
        self._thread.start()

    def show(self, t: float) -> None:
        """Pose the robots at time ``t`` (seconds from the start; nearest grid step)."""
        index = int(np.clip(np.searchsorted(self.replay.times, t), 0, self.replay.times.size - 1))
        with self._lock:
            show_frame(self.pair, self.replay, index)

    def _play(self) -> None:
        period = 1.0 / DEFAULT_FPS
        last = time.monotonic()
        while not self._stop.wait(period):
            now = time.monotonic()
            if self.playing.value:
                t = float(self.time.value) + (now - last) * float(self.speed.value)
                self.time.value = t if t <= self.replay.times[-1] else float(self.replay.times[0])
            last = now

    def close(self) -> None:
        """Stop the playing thread."""
        self._stop.set()
        self._thread.join(timeout=2.0)


def export_html(replay: Replay, output: Path, *,
                error_scale: float = DEFAULT_ERROR_SCALE) -> int:
    """Write the replay as one self-contained HTML file (see the module doc).

    A viser server is started on loopback for the time of the export (its scene is what
    the serializer records); no browser connects to it.

    Returns:
        The file's size in bytes.

    Raises:
        ViewError: the file cannot be written.
    """
    from skel_ros.view.server import frame_scene, start_server, stop_server

    server = start_server()
    try:
        pair = draw_pair(server.scene, replay, error_scale=error_scale)
        frame_scene(server, pair.drawings.values())
        serializer = server.get_scene_serializer()
        step = float(replay.times[1] - replay.times[0]) if replay.times.size > 1 else 0.0
        for index in range(1, replay.times.size):
            serializer.insert_sleep(step)
            show_frame(pair, replay, index)
        html = serializer.as_html()
    finally:
        stop_server(server)
    try:
        output.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ViewError(f"cannot write {output}: {exc.strerror or exc}") from None
    return len(html.encode("utf-8"))
