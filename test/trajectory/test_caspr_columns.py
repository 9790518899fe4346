"""CASPR ``q`` columns move the DOFs CASPR means, for every CASPR joint type.

For each value of CASPR's ``JointType`` enum a one-link ``bodies.xml`` is written, and
for each column ``i`` of its ``q`` a trajectory moving only ``q[i]``. The trajectory is
loaded against the bodies file exactly as ``skel-ros play`` does, and the link's pose
reached is compared with what CASPR's joint class says ``q[i]`` is
(``src/Model/Bodies/Joints/*.m``: the ``Get*`` accessors and ``RelRotationMatrix`` /
``RelTranslationVector``): a translation along, or a rotation about, one axis.
Moving a single coordinate from zero makes every composition of rotations a single
rotation, so the table below is the meaning of each column and nothing else.
"""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.cli.main import main
from skel_ros.model import Kinematics
from skel_ros.model.caspr_model import CASPR_JOINT_TYPES
from skel_ros.trajectory import load_trajectory, load_trajectory_model

if TYPE_CHECKING:
    from pathlib import Path

X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
AXIS = (0.6, 0.0, 0.8)  # R_AXIS / P_AXIS

# CASPR's meaning of q[i] per joint type: ("T", axis) translation, ("R", axis) rotation.
MEANING: dict[str, list[tuple[str, tuple[float, float, float]]]] = {
    "R_X": [("R", X)], "R_Y": [("R", Y)], "R_Z": [("R", Z)], "R_AXIS": [("R", AXIS)],
    "P_X": [("T", X)], "P_AXIS": [("T", AXIS)],
    "U_XY": [("R", X), ("R", Y)],  # UniversalXY: alpha (x), beta (y)
    "U_YZ": [("R", Y), ("R", Z)],  # UniversalYZ: beta (y), gamma (z)
    "U_XZ": [("R", X), ("R", Z)],  # UniversalXZ: alpha (x), gamma (z)
    "P_XY": [("T", X), ("T", Y)],
    "P_XZ": [("T", X), ("T", Z)],
    "PLANAR_XY": [("T", X), ("T", Y), ("R", Z)],  # PlanarXY: x, y, theta
    "PLANAR_YZ": [("T", Y), ("T", Z), ("R", X)],  # PlanarYZ: y, z, theta
    "PLANAR_XZ": [("T", X), ("T", Z), ("R", Y)],  # PlanarXZ: x, z, theta
    "S_EULER_XYZ": [("R", X), ("R", Y), ("R", Z)],  # alpha, beta, gamma
    "S_FIXED_XYZ": [("R", X), ("R", Y), ("R", Z)],  # alpha, beta, gamma (Rz(g) Ry(b) Rx(a))
    "T_XYZ": [("T", X), ("T", Y), ("T", Z)],
    "SPATIAL_EULER_XYZ": [("T", X), ("T", Y), ("T", Z), ("R", X), ("R", Y), ("R", Z)],
}
PARENT_LOCATION = (0.1, -0.2, 0.3)
VALUE = 0.7


def _rotation(axis: tuple[float, float, float], angle: float) -> np.ndarray:
    a = np.asarray(axis) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k


def _expected(jtype: str, column: int) -> np.ndarray:
    kind, axis = MEANING[jtype][column]
    out = np.eye(4)
    out[:3, 3] = PARENT_LOCATION
    if kind == "T":
        out[:3, 3] += VALUE * np.asarray(axis) / np.linalg.norm(axis)
    else:
        out[:3, :3] = _rotation(axis, VALUE)
    return out


def write_bodies(path: Path, jtype: str) -> None:
    n = len(MEANING[jtype])
    zeros, lo, hi = " ".join(["0"] * n), " ".join(["-2"] * n), " ".join(["2"] * n)
    axis = f' axis="{AXIS[0]} {AXIS[1]} {AXIS[2]}"' if jtype.endswith("_AXIS") else ""
    parent = " ".join(map(str, PARENT_LOCATION))
    path.write_text(textwrap.dedent(f"""\
        <bodies_system>
          <links>
            <link_rigid num="1" name="platform">
              <joint type="{jtype}" q_initial="{zeros}" q_min="{lo}" q_max="{hi}"{axis}/>
              <physical>
                <mass>1.0</mass>
                <com_location>0 0 0</com_location>
                <end_location>0 0 0.1</end_location>
                <inertia ref="com"><Ixx>0.01</Ixx><Iyy>0.01</Iyy><Izz>0.01</Izz>
                  <Ixy>0</Ixy><Ixz>0</Ixz><Iyz>0</Iyz></inertia>
              </physical>
              <parent><num>0</num><location>{parent}</location></parent>
            </link_rigid>
          </links>
        </bodies_system>
        """), encoding="utf-8")


def write_trajectories(path: Path, n: int) -> None:
    body = []
    for i in range(n):
        end = " ".join(str(VALUE) if k == i else "0" for k in range(n))
        body.append(f"""
            <linear_spline_trajectory id="col{i}" time_definition="absolute" time_step="0.5">
              <points>
                <point><q>{' '.join(['0'] * n)}</q></point>
                <point time="1"><q>{end}</q></point>
              </points>
            </linear_spline_trajectory>""")
    path.write_text("<trajectories><joint_trajectories>" + "".join(body)
                    + "</joint_trajectories></trajectories>\n", encoding="utf-8")


@pytest.mark.parametrize("jtype", CASPR_JOINT_TYPES)
def test_q_column_moves_the_dof_caspr_means(tmp_path: Path, jtype: str) -> None:
    assert set(MEANING) == set(CASPR_JOINT_TYPES)  # every type the converter supports
    bodies, trajectories = tmp_path / "robot_bodies.xml", tmp_path / "robot_trajectories.xml"
    write_bodies(bodies, jtype)
    write_trajectories(trajectories, len(MEANING[jtype]))
    model = load_trajectory_model(bodies)
    skel = model.world.skeletons[0]
    kin = Kinematics(skel)
    platform = [b.name for b in skel.bodies].index("platform")
    index = {d.name: k for k, d in enumerate(skel.dofs)}
    for column in range(len(MEANING[jtype])):
        traj = load_trajectory(trajectories, model.q_columns, trajectory_id=f"col{column}")
        end, _, _ = traj.sample(traj.duration)
        q = np.zeros(skel.num_dofs)
        for name, value in zip(traj.joint_names, end, strict=True):
            q[index[name]] = value
        got = kin.body_transforms(q)[platform]
        np.testing.assert_allclose(got, _expected(jtype, column), atol=1e-12,
                                   err_msg=f"{jtype}: q column {column}")


def test_play_maps_planar_xz_columns_by_meaning(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``play --skel bodies.xml``: the x column drives the x DOF although the model's DOF
    order is (z, x, theta) (DART's zx plane)."""
    bodies, trajectories = tmp_path / "planar_bodies.xml", tmp_path / "planar_trajectories.xml"
    write_bodies(bodies, "PLANAR_XZ")
    write_trajectories(trajectories, 3)
    status = main(["play", str(trajectories), "--skel", str(bodies), "--print", "--rate", "1",
                   "--trajectory-id", "col0"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    assert out[0] == "# t platform_x platform_z platform_theta"
    assert out[-1].split() == ["1.0000", f"{VALUE:.6f}", "0.000000", "0.000000"]


def test_other_models_map_in_dof_order_and_text_is_refused(tmp_path: Path) -> None:
    from skel_ros.resources import example
    from skel_ros.trajectory import TrajectoryFileError

    model = load_trajectory_model(example("arm.skel"))
    assert model.q_columns == tuple(model.limits) == (
        "shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
    bodies = tmp_path / "planar_bodies.xml"
    write_bodies(bodies, "PLANAR_XZ")
    assert [d.name for d in load_trajectory_model(bodies).world.skeletons[0].dofs] == [
        "platform_z", "platform_x", "platform_theta"]  # DART's zx order ...
    assert load_trajectory_model(bodies).q_columns == (
        "platform_x", "platform_z", "platform_theta")  # ... CASPR's q order
    # Model text cannot say which file it came from: refused, never mapped by DOF order.
    with pytest.raises(TrajectoryFileError, match="cannot read model file"):
        load_trajectory_model(bodies.read_text(encoding="utf-8"))


def test_convert_writes_the_q_mapping_that_play_uses(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A SKEL converted from a CASPR model keeps DART's DOF order (z, x, theta); the
    mapping file written beside it makes the x column drive x again."""
    bodies, trajectories = tmp_path / "planar_bodies.xml", tmp_path / "planar_trajectories.xml"
    write_bodies(bodies, "PLANAR_XZ")
    write_trajectories(trajectories, 3)
    skel = tmp_path / "planar.skel"
    assert main(["convert", str(bodies), "-o", str(skel)]) == 0
    mapping = tmp_path / "planar.skel.q_mapping.yaml"
    assert "q_mapping.yaml" in capsys.readouterr().err
    status = main(["play", str(trajectories), "--skel", str(skel), "--mapping", str(mapping),
                   "--print", "--rate", "1", "--trajectory-id", "col0"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    header = out[0].split()[2:]
    values = dict(zip(header, out[-1].split()[1:], strict=True))
    assert values["platform_x"] == f"{VALUE:.6f}"
    assert values["platform_z"] == "0.000000"
    # A SKEL source writes no mapping: its DOF order is the only order.
    arm = tmp_path / "arm.skel"
    from skel_ros.resources import example

    assert main(["convert", str(example("arm.skel")), "-o", str(arm)]) == 0
    assert not (tmp_path / "arm.skel.q_mapping.yaml").exists()


def _played_end(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, float]:
    """``play --print`` at 1 Hz: the last line's positions by DOF name."""
    status = main(["play", *args, "--print", "--rate", "1"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    lines = captured.out.splitlines()
    return dict(zip(lines[0].split()[2:], map(float, lines[-1].split()[1:]), strict=True))


@pytest.mark.parametrize("suffix", [".skel", ".urdf", ".yml"])
@pytest.mark.parametrize("jtype", ["PLANAR_XZ", "S_FIXED_XYZ"])
def test_play_finds_the_q_mapping_convert_wrote(tmp_path: Path, jtype: str, suffix: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26: ``convert bodies.xml -o robot.skel`` then ``play --skel robot.skel``
    (no ``--mapping``) swapped the x and z columns: the mapping convert wrote beside the
    model is used without being named."""
    bodies, trajectories = tmp_path / "robot_bodies.xml", tmp_path / "robot_trajectories.xml"
    write_bodies(bodies, jtype)
    write_trajectories(trajectories, 3)
    model = tmp_path / f"robot{suffix}"
    assert main(["convert", str(bodies), "-o", str(model)]) == 0
    assert (tmp_path / f"robot{suffix}.q_mapping.yaml").is_file()
    capsys.readouterr()
    meant = load_trajectory_model(bodies).q_columns  # the DOF CASPR's q[i] moves
    assert meant != load_trajectory_model(model).q_columns  # not the converted DOF order
    for column, dof in enumerate(meant):
        end = _played_end(capsys, str(trajectories), "--skel", str(model),
                          "--trajectory-id", f"col{column}")
        assert end == {name: VALUE if name == dof else 0.0 for name in meant}, column


def test_caspr_trajectory_on_a_model_of_unknown_column_order_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without the mapping beside it, a converted model's column order cannot be known
    (its planar zx joint may be CASPR's PLANAR_XZ): refused, not played swapped. A mapping
    given still plays, and so does a trajectory YAML, which names its joints."""
    bodies, trajectories = tmp_path / "robot_bodies.xml", tmp_path / "robot_trajectories.xml"
    write_bodies(bodies, "PLANAR_XZ")
    write_trajectories(trajectories, 3)
    model = tmp_path / "robot.skel"
    assert main(["convert", str(bodies), "-o", str(model)]) == 0
    mapping = tmp_path / "elsewhere.yaml"
    (tmp_path / "robot.skel.q_mapping.yaml").rename(mapping)
    capsys.readouterr()
    status = main(["play", str(trajectories), "--skel", str(model), "--print"])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"error: {trajectories}:"), err
    assert "cannot tell which DOF each q column drives: joint 'platform' (" in err
    assert "is planar zx: DOFs (z, x, theta), where CASPR's PLANAR_XZ q is (x, z, theta)" in err
    assert _played_end(capsys, str(trajectories), "--skel", str(model), "--mapping",
                       str(mapping), "--trajectory-id", "col0")["platform_x"] == VALUE
    yaml_file = tmp_path / "t.yaml"
    yaml_file.write_text("joint_names: [platform_x]\npoints:\n"
                         "- {positions: [0.0], time_from_start: 0}\n"
                         "- {positions: [0.5], time_from_start: 1}\n", encoding="utf-8")
    assert _played_end(capsys, str(yaml_file), "--skel", str(model)) == {"platform_x": 0.5}


def test_sim_to_real_checks_caspr_columns_as_play_does(tmp_path: Path) -> None:
    """``sim-to-real``'s check before starting anything maps columns as ``play`` does."""
    import argparse

    from skel_ros.cli.compare_cmd import _check_inputs
    from skel_ros.resources import resolve
    from skel_ros.trajectory import TrajectoryMappingError

    bodies, trajectories = tmp_path / "robot_bodies.xml", tmp_path / "robot_trajectories.xml"
    write_bodies(bodies, "S_FIXED_XYZ")
    write_trajectories(trajectories, 3)
    model = tmp_path / "robot.skel"
    assert main(["convert", str(bodies), "-o", str(model)]) == 0
    args = argparse.Namespace(
        skel=str(model), xacro_args=[], fixed_base=False, mapping=None, truth=None,
        sim_params=None,
        hardware_config=str(resolve("package://skel_ros/config/hardware/arm_dynamixel.yaml")))
    _check_inputs(args, [trajectories])  # the mapping beside the model
    (tmp_path / "robot.skel.q_mapping.yaml").unlink()
    with pytest.raises(TrajectoryMappingError, match=r"joint 'platform' .* is euler zyx"):
        _check_inputs(args, [trajectories])
