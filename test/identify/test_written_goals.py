"""The goals as the hardware wrote them (``/real/written_goals``) fix a servo's delay.

The hardware node writes a stream's goals with its control loop's cycles: a goal waits
for the next cycle, and of two goals in one period only the later is written. A stream at
the loop's rate whose goals arrive about when the cycles write (a phase set by the
player's timer against the loop's) has some goals dropped and others held two periods,
as the recorder cannot tell: fitted from the commands as published, a servo's delay is
off by one or more periods with a narrow interval (the SO-101 on the physics bench,
2026-11-30: 5 and 20 ms for 12.5). Recorded with ``sim-to-real --record-goals``, the
goals written, stamped when written, are the servo's input as it had it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
from joint_state_mcap import write_run

from skel_ros.analysis.recording import read_recording
from skel_ros.analysis.series import JointSeries
from skel_ros.identify import fit as f

if TYPE_CHECKING:
    from pathlib import Path

PERIOD = 0.005  # s: the control loop's and the stream's
DELAY = 0.010  # s: the servo's own, from the write to its law taking the goal
WRITE_AFTER_READ = 0.0008  # s: a cycle reads, then writes
KP, KD = 20.0, 0.3
DURATION = 20.0


def _target(t: np.ndarray) -> np.ndarray:
    return 0.5 * np.sin(2 * math.pi * 0.3 * t) + 0.2 * np.sin(2 * math.pi * 1.1 * t + 1.0)


def _run(path: Path, seed: int) -> tuple[Path, float]:
    """A recording of one servo driven as the hardware node drives it; its mean wait.

    The player's goals arrive at the cycles' writes, give or take 0.3 ms (so some are
    dropped, others held two periods); the servo's law ``kp (goal(t - delay) - q) - kd
    qd`` acts on the goals written; the joint follows the target 30 ms late.
    """
    rng = np.random.default_rng(seed)
    cycles = np.arange(round(DURATION / PERIOD)) * PERIOD
    writes = cycles + WRITE_AFTER_READ
    arrivals = np.sort(writes + rng.normal(0.0, 3e-4, writes.size))
    goals = _target(arrivals)
    last = np.searchsorted(arrivals, writes, side="right") - 1  # the goal each write had
    ok = last >= 0
    writes, written = writes[ok], goals[last[ok]]
    changed = np.r_[True, last[ok][1:] != last[ok][:-1]]
    wait = float(np.mean(writes[changed] - arrivals[last[ok]][changed]))
    reads = cycles[cycles > writes[0] + DELAY]
    held = written[np.searchsorted(writes, reads - DELAY, side="right") - 1]
    q = _target(reads - 0.03)
    qd = np.gradient(q, reads)
    tau = KP * (held - q) - KD * qd + rng.normal(0.0, 2e-3, reads.size)
    real = JointSeries.from_samples("real", reads, ["j"], q[:, None], qd[:, None],
                                    tau[:, None])
    return write_run(path, real, [(t, ["j"], [g]) for t, g in zip(arrivals, goals, strict=True)],
                     written=[(t, ["j"], [g]) for t, g in zip(writes, written, strict=True)]), wait


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_goals_written_give_the_servos_delay_where_the_commands_do_not(
        tmp_path: Path, seed: int) -> None:
    path, wait = _run(tmp_path / "run.mcap", seed)
    streams = read_recording(path, goals=True)
    assert streams["written"].held
    fitted = f.fit_servo([f.prepare("run", streams["real"], streams["command"], ["j"],
                                    written=streams["written"])], "j")
    assert fitted is not None
    assert not fitted.problem, fitted
    # From a goal's arrival to the law taking it: the servo's delay plus the wait for a
    # cycle (what a simulation, which takes each goal as it comes, is to add).
    assert fitted.delay == pytest.approx(DELAY + wait, abs=5e-4), fitted
    low, high = fitted.delay_interval
    assert low - 1e-3 <= DELAY + wait <= high + 1e-3, fitted
    # (kp a few per cent short: the grid at the stamps' median period drifts off them)
    assert fitted.kp == pytest.approx(KP, rel=0.05), fitted


def test_without_them_the_commands_as_published_are_fitted(tmp_path: Path) -> None:
    """A recording without ``/real/written_goals`` (made without ``--record-goals``, or
    before there was one): the published commands, as before."""
    path, _ = _run(tmp_path / "run.mcap", 0)
    streams = read_recording(path)
    assert "written" not in streams
    samples = f.prepare("run", streams["real"], streams["command"], ["j"])
    assert samples.written is None
    assert f.fit_servo([samples], "j") is not None
