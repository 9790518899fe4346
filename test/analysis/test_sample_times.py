"""Where recorded samples are placed in time, and a starved node: not judged, not failed.

Synthetic MCAP recordings as a sim-to-real session writes them: the command at 100 Hz,
the simulation and the hardware at 50 Hz, each message with a header stamp and a log time
(when the recorder received it). On a loaded machine the log times of joint_states trail
their stamps by tens to hundreds of milliseconds; the analysis must not count that as
lag or error. A stream stamped in simulated time keeps its log times.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from joint_state_mcap import joint_state, write_joint_states

from skel_ros.analysis import (
    CriteriaError,
    Outcome,
    compare,
    judge,
    parse_criteria,
    read_recording,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

JOINTS = ["elbow", "wrist"]
WALL = 1_790_000_000.0  # s: a ROS (wall-clock) time, as the recorder and the nodes see it
RATES = {"command": 100.0, "sim": 50.0, "real": 50.0}
CRITERIA = parse_criteria("""\
min_duration: 3.0
min_rate: 20
all:
  sim_real:     {rms: 0.02, max: 0.05}
  real_command: {rms: 0.02, max: 0.05, lag: 0.05}
  sim_command:  {rms: 0.02, max: 0.05, lag: 0.05}
""", "c.yaml")


def _motion(t: float) -> float:
    return 0.8 * math.sin(2.0 * t)  # up to 1.6 rad/s: 100 ms late is 0.16 rad off


def _write(path: Path, *, seconds: float = 5.0,
           delay: Callable[[str, float], float] = lambda _s, _t: 0.0,
           stamp: Callable[[str, float], float] = lambda _s, t: WALL + t,
           skip: Callable[[str, float], bool] = lambda _s, _t: False,
           offset: Callable[[str, float], float] = lambda _s, _t: 0.0) -> Path:
    """A recording: each stream's sample due at ``t`` (s into the run) holds the motion at
    ``t`` (+ ``offset``), is stamped ``stamp(stream, t)`` and logged ``delay`` after ``t``;
    ``skip``: not sent at all."""
    messages = []
    for stream, rate in RATES.items():
        for k in range(int(seconds * rate)):
            t = k / rate
            if skip(stream, t):
                continue
            value = _motion(t) + offset(stream, t)
            sec = stamp(stream, t)
            messages.append((round((WALL + t + delay(stream, t)) * 1e9), stream, joint_state(
                (int(sec), round((sec % 1) * 1e9)), JOINTS, [value, -value])))
    messages.sort(key=lambda m: m[0])
    return write_joint_states(path, messages)


def _late(stream: str, t: float) -> float:
    """joint_states reach the recorder 100 ms after their stamps (a loaded machine)."""
    return 0.1 if stream != "command" else 0.0


def test_measured_streams_are_placed_at_their_stamps(tmp_path: Path) -> None:
    """Received 100 ms late but stamped right: no lag, no error."""
    streams = read_recording(_write(tmp_path / "run.mcap", delay=_late))
    comparison = compare(list(streams.values()))
    for joint in comparison.joints:
        for pair in (("real", "command"), ("sim", "command"), ("sim", "real")):
            error = joint.error(*pair)
            assert error is not None
            assert error.max_abs < 0.01, (joint.joint, error)
            assert abs(error.lag) <= 0.011 or math.isnan(error.lag), (joint.joint, error)
    assert judge(comparison, CRITERIA).outcome is Outcome.PASSED
    assert {n: s.time_base for n, s in streams.items()} == {
        "command": "log", "sim": "stamp", "real": "stamp"}
    assert comparison.time_bases == {"command": "log", "sim": "stamp", "real": "stamp"}


def test_simulated_time_stamps_fall_back_to_log_times(tmp_path: Path) -> None:
    """A simulation stamped in simulated time (s from 0) is placed at its log times, and
    the hardware beside it still at its stamps: the delay of the log times shows as lag."""
    recording = _write(tmp_path / "run.mcap", delay=_late,
                       stamp=lambda s, t: t + 0.5 if s == "sim" else WALL + t)
    streams = read_recording(recording)
    first = streams["command"].times[0]
    assert streams["sim"].times[0] == pytest.approx(first + 0.1, abs=1e-6)  # log time
    assert streams["real"].times[0] == pytest.approx(first, abs=1e-6)  # stamp
    (elbow, _) = compare(list(streams.values())).joints
    assert elbow.error("sim", "command").lag == pytest.approx(0.1, abs=0.011)
    assert abs(elbow.error("real", "command").lag) <= 0.011
    assert streams["sim"].time_base == "log"
    assert streams["real"].time_base == "stamp"


def test_zero_stamps_fall_back_to_log_times(tmp_path: Path) -> None:
    """An older recording (or a node that stamps nothing): log times."""
    streams = read_recording(_write(tmp_path / "run.mcap", stamp=lambda _s, _t: 0.0))
    assert {s.time_base for s in streams.values()} == {"log"}
    assert streams["real"].times[-1] == pytest.approx(4.98, abs=1e-6)


def _stall(stream: str, t: float) -> bool:
    """The hardware node sends nothing for 0.7 s from 2.0 s of the run."""
    return stream == "real" and 2.0 < t < 2.7


def test_a_starved_stream_makes_the_run_not_judged(tmp_path: Path) -> None:
    """The hardware node stalled 0.7 s (the servo's watchdog tripped: off by 0.3 rad after):
    the errors say nothing about the model, so the run is not judged, and says why."""
    recording = _write(tmp_path / "run.mcap", delay=_late, skip=_stall,
                       offset=lambda s, t: 0.3 if s == "real" and t >= 2.7 else 0.0)
    verdict = judge(compare(list(read_recording(recording).values())), CRITERIA)
    assert verdict.with_outcome(Outcome.FAILED)  # the errors alone would fail it
    assert verdict.outcome is Outcome.NOT_JUDGED
    (starved,) = verdict.with_outcome(Outcome.NOT_JUDGED)
    assert (starved.name, starved.stream, starved.metric) == ("gaps real", "real", "gap")
    assert starved.value == pytest.approx(0.7, abs=0.005)
    assert starved.bound == pytest.approx(0.2)
    assert "the real stream starved: no sample for 0.700 s from 2.00 s" in starved.message
    assert "in the stamps" in starved.reason
    gaps = {c.stream: c.outcome for c in verdict.checks if c.metric == "gap"}
    assert gaps == {"sim": Outcome.PASSED, "real": Outcome.NOT_JUDGED}


def test_a_gap_in_log_times_counts_for_a_stream_without_usable_stamps(tmp_path: Path) -> None:
    """A simulation stamped in simulated time that stood still 1 s: its log times show it."""
    recording = _write(tmp_path / "run.mcap", stamp=lambda s, t: t if s == "sim" else WALL + t,
                       skip=lambda s, t: s == "sim" and 1.0 < t < 2.0)
    verdict = judge(compare(list(read_recording(recording).values())), CRITERIA)
    (starved,) = verdict.with_outcome(Outcome.NOT_JUDGED)
    assert starved.stream == "sim"
    assert "in the log times" in starved.reason


def test_max_gap_is_read_from_the_criteria(tmp_path: Path) -> None:
    recording = _write(tmp_path / "run.mcap", skip=_stall)
    comparison = compare(list(read_recording(recording).values()))
    assert judge(comparison, parse_criteria("min_duration: 3.0\n", "c.yaml")).outcome \
        is Outcome.NOT_JUDGED  # the default max_gap, 0.2 s
    loose = parse_criteria("min_duration: 3.0\nmax_gap: 1.0\n", "c.yaml")
    assert loose.max_gap.where == "c.yaml:2"
    assert judge(comparison, loose).outcome is Outcome.PASSED
    assert loose.as_dict()["max_gap"] == 1.0
    assert parse_criteria("{}", "c.yaml").max_gap.where == "default max_gap"
    with pytest.raises(CriteriaError, match=r"c\.yaml:1: max_gap must be a finite number >= 0"):
        parse_criteria("max_gap: -0.1\n", "c.yaml")
    # a slow stream: a gap must also be 5 of its median periods (here 5 x 0.5 s)
    assert comparison.gap_threshold("real", 0.2) == pytest.approx(0.2)


def test_a_genuine_tracking_error_still_fails(tmp_path: Path) -> None:
    """Stamped right, no gap, but the hardware is 0.1 rad off: failed, not 'not judged'."""
    recording = _write(tmp_path / "run.mcap", delay=_late,
                       offset=lambda s, _t: 0.1 if s == "real" else 0.0)
    verdict = judge(compare(list(read_recording(recording).values())), CRITERIA)
    assert verdict.outcome is Outcome.FAILED
    assert not verdict.with_outcome(Outcome.NOT_JUDGED)
    failed = {(c.joint, c.name) for c in verdict.with_outcome(Outcome.FAILED)}
    assert ("elbow", "max error real-command") in failed
    assert ("elbow", "max error sim-command") not in failed


def test_the_rule_scales_with_a_slow_stream() -> None:
    """A stream sampled at 2 Hz: 0.6 s between samples is its period, not a gap."""
    from skel_ros.analysis import JointSeries

    t = np.arange(0, 6, 0.6)
    fast = np.arange(0, 6, 0.01)
    comparison = compare([JointSeries.from_samples("command", fast, ["j"], np.sin(fast)[:, None]),
                          JointSeries.from_samples("sim", t, ["j"], np.sin(t)[:, None])])
    assert comparison.gap_threshold("sim", 0.2) == pytest.approx(3.0)
    assert comparison.gaps("sim", 0.2) == ()


def test_stamps_ahead_of_their_arrival_are_not_on_the_recorders_clock(tmp_path: Path) -> None:
    """A hardware PC whose clock runs 0.6 s ahead: its stamps are later than the moment
    the recorder got them, so they cannot be on its clock; the arrival times are used,
    and the report says why."""
    ahead = read_recording(_write(tmp_path / "ahead.mcap", delay=lambda _s, _t: 0.02,
                                  stamp=lambda s, t: WALL + t + (0.6 if s == "real" else 0.0)))
    assert ahead["real"].time_base == "log"
    assert "after its arrival" in ahead["real"].time_base_note
    assert ahead["sim"].time_base == "stamp"
    comparison = compare(list(ahead.values()))
    assert "after its arrival" in comparison.time_base_notes["real"]
    for joint in comparison.joints:  # on one clock with the command again: no error
        assert joint.error("real", "command").max_abs < 1e-3
