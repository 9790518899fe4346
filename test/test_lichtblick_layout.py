"""The shipped Lichtblick / Foxglove layout matches what a sim-to-real recording holds.

``config/lichtblick/sim_to_real.json`` names topics and frames that the code decides: the
robots' description topics (:func:`skel_ros.nodes.recorder.robot_topics`), the frame that
:func:`skel_ros.nodes.robot_publisher.side_by_side` places every robot under, and the index
of the shoulder pitch in the bundled arm's joint states. A rename on either side would leave
the layout drawing nothing, with no error in the app. No app runs here: the file is read
as JSON and checked against those functions (docs/visualization.md tells how the layout
was checked in Lichtblick itself).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from skel_ros.model import load_model
from skel_ros.nodes.recorder import ROBOT_DESCRIPTION, robot_topics
from skel_ros.nodes.robot_publisher import side_by_side
from skel_ros.resources import example

LAYOUT = Path(__file__).resolve().parent.parent / "config" / "lichtblick" / "sim_to_real.json"
ROBOTS = ("sim", "real")


@pytest.fixture(scope="module")
def layout() -> dict[str, Any]:
    """The layout file, parsed (a JSON error names its line and column)."""
    try:
        data = json.loads(LAYOUT.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        pytest.fail(f"{LAYOUT}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}")
    assert isinstance(data, dict), f"{LAYOUT}: a layout is a JSON object"
    return data


@pytest.fixture(scope="module")
def three_d(layout: dict[str, Any]) -> dict[str, Any]:
    """The one 3D panel's configuration."""
    panels = [cfg for key, cfg in layout["configById"].items() if key.startswith("3D!")]
    assert len(panels) == 1, f"{LAYOUT}: want one 3D panel for every robot, found {len(panels)}"
    return panels[0]


def _leaves(node: str | dict[str, Any]) -> list[str]:
    """The panel ids of a layout tree (a panel id, or a split with ``first`` and ``second``)."""
    if isinstance(node, str):
        return [node]
    return _leaves(node["first"]) + _leaves(node["second"])


def test_layout_has_what_the_app_requires_to_import_it(layout: dict[str, Any]) -> None:
    """The fields Lichtblick's import checks, and a panel tree of configured panels."""
    assert isinstance(layout.get("configById"), dict)
    assert isinstance(layout.get("globalVariables"), dict)
    assert isinstance(layout.get("playbackConfig", {}).get("speed"), (int, float))
    assert sorted(_leaves(layout["layout"])) == sorted(layout["configById"])


def test_urdf_layers_are_the_recorded_description_topics(three_d: dict[str, Any]) -> None:
    """One URDF layer per robot, reading the topic the recorder writes its description on."""
    urdf_layers = [layer for layer in three_d["layers"].values()
                   if layer.get("layerId") == "foxglove.Urdf"]
    assert all(layer.get("sourceType") == "topic" for layer in urdf_layers)
    recorded = {topic for topic in robot_topics(ROBOTS)
                if topic.rsplit("/", 1)[-1] == ROBOT_DESCRIPTION}
    assert len(recorded) == len(ROBOTS)
    assert sorted(layer.get("topic") for layer in urdf_layers) == sorted(recorded)


def test_display_frame_is_the_frame_robots_stand_under(three_d: dict[str, Any]) -> None:
    """The display frame is the one parent that sim-to-real places the robots under."""
    parents = {t.header.frame_id for t in side_by_side(("real", "sim")).transforms}
    assert len(parents) == 1
    assert three_d["followTf"] in parents


def test_transform_preloading_is_on(three_d: dict[str, Any]) -> None:
    """Every robot's transforms share /tf: without preloading a seek leaves one robot stale."""
    assert three_d["scene"]["transforms"]["enablePreloading"] is True


def test_plot_shows_the_shoulder_pitch_of_sim_and_real(layout: dict[str, Any]) -> None:
    """The plot's ``position[k]`` is the shoulder pitch of the bundled arm, for both robots."""
    plots = [cfg for key, cfg in layout["configById"].items() if key.startswith("Plot!")]
    assert len(plots) == 1
    paths = [re.fullmatch(r"/(\w+)/joint_states\.position\[(\d+)\]", p["value"])
             for p in plots[0]["paths"]]
    assert all(paths), [p["value"] for p in plots[0]["paths"]]
    joints = [d.name for s in load_model(example("arm.skel")).skeletons for d in s.dofs]
    assert sorted(m[1] for m in paths if m) == sorted(ROBOTS)
    assert {joints[int(m[2])] for m in paths if m} == {"shoulder_pitch"}
