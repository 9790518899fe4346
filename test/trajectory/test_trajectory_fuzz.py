"""Property: mutating a valid trajectory file never lets anything but TrajectoryError escape."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if TYPE_CHECKING:
    import numpy as np

from skel_ros.resources import example
from skel_ros.trajectory import TrajectoryError, parse_caspr, resolve_columns
from skel_ros.trajectory.yaml_file import parse_trajectory_yaml

ARM_DOFS = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
PARABOLIC = """<?xml version="1.0" encoding="utf-8"?>
<trajectories>
  <joint_trajectories>
    <parabolic_blend_trajectory id="p" time_definition="relative" time_step="0.05"
                                blend_time_default="0.4">
      <points>
        <point><q>0.0 0.1 0.3 0.0</q></point>
        <point time="2" blend_time="0.3"><q>0.5 0.2 0.6 -0.1</q></point>
        <point time="1.5"><q>0.0 0.0 0.3 0.0</q></point>
      </points>
    </parabolic_blend_trajectory>
    <cubic_spline_average_velocity_trajectory id="a" time_definition="absolute"
                                              time_step="0.05">
      <points>
        <point><q>0 0 0.3 0</q><q_dot>0 0 0 0</q_dot></point>
        <point time="1"><q>0.2 0.1 0.4 0</q></point>
        <point time="2"><q>0 0 0.3 0</q><q_dot>0 0 0 0</q_dot></point>
      </points>
    </cubic_spline_average_velocity_trajectory>
  </joint_trajectories>
</trajectories>
"""
SEEDS_XML = [example("arm_trajectory.xml").read_text(encoding="utf-8"), PARABOLIC]
SEED_YAML = example("arm_trajectory.yaml").read_text(encoding="utf-8")
TOKENS = ["<", ">", "/>", "</point>", "<point>", "<q>", "</q>", '"', "=", ' time="-1"',
          "1e308", "-0", "nan", "inf", "0", "1", "0.0000001", "99999999", ",", "&amp;", "&x;",
          "\x00", "\u00e9", "<!--", "-->", "<![CDATA[", "]]>", "\n", "  ", "q_dot", "{", "}",
          "[", "]", ":", "- ", "sec", "nanosec", "~", "!!python/object:int", "*a", "&a ",
          "%", "\t", "\ufeff", "\udcff"]


NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
VALUES = ["-1", "0", "1e308", "1e-9", "nan", "", "2", "0.01", "1e6", "x", "3 4", "0.4 0.1"]


def _mutations() -> st.SearchStrategy[list[tuple[int, int, int, str]]]:
    kinds = st.sampled_from([0, 1, 2, 3, 4, 5, 5, 6, 7, 7])
    op = st.tuples(kinds, st.floats(0, 1), st.integers(0, 40),
                   st.one_of(st.sampled_from(TOKENS), st.sampled_from(VALUES), st.text(max_size=8)))
    return st.lists(op.map(lambda t: (t[0], int(t[1] * 10**6), t[2], t[3])), min_size=1,
                    max_size=4)


def _mutate(text: str, ops: list[tuple[int, int, int, str]]) -> str:
    for kind, where, length, token in ops:
        i = where % (len(text) + 1)
        if kind == 0:  # delete
            text = text[:i] + text[i + length:]
        elif kind == 1:  # insert
            text = text[:i] + token + text[i:]
        elif kind == 2:  # replace
            text = text[:i] + token + text[i + max(1, length % 6):]
        elif kind == 3:  # duplicate a slice
            text = text[:i] + text[i:i + length] + text[i:]
        elif kind in (4, 5):  # well-formed: replace one number (most mutations keep the XML)
            numbers = list(NUMBER.finditer(text))
            if numbers:
                m = numbers[where % len(numbers)]
                text = text[:m.start()] + token + text[m.end():]
        else:  # well-formed: drop or repeat one line
            lines = text.splitlines(keepends=True)
            k = where % len(lines)
            lines[k:k + 1] = [] if kind == 6 else [lines[k], lines[k]]
            text = "".join(lines)
    return text


def _located(exc: TrajectoryError) -> None:
    if exc.location is not None and not exc.location.file.startswith("fuzz."):
        raise AssertionError(f"error names the wrong file: {exc}")


def _use(trajectory_sample: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    assert all(a.ndim == 1 for a in trajectory_sample)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS_XML), ops=_mutations(),
       as_bytes=st.booleans())
def test_mutated_caspr_raises_only_trajectory_errors(seed: str, ops: list[tuple[int, int, int,
                                                                                 str]],
                                                     as_bytes: bool) -> None:
    text = _mutate(seed, ops)
    data: str | bytes = text.encode("utf-8", "surrogateescape") if as_bytes else text
    try:
        for traj in parse_caspr(data, "fuzz.xml"):
            columns = resolve_columns(traj.num_q, ARM_DOFS, None, traj.location)
            points = traj.to_point_trajectory(columns)
            _use(points.sample(points.duration / 2))
    except TrajectoryError as exc:
        _located(exc)


@settings(max_examples=300, deadline=None)
@given(ops=_mutations(), as_bytes=st.booleans())
def test_mutated_yaml_raises_only_trajectory_errors(ops: list[tuple[int, int, int, str]],
                                                    as_bytes: bool) -> None:
    text = _mutate(SEED_YAML, ops)
    data: str | bytes = text.encode("utf-8", "surrogateescape") if as_bytes else text
    try:
        traj = parse_trajectory_yaml(data, "fuzz.yaml")
        _use(traj.sample(traj.duration / 2))
    except TrajectoryError as exc:
        _located(exc)
