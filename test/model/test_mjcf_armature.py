"""The MJCF writer's armature: per (skeleton, DOF), on hinges and slides; never dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from skel_ros.model import load_model
from skel_ros.model.interchange_errors import ExportError
from skel_ros.model.mjcf import world_to_mjcf

REPO = Path(__file__).resolve().parents[2]
JOINTS = REPO / "test" / "model" / "data" / "mjcf_joints.skel"


def _joints(xml: str) -> dict[str, etree._Element]:
    return {str(j.get("name")): j for j in etree.fromstring(xml.encode()).iter("joint")}


def test_each_dof_given_gets_its_armature_and_no_other() -> None:
    world = load_model(REPO / "examples" / "arm.skel")
    joints = _joints(world_to_mjcf(world, armature={("arm", "elbow"): 0.0125,
                                                    ("arm", "wrist"): 0.0}).xml)
    assert joints["elbow"].get("armature") == "0.0125"
    assert [n for n, j in joints.items() if j.get("armature") is not None] == ["elbow"]


def test_an_armature_mjcf_has_no_place_for_is_refused_at_the_joint() -> None:
    world = load_model(JOINTS)
    with pytest.raises(ExportError) as caught:
        world_to_mjcf(world, armature={("more", "gimbal_x"): 0.1})
    assert "ball joint 'gimbal' becomes no MJCF hinge or slide" in str(caught.value)
    assert caught.value.location.line > 0


@pytest.mark.parametrize(("armature", "message"), [
    ({("arm", "elbw"): 0.1}, "has no such (skeleton, DOF)"),
    ({("arm", "elbow"): -0.1}, "must be a finite number >= 0"),
    ({("arm", "elbow"): float("nan")}, "must be a finite number >= 0"),
])
def test_a_wrong_armature_is_refused(armature: dict[tuple[str, str], float],
                                     message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        world_to_mjcf(load_model(REPO / "examples" / "arm.skel"), armature=armature)
