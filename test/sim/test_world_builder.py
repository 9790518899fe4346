"""Our World builder against DART's SkelParser, on the whole corpus.

Three checks per corpus file (plus ``data/features.skel``, which covers what the
corpus does not: planar joints, ZYX euler, pyramids, capsules, cones, planes,
multi-spheres, markers, soft spheres / ellipsoids / cylinders, every actuator):

1. **Structure**: our dartpy World (built from ``load_skel`` through DART's API)
   and SkelParser's have the same skeletons, joints, DOFs, bodies and shape
   nodes, in the same order, with equal names, types, flags and aspects; every
   number agrees within 1e-9 relative (the model tests' tolerance). Measured: 58
   of 67 files are bit-identical; the others differ by 1-2 ulp in rest transforms
   or shape-derived inertias, and by 2.2e-10 in the inertia of mass-only mesh
   bodies (``bullet_collision``, ``shapes``, ``test_shapes``).
2. **Fixture** (proof 1): through ``SimEngine`` (as the node and ``skel-ros
   simulate`` run it), 100 zero-command steps, limits not enforced (SkelParser never
   enforces them), against the fixture's ``after_steps``. Tolerance: 1e-14 on
   positions, 1e-11 on velocities. Measured maxima: 5.3e-15 / 1.8e-12
   (``fullbody1``, ``file_info_world_test``); every bit-identical build matches
   exactly.
3. **Random commands** (proof 2): 1,000 steps side by side with a SkelParser
   World, the same seeded random commands on every actuated DOF of both (ours
   through ``SimEngine.set_commands``), each as its actuator takes it: efforts on
   FORCE DOFs, velocities on SERVO and VELOCITY DOFs, accelerations on
   ACCELERATION DOFs (``joint_actuator_type_test`` and ``features.skel`` have
   them). Values are ``r`` uniform in [-1, 1] (rad/s, rad/s^2), efforts
   ``r / (M^-1)_ii`` (about 1 rad/s^2 on each DOF as if the others were free),
   redrawn every 20 steps. Every loadable corpus file is run, not a subset.
   (Raw ``r M_ii`` torques make DART's long light chains blow up
   to 1e+170 within a second, and the soft chain crashes DART, in SkelParser's
   World as much as in ours.) Tolerance: **0** (bit-identical trajectories) for
   bit-identical builds; otherwise 1e-8 over the first 100 steps (measured <=
   1.3e-9) and 1e-5 after (measured <= 2.9e-6, ``bullet_collision``). Contacts
   amplify the last-bit model differences: the gap grows by ~1e6 between steps
   500 and 1000 in ``kima_human_edited`` and ``two_cubes`` (bodies hitting the
   ground). One file is chaotic within the horizon and is compared over fewer
   steps (``SHORTER_HORIZON``): ``fullbody1`` stands on ~50 ground contacts, and
   at step 979 DART's contact solver resolves them differently in the two worlds
   (the gap jumps from 2e-8 to 1.8e-2 in four steps, with the same number of
   contacts in both), after which the two humanoids fall differently; up to step
   900 its gap stays below 2e-8 and the same 1e-5 tolerance applies. Every
   bit-identical build stays identical for all 1,000 steps, contacts or not, so
   the builder adds no error of its own. The six costliest files whose bodies
   fall onto the ground (``shapes``, ``test_shapes``, ``softBodies``,
   ``soft_cubes``, ``box_stacking``, ``test_drop_sphere``) are run for 400 steps
   (``CONTACT_HORIZON``): their bodies reach the ground at step 158-282, and
   steps 400-1,000, all in contact, were most of their run (55-70 % of
   ``shapes`` and ``softBodies``); by step 300 every skeleton has touched (the
   test checks it), so 400 steps still compare every shape type, soft body and
   stack in contact for 100+ steps, five or more command redraws, from the first
   impact on. (``two_cubes`` and ``kima_human_edited``, which show the late
   growth of the gap, keep the full 1,000 steps.)
"""

from __future__ import annotations

import functools
import math
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

dartpy = pytest.importorskip("dartpy")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "model"))

from corpus_data import (  # noqa: E402
    CORPUS,
    corpus_file,
    fixture_files,
    fixture_id,
    load_fixture,
    requires_corpus,
)
from dart_compare import WorldDiff, diff_worlds, trajectory_gap  # noqa: E402

from skel_ros.model import load_skel  # noqa: E402
from skel_ros.model.joint_types import JOINT_TYPES, JointType, JointTypeSpec  # noqa: E402
from skel_ros.model.types import ActuatorType  # noqa: E402
from skel_ros.sim import SimEngine, build_dart_world  # noqa: E402
from skel_ros.sim.cli import after_steps  # noqa: E402
from skel_ros.sim.dart_gaps import DartFactories  # noqa: E402
from skel_ros.sim.errors import SimBuildError, SimUnsupportedError  # noqa: E402
from skel_ros.sim.world_builder import dartpy_joint  # noqa: E402

FIXTURES = fixture_files()
FEATURES = Path(__file__).resolve().parent / "data" / "features.skel"
SOURCES = [corpus_file(load_fixture(p)) for p in FIXTURES] + [FEATURES]
IDS = [fixture_id(p) for p in FIXTURES] + ["features.skel"]

STRUCTURE_TOL = 1e-9
FIXTURE_POS_TOL = 1e-14
FIXTURE_VEL_TOL = 1e-11
RANDOM_STEPS = 1000
RANDOM_HOLD = 20
EARLY_STEPS, EARLY_TOL = 100, 1e-8
LATE_TOL = 1e-5
# Files whose trajectories separate chaotically within RANDOM_STEPS (module docstring).
SHORTER_HORIZON = {"data/skel/fullbody1.skel": 900}
# Files whose skeletons fall onto the ground: compared through their first impacts and
# 100+ steps of contact (module docstring), each mobile skeleton touching the ground by
# CONTACT_HORIZON - CONTACT_STEPS (checked).
CONTACT_HORIZON = dict.fromkeys(
    ("data/skel/shapes.skel", "data/skel/test/test_shapes.skel", "data/skel/softBodies.skel",
     "data/skel/soft_cubes.skel", "data/skel/test/box_stacking.skel",
     "data/skel/test/test_drop_sphere.skel"),
    400)
CONTACT_STEPS = 100


@functools.cache
def _diff(source: Path) -> WorldDiff:
    return diff_worlds(build_dart_world(load_skel(source)),
                       dartpy.utils.SkelParser.readWorld(str(source.resolve())))


def _max_abs(a: Any, b: Any) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


# --------------------------------------------------------------------------- 1. structure


@requires_corpus
@pytest.mark.parametrize("source", SOURCES, ids=IDS)
def test_structure_matches_skelparser(source: Path) -> None:
    diff = _diff(source)
    assert not diff.discrete, "\n".join(diff.discrete[:20])
    worst = {k: v for k, v in diff.numeric.items() if not v <= STRUCTURE_TOL}
    assert not worst, worst


# --------------------------------------------------------------------------- 2. fixtures


@requires_corpus
@pytest.mark.parametrize("fixture_path", FIXTURES, ids=IDS[:-1])
def test_zero_command_steps_match_fixture(fixture_path: Path) -> None:
    """Through the engine (as the node and ``skel-ros simulate`` run it), limits off."""
    fixture = load_fixture(fixture_path)
    expected = fixture["after_steps"]
    engine = SimEngine(load_skel(corpus_file(fixture)), enforce_limits=False)
    engine.step(expected["steps"])
    ours = after_steps(engine, expected["steps"])
    assert ours["steps"] == expected["steps"]
    assert ours["time"] == expected["time"]
    assert len(ours["positions"]) == len(expected["positions"])
    for i, (q, v) in enumerate(zip(expected["positions"], expected["velocities"], strict=True)):
        name = engine.model.skeletons[i].name
        assert len(ours["positions"][i]) == len(q), name
        assert _max_abs(ours["positions"][i], q) <= FIXTURE_POS_TOL, name
        assert _max_abs(ours["velocities"][i], v) <= FIXTURE_VEL_TOL, name


# --------------------------------------------------------------------------- 3. random commands


# The command each actuator type takes directly, and the range of its random values.
_DRIVEN = {
    ActuatorType.FORCE: "effort",  # scaled by 1 / (M^-1)_ii below
    ActuatorType.SERVO: "velocity",
    ActuatorType.VELOCITY: "velocity",
    ActuatorType.ACCELERATION: "acceleration",
}


def _driven_dofs(engine: SimEngine) -> list[tuple[str, ActuatorType, list[str], np.ndarray]]:
    """(skeleton, actuator, DOF names, DOF indices) of the actuated DOFs of mobile skeletons."""
    out = []
    for skel in engine.model.skeletons:
        if not skel.mobile:
            continue
        for actuator in _DRIVEN:
            idx = [i for i, d in enumerate(skel.dofs) if skel.joint(d.joint).actuator is actuator]
            if idx:
                out.append((skel.name, actuator, [skel.dofs[i].name for i in idx],
                            np.array(idx)))
    return out


def _note_contacts(world: Any, step: int, touched: dict[str, int] | None) -> None:
    """Record in ``touched`` the first step each skeleton of ``world`` had a contact."""
    if touched is None:
        return
    for body in world.getLastCollisionResult().getCollidingBodyNodes():
        touched.setdefault(body.getSkeleton().getName(), step)


@requires_corpus
@pytest.mark.slow
@pytest.mark.parametrize(("source", "name"), list(zip(SOURCES, IDS, strict=True)), ids=IDS)
def test_random_commands_match_skelparser(source: Path, name: str) -> None:
    """Proof 2: every corpus file plus features.skel, up to 1,000 steps (module docstring).

    All files are run, so no subset is needed; the six costliest whose bodies fall
    onto the ground are compared over their first impacts and 100+ steps of contact
    only (``CONTACT_HORIZON``). Each skeleton's command vector is
    built once per step and given to both worlds: ours through ``set_commands``
    (limits module, then the actuation layer), SkelParser's through
    ``Skeleton.setCommands`` with the values our limits check applied (identical
    unless a value was clamped).
    """
    diff = _diff(source)
    steps = SHORTER_HORIZON.get(name) or CONTACT_HORIZON.get(name, RANDOM_STEPS)
    identical = not diff.discrete and not diff.numeric
    engine = SimEngine(load_skel(source), enforce_limits=False)
    ref = dartpy.utils.SkelParser.readWorld(str(source.resolve()))
    ref_skels = [ref.getSkeleton(i) for i in range(ref.getNumSkeletons())]
    index = {s.getName(): s for s in ref_skels}
    driven = _driven_dofs(engine)
    commands = {skel: np.zeros(index[skel].getNumDofs()) for skel, *_ in driven}
    rng = np.random.default_rng(zlib.crc32(str(source.name).encode()))
    draws: dict[tuple[str, ActuatorType], np.ndarray] = {}
    worst_early = worst = 0.0
    # Skeleton -> first step with a contact, for the files run over CONTACT_HORIZON.
    touched: dict[str, int] | None = {} if name in CONTACT_HORIZON else None
    for step in range(steps):
        for skel_name, actuator, dofs, idx in driven:
            if step % RANDOM_HOLD == 0:
                draws[skel_name, actuator] = rng.uniform(-1.0, 1.0, len(idx))
            skel = index[skel_name]
            kind = _DRIVEN[actuator]
            value = draws[skel_name, actuator]
            if kind == "effort":  # about 1 rad/s^2 on each DOF, as if the others were free
                value = value / np.diag(skel.getInvMassMatrix())[idx]
            [result] = engine.set_commands(kind, dofs, value, skeleton=skel_name)
            commands[skel_name][idx] = result.values
        for skel_name, full in commands.items():
            index[skel_name].setCommands(full)
        engine.step()
        ref.step()
        _note_contacts(ref, step, touched)
        q_ref = np.concatenate([s.getPositions() for s in ref_skels] or [np.zeros(0)])
        v_ref = np.concatenate([s.getVelocities() for s in ref_skels] or [np.zeros(0)])
        gap = max(_max_abs(engine.positions(), q_ref), _max_abs(engine.velocities(), v_ref))
        if identical:
            assert gap == 0.0, f"step {step}: bit-identical build but trajectories differ by {gap}"
        elif step < EARLY_STEPS:
            worst_early = max(worst_early, gap)
            assert gap <= EARLY_TOL, f"step {step}: {gap}"
        else:
            worst = max(worst, gap)
            assert gap <= LATE_TOL, f"step {step}: {gap}"
    assert math.isfinite(worst)
    if touched is not None:  # each mobile skeleton was in contact for CONTACT_STEPS+ steps
        late = {s.getName(): touched.get(s.getName()) for s in ref_skels if s.isMobile()}
        assert all(t is not None and t <= steps - CONTACT_STEPS for t in late.values()), late


# --------------------------------------------------------------------------- every joint variant

# Every joint type SkelParser builds, with every plane / axis order and axes along
# each coordinate axis and off them. (screw and translational2d: SkelParser cannot
# build them, see below.)
_AXES = ("1 0 0", "0 1 0", "0 0 1", "1 2 -2")
JOINT_VARIANTS: dict[str, tuple[str, int, str]] = {
    "weld": ("weld", 0, ""),
    **{f"revolute[{a}]": ("revolute", 1, f"<axis><xyz>{a}</xyz></axis>") for a in _AXES},
    **{f"prismatic[{a}]": ("prismatic", 1, f"<axis><xyz>{a}</xyz></axis>") for a in _AXES},
    **{f"universal[{a}|{b}]": ("universal", 2,
                               f"<axis><xyz>{a}</xyz></axis><axis2><xyz>{b}</xyz></axis2>")
       for a, b in (("1 0 0", "0 1 0"), ("0 0 1", "1 0 0"), ("0.6 0.8 0", "0 0 1"))},
    "ball": ("ball", 3, ""),
    **{f"euler[{o}]": ("euler", 3, f"<axis_order>{o}</axis_order>") for o in ("xyz", "zyx")},
    "translational": ("translational", 3, ""),
    **{f"planar[{p}]": ("planar", 3, f'<plane type="{p}"/>') for p in ("xy", "yz", "zx")},
    "planar[arbitrary]": ("planar", 3, ('<plane type="arbitrary"><translation_axis1><xyz>0 0 2'
                                        "</xyz></translation_axis1><translation_axis2><xyz>3 4 0"
                                        "</xyz></translation_axis2></plane>")),
    "planar[none]": ("planar", 3, ""),  # no <plane>: XY, with a warning
    "free": ("free", 6, ""),
}


def _variant_document(kind: str, ndofs: int, inner: str) -> str:
    """A skeleton: a revolute root, then two ``kind`` joints in a chain (so that
    DOF names made unique per skeleton are exercised), started off rest."""
    def joint(name: str, parent: str, child: str, tf: str, seed: float) -> str:
        init = ""
        if ndofs:
            q = " ".join(f"{seed * (k + 1) * (-1) ** k:.3f}" for k in range(ndofs))
            v = " ".join(f"{0.5 * seed * (k + 2):.3f}" for k in range(ndofs))
            init = f"<init_pos>{q}</init_pos><init_vel>{v}</init_vel>"
        return (f'<joint type="{kind}" name="{name}"><parent>{parent}</parent>'
                f"<child>{child}</child><transformation>{tf}</transformation>"
                f"{inner}{init}</joint>")

    def body(name: str, mass: float) -> str:
        return (f'<body name="{name}"><transformation>0 {-0.3 * mass:.2f} 0 0 0 0'
                f"</transformation><inertia><mass>{mass}</mass><offset>0.01 -0.02 0.03"
                "</offset><moment_of_inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.04</izz>"
                "<ixy>0.001</ixy><ixz>-0.002</ixz><iyz>0.003</iyz></moment_of_inertia>"
                "</inertia></body>")

    return (
        '<skel version="1.0"><world name="w"><physics><time_step>0.001</time_step>'
        '<gravity>0.5 -9.81 0.2</gravity></physics><skeleton name="skeleton1">'
        + body("b1", 1.0) + body("b2", 0.8) + body("b3", 0.6)
        + '<joint type="revolute" name="joint1"><parent>world</parent><child>b1</child>'
        "<axis><xyz>0 0 1</xyz></axis><init_pos>0.2</init_pos></joint>"
        + joint("joint2", "b1", "b2", "0 -0.3 0 0.1 0 0", 0.15)
        + joint("joint3", "b2", "b3", "0.05 -0.24 0 0 0.2 0", -0.1)
        + "</skeleton></world></skel>"
    )


def test_joint_variants_cover_the_joint_type_table() -> None:
    """Every type of the joint-type table that SkelParser builds has variants here."""
    assert {kind for kind, _, _ in JOINT_VARIANTS.values()} == {
        spec.name for spec in JOINT_TYPES.values() if spec.dart_builds}
    for kind, ndofs, _ in JOINT_VARIANTS.values():
        assert JointType(kind).num_dofs == ndofs


@pytest.mark.parametrize("spec", list(JOINT_TYPES.values()), ids=lambda s: s.name)
def test_dartpy_resolves_every_joint_type_of_the_table(spec: JointTypeSpec) -> None:
    """The DART class the table names exists in dartpy, with the properties class the
    world builder creates it with."""
    how = dartpy_joint(spec)
    assert hasattr(dartpy.dynamics.Skeleton, f"create{spec.dart_class}AndBodyNodePair")
    assert hasattr(dartpy.dynamics, spec.dart_class)
    assert hasattr(dartpy.dynamics, how.properties)


@pytest.mark.parametrize("variant", list(JOINT_VARIANTS))
def test_every_joint_variant_matches_skelparser(variant: str) -> None:
    """Built through the engine (as ``skel-ros simulate`` and the node build it): the
    same DOF names, structure and numbers as SkelParser's World from the same text,
    then 100 zero-command steps. A bit-identical build must step bit-identically;
    otherwise the structure tolerance applies and the trajectories may differ by
    1e-8 (as for the corpus)."""
    text = _variant_document(*JOINT_VARIANTS[variant])
    model = load_skel(text, name=f"{variant}.skel")
    engine = SimEngine(model, enforce_limits=False)
    ref = dartpy.utils.SkelParser.readWorldXML(text)
    assert [d.getName() for d in engine.world.getSkeleton(0).getDofs()] == \
        [d.getName() for d in ref.getSkeleton(0).getDofs()] == \
        [d.name for d in model.skeletons[0].dofs]
    diff = diff_worlds(engine.world, ref)
    assert not diff.discrete, "\n".join(diff.discrete[:20])
    assert diff.max_numeric <= STRUCTURE_TOL, diff.numeric
    gap = trajectory_gap(engine, ref, 100)
    assert gap <= (EARLY_TOL if diff.numeric else 0.0), gap


@pytest.mark.parametrize("plane", ["xy", "yz", "zx", "arbitrary"])
def test_planar_joint_with_markers_keeps_its_plane_and_names(plane: str) -> None:
    """A body with markers is built from a DART template body (dart_gaps); its planar
    joint must come out with the same plane and DOF names as SkelParser's."""
    inner = JOINT_VARIANTS[f"planar[{plane}]"][2]
    text = _variant_document("planar", 3, inner).replace(
        "</inertia></body>", '</inertia><marker name="m"><offset>0.1 0 0</offset></marker></body>')
    engine = SimEngine(load_skel(text, name=f"planar-{plane}-markers.skel"),
                       enforce_limits=False)
    ref = dartpy.utils.SkelParser.readWorldXML(text)
    diff = diff_worlds(engine.world, ref)
    assert not diff.discrete, "\n".join(diff.discrete[:20])
    assert diff.max_numeric <= STRUCTURE_TOL, diff.numeric
    assert trajectory_gap(engine, ref, 100) <= (EARLY_TOL if diff.numeric else 0.0)


@pytest.mark.parametrize("plane", ["xy", "yz", "zx", "arbitrary"])
def test_translational2d_dof_names_follow_the_plane(plane: str) -> None:
    """SkelParser cannot build translational2d (no reference World): the built joint
    has the model's DOF names and translates along the plane's axes."""
    inner = JOINT_VARIANTS[f"planar[{plane}]"][2]
    text = _variant_document("translational2d", 2, inner)
    model = load_skel(text, name=f"t2d-{plane}.skel")
    world = build_dart_world(model)
    skel = world.getSkeleton(0)
    assert [d.getName() for d in skel.getDofs()] == [d.name for d in model.skeletons[0].dofs]
    for joint in model.skeletons[0].joints[1:]:
        dart = skel.getJoint(joint.index)
        np.testing.assert_array_equal(dart.getTranslationalAxis1(), joint.plane_axes[0])
        np.testing.assert_array_equal(dart.getTranslationalAxis2(), joint.plane_axes[1])


def test_multi_sphere_of_a_mass_only_body_is_in_skelparsers_state() -> None:
    """SkelParser asks a mass-only body's shapes for their volume before a multi-sphere
    has a bounding box, and DART 6.20 keeps the 0 it gets; our shape must report the
    same volume (and the same everything else), with or without an explicit moment,
    also after DART's own collision detector has computed the bounding box (FCL has no
    multi-sphere geometry and leaves it alone)."""
    text = """<skel><world name="w">
    <physics><collision_detector>dart</collision_detector></physics><skeleton name="s">
    <body name="derived"><inertia><mass>2</mass></inertia>
     <visualization_shape><geometry><sphere><radius>0.1</radius></sphere></geometry>
     </visualization_shape>
     <collision_shape><geometry><multi_sphere>
      <sphere><radius>0.05</radius><position>0 0 0</position></sphere>
      <sphere><radius>0.03</radius><position>0.1 0 0</position></sphere>
     </multi_sphere></geometry></collision_shape></body>
    <body name="explicit"><inertia><mass>1</mass><moment_of_inertia><ixx>0.1</ixx>
     <iyy>0.1</iyy><izz>0.1</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia>
     </inertia><collision_shape><geometry><multi_sphere>
      <sphere><radius>0.05</radius><position>0 0 0</position></sphere>
     </multi_sphere></geometry></collision_shape></body>
    <joint type="free" name="a"><parent>world</parent><child>derived</child></joint>
    <joint type="ball" name="b"><parent>derived</parent><child>explicit</child></joint>
    </skeleton></world></skel>"""
    ref = dartpy.utils.SkelParser.readWorldXML(text)
    engine = SimEngine(load_skel(text), enforce_limits=False)
    assert trajectory_gap(engine, ref, 1) == 0.0  # a step: collision geometry is made
    diff = diff_worlds(engine.world, ref)
    assert not diff.discrete, diff.discrete
    assert not diff.numeric, diff.numeric


# ----------------------------------------------------------------- joints SkelParser cannot build

SCREW = """<skel version="1.0"><world name="w">
<physics><time_step>0.001</time_step><gravity>0 0 0</gravity></physics>
<skeleton name="s">
 <body name="nut"><inertia><mass>2.0</mass><offset>0 0 0</offset><moment_of_inertia>
  <ixx>0.1</ixx><iyy>0.1</iyy><izz>0.05</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz>
 </moment_of_inertia></inertia></body>
 <joint type="screw" name="screw"><parent>world</parent><child>nut</child>
  <axis><xyz>0 0 1</xyz><pitch>0.01</pitch></axis></joint>
</skeleton></world></skel>"""


def _discrete_drive(accel: float, steps: int, dt: float) -> tuple[float, float]:
    """Position and velocity after ``steps`` semi-implicit Euler steps at constant ``accel``."""
    return accel * dt * dt * steps * (steps + 1) / 2.0, accel * dt * steps


def test_screw_joint_under_constant_torque() -> None:
    """A screw joint turns as a rigid body with I = Izz + m (pitch / 2 pi)^2 and advances
    pitch * q / 2 pi along its axis (tolerance 1e-12 relative)."""
    world = load_skel(SCREW, name="screw.skel")
    engine = SimEngine(world)
    torque, pitch, steps = 0.5, 0.01, 1000
    engine.set_commands("effort", ["screw"], [torque])
    engine.step(steps)
    inertia = 0.05 + 2.0 * (pitch / (2 * math.pi)) ** 2
    q, v = _discrete_drive(torque / inertia, steps, 0.001)
    assert engine.positions()[0] == pytest.approx(q, rel=1e-12)
    assert engine.velocities()[0] == pytest.approx(v, rel=1e-12)
    tf = engine.body_transforms()[0]
    assert tf[2, 3] == pytest.approx(pitch * engine.positions()[0] / (2 * math.pi), rel=1e-12)
    angle = math.atan2(tf[1, 0], tf[0, 0])
    assert angle == pytest.approx(math.remainder(engine.positions()[0], 2 * math.pi), abs=1e-12)
    assert tf[0, 3] == tf[1, 3] == 0.0
    assert engine.efforts()[0] == torque


TRANS2D = """<skel version="1.0"><world name="w">
<physics><time_step>0.001</time_step><gravity>0 -9.81 0</gravity></physics>
<skeleton name="s">
 <body name="puck"><inertia><mass>3.0</mass></inertia></body>
 <joint type="translational2d" name="t2">
  <parent>world</parent><child>puck</child>
  <plane type="arbitrary">
   <translation_axis1><xyz>1 0 0</xyz></translation_axis1>
   <translation_axis2><xyz>0 0.6 0.8</xyz></translation_axis2>
  </plane>
 </joint>
</skeleton></world></skel>"""


def test_translational2d_joint_moves_in_its_plane() -> None:
    """Gravity (0, -9.81, 0) projects onto axis 2 as -9.81 * 0.6; a force along axis 1
    accelerates q0 by F / m; nothing moves out of the plane (tolerance 1e-12)."""
    engine = SimEngine(load_skel(TRANS2D, name="t2.skel"))
    joint = engine.model.skeletons[0].joints[0]
    names = list(joint.dofs)
    force, steps = 1.5, 500
    engine.set_commands("effort", [names[0]], [force])
    engine.step(steps)
    q0, _ = _discrete_drive(force / 3.0, steps, 0.001)
    q1, v1 = _discrete_drive(-9.81 * 0.6, steps, 0.001)
    assert engine.positions() == pytest.approx([q0, q1], rel=1e-12)
    assert engine.velocities()[1] == pytest.approx(v1, rel=1e-12)
    p = engine.body_transforms()[0][:3, 3]
    expected = q0 * np.array([1.0, 0, 0]) + q1 * np.array([0, 0.6, 0.8])
    np.testing.assert_allclose(p, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(engine.body_transforms()[0][:3, :3], np.eye(3))


# --------------------------------------------------------------------------- errors and gaps


@pytest.mark.parametrize("content", [None, "garbage"], ids=["missing", "garbage"])
def test_unloadable_mesh_is_a_build_error(tmp_path: Path, content: str | None) -> None:
    """DART's SkelParser would crash on these (spec section 4); the builder refuses them.

    (Assimp reads any text as an empty OBJ, so the garbage is a .dae here.)
    """
    path = tmp_path / "part.dae"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SimBuildError, match=r"part\.dae"):
        DartFactories().mesh_shape(path, np.ones(3))


def test_corpus_mesh_loads_with_scale() -> None:
    mesh = CORPUS / "data" / "obj" / "foot.obj"
    if not mesh.exists():
        pytest.skip("corpus not found")
    shape = DartFactories().mesh_shape(mesh, np.array([2.0, 2.0, 2.0]))
    assert shape.getType() == "MeshShape"
    np.testing.assert_allclose(shape.getScale(), [2.0, 2.0, 2.0])
    np.testing.assert_allclose(shape.getBoundingBox().getMax(), [0.18164, 0.09152, 0.14432],
                               rtol=1e-6)


def test_soft_body_on_a_screw_joint_is_unsupported() -> None:
    text = SCREW.replace(
        '<body name="nut">',
        '<body name="nut"><soft_shape><total_mass>0.1</total_mass><geometry><sphere>'
        "<radius>0.1</radius><num_slices>4</num_slices><num_stacks>4</num_stacks>"
        "</sphere></geometry></soft_shape>",
    )
    with pytest.raises(SimUnsupportedError, match="screw"):
        build_dart_world(load_skel(text))


def test_mass_only_pyramid_body_inertia_matches_dart(tmp_path: Path) -> None:
    skel = tmp_path / "pyramid.skel"
    skel.write_text("""<skel><world name="w"><skeleton name="s"><body name="b">
      <inertia><mass>0.2</mass></inertia>
      <visualization_shape><geometry><pyramid><base_width>0.1</base_width>
      <base_depth>0.08</base_depth><height>0.12</height></pyramid></geometry>
      </visualization_shape></body>
      <joint type="free" name="j"><parent>world</parent><child>b</child></joint>
      </skeleton></world></skel>""")
    diff = diff_worlds(build_dart_world(load_skel(skel)),
                       dartpy.utils.SkelParser.readWorld(str(skel)))
    assert not diff.numeric
