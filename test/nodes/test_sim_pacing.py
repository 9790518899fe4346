"""The simulation node's parameter checks (no node is started)."""

from __future__ import annotations

import math

import pytest

pytestmark = pytest.mark.ros

rclpy = pytest.importorskip("rclpy")

def test_parameter_checks() -> None:
    from functools import partial

    from skel_ros.nodes.parameters import check
    from skel_ros.nodes.sim_node import PARAMETERS

    check_parameter = partial(check, PARAMETERS)

    assert check_parameter("real_time_factor", 3) == (3.0, "")
    assert check_parameter("real_time_factor", 0.0) == (0.0, "")
    assert "must be in [0, 1000]" in check_parameter("real_time_factor", math.inf)[1]
    assert "must be a number" in check_parameter("tf_rate", True)[1]
    assert "(0, 10000] Hz" in check_parameter("joint_states_rate", 20000.0)[1]
    assert "finite and >= 0" in check_parameter("command_timeout", -0.5)[1]
    assert "must be a bool" in check_parameter("paused", "yes")[1]


# ----------------------------------------------------------------------------- engine lock
