"""URDF, xacro and SMURF in: every element's mapping, and every refusal with its place."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import JointType, Kinematics, draft, load_model
from skel_ros.model.errors import Location
from skel_ros.model.interchange_errors import UrdfError
from skel_ros.model.transforms import rot_x, rot_y, rot_z
from skel_ros.model.types import Box, Capsule, Cylinder, Mesh, ShapeRole, Sphere
from skel_ros.model.urdf_reader import FLOATING_BASE, find_package, load_urdf

ARM = """<?xml version="1.0"?>
<robot name="arm">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="world"/>
  <link name="base">
    <inertial>
      <origin xyz="0 0 0.1" rpy="0 0 0"/>
      <mass value="2"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/>
    </inertial>
    <visual><geometry><box size="0.1 0.2 0.3"/></geometry><material name="blue"/></visual>
    <collision><origin xyz="0 0 0.05"/>
      <geometry><cylinder radius="0.05" length="0.1"/></geometry></collision>
  </link>
  <link name="upper">
    <inertial>
      <origin xyz="0.1 0 0" rpy="0.3 -0.2 0.5"/>
      <mass value="1"/>
      <inertia ixx="0.01" ixy="0.001" ixz="0.002" iyy="0.02" iyz="0.003" izz="0.03"/>
    </inertial>
    <visual><geometry><sphere radius="0.04"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <collision><geometry><capsule radius="0.02" length="0.2"/></geometry></collision>
  </link>
  <link name="fore"><inertial><mass value="0.5"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="slider"><inertial><mass value="0.2"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="tool"/>
  <joint name="fix" type="fixed"><parent link="world"/><child link="base"/></joint>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.2" rpy="0.1 0.2 0.3"/><axis xyz="0 0 2"/>
    <limit lower="-1.5" upper="1.2" velocity="2" effort="30"/>
    <dynamics damping="0.4" friction="0.1"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="fore"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit velocity="3" effort="10"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="fore"/><child link="slider"/>
    <origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.1" velocity="0.5" effort="100"/>
  </joint>
  <joint name="tool_joint" type="fixed"><parent link="slider"/><child link="tool"/>
    <origin xyz="0.05 0 0"/></joint>
</robot>
"""


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    return rot_z(y) @ rot_y(p) @ rot_x(r)


def test_links_joints_limits_and_inertia() -> None:
    world = load_model(ARM)
    skel = world.skeletons[0]
    assert skel.name == "arm"
    assert [b.name for b in skel.bodies] == ["base", "upper", "fore", "slider", "tool"]
    assert [d.name for d in skel.dofs] == ["shoulder", "elbow", "slide"]  # URDF's names
    assert skel.joint("fix").type is JointType.WELD
    assert skel.joint("fix").parent is None  # the 'world' link is the world
    shoulder = skel.dof("shoulder")
    assert (shoulder.position_lower, shoulder.position_upper) == (-1.5, 1.2)
    assert (shoulder.velocity_lower, shoulder.velocity_upper) == (-2.0, 2.0)
    assert (shoulder.force_lower, shoulder.force_upper) == (-30.0, 30.0)
    assert (shoulder.damping, shoulder.coulomb_friction) == (0.4, 0.1)
    assert np.allclose(skel.joint("shoulder").axes[0], [0, 0, 1])  # normalised
    elbow = skel.dof("elbow")
    assert skel.joint("elbow").type is JointType.REVOLUTE
    assert (elbow.position_lower, elbow.position_upper) == (-math.inf, math.inf)
    assert (elbow.velocity_upper, elbow.force_upper) == (3.0, 10.0)
    assert skel.joint("slide").type is JointType.PRISMATIC
    upper = skel.body("upper").inertia
    rot = _rpy(0.3, -0.2, 0.5)
    moment = np.array([[0.01, 0.001, 0.002], [0.001, 0.02, 0.003], [0.002, 0.003, 0.03]])
    assert upper.mass == 1.0
    assert np.allclose(upper.com, [0.1, 0, 0], atol=1e-12)
    assert np.allclose(upper.moment, rot @ moment @ rot.T, atol=1e-12)
    assert skel.body("tool").inertia.mass == 0.0  # no <inertial>: URDF's zero mass


def test_link_frames_follow_the_joint_origins() -> None:
    skel = load_model(ARM).skeletons[0]
    q = np.array([0.7, -0.4, 0.05])
    transforms = Kinematics(skel).body_transforms(q)
    expected = np.eye(4)
    expected[:3, 3] = [0, 0, 0.2]
    expected[:3, :3] = _rpy(0.1, 0.2, 0.3) @ rot_z(0.7)
    assert np.allclose(transforms[skel.bodies.index(skel.body("upper"))], expected, atol=1e-12)
    step = np.eye(4)
    step[:3, 3] = [0.3, 0, 0]
    step[:3, :3] = rot_y(-0.4)
    expected = expected @ step
    assert np.allclose(transforms[skel.bodies.index(skel.body("fore"))], expected, atol=1e-12)


def test_shapes_and_colours() -> None:
    skel = load_model(ARM).skeletons[0]
    base = skel.body("base")
    visual = [s for s in base.shapes if s.role is ShapeRole.VISUAL]
    collision = [s for s in base.shapes if s.role is ShapeRole.COLLISION]
    assert isinstance(visual[0].geometry, Box)
    assert np.allclose(visual[0].color, [0, 0, 1, 1])  # named, defined at the top level
    assert isinstance(collision[0].geometry, Cylinder)
    assert collision[0].geometry.height == pytest.approx(0.1)
    assert np.allclose(collision[0].transform[:3, 3], [0, 0, 0.05])
    upper = skel.body("upper")
    kinds = {type(s.geometry) for s in upper.shapes}
    assert kinds == {Sphere, Capsule}
    assert np.allclose(next(s for s in upper.shapes if s.color is not None).color, [1, 0, 0, 1])


def test_root_link_floats_unless_fixed_or_world() -> None:
    text = ARM.replace('<link name="world"/>', "").replace(
        '<joint name="fix" type="fixed"><parent link="world"/><child link="base"/></joint>', "")
    skel = load_model(text).skeletons[0]
    root = skel.joints[0]
    assert (root.name, root.type, root.child) == (FLOATING_BASE, JointType.FREE, "base")
    assert skel.num_dofs == 6 + 3
    fixed = load_model(text, fixed_base=True).skeletons[0]
    assert fixed.joints[0].type is JointType.WELD
    assert fixed.num_dofs == 3
    # A URDF joint called floating_base keeps its name; ours is named apart.
    renamed = text.replace('name="shoulder"', 'name="floating_base"')
    assert load_model(renamed).skeletons[0].joints[0].name == "floating_base_1"


def test_floating_and_planar_joints() -> None:
    text = """<robot name="r">
      <link name="a"/><link name="b"/><link name="c"/>
      <joint name="float" type="floating"><parent link="a"/><child link="b"/>
        <origin xyz="1 0 0"/></joint>
      <joint name="plane" type="planar"><parent link="b"/><child link="c"/>
        <axis xyz="0 0 1"/></joint>
    </robot>"""
    skel = load_model(text, fixed_base=True).skeletons[0]
    assert skel.joint("float").type is JointType.FREE
    planar = skel.joint("plane")
    assert planar.type is JointType.PLANAR
    q = np.zeros(skel.num_dofs)
    first = planar.first_dof
    q[first:first + 3] = [0.2, 0.3, 0.4]  # in-plane x, y, then the rotation about z
    c = Kinematics(skel).body_transforms(q)[skel.bodies.index(skel.body("c"))]
    assert np.allclose(c[:3, 3], [1.2, 0.3, 0.0])
    assert np.allclose(c[:3, :3], rot_z(0.4))


@pytest.mark.parametrize(("change", "reason", "where"), [
    (('<joint name="elbow" type="continuous">',
      '<joint name="elbow" type="continuous"><mimic joint="wrist" multiplier="2"/>'),
     "mimics joint 'wrist', which does not exist", "<mimic"),
    (('type="prismatic"', 'type="spherical"'), "joint type 'spherical'", '<joint name="slide"'),
    (('<child link="fore"/>', '<child link="nowhere"/>'), "'nowhere', which is not defined",
     '<child link="nowhere"/>'),
    (('<child link="slider"/>', '<child link="upper"/>'), "child of joints",
     '<joint name="slide"'),
    (('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), "zero axis", '<axis xyz="0 0 0"/>'),
    (('<limit lower="-1.5" upper="1.2"', '<limit lower="1.5" upper="1.2"'),
     "lower limit 1.5 is above", '<limit lower="1.5"'),
    (('<mass value="2"/>', '<mass value="-2"/>'), "must not be negative", "-2"),
    (('<mass value="2"/>', '<mass value="two"/>'), "is not 1 number", "two"),
    (('<link name="tool"/>', '<link name="tool"/>\n<link name="tool"/>'), "defined twice",
     '\n<link name="tool"/>'),
    (('<link name="tool"/>', '<link name="tool"/><link name="loose"/>'),
     "exactly one root link", "<robot"),
])
def test_refusals_name_the_place(change: tuple[str, str], reason: str, where: str) -> None:
    text = ARM.replace(*change)
    assert text != ARM
    with pytest.raises(UrdfError) as info:
        load_model(text, name="arm.urdf")
    assert reason in info.value.reason
    assert info.value.location.line == _line(text, where)
    assert info.value.location.file == "arm.urdf"


def _line(text: str, marker: str) -> int:
    """The line of ``marker``'s last character that is not a newline."""
    at = text.index(marker) + len(marker.rstrip()) - 1
    return text[:at].count("\n") + 1


def test_loops_are_refused() -> None:
    text = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="fixed"><parent link="b"/><child link="c"/></joint>
      <joint name="j2" type="fixed"><parent link="c"/><child link="b"/></joint>
    </robot>"""
    with pytest.raises(UrdfError, match="loop"):
        load_model(text)


def test_ignored_elements_are_one_warning_per_kind_with_a_line() -> None:
    extra = """  <transmission name="t1"/>
  <transmission name="t2"/>
  <gazebo reference="base"/>
  <ros2_control name="hw"/>
  <sensor name="s"/>
</robot>"""
    text = ARM.replace("</robot>", extra)
    text = text.replace('<link name="fore">', '<link name="fore" color="red">')
    text = text.replace('<limit velocity="3" effort="10"/>',
                        '<limit velocity="0" effort="10"/><safety_controller k_velocity="1"/>')
    warnings = load_model(text, name="arm.urdf").warnings
    by_text = {w.message.split(":")[0]: w for w in warnings}
    assert by_text["2 <transmission> elements of <robot> ignored (the first is here)"] \
        .location.line == _line(text, '<transmission name="t1"/>')
    assert "<gazebo> ignored" in by_text
    assert "<ros2_control> ignored" in by_text
    assert "<sensor> ignored" in by_text
    assert "<safety_controller> ignored" in by_text
    odd = [w for w in warnings if "attribute 'color' of <link>" in w.message]
    assert len(odd) == 1
    assert odd[0].location.line == _line(text, '<link name="fore" color="red">')
    zero = [w for w in warnings if "velocity=" in w.message]
    assert len(zero) == 1
    assert zero[0].location.line == _line(text, '<limit velocity="0"')
    assert all(w.location.file == "arm.urdf" for w in warnings)


def test_a_massless_moving_link_is_a_warning() -> None:
    text = ARM.replace('<link name="slider"><inertial><mass value="0.2"/>', '<link name="slider">'
                       '<inertial><mass value="0"/>')
    warnings = load_model(text).warnings
    assert any("'slide' moves link 'slider', which carries no mass" in w.message
               for w in warnings)


# --------------------------------------------------------------------------- meshes

def _mesh_urdf(uri: str) -> str:
    return f"""<robot name="m"><link name="a"><visual><geometry>
      <mesh filename="{uri}" scale="2 2 2"/></geometry></visual></link></robot>"""


def _write_stl(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                    "vertex 0 1 0\nendloop\nendfacet\nendsolid t\n")


def test_mesh_uris_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "install"
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / "my_robot"
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    stl = prefix / "share" / "my_robot" / "meshes" / "part.stl"
    _write_stl(stl)
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    for uri in ("package://my_robot/meshes/part.stl", f"file://{stl}"):
        world = load_model(_mesh_urdf(uri))
        mesh = world.skeletons[0].bodies[0].shapes[0].geometry
        assert isinstance(mesh, Mesh)
        assert mesh.path == stl
        assert np.allclose(mesh.scale, [2, 2, 2])
    # Relative to the URDF file.
    urdf = tmp_path / "install" / "share" / "my_robot" / "robot.urdf"
    urdf.write_text(_mesh_urdf("meshes/part.stl"))
    assert load_model(urdf).skeletons[0].bodies[0].shapes[0].geometry.path == stl
    # A search path instead of the ament index.
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    assert find_package("my_robot") is None
    world = load_urdf(_mesh_urdf("package://my_robot/meshes/part.stl"),
                      package_path=[prefix / "share"])
    assert world.skeletons[0].bodies[0].shapes[0].geometry.path == stl


@pytest.mark.parametrize("uri", ["package://nowhere_pkg/meshes/x.stl", "file:///nowhere/x.stl",
                                 "meshes/missing.stl"])
def test_a_missing_mesh_names_its_uri(uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    with pytest.raises(UrdfError) as info:
        load_model(_mesh_urdf(uri), name="m.urdf")
    assert repr(uri) in info.value.reason
    assert info.value.location.line == 2
    assert info.value.location.path.endswith("/mesh")


# --------------------------------------------------------------------------- xacro

XACRO = """<?xml version="1.0"?>
<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.5"/>
  <xacro:property name="length" value="$(arg length)"/>
  <xacro:macro name="segment" params="name parent">
    <link name="${name}"><inertial><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
    <joint name="${name}_joint" type="revolute"><parent link="${parent}"/><child link="${name}"/>
      <origin xyz="0 0 ${length}"/><axis xyz="0 1 0"/>
      <limit lower="-1" upper="1" velocity="1" effort="1"/></joint>
  </xacro:macro>
  <link name="world"/>
  <xacro:segment name="one" parent="world"/>
  <xacro:segment name="two" parent="one"/>
</robot>
"""


def test_xacro_with_arguments(tmp_path: Path) -> None:
    pytest.importorskip("xacro", reason="xacro reads .urdf.xacro files")
    path = tmp_path / "robot.urdf.xacro"
    path.write_text(XACRO)
    world = load_model(path)
    assert [d.name for d in world.skeletons[0].dofs] == ["one_joint", "two_joint"]
    assert world.skeletons[0].joint("two_joint").T_parent_to_joint[2, 3] == pytest.approx(0.5)
    longer = load_model(path, xacro_args={"length": "0.8"})
    assert longer.skeletons[0].joint("two_joint").T_parent_to_joint[2, 3] == pytest.approx(0.8)
    broken = tmp_path / "broken.urdf.xacro"
    broken.write_text(XACRO.replace('parent="one"', 'parent="${undefined_property}"'))
    with pytest.raises(UrdfError, match=r"xacro failed.*undefined_property"):
        load_model(broken)


def test_xacro_arguments_for_a_plain_urdf_are_an_error() -> None:
    with pytest.raises(UrdfError, match="xacro arguments"):
        load_model(ARM, xacro_args={"a": "1"})


# --------------------------------------------------------------------------- SMURF

def _smurf(tmp_path: Path, motors: str) -> Path:
    (tmp_path / "urdf").mkdir()
    (tmp_path / "urdf" / "arm.urdf").write_text(ARM)
    (tmp_path / "smurf").mkdir()
    (tmp_path / "smurf" / "arm_motors.yml").write_text(motors)
    (tmp_path / "smurf" / "arm_sensors.yml").write_text("sensors:\n- {name: cam, link: tool}\n")
    index = tmp_path / "smurf" / "arm.smurf"
    index.write_text("SMURF version: 1.0.0\nmodelname: arm\nfiles:\n- ../urdf/arm.urdf\n"
                     "- arm_motors.yml\n- arm_sensors.yml\n")
    return index


def test_smurf_reads_the_urdf_and_the_motor_limits(tmp_path: Path) -> None:
    index = _smurf(tmp_path, """motors:
- name: m_shoulder
  joint: shoulder
  type: generic_bldc
  maxEffort: 20
  maxSpeed: 2
- name: m_elbow
  joint: elbow
  maxEffort: 0
  maxSpeed: 1.5
  minValue: -2
  maxValue: 2
""")
    world = load_model(index)
    skel = world.skeletons[0]
    shoulder, elbow = skel.dof("shoulder"), skel.dof("elbow")
    assert shoulder.force_upper == 20.0  # tighter than the URDF's 30: a warning says so
    assert shoulder.velocity_upper == 2.0  # the same as the URDF's: no warning
    assert (elbow.position_lower, elbow.position_upper) == (-2.0, 2.0)  # the URDF had none
    assert elbow.velocity_upper == 1.5
    assert elbow.force_upper == 10.0  # maxEffort 0 is Phobos' "no limit"
    messages = [w.message for w in world.warnings]
    assert any("m_shoulder" in m and "force" in m for m in messages)
    assert not any("m_shoulder" in m and "velocity" in m for m in messages)
    ignored = [w for w in world.warnings if "'sensors'" in w.message]
    assert ignored[0].location.line == 1
    assert ignored[0].location.file.endswith("arm_sensors.yml")


def test_smurf_motor_of_an_unknown_joint_names_the_file(tmp_path: Path) -> None:
    index = _smurf(tmp_path, "motors:\n- name: m\n  joint: nope\n")
    with pytest.raises(UrdfError) as info:
        load_model(index)
    assert "'nope'" in info.value.reason
    assert info.value.location.file.endswith("arm_motors.yml")
    assert info.value.location.line == 2


# --------------------------------------------------------------------------- audit fixes

def _chain_urdf(n: int, *, massless: bool = False) -> str:
    inertial = ("" if massless else '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0"'
                ' ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>')
    links = "".join(f'<link name="l{i}">{inertial}</link>\n' for i in range(n))
    parents = ["world"] + [f"l{i}" for i in range(n - 1)]
    joints = "".join(
        f'<joint name="j{i}" type="continuous"><parent link="{parent}"/>'
        f'<child link="l{i}"/><origin xyz="0 0 0.01"/></joint>\n'
        for i, parent in enumerate(parents))
    return f'<robot name="chain">\n<link name="world"/>\n{links}{joints}</robot>\n'


def test_a_3000_link_serial_chain_loads() -> None:
    """No recursion over the tree depth (it overflowed Python's stack near 1,000 links)."""
    world = load_model(_chain_urdf(3000))
    skel = world.skeletons[0]
    assert skel.num_dofs == 3000
    assert skel.body("l2999").rest_transform[2, 3] == pytest.approx(30.0)


def test_a_massless_deep_chain_is_one_warning() -> None:
    text = _chain_urdf(1500, massless=True)
    massless = [w for w in load_model(text).warnings if "carries no mass" in w.message]
    assert len(massless) == 1  # at the top-most joint, not one per joint (a log flood)
    assert "joint 'j0' moves link 'l0'" in massless[0].message
    assert "the 1499 moving joints below it" in massless[0].message
    # A massless subtree further down is warned about at its own top-most joint.
    heavy = text.replace('<link name="l0"></link>', '<link name="l0"><inertial>'
                         '<mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01"'
                         ' iyz="0" izz="0.01"/></inertial></link>')
    massless = [w for w in load_model(heavy).warnings if "carries no mass" in w.message]
    assert [w.message.split(",")[0] for w in massless] == ["joint 'j1' moves link 'l1'"]


def test_xacro_lines_are_the_lines_xacro_prints(tmp_path: Path) -> None:
    xacro = pytest.importorskip("xacro", reason="xacro reads .urdf.xacro files")
    path = tmp_path / "bad.urdf.xacro"
    path.write_text(XACRO.replace('<limit lower="-1" upper="1"', '<limit lower="1" upper="-1"'))
    with pytest.raises(UrdfError, match="lower limit 1 is above") as info:
        load_model(path)
    assert info.value.location.file == f"{path} (xacro output)"
    # What `xacro FILE` prints: the console script if installed, else the function it runs.
    script = Path(sys.executable).with_name("xacro")
    if script.is_file():
        printed = subprocess.run([str(script), str(path)], capture_output=True, text=True,
                                 check=True).stdout
    else:
        printed = xacro.process_file(str(path), mappings={}).toprettyxml(indent="  ")
    lines = printed.splitlines()
    at = info.value.location.line
    assert '<limit effort="1" lower="1" upper="-1" velocity="1"/>' in lines[at - 1]
    assert at == 1 + next(i for i, line in enumerate(lines) if "<limit" in line)
    assert at > 5  # not the single line of a document serialized without its white space


def test_a_grouped_warning_points_at_the_first_occurrence_in_the_file() -> None:
    # Unknown attributes (visited as a whole document) and a <limit> warning (met in tree
    # order, where the joint of the deeper link comes first in the file).
    text = ARM.replace('<dynamics damping="0.4" friction="0.1"/>',
                       '<dynamics damping="0.4" friction="0.1" K="5"/>')
    text = text.replace('<limit velocity="3" effort="10"/>',
                        '<limit velocity="3" effort="10"/><dynamics damping="0.1" K="5"/>')
    text = text.replace('<limit lower="-1.5" upper="1.2" velocity="2"', '<limit velocity="2"')
    text = text.replace('<limit lower="0" upper="0.1" velocity="0.5"', '<limit velocity="0.5"')
    # Move the prismatic joint (deeper in the tree) before the others in the file.
    slide = text[text.index('  <joint name="slide"'):text.index('  <joint name="tool_joint"')]
    text = text.replace(slide, "").replace('  <joint name="fix"', slide + '  <joint name="fix"')
    warnings = load_model(text, name="arm.urdf").warnings
    attr = [w for w in warnings if "attribute 'K' of <dynamics>" in w.message]
    assert len(attr) == 1
    assert "(2 times; the first is here)" in attr[0].message
    assert attr[0].location.line == _line(text, 'friction="0.1" K="5"/>')
    locked = [w for w in warnings if "without lower and upper" in w.message]
    assert len(locked) == 1
    assert "joint 'slide'" in locked[0].message  # the message of the occurrence it points at
    assert locked[0].location.line == _line(text, '<limit velocity="0.5"')


@pytest.mark.parametrize(("geometry", "reason"), [
    ('<box size="1 -1 1"/>', 'box size="1 -1 1": every size must be positive'),
    ('<box size="1 0 1"/>', 'box size="1 0 1": every size must be positive'),
    ('<sphere radius="0"/>', "radius=0 must be positive"),
    ('<cylinder radius="0.1" length="0"/>', "length=0 must be positive"),
    ('<capsule radius="-0.1" length="1"/>', "radius=-0.1 must be positive"),
])
def test_shape_sizes_must_be_positive(geometry: str, reason: str) -> None:
    text = ARM.replace('<sphere radius="0.04"/>', geometry)
    with pytest.raises(UrdfError) as info:
        load_model(text, name="arm.urdf")
    assert reason in info.value.reason
    assert info.value.location.line == _line(text, geometry)
    assert info.value.location.path.endswith("/geometry/" + geometry[1:].split(maxsplit=1)[0])


def test_a_zero_mesh_scale_is_refused_and_a_negative_one_warned(tmp_path: Path) -> None:
    stl = tmp_path / "part.stl"
    _write_stl(stl)
    flat = _mesh_urdf(str(stl)).replace('scale="2 2 2"', 'scale="-1 1 0"')
    with pytest.raises(UrdfError, match="zero factor") as info:
        load_model(flat, name="m.urdf")
    assert info.value.location.line == 2
    assert info.value.location.path.endswith("/mesh")
    with pytest.raises(UrdfError, match="zero factor"):
        load_model(_mesh_urdf(str(stl)).replace('scale="2 2 2"', 'scale="0"'))
    mirrored = _mesh_urdf(str(stl)).replace('scale="2 2 2"', 'scale="-1 1 1"')
    mirrored = mirrored.replace("</link>", f'<collision><geometry><mesh filename="{stl}"'
                                " scale='1 -2 1'/></geometry></collision></link>")
    world = load_model(mirrored, name="m.urdf")
    assert np.allclose(world.skeletons[0].bodies[0].shapes[0].geometry.scale, [-1, 1, 1])
    negative = [w for w in world.warnings if "negative factor" in w.message]
    assert len(negative) == 1  # one warning for the file, at the first one
    assert "(2 times; the first is here)" in negative[0].message
    assert negative[0].location.line == 2


def test_world_as_a_child_link_is_refused_at_the_joint() -> None:
    text = """<?xml version="1.0"?>
<robot name="r">
  <link name="world"/>
  <link name="a"/>
  <joint name="j" type="continuous"><parent link="a"/><child link="world"/></joint>
</robot>
"""
    with pytest.raises(UrdfError) as info:
        load_model(text, name="r.urdf")
    assert "joint 'j' has link 'world' as its child" in info.value.reason
    assert "floating_base" not in str(info.value)
    assert info.value.location.line == 5
    assert info.value.location.path == "/robot[@name='r']/joint[@name='j']"


def test_a_robot_needs_a_name() -> None:
    text = '<?xml version="1.0"?>\n<robot>\n  <link name="a"/>\n</robot>\n'
    with pytest.raises(UrdfError, match="<robot> needs the attribute 'name'") as info:
        load_model(text, name="r.urdf")
    assert info.value.location.line == 2
    assert info.value.location.path == "/robot"


def test_rest_poses_of_a_deep_chain_handed_in_leaf_first() -> None:
    """The importers' rest poses walk the chain without recursion, in any joint order."""
    step = np.eye(4)
    step[2, 3] = 0.01
    joints = [draft.make_joint(f"j{i}", JointType.WELD, None if i == 0 else f"b{i - 1}",
                               f"b{i}", t_parent=step, location=Location("x"))
              for i in range(3000)]
    poses = draft.rest_poses(reversed(joints))
    assert poses["b2999"][2, 3] == pytest.approx(30.0)
    assert poses["b0"][2, 3] == pytest.approx(0.01)
