"""The truth file: how the real robot differs from the model it is given.

A bench whose real side has physics (:mod:`skel_ros.physical`) moves a model of the robot;
the truth file says where the robot really differs from the model the simulation and the
gate are given, so a sim-to-real run can rehearse the faults a robot brings::

    seed: 7                      # noise generator seed (default 0): repeatable runs
    model: real_arm.skel         # optional: a whole other model file as the real robot
    joints:
      elbow:
        friction: 0.05           # N m, Coulomb friction (replaces the model's)
        damping: 0.2             # N m s/rad, viscous damping (replaces the model's)
        armature: 0.002          # kg m^2, rotor inertia seen at the joint (added)
        backlash: 0.01           # rad, the whole play of the gear train
        delay: 0.01              # s, from a command on the wire to the motor acting on it
        encoder_offset: 0.02     # rad, added to what the encoder reads
        encoder_noise: 0.001     # rad, standard deviation of the encoder's white noise
    bodies:
      hand:
        mass: 0.2                # kg, a point mass fixed to the body (a payload, a gripper)
        at: [0, 0, 0.04]         # m, where, in the body's frame (default: its origin)

Every key is optional; the empty file is the model itself. An unknown key, a negative,
non-finite or non-numeric value, a duplicate key is an error at its line
(:class:`TruthError`, ``truth.yaml:5: ...``). Joints and bodies are checked against the
model when the truth is applied (:func:`apply_truth`).

What is applied to the model (:func:`apply_truth`, giving the "real" model): friction and
damping into the DOFs, a body's added mass into its inertia (mass, centre of mass and
moment about it). Armature, backlash, delay and the encoder's offset and noise are the
devices' business: :class:`JointTruth` carries them to the device layer.

No ROS, no engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np

from skel_ros.model.errors import FileLineError
from skel_ros.model.types import Inertia
from skel_ros.model.yamlread import YamlLineError, key_line, load_yaml_lines, node_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.model.types import Body, Dof, Skeleton, World

__all__ = ["EMPTY_TRUTH", "AddedMass", "JointTruth", "Truth", "TruthError", "apply_truth",
           "load_truth", "parse_truth", "with_point_mass"]


class TruthError(FileLineError):
    """A truth file that cannot be used (``truth.yaml:4: message``)."""


#: Joint keys, their units (for messages and the docs).
JOINT_KEYS: Mapping[str, str] = MappingProxyType({
    "friction": "N m", "damping": "N m s/rad", "armature": "kg m^2", "backlash": "rad",
    "delay": "s", "encoder_offset": "rad", "encoder_noise": "rad"})
_SIGNED = frozenset({"encoder_offset"})  # the one joint value that may be negative
_TOP_KEYS = ("seed", "model", "joints", "bodies")
_BODY_KEYS = ("mass", "at")


@dataclass(frozen=True)
class JointTruth:
    """One joint of the real robot, where it differs from the model.

    Attributes:
        friction: N m, the real Coulomb friction; None: the model's.
        damping: N m s/rad, the real viscous damping; None: the model's.
        armature: kg m^2, rotor inertia at the joint, added to the model's links (on the
            motor side of the backlash, with the device's own rotor).
        backlash: rad, the whole play between the motor side (the rotor) and the joint.
        delay: s, from a command reaching the device to its motor acting on it.
        encoder_offset: rad, added to every reading of the joint's encoder.
        encoder_noise: rad, standard deviation of the white noise on every reading.
        line: where the joint is in the file.
    """

    friction: float | None = None
    damping: float | None = None
    armature: float = 0.0
    backlash: float = 0.0
    delay: float = 0.0
    encoder_offset: float = 0.0
    encoder_noise: float = 0.0
    line: int = 0


NO_DIFFERENCE = JointTruth()
"""A joint the truth file does not name: as the model says, perfect devices."""


@dataclass(frozen=True)
class AddedMass:
    """A point mass fixed to a body (a payload in the hand, a gripper).

    Attributes:
        mass: kg.
        at: m, the point in the body's frame.
        line: where it is in the file.
    """

    mass: float
    at: tuple[float, float, float] = (0.0, 0.0, 0.0)
    line: int = 0


@dataclass(frozen=True)
class Truth:
    """What the truth file says (:func:`parse_truth`).

    Attributes:
        seed: the seed of the devices' noise.
        model: a whole other model file for the real robot (relative paths: from the
            truth file's folder), or None: the model given.
        joints: joint (DOF) name -> how it differs.
        bodies: body name -> the mass added to it.
        source: the file it was read from.
    """

    seed: int = 0
    model: Path | None = None
    joints: Mapping[str, JointTruth] = field(default_factory=dict)
    bodies: Mapping[str, AddedMass] = field(default_factory=dict)
    source: str = ""

    def joint(self, name: str) -> JointTruth:
        """How joint ``name`` differs (:data:`NO_DIFFERENCE` when not named)."""
        return self.joints.get(name, NO_DIFFERENCE)

    @property
    def empty(self) -> bool:
        """Whether the real robot is the model, with perfect devices."""
        return self.model is None and not self.bodies and all(
            replace(j, line=0) == NO_DIFFERENCE for j in self.joints.values())


EMPTY_TRUTH = Truth()
"""The real robot is the model given."""


def load_truth(path: str | Path) -> Truth:
    """Read a truth file (:func:`parse_truth`).

    Raises:
        TruthError: it cannot be read, or says something wrong (with its line).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TruthError(f"cannot read the truth file: {exc}", str(path)) from None
    return parse_truth(text, str(path), base=Path(path).parent)


def parse_truth(text: str, source: str = "<truth>", base: Path | None = None) -> Truth:
    """Parse a truth file's text (module docstring).

    Args:
        text: the YAML.
        source: its name in messages.
        base: the folder a relative ``model`` path is taken from (default: the current).

    Raises:
        TruthError: invalid YAML, an unknown key, a bad value; with its line.
    """
    try:
        top = load_yaml_lines(text, scalar_keys=True)
    except YamlLineError as exc:
        raise TruthError(exc.message, source, exc.line) from None
    if top is None:
        return Truth(source=source)
    reader = _Reader(source)
    top = reader.mapping(top, "the truth file", 1)
    reader.known(top, _TOP_KEYS, "the truth file")
    seed = top.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise reader.fail(key_line(top, "seed"), f"seed must be an integer >= 0, got {seed!r}")
    model = top.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise reader.fail(key_line(top, "model"), f"model must be a file name, got {model!r}")
    path = None if model is None else (base or Path()) / model
    joints = {}
    raw_joints = reader.mapping(top.get("joints", {}), "joints", key_line(top, "joints"))
    for name, raw in raw_joints.items():
        joints[str(name)] = reader.joint(raw, str(name), key_line(raw_joints, name))
    bodies = {}
    raw_bodies = reader.mapping(top.get("bodies", {}), "bodies", key_line(top, "bodies"))
    for name, raw in raw_bodies.items():
        bodies[str(name)] = reader.body(raw, str(name), key_line(raw_bodies, name))
    return Truth(seed, path, MappingProxyType(joints), MappingProxyType(bodies), source)


class _Reader:
    """The checks of one file, each error at its line."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, line: int, message: str) -> TruthError:
        return TruthError(message, self.source, line)

    def mapping(self, raw: Any, what: str, line: int) -> Mapping[Any, Any]:  # noqa: ANN401
        if raw is None:
            return {}
        if not isinstance(raw, dict):
            raise self.fail(line, f"{what} must be a mapping, got {type(raw).__name__}")
        return raw

    def known(self, raw: Mapping[Any, Any], keys: tuple[str, ...], what: str) -> None:
        for key in raw:
            if key not in keys:
                raise self.fail(key_line(raw, key),
                                f"unknown key {key!r} in {what}; known: {', '.join(keys)}")

    def number(self, raw: Mapping[Any, Any], key: str, what: str, *,
               signed: bool = False) -> float:
        value = raw[key]
        line = key_line(raw, key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or (value < 0 and not signed):
            sign = "a finite number" if signed else "a finite number >= 0"
            raise self.fail(line, f"{what} {key} must be {sign}, got {value!r}")
        return float(value)

    def joint(self, raw: Any, name: str, line: int) -> JointTruth:  # noqa: ANN401
        what = f"joint {name!r}"
        raw = self.mapping(raw, what, line)
        self.known(raw, tuple(JOINT_KEYS), what)
        values = {k: self.number(raw, k, what, signed=k in _SIGNED) for k in raw}
        return JointTruth(**values, line=line or node_line(raw))

    def body(self, raw: Any, name: str, line: int) -> AddedMass:  # noqa: ANN401
        what = f"body {name!r}"
        raw = self.mapping(raw, what, line)
        self.known(raw, _BODY_KEYS, what)
        if "mass" not in raw:
            raise self.fail(node_line(raw) or line, f"{what}: missing 'mass' (kg)")
        mass = self.number(raw, "mass", what)
        at = raw.get("at", [0.0, 0.0, 0.0])
        if not (isinstance(at, list) and len(at) == 3  # noqa: PLR2004 - a point
                and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                        and math.isfinite(x) for x in at)):
            raise self.fail(key_line(raw, "at"), f"{what} at must be [x, y, z] in m, got {at!r}")
        return AddedMass(mass, (float(at[0]), float(at[1]), float(at[2])),
                         line or node_line(raw))


def apply_truth(world: World, truth: Truth) -> World:
    """The real robot: ``world`` with the truth's friction, damping and added masses.

    Each joint named is a DOF of one of the world's skeletons (its single DOF: the truth
    speaks of one-DOF joints by their DOF's name), each body a body. ``truth.model`` is
    not read here: the caller loads it and passes it as ``world``.

    Raises:
        TruthError: a joint or body the world does not have (at its line).
    """
    dofs = {d.name for s in world.skeletons for d in s.dofs}
    bodies = {b.name for s in world.skeletons for b in s.bodies}
    for name, jt in truth.joints.items():
        if name not in dofs:
            raise TruthError(f"joint {name!r} is no DOF of {world.source}{_known(dofs)}",
                             truth.source, jt.line)
    for name, added in truth.bodies.items():
        if name not in bodies:
            raise TruthError(f"body {name!r} is no body of {world.source}{_known(bodies)}",
                             truth.source, added.line)
    skeletons = tuple(_real_skeleton(s, truth) for s in world.skeletons)
    return replace(world, skeletons=skeletons)


def _known(names: set[str]) -> str:
    return f"; known: {', '.join(sorted(names))}" if names else ""


def _real_skeleton(skel: Skeleton, truth: Truth) -> Skeleton:
    dofs = tuple(_real_dof(d, truth.joints[d.name]) if d.name in truth.joints else d
                 for d in skel.dofs)
    bodies = tuple(_loaded(b, truth.bodies[b.name]) if b.name in truth.bodies else b
                   for b in skel.bodies)
    return replace(skel, dofs=dofs, bodies=bodies)


def _real_dof(dof: Dof, jt: JointTruth) -> Dof:
    return replace(dof,
                   coulomb_friction=dof.coulomb_friction if jt.friction is None else jt.friction,
                   damping=dof.damping if jt.damping is None else jt.damping)


def _loaded(body: Body, added: AddedMass) -> Body:
    """``body`` with a point mass fixed at ``added.at`` (its frame)."""
    return replace(body, inertia=with_point_mass(body.inertia, added.mass, added.at))


def with_point_mass(inertia: Inertia, mass: float, at: tuple[float, float, float]) -> Inertia:
    """Mass properties of a body with a point mass ``mass`` fixed at ``at`` (body frame).

    The new centre of mass is the weighted mean; the moment about it is each part's
    moment carried there (parallel axes); a point mass has no moment of its own.
    """
    if mass == 0.0:
        return inertia
    m0, c0 = inertia.mass, np.asarray(inertia.com, dtype=float)
    p = np.asarray(at, dtype=float)
    total = m0 + mass
    com = (m0 * c0 + mass * p) / total

    def carried(m: float, offset: np.ndarray) -> np.ndarray:
        return m * (float(offset @ offset) * np.eye(3) - np.outer(offset, offset))

    moment = np.asarray(inertia.moment, dtype=float) + carried(m0, c0 - com) \
        + carried(mass, p - com)
    com.setflags(write=False)
    moment.setflags(write=False)
    return Inertia(total, com, moment, inertia.moment_from_shapes)
