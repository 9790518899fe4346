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
