"""The simulation engine: a dartpy World built from our model, stepped with joint commands.

No ROS here: the simulation node wraps a :class:`SimEngine` (clock, topics), the
CLI and the tests use it directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from skel_ros.model.limits import CheckResult, LimitSet
from skel_ros.sim.actuation import ActuationMode, SkeletonActuation
from skel_ros.sim.gains import SimGains
from skel_ros.sim.errors import CommandError
from skel_ros.sim.world_builder import build_dart_world

if TYPE_CHECKING:
    from skel_ros.model.types import World

__all__ = ["SimEngine"]

Vector = npt.NDArray[np.float64]

_KINDS = {
    "effort": ActuationMode.EFFORT,
    "velocity": ActuationMode.VELOCITY,
    "acceleration": ActuationMode.ACCELERATION,
    "position": ActuationMode.POSITION,
}


class SimEngine:
    """Owns the dartpy World of a model and steps it.

    State vectors (:meth:`positions`, :meth:`velocities`, :meth:`efforts`) are flat,
    in our DOF order, one skeleton after another (:attr:`dof_names` names them).

    Args:
        world_model: The model (``load_skel``).
        enforce_limits: Turn on DART's joint-limit enforcement for every joint with
            a finite position limit (SkelParser never does; see
            :meth:`set_limit_enforcement`).
        gains: Position-controller gains (``load_gains``); built-in defaults if None.
        limits: Per skeleton name, a limit set to use instead of the model's
            (e.g. one tightened by an override file).
    """

    def __init__(
        self,
        world_model: World,
        *,
        enforce_limits: bool = True,
        gains: SimGains | None = None,
        limits: dict[str, LimitSet] | None = None,
    ) -> None:
        self.model = world_model
        self._gains = gains or SimGains()
        self._limit_sets = {
            skel.name: (limits or {}).get(skel.name) or LimitSet.from_skeleton(skel)
            for skel in world_model.skeletons
        }
        self._enforced = bool(enforce_limits)
        self._build()
        sizes = [s.num_dofs for s in world_model.skeletons]
        self._slices = [slice(a, a + n) for a, n in zip(np.cumsum([0, *sizes[:-1]]), sizes)]
        self.dof_names: tuple[tuple[str, str], ...] = tuple(
            (s.name, d.name) for s in world_model.skeletons for d in s.dofs
        )
        """(skeleton name, DOF name) of every entry of the state vectors."""
        self.body_names: tuple[tuple[str, str], ...] = tuple(
            (s.name, b.name) for s in world_model.skeletons for b in s.bodies
        )
        """(skeleton name, body name) of every entry of :meth:`body_transforms`."""
        self._dof_sets = {s.name: {d.name for d in s.dofs} for s in world_model.skeletons}

    def _build(self) -> None:
        """(Re)build the dartpy World at the initial state, with fresh actuation."""
        model = self.model
        self._world = build_dart_world(model)
        self._skeletons = [self._world.getSkeleton(i) for i in range(len(model.skeletons))]
        self._mobile = [s.isMobile() for s in self._skeletons]
        self._actuation = [
            SkeletonActuation(skel, dart, self._limit_sets[skel.name], self._gains,
                              model.time_step)
            for skel, dart in zip(model.skeletons, self._skeletons)
        ]
        self.set_limit_enforcement(self._enforced)

    # ----------------------------------------------------------------- properties

    @property
    def world(self) -> Any:
        """The dartpy World (for inspection; step it through :meth:`step`; new after reset)."""
        return self._world

    @property
    def time(self) -> float:
        """Simulated time in seconds."""
        return float(self._world.getTime())

    @property
    def time_step(self) -> float:
        """The step of the World in seconds."""
        return float(self._world.getTimeStep())

    @property
    def num_dofs(self) -> int:
        """Length of the state vectors."""
        return len(self.dof_names)

    @property
    def limits_enforced(self) -> bool:
        """Whether DART enforces the joints' position limits."""
        return self._enforced

    def limit_set(self, skeleton: str) -> LimitSet:
        """The limit set commands of ``skeleton`` are checked against."""
        return self._actuation_of(skeleton).limits

    # ----------------------------------------------------------------- stepping

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps, applying the held commands before each.

        Equivalent to ``world.step()`` (which clears forces and commands after
        each step) with the commands set before every step; the forces are read
        for :meth:`efforts` before they are cleared.
        """
        world = self._world
        for _ in range(int(n)):
            for act in self._actuation:
                act.apply()
            world.step(False)
            for skel, mobile, act in zip(self._skeletons, self._mobile, self._actuation):
                if mobile:
                    act.record_efforts()
                    skel.clearInternalForces()
                    skel.clearExternalForces()
                    skel.resetCommands()

    def reset(self) -> None:
        """Back to the initial state: time 0, initial positions and velocities, no commands.

        The World is rebuilt from the model: dartpy cannot save and restore a
        skeleton's full state (``getState`` is not bound, and a soft body's point
        masses are not joint coordinates), and a rebuilt World also has fresh
        collision-detector caches, so a run after :meth:`reset` repeats the first
        run bit for bit. :attr:`world` is a new object afterwards. The limit
        enforcement setting is kept.
        """
        self._build()

    def set_limit_enforcement(self, enabled: bool) -> None:  # noqa: FBT001 - a switch
        """Turn DART's limit enforcement on/off for every joint with a finite position limit.

        With it on, DART adds a joint-limit constraint (it also bounds the
        velocity by the velocity limits of those joints).
        """
        for model, dart in zip(self.model.skeletons, self._skeletons):
            for joint in model.joints:
                dofs = model.dofs[joint.first_dof : joint.first_dof + joint.num_dofs]
                if any(np.isfinite(d.position_lower) or np.isfinite(d.position_upper)
                       for d in dofs):
                    dart.getJoint(joint.index).setLimitEnforcement(bool(enabled))
        self._enforced = bool(enabled)

    # ----------------------------------------------------------------- state

    def positions(self) -> Vector:
        """Positions of every DOF (flat, our order)."""
        return self._gather(lambda s: s.getPositions())

    def velocities(self) -> Vector:
        """Velocities of every DOF (flat, our order)."""
        return self._gather(lambda s: s.getVelocities())

    def efforts(self) -> Vector:
        """The generalized force each DOF's actuator exerted during the last step.

        FORCE joints: the applied (clamped) effort command. VELOCITY, ACCELERATION
        and LOCKED joints: the force DART computed to realise the motion. SERVO
        joints: the joint-space constraint force of the step (DART's servo motor,
        together with any limit or contact force on that DOF). PASSIVE joints: 0.
        """
        if not self.num_dofs:
            return np.zeros(0)
        return np.concatenate([a.efforts() for a in self._actuation])

    def body_transforms(self) -> npt.NDArray[np.float64]:
        """World transforms (nbody, 4, 4) of every body, in :attr:`body_names` order."""
        out = [b.getWorldTransform().matrix() for s in self._skeletons for b in s.getBodyNodes()]
        return np.array(out).reshape(len(out), 4, 4)

    def _gather(self, get: Any) -> Vector:
        parts = [get(s) for s, m in zip(self._skeletons, self.model.skeletons) if m.num_dofs]
        return np.concatenate(parts) if parts else np.zeros(0)

    # ----------------------------------------------------------------- commands

    def set_commands(
        self,
        kind: str,
        names: Sequence[str],
        values: npt.ArrayLike,
        *,
        skeleton: str | None = None,
    ) -> list[CheckResult]:
        """Hold a command for some DOFs until replaced or cleared.

        Args:
            kind: ``"effort"`` (FORCE joints), ``"velocity"`` (SERVO, VELOCITY),
                ``"acceleration"`` (ACCELERATION) or ``"position"`` (any actuated
                joint, through its position controller).
            names: DOF names.
            values: One value per name.
            skeleton: The skeleton the names belong to; if None, each name must
                belong to exactly one skeleton.

        Returns:
            The limits module's result per skeleton touched (``clamped`` lists the
            values moved into their limits).

        Raises:
            CommandError: The command is rejected whole (unknown kind or joint, NaN
                or infinite value, a kind the joint's actuator does not take, ...);
                nothing was applied.
        """
        mode = _KINDS.get(kind.value if hasattr(kind, "value") else str(kind))
        if mode is None:
            raise CommandError(f"unknown command kind {kind!r} (expected {sorted(_KINDS)})")
        names = [names] if isinstance(names, str) else list(names)
        if skeleton is not None:
            groups = {skeleton: (names, values)}
        else:
            groups = self._group_by_skeleton(names, values)
        # Check every part before holding any: a rejected part rejects the whole command.
        prepared = [
            (act, act.prepare(mode, n, v))
            for act, (n, v) in ((self._actuation_of(k), g) for k, g in groups.items())
        ]
        for act, result in prepared:
            act.hold(mode, result)
        return [result for _, result in prepared]

    def clear_commands(self) -> None:
        """Drop every held command."""
        for act in self._actuation:
            act.clear()

    def _actuation_of(self, skeleton: str) -> SkeletonActuation:
        for act in self._actuation:
            if act.skeleton.name == skeleton:
                return act
        raise CommandError(f"unknown skeleton {skeleton!r}")

    def _group_by_skeleton(self, names: list[str], values: Any
                           ) -> dict[str, tuple[list[str], Any]]:
        with_dofs = [s for s in self.model.skeletons if s.num_dofs]
        if len(with_dofs) == 1:
            return {with_dofs[0].name: (names, values)}
        flat = np.asarray(values)
        if flat.ndim != 1 or flat.size != len(names):
            raise CommandError(f"{len(names)} names but {flat.size} values")
        groups: dict[str, tuple[list[str], list[Any]]] = {}
        for name, value in zip(names, flat):
            owners = [s.name for s in with_dofs if name in self._dof_sets[s.name]]
            if len(owners) != 1:
                where = "no skeleton" if not owners else f"skeletons {owners}"
                raise CommandError(
                    f"joint {name!r} is in {where}; pass skeleton= to say which"
                )
            entry = groups.setdefault(owners[0], ([], []))
            entry[0].append(name)
            entry[1].append(value)
        return {k: (n, np.array(v)) for k, (n, v) in groups.items()}
