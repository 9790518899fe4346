"""Identify joint parameters from recorded runs: delay, servo gains, damping, friction, armature.

Two problems, each linear in its unknowns once the recording is on a uniform grid
(:func:`prepare`: the measured stream resampled at its own median rate, samples next to
a gap left out):

1. **Delay and servo gains** (:func:`fit_servo`), from the commands: a position servo's
   torque answers the error between the command it got ``delay`` ago and where the joint
   is, ``tau = kp (q_cmd(t - delay) - q) - kd qd + k0``; for each candidate delay (a
   1 ms grid) the gains are a linear least-squares fit, and the delay is the one that
   explains the torque best. ``kp`` and ``kd`` describe the robot's servo as the
   recording saw it (its position gain, its motor's back-EMF and derivative gain). Large
   errors, where a drive saturates, are left out; a fit that explains less than
   :data:`SERVO_R2` of the torque's variance, whose delay interval is wider than
   :data:`DELAY_SPREAD`, or whose residual has a rival minimum (:data:`ALIAS_MARGIN`)
   gives no delay (reported, with why). ``q_cmd`` is the command as the robot had it
   (:meth:`Samples.commanded`: a stream of targets held, a trajectory's samples joined;
   the goals as the hardware wrote them when the recording has them, :func:`write_wait`).
   An MIT motor in impedance mode is sent the targets' velocity too: its law's gains are
   the hardware YAML's, and only its delay is fitted (:class:`MotorLaw`,
   :func:`fit_law_delay`).
2. **Armature, viscous damping, Coulomb friction** (:func:`fit_joints`), from the
   torques: what the motors give beyond the links' own dynamics
   (:class:`~skel_ros.sim.inverse_dynamics.RigidDynamics`) is
   ``armature qdd + damping qd + friction sign(qd)``
   (:mod:`skel_ros.identify.regressor`), solved with ``scipy.optimize.least_squares``
   within bounds (every value >= 0). Both sides go through one zero-phase low-pass
   (:data:`CUTOFF`; Gautier's parallel filtering: the torque beyond the links' and each
   regressor column alike), so a torque's fast part never meets an acceleration that
   lacks it; the acceleration is the velocity's central difference.

Before solving, the identifiability of each joint's parameters is checked on the
Jacobian (the regressor, its columns scaled to unit length): a singular value below
:data:`IDENTIFIABLE` of the largest means a direction the data cannot see; the parameters
that weigh in it are not fitted and keep the model's value (reported as such); so do all
of a joint's when the residual is larger than the torque the fit explains (readings that
are mostly noise: a drive's chatter, a load sensor). After
solving, each fitted value gets a 95 % interval from the covariance
``s^2 (J^T J)^-1`` at the solution (``s^2`` the residual variance), widened for the
residual's correlation (:func:`correlation_factor`; at least the low-pass's own: of ``n``
filtered samples only about ``2 f_c T n`` are independent). A fitted value whose interval
is wider than :data:`LOOSE` of it is told loosely (:attr:`JointFit.loose`): kept, and
reported as such, not as a value the recording pins down.

:func:`solve` is that check, fit and interval for any bounded linear problem: the
payload's joint problem (:mod:`skel_ros.identify.payload`) uses it too.

**An MIT motor's torque reading** (:func:`hold_corrected`, before both problems). An MIT
motor in impedance or position mode holds each command ``(p*, v*, kp, kd, t_ff)`` for one
control period ``T`` and evaluates ``u = kp (p* - p) + kd (v* - v) + t_ff`` every ``dt``
(its current loop; the physics bench's world step, :mod:`skel_ros.physical.mit`), each
value acting for ``dt``. Within a hold only ``p`` and ``v`` change, so the ``n = T / dt``
values fall along a line: ``u_i = u_0 - a i dt``, ``a = kp v + kd v'`` (``v'`` the motor's
acceleration). The joint moves by their mean, ``u_0 - a (n - 1) dt / 2``, which acts over
the whole hold (its centre ``T / 2`` before the hold's end). The motor answers the next
command before applying it, and its reply carries the last value, ``u_0 - a (n - 1) dt``,
with the position and velocity of that instant (the bench: the world stepped to the
frame's time, the command queued): the reading ``r`` is the hold's mean less ``a (T - dt)
/ 2``, and late by ``T / 2``. At the joint (motor position ``direction * gear_ratio * q``
plus an offset, joint torque ``direction * gear_ratio * u``) ``a`` becomes ``g^2 (kp qd +
kd qdd)``, ``g`` the gear ratio, and the hold that ends at ``t + T / 2`` is centred at
``t``: the torque that moved the joint at ``t`` is ``r(t + T / 2) + g^2 (kp qd(t) + kd
qdd(t)) (T - dt) / 2``. Uncorrected, a fit finds the damping short by ``g^2 kp (T - dt) /
2`` and the armature by ``g^2 kd (T - dt) / 2`` (:meth:`HoldCorrection.offsets`), and the
half-period lag biases both further through the torque's own rate of change (the armature
by ``T / 2`` times the damping the readings show). Velocity mode holds ``kd`` alone
(``kp`` 0); effort mode's torque does not depend on the motion. All this takes each
command to be held for one whole period: a command written between two cycles (the
hardware backend writes one at once when it comes after a pause; a stream's go with the
cycles) cuts a hold short, and the physics
bench's motor applies a truth's ``delay`` after answering, so its reading falls anywhere
in the hold unless the delay is a whole number of periods and the loop keeps time to the
world's step. Such readings carry less of the bias (docs/identify.md measures it).

Every recording is split: its first :data:`FIT_SHARE` is fitted, the rest held out for
the before/after comparison. No ROS; MuJoCo through :mod:`skel_ros.sim.inverse_dynamics`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from skel_ros.identify.regressor import PARAMETERS, STILL_SPEED, joint_regressor, moving

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.analysis.series import JointSeries
    from skel_ros.sim.inverse_dynamics import RigidDynamics

__all__ = [
    "BARELY_MOVED",
    "FIT_SHARE",
    "IDENTIFIABLE",
    "LOOSE",
    "HoldCorrection",
    "IdentifyError",
    "JointFit",
    "MotorLaw",
    "Samples",
    "ServoFit",
    "Solution",
    "blind_parameters",
    "delayed_motors",
    "drive_torques",
    "fit_joints",
    "fit_law_delay",
    "fit_servo",
    "held_out_rms",
    "hold_corrected",
    "hold_lengths",
    "mean_speed",
    "measured_hold",
    "measured_holds",
    "model_where_untold",
    "mostly_noise",
    "predicted",
    "prepare",
    "residual_torques",
    "solve",
    "split",
    "write_wait",
]

Vector = npt.NDArray[np.float64]

FIT_SHARE: Final = 0.7
"""The share of every recording (from its start) that is fitted; the rest is held out."""
IDENTIFIABLE: Final = 1e-3
"""Singular values below this share of the largest mark a direction the data cannot see."""
Z95: Final = 1.959964
LOOSE: Final = 0.1
"""A fitted value whose 95 % interval's half-width is more than this share of it is told
loosely (:attr:`JointFit.loose`): the recording does not pin it within +-10 %, the
precision identification aims at. On the physics bench's quadruped (2026-11-30) the
armatures of a 60 s run at 4 rad/s^2 came with intervals of +-25 % to +-256 % and errors
of -41 to +68 %; at 16 rad/s^2, +-9 % to +-21 % and -6.1 to +8.1 %."""
SERVO_R2: Final = 0.95
"""A servo fit explaining less of the torque's variance than this gives no delay."""
DELAY_SPREAD: Final = 0.01
"""s: a delay interval wider than this gives no delay."""
MAX_DELAY: Final = 0.1
"""s: the longest command-to-response delay looked for."""
ALIAS_MARGIN: Final = 0.05
"""A second local minimum of the servo fit's residual, more than 5 ms from the best and
within this share of it, gives no delay. A stream of held targets steps the same way every
command period, so delays a period apart fit its steps alike and only the servo's smooth
response tells them apart; on a joint that carries little load (a few encoder pulses of
error, a Feetech's startup torque) that part is faint. On the physics bench's recordings
(seven of the arm, two of the SO-101, 2026-11-29 23:24 to 2026-11-30 02:19) the four
delays more than a period off their truth had a rival within 0-3.5 %, the 29 others none
closer than 5.6 %."""
CUTOFF: Final = 3.0
"""Hz: the low-pass every term of the torque balance goes through (at most a quarter of
the sample rate)."""
_REACH: Final = 0.4  # s, how far the low-pass's response reaches (samples near a gap: out)
_LINEAR: Final = 0.5  # the share of the errors (smallest first) a servo is fitted on
_WEIGHS: Final = 0.3  # a parameter's share in a blind direction that makes it unidentifiable
_GAP: Final = 3.0  # a gap longer than this many periods drops the samples beside it
ANSWER_WITHIN: Final = 5e-4
"""s: a reading stamped this soon after a write answers it: it was measured as the frame
came, under the command before (a reading is stamped when its frame was sent, just after
the write's own stamp: on the physics bench's quadruped, 96 % of all readings came within
0.05 ms of a write, and about 3 % between writes)."""
HOLD_BRIDGE: Final = 0.05
"""s: the longest span of holds without a reading of their own whose law is taken from
their written goals and their neighbours' laws (:func:`_per_hold`)."""
_INSTANTS: Final = 64  # a hold's law evaluations at most (a longer hold: spread evenly)
_EMPTY: Final = 1e-9  # a column this much smaller than the largest is rounding errors only
BARELY_MOVED: Final = (f"the joint moved faster than {STILL_SPEED:g} rad/s (m/s on a slide joint)"
                       " in too few samples of the fitted part")


class IdentifyError(ValueError):
    """A recording or model that cannot be identified from (says which and why)."""


@dataclass(frozen=True)
class Samples:
    """One recording on a uniform grid (:func:`prepare`).

    Attributes:
        source: the recording.
        joints: the joints, the columns of every array.
        t: s, the grid.
        q, qd, tau: measured positions, velocities, torques.
        qdd: accelerations, the velocities' central difference.
        command: the commanded positions (NaN before the first command).
        valid: per sample, whether it is away from gaps and edges.
        window: samples the low-pass's response reaches.
        sent: the command stream itself, for :meth:`commanded` between the grid's
            samples (None: ``command`` linear between them).
        written: the goals as the hardware wrote them, stamped when written
            (``/real/written_goals``), for :meth:`commanded` (None: not recorded).
        wait: s, how long a stream's goals waited on average from their arrival to
            their write (:func:`write_wait`; 0 without ``written``).
        readings: the measured stream as recorded, at its own stamps (for
            :func:`hold_corrected`, which places each reading in the hold it ends).
        direction: per sample and joint, the share of the sample's period the joint
            moved forward less the share it moved back (the friction's column, from the
            motion inside each hold: :func:`hold_corrected`); None or NaN: ``sign(qd)``.
    """

    source: str
    joints: tuple[str, ...]
    t: Vector
    q: Vector
    qd: Vector
    qdd: Vector
    tau: Vector
    command: Vector
    valid: npt.NDArray[np.bool_]
    window: int = 1
    sent: JointSeries | None = None
    written: JointSeries | None = None
    wait: float = 0.0
    readings: JointSeries | None = None
    direction: Vector | None = None

    @property
    def period(self) -> float:
        """S between samples."""
        return float(self.t[1] - self.t[0]) if self.t.size > 1 else 0.0

    def part(self, keep: npt.NDArray[np.bool_]) -> Samples:
        """The same recording with only the samples ``keep`` counted valid."""
        return replace(self, valid=self.valid & keep)

    def commanded(self, k: int, times: Vector, *, joined: bool = False) -> Vector:
        """Joint ``k``'s command at ``times`` as its robot had it (NaN before the first).

        From the command stream itself (:meth:`JointSeries.target_at`: a stream of targets
        held from each to the next, as the robot holds it and the simulation too,
        :mod:`skel_ros.sim.actuation`; a followed trajectory's samples joined by straight
        lines); without it, ``command`` linear between the grid's samples. ``joined``:
        a stream's targets joined by straight lines too (as the hardware node spreads
        them for an impedance-mode joint: :func:`fit_law_delay`); else the goals as the
        hardware wrote them when recorded (:attr:`written`).
        """
        joint = self.joints[k]
        if not joined and self.written is not None and joint in self.written.joint_names:
            return self.written.held_at(joint, times)
        if self.sent is not None and joint in self.sent.joint_names:
            return (self.sent.resample if joined else self.sent.target_at)(joint, times)
        return np.interp(times, self.t, self.command[:, k], left=np.nan)

    @property
    def cutoff(self) -> float:
        """Hz, the low-pass's cutoff: :data:`CUTOFF`, at most a quarter of the rate."""
        return min(CUTOFF, 0.25 / self.period)

    @property
    def independent_share(self) -> float:
        """The share of the samples that are independent once low-passed (``2 f_c T``)."""
        return min(1.0, 2.0 * self.cutoff * self.period)

    def lowpass(self, values: Vector) -> Vector:
        """``values`` (samples first) through the zero-phase low-pass (:data:`CUTOFF`)."""
        from scipy.signal import butter, filtfilt

        b, a = butter(4, self.cutoff, fs=1.0 / self.period)
        return np.asarray(filtfilt(b, a, np.nan_to_num(values), axis=0), dtype=float)

    def regressor(self, k: int) -> Vector:
        """Joint ``k``'s regressor rows, every column low-passed (module docstring)."""
        direction = None if self.direction is None else self.direction[:, k]
        return self.lowpass(joint_regressor(self.qd[:, k], self.qdd[:, k], direction))

    def steady(self, k: int) -> npt.NDArray[np.bool_]:
        """Joint ``k``'s samples that enter its regressor.

        Valid, moving, and no reversal of its velocity within the low-pass's reach (a
        friction's step there is where the models of friction differ most). The velocity
        as the fit sees it, low-passed: a loop whose goals jump (a slowed loop's uneven
        holds) swings the measured velocity across zero between reversals, and counting
        those left a few of the samples, not a fair share of them (armature 25 % off on
        ``test/identify/test_irregular_holds.py``'s jumping goals).
        """
        sign = np.sign(self.lowpass(self.qd[:, k]))
        flips = np.zeros(sign.shape, dtype=bool)
        flips[1:] = sign[1:] != sign[:-1]
        near = np.convolve(flips.astype(float), np.ones(self.window), mode="same") > 0
        return self.valid & moving(self.lowpass(self.qd[:, k])) & ~near


@dataclass(frozen=True)
class Pulses:
    """How a position servo's goal is a whole number of its encoder's pulses.

    Attributes:
        size: rad at the actuator per pulse (a Dynamixel X or an STS servo: 2 pi / 4096).
        zero_offset: the actuator's position at the joint's zero (rad).
        scale: actuator turns per joint turn, signed (direction times gear ratio).
    """

    size: float
    zero_offset: float = 0.0
    scale: float = 1.0


def on_pulses(command: JointSeries, pulses: Mapping[str, Pulses]) -> JointSeries:
    """``command`` with each joint of ``pulses`` at the goal its servo is sent.

    A bus servo's driver writes the nearest whole pulse of each goal, and the servo's own
    law errs in whole pulses from it: the commanded position itself, a fraction of a pulse
    off, is not what the servo's law follows. On a joint that carries little load its
    position error is a few pulses, and that fraction, an error in the servo fit's
    regressor, shrinks its ``kp`` and moves its delay (the bundled arm's shoulder yaw: kp
    8.8-17 for 18.9 and a delay 1-11 ms against 15 ms for the other joints, on the
    physics bench). Other joints are left as they are.
    """
    if not pulses:
        return command
    positions = np.array(command.positions, dtype=float, copy=True)
    for k, joint in enumerate(command.joint_names):
        p = pulses.get(joint)
        if p is None:
            continue
        actuator = p.zero_offset + p.scale * positions[:, k]
        positions[:, k] = (np.round(actuator / p.size) * p.size - p.zero_offset) / p.scale
    positions.setflags(write=False)
    return replace(command, positions=positions)


def write_wait(command: JointSeries, written: JointSeries) -> float:
    """s, how long a stream's goals waited on average for the write that sent them.

    The hardware node writes a stream's goals with its control loop's cycles
    (docs/hardware.md, "The node"): a goal waits for the next cycle, and of two in one
    period only the later is written. Each write took the last command that arrived
    before it (the recorder's receive time: about the node's, one machine); over the
    writes that took a new one, the mean of the difference. A simulation takes each goal
    as it comes: the delay it is to use is the servo's from the write plus this.
    """
    times = command.times
    inside = written.times[written.times >= times[0]]
    last = np.searchsorted(times, inside, side="right") - 1
    new = np.ones(last.shape, dtype=bool)
    new[1:] = last[1:] != last[:-1]
    return float(np.mean(inside[new] - times[last[new]])) if new.any() else 0.0


def drive_torques(samples: Samples, back_emf: Mapping[str, float]) -> Samples:
    """``samples`` with each joint of ``back_emf`` read as its drive's duty, made a torque.

    A servo whose effort reading is its drive's duty cycle times its stall torque (a
    Feetech's Present_Load: "the voltage duty cycle of the drive", not the current)
    reports the torque its motor would give at rest. Turning, the motor's back-EMF takes
    ``stall_torque / no_load_speed`` times its speed off that (the DC motor's torque
    ``stall_torque (duty - speed / no_load_speed)``): at the joint ``b qd``, ``b`` that
    ratio times the gear ratio squared (``back_emf``'s value). Left as read, the fit would
    give the joint's damping plus ``b`` (0.41 N m s/rad on an STS3215-C001, five to ten times an
    arm joint's own), and the servo fit a ``kd`` short by as much; made torques, the joint
    keeps its own damping and the servo's law carries the motor's.
    """
    if not back_emf:
        return samples
    tau = samples.tau.copy()
    for k, joint in enumerate(samples.joints):
        b = back_emf.get(joint)
        if b is not None:
            tau[:, k] -= b * samples.qd[:, k]
    return replace(samples, tau=tau)


def prepare(source: str, measured: JointSeries, command: JointSeries | None,
            joints: Sequence[str], *, written: JointSeries | None = None) -> Samples:
    """Put a recording's measured stream (and its commands) on a uniform grid.

    ``written``: the goals as the hardware wrote them (``/real/written_goals``), the
    servo's input as it had it (:attr:`Samples.written`).

    Raises:
        IdentifyError: a joint the stream does not have, no torques recorded, or too
            few samples.
    """
    missing = [j for j in joints if j not in measured.joint_names]
    if missing:
        raise IdentifyError(f"{source}: the {measured.name} joint_states have no "
                            f"{', '.join(map(repr, missing))}")
    times = measured.times
    if times.size < 20:  # noqa: PLR2004 - a few smoothing windows at least
        raise IdentifyError(f"{source}: only {times.size} {measured.name} joint_states")
    period = float(np.median(np.diff(times)))
    if not period > 0.0:
        raise IdentifyError(f"{source}: the {measured.name} joint_states have no time step")
    grid = np.arange(times[0], times[-1], period)
    cols = {f: np.column_stack([measured.resample(j, grid, f) for j in joints])
            for f in ("positions", "velocities", "efforts")}
    no_torque = [j for k, j in enumerate(joints) if not np.isfinite(cols["efforts"][:, k]).any()]
    if no_torque:
        raise IdentifyError(f"{source}: no effort recorded for {', '.join(map(repr, no_torque))}"
                            " (the identification needs the motors' torques)")
    q = cols["positions"]
    qd = cols["velocities"]
    derived = ~np.isfinite(qd)
    if derived.any():  # velocities not recorded: the positions' derivative
        qd = np.where(derived, np.gradient(q, period, axis=0), qd)
    window = max(5, 2 * round(_REACH / period / 2) + 1)
    qdd = np.gradient(qd, period, axis=0)
    tau = cols["efforts"]
    # Samples next to a gap in the stream (or its ends) are not trustworthy once filtered.
    near = np.searchsorted(times, grid)
    after = times[np.clip(near, 0, times.size - 1)]
    before = times[np.clip(near - 1, 0, times.size - 1)]
    gap = (after - before) > _GAP * period
    bad = np.convolve(gap.astype(float), np.ones(window), mode="same") > 0
    bad[: window] = bad[-window:] = True
    valid = ~bad & np.all(np.isfinite(q), axis=1) & np.all(np.isfinite(tau), axis=1)
    cmd = (np.column_stack([command.target_at(j, grid) if j in command.joint_names
                            else np.full(grid.shape, np.nan) for j in joints])
           if command is not None else np.full(q.shape, np.nan))
    wait = (write_wait(command, written) if written is not None and len(written)
            and command is not None and command.held and len(command) else 0.0)
    return Samples(source, tuple(joints), grid, q, qd, qdd, tau, cmd, valid, window, command,
                   written if written is not None and len(written) else None, wait, measured)


@dataclass(frozen=True)
class HoldCorrection:
    """A joint's motor as it holds each command for a control period.

    An MIT motor replies at the hold's end: :func:`hold_corrected` puts back what that
    reading misses. A bus servo (Dynamixel, Feetech) is read at a phase of its hold the
    recording does not show: :func:`~skel_ros.identify.hold_phase.widen_for_hold` widens
    the intervals by as much. :meth:`offsets` is that amount, for both.

    Attributes:
        kp: N m/rad, the law's position gain at the motor (the hardware YAML's; a bus
            servo's fitted one, at the joint, with gear ratio 1).
        kd: N m s/rad, its velocity gain at the motor.
        gear_ratio: motor turns per joint turn.
        period: s, how long each command is held: the control loop's period, or the mean
            hold the goals as written show (:func:`measured_holds`).
        law_step: s between two evaluations of the law (a real motor's current loop:
            tens of microseconds, 0 for this; the physics bench: its world's step).
    """

    kp: float
    kd: float
    gear_ratio: float
    period: float
    law_step: float

    def __post_init__(self) -> None:
        """Refuse what no motor holds: negative gains, a law slower than the hold."""
        if not (self.kp >= 0.0 and self.kd >= 0.0 and self.gear_ratio > 0.0):
            raise IdentifyError(f"a motor's hold needs kp, kd >= 0 and a gear ratio > 0, got"
                                f" kp {self.kp}, kd {self.kd}, gear ratio {self.gear_ratio}")
        if not (self.period > 0.0 and 0.0 <= self.law_step <= self.period):
            raise IdentifyError(f"a motor's law step ({self.law_step} s) must be from 0 to its"
                                f" hold's period ({self.period} s)")

    @property
    def gains(self) -> tuple[float, float]:
        """(kp, kd) at the joint: the motor's times the gear ratio squared."""
        g2 = self.gear_ratio * self.gear_ratio
        return self.kp * g2, self.kd * g2

    def offsets(self) -> tuple[float, float]:
        """(damping, armature) by which the held law's readings fall short: ``k (T - dt) / 2``."""
        kp, kd = self.gains
        half = 0.5 * (self.period - self.law_step)
        return kp * half, kd * half


def hold_lengths(samples: Samples, k: int, nominal: float) -> Vector:
    """Per sample, s that joint ``k``'s goal in effect then was held.

    From its write to the next one (:attr:`Samples.written`); ``nominal`` where the goals
    as written were not recorded, and outside them. A control loop that keeps its period
    holds each goal one period; one the machine slows (a loaded robot computer, a bus
    that takes longer) holds them longer, and what a hold's reading misses grows with it
    (:func:`hold_corrected`): 40 % more on the physics bench's quadruped, whose loop ran
    cycles of 7.1 ms on average for its 5 ms on 2026-11-30.
    """
    lengths = np.full(samples.t.shape, nominal)
    written, joint = samples.written, samples.joints[k]
    if written is None or joint not in written.joint_names:
        return lengths
    column = written.joint_names.index(joint)
    stamps = written.times[np.isfinite(written.positions[:, column])]
    after = np.searchsorted(stamps, samples.t, side="right")
    inside = (after > 0) & (after < stamps.size)
    lengths[inside] = stamps[after[inside]] - stamps[after[inside] - 1]
    return lengths


def measured_hold(parts: Sequence[Samples], joint: str) -> float | None:
    """S, how long ``joint``'s goals were held on average; None without the goals as written.

    Over the valid samples of ``parts`` (:func:`hold_lengths`: each instant counts, so a
    long hold counts as long as it lasted).
    """
    lengths = [hold_lengths(p, p.joints.index(joint), math.nan)[p.valid] for p in parts
               if p.written is not None and joint in p.written.joint_names]
    values = np.concatenate(lengths) if lengths else np.zeros(0)
    values = values[np.isfinite(values)]
    return float(np.mean(values)) if values.size else None


def measured_holds(holds: Mapping[str, HoldCorrection],
                   lengths: Mapping[str, float | None]) -> dict[str, HoldCorrection]:
    """``holds``, each with its joint's measured hold as its period where recorded.

    ``lengths``: per joint, :func:`measured_hold` (None or absent: not recorded). What the
    loop held, where the recordings have the goals as written: for the intervals' bounds,
    the offsets identified.yaml reports and a hold's share of a delay.
    """
    out = {}
    for joint, hold in holds.items():
        length = lengths.get(joint)
        out[joint] = (hold if length is None or length < hold.law_step
                      else replace(hold, period=length))
    return out


def delayed_motors(laws: Mapping[str, MotorLaw], lengths: Mapping[str, float | None]
                   ) -> list[str]:
    """The joints whose motor the goals as written show applying commands late.

    Their :attr:`MotorLaw.motor_delay`'s interval starts beyond half the joint's measured
    hold (``lengths``, :func:`measured_hold`; below that, a motor without a delay, which
    answers each frame before taking it, reads the same). Such a motor's readings fall
    anywhere in its holds, not at their ends (:func:`hold_corrected`'s premise).
    """
    return [joint for joint, law in laws.items()
            if law.motor_delay is not None and lengths.get(joint) is not None
            and law.motor_delay_interval[0] > 0.5 * lengths[joint]]  # type: ignore[operator]


def hold_corrected(samples: Samples, holds: Mapping[str, HoldCorrection]) -> Samples:
    """``samples`` with each held joint's torque as the one that moved it (module docstring).

    Joints not in ``holds`` keep their readings. A held joint's reading ``r`` is the law's
    value at the end of a hold of ``T`` (a command held from its write to the next): the
    mean over the hold is ``r + (kp qd + kd qdd) (T - dt) / 2`` with the joint-side gains
    (:attr:`HoldCorrection.gains`). Without the goals as written, every hold is the
    control period: ``tau(t) = r(t + T/2) + (kp qd(t) + kd qdd(t)) (T - dt) / 2``, ``r``
    linear between samples. With them (:attr:`Samples.written`), each hold has its own
    ``T`` (:func:`_per_hold`): a loop the machine slows holds some goals longer than others.
    """
    tau, qd, qdd = samples.tau.copy(), samples.qd.copy(), samples.qdd.copy()
    direction = (np.full(qd.shape, np.nan) if samples.direction is None
                 else samples.direction.copy())
    t = samples.t
    for k, joint in enumerate(samples.joints):
        hold = holds.get(joint)
        if hold is None:
            continue
        kp, kd = hold.gains
        reading = tau[:, k]
        ahead = np.interp(t + 0.5 * hold.period, t, reading)  # the last sample: its own
        nominal = np.where(np.isfinite(ahead), ahead, reading) + (
            kp * samples.qd[:, k] + kd * samples.qdd[:, k]) * (0.5 * (hold.period - hold.law_step))
        held = _per_hold(samples, k, hold)
        if held is None:
            tau[:, k] = nominal
            continue
        placed = np.isfinite(held[0]) & np.isfinite(held[1]) & np.isfinite(held[2])
        tau[:, k] = np.where(placed, held[0], nominal)
        qd[:, k] = np.where(placed, held[1], qd[:, k])
        qdd[:, k] = np.where(placed, held[2], qdd[:, k])
        direction[:, k] = np.where(placed, held[3], np.nan)
    return replace(samples, tau=tau, qd=qd, qdd=qdd, direction=direction,
                   valid=samples.valid & np.all(np.isfinite(tau), axis=1))


def _per_hold(samples: Samples, k: int, hold: HoldCorrection) -> tuple[Vector, ...] | None:
    """Joint ``k``'s torque, velocity, acceleration and direction on the grid, hold by hold.

    (:func:`hold_corrected`.) A hold runs from a write (:attr:`Samples.written`) to the
    next, from when its frame went (the write's stamp plus the median time from a write's
    stamp to the reading that answers it, stamped when its frame went: ``kp`` times an
    error there is a damping's); its command's law is ``u(t) = c - kp p(t) - kd v(t)``
    with ``c = kp p* + kd v* + t_ff`` the command's own. A reading
    (:attr:`Samples.readings`, stamped when the motor measured it) is measured under the
    command before the write it answers (stamped within :data:`ANSWER_WITHIN` of it) or,
    taken between writes (a read that repeated the last frame), under the command of its
    hold: the last such reading of a
    hold gives its ``c``. A hold without one (its reading not recorded: a publisher
    slower than the loop at that moment) gets ``c`` from its written goal and its
    neighbours': ``c - kp p*`` is ``kd v* + t_ff``, which changes slowly, so it is taken
    linear between the holds that have it (within :data:`HOLD_BRIDGE`). The motion
    between two readings is the cubic through their positions and velocities; the
    hold's torque is the law's mean over its evaluations (every ``law_step``, the last a
    step before its end), its velocity and acceleration the position's and velocity's
    change over it, its direction the mean sign of the velocity there. Each grid sample
    is the mean of these over its own period (each hold weighs as long as it lasted).

    Values joined by lines from the holds' middles weigh a long hold as its neighbours'
    average while its mean differs with its length, and a line for the motion inside a
    long hold misses the law's own swing (holds of 3 to 14 ms on a synthetic motor:
    damping 33 % and 18 % high; with the cubic, 4 %); a hold without its reading merged
    into the next one took that hold's law for both (armature -16 to +48 % with one
    reading in twenty missing): ``test/identify/test_irregular_holds.py``. NaN outside the holds
    read; None without the goals as written or the readings as recorded.
    """
    joint, written, readings = samples.joints[k], samples.written, samples.readings
    if (written is None or readings is None or joint not in written.joint_names
            or joint not in readings.joint_names):
        return None
    goal = written.positions[:, written.joint_names.index(joint)]
    writes, goal = written.times[np.isfinite(goal)], goal[np.isfinite(goal)]
    column = readings.joint_names.index(joint)
    stamps, q, v, r = (readings.times, readings.positions[:, column],
                       readings.velocities[:, column], readings.efforts[:, column])
    keep = np.isfinite(q) & np.isfinite(v) & np.isfinite(r)
    keep[1:] &= np.diff(stamps) > 0.0
    stamps, q, v, r = stamps[keep], q[keep], v[keep], r[keep]
    if stamps.size < 3 or writes.size < 2:  # noqa: PLR2004
        return None
    kp, kd = hold.gains
    # The command each reading was measured under; each hold's last one gives its law.
    under = np.searchsorted(writes, stamps - ANSWER_WITHIN, side="left") - 1
    # A hold starts when its frame reaches the motor: when a reading answering it is
    # stamped, a little after the write's own stamp (the median of that little).
    after = stamps - writes[np.clip(np.searchsorted(writes, stamps, side="right") - 1, 0, None)]
    answers = (after >= 0.0) & (after < ANSWER_WITHIN)
    frames = writes + (float(np.median(after[answers])) if answers.any() else 0.0)
    length = np.diff(frames)
    at = _law_instants(frames[1:], length, hold.law_step)
    pos, vel = _cubic(stamps, q, v, at)
    own = np.full(length.size, -1)
    inside = (under >= 0) & (under < length.size)
    own[under[inside]] = np.flatnonzero(inside)  # in order: the last one stays
    last_pos, last_vel = _cubic(stamps, q, v, stamps[own] - hold.law_step)
    constant = np.where(own >= 0, r[own] + kp * last_pos + kd * last_vel, np.nan)
    constant = _bridged(constant - kp * goal[:-1], writes[:-1]) + kp * goal[:-1]
    at_frames, speed_at_frames = _cubic(stamps, q, v, frames)
    per_hold = (constant - kp * _row_means(pos) - kd * _row_means(vel),
                np.diff(at_frames) / length, np.diff(speed_at_frames) / length,
                _row_means(np.sign(vel)))
    return tuple(_grid_means(samples, frames, length, values) for values in per_hold)


def _row_means(values: Vector) -> Vector:
    """Each row's mean over its finite values (NaN: none)."""
    count = np.count_nonzero(np.isfinite(values), axis=1)
    total = np.sum(np.nan_to_num(values), axis=1)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _law_instants(ends: Vector, length: Vector, step: float) -> Vector:
    """The instants at which a motor's law is evaluated in each hold (a row per hold).

    A hold of ``length`` s ending at ``ends``. ``step``: the law's; each evaluation at a
    step's start, the last a step before the hold's end (0: continuous, for which the
    middles of 32 equal parts stand). At most :data:`_INSTANTS` per hold: a longer one's
    spread evenly over it. NaN-padded.
    """
    steps = (np.maximum(np.rint(length / step), 1) if step > 0.0
             else np.full(length.shape, 32.0))
    count = np.minimum(steps, _INSTANTS)
    k = np.arange(int(count.max()))[None, :]
    if step > 0.0:
        spacing = np.where(steps > _INSTANTS, length / count, step)[:, None]
        at = ends[:, None] - spacing * (k + 1)
    else:
        at = ends[:, None] - length[:, None] * (k + 0.5) / count[:, None]
    return np.where(k < count[:, None], at, np.nan)


def _cubic(stamps: Vector, q: Vector, v: Vector, at: Vector) -> tuple[Vector, Vector]:
    """Position and velocity at the times ``at`` (any shape; NaN outside the readings).

    Between two readings, the cubic through their positions and velocities.
    """
    inside = np.isfinite(at) & (at >= stamps[0]) & (at <= stamps[-1])
    t = np.where(inside, at, stamps[0])
    i = np.clip(np.searchsorted(stamps, t, side="right") - 1, 0, stamps.size - 2)
    span = stamps[i + 1] - stamps[i]
    x = (t - stamps[i]) / span
    x2, x3 = x * x, x * x * x
    q0, v0, q1, v1 = q[i], v[i], q[i + 1], v[i + 1]
    pos = ((2 * x3 - 3 * x2 + 1) * q0 + (x3 - 2 * x2 + x) * span * v0
           + (-2 * x3 + 3 * x2) * q1 + (x3 - x2) * span * v1)
    vel = ((6 * x2 - 6 * x) * (q0 - q1) / span + (3 * x2 - 4 * x + 1) * v0
           + (3 * x2 - 2 * x) * v1)
    return np.where(inside, pos, np.nan), np.where(inside, vel, np.nan)


def _bridged(values: Vector, times: Vector) -> Vector:
    """``values`` with each NaN between two known ones taken on the line between them.

    Only where those two are at most :data:`HOLD_BRIDGE` apart in ``times``.
    """
    known = np.isfinite(values)
    if np.count_nonzero(known) < 2:  # noqa: PLR2004
        return values
    at = times[known]
    after = np.searchsorted(at, times)
    between = ~known & (after > 0) & (after < at.size)
    ends = np.clip(after, 1, at.size - 1)
    between &= at[ends] - at[ends - 1] <= HOLD_BRIDGE
    return np.where(between, np.interp(times, at, values[known]), values)


def _grid_means(samples: Samples, knots: Vector, length: Vector, values: Vector) -> Vector:
    """The mean of per-hold ``values`` (holds between ``knots``) over each grid period.

    NaN where a period reaches a hold without a value or beyond the holds.
    """
    half = 0.5 * samples.period
    low, high = samples.t - half, samples.t + half
    integral = np.concatenate([[0.0], np.cumsum(np.nan_to_num(values) * length)])
    mean = (np.interp(high, knots, integral) - np.interp(low, knots, integral)) / (2 * half)
    unknown = np.concatenate([[0.0], np.cumsum(~np.isfinite(values) * length)])
    gap = np.interp(high, knots, unknown) - np.interp(low, knots, unknown) > 0.0
    mean[gap | (low < knots[0]) | (high > knots[-1])] = np.nan
    return mean


def split(samples: Samples, share: float = FIT_SHARE) -> tuple[Samples, Samples]:
    """(fit, held out): the samples before and after ``share`` of the commanded time."""
    commanded = np.any(np.isfinite(samples.command), axis=1)
    t = samples.t[commanded] if commanded.any() else samples.t
    cut = t[0] + share * (t[-1] - t[0])
    early = samples.t < cut
    return samples.part(early), samples.part(~early)


@dataclass(frozen=True)
class ServoFit:
    """A joint's command-to-torque delay and servo gains (:func:`fit_servo`)."""

    joint: str
    delay: float
    delay_interval: tuple[float, float]
    kp: float
    kd: float
    r2: float
    problem: str = ""
    """Why the delay is not to be trusted ("" when it is)."""
    wait: float = 0.0
    """s of ``delay`` that a stream's goals waited for the hardware's write
    (:func:`write_wait`: fitted from the goals as written; 0 otherwise)."""


@dataclass(frozen=True)
class MotorLaw:
    """A joint's motor law as the hardware YAML sets it: its gains given, its delay fitted.

    An MIT motor in impedance mode runs ``kp (p* - p) + kd (v* - v)`` with the gains the
    hardware node sends it (the YAML's) and the velocity of its targets ``v*``: the servo
    fit's plain law lacks ``kd v*`` and would trade it against its delay and gains, so the
    gains are the YAML's and only the delay is fitted (:func:`fit_law_delay`). The
    simulation runs this law (identified.yaml's ``servo`` with ``velocity_feedforward``;
    no integral, no gravity compensation: the motor has none of them).

    Attributes:
        joint: the DOF.
        kp: N m/rad at the joint (the motor's times its gear ratio squared).
        kd: N m s/rad at the joint.
        source: where the gains come from (the hardware YAML's path and the mode).
        delay: s from the command's arrival at the hardware node to the motor's law taking
            it, beyond what the node's own cycle adds (0 when not identified).
        delay_interval: s, the delays the readings do not tell apart from it.
        problem: why the delay is not identified ("" when it is).
        motor_delay: s from the goal's write to the motor's law taking it, from the goals
            as written (None: not recorded, or not identified); ``delay`` less this is
            the hardware node's (a motion limiter that trails the stream).
        motor_delay_interval: s, as ``delay_interval``.
    """

    joint: str
    kp: float
    kd: float
    source: str
    delay: float = 0.0
    delay_interval: tuple[float, float] = (math.nan, math.nan)
    problem: str = ""
    motor_delay: float | None = None
    motor_delay_interval: tuple[float, float] = (math.nan, math.nan)


def fit_law_delay(parts: Sequence[Samples], law: MotorLaw, period: float, spread: float, *,
                  step: float = 1e-3, max_delay: float = MAX_DELAY) -> MotorLaw:
    """``law`` with the delay its readings show (:class:`MotorLaw`).

    The law is known, so its readings give the target the motor held: from a reading
    ``r`` with the joint at ``q``, ``qd``, ``s = q + (r + kd qd) / kp = p* + (kd / kp)
    v*``, about the held target ``kd / kp`` later. ``s`` is compared with the commands
    joined by straight lines (:meth:`Samples.commanded`) ``lag - kd / kp`` earlier, for
    every ``lag``, on the samples where the joint moves near its command
    (:func:`_linear_part`); the best ``lag`` is the whole way from a command to the law:
    the motor's delay, one stream period (``spread``: the hardware node reaches each of a
    stream's targets when the next one comes, 0 for a trajectory, which it follows at
    every cycle) and half a control period (``period``): a reading is stamped when the
    motor measured it, and carries the law under the latest frame that reached it by
    then; with a frame every cycle, that frame left the node on average half a period
    before the instant the motor's delay reaches back to (a loop that keeps time only
    to a fraction of a millisecond, a delay that is not a whole number of periods). A
    motor with no delay at all answers each frame before it takes it, a whole period: its
    delay comes out up to half a period long. The interval: the lags within the noise
    (as :func:`fit_servo`), widened by half a period each way (where, within its
    period, the frame in effect was sent).

    With the goals as written recorded, ``s`` is compared with those too, the targets
    the motor was sent (less only the half period): the motor's own delay
    (:attr:`MotorLaw.motor_delay`). What the stream's comparison finds beyond it is the
    hardware node's: a motion limiter that trails a stream reaching its bounds.
    """
    if not (law.kp > 0.0 and parts):
        return replace(law, problem="no position gain (kp) to read the held target with")
    k = parts[0].joints.index(law.joint)
    ahead = law.kd / law.kp
    signal = [p.q[:, k] + (p.tau[:, k] + law.kd * p.qd[:, k]) / law.kp for p in parts]
    # Only while the joint moves (at rest, before the commands start and after they end,
    # the node may hold what it measured), and near its command (the smaller errors, as
    # for a servo: a command far away, the run's first move to its start, reaches the
    # motor through the node's motion limiter).
    moved = [_linear_part(p, k) & moving(p.qd[:, k]) for p in parts]

    rows = list(zip(parts, signal, moved, strict=True))
    search = {"ahead": ahead, "period": period, "step": step, "max_delay": max_delay}
    delay, interval, problem = _law_lag(
        rows, lambda p, times: p.commanded(k, times, joined=True), 0.5 * period + spread,
        **search)
    law = replace(law, delay=delay, delay_interval=interval, problem=problem)
    if all(p.written is not None and law.joint in p.written.joint_names for p in parts):
        own, own_interval, own_problem = _law_lag(
            rows, lambda p, times: p.written.resample(law.joint, times),  # type: ignore[union-attr]
            0.5 * period, **search)
        if not own_problem:
            law = replace(law, motor_delay=own, motor_delay_interval=own_interval)
    return law


def _law_lag(rows: Sequence[tuple[Samples, Vector, npt.NDArray[np.bool_]]],
             commands: Callable[[Samples, Vector], Vector], base: float, *, ahead: float,
             period: float, step: float, max_delay: float,
             ) -> tuple[float, tuple[float, float], str]:
    """(delay, interval, why not identified) of a law's held targets behind ``commands``.

    (:func:`fit_law_delay`.) ``rows``: per part, its samples, the held target ``s`` and
    the samples to compare; ``commands(part, times)``: the targets to compare with;
    ``base``: s of every lag that is not the motor's.
    """
    lags = np.arange(0.0, max_delay + base + 0.5 * step, step)
    rss = np.full(lags.size, np.inf)
    best: tuple[float, Vector, float] | None = None
    for i, lag in enumerate(lags):
        errors = []
        for p, s, on in rows:
            cmd = commands(p, p.t - lag + ahead)
            ok = on & np.isfinite(cmd) & np.isfinite(s)
            errors.append(s[ok] - cmd[ok])
        e = np.concatenate(errors)
        if e.size < 10:  # noqa: PLR2004
            continue
        e = e - np.mean(e)  # an offset (a sag the law's readings already carry): no lag
        rss[i] = float(np.sum(e ** 2))
        if best is None or rss[i] < best[2]:
            best = (float(lag), e, rss[i])
    none = (math.nan, math.nan)
    if best is None:
        return 0.0, none, "too few samples with a command to fit a delay"
    lag, residual, r = best
    near = lags[rss <= r * (1.0 + 3.84 / _independent(residual))]
    low, high = near.min() - base - 0.5 * period, near.max() - base + 0.5 * period
    if lag >= lags[-1] - 0.5 * step:
        return 0.0, none, f"the best delay is the end of the range searched ({max_delay:g} s)"
    if high - low > DELAY_SPREAD + period:
        return 0.0, none, (f"delays from {max(low, 0.0) * 1e3:.0f} to {high * 1e3:.0f} ms "
                           "explain the readings as well")
    return max(lag - base, 0.0), (max(low, 0.0), max(high, 0.0)), ""


def _independent(residual: Vector) -> float:
    """How many of ``residual``'s samples count as independent (at least 1).

    ``n (1 - rho) / (1 + rho)``, ``rho`` its lag-one autocorrelation.
    """
    rho = float(np.clip(np.corrcoef(residual[:-1], residual[1:])[0, 1], 0.0, 0.99))
    return max(residual.size * (1.0 - rho) / (1.0 + rho), 1.0)


def fit_servo(parts: Sequence[Samples], joint: str, step: float = 1e-3,
              max_delay: float = MAX_DELAY) -> ServoFit | None:
    """The delay and gains of ``joint``'s servo (module docstring); None without commands.

    The delay's interval: the candidates whose fit is not worse than the best by more
    than its residual's 95 % noise band (an F-like test on the residual sum of squares).
    """
    k = parts[0].joints.index(joint)
    torques = np.concatenate([p.tau[p.valid, k] for p in parts])
    if torques.size and np.ptp(torques) == 0.0:  # torque off, or a drive that reports none
        return ServoFit(joint, math.nan, (math.nan, math.nan), math.nan, math.nan, 0.0,
                        f"the torque does not change in this recording (always "
                        f"{torques[0]:g} N m): no servo law to fit")
    small = [_linear_part(p, k) for p in parts]
    delays = np.arange(0.0, max_delay + 0.5 * step, step)
    rss = np.full(delays.size, np.inf)
    best: tuple[float, Vector, float] | None = None
    count = 0.0
    for i, d in enumerate(delays):
        rows, target = [], []
        for p, linear in zip(parts, small, strict=True):
            cmd = p.commanded(k, p.t - d)
            ok = linear & np.isfinite(cmd)
            rows.append(np.column_stack([cmd[ok] - p.q[ok, k], -p.qd[ok, k],
                                         np.ones(ok.sum())]))
            target.append(p.tau[ok, k])
        a, b = np.concatenate(rows), np.concatenate(target)
        if a.shape[0] < 10:  # noqa: PLR2004
            continue
        x, *_ = np.linalg.lstsq(a, b, rcond=None)
        residual = b - a @ x
        rss[i] = float(np.sum(residual ** 2))
        if best is None or rss[i] < best[2]:
            best = (float(d), x, rss[i])
            # The residual's samples are not independent (within each recording's run).
            count = _independent(residual)
    if best is None:
        return None
    d, x, r = best
    total = float(np.sum((torques - np.mean(torques)) ** 2))
    # Candidates within the noise: rss <= best (1 + 3.84 / n), n the independent samples.
    near = delays[rss <= r * (1.0 + 3.84 / count)]
    r2 = 1.0 - r / total if total > 0.0 else 0.0
    problem = _servo_problem(r2, d, delays, rss, near)
    # From the goals as written, the delay is the servo's from the write; a simulation
    # takes each goal as it comes, so the delay it uses adds the wait for the write.
    wait = float(np.mean([p.wait for p in parts]))
    return ServoFit(joint, d + wait, (float(near.min()) + wait, float(near.max()) + wait),
                    float(x[0]), float(x[1]), r2, problem, wait)


def _servo_problem(r2: float, best: float, delays: Vector, rss: Vector, near: Vector) -> str:
    """Why a servo fit's delay is not to be trusted ("" when it is): :func:`fit_servo`."""
    if r2 < SERVO_R2:
        return (f"the torque does not follow a linear servo law in this recording (R^2 "
                f"{r2:.2f} < {SERVO_R2})")
    if best >= delays[-1] - 0.5 * (delays[1] - delays[0]):
        return f"the best delay is the end of the range searched ({delays[-1]:g} s)"
    if near.max() - near.min() > DELAY_SPREAD:
        return (f"delays from {near.min() * 1e3:.0f} to {near.max() * 1e3:.0f} ms explain the"
                " torque as well (the delay trades off with the servo's damping here)")
    # Another local minimum more than half DELAY_SPREAD away, within ALIAS_MARGIN.
    r = float(np.min(rss))
    for m in range(1, delays.size - 1):
        if (abs(delays[m] - best) > 0.5 * DELAY_SPREAD and np.isfinite(rss[m])
                and rss[m] <= rss[m - 1] and rss[m] <= rss[m + 1]
                and rss[m] <= r * (1.0 + ALIAS_MARGIN)):
            return (f"delays of {best * 1e3:.0f} and {delays[m] * 1e3:.0f} ms explain the torque"
                    f" about as well (within {ALIAS_MARGIN:.0%}): a stream of held targets"
                    " steps alike every period, and this joint's law leaves the rest too"
                    " faint to choose")
    return ""


def _linear_part(part: Samples, k: int) -> npt.NDArray[np.bool_]:
    """Joint ``k``'s samples whose servo error is small enough to follow its law.

    A servo's drive saturates on large errors (its PWM or current limit), where its
    torque no longer follows the error: only the smaller errors are fitted.
    """
    error = np.abs(part.command[:, k] - part.q[:, k])
    seen = part.valid & np.isfinite(error)
    if not seen.any():
        return seen
    return seen & (error <= np.quantile(error[seen], _LINEAR))


@dataclass(frozen=True)
class JointFit:
    """A joint's identified armature, damping and friction (:func:`fit_joints`).

    Attributes:
        joint: the DOF.
        values: parameter -> value (fitted, or the model's where not identifiable).
        intervals: parameter -> 95 % half-width (fitted parameters only).
        fixed: parameter -> why it kept the model's value.
        model: parameter -> the model's value.
        condition: the condition number of its (scaled) regressor.
        singular_values: of the scaled regressor, largest first.
        samples: how many samples were fitted.
        rms: N m, the torque residual's RMS at the solution.
        notes: what widened the intervals beyond the noise (:mod:`skel_ros.identify.
            hold_phase`).
        speed: rad/s (m/s), the mean speed of the fitted samples (NaN: none fitted).
        bounds: parameter -> the bound on a bias its interval holds beyond the noise's
            (:func:`~skel_ros.identify.hold_phase.widen_for_hold`).
    """

    joint: str
    values: dict[str, float]
    intervals: dict[str, float]
    fixed: dict[str, str]
    model: dict[str, float]
    condition: float
    singular_values: tuple[float, ...]
    samples: int
    rms: float
    notes: list[str] = field(default_factory=list)
    speed: float = math.nan
    bounds: dict[str, float] = field(default_factory=dict)

    @property
    def loose(self) -> dict[str, float]:
        """What the recording tells only loosely: parameter -> half-width over value.

        The fitted parameters whose interval is beyond :data:`LOOSE` of their value
        (``inf`` for a value of 0).
        """
        return {name: _share(width, self.values[name])
                for name, width in self.intervals.items()
                if width > LOOSE * abs(self.values[name])}

    @property
    def loose_from_noise(self) -> set[str]:
        """The :attr:`loose` parameters that are so from the noise.

        Their interval is beyond :data:`LOOSE` without its bias bound too (:attr:`bounds`):
        the noise's part, which more excitation narrows.
        """
        return {name for name in self.loose
                if self.intervals[name] - self.bounds.get(name, 0.0)
                > LOOSE * abs(self.values[name])}


def _share(width: float, value: float) -> float:
    return width / abs(value) if value else math.inf


def mean_speed(y: Vector) -> float:
    """The mean speed of a joint's fitted samples, from its regressor ``y`` (NaN: none)."""
    return float(np.mean(np.abs(y[:, 1]))) if y.shape[0] else math.nan


def residual_torques(parts: Sequence[Samples], dynamics: RigidDynamics) -> list[Vector]:
    """Per recording, the measured torque minus the model's rigid-body torque, low-passed."""
    out = []
    for p in parts:
        rigid = dynamics.torques(p.joints, np.nan_to_num(p.q), np.nan_to_num(p.qd),
                                 np.nan_to_num(p.qdd))
        out.append(p.lowpass(p.tau - rigid))
    return out


def held_out_rms(fits: Sequence[JointFit], parts: Sequence[Samples],
                 excess: Sequence[Vector], added: Sequence[Vector] | None = None
                 ) -> dict[str, tuple[float, float]]:
    """Per joint, the held-out torque's RMS left unexplained: (model's values, identified).

    The torque beyond the links' own, in N m, on the samples each part counts valid.
    ``added``: per part, a torque the identified model has beyond its joints' values
    (an identified payload's, :func:`skel_ros.identify.payload.payload_torques`).
    """
    out = {}
    for k, jf in enumerate(fits):
        measured, before, after = [], [], []
        for i, (part, e) in enumerate(zip(parts, excess, strict=True)):
            ok = part.valid
            measured.append(e[ok, k])
            before.append(predicted(part, k, jf.model)[ok])
            extra = 0.0 if added is None else added[i][ok, k]
            after.append(predicted(part, k, jf.values)[ok] + extra)
        m = np.concatenate(measured)
        out[jf.joint] = (float(np.sqrt(np.mean((m - np.concatenate(before)) ** 2))),
                         float(np.sqrt(np.mean((m - np.concatenate(after)) ** 2))))
    return out


def predicted(part: Samples, k: int, values: Mapping[str, float]) -> Vector:
    """Joint ``k``'s torque beyond the links' that ``values`` give, low-passed."""
    return part.regressor(k) @ np.array([values[p] for p in PARAMETERS])


def fit_joints(parts: Sequence[Samples], excess: Sequence[Vector],
               model: Mapping[str, Mapping[str, float]]) -> list[JointFit]:
    """Fit every joint's armature, damping and friction (module docstring).

    Args:
        parts: the fitted samples of every recording.
        excess: per recording, :func:`residual_torques` of it.
        model: joint -> the model's value of each parameter.
    """
    fits = []
    for k, joint in enumerate(parts[0].joints):
        rows, target, measured = [], [], []
        for p, e in zip(parts, excess, strict=True):
            ok = p.steady(k)
            rows.append(p.regressor(k)[ok])
            target.append(e[ok, k])
            measured.append(p.lowpass(p.tau[:, k])[ok])
        fits.append(_fit_joint(joint, np.concatenate(rows), np.concatenate(target),
                               np.concatenate(measured), dict(model[joint]),
                               parts[0].independent_share))
    return fits


def blind_parameters(y: Vector, names: Sequence[str] = PARAMETERS,
                     shared: Sequence[Sequence[str]] = ()
                     ) -> tuple[dict[str, str], Vector, Vector]:
    """The parameters regressor ``y`` cannot tell apart (module docstring), and why.

    ``names``: its columns' parameters. A column the data leaves (numerically) empty is
    one of them too. ``shared``: groups of parameters scaled alike, by the largest of
    their column norms (the components of one vector: scaled each to unit length, an
    axis the data barely sees would look as well seen as the others).

    Returns:
        (parameter -> why, the scaled regressor's singular values, its column norms).
    """
    norms = np.linalg.norm(y, axis=0)
    for group in shared:
        index = [names.index(n) for n in group if n in names]
        norms[index] = norms[index].max(initial=0.0)
    fixed: dict[str, str] = {}
    # A column of rounding errors only (a parameter no sample depends on, computed as a
    # difference) would look like any other once scaled to unit length.
    empty = norms <= _EMPTY * max(float(norms.max(initial=0.0)), np.finfo(float).tiny)
    for i in np.flatnonzero(empty):
        fixed[names[i]] = "not identifiable from this recording (no sample depends on it)"
    norms[empty] = 1.0
    scaled = np.where(empty, 0.0, y / norms)
    _, sv, vt = np.linalg.svd(scaled, full_matrices=False)
    for s, v in zip(sv, vt, strict=True):
        if s < IDENTIFIABLE * sv[0]:
            for name in (names[i] for i in np.flatnonzero(np.abs(v) > _WEIGHS)):
                fixed.setdefault(name, f"not identifiable from this recording (a singular "
                                       f"value {s / sv[0]:.1e} of the largest)")
    return fixed, sv, norms


@dataclass(frozen=True)
class Solution:
    """A bounded linear least-squares fit with its identifiability check (:func:`solve`).

    Attributes:
        values: parameter -> value (fitted, or the prior where not identifiable).
        intervals: parameter -> 95 % half-width (fitted parameters only).
        fixed: parameter -> why it kept the prior.
        free: the fitted parameters, in :attr:`covariance`'s order.
        covariance: of the fitted parameters.
        singular_values: of the scaled regressor, largest first.
    """

    values: dict[str, float]
    intervals: dict[str, float]
    fixed: dict[str, str]
    free: tuple[str, ...]
    covariance: Vector
    singular_values: tuple[float, ...]


def solve(y: Vector, b: Vector, names: Sequence[str], prior: Mapping[str, float],  # noqa: PLR0917
          lower: Sequence[float], independent: float, shared: Sequence[Sequence[str]] = ()
          ) -> Solution:
    """Fit ``y x = b`` for the parameters ``names`` within ``x >= lower``, with intervals.

    The parameters :func:`blind_parameters` finds (``shared`` as it takes it) are not
    fitted and keep their ``prior``; the others get a 95 % interval from
    ``s^2 (J^T J)^-1`` (module docstring), ``independent`` being the share of the samples
    that are independent.
    """
    from scipy.optimize import least_squares

    fixed, sv, norms = blind_parameters(y, names, shared)
    free = [i for i, name in enumerate(names) if name not in fixed]
    kept = [i for i in range(len(names)) if i not in free]
    values = {n: float(prior[n]) for n in names}
    intervals: dict[str, float] = {}
    cov = np.zeros((0, 0))
    rhs = b - y[:, kept] @ np.array([prior[names[i]] for i in kept])
    if free:
        a = y[:, free] / norms[free]
        low = np.array([lower[i] for i in free], dtype=float) * norms[free]
        # Start inside the bounds (on a bound, TRF can stall): the unbounded solution.
        start, *_ = np.linalg.lstsq(a, rhs, rcond=None)
        start = np.where(np.isfinite(low),
                         np.maximum(start, low + 1e-6 * max(1.0, float(np.abs(start).max()))),
                         start)
        result = least_squares(lambda x, a=a, rhs=rhs: a @ x - rhs, start,
                               jac=lambda _x, a=a: a, bounds=(low, np.inf), method="trf")
        x = result.x / norms[free]
        jac = y[:, free]  # the Jacobian in the parameters' units
        residual = jac @ x - rhs
        s2 = float(np.sum(residual ** 2)) / max(1, y.shape[0] - len(free))
        s2 *= max(1.0 / independent, correlation_factor(residual, round(1.0 / independent)))
        try:
            cov = s2 * np.linalg.inv(jac.T @ jac)
        except np.linalg.LinAlgError:
            cov = np.full((len(free), len(free)), np.inf)
        for j, i in enumerate(free):
            values[names[i]] = float(x[j])
            intervals[names[i]] = float(Z95 * math.sqrt(max(cov[j, j], 0.0)))
    return Solution(values, intervals, fixed, tuple(names[i] for i in free), cov,
                    tuple(float(v) for v in sv))


def correlation_factor(residual: Vector, reach: int) -> float:
    """How much a correlated residual widens a least-squares variance: ``1 + 2 sum rho_k``.

    Over lags up to ``2 * reach`` (Bartlett-weighted, as Newey and West), at least 1: the
    low-pass alone makes about ``reach`` neighbouring samples alike, and a model's error
    (a friction law that is not quite Coulomb's, a timing jitter) can reach further.
    """
    r = residual - residual.mean()
    var = float(r @ r)
    if var == 0.0 or r.size < 4:  # noqa: PLR2004
        return 1.0
    lags = min(2 * reach, r.size // 4)
    total = 1.0
    for k in range(1, lags + 1):
        total += 2.0 * (1.0 - k / (lags + 1)) * float(r[:-k] @ r[k:]) / var
    return max(1.0, total)


def _fit_joint(joint: str, y: Vector, b: Vector, measured: Vector,  # noqa: PLR0917
               prior: dict[str, float], independent: float) -> JointFit:
    """One joint's fit.

    ``y`` its regressor, ``b`` the target (torque beyond the links'), ``measured`` its
    torque readings, ``prior`` the model's values, ``independent`` the share of the
    samples that are independent (the low-passed residual's samples are not: the
    covariance is scaled by its inverse, as for ``n * independent`` samples).
    """
    if y.shape[0] < 2 * len(PARAMETERS):
        return JointFit(joint, prior, {}, dict.fromkeys(
            PARAMETERS, BARELY_MOVED), prior, math.inf, (), y.shape[0], math.nan)
    sol = solve(y, b, PARAMETERS, prior, (0.0,) * len(PARAMETERS), independent)
    residual = b - y @ np.array([sol.values[p] for p in PARAMETERS])
    rms = float(np.sqrt(np.mean(residual ** 2)))
    modelled = float(np.sqrt(np.mean((measured - residual) ** 2)))
    if sol.free and rms > modelled:
        # More of the readings is unexplained than explained: the torque readings are
        # mostly something else (a drive's chatter, a bad sensor); any value is a guess.
        fixed = {**sol.fixed, **dict.fromkeys(sol.free, mostly_noise(rms, modelled))}
        return JointFit(joint, dict(prior), {}, fixed, prior, _condition(sol),
                        sol.singular_values, int(y.shape[0]), rms, speed=mean_speed(y))
    return model_where_untold(JointFit(joint, sol.values, sol.intervals, dict(sol.fixed),
                                       prior, _condition(sol), sol.singular_values,
                                       int(y.shape[0]), rms, speed=mean_speed(y)))


def _condition(sol: Solution) -> float:
    sv = sol.singular_values
    return float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf


def model_where_untold(fit: JointFit) -> JointFit:
    """``fit`` with each value told apart neither from 0 nor from the model's, the model's.

    Such a value (its interval reaching 0 and holding the model's) is no evidence against
    the model: written, it would replace the model's value with a guess (the Panda's
    shoulder, sagging against its stop on weak gains, got a friction of 0.64 +- 2.6 N m
    for the model's 0). It keeps the model's value, listed under ``fixed`` with why; the
    others stay as fitted beside it (fitted again with it held, they would be as sure as
    if it were known, and biased by as much as it is off).
    """
    untold = {p: (f"not told apart from 0 nor from the model's {fit.model[p]:.3g} (fitted "
                  f"{fit.values[p]:.3g} +- {width:.2g}): the model's value kept, the others "
                  "as fitted beside it")
              for p, width in fit.intervals.items()
              if width >= fit.values[p] and abs(fit.values[p] - fit.model[p]) <= width}
    if not untold:
        return fit
    return replace(fit, values={p: fit.model[p] if p in untold else v
                                for p, v in fit.values.items()},
                   intervals={p: w for p, w in fit.intervals.items() if p not in untold},
                   fixed={**fit.fixed, **untold})


def mostly_noise(rms: float, modelled: float) -> str:
    """Why a joint whose residual RMS is above its modelled torque's RMS gets no values."""
    return (f"the torque readings are mostly noise here (residual RMS {rms:.3g} N m "
            f"above the modelled torque's {modelled:.3g} N m)")
