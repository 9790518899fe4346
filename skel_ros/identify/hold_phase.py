"""What a position servo's held goal leaves open in a torque balance: the phase of its reads.

A bus servo in position mode (a Dynamixel X or a Feetech servo, Profile Velocity 0) gets
a new goal once per control period ``T`` and holds it until the next. While it holds one,
its torque ``tau = kp (goal - q) - kd qd`` slides as the joint moves:
``d tau / dt = -(kp qd + kd qdd)`` (``kd``: the motor's back-EMF and the derivative gain;
``kp`` and ``kd`` are what :func:`~skel_ros.identify.fit.fit_servo` measures). The joint
moves by the torque's mean over the hold; the bus reads it once per period, ``s`` after
the goal took effect, where it differs from that mean by

    tau_read - tau_mean = (kp qd + kd qdd) ((T - dt) / 2 - s)

(``dt`` the servo's own control step, 0 for a fine one). That is
``kp ((T - dt) / 2 - s)`` of damping and ``kd ((T - dt) / 2 - s)`` of armature in the
torque balance: the same columns as the joint's own, so no fit of one recording can tell
them apart. ``s`` is the command's delay, plus the write's offset after the read, modulo
the period: the part of the delay within one control period, which the readings cannot
show either (every delay within one period leaves each read the same held goal). An
MIT motor replies at a known ``s`` (the end of the hold, :class:`~skel_ros.identify.fit.
HoldCorrection` puts it back); a bus servo's ``s`` is anywhere from 0 to ``T - dt``, so
its damping and armature are known only within ``+-kp (T - dt) / 2`` and
``+-kd (T - dt) / 2`` of the fitted values.

Friction (``sign(qd)``) is not in that linear span, but a read carries more of the hold
than its linear slide: each joint's acceleration within the hold follows the torques'
slides, through the arm's coupled inertia too, which the kinematics sampled once a period
cannot show, and what the read phase leaves of it after the fit's low-pass is not a
function of the joint's own ``qd`` and ``qdd``. Its share along ``sign(qd)`` biases the
friction, deterministically (the same in every part of a recording), so the intervals,
which count noise, cannot show it. As a share of the hold's slide at the fitted samples'
mean speed, ``S = kp (T - dt) / 2 * mean |qd|`` (``identify`` takes ``dt`` as 0), the
XM430 frictions of ``bench/identify_hold.py`` (every joint moving, five read phases; two
excitations, half the speed, a 2.5 ms period) came out off by at most 0.12 ``S`` read at
200 Hz and 0.21 ``S`` at 50 Hz, the elbow moving alone by 0.02 ``S``; through ROS, by up
to about 0.16 ``S``. (With the exact torques and accelerations of the same runs, recorded
at the world's steps, every friction was within 3 %: the bias is the reads'.) A servo
whose time-based profile ramps to each goal (the Dynamixel's ``profile_time``) does
worse for friction away from the ramp's kinks: over the same five phases and three
excitations it came out off by up to 0.67 ``S`` read at 200 Hz and 0.91 ``S`` at 50 Hz
(the same runs stepping: 0.11 and 0.25), and within 3.4 % at the kinks (a delay of whole
periods). The friction's interval is widened by :data:`FRICTION_SHARE` of ``S`` for a
servo that steps, by :data:`FRICTION_SHARE_RAMP` for one that ramps (the hardware YAML's
``profile_time``), :data:`FRICTION_SHARE_RAMP_SPARSE` when the recording has fewer reads
than the loop made.

Measured on the physics bench (``bench/identify_hold.py``, the bundled arm's three
XM430 joints: ``kp`` 18.9 N m/rad, ``kd`` 0.85 N m s/rad, ``T`` 5 ms, world step 1 ms):
read at the hold's last step, every damping came out 48-63 % short and every armature
13-18 % short; read at its first step, 51-63 % and 13-17 % over; read at its middle,
within 3 % and 2 %. A goal the servo's time-based profile ramps to over the period (the
Dynamixel backend's ``profile_time``, no step left to hold) gave every damping within
24 % and armature within 18 % over the five phases and three excitations (within 3.1 %
at the ramp's kinks): the torque still bends at each goal, and the phase still reaches
the fit. A ramped servo's damping and armature are widened as a held one's (the bound
holds). What the ramp leaves is the encoder's whole pulses: the servo's PID errs in them,
so its torque moves in steps of ``kp`` times a pulse (0.029 N m here, twice the
friction), in a pattern that starts again at each goal (a whole number of pulses) and is
read at one phase of it; with the PID erring in exact fractions of a pulse (an experiment,
``--exact-pulses``) every value of the ramped servos came back within 4.7 % at any phase.

:func:`widen_for_hold` adds that bound to a fitted joint's intervals. No ROS, no engine.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from skel_ros.identify.fit import HoldCorrection, JointFit

__all__ = ["FRICTION_SHARE", "FRICTION_SHARE_RAMP", "FRICTION_SHARE_RAMP_SPARSE",
           "not_its_servos_torque", "widen_for_hold"]

FRICTION_SHARE: Final = 0.3
"""The share of the hold's slide ``kp (T - dt) / 2 * mean |qd|`` a bus servo's friction
interval is widened by (module docstring: up to 0.25 of it measured)."""
FRICTION_SHARE_RAMP: Final = 0.7
"""The same for a servo that ramps to each goal (a time-based profile), read at the
control loop's rate (up to 0.67 measured)."""
FRICTION_SHARE_RAMP_SPARSE: Final = 1.0
"""The same from a recording with fewer reads than the loop made (joint_states slower
than ``control_rate``: up to 0.91 measured at a quarter of it)."""


def widen_for_hold(fit: JointFit, hold: HoldCorrection, *, ramp: bool = False,
                   every_read: bool = True) -> JointFit:
    """``fit`` with its intervals widened by the reads' phase in the servo's hold.

    The half-widths (module docstring) are ``hold``'s :meth:`~skel_ros.identify.fit.
    HoldCorrection.offsets`, ``kp (T - dt) / 2`` and ``kd (T - dt) / 2`` at the joint, for
    the damping and the armature, and :data:`FRICTION_SHARE` (``ramp``:
    :data:`FRICTION_SHARE_RAMP`, or :data:`FRICTION_SHARE_RAMP_SPARSE` without
    ``every_read``) of the first times the fitted samples' mean speed for the friction,
    added
    to the statistical ones (a bias bound, not noise: added, not in quadrature). A fitted
    value no larger than its bound is not told by the recording: it keeps the model's value
    and is listed under ``fixed`` with why. Parameters that were not fitted are left as they
    are.

    Args:
        fit: a joint's fit (:func:`~skel_ros.identify.fit.fit_joints`).
        hold: the servo's hold: its gains at the joint (a :class:`~skel_ros.identify.fit.
            ServoFit`'s ``kp`` and ``kd``, gear ratio 1), the control loop's period, the
            servo's own control step (0: a fine one).
        ramp: whether the servo ramps to each goal (a time-based profile) instead of
            stepping to it.
        every_read: whether the recording holds every read the control loop made (its
            joint_states at the loop's rate), or fewer.
    """
    damping, armature = hold.offsets()
    share = (FRICTION_SHARE if not ramp else FRICTION_SHARE_RAMP if every_read
             else FRICTION_SHARE_RAMP_SPARSE)
    friction = share * damping * fit.speed if math.isfinite(fit.speed) else 0.0
    bound = {"damping": damping, "armature": armature, "friction": friction}
    values, intervals, fixed = dict(fit.values), dict(fit.intervals), dict(fit.fixed)
    notes, bounds = list(fit.notes), dict(fit.bounds)
    period = hold.period
    for name, extra in bound.items():
        if name not in intervals or extra <= 0.0:
            continue
        if extra >= values[name]:
            why = (f"not told by this recording: the phase of the servo's reads within its "
                   f"{period * 1e3:g} ms hold leaves +-{extra:.2g} open, more than the "
                   f"value {values[name]:.2g}")
            values[name] = fit.model[name]
            del intervals[name]
            fixed[name] = why
        else:
            intervals[name] += extra
            bounds[name] = bounds.get(name, 0.0) + extra
    notes.append(f"the reads' phase in the servo's {period * 1e3:g} ms hold: damping "
                 f"+-{damping:.2g}, armature +-{armature:.2g}, friction +-{friction:.2g}"
                 " added to the intervals")
    return replace(fit, values=values, intervals=intervals, fixed=fixed, notes=notes,
                   bounds=bounds)


def not_its_servos_torque(fit: JointFit, r2: float, least: float) -> JointFit:
    """``fit`` without values: a position servo's readings its own law does not explain.

    A servo in position mode gives the torque of its law, ``kp (goal - q) - kd qd`` (no
    feed-forward, no integral): readings of which that law explains less than ``least`` of
    the variance (``r2``: :class:`~skel_ros.identify.fit.ServoFit`'s) are mostly something
    else (an XL430's Present Load, a PWM, with its derivative gain's chatter), and a value
    fitted to them is a guess, however narrow its interval. Every fitted parameter keeps the
    model's value and is listed under ``fixed`` with why.
    """
    why = (f"the readings do not follow the servo's own law (R^2 {r2:.2f} < {least}): they "
           "are not the torque that moved the joint")
    fixed = dict(fit.fixed)
    fixed.update(dict.fromkeys(fit.intervals, why))
    values = {k: (fit.model[k] if k in fit.intervals else v) for k, v in fit.values.items()}
    return replace(fit, values=values, intervals={}, fixed=fixed)
