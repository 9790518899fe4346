"""CASPR bodies.xml / cables.xml: structure, every joint type's kinematics, cables, errors.

The kinematics check is the real one: for every value of CASPR's JointType enum
(``data/caspr/all_joint_types_bodies.xml`` has one link per type) and random
joint coordinates in CASPR's q order, the parent-link-to-link transform our model
gives (through ``Kinematics``, across the virtual bodies of P_XY / P_XZ /
SPATIAL_EULER_XYZ) equals ``[R_pe, r_parent + r_rel]`` computed with CASPR's own
formulas (``src/Model/Bodies/Joints/*.m``: RelRotationMatrix, RelTranslationVector),
written out below.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import (
    ActuatorType,
    CasprError,
    JointType,
    Kinematics,
    SkelError,
    World,
    load_model,
    load_skel,
    world_to_skel,
)
from skel_ros.model.caspr_model import (
    CASPR_JOINT_TYPES,
    VIRTUAL_MASS,
    CableType,
    CasprBodies,
    load_caspr_bodies,
    load_caspr_cables,
)

DATA = Path(__file__).resolve().parent / "data" / "caspr"
ARM = DATA / "arm_bodies.xml"


def rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rot_axis(axis: np.ndarray, t: float) -> np.ndarray:  # RevoluteAxis.m (Rodrigues)
    a = axis
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(t) * k + (1 - math.cos(t)) * k @ k


def caspr_relative(jtype: str, q: np.ndarray, axis: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:  # noqa: E501
    """(R_pe, r_rel) of CASPR's joint classes."""
    z3 = np.zeros(3)
    table = {
        "R_X": lambda: (rx(q[0]), z3), "R_Y": lambda: (ry(q[0]), z3),
        "R_Z": lambda: (rz(q[0]), z3),
        "R_AXIS": lambda: (rot_axis(axis, q[0]), z3),
        "U_XY": lambda: (rx(q[0]) @ ry(q[1]), z3), "U_YZ": lambda: (ry(q[0]) @ rz(q[1]), z3),
        "U_XZ": lambda: (rx(q[0]) @ rz(q[1]), z3),
        "P_X": lambda: (np.eye(3), np.array([q[0], 0, 0])),
        "P_AXIS": lambda: (np.eye(3), q[0] * axis),
        "P_XY": lambda: (np.eye(3), np.array([q[0], q[1], 0])),
        "P_XZ": lambda: (np.eye(3), np.array([q[0], 0, q[1]])),
        "PLANAR_XY": lambda: (rz(q[2]), np.array([q[0], q[1], 0])),
        "PLANAR_YZ": lambda: (rx(q[2]), np.array([0, q[0], q[1]])),
        "PLANAR_XZ": lambda: (ry(q[2]), np.array([q[0], 0, q[1]])),
        "S_EULER_XYZ": lambda: (rx(q[0]) @ ry(q[1]) @ rz(q[2]), z3),
        "S_FIXED_XYZ": lambda: (rz(q[2]) @ ry(q[1]) @ rx(q[0]), z3),
        "T_XYZ": lambda: (np.eye(3), q[:3].copy()),
        "SPATIAL_EULER_XYZ": lambda: (rx(q[3]) @ ry(q[4]) @ rz(q[5]), q[:3].copy()),
    }
    return table[jtype]()


@pytest.fixture(scope="module")
def all_types() -> CasprBodies:
    return load_caspr_bodies(DATA / "all_joint_types_bodies.xml")


def test_every_enum_value_is_in_the_example(all_types: CasprBodies) -> None:
    assert [link.joint_type for link in all_types.links] == list(CASPR_JOINT_TYPES)


def test_every_joint_type_moves_as_caspr_says(all_types: CasprBodies) -> None:
    skel = all_types.world.skeletons[0]
    kin = Kinematics(skel)
    index = {d.name: i for i, d in enumerate(skel.dofs)}
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(-1.2, 1.2, skel.num_dofs)
        world_tf = kin.body_transforms(q)
        body_index = {b.name: i for i, b in enumerate(skel.bodies)}
        for link in all_types.links:
            q_caspr = np.array([q[index[n]] for n in link.dofs])
            r_pe, r_rel = caspr_relative(link.joint_type, q_caspr, link.axis)
            expected = np.eye(4)
            expected[:3, :3] = r_pe
            expected[:3, 3] = np.asarray(link.parent_location) + r_rel
            parent = np.eye(4) if link.parent_num == 0 else \
                world_tf[body_index[all_types.link(link.parent_num).name]]
            got = np.linalg.inv(parent) @ world_tf[body_index[link.name]]
            np.testing.assert_allclose(got, expected, atol=1e-12, err_msg=link.joint_type)


def test_limits_initial_positions_and_inertia(all_types: CasprBodies) -> None:
    skel = all_types.world.skeletons[0]
    for link in all_types.links:
        for k, name in enumerate(link.dofs):
            dof = skel.dof(name)
            assert dof.initial_position == link.q_initial[k]
            assert (dof.position_lower, dof.position_upper) == (link.q_min[k], link.q_max[k])
        body = skel.body(link.name)
        assert body.inertia.mass == link.mass
        np.testing.assert_allclose(body.inertia.com, link.com)
        np.testing.assert_allclose(body.inertia.moment, link.inertia_com)
        assert all(j.actuator is ActuatorType.PASSIVE for j in skel.joints)
    virtual = [b for b in skel.bodies if "__" in b.name]
    assert len(virtual) == 3  # P_XY, P_XZ, SPATIAL_EULER_XYZ
    assert all(b.inertia.mass == VIRTUAL_MASS for b in virtual)
    assert all(j.type is not JointType.TRANSLATIONAL2D for j in skel.joints)


def test_arm_model() -> None:
    bodies = load_caspr_bodies(ARM)
    world = bodies.world
    assert world.warnings == ()
    np.testing.assert_array_equal(world.gravity, [0.0, 0.0, -9.81])
    skel = world.skeletons[0]
    assert skel.name == "arm"
    assert [d.name for d in skel.dofs] == ["upper_arm_x", "upper_arm_y", "upper_arm_z", "forearm"]
    np.testing.assert_allclose(skel.initial_positions, [0.2, -0.1, 0.05, -0.45])
    # ref="joint": I_G = I_O - m (r.r I - r r^T), with r = (0, 0.1, 0), m = 0.4
    forearm = skel.body("forearm")
    np.testing.assert_allclose(np.diag(forearm.inertia.moment),
                               [0.0052 - 0.4 * 0.01, 0.00005, 0.0051 - 0.4 * 0.01])
    np.testing.assert_allclose(skel.joint("forearm").T_parent_to_joint[:3, 3], [0, 0.35, 0])
    assert bodies.default_operational_set == "hand"
    assert set(bodies.operational_sets) == {"hand", "elbow_orientation"}
    assert [m.name for m in forearm.markers] == ["hand"]
    np.testing.assert_allclose(forearm.markers[0].offset, [0, 0.25, 0])
    assert bodies.operational_sets["elbow_orientation"][0].active_axes == "abg"
    np.testing.assert_allclose(bodies.display_range, [-0.4, 0.4, -0.1, 0.8, -0.4, 0.4])
    np.testing.assert_allclose(bodies.link(1).end, [0, 0.35, 0])


def test_separate_operational_space_file_and_load_model(tmp_path: Path) -> None:
    bodies = load_caspr_bodies(DATA / "spatial_bodies.xml",
                               operational_spaces=DATA / "spatial_operational_spaces.xml")
    platform = bodies.world.skeletons[0].body("platform")
    assert [m.name for m in platform.markers] == ["tool"]
    assert bodies.operational_sets["tool"][0].kind == "pose_euler_xyz"
    # load_model finds <model>_operational_spaces.xml next to <model>_bodies.xml.
    for name in ("spatial_bodies.xml", "spatial_operational_spaces.xml"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    world = load_model(tmp_path / "spatial_bodies.xml")
    assert [m.name for m in world.skeletons[0].body("platform").markers] == ["tool"]


def test_written_as_skel_dart_builds_it(tmp_path: Path) -> None:
    dartpy = pytest.importorskip("dartpy")
    world = load_caspr_bodies(DATA / "all_joint_types_bodies.xml").world
    path = tmp_path / "caspr.skel"
    path.write_text(world_to_skel(world))
    assert load_skel(path).skeletons[0].num_dofs == world.skeletons[0].num_dofs
    dart = dartpy.utils.SkelParser.readWorld(f"file://{path}")
    sk = dart.getSkeleton(0)
    assert [sk.getDof(i).getName() for i in range(sk.getNumDofs())] == [
        d.name for d in world.skeletons[0].dofs]
    for _ in range(20):
        dart.step()
    assert np.all(np.isfinite(sk.getPositions()))


# --------------------------------------------------------------------------- cables


def test_cables() -> None:
    bodies = load_caspr_bodies(ARM)
    cables = load_caspr_cables(DATA / "arm_cables.xml", bodies)
    assert cables.default_set == "working"
    working = cables.set()
    assert [c.name for c in working.cables] == ["cable 1", "cable 2", "cable 3"]
    c1, c2, c3 = working.cables
    assert (c1.type, c1.force_min, c1.force_max) == (CableType.IDEAL, 5.0, 80.0)
    assert float(c2.properties["diameter"][0]) == 0.002
    assert c3.type is CableType.LINEAR_SPRING
    assert float(c3.properties["K"][0]) == 1500.0
    assert [a.link for a in c3.attachments] == [0, 1, 2]
    assert [a.link_name for a in c3.attachments] == [None, "upper_arm", "forearm"]
    # attachment_reference="com": the point is moved by the link's COM.
    np.testing.assert_allclose(c3.attachments[1].point, [0.0, 0.25, 0.02])
    np.testing.assert_allclose(c3.attachments[0].point, [0.0, 0.0, 0.12])
    np.testing.assert_allclose(c1.attachments[1].point, c1.attachments[1].location)
    spring = cables.set("springs").cables[0]
    assert spring.type is CableType.PASSIVE_LINEAR_SPRING
    assert (spring.force_min, spring.force_max) == (0.0, math.inf)
    assert float(spring.properties["l0"][0]) == 0.2
    with pytest.raises(KeyError):
        cables.set("nope")


def test_cables_without_bodies_and_bad_links() -> None:
    cables = load_caspr_cables(DATA / "arm_cables.xml")
    assert cables.set().cables[2].attachments[1].link_name is None
    text = (DATA / "arm_cables.xml").read_text().replace("<link>2</link>", "<link>7</link>")
    with pytest.raises(CasprError, match="link 7") as info:
        load_caspr_cables(text, load_caspr_bodies(ARM), name="c.xml")
    assert info.value.location.line > 0
    assert "attachment" in info.value.location.path


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ('type="R_X"', 'type="S_QUATERNION"', "commented out of CASPR's JointType enum"),
        ('type="R_X"', 'type="REVOLUTE"', "not in CASPR's JointType enum"),
        ('q_initial="-0.45"', 'q_initial="-0.45 0"', "q_initial"),
        ('q_min="-2.0"', 'q_min="low"', "not a"),
        ('num="2"', 'num="3"', "does not match its order"),
        ("<num>1</num>", "<num>5</num>", "parent link 5 does not exist"),
        ('ref="joint"', 'ref="base"', "inertia ref"),
        ("<mass>0.4</mass>", "<mass>-1</mass>", "negative"),
        ("<com_location>0.0 0.1 0.0</com_location>", "<com_location>0 0.1</com_location>",
         "3 are required"),
        ('actuated="false"', 'axis="1 0 0"', "only allowed for R_AXIS"),
        ("<link>2</link>", "<link>9</link>", "does not exist"),
    ],
)
def test_bad_bodies_name_line_and_path(old: str, new: str, match: str) -> None:
    text = ARM.read_text()
    assert old in text
    with pytest.raises(CasprError, match=match) as info:
        load_caspr_bodies(text.replace(old, new, 1), name="arm_bodies.xml")
    loc = info.value.location
    assert loc.file == "arm_bodies.xml"
    assert loc.line > 0
    assert loc.path.startswith("/bodies_system")


def test_not_caspr_and_malformed() -> None:
    with pytest.raises(CasprError, match="root element"):
        load_caspr_bodies("<skel/>")
    with pytest.raises(CasprError, match="malformed XML") as info:
        load_caspr_bodies("<bodies_system>\n<links>\n</bodies_system>", name="x.xml")
    assert info.value.location.line == 3
    with pytest.raises(SkelError, match="cables file"):
        load_model((DATA / "arm_cables.xml").read_text())


def test_load_model_reads_caspr_by_content(tmp_path: Path) -> None:
    disguised = tmp_path / "robot.yaml"
    disguised.write_text(ARM.read_text())
    world = load_model(disguised)
    assert isinstance(world, World)
    assert world.skeletons[0].num_dofs == 4
