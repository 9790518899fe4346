"""Gains of the simulator's per-DOF position controllers, and the YAML file that sets them.

Defaults are derived from a DOF's *effective inertia* ``m = M_ii``, the diagonal
of the mass matrix at the initial configuration (the inertia the DOF moves while
the other joints hold still, as they do under position control). With a natural
frequency ``w`` and damping ratio ``zeta``::

    kp = m w^2        kd = 2 zeta m w - d    ki = integral_ratio m w^3
    i_limit = integral_limit kp               (the push of that much error)

where ``d`` is the joint's own damping, which DART adds to ``kd``; a joint more
damped than ``2 zeta m w`` on its own gets ``w = d / (2 zeta m)`` and ``kd = 0``
(see :meth:`GainDefaults.gains_for`).

File format (``config/sim_gains.yaml``)::

    default:                 # how unlisted gains are derived (all keys optional)
      natural_frequency: 20.0
      damping_ratio: 1.0
      ...
    dofs:                    # per DOF name (DOF names may be anything, even "default")
      "joint 1": {kp: 200.0, kd: 20.0}
      "left/elbow": {kp_vel: 5.0}   # a public name: only that skeleton's DOF

A plain DOF name applies to that DOF in every skeleton that has it; a public
name (``SimEngine.dof_names``) to that one DOF, and wins over the plain name.
``SimEngine`` refuses a file naming a DOF the world does not have.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, cast

import yaml

from skel_ros.sim.errors import GainsError

__all__ = ["GainDefaults", "GainsError", "PositionGains", "SimGains", "load_gains", "parse_gains"]

_FLAGS = frozenset({"gravity_compensation", "velocity_feedforward"})


def _check_fields(obj: object, what: str, *, allow_inf: frozenset[str] = frozenset()) -> None:
    for f in fields(obj):  # type: ignore[arg-type]
        v = getattr(obj, f.name)
        if f.name in _FLAGS:
            if not isinstance(v, bool):
                raise GainsError(f"{what}{f.name} must be true or false, got {v!r}")
            continue
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
        ok = ok and (math.isfinite(v) or (f.name in allow_inf and v == math.inf))
        if not ok:
            raise GainsError(f"{what}{f.name} must be a finite number >= 0, got {v!r}")


@dataclass(frozen=True)
class PositionGains:
    """Position-controller gains of one DOF.

    Attributes:
        kp: Proportional gain of FORCE joints (N m / rad, N / m).
        kd: Derivative gain on the measured velocity (N m s / rad).
        ki: Integral gain (N m / (rad s)); 0 disables the integral.
        i_limit: Largest magnitude of the integral term (N m); the effort limits
            bound it too.
        i_zone: The error is integrated only while its magnitude is at most this
            (rad, m), so a large move does not wind the integral up; a new target
            farther than this from the last one resets the integral.
        kp_vel: Velocity gain (1/s) of SERVO / VELOCITY joints (velocity command
            ``kp_vel * error``) and the bandwidth of ACCELERATION joints.
        gravity_compensation: Add the generalized gravity force DART computes for
            the DOF at the current configuration (FORCE joints), so a static target
            is held without steady error.
        velocity_feedforward: Feed the rate-limited setpoint's velocity forward
            (``kd v*``; SERVO / VELOCITY joints: ``v*`` added to the velocity command),
            so a moving setpoint is followed without lag. False: the plain law
            ``kp e - kd v`` of a servo in position mode (a Dynamixel's, whose
            feed-forward gains are 0 by default), which trails a moving setpoint by
            about ``(kd + damping) / kp`` seconds.
        delay: Seconds (a multiple of the simulation step, rounded to the nearest)
            from a position command to the controller taking it: the command-to-
            actuation delay of the robot's servo (its bus, its firmware). Until its
            first target arrives, a DOF entering position mode holds where it is.
    """

    kp: float
    kd: float
    ki: float = 0.0
    i_limit: float = math.inf
    i_zone: float = math.inf
    kp_vel: float = 10.0
    gravity_compensation: bool = True
    velocity_feedforward: bool = True
    delay: float = 0.0

    def __post_init__(self) -> None:
        _check_fields(self, "gain ", allow_inf=frozenset({"i_limit", "i_zone"}))


@dataclass(frozen=True)
class GainDefaults:
    """How default gains are derived from a DOF's effective inertia (module docstring).

    Attributes:
        natural_frequency: ``w`` (rad/s). 20 rad/s settles in about 0.3 s and is
            far inside the stability limit of a 1 ms explicit step (``w dt << 1``).
        damping_ratio: ``zeta`` (1: critically damped).
        integral_ratio: ``ki = integral_ratio m w^3`` (0 turns the integral off).
            Gravity compensation removes gravity's static error, but Coulomb friction
            holds a PD short of its target by ``friction / kp`` (the example arm's
            wrist: 0.011 rad); the integral removes that offset, at the rate
            ``ki / kp = integral_ratio w``. Must stay below ``2 zeta``, the PID's
            stability bound (``ki < kp kd / m = 2 zeta m w^3``); 0.2 is a tenth of it
            at ``zeta`` = 1 (measured on the arm in both engines: 0.3-0.5 settle no
            faster overall and overshoot more, 1.0 hunts).
        integral_limit: ``i_limit = integral_limit kp`` (rad or m of error).
        integral_zone: ``i_zone`` (rad or m).
        velocity_gain: ``kp_vel`` (1/s).
        gravity_compensation: Default of :attr:`PositionGains.gravity_compensation`.
    """

    natural_frequency: float = 20.0
    damping_ratio: float = 1.0
    integral_ratio: float = 0.2
    integral_limit: float = 0.1
    integral_zone: float = 0.05
    velocity_gain: float = 10.0
    gravity_compensation: bool = True

    def __post_init__(self) -> None:
        _check_fields(self, "default ")
        if self.integral_ratio and not self.integral_ratio < 2.0 * self.damping_ratio:
            raise GainsError(
                f"default integral_ratio must be below 2 * damping_ratio (the PID's "
                f"stability bound), got {self.integral_ratio!r} with damping_ratio "
                f"{self.damping_ratio!r}; lower it, or 0 for no integral")

    def gains_for(self, inertia: float, damping: float = 0.0) -> PositionGains:
        """The default gains of a DOF whose effective inertia is ``inertia``.

        ``damping`` is the joint's own viscous damping (``<dynamics><damping>``),
        which DART applies on top of the controller's ``kd``. The derivation aims
        at a *total* damping of ``2 zeta m w``: ``kd`` is reduced by the joint's
        damping, and where the joint alone is more damped than that (a light link
        on a damped joint: a wrist), ``w`` is raised to ``damping / (2 zeta m)``
        so the loop stays as damped as asked instead of becoming sluggish.
        """
        m = float(inertia) if math.isfinite(inertia) and inertia > 0 else 0.0
        d = float(damping) if math.isfinite(damping) and damping > 0 else 0.0
        zeta = self.damping_ratio
        w = self.natural_frequency
        if m > 0 and zeta > 0 and d > 2.0 * zeta * m * w:
            w = d / (2.0 * zeta * m)
        kp = m * w * w
        return PositionGains(
            kp=kp,
            kd=max(2.0 * zeta * m * w - d, 0.0),
            ki=self.integral_ratio * m * w**3,
            i_limit=self.integral_limit * kp,
            i_zone=self.integral_zone,
            kp_vel=self.velocity_gain,
            gravity_compensation=self.gravity_compensation,
        )


_GAIN_KEYS = frozenset(f.name for f in fields(PositionGains))
_DEFAULT_KEYS = frozenset(f.name for f in fields(GainDefaults))


@dataclass(frozen=True)
class SimGains:
    """Gain settings: defaults plus per-DOF values (by DOF name).

    Attributes:
        defaults: How unlisted gains are derived.
        dofs: Per DOF name, the gains given explicitly (the others default).
        source: Where the settings come from (for messages).
    """

    defaults: GainDefaults = field(default_factory=GainDefaults)
    dofs: Mapping[str, Mapping[str, float | bool]] = field(default_factory=dict)
    source: str = "<built-in defaults>"

    def gains_for(self, name: str, inertia: float, public_name: str | None = None, *,
                  damping: float = 0.0) -> PositionGains:
        """The gains of DOF ``name`` whose effective inertia is ``inertia``.

        Args:
            name: The DOF's name in its skeleton.
            inertia: Its effective inertia.
            public_name: Its public name (``"<skeleton>/<dof>"`` in a world of
                several skeletons); an entry under that name wins over one under
                ``name``.
            damping: The joint's own viscous damping (:meth:`GainDefaults.gains_for`).
        """
        base = self.defaults.gains_for(inertia, damping)
        key = public_name if public_name is not None and public_name in self.dofs else name
        given = self.dofs.get(key)
        # The keys and value types were checked when the settings were parsed.
        return replace(base, **cast("dict[str, Any]", given)) if given else base


def _value(value: object, key: str, where: str) -> float | bool:
    if key in _FLAGS:
        if not isinstance(value, bool):
            raise GainsError(f"{where}: {key} must be true or false, got {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GainsError(f"{where}: {key} must be a number, got {value!r}")
    return float(value)


def _section(raw: object, allowed: frozenset[str], where: str) -> dict[str, float | bool]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise GainsError(f"{where}: expected a mapping, got {raw!r}")
    bad = sorted(str(k) for k in raw if k not in allowed)
    if bad:
        raise GainsError(f"{where}: unknown key(s) {bad} (expected {sorted(allowed)})")
    return {str(k): _value(v, str(k), where) for k, v in raw.items()}


def parse_gains(data: object, source: str = "<gains>") -> SimGains:
    """Gains from the parsed YAML of a gains file.

    Raises:
        GainsError: Unknown keys, non-numbers, negative or non-finite gains; the
            message names ``source`` and the key.
    """
    if data is None:
        return SimGains(source=source)
    if not isinstance(data, Mapping):
        raise GainsError(f"{source}: expected a mapping with 'default' and 'dofs'")
    unknown = sorted(str(k) for k in data if k not in ("default", "dofs"))
    if unknown:
        raise GainsError(f"{source}: unknown top-level key(s) {unknown} "
                         "(per-DOF gains go under 'dofs:')")
    try:
        defaults = GainDefaults(**_section(data.get("default"), _DEFAULT_KEYS,  # type: ignore[arg-type]
                                           f"{source}: default"))
    except GainsError as exc:
        raise GainsError(f"{source}: {exc}") from None
    raw_dofs = data.get("dofs") or {}
    if not isinstance(raw_dofs, Mapping):
        raise GainsError(f"{source}: 'dofs' must be a mapping DOF name -> gains")
    dofs: dict[str, dict[str, float | bool]] = {}
    for name, spec in raw_dofs.items():
        where = f"{source}: dofs: {name!r}"
        dofs[str(name)] = _section(spec, _GAIN_KEYS, where)
        try:
            replace(defaults.gains_for(1.0), **cast("dict[str, Any]", dofs[str(name)]))
        except GainsError as exc:
            raise GainsError(f"{where}: {exc}") from None
    return SimGains(defaults=defaults, dofs=dofs, source=source)


def load_gains(path: str | Path) -> SimGains:
    """Read a gains YAML file (``config/sim_gains.yaml`` documents the format).

    Raises:
        GainsError: The file cannot be read or is malformed.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise GainsError(f"Could not load gains from {path}: {exc}") from None
    return parse_gains(data, str(path))
