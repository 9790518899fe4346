"""Followers (mimic joints) in what commands write and say: the ros2_control tag,
init-hardware, identify."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lxml import etree

from skel_ros.cli.main import main
from skel_ros.model import load_model, world_to_urdf
from skel_ros.ros2_control import ros2_control_urdf

if TYPE_CHECKING:
    import pytest

REPO = Path(__file__).resolve().parents[2]


def _joints(path: Path) -> dict[str, etree._Element]:
    world = load_model(path)
    xml = ros2_control_urdf(world_to_urdf(world), world, commands_topic="/joint_commands",
                            states_topic="/joint_states")
    tag = etree.fromstring(xml.encode()).find("ros2_control")
    return {str(j.get("name")): j for j in tag.iter("joint")}


def test_a_follower_has_states_and_its_coupling_but_no_command_interface() -> None:
    joints = _joints(REPO / "examples" / "gripper_arm.urdf")
    assert list(joints) == ["shoulder", "elbow", "finger_left", "finger_right"]
    right = joints["finger_right"]
    assert right.find("command_interface") is None  # the nodes refuse commands naming it
    assert [s.get("name") for s in right.iter("state_interface")] == [
        "position", "velocity", "effort"]
    params = {p.get("name"): p.text for p in right.findall("param")}
    assert params == {"mimic": "finger_left", "multiplier": "-1.0", "offset": "0.0"}
    assert joints["finger_left"].find("command_interface").get("name") == "position"


def test_a_followers_initial_value_is_the_rules() -> None:
    follower = _joints(REPO / "test" / "model" / "data" / "mimic" / "offset_linkage.urdf")
    values = {name: float(j.find("state_interface/param").text) for name, j in follower.items()}
    assert any(abs(v - 0.3) < 1e-12 for v in values.values())  # 0.5 * 0 + 0.3


def test_init_hardware_maps_independent_joints_unless_asked(tmp_path: Path) -> None:
    out = tmp_path / "hw.yaml"
    model = str(REPO / "examples" / "gripper_arm.urdf")
    assert main(["init-hardware", model, "--protocol", "dynamixel", "-o", str(out)]) == 0
    text = out.read_text()
    assert "finger_right (follows finger_left)" in text  # the header says why
    assert "\n  finger_right:" not in text
    assert "\n  finger_left:" in text
    assert main(["init-hardware", model, "--protocol", "dynamixel", "-o", str(out),
                 "--include-followers"]) == 0
    assert "\n  finger_right:" in out.read_text()


def test_identify_says_whose_load_a_follower_is(capsys: pytest.CaptureFixture[str]) -> None:
    from skel_ros.cli.identify_cmd import _print_carried

    skel = next(s for s in load_model(REPO / "examples" / "gripper_arm.urdf").skeletons
                if s.num_dofs)
    _print_carried(skel, ("shoulder", "elbow", "finger_left"))
    out = capsys.readouterr().out
    assert out.startswith("note: finger_right (with finger_left): a mimic follower moved by")
    _print_carried(skel, ("shoulder", "elbow"))  # its leader not identified: nothing said
    assert capsys.readouterr().out == ""
