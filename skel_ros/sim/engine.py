"""The simulation engine: a dartpy World built from our model, stepped with joint commands.

No ROS here: the simulation node wraps a :class:`SimEngine` (clock, topics), the
CLI and the tests use it directly.

Public names
------------
The node publishes and takes joint names as :attr:`SimEngine.dof_names` gives
them, and the same rule names the frames (:attr:`SimEngine.frame_names`). It is
the rule of the URDF export (``skel_ros.model.urdf.skeleton_namespace``), so
``sensor_msgs/JointState`` names match the joints of ``world_to_urdf(world)``:

* a world in which at most one skeleton has bodies: the SKEL names as they are
  (DART already makes DOF and body names unique within a skeleton);
* a world with several skeletons that have bodies: every name is
  ``"<skeleton>/<name>"``, whether it clashes or not (``"arm/elbow"``,
  ``"ground skeleton/ground"``). Always prefixing, rather than only the names
  that clash, keeps a DOF's name from changing when a skeleton is added to or
  removed from the file, and is what RViz sees through the URDF.

Skeleton names are unique in a world (DART renames repeats), so the only way two
prefixed names can still clash is a ``/`` inside names (skeleton ``"a"`` with DOF
``"b/c"`` and skeleton ``"a/b"`` with DOF ``"c"``); such a world is refused
with a :class:`~skel_ros.sim.errors.SimBuildError` naming both.

:meth:`SimEngine.set_commands` takes public names, or, with ``skeleton=``, the
plain names of one skeleton.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from skel_ros.model.limits import CheckResult, LimitError, LimitSet
from skel_ros.model.mimic import coupled_start
from skel_ros.model.types import ActuatorType
from skel_ros.model.urdf import skeleton_namespace
from skel_ros.sim.actuation import ActuationMode, SkeletonActuation
from skel_ros.sim.errors import CommandError, SimBuildError
from skel_ros.sim.followers import FollowerServos
from skel_ros.sim.gains import GainsError, PositionGains, SimGains
from skel_ros.sim.joint_dynamics import with_joint_dynamics
from skel_ros.sim.world_builder import build_dart_world

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.model.types import World
    from skel_ros.sim._typing import Dart
    from skel_ros.sim.joint_dynamics import JointDynamics

__all__ = ["SimEngine", "public_names"]

Vector = npt.NDArray[np.float64]

_KINDS = {
    "effort": ActuationMode.EFFORT,
    "velocity": ActuationMode.VELOCITY,
    "acceleration": ActuationMode.ACCELERATION,
    "position": ActuationMode.POSITION,
}


def public_names(world_model: World) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The public DOF names and frame (body) names of a world (module docstring).

    Returns:
        ``(dof_names, frame_names)``, flat, one skeleton after another.

    Raises:
        SimBuildError: Two public names are equal (only possible with ``/`` in names).
    """
    dofs = _public(world_model, "DOF", [[d.name for d in s.dofs] for s in world_model.skeletons])
    bodies = _public(world_model, "body",
                     [[b.name for b in s.bodies] for s in world_model.skeletons])
    return dofs, bodies


def _public(world_model: World, what: str, per_skeleton: list[list[str]]) -> tuple[str, ...]:
    names: dict[str, tuple[str, str]] = {}
    for skel, items in zip(world_model.skeletons, per_skeleton, strict=True):
        prefix = skeleton_namespace(world_model, skel)
        for item in items:
            public = prefix + item
            other = names.get(public)
            if other is not None:
                raise SimBuildError(
                    f"{skel.location}: {what} {item!r} of skeleton {skel.name!r} and "
                    f"{what} {other[1]!r} of skeleton {other[0]!r} would both be "
                    f"published as {public!r}; rename one of them"
                )
            names[public] = (skel.name, item)
    return tuple(names)


class SimEngine:
    """Owns the dartpy World of a model and steps it.

    State vectors (:meth:`positions`, :meth:`velocities`, :meth:`efforts`) are flat,
    in our DOF order, one skeleton after another; :attr:`dof_names` names them
    (public names, see the module docstring), :attr:`dof_ids` gives the
    (skeleton, DOF) of each.

    Args:
        world_model: The model (``load_skel``).
        enforce_limits: Turn on DART's joint-limit enforcement for every joint with
            a finite position limit (SkelParser never does), and stop VELOCITY and
            ACCELERATION joints on their limits (see :meth:`set_limit_enforcement`).
        gains: Position-controller gains (``load_gains``); built-in defaults if None.
        limits: Per skeleton name, a limit set to use instead of the model's
            (e.g. one tightened by an override file).
        joint_dynamics: Per public DOF name, an armature to add and a damping and
            friction to use instead of the model's (:mod:`skel_ros.sim.joint_dynamics`;
            identified values). DART 6 has no armature: it is a rotor about the joint's
            axis spinning with the child link (revolute joints only), which also adds
            it to the inertia of the parent joints whose axes are parallel to this
            one's; MuJoCo's ``dof_armature`` adds it to the DOF alone. Kept by
            :meth:`reset`.

    Raises:
        SimBuildError: The world cannot be built (a mesh DART cannot load, limits
            that cannot be used, public names that clash, ``joint_dynamics`` naming
            an unknown DOF or an armature DART cannot add); the message names the
            file and line.
        GainsError: ``gains`` names a DOF the world does not have.
    """

    def __init__(
        self,
        world_model: World,
        *,
        enforce_limits: bool = True,
        gains: SimGains | None = None,
        limits: dict[str, LimitSet] | None = None,
        joint_dynamics: Mapping[str, JointDynamics] | None = None,
    ) -> None:
        # Followers (mimic joints) start, and reset, where their leaders put them.
        world_model = coupled_start(world_model)
        self.model = world_model
        self._gains = gains or SimGains()
        try:
            self._limit_sets = {
                skel.name: (limits or {}).get(skel.name) or LimitSet.from_skeleton(skel)
                for skel in world_model.skeletons
            }
        except LimitError as exc:
            raise SimBuildError(str(exc)) from None
        for skel in world_model.skeletons:
            if self._limit_sets[skel.name].names != tuple(d.name for d in skel.dofs):
                raise SimBuildError(
                    f"{skel.location}: the limit set given for skeleton {skel.name!r} does "
                    "not have its DOFs in its order"
                )
        self._braking = False  # set_braking
        self._enforced = bool(enforce_limits)  # set_limit_enforcement (_limits_enforced)
        names, frames = public_names(world_model)
        self.dof_names: tuple[str, ...] = names
        """Public name of every entry of the state vectors (module docstring)."""
        self.frame_names: tuple[str, ...] = frames
        """Public name of every body, in :attr:`body_names` order (the URDF link names)."""
        self.dof_ids: tuple[tuple[str, str], ...] = tuple(
            (s.name, d.name) for s in world_model.skeletons for d in s.dofs
        )
        """(skeleton name, DOF name) of every entry of the state vectors."""
        self.body_names: tuple[tuple[str, str], ...] = tuple(
            (s.name, b.name) for s in world_model.skeletons for b in s.bodies
        )
        """(skeleton name, body name) of every entry of :meth:`body_transforms`."""
        self.actuator_types: tuple[ActuatorType, ...] = tuple(
            s.joint(d.joint).actuator for s in world_model.skeletons for d in s.dofs
        )
        """The SKEL actuator type of every DOF's joint (what commands it takes)."""
        self._by_public = dict(zip(self.dof_names, self.dof_ids, strict=True))
        self._public_of = dict(zip(self.dof_ids, self.dof_names, strict=True))
        self.armature: dict[tuple[str, str], float] = self._take_dynamics(joint_dynamics or {})
        """(skeleton, DOF) -> the armature added to it (``joint_dynamics``)."""
        self.limits: LimitSet = LimitSet(
            [replace(jl, name=self._public_of[skel.name, jl.name],
                     leader=None if jl.leader is None else self._public_of[skel.name, jl.leader])
             for skel in world_model.skeletons for jl in self._limit_sets[skel.name].values()],
            sources=next(iter(self._limit_sets.values())).sources if self._limit_sets else ())
        """The limits of every DOF, by public name, in :attr:`dof_names` order."""
        self._check_gain_names()
        self._build()

    def _take_dynamics(self, dynamics: Mapping[str, JointDynamics]
                       ) -> dict[tuple[str, str], float]:
        """Put ``dynamics``' damping and friction into the model; return the armatures."""
        try:
            by_id = {self._resolve(name): jd for name, jd in dynamics.items()}
        except CommandError as exc:
            raise SimBuildError(f"joint dynamics: {exc}") from None
        self.model = with_joint_dynamics(self.model, by_id)
        return {key: float(jd.armature) for key, jd in by_id.items() if jd.armature}

    def _add_armature(self) -> None:
        """Add :attr:`armature` to the DART world: a rotor about each joint's axis.

        DART 6 has no armature (neither a joint property nor a dartpy call): the rotor's
        inertia ``A a a^T`` (``a`` the joint's axis in the child body's frame) is added to
        the child body's moment of inertia, which adds exactly ``A`` to the DOF's own
        ``M_ii`` (and, unlike a geared rotor, to parent joints with parallel axes).
        """
        for (skeleton, dof), armature in self.armature.items():
            k = next(i for i, s in enumerate(self.model.skeletons) if s.name == skeleton)
            skel = self.model.skeletons[k]
            joint = skel.joint(skel.dofs[skel.dof_index(dof)].joint)
            dart_joint = self._skeletons[k].getJoint(joint.index)
            if dart_joint.getType() != "RevoluteJoint":
                raise SimBuildError(
                    f"{joint.location}: DART has no armature for the {joint.type.name.lower()}"
                    f" joint {joint.name!r} (revolute joints only): use the engine mujoco")
            body = dart_joint.getChildBodyNode()
            axis = (dart_joint.getTransformFromChildBodyNode().rotation()
                    @ np.asarray(dart_joint.getAxis(), dtype=float))
            inertia = body.getInertia()
            inertia.setMoment(np.asarray(inertia.getMoment()) + armature * np.outer(axis, axis))
            body.setInertia(inertia)

    def _build(self) -> None:
        """(Re)build the dartpy World at the initial state, with fresh actuation."""
        model = self.model
        self._world = build_dart_world(model)
        self._skeletons = [self._world.getSkeleton(i) for i in range(len(model.skeletons))]
        self._add_armature()  # before the controllers' gains are derived from the inertia
        self._mobile = [s.isMobile() for s in self._skeletons]
        self._time_step = float(self._world.getTimeStep())
        # The skeletons whose DOFs make up the state vectors (those with DOFs).
        self._stateful = [dart for dart, skel in zip(self._skeletons, model.skeletons,
                                                     strict=True) if skel.num_dofs]
        self._actuation = [
            SkeletonActuation(skel, dart, self._limit_sets[skel.name], self._gains,
                              model.time_step,
                              public_names=[self._public_of[skel.name, d.name]
                                            for d in skel.dofs],
                              followers=FollowerServos(skel, dart, model.time_step))
            for skel, dart in zip(model.skeletons, self._skeletons, strict=True)
        ]
        # The mobile skeletons, whose efforts are recorded and forces cleared after a step.
        self._mobile_actuation = [
            (skel, act) for skel, mobile, act in zip(self._skeletons, self._mobile,
                                                     self._actuation, strict=True) if mobile
        ]
        self.set_limit_enforcement(self._enforced)

    def _check_gain_names(self) -> None:
        """Refuse gains given for DOFs this world does not have (a typo would go unnoticed)."""
        known = set(self.dof_names) | {dof for _, dof in self.dof_ids}
        unknown = [n for n in self._gains.dofs if n not in known]
        if unknown:
            close = difflib.get_close_matches(unknown[0], sorted(known), n=3, cutoff=0.6)
            hint = f"; did you mean {_quoted(close)}?" if close else ""
            raise GainsError(
                f"{self._gains.source}: gains for unknown DOF {_quoted(unknown)}{hint} "
                f"(the world {self.model.source} has {_quoted(self.dof_names, limit=8)})"
            )

    # ----------------------------------------------------------------- properties

    @property
    def world(self) -> Dart:
        """The dartpy World (for inspection; step it through :meth:`step`; new after reset)."""
        return self._world

    @property
    def time(self) -> float:
        """Simulated time in seconds."""
        return float(self._world.getTime())

    @property
    def time_step(self) -> float:
        """The step of the World in seconds."""
        return self._time_step

    @property
    def num_dofs(self) -> int:
        """Length of the state vectors."""
        return len(self.dof_names)

    @property
    def limits_enforced(self) -> bool:
        """Whether DART enforces the joints' position limits."""
        return self._enforced

    @property
    def braking(self) -> bool:
        """Whether uncommanded ACCELERATION DOFs are braked to rest (:meth:`set_braking`)."""
        return self._braking

    def set_braking(self, enabled: bool) -> None:  # noqa: FBT001 - a switch
        """Brake every uncommanded ACCELERATION DOF to rest, or not (the default: DART's).

        DART gives an ACCELERATION joint without a command acceleration 0: a moving one
        coasts for ever, through its position limits. With braking on it is braked to
        rest within its acceleration limits and stays there
        (:mod:`skel_ros.sim.actuation`); the simulated robot's backend turns it on (its
        safe state). Kept by :meth:`reset`.
        """
        self._braking = bool(enabled)
        self._configure_actuation()

    def _limits_enforced(self, enabled: bool) -> None:  # noqa: FBT001 - a switch
        """Record the limit setting; every engine's :meth:`set_limit_enforcement` calls it."""
        self._enforced = bool(enabled)
        self._configure_actuation()

    def _configure_actuation(self) -> None:
        """Give every skeleton's actuation the engine's limit enforcement and braking.

        The actuation stops VELOCITY and ACCELERATION DOFs on their position limits
        while limits are enforced (DART's constraint ignores those actuators).
        """
        for act in getattr(self, "_actuation", ()):  # none yet while __init__ runs
            act.set_limit_enforcement(self._enforced)
            act.set_braking(self._braking)

    def limit_set(self, skeleton: str) -> LimitSet:
        """The limit set commands of ``skeleton`` are checked against."""
        return self._actuation_of(skeleton).limits

    # ----------------------------------------------------------------- stepping

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps, applying the held commands before each.

        Each step is ``world.step()`` (which clears the forces and commands of the mobile
        skeletons after the step) with the commands set before it. :meth:`efforts` are
        the last step's: its forces are read once, after it and before they are cleared
        (no one can read the others'), so ``step(n)`` leaves what ``n`` single steps do.
        With no command held there is nothing to set before a step.
        """
        world = self._world
        quiet = not any(act.active for act in self._actuation)
        for left in range(int(n) - 1, -1, -1):  # steps left after this one
            if not quiet:
                for act in self._actuation:
                    act.apply()
            if left:
                world.step()
                continue
            world.step(resetCommand=False)  # the last: read its forces, then clear as DART does
            for skel, act in self._mobile_actuation:
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
        velocity by the velocity limits of those joints). DART's constraint ignores
        VELOCITY and ACCELERATION joints: the actuation stops those on their limits
        instead (:mod:`skel_ros.sim.actuation`).
        """
        for model, dart in zip(self.model.skeletons, self._skeletons, strict=True):
            for joint in model.joints:
                dofs = model.dofs[joint.first_dof : joint.first_dof + joint.num_dofs]
                if any(d.mimic is not None for d in dofs):
                    continue  # a follower's limits bound its leader (FollowerServos)
                if any(np.isfinite(d.position_lower) or np.isfinite(d.position_upper)
                       for d in dofs):
                    dart.getJoint(joint.index).setLimitEnforcement(bool(enabled))
        self._limits_enforced(enabled)

    # ----------------------------------------------------------------- state

    def positions(self) -> Vector:
        """Positions of every DOF (flat, our order)."""
        if not self._stateful:
            return np.zeros(0)
        return np.concatenate([s.getPositions() for s in self._stateful], dtype=float)

    def velocities(self) -> Vector:
        """Velocities of every DOF (flat, our order)."""
        if not self._stateful:
            return np.zeros(0)
        return np.concatenate([s.getVelocities() for s in self._stateful], dtype=float)

    def efforts(self) -> Vector:
        """The generalized force each DOF's actuator exerted during the last step.

        FORCE joints: the applied (clamped) effort command. VELOCITY, ACCELERATION
        and LOCKED joints: the force DART computed to realise the motion. SERVO
        joints: the joint-space constraint force of the step (DART's servo motor,
        together with any limit or contact force on that DOF). PASSIVE joints: 0.
        """
        if not self.num_dofs:
            return np.zeros(0)
        return np.concatenate([a.recorded_efforts for a in self._actuation])

    def state(self) -> tuple[Vector, Vector, Vector]:
        """:meth:`positions`, :meth:`velocities` and :meth:`efforts` in one call (fresh arrays).

        What a state message carries, read with one pass over the skeletons (the
        simulation node calls it every step it publishes).
        """
        skeletons = self._stateful
        if len(skeletons) == 1:  # one skeleton with DOFs: dartpy's arrays are fresh copies
            skel = skeletons[0]
            return (skel.getPositions(), skel.getVelocities(),
                    np.concatenate([a.recorded_efforts for a in self._actuation]))
        if not skeletons:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        return (np.concatenate([s.getPositions() for s in skeletons], dtype=float),
                np.concatenate([s.getVelocities() for s in skeletons], dtype=float),
                np.concatenate([a.recorded_efforts for a in self._actuation]))

    def body_transforms(self) -> npt.NDArray[np.float64]:
        """World transforms (nbody, 4, 4) of every body, in :attr:`body_names` order."""
        out = [b.getWorldTransform().matrix() for s in self._skeletons for b in s.getBodyNodes()]
        return np.array(out).reshape(len(out), 4, 4)

    # ----------------------------------------------------------------- commands

    def set_commands(
        self,
        kind: str | ActuationMode,
        names: Sequence[str],
        values: npt.ArrayLike,
        *,
        skeleton: str | None = None,
    ) -> list[CheckResult]:
        """Hold a command for some DOFs until replaced or cleared.

        Every command goes through the limits module first
        (:meth:`skel_ros.model.limits.LimitSet.check`); see
        :mod:`skel_ros.sim.actuation` for what each actuator type takes.

        Args:
            kind: ``"effort"`` (FORCE joints), ``"velocity"`` (SERVO, VELOCITY),
                ``"acceleration"`` (ACCELERATION) or ``"position"`` (any actuated
                joint, through its position controller), or the
                :class:`~skel_ros.sim.actuation.ActuationMode`.
            names: Public DOF names (:attr:`dof_names`); with ``skeleton``, the
                plain DOF names of that skeleton.
            values: One value per name.
            skeleton: The skeleton the names belong to, or None for public names.

        Returns:
            The limits module's result per skeleton touched, in world order of
            first appearance. ``names`` and ``clamped`` use the names the command
            was given with (``clamped`` lists the values moved into their limits;
            ``result.message`` is a log line, empty when nothing was clamped).

        Raises:
            CommandError: The command is rejected whole (unknown kind, skeleton or
                joint, a repeated joint, NaN or infinite value, count mismatch, a
                kind the joint's actuator does not take, a passive or locked
                joint); nothing was applied.
        """
        mode, prepared = self._prepare(kind, names, values, skeleton)
        for act, result, _ in prepared:
            act.hold(mode, result)
        return [_renamed(result, rename) for _, result, rename in prepared]

    def apply_checked(self, kind: str | ActuationMode,
                      index: Sequence[int] | npt.NDArray[np.intp],
                      values: npt.ArrayLike) -> None:
        """Hold a command already checked by the caller's gate, without checking it again.

        For an owner that checks every command itself against :attr:`limits` and the
        kinds each DOF takes (the robot core): :meth:`set_commands` checks and then does
        this.

        Args:
            kind: As for :meth:`set_commands`.
            index: Flat DOF indices (:attr:`dof_names` order).
            values: One value per index, within the limits.
        """
        raw: object = kind.value if isinstance(kind, ActuationMode) else kind
        mode = _KINDS.get(raw) if isinstance(raw, str) else None
        if mode is None:
            raise CommandError(f"unknown command kind {kind!r} (expected {sorted(_KINDS)})")
        flat = np.asarray(values, dtype=float)
        offset = 0
        for act in self._actuation:  # one per skeleton, in world order
            size = act.skeleton.num_dofs
            first, offset = offset, offset + size
            mine = [(int(i) - first, k) for k, i in enumerate(index)
                    if first <= i < first + size]
            if mine:
                local = np.array([i for i, _ in mine], dtype=np.intp)
                act.hold_values(mode, local, flat[[k for _, k in mine]])

    def check_commands(
        self,
        kind: str | ActuationMode,
        names: Sequence[str],
        values: npt.ArrayLike,
    ) -> list[CheckResult]:
        """What :meth:`set_commands` would do, without holding anything.

        Returns:
            As :meth:`set_commands` (public names).

        Raises:
            CommandError: As :meth:`set_commands`.
        """
        _, prepared = self._prepare(kind, names, values, None)
        return [_renamed(result, rename) for _, result, rename in prepared]

    def _prepare(
        self, kind: str | ActuationMode, names: Sequence[str], values: npt.ArrayLike,
        skeleton: str | None,
    ) -> tuple[ActuationMode, list[tuple[SkeletonActuation, CheckResult, dict[str, str]]]]:
        """Check every part of a command (a rejected part rejects the whole command)."""
        raw: object = kind.value if isinstance(kind, ActuationMode) else kind
        mode = _KINDS.get(raw) if isinstance(raw, str) else None
        if mode is None:
            raise CommandError(f"unknown command kind {kind!r} (expected {sorted(_KINDS)})")
        names = [names] if isinstance(names, str) else list(names)
        groups: dict[str, tuple[list[str], npt.ArrayLike, dict[str, str]]]
        if skeleton is not None:
            groups = {skeleton: (names, values, {})}
        else:
            groups = self._group_by_skeleton(names, values)
        return mode, [
            (self._actuation_of(skel), self._actuation_of(skel).prepare(mode, plain, v), rename)
            for skel, (plain, v, rename) in groups.items()
        ]

    def hold_initial_positions(self) -> tuple[str, ...]:
        """Hold every actuated DOF of every mobile skeleton at its initial position.

        What a powered robot does before its first command (a servo holds where it
        is): a position command to ``<init_pos>`` (clamped into the position limits)
        through each joint's position controller. Passive and locked joints, and
        immobile skeletons, are left to the world. A later command replaces the hold
        DOF by DOF; :meth:`clear_commands` drops it.

        Returns:
            The public names of the DOFs now held.
        """
        names: list[str] = []
        values: list[float] = []
        for skel, mobile in zip(self.model.skeletons, self._mobile, strict=True):
            if not mobile:
                continue
            for dof in skel.dofs:
                if skel.joint(dof.joint).actuator in (ActuatorType.PASSIVE, ActuatorType.LOCKED):
                    continue
                if not self._commandable_dof(skel.name, dof.name):
                    continue
                names.append(self._public_of[skel.name, dof.name])
                values.append(min(max(dof.initial_position, dof.position_lower),
                                  dof.position_upper))
        if names:
            self.set_commands(ActuationMode.POSITION, names, values)
        return tuple(names)

    def _commandable_dof(self, skeleton: str, dof: str) -> bool:
        """Whether this engine takes commands for the DOF at all (DART: all but followers)."""
        return self.model.skeleton(skeleton).dof(dof).mimic is None

    def clear_commands(self, names: Sequence[str] | None = None) -> None:
        """Drop held commands: of every DOF (``names`` None) or of the DOFs named (public names).

        DOFs without a command go to their actuator's safe state (limp, held still,
        braked to rest or locked: :mod:`skel_ros.sim.actuation`).

        Raises:
            CommandError: An unknown name; nothing was cleared.
        """
        if names is None:
            for act in self._actuation:
                act.clear()
            return
        names = [names] if isinstance(names, str) else list(names)
        ids = [self._resolve(n) for n in names]
        for act in self._actuation:
            mine = [dof for skel, dof in ids if skel == act.skeleton.name]
            if mine:
                act.clear(mine)

    def commands(self) -> dict[str, tuple[ActuationMode, float]]:
        """The held command of every commanded DOF: public name -> (mode, value)."""
        out: dict[str, tuple[ActuationMode, float]] = {}
        for act in self._actuation:
            values = act.targets()
            for i, mode in enumerate(act.modes()):
                if mode is not ActuationMode.NONE:
                    name = self._public_of[act.skeleton.name, act.skeleton.dofs[i].name]
                    out[name] = (mode, float(values[i]))
        return out

    def position_gains(self) -> tuple[PositionGains, ...]:
        """The gains each DOF's position controller runs (our order; :mod:`.gains`).

        Derived at build (and every :meth:`reset`) from each DOF's effective inertia and
        the ``gains`` given.
        """
        return tuple(g for act in self._actuation for g in act.gains)

    def position_targets(self) -> Vector:
        """The held position target of every DOF (flat, our order; NaN where none is held)."""
        if not self.num_dofs:
            return np.zeros(0)
        return np.concatenate([a.position_targets() for a in self._actuation])

    def setpoints(self) -> Vector:
        """Position setpoint of every DOF this step (flat, our order; NaN out of position mode).

        The rate-limited way from where the joint was toward its target (see
        :mod:`skel_ros.sim.actuation`); the target itself for DOFs without
        velocity or acceleration limits.
        """
        if not self.num_dofs:
            return np.zeros(0)
        return np.concatenate([a.setpoints() for a in self._actuation])

    def _actuation_of(self, skeleton: str) -> SkeletonActuation:
        for act in self._actuation:
            if act.skeleton.name == skeleton:
                return act
        known = ", ".join(repr(a.skeleton.name) for a in self._actuation) or "none"
        raise CommandError(f"unknown skeleton {skeleton!r} (skeletons: {known})")

    def _resolve(self, name: object) -> tuple[str, str]:
        """(skeleton, DOF) of a public name."""
        if not isinstance(name, str):
            raise CommandError(f"joint names must be strings, got {name!r}")
        found = self._by_public.get(name)
        if found is not None:
            return found
        plain = [p for p, (_, dof) in self._by_public.items() if dof == name]
        if plain:
            hint = f"; in this world it is {_quoted(plain)}"
        else:
            close = difflib.get_close_matches(name, list(self._by_public), n=3, cutoff=0.6)
            hint = (f"; did you mean {_quoted(close)}?" if close
                    else f"; the joints are {_quoted(list(self._by_public))}")
        raise CommandError(f"unknown joint {name!r}{hint}")

    def _group_by_skeleton(
        self, names: list[str], values: npt.ArrayLike
    ) -> dict[str, tuple[list[str], npt.ArrayLike, dict[str, str]]]:
        """Split a command in public names into per-skeleton commands in plain names.

        Returns:
            Per skeleton: plain names, values, and plain name -> public name.
        """
        ids = [self._resolve(n) for n in names]
        owners = list(dict.fromkeys(skel for skel, _ in ids))
        if len(owners) <= 1:
            # One skeleton: the limits module checks the values as given.
            owner = owners[0] if owners else next(
                (s.name for s in self.model.skeletons if s.num_dofs), None)
            if owner is None:
                raise CommandError("this world has no joints to command")
            plain = [dof for _, dof in ids]
            return {owner: (plain, values, dict(zip(plain, names, strict=True)))}
        try:
            flat = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            raise CommandError("values must be a flat list of numbers") from None
        if flat.ndim != 1 or flat.size != len(names):
            raise CommandError(f"{len(names)} names but {flat.size} values")
        groups: dict[str, tuple[list[str], list[float], dict[str, str]]] = {
            skel: ([], [], {}) for skel in owners
        }
        for (skel, dof), public, value in zip(ids, names, flat, strict=True):
            plain, vals, rename = groups[skel]
            plain.append(dof)
            vals.append(float(value))
            rename[dof] = public
        return {k: (p, np.array(v), r) for k, (p, v, r) in groups.items()}


def _quoted(names: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _renamed(result: CheckResult, rename: dict[str, str]) -> CheckResult:
    """``result`` with its joint names mapped through ``rename`` (others kept)."""
    if not rename or all(rename.get(n, n) == n for n in result.names):
        return result
    return replace(
        result,
        names=tuple(rename.get(n, n) for n in result.names),
        clamped=tuple(replace(c, name=rename.get(c.name, c.name)) for c in result.clamped),
    )
