"""Trajectory YAML, q-column mapping files, load_trajectory and the limit check."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.model import load_skel
from skel_ros.resources import example
from skel_ros.trajectory import (
    TrajectoryError,
    TrajectoryFileError,
    TrajectoryLimitError,
    TrajectoryMappingError,
    check_limits,
    load_trajectory,
    model_limits,
    parse_mapping,
    parse_trajectory_yaml,
)

if TYPE_CHECKING:
    from pathlib import Path

ARM_DOFS = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
CASPR = """<trajectories><joint_trajectories>
<linear_spline_trajectory id="lin" time_definition="absolute" time_step="0.5">
<points><point><q>0 1 2</q></point><point time="1"><q>1 2 3</q></point></points>
</linear_spline_trajectory></joint_trajectories></trajectories>
"""


# ---------------------------------------------------------------- YAML


def test_yaml_trajectory_with_both_time_forms() -> None:
    traj = parse_trajectory_yaml(
        "joint_names: [a, b]\n"
        "points:\n"
        "  - {positions: [0, 0], time_from_start: 0}\n"
        "  - positions: [1, 2]\n"
        "    velocities: []\n"
        "    time_from_start: {sec: 1, nanosec: 500000000}\n", "t.yaml")
    assert traj.joint_names == ("a", "b")
    assert traj.duration == 1.5
    np.testing.assert_allclose(traj.sample(0.75)[0], [0.5, 1.0])


def test_yaml_from_ros2_topic_echo() -> None:
    text = """header:
  stamp:
    sec: 0
    nanosec: 0
  frame_id: ''
joint_names:
- elbow
points:
- positions:
  - 0.5
  velocities:
  - 0.0
  accelerations: []
  effort: []
  time_from_start:
    sec: 2
    nanosec: 0
"""
    traj = parse_trajectory_yaml(text, "echo.yaml")
    assert traj.duration == 2.0
    np.testing.assert_allclose(traj.sample(3.0)[0], [0.5])


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("joint_names: [a]\npoints: [{positions: [0], time_from_start: 0}\n", 3,
         "not valid YAML"),
        ("", 0, "empty"),
        ("- a\n", 1, "expected a map"),
        ("joint_names: [a]\n", 1, "missing key 'points'"),
        ("joint_names: [a]\npoints: []\n", 2, "non-empty list"),
        ("joint_names: [a, a]\npoints: [{positions: [0], time_from_start: 0}]\n", 1,
         "listed twice"),
        ("joint_names: [a]\nfoo: 1\npoints: []\n", 2, "unknown key 'foo'"),
        ("joint_names: [a]\npoints:\n- positions: [0, 1]\n  time_from_start: 0\n", 3,
         "2 values for 1 joints"),
        ("joint_names: [a]\npoints:\n- positions: [x]\n  time_from_start: 0\n", 3,
         "'x' is not a number"),
        ("joint_names: [a]\npoints:\n- positions: [.nan]\n  time_from_start: 0\n", 3,
         "not finite"),
        ("joint_names: [a]\npoints:\n- positions: [0]\n", 3, "no time_from_start"),
        ("joint_names: [a]\npoints:\n- time_from_start: 1\n", 3, "no positions"),
        ("joint_names: [a]\npoints:\n- positions: [0]\n  time_from_start: -1\n", 4,
         "negative"),
        # found by test_trajectory_fuzz: 1e308 s overflowed the segment's polynomial
        ("joint_names: [a]\npoints:\n- positions: [0]\n  time_from_start: 1e308\n", 4,
         "time_from_start 1e+308 s is beyond 2147483648 s"),
        (("joint_names: [a]\npoints:\n- positions: [0]\n  time_from_start: {sec: 2147483649,"
          " nanosec: 0}\n"), 4, "is beyond 2147483648 s"),
        (("joint_names: [a]\npoints:\n- positions: [0]\n  time_from_start: {sec: 1,"
         " nanosec: 2000000000}\n"), 4, "nanosec"),
        (("joint_names: [a]\npoints:\n- positions: [0]\n  time_from_start: 1\n"
         "- positions: [0]\n  time_from_start: 1\n"), 5, "not after the previous point's"),
        (("joint_names: [a]\npoints:\n- positions: [0]\n  accelerations: [1]\n"
         "  time_from_start: 1\n"), 3, "accelerations need velocities"),
        (("joint_names: [a]\npoints:\n- positions: [0]\n  effort: [1]\n"
         "  time_from_start: 1\n"), 4, "effort is not played"),
    ],
)
def test_yaml_errors_have_file_and_line(text: str, line: int, message: str) -> None:
    with pytest.raises(TrajectoryFileError) as info:
        parse_trajectory_yaml(text, "bad.yaml")
    assert message in str(info.value)
    assert info.value.location is not None
    assert info.value.location.file == "bad.yaml"
    assert info.value.location.line == line, str(info.value)


# ---------------------------------------------------------------- mapping


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_caspr_by_order(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.xml", CASPR)
    traj = load_trajectory(path, ["x", "y", "z"])
    assert traj.joint_names == ("x", "y", "z")
    np.testing.assert_allclose(traj.sample(0.5)[0], [0.5, 1.5, 2.5])
    with pytest.raises(TrajectoryMappingError, match="q has 3 values but the model has 4 DOFs"):
        load_trajectory(path, ARM_DOFS)


def test_caspr_mapping_list_with_null_and_map_form(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.xml", CASPR)
    listed = _write(tmp_path, "m.yaml", "[wrist, null, elbow]\n")
    traj = load_trajectory(path, ARM_DOFS, listed)
    assert traj.joint_names == ("wrist", "elbow")
    np.testing.assert_allclose(traj.sample(1.0)[0], [1.0, 3.0])
    mapped = _write(tmp_path, "m2.yaml", "2: shoulder_yaw\n0: elbow\n")
    traj = load_trajectory(path, ARM_DOFS, mapped)
    assert traj.joint_names == ("shoulder_yaw", "elbow")
    np.testing.assert_allclose(traj.sample(0.0)[0], [2.0, 0.0])


@pytest.mark.parametrize(
    ("text", "line", "message", "error"),
    [
        ("[wrist, nose, elbow]\n", 1, "unknown DOF 'nose'", TrajectoryMappingError),
        ("0: wrist\n1: elbow\n7: shoulder_yaw\n", 3, "q column 7 does not exist",
         TrajectoryMappingError),
        ("[wrist, elbow]\n", 1, "the mapping list has 2 entries but q has 3",
         TrajectoryMappingError),
        ("[wrist, wrist, elbow]\n", 1, "mapped from q columns 0 and 1", TrajectoryFileError),
        ("a: wrist\n", 1, "not a q column index", TrajectoryFileError),
        ("0: [wrist]\n", 1, "expected a DOF name", TrajectoryFileError),
        ("wrist\n", 1, "a list of DOF names or a map", TrajectoryFileError),
        ("[null, null, null]\n", 1, "maps no column", TrajectoryFileError),
        ("0: wrist\n0: elbow\n", 2, "mapped twice", TrajectoryFileError),
        ("[wrist,\n", 2, "not valid YAML", TrajectoryFileError),
    ],
)
def test_mapping_errors(tmp_path: Path, text: str, line: int, message: str,
                        error: type[TrajectoryError]) -> None:
    path = _write(tmp_path, "t.xml", CASPR)
    mapping = _write(tmp_path, "m.yaml", text)
    with pytest.raises(error) as info:
        load_trajectory(path, ARM_DOFS, mapping)
    assert message in str(info.value)
    assert info.value.location is not None
    assert info.value.location.line == line, str(info.value)
    assert info.value.location.file in (str(mapping), str(path))


def test_parse_mapping_keeps_locations() -> None:
    mapping = parse_mapping("- a\n- null\n- b\n", "m.yaml")
    assert [(c.column, c.dof) for c in mapping.columns] == [(0, "a"), (2, "b")]
    assert mapping.columns[1].location is not None
    assert mapping.columns[1].location.line == 3
    assert mapping.list_length == 3


# ---------------------------------------------------------------- load_trajectory


def test_load_chooses_reader_by_content(tmp_path: Path) -> None:
    xml_named_yaml = _write(tmp_path, "t.yaml", "  \n" + CASPR)
    assert load_trajectory(xml_named_yaml, ["a", "b", "c"]).joint_names == ("a", "b", "c")
    yaml_named_xml = _write(tmp_path, "t.xml",
                            "joint_names: [elbow]\npoints: [{positions: [0.1],"
                            " time_from_start: 1}]\n")
    assert load_trajectory(yaml_named_xml, ARM_DOFS).joint_names == ("elbow",)


def test_load_yaml_unknown_joint_and_misplaced_options(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.yaml", "# c\njoint_names: [elbow, knee]\n"
                  "points: [{positions: [0, 0], time_from_start: 1}]\n")
    with pytest.raises(TrajectoryMappingError, match=r"t.yaml:2: /joint_names: unknown DOF"):
        load_trajectory(path, ARM_DOFS)
    with pytest.raises(TrajectoryMappingError, match="CASPR trajectories only"):
        load_trajectory(path, ARM_DOFS, path)
    with pytest.raises(TrajectoryFileError, match="cannot read"):
        load_trajectory(tmp_path / "none.yaml", ARM_DOFS)


def test_load_selects_caspr_trajectory_by_id() -> None:
    path = example("arm_trajectory.xml")
    linear = load_trajectory(path, ARM_DOFS, trajectory_id="arm_wave_linear")
    np.testing.assert_allclose(linear.sample(1.5)[0], [0.4, 0.2, 0.6, -0.2])
    with pytest.raises(TrajectoryFileError, match="no joint trajectory with id 'nope'"):
        load_trajectory(path, ARM_DOFS, trajectory_id="nope")


# ---------------------------------------------------------------- examples and limits


@pytest.mark.parametrize("name", ["arm_trajectory.xml", "arm_trajectory.yaml"])
def test_bundled_examples_fit_the_arm(name: str) -> None:
    limits = model_limits(load_skel(example("arm.skel")))
    assert list(limits) == ARM_DOFS
    traj = load_trajectory(example(name), list(limits))
    assert traj.duration == pytest.approx(10.0)
    check_limits(traj, limits)
    start, end = traj.sample(0.0), traj.sample(traj.duration)
    np.testing.assert_allclose(start[0], [0, 0, 0.3, 0], atol=1e-12)  # the arm's initial pose
    np.testing.assert_allclose(end[0], [0, 0, 0.3, 0], atol=1e-12)
    np.testing.assert_allclose(start[1], 0.0, atol=1e-12)
    speeds = np.array([np.abs(traj.sample(t)[1]) for t in np.arange(0.0, 10.0, 0.05)])
    assert speeds.max() < 1.0  # slow: well inside the 4.8 rad/s limits


def test_limit_check_names_joint_and_time(tmp_path: Path) -> None:
    limits = model_limits(load_skel(example("arm.skel")))
    path = _write(tmp_path, "t.yaml", "joint_names: [elbow, wrist]\npoints:\n"
                  "- {positions: [0.0, 0.0], time_from_start: 0}\n"
                  "- {positions: [0.0, 3.8], time_from_start: 2}\n")
    traj = load_trajectory(path, list(limits))
    with pytest.raises(TrajectoryLimitError) as info:
        check_limits(traj, limits)
    # linear: wrist = 1.9 t, leaves [-1.9, 1.9] just after t = 1
    assert info.value.joint == "wrist"
    assert info.value.time == pytest.approx(1.005, abs=1e-9)
    assert (f"{path}: DOF 'wrist' at t = 1.005 s: position {info.value.value!r} is outside its"
            f" limits [-1.9, 1.9] (by 0.0095)") in str(info.value)
    assert info.value.value == pytest.approx(1.9095, abs=1e-12)
    fast = _write(tmp_path, "f.yaml", "joint_names: [wrist]\npoints:\n"
                  "- {positions: [0.0], time_from_start: 0}\n"
                  "- {positions: [1.0], time_from_start: 0.1}\n")
    with pytest.raises(TrajectoryLimitError, match="velocity 10 is outside its limits"):
        check_limits(load_trajectory(fast, list(limits)), limits)
    with pytest.raises(TrajectoryError, match="unknown DOF"):
        check_limits(load_trajectory(fast, None), {"elbow": limits["elbow"]})


def test_yaml_takes_the_longest_ros_duration() -> None:
    text = ("joint_names: [a]\npoints:\n- positions: [1]\n"
            "  time_from_start: {sec: 2147483647, nanosec: 999999999}\n")
    traj = parse_trajectory_yaml(text, "long.yaml")
    assert traj.duration == pytest.approx(2**31, rel=1e-15)
    np.testing.assert_allclose(traj.sample(traj.duration)[0], [1.0])


# ---------------------------------------------------------------- found by the CLI audit

_ONE = "joint_names: [a]\npoints:\n"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x83\x07]\xa0s\xdd", "not a text document (bad UTF-8 at byte 0)"),
        # UTF-16 XML: not a CASPR file (not UTF-8 text), not YAML either
        ("<traj>\u00e9".encode("utf-16"), "not a text document (bad UTF-8 at byte 0)"),
        (b"joint_names: [a]\n# \xe9\xff\n", "not a text document (bad UTF-8 at byte 19)"),
    ],
)
def test_bytes_that_are_not_utf8_text(data: bytes, message: str) -> None:
    """The model readers' one-line words, not a two-line PyYAML reader error."""
    with pytest.raises(TrajectoryFileError) as info:
        parse_trajectory_yaml(data, "bad.yaml")
    assert str(info.value) == f"bad.yaml: {message}"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (_ONE + "\t- positions: [0]\n", 3,
         "not valid YAML: found character that cannot start any token (column 1)"),
        (_ONE + "- positions: [0.\x07]\n", 3,
         ("not valid YAML: unacceptable character #x0007 (control characters are not"
          " allowed) at column 17")),
        (_ONE + "- {positions: [0], time_from_start: 1\n\n", 5,
         ("not valid YAML: did not find expected ',' or '}' (column 1); while parsing a flow"
          " mapping that starts at line 3")),
    ],
)
def test_yaml_syntax_errors_are_one_line_with_line_and_column(text: str, line: int,
                                                               message: str) -> None:
    with pytest.raises(TrajectoryFileError) as info:
        parse_trajectory_yaml(text.encode(), "bad.yaml")
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"bad.yaml:{line}: {message}"), str(info.value)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (_ONE + '- positions: ["0.5"]\n  time_from_start: 1\n', 3,
         "'0.5' is quoted: a string, not a number"),
        (_ONE + "- positions: [0.5]\n  time_from_start: '1'\n", 4,
         "'1' is quoted: a string, not a number"),
        (_ONE + "- positions: [!!str 0.5]\n  time_from_start: 1\n", 3,
         "'0.5' is tagged !!str, not a number"),
        (_ONE + '- positions: [0]\n  time_from_start: {sec: "1"}\n', 4,
         "'1' is quoted: a string, not a number"),
        (_ONE + "- positions: [0.0]\n  time_from_start: !!python/object:os.system 1\n", 4,
         "unknown tag '!!python/object:os.system'"),
        ("header: !custom {}\n" + _ONE + "- positions: [0]\n  time_from_start: 1\n", 1,
         "unknown tag '!custom'"),
    ],
)
def test_only_plain_yaml_numbers_are_numbers(text: str, line: int, message: str) -> None:
    with pytest.raises(TrajectoryFileError) as info:
        parse_trajectory_yaml(text, "bad.yaml")
    assert message in str(info.value)
    assert info.value.location is not None
    assert info.value.location.line == line, str(info.value)


def test_yaml_numbers_in_every_spelling() -> None:
    """``1e1`` (a string to PyYAML's YAML 1.1 resolver), ``!!float 1``, ``!!int``: numbers."""
    traj = parse_trajectory_yaml(_ONE + "- positions: [!!float 1]\n"
                                 "  time_from_start: {sec: !!int 1, nanosec: 5}\n"
                                 "- positions: [1e-1]\n  time_from_start: 1e1\n", "ok.yaml")
    assert traj.duration == 10.0
    np.testing.assert_allclose(traj.sample(10.0)[0], [0.1])


def test_points_less_than_a_nanosecond_apart_are_refused() -> None:
    """A ``builtin_interfaces/Duration`` counts nanoseconds: they would be sent at one time."""
    text = (_ONE + "- positions: [0.0]\n  time_from_start: 1.0000000001\n"
            "- positions: [0.0]\n  time_from_start: 1.0000000002\n")
    with pytest.raises(TrajectoryFileError) as info:
        parse_trajectory_yaml(text, "subns.yaml")
    assert str(info.value) == (
        "subns.yaml:5: /points[1]: time_from_start 1.0000000002 s is not after the previous"
        " point's (1.0000000001 s) by at least 1 ns (a ROS Duration counts whole nanoseconds)")
    one_ns = text.replace("1.0000000002", "1.000000002")
    assert parse_trajectory_yaml(one_ns, "ok.yaml").duration == pytest.approx(1.000000002)
