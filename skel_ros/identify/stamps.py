"""Whether a recording's stamps say when its joints were measured: the joints' own motion asks.

Armature and damping come from accelerations and velocities, which the fit takes from the
measured stream at its stamps, and an MIT motor's hold correction takes each command to
last as long as the stamps say. Stamps that do not say when the values were measured (a
driver that stamps a reply at the read that takes it, a cycle after the motor measured
it; a recording stamped on arrival) move those values without a trace in the fit's
intervals.

The joints tell how much time passed between two readings: a joint at ``q0`` with speed
``v0``, then ``q1`` and ``v1``, moved for about ``(q1 - q0) / ((v0 + v1) / 2)`` (exact
for a constant acceleration). Over the joints (least squares: ``sum(dq vbar) /
sum(vbar^2)``), on the half of the samples where they move fastest, that interval follows
the stamps' own interval where the stamps are measurement times. Their correlation is the
check (:func:`stamp_agreement`); below :data:`AGREEMENT` ``identify`` says so.

Measured on the physics bench (2026-11-30, 200 Hz recordings, 30-60 s): 0.69 (the SO-101
on Feetech servos), 0.75 (the arm on Dynamixel servos), 0.58 (the arm at 50 Hz), 0.83
(the quadruped on MIT motors); 0.02 for the quadruped while the hardware node stamped an
MIT reading at the read a cycle after the motors measured it (the readings' holds ran
2-8 ms where the stamps said 3.5-6.7). The threshold sits between (an empirical rule).
Where the stamps do not vary (spread below :data:`STEADY` of their period) or too few
samples move, nothing is said: a constant interval correlates with nothing.

No ROS, no engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.analysis.series import JointSeries

__all__ = ["AGREEMENT", "STEADY", "StampAgreement", "stamp_agreement", "stamps_note"]

AGREEMENT: Final = 0.3
"""Correlation below which the stamps are said not to follow the joints' motion."""
STEADY: Final = 0.02
"""A spread of the stamps' intervals below this share of their period: no check."""
_MIN_SAMPLES: Final = 50


@dataclass(frozen=True)
class StampAgreement:
    """How the intervals between a stream's stamps follow the joints' own motion.

    Attributes:
        correlation: between each stamp interval and the joints' motion over it.
        samples: the intervals compared (the faster half of the moving ones).
        spread: s, the standard deviation of those stamp intervals.
        period: s, their median.
    """

    correlation: float
    samples: int
    spread: float
    period: float


def stamp_agreement(series: JointSeries, joints: Sequence[str]) -> StampAgreement | None:
    """The check of the module docstring on ``joints`` of ``series``.

    None where it cannot be made: no measured velocities, fewer than 50 intervals where
    the joints move, or stamps that keep a steady interval.
    """
    columns = [series.joint_names.index(j) for j in joints if j in series.joint_names]
    if not columns:
        return None
    q = series.positions[:, columns]
    v = series.velocities[:, columns]
    measured = np.all(np.isfinite(q), axis=0) & np.all(np.isfinite(v), axis=0)
    if not measured.any():
        return None
    q, v = q[:, measured], v[:, measured]
    stamp_step = np.diff(series.times)
    moved = np.diff(q, axis=0)
    speed = 0.5 * (v[1:] + v[:-1])
    power = np.sum(speed * speed, axis=1)
    fast = power > np.median(power)
    if np.count_nonzero(fast) < _MIN_SAMPLES:
        return None
    motion_step = np.sum(moved * speed, axis=1)[fast] / power[fast]
    stamps = stamp_step[fast]
    period = float(np.median(stamps))
    spread = float(np.std(stamps))
    if not (period > 0.0 and spread > STEADY * period and np.std(motion_step) > 0.0):
        return None
    correlation = float(np.corrcoef(stamps, motion_step)[0, 1])
    return StampAgreement(correlation, int(stamps.size), spread, period)


def stamps_note(source: str, agreement: StampAgreement | None) -> str:
    """What ``identify`` says of a recording whose stamps do not follow the motion ("": they do)."""
    if agreement is None or agreement.correlation >= AGREEMENT:
        return ""
    return (f"{source}: the intervals between the measured joint_states' stamps do not "
            f"follow the joints' own motion (correlation {agreement.correlation:.2f} over "
            f"{agreement.samples} intervals of {agreement.period * 1e3:.3g} +- "
            f"{agreement.spread * 1e3:.2g} ms, each against the positions' step over the "
            f"velocities): the stamps may not say when the values were measured (a driver "
            f"that stamps a reply when it reads it, a recording stamped on arrival), and "
            f"armature and damping, and an MIT motor's hold correction, depend on that "
            f"timing (docs/identify.md, Stamps)")
