"""Whether a recording's stamps follow the joints' own motion (skel_ros.identify.stamps)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from skel_ros.analysis.recording import read_recording
from skel_ros.analysis.series import JointSeries
from skel_ros.identify.stamps import AGREEMENT, stamp_agreement, stamps_note

DATA = Path(__file__).parent / "data"
JOINTS = ["a", "b", "c", "d"]


def _run(stamps: str, *, velocities: bool = True) -> JointSeries:
    """Four joints swinging, read every 5 ms by a loop that keeps time to 0.6 ms.

    ``stamps``: ``"measured"`` (each reading at the instant it was taken), ``"late"``
    (each at the next cycle's read, which keeps its own time: a driver that stamps a
    reply when it reads it), ``"steady"`` (the nominal cycle times)."""
    rng = np.random.default_rng(3)
    n = 4000
    nominal = 0.005 * np.arange(n)
    taken = nominal + np.clip(rng.normal(0.0, 0.0006, n), -0.002, 0.002)
    phases = np.array([0.0, 0.7, 1.9, 2.6])
    freq = np.array([0.5, 0.8, 1.1, 0.35])
    q = 0.6 * np.sin(2 * np.pi * freq * taken[:, None] + phases)
    v = 0.6 * 2 * np.pi * freq * np.cos(2 * np.pi * freq * taken[:, None] + phases)
    times = {"measured": taken,
             "late": nominal + 0.005 + np.clip(rng.normal(0.0, 0.0006, n), -0.002, 0.002),
             "steady": nominal}[stamps]
    return JointSeries.from_samples("real", times, JOINTS, q, v if velocities else None)


def test_stamps_at_the_measurement_follow_the_motion() -> None:
    agreement = stamp_agreement(_run("measured"), JOINTS)
    assert agreement is not None
    assert agreement.correlation > 0.9, agreement
    assert stamps_note("run.mcap", agreement) == ""


def test_stamps_taken_at_a_later_read_are_said_not_to() -> None:
    """Planted: the check's note not given (its threshold at -1) -> this fails."""
    agreement = stamp_agreement(_run("late"), JOINTS)
    assert agreement is not None
    assert agreement.correlation < AGREEMENT, agreement
    note = stamps_note("run.mcap", agreement)
    assert note.startswith("run.mcap: the intervals between the measured joint_states' stamps"
                           " do not follow the joints' own motion"), note
    assert "may not say when the values were measured" in note


def test_no_check_without_velocities_or_with_steady_stamps() -> None:
    assert stamp_agreement(_run("measured", velocities=False), JOINTS) is None
    assert stamp_agreement(_run("steady"), JOINTS) is None
    assert stamp_agreement(_run("measured"), ["elsewhere"]) is None
    assert stamps_note("run.mcap", None) == ""


def test_a_bench_recording_at_50_hz_is_not_flagged() -> None:
    """The bundled arm's 50 Hz recording (Dynamixel servos, whose velocity the servo
    filters): its stamps follow its motion less closely than at 200 Hz, but do."""
    series = read_recording(DATA / "arm_excite20_truth.mcap")["real"]
    agreement = stamp_agreement(series, series.joint_names)
    assert agreement is not None
    assert stamps_note("arm", agreement) == "", agreement
