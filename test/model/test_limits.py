"""Joint limits: model limits, tighten-only overrides, command checks and rate limiting."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np
import pytest
from corpus_data import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skel_ros.model import load_skel
from skel_ros.model.limits import (
    Bound,
    CheckResult,
    Clamp,
    Command,
    CommandKind,
    JointLimits,
    LimitError,
    LimitKind,
    LimitOverrides,
    LimitSet,
    RateLimiter,
    load_limit_overrides,
    parse_limit_overrides,
)

if TYPE_CHECKING:
    from pathlib import Path

JOINT_LIMIT_TEST = CORPUS / "data" / "skel" / "test" / "joint_limit_test.skel"
FULLBODY1 = CORPUS / "data" / "skel" / "fullbody1.skel"

needs_file = pytest.mark.skipif(
    not (JOINT_LIMIT_TEST.is_file() and FULLBODY1.is_file()),
    reason=f"SKEL corpus not found at {CORPUS} (set SKEL_CORPUS to its path)",
)

INF = math.inf


def _skel(joints_xml: str) -> str:
    """A skeleton of three bodies: a free root, then the joints given (parents a, b)."""
    return f"""<skel version="1.0"><world name="w"><skeleton name="s">
<body name="a"/>
<body name="b"/>
<body name="c"/>
<joint type="free" name="root"><parent>world</parent><child>a</child></joint>
{joints_xml}
</skeleton></world></skel>"""


ARM = _skel(
    """<joint type="revolute" name="joint 1"><parent>a</parent><child>b</child>
<axis><xyz>0 0 1</xyz></axis>
<dof><position lower="-1.5" upper="1.5"/><velocity lower="-2" upper="3"/>
<acceleration lower="-5" upper="4"/><force lower="-1.5" upper="2.5"/></dof>
</joint>
<joint type="universal" name="u"><parent>b</parent><child>c</child>
<axis><xyz>1 0 0</xyz><limit><lower>-0.5</lower><upper>0.7</upper></limit></axis>
<axis2><xyz>0 1 0</xyz></axis2>
<dof local_index="1"><velocity lower="-1" upper="1"/><acceleration lower="-10" upper="10"/></dof>
</joint>"""
)


@pytest.fixture(scope="module")
def arm() -> LimitSet:
    return LimitSet.from_skeleton(load_skel(ARM).skeletons[0])


# --------------------------------------------------------------------------- from the model


@needs_file
def test_joint_limit_test_corpus_file() -> None:
    skel = load_skel(JOINT_LIMIT_TEST).skeletons[0]
    limits = LimitSet.from_skeleton(skel)
    assert list(limits) == ["joint0", "joint1"] == [d.name for d in skel.dofs]
    assert limits["joint1"].bounds(LimitKind.POSITION) == (-1.57, 1.57)
    assert limits["joint0"] == JointLimits("joint0")  # nothing set: all +-inf
    np.testing.assert_array_equal(limits.lower(LimitKind.POSITION), [-INF, -1.57])
    np.testing.assert_array_equal(limits.upper(LimitKind.POSITION), [INF, 1.57])
    for kind in (LimitKind.VELOCITY, LimitKind.ACCELERATION, LimitKind.EFFORT):
        np.testing.assert_array_equal(limits.lower(kind), [-INF, -INF])
        np.testing.assert_array_equal(limits.upper(kind), [INF, INF])
    assert limits.sources == (str(JOINT_LIMIT_TEST),)


@needs_file
def test_fullbody1_has_no_limits_and_finite_overrides_tighten() -> None:
    skel = load_skel(FULLBODY1).skeleton("fullbody1")
    limits = LimitSet.from_skeleton(skel)
    assert len(limits) == skel.num_dofs == 37
    assert limits.names == tuple(d.name for d in skel.dofs)
    for kind in LimitKind:
        assert np.all(limits.lower(kind) == -INF)
        assert np.all(limits.upper(kind) == INF)
    result = limits.check(CommandKind.POSITION, ["j_shin_left", "j_pelvis_pos_y"], [100.0, -7.0])
    assert result.ok
    assert not result.clamped
    # Any finite bound where the model is unlimited is a tightening.
    tight = limits.tightened(
        {"joints": {"j_shin_left": {"position": {"lower": -2.5, "upper": 0.0}, "velocity": 4}}},
        source="fullbody.yaml",
    )
    assert tight["j_shin_left"].bounds(LimitKind.POSITION) == (-2.5, 0.0)
    assert tight["j_shin_left"].bounds(LimitKind.VELOCITY) == (-4.0, 4.0)
    assert tight.index("j_shin_left") == limits.index("j_shin_left") == 9
    assert tight.upper(LimitKind.POSITION)[9] == 0.0


def test_limits_read_from_dof_elements(arm: LimitSet) -> None:
    assert arm.names[:6] == (
        "root_rot_x", "root_rot_y", "root_rot_z", "root_pos_x", "root_pos_y", "root_pos_z",
    )
    assert arm.names[6:] == ("joint 1", "u_1", "u_2")
    j1 = arm["joint 1"]
    assert j1 == JointLimits("joint 1", -1.5, 1.5, -2.0, 3.0, -5.0, 4.0, -1.5, 2.5)
    assert j1.max_velocity == 3.0
    assert j1.bounds(CommandKind.EFFORT) == (-1.5, 2.5)
    # <axis><limit> gives the first DOF's position limits; <dof local_index="1"> the second.
    assert arm["u_1"].bounds(LimitKind.POSITION) == (-0.5, 0.7)
    assert arm["u_1"].bounds(LimitKind.VELOCITY) == (-INF, INF)
    assert arm["u_2"].bounds(LimitKind.VELOCITY) == (-1.0, 1.0)
    assert arm["u_2"].bounds(LimitKind.ACCELERATION) == (-10.0, 10.0)
    np.testing.assert_array_equal(arm.lower(LimitKind.VELOCITY)[6:], [-2.0, -INF, -1.0])
    np.testing.assert_array_equal(arm.upper(CommandKind.EFFORT)[6:], [2.5, INF, INF])


def test_model_limits_lower_above_upper_are_an_error_at_the_joint() -> None:
    xml = _skel(
        '<joint type="revolute" name="bad"><parent>a</parent><child>b</child>\n'
        '<axis><xyz>1 0 0</xyz></axis><dof><velocity lower="2" upper="1"/></dof></joint>'
    )
    world = load_skel(xml, name="bad.skel")
    assert any("velocity lower limit" in str(w) for w in world.warnings)
    with pytest.raises(LimitError, match=r"'bad'.*velocity lower limit 2.0 is above") as info:
        LimitSet.from_skeleton(world.skeletons[0])
    expected_line = xml.splitlines().index(
        '<joint type="revolute" name="bad"><parent>a</parent><child>b</child>'
    ) + 1
    assert (info.value.source, info.value.line) == ("bad.skel", expected_line)


def test_limit_set_is_an_immutable_ordered_mapping(arm: LimitSet) -> None:
    assert list(arm.keys()) == list(arm.names)
    assert "joint 1" in arm
    assert "nope" not in arm
    with pytest.raises(KeyError):
        arm["nope"]
    with pytest.raises(AttributeError):
        arm._joints = ()  # type: ignore[misc]
    with pytest.raises(AttributeError):
        arm["joint 1"].velocity_upper = 10.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        arm.upper(LimitKind.POSITION)[6] = 10.0
    assert arm.upper(LimitKind.POSITION)[6] == 1.5
    with pytest.raises(TypeError):
        arm.lower("position")  # type: ignore[arg-type]


def test_limit_set_rejects_duplicates_and_bad_intervals() -> None:
    with pytest.raises(LimitError, match="more than once"):
        LimitSet([JointLimits("a"), JointLimits("a")])
    with pytest.raises(LimitError, match="NaN"):
        LimitSet([JointLimits("a", position_lower=math.nan)])
    with pytest.raises(LimitError, match=r"lower limit is \+inf"):
        LimitSet([JointLimits("a", effort_lower=INF)])
    with pytest.raises(LimitError, match="above upper"):
        LimitSet([JointLimits("a", acceleration_lower=1.0, acceleration_upper=0.0)])


# --------------------------------------------------------------------------- overrides

OVERRIDES = """\
# tighter limits for the bench setup
joints:
  "joint 1":
    position: {lower: -1.0, upper: 1.0}
    velocity: 1.5
    acceleration:
      lower: -2.0
      upper: 3.0
    effort: 1.0
  u_1:
    position: {upper: 0.5}
  root_pos_z:
    position: {lower: 0.0, upper: 2.0}
"""


def test_tightening_accepted(arm: LimitSet, tmp_path: Path) -> None:
    path = tmp_path / "bench_limits.yaml"
    path.write_text(OVERRIDES)
    overrides = load_limit_overrides(path)
    assert overrides.source == str(path)
    assert [(j.name, j.line) for j in overrides.joints] == [
        ("joint 1", 3), ("u_1", 10), ("root_pos_z", 12),
    ]
    tight = arm.tightened(overrides)
    assert tight["joint 1"] == JointLimits("joint 1", -1.0, 1.0, -1.5, 1.5, -2.0, 3.0, -1.0, 1.0)
    assert tight["u_1"].bounds(LimitKind.POSITION) == (-0.5, 0.5)  # lower kept
    assert tight["root_pos_z"].bounds(LimitKind.POSITION) == (0.0, 2.0)
    assert tight["u_2"] == arm["u_2"]
    assert tight.sources == (*arm.sources, str(path))
    assert tight.names == arm.names
    # The original set is untouched.
    assert arm["joint 1"].position_upper == 1.5
    assert arm.upper(LimitKind.POSITION)[6] == 1.5
    assert tight.upper(LimitKind.POSITION)[6] == 1.0


def test_equal_bounds_and_infinite_scalars_are_not_widening(arm: LimitSet) -> None:
    same = arm.tightened(
        parse_limit_overrides(
            "joints:\n  joint 1: {position: {lower: -1.5, upper: 1.5}}\n  u_1: {velocity: .inf}\n"
        )
    )
    assert dict(same) == dict(arm)


@pytest.mark.parametrize(
    ("text", "line", "pattern"),
    [
        # block style: the line of the offending bound, not of the joint
        ("joints:\n  joint 1:\n    position:\n      lower: -1.0\n      upper: 2.0\n", 5,
         r"'joint 1': position upper 2 is wider than the current limit 1.5"),
        ("joints:\n  u_1:\n    position: {lower: -0.6}\n", 3,
         r"'u_1': position lower -0.6 is wider than the current limit -0.5"),
        # a symmetric scalar is both bounds: -2.5 is wider than the model's -2
        ("joints:\n  u_2: {}\n  joint 1:\n    velocity: 2.5\n", 4,
         r"'joint 1': velocity lower -2.5 is wider than the current limit -2"),
        ("joints:\n  joint 1:\n    effort: {lower: -1.0, upper: 3.0}\n", 3,
         r"'joint 1': effort upper 3 is wider than the current limit 2.5"),
        ("joints:\n\n  u_2:\n    acceleration: {upper: 10.5}\n", 4,
         r"'u_2': acceleration upper 10.5 is wider"),
    ],
)
def test_widening_rejected_with_file_and_line(
    arm: LimitSet, tmp_path: Path, text: str, line: int, pattern: str
) -> None:
    path = tmp_path / "wide.yaml"
    path.write_text(text)
    with pytest.raises(LimitError, match=pattern) as info:
        arm.tightened(load_limit_overrides(path))
    err = info.value
    assert (err.source, err.line) == (str(path), line)
    assert str(err).startswith(f"{path}:{line}: ")
    assert "only tighten" in err.message


def test_second_override_cannot_undo_the_first(arm: LimitSet) -> None:
    tight = arm.tightened(parse_limit_overrides("joints: {joint 1: {velocity: 1.0}}", "a.yaml"))
    again = parse_limit_overrides("joints:\n  joint 1: {velocity: 1.5}\n", "b.yaml")
    with pytest.raises(LimitError, match=r"^b\.yaml:2: .*wider than the current limit -1"):
        tight.tightened(again)
    assert arm.tightened(again)["joint 1"].velocity_upper == 1.5


@pytest.mark.parametrize(
    ("text", "line", "pattern"),
    [
        ("joints:\n  joint 1: {}\n  joint 2:\n    velocity: 1\n", 3,
         r"unknown DOF 'joint 2'; did you mean 'joint 1'"),
        ("joints:\n  joint 1:\n    velocity: 1\n    force: 1\n", 4,
         r"unknown key 'force'.*called 'effort'"),
        ("joints:\n  joint 1:\n    position: {lower: -1, uper: 1}\n", 3,
         r"unknown key 'uper' \(expected lower, upper\)"),
        ("joints:\n  joint 1:\n    position:\n      lower: 0.5\n      upper: 0.2\n", 5,
         r"position lower limit 0.5 is above upper limit 0.2"),
        # each bound tightens, but together with the model's upper the range is empty
        ("joints:\n  joint 1:\n    position:\n      lower: 1.6\n", 4,
         r"lower limit 1.6 is above upper limit 1.5 after this override"),
        ("joints:\n  joint 1:\n    velocity: .nan\n", 3, r"velocity is NaN"),
        ("joints:\n  joint 1:\n    effort: {upper: .NaN}\n", 3, r"effort upper is NaN"),
        ("joints:\n  joint 1:\n    velocity: fast\n", 3, r"velocity must be a number, got 'fast'"),
        ("joints:\n  joint 1:\n    velocity: '1.0'\n", 3, r"must be a number, got '1.0'"),
        ("joints:\n  joint 1:\n    velocity: true\n", 3, r"must be a number, got True"),
        ("joints:\n  joint 1:\n    acceleration: [1, 2]\n", 3, r"must be a number"),
        ("joints:\n  joint 1:\n    velocity: -1\n", 3, r"symmetric limit must be >= 0"),
        ("joints:\n  joint 1:\n    position: 1.0\n", 3, r"position must be a mapping"),
        ("joints:\n  joint 1:\n    position: {lower: .inf}\n", 3, r"lower limit is \+inf"),
        ("joints:\n  joint 1: 3\n", 2, r"limits of DOF 'joint 1' must be a mapping"),
        ("joints:\n  joint 1: {velocity: 1}\n  joint 1: {velocity: 2}\n", 3,
         r"duplicate key 'joint 1' \(first on line 2\)"),
        ("joints:\n  7: {velocity: 1}\n", 2, r"DOF name 7 is not a string"),
        ("joint:\n  joint 1: {velocity: 1}\n", 1, r"unknown key 'joint' at top level"),
        ("- joint 1\n", 1, r"the document must be a mapping"),
        ("joints: [joint 1]\n", 1, r"'joints' must be a mapping"),
        ("# nothing here\n", 1, r"empty document"),
        ("joints:\n  joint 1: {velocity: 1\n", 3, r"invalid YAML"),
    ],
)
def test_malformed_overrides_rejected_with_line(
    arm: LimitSet, text: str, line: int, pattern: str
) -> None:
    with pytest.raises(LimitError, match=pattern) as info:
        arm.tightened(parse_limit_overrides(text, "over.yaml"))
    assert (info.value.source, info.value.line) == ("over.yaml", line)


def test_missing_override_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with pytest.raises(LimitError, match="cannot read file") as info:
        load_limit_overrides(path)
    assert info.value.source == str(path)


def test_tightened_accepts_a_plain_mapping(arm: LimitSet) -> None:
    tight = arm.tightened({"joints": {"u_2": {"velocity": {"lower": -0.5}}}}, source="params")
    assert tight["u_2"].bounds(LimitKind.VELOCITY) == (-0.5, 1.0)
    assert tight.sources[-1] == "params"
    with pytest.raises(LimitError, match=r"^params: unknown DOF 'u_3'") as info:
        arm.tightened({"joints": {"u_3": {}}}, source="params")
    assert info.value.line == 0  # a plain mapping carries no line numbers
    parsed = LimitOverrides.from_mapping({"joints": {"u_2": {"effort": 2}}}, "x")
    assert [(b.kind, b.bound, b.value) for b in parsed.joints[0].bounds] == [
        (LimitKind.EFFORT, Bound.LOWER, -2.0), (LimitKind.EFFORT, Bound.UPPER, 2.0),
    ]


# --------------------------------------------------------------------------- command check


def test_command_alias() -> None:
    assert Command is CommandKind
    assert CommandKind.EFFORT.limit_kind is LimitKind.EFFORT


def test_clamping_reported_in_command_order(arm: LimitSet) -> None:
    names = ["u_1", "joint 1", "root_pos_x"]
    values = np.array([0.9, -1.0, 1e6])
    before = values.copy()
    result = arm.check(CommandKind.POSITION, names, values)
    assert isinstance(result, CheckResult)
    assert result.ok
    assert result.reason == ""
    assert result.names == tuple(names)
    np.testing.assert_array_equal(result.values, [0.7, -1.0, 1e6])
    np.testing.assert_array_equal(result.requested, before)
    np.testing.assert_array_equal(result.indices, [7, 6, 3])
    assert result.clamped == (Clamp("u_1", 0.9, 0.7),)
    assert "'u_1' 0.9 -> 0.7" in result.message
    np.testing.assert_array_equal(values, before)  # input not modified
    assert not result.values.flags.writeable


def test_each_kind_uses_its_own_limits(arm: LimitSet) -> None:
    vel = arm.check(CommandKind.VELOCITY, ["joint 1", "u_2"], [-10.0, 0.5])
    np.testing.assert_array_equal(vel.values, [-2.0, 0.5])
    assert [c.name for c in vel.clamped] == ["joint 1"]
    eff = arm.check(CommandKind.EFFORT, ["joint 1"], [10.0])
    np.testing.assert_array_equal(eff.values, [2.5])
    assert eff.clamped == (Clamp("joint 1", 10.0, 2.5),)
    pos = arm.check(CommandKind.POSITION, ["joint 1"], [2.0])  # a list is fine too
    np.testing.assert_array_equal(pos.values, [1.5])


def test_nothing_clamped_gives_an_empty_message(arm: LimitSet) -> None:
    result = arm.check(CommandKind.VELOCITY, ("joint 1",), (2.9,))
    assert result.ok
    assert result.clamped == ()
    assert result.message == ""
    empty = arm.check(CommandKind.EFFORT, [], [])
    assert empty.ok
    assert empty.values.shape == (0,)


@pytest.mark.parametrize("bad", [math.nan, INF, -INF])
def test_non_finite_values_reject_the_whole_command(arm: LimitSet, bad: float) -> None:
    result = arm.check(CommandKind.POSITION, ["joint 1", "u_1"], [0.1, bad])
    assert not result.ok
    assert "'u_1'" in result.reason
    assert "non-finite" in result.reason
    assert result.values.size == 0
    assert result.message.startswith("position command rejected")


@pytest.mark.parametrize(
    ("names", "values", "pattern"),
    [
        (["joint 1", "elbow"], [0.0, 0.0], r"unknown joint 'elbow'"),
        (["joint 1", "u_1", "joint 1"], [0.0, 0.1, 0.2], r"'joint 1' appears more than once"),
        (["joint 1", "u_1"], [0.0], r"2 names but 1 values"),
        (["joint 1"], [0.0, 1.0], r"1 names but 2 values"),
        ("joint 1", [0.0], r"not one string"),
        (["joint 1", 3], [0.0, 1.0], r"names must be strings"),
        (["joint 1"], ["0.5"], r"flat list of numbers"),
        (["joint 1"], [None], r"flat list of numbers"),
        (["joint 1"], [[0.5]], r"flat list of numbers"),
        (["joint 1"], 0.5, r"flat list of numbers"),
    ],
)
def test_malformed_commands_rejected(
    arm: LimitSet, names: object, values: object, pattern: str
) -> None:
    result = arm.check(CommandKind.POSITION, names, values)  # type: ignore[arg-type]
    assert not result.ok
    assert result.clamped == ()
    assert result.values.size == 0
    assert re.search(pattern, result.reason), result.reason


def test_check_needs_a_command_kind(arm: LimitSet) -> None:
    with pytest.raises(TypeError):
        arm.check(LimitKind.ACCELERATION, ["joint 1"], [0.0])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- rate limiter


def _limits_from(rows: list[tuple[float, float, float, float, float, float]]) -> LimitSet:
    return LimitSet([JointLimits(f"j{i}", *row) for i, row in enumerate(rows)])


finite_or_inf = st.one_of(st.floats(0.2, 20.0), st.just(INF))


@st.composite
def joint_rows(draw: st.DrawFn, *, finite_position: bool | None = None) -> tuple[float, ...]:
    has_pos = draw(st.booleans()) if finite_position is None else finite_position
    if has_pos:
        lo = draw(st.floats(-3.0, 1.0))
        hi = lo + draw(st.floats(0.0, 3.0))
    else:
        lo, hi = -INF, INF
    vl = -draw(st.one_of(st.floats(0.0, 5.0), st.just(INF)))
    vu = draw(st.one_of(st.floats(0.0, 5.0), st.just(INF)))
    al = -draw(finite_or_inf)
    au = draw(finite_or_inf)
    return (lo, hi, vl, vu, al, au)


def _inside(draw: st.DrawFn, row: tuple[float, ...]) -> float:
    lo, hi = row[0], row[1]
    if math.isinf(lo):
        return draw(st.floats(-2.0, 2.0))
    return lo + draw(st.floats(0.0, 1.0)) * (hi - lo)


def _assert_within(values: np.ndarray, lower: np.ndarray, upper: np.ndarray, tol: float) -> None:
    scale = 1.0 + np.where(np.isfinite(lower), np.abs(lower), 0) + np.where(
        np.isfinite(upper), np.abs(upper), 0
    )
    assert np.all(values >= lower - tol * scale), (values, lower)
    assert np.all(values <= upper + tol * scale), (values, upper)


def _run(
    limiter: RateLimiter, start: np.ndarray, targets: list[np.ndarray], dts: list[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and accelerations of the output stream, from rest at ``start``."""
    limiter.reset(start)
    q = [start.copy()]
    for target, dt in zip(targets, dts, strict=True):
        q.append(limiter.step(target, dt))
    qs = np.array(q)
    dt_arr = np.array(dts)[:, None]
    v = np.diff(qs, axis=0) / dt_arr
    v_prev = np.vstack([np.zeros_like(v[:1]), v[:-1]])  # at rest before the first step
    a = (v - v_prev) / dt_arr
    return qs, v, a


@st.composite
def scenarios(draw: st.DrawFn, *, constant_dt: bool, finite_position: bool | None = None):
    n = draw(st.integers(1, 4))
    rows = [draw(joint_rows(finite_position=finite_position)) for _ in range(n)]
    start = np.array([_inside(draw, r) for r in rows])
    steps = draw(st.integers(20, 150))
    hold = draw(st.integers(1, 40))
    # Targets anywhere (also outside the limits), each held for a while.
    targets = []
    current = np.array(draw(st.lists(st.floats(-6, 6), min_size=n, max_size=n)))
    for k in range(steps):
        if k % hold == 0:
            current = np.array(draw(st.lists(st.floats(-6, 6), min_size=n, max_size=n)))
        targets.append(current)
    if constant_dt:
        dts = [draw(st.floats(1e-4, 0.02))] * steps
    else:
        dts = draw(st.lists(st.floats(1e-4, 0.02), min_size=steps, max_size=steps))
    return rows, start, targets, dts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(constant_dt=True))
def test_rate_limiter_respects_all_bounds_at_constant_dt(scenario) -> None:
    rows, start, targets, dts = scenario
    limits = _limits_from(rows)
    qs, v, a = _run(RateLimiter(limits), start, targets, dts)
    tol = 1e-9
    _assert_within(qs, limits.lower(LimitKind.POSITION), limits.upper(LimitKind.POSITION), tol)
    _assert_within(v, limits.lower(LimitKind.VELOCITY), limits.upper(LimitKind.VELOCITY), 1e-8)
    # The last braking step onto a position limit takes the braking distance from an error
    # of a few 1e-9 rad computed as a difference of positions near 3 rad, so its acceleration
    # can exceed the limit by rounding (hypothesis found 2.5e-5 relative at dt = 1e-4, a
    # position limit at -3, a_upper = 0.875).
    _assert_within(
        a, limits.lower(LimitKind.ACCELERATION), limits.upper(LimitKind.ACCELERATION), 1e-4
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(constant_dt=False, finite_position=False))
def test_rate_limiter_bounds_with_varying_dt_and_no_position_limits(scenario) -> None:
    rows, start, targets, dts = scenario
    limits = _limits_from(rows)
    _, v, a = _run(RateLimiter(limits), start, targets, dts)
    _assert_within(v, limits.lower(LimitKind.VELOCITY), limits.upper(LimitKind.VELOCITY), 1e-8)
    _assert_within(
        a, limits.lower(LimitKind.ACCELERATION), limits.upper(LimitKind.ACCELERATION), 1e-5
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(constant_dt=False, finite_position=True))
def test_rate_limiter_position_and_velocity_hold_with_varying_dt(scenario) -> None:
    # With a varying dt the acceleration limit may have to give way to the position
    # limits (documented); position and velocity limits always hold.
    rows, start, targets, dts = scenario
    limits = _limits_from(rows)
    qs, v, _ = _run(RateLimiter(limits), start, targets, dts)
    _assert_within(qs, limits.lower(LimitKind.POSITION), limits.upper(LimitKind.POSITION), 1e-9)
    _assert_within(v, limits.lower(LimitKind.VELOCITY), limits.upper(LimitKind.VELOCITY), 1e-8)


def _time_bound(distance: float, v_max: float, a_acc: float, a_dec: float) -> float:
    """An upper bound on the time to move ``distance`` from rest to rest."""

    def ramp(a: float) -> float:
        return 0.0 if math.isinf(a) else (v_max / a if math.isfinite(v_max) else INF)

    if math.isfinite(v_max):
        return distance / v_max + ramp(a_acc) + ramp(a_dec)
    return sum(math.sqrt(2 * distance / a) for a in (a_acc, a_dec) if math.isfinite(a))


HOLD_STEPS = 100  # steps checked after a converging limiter arrives


@settings(max_examples=200, deadline=None)
@given(
    row=joint_rows(finite_position=True),
    start_frac=st.floats(0.0, 1.0),
    goal_frac=st.floats(0.0, 1.0),
    dt=st.floats(1e-3, 0.02),
)
def test_rate_limiter_converges_to_a_reachable_target(row, start_frac, goal_frac, dt) -> None:
    lo, hi, vl, vu, al, au = row
    start = lo + start_frac * (hi - lo)
    goal = lo + goal_frac * (hi - lo)
    up = goal >= start
    v_max = vu if up else -vl
    if v_max < 0.05:  # cannot move (or hardly) that way: not reachable in reasonable time
        return
    a_acc, a_dec = (au, -al) if up else (-al, au)
    bound = _time_bound(abs(goal - start), v_max, a_acc, a_dec)
    max_steps = int(1.2 * bound / dt) + 10
    limiter = RateLimiter(_limits_from([row]), positions=[start])
    reached_at = None
    for k in range(max_steps + 20):
        q = limiter.step([goal], dt)
        if reached_at is None and abs(q[0] - goal) <= 1e-9:
            reached_at = k
        if reached_at is not None:
            assert abs(q[0] - goal) <= 1e-9  # and it stays there
            # For HOLD_STEPS after arrival, not to max_steps: the time bound is loose
            # (~3/4 of all steps came after arrival) and a setpoint at rest on its target
            # is an exact fixed point (next test); the final velocity check below shows
            # it came to rest within those steps.
            if k >= reached_at + HOLD_STEPS:
                break
    assert reached_at is not None, f"not at {goal} after {max_steps} steps: {limiter.position}"
    assert reached_at <= max_steps
    assert abs(limiter.velocity[0]) <= 1e-6


@settings(max_examples=200, deadline=None)
@given(row=joint_rows(), frac=st.floats(0.0, 1.0), dt=st.floats(1e-4, 0.02))
def test_a_setpoint_at_rest_on_its_target_is_a_fixed_point(row, frac, dt) -> None:
    """At rest on the target, a step returns exactly the same position and zero velocity:
    the simulation's position controllers skip the limiter while that holds."""
    lo, hi = row[0], row[1]
    goal = np.array([(lo + frac * (hi - lo)) if math.isfinite(lo) and math.isfinite(hi)
                     else 2.0 * frac - 1.0])
    limiter = RateLimiter(_limits_from([row]))
    q, v = limiter.advance(goal.copy(), np.zeros(1), goal.copy(), dt)
    assert q[0] == goal[0]
    assert v[0] == 0.0
    q2, v2 = limiter.limit(goal, [0.0], goal, dt)  # the checked entry: the same step
    assert (q2[0], v2[0]) == (q[0], v[0])


def test_rate_limiter_lands_without_overshoot() -> None:
    limits = _limits_from([(-INF, INF, -1.0, 1.0, -10.0, 10.0)])
    qs, v, a = _run(RateLimiter(limits), np.zeros(1), [np.ones(1)] * 1500, [1e-3] * 1500)
    assert qs.max() <= 1.0 + 1e-12
    assert qs[-1, 0] == pytest.approx(1.0, abs=1e-12)
    assert v.max() == pytest.approx(1.0)  # cruises at the velocity limit
    assert a.max() == pytest.approx(10.0)
    assert a.min() == pytest.approx(-10.0)
    # trapezoid: 0.1 s up, 0.9 s cruise, 0.1 s down
    arrival = int(np.argmax(qs[:, 0] >= 1.0 - 1e-12))
    assert 1095 <= arrival <= 1110


def test_rate_limiter_without_rate_limits_jumps_into_position_limits() -> None:
    limits = _limits_from([(-1.0, 1.0, -INF, INF, -INF, INF), (-INF, INF, -INF, INF, -INF, INF)])
    limiter = RateLimiter(limits, positions=[0.0, 0.0])
    np.testing.assert_allclose(limiter.step([5.0, -7.0], 1e-3), [1.0, -7.0])
    np.testing.assert_allclose(limiter.velocity, [1000.0, -7000.0])


def test_rate_limiter_reset_restarts_from_rest() -> None:
    limits = _limits_from([(-2.0, 2.0, -1.0, 1.0, -4.0, 4.0)] * 2)
    limiter = RateLimiter(limits, positions=[0.0, 0.0])
    for _ in range(300):
        limiter.step([2.0, -2.0], 1e-3)
    np.testing.assert_allclose(np.abs(limiter.velocity), [1.0, 1.0])
    limiter.reset([0.5, -0.25])
    np.testing.assert_array_equal(limiter.position, [0.5, -0.25])
    np.testing.assert_array_equal(limiter.velocity, [0.0, 0.0])
    q = limiter.step([2.0, -2.0], 1e-3)
    # From rest, one step can reach at most a dt (velocity) and so a dt**2 (position).
    np.testing.assert_allclose(q, [0.5 + 4.0e-6, -0.25 - 4.0e-6])


def test_reset_outside_position_limits_returns_at_the_allowed_rate() -> None:
    limits = _limits_from([(-1.0, 1.0, -0.5, 0.5, -2.0, 2.0)])
    limiter = RateLimiter(limits, positions=[1.3])
    qs = np.array([1.3] + [float(limiter.step([1.3], 1e-3)[0]) for _ in range(2000)])
    v = np.diff(qs) / 1e-3
    assert np.all(np.diff(qs) <= 1e-15)  # never further out
    assert v.min() >= -0.5 - 1e-9
    assert np.all(np.abs(np.diff(np.concatenate([[0.0], v]))) / 1e-3 <= 2.0 + 1e-6)
    assert qs[-1] == pytest.approx(1.0)


def test_stateless_limit_matches_step_and_leaves_state_alone() -> None:
    limits = _limits_from([(-1.0, 1.0, -1.0, 1.0, -5.0, 5.0)])
    limiter = RateLimiter(limits, positions=[0.0])
    q, v = limiter.limit([0.2], [0.5], [1.0], 0.01)
    np.testing.assert_allclose(q, [0.2 + 0.01 * 0.55])
    np.testing.assert_allclose(v, [0.55])
    np.testing.assert_array_equal(limiter.position, [0.0])
    np.testing.assert_array_equal(limiter.velocity, [0.0])


def test_rate_limiter_on_a_subset_of_a_skel_model(arm: LimitSet) -> None:
    limiter = RateLimiter(arm, names=["u_2", "joint 1"], positions=[0.0, 0.0])
    assert limiter.names == ("u_2", "joint 1")
    q = limiter.step([1.0, 1.0], 0.01)
    # u_2: accel 10 -> 0.1 rad/s after one step; joint 1: accel 4 -> 0.04 rad/s.
    np.testing.assert_allclose(q, [0.001, 0.0004])


@pytest.mark.parametrize("dt", [0.0, -1e-3, math.nan, INF, -INF])
def test_rate_limiter_rejects_bad_dt(dt: float) -> None:
    limiter = RateLimiter(_limits_from([(-1.0, 1.0, -1.0, 1.0, -5.0, 5.0)]), positions=[0.0])
    with pytest.raises(ValueError, match="dt"):
        limiter.step([0.5], dt)
    with pytest.raises(ValueError, match="dt"):
        limiter.limit([0.0], [0.0], [0.5], dt)
    np.testing.assert_array_equal(limiter.position, [0.0])


def test_rate_limiter_rejects_bad_vectors_and_use_before_reset() -> None:
    limits = _limits_from([(-1.0, 1.0, -1.0, 1.0, -5.0, 5.0)] * 2)
    limiter = RateLimiter(limits)
    with pytest.raises(RuntimeError, match="reset"):
        limiter.step([0.0, 0.0], 1e-3)
    with pytest.raises(ValueError, match="shape"):
        limiter.reset([0.0])
    with pytest.raises(ValueError, match="non-finite"):
        limiter.reset([0.0, math.nan])
    limiter.reset([0.0, 0.0])
    with pytest.raises(ValueError, match="non-finite"):
        limiter.step([INF, 0.0], 1e-3)
    with pytest.raises(ValueError, match="shape"):
        limiter.step([0.0, 0.0, 0.0], 1e-3)


def test_rate_limiter_refuses_limits_it_cannot_hold() -> None:
    with pytest.raises(LimitError, match="do not contain 0"):
        RateLimiter(_limits_from([(-1.0, 1.0, 0.5, 1.0, -5.0, 5.0)]))
    with pytest.raises(LimitError, match="acceleration limits"):
        RateLimiter(_limits_from([(-1.0, 1.0, -1.0, 1.0, 0.0, 5.0)]))
    with pytest.raises(LimitError, match="unknown DOF 'x'"):
        RateLimiter(_limits_from([(-1.0, 1.0, -1.0, 1.0, -5.0, 5.0)]), names=["x"])
