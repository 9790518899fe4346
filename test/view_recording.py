"""A small recording of the arm that draws itself, written without ROS, for the view tests.

What ``skel-ros sim-to-real`` records for the view: ``/sim/joint_states`` and
``/real/joint_states`` (the real arm lagging and off by a growing error on the elbow)
and each robot's ``robot_description`` (frames prefixed, meshes embedded as ``data:``
URIs, as the recorder writes them).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from joint_state_mcap import JOINT_STATE_MSGDEF, joint_state

if TYPE_CHECKING:
    from skel_ros.model.types import World

REPO = Path(__file__).resolve().parents[1]
ARM = REPO / "examples" / "arm.skel"
JOINTS = ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
RATE = 50.0  # Hz
ORIGIN_NS = 1_000_000_000_000


def arm_positions(t: float, duration: float) -> list[float]:
    """The simulated arm at ``t``: from upright to a bent pose over ``duration``."""
    s = min(max(t / duration, 0.0), 1.0)
    return [1.6 * s, 1.0 * s, 0.3 + 1.2 * s, -0.8 * s]


def write_view_recording(path: Path, world: World, mesh_dir: Path, *,
                         duration: float = 2.0) -> Path:
    """Write the recording (module doc) of ``duration`` seconds; returns ``path``."""
    from mcap_ros2.writer import Writer

    from skel_ros.mesh_uris import embedded_mesh_uris
    from skel_ros.model.urdf import world_to_urdf

    with path.open("wb") as f:
        writer = Writer(f)
        states = writer.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE_MSGDEF)
        strings = writer.register_msgdef("std_msgs/msg/String", "string data\n")
        for ns in ("sim", "real"):
            urdf = world_to_urdf(world, frame_prefix=f"{ns}/", world_link=f"{ns}/world",
                                 mesh_dir=mesh_dir)
            writer.write_message(f"/{ns}/robot_description", strings,
                                 {"data": embedded_mesh_uris(urdf)},
                                 log_time=ORIGIN_NS, publish_time=ORIGIN_NS)
        for k in range(int(duration * RATE) + 1):
            t = k / RATE
            stamp_ns = ORIGIN_NS + round(t * 1e9)
            sim = arm_positions(t, duration)
            real = arm_positions(t - 0.1, duration)
            real[2] += 0.1 * t / duration  # the elbow drifts: 0.1 rad at the end
            for ns, q in (("sim", sim), ("real", real)):
                writer.write_message(f"/{ns}/joint_states", states,
                                     joint_state(divmod(stamp_ns, 10**9), JOINTS, q),
                                     log_time=stamp_ns + 1, publish_time=stamp_ns + 1)
        writer.finish()
    return path

