"""The joint-type table is the one place a joint type is described.

Every type the SKEL reader accepts has a spec; the reader, the SKEL and Phobos
writers, the forward kinematics and the URDF export work from it (each checked here
on a joint generated from the spec alone); no consumer names a joint type of its own;
and for every spec, with dartpy installed, the forward kinematics of a joint of that
type equals DART's at random positions (SkelParser's World for the types it builds,
the joint DART builds through its API for the two it cannot: screw, translational2d).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from model_compare import diff_models

from skel_ros.model import JointType, Kinematics, load_skel
from skel_ros.model import skel_parser as parser_mod
from skel_ros.model.joint_types import (
    JOINT_TYPES,
    PLANE_AXES,
    PLANE_NORMALS,
    EulerOrder,
    JointTypeSpec,
    PlaneType,
    plane_from_normal,
)
from skel_ros.model.kinematics import joint_motion
from skel_ros.model.phobos import phobos_to_world, world_to_phobos
from skel_ros.model.skel_writer import world_to_skel
from skel_ros.model.urdf import urdf_joint_values, world_to_urdf

PACKAGE = Path(__file__).resolve().parents[2] / "skel_ros"
SPECS = list(JOINT_TYPES.values())
IDS = [s.name for s in SPECS]
TOL = 1e-9
Variant = tuple[PlaneType, EulerOrder]  # the plane and axis order, where the type has them


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _vec(v: np.ndarray) -> str:
    return " ".join(repr(float(x)) for x in v)


def _joint_xml(
    spec: JointTypeSpec, rng: np.random.Generator, plane: PlaneType, order: EulerOrder
) -> str:
    """The type-specific elements of a joint of ``spec``, written from the spec alone."""
    parts = []
    for i in range(spec.axes):
        tag = ("axis", "axis2", "axis3")[i]
        pitch = f"<pitch>{rng.uniform(0.05, 0.5)!r}</pitch>" if spec.pitch else ""
        parts.append(f"<{tag}><xyz>{_vec(_unit(rng))}</xyz>{pitch}</{tag}>")
    if spec.euler_order:
        parts.append(f"<axis_order>{order.value}</axis_order>")
    if spec.plane:
        if plane is PlaneType.ARBITRARY:
            a1 = _unit(rng)
            a2 = np.cross(a1, _unit(rng))
            parts.append(
                '<plane type="arbitrary">'
                f"<translation_axis1><xyz>{_vec(a1)}</xyz></translation_axis1>"
                f"<translation_axis2><xyz>{_vec(a2 / np.linalg.norm(a2))}</xyz>"
                "</translation_axis2></plane>")
        else:
            parts.append(f'<plane type="{plane.value}"/>')
    return "".join(parts)


def _document(spec: JointTypeSpec, seed: int, variant: Variant) -> str:
    """Two bodies: a revolute root, then a joint of ``spec`` with a joint transform."""
    rng = np.random.default_rng(seed)
    return f"""<skel version="1.0"><world name="w"><skeleton name="s">
      <body name="a"><transformation>0.1 0.2 0.3 0.4 0.5 0.6</transformation>
        <inertia><mass>1</mass></inertia></body>
      <body name="b"><transformation>0.5 -0.2 0.1 0.3 -0.2 0.1</transformation>
        <inertia><mass>1</mass></inertia></body>
      <joint type="revolute" name="j0"><parent>world</parent><child>a</child>
        <axis><xyz>0 1 0</xyz></axis></joint>
      <joint type="{spec.name}" name="j1"><parent>a</parent><child>b</child>
        <transformation>0.05 -0.1 0.02 0.3 -0.1 0.2</transformation>
        {_joint_xml(spec, rng, *variant)}</joint>
    </skeleton></world></skel>"""


def _variants(spec: JointTypeSpec) -> list[Variant]:
    """Every plane of a type with a plane, every axis order of a type with one."""
    planes = list(PlaneType) if spec.plane else [PlaneType.XY]
    orders = list(EulerOrder) if spec.euler_order else [EulerOrder.XYZ]
    return [(p, o) for p in planes for o in orders]


def _case_id(spec: JointTypeSpec, variant: Variant) -> str:
    plane, order = variant
    return (spec.name + (f"[{plane.value}]" if spec.plane else "")
            + (f"[{order.value}]" if spec.euler_order else ""))


CASES = [(s, v) for s in SPECS for v in _variants(s)]
CASE_IDS = [_case_id(s, v) for s, v in CASES]


# --------------------------------------------------------------------------- the table


def test_every_joint_type_has_one_spec() -> None:
    assert list(JOINT_TYPES) == list(JointType)
    for jtype, spec in JOINT_TYPES.items():
        assert spec.type is jtype
        assert jtype.spec is spec
        assert jtype.num_dofs == spec.num_dofs
        assert len(spec.default_axes) == spec.axes
        assert spec.axis_elements >= spec.axes
        assert not (spec.ignores_axis_elements and spec.axis_elements)
        assert spec.default_pitch == 0.0 or spec.pitch


def test_the_reader_accepts_exactly_the_types_of_the_table() -> None:
    assert set(parser_mod._KINDS) == {s.name for s in SPECS}
    for spec in SPECS:
        kind = parser_mod._KINDS[spec.name]
        assert kind.spec is spec


@pytest.mark.parametrize(("spec", "variant"), CASES, ids=CASE_IDS)
def test_dof_name_rule_and_chain_cover_every_dof(spec: JointTypeSpec, variant: Variant) -> None:
    skel = load_skel(_document(spec, 3, variant)).skeletons[0]
    joint = skel.joint("j1")
    assert joint.type is spec.type
    assert len(joint.dofs) == spec.num_dofs
    assert len(joint.axes) == spec.axes
    suffixes = spec.dof_name_suffixes(joint.euler_order, joint.plane)
    assert len(suffixes) == spec.num_dofs
    assert list(joint.dofs) == ["default" if s is None else "j1" + s for s in suffixes]
    chain = spec.chain(joint)
    assert {m.dof for m in chain} == set(range(spec.num_dofs))
    assert all(m.kind in ("revolute", "prismatic") for m in chain)
    if spec.plane:
        expected = PLANE_AXES.get(variant[0])
        if expected is not None:
            np.testing.assert_array_equal(np.asarray(joint.plane_axes), np.asarray(expected))


def test_no_consumer_names_a_joint_type() -> None:
    """Kinematics, URDF export (and TF), the SKEL writer, the world builder and the
    DART gaps work from the table: none names a joint type. The readers name one only
    for DART's implicit ``root`` joint, which is a free joint."""
    member = re.compile(r"JointType\.([A-Z0-9_]+)")
    allowed = {
        "model/kinematics.py": set(),
        "model/urdf.py": set(),
        "model/skel_writer.py": {"FREE"},  # the implicit root joint DART adds again
        "model/skel_parser.py": {"FREE"},  # the implicit root joint DART adds
        # Phobos's aliases (hinge, linear) and the free joint of a link without a parent.
        "model/phobos.py": {"REVOLUTE", "PRISMATIC", "FREE"},
        "sim/world_builder.py": set(),
        "sim/dart_gaps.py": set(),
        "nodes/robot_publisher.py": set(),
    }
    for rel, ok in allowed.items():
        named = set(member.findall((PACKAGE / rel).read_text(encoding="utf-8")))
        assert named <= ok, f"{rel} names joint types {sorted(named - ok)}"


# --------------------------------------------------------------------------- consumers


@pytest.mark.parametrize(("spec", "variant"), CASES, ids=CASE_IDS)
def test_writers_round_trip_every_type(spec: JointTypeSpec, variant: Variant) -> None:
    world = load_skel(_document(spec, 5, variant), name="t.skel")
    again = load_skel(world_to_skel(world), name="t.skel")
    assert not diff_models(world, again)
    back = phobos_to_world(world_to_phobos(world))
    joint, joint_back = world.skeletons[0].joint("j1"), back.skeletons[0].joint("j1")
    assert joint_back.type is joint.type
    assert joint_back.dofs == joint.dofs
    np.testing.assert_allclose(np.asarray(joint_back.axes).reshape(-1),
                               np.asarray(joint.axes).reshape(-1), atol=1e-12)
    assert joint_back.pitch == joint.pitch
    assert joint_back.euler_order is joint.euler_order
    assert joint_back.plane is joint.plane


@pytest.mark.parametrize(("spec", "variant"), CASES, ids=CASE_IDS)
def test_urdf_export_writes_the_chain(spec: JointTypeSpec, variant: Variant) -> None:
    """One URDF joint per chain motion, named as its DOF (welds: the joint)."""
    world = load_skel(_document(spec, 7, variant), name="t.skel")
    skel = world.skeletons[0]
    joint = skel.joint("j1")
    urdf = world_to_urdf(world)
    chain = spec.chain(joint)
    if not chain:
        assert re.search(r'<joint name="j1" type="fixed"', urdf)
    for motion in chain:
        dof = joint.dofs[motion.dof]
        name = dof if motion.screw_pitch is None else f"{dof}__screw_translation"
        found = re.search(rf'<joint name="{re.escape(name)}" type="(\w+)"', urdf)
        assert found, name
        assert (found.group(1) == "prismatic") == (motion.kind == "prismatic")
    q = np.linspace(-0.7, 0.9, skel.num_dofs)
    values = urdf_joint_values(skel, q)
    assert len(values) == sum(len(j.spec.chain(j)) for j in skel.joints)


# --------------------------------------------------------------------------- FK vs DART


def _dart_reference(text: str, spec: JointTypeSpec):
    dart = pytest.importorskip("dartpy", reason="dartpy (the oracle) comes from scripts/setup.sh")
    if spec.dart_builds:
        return dart.utils.SkelParser.readWorldXML(text).getSkeleton(0)
    # SkelParser reads but cannot build this type: the joint DART builds through its API.
    from skel_ros.sim.world_builder import build_skeleton

    return build_skeleton(load_skel(text).skeletons[0])


@pytest.mark.parametrize(("spec", "variant"), CASES, ids=CASE_IDS)
def test_forward_kinematics_of_every_type_equals_dart(
    spec: JointTypeSpec, variant: Variant) -> None:
    text = _document(spec, 11, variant)
    skel = load_skel(text).skeletons[0]
    dskel = _dart_reference(text, spec)
    if spec.dart_builds:
        assert [d.getName() for d in dskel.getDofs()] == [d.name for d in skel.dofs]
    kin = Kinematics(skel)
    joint = skel.joint("j1")
    dart_joint = dskel.getJoint(1)
    rng = np.random.default_rng(13)
    for _ in range(10):
        q = rng.uniform(-np.pi, np.pi, skel.num_dofs)
        dskel.setPositions(q)
        ours = kin.body_transforms(q)
        for b in range(len(skel.bodies)):
            np.testing.assert_allclose(
                ours[b], dskel.getBodyNode(b).getWorldTransform().matrix(), atol=TOL, rtol=0)
        # The joint's own motion M(q), as DART's relative transform gives it.
        qj = q[joint.first_dof:joint.first_dof + joint.num_dofs]
        motion = joint_motion(joint, qj)[0]
        expected = (np.asarray(joint.T_parent_to_joint) @ motion
                    @ np.linalg.inv(np.asarray(joint.T_child_to_joint)))
        np.testing.assert_allclose(
            expected, dart_joint.getRelativeTransform().matrix(), atol=TOL, rtol=0)


def test_plane_from_normal_is_the_plane_whose_rotation_axis_is_the_normal() -> None:
    """URDF and Phobos give a planar joint by its normal: named planes for x, y, z (any
    length), otherwise an arbitrary plane with orthonormal axes, a1 x a2 along the normal."""
    for ptype, normal in PLANE_NORMALS.items():
        assert plane_from_normal([2.5 * c for c in normal]) == (
            ptype, [list(a) for a in PLANE_AXES[ptype]])
    rng = np.random.default_rng(5)
    for normal in [*(_unit(rng) for _ in range(20)), np.array([1.0, 1e-3, 0.0]) / np.hypot(1, 1e-3)]:
        ptype, (a1, a2) = plane_from_normal(3.0 * normal)
        assert ptype is PlaneType.ARBITRARY
        np.testing.assert_allclose([np.dot(a1, a1), np.dot(a2, a2), np.dot(a1, a2)],
                                   [1.0, 1.0, 0.0], atol=TOL)
        np.testing.assert_allclose(np.cross(a1, a2), normal, atol=TOL)
