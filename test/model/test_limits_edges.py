"""Limits at their edges: an override whose interval is inverted is refused where it is
written, a value too large for a float names its file, a check's arrays are read-only,
and a step whose braking term underflowed does not move.

Beside test_limits.py: these pin what mutation testing (issue 35, docs/testing.md)
showed no test held.
"""

from __future__ import annotations

import numpy as np
import pytest

from skel_ros.model import limits as lim
from skel_ros.model.limits import JointLimits, LimitError, LimitOverrides, LimitSet


@pytest.mark.parametrize(("spec", "message"), [
    ({"lower": 1.0, "upper": 0.0},
     "o.yaml: DOF 'j': position: position lower limit 1.0 is above upper limit 0.0"),
    ({"upper": float("-inf")}, "position: position upper limit is -inf"),
    ({"lower": float("inf")}, "position: position lower limit is +inf"),
])
def test_an_override_that_leaves_no_interval_is_refused(spec: dict[str, float],
                                                        message: str) -> None:
    with pytest.raises(LimitError) as info:
        LimitOverrides.from_mapping({"joints": {"j": {"position": spec}}}, "o.yaml")
    assert message in str(info.value)
    assert info.value.source == "o.yaml"


def test_a_number_too_large_for_a_float_names_its_file() -> None:
    with pytest.raises(LimitError) as info:
        LimitOverrides.from_mapping({"joints": {"j": {"velocity": 10**400}}}, "o.yaml")
    assert "is too large" in str(info.value)
    assert info.value.source == "o.yaml"


def test_a_checked_command_cannot_be_changed_afterwards() -> None:
    limits = LimitSet([JointLimits("j", position_lower=-1.0, position_upper=1.0)])
    result = limits.check(lim.CommandKind.POSITION, ["j"], [2.0])
    assert result.ok
    assert result.values.tolist() == [1.0]
    for array in (result.values, result.requested, result.indices):
        assert not array.flags.writeable


def test_a_step_whose_braking_term_underflowed_is_zero() -> None:
    """h = D dt**2 can underflow to 0 for a tiny dt and deceleration: no step then, not an
    unlimited one; an unlimited deceleration (h = inf) allows the whole distance."""
    d = np.array([1.0, 1.0, 0.0])
    h = np.array([0.0, np.inf, 0.0])
    assert lim._max_step(d, h).tolist() == [0.0, 1.0, 0.0]
