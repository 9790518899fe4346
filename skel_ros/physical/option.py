"""The ``physics`` option every physics-backed emulator takes, and the world it builds.

Shared by the emulators of :mod:`skel_ros.physical` (Dynamixel, MIT, CiA 402): the option's keys
(:data:`PHYSICS_KEYS`), its check (:func:`split_physics`), each device's joint and
transmission (:func:`physics_joints`), and the real robot it names (:func:`load_real_world`)
built as one :class:`~skel_ros.physical.world.PhysicalWorld` (:func:`build_world`), and
what each device's shaft in it shares (:class:`JointMotor`); and the options of one bus's
emulator for the joints a hardware YAML maps to it (:func:`emulator_options`: the hardware
node's emulation and ``skel-ros emulate --config``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from skel_ros.emulation.motor import MotorState
from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.errors import ConfigError
from skel_ros.model import load_model
from skel_ros.model.errors import SkelError
from skel_ros.model.truth import EMPTY_TRUTH, TruthError, load_truth
from skel_ros.physical.world import PhysicalWorld, Transmission, real_world

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from skel_ros.emulation.motor import MotorParams
    from skel_ros.hardware.config import JointMapping
    from skel_ros.model.truth import Truth
    from skel_ros.model.types import Skeleton, World
    from skel_ros.physical.servo_law import ServoLaw
    from skel_ros.physical.world import DeviceJoint

__all__ = ["PHYSICS_KEYS", "JointMotor", "build_world", "coupled_buses", "emulator_options",
           "load_real_world", "physics_joints", "share_world", "split_physics"]

PHYSICS_KEYS = frozenset({"model", "model_args", "fixed_base", "truth", "joints", "world"})
"""The ``physics`` option: ``model`` (the model file), ``model_args`` (a xacro's
``{name: value}``), ``fixed_base``, ``truth`` (the truth file or None), ``joints``
(``{id: {"joint": DOF, "direction": 1, "gear_ratio": 1.0, "zero_offset": 0.0}}``);
in this process only, ``world``: a :class:`~skel_ros.physical.world.PhysicalWorld` that
several buses' devices move (:func:`share_world`), used instead of one of the bus's own."""


def split_physics(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(physics, the other options)`` of an emulator's ``options``, ``physics`` checked.

    Its ``joints`` keys become strings (as they travel in JSON).

    Raises:
        ConfigError: no ``physics``, one without ``model`` or ``joints``, unknown keys.
    """
    physics = options.get("physics")
    if not isinstance(physics, dict) or "model" not in physics or "joints" not in physics:
        raise ConfigError("physics emulation: the option 'physics' needs 'model' and 'joints'")
    unknown = set(physics) - PHYSICS_KEYS
    if unknown:
        raise ConfigError(f"physics emulation: unknown key(s) {sorted(unknown)}; known:"
                          f" {sorted(PHYSICS_KEYS)}")
    joints = {str(k): dict(v) for k, v in physics["joints"].items()}
    rest = {k: v for k, v in options.items() if k != "physics"}
    return {**physics, "joints": joints}, rest


def emulator_options(maps: Sequence[JointMapping], initial: Mapping[str, float],
                     physics: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The options of the emulator of one bus, whose DOFs a hardware YAML maps as ``maps``.

    ``initial_positions``: each actuator where its DOF's ``initial`` position (DOF name ->
    position) puts it through its mapping. With ``physics`` (the ``physics`` option but
    its ``joints``: model, model_args, fixed_base, truth), the ``physics`` option with
    each actuator's DOF and transmission as the YAML says (:data:`PHYSICS_KEYS`).
    """
    options: dict[str, Any] = {"initial_positions": {
        m.actuator.id: m.to_actuator(initial[m.name]) for m in maps}}
    if physics is not None:
        options["physics"] = {**physics, "joints": {
            m.actuator.id: {"joint": m.name, "direction": m.direction,
                            "gear_ratio": m.gear_ratio, "zero_offset": m.zero_offset}
            for m in maps}}
    return options


def physics_joints(physics: Mapping[str, Any]) -> dict[int, tuple[str, Transmission]]:
    """Device id -> its joint (DOF name) and transmission, as ``physics["joints"]`` says."""
    return {int(i): (str(j["joint"]), Transmission(int(j.get("direction", 1)),
                                                   float(j.get("gear_ratio", 1.0)),
                                                   float(j.get("zero_offset", 0.0))))
            for i, j in physics["joints"].items()}


def load_real_world(physics: Mapping[str, Any],
                    start: Mapping[str, float]) -> tuple[World, Truth]:
    """The real robot of a ``physics`` option, and its truth.

    Its model (or the truth's own), the truth applied, the driven joints starting at
    ``start`` (joint -> position).

    Raises:
        ConfigError: the model or the truth file cannot be read or used.
    """
    try:
        model = load_model(physics["model"], xacro_args=physics.get("model_args") or None,
                           fixed_base=bool(physics.get("fixed_base", False)))
        truth = load_truth(physics["truth"]) if physics.get("truth") else EMPTY_TRUTH
        other = load_model(truth.model) if truth.model is not None else None
        world = real_world(model, truth, other)
    except (SkelError, TruthError) as exc:
        raise ConfigError(f"physics emulation: {exc}") from None
    return replace(world, skeletons=tuple(
        replace(s, dofs=tuple(replace(d, initial_position=start[d.name]) if d.name in start
                              else d for d in s.dofs)) for s in world.skeletons)), truth


def _joint_buses(skeleton: Skeleton, buses: Mapping[str, Iterable[str]],
                 ) -> dict[str, set[str | None]]:
    """Joint name -> the buses whose devices drive its DOFs (None: a DOF no device drives)."""
    owner = {dof: bus for bus, dofs in buses.items() for dof in dofs}
    for d in skeleton.dofs:
        if d.name not in owner and d.mimic is not None and d.mimic.leader in owner:
            owner[d.name] = owner[d.mimic.leader]
    by_joint: dict[str, set[str | None]] = {}
    for d in skeleton.dofs:
        by_joint.setdefault(d.joint, set()).add(owner.get(d.name))
    return by_joint


def coupled_buses(skeleton: Skeleton, buses: Mapping[str, Iterable[str]],
                  worlds: Mapping[str, str] | None = None) -> str | None:
    """Why the buses' physics worlds would not move ``skeleton`` as the robot moves, or None.

    ``buses``: bus name -> the DOFs its devices drive (a mimic follower goes with its
    leader). ``worlds``: bus name -> the world its emulator moves (what the message calls
    it); buses of one world move one simulation of the robot together (:func:`share_world`);
    default: a world per bus. Each world is the whole robot, in which the joints of the
    other worlds' buses have no device and hang limp: that is the robot's own motion only
    if no joint of one world moves with a joint of another, neither hanging below a
    driven joint of another world nor both below one joint no device drives (a floating
    base, a passive joint), so that the worlds' joints meet only at bodies fixed to the
    world (the legs of a robot on a stand). One world: None.
    """
    by_joint = _joint_buses(skeleton, buses)
    world = {bus: (worlds or {}).get(bus, bus) for bus in buses}
    if len({world[b] for b in buses if any(b in on for on in by_joint.values())}) < 2:  # noqa: PLR2004
        return None
    child_of = {j.child: j for j in skeleton.joints}

    def where(bus: str) -> str:
        return f"bus {bus!r}" if worlds is None else f"bus {bus!r}, {world[bus]}"

    limp = ("one physics world per bus would leave that joint limp in this bus's world"
            if worlds is None else "their buses move different physics worlds, and each"
            " would leave the other's joint limp")
    below_passive: dict[str, dict[str, tuple[str, str]]] = {}  # joint -> world -> (joint, bus)
    for joint in skeleton.joints:
        mine = by_joint.get(joint.name, set())
        if len(mine) != 1 or None in mine:
            continue
        (bus,) = mine
        assert bus is not None  # noqa: S101 - None was excluded above
        body = joint.parent
        while body is not None and body in child_of:
            above = child_of[body]
            theirs = by_joint.get(above.name, set())
            if None in theirs:
                below_passive.setdefault(above.name, {}).setdefault(
                    world[bus], (joint.name, bus))
            others = sorted(b for b in theirs if b is not None and world[b] != world[bus])
            if others:
                return (f"joint {joint.name!r} ({where(bus)}) moves with joint {above.name!r}"
                        f" ({where(others[0])}): {limp}; the buses' joints must meet only"
                        " at bodies fixed to the world")
            body = above.parent
    meeting = next(((p, sorted(seen.values())) for p, seen in below_passive.items()
                    if len(seen) > 1), None)
    if meeting is None:
        return None
    passive, ((j1, b1), (j2, b2), *_) = meeting
    return (f"joint {j1!r} ({where(b1)}) and joint {j2!r} ({where(b2)}) both move with"
            f" joint {passive!r} (no device): {limp}; the buses' joints must meet only at"
            " bodies fixed to the world")


def build_world(physics: Mapping[str, Any], positions: Mapping[int, float], t0: float,
                ) -> tuple[PhysicalWorld, dict[int, tuple[str, Transmission]]]:
    """The world of a ``physics`` option started at clock time ``t0``, and its joints.

    Each device's joint starts at its ``positions`` (id -> actuator rad); the second item
    is each device's joint and transmission (:func:`physics_joints`). With a ``world``
    (:func:`share_world`), that world, each device's joint one of its driven joints with
    the same transmission.

    Raises:
        ConfigError: a device without a joint, or without its joint in the ``world``
            given; the model or the truth cannot be used.
    """
    joints = physics_joints(physics)
    shared = physics.get("world")
    if shared is None:
        return _new_world(physics, [(joints, positions)], t0), joints
    _check_positions(joints, positions)
    if not isinstance(shared, PhysicalWorld):
        raise ConfigError("physics emulation: the option 'world' is a physics world of this"
                          f" process (share_world), got {type(shared).__name__}")
    for i, (name, transmission) in joints.items():
        joint = shared.joints.get(name)
        if joint is None or joint.transmission != transmission:
            raise ConfigError(f"physics emulation: device id {i}'s joint {name!r} is not a"
                              " driven joint of the shared world with its transmission")
    return shared, joints


def _new_world(physics: Mapping[str, Any],
               buses: Sequence[tuple[Mapping[int, tuple[str, Transmission]],
                                     Mapping[int, float]]],
               t0: float) -> PhysicalWorld:
    """One world for the devices of ``buses``, started at clock time ``t0``.

    Each bus: ``(id -> joint and transmission, id -> actuator position)``; the model, its
    arguments and the truth: ``physics``'s.
    """
    start: dict[str, float] = {}
    driven: dict[str, Transmission] = {}
    for joints, positions in buses:
        _check_positions(joints, positions)
        for name, transmission in joints.values():
            if name in driven:
                raise ConfigError(f"physics emulation: joint {name!r} is driven by two"
                                  " devices; one world takes one device per joint")
            driven[name] = transmission
        start.update({joints[i][0]: joints[i][1].to_joint(p) for i, p in positions.items()})
    world, truth = load_real_world(physics, start)
    return PhysicalWorld(world, driven, truth, t0=t0)


def _check_positions(joints: Mapping[int, tuple[str, Transmission]],
                     positions: Mapping[int, float]) -> None:
    missing = [i for i in positions if i not in joints]
    if missing:
        raise ConfigError(f"physics emulation: no joint for device id(s) {missing}")


def share_world(options: Mapping[str, Mapping[str, Any]], t0: float,
                ) -> dict[str, dict[str, Any]]:
    """Each bus's emulator options with one physics world that all their devices move.

    ``options``: bus name -> its emulator's options (:func:`emulator_options` with
    ``physics``: the same model, arguments and truth on every bus, each bus's own
    ``joints``); the world starts at clock time ``t0`` with every device's joint at its
    ``initial_positions`` and goes into each bus's ``physics`` as ``world``. For the
    emulators of this process (MIT, CiA 402, Feetech), which step it from threads of
    their own under its lock (:attr:`~skel_ros.physical.world.PhysicalWorld.lock`).

    Raises:
        ConfigError: buses whose models differ, a joint on two buses, a device without a
            joint; the model or the truth cannot be used.
    """
    physics = {bus: split_physics(o)[0] for bus, o in options.items()}
    if not physics:
        return {}
    first, *_ = physics.values()
    common = {k: v for k, v in first.items() if k != "joints"}
    for bus, p in physics.items():
        if {k: v for k, v in p.items() if k != "joints"} != common:
            raise ConfigError(f"physics emulation: bus {bus!r} moves another model or truth"
                              " than the other buses; one world is one robot")
    world = _new_world(common, [
        (physics_joints(physics[bus]),
         {int(i): float(p) for i, p in (o.get("initial_positions") or {}).items()})
        for bus, o in options.items()], t0)
    return {bus: {**o, "physics": {**physics[bus], "world": world}}
            for bus, o in options.items()}


class JointMotor:
    """A device's shaft as a joint of the physics world, driven by the device's own law.

    What the physics-backed motors (Dynamixel, MIT, CiA 402) share: the joint runs
    ``law``, the motor's limits (:attr:`params`) bound the law's torque (:meth:`_limit`);
    what the device measures is what its encoder reads (:attr:`state`: no torque while
    its law is off, :meth:`_torque_on`); the world moves the shaft, no hand does
    (:meth:`set_position`).
    """

    law: Any

    def __init__(self, joint: DeviceJoint, law: Any, params: MotorParams,  # noqa: ANN401
                 mode: ControlMode) -> None:
        self.joint = joint
        self.law = law
        joint.law = law
        self._params = params
        self.mode = mode

    @property
    def params(self) -> MotorParams:
        """The motor's limits: its torque limit bounds the law's."""
        return self._params

    @params.setter
    def params(self, params: MotorParams) -> None:
        self._params = params
        self._limit(params)

    def _limit(self, params: MotorParams) -> None:
        """The law bounded by new limits: its torque limit."""
        self.law.max_torque = params.max_effort

    def _torque_on(self) -> bool:
        """Whether the device's law drives the shaft now."""
        raise NotImplementedError

    @property
    def state(self) -> MotorState:
        """What the device measures: its encoder's position, the shaft's speed, its torque."""
        j = self.joint
        with j.world.lock:  # one step's reading, not parts of two
            on = self._torque_on()
            return MotorState(j.position, j.velocity, j.torque if on else 0.0, on)

    def step(self, t: float) -> tuple[float, float, float, bool]:
        """The world advanced to ``t``; what the device measures then."""
        with self.joint.world.lock:
            self.joint.world.advance(t)
            s = self.state
        return s.position, s.velocity, s.effort, s.torque_enabled

    def set_position(self, position: float) -> None:
        """Not possible: the world moves the shaft."""
        raise ValueError(f"the shaft of a physics-backed device cannot be put at {position}:"
                         " its world moves it")


class ServoMotor(JointMotor):
    """A position-controlled bus servo's shaft (Dynamixel X-series, Feetech STS/SCS).

    Its law (a :class:`~skel_ros.physical.servo_law.ServoLaw`) brings the motor's rotor
    to the joint, holds where the encoder reads when torque comes on (the world released
    then), and takes its goals after the joint's command delay.
    """

    def __init__(self, joint: DeviceJoint, law: ServoLaw, params: MotorParams) -> None:
        super().__init__(joint, law, params, ControlMode.POSITION)
        joint.add_rotor(law.rotor_inertia)

    def _torque_on(self) -> bool:
        return bool(self.law.torque_on)

    def set_torque(self, enabled: bool, t: float | None = None) -> None:  # noqa: FBT001
        """Torque on (holding where the encoder reads; the world released) or off, at once."""
        if t is not None:
            self.step(t)
        if enabled:
            self.joint.world.release()
        self.law.enable(bool(enabled), self.joint.position)

    def set_position_target(self, position: float) -> None:
        """The goal position (rad), after the joint's command delay."""
        law = self.law
        self.joint.later(lambda: setattr(law, "goal_position", float(position)))

    def set_velocity_target(self, velocity: float) -> None:
        """The goal velocity (rad/s), after the joint's command delay."""
        law = self.law
        self.joint.later(lambda: setattr(law, "goal_velocity", float(velocity)))
