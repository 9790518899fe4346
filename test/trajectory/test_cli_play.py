"""``skel-ros play``: sampled positions without ROS (--print), its checks and options."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from xacro_models import ONE_JOINT_XACRO

from skel_ros.cli.main import main
from skel_ros.resources import example

if TYPE_CHECKING:
    from pathlib import Path


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


def test_play_takes_the_model_arguments(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``--model-args`` (a .xacro model's arguments, in one word) and ``--fixed-base``."""
    model = tmp_path / "robot.urdf.xacro"
    model.write_text(ONE_JOINT_XACRO, encoding="utf-8")
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


def test_play_to_ros_checks_the_files_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Without --print, a bad trajectory or model is reported as --print reports it: one
    ``error: file[:line]: ...`` line, status 1, and no node is started."""
    from skel_ros.cli import workflow_cmd

    started: list[object] = []
    monkeypatch.setattr(workflow_cmd, "_play_to_ros", lambda args: started.append(args) or 2)
    far = tmp_path / "far.yaml"
    far.write_text("joint_names: [wrist]\npoints:\n- {positions: [3.0], time_from_start: 1}\n",
                   encoding="utf-8")
    nonnum = tmp_path / "nonnum.yaml"
    nonnum.write_text("joint_names: [wrist]\npoints:\n- {positions: [x], time_from_start: 1}\n",
                      encoding="utf-8")
    for path, message in ((far, f"error: {far}: DOF 'wrist' at t = 0.000 s: position 3 is"),
                          (tmp_path / "missing.yaml", "cannot read trajectory file"),
                          (nonnum, f"error: {nonnum}:3: /points[0]/positions[0]: 'x' is not")):
        status = main(["play", str(path), "--skel", str(example("arm.skel"))])
        err = capsys.readouterr().err
        assert status == 1, err
        assert len(err.splitlines()) == 1, err
        assert err.startswith("error: "), err
        assert message in err
    assert main(["play", str(far), "--skel", str(tmp_path / "none.skel")]) == 1
    assert "none.skel" in capsys.readouterr().err
    assert started == []
    good = str(example("arm_trajectory.yaml"))
    assert main(["play", good, "--skel", str(example("arm.skel")), "--mode", "stream"]) == 2
    assert [a.mode for a in started] == ["stream"]  # type: ignore[attr-defined]


def test_play_rate_is_capped_as_the_node_caps_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``--print --rate 1e9`` printed lines until killed: the player's (0, 1000] Hz holds."""
    from skel_ros.trajectory import MAX_PLAY_RATE

    args = ["play", str(example("arm_trajectory.yaml")), "--skel", str(example("arm.skel")),
            "--print"]
    for rate in ("1e9", "1000.5", "nan", "0"):
        with pytest.raises(SystemExit) as exited:
            main([*args, "--rate", rate])
        assert exited.value.code == 2
        assert f"argument --rate: must be in (0, {MAX_PLAY_RATE:g}] Hz, got {rate}" in (
            capsys.readouterr().err)
    assert main([*args, "--rate", f"{MAX_PLAY_RATE:g}"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 10 * 1000 + 2  # header, 0 .. 10 s


@pytest.mark.parametrize("option", [["--loop"], ["--mode", "stream"], ["--mode", "trajectory"],
                                    ["--subscribers", "2"], ["--wait", "10"]])
def test_play_print_refuses_the_ros_options(option: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """--mode and --loop apply to ROS; with --print they were silently ignored."""
    status = main(["play", str(example("arm_trajectory.yaml")), "--skel",
                   str(example("arm.skel")), "--print", *option])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert (f"skel-ros play: error: argument {option[0]}: not allowed with --print"
            in captured.err)
    assert captured.err.startswith("usage: skel-ros play")


def test_play_tells_the_node_how_many_robots_to_wait_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--subscribers`` / ``--wait`` reach the node's ``subscribers`` and
    ``wait_for_subscribers`` (issue 34: a robot matched after the one JointTrajectory was
    sent never moved)."""
    from skel_ros.nodes import trajectory_player

    seen: list[list[str]] = []
    monkeypatch.setattr(trajectory_player, "main", lambda argv: seen.append(list(argv)))
    args = ["play", str(example("arm_trajectory.yaml")), "--skel", str(example("arm.skel"))]
    assert main([*args, "--subscribers", "2", "--wait", "30"]) == 0
    assert seen[-1][-4:] == ["-p", "subscribers:=2", "-p", "wait_for_subscribers:=30.0"]
    assert main(args) == 0
    assert not any("subscribers" in word for word in seen[-1])  # the node's defaults
    for bad in (["--subscribers", "0"], ["--wait", "-1"], ["--wait", "nan"]):
        with pytest.raises(SystemExit) as exited:
            main([*args, *bad])
        assert exited.value.code == 2
