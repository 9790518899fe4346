"""Joint commands for the simulator: what each actuator type takes, and position control.

Every DOF is driven as its joint's ``actuator`` says (DART's meaning of
``Joint::setCommand``):

==============  =======================================  ===============================
actuator        direct command                           a *position* command becomes
==============  =======================================  ===============================
FORCE           effort (N, N m)                          PID effort
                                                         ``kp e + kd (v* - v) + ki I``
                                                         plus gravity compensation,
                                                         clamped to the effort limits
SERVO           velocity (DART's servo motor reaches it  velocity ``v* + kp_vel * e``,
                within the force limits)                 clamped to the velocity limits
VELOCITY        velocity (kinematic: set exactly)        as SERVO
ACCELERATION    acceleration (kinematic)                 ``kp_vel^2 e - 2 kp_vel v``
                                                         (critically damped), clamped
                                                         to the acceleration limits
PASSIVE/LOCKED  none: every command is rejected          rejected
==============  =======================================  ===============================

A follower (a mimic joint's DOF) takes no command: the DART engine gives it a servo
motor's velocity every step that keeps it on its leader (:mod:`skel_ros.sim.followers`).

A DOF without a command (never commanded, or after :meth:`SkeletonActuation.clear`)
gets DART's command 0:

* FORCE and PASSIVE: limp (no effort; driven only by the world);
* SERVO and VELOCITY: velocity 0 (DART's servo motor within its force limits; a
  VELOCITY joint exactly): they hold still;
* ACCELERATION: acceleration 0, so a moving joint coasts for ever, through its position
  limits (DART ignores every joint constraint for kinematic actuators). With braking on
  (:meth:`SkeletonActuation.set_braking`; the simulated robot's backend, so the
  node, turns it on: its safe state) it is braked to rest within its acceleration
  limits instead, ``a = clip(-v / dt, lower, upper)``, and stays at rest;
* LOCKED: locked.

With limit enforcement on (:meth:`SkeletonActuation.set_limit_enforcement`), the
motion commanded to a VELOCITY or ACCELERATION DOF with a finite position limit (which
DART's joint-limit constraint ignores for those actuators) is bounded so that the step
does not carry the DOF past the limit: the velocity of the step (a VELOCITY DOF's
command; ``v + a dt`` for an ACCELERATION DOF) stays within ``(lower - q) / dt`` and
``(upper - q) / dt``, widened to include 0 (a DOF already past a limit is stopped, not
thrown back). The DOF stops on the limit as a SERVO joint does under DART's constraint;
a hard stop, so an ACCELERATION DOF may exceed its acceleration limits there. The
limits are those of the limit set (the model's, or tightened ones).

Every command first goes through the shared limits module
(:meth:`skel_ros.model.limits.LimitSet.check`): a command with a NaN or an
infinity, an unknown or repeated joint name, or a count mismatch is rejected
whole (:class:`~skel_ros.sim.errors.CommandError`); otherwise each value is
clamped into its limits (position targets into the position limits). A command
holds until replaced or cleared. A position target is always reached through the
controller, never by setting the position, so joints never jump; a reachable one is
reached, as by the servo the joint models: a FORCE joint's integral ``I`` takes it past
what Coulomb friction leaves of a PD's error (conditional integration, reset by a new
move, a mode change and :meth:`SkeletonActuation.clear`: ``_force_control``), a SERVO
joint's motor and a kinematic joint are not held off by friction. Gains:
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

A DOF may instead be given a servo's plain law (its gains' ``velocity_feedforward``
false: ``v*`` is not fed forward) and a command delay (its gains' ``delay``): its
position targets reach the controller that many steps after they were held, as a real
servo takes them after its bus and firmware; until its first target arrives, a DOF that
entered position mode holds where it was. Position targets follow each other down the
delay (a stream faster than the delay keeps every one); a command of another kind or a
clear voids those still on their way. ``skel-ros identify`` measures both on the robot
(the simulation node's ``sim_params``).
"""

from __future__ import annotations

import enum
import heapq
import itertools
from dataclasses import dataclass, replace
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
    from skel_ros.sim.followers import FollowerServos
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
_NO_INDEX = np.zeros(0, dtype=np.intp)


@dataclass(frozen=True)
class _StepPlan:
    """What position control does each step, for the modes held now.

    Made when a command changes the modes (not per step): the indices of the DOFs in
    position mode per actuator kind, and the gains and effort limits of the FORCE ones
    in that order, so that a step touches only those DOFs.
    """

    position: npt.NDArray[np.intp]
    force: npt.NDArray[np.intp]
    accel: npt.NDArray[np.intp]
    servo: npt.NDArray[np.intp]
    kp: Vector
    kd: Vector
    ki: Vector
    effort_lo: Vector
    effort_hi: Vector
    integral_lo: Vector  # the bounds of the integral term (N m): i_limit and the effort limits
    integral_hi: Vector
    i_zone: Vector
    i_rate: Vector  # ki / kp (1/s): how fast the integral alone closes an error held by friction
    ki_dt: Vector  # ki * dt
    force_mask: npt.NDArray[np.bool_]  # ``force`` as a mask over every DOF
    integrating: bool  # some FORCE DOF has an integral term
    gravity: npt.NDArray[np.bool_] | None  # per FORCE DOF: gravity compensated; None: none
    feed_forward: bool  # some FORCE DOF's setpoint is rate-limited (kd v* fed forward)
    plain_error: bool  # no DOF of a ball or free joint: the position error is setpoint - q

    @classmethod
    def empty(cls) -> _StepPlan:
        """No DOF in position mode."""
        none = np.zeros(0)
        return cls(_NO_INDEX, _NO_INDEX, _NO_INDEX, _NO_INDEX, none, none, none, none, none,
                   none, none, none, none, none, np.zeros(0, dtype=bool), integrating=False,
                   gravity=None, feed_forward=False, plain_error=True)


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
        followers: The servo motors of the skeleton's followers (mimic joints), given
            their velocity command before every step; None where the engine couples
            followers itself (MuJoCo's equality).
    """

    def __init__(  # noqa: PLR0915 - one statement per piece of per-DOF state
        self,
        skeleton: Skeleton,
        dart_skeleton: Dart,
        limits: LimitSet,
        gains: SimGains,
        time_step: float,
        *,
        public_names: Sequence[str] | None = None,
        followers: FollowerServos | None = None,
    ) -> None:
        self.skeleton = skeleton
        self._followers = followers if followers else None
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
        # The command delay of each DOF, in steps (0: none), and the position targets on
        # their way: (the step count they arrive at, order, DOF indices, values).
        self._delay_steps = np.array([round(g.delay / self._dt) for g in self.gains],
                                     dtype=np.intp)
        self._any_delay = bool(self._delay_steps.any())
        self._pending: list[tuple[int, int, npt.NDArray[np.intp], Vector]] = []
        self._order = itertools.count()
        self._steps = 0  # apply() calls so far
        self._is = {
            a: np.array([x is a for x in self._actuator], dtype=bool) for a in ActuatorType
        }
        self._dofs = [dart_skeleton.getDof(i) for i in range(n)]
        self._model_k = np.array([d.spring_stiffness for d in skeleton.dofs], dtype=float)
        self._model_rest = np.array([d.rest_position for d in skeleton.dofs], dtype=float)
        self._model_d = np.array([d.damping for d in skeleton.dofs], dtype=float)
        self._ancestors = _ancestor_dofs(skeleton)
        # DOFs whose position difference is the plain one (DART's for every joint but the
        # rotation-vector coordinates of ball and free joints).
        self._plain = np.array([not skeleton.joint(d.joint).type.spec.rotation_vector
                                for d in skeleton.dofs], dtype=bool)
        following = np.zeros(n, dtype=bool)
        if self._followers is not None:
            following[self._followers.indices] = True
        self._kinematic = (self._is[ActuatorType.SERVO] | self._is[ActuatorType.VELOCITY]
                           | self._is[ActuatorType.ACCELERATION] | self._is[ActuatorType.LOCKED]
                           | following)
        self._gravity_ok = np.zeros(n, dtype=bool)
        self._spring_on = np.zeros(n, dtype=bool)  # PD carried by DART's joint spring/damper
        self._spring_idx = _NO_INDEX  # the same, as indices
        self._spring_mask: npt.NDArray[np.bool_] | None = None  # the mask last given
        self._spring_rest = np.zeros(n)
        # The FORCE DOFs in position mode and the command the last step gave them beside
        # their spring (gravity, integral, kd v*): record_efforts adds it to the spring's.
        self._implicit_cmd: tuple[npt.NDArray[np.intp], Vector] = (_NO_INDEX, np.zeros(0))
        self._mode = [ActuationMode.NONE] * n
        self._value = np.zeros(n)  # effort / velocity / acceleration / position target
        self._setpoint = np.zeros(n)  # what the position controller aims at this step
        self._setpoint_v = np.zeros(n)  # the setpoint's velocity (rate-limited DOFs)
        self._ramp_idx, self._ramp = _rate_limiter(limits)
        self._ramped = np.zeros(n, dtype=bool)
        self._ramped[self._ramp_idx] = True
        # The DOFs whose setpoint's velocity is fed forward: rate-limited, and their gains
        # ask for it (a servo's plain law does not).
        self._fed = self._ramped & np.array([g.velocity_feedforward for g in self.gains],
                                            dtype=bool)
        self._integral = np.zeros(n)  # the integral term ki * integral(e dt) (N m, FORCE DOFs)
        self._efforts = np.zeros(n)
        self._direct = np.zeros(n, dtype=bool)
        self._position = np.zeros(n, dtype=bool)
        # Per-step shortcuts (kept by _update_masks / _sync_springs): which work there is.
        self._active = False
        self._any_position = False
        self._any_spring = False
        self._plan = _StepPlan.empty()
        # True while every rate-limited setpoint stands on its target (the limiter's fixed
        # point: a step would change nothing); False after a command or a setpoint move.
        self._settled = True
        # True when a setpoint changed since DART's springs were given their rest positions.
        self._rest_dirty = False
        self._servo = self._is[ActuatorType.SERVO] | following  # efforts: constraint forces
        self._any_servo = bool(self._servo.any())
        self._passive = self._is[ActuatorType.PASSIVE]
        self._any_passive = bool(self._passive.any())
        self._public = tuple(public_names) if public_names is not None else tuple(
            d.name for d in skeleton.dofs)
        self._braking = False  # set_braking
        self._brake = _NO_INDEX  # the uncommanded ACCELERATION DOFs, while braking
        # VELOCITY / ACCELERATION DOFs with a finite position limit, and the same two
        # while limits are enforced (set_limit_enforcement): stopped on their limits.
        lo, hi = limits.lower(LimitKind.POSITION), limits.upper(LimitKind.POSITION)
        limited = np.isfinite(lo) | np.isfinite(hi)
        self._limited_vel = np.flatnonzero(limited & self._is[ActuatorType.VELOCITY])
        self._limited_acc = np.flatnonzero(limited & self._is[ActuatorType.ACCELERATION])
        self._stop_vel = self._stop_acc = _NO_INDEX
        with np.errstate(divide="ignore", invalid="ignore"):
            # The implicit PD's spring: stiffness, and the weights of the rest position
            # (model rest, setpoint) where the stiffness is > 0.
            self._pd_k = self._model_k + self._kp
            self._pd_rest_model = self._model_k * self._model_rest
            self._pd_positive = self._pd_k > 0
        self._update_masks()

    # ----------------------------------------------------------------- commands

    def modes(self) -> tuple[ActuationMode, ...]:
        """The current mode of every DOF."""
        return tuple(self._mode)

    def targets(self) -> Vector:
        """The held command value of every DOF (0 where there is none), a copy."""
        copy: Vector = self._value.copy()
        return copy

    def position_targets(self) -> Vector:
        """The held target of every DOF in position mode (NaN elsewhere), a copy."""
        return np.where(self._position, self._value, np.nan)

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
            name = self._public[i]
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
        self.hold_values(mode, result.indices, result.values)

    def hold_values(self, mode: ActuationMode, indices: npt.NDArray[np.intp],
                    values: Vector) -> None:
        """Hold checked ``values`` for the DOFs at ``indices`` (this skeleton's order)."""
        entering = [i for i in indices if mode is ActuationMode.POSITION
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
        if self._pending and mode is not ActuationMode.POSITION:
            # Out of position mode: their targets on the way are void. (Position targets
            # follow each other down the delay, as through a servo's bus: a stream faster
            # than the delay keeps all of them.)
            self._drop_pending(indices)
        if mode is ActuationMode.POSITION and self._any_delay:
            values = self._delay(indices, values, entering)
        modes_change = False
        for i, value in zip(indices, values, strict=True):
            if (mode is ActuationMode.POSITION and self._mode[i] is mode
                    and abs(value - self._value[i]) > self._i_zone[i]):
                # A new move: the integral held against friction (or a load) on the way
                # to the last target is no help on the way to this one. A streamed
                # trajectory's next sample, closer than i_zone, keeps it.
                self._integral[i] = 0.0
            modes_change = modes_change or self._mode[i] is not mode
            self._mode[i] = mode
            self._value[i] = value
            if mode is ActuationMode.POSITION and not self._ramped[i]:
                self._setpoint[i] = value
        self._settled = False
        self._rest_dirty = True
        if modes_change:  # a new target in the same mode (a trajectory's next sample) keeps them
            self._update_masks()

    def clear(self, names: Sequence[str] | None = None) -> None:
        """Drop the commands of ``names`` (all when None).

        Those DOFs go to their actuator's safe state (module docstring).
        """
        indices = (range(len(self._mode)) if names is None
                   else [self.skeleton.dof_index(n) for n in names])
        if self._pending:
            self._drop_pending(np.fromiter(indices, dtype=np.intp))
        for i in indices:
            self._mode[i] = ActuationMode.NONE
            self._value[i] = 0.0
            self._integral[i] = 0.0
        self._update_masks()

    def _delay(self, indices: npt.NDArray[np.intp], values: Vector, entering: Sequence[int]
               ) -> Vector:
        """Send the targets of delayed DOFs on their way; what each DOF holds until then.

        A DOF without a delay takes its value now; a delayed one keeps its target (one
        entering position mode: where it is, its setpoint) until :meth:`_arrive`.
        """
        steps = self._delay_steps[indices]
        late = steps > 0
        if not late.any():
            return values
        for n in np.unique(steps[late]):
            sel = steps == n
            heapq.heappush(self._pending, (self._steps + int(n), next(self._order),
                                           np.array(indices[sel], dtype=np.intp),
                                           np.array(values[sel], dtype=float)))
        new = np.isin(indices, np.asarray(entering, dtype=np.intp))
        kept = np.where(new, self._setpoint[indices], self._value[indices])
        return np.where(late, kept, values)

    def _drop_pending(self, indices: npt.NDArray[np.intp]) -> None:
        """Forget the targets on their way to ``indices`` (a command of another kind, a clear)."""
        kept = []
        for due, order, idx, vals in self._pending:
            keep = ~np.isin(idx, indices)
            if keep.any():
                kept.append((due, order, idx[keep], vals[keep]))
        heapq.heapify(kept)
        self._pending = kept

    def _arrive(self) -> None:
        """The delayed targets due at this step reach the controller."""
        pending = self._pending
        while pending and pending[0][0] <= self._steps:
            _, _, idx, vals = heapq.heappop(pending)
            for i, value in zip(idx, vals, strict=True):
                if self._mode[i] is not ActuationMode.POSITION:
                    continue
                if abs(value - self._value[i]) > self._i_zone[i]:  # a new move (hold_values)
                    self._integral[i] = 0.0
                self._value[i] = value
                if not self._ramped[i]:
                    self._setpoint[i] = value
            self._settled = False
            self._rest_dirty = True

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
        self._brake = np.flatnonzero(self._is[ActuatorType.ACCELERATION]
                                     & ~self._position & ~self._direct) \
            if self._braking else _NO_INDEX
        self._active = (bool(self._direct.any()) or self._any_position or bool(self._brake.size)
                        or self._followers is not None)
        self._plan = self._make_plan()
        self._sync_springs(self._spring_on & self._position)

    def _make_plan(self) -> _StepPlan:
        """The per-step work of the current modes, as index arrays and their gains."""
        sel = self._position
        force_mask = sel & self._is[ActuatorType.FORCE]
        force = np.flatnonzero(force_mask)
        lo = self.limits.lower(LimitKind.EFFORT)[force]
        hi = self.limits.upper(LimitKind.EFFORT)[force]
        ki = self._ki[force]
        gravity = self._gravity_ok[force]
        i_limit = self._i_limit[force]
        kp = self._kp[force]
        # Without a kp the integral is the law: "closing" is then faster than a step.
        i_rate = np.divide(ki, kp, out=np.full(force.size, 1.0 / self._dt), where=kp > 0)
        return _StepPlan(
            position=np.flatnonzero(sel),
            force=force,
            accel=np.flatnonzero(sel & self._is[ActuatorType.ACCELERATION]),
            servo=np.flatnonzero(sel & (self._is[ActuatorType.SERVO]
                                        | self._is[ActuatorType.VELOCITY])),
            kp=self._kp[force], kd=self._kd[force], ki=ki, effort_lo=lo, effort_hi=hi,
            # Anti-windup: the integral term never pushes harder than i_limit, nor than
            # the effort limits let the joint push.
            integral_lo=np.maximum(-i_limit, np.minimum(lo, 0.0)),
            integral_hi=np.minimum(i_limit, np.maximum(hi, 0.0)),
            i_zone=self._i_zone[force], i_rate=i_rate, ki_dt=ki * self._dt,
            force_mask=force_mask, integrating=bool((ki > 0).any()),
            gravity=gravity if gravity.any() else None,
            feed_forward=self._ramp is not None and bool(self._fed[force].any()),
            plain_error=bool(self._plain[sel].all()),
        )

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

    def set_limit_enforcement(self, enabled: bool) -> None:  # noqa: FBT001 - a switch
        """Stop VELOCITY and ACCELERATION DOFs on their position limits, or not (module docstring).

        The engine calls it with its own limit enforcement (DART's constraint does it
        for the other actuator types).
        """
        self._stop_vel = self._limited_vel if enabled else _NO_INDEX
        self._stop_acc = self._limited_acc if enabled else _NO_INDEX

    def set_braking(self, enabled: bool) -> None:  # noqa: FBT001 - a switch
        """Brake uncommanded ACCELERATION DOFs to rest, or give them DART's 0 (module doc)."""
        self._braking = bool(enabled)
        self._update_masks()

    @property
    def active(self) -> bool:
        """True when :meth:`apply` has work: some DOF holds a command, or one is braked."""
        return self._active

    def apply(self) -> None:
        """Give DART this step's commands (call before ``world.step``)."""
        if self._pending and self._pending[0][0] <= self._steps:
            self._arrive()
        self._steps += 1
        if not self._active:
            return
        cmd = np.where(self._direct, self._value, 0.0)
        if self._any_position:
            self._position_control(cmd)
        if self._brake.size or self._stop_vel.size or self._stop_acc.size:
            self._kinematic_safety(cmd)
        if self._followers is not None:
            self._followers.apply(cmd)
        self._dart.setCommands(cmd)

    def _kinematic_safety(self, cmd: Vector) -> None:
        """Brake the uncommanded ACCELERATION DOFs; stop kinematic DOFs on their limits.

        Both in the module docstring. ``cmd`` holds this step's commands, changed in place.
        """
        dt = self._dt
        v = np.asarray(self._dart.getVelocities(), dtype=float)
        lim = self.limits
        brake = self._brake
        if brake.size:
            cmd[brake] = np.clip(-v[brake] / dt, lim.lower(LimitKind.ACCELERATION)[brake],
                                 lim.upper(LimitKind.ACCELERATION)[brake])
        if not (self._stop_vel.size or self._stop_acc.size):
            return
        # The velocities of the step that keep q + v dt within the position limits,
        # widened to include 0: a DOF past a limit is stopped, not thrown back.
        q = np.asarray(self._dart.getPositions(), dtype=float)
        v_lo = np.minimum((lim.lower(LimitKind.POSITION) - q) / dt, 0.0)
        v_hi = np.maximum((lim.upper(LimitKind.POSITION) - q) / dt, 0.0)
        vel = self._stop_vel
        cmd[vel] = np.clip(cmd[vel], v_lo[vel], v_hi[vel])
        acc = self._stop_acc  # DART's semi-implicit Euler: the step's velocity is v + a dt
        cmd[acc] = np.clip(cmd[acc], (v_lo[acc] - v[acc]) / dt, (v_hi[acc] - v[acc]) / dt)

    def _advance_setpoints(self) -> None:
        """One rate-limiter step of the setpoints of the rate-limited DOFs in position mode.

        Nothing to do while every setpoint stands on its target with zero velocity: that
        is the limiter's fixed point (a step would return the same setpoints).
        """
        if self._ramp is None or self._settled:
            return
        idx = self._ramp_idx
        on = self._position[idx]
        if not on.any():
            self._settled = True
            return
        # DOFs not in position mode stand still at their (finite) stored setpoint.
        start = self._setpoint[idx]
        goal = np.where(on, self._value[idx], start)
        q, v = self._ramp.advance(start, np.where(on, self._setpoint_v[idx], 0.0), goal,
                                  self._dt)
        q = np.where(on, q, start)
        v = np.where(on, v, 0.0)
        self._setpoint[idx] = q
        self._setpoint_v[idx] = v
        self._rest_dirty = True
        self._settled = bool((q == goal).all() and not v.any())

    def _position_control(self, cmd: Vector) -> None:
        plan = self._plan
        self._advance_setpoints()
        q = self._dart.getPositions()
        v = self._dart.getVelocities()
        if plan.plain_error:  # DART's difference there is setpoint - q (used where held)
            error = self._setpoint - q
        else:  # DART's own difference: right for rotation-vector coordinates (ball, free)
            target = np.array(q, dtype=float)
            target[plan.position] = self._setpoint[plan.position]
            error = self._dart.getPositionDifferences(target, q)
        lim = self.limits

        if plan.force.size:
            self._force_control(plan, error, v, cmd)
        elif self._any_spring:
            self._sync_springs(np.zeros_like(self._spring_on))

        accel = plan.accel
        if accel.size:
            # No feed-forward here: clamped to the acceleration limits, the catch-up
            # would overshoot the target (0.04 rad on a 0.5 rad move, 1 rad/s, 4 rad/s^2).
            kv = self._kv[accel]
            acc = kv * kv * error[accel] - 2.0 * kv * v[accel]
            cmd[accel] = np.clip(acc, lim.lower(LimitKind.ACCELERATION)[accel],
                                 lim.upper(LimitKind.ACCELERATION)[accel])

        servo = plan.servo
        if servo.size:
            # The setpoint's own velocity, fed forward (as an MIT motor's kd (v* - v) and
            # the hardware node's rate limiter do): a moving setpoint is followed without lag.
            vel = self._kv[servo] * error[servo]
            if self._ramp is not None:
                vel = vel + np.where(self._fed[servo], self._setpoint_v[servo], 0.0)
            cmd[servo] = np.clip(vel, lim.lower(LimitKind.VELOCITY)[servo],
                                 lim.upper(LimitKind.VELOCITY)[servo])

    def _force_control(self, plan: _StepPlan, error: Vector, v: Vector, cmd: Vector) -> None:
        """PID with gravity compensation for FORCE joints in position mode.

        The law is ``tau = kp e + kd (v* - v) + ki I + g``, ``v*`` the setpoint's
        velocity (0 where no rate limiter moves it). Its stiffness and damping are
        handed to DART as the joint's spring (rest = target) and damper, which DART
        integrates implicitly, so any gains are stable, however stiff and however
        coupled the DOFs; ``kd v*``, the integral and gravity terms go in as the
        command. When the law's effort (at this step's state) is outside the effort limits, the
        DOF gets the clamped effort as a plain command instead, so the limits hold.

        The integral term takes a joint the last way to its target where Coulomb
        friction (which holds a PD short by ``friction / kp``), a joint spring or a load
        would hold it off: ``ki I`` is this step's term, then grows by ``ki e dt`` while
        ``|e| <= i_zone``, the joint is not already closing the error at the integral's
        own rate (``e v <= (ki / kp) e^2``) and the law is within the effort limits; it
        is bounded by ``i_limit`` and by the effort limits (anti-windup). A moving joint
        therefore winds nothing up.
        """
        f = plan.force
        e = error[f]
        vf = v[f]
        feed = self._integral[f] if plan.integrating else np.zeros(f.size)
        if plan.feed_forward and not self._settled:  # settled: every v* is 0
            feed += plan.kd * np.where(self._fed[f], self._setpoint_v[f], 0.0)
        if plan.gravity is not None:
            feed += np.where(plan.gravity, np.asarray(self._dart.getGravityForces())[f], 0.0)
        tau = plan.kp * e - plan.kd * vf + feed
        lo, hi = plan.effort_lo, plan.effort_hi
        feed = np.minimum(np.maximum(feed, lo), hi)
        saturated = (tau < lo) | (tau > hi)
        any_saturated = saturated.any()
        if plan.integrating:
            # Conditional integration (anti-windup): near the target only; not while the
            # error shrinks by itself at least at the integral's own rate ki / kp,
            # e v > (ki / kp) e^2 (a move winds nothing up: the integral works on a joint
            # held off its target); not while the law is beyond an effort limit.
            grow = (np.abs(e) <= plan.i_zone) & (e * (vf - plan.i_rate * e) <= 0.0)
            if any_saturated:
                grow &= ~saturated
            self._integral[f] = np.minimum(np.maximum(
                self._integral[f] + plan.ki_dt * e * grow, plan.integral_lo), plan.integral_hi)
        if any_saturated:
            implicit = np.zeros_like(self._spring_on)
            implicit[f[~saturated]] = True
            feed = np.where(saturated, 0.0, feed)
            cmd[f] = np.where(saturated, np.minimum(np.maximum(tau, lo), hi), feed)
        else:  # the usual case: every FORCE DOF's PD goes to DART's spring and damper
            implicit = plan.force_mask
            cmd[f] = feed
        self._implicit_cmd = (f, feed)  # read back by record_efforts (once per read)
        self._sync_springs(implicit)

    def _sync_springs(self, implicit: npt.NDArray[np.bool_]) -> None:
        """Give DART's joint springs/dampers the PD of ``implicit`` DOFs; the others the model's.

        DART is told only what changed: a spring turned on or off, a new rest position
        (the setpoint moved). Held still, that is nothing.
        """
        on = self._spring_on
        if not self._rest_dirty and (implicit is self._spring_mask
                                     or np.array_equal(implicit, on)):
            return
        if not (self._any_spring or implicit.any()):
            self._rest_dirty = False
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
        self._spring_mask = implicit  # the caller's mask: the same object next step, unchanged
        self._spring_idx = np.flatnonzero(implicit)
        self._any_spring = bool(self._spring_idx.size)
        self._rest_dirty = False

    def record_efforts(self) -> None:
        """Read the efforts of the step just taken (before DART clears its forces)."""
        if not len(self._mode):
            return
        forces = np.array(self._dart.getForces(), dtype=float)
        if self._any_spring:
            # The PD part DART applied through the spring/damper, at the new state.
            on = self._spring_idx
            q = self._dart.getPositions()
            target = np.array(q, dtype=float)
            target[on] = self._setpoint[on]
            error = self._dart.getPositionDifferences(target, q)[on]
            v = self._dart.getVelocities()[on]
            implicit = np.zeros(len(self._mode))
            implicit[self._implicit_cmd[0]] = self._implicit_cmd[1]
            forces[on] = implicit[on] + (self._kp[on] * error - self._kd[on] * v)
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
