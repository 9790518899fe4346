"""``skel-ros play --print``: sampled positions without ROS."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skel_ros.cli.main import main
from skel_ros.resources import example

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_play_print_samples_the_trajectory(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["play", str(example("arm_trajectory.yaml")), "--skel",
                   str(example("arm.skel")), "--print", "--rate", "4"])
    out = capsys.readouterr().out.splitlines()
    assert status == 0
    assert out[0] == "# t shoulder_yaw shoulder_pitch elbow wrist"
    rows = np.array([[float(x) for x in line.split()] for line in out[1:]])
    assert rows.shape == (41, 5)  # 0 .. 10 s at 4 Hz
    np.testing.assert_allclose(rows[0], [0, 0, 0, 0.3, 0])
    np.testing.assert_allclose(rows[20], [5.0, 0.7, 0.5, 1.1, 0.2])  # the point at 5 s


def test_play_print_refuses_out_of_limit(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "far.yaml"
    path.write_text("joint_names: [wrist]\npoints:\n- {positions: [3.0], time_from_start: 1}\n",
                    encoding="utf-8")
    status = main(["play", str(path), "--skel", str(example("arm.skel")), "--print"])
    assert status == 1
    assert "DOF 'wrist' at t = 0.000 s: position 3 is outside its limits" in (
        capsys.readouterr().err)


XACRO = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<xacro:arg name="joint" default="hinge"/>'
         '<link name="base"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0"'
         ' iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
         '<joint name="$(arg joint)" type="revolute"><parent link="base"/><child link="arm"/>'
         '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
         '<link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0"'
         ' iyy="0.1" iyz="0" izz="0.1"/></inertial></link></robot>')


def test_play_takes_the_model_arguments(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``--model-args`` (a .xacro model's arguments, in one word) and ``--fixed-base``."""
    model = tmp_path / "robot.urdf.xacro"
    model.write_text(XACRO, encoding="utf-8")
    path = tmp_path / "move.yaml"
    path.write_text("joint_names: [elbow]\npoints:\n- {positions: [0.5], time_from_start: 1}\n",
                    encoding="utf-8")
    status = main(["play", str(path), "--skel", str(model), "--model-args", "joint:=elbow",
                   "--fixed-base", "--print", "--rate", "1"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out.splitlines()[0] == "# t elbow"
    # Without the argument the joint is 'hinge', and the model floats.
    status = main(["play", str(path), "--skel", str(model), "--print"])
    assert status == 1
    assert "elbow" in capsys.readouterr().err
