"""An MIT motor whose commands are held for unequal times (a control loop the machine
slows: on 2026-11-30 the physics bench's quadruped loop ran cycles of 3 to 19 ms for its
5 ms), and ``identify`` with the goals as written (``sim-to-real --record-goals``).

Each reading is the law's value at the end of the hold it closes. A hold's share of what
that reading misses grows with the hold: corrected as if every hold were the control
period, the damping and armature come out about a quarter short; with each hold's own
length from the goals as written, placed hold by hold (:func:`skel_ros.identify.fit.
hold_corrected`), every value comes back within a few percent. Where every hold is the
period, both give the same values.

The motor here is a 1-DOF joint of pure armature, viscous and Coulomb friction (no link:
the fit's rigid-body torque is zero), integrated finely under the law ``kp (p* - q) +
kd (v* - v)`` evaluated every millisecond with the command of its hold, read at each
hold's end: the physics bench's MIT motor on the physics bench's world step, without an
engine.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("scipy")

from skel_ros.analysis.series import JointSeries
from skel_ros.identify import fit as f

TRUTH = {"armature": 0.002, "damping": 0.05, "friction": 0.01}
KP, KD = 20.0, 0.2  # N m/rad, N m s/rad at the joint
LAW_STEP = 0.001  # s between two evaluations of the law
PERIOD = 0.005  # s, the control period
UNEQUAL = (0.003, 0.004, 0.005, 0.007, 0.010, 0.014)  # s, holds of a loop that is slowed
DURATION = 8.0
MODEL = {"j": dict.fromkeys(TRUTH, 0.0)}


def _wanted(t: float) -> tuple[float, float]:
    w1, w2 = 2 * math.pi * 0.25, 2 * math.pi * 0.6
    return (0.6 * math.sin(w1 * t) + 0.15 * math.sin(w2 * t),
            0.6 * w1 * math.cos(w1 * t) + 0.15 * w2 * math.cos(w2 * t))


def _run(holds: tuple[float, ...], seed: int = 1, *, lost: float = 0.0, between: float = 0.0,
         jumps: float = 0.0, sent_after: float = 0.0) -> tuple[JointSeries, JointSeries]:
    """The readings (one at each hold's end) and the goals as written (one per hold).

    ``lost``: the share of the readings not recorded (a publisher slower than the loop
    just then); ``between``: the share of holds with a reading in the middle too (a read
    between two cycles, which repeats the last frame); ``jumps``: rad, the spread of a
    random step added to each goal (a slowed loop's goals, which catch up unevenly);
    ``sent_after``: s from a write's stamp to its frame's sending, when the motor
    measured the reading that answers it (and is stamped).
    """
    rng = np.random.default_rng(seed)
    j, b, c = TRUTH["armature"], TRUTH["damping"], TRUTH["friction"]
    q = v = tau = t = 0.0
    readings, writes = [], []
    sub = 10
    while t < DURATION:
        if not lost or rng.random() >= lost:
            readings.append((t, q, v, tau))  # the reply to this write: the last hold's end
        goal, speed = _wanted(t)
        goal += rng.normal(0.0, jumps) if jumps else 0.0
        writes.append((t - sent_after, goal))  # stamped before its frame went
        hold = float(rng.choice(holds))
        steps = round(hold / LAW_STEP)
        middle = (int(rng.integers(1, steps)) if between and steps > 1 and rng.random() < between
                  else -1)
        for step in range(steps):
            if step == middle:
                readings.append((round(t + step * LAW_STEP, 9), q, v, tau))
            tau = KP * (goal - q) + KD * (speed - v)
            for _ in range(sub):
                v += (tau - b * v - c * np.sign(v)) / j * (LAW_STEP / sub)
                q += v * (LAW_STEP / sub)
        t = round(t + hold, 9)
    rt, rq, rv, rtau = (np.array(col) for col in zip(*readings, strict=True))
    wt, wq = (np.array(col) for col in zip(*writes, strict=True))
    nan = np.full((wt.size, 1), np.nan)
    return (JointSeries.from_samples("real", rt, ["j"], rq[:, None], rv[:, None], rtau[:, None]),
            JointSeries.from_samples("written", wt, ["j"], wq[:, None], nan, nan, held=True))


def _fit(readings: JointSeries, written: JointSeries | None) -> dict[str, float]:
    samples = f.prepare("motor", readings, None, ["j"], written=written)
    corrected = f.hold_corrected(samples, {"j": f.HoldCorrection(KP, KD, 1.0, PERIOD,
                                                                  LAW_STEP)})
    (fit,) = f.fit_joints([corrected], [corrected.lowpass(corrected.tau)], MODEL)
    assert fit.fixed == {}, fit.fixed
    return fit.values


def _errors(values: dict[str, float]) -> dict[str, float]:
    return {k: values[k] / TRUTH[k] - 1.0 for k in TRUTH}


def test_unequal_holds_from_the_goals_as_written_give_back_the_truth() -> None:
    readings, written = _run(UNEQUAL)
    errors = _errors(_fit(readings, written))
    assert all(abs(e) < 0.08 for e in errors.values()), errors


@pytest.mark.parametrize(("case", "options"), [
    ("readings lost", {"lost": 0.05}),
    ("readings between writes", {"between": 0.05}),
    ("goals that jump", {"jumps": 0.01}),
    ("frames sent after the write's stamp", {"sent_after": 2e-4}),
])
def test_what_a_slowed_loop_records_gives_back_the_truth(case: str, options: dict) -> None:
    """Within 10 % over five runs each (the issue's goal).

    A hold whose reading was not recorded takes its law from its written goal and its
    neighbours' laws (before: merged into the next hold, which took that hold's law for
    both: armature -16 to +48 % with one reading in twenty lost); a reading taken between
    two writes is measured under its own hold's command; one stamped just after a write
    (when its frame went) under the command before (planted: ``ANSWER_WITHIN`` 0, the
    joint's readings unexplained), and each hold starts when its frame went, not at its
    write's stamp (planted: at the stamp, 0.2 ms early here: damping +12 %, the law's
    ``kp`` times that); goals that jump swing the measured velocity across zero between
    reversals: the reversals that leave samples out are the low-passed velocity's, and
    the friction's column is the mean sign of the velocity inside each hold (before: the
    measured velocity's reversals and the sign of each sample's mean velocity: armature
    to -15 %, friction to -33 %).
    """
    for seed in range(1, 6):
        readings, written = _run(UNEQUAL, seed, **options)
        errors = _errors(_fit(readings, written))
        assert all(abs(e) < 0.1 for e in errors.values()), (case, seed, errors)


def test_unequal_holds_taken_for_the_period_are_a_quarter_short() -> None:
    """Without the goals as written: what the recording alone allows (and why to record
    them when the loop may be slowed)."""
    readings, _ = _run(UNEQUAL)
    errors = _errors(_fit(readings, None))
    assert errors["damping"] < -0.2, errors
    assert errors["armature"] < -0.2, errors


def test_equal_holds_give_the_same_values_either_way() -> None:
    readings, written = _run((PERIOD,))
    with_goals, without = _fit(readings, written), _fit(readings, None)
    for name, truth in TRUTH.items():
        assert with_goals[name] == pytest.approx(truth, rel=0.02), (name, with_goals)
        assert with_goals[name] == pytest.approx(without[name], rel=0.01), (name, without)


def test_the_measured_hold_is_the_mean_hold_each_instant_sees() -> None:
    """identified.yaml's ``period`` of such a joint: what the loop held, not its period."""
    readings, written = _run(UNEQUAL)
    samples = f.prepare("motor", readings, None, ["j"], written=written)
    lengths = np.array(UNEQUAL)
    weighted = float(np.sum(lengths ** 2) / np.sum(lengths))  # a long hold lasts longer
    assert f.measured_hold([samples], "j") == pytest.approx(weighted, rel=0.05)
    hold = f.HoldCorrection(KP, KD, 1.0, PERIOD, LAW_STEP)
    (measured,) = f.measured_holds({"j": hold}, {"j": f.measured_hold([samples], "j")}
                                   ).values()
    assert measured.period == pytest.approx(weighted, rel=0.05)
    unwritten = f.prepare("motor", readings, None, ["j"])
    assert f.measured_hold([unwritten], "j") is None
    assert f.measured_holds({"j": hold}, {"j": f.measured_hold([unwritten], "j")}) == {
        "j": hold}
