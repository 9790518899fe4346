"""A mimic joint's command is its leader's, through the rule (docs/model.md, "Mimic joints").

A command names leaders only (a follower takes none); a robot moves each follower to
``multiplier * leader + offset``. The recorded command stream of a run carries the
followers so computed, so that a follower's measured stream is judged against the command
like any joint's, not left out ("-" in the report). The recordings are written here, as
``skel-ros sim-to-real`` records them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
from joint_state_mcap import joint_state, write_joint_states

from skel_ros.analysis import compare, model_followers, read_recording
from skel_ros.model import load_model
from skel_ros.resources import example

if TYPE_CHECKING:
    from pathlib import Path

WALL = 1_790_000_000  # s: the recorder's clock
FOLLOWERS = {"finger_right": ("finger_left", -1.0, 0.0)}  # examples/gripper_arm.urdf


def _recording(path: Path, follower: np.ndarray) -> Path:
    """The command streams finger_left; both robots report both fingers (right = follower)."""
    t = np.arange(0.0, 2.0, 0.01)
    left = 0.4 * np.sin(2.0 * np.pi * 0.5 * t)
    messages = []
    for i, x in enumerate(t):
        ns = round((WALL + x) * 1e9)
        stamp = (WALL + int(x), round((x % 1.0) * 1e9))
        messages.append((ns, "command", joint_state(stamp, ["finger_left"], [left[i]])))
        both = joint_state(stamp, ["finger_left", "finger_right"], [left[i], follower[i]])
        messages += [(ns + 1, "sim", both), (ns + 1, "real", both)]
    return write_joint_states(path, messages)


def test_the_gripper_examples_followers_are_read_from_the_model() -> None:
    assert model_followers(load_model(example("gripper_arm.urdf"))) == FOLLOWERS


def test_a_follower_is_judged_against_its_leaders_command(tmp_path: Path) -> None:
    t = np.arange(0.0, 2.0, 0.01)
    path = _recording(tmp_path / "run.mcap", -0.4 * np.sin(2.0 * np.pi * 0.5 * t))
    streams = read_recording(path, followers=FOLLOWERS)
    assert streams["command"].held  # JointState targets only: each held until the next
    comparison = compare(list(streams.values()))
    right = next(j for j in comparison.joints if j.joint == "finger_right")
    left = next(j for j in comparison.joints if j.joint == "finger_left")
    error, leader = right.error("real", "command"), left.error("real", "command")
    assert error is not None
    assert leader is not None
    assert error.max_abs < 1e-6  # resampled: what the leader's own error is
    assert error.max_abs == pytest.approx(leader.max_abs, abs=1e-9)
    # Without the model's couplings the follower has no command to be judged against.
    bare = compare(list(read_recording(path).values()))
    right = next(j for j in bare.joints if j.joint == "finger_right")
    unjudged = right.error("real", "command")
    assert unjudged is None or not np.isfinite(unjudged.max_abs)


def test_a_follower_that_does_not_follow_fails_against_the_command(tmp_path: Path) -> None:
    """The follower's fingers stuck at 0 (a broken linkage): 0.4 rad off the command."""
    path = _recording(tmp_path / "run.mcap", np.zeros(200))
    comparison = compare(list(read_recording(path, followers=FOLLOWERS).values()))
    right = next(j for j in comparison.joints if j.joint == "finger_right")
    error = right.error("real", "command")
    assert error is not None
    assert error.max_abs == pytest.approx(0.4, abs=0.01)
