"""Mimic joints in the model: read from URDF and SKEL, written to URDF and SKEL, FK.

Forward kinematics with followers set from random leader configurations equals
yourdfpy's (which implements URDF's mimic) to 1e-9, on small robots made for each case
(test/model/data/mimic: gear-coupled fingers, a mirrored finger, offsets, a follower
with limits tighter than its leader's imply), the bundled gripper example and real
robots of example-robot-data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from urdf_robots import ament_env

from skel_ros.model import (
    Kinematics,
    load_model,
    load_skel,
    world_to_mjcf,
    world_to_skel,
    world_to_urdf,
)
from skel_ros.model.errors import SkelValueError
from skel_ros.model.interchange_errors import UrdfError
from skel_ros.model.limits import CommandKind, LimitSet
from skel_ros.model.mimic import (
    follower_velocities,
    independent_dofs,
    leader_bounds,
    with_followers,
)
from skel_ros.model.urdf_reader import urdf_to_world

yourdfpy = pytest.importorskip("yourdfpy", reason="yourdfpy is the independent URDF reader")

DATA = Path(__file__).parent / "data" / "mimic"
SMALL = [*sorted(DATA.glob("*.urdf")), Path(__file__).parents[2] / "examples" / "gripper_arm.urdf"]
TOL = 1e-9


def _yourdfpy(source: Any) -> Any:
    return yourdfpy.URDF.load(source, load_meshes=False, build_collision_scene_graph=False,
                              load_collision_meshes=False)


def _check_fk(path: Path | str, model_path: Path | str | None = None) -> None:
    skel = load_model(model_path or path).skeletons[0]
    ref = _yourdfpy(str(path))
    names = list(ref.actuated_joint_names)  # yourdfpy leaves mimic joints out
    free = {d.name for d in independent_dofs(skel)} - set(names)
    assert all(n.startswith("floating_base") for n in free)  # the root's joint, at 0
    kin = Kinematics(skel)
    rng = np.random.default_rng(5)
    for _ in range(10):
        cfg = rng.uniform(-1.0, 1.0, len(names))
        q = np.zeros(skel.num_dofs)
        for value, name in zip(cfg, names, strict=True):
            q[skel.dof_index(name)] = value
        ref.update_cfg(cfg)
        ours = kin.body_transforms(with_followers(skel, q))
        for i, body in enumerate(skel.bodies):
            theirs = ref.get_transform(body.name, ref.base_link)
            assert np.abs(ours[i] - theirs).max() < TOL, body.name


@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_fk_with_followers_matches_yourdfpy(path: Path) -> None:
    _check_fk(path)


@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_urdf_and_skel_round_trips_keep_the_couplings(path: Path, tmp_path: Path) -> None:
    skel = load_model(path).skeletons[0]
    expected = {d.name: d.mimic for d in skel.dofs}
    assert any(expected.values())
    urdf = tmp_path / "again.urdf"
    urdf.write_text(world_to_urdf(load_model(path)))
    skel_file = tmp_path / "again.skel"
    skel_file.write_text(world_to_skel(load_model(path)))
    for again in (load_model(urdf).skeletons[0], load_skel(skel_file).skeletons[0]):
        assert {d.name: d.mimic for d in again.dofs} == expected
    _check_fk(urdf)  # yourdfpy reads our URDF's <mimic> the same way


@pytest.mark.parametrize(("file", "follower"), [
    ("panda_description/urdf/panda.urdf", "panda_finger_joint2"),
    ("romeo_description/urdf/romeo.urdf", "LFinger12"),
])
def test_real_robots_with_grippers(file: str, follower: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    robots = ament_env(monkeypatch)
    skel = load_model(robots / file).skeletons[0]
    assert skel.dof(follower).mimic is not None
    _check_fk(robots / file)


def test_mimic_of_a_fixed_joint_is_ignored_with_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    robots = ament_env(monkeypatch)
    world = load_model(robots / "talos_data/robots/talos_left_arm.urdf")
    assert not any(d.mimic for d in world.skeletons[0].dofs)
    assert any("<mimic> of a fixed joint ignored" in w.message for w in world.warnings)


def test_the_rule_for_positions_velocities_and_leader_bounds() -> None:
    skel = load_model(DATA / "tight_follower.urdf").skeletons[0]
    lead, follow = skel.dof_index("lead"), skel.dof_index("follow")
    q = with_followers(skel, np.array([0.5, 99.0]) if lead == 0 else np.array([99.0, 0.5]))
    assert q[follow] == pytest.approx(-0.6 * 0.5 + 0.15, abs=1e-15)
    v = np.zeros(2)
    v[lead] = 2.0
    assert follower_velocities(skel, v)[follow] == pytest.approx(-1.2, abs=1e-15)
    # follow in [-0.3, 0.45] with follow = -0.6 lead + 0.15: lead in [-0.5, 0.75].
    assert leader_bounds(skel, "lead") == pytest.approx((-0.5, 0.75), abs=1e-12)


ROBOT = """<robot name="r"><link name="world"/><link name="a"/><link name="b"/><link name="c"/>
<joint name="ja" type="revolute"><parent link="world"/><child link="a"/>
 <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="jb" type="revolute"><parent link="a"/><child link="b"/>
 <limit lower="-1" upper="1" effort="1" velocity="1"/>MIMIC_B</joint>
<joint name="jc" type="JC_TYPE"><parent link="b"/><child link="c"/>
 <limit lower="-1" upper="1" effort="1" velocity="1"/>MIMIC_C</joint>
</robot>"""


@pytest.mark.parametrize(("b", "c", "jc_type", "reason"), [
    ('<mimic joint="jb"/>', "", "revolute", "mimics itself"),
    ('<mimic joint="nope"/>', "", "revolute", "'nope', which does not exist"),
    ('<mimic joint="ja"/>', '<mimic joint="jb"/>', "revolute", "which mimics another"),
    ("", '<mimic joint="ja"/>', "floating", "a mimic couples two one-DOF joints"),
    ('<mimic joint="ja" multiplier="0"/>', "", "revolute", "multiplier of 0"),
    ('<mimic joint="ja" multiplier="x"/>', "", "revolute", "multiplier"),
])
def test_bad_couplings_are_refused_at_the_mimic_element(b: str, c: str, jc_type: str,
                                                        reason: str) -> None:
    text = ROBOT.replace("MIMIC_B", b).replace("MIMIC_C", c).replace("JC_TYPE", jc_type)
    with pytest.raises(UrdfError) as info:
        urdf_to_world(text.encode(), label="r.urdf", base_dir=None)
    assert reason in info.value.reason
    assert info.value.location.path.endswith("/mimic")
    assert info.value.location.line > 1


def test_skel_mimic_errors_name_the_element() -> None:
    world = load_model(DATA / "gear_finger.urdf")
    text = world_to_skel(world).replace('joint="proximal"', 'joint="elsewhere"')
    with pytest.raises(SkelValueError) as info:
        load_skel(text, name="g.skel")
    assert "'elsewhere', which does not exist" in info.value.reason
    assert info.value.location.path.endswith("/mimic")


@pytest.mark.parametrize("path", SMALL, ids=[p.stem for p in SMALL])
def test_mujoco_moves_followers_with_their_leader(path: Path) -> None:
    """The MJCF equality holds each follower to the rule within 1e-6 after 1 s of motion."""
    mujoco = pytest.importorskip("mujoco")
    world = load_model(path)
    skel = world.skeletons[0]
    xml = world_to_mjcf(world).xml
    assert xml.count('polycoef="') == sum(1 for d in skel.dofs if d.mimic)
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)

    def address(name: str, table: Any) -> int:
        return int(table[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)])

    start = with_followers(skel, np.zeros(skel.num_dofs))  # a configuration the rule holds in
    for dof in skel.dofs:
        data.qpos[address(dof.name, model.jnt_qposadr)] = start[dof.index]
    errors = []
    for k in range(round(1.0 / model.opt.timestep)):
        for dof in independent_dofs(skel):  # push every leader back and forth
            data.qfrc_applied[address(dof.name, model.jnt_dofadr)] = 0.02 * np.sin(6e-3 * k)
        mujoco.mj_step(model, data)
        q = np.array([data.qpos[address(d.name, model.jnt_qposadr)] for d in skel.dofs])
        errors.append(np.abs(with_followers(skel, q) - q).max())
    assert max(errors) < 1e-6


def test_the_gate_refuses_a_follower_naming_its_leader_and_bounds_the_leader() -> None:
    skel = load_model(DATA / "tight_follower.urdf").skeletons[0]
    limits = LimitSet.from_skeleton(skel)
    refused = limits.check(CommandKind.POSITION, ["follow"], [0.1])
    assert not refused.ok
    assert "'follow' is a mimic joint" in refused.reason
    assert "command 'lead' instead" in refused.reason
    clamped = limits.check(CommandKind.POSITION, ["lead"], [0.9])
    assert clamped.ok
    assert clamped.values[0] == pytest.approx(0.75)  # where 'follow' reaches -0.3
