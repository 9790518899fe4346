"""A payload's mass and centre of mass, fitted with the joints (``identify --payload BODY``).

A point mass ``m`` fixed at ``c`` in a body's frame adds to every joint's torque

    tau_payload = Y_m m + Y_x (m c_x) + Y_y (m c_y) + Y_z (m c_z) + m Q(c)

where ``Y`` are the columns of the payload's regressor (:class:`PayloadRegressor`: the
model's inverse dynamics is linear in a body's mass, first moment and inertia about its
origin, so each column is a difference of the model with and without a unit point mass,
:meth:`~skel_ros.sim.inverse_dynamics.RigidDynamics.with_point_mass`) and ``m Q(c)`` is
the torque of the point mass's inertia about the body's origin, ``m (|c|^2 I - c c^T)``:
quadratic in ``c``. The fit (:func:`fit_with_payload`) is linear in ``(m, m c)``: it first
neglects ``Q`` (exact for the gravity and translational terms), then puts the
neglected torque of the fitted ``(m, c)`` into the target and fits again, until ``c`` moves
less than :data:`SETTLED` (four or five rounds for a payload 5 cm from the arm's hand's
origin; at most :data:`ROUNDS`), so the result is the point mass's. Its own rotational
inertia (a payload is not a point) is neglected: what it adds shows in the armature of
the joint next to it.

The payload's torque reaches every joint it hangs from, so the fit is one least-squares
problem over all joints' rows: each joint's armature, damping and friction columns, and
the payload's four, with the identifiability check and intervals of
:func:`~skel_ros.identify.fit.solve`. A joint whose readings are mostly noise leaves the
problem (its values stay the model's, as in :func:`~skel_ros.identify.fit.fit_joints`);
each joint's rows are weighted by the inverse of its residual's RMS, so a joint with a
noisier torque sensor weighs less. The centre of mass is reported where the mass is
clearly not zero (its interval excludes 0); a component the recording cannot see (an
offset along the axes of parallel joints when no other joint moves) keeps 0 and is
reported as not identified.

No ROS; MuJoCo through :mod:`skel_ros.sim.inverse_dynamics`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from skel_ros.identify.fit import (
    BARELY_MOVED,
    Z95,
    JointFit,
    blind_parameters,
    mean_speed,
    model_where_untold,
    mostly_noise,
    solve,
)
from skel_ros.identify.regressor import PARAMETERS

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.identify.fit import Samples, Solution
    from skel_ros.sim.inverse_dynamics import RigidDynamics

__all__ = ["MOMENTS", "PayloadFit", "PayloadRegressor", "fit_with_payload", "payload_torques"]

Vector = npt.NDArray[np.float64]

MOMENTS: Final = ("mass", "moment_x", "moment_y", "moment_z")
"""The payload's parameters, in its regressor's column order: ``m`` (kg), ``m c`` (kg m)."""
AXES: Final = ("x", "y", "z")
STEP: Final = 0.1
"""m, the offset of the unit masses whose difference gives a first moment's column."""
SETTLED: Final = 1e-4
"""m: the point-inertia rounds stop when the centre of mass moves less than this."""
ROUNDS: Final = 6
"""The most rounds of the point-inertia correction."""


class PayloadRegressor:
    """The columns of a payload's regressor on one body (module docstring).

    Args:
        dynamics: the model's inverse dynamics.
        body: the body the payload is fixed to.

    Raises:
        DynamicsError: no such body in the dynamics' skeleton.
    """

    def __init__(self, dynamics: RigidDynamics, body: str) -> None:
        self.dynamics = dynamics
        self.body = body
        self._origin = dynamics.with_point_mass(body, 1.0, (0.0, 0.0, 0.0))
        self._axes = []
        for k in range(3):
            offset = np.zeros(3)
            offset[k] = STEP
            self._axes.append((dynamics.with_point_mass(body, 1.0, offset),
                               dynamics.with_point_mass(body, 1.0, -offset)))

    def columns(self, part: Samples) -> Vector:
        """``(samples, joints, 4)``: the torque per unit of :data:`MOMENTS`, low-passed.

        The mass's column is a unit mass at the body's origin (no inertia about it); a
        first moment's, the difference of unit masses at ``+-STEP`` along its axis over
        ``2 STEP`` (their inertias about the origin are equal and cancel).
        """
        state = _state(part)
        base = self.dynamics.torques(part.joints, *state)
        cols = [self._origin.torques(part.joints, *state) - base]
        for plus, minus in self._axes:
            cols.append((plus.torques(part.joints, *state)
                         - minus.torques(part.joints, *state)) / (2.0 * STEP))
        return part.lowpass(np.stack(cols, axis=-1))

    def torques(self, part: Samples, mass: float, com: Sequence[float]) -> Vector:
        """``(samples, joints)``: the torque of a point mass ``mass`` at ``com``, low-passed."""
        if mass == 0.0:
            return np.zeros(part.q.shape)
        state = _state(part)
        loaded = self.dynamics.with_point_mass(self.body, 1.0, com)
        return part.lowpass(mass * (loaded.torques(part.joints, *state)
                                    - self.dynamics.torques(part.joints, *state)))


def _state(part: Samples) -> tuple[Vector, Vector, Vector]:
    return np.nan_to_num(part.q), np.nan_to_num(part.qd), np.nan_to_num(part.qdd)


@dataclass(frozen=True)
class PayloadFit:
    """An identified payload (:func:`fit_with_payload`).

    Attributes:
        body: the body it is fixed to.
        mass: kg (0 when not identified).
        com: m, its centre of mass in the body's frame (0 where not identified).
        mass_interval: kg, 95 % half-width (None when not fitted).
        com_intervals: m, per axis (None where not identified).
        fixed: "mass", "com_x", "com_y", "com_z" -> why it was not identified.
        rounds: the fits made (the point-inertia correction's rounds).
    """

    body: str
    mass: float
    com: tuple[float, float, float]
    mass_interval: float | None
    com_intervals: tuple[float | None, float | None, float | None]
    fixed: dict[str, str] = field(default_factory=dict)
    rounds: int = 1

    @property
    def added(self) -> bool:
        """Whether the fitted model gets this mass: it was told apart from no payload."""
        return (self.mass_interval is not None and "mass" not in self.fixed
                and self.mass > self.mass_interval)


@dataclass(frozen=True)
class _Block:
    """One joint's rows of the joint problem."""

    y: Vector  # its own columns (PARAMETERS)
    p: Vector  # the payload's columns (MOMENTS)
    b: Vector  # the torque beyond the links'
    measured: Vector  # its torque readings, low-passed
    rows: list[npt.NDArray[np.bool_]]  # per recording, the samples used


def fit_with_payload(parts: Sequence[Samples], excess: Sequence[Vector],
                     model: Mapping[str, Mapping[str, float]], regressor: PayloadRegressor
                     ) -> tuple[list[JointFit], PayloadFit]:
    """Fit every joint's armature, damping and friction and the payload together.

    Args:
        parts: the fitted samples of every recording.
        excess: per recording, :func:`~skel_ros.identify.fit.residual_torques` of it.
        model: joint -> the model's value of each parameter.
        regressor: the payload's.
    """
    joints = parts[0].joints
    columns = [regressor.columns(p) for p in parts]
    correction = [np.zeros(p.q.shape) for p in parts]
    mass, com = 0.0, np.zeros(3)
    fits: list[JointFit] = []
    payload = PayloadFit(regressor.body, 0.0, (0.0, 0.0, 0.0), None, (None, None, None),
                         {"mass": BARELY_MOVED})
    for rounds in range(1, ROUNDS + 1):
        blocks = [_block(parts, excess, columns, correction, k) for k in range(len(joints))]
        fits, payload = _fit(blocks, joints, model, parts[0].independent_share,
                             regressor.body, rounds)
        if not payload.added:
            break
        moved = float(np.linalg.norm(np.asarray(payload.com) - com))
        mass, com = payload.mass, np.asarray(payload.com)
        if (rounds > 1 and moved < SETTLED) or rounds == ROUNDS:
            break
        # The point mass's inertia about the body's origin, which the columns leave out.
        pi = np.array([mass, *(mass * com)])
        correction = [regressor.torques(p, mass, com) - c @ pi
                      for p, c in zip(parts, columns, strict=True)]
    return fits, payload


def payload_torques(parts: Sequence[Samples], regressor: PayloadRegressor | None,
                    payload: PayloadFit | None) -> list[Vector] | None:
    """Per part, the identified payload's torque (None when no payload was added)."""
    if regressor is None or payload is None or not payload.added:
        return None
    return [regressor.torques(p, payload.mass, payload.com) for p in parts]


def _block(parts: Sequence[Samples], excess: Sequence[Vector], columns: Sequence[Vector],
           correction: Sequence[Vector], k: int) -> _Block:
    ys, ps, bs, ms, rows = [], [], [], [], []
    for part, e, c, corr in zip(parts, excess, columns, correction, strict=True):
        ok = part.steady(k)
        ys.append(part.regressor(k)[ok])
        ps.append(c[ok, k, :])
        bs.append(e[ok, k] - corr[ok, k])
        ms.append(part.lowpass(part.tau[:, k])[ok])
        rows.append(ok)
    return _Block(np.concatenate(ys), np.concatenate(ps), np.concatenate(bs),
                  np.concatenate(ms), rows)


def _fit(blocks: Sequence[_Block], joints: Sequence[str],  # noqa: PLR0917
         model: Mapping[str, Mapping[str, float]], independent: float, body: str,
         rounds: int) -> tuple[list[JointFit], PayloadFit]:
    """One round: the joint problem, its noisy joints dropped, then weighted."""
    moved = [k for k, blk in enumerate(blocks) if blk.y.shape[0] >= 2 * len(PARAMETERS)]
    noisy: dict[int, str] = {}
    weights = dict.fromkeys(moved, 1.0)
    weighted = False
    sol = None
    for _ in range(2 * len(blocks) + 2):
        use = [k for k in moved if k not in noisy]
        if not use:
            break
        sol = _solve(blocks, use, joints, model, weights, independent)
        rms = {k: _rms(blocks[k], sol, k) for k in use}
        drop = {k: mostly_noise(*rms[k]) for k in use if rms[k][0] > rms[k][1]
                and any(f"{k}:{p}" in sol.free for p in PARAMETERS)}
        if drop:
            noisy.update(drop)
            weights, weighted = dict.fromkeys(moved, 1.0), False
            continue
        if weighted:
            break
        # Each joint's rows by the inverse of its residual's RMS: equal noise per row.
        weights = {k: 1.0 / max(rms[k][0], 1e-12) for k in use}
        weighted = True
    fits = []
    for k, joint in enumerate(joints):
        prior = dict(model[joint])
        blk = blocks[k]
        if k not in moved:
            fits.append(JointFit(joint, prior, {}, dict.fromkeys(PARAMETERS, BARELY_MOVED),
                                 prior, math.inf, (), blk.y.shape[0], math.nan))
            continue
        _, sv, _ = blind_parameters(blk.y)
        condition = float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf
        if k in noisy or sol is None:
            why = noisy.get(k, BARELY_MOVED)
            fits.append(JointFit(joint, prior, {}, dict.fromkeys(PARAMETERS, why), prior,
                                 condition, tuple(map(float, sv)), blk.y.shape[0], math.nan))
            continue
        values = {p: sol.values[f"{k}:{p}"] for p in PARAMETERS}
        intervals = {p: sol.intervals[f"{k}:{p}"] for p in PARAMETERS
                     if f"{k}:{p}" in sol.intervals}
        fixed = {p: sol.fixed[f"{k}:{p}"] for p in PARAMETERS if f"{k}:{p}" in sol.fixed}
        fits.append(model_where_untold(JointFit(
            joint, values, intervals, fixed, prior, condition, tuple(map(float, sv)),
            blk.y.shape[0], _rms(blk, sol, k)[0], speed=mean_speed(blk.y))))
    return fits, _payload(sol, body, rounds)


def _solve(blocks: Sequence[_Block], use: Sequence[int], joints: Sequence[str],  # noqa: PLR0917
           model: Mapping[str, Mapping[str, float]], weights: Mapping[int, float],
           independent: float) -> Solution:
    """The joint problem over the joints ``use``: their columns, then the payload's."""
    names = [f"{k}:{p}" for k in use for p in PARAMETERS] + [f"payload:{m}" for m in MOMENTS]
    prior = {f"{k}:{p}": model[joints[k]][p] for k in use for p in PARAMETERS}
    prior.update(dict.fromkeys((f"payload:{m}" for m in MOMENTS), 0.0))
    lower = [0.0] * (len(PARAMETERS) * len(use)) + [0.0, -math.inf, -math.inf, -math.inf]
    rows, target = [], []
    for i, k in enumerate(use):
        blk, w = blocks[k], weights[k]
        own = np.zeros((blk.y.shape[0], len(PARAMETERS) * len(use)))
        own[:, i * len(PARAMETERS):(i + 1) * len(PARAMETERS)] = blk.y
        rows.append(w * np.hstack([own, blk.p]))
        target.append(w * blk.b)
    return solve(np.vstack(rows), np.concatenate(target), names, prior, lower, independent,
                 shared=[[f"payload:{m}" for m in MOMENTS[1:]]])


def _rms(blk: _Block, sol: Solution, k: int) -> tuple[float, float]:
    """Joint ``k``'s residual RMS at ``sol`` and its modelled torque's RMS (N m)."""
    theta = np.array([sol.values[f"{k}:{p}"] for p in PARAMETERS])
    pi = np.array([sol.values[f"payload:{m}"] for m in MOMENTS])
    residual = blk.b - blk.y @ theta - blk.p @ pi
    return (float(np.sqrt(np.mean(residual ** 2))),
            float(np.sqrt(np.mean((blk.measured - residual) ** 2))))


def _payload(sol: Solution | None, body: str, rounds: int) -> PayloadFit:
    """The payload's mass and centre of mass from the joint problem's solution."""
    none = (None, None, None)
    if sol is None:
        return PayloadFit(body, 0.0, (0.0, 0.0, 0.0), None, none, {"mass": BARELY_MOVED},
                          rounds)
    if "payload:mass" in sol.fixed:
        why = sol.fixed["payload:mass"]
        return PayloadFit(body, 0.0, (0.0, 0.0, 0.0), None, none,
                          {"mass": why, **{f"com_{a}": why for a in AXES}}, rounds)
    mass, mass_interval = sol.values["payload:mass"], sol.intervals["payload:mass"]
    if mass <= mass_interval:
        why = (f"the mass ({mass:.3g} +- {mass_interval:.2g} kg) is not told apart from no "
               "payload")
        return PayloadFit(body, mass, (0.0, 0.0, 0.0), mass_interval, none,
                          {f"com_{a}": why for a in AXES}, rounds)
    index = {name: i for i, name in enumerate(sol.free)}
    com, intervals, fixed = [0.0, 0.0, 0.0], [None, None, None], {}
    var_m = sol.covariance[index["payload:mass"], index["payload:mass"]]
    for a, axis in enumerate(AXES):
        name = f"payload:moment_{axis}"
        if name in sol.fixed:
            fixed[f"com_{axis}"] = sol.fixed[name]
            continue
        c = sol.values[name] / mass
        i, j = index[name], index["payload:mass"]
        # c = (m c) / m to first order (the delta method).
        var = (sol.covariance[i, i] - 2.0 * c * sol.covariance[i, j] + c * c * var_m) / mass ** 2
        com[a] = c
        intervals[a] = Z95 * math.sqrt(max(float(var), 0.0))
    return PayloadFit(body, mass, (com[0], com[1], com[2]), mass_interval,
                      (intervals[0], intervals[1], intervals[2]), fixed, rounds)
