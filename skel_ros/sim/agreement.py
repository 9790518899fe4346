"""How far DART and MuJoCo agree on one model: the same run in both engines, compared.

The world runs in both of our engines, :class:`~skel_ros.sim.SimEngine` (DART) and
:class:`~skel_ros.sim.mujoco_engine.MujocoEngine` (the model's MJCF export), limits
enforced as in the node, from the same initial state, with the same effort commands on
every force-actuated DOF, for the same simulated time; after every step the joint
positions are compared (``docs/mujoco.md`` has the measured table and what it means).
No ROS here; ``mujoco`` is imported when a comparison runs.

Run it on files to print the table::

    python -m skel_ros.sim.agreement examples/arm.skel examples/quadruped.skel
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model import ActuatorType, JointType, load_model
from skel_ros.sim.engine import SimEngine, public_names
from skel_ros.sim.mujoco_engine import MujocoEngine

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.model import MjcfExport, World

__all__ = ["EffortCommands", "EngineAgreement", "compare_engines", "main"]

# The commanded efforts: a sine per DOF with its own frequency and phase, of amplitude
# COMMANDED_ACCELERATION times the inertia the DOF's effort meets (from the joint-space
# mass matrix at the initial state), so a light chain is driven as hard as a heavy arm; a new
# command every COMMAND_PERIOD of simulated time, held in between (as the node holds the
# last command it received).
COMMANDED_ACCELERATION = 1.0  # rad/s^2 or m/s^2
COMMAND_PERIOD = 0.01  # s
# The engines are compared every COMPARE_PERIOD of simulated time (and at the end).
COMPARE_PERIOD = 0.001  # s
_BASE_FREQUENCY = 0.5  # Hz
# Joint types whose DOFs take the same effort in both engines (a ball's: the torque in
# its child frame in both); a free joint's force is not commanded (DART takes it in the
# body frame, MuJoCo in the world).
_COMMANDED_TYPES = frozenset(
    t for t in JointType if t not in (JointType.FREE, JointType.WELD))


@dataclass(frozen=True)
class EngineAgreement:
    """One run of a world in both engines.

    Attributes:
        source: The model file.
        time_step: The step both engines took.
        steps: How many.
        max_error: The largest joint-position difference over the run and every DOF
            (rad for rotations, m for translations; a ball or free joint's rotation as
            the angle between the two orientations).
        final_error: The same at the end of the run.
        dart_contacts: The most contacts DART had after a step.
        mujoco_contacts: The most contacts MuJoCo had after a step.
        diverged: The engines that diverged ("DART": non-finite positions; "MuJoCo":
            its bad-acceleration warning, after which it resets its state): the errors
            then mean nothing.
    """

    source: str
    time_step: float
    steps: int
    max_error: float
    final_error: float
    dart_contacts: int
    mujoco_contacts: int
    diverged: tuple[str, ...] = ()

    @property
    def unstable(self) -> bool:
        """Whether an engine diverged."""
        return bool(self.diverged)

    @property
    def contacts(self) -> bool:
        """Whether either engine had a contact during the run."""
        return bool(self.dart_contacts or self.mujoco_contacts)


@dataclass(frozen=True)
class EffortCommands:
    """The efforts both engines get, a sine per DOF.

    On every DOF of a force-actuated joint of a mobile skeleton (free joints apart), a
    sine with a frequency and phase of its own, so every DOF is driven and no two alike,
    of amplitude ``COMMANDED_ACCELERATION`` times the DOF's inertia.

    Attributes:
        names: The DOFs' public names (what :class:`SimEngine` takes).
        indices: Their indices in the flat DOF vector.
        amplitudes: N m or N.
        frequencies: Hz.
        phases: rad.
    """

    names: tuple[str, ...]
    indices: tuple[int, ...]
    amplitudes: np.ndarray
    frequencies: np.ndarray
    phases: np.ndarray

    @classmethod
    def for_world(cls, world: World, inertias: Mapping[int, float]) -> EffortCommands:
        """The commanded DOFs of ``world``.

        Args:
            world: The model.
            inertias: Flat DOF index -> its inertia (kg m^2 or kg), for every hinge,
                slide and ball DOF.
        """
        public = public_names(world)[0]
        names: list[str] = []
        indices: list[int] = []
        amplitudes: list[float] = []
        flat = 0
        for skeleton in world.skeletons:
            for dof in skeleton.dofs:
                joint = skeleton.joint(dof.joint)
                if (skeleton.mobile and joint.actuator is ActuatorType.FORCE
                        and joint.type in _COMMANDED_TYPES and flat in inertias):
                    names.append(public[flat])
                    indices.append(flat)
                    amplitudes.append(COMMANDED_ACCELERATION * inertias[flat])
                flat += 1
        k = np.arange(len(names))
        return cls(tuple(names), tuple(indices), np.array(amplitudes),
                   _BASE_FREQUENCY * (1.0 + 0.5 * (k % 4)), k.astype(float))

    def values(self, time: float) -> np.ndarray:
        """The efforts at ``time`` (s)."""
        values: np.ndarray = self.amplitudes * np.sin(
            2.0 * math.pi * self.frequencies * time + self.phases)
        return values


def _dof_addresses(export: MjcfExport, model: object, world: World) -> dict[int, int]:
    """Flat DART DOF index -> MuJoCo dof address, for hinges, slides and balls."""
    import mujoco

    first: dict[str, int] = {}
    flat = 0
    for skeleton in world.skeletons:
        first[skeleton.name] = flat
        flat += skeleton.num_dofs
    out: dict[int, int] = {}
    for joint in export.joints:
        if joint.free is not None or joint.scale != 1.0:
            continue
        address = int(model.jnt_dofadr[mujoco.mj_name2id(  # type: ignore[attr-defined]
            model, mujoco.mjtObj.mjOBJ_JOINT, joint.name)])
        for k, dof in enumerate(joint.dofs):
            out[first[joint.skeleton] + dof] = address + k
    return out


def compare_engines(world: World, *, time_step: float | None = None,
                    duration: float = 1.0) -> EngineAgreement:
    """Run ``world`` in DART and in MuJoCo side by side and measure the difference.

    Args:
        world: The model.
        time_step: The step of both engines (default: the world's).
        duration: Simulated time, s.

    Returns:
        The largest and final joint-position differences and the contacts seen.

    Raises:
        SimBuildError: An engine cannot build it (no MJCF form: a soft body, ...; mujoco
            or dartpy missing).
        SimUnsupportedError: A free joint below a skeleton's root (MuJoCo engine).
    """
    import mujoco

    dt = world.time_step if time_step is None else float(time_step)
    world = dataclasses.replace(world, time_step=dt)
    steps = round(duration / dt)
    engine = SimEngine(world)
    mj_engine = MujocoEngine(world)  # at the initial state, as SimEngine
    export, model, data = mj_engine.export, mj_engine.world, mj_engine.data
    sizes = [(s.name, s.num_dofs) for s in world.skeletons]

    def dart_positions() -> dict[str, np.ndarray]:
        flat = engine.positions()
        out, start = {}, 0
        for name, n in sizes:
            out[name] = flat[start:start + n]
            start += n
        return out

    addresses = _dof_addresses(export, model, world)
    commands = EffortCommands.for_world(
        world, {i: _inertia(model, data, a) for i, a in addresses.items()})
    # MujocoEngine takes commands on hinges and slides; a ball's efforts go in as
    # MuJoCo's applied generalized forces (a torque in the child frame in both engines).
    balls = _ball_dofs(world)
    ball = [k for k, i in enumerate(commands.indices) if i in balls]
    taken = [n for k, n in enumerate(commands.names) if k not in ball]
    ball_flat = np.array([commands.indices[k] for k in ball], dtype=np.intp)
    ball_address = np.array([addresses[i] for i in ball_flat], dtype=np.intp)
    ranges = _joint_ranges(export, model)
    difference = np.zeros(model.nv)
    worst = final = 0.0
    dart_contacts = mujoco_contacts = 0
    every = max(1, round(COMMAND_PERIOD / dt))
    compare_every = max(1, round(COMPARE_PERIOD / dt))
    single = np.array([a for a, b in ranges if b == a + 1], dtype=np.intp)
    groups = [(a, b) for a, b in ranges if b > a + 1]
    collisions = engine.world.getLastCollisionResult
    dart_diverged = False
    for k in range(1, steps + 1):
        if commands.names and (k - 1) % every == 0:
            values = commands.values((k - 1) * dt)
            engine.set_commands("effort", commands.names, values)
            if taken:
                mj_engine.set_commands("effort", taken, np.delete(values, ball))
        engine.step()
        if ball:  # as DART applied them: clamped to the force limits
            data.qfrc_applied[ball_address] = engine.efforts()[ball_flat]
        mj_engine.step()
        dart_contacts = max(dart_contacts, collisions().getNumContacts())
        mujoco_contacts = max(mujoco_contacts, int(data.ncon))
        if k % compare_every and k != steps:
            continue
        dart_diverged = dart_diverged or not np.all(np.isfinite(engine.positions()))
        mujoco.mj_differentiatePos(model, difference, 1.0, export.qpos(dart_positions()),
                                   data.qpos)
        final = max([float(np.abs(difference[single]).max(initial=0.0)),
                     *(float(np.linalg.norm(difference[a:b])) for a, b in groups)])
        worst = max(worst, final)
    diverged = tuple(name for name, bad in (
        ("DART", dart_diverged),
        ("MuJoCo", data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0)) if bad)
    return EngineAgreement(world.source, dt, steps, worst, final, dart_contacts,
                           mujoco_contacts, diverged)


def _ball_dofs(world: World) -> frozenset[int]:
    """Flat DOF indices of the ball joints' DOFs."""
    out, flat = set(), 0
    for skeleton in world.skeletons:
        for dof in skeleton.dofs:
            if skeleton.joint(dof.joint).type is JointType.BALL:
                out.add(flat)
            flat += 1
    return frozenset(out)


def _inertia(model: object, data: object, address: int) -> float:
    """The inertia a force on one dof meets, every other dof free: 1 / (M^-1)_ii.

    (M_ii itself overstates it in a chain: a torque on one joint of a light chain
    turns the links on both sides of it, whose inertia about it is far smaller.)
    """
    import mujoco

    unit = np.zeros((1, model.nv))  # type: ignore[attr-defined]
    unit[0, address] = 1.0
    column = np.zeros_like(unit)
    mujoco.mj_solveM(model, data, column, unit)
    return 1.0 / float(column[0, address])


def _joint_ranges(export: MjcfExport, model: object) -> list[tuple[int, int]]:
    """``qvel`` ranges whose norm is one joint's error.

    A hinge or slide alone, a ball's rotation, a free joint's translation and its
    rotation apart.
    """
    import mujoco

    out: list[tuple[int, int]] = []
    for joint in export.joints:
        address = int(model.jnt_dofadr[mujoco.mj_name2id(  # type: ignore[attr-defined]
            model, mujoco.mjtObj.mjOBJ_JOINT, joint.name)])
        if joint.kind == "free":
            out += [(address, address + 3), (address + 3, address + 6)]
        else:
            out.append((address, address + joint.nv))
    return out


def differences(world: World) -> list[str]:
    """What the model holds that the two engines model differently (docs/mujoco.md)."""
    dofs = [d for s in world.skeletons if s.mobile for d in s.dofs]
    found = []
    if any(math.isfinite(d.position_lower) or math.isfinite(d.position_upper) for d in dofs):
        found.append("position limits")
    if any(math.isfinite(d.velocity_lower) or math.isfinite(d.velocity_upper) for d in dofs):
        found.append("velocity limits")
    if any(d.coulomb_friction for d in dofs):
        found.append("Coulomb friction")
    if any(d.spring_stiffness for d in dofs):
        found.append("springs")
    return found


def _diverged(result: EngineAgreement) -> str:
    if not result.unstable:
        return f"{result.max_error:.2e}"
    return f"{' and '.join(result.diverged)} diverged"


def _joint_types(world: World) -> str:
    types = sorted({j.type.value for s in world.skeletons if s.mobile for j in s.joints
                    if j.type is not JointType.WELD})
    return ", ".join(types) or "-"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the agreement table (markdown) for model files, at their step and 10x smaller."""
    parser = argparse.ArgumentParser(prog="python -m skel_ros.sim.agreement",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--duration", type=float, default=1.0)
    args = parser.parse_args(argv)
    out = sys.stdout
    out.write("| file | joints | modelled differently | step | max joint error | at step / 10"
              " | ratio | contacts (DART, MuJoCo) |\n|---|---|---|---|---|---|---|---|\n")
    for path in args.files:
        try:
            world = load_model(path)
            coarse = compare_engines(world, duration=args.duration)
            fine = compare_engines(world, time_step=coarse.time_step / 10.0,
                                   duration=args.duration)
        except Exception as exc:  # noqa: BLE001 - a table row says why, the others go on
            reason = str(exc).splitlines()[0][:80]
            out.write(f"| {path} | | | | {type(exc).__name__}: {reason} | | | |\n")
            continue
        head = (f"| {path} | {_joint_types(world)} | {', '.join(differences(world)) or '-'}"
                f" | {coarse.time_step:g} |")
        if coarse.unstable or fine.unstable:
            out.write(f"{head} {_diverged(coarse)} | {_diverged(fine)} | | |\n")
        else:
            ratio = coarse.max_error / fine.max_error if fine.max_error else math.inf
            out.write(f"{head} {coarse.max_error:.2e} | {fine.max_error:.2e} | {ratio:.1f} |"
                      f" {max(coarse.dart_contacts, fine.dart_contacts)},"
                      f" {max(coarse.mujoco_contacts, fine.mujoco_contacts)} |\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
