"""Synthetic recordings for the analysis tests: JointState streams in an MCAP file.

What ``skel-ros sim-to-real`` records, written without ROS: the command on
``/joint_commands``, the simulation and the hardware on their ``joint_states``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path

    from skel_ros.analysis.series import JointSeries

TOPICS = {"command": "/joint_commands", "sim": "/sim/joint_states",
          "real": "/real/joint_states", "written": "/real/written_goals"}
"""Stream name -> topic, as a sim-to-real session records them."""

JOINT_STATE_MSGDEF = """\
std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
================================================================================
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
================================================================================
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""


def joint_state(stamp: tuple[int, int], names: Sequence[str],
                positions: Sequence[float]) -> dict[str, Any]:
    """A JointState message (positions only) stamped ``(sec, nanosec)``."""
    return {"header": {"stamp": {"sec": stamp[0], "nanosec": stamp[1]}, "frame_id": ""},
            "name": list(names), "position": list(positions), "velocity": [], "effort": []}


def write_joint_states(path: Path, messages: Iterable[tuple[int, str, dict[str, Any]]]) -> Path:
    """Write ``(log time in ns, stream, message)`` in the order given; returns ``path``."""
    from mcap_ros2.writer import Writer

    with path.open("wb") as f:
        writer = Writer(f)
        schema = writer.register_msgdef("sensor_msgs/msg/JointState", JOINT_STATE_MSGDEF)
        for ns, stream, msg in messages:
            writer.write_message(TOPICS[stream], schema, msg, log_time=ns, publish_time=ns)
        writer.finish()
    return path


WALL = 1_790_000_000.0  # s: the recorder's clock in write_run


def write_run(path: Path, real: JointSeries,
              commands: Iterable[tuple[float, Sequence[str], Sequence[float]]], *,
              written: Iterable[tuple[float, Sequence[str], Sequence[float]]] = ()) -> Path:
    """A sim-to-real recording of a robot alone: ``real`` on /real/joint_states (positions,
    velocities, efforts), and ``(time, joints, positions)`` commands on /joint_commands;
    times in s from :data:`WALL` (a command just before a read of the same time).
    ``written``: the goals as the hardware wrote them, ``(time, joints, positions)`` on
    /real/written_goals (stamped then, received 1 ms later)."""
    def stamp(ns: int) -> tuple[int, int]:
        return ns // 10**9, ns % 10**9

    messages = []
    for i, x in enumerate(real.times):
        ns = round((WALL + x) * 1e9)
        msg = joint_state(stamp(ns), real.joint_names, real.positions[i].tolist())
        msg["velocity"], msg["effort"] = real.velocities[i].tolist(), real.efforts[i].tolist()
        messages.append((ns, "real", msg))
    for x, names, positions in commands:
        ns = round((WALL + x) * 1e9) - 1
        messages.append((ns, "command", joint_state(stamp(ns), names, list(positions))))
    for x, names, positions in written:
        ns = round((WALL + x) * 1e9)
        messages.append((ns + 1_000_000, "written", joint_state(stamp(ns), names,
                                                                list(positions))))
    messages.sort(key=lambda m: m[0])
    return write_joint_states(path, messages)
