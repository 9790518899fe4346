"""The URDF reader on real robots, checked against readers nobody here wrote.

For each robot of :data:`urdf_robots.ROBOTS` (example-robot-data's URDFs; skipped with
the reason when that package is not installed):

1. forward kinematics of our model equals yourdfpy's at random configurations (1e-9);
2. DOF limits, damping, friction, masses, centres of mass and inertias equal what
   yourdfpy reads (1e-9);
3. URDF -> model -> URDF (our writer) keeps links, joints, joint origins and axes,
   limits and inertias, compared structurally through yourdfpy; reading that URDF back
   gives the same model;
4. URDF -> model -> SKEL -> DART's ``SkelParser`` gives the same body transforms at
   random configurations and the same masses (1e-9);
5. for an arm and a quadruped, URDF -> model -> MJCF -> MuJoCo gives the same body
   transforms (1e-9).
"""

from __future__ import annotations

import io
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from model_compare import diff_models
from urdf_robots import ROBOTS, ament_env

from skel_ros.model import Kinematics, load_model, world_to_skel, world_to_urdf

if TYPE_CHECKING:
    from pathlib import Path

    from skel_ros.model.types import Skeleton

yourdfpy = pytest.importorskip("yourdfpy", reason="yourdfpy is the independent URDF reader")

TOL = 1e-9
IDS = [r[0] for r in ROBOTS]


@pytest.fixture(params=ROBOTS, ids=IDS)
def robot(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    robots = ament_env(monkeypatch)
    return robots / request.param[1]


def _yourdfpy(source: Any) -> Any:
    return yourdfpy.URDF.load(source, load_meshes=False, build_collision_scene_graph=False,
                              load_collision_meshes=False)


def _random_q(skel: Skeleton, names: list[str], rng: np.random.Generator,
              ) -> tuple[np.ndarray, np.ndarray]:
    """A model configuration and the yourdfpy cfg moving the same joints."""
    cfg = rng.uniform(-1.5, 1.5, len(names))
    q = np.zeros(skel.num_dofs)
    for value, name in zip(cfg, names, strict=True):
        q[skel.dof_index(name)] = value
    return q, cfg


def test_forward_kinematics_matches_yourdfpy(robot: Path) -> None:
    skel = load_model(robot).skeletons[0]
    ref = _yourdfpy(robot)
    names = list(ref.actuated_joint_names)
    kin = Kinematics(skel)
    rng = np.random.default_rng(19)
    for _ in range(10):
        q, cfg = _random_q(skel, names, rng)
        ref.update_cfg(cfg)
        ours = kin.body_transforms(q)
        for i, body in enumerate(skel.bodies):
            theirs = ref.get_transform(body.name, ref.base_link)
            assert np.abs(ours[i] - theirs).max() < TOL, body.name
    assert {b.name for b in skel.bodies} == set(ref.link_map) - {"world"}


def test_limits_and_inertias_match_yourdfpy(robot: Path) -> None:
    world = load_model(robot)
    skel = world.skeletons[0]
    ref = _yourdfpy(robot)
    for name, joint in ref.joint_map.items():
        model_joint = skel.joint(name)
        assert model_joint.parent == (None if joint.parent == "world" else joint.parent)
        assert model_joint.child == joint.child
        if joint.type in ("fixed", "floating", "planar"):
            continue
        dof = skel.dof(name)
        limit = joint.limit
        if joint.type == "continuous" or limit is None:
            assert (dof.position_lower, dof.position_upper) == (-math.inf, math.inf)
        else:
            assert (dof.position_lower, dof.position_upper) == (limit.lower or 0.0,
                                                                limit.upper or 0.0)
        if limit is not None and limit.velocity:
            assert (dof.velocity_lower, dof.velocity_upper) == (-limit.velocity, limit.velocity)
        if limit is not None and limit.effort:
            assert (dof.force_lower, dof.force_upper) == (-limit.effort, limit.effort)
        dynamics = joint.dynamics  # yourdfpy keeps these two as text: float()
        assert dof.damping == float((dynamics.damping or 0.0) if dynamics else 0.0)
        assert dof.coulomb_friction == float((dynamics.friction or 0.0) if dynamics else 0.0)
    for name, link in ref.link_map.items():
        if name == "world":
            continue
        inertia = skel.body(name).inertia
        if link.inertial is None:
            assert inertia.mass == 0.0
            continue
        origin = link.inertial.origin if link.inertial.origin is not None else np.eye(4)
        rot = origin[:3, :3]
        assert inertia.mass == pytest.approx(link.inertial.mass, abs=TOL)
        assert np.abs(inertia.com - origin[:3, 3]).max() < TOL
        assert np.abs(inertia.moment - rot @ link.inertial.inertia @ rot.T).max() < TOL


def test_round_trip_through_our_urdf_writer(robot: Path) -> None:  # noqa: C901
    world = load_model(robot, fixed_base=True)
    text = world_to_urdf(world)
    original, exported = _yourdfpy(robot), _yourdfpy(io.StringIO(text))
    for name, link in original.link_map.items():
        out = exported.link_map[name]
        if link.inertial is None or name == "world":
            continue
        o = link.inertial.origin if link.inertial.origin is not None else np.eye(4)
        e = out.inertial.origin if out.inertial.origin is not None else np.eye(4)
        assert out.inertial.mass == pytest.approx(link.inertial.mass, abs=TOL)
        assert np.abs(o[:3, 3] - e[:3, 3]).max() < TOL
        assert np.abs(o[:3, :3] @ link.inertial.inertia @ o[:3, :3].T
                      - e[:3, :3] @ out.inertial.inertia @ e[:3, :3].T).max() < TOL
    extra = set(exported.joint_map) - set(original.joint_map)
    # the weld of the root link, when it is not 'world' (named apart from the URDF's joints)
    assert len(extra) <= 1
    assert all(name.startswith("floating_base") for name in extra)
    for name, joint in original.joint_map.items():
        out = exported.joint_map[name]
        assert (out.type, out.parent, out.child) == (joint.type, joint.parent, joint.child)
        origin = np.eye(4) if joint.origin is None else np.asarray(joint.origin)
        assert np.abs(np.asarray(out.origin) - origin).max() < TOL
        if joint.type in ("revolute", "continuous", "prismatic"):
            axis = np.asarray(joint.axis, dtype=float)
            assert np.abs(np.asarray(out.axis) - axis / np.linalg.norm(axis)).max() < TOL
            if joint.type != "continuous":
                assert (out.limit.lower, out.limit.upper) == (joint.limit.lower or 0.0,
                                                              joint.limit.upper or 0.0)
            for attr in ("velocity", "effort"):
                if joint.limit is not None and getattr(joint.limit, attr):
                    assert getattr(out.limit, attr) == getattr(joint.limit, attr)
    # Our reader on our writer's URDF: the same model.
    # Our reader on our writer's URDF: the same model (a visual without a colour gets
    # the writer's default colour).
    again = load_model(text, name=str(robot), fixed_base=True)
    diffs = diff_models(world, again, skip={"name", "color"})
    assert not diffs, "\n".join(diffs[:10])
    for body, body_again in zip(world.skeletons[0].bodies, again.skeletons[0].bodies,
                                strict=True):
        for shape, shape_again in zip(body.shapes, body_again.shapes, strict=True):
            if shape.color is not None:
                assert np.array_equal(shape.color, shape_again.color)


def test_dart_skelparser_gives_the_same_kinematics_and_masses(robot: Path,
                                                              tmp_path: Path) -> None:
    dartpy = pytest.importorskip("dartpy", reason="dartpy is the independent SKEL reader")
    world = load_model(robot)
    skel = world.skeletons[0]
    path = tmp_path / "robot.skel"
    path.write_text(world_to_skel(world), encoding="utf-8")
    dart = dartpy.utils.SkelParser.readWorld(str(path)).getSkeleton(0)
    assert dart.getNumDofs() == skel.num_dofs
    assert [dart.getDof(i).getName() for i in range(skel.num_dofs)] == [d.name for d in
                                                                          skel.dofs]
    for body in skel.bodies:
        assert dart.getBodyNode(body.name).getMass() == pytest.approx(body.inertia.mass,
                                                                      abs=TOL)
    kin = Kinematics(skel)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(-1.5, 1.5, skel.num_dofs)
        dart.setPositions(q)
        ours = kin.body_transforms(q)
        for i, body in enumerate(skel.bodies):
            theirs = dart.getBodyNode(body.name).getWorldTransform().matrix()
            assert np.abs(ours[i] - theirs).max() < TOL, body.name


@pytest.mark.parametrize("robot_id", ["ur5", "solo12"])
def test_urdf_to_mjcf_gives_the_same_kinematics_in_mujoco(
        robot_id: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo compiles the MJCF export")
    from skel_ros.model import world_to_mjcf

    robot = ament_env(monkeypatch) / dict(ROBOTS)[robot_id]
    world = load_model(robot)
    skel = world.skeletons[0]
    export = world_to_mjcf(world, base_dir=tmp_path)
    (tmp_path / "robot.xml").write_text(export.xml, encoding="utf-8")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "robot.xml"))
    data = mujoco.MjData(model)
    kin = Kinematics(skel)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-1.0, 1.0, skel.num_dofs)
        data.qpos[:] = export.qpos({skel.name: q})
        mujoco.mj_kinematics(model, data)
        ours = kin.body_transforms(q)
        for body in export.bodies:
            i = model.body(body.name).id
            theirs = np.eye(4)
            theirs[:3, :3] = data.xmat[i].reshape(3, 3)
            theirs[:3, 3] = data.xpos[i]
            expected = ours[skel.bodies.index(skel.body(body.body))] @ body.frame
            assert np.abs(theirs - expected).max() < TOL, body.name
