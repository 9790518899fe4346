"""One CASPR trajectory does not block the file: only the requested one is read;
``<file_trajectory>`` as CASPR's ``JointTrajectory.FileTrajectoryCreate`` reads it; and
descriptive children such as ``<description>`` are ignored, as CASPR ignores them, with a
note."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skel_ros.cli.main import main
from skel_ros.resources import example
from skel_ros.trajectory import (
    CasprKind,
    TrajectoryError,
    TrajectoryFileError,
    caspr_trajectory_ids,
    load_trajectory,
    parse_caspr,
)

if TYPE_CHECKING:
    from pathlib import Path

GOOD = """
    <linear_spline_trajectory id="good" time_definition="absolute" time_step="0.5">
      <points><point><q>0 0</q></point><point time="1"><q>1 2</q></point></points>
    </linear_spline_trajectory>"""


def _write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("<trajectories>\n<joint_trajectories>\n" + textwrap.dedent(body).strip()
                    + "\n</joint_trajectories>\n</trajectories>\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "bad",
    [
        '<spiral_trajectory id="bad"/>',
        ('<linear_spline_trajectory id="bad" time_definition="absolute" time_step="0.5">'
        "<points><point><q>0 0</q></point><point time='1'><q>oops</q></point></points>"
        "</linear_spline_trajectory>"),
        '<file_trajectory id="bad" filename="missing.traj"/>',
    ],
)
def test_a_bad_trajectory_does_not_block_another(tmp_path: Path, bad: str) -> None:
    path = _write(tmp_path / "t.xml", bad + GOOD)
    traj = load_trajectory(path, ["a", "b"], trajectory_id="good")
    assert traj.points[-1].positions == (1.0, 2.0)
    with pytest.raises(TrajectoryFileError) as info:
        load_trajectory(path, ["a", "b"], trajectory_id="bad")
    assert info.value.location is not None
    assert info.value.location.line == 3  # the bad element
    with pytest.raises(TrajectoryFileError):
        load_trajectory(path, ["a", "b"])  # the first is the bad one
    assert caspr_trajectory_ids(path.read_bytes(), str(path)) == ("bad", "good")


def test_unknown_id_lists_every_id_even_unreadable_ones(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.xml", '<spiral_trajectory id="bad"/>' + GOOD)
    with pytest.raises(TrajectoryFileError, match="no joint trajectory with id 'x'; the file"
                                                  " has 'bad', 'good'"):
        load_trajectory(path, ["a", "b"], trajectory_id="x")


def test_requested_id_used_twice_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.xml", GOOD + GOOD.replace('"good"', '"other"') + GOOD)
    with pytest.raises(TrajectoryFileError, match="id 'good' is used twice"):
        load_trajectory(path, ["a", "b"], trajectory_id="good")
    assert load_trajectory(path, ["a", "b"], trajectory_id="other").duration == 1.0


def test_description_is_ignored_with_a_note(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "t.xml", """
        <quintic_spline_trajectory id="up" time_definition="absolute" time_step="0.5">
          <description>Simple up and down quintic_spline_trajectory</description>
          <points>
            <point><q>0</q><q_dot>0</q_dot><q_ddot>0</q_ddot></point>
            <point time="1"><q>1</q><q_dot>0</q_dot><q_ddot>0</q_ddot></point>
          </points>
        </quintic_spline_trajectory>""")
    notes: list[str] = []
    traj = load_trajectory(path, ["j"], on_note=notes.append)
    assert traj.points[-1].positions == (1.0,)
    assert notes == [(f"{path}:4: /trajectories/joint_trajectories/quintic_spline_trajectory"
                     f"[@id='up']/description: <description> ignored (CASPR reads only the"
                     f" <points> of a quintic_spline_trajectory)")]
    # A child with structure is not descriptive: refused, as before.
    _write(path, GOOD.replace("<points>", "<extra><q>1</q></extra><points>"))
    with pytest.raises(TrajectoryFileError, match="unknown element <extra>"):
        load_trajectory(path, ["a", "b"])
    # play --verbose prints the note; without it, nothing.
    _write(path, GOOD.replace("<points>", "<description>demo</description><points>"))
    assert main(["play", str(path), "--skel", str(example("arm.skel")), "--mapping",
                 str(_mapping(tmp_path)), "--print", "--verbose"]) == 0
    assert "note: " in capsys.readouterr().err
    assert main(["play", str(path), "--skel", str(example("arm.skel")), "--mapping",
                 str(_mapping(tmp_path)), "--print"]) == 0
    assert capsys.readouterr().err == ""


def _mapping(tmp_path: Path) -> Path:
    path = tmp_path / "map.yaml"
    path.write_text("[shoulder_yaw, elbow]\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------ file_trajectory

# As CASPR's JointTrajectory.saveJointTrajectoryFile writes it: no newline after the last row.
TRAJ = ("time_step,0.010000\n"
        "t,0.000000,p,0.800000,0.500000,v,-0.000000,0.942478,a,-2.960881,-0.000000\n"
        "t,0.010000,p,0.799852,0.509423,v,-0.029604,0.942013,a,-2.959420,-0.093004\n"
        "t,0.020000,p,0.799408,0.518837,v,-0.059179,0.940618,a,-2.955039,-0.185915")


def test_file_trajectory_reads_the_rows_relative_to_the_trajectories_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model"
    _write(model / "robot_trajectories.xml",
           '<file_trajectory id="recorded" filename="data/robot.traj" />' + GOOD)
    (model / "data").mkdir()
    (model / "data" / "robot.traj").write_text(TRAJ, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # resolved against the XML's folder, not the cwd
    path = model / "robot_trajectories.xml"
    traj = parse_caspr(path.read_bytes(), str(path))[0]
    assert traj.kind is CasprKind.FILE
    assert traj.time_step == 0.01
    assert traj.num_q == 2
    s = traj.sample()
    np.testing.assert_allclose(s.times, [0.0, 0.01, 0.02], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(s.q, [[0.8, 0.5], [0.799852, 0.509423], [0.799408, 0.518837]])
    np.testing.assert_array_equal(s.q_dot[:, 1], [0.942478, 0.942013, 0.940618])
    np.testing.assert_array_equal(s.q_ddot[2], [-2.955039, -0.185915])
    played = load_trajectory(path, ["x", "y"], trajectory_id="recorded")
    assert played.duration == pytest.approx(0.02)
    assert played.points[1].velocities == (-0.029604, 0.942013)
    # A newline after the last row is fine too.
    (model / "data" / "robot.traj").write_text(TRAJ + "\n", encoding="utf-8")
    assert load_trajectory(path, ["x", "y"], trajectory_id="recorded").duration == \
        pytest.approx(0.02)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", 1, "the first line must be 'time_step,<seconds>'"),
        ("step,0.01\n" + TRAJ.split("\n", 1)[1], 1, "the first line must be"),
        ("time_step,-0.01\n" + TRAJ.split("\n", 1)[1], 1, "time_step must be positive"),
        ("time_step,0.01\n", 1, "at least two rows"),
        (TRAJ.replace("t,0.020000", "t,0.030000"), 4,
         "time 0.03 s, expected 0.02 s (rows are time_step 0.01 s apart from 0"),
        (TRAJ.replace("p,0.799852,0.509423,", "p,0.799852,"), 3,
         "1 position(s), the first row has 2"),
        (TRAJ.replace("a,-2.959420,-0.093004", "a,-2.959420,x"), 3,
         "acceleration 'x' is not a number"),
        (TRAJ.replace("v,-0.029604,", "w,-0.029604,"), 3,
         "a row is 't,<time>,p,<positions>,v,<velocities>,a,<accelerations>'"),
        (TRAJ.replace("\nt,0.010000", "\n\nt,0.010000"), 3, "a row is"),
    ],
)
def test_file_trajectory_errors_name_the_file_and_line(tmp_path: Path, text: str, line: int,
                                                        message: str) -> None:
    xml = _write(tmp_path / "t.xml", '<file_trajectory id="f" filename="f.traj"/>')
    (tmp_path / "f.traj").write_text(text, encoding="utf-8")
    with pytest.raises(TrajectoryFileError) as info:
        load_trajectory(xml, ["x", "y"])
    assert message in str(info.value)
    assert info.value.location is not None
    assert info.value.location.file == str(tmp_path / "f.traj")
    assert info.value.location.line == line, str(info.value)
    assert "file_trajectory 'f'" in str(info.value)


def test_file_trajectory_element_errors(tmp_path: Path) -> None:
    xml = _write(tmp_path / "t.xml", '<file_trajectory id="f"/>')
    with pytest.raises(TrajectoryFileError, match='needs a "filename" attribute') as info:
        load_trajectory(xml, ["x"])
    assert info.value.location is not None
    assert info.value.location.line == 3
    _write(xml, '<file_trajectory id="f" filename="nowhere.traj"/>')
    with pytest.raises(TrajectoryFileError, match="cannot read") as info:
        load_trajectory(xml, ["x"])
    assert info.value.location is not None
    assert (info.value.location.file, info.value.location.line) == (str(xml), 3)
    assert str(tmp_path / "nowhere.traj") in str(info.value)


TRAJ_TOKENS = ["t,", "p,", ",v,", ",a,", ",", "\n", "\r\n", "", "0", "0.01", "-0", "1e308",
               "1e-320", "nan", "inf", "x", " ", "time_step,", "0.010000", "t,0.000000,p,"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12),
                                st.sampled_from(TRAJ_TOKENS)), min_size=1, max_size=4))
def test_mutated_traj_file_raises_only_trajectory_errors(
        tmp_path: Path, edits: list[tuple[float, int, str]]) -> None:
    text = TRAJ
    for where, cut, token in edits:
        at = int(where * len(text))
        text = text[:at] + token + text[at + cut:]
    xml = _write(tmp_path / "t.xml", '<file_trajectory id="f" filename="f.traj"/>')
    (tmp_path / "f.traj").write_text(text, encoding="utf-8", errors="surrogatepass")
    located = True
    try:
        traj = load_trajectory(xml, None, _two_columns(tmp_path))
    except TrajectoryError as exc:
        located = exc.location is not None
    else:
        assert np.all(np.isfinite(traj.sample(traj.duration)[0]))
    assert located


def _two_columns(tmp_path: Path) -> Path:
    path = tmp_path / "cols.yaml"
    path.write_text("{0: x, 1: y}\n", encoding="utf-8")
    return path
