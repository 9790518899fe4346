"""The MuJoCo engine: :class:`~skel_ros.sim.SimEngine`'s model, commands and names, in MuJoCo.

:class:`MujocoEngine` is a :class:`~skel_ros.sim.SimEngine` whose world is MuJoCo's:
the model's MJCF export (:func:`skel_ros.model.world_to_mjcf`) with one MuJoCo
actuator per actuated hinge or slide, compiled by ``mujoco.MjModel.from_xml_string``.
Everything about commands is the DART engine's, unchanged: public names, the limits
gate, what each SKEL actuator type takes, the position controllers and their gains
(:mod:`skel_ros.sim.actuation`) run on a small view of MuJoCo's state that answers
the few skeleton calls they make (:class:`_MjSkeleton`). So a node, a backend or a
test drives either engine the same way.

The SKEL actuator types become MuJoCo actuators with the same command semantics:

==============  ==================================================================
actuator        MuJoCo
==============  ==================================================================
FORCE           ``motor`` (ctrl = effort); the joint's force limits are its
                ``actuatorfrcrange``; a position command's PD runs as the joint's
                stiffness (rest = setpoint) and damping, as DART's joint spring
SERVO           ``motor`` within the force limits (``actuatorfrcrange``); its force is
                solved before every step (``mj_step1``, the force, ``mj_step2``): the
                one that gives the commanded velocity at the end of the step, or the
                force limit (DART's servo motor, a velocity constraint with force bounds)
VELOCITY        ``velocity`` actuator (ctrl = velocity), gain ``kv = G M_ii / dt``
                (``G`` = :data:`KINEMATIC_GAIN`), no force limits: 1e-5 of the velocity
                error is left after a step (DART's kinematic velocity)
ACCELERATION    the same, ctrl = velocity + acceleration dt (kinematic acceleration)
LOCKED          the export's joint equality (held at its initial position)
PASSIVE         none
==============  ==================================================================

With a velocity actuator in the world, MuJoCo integrates with ``implicitfast`` (the
actuator's damping is integrated implicitly, so its large gain is stable); otherwise
with the export's ``Euler`` (semi-implicit, as DART).

Efforts (``getForces``, :meth:`MujocoEngine._read_forces`) are the generalized forces
that realised the step: a motor's force; a kinematic drive's ``kv (ctrl - v')`` at the
velocity after the step (what the implicitly integrated actuator applied; MuJoCo's
``qfrc_actuator`` is its explicit force at the velocity before the step); a locked
DOF's joint-equality constraint force.

What differs from DART (docs/simulation.md): commands are taken for DOFs of hinges and
slides (revolute, prismatic, screw, universal, euler, planar ...); a ball or free
joint's DOFs are published but take no commands (``hold_initial`` leaves them limp);
a free joint below a skeleton's root is refused. ``enforce_limits`` switches MuJoCo's
joint-range constraints, which do not bound velocities (DART's also do). A SERVO DOF's
force is solved without MuJoCo's constraints (limits, contacts, Coulomb friction, locks),
which act after it within the step (DART solves them together); its effort is that
force (DART's includes limit and contact forces on the DOF).

``mujoco`` is imported when an engine is built: the package works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from lxml import etree

from skel_ros.model.errors import SkelError
from skel_ros.model.mjcf import world_to_mjcf
from skel_ros.model.transforms import adjoint, inverse, log_rot
from skel_ros.model.types import ActuatorType
from skel_ros.sim.actuation import SkeletonActuation
from skel_ros.sim.engine import SimEngine
from skel_ros.sim.errors import CommandError, SimBuildError, SimUnsupportedError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from skel_ros.model.mjcf import MjcfExport, MjcfJoint
    from skel_ros.model.types import Skeleton
    from skel_ros.sim._typing import Vector

__all__ = ["KINEMATIC_GAIN", "MUJOCO_MISSING", "MujocoEngine", "import_mujoco"]

KINEMATIC_GAIN = 1.0e5
"""``kv dt / M_ii`` of the velocity actuators: the share of the velocity error left after
a step is ``1 / (1 + G)`` (1e-5), as near DART's kinematic joints as is well conditioned."""

MUJOCO_MISSING = ("engine 'mujoco' needs the mujoco package: pip install 'skel_ros[mujoco]'"
                  " (or pip install 'mujoco>=3.3,<5')")

_KINEMATIC = (ActuatorType.VELOCITY, ActuatorType.ACCELERATION)
"""The actuator types MuJoCo drives with a velocity actuator (DART's kinematic joints)."""
_MOTOR_DRIVEN = (ActuatorType.FORCE, ActuatorType.SERVO)
"""The actuator types MuJoCo drives with a motor (a SERVO's force is solved each step)."""


def import_mujoco() -> Any:  # noqa: ANN401 - the mujoco module (no type stubs)
    """The ``mujoco`` module, or a :class:`SimBuildError` saying what to install."""
    try:
        import mujoco
    except ImportError:
        raise SimBuildError(MUJOCO_MISSING) from None
    return mujoco


def _full_mass_matrix(mujoco: Any, model: Any, data: Any) -> Vector:  # noqa: ANN401
    """The dense joint-space mass matrix (``mj_fullM``'s signature changed in MuJoCo 4)."""
    out = np.zeros((model.nv, model.nv))
    try:
        mujoco.mj_fullM(model, data, out)
    except TypeError:  # MuJoCo 3: mj_fullM(m, dst, qM)
        mujoco.mj_fullM(model, out, data.qM)
    return out


class _MjDof:
    """One hinge/slide DOF's spring and damper, as DART's ``DegreeOfFreedom`` setters."""

    def __init__(self, model: Any, joint: int, dof: int, qpos: int) -> None:  # noqa: ANN401
        self._model, self._joint, self._dof, self._qpos = model, joint, dof, qpos

    def setSpringStiffness(self, k: float) -> None:  # noqa: N802 - DART's name
        self._model.jnt_stiffness[self._joint] = k

    def setDampingCoefficient(self, d: float) -> None:  # noqa: N802 - DART's name
        self._model.dof_damping[self._dof] = d

    def setRestPosition(self, q: float) -> None:  # noqa: N802 - DART's name
        self._model.qpos_spring[self._qpos] = q


class _NoDof:
    """A ball or free joint's DOF: never position-controlled here (no spring to set)."""

    def setSpringStiffness(self, k: float) -> None:  # noqa: N802, ARG002
        return

    setDampingCoefficient = setRestPosition = setSpringStiffness  # noqa: N815


class _MjSkeleton:
    """One skeleton's DOFs in MuJoCo, with the DART skeleton calls the actuation makes.

    Positions and velocities are in DART's coordinates (a ball's or free joint's
    rotation vector, a free joint's translation and DART's free-joint velocity), converted
    from MuJoCo's ``qpos``/``qvel`` (the inverse of :meth:`MjcfExport.qpos` / ``qvel``).
    Generalized forces and the mass matrix are given for hinge and slide DOFs (the only
    ones commanded); the commands are collected for the engine to hand to MuJoCo's
    actuators before the step.
    """

    def __init__(self, mujoco: Any, model: Any, data: Any, *,  # noqa: ANN401 - no stubs
                 skeleton: Skeleton, joints: Sequence[MjcfJoint], commands: Vector,
                 forces: Vector) -> None:
        self._mujoco, self._model, self._data = mujoco, model, data
        self._forces = forces
        n = skeleton.num_dofs
        self._n = n
        self._initial = np.asarray(skeleton.initial_positions, dtype=float)
        self._static = not skeleton.mobile or not joints
        # Hinge and slide DOFs: their qpos and dof addresses.
        scalar: list[tuple[int, int, int, int]] = []  # (skeleton dof, qpos, dof, joint id)
        self._balls: list[tuple[tuple[int, ...], int, int]] = []  # (dofs, qpos, dof)
        # (FreeFrames, qpos, dof, T_parent_to_joint^-1 and T_child_to_joint,
        # Ad(T_child_to_joint^-1))
        self._frees: list[tuple[Any, int, int, tuple[Vector, Vector], Vector]] = []
        for j in joints:
            jid = int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j.name))
            qadr, dadr = int(model.jnt_qposadr[jid]), int(model.jnt_dofadr[jid])
            if j.kind == "free" and j.free is not None:
                child = np.asarray(j.free.child, dtype=float)
                self._frees.append((j.free, qadr, dadr,
                                    (inverse(np.asarray(j.free.parent, dtype=float)), child),
                                    adjoint(inverse(child))))
            elif j.free is not None:
                raise SimUnsupportedError(
                    f"{skeleton.location}: joint {j.joint!r} of skeleton {skeleton.name!r} is"
                    " a free joint below the root; the MuJoCo engine takes free joints at a"
                    " skeleton's root only (use engine dart)")
            elif j.kind == "ball":
                self._balls.append((j.dofs, qadr, dadr))
            elif j.scale == 1.0:
                scalar.append((j.dofs[0], qadr, dadr, jid))
        self.scalar = np.array([s[0] for s in scalar], dtype=np.intp)
        """Skeleton DOF indices of the hinge and slide DOFs (those taking commands)."""
        self._qadr = np.array([s[1] for s in scalar], dtype=np.intp)
        self.dof_address = np.array([s[2] for s in scalar], dtype=np.intp)
        """MuJoCo dof address of each of :attr:`scalar`."""
        self._dof_objects: list[_MjDof | _NoDof] = [_NoDof() for _ in range(n)]
        for i, qadr, dadr, jid in scalar:
            self._dof_objects[i] = _MjDof(model, jid, dadr, qadr)
        # Skeleton DOF -> MuJoCo dof address (a free joint's rotation is MuJoCo's angular
        # part, its translation the linear part), for the mass matrix's diagonal.
        self._mass_index = np.full(n, -1, dtype=np.intp)
        self._mass_index[self.scalar] = self.dof_address
        for dofs, _, dadr in self._balls:
            self._mass_index[list(dofs)] = dadr + np.arange(3)
        for free, _, dadr, _, _ in self._frees:
            self._mass_index[list(free.dofs)] = dadr + np.array([3, 4, 5, 0, 1, 2])
        self.commands = commands
        """The commands the actuation set for this step (DART's ``setCommands``): this
        skeleton's part of the engine's flat command vector."""
        self.commanded = False

    # ---------------------------------------------------------------- DART's calls

    def getNumDofs(self) -> int:  # noqa: N802 - DART's name
        return self._n

    def getPositions(self) -> Vector:  # noqa: N802 - DART's name
        if self._static:
            initial: Vector = self._initial.copy()
            return initial
        qpos = self._data.qpos
        out = np.zeros(self._n)
        out[self.scalar] = qpos[self._qadr]
        for dofs, qadr, _ in self._balls:
            out[list(dofs)] = log_rot(_quat_matrix(qpos[qadr:qadr + 4]))
        for free, qadr, _, (to_joint, child), _ in self._frees:
            pose = np.eye(4)
            pose[:3, :3] = _quat_matrix(qpos[qadr + 3:qadr + 7])
            pose[:3, 3] = qpos[qadr:qadr + 3]
            motion = to_joint @ pose @ child
            out[list(free.dofs)] = np.concatenate([log_rot(motion[:3, :3]), motion[:3, 3]])
        return out

    def getVelocities(self) -> Vector:  # noqa: N802 - DART's name
        out = np.zeros(self._n)
        if self._static:
            return out
        qvel = self._data.qvel
        out[self.scalar] = qvel[self.dof_address]
        for dofs, _, dadr in self._balls:  # angular velocity in the joint frame, both
            out[list(dofs)] = qvel[dadr:dadr + 3]
        for free, qadr, dadr, _, from_child in self._frees:
            # MuJoCo: linear in the world, angular in the body; DART's free-joint velocity
            # v = Ad(C^-1) [R w_body; v_world] (the inverse of FreeFrames.child_twist).
            rot = _quat_matrix(self._data.qpos[qadr + 3:qadr + 7])
            twist = np.concatenate([rot @ qvel[dadr + 3:dadr + 6], qvel[dadr:dadr + 3]])
            out[list(free.dofs)] = from_child @ twist
        return out

    def getMassMatrix(self) -> Vector:  # noqa: N802 - DART's name
        full = _full_mass_matrix(self._mujoco, self._model, self._data)
        out = np.zeros((self._n, self._n))
        known = np.flatnonzero(self._mass_index >= 0)
        out[np.ix_(known, known)] = full[np.ix_(self._mass_index[known],
                                                self._mass_index[known])]
        return out

    def getDof(self, i: int) -> _MjDof | _NoDof:  # noqa: N802 - DART's name
        return self._dof_objects[i]

    def getPositionDifferences(self, q2: Vector, q1: Vector) -> Vector:  # noqa: N802
        # Only hinge and slide DOFs are position-controlled here: a plain difference.
        out: Vector = np.asarray(q2, dtype=float) - np.asarray(q1, dtype=float)
        return out

    def getGravityForces(self) -> Vector:  # noqa: N802 - DART's name
        """``g(q)`` of ``M qdd + c + g = tau`` at the present positions (hinges, slides)."""
        mujoco, model, data = self._mujoco, self._model, self._data
        # After a step MuJoCo's kinematics are those of the positions before it.
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        qvel = data.qvel.copy()
        data.qvel[:] = 0.0
        mujoco.mj_comVel(model, data)
        bias = np.zeros(model.nv)
        mujoco.mj_rne(model, data, 0, bias)
        data.qvel[:] = qvel
        mujoco.mj_comVel(model, data)
        out = np.zeros(self._n)
        out[self.scalar] = bias[self.dof_address]
        return out

    def setCommands(self, commands: Vector) -> None:  # noqa: N802 - DART's name
        self.commands[:] = commands
        self.commanded = True

    def getForces(self) -> Vector:  # noqa: N802 - DART's name
        """The generalized forces of the last step (the engine's ``_read_forces``)."""
        out = np.zeros(self._n)
        out[self.scalar] = self._forces[self.dof_address]
        return out

    # A SERVO joint's effort in DART is its servo motor's constraint force: here its
    # motor's force, solved as that constraint's (MujocoEngine._servo_forces).
    getConstraintForces = getForces  # noqa: N815


def _quat_matrix(wxyz: Vector) -> Vector:
    """Rotation matrix of a quaternion ``(w, x, y, z)`` (normalized first)."""
    w, x, y, z = (float(v) for v in wxyz)
    n = w * w + x * x + y * y + z * z
    s = 2.0 / n if n > 0.0 else 0.0
    return np.array([
        [1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)],
        [s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)],
        [s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)]])


class MujocoEngine(SimEngine):
    """A :class:`~skel_ros.sim.SimEngine` stepped by MuJoCo (module docstring).

    Same arguments, attributes and methods; :attr:`world` is the ``mujoco.MjModel``.

    Raises:
        SimBuildError: mujoco is not installed, the model has no MJCF form (a soft
            body ...), or MuJoCo refuses the export; the message says which.
        SimUnsupportedError: A free joint below a skeleton's root.
    """

    engine_name = "mujoco"

    def _build(self) -> None:
        """(Re)build the MuJoCo model and data at the initial state, with fresh actuation."""
        mujoco = import_mujoco()
        self._mujoco = mujoco
        world = self.model
        try:
            export = world_to_mjcf(world)
        except SkelError as exc:
            raise SimBuildError(f"no MuJoCo form of {world.source}: {exc}") from None
        self._export = export
        xml, drives = _with_actuators(export, world)
        try:
            model = mujoco.MjModel.from_xml_string(xml)
        except ValueError as exc:
            raise SimBuildError(f"MuJoCo cannot compile the export of {world.source}: {exc}"
                                ) from None
        if any(d[2] in _KINEMATIC for d in drives):
            model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
        data = mujoco.MjData(model)
        key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, "initial")
        if key >= 0:
            mujoco.mj_resetDataKeyframe(model, data, key)
        mujoco.mj_forward(model, data)
        self._mj_model, self._mj_data = model, data
        self._mj_step = mujoco.mj_step
        self._time_step = float(model.opt.timestep)
        self._limited = model.jnt_limited.copy()
        joints_of: dict[str, list[MjcfJoint]] = {s.name: [] for s in world.skeletons}
        for j in export.joints:
            joints_of[j.skeleton].append(j)
        # Every skeleton's commands, one after another (what the actuators take).
        self._commands = np.zeros(sum(s.num_dofs for s in world.skeletons))
        self._first_dof: dict[str, int] = {}
        views, start = [], 0
        forces = np.zeros(model.nv)  # per MuJoCo DOF, the last step's (_read_forces)
        for s in world.skeletons:
            self._first_dof[s.name] = start
            views.append(_MjSkeleton(mujoco, model, data, skeleton=s, joints=joints_of[s.name],
                                     commands=self._commands[start:start + s.num_dofs],
                                     forces=forces))
            start += s.num_dofs
        self._views = views
        self._dof_forces = forces
        if self.armature:  # before the controllers' gains are derived from the inertia
            for (skeleton, dof), armature in self.armature.items():
                address = self._dof_address(skeleton, dof)
                if address is None:
                    raise SimBuildError(f"joint dynamics: armature of {dof!r} (skeleton "
                                        f"{skeleton!r}): taken by hinge and slide DOFs only")
                model.dof_armature[address] = armature
            self._set_constants()
        self._skeletons = self._views
        self._mobile = [s.mobile for s in world.skeletons]
        self._stateful = [v for v, s in zip(self._views, world.skeletons, strict=True)
                          if s.num_dofs]
        self._commandable = {
            (s.name, s.dofs[i].name)
            for s, v in zip(world.skeletons, self._views, strict=True) for i in v.scalar
        }
        self._actuation = [
            SkeletonActuation(skel, view, self._limit_sets[skel.name], self._gains,
                              world.time_step,
                              public_names=[self._public_of[skel.name, d.name]
                                            for d in skel.dofs])
            for skel, view in zip(world.skeletons, self._views, strict=True)
        ]
        self._recording = [act for act, mobile in zip(self._actuation, self._mobile, strict=True)
                           if mobile]  # whose efforts are recorded after a step
        self._set_drives(drives)
        self.set_limit_enforcement(self._enforced)

    def _set_drives(self, drives: list[tuple[str, int, ActuatorType]]) -> None:
        """Index the actuators: which command of which view each one takes."""
        mujoco, model = self._mujoco, self._mj_model
        views = {s.name: v for s, v in zip(self.model.skeletons, self._views, strict=True)}
        self._drive_command = np.array([self._first_dof[d[0]] + d[1] for d in drives],
                                       dtype=np.intp)
        ids = [int(mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, f"{k}"))
               for k in range(len(drives))]
        self._drive_ctrl = np.array(ids, dtype=np.intp)
        address = np.array([int(views[skel].dof_address[np.flatnonzero(
            views[skel].scalar == dof)[0]]) for skel, dof, _ in drives], dtype=np.intp)

        def of(*types: ActuatorType) -> Vector:
            return np.array([k for k, d in enumerate(drives) if d[2] in types], dtype=np.intp)

        accel = of(ActuatorType.ACCELERATION)
        self._accel, self._accel_dof = accel, address[accel]
        # Kinematic velocity / acceleration drives have no force limits (DART's neither);
        # a velocity drive's gain is G M_ii / dt at the initial configuration. With
        # implicitfast, that gain is damping MuJoCo integrates implicitly (_servo_forces).
        mass = _full_mass_matrix(mujoco, model, self._mj_data)
        kinematic = of(*_KINEMATIC)
        kv = KINEMATIC_GAIN * np.maximum(mass[address[kinematic], address[kinematic]], 1e-12) \
            / self._time_step
        model.actuator_gainprm[self._drive_ctrl[kinematic], 0] = kv
        model.actuator_biasprm[self._drive_ctrl[kinematic], 2] = -kv
        model.jnt_actfrclimited[model.dof_jntid[address[kinematic]]] = 0
        self._kinematic_ctrl, self._kinematic_dof = self._drive_ctrl[kinematic], address[kinematic]
        self._kinematic_kv = kv
        self._actuator_damping = np.zeros(model.nv)
        if model.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST:
            self._actuator_damping[address[kinematic]] = kv
        # SERVO drives: motors whose force _servo_forces solves before every step, within
        # the joint's force limits (its actuatorfrcrange, which MuJoCo applies too).
        servo = of(ActuatorType.SERVO)
        self._servo_ctrl, self._servo_dof = self._drive_ctrl[servo], address[servo]
        self._servo_command = self._drive_command[servo]
        joint = model.dof_jntid[self._servo_dof]
        limited = model.jnt_actfrclimited[joint].astype(bool)
        self._servo_lower = np.where(limited, model.jnt_actfrcrange[joint, 0], -np.inf)
        self._servo_upper = np.where(limited, model.jnt_actfrcrange[joint, 1], np.inf)
        # LOCKED DOFs: the export's joint equality on the DOF's joint alone.
        locks = [(e, int(model.jnt_dofadr[model.eq_obj1id[e]])) for e in range(model.neq)
                 if model.eq_type[e] == mujoco.mjtEq.mjEQ_JOINT and model.eq_obj2id[e] < 0]
        self._lock_eq = np.array([e for e, _ in locks], dtype=np.intp)
        self._lock_dof = np.array([a for _, a in locks], dtype=np.intp)

    def _commandable_dof(self, skeleton: str, dof: str) -> bool:
        return (skeleton, dof) in self._commandable and super()._commandable_dof(skeleton, dof)

    def set_armature(self, name: str, armature: float) -> None:
        """Set the rotor inertia (kg m^2) seen at hinge or slide DOF ``name`` (public).

        On top of its links' (MuJoCo's ``armature``); until :meth:`reset`.

        Raises:
            CommandError: an unknown DOF, one of a ball or free joint, a negative or
                non-finite value.
        """
        skeleton, dof = self._resolve(name)
        if not np.isfinite(armature) or armature < 0.0:
            raise CommandError(f"armature of {name!r} must be finite and >= 0, got {armature!r}")
        address = self._dof_address(skeleton, dof)
        if address is None:
            raise CommandError(f"joint {name!r}: armature is taken by hinge and slide DOFs only")
        self._mj_model.dof_armature[address] = float(armature)
        self._set_constants()

    def _dof_address(self, skeleton: str, dof: str) -> int | None:
        """MuJoCo's DOF address of a hinge or slide DOF; None for a ball or free joint's."""
        index = self.model.skeleton(skeleton).dof_index(dof)
        view = self._views[[s.name for s in self.model.skeletons].index(skeleton)]
        hits = np.flatnonzero(view.scalar == index)
        return int(view.dof_address[hits[0]]) if hits.size else None

    def _set_constants(self) -> None:
        """Remake the constants MuJoCo computed when compiling, after a change of armature."""
        model = self._mj_model
        # MuJoCo 4 computes the mass matrix from constants made when compiling: make them
        # again (on a scratch state, which mj_setConst may move).
        self._mujoco.mj_setConst(model, self._mujoco.MjData(model))
        self._mujoco.mj_forward(model, self._mj_data)

    # ----------------------------------------------------------------- properties

    @property
    def world(self) -> Any:  # noqa: ANN401 - mujoco.MjModel
        """The ``mujoco.MjModel`` (new after reset); :attr:`data` is its state."""
        return self._mj_model

    @property
    def data(self) -> Any:  # noqa: ANN401 - mujoco.MjData
        """The ``mujoco.MjData`` (new after reset)."""
        return self._mj_data

    @property
    def export(self) -> MjcfExport:
        """The MJCF export the model was compiled from (without the actuators)."""
        return self._export

    @property
    def time(self) -> float:
        """Simulated time in seconds."""
        return float(self._mj_data.time)

    # ----------------------------------------------------------------- stepping

    def step(self, n: int = 1) -> None:
        """Advance ``n`` steps, handing the held commands to the actuators before each.

        A world with a SERVO drive steps as ``mj_step1``, the servo forces
        (:meth:`_servo_forces`), ``mj_step2``. With no servo drive, no command held and
        no acceleration drive (nothing to compute before a step: every step would hand
        the actuators the same controls), the ``n`` steps are one ``mj_step(model, data,
        nstep=n)``, which repeats MuJoCo's step ``n`` times (bit for bit ``n`` single
        calls) without the GIL. Either way the efforts are read once, after the last step
        (they are that step's, as with ``n`` single steps: no one can read the others').
        """
        n = int(n)
        if n <= 0:
            return
        mujoco, model, data = self._mujoco, self._mj_model, self._mj_data
        ctrl, commands = data.ctrl, self._commands
        drives, drive_command = len(self._drive_ctrl), self._drive_command
        servos = bool(self._servo_ctrl.size)
        batch = (n > 1 and not self._accel.size and not servos
                 and not any(a.active for a in self._actuation))
        calls, nstep = (1, n) if batch else (n, 1)
        for _ in range(calls):
            for view in self._views:
                if view.commanded:  # DART's commands last one step too
                    view.commands[:] = 0.0
                    view.commanded = False
            for act in self._actuation:
                act.apply()
            if drives:
                values = commands[drive_command]
                if self._accel.size:  # the velocity the acceleration reaches in a step
                    values[self._accel] = (data.qvel[self._accel_dof]
                                           + values[self._accel] * self._time_step)
                ctrl[self._drive_ctrl] = values
            if servos:
                mujoco.mj_step1(model, data)
                ctrl[self._servo_ctrl] = self._servo_forces(commands[self._servo_command])
                mujoco.mj_step2(model, data)
            else:
                self._mj_step(model, data, nstep)
        self._read_forces()
        for act in self._recording:
            act.record_efforts()

    def _servo_forces(self, velocity: Vector) -> Vector:
        """The SERVO motors' forces of the step ``mj_step2`` is about to take.

        DART's servo motor is a velocity constraint with the joint's force limits: the
        force that gives the commanded velocity at the end of the step, or the limit.
        Here: MuJoCo's step without constraints is ``(M + dt D)(v' - v) = dt (f0 + f)``
        (``D`` the damping MuJoCo integrates implicitly: the joints', and the kinematic
        drives' ``kv`` under implicitfast; ``f0`` every other force but ``xfrc_applied``
        (which the engine never sets), the servo motors at 0; ``f`` the servo forces);
        ``f`` is the one within the force limits that brings every servo DOF to
        ``velocity`` (a boxed linear complementarity problem, as DART's, :func:`_boxed_solve`).
        The other constraints (limits, contacts, friction, locks) are solved by MuJoCo
        after, with ``f`` given.
        """
        mujoco, model, data = self._mujoco, self._mj_model, self._mj_data
        dt, dofs = self._time_step, self._servo_dof
        data.ctrl[self._servo_ctrl] = 0.0
        mujoco.mj_fwdActuation(model, data)  # the other actuators' forces (mj_step2 again)
        others = data.qfrc_passive - data.qfrc_bias + data.qfrc_applied + data.qfrc_actuator
        mass = _full_mass_matrix(mujoco, model, data)
        mass[np.diag_indices_from(mass)] += dt * (model.dof_damping + self._actuator_damping)
        free = np.linalg.solve(mass, others)  # the acceleration without the servo forces
        # The acceleration of the servo DOFs per unit force on each: (M + dt D)^-1 there.
        unit = np.linalg.solve(mass, np.eye(model.nv)[:, dofs])[dofs]
        wanted = (velocity - data.qvel[dofs]) / dt - free[dofs]
        return _boxed_solve(unit, wanted, self._servo_lower, self._servo_upper)

    def _read_forces(self) -> None:
        """The generalized force of each actuated DOF in the step just taken (``getForces``).

        A motor's (FORCE, SERVO) is its force. A kinematic drive's velocity actuator is
        integrated implicitly: the force it applied over the step is ``kv (ctrl - v')``
        at the velocity ``v'`` after the step, where MuJoCo's ``qfrc_actuator`` holds
        ``kv (ctrl - v)`` of the velocity before it (huge when the command changes).
        A LOCKED DOF's is its joint equality's constraint force.
        """
        data, forces = self._mj_data, self._dof_forces
        forces[:] = data.qfrc_actuator
        dofs = self._kinematic_dof
        if dofs.size:
            forces[dofs] = self._kinematic_kv * (data.ctrl[self._kinematic_ctrl]
                                                 - data.qvel[dofs])
        if self._lock_eq.size:
            rows = (data.efc_type == self._mujoco.mjtConstraint.mjCNSTR_EQUALITY) \
                & np.isin(data.efc_id, self._lock_eq)
            efc = np.where(rows, data.efc_force, 0.0)
            jt = np.zeros(self._mj_model.nv)
            if efc.size:
                self._mujoco.mj_mulJacTVec(self._mj_model, data, jt, efc)
            forces[self._lock_dof] = jt[self._lock_dof]

    def set_limit_enforcement(self, enabled: bool) -> None:  # noqa: FBT001 - a switch
        """Turn MuJoCo's joint-range constraints on/off (the joints the export limits)."""
        self._mj_model.jnt_limited[:] = self._limited if enabled else 0
        self._limits_enforced(enabled)

    # ----------------------------------------------------------------- state

    def body_transforms(self) -> npt.NDArray[np.float64]:
        """World transforms (nbody, 4, 4) of every body, in :attr:`body_names` order."""
        mujoco, model, data = self._mujoco, self._mj_model, self._mj_data
        mujoco.mj_kinematics(model, data)
        frames = {(b.skeleton, b.body): b for b in self._export.bodies}
        # A folded body (no MuJoCo body of its own) is placed from its skeleton's positions.
        views = dict(zip((s.name for s in self.model.skeletons), self._views, strict=True))
        out = np.zeros((len(self.body_names), 4, 4))
        for k, key in enumerate(self.body_names):
            body = frames[key]
            bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body.name)
            pose = np.eye(4)
            pose[:3, :3] = data.xmat[bid].reshape(3, 3)
            pose[:3, 3] = data.xpos[bid]
            out[k] = body.pose(pose, views[key[0]].getPositions() if body.through else ())
        return out

    # ----------------------------------------------------------------- commands

    def _prepare(self, kind: Any, names: Sequence[str], values: npt.ArrayLike,  # noqa: ANN401
                 skeleton: str | None) -> Any:  # noqa: ANN401 - SimEngine's
        mode, prepared = super()._prepare(kind, names, values, skeleton)
        for act, result, _ in prepared:
            for name in result.names:
                if (act.skeleton.name, name) not in self._commandable:
                    dof = act.skeleton.dofs[act.skeleton.dof_index(name)]
                    joint = act.skeleton.joint(dof.joint)
                    raise CommandError(
                        f"joint {joint.name!r} is a {joint.type.value} joint: the MuJoCo engine"
                        " takes commands for hinge and slide DOFs only (engine dart takes"
                        " them)")
        return mode, prepared


def _boxed_solve(a: Vector, b: Vector, lower: Vector, upper: Vector) -> Vector:
    """The servo motors' boxed problem (``a`` symmetric positive definite), by active sets.

    ``x`` within ``[lower, upper]`` with ``(a x - b)_i`` = 0 where ``x_i`` is inside,
    <= 0 where it is at its upper bound, >= 0 at its lower one: clamp the ``x_i`` that
    leave their bounds, release those the residual pulls back in, solve the rest again.
    """
    n = len(b)
    side = np.zeros(n, dtype=np.int8)  # -1 at the lower bound, +1 at the upper, 0 free
    x = np.zeros(n)
    tolerance = 1e-12 * (1.0 + np.abs(b))
    for _ in range(2 * n + 2):
        x = np.where(side < 0, lower, np.where(side > 0, upper, 0.0))
        free = side == 0
        if free.any():
            x[free] = np.linalg.solve(a[np.ix_(free, free)],
                                      b[free] - a[np.ix_(free, ~free)] @ x[~free])
        residual = a @ x - b
        below, above = free & (x < lower), free & (x > upper)
        release = ((side > 0) & (residual > tolerance)) | ((side < 0) & (residual < -tolerance))
        if not (below.any() or above.any() or release.any()):
            return x
        side[below], side[above], side[release] = -1, 1, 0
    return np.clip(x, lower, upper)  # cycling (not met): the last solution, bounded


def _with_actuators(export: MjcfExport, world: Any  # noqa: ANN401 - World
                    ) -> tuple[str, list[tuple[str, int, ActuatorType]]]:
    """The export's MJCF with one actuator per actuated hinge/slide DOF of a mobile skeleton.

    Returns:
        The MJCF text, and per actuator (named ``"0"``, ``"1"``, ...): (skeleton, skeleton
        DOF index, SKEL actuator type).
    """
    skeletons = {s.name: s for s in world.skeletons}
    drives: list[tuple[str, int, ActuatorType]] = []
    root = etree.fromstring(export.xml.encode())
    section = etree.SubElement(root, "actuator")
    for j in export.joints:
        skel = skeletons[j.skeleton]
        if j.free is not None or j.kind not in ("hinge", "slide") or j.scale != 1.0:
            continue
        if not skel.mobile:
            continue
        actuator = skel.joint(j.joint).actuator
        name = str(len(drives))
        if actuator in _MOTOR_DRIVEN:
            etree.SubElement(section, "motor", name=name, joint=j.name, gear="1")
        elif actuator in _KINEMATIC:
            # kv is set per DOF after compiling (it needs the mass matrix).
            etree.SubElement(section, "velocity", name=name, joint=j.name, kv="1")
        else:
            continue
        drives.append((j.skeleton, j.dofs[0], actuator))
    if not drives:
        root.remove(section)
    else:  # MuJoCo wants <actuator> before <keyframe>
        key = root.find("keyframe")
        if key is not None:
            root.remove(key)
            root.append(key)
    return etree.tostring(root, encoding="unicode"), drives
