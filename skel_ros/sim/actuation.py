"""Joint commands for the simulator: what each actuator type takes, and position control.

Every DOF is driven as its joint's ``actuator`` says (DART's meaning of
``Joint::setCommand``):

==============  =======================================  ===============================
actuator        direct command                           a *position* command becomes
==============  =======================================  ===============================
FORCE           effort (N, N m)                          PD(+I) effort
                                                         ``kp e + kd (v* - v)`` plus
                                                         gravity compensation, clamped
                                                         to the effort limits
SERVO           velocity (DART's servo motor reaches it  velocity ``v* + kp_vel * e``,
                within the force limits)                 clamped to the velocity limits
VELOCITY        velocity (kinematic: set exactly)        as SERVO
ACCELERATION    acceleration (kinematic)                 ``kp_vel^2 e - 2 kp_vel v``
                                                         (critically damped), clamped
                                                         to the acceleration limits
PASSIVE/LOCKED  none: every command is rejected          rejected
==============  =======================================  ===============================

Every command first goes through the shared limits module
(:meth:`skel_ros.model.limits.LimitSet.check`): a command with a NaN or an
infinity, an unknown or repeated joint name, or a count mismatch is rejected
whole (:class:`~skel_ros.sim.errors.CommandError`); otherwise each value is
clamped into its limits (position targets into the position limits). A command
holds until replaced or cleared. A position target is always reached through the
controller, never by setting the position, so joints never jump. Gains:
:mod:`skel_ros.sim.gains`.

Position targets of DOFs with a finite velocity or acceleration limit are first
shaped by the limits module's :class:`~skel_ros.model.limits.RateLimiter`: the
controller follows a *setpoint* that starts at the joint's position (and
velocity) when the DOF enters position mode and moves toward the target no
faster than the velocity limits and with no more than the acceleration limits
allow, stopping exactly on it; ``e`` is the setpoint's distance from the joint
position and ``v*`` the setpoint's velocity, fed forward (FORCE and SERVO/VELOCITY
joints) as an MIT-mode motor does with the velocity the hardware node's own rate
limiter sends it, so a moving setpoint is followed without the lag a plain
``- kd v`` would leave. DOFs whose velocity and acceleration limits are all
infinite (most SKEL files) get the target as the setpoint at once (``v*`` = 0);
so do DOFs whose limits the rate limiter cannot work with (velocity limits not
containing 0, acceleration limits not straddling 0).
"""

from __future__ import annotations

import enum
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from skel_ros.model.limits import (
    CheckResult,
    Clamp,
    CommandKind,
    LimitKind,
    LimitSet,
    RateLimiter,
)
from skel_ros.model.types import ActuatorType
from skel_ros.sim.errors import CommandError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.model.types import Skeleton
    from skel_ros.sim._typing import Dart
    from skel_ros.sim.gains import PositionGains, SimGains

__all__ = ["ActuationMode", "SkeletonActuation", "effective_inertia"]

Vector = npt.NDArray[np.float64]


class ActuationMode(enum.Enum):
    """What a DOF is commanded with."""

    NONE = "none"
    EFFORT = "effort"
    VELOCITY = "velocity"
    ACCELERATION = "acceleration"
    POSITION = "position"


# The direct command each actuator type takes (position goes to every actuated one).
_DIRECT = {
    ActuatorType.FORCE: ActuationMode.EFFORT,
    ActuatorType.SERVO: ActuationMode.VELOCITY,
    ActuatorType.VELOCITY: ActuationMode.VELOCITY,
    ActuatorType.ACCELERATION: ActuationMode.ACCELERATION,
}
_UNACTUATED = (ActuatorType.PASSIVE, ActuatorType.LOCKED)


def effective_inertia(dart_skeleton: Dart) -> Vector:
    """``M_ii`` of every DOF at the skeleton's current configuration.

    The inertia the DOF moves when the other joints hold still: what its
    controller has to push when the robot is position-controlled.
    """
    if not dart_skeleton.getNumDofs():
        return np.zeros(0)
    return np.asarray(np.diag(dart_skeleton.getMassMatrix()), dtype=float)


def _rate_limiter(limits: LimitSet) -> tuple[npt.NDArray[np.intp], RateLimiter | None]:
    """The DOFs whose position setpoints are rate-limited, and the limiter for them.

    Those with a finite velocity or acceleration limit that the limiter can work
    with (velocity limits containing 0, acceleration limits straddling 0).
    """
    vlo, vhi = limits.lower(LimitKind.VELOCITY), limits.upper(LimitKind.VELOCITY)
    alo, ahi = limits.lower(LimitKind.ACCELERATION), limits.upper(LimitKind.ACCELERATION)
    finite = np.isfinite(vlo) | np.isfinite(vhi) | np.isfinite(alo) | np.isfinite(ahi)
    usable = (vlo <= 0.0) & (vhi >= 0.0) & (alo < 0.0) & (ahi > 0.0)
    idx = np.flatnonzero(finite & usable).astype(np.intp)
    if not idx.size:
        return idx, None
    return idx, RateLimiter(limits, [limits.names[i] for i in idx])


def _ancestor_dofs(skeleton: Skeleton) -> list[npt.NDArray[np.intp]]:
    """For every DOF, the indices of the DOFs of all joints between its joint and the world."""
    out = []
    for dof in skeleton.dofs:
        above: list[int] = []
        joint = skeleton.joint(dof.joint)
        while joint.parent is not None:
            joint = skeleton.joint(skeleton.body(joint.parent).parent_joint)
            above.extend(range(joint.first_dof, joint.first_dof + joint.num_dofs))
        out.append(np.array(above, dtype=np.intp))
    return out


class SkeletonActuation:
    """The commands of one skeleton: validation, holding, and conversion to DART commands.

    Args:
        skeleton: The model skeleton.
        dart_skeleton: Its dartpy skeleton (same DOF order), at the initial state.
        limits: Its limit set (``LimitSet.from_skeleton``, maybe tightened).
        gains: Gain settings; per-DOF gains are derived at construction.
        time_step: The simulation step (for the integral term).
        public_names: The DOFs' public names, for per-DOF gains given under them.
    """

    def __init__(
        self,
        skeleton: Skeleton,
        dart_skeleton: Dart,
        limits: LimitSet,
        gains: SimGains,
        time_step: float,
        *,
        public_names: Sequence[str] | None = None,
    ) -> None:
        self.skeleton = skeleton
        self.limits = limits
        self._dart = dart_skeleton
        self._dt = float(time_step)
        n = skeleton.num_dofs
        self._actuator = tuple(skeleton.joint(d.joint).actuator for d in skeleton.dofs)
        inertia = effective_inertia(dart_skeleton)
        self.gains: tuple[PositionGains, ...] = tuple(
            gains.gains_for(d.name, inertia[i], None if public_names is None else public_names[i],
                            damping=d.damping)
            for i, d in enumerate(skeleton.dofs)
        )

        def column(attr: str) -> Vector:
            return np.array([float(getattr(g, attr)) for g in self.gains])

        self._kp, self._kd, self._ki = column("kp"), column("kd"), column("ki")
        self._i_limit, self._i_zone = column("i_limit"), column("i_zone")
        self._kv = column("kp_vel")
        self._gravity = np.array([g.gravity_compensation for g in self.gains], dtype=bool)
        self._is = {
            a: np.array([x is a for x in self._actuator], dtype=bool) for a in ActuatorType
        }
        self._dofs = [dart_skeleton.getDof(i) for i in range(n)]
        self._model_k = np.array([d.spring_stiffness for d in skeleton.dofs], dtype=float)
        self._model_rest = np.array([d.rest_position for d in skeleton.dofs], dtype=float)
        self._model_d = np.array([d.damping for d in skeleton.dofs], dtype=float)
        self._ancestors = _ancestor_dofs(skeleton)
        self._kinematic = (self._is[ActuatorType.SERVO] | self._is[ActuatorType.VELOCITY]
                           | self._is[ActuatorType.ACCELERATION] | self._is[ActuatorType.LOCKED])
        self._gravity_ok = np.zeros(n, dtype=bool)
        self._spring_on = np.zeros(n, dtype=bool)  # PD carried by DART's joint spring/damper
        self._spring_rest = np.zeros(n)
        self._implicit_cmd = np.zeros(n)
        self._mode = [ActuationMode.NONE] * n
        self._value = np.zeros(n)  # effort / velocity / acceleration / position target
        self._setpoint = np.zeros(n)  # what the position controller aims at this step
        self._setpoint_v = np.zeros(n)  # the setpoint's velocity (rate-limited DOFs)
        self._ramp_idx, self._ramp = _rate_limiter(limits)
        self._ramped = np.zeros(n, dtype=bool)
        self._ramped[self._ramp_idx] = True
        self._integral = np.zeros(n)
        self._efforts = np.zeros(n)
        self._direct = np.zeros(n, dtype=bool)
        self._position = np.zeros(n, dtype=bool)
        # Per-step shortcuts (kept by _update_masks / _sync_springs): which work there is.
        self._active = False
        self._any_position = False
        self._any_spring = False
        self._servo = self._is[ActuatorType.SERVO]
        self._any_servo = bool(self._servo.any())
        self._passive = self._is[ActuatorType.PASSIVE]
        self._any_passive = bool(self._passive.any())
        with np.errstate(divide="ignore", invalid="ignore"):
            # The implicit PD's spring: stiffness, and the weights of the rest position
            # (model rest, setpoint) where the stiffness is > 0.
            self._pd_k = self._model_k + self._kp
            self._pd_rest_model = self._model_k * self._model_rest
            self._pd_positive = self._pd_k > 0

    # ----------------------------------------------------------------- commands

    def modes(self) -> tuple[ActuationMode, ...]:
        """The current mode of every DOF."""
        return tuple(self._mode)

    def targets(self) -> Vector:
        """The held command value of every DOF (0 where there is none), a copy."""
        copy: Vector = self._value.copy()
        return copy

    def setpoints(self) -> Vector:
        """The position setpoint of every DOF in position mode (NaN elsewhere), a copy.

        The rate-limited way from where the joint was toward its target (module
        docstring); equal to the target for DOFs without velocity/acceleration limits.
        """
        return np.where(self._position, self._setpoint, np.nan)

    def command(self, mode: ActuationMode, names: Sequence[str], values: npt.ArrayLike
                ) -> CheckResult:
        """Validate, clamp and hold a command (see the module docstring).

        Returns:
            The limits module's result (what was clamped).

        Raises:
            CommandError: The command is rejected whole; nothing changed.
        """
        result = self.prepare(mode, names, values)
        self.hold(mode, result)
        return result

    def prepare(self, mode: ActuationMode, names: Sequence[str], values: npt.ArrayLike
                ) -> CheckResult:
        """Validate and clamp a command without holding it.

        Raises:
            CommandError: The command is rejected whole.
        """
        result = self._check(mode, names, values)
        for i in result.indices:
            actuator = self._actuator[i]
            name = self.skeleton.dofs[i].name
            if actuator in _UNACTUATED:
                raise CommandError(f"joint {name!r} is {actuator.value}: it takes no commands")
            if mode is not ActuationMode.POSITION and _DIRECT[actuator] is not mode:
                raise CommandError(
                    f"joint {name!r} has a {actuator.value} actuator: it takes "
                    f"{_DIRECT[actuator].value} or position commands, not {mode.value}"
                )
        return result

    def hold(self, mode: ActuationMode, result: CheckResult) -> None:
        """Hold a command that :meth:`prepare` accepted."""
        entering = [i for i in result.indices if mode is ActuationMode.POSITION
                    and self._mode[i] is not ActuationMode.POSITION]
        if entering:
            # The setpoint of a DOF entering position mode starts where the joint is.
            q = np.asarray(self._dart.getPositions(), dtype=float)
            v = np.asarray(self._dart.getVelocities(), dtype=float)
            vlo = self.limits.lower(LimitKind.VELOCITY)
            vhi = self.limits.upper(LimitKind.VELOCITY)
            for i in entering:
                self._integral[i] = 0.0
                self._setpoint[i] = q[i] if np.isfinite(q[i]) else 0.0
                self._setpoint_v[i] = float(np.clip(v[i], vlo[i], vhi[i])) \
                    if np.isfinite(v[i]) else 0.0
        for i, value in zip(result.indices, result.values, strict=True):
            self._mode[i] = mode
            self._value[i] = value
            if mode is ActuationMode.POSITION and not self._ramped[i]:
                self._setpoint[i] = value
        self._update_masks()

    def clear(self, names: Sequence[str] | None = None) -> None:
        """Drop the commands of ``names`` (all when None); those DOFs go uncommanded."""
        indices = (range(len(self._mode)) if names is None
                   else [self.skeleton.dof_index(n) for n in names])
        for i in indices:
            self._mode[i] = ActuationMode.NONE
            self._value[i] = 0.0
            self._integral[i] = 0.0
        self._update_masks()

    def _update_masks(self) -> None:
        self._position = np.array([m is ActuationMode.POSITION for m in self._mode], dtype=bool)
        self._direct = np.array(
            [m not in (ActuationMode.NONE, ActuationMode.POSITION) for m in self._mode],
            dtype=bool,
        )
        # Gravity compensation is right only where the joint's support is held: every
        # DOF between it and the world is position-controlled or kinematic.
        held = self._position | self._kinematic
        self._gravity_ok = self._gravity & np.array(
            [bool(held[a].all()) for a in self._ancestors], dtype=bool
        )
        self._any_position = bool(self._position.any())
        self._active = bool(self._direct.any()) or self._any_position
        self._sync_springs(self._spring_on & self._position)

    def _check(self, mode: ActuationMode, names: Sequence[str], values: npt.ArrayLike
               ) -> CheckResult:
        if mode is ActuationMode.NONE:
            raise CommandError("no command kind given")
        kind = getattr(CommandKind, mode.name, None)
        if kind is None:
            # limits.CommandKind has no ACCELERATION: names, count and finiteness
            # are checked there; the values are clamped into its acceleration limits here.
            result = self.limits.check(CommandKind.EFFORT, names, values)
            if not result.ok:
                raise CommandError(result.reason)
            lo = self.limits.lower(LimitKind.ACCELERATION)[result.indices]
            hi = self.limits.upper(LimitKind.ACCELERATION)[result.indices]
            applied = np.clip(result.requested, lo, hi)
            applied.setflags(write=False)
            clamps = tuple(
                Clamp(result.names[k], float(result.requested[k]), float(applied[k]))
                for k in np.flatnonzero(applied != result.requested)
            )
            return replace(result, values=applied, clamped=clamps)
        result = self.limits.check(kind, names, values)
        if not result.ok:
            raise CommandError(result.reason)
        return result

    # ----------------------------------------------------------------- per step

    @property
    def active(self) -> bool:
        """True when some DOF holds a command."""
        return self._active

    def apply(self) -> None:
        """Give DART this step's commands (call before ``world.step``)."""
        if not self._active:
            return
        cmd = np.where(self._direct, self._value, 0.0)
        if self._any_position:
            self._position_control(cmd)
        self._dart.setCommands(cmd)

    def _advance_setpoints(self) -> None:
        """One rate-limiter step of the setpoints of the rate-limited DOFs in position mode."""
        idx = self._ramp_idx
        if self._ramp is None:
            return
        on = self._position[idx]
        if not on.any():
            return
        # DOFs not in position mode stand still at their (finite) stored setpoint.
        start = self._setpoint[idx]
        goal = np.where(on, self._value[idx], start)
        q, v = self._ramp.limit(start, np.where(on, self._setpoint_v[idx], 0.0), goal, self._dt)
        self._setpoint[idx] = np.where(on, q, start)
        self._setpoint_v[idx] = np.where(on, v, 0.0)

    def _position_control(self, cmd: Vector) -> None:
        sel = self._position
        self._advance_setpoints()
        q = self._dart.getPositions()
        v = self._dart.getVelocities()
        target = np.where(sel, self._setpoint, q)
        # DART's own difference: right for rotation-vector coordinates (ball, free).
        error = np.where(sel, self._dart.getPositionDifferences(target, q), 0.0)
        # The setpoint's own velocity, fed forward (as an MIT motor's kd (v* - v) and the
        # hardware node's rate limiter do): a moving setpoint is followed without lag.
        vsp = (None if self._ramp is None
               else np.where(sel & self._ramped, self._setpoint_v, 0.0))
        lim = self.limits

        force = sel & self._is[ActuatorType.FORCE]
        if force.any():
            self._force_control(force, error, v, cmd, vsp)
        else:
            self._sync_springs(force)

        accel = sel & self._is[ActuatorType.ACCELERATION]
        if accel.any():
            # No feed-forward here: clamped to the acceleration limits, the catch-up
            # would overshoot the target (0.04 rad on a 0.5 rad move, 1 rad/s, 4 rad/s^2).
            acc = self._kv * self._kv * error - 2.0 * self._kv * v
            acc = np.clip(acc, lim.lower(LimitKind.ACCELERATION), lim.upper(LimitKind.ACCELERATION))
            cmd[accel] = acc[accel]

        servo = sel & (self._is[ActuatorType.SERVO] | self._is[ActuatorType.VELOCITY])
        if servo.any():
            vel = self._kv * error if vsp is None else vsp + self._kv * error
            vel = np.clip(vel, lim.lower(LimitKind.VELOCITY), lim.upper(LimitKind.VELOCITY))
            cmd[servo] = vel[servo]

    def _force_control(self, force: npt.NDArray[np.bool_], error: Vector, v: Vector,
                       cmd: Vector, vsp: Vector | None) -> None:
        """PD(+I) with gravity compensation for FORCE joints.

        The law is ``tau = kp e + kd (v* - v) + ki I + g``, ``v*`` the setpoint's
        velocity (0 where no rate limiter moves it). Its stiffness and damping are
        handed to DART as the joint's spring (rest = target) and damper, which DART
        integrates implicitly, so any gains are stable, however stiff and however
        coupled the DOFs; ``kd v*``, the integral and gravity terms go in as the
        command. When the law's effort (at this step's state) is outside the effort limits, the
        DOF gets the clamped effort as a plain command instead, so the limits hold.
        """
        grow = force & (self._ki > 0) & (np.abs(error) <= self._i_zone)
        if grow.any():
            bound = np.where(grow, self._i_limit / np.where(grow, self._ki, 1.0), 0.0)
            self._integral = np.where(
                grow, np.clip(self._integral + error * self._dt, -bound, bound), self._integral
            )
        feed = self._ki * self._integral
        if vsp is not None:
            feed = feed + self._kd * vsp
        if (force & self._gravity_ok).any():
            feed = feed + np.where(self._gravity_ok, self._dart.getGravityForces(), 0.0)
        tau = self._kp * error - self._kd * v + feed
        lo, hi = self.limits.lower(LimitKind.EFFORT), self.limits.upper(LimitKind.EFFORT)
        saturated = force & ((tau < lo) | (tau > hi))
        implicit = force & ~saturated
        self._sync_springs(implicit)
        feed = np.clip(feed, lo, hi)
        cmd[implicit] = feed[implicit]
        cmd[saturated] = np.clip(tau, lo, hi)[saturated]
        self._implicit_cmd = np.where(implicit, feed, 0.0)

    def _sync_springs(self, implicit: npt.NDArray[np.bool_]) -> None:
        """Give DART's joint springs/dampers the PD of ``implicit`` DOFs; the others the model's.

        DART is told only what changed: a spring turned on or off, a new rest position
        (the setpoint moved). Held still, that is nothing; the test runs vectorized.
        """
        on = self._spring_on
        if not (self._any_spring or implicit.any()):
            return
        # rest = (k_model rest_model + kp setpoint) / (k_model + kp), or the setpoint
        # where that stiffness is 0: the spring pulling toward the setpoint.
        with np.errstate(divide="ignore", invalid="ignore"):
            rest = np.where(self._pd_positive,
                            (self._pd_rest_model + self._kp * self._setpoint) / self._pd_k,
                            self._setpoint)
        starting = implicit & ~on
        moved = implicit & (starting | (rest != self._spring_rest))
        stopping = on & ~implicit
        for i in np.flatnonzero(starting):
            dof = self._dofs[i]
            dof.setSpringStiffness(self._pd_k[i])
            dof.setDampingCoefficient(self._model_d[i] + self._kd[i])
        for i in np.flatnonzero(moved):
            self._dofs[i].setRestPosition(rest[i])
            self._spring_rest[i] = rest[i]
        for i in np.flatnonzero(stopping):
            dof = self._dofs[i]
            dof.setSpringStiffness(self._model_k[i])
            dof.setDampingCoefficient(self._model_d[i])
            dof.setRestPosition(self._model_rest[i])
        self._spring_on = implicit.copy()
        self._any_spring = bool(implicit.any())

    def record_efforts(self) -> None:
        """Read the efforts of the step just taken (before DART clears its forces)."""
        if not len(self._mode):
            return
        forces = np.array(self._dart.getForces(), dtype=float)
        if self._any_spring:
            # The PD part DART applied through the spring/damper, at the new state.
            on = self._spring_on
            q = self._dart.getPositions()
            v = self._dart.getVelocities()
            error = self._dart.getPositionDifferences(np.where(on, self._setpoint, q), q)
            pd = self._kp * error - self._kd * v
            forces[on] = (self._implicit_cmd + pd)[on]
        if self._any_servo:
            forces[self._servo] = self._dart.getConstraintForces()[self._servo]
        if self._any_passive:
            forces[self._passive] = 0.0
        self._efforts = forces

    @property
    def recorded_efforts(self) -> Vector:
        """The efforts of the last step, not a copy (do not write to it)."""
        return self._efforts

    def efforts(self) -> Vector:
        """The efforts of the last step (see ``SimEngine.efforts``), a copy."""
        copy: Vector = self._efforts.copy()
        return copy

    def reset(self) -> None:
        """Drop every command, the integrals and the recorded efforts."""
        self.clear()
        self._efforts = np.zeros(len(self._mode))
