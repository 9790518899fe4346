"""What a recording needs for a viewer to draw its robots, checked as a viewer reads it.

The file is decoded with mcap-ros2-support's decoder (an independent CDR decoder that
only knows the schema text), through the mcap reader. Each robot namespace's
``robot_description`` must be there once, with no mesh given by a path of the
recording machine; and at every ``joint_states`` message of a robot after its first,
every link of its URDF must have a TF path to the URDF's root, through ``/tf_static``
and the latest ``/tf`` of each frame recorded up to then (log times: the recording's
one clock).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path


def _root_path_missing(links: Iterable[str], root: str, parents: dict[str, str]) -> list[str]:
    """The links with no chain of ``parents`` (child -> parent frame) up to ``root``."""
    missing = []
    for link in links:
        frame, hops = link, 0
        while frame != root and frame in parents and hops <= len(parents):
            frame, hops = parents[frame], hops + 1
        if frame != root:
            missing.append(link)
    return missing


def assert_draws_robots(path: Path, namespaces: Iterable[str], *,
                        common_root: str | None = None) -> dict[str, int]:
    """Assert the recording at ``path`` draws the robot of each namespace (module doc).

    With ``common_root``, each robot's root must also have a TF path to that frame, so
    one 3D panel (one fixed frame) shows them all.

    Returns:
        Per namespace, the ``joint_states`` messages checked.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    namespaces = tuple(namespaces)
    descriptions = {f"/{ns}/robot_description": ns for ns in namespaces}
    states = {f"/{ns}/joint_states": ns for ns in namespaces}
    with path.open("rb") as f:
        messages: list[Any] = list(make_reader(f, decoder_factories=[DecoderFactory()])
                                   .iter_decoded_messages(
                                       topics=[*descriptions, *states, "/tf_static", "/tf"],
                                       log_time_order=True))
    counts = Counter(channel.topic for _, channel, _, _ in messages)
    assert all(counts[t] == 1 for t in descriptions), counts
    assert counts["/tf_static"] >= 1, counts
    assert counts["/tf"] >= 1, counts

    links: dict[str, list[str]] = {}
    roots: dict[str, str] = {}
    for _, channel, _, msg in messages:
        if channel.topic not in descriptions:
            continue
        ns = descriptions[channel.topic]
        urdf = ET.fromstring(msg.data)
        for mesh in urdf.iter("mesh"):
            uri = mesh.get("filename", "")
            assert not uri.startswith("file://"), f"{ns}: a path of this machine: {uri[:80]}"
        links[ns] = [link.get("name", "") for link in urdf.iter("link")]
        children = {j.find("child").get("link") for j in urdf.iter("joint")}  # type: ignore[union-attr]
        (roots[ns],) = [name for name in links[ns] if name not in children]

    parents: dict[str, str] = {}  # child frame -> parent frame, latest first
    checked = dict.fromkeys(namespaces, 0)
    seen: set[str] = set()
    for _, channel, record, msg in messages:  # log time order
        topic = channel.topic
        if topic in ("/tf_static", "/tf"):
            parents.update({t.child_frame_id: t.header.frame_id for t in msg.transforms})
        elif topic in states:
            ns = states[topic]
            if topic not in seen:
                seen.add(topic)
                continue
            missing = _root_path_missing(links[ns], roots[ns], parents)
            assert not missing, (f"{ns} at {record.log_time} ns: no TF path from {missing} to"
                                 f" {roots[ns]}")
            if common_root is not None:
                assert not _root_path_missing([roots[ns]], common_root, parents), (
                    f"{ns} at {record.log_time} ns: no TF path from {roots[ns]} to"
                    f" {common_root}")
            checked[ns] += 1
    assert all(checked.values()), checked
    return checked
