"""The hardware YAML: which actuator drives which DOF, on which bus, and how safely.

A file looks like this (``config/hardware/arm_dynamixel.yaml`` is a complete one)::

    control_rate: 200.0           # Hz, the control loop's rate
    command_timeout: 0.5          # s without a command -> safe_state
    safe_state: hold              # hold | torque_off
    auto_resume: false            # after a fault and reconnect: enable again by itself?
    reenable_velocity: 0.2        # after an enable: fraction of the velocity limits until
                                  #   a commanded goal is reached
    write_on_command: true        # a goal after a pause written at once, a stream's by
                                  #   the cycles (false: every goal by the next cycle)
    buses:
      arm_bus:
        protocol: dynamixel       # dynamixel | canopen | mit | a plugin's name
        transport: {port: /dev/ttyUSB0, baudrate: 1000000}
    joints:
      shoulder_yaw:               # a DOF name of the SKEL model
        bus: arm_bus
        id: 1
        model: XM430-W350
        mode: position            # position | velocity | effort | impedance (the protocol's)
        direction: 1              # 1 or -1
        zero_offset: 0.0          # actuator position (rad) when the DOF is at 0
        gear_ratio: 1.0           # actuator turns per DOF turn
        limits: {position: {lower: -1.5, upper: 1.5}}   # tighten only

The file is read in two steps: :func:`load_hardware_config` checks its form (every
error is a :class:`~skel_ros.hardware.errors.ConfigError` ``"file:line: ..."``), then
:meth:`HardwareConfig.bind` checks it against the SKEL model (unknown DOFs, limit
overrides that would widen the model's limits) and returns a :class:`BoundConfig`.

Joint and actuator are related by (all SI: rad or m, at the actuator's output)::

    actuator_position = zero_offset + direction * gear_ratio * joint_position
    actuator_velocity = direction * gear_ratio * joint_velocity
    actuator_effort   = direction * joint_effort / gear_ratio
"""

from __future__ import annotations

import difflib
import enum
import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict

import numpy as np

from skel_ros.hardware.base import (
    ActuatorLimits,
    ActuatorSpec,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind, protocol, protocol_names
from skel_ros.hardware.safety import DEFAULT_REENABLE_VELOCITY, MODE_COMMANDS
from skel_ros.model.limits import (
    Bound,
    BoundOverride,
    CommandKind,
    JointOverride,
    LimitError,
    LimitKind,
    LimitOverrides,
    LimitSet,
    load_limit_overrides,
)
from skel_ros.model.mimic import couplings as model_couplings
from skel_ros.model.mimic import leader_interval
from skel_ros.model.types import FollowerDrive
from skel_ros.model.yamlread import YamlLineError, key_line, load_yaml_lines, node_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from skel_ros.model.types import Array, Mimic, Skeleton, World

__all__ = [
    "START_INSIDE",
    "BoundConfig",
    "HardwareConfig",
    "JointMapping",
    "ReconnectPolicy",
    "SafeState",
    "load_hardware_config",
    "parse_hardware_config",
]

MAX_CONTROL_RATE: Final = 10_000.0
# The devices' own watchdog when the YAML does not set one: this many control periods,
# and never less than DEVICE_WATCHDOG_MIN seconds. A dead host must stop the robot
# quickly, but a loaded host's scheduler pauses a process for 0.1 s now and then (seen on
# two shared cores at a load of 8), and a robot that stops at each pause is not usable.
DEVICE_WATCHDOG_PERIODS: Final = 10
DEVICE_WATCHDOG_MIN: Final = 0.25
# Seconds added to a reply's wire time before it counts as missing: USB adapters' latency
# timers (up to 16 ms) and a loaded host. A missed reply costs one cycle; fault_threshold
# misses in a row fail the bus.
DEFAULT_TIMEOUT_MARGIN: Final = 0.1
# Earlier spellings of ``mode:`` still read (with a FutureWarning naming the new one).
DEPRECATED_MODES: Final = {"mit": ControlMode.IMPEDANCE}
_SHOWN: Final = 12  # DOF names listed in an "unknown DOF" message


class SafeState(enum.Enum):
    """What the backend does when commands stop coming or a bus fails."""

    HOLD = "hold"  # torque stays on, the target stays where the joint is
    TORQUE_OFF = "torque_off"  # torque off: the joint goes limp


# --------------------------------------------------------------------------- raw YAML


class RawReconnect(TypedDict, total=False):
    """``reconnect:`` as written."""

    initial_delay: float
    max_delay: float
    factor: float


class RawBus(TypedDict, total=False):
    """One entry of ``buses:`` as written."""

    protocol: str
    transport: dict[str, Any]
    options: dict[str, Any]


class RawLimits(TypedDict, total=False):
    """``limits:`` of one joint as written (the format of ``skel_ros.model.limits``)."""

    position: dict[str, float]
    velocity: float | dict[str, float]
    acceleration: float | dict[str, float]
    effort: float | dict[str, float]


class RawJoint(TypedDict, total=False):
    """One entry of ``joints:`` as written."""

    bus: str
    id: int
    protocol: str
    model: str
    mode: str
    direction: int
    zero_offset: float
    gear_ratio: float
    options: dict[str, Any]
    limits: RawLimits


class RawConfig(TypedDict, total=False):
    """The whole document as written."""

    skeleton: str
    control_rate: float
    command_timeout: float
    safe_state: str
    auto_resume: bool
    reenable_velocity: float
    write_on_command: bool
    fault_threshold: int
    device_watchdog: float
    timeout_margin: float
    reconnect: RawReconnect
    limits_file: str
    buses: dict[str, RawBus]
    joints: dict[str, RawJoint]
    lerobot_motors: dict[str, str]


# --------------------------------------------------------------------------- typed config


@dataclass(frozen=True)
class ReconnectPolicy:
    """Exponential backoff between attempts to reopen a failed bus.

    Attributes:
        initial_delay: seconds before the first attempt.
        max_delay: the longest wait between attempts.
        factor: how much the wait grows after each failed attempt.
    """

    initial_delay: float = 0.1
    max_delay: float = 2.0
    factor: float = 2.0

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt number ``attempt`` (0-based)."""
        return min(self.max_delay, self.initial_delay * self.factor ** min(attempt, 64))


@dataclass(frozen=True)
class JointMapping:
    """One DOF and the actuator that drives it.

    Attributes:
        name: the DOF's name in the SKEL model.
        bus: the bus's name.
        actuator: the actuator (id, mode, model, options; ``name`` is the DOF).
        direction: 1 or -1.
        zero_offset: actuator position when the DOF is at 0 (rad or m, actuator side).
        gear_ratio: actuator turns per DOF turn (> 0).
        limits: tighter limits for this DOF, or None.
        line: the line of the DOF's entry in the file.
        actuator_line: the line of its ``mode:`` (0 when not given).
    """

    name: str
    bus: str
    actuator: ActuatorSpec
    direction: int = 1
    zero_offset: float = 0.0
    gear_ratio: float = 1.0
    limits: JointOverride | None = None
    line: int = 0
    actuator_line: int = 0

    def to_actuator(self, position: float) -> float:
        """The actuator position for a DOF position."""
        return self.zero_offset + self.direction * self.gear_ratio * position

    def from_actuator(self, position: float) -> float:
        """The DOF position for an actuator position."""
        return self.direction * (position - self.zero_offset) / self.gear_ratio


@dataclass(frozen=True)
class HardwareConfig:
    """A hardware YAML, checked for form (not yet against a model).

    Attributes:
        source: the file name, for messages.
        buses: every bus, in file order.
        joints: every mapped DOF, in file order.
        control_rate: control loop rate, Hz.
        command_timeout: seconds without a command before ``safe_state`` (0: never).
        safe_state: what to do on a command timeout or a fault.
        auto_resume: after a fault and a successful reconnect, enable again by itself
            (only if motion was enabled when the fault happened).
        reenable_velocity: after an enable, each position DOF moves at most this fraction
            of its velocity limits until it has reached a commanded goal, in (0, 1].
        write_on_command: a goal that arrives between two cycles after a pause (its DOFs
            had none in the last ``STREAM_PERIODS`` control periods) is limited and
            written at once (True); a stream's goals are written by the cycles either
            way. False: every goal waits for the next cycle, which writes it right after
            its read (a fixed time between each read and the write after it, up to a
            period more latency for a single command).
        fault_threshold: consecutive failed cycles of a bus (timeouts, bad frames)
            tolerated before it counts as failed; a vanished port or a drive in fault
            fails it at once.
        reconnect: backoff between reconnect attempts.
        device_watchdog: seconds of host silence after which each device stops by itself
            (0: not armed); copied into every :class:`BusSpec`.
        timeout_margin: seconds added to a reply's computed wire time before it counts as
            missing; copied into every :class:`BusSpec`.
        skeleton: the skeleton of the SKEL world to drive ("" = the first with DOFs).
        limit_overrides: override files (``limits_file:``) and the joints' inline
            ``limits:``, in the order they are applied.
        lerobot_motors: (LeRobot motor name, joint) of a LeRobot calibration file, in its
            order (``lerobot_motors:``, docs/feetech.md); only ``skel-ros
            export-calibration`` reads it.
    """

    source: str
    buses: tuple[BusSpec, ...]
    joints: tuple[JointMapping, ...]
    control_rate: float = 200.0
    command_timeout: float = 0.5
    safe_state: SafeState = SafeState.HOLD
    auto_resume: bool = False
    reenable_velocity: float = DEFAULT_REENABLE_VELOCITY
    write_on_command: bool = True
    fault_threshold: int = 3
    reconnect: ReconnectPolicy = field(default_factory=ReconnectPolicy)
    device_watchdog: float = 0.0
    timeout_margin: float = DEFAULT_TIMEOUT_MARGIN
    skeleton: str = ""
    limit_overrides: tuple[LimitOverrides, ...] = ()
    lerobot_motors: tuple[tuple[str, str], ...] = ()

    def bus(self, name: str) -> BusSpec:
        """The bus called ``name`` (KeyError if none)."""
        for spec in self.buses:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def joints_on(self, bus: str) -> tuple[JointMapping, ...]:
        """The mapped DOFs on bus ``bus``, in file order."""
        return tuple(j for j in self.joints if j.bus == bus)

    def with_transport(self, bus: str, transport: Mapping[str, Any]) -> HardwareConfig:
        """A copy with ``bus``'s transport replaced (emulators, command-line overrides)."""
        buses = tuple(
            replace(b, transport=dict(transport)) if b.name == bus else b for b in self.buses
        )
        if buses == self.buses and bus not in {b.name for b in self.buses}:
            raise KeyError(bus)
        return replace(self, buses=buses)

    def with_overrides(self, port: str = "", can_interface: str = "",
                       can_channel: str = "") -> HardwareConfig:
        """A copy with every serial bus on ``port`` and every CAN bus on the interface/channel.

        Empty strings keep what the file says (the launch files' ``port``,
        ``can_interface`` and ``can_channel`` arguments).
        """
        result = self
        for spec in self.buses:
            transport = dict(spec.transport)
            kind = protocol(spec.protocol).transport
            if kind is TransportKind.SERIAL and port:
                transport["port"] = port
            if kind is TransportKind.CAN:
                if can_interface:
                    transport["interface"] = can_interface
                if can_channel:
                    transport["channel"] = can_channel
            if transport != dict(spec.transport):
                result = result.with_transport(spec.name, transport)
        return result

    def select_skeleton(self, world: World) -> Skeleton:
        """The skeleton of ``world`` this configuration drives.

        Raises:
            ConfigError: the named skeleton does not exist, or none has DOFs.
        """
        if self.skeleton:
            for skel in world.skeletons:
                if skel.name == self.skeleton:
                    return skel
            names = ", ".join(repr(s.name) for s in world.skeletons)
            raise ConfigError(f"{self.source}: skeleton {self.skeleton!r} is not in the model"
                              f" (it has {names})")
        for skel in world.skeletons:
            if skel.num_dofs:
                return skel
        raise ConfigError(f"{self.source}: the model has no skeleton with DOFs")

    def bind(self, skeleton: Skeleton) -> BoundConfig:
        """Check the configuration against ``skeleton`` and compute the limits.

        Raises:
            ConfigError: a mapped name that is not a DOF of the skeleton (a multi-DOF
                joint's name is not enough: each DOF is mapped on its own), or a limit
                override that widens a limit; ``"file:line: ..."``.
        """
        dof_names = [d.name for d in skeleton.dofs]
        known = set(dof_names)
        for jm in self.joints:
            if jm.name not in known:
                raise ConfigError(_at(self.source, jm.line,
                                      f"{jm.name!r} is not a DOF of skeleton {skeleton.name!r}"
                                      f"{_dof_hint(jm.name, skeleton)}"))
        try:
            limits = LimitSet.from_skeleton(skeleton)
        except LimitError as exc:
            raise ConfigError(str(exc)) from None
        try:
            for overrides in self.limit_overrides:
                limits = limits.tightened(overrides)
        except LimitError as exc:
            raise ConfigError(str(exc)) from None
        mapped = {jm.name for jm in self.joints}
        couplings = self._couplings(skeleton)
        limits = self._narrow_leaders(limits, couplings, skeleton)
        derived = tuple(n for n, m in couplings if m.drive is FollowerDrive.COUPLED)
        unmapped = tuple(n for n in dof_names if n not in mapped and n not in derived)
        return BoundConfig(self, skeleton, limits, unmapped, couplings, derived)

    def _couplings(self, skeleton: Skeleton) -> tuple[tuple[str, Mimic], ...]:
        """The followers this configuration moves, each with what drives it.

        The file says it, and nothing else does: a follower mapped to an actuator is
        ``FROM_LEADER`` (its actuator commanded from the leader's), one left out of
        ``joints:`` is ``COUPLED`` (the leader's mechanism moves it; its state is
        derived). A follower whose leader has no actuator is not moved at all.

        Raises:
            ConfigError: a follower mapped while its leader is not, or mapped to a
                control mode that does not take its leader's kind of command.
        """
        by_name = {jm.name: jm for jm in self.joints}
        out = []
        for dof, mimic in model_couplings(skeleton):
            follower, leader = by_name.get(dof.name), by_name.get(mimic.leader)
            if follower is not None and leader is None:
                raise ConfigError(_at(
                    self.source, follower.line,
                    f"joint {dof.name!r} is a mimic joint of {mimic.leader!r}, which has no"
                    f" actuator here: its actuator is commanded from the leader's command,"
                    f" so map {mimic.leader!r} too (or leave {dof.name!r} out)"))
            if leader is None:
                continue
            if follower is None:
                out.append((dof.name, replace(mimic, drive=FollowerDrive.COUPLED)))
                continue
            kind, lead_kind = (MODE_COMMANDS[follower.actuator.mode],
                               MODE_COMMANDS[leader.actuator.mode])
            if kind is not lead_kind or kind is CommandKind.EFFORT:
                line = follower.actuator_line or follower.line
                why = ("an effort is not its leader's scaled" if kind is CommandKind.EFFORT
                       and kind is lead_kind else
                       f"its leader {mimic.leader!r} (line {leader.line}) takes"
                       f" {lead_kind.value} commands")
                raise ConfigError(_at(
                    self.source, line,
                    f"joint {dof.name!r} is a mimic joint of {mimic.leader!r}: its actuator"
                    f" is commanded from the leader's command, and mode"
                    f" {follower.actuator.mode.value!r} takes {kind.value} commands but"
                    f" {why}; give it the leader's kind of mode (position or velocity)"))
            out.append((dof.name, replace(mimic, drive=FollowerDrive.FROM_LEADER)))
        return tuple(out)

    def _narrow_leaders(self, limits: LimitSet, couplings: tuple[tuple[str, Mimic], ...],
                        skeleton: Skeleton) -> LimitSet:
        """``limits`` with each leader narrowed to what its followers' limits allow.

        The model's limits already are (``LimitSet.from_skeleton``); overrides of a
        follower (``limits_file:``, its ``limits:``) narrow its leader here too, in
        position, velocity and acceleration, so no leader command moves a follower past
        its limits and a follower's actuator keeps pace with its leader.

        Raises:
            ConfigError: a follower's limits that leave its leader no position.
        """
        by_name = {jm.name: jm for jm in self.joints}
        for name, mimic in couplings:
            own, lead = limits[name], limits[mimic.leader]
            bounds = []
            for kind in (LimitKind.POSITION, LimitKind.VELOCITY, LimitKind.ACCELERATION):
                lo, hi = leader_interval(mimic, *own.bounds(kind),
                                         offset=kind is LimitKind.POSITION)
                cur_lo, cur_hi = lead.bounds(kind)
                if lo > cur_lo:
                    bounds.append(BoundOverride(kind, Bound.LOWER, lo, 0))
                if hi < cur_hi:
                    bounds.append(BoundOverride(kind, Bound.UPPER, hi, 0))
            if not bounds:
                continue
            try:
                limits = limits.tightened(LimitOverrides(
                    self.source, (JointOverride(mimic.leader, 0, tuple(bounds)),)))
            except LimitError as exc:
                jm = by_name.get(name)
                line = jm.line if jm is not None else 0
                where = (f"joint {name!r} of skeleton {skeleton.name!r}" if jm is None
                         else f"joint {name!r}")
                raise ConfigError(_at(
                    self.source, line,
                    f"{where} is a mimic joint of {mimic.leader!r}, and its limits leave"
                    f" {mimic.leader!r} no value: {exc.message}")) from None
        return limits


START_INSIDE: Final = 0.02
"""The share of its range inside its nearer limit an emulated joint starts at, when the
model's initial position is outside its limits (:meth:`BoundConfig.emulated_start`)."""


@dataclass(frozen=True, eq=False)
class BoundConfig:
    """A configuration checked against a skeleton.

    Attributes:
        config: the configuration.
        skeleton: the skeleton it drives.
        limits: the model's limits, tightened by the configuration's overrides (all DOFs),
            each leader's narrowed to what its followers' limits allow.
        unmapped: DOFs of the skeleton no actuator drives and none derived, in DOF order.
        couplings: the followers (mimic joints) whose leader has an actuator, in DOF
            order, each with its :class:`~skel_ros.model.types.Mimic`, whose ``drive``
            is the file's word: ``FROM_LEADER`` when the follower is mapped to an
            actuator of its own, ``COUPLED`` when it is left out of ``joints:``.
        derived: the ``COUPLED`` followers: no actuator, their state is their leader's
            measurement through the mimic rule.
    """

    config: HardwareConfig
    skeleton: Skeleton
    limits: LimitSet
    unmapped: tuple[str, ...]
    couplings: tuple[tuple[str, Mimic], ...] = ()
    derived: tuple[str, ...] = ()

    def emulated_start(self) -> dict[str, float]:
        """DOF -> where emulated actuators start: the model's initial position, inside limits.

        A real joint is never past its stops, and the node refuses to enable one outside
        its limits. A model may start one there (a URDF has no initial positions: every
        joint at 0, where the Panda's fourth joint, limited to [-3.07, -0.07], cannot
        be): it starts :data:`START_INSIDE` of its range inside the nearer limit instead
        (of 1 rad or m where the other limit is infinite: never on the limit itself,
        which a measurement may read as just past it).
        """
        start = {}
        for d in self.skeleton.dofs:
            lower, upper = self.limits[d.name].bounds(LimitKind.POSITION)
            inside = START_INSIDE * (upper - lower if math.isfinite(upper - lower) else 1.0)
            start[d.name] = (lower + inside if d.initial_position < lower
                             else upper - inside if d.initial_position > upper
                             else d.initial_position)
        return start

    @property
    def reported(self) -> tuple[str, ...]:
        """The DOFs the backend reports, in DOF order: :attr:`names` and :attr:`derived`."""
        shown = set(self.names) | set(self.derived)
        return tuple(d.name for d in self.skeleton.dofs if d.name in shown)

    @property
    def names(self) -> tuple[str, ...]:
        """The mapped DOFs in the skeleton's DOF order (the backend's array order)."""
        order = {d.name: i for i, d in enumerate(self.skeleton.dofs)}
        return tuple(sorted((j.name for j in self.config.joints), key=order.__getitem__))

    def mappings(self) -> tuple[JointMapping, ...]:
        """The joints' mappings in :attr:`names` order."""
        by_name = {j.name: j for j in self.config.joints}
        return tuple(by_name[n] for n in self.names)

    def actuators(self) -> tuple[ActuatorSpec, ...]:
        """The actuators in :attr:`names` order, each with its DOF's limits at the actuator.

        The limits are this configuration's (model limits tightened by the overrides),
        mapped through direction, gear ratio and zero offset (a reversed direction swaps
        the bounds), so a driver can keep every encoded goal inside them.
        """
        out = []
        for m in self.mappings():
            lim = self.limits[m.name]

            def interval(lo: float, hi: float, scale: float, offset: float = 0.0,
                         ) -> tuple[float, float]:
                a, b = offset + scale * lo, offset + scale * hi
                return (min(a, b), max(a, b))

            d, g = float(m.direction), m.gear_ratio
            out.append(replace(m.actuator, limits=ActuatorLimits(
                position=interval(*lim.bounds(LimitKind.POSITION), d * g, m.zero_offset),
                velocity=interval(*lim.bounds(LimitKind.VELOCITY), d * g),
                effort=interval(*lim.bounds(LimitKind.EFFORT), d / g))))
        return tuple(out)

    def conversion_arrays(self) -> tuple[Array, Array, Array]:
        """``(direction, gear_ratio, zero_offset)`` as arrays in :attr:`names` order."""
        maps = self.mappings()
        return (np.array([float(m.direction) for m in maps]),
                np.array([m.gear_ratio for m in maps]),
                np.array([m.zero_offset for m in maps]))


# --------------------------------------------------------------------------- loading


def load_hardware_config(path: str | Path) -> HardwareConfig:
    """Read and check a hardware YAML file (see the module docstring).

    Raises:
        ConfigError: unreadable file, invalid YAML, or anything malformed: ``"file:line: ..."``.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"{source}: cannot read hardware configuration: {reason}") from None
    return parse_hardware_config(text, source, base_dir=Path(path).parent)


def parse_hardware_config(text: str, source: str = "<string>",
                          base_dir: Path | None = None) -> HardwareConfig:
    """Parse hardware YAML text.

    Args:
        text: the document.
        source: name for messages.
        base_dir: where relative ``limits_file:`` paths are resolved (default: cwd).

    Raises:
        ConfigError: invalid YAML or malformed configuration, ``"file:line: ..."``.
    """
    try:
        data = load_yaml_lines(text, scalar_keys=True)
    except YamlLineError as exc:
        raise ConfigError(_at(source, exc.line, exc.message)) from None
    return _Parser(source, base_dir or Path()).document(data)


def _at(source: str, line: int, message: str) -> str:
    return f"{source}:{line}: {message}" if line else f"{source}: {message}"


def _line(mapping: object, key: object = None) -> int:
    return node_line(mapping) if key is None else key_line(mapping, key)


def _dof_hint(name: str, skeleton: Skeleton) -> str:
    for joint in skeleton.joints:
        if joint.name == name:
            if not joint.dofs:
                return f"; joint {name!r} has no DOFs"
            return (f"; joint {name!r} has {len(joint.dofs)} DOFs, map each by name: "
                    + ", ".join(repr(d) for d in joint.dofs))
    names = [d.name for d in skeleton.dofs]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        return "; did you mean " + ", ".join(repr(c) for c in close) + "?"
    shown = ", ".join(repr(n) for n in names[:_SHOWN])
    return f"; its DOFs are {shown}{' ...' if len(names) > _SHOWN else ''}"


_TOP_KEYS: Final = frozenset(RawConfig.__annotations__)
_BUS_KEYS: Final = frozenset(RawBus.__annotations__)
_JOINT_KEYS: Final = frozenset(RawJoint.__annotations__)
_RECONNECT_KEYS: Final = frozenset(RawReconnect.__annotations__)


class _Parser:
    """Turns the loaded document into a :class:`HardwareConfig`; one method per section."""

    def __init__(self, source: str, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.plugins: dict[str, ProtocolPlugin] = {}

    def fail(self, line: int, message: str) -> ConfigError:
        return ConfigError(_at(self.source, line, message))

    # ----------------------------------------------------------------- helpers

    def mapping(self, value: object, what: str, line: int) -> Mapping[Any, Any]:
        if not isinstance(value, dict):
            raise self.fail(line, f"{what} must be a mapping, got {value!r}")
        return value

    def keys(self, mapping: Mapping[Any, Any], allowed: frozenset[str], what: str) -> None:
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else (
                    f"; expected one of {', '.join(sorted(allowed))}")
                raise self.fail(_line(mapping, key), f"unknown key {key!r} in {what}{hint}")

    def number(self, mapping: Mapping[Any, Any], key: str, what: str, default: float,
               *, positive: bool = False, minimum: float | None = None) -> float:
        if key not in mapping:
            return default
        line = _line(mapping, key)
        value = mapping[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(line, f"{what} {key} must be a number, got {value!r}")
        number = float(value)
        if not math.isfinite(number):
            raise self.fail(line, f"{what} {key} must be finite, got {value!r}")
        if positive and number <= 0:
            raise self.fail(line, f"{what} {key} must be > 0, got {value!r}")
        if minimum is not None and number < minimum:
            raise self.fail(line, f"{what} {key} must be >= {minimum:g}, got {value!r}")
        return number

    def integer(self, mapping: Mapping[Any, Any], key: str, what: str, default: int | None,
                minimum: int = 0) -> int:
        if key not in mapping:
            if default is None:
                raise self.fail(_line(mapping), f"{what} has no {key!r}")
            return default
        value = mapping[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(_line(mapping, key),
                            f"{what} {key} must be an integer >= {minimum}, got {value!r}")
        return int(value)

    def string(self, mapping: Mapping[Any, Any], key: str, what: str,
               default: str | None) -> str:
        if key not in mapping:
            if default is None:
                raise self.fail(_line(mapping), f"{what} has no {key!r}")
            return default
        value = mapping[key]
        if not isinstance(value, str) or not value:
            raise self.fail(_line(mapping, key),
                            f"{what} {key} must be a non-empty string, got {value!r}")
        return value

    def boolean(self, mapping: Mapping[Any, Any], key: str, what: str, default: bool) -> bool:  # noqa: FBT001
        if key not in mapping:
            return default
        value = mapping[key]
        if not isinstance(value, bool):
            raise self.fail(_line(mapping, key),
                            f"{what} {key} must be true or false, got {value!r}")
        return value

    def choice(self, mapping: Mapping[Any, Any], key: str, what: str,
               enum_type: type[enum.Enum], default: enum.Enum) -> Any:  # noqa: ANN401
        if key not in mapping:
            return default
        value = mapping[key]
        try:
            return enum_type(value)
        except ValueError:
            valid = " | ".join(str(m.value) for m in enum_type)
            raise self.fail(_line(mapping, key),
                            f"{what} {key} must be one of {valid}, got {value!r}") from None

    def mode(self, raw: Mapping[Any, Any], what: str) -> ControlMode:
        """``mode:``; a spelling of :data:`DEPRECATED_MODES` is read with a FutureWarning."""
        old = raw.get("mode")
        if isinstance(old, str) and old in DEPRECATED_MODES:
            new = DEPRECATED_MODES[old]
            warnings.warn(_at(self.source, _line(raw, "mode"),
                              f"{what}: mode {old!r} is deprecated; write {new.value!r} (the"
                              " same mode: position, velocity and feed-forward torque through"
                              " the motor's PD law with kp, kd)"), FutureWarning, stacklevel=2)
            return new
        mode: ControlMode = self.choice(raw, "mode", what, ControlMode, ControlMode.POSITION)
        return mode

    def plain(self, mapping: Mapping[Any, Any], key: str, what: str) -> dict[str, Any]:
        """A free-form sub-mapping (transport, options) with string keys."""
        if key not in mapping:
            return {}
        value = mapping[key]
        if value is None:
            return {}
        sub = self.mapping(value, f"{what} {key}", _line(mapping, key))
        for k in sub:
            if not isinstance(k, str):
                raise self.fail(_line(sub, k), f"{what} {key}: key {k!r} is not a string")
        return dict(sub)

    # ----------------------------------------------------------------- sections

    def document(self, data: object) -> HardwareConfig:
        if data is None:
            raise self.fail(1, "empty document; expected a mapping with 'buses' and 'joints'")
        top = self.mapping(data, "the document", 1)
        self.keys(top, _TOP_KEYS, "the top level")
        what = "configuration"
        control_rate = self.number(top, "control_rate", what, 200.0, positive=True)
        if control_rate > MAX_CONTROL_RATE:
            raise self.fail(_line(top, "control_rate"),
                            f"control_rate {control_rate:g} Hz is above {MAX_CONTROL_RATE:g} Hz")
        command_timeout = self.number(top, "command_timeout", what, 0.5, minimum=0.0)
        safe_state = self.choice(top, "safe_state", what, SafeState, SafeState.HOLD)
        auto_resume = self.boolean(top, "auto_resume", what, default=False)
        reenable_velocity = self.number(top, "reenable_velocity", what,
                                        DEFAULT_REENABLE_VELOCITY, positive=True)
        if reenable_velocity > 1.0:
            raise self.fail(_line(top, "reenable_velocity"),
                            f"{what} reenable_velocity must be in (0, 1] (a fraction of the"
                            f" velocity limits), got {reenable_velocity:g}")
        write_on_command = self.boolean(top, "write_on_command", what, default=True)
        fault_threshold = self.integer(top, "fault_threshold", what, 3, minimum=1)
        device_watchdog = self.number(
            top, "device_watchdog", what,
            max(DEVICE_WATCHDOG_MIN, DEVICE_WATCHDOG_PERIODS / control_rate), minimum=0.0)
        timeout_margin = self.number(top, "timeout_margin", what, DEFAULT_TIMEOUT_MARGIN,
                                     minimum=0.0)
        reconnect = self.reconnect(top)
        skeleton = self.string(top, "skeleton", what, "")
        overrides: list[LimitOverrides] = []
        if "limits_file" in top:
            overrides.append(self.limits_file(top))
        if "buses" not in top:
            raise self.fail(_line(top), "missing 'buses'")
        if "joints" not in top:
            raise self.fail(_line(top), "missing 'joints'")
        buses = tuple(replace(b, device_watchdog=device_watchdog, timeout_margin=timeout_margin)
                      for b in self.buses(top))
        joints = self.joints(top, {b.name: b for b in buses})
        lerobot_motors = self.lerobot_motors(top, {j.name for j in joints})
        inline = tuple(j.limits for j in joints if j.limits is not None)
        if inline:
            overrides.append(LimitOverrides(self.source, inline))
        return HardwareConfig(
            source=self.source, buses=buses, joints=joints, control_rate=control_rate,
            command_timeout=command_timeout, safe_state=safe_state, auto_resume=auto_resume,
            reenable_velocity=reenable_velocity, write_on_command=write_on_command,
            fault_threshold=fault_threshold,
            reconnect=reconnect,
            device_watchdog=device_watchdog, timeout_margin=timeout_margin, skeleton=skeleton,
            limit_overrides=tuple(overrides), lerobot_motors=lerobot_motors,
        )

    def lerobot_motors(self, top: Mapping[Any, Any], joints: set[str],
                       ) -> tuple[tuple[str, str], ...]:
        """``lerobot_motors:``: LeRobot motor name -> a joint of this file, each joint once."""
        if "lerobot_motors" not in top:
            return ()
        raw = self.mapping(top["lerobot_motors"], "lerobot_motors", _line(top, "lerobot_motors"))
        pairs: dict[str, str] = {}
        for motor, joint in raw.items():
            line = _line(raw, motor)
            if not isinstance(motor, str) or not motor:
                raise self.fail(line, f"lerobot_motors: motor name {motor!r} is not a string")
            if not isinstance(joint, str) or joint not in joints:
                raise self.fail(line, f"lerobot_motors: motor {motor!r} names {joint!r}, not"
                                      " a joint of this file")
            other = next((m for m, j in pairs.items() if j == joint), None)
            if other is not None:
                raise self.fail(line, f"lerobot_motors: motor {motor!r} names joint"
                                      f" {joint!r}, as motor {other!r} does")
            pairs[motor] = joint
        return tuple(pairs.items())

    def reconnect(self, top: Mapping[Any, Any]) -> ReconnectPolicy:
        if "reconnect" not in top:
            return ReconnectPolicy()
        raw = self.mapping(top["reconnect"], "reconnect", _line(top, "reconnect"))
        self.keys(raw, _RECONNECT_KEYS, "reconnect")
        initial = self.number(raw, "initial_delay", "reconnect", 0.1, positive=True)
        maximum = self.number(raw, "max_delay", "reconnect", max(2.0, initial), positive=True)
        factor = self.number(raw, "factor", "reconnect", 2.0, minimum=1.0)
        if maximum < initial:
            raise self.fail(_line(raw, "max_delay"),
                            f"reconnect max_delay {maximum:g} is below initial_delay {initial:g}")
        return ReconnectPolicy(initial, maximum, factor)

    def limits_file(self, top: Mapping[Any, Any]) -> LimitOverrides:
        name = self.string(top, "limits_file", "configuration", None)
        path = Path(name)
        if not path.is_absolute():
            path = self.base_dir / path
        try:
            return load_limit_overrides(path)
        except LimitError as exc:
            raise self.fail(_line(top, "limits_file"), f"limits_file: {exc}") from None

    def buses(self, top: Mapping[Any, Any]) -> tuple[BusSpec, ...]:
        raw = self.mapping(top["buses"], "buses", _line(top, "buses"))
        if not raw:
            raise self.fail(_line(top, "buses"), "'buses' is empty")
        specs = []
        known = protocol_names()
        devices: dict[str, tuple[str, int]] = {}  # what a bus opens -> (bus, line)
        for name, value in raw.items():
            line = _line(raw, name)
            if not isinstance(name, str) or not name:
                raise self.fail(line, f"bus name {name!r} is not a string")
            what = f"bus {name!r}"
            bus = self.mapping(value, what, line)
            self.keys(bus, _BUS_KEYS, what)
            name_of_protocol = self.string(bus, "protocol", what, None)
            if name_of_protocol not in known:
                raise self.fail(_line(bus, "protocol"),
                                f"{what}: unknown protocol {name_of_protocol!r}; known:"
                                f" {', '.join(known)}")
            plugin = self.plugin(name_of_protocol, _line(bus, "protocol"))
            transport = self.plain(bus, "transport", what)
            if not transport:
                raise self.fail(line, f"{what} has no 'transport' (port or CAN channel)")
            self.transport_rates(bus["transport"], what, plugin)
            self.shared_device(bus["transport"], plugin, name, devices)
            options = self.plain(bus, "options", what)
            self.option_names(bus.get("options") or {}, plugin.bus_options, plugin, what)
            specs.append(BusSpec(name, name_of_protocol, transport, options, line=line))
        return tuple(specs)

    def plugin(self, name: str, line: int) -> ProtocolPlugin:
        """The plugin of protocol ``name``, loaded once per document."""
        if name not in self.plugins:
            try:
                self.plugins[name] = protocol(name)
            except ConfigError as exc:
                raise self.fail(line, str(exc)) from None
        return self.plugins[name]

    def option_names(self, options: Mapping[Any, Any], allowed: frozenset[str],
                     plugin: ProtocolPlugin, what: str) -> None:
        """Every key of ``options`` (as loaded, with its lines) is one the protocol reads."""
        for key in options:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else (
                    f"; it knows {', '.join(sorted(allowed)) or 'none'}")
                raise self.fail(_line(options, key),
                                f"{what} options: unknown {plugin.name} option {key!r}{hint}")

    def transport_rates(self, transport: Mapping[Any, Any], what: str,
                        plugin: ProtocolPlugin) -> None:
        """A baud rate or bitrate, where given, is a positive integer (with its line).

        The protocol's rate key (``baudrate`` or ``bitrate``) must also be one of its
        :attr:`~ProtocolPlugin.rates` when it declares them.
        """
        for key in ("baudrate", "bitrate", "data_bitrate"):
            if key not in transport:
                continue
            value = transport[key]
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise self.fail(_line(transport, key),
                                f"{what} transport {key} must be a positive integer (bits per"
                                f" second), got {value!r}")
            if plugin.rates and key == plugin.transport.rate_key and value not in plugin.rates:
                raise self.fail(_line(transport, key),
                                f"{what} transport {key} {value} is not one {plugin.name}"
                                f" devices can be set to; valid: "
                                f"{', '.join(str(r) for r in plugin.rates)}")

    def shared_device(self, transport: Mapping[Any, Any], plugin: ProtocolPlugin, name: str,
                      devices: dict[str, tuple[str, int]]) -> None:
        """Refuse a bus on the serial port of an earlier bus.

        Two drivers on one port would fight over it. The error is at the line of the
        second bus's ``port`` and names both buses. A CAN channel is a shared wire: two
        buses may use one if their ids differ (:meth:`joints` checks the ids per device).
        """
        if plugin.transport is not TransportKind.SERIAL:
            return
        device = plugin.transport.device(transport)
        if device is None:
            return
        key = "port" if plugin.transport is TransportKind.SERIAL else "channel"
        line = _line(transport, key) if key in transport else _line(transport)
        if device in devices:
            other, other_line = devices[device]
            raise self.fail(line, f"bus {name!r} is on {device}, as bus {other!r} (line"
                                  f" {other_line}) is: two buses cannot share one device;"
                                  " map their actuators to one bus")
        devices[device] = (name, line)

    def joints(self, top: Mapping[Any, Any], buses: Mapping[str, BusSpec],
               ) -> tuple[JointMapping, ...]:
        raw = self.mapping(top["joints"], "joints", _line(top, "joints"))
        if not raw:
            raise self.fail(_line(top, "joints"), "'joints' is empty")
        result = []
        used: dict[tuple[str, int], tuple[str, int]] = {}
        # Where an id must be unique: its bus, or the CAN wire buses share.
        wire = {spec.name: protocol(spec.protocol).transport.device(spec.transport)
                if protocol(spec.protocol).transport is TransportKind.CAN else None
                for spec in buses.values()}
        for name, value in raw.items():
            line = _line(raw, name)
            if not isinstance(name, str) or not name:
                raise self.fail(line, f"joint name {name!r} is not a string")
            jm = self.joint(name, self.mapping(value, f"joint {name!r}", line), line, buses)
            key = (wire[jm.bus] or jm.bus, jm.actuator.id)
            if key in used:
                other, other_line = used[key]
                where = f"bus {jm.bus!r}" if wire[jm.bus] is None else wire[jm.bus]
                raise self.fail(line, f"joint {name!r}: {where} id {jm.actuator.id} is"
                                      f" already used by {other!r} (line {other_line})")
            used[key] = (name, line)
            result.append(jm)
        return tuple(result)

    def joint(self, name: str, raw: Mapping[Any, Any], line: int,
              buses: Mapping[str, BusSpec]) -> JointMapping:
        what = f"joint {name!r}"
        self.keys(raw, _JOINT_KEYS, what)
        bus_name = self.string(raw, "bus", what, None)
        if bus_name not in buses:
            raise self.fail(_line(raw, "bus"),
                            f"{what}: unknown bus {bus_name!r}; the file defines"
                            f" {', '.join(repr(b) for b in buses)}")
        bus = buses[bus_name]
        name_of_protocol = self.string(raw, "protocol", what, bus.protocol)
        if name_of_protocol != bus.protocol:
            raise self.fail(_line(raw, "protocol"),
                            f"{what}: protocol {name_of_protocol!r} but bus {bus_name!r} is"
                            f" {bus.protocol!r}")
        plugin = self.plugin(bus.protocol, bus.line)
        actuator_id = self.actuator_id(raw, what, plugin)
        mode = self.mode(raw, what)
        if mode not in plugin.modes:
            raise self.fail(_line(raw, "mode"),
                            f"{what}: mode {mode.value!r} is not one of protocol"
                            f" {plugin.name!r}'s modes"
                            f" ({', '.join(m.value for m in plugin.modes)})")
        direction = raw.get("direction", 1)
        if isinstance(direction, bool) or direction not in (1, -1):
            raise self.fail(_line(raw, "direction"),
                            f"{what} direction must be 1 or -1, got {direction!r}")
        zero_offset = self.number(raw, "zero_offset", what, 0.0)
        gear_ratio = self.number(raw, "gear_ratio", what, 1.0, positive=True)
        model = self.string(raw, "model", what, "")
        options = self.plain(raw, "options", what)
        self.option_names(raw.get("options") or {}, plugin.actuator_options, plugin, what)
        actuator = ActuatorSpec(id=actuator_id, mode=mode, model=model, options=options,
                                name=name)
        limits = self.limits(name, raw) if "limits" in raw else None
        return JointMapping(name=name, bus=bus_name, actuator=actuator, direction=direction,
                            zero_offset=zero_offset, gear_ratio=gear_ratio, limits=limits,
                            line=line, actuator_line=_line(raw, "mode") if "mode" in raw else 0)

    def actuator_id(self, raw: Mapping[Any, Any], what: str, plugin: ProtocolPlugin) -> int:
        """``id:``, an integer in the protocol's :attr:`~ProtocolPlugin.id_range`."""
        if "id" not in raw:
            raise self.fail(_line(raw), f"{what} has no 'id'")
        value = raw["id"]
        lowest, highest = plugin.id_range
        if isinstance(value, bool) or not isinstance(value, int) or not (
                lowest <= value <= highest):
            raise self.fail(_line(raw, "id"),
                            f"{what} id must be an integer in {lowest}..{highest} (the ids"
                            f" protocol {plugin.name!r} can address), got {value!r}")
        return int(value)

    def limits(self, name: str, raw: Mapping[Any, Any]) -> JointOverride:
        """Inline ``limits:``, parsed by the limits module, with this file's lines."""
        line = _line(raw, "limits")
        spec = raw["limits"]
        try:
            parsed = LimitOverrides.from_mapping({"joints": {name: spec}}, self.source)
        except LimitError as exc:
            raise self.fail(line, f"joint {name!r} limits: {exc.message}") from None
        bounds = []
        for bo in parsed.joints[0].bounds:
            entry = spec.get(bo.kind.value) if isinstance(spec, dict) else None
            if isinstance(entry, dict):
                bo_line = _line(entry, bo.bound.value)
            else:
                bo_line = _line(spec, bo.kind.value)
            bounds.append(BoundOverride(bo.kind, bo.bound, bo.value, bo_line or line))
        return JointOverride(name, line, tuple(bounds))

