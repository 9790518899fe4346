"""What a user reads for each bad input to the limits: the file, the line and the words.

Every diagnostic of ``skel_ros/model/limits.py`` is pinned here as the user sees it: an
override file's mistakes as ``file:line: message`` (the line of the key at fault), a
limit set's or a rate limiter's refusal naming the file its limits came from, a refused
command's reason as its log line says it, and the rate limiter's argument errors naming
the argument. Beside test_limits.py (behaviour): a message that loses its file, its line
or the words that say what to fix is a defect too (issue 35, docs/testing.md).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from skel_ros.model import load_skel
from skel_ros.model.limits import (
    CommandKind,
    JointLimits,
    LimitError,
    LimitOverrides,
    LimitSet,
    RateLimiter,
    load_limit_overrides,
    parse_limit_overrides,
)

INF = math.inf
ARM_SKEL = Path(__file__).resolve().parents[2] / "examples" / "arm.skel"


def _arm() -> LimitSet:
    """Three DOFs from ``arm.skel``: the wrist follows the elbow (a mimic joint)."""
    common = {"position_lower": -1.0, "position_upper": 1.0, "velocity_lower": -2.0,
              "velocity_upper": 2.0, "acceleration_lower": -4.0, "acceleration_upper": 4.0}
    return LimitSet([JointLimits("shoulder", **common), JointLimits("elbow", **common),
                     JointLimits("wrist", leader="elbow", **common)], sources=("arm.skel",))


def _message(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(LimitError) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return str(info.value)


# ----------------------------------------------------------------------------- override files

BAD_FILES = [
    ("", "o.yaml:1: empty document; expected a mapping with a 'joints' key"),
    ("- 1\n", "o.yaml:1: the document must be a mapping, got [1]"),
    ("joints: {}\nlimits: 1\n",
     "o.yaml:2: unknown key 'limits' at top level (only 'joints' is allowed)"),
    ("# no joints\n{}\n", "o.yaml:2: missing 'joints' key"),
    ("# overrides\njoints: [shoulder]\n", "o.yaml:2: 'joints' must be a mapping, got ['shoulder']"),
    ('{\n  "joints": ["shoulder"]\n}\n',  # JSON is YAML too: the key's line, not the brace's
     "o.yaml:2: 'joints' must be a mapping, got ['shoulder']"),
    ("joints:\n  shoulder: {}\n  3: {}\n", "o.yaml:3: DOF name 3 is not a string"),
    ("joints:\n  shoulder: fast\n",
     "o.yaml:2: limits of DOF 'shoulder' must be a mapping, got 'fast'"),
    ("joints:\n  shoulder:\n    velocity: 1.0\n    force: 2.0\n",
     ("o.yaml:4: DOF 'shoulder': unknown key 'force' (expected position, velocity,"
     " acceleration, effort); the model's <force> limits are called 'effort' here")),
    ("joints:\n  shoulder:\n    speed: 2.0\n",
     ("o.yaml:3: DOF 'shoulder': unknown key 'speed' (expected position, velocity,"
     " acceleration, effort)")),
    ("joints:\n  shoulder:\n    position: 0.5\n",
     "o.yaml:3: DOF 'shoulder': position must be a mapping {lower: ..., upper: ...}, got 0.5"),
    ("joints:\n  shoulder:\n    velocity: -1.5\n",
     ("o.yaml:3: DOF 'shoulder': velocity -1.5: a symmetric limit must be >= 0"
     " (use {lower, upper} for an asymmetric one)")),
    ("joints:\n  shoulder:\n    velocity:\n      lower: -1.0\n      min: 0.0\n",
     "o.yaml:5: DOF 'shoulder': velocity: unknown key 'min' (expected lower, upper)"),
    ("joints:\n  shoulder:\n    effort: lots\n",
     "o.yaml:3: DOF 'shoulder': effort must be a number, got 'lots'"),
    ("joints:\n  shoulder:\n    velocity:\n      lower: -1.0\n      upper: true\n",
     "o.yaml:5: DOF 'shoulder': velocity upper must be a number, got True"),
    ("joints:\n  shoulder:\n    acceleration: .nan\n",
     "o.yaml:3: DOF 'shoulder': acceleration is NaN"),
    (f"joints:\n  shoulder:\n    effort: 1{'0' * 400}\n",
     f"o.yaml:3: DOF 'shoulder': effort 1{'0' * 400} is too large"),
    ("joints:\n  shoulder:\n    position:\n      upper: 0.2\n      lower: 0.5\n",
     "o.yaml:5: DOF 'shoulder': position: position lower limit 0.5 is above upper limit 0.2"),
    ("joints:\n  shoulder: {}\n  shoulder: {}\n",
     "o.yaml:3: duplicate key 'shoulder' (first on line 2)"),
    ("joints:\n  shoulder: [\n", "o.yaml:3: invalid YAML: did not find expected node content"),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_a_bad_override_file_is_named_with_the_line_at_fault(text: str, message: str) -> None:
    assert _message(parse_limit_overrides, text, "o.yaml") == message


def test_an_error_carries_its_file_and_line_apart_from_the_words() -> None:
    with pytest.raises(LimitError) as info:
        parse_limit_overrides("joints:\n  shoulder:\n    speed: 2.0\n", "o.yaml")
    assert (info.value.source, info.value.line) == ("o.yaml", 3)
    assert info.value.message.startswith("DOF 'shoulder': unknown key 'speed'")


BAD_AGAINST_THE_MODEL = [
    ("joints:\n  shoulder: {}\n  shouldr:\n    velocity: 1.0\n",
     "o.yaml:3: unknown DOF 'shouldr'; did you mean 'shoulder'?"),
    ("joints:\n  knee:\n    velocity: 1.0\n",
     "o.yaml:2: unknown DOF 'knee'; the model's DOFs are 'shoulder', 'elbow', 'wrist'"),
    ("joints:\n  elbow:\n    velocity: 0.5\n    effort: 1.0\n    position: {lower: -2.0}\n",
     ("o.yaml:5: DOF 'elbow': position lower -2 is wider than the current limit -1;"
     " overrides may only tighten")),
    ("joints:\n  elbow:\n    velocity:\n      upper: 3.0\n",
     ("o.yaml:4: DOF 'elbow': velocity upper 3 is wider than the current limit 2;"
     " overrides may only tighten")),
    ("joints:\n  elbow:\n    velocity: 1.0\n    position:\n      lower: 1.5\n",
     ("o.yaml:5: DOF 'elbow': position lower limit 1.5 is above upper limit 1.0"
     " after this override")),
]


@pytest.mark.parametrize(("text", "message"), BAD_AGAINST_THE_MODEL)
def test_an_override_the_model_refuses_is_named_with_the_line_at_fault(text: str,
                                                                       message: str) -> None:
    overrides = parse_limit_overrides(text, "o.yaml")
    assert _message(_arm().tightened, overrides) == message


def test_an_override_given_another_name_is_named_by_it() -> None:
    """A caller that read the overrides itself names the file they came from."""
    overrides = parse_limit_overrides("joints:\n  knee: {}\n")  # text from no file
    assert _message(_arm().tightened, overrides, source="robot/limits.yaml").startswith(
        "robot/limits.yaml:2: unknown DOF 'knee'")
    assert _message(_arm().tightened, overrides).startswith("<string>:2: unknown DOF 'knee'")


def test_overrides_from_a_plain_mapping_are_named_without_a_line() -> None:
    """Parameters (not a file) have no lines: the message names only their source."""
    data = {"joints": {"knee": {"velocity": 1.0}}}
    assert _message(_arm().tightened, data) == (
        "<overrides>: unknown DOF 'knee'; the model's DOFs are 'shoulder', 'elbow', 'wrist'")
    assert _message(LimitOverrides.from_mapping, {}, "params") == "params: missing 'joints' key"
    inverted = {"joints": {"elbow": {"position": {"lower": 1.5}}}}
    assert _message(_arm().tightened, inverted, "params") == (
        "params: DOF 'elbow': position lower limit 1.5 is above upper limit 1.0"
        " after this override")


def test_a_name_close_to_many_dofs_suggests_the_three_closest() -> None:
    limits = LimitSet([JointLimits(f"finger_{i}") for i in range(1, 6)])
    result = limits.check(CommandKind.POSITION, ["finger_"], [0.0])
    assert result.reason == (  # five as close: three of them (difflib's order)
        "unknown joint 'finger_'; did you mean 'finger_5', 'finger_4', 'finger_3'?")


def test_a_model_with_many_dofs_is_listed_by_its_first_eight() -> None:
    limits = LimitSet([JointLimits(f"j{i}") for i in range(11)], sources=("big.skel",))
    overrides = parse_limit_overrides("joints:\n  elbow: {}\n", "o.yaml")
    assert _message(limits.tightened, overrides) == (
        "o.yaml:2: unknown DOF 'elbow'; the model's DOFs are 'j0', 'j1', 'j2', 'j3', 'j4',"
        " 'j5', 'j6', 'j7' and 3 more")


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    assert _message(load_limit_overrides, missing) == (
        f"{missing}: cannot read file: No such file or directory")
    assert _message(load_limit_overrides, tmp_path) == (
        f"{tmp_path}: cannot read file: Is a directory")
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"joints:\n  \xe9paule: {}\n")
    assert _message(load_limit_overrides, latin1) == (
        f"{latin1}: cannot read file: 'utf-8' codec can't decode byte 0xe9 in position 10:"
        " invalid continuation byte")


def test_a_file_read_from_disk_is_named_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "limits.yaml"
    path.write_text("joints:\n  shoulder:\n    velocity: -1.0\n", encoding="utf-8")
    assert _message(load_limit_overrides, path).startswith(f"{path}:3: DOF 'shoulder': velocity -1")


# ----------------------------------------------------------------------------- limit sets


def test_limits_read_from_a_model_name_its_file_in_later_refusals() -> None:
    limits = LimitSet.from_skeleton(load_skel(ARM_SKEL).skeletons[0])
    assert limits.sources == (str(ARM_SKEL),)
    assert _message(RateLimiter, limits, ["knee"]) == (
        f"{ARM_SKEL}: rate limiter: unknown DOF 'knee'")


def test_inconsistent_limits_name_the_last_file_they_came_from() -> None:
    sources = ("arm.skel", "o.yaml")
    twice = [JointLimits("shoulder"), JointLimits("shoulder")]
    assert _message(LimitSet, twice, sources) == (
        "o.yaml: DOF name 'shoulder' appears more than once")
    assert _message(LimitSet, twice) == "DOF name 'shoulder' appears more than once"
    nan = [JointLimits("shoulder", velocity_lower=math.nan, velocity_upper=1.0)]
    assert _message(LimitSet, nan, sources) == (
        "o.yaml: DOF 'shoulder': velocity limits [nan, 1.0] contain NaN")
    inverted = [JointLimits("shoulder", effort_lower=2.0, effort_upper=1.0)]
    assert _message(LimitSet, inverted, sources) == (
        "o.yaml: DOF 'shoulder': effort lower limit 2.0 is above upper limit 1.0")
    assert _message(LimitSet, [JointLimits("shoulder", position_lower=INF)], sources) == (
        "o.yaml: DOF 'shoulder': position lower limit is +inf")
    assert _message(LimitSet, [JointLimits("shoulder", acceleration_upper=-INF)], sources) == (
        "o.yaml: DOF 'shoulder': acceleration upper limit is -inf")


# ----------------------------------------------------------------------------- commands


REFUSED_COMMANDS = [
    ("shoulder", [0.5], ("shoulder",), "names must be a list of names, not one string"),
    (["shoulder", None], [0.5, 0.5], ("shoulder", "None"), "names must be strings, got None"),
    (["elbow", "elbow"], [0.5, 0.5], ("elbow", "elbow"), "joint 'elbow' appears more than once"),
    (["shouldr"], [0.5], ("shouldr",), "unknown joint 'shouldr'; did you mean 'shoulder'?"),
    (["a", "b", "c", "d", "e", "f"], [0.0] * 6, ("a", "b", "c", "d", "e", "f"),
     ("unknown joint 'a', 'b', 'c', 'd', 'e' and 1 more; the model's DOFs are 'shoulder',"
     " 'elbow', 'wrist'")),
    (["a", "b", "c", "d", "e"], [0.0] * 5, ("a", "b", "c", "d", "e"),
     "unknown joint 'a', 'b', 'c', 'd', 'e'; the model's DOFs are 'shoulder', 'elbow', 'wrist'"),
    (["wrist"], [0.5], ("wrist",),
     ("joint 'wrist' is a mimic joint: it follows 'elbow' and takes no command of its own;"
     " command 'elbow' instead")),
    (["shoulder"], [[0.5]], ("shoulder",), "values must be a flat list of numbers"),
    (["shoulder"], ["0.5"], ("shoulder",), "values must be a flat list of numbers"),
    (["shoulder", "elbow"], [0.5], ("shoulder", "elbow"), "2 names but 1 values"),
    (["shoulder", "elbow"], [0.5, math.inf], ("shoulder", "elbow"),
     "non-finite value for joint 'elbow' = inf"),
    (["shoulder", "elbow"], [math.nan, -math.inf], ("shoulder", "elbow"),
     "non-finite value for joint 'shoulder' = nan, 'elbow' = -inf"),
]


@pytest.mark.parametrize(("names", "values", "as_named", "reason"), REFUSED_COMMANDS)
def test_a_refused_command_says_why_and_names_its_joints_as_text(
        names: object, values: object, as_named: tuple[str, ...], reason: str) -> None:
    result = _arm().check(CommandKind.VELOCITY, names, values)  # type: ignore[arg-type]
    assert result.ok is False  # a bool, as a ROS response's success field must be
    assert result.reason == reason
    assert result.message == f"velocity command rejected: {reason}"
    assert result.names == as_named


def test_a_clamped_command_says_each_value_moved() -> None:
    result = _arm().check(CommandKind.POSITION, ["shoulder", "elbow"], [3.0, -0.25])
    assert result.ok
    assert result.message == "position command clamped to limits: 'shoulder' 3 -> 1"


# ----------------------------------------------------------------------------- rate limiter


def test_a_rate_limiter_refusing_its_limits_names_their_file() -> None:
    assert _message(RateLimiter, _arm(), ["shoulder", "knee"]) == (
        "arm.skel: rate limiter: unknown DOF 'knee'")
    assert _message(RateLimiter, _arm(), ["elbow", "elbow"]) == (
        "arm.skel: rate limiter: a DOF name is repeated")
    creep = LimitSet([JointLimits("slide", velocity_lower=0.5, velocity_upper=1.0)],
                     sources=("arm.skel", "o.yaml"))
    assert _message(RateLimiter, creep) == (
        "o.yaml: rate limiter: DOF 'slide' velocity limits [0.5, 1] do not contain 0,"
        " so it could never stand still")
    no_brake = LimitSet([JointLimits("slide", acceleration_lower=0.0, acceleration_upper=1.0)],
                        sources=("arm.skel",))
    assert _message(RateLimiter, no_brake) == (
        "arm.skel: rate limiter: DOF 'slide' acceleration limits [0, 1] must be < 0 and > 0,"
        " or it could not stop")
    no_start = LimitSet([JointLimits("slide", acceleration_lower=-1.0, acceleration_upper=0.0)],
                        sources=("arm.skel",))
    assert _message(RateLimiter, no_start) == (
        "arm.skel: rate limiter: DOF 'slide' acceleration limits [-1, 0] must be < 0 and > 0,"
        " or it could not stop")


def _value_error(call: object, *args: object) -> str:
    try:
        call(*args)  # type: ignore[operator]
    except ValueError as exc:
        return str(exc)
    pytest.fail(f"{call!r} accepted {args!r}")


def test_a_rate_limiters_bad_argument_is_named_in_its_error() -> None:
    limiter = RateLimiter(_arm(), ["shoulder", "elbow"])
    assert limiter.position is None  # nothing measured yet
    assert limiter.velocity.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError) as info:
        limiter.step([0.0, 0.0], 0.01)
    assert str(info.value) == "RateLimiter.step() before reset(): give the measured positions"
    assert _value_error(limiter.reset, ["x", 0.0]) == (
        "positions must be numbers: could not convert string to float: 'x'")
    assert _value_error(limiter.reset, [0.0]) == "positions must have shape (2,), got (1,)"
    limiter.reset([0.0, 0.0])
    assert _value_error(limiter.step, [0.0, math.nan], 0.01) == (
        f"target holds a non-finite value: {np.array([0.0, math.nan])}")
    assert _value_error(limiter.step, [0.0, 0.0], 0.0) == "dt must be a finite number > 0, got 0.0"
    assert _value_error(limiter.step, [0.0, 0.0], True) == (
        "dt must be a finite number > 0, got True")
    ok = [0.0, 0.0]
    assert _value_error(limiter.limit, [0.0], ok, ok, 0.01) == (
        "previous_position must have shape (2,), got (1,)")
    assert _value_error(limiter.limit, ok, [None, 0.0], ok, 0.01) == (
        "previous_velocity holds a non-finite value: [nan  0.]")
    assert _value_error(limiter.limit, ok, ok, ["up", 0.0], 0.01) == (
        "target must be numbers: could not convert string to float: 'up'")


def test_a_rate_limiter_steps_without_numpy_warnings() -> None:
    """A control loop calls it every cycle: no warning for the cases its arithmetic covers.

    An unlimited deceleration (inf * 0 in the step formula), a deceleration times dt**2
    so small beside the distance that their ratio overflows, or one that underflows to 0
    (a division by 0): each gives a finite target inside the limits, and says nothing.
    """
    free = JointLimits("free", position_lower=-10.0, position_upper=10.0)
    tiny = JointLimits("tiny", position_lower=-10.0, position_upper=10.0, velocity_lower=-1.0,
                       velocity_upper=1.0, acceleration_lower=-1e-300, acceleration_upper=1e-300)
    both = RateLimiter(LimitSet([free, tiny]), positions=[0.0, 0.0])
    alone = RateLimiter(LimitSet([tiny]), positions=[0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = both.step([5.0, 5.0], 1e-10)  # D dt**2 = 1e-320: 5 / 1e-320 overflows
        second = alone.step([5.0], 1e-200)  # D dt**2 = 0
    assert first[0] == 5.0  # no acceleration limit: straight to the target
    assert 0.0 <= first[1] < 1e-9  # the tiny deceleration barely lets it move
    assert second.tolist() == [0.0]  # no step computable: it stays
