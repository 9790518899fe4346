"""Excitation trajectories for identification: a finite Fourier series per joint.

Swevers' form (Swevers, Ganseman, Tukel, de Schutter, van Brussel, "Optimal robot
excitation and identification", IEEE T-RA 1997): every excited joint moves as

    q(t) = c + sum_l  a_l / (l w) sin(l w t)  -  b_l / (l w) (cos(l w t) - 1)

for harmonics ``l = 1..N`` of the base frequency ``w``; its velocity is
``sum_l a_l cos(l w t) + b_l sin(l w t)``. Periodic, so a whole number of periods ends
where it started; with ``sum_l a_l = 0`` and ``sum_l l b_l = 0`` it starts (and ends) at
the centre ``c`` at rest, with zero acceleration. The coefficients are drawn from a seeded
generator and optimised (scipy, Nelder-Mead) for the lowest condition number of the joint's
identification regressor (:mod:`skel_ros.identify.regressor`: armature, damping, Coulomb
friction), then the motion is scaled down until it stays within ``fraction`` of the
position, velocity and acceleration limits. A joint without a limit of a kind gets the
default bound of that kind (:data:`DEFAULT_BOUNDS`).

The trajectory written for the players (:func:`trajectory_yaml`) holds the centre for a
lead-in (time for the robot to get there from its start), then the series, sampled with
positions, velocities and accelerations (so the players interpolate quintic segments
that follow the series). No ROS, no engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from skel_ros.identify.regressor import STILL_SPEED, condition_number, joint_regressor, moving

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.model.limits import LimitSet

__all__ = ["DEFAULT_BOUNDS", "Excitation", "ExcitationError", "JointExcitation",
           "design_excitation", "trajectory_yaml"]

Vector = npt.NDArray[np.float64]

DEFAULT_BOUNDS: Final = {"position": 1.0, "velocity": 2.0, "acceleration": 5.0}
"""A joint without a limit of a kind moves at most this far from its centre (rad or m),
this fast (per s) or with this acceleration (per s^2)."""
_GRID_PER_PERIOD: Final = 40  # samples per period of the highest harmonic (design, checks)
_RESTARTS: Final = 2
_MAX_EVALUATIONS: Final = 400
_NO_RATING: Final = math.log(1e12)  # the cost of a condition number of 1e12 or more


class ExcitationError(ValueError):
    """An excitation that cannot be made (bad options, a joint without room to move)."""


@dataclass(frozen=True)
class JointExcitation:
    """One joint's Fourier series (module docstring).

    Attributes:
        name: the DOF.
        centre: where it starts and ends.
        a, b: the coefficients of its velocity's cosines and sines (per s), harmonic 1 first.
        omega: the base angular frequency (rad/s).
        condition: the condition number of its regressor over one period.
    """

    name: str
    centre: float
    a: Vector
    b: Vector
    omega: float
    condition: float

    def sample(self, t: Vector) -> tuple[Vector, Vector, Vector]:
        """Position, velocity and acceleration at times ``t`` (s from the series' start)."""
        return _series(self.a, self.b, self.omega, np.asarray(t, dtype=float), self.centre)


@dataclass(frozen=True)
class Excitation:
    """An excitation of some joints; the others stay at their centre.

    Attributes:
        joints: the excited joints.
        held: the other DOFs and the position they hold.
        duration: s, the series' length (a whole number of periods).
        base_frequency: Hz, the series' base frequency (adjusted to fit the duration).
        harmonics: how many harmonics.
        lead_in: s, at the start, to reach the centre.
        seed: the generator's seed.
        condition: the condition number of the whole identification problem (every
            joint's regressor together: :func:`~skel_ros.identify.regressor.condition_number`
            of their block diagonal).
    """

    joints: tuple[JointExcitation, ...]
    held: tuple[tuple[str, float], ...]
    duration: float
    base_frequency: float
    harmonics: int
    lead_in: float
    seed: int
    condition: float

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The excited joints, then the held ones (the trajectory's order)."""
        return tuple(j.name for j in self.joints) + tuple(n for n, _ in self.held)

    def sample(self, t: Vector) -> tuple[Vector, Vector, Vector]:
        """Positions, velocities, accelerations ``(len(t), joints)`` at trajectory time ``t``.

        Before the lead-in ends, every joint is at its centre; after the series, too.
        """
        t = np.asarray(t, dtype=float)
        s = np.clip(t - self.lead_in, 0.0, self.duration)
        cols = [j.sample(s) for j in self.joints]
        cols += [(np.full(t.shape, c), np.zeros(t.shape), np.zeros(t.shape))
                 for _, c in self.held]
        return tuple(np.column_stack([c[k] for c in cols]) for k in range(3))  # type: ignore[return-value]


def design_excitation(limits: LimitSet, *, duration: float = 60.0, harmonics: int = 5,
                      base_frequency: float = 0.2, seed: int = 0, fraction: float = 0.8,
                      joints: Sequence[str] | None = None,
                      pose: Mapping[str, float] | None = None,
                      start: Mapping[str, float] | None = None,
                      sample_rate: float = 50.0) -> Excitation:
    """Design an excitation within ``limits`` (module docstring).

    Args:
        limits: the limits it must stay within (the model's, or a hardware config's).
        duration: s of excitation; rounded to a whole number of base periods.
        harmonics: harmonics per joint (>= 2: two are needed to start at rest).
        base_frequency: Hz, the lowest frequency (adjusted so the periods fit).
        seed: the generator's seed for the starting coefficients.
        fraction: of each limit the motion may use, in (0, 1].
        joints: the DOFs to excite (default: every DOF that is not a follower).
        pose: the centre of some DOFs (default: the middle of the position limits, or
            the start position where a limit is infinite).
        start: where the robot starts (default 0); sets the lead-in's length.
        sample_rate: Hz the regressor is rated at (the recording's rate).

    Raises:
        ExcitationError: a bad option, an unknown joint, a centre outside the limits, or
            a joint with no room to move.
    """
    _check_options(duration, harmonics, base_frequency, fraction, sample_rate)
    names = [jl.name for jl in limits.values() if jl.leader is None]
    chosen = list(joints) if joints else names
    unknown = [n for n in (*chosen, *(pose or {})) if n not in limits.names]
    if unknown:
        raise ExcitationError(f"unknown joint(s) {', '.join(map(repr, unknown))}; the model's"
                              f" DOFs are {', '.join(limits.names)}")
    followers = [n for n in chosen if n not in names]
    if followers:
        raise ExcitationError(f"{', '.join(map(repr, followers))}: a mimic joint follows its "
                              "leader; excite the leader")
    periods = max(1, round(duration * base_frequency))
    omega = 2.0 * math.pi * periods / duration
    rng = np.random.default_rng(seed)
    start = dict(start or {})
    centres = {n: _centre(limits, n, (pose or {}).get(n), start.get(n, 0.0)) for n in names}
    excited = [_design_joint(limits, name, centres[name], omega, harmonics, fraction, rng,
                             sample_rate) for name in chosen]
    held = tuple((n, centres[n]) for n in names if n not in chosen)
    blocks = [_regressor(j, sample_rate) for j in excited]
    overall = condition_number(_block_diagonal(blocks)) if blocks else math.inf
    lead_in = max([1.0] + [_lead_in(limits, n, start.get(n, 0.0), centres[n], fraction)
                           for n in names])
    return Excitation(tuple(excited), held, duration, omega / (2.0 * math.pi), harmonics,
                      math.ceil(lead_in * 10.0) / 10.0, seed, overall)


def trajectory_yaml(excitation: Excitation, rate: float = 20.0, header: str = "") -> str:
    """The excitation as trajectory YAML the players read (:mod:`skel_ros.trajectory`).

    Points every ``1/rate`` s of the series (and its end) with positions, velocities and
    accelerations; the first at the end of the lead-in. ``header``: comment lines on top.
    """
    count = max(1, math.ceil(excitation.duration * rate))
    s = np.linspace(0.0, excitation.duration, count + 1)
    q, qd, qdd = excitation.sample(s + excitation.lead_in)
    qd[0] = qd[-1] = qdd[0] = qdd[-1] = 0.0  # exactly at rest (rounding aside)
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines.append(f"joint_names: [{', '.join(excitation.joint_names)}]")
    lines.append("points:")
    for k, t in enumerate(s + excitation.lead_in):
        lines.append(f"  - positions: [{_numbers(q[k])}]")
        lines.append(f"    velocities: [{_numbers(qd[k])}]")
        lines.append(f"    accelerations: [{_numbers(qdd[k])}]")
        lines.append(f"    time_from_start: {t:.6f}")
    return "\n".join(lines) + "\n"


def _numbers(values: Vector) -> str:
    return ", ".join(f"{v:.6f}" if abs(v) >= 5e-7 else "0.0" for v in values)  # noqa: PLR2004


def _check_options(duration: float, harmonics: int, base_frequency: float, fraction: float,
                   sample_rate: float) -> None:
    problems = []
    if not (math.isfinite(duration) and duration > 0.0):
        problems.append(f"duration must be > 0 s, got {duration}")
    if harmonics < 2:  # noqa: PLR2004 - rest at both ends takes two coefficients
        problems.append(f"harmonics must be >= 2 (two are needed to start and end at rest), "
                        f"got {harmonics}")
    if not (math.isfinite(base_frequency) and base_frequency > 0.0):
        problems.append(f"base frequency must be > 0 Hz, got {base_frequency}")
    if not (0.0 < fraction <= 1.0):
        problems.append(f"fraction must be in (0, 1], got {fraction}")
    if not (math.isfinite(sample_rate) and sample_rate > 0.0):
        problems.append(f"sample rate must be > 0 Hz, got {sample_rate}")
    if not problems and harmonics * max(1, round(duration * base_frequency)) / duration \
            > sample_rate / 4.0:
        problems.append(f"the highest harmonic ({harmonics} x the base frequency) must stay "
                        f"below a quarter of the sample rate ({sample_rate:g} Hz)")
    if problems:
        raise ExcitationError("; ".join(problems))


def _centre(limits: LimitSet, name: str, given: float | None, start: float) -> float:
    jl = limits[name]
    lo, hi = jl.position_lower, jl.position_upper
    if given is not None:
        if not (lo <= given <= hi):
            raise ExcitationError(f"the pose of {name!r} ({given:g}) is outside its position "
                                  f"limits [{lo:g}, {hi:g}]")
        return float(given)
    if math.isfinite(lo) and math.isfinite(hi):
        return 0.5 * (lo + hi)
    return float(min(max(start, lo), hi))


def _bound(value: float, kind: str) -> float:
    return value if math.isfinite(value) else DEFAULT_BOUNDS[kind]


def _room(limits: LimitSet, name: str, centre: float, fraction: float
          ) -> tuple[float, float, float, float]:
    """(below, above, velocity, acceleration): how far the joint may go, from its centre."""
    jl = limits[name]
    below = fraction * (centre - jl.position_lower) if math.isfinite(jl.position_lower) \
        else DEFAULT_BOUNDS["position"]
    above = fraction * (jl.position_upper - centre) if math.isfinite(jl.position_upper) \
        else DEFAULT_BOUNDS["position"]
    vel = fraction * min(_bound(-jl.velocity_lower, "velocity"),
                         _bound(jl.velocity_upper, "velocity"))
    acc = fraction * min(_bound(-jl.acceleration_lower, "acceleration"),
                         _bound(jl.acceleration_upper, "acceleration"))
    return below, above, vel, acc


def _series(a: Vector, b: Vector, omega: float, t: Vector, centre: float = 0.0
            ) -> tuple[Vector, Vector, Vector]:
    lw = omega * np.arange(1, a.size + 1)
    phase = np.outer(t, lw)
    sin, cos = np.sin(phase), np.cos(phase)
    q = centre + sin @ (a / lw) - (cos - 1.0) @ (b / lw)
    qd = cos @ a + sin @ b
    qdd = -sin @ (a * lw) + cos @ (b * lw)
    return q, qd, qdd


def _coefficients(x: Vector, harmonics: int) -> tuple[Vector, Vector]:
    """(a, b) from the free coefficients: a_1 and b_1 make the start one at rest."""
    a_rest, b_rest = x[:harmonics - 1], x[harmonics - 1:]
    l = np.arange(2, harmonics + 1)  # noqa: E741 - the literature's harmonic index
    a = np.concatenate([[-a_rest.sum()], a_rest])
    b = np.concatenate([[-(l * b_rest).sum()], b_rest])
    return a, b


def _scale(a: Vector, b: Vector, omega: float, room: tuple[float, float, float, float]
           ) -> float:
    """The largest factor that keeps the series within ``room`` (checked on a fine grid)."""
    grid = np.linspace(0.0, 2.0 * math.pi / omega, _GRID_PER_PERIOD * a.size + 1)
    q, qd, qdd = _series(a, b, omega, grid)
    below, above, vel, acc = room
    factors = [math.inf]
    for extent, bound in ((q.max(), above), (-q.min(), below),
                          (np.abs(qd).max(), vel), (np.abs(qdd).max(), acc)):
        if extent > 0.0:
            factors.append(bound / extent)
    return min(factors)


def _rated(a: Vector, b: Vector, omega: float, sample_rate: float) -> Vector:
    """The joint's regressor rows over one period at ``sample_rate`` (moving samples)."""
    t = np.arange(0.0, 2.0 * math.pi / omega, 1.0 / sample_rate)
    _, qd, qdd = _series(a, b, omega, t)
    keep = moving(qd)
    return joint_regressor(qd[keep], qdd[keep])


def _peak_speed(a: Vector, b: Vector, omega: float) -> float:
    t = np.linspace(0.0, 2.0 * math.pi / omega, _GRID_PER_PERIOD * a.size + 1)
    return float(np.max(np.abs(_series(a, b, omega, t)[1])))


def _regressor(joint: JointExcitation, sample_rate: float) -> Vector:
    return _rated(joint.a, joint.b, joint.omega, sample_rate)


def _design_joint(limits: LimitSet, name: str, centre: float, omega: float, harmonics: int,  # noqa: PLR0917
                  fraction: float, rng: np.random.Generator, sample_rate: float
                  ) -> JointExcitation:
    from scipy.optimize import minimize

    room = _room(limits, name, centre, fraction)
    if min(room) <= 0.0:
        raise ExcitationError(f"joint {name!r} has no room to move around {centre:g} (its "
                              "position limits meet the centre, or a zero velocity or "
                              "acceleration limit)")

    def scaled(x: Vector) -> tuple[Vector, Vector]:
        a, b = _coefficients(x, harmonics)
        s = _scale(a, b, omega, room)
        s = 0.0 if not math.isfinite(s) else s * (1.0 - 1e-6)
        return a * s, b * s

    def cost(x: Vector) -> float:
        a, b = scaled(x)
        if not np.any(a) and not np.any(b):
            return _NO_RATING + 1.0
        rated = _rated(a, b, omega, sample_rate)
        if rated.shape[0] < 2 * rated.shape[1]:
            # Too few samples fast enough to count: faster first (a short slide, a
            # finger, may reach STILL_SPEED only with its upper harmonics).
            return _NO_RATING + 1.0 - min(_peak_speed(a, b, omega) / STILL_SPEED, 1.0)
        return math.log(min(condition_number(rated), 1e12))

    best = (math.inf, np.zeros(2 * (harmonics - 1)))
    for _ in range(_RESTARTS):
        x0 = rng.normal(0.0, 1.0, 2 * (harmonics - 1))
        result = minimize(cost, x0, method="Nelder-Mead",
                          options={"maxfev": _MAX_EVALUATIONS, "xatol": 1e-4, "fatol": 1e-6})
        if result.fun < best[0]:
            best = (float(result.fun), np.asarray(result.x, dtype=float))
    a, b = scaled(best[1])
    return JointExcitation(name, centre, a, b, omega,
                           condition_number(_rated(a, b, omega, sample_rate)))


def _block_diagonal(blocks: list[Vector]) -> Vector:
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = np.zeros((rows, cols))
    r = c = 0
    for block in blocks:
        out[r:r + block.shape[0], c:c + block.shape[1]] = block
        r += block.shape[0]
        c += block.shape[1]
    return out


def _lead_in(limits: LimitSet, name: str, start: float, centre: float, fraction: float
             ) -> float:
    """The time a quintic move from ``start`` to ``centre`` needs within the limits."""
    distance = abs(centre - start)
    _, _, vel, acc = _room(limits, name, centre, fraction)
    # A quintic rest-to-rest move of d in T peaks at 1.875 d/T and 5.774 d/T^2.
    return max(1.875 * distance / vel, math.sqrt(5.774 * distance / acc))
