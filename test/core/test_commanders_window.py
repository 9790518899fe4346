"""The commanders' window at its edges, and who is one commander, without ROS.

``skel_ros/core/commanders.py`` promises: a source stays active on a joint for the
window after its last command (``now - last < window``); once it has been quiet for the
whole window another source may command the joint, and the last conflict is no longer
recent. Sources with equal keys are one commander; the default key is the channel and
who sent it. The core answers "what is going on" for the time it is asked about.
Times are powers of two (sums exact), so "exactly the window" is exactly that.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy_backend import NumpyBackend

from skel_ros.core import RobotCore
from skel_ros.core.commanders import DEFAULT_WINDOW, Commanders, Source
from skel_ros.model.limits import CommandKind

P = CommandKind.POSITION
A = np.array([0], dtype=np.intp)
AB = np.array([0, 1], dtype=np.intp)
TELEOP = Source("joint_commands", "/teleop")
SCRIPT = Source("joint_commands", "/script")


def _commanders(*, exclusive: bool = True, window: float = 0.5) -> Commanders:
    commanders = Commanders(("a", "b", "c"), exclusive=exclusive)
    commanders.window = window
    return commanders


def test_the_default_key_is_the_channel_and_who_sent_it() -> None:
    assert TELEOP.key == ("joint_commands", "/teleop")
    assert Source("joint_commands", "/teleop") == TELEOP
    assert Source("joint_commands").key == ("joint_commands", "")


def test_sources_that_differ_only_in_who_sent_them_are_two_commanders() -> None:
    commanders = _commanders()
    assert commanders.claim(TELEOP, A, 0.0) == ""
    assert commanders.claim(SCRIPT, A, 0.25) != ""  # another commander: refused
    assert commanders.claim(Source("joint_commands", "/teleop"), A, 0.25) == ""  # the same


def test_by_default_a_second_source_is_taken_and_the_latest_wins() -> None:
    commanders = Commanders(("a", "b", "c"))
    assert commanders.exclusive is False
    assert commanders.claim(TELEOP, A, 0.0) == ""
    assert commanders.claim(SCRIPT, A, 0.25) == ""
    assert commanders.refused == 0
    assert commanders.streaming(0.25) == SCRIPT  # it owns the joint now
    conflict = commanders.conflict(0.25)
    assert conflict is not None
    assert (conflict.first, conflict.second, conflict.names) == (TELEOP, SCRIPT, ("a",))
    assert conflict.refused is False


def test_a_refused_claim_takes_nothing_and_an_accepted_one_takes_its_joints() -> None:
    commanders = _commanders()
    assert commanders.claim(TELEOP, A, 0.0) == ""
    refused = commanders.claim(SCRIPT, AB, 0.25)
    assert refused.startswith("joint_commands (/teleop) commands a (it commanded them")
    assert commanders.refused == 1
    assert commanders.streaming(0.25) == TELEOP  # the refused claim took nothing
    assert commanders.claim(SCRIPT, np.array([1], dtype=np.intp), 0.25) == ""  # b is free
    assert commanders.streaming(0.25) == SCRIPT
    assert commanders.claim(TELEOP, np.array([1], dtype=np.intp), 0.5) != ""  # b is taken


def test_a_source_quiet_for_exactly_the_window_lets_another_command() -> None:
    commanders = _commanders(window=0.5)
    assert commanders.claim(TELEOP, A, 1.0) == ""
    assert commanders.check(SCRIPT, A, 1.25) != ""
    assert commanders.check(SCRIPT, A, 1.4375) != ""  # a sixteenth of the window left
    assert commanders.check(SCRIPT, A, 1.5) == ""  # quiet for the window: its turn
    assert commanders.claim(SCRIPT, A, 1.5) == ""


def test_a_conflict_is_recent_for_the_window_and_not_at_its_end() -> None:
    commanders = _commanders(exclusive=False, window=0.5)
    commanders.claim(TELEOP, A, 0.0)
    commanders.claim(SCRIPT, A, 0.25)
    assert commanders.conflict(0.25) is not None
    assert commanders.conflict(0.6875) is not None
    assert commanders.conflict(0.75) is None  # the window after it: no longer recent


def test_a_stream_is_current_for_the_window_after_its_last_command() -> None:
    commanders = _commanders(window=0.5)
    commanders.claim(TELEOP, A, 0.0)
    assert commanders.streaming(0.4375) == TELEOP
    assert commanders.streaming(0.5) is None


def test_a_released_trajectory_holds_its_joints_for_the_window_after_its_end() -> None:
    commanders = _commanders(window=0.5)
    goal = Source("follow_joint_trajectory", "goal 1")
    commanders.claim(goal, AB, 0.0, running=True)
    assert "its trajectory runs" in commanders.check(TELEOP, A, 100.0)
    commanders.release(goal, AB, 2.0)
    assert "within the last 0.5 s" in commanders.check(TELEOP, A, 2.25)
    assert commanders.check(TELEOP, A, 2.5) == ""
    commanders.release(Source("never", "seen"), AB, 3.0)  # unknown: nothing happens


# ----------------------------------------------------------------------------- the core


def _core(timeout: float = 0.5) -> tuple[RobotCore, NumpyBackend]:
    backend = NumpyBackend()
    return RobotCore(backend, command_timeout=timeout), backend


def test_the_core_answers_for_the_time_it_is_asked_about() -> None:
    core, backend = _core(0.5)
    assert core.command(P, ["a"], [0.25], TELEOP).ok
    assert core.command(P, ["a"], [0.5], SCRIPT).ok
    backend.time = 0.25
    assert core.conflict() is not None
    assert core.conflict(now=0.5) is None  # the window after it
    assert core.activity() == "tracking a joint_commands stream from /script"
    assert core.activity(now=0.5) == "holding"
    backend.time = 0.75
    assert core.conflict(now=0.25) is not None
    assert core.activity(now=0.25) == "tracking a joint_commands stream from /script"


def test_a_new_timeout_counts_from_the_time_given() -> None:
    core, backend = _core(0.0)
    backend.time = 1.0
    core.command(P, ["a"], [0.25])
    core.set_command_timeout(0.5, now=4.0)
    assert core.quiet_until() == 4.5
    assert core.commander_window == 0.5
    core.set_command_timeout(0.25)  # default: from the backend's time
    assert core.quiet_until() == 1.25
    core.set_command_timeout(0.0)
    assert core.commander_window == DEFAULT_WINDOW
    with pytest.raises(ValueError, match="command timeout is NaN"):
        core.set_command_timeout(float("nan"))


def test_the_timeout_is_not_tripped_until_it_fires_and_after_a_command() -> None:
    core, backend = _core(0.5)
    assert core.timeout_tripped is False
    core.restart_timeout(0.0)
    core.cycle(0.5)
    assert core.timeout_tripped is True
    backend.time = 0.75
    assert core.command(P, ["a"], [0.25]).ok
    assert core.timeout_tripped is False


def test_the_end_of_a_trajectory_releases_only_its_own_running_joints() -> None:
    commanders = _commanders(window=0.5)
    one, two = Source("follow_joint_trajectory", "goal 1"), Source("other_controller", "goal 2")
    commanders.claim(TELEOP, np.array([2], dtype=np.intp), 0.0)  # c: a stream, long quiet
    commanders.claim(one, A, 0.0, running=True)
    commanders.claim(two, np.array([1], dtype=np.intp), 0.0, running=True)
    commanders.release(one, np.array([0, 1, 2], dtype=np.intp), 2.0)
    assert "its trajectory runs" in commanders.check(SCRIPT, np.array([1], dtype=np.intp), 2.75)
    assert commanders.check(SCRIPT, A, 2.5) == ""  # the window after its end
    assert commanders.check(SCRIPT, np.array([2], dtype=np.intp), 2.25) == ""  # c untouched
