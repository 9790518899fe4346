"""A sim-to-real run that times out at its start says which robot's states it lacks."""

from __future__ import annotations

import threading

import pytest

from skel_ros.nodes.sim_to_real import RunError, _missing_states, _wait


def test_the_timeout_names_the_robot_whose_states_never_came() -> None:
    counts = {"/sim/joint_states": 40, "/sim/robot_description": 1,
              "/real/joint_states": 0, "/real/robot_description": 1,
              "/dart/joint_states": 0, "/dart/robot_description": 0}
    states = ["/sim/joint_states", "/dart/joint_states", "/real/joint_states"]
    with pytest.raises(RunError) as info:
        _wait(lambda: False, 0.05, lambda: _missing_states(states, counts), lambda: None,
              threading.Event())
    said = str(info.value)
    assert said.startswith("timed out after 0 s waiting for joint_states from every node")
    assert ("/real/joint_states (its robot_description recorded: no TF path from every link"
            " to its root yet)") in said
    assert "/dart/joint_states (its robot_description not recorded either)" in said
    assert "/sim/joint_states" not in said
