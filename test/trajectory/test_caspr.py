"""CASPR trajectories.xml: every kind against values computed by hand, and every error."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.trajectory import (
    CasprKind,
    MappedColumn,
    TimeDefinition,
    TrajectoryError,
    TrajectoryFileError,
    parse_caspr,
    read_caspr,
)

if TYPE_CHECKING:
    from pathlib import Path


def _doc(body: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?>\n'
            '<!DOCTYPE trajectories SYSTEM "../../../templates/trajectories.dtd">\n'
            "<trajectories>\n<joint_trajectories>\n" + textwrap.dedent(body).strip()
            + "\n</joint_trajectories>\n</trajectories>\n")


def _samples(body: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    traj = parse_caspr(_doc(body), "t.xml")[0]
    s = traj.sample()
    return s.times, s.q, s.q_dot, s.q_ddot


def test_linear_spline_absolute_and_relative_times() -> None:
    t, q, qd, qdd = _samples("""
        <linear_spline_trajectory id="lin" time_definition="relative" time_step="0.25">
          <points>
            <point><q>0 0</q></point>
            <point time="1"><q>1 -2</q></point>
            <point time="0.5"><q>2 0</q></point>
          </points>
        </linear_spline_trajectory>""")
    # segment 1: q = (t, -2t); segment 2 (1 s -> 1.5 s): q0 = 1 + 2 (t - 1), q1 = -2 + 4 (t - 1)
    np.testing.assert_allclose(t, [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5])
    np.testing.assert_allclose(q[:, 0], [0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(q[:, 1], [0, -0.5, -1.0, -1.5, -2.0, -1.0, 0.0])
    np.testing.assert_allclose(qd[:5], [[1, -2]] * 5)  # the shared sample is segment 1's end
    np.testing.assert_allclose(qd[5:], [[2, 4]] * 2)
    np.testing.assert_allclose(qdd, 0.0)


def test_segment_not_a_whole_number_of_steps_reaches_its_point_at_the_last_sample() -> None:
    # MATLAB 0:0.3:1 is 0, 0.3, 0.6, 0.9; Spline.LinearInterpolation runs over [0, 0.9]
    t, q, qd, _ = _samples("""
        <linear_spline_trajectory id="lin" time_definition="absolute" time_step="0.3">
          <points><point><q>0</q></point><point time="1"><q>1</q></point>
          <point time="1.6"><q>0</q></point></points>
        </linear_spline_trajectory>""")
    np.testing.assert_allclose(t, [0, 0.3, 0.6, 0.9, 1.3, 1.6])
    np.testing.assert_allclose(q[:, 0], [0, 1 / 3, 2 / 3, 1.0, 0.5, 0.0])
    np.testing.assert_allclose(qd[:4, 0], 1 / 0.9)


def test_matlab_colon_keeps_the_end_despite_rounding() -> None:
    # (0.3 - 0) / 0.1 is 2.9999999999999996 in floating point; MATLAB's 0:0.1:0.3 has 4 values
    t, q, _, _ = _samples("""
        <linear_spline_trajectory id="lin" time_definition="absolute" time_step="0.1">
          <points><point><q>0</q></point><point time="0.3"><q>3</q></point></points>
        </linear_spline_trajectory>""")
    np.testing.assert_allclose(t, [0, 0.1, 0.2, 0.3])
    np.testing.assert_allclose(q[:, 0], [0, 1, 2, 3])


def test_cubic_spline() -> None:
    # q 0 -> 1, q_dot 0 -> 0 over 2 s: q = 0.75 t^2 - 0.25 t^3
    t, q, qd, qdd = _samples("""
        <cubic_spline_trajectory id="c" time_definition="absolute" time_step="0.5">
          <points>
            <point><q>0</q><q_dot>0</q_dot></point>
            <point time="2"><q>1</q><q_dot>0</q_dot></point>
          </points>
        </cubic_spline_trajectory>""")
    np.testing.assert_allclose(t, [0, 0.5, 1, 1.5, 2])
    np.testing.assert_allclose(q[:, 0], [0, 0.15625, 0.5, 0.84375, 1.0])
    np.testing.assert_allclose(qd[:, 0], [0, 0.5625, 0.75, 0.5625, 0], atol=1e-12)
    np.testing.assert_allclose(qdd[:, 0], [1.5, 0.75, 0, -0.75, -1.5], atol=1e-12)


def test_quintic_spline() -> None:
    # minimum jerk 0 -> 1 in 1 s: q = 10 t^3 - 15 t^4 + 6 t^5
    _, q, qd, qdd = _samples("""
        <quintic_spline_trajectory id="q" time_definition="absolute" time_step="0.25">
          <points>
            <point><q>0 1</q><q_dot>0 0</q_dot><q_ddot>0 0</q_ddot></point>
            <point time="1"><q>1 1</q><q_dot>0 0</q_dot><q_ddot>0 0</q_ddot></point>
          </points>
        </quintic_spline_trajectory>""")
    np.testing.assert_allclose(q[:, 0], [0, 0.103515625, 0.5, 0.896484375, 1.0])
    np.testing.assert_allclose(qd[:, 0], [0, 1.0546875, 1.875, 1.0546875, 0], atol=1e-12)
    np.testing.assert_allclose(qdd[:, 0], [0, 5.625, 0, -5.625, 0], atol=1e-12)
    np.testing.assert_allclose(q[:, 1], 1.0)


def test_cubic_spline_average_velocity() -> None:
    # inner point velocity = mean of slopes 1 and 0 = 0.5
    # segment 1 (0 -> 1, v 0 -> 0.5): q = 2.5 t^2 - 1.5 t^3
    # segment 2 (1 -> 1, v 0.5 -> 0): q = 1 + 0.5 s - s^2 + 0.5 s^3
    t, q, qd, _ = _samples("""
        <cubic_spline_average_velocity_trajectory id="a" time_definition="absolute"
                                                  time_step="0.5">
          <points>
            <point><q>0</q><q_dot>0</q_dot></point>
            <point time="1"><q>1</q></point>
            <point time="2"><q>1</q><q_dot>0</q_dot></point>
          </points>
        </cubic_spline_average_velocity_trajectory>""")
    np.testing.assert_allclose(t, [0, 0.5, 1, 1.5, 2])
    np.testing.assert_allclose(q[:, 0], [0, 0.4375, 1.0, 1.0625, 1.0])
    np.testing.assert_allclose(qd[:, 0], [0, 1.375, 0.5, -0.125, 0], atol=1e-12)


def test_parabolic_blend() -> None:
    # 0 -> 1 in 4 s, blend 1 s: accel 1/3, linear velocity 1/3 from q = 1/6 at t = 1
    # second segment 1 -> 0 in 2 s with blend_time 0.5 on its point: accel -1/(0.5 * 1.5)
    t, q, qd, qdd = _samples("""
        <parabolic_blend_trajectory id="p" time_definition="absolute" time_step="0.5"
                                    blend_time_default="1">
          <points>
            <point><q>0</q></point>
            <point time="4"><q>1</q></point>
            <point time="6" blend_time="0.5"><q>0</q></point>
          </points>
        </parabolic_blend_trajectory>""")
    np.testing.assert_allclose(t, np.arange(13) * 0.5)
    third = 1 / 3
    np.testing.assert_allclose(q[:9, 0], [0, 1 / 24, 1 / 6, 1 / 3, 0.5, 2 / 3, 5 / 6,
                                          1 - 1 / 24, 1])
    np.testing.assert_allclose(qd[:9, 0], [0, 1 / 6, third, third, third, third, third, 1 / 6,
                                           0], atol=1e-12)
    np.testing.assert_allclose(qdd[:9, 0], [third, third, 0, 0, 0, 0, -third, -third, -third],
                               atol=1e-12)
    a = -1 / (0.5 * 1.5)  # (x_s - x_e) / (tb^2 - T tb) with x_s = 1, x_e = 0, T = 2, tb = 0.5
    x_b = 1 + a * 0.25 / 2
    v = a * 0.5
    np.testing.assert_allclose(q[9:, 0], [x_b, x_b + v * 0.5, x_b + v, 0.0])
    np.testing.assert_allclose(qd[9:, 0], [v, v, v, 0.0], atol=1e-12)


def test_trajectory_metadata_and_operational_space_ignored() -> None:
    text = _doc("""
        <linear_spline_trajectory id="first" time_definition="absolute" time_step="0.5">
          <points><point time="0"><q>0</q></point><point time="1"><q>1</q></point></points>
        </linear_spline_trajectory>
        <linear_spline_trajectory id="second" time_definition="relative" time_step="0.5">
          <points><point><q>0</q></point><point time="1"><q>1</q></point></points>
        </linear_spline_trajectory>""").replace(
        "</joint_trajectories>",
        "</joint_trajectories>\n<operational_trajectories><quintic_spline_trajectory "
        'id="y" time_step="0.1" time_definition="relative"><points><point><y>1</y></point>'
        "</points></quintic_spline_trajectory></operational_trajectories>")
    trajs = parse_caspr(text, "t.xml")
    assert [t.id for t in trajs] == ["first", "second"]
    assert trajs[0].kind is CasprKind.LINEAR_SPLINE
    assert trajs[1].time_definition is TimeDefinition.RELATIVE
    assert trajs[0].points[1].location.line == 6
    assert trajs[0].points[1].location.path.endswith(
        "linear_spline_trajectory[@id='first']/points/point[2]")


def test_to_point_trajectory_maps_columns_and_matches_samples() -> None:
    traj = parse_caspr(_doc("""
        <cubic_spline_trajectory id="c" time_definition="absolute" time_step="0.5">
          <points>
            <point><q>0 5</q><q_dot>0 0</q_dot></point>
            <point time="2"><q>1 5</q><q_dot>0 0</q_dot></point>
          </points>
        </cubic_spline_trajectory>"""), "t.xml")[0]
    pt = traj.to_point_trajectory([MappedColumn(1, "b"), MappedColumn(0, "a")])
    assert pt.joint_names == ("b", "a")
    assert pt.duration == 2.0
    pos, vel, acc = pt.sample(0.5)
    np.testing.assert_allclose(pos, [5, 0.15625])
    np.testing.assert_allclose(vel, [0, 0.5625], atol=1e-12)
    np.testing.assert_allclose(acc, [0, 0.75], atol=1e-12)


def test_read_caspr_from_file(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.xml"
    path.write_text(_doc("""
        <linear_spline_trajectory id="lin" time_definition="absolute" time_step="0.5">
          <points><point><q>0</q></point><point time="1"><q>1</q></point></points>
        </linear_spline_trajectory>"""), encoding="utf-8")
    assert read_caspr(path)[0].num_q == 1
    with pytest.raises(TrajectoryFileError, match="cannot read"):
        read_caspr(tmp_path / "missing.xml")


LIN = '<linear_spline_trajectory id="lin" time_definition="absolute" time_step="0.5">'
LIN_END = "</linear_spline_trajectory>"


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ((f'{LIN}<points><point><q>0</q></point>\n<point time="1"><q>0 1</q></point></points>'
         f"{LIN_END}"), 2, "<q> has 2 values but the first point's has 1"),
        ((f"{LIN}<points><point><q>0</q></point>\n<point time='1'><q>zero</q></point></points>"
         f"{LIN_END}"), 2, "'zero' is not a number"),
        ((f"{LIN}<points><point><q>0</q></point>\n<point time='1'><q>1e999</q></point>"
         f"</points>{LIN_END}"), 2, "is not finite"),
        (f"{LIN}<points><point><q>0</q></point>\n<point time='1'></point></points>{LIN_END}",
         2, "needs a <q> element"),
        ((f"{LIN}<points><point><q>0</q></point>\n<point time='1'><q> </q></point></points>"
         f"{LIN_END}"), 2, "<q> is empty"),
        (f"{LIN}<points><point><q>0</q></point>\n<point><q>1</q></point></points>{LIN_END}",
         2, 'needs a "time" attribute'),
        ((f"{LIN}<points><point><q>0</q></point><point time='1'><q>1</q></point>\n"
         f"<point time='1'><q>1</q></point></points>{LIN_END}"), 2,
         "time 1 is not after the previous point's (1)"),
        ((f"{LIN}<points>\n<point time='2'><q>0</q></point><point time='3'><q>1</q></point>"
         f"</points>{LIN_END}"), 2, "first point is at time 0"),
        ((f"{LIN}<points><point><q>0</q></point>\n<point time='1'><y>1</y></point></points>"
         f"{LIN_END}"), 2, "operational-space"),
        ((f"{LIN}<points><point><q>0</q></point>\n<point time='1'><qq>1</qq></point></points>"
         f"{LIN_END}"), 2, "unknown element <qq>"),
        (f"{LIN}<points>\n<point><q>0</q></point></points>{LIN_END}", 1,
         "at least two points"),
        ((f"{LIN}\n<points><point><q>0</q></point><point time='0.25'><q>1</q></point></points>"
         f"{LIN_END}"), 2,
         "point[2]: the segment from t = 0 s to 0.25 s is shorter than time_step"),
        (('<linear_spline_trajectory id="l" time_definition="sometimes" time_step="0.5">'
         f"<points/>{LIN_END}"), 1, 'must be "absolute" or "relative"'),
        (('<linear_spline_trajectory id="l" time_step="0.5">'
         f"<points/>{LIN_END}"), 1, 'needs a "time_definition" attribute'),
        (('<linear_spline_trajectory id="l" time_definition="absolute" time_step="-1">'
         f"<points/>{LIN_END}"), 1, "time_step must be positive"),
        (('<linear_spline_trajectory id="l" time_definition="absolute" time_step="0">'
         f"<points/>{LIN_END}"), 1, "time_step must be positive"),
        ('<spiral_trajectory id="l" time_definition="absolute" time_step="1"/>', 1,
         "unknown trajectory kind <spiral_trajectory>"),
        (('<cubic_spline_trajectory id="c" time_definition="absolute" time_step="0.5"><points>\n'
         "<point><q>0</q></point><point time='1'><q>1</q><q_dot>0</q_dot></point></points>"
         "</cubic_spline_trajectory>"), 2, "needs a <q_dot> element in a cubic_spline"),
        (('<cubic_spline_trajectory id="c" time_definition="absolute" time_step="0.5"><points>'
         "<point><q>0</q><q_dot>0</q_dot></point>\n<point time='1'><q>1</q><q_dot>0 1</q_dot>"
         "</point></points></cubic_spline_trajectory>"), 2, "<q_dot> has 2 values; <q> has 1"),
        (('<quintic_spline_trajectory id="c" time_definition="absolute" time_step="0.5"><points>'
         "\n<point><q>0</q><q_dot>0</q_dot></point><point time='1'><q>1</q><q_dot>0</q_dot>"
         "<q_ddot>0</q_ddot></point></points></quintic_spline_trajectory>"), 2,
         "needs a <q_ddot> element"),
        (('<cubic_spline_average_velocity_trajectory id="c" time_definition="absolute" '
         'time_step="0.5"><points>\n<point><q>0</q></point><point time="1"><q>1</q>'
         "<q_dot>0</q_dot></point></points></cubic_spline_average_velocity_trajectory>"), 2,
         "first and last points"),
        (('<parabolic_blend_trajectory id="p" time_definition="absolute" time_step="0.5">\n'
         '<points><point><q>0</q></point><point time="4"><q>1</q></point></points>'
         "</parabolic_blend_trajectory>"), 1, "needs a blend_time_default"),
        (('<parabolic_blend_trajectory id="p" time_definition="absolute" time_step="0.5" '
         'blend_time_default="1"><points><point><q>0</q></point>\n<point time="2"><q>1</q>'
         "</point></points></parabolic_blend_trajectory>"), 2,
         "must be longer than twice the blend time"),
        (('<parabolic_blend_trajectory id="p" time_definition="absolute" time_step="0.5" '
         'blend_time_default="1"><points>\n<point blend_time="0.5"><q>0</q></point>'
         '<point time="4"><q>1</q></point></points></parabolic_blend_trajectory>'), 2,
         "blend_time on the first point"),
        ((f"{LIN}<points><point><q>0</q></point>\n<point time='1' blend_time='0.1'><q>1</q>"
         f"</point></points>{LIN_END}"), 2, "only read in a parabolic_blend_trajectory"),
        ((f"{LIN}<points><point><q>0</q></point><point time='1'><q>1</q></point></points>"
         f"{LIN_END}\n{LIN}<points><point><q>0</q></point><point time='1'><q>1</q></point>"
         f"</points>{LIN_END}"), 2, "trajectory id 'lin' is used twice"),
        (('<linear_spline_trajectory id="l" time_definition="absolute" time_step="1e-300">'
          "<points><point><q>0</q></point><point time='2e9'><q>1</q></point></points>"
          f"{LIN_END}"), 1, "more than 200000 samples"),  # found by test_trajectory_fuzz: inf steps
        # found by test_trajectory_fuzz: a segment's polynomial overflowed at sampling
        (('<quintic_spline_trajectory id="q" time_definition="absolute" time_step="1e300">'
          "<points><point><q>0</q><q_dot>0</q_dot><q_ddot>0</q_ddot></point>\n<point time="
          "'1e301'><q>1</q><q_dot>0</q_dot><q_ddot>0</q_ddot></point></points>"
          "</quintic_spline_trajectory>"), 2, "time 1e+301 s is beyond 2147483648 s"),
        (('<linear_spline_trajectory id="l" time_definition="relative" time_step="1e9">'
          "<points><point><q>0</q></point><point time='2e9'><q>1</q></point>\n"
          f"<point time='2e9'><q>1</q></point></points>{LIN_END}"), 2,
         "time 4e+09 s is beyond 2147483648 s"),
        (('<linear_spline_trajectory id="l" time_definition="absolute" time_step="1e-7">'
         "<points><point><q>0</q></point><point time='100'><q>1</q></point></points>"
         f"{LIN_END}"), 1, "more than 200000 samples"),
    ],
)
def test_errors_name_file_line_and_element(body: str, line: int, message: str) -> None:
    text = ("<trajectories><joint_trajectories>" + body
            + "</joint_trajectories></trajectories>")
    with pytest.raises(TrajectoryFileError) as info:
        parse_caspr(text, "bad.xml")
    assert message in str(info.value)
    assert info.value.location is not None
    assert info.value.location.file == "bad.xml"
    assert info.value.location.line == line, str(info.value)
    assert info.value.location.path.startswith("/trajectories/joint_trajectories/")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<trajectories><joint_trajectories>", "not well-formed XML"),
        ("", "not well-formed XML"),
        ("<robot/>", "root element is <robot>"),
        ("<trajectories/>", "needs a <joint_trajectories>"),
        ("<trajectories><joint_trajectories/></trajectories>", "holds no trajectory"),
        ("<trajectories><cables/></trajectories>", "unknown element <cables>"),
        (('<!DOCTYPE t [<!ENTITY e SYSTEM "file:///etc/passwd">]><trajectories>&e;'
         "</trajectories>"), "joint_trajectories"),
    ],
)
def test_document_errors(text: str, message: str) -> None:
    with pytest.raises(TrajectoryFileError, match=message):
        parse_caspr(text, "bad.xml")


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match=r"bad\.xml"):
        parse_caspr("<robot/>", "bad.xml")
    assert issubclass(TrajectoryFileError, TrajectoryError)


POCA = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE joint_trajectories [
  <!ATTLIST quintic_spline_trajectory id ID #REQUIRED>
]>

<joint_trajectories>
    <quintic_spline_trajectory id="trajectory_1" time_definition="absolute" time_step="0.05">
        <points>
            <point><q>0.0 0.0 0.0</q><q_dot>0 0 0</q_dot><q_ddot>0 0 0</q_ddot></point>
            <point time="3.0"><q>0.0 0.13 0.0</q><q_dot>0 0 0</q_dot><q_ddot>0 0 0</q_ddot></point>
        </points>
    </quintic_spline_trajectory>
    <linear_spline_trajectory id="trajectory_1" time_definition="absolute" time_step="0.5">
        <points><point><q>0 0 0</q></point><point time="1"><q>1 1 1</q></point></points>
    </linear_spline_trajectory>
    <linear_spline_trajectory id="other" time_definition="absolute" time_step="0.5">
        <points><point><q>0 0 0</q></point><point time="1"><q>1 1 1</q></point></points>
    </linear_spline_trajectory>
</joint_trajectories>
"""


def test_joint_trajectories_as_the_root() -> None:
    """CASPR's own files (PoCaBot_planar_trajectories.xml) have <joint_trajectories> as the
    root: CASPR lists the children of the document's first <joint_trajectories> element
    (ModelConfigBase.getJointTrajectoriesList, getElementsByTagName), the root included."""
    from skel_ros.trajectory import caspr_trajectory_ids, select_caspr

    assert caspr_trajectory_ids(POCA, "poca.xml") == ("trajectory_1", "trajectory_1", "other")
    first = select_caspr(POCA, "poca.xml")
    assert first.kind is CasprKind.QUINTIC_SPLINE
    assert first.location.path == (
        "/joint_trajectories/quintic_spline_trajectory[@id='trajectory_1']")
    np.testing.assert_allclose(first.sample().q[-1], [0.0, 0.13, 0.0])
    assert select_caspr(POCA, "poca.xml", "other").id == "other"
    # The id used twice: an error only when it is the one asked for (docs/trajectories.md).
    with pytest.raises(TrajectoryFileError, match="'trajectory_1' is used twice"):
        select_caspr(POCA, "poca.xml", "trajectory_1")
    with pytest.raises(TrajectoryFileError, match="holds no trajectory"):
        parse_caspr("<joint_trajectories/>", "bad.xml")
    with pytest.raises(TrajectoryFileError, match=r"root element is <robot>; a CASPR trajectory"
                       r" file has <trajectories> \(or <joint_trajectories>\)"):
        parse_caspr("<robot/>", "bad.xml")
