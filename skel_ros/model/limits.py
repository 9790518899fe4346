"""Joint limits: the one gate every joint command passes through.

The simulation node and the hardware node both build a :class:`LimitSet` from
the model (``LimitSet.from_skeleton``), optionally tighten it with a YAML file
(``load_limit_overrides`` + ``LimitSet.tightened``), then

* :meth:`LimitSet.check` every incoming command: a command holding a NaN or an
  infinity, an unknown or duplicated name, or as many names as values is
  rejected whole; otherwise every value is clamped into its limits and the
  clamped joints are reported;
* run position targets through a :class:`RateLimiter`, which bounds the
  velocity and acceleration of the target stream and keeps it inside the
  position limits.

Override files may only *tighten* the model's limits. Their format::

    joints:
      "joint 1":                      # a DOF name, as in the model
        position: {lower: -1.0, upper: 1.0}
        velocity: 2.0                 # a scalar s means {lower: -s, upper: s}
        acceleration: {lower: -5.0, upper: 4.0}
        effort: 3.0                   # the model's <force> limits

Every error found in such a file is a :class:`LimitError` naming the file and
the line. Limits are in the DOF's units (rad, m; per second; N or N m); an
infinite bound means "no limit".
"""

from __future__ import annotations

import difflib
import enum
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, NoReturn

import numpy as np
import numpy.typing as npt

from skel_ros.model.errors import FileLineError
from skel_ros.model.mimic import leader_bounds
from skel_ros.model.types import Array, Skeleton, frozen_array
from skel_ros.model.yamlread import YamlLineError, load_yaml_lines
from skel_ros.model.yamlread import key_line as _key_line
from skel_ros.model.yamlread import node_line as _node_line

__all__ = [
    "Bound",
    "BoundOverride",
    "CheckResult",
    "Clamp",
    "Command",
    "CommandKind",
    "JointLimits",
    "JointOverride",
    "LimitError",
    "LimitKind",
    "LimitOverrides",
    "LimitSet",
    "RateLimiter",
    "load_limit_overrides",
    "parse_limit_overrides",
]

_INF: Final = math.inf
_BRAKE_MARGIN: Final = 1.0 - 1e-9
_EMPTY: Final = frozen_array(np.empty(0))
_EMPTY_INDEX: Final = np.empty(0, dtype=np.intp)
_EMPTY_INDEX.setflags(write=False)


class LimitError(FileLineError):
    """Limits that cannot be used: a bad override file or inconsistent model limits."""


class LimitKind(enum.Enum):
    """The quantities a DOF has limits for."""

    POSITION = "position"
    VELOCITY = "velocity"
    ACCELERATION = "acceleration"
    EFFORT = "effort"


class Bound(enum.Enum):
    """Which end of a limit interval."""

    LOWER = "lower"
    UPPER = "upper"


class CommandKind(enum.Enum):
    """What a joint command sets; each kind is checked against the limits of that kind."""

    POSITION = "position"
    VELOCITY = "velocity"
    EFFORT = "effort"

    @property
    def limit_kind(self) -> LimitKind:
        """The limits a command of this kind is clamped into."""
        return LimitKind(self.value)


# The brief that specified this module calls the enum ``Command``; both names work.
Command = CommandKind


@dataclass(frozen=True)
class JointLimits:
    """The limits of one DOF. Unset bounds are -inf / +inf.

    Attributes:
        name: DOF name (for a one-DOF joint, the joint name).
        position_lower: Lowest position.
        position_upper: Highest position.
        velocity_lower: Lowest (most negative) velocity.
        velocity_upper: Highest velocity.
        acceleration_lower: Lowest acceleration.
        acceleration_upper: Highest acceleration.
        effort_lower: Lowest force / torque (the model's ``<force lower>``).
        effort_upper: Highest force / torque.
        leader: A follower's (mimic joint's) leader DOF: commands naming the follower
            are refused (the gate says to command the leader); None for other DOFs.
    """

    name: str
    position_lower: float = -_INF
    position_upper: float = _INF
    velocity_lower: float = -_INF
    velocity_upper: float = _INF
    acceleration_lower: float = -_INF
    acceleration_upper: float = _INF
    effort_lower: float = -_INF
    effort_upper: float = _INF
    leader: str | None = None

    def bounds(self, kind: LimitKind | CommandKind) -> tuple[float, float]:
        """Return ``(lower, upper)`` for ``kind``."""
        k = _limit_kind(kind)
        return float(getattr(self, f"{k.value}_lower")), float(getattr(self, f"{k.value}_upper"))

    @property
    def max_velocity(self) -> float:
        """Largest speed allowed in either direction: ``max(|lower|, |upper|)``.

        For display only; commands are checked against lower and upper separately.
        """
        return max(abs(self.velocity_lower), abs(self.velocity_upper))


def _limit_kind(kind: LimitKind | CommandKind) -> LimitKind:
    if isinstance(kind, CommandKind):
        return kind.limit_kind
    if isinstance(kind, LimitKind):
        return kind
    raise TypeError(f"expected a LimitKind or CommandKind, got {kind!r}")


def _with_bounds(
    jl: JointLimits, changes: Mapping[tuple[LimitKind, Bound], float]
) -> JointLimits:
    """``jl`` with the bounds in ``changes`` replaced."""

    def get(kind: LimitKind, bound: Bound) -> float:
        lower, upper = jl.bounds(kind)
        return changes.get((kind, bound), lower if bound is Bound.LOWER else upper)

    return JointLimits(
        name=jl.name,
        position_lower=get(LimitKind.POSITION, Bound.LOWER),
        position_upper=get(LimitKind.POSITION, Bound.UPPER),
        velocity_lower=get(LimitKind.VELOCITY, Bound.LOWER),
        velocity_upper=get(LimitKind.VELOCITY, Bound.UPPER),
        acceleration_lower=get(LimitKind.ACCELERATION, Bound.LOWER),
        acceleration_upper=get(LimitKind.ACCELERATION, Bound.UPPER),
        effort_lower=get(LimitKind.EFFORT, Bound.LOWER),
        effort_upper=get(LimitKind.EFFORT, Bound.UPPER),
        leader=jl.leader,
    )


def _interval_problem(kind: LimitKind, lower: float, upper: float) -> str | None:
    """Why ``[lower, upper]`` is not a usable interval, or None when it is."""
    if math.isnan(lower) or math.isnan(upper):
        return f"{kind.value} limits [{lower}, {upper}] contain NaN"
    if lower == _INF:
        return f"{kind.value} lower limit is +inf"
    if upper == -_INF:
        return f"{kind.value} upper limit is -inf"
    if lower > upper:
        return f"{kind.value} lower limit {lower} is above upper limit {upper}"
    return None


# --------------------------------------------------------------------------- command check


@dataclass(frozen=True)
class Clamp:
    """One value of a command that was moved into its limits."""

    name: str
    requested: float
    applied: float


@dataclass(frozen=True, eq=False)
class CheckResult:
    """The outcome of :meth:`LimitSet.check`.

    Attributes:
        ok: False when the whole command is rejected; then ``reason`` says why
            and the arrays are empty.
        kind: The command kind checked.
        names: The joint names of the command, in its order.
        indices: Index of each name in the limit set (DOF order), read-only.
        values: The values to apply (requested values clamped into the limits),
            in the command's order, read-only.
        requested: The values as given, read-only.
        clamped: The values that were clamped, in the command's order.
        reason: Why the command was rejected; empty when ``ok``.
    """

    ok: bool
    kind: CommandKind
    names: tuple[str, ...]
    indices: npt.NDArray[np.intp]
    values: Array
    requested: Array
    clamped: tuple[Clamp, ...]
    reason: str = ""

    @property
    def message(self) -> str:
        """One line for a log: the rejection reason, the clamps, or ``""``."""
        if not self.ok:
            return f"{self.kind.value} command rejected: {self.reason}"
        if not self.clamped:
            return ""
        parts = ", ".join(f"{c.name!r} {c.requested:g} -> {c.applied:g}" for c in self.clamped)
        return f"{self.kind.value} command clamped to limits: {parts}"


def _reject(kind: CommandKind, names: tuple[str, ...], reason: str) -> CheckResult:
    return CheckResult(
        ok=False, kind=kind, names=names, indices=_EMPTY_INDEX, values=_EMPTY,
        requested=_EMPTY, clamped=(), reason=reason,
    )


def _quoted(names: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# --------------------------------------------------------------------------- limit set


class LimitSet(Mapping[str, JointLimits]):
    """Immutable mapping DOF name -> :class:`JointLimits`, in DOF order.

    Besides the mapping, :meth:`lower` and :meth:`upper` give read-only float64
    arrays (one entry per DOF, in order) for vectorised use.

    Args:
        joints: The limits of each DOF, in order; names must be unique.
        sources: Where the limits come from (model file, override files), for messages.

    Raises:
        LimitError: Duplicate names, or a bound that is NaN, a lower bound of
            +inf, an upper bound of -inf, or a lower bound above the upper one.
    """

    __slots__ = ("_index", "_joints", "_lower", "_sources", "_upper")

    _joints: tuple[JointLimits, ...]
    _index: dict[str, int]
    _lower: dict[LimitKind, Array]
    _upper: dict[LimitKind, Array]
    _sources: tuple[str, ...]

    def __init__(self, joints: Sequence[JointLimits], sources: Sequence[str] = ()) -> None:
        joints = tuple(joints)
        sources = tuple(sources)
        source = sources[-1] if sources else ""
        index: dict[str, int] = {}
        for i, jl in enumerate(joints):
            if jl.name in index:
                raise LimitError(f"DOF name {jl.name!r} appears more than once", source)
            index[jl.name] = i
            for kind in LimitKind:
                problem = _interval_problem(kind, *jl.bounds(kind))
                if problem is not None:
                    raise LimitError(f"DOF {jl.name!r}: {problem}", source)
        lower = {k: frozen_array([jl.bounds(k)[0] for jl in joints]) for k in LimitKind}
        upper = {k: frozen_array([jl.bounds(k)[1] for jl in joints]) for k in LimitKind}
        object.__setattr__(self, "_joints", joints)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_lower", lower)
        object.__setattr__(self, "_upper", upper)
        object.__setattr__(self, "_sources", sources)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"LimitSet is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"LimitSet is immutable (cannot delete {name!r})")

    # ----------------------------------------------------------------- construction

    @classmethod
    def from_skeleton(cls, skeleton: Skeleton) -> LimitSet:
        """Build the limits of every DOF of ``skeleton``, in its DOF order.

        Args:
            skeleton: The skeleton; velocity, acceleration and force limits come
                from ``<dof>``, position limits from ``<dof><position>`` or
                ``<axis><limit>``.

        Returns:
            The limit set.

        Raises:
            LimitError: A DOF whose limits are unusable (e.g. lower above upper,
                which the parser only warns about); names the joint's file and line.
        """
        joints = []
        for dof in skeleton.dofs:
            # A leader's positions are bounded by its followers' limits too.
            lower, upper = leader_bounds(skeleton, dof.name)
            jl = JointLimits(
                name=dof.name,
                leader=None if dof.mimic is None else dof.mimic.leader,
                position_lower=float(lower),
                position_upper=float(upper),
                velocity_lower=float(dof.velocity_lower),
                velocity_upper=float(dof.velocity_upper),
                acceleration_lower=float(dof.acceleration_lower),
                acceleration_upper=float(dof.acceleration_upper),
                effort_lower=float(dof.force_lower),
                effort_upper=float(dof.force_upper),
            )
            for kind in LimitKind:
                problem = _interval_problem(kind, *jl.bounds(kind))
                if problem is not None:
                    loc = skeleton.joint(dof.joint).location
                    raise LimitError(
                        f"skeleton {skeleton.name!r}, DOF {dof.name!r}: {problem}",
                        loc.file, loc.line,
                    )
            joints.append(jl)
        return cls(joints, sources=(skeleton.location.file,))

    def tightened(
        self, overrides: LimitOverrides | Mapping[str, Any], source: str | None = None
    ) -> LimitSet:
        """Return a copy with the limits of ``overrides`` applied.

        An override may only tighten: a lower bound below the current one or an
        upper bound above it is an error (a finite bound where the current one
        is infinite is tightening). Tightening an already tightened set can only
        tighten further.

        Args:
            overrides: Parsed overrides (``load_limit_overrides``), or the raw
                mapping ``{"joints": {...}}`` (line numbers are known only for
                mappings read by this module's YAML loader).
            source: Name of the override file for messages; defaults to
                ``overrides.source``.

        Returns:
            A new limit set.

        Raises:
            LimitError: Unknown DOF, widening bound, malformed data, or a
                resulting lower bound above the upper one; names file and line.
        """
        if isinstance(overrides, LimitOverrides):
            parsed = overrides if source is None else replace(overrides, source=source)
        else:
            parsed = LimitOverrides.from_mapping(overrides, source or "<overrides>")
        src = parsed.source
        joints = list(self._joints)
        for jo in parsed.joints:
            i = self._index.get(jo.name)
            if i is None:
                raise LimitError(f"unknown DOF {jo.name!r}{self._suggest(jo.name)}", src, jo.line)
            current = joints[i]
            changes: dict[tuple[LimitKind, Bound], float] = {}
            last_line: dict[LimitKind, int] = {}
            for bo in jo.bounds:
                attr = f"{bo.kind.value}_{bo.bound.value}"
                model = getattr(current, attr)
                wider = bo.value < model if bo.bound is Bound.LOWER else bo.value > model
                if wider:
                    raise LimitError(
                        f"DOF {jo.name!r}: {bo.kind.value} {bo.bound.value} {bo.value:g} is"
                        f" wider than the current limit {model:g}; overrides may only tighten",
                        src, bo.line,
                    )
                changes[bo.kind, bo.bound] = bo.value
                last_line[bo.kind] = max(bo.line, last_line.get(bo.kind, 0))
            updated = _with_bounds(current, changes)
            for kind, line in last_line.items():
                problem = _interval_problem(kind, *updated.bounds(kind))
                if problem is not None:
                    raise LimitError(f"DOF {jo.name!r}: {problem} after this override", src, line)
            joints[i] = updated
        return LimitSet(joints, sources=(*self._sources, src))

    def _suggest(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._index), n=3, cutoff=0.6)
        if close:
            return f"; did you mean {_quoted(close)}?"
        return f"; the model's DOFs are {_quoted(list(self._index), limit=8)}"

    # ----------------------------------------------------------------- mapping

    def __getitem__(self, name: str) -> JointLimits:
        return self._joints[self._index[name]]

    def __iter__(self) -> Iterator[str]:
        return (jl.name for jl in self._joints)

    def __len__(self) -> int:
        return len(self._joints)

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __repr__(self) -> str:
        return f"LimitSet({len(self)} DOFs, sources={self._sources!r})"

    # ----------------------------------------------------------------- vectorised access

    @property
    def names(self) -> tuple[str, ...]:
        """DOF names, in order."""
        return tuple(jl.name for jl in self._joints)

    @property
    def sources(self) -> tuple[str, ...]:
        """The model file and the override files applied, in order."""
        return self._sources

    def index(self, name: str) -> int:
        """Index of DOF ``name`` (KeyError if unknown)."""
        return self._index[name]

    def lower(self, kind: LimitKind | CommandKind) -> Array:
        """Lower bounds of ``kind`` for every DOF, in order (read-only)."""
        return self._lower[_limit_kind(kind)]

    def upper(self, kind: LimitKind | CommandKind) -> Array:
        """Upper bounds of ``kind`` for every DOF, in order (read-only)."""
        return self._upper[_limit_kind(kind)]

    # ----------------------------------------------------------------- command check

    def check(
        self, kind: CommandKind, names: Sequence[str], values: npt.ArrayLike
    ) -> CheckResult:
        """Validate a command and clamp it into the limits of its kind.

        The whole command is rejected (``ok`` False, ``reason`` naming the joint
        and the problem) when the values are not a flat list of numbers, their
        count differs from the names', a name is unknown or repeated, or a value
        is NaN or infinite. Otherwise each value is clamped into
        ``[lower, upper]`` of its DOF (position, velocity or effort limits).

        Args:
            kind: What the values are.
            names: DOF names, one per value.
            values: The requested values.

        Returns:
            The result; the inputs are never modified.

        Raises:
            TypeError: ``kind`` is not a :class:`CommandKind` (a programming error).
        """
        if not isinstance(kind, CommandKind):
            raise TypeError(f"kind must be a CommandKind, got {kind!r}")
        raw_names: tuple[object, ...] = (names,) if isinstance(names, str) else tuple(names)
        name_tuple = tuple(n if isinstance(n, str) else repr(n) for n in raw_names)
        requested = _as_float_vector(values)
        reason = self._command_problem(names, raw_names, requested)
        if reason is not None or requested is None:
            return _reject(kind, name_tuple, reason or "values are not numbers")
        indices = np.fromiter((self._index[n] for n in name_tuple), np.intp, len(name_tuple))
        limit_kind = kind.limit_kind
        applied = np.minimum(
            np.maximum(requested, self._lower[limit_kind][indices]),
            self._upper[limit_kind][indices],
        )
        changed = np.flatnonzero(applied != requested)
        clamped = tuple(
            Clamp(name_tuple[i], float(requested[i]), float(applied[i])) for i in changed
        )
        indices.setflags(write=False)
        applied.setflags(write=False)
        requested.setflags(write=False)
        return CheckResult(
            ok=True, kind=kind, names=name_tuple, indices=indices, values=applied,
            requested=requested, clamped=clamped,
        )

    def _command_problem(
        self, names: object, raw_names: tuple[object, ...], requested: Array | None
    ) -> str | None:
        """Why a command must be rejected, or None."""
        problem = self._names_problem(names, raw_names)
        if problem is not None:
            return problem
        if requested is None:
            return "values must be a flat list of numbers"
        if requested.size != len(raw_names):
            return f"{len(raw_names)} names but {requested.size} values"
        finite = np.isfinite(requested)
        if not finite.all():
            parts = ", ".join(
                f"{raw_names[i]!r} = {requested[i]}" for i in np.flatnonzero(~finite)[:5]
            )
            return f"non-finite value for joint {parts}"
        return None

    def _names_problem(self, names: object, raw_names: tuple[object, ...]) -> str | None:
        if isinstance(names, str):
            return "names must be a list of names, not one string"
        seen: set[object] = set()
        for n in raw_names:
            if not isinstance(n, str):
                return f"names must be strings, got {n!r}"
            if n in seen:
                return f"joint {n!r} appears more than once"
            seen.add(n)
        unknown = [str(n) for n in raw_names if n not in self._index]
        if unknown:
            return f"unknown joint {_quoted(unknown)}{self._suggest(unknown[0])}"
        for n in raw_names:
            leader = self._joints[self._index[str(n)]].leader
            if leader is not None:
                return (f"joint {n!r} is a mimic joint: it follows {leader!r} and takes no"
                        f" command of its own; command {leader!r} instead")
        return None


def _as_float_vector(values: object) -> Array | None:
    """``values`` as a new 1-D float64 array, or None unless it is a flat list of numbers.

    Strings, booleans, None and other objects are not numbers here, even where
    numpy would convert them.
    """
    try:
        arr = np.array(values)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iuf"):
        return None
    return arr.astype(np.float64)


# --------------------------------------------------------------------------- overrides


@dataclass(frozen=True)
class BoundOverride:
    """One bound set by an override file.

    Attributes:
        kind: Which limit.
        bound: Which end.
        value: The new bound.
        line: Line of the key that set it (0 when unknown).
    """

    kind: LimitKind
    bound: Bound
    value: float
    line: int


@dataclass(frozen=True)
class JointOverride:
    """The overrides of one DOF.

    Attributes:
        name: DOF name as written.
        line: Line of the name (0 when unknown).
        bounds: The bounds it sets, in file order.
    """

    name: str
    line: int
    bounds: tuple[BoundOverride, ...]


@dataclass(frozen=True)
class LimitOverrides:
    """A parsed override file, checked for form but not yet against a model.

    Attributes:
        source: File name (or the name given to the data).
        joints: The DOFs it overrides, in file order.
    """

    source: str
    joints: tuple[JointOverride, ...]

    @classmethod
    def from_mapping(cls, data: object, source: str = "<overrides>") -> LimitOverrides:
        """Parse ``{"joints": {name: {kind: value}}}`` (see the module docstring).

        Args:
            data: The mapping; line numbers are reported when it was read by
                :func:`parse_limit_overrides` / :func:`load_limit_overrides`.
            source: Name used in messages.

        Returns:
            The overrides.

        Raises:
            LimitError: Anything malformed, with file and line.
        """
        if data is None:
            raise LimitError("empty document; expected a mapping with a 'joints' key", source, 1)
        top = _expect_mapping(data, "the document", source, 1)
        for key in top:
            if key != "joints":
                raise LimitError(
                    f"unknown key {key!r} at top level (only 'joints' is allowed)",
                    source, _key_line(top, key),
                )
        if "joints" not in top:
            raise LimitError("missing 'joints' key", source, _node_line(top))
        joints_line = _key_line(top, "joints")
        joints = _expect_mapping(top["joints"], "'joints'", source, joints_line)
        parsed = []
        for name, spec in joints.items():
            line = _key_line(joints, name)
            if not isinstance(name, str):
                raise LimitError(f"DOF name {name!r} is not a string", source, line)
            parsed.append(JointOverride(name, line, _parse_joint(name, spec, source, line)))
        return cls(source, tuple(parsed))


def _parse_joint(name: str, spec: object, source: str, line: int) -> tuple[BoundOverride, ...]:
    what = f"limits of DOF {name!r}"
    kinds = _expect_mapping(spec, what, source, line)
    bounds: list[BoundOverride] = []
    for key, value in kinds.items():
        key_line = _key_line(kinds, key)
        try:
            kind = LimitKind(key)
        except ValueError:
            hint = "; the model's <force> limits are called 'effort' here" if key == "force" else ""
            valid = ", ".join(k.value for k in LimitKind)
            raise LimitError(
                f"DOF {name!r}: unknown key {key!r} (expected {valid}){hint}", source, key_line
            ) from None
        label = f"DOF {name!r}: {kind.value}"
        if isinstance(value, Mapping):
            bounds.extend(_parse_interval(kind, value, label, source, key_line))
        elif kind is LimitKind.POSITION:
            raise LimitError(
                f"{label} must be a mapping {{lower: ..., upper: ...}}, got {value!r}",
                source, key_line,
            )
        else:
            s = _number(value, label, source, key_line)
            if s < 0:
                raise LimitError(
                    f"{label} {s:g}: a symmetric limit must be >= 0 (use {{lower, upper}}"
                    " for an asymmetric one)", source, key_line,
                )
            bounds.append(BoundOverride(kind, Bound.LOWER, -s, key_line))
            bounds.append(BoundOverride(kind, Bound.UPPER, s, key_line))
    return tuple(bounds)


def _parse_interval(
    kind: LimitKind, spec: Mapping[Any, Any], label: str, source: str, line: int
) -> list[BoundOverride]:
    values: dict[Bound, float] = {}
    out = []
    for key, raw in spec.items():
        key_line = _key_line(spec, key, line)
        try:
            bound = Bound(key)
        except ValueError:
            raise LimitError(
                f"{label}: unknown key {key!r} (expected lower, upper)", source, key_line
            ) from None
        value = _number(raw, f"{label} {bound.value}", source, key_line)
        values[bound] = value
        out.append(BoundOverride(kind, bound, value, key_line))
    problem = _interval_problem(
        kind, values.get(Bound.LOWER, -_INF), values.get(Bound.UPPER, _INF)
    )
    if problem is not None:
        raise LimitError(f"{label}: {problem}", source, max(b.line for b in out))
    return out


def _number(value: object, label: str, source: str, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LimitError(f"{label} must be a number, got {value!r}", source, line)
    try:
        number = float(value)
    except OverflowError:
        raise LimitError(f"{label} {value} is too large", source, line) from None
    if math.isnan(number):
        raise LimitError(f"{label} is NaN", source, line)
    return number


def _expect_mapping(value: object, what: str, source: str, line: int) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise LimitError(f"{what} must be a mapping, got {value!r}", source, line)
    return value


def parse_limit_overrides(text: str, source: str = "<string>") -> LimitOverrides:
    """Parse override YAML text.

    Args:
        text: The YAML document.
        source: Name used in messages (the file name, when it came from one).

    Returns:
        The overrides, with line numbers.

    Raises:
        LimitError: Invalid YAML or malformed overrides, with file and line.
    """
    try:
        data = load_yaml_lines(text)
    except YamlLineError as exc:
        raise LimitError(exc.message, source, exc.line) from None
    return LimitOverrides.from_mapping(data, source)


def load_limit_overrides(path: str | Path) -> LimitOverrides:
    """Read an override file (see the module docstring for its format).

    Args:
        path: The YAML file.

    Returns:
        The overrides, with line numbers; pass them to :meth:`LimitSet.tightened`.

    Raises:
        LimitError: Unreadable file, invalid YAML or malformed overrides.
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise LimitError(f"cannot read file: {reason}", source) from None
    return parse_limit_overrides(text, source)


# --------------------------------------------------------------------------- rate limiter


def _max_step(d: Array, h: Array) -> Array:
    """Largest step ``x >= 0`` after which braking still stops within distance ``d``.

    Braking at the full deceleration D for time steps dt shrinks the step by
    ``h = D dt**2`` each step, so the distance covered by the step ``x`` and
    the braking after it is ``F(x) = sum_{j>=0} max(x - j h, 0)``. ``F`` is
    increasing and piecewise linear; on ``[m h, (m+1) h]`` it is
    ``(m+1) x - h m (m+1) / 2``, so ``F(x) = d`` gives
    ``m = floor((sqrt(1 + 8 d / h) - 1) / 2)`` and ``x = d / (m+1) + h m / 2``.
    Taking the step ``F^-1(d)`` and then ``F^-1`` of what remains lands exactly
    on the stop, because what remains is ``F(x - h)``. (Where rounding puts
    ``m`` one off, ``x`` is off by rounding only: ``F`` is continuous.)

    Args:
        d: Finite distances, >= 0.
        h: ``D dt**2``, > 0, or +inf for unlimited deceleration.

    Returns:
        The largest steps: ``d`` where ``h`` is +inf; 0 where nothing sensible
        can be computed (``h`` underflowed to 0), so the target does not move.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        m = np.floor(np.sqrt(1.0 + 8.0 * (d / h)) * 0.5 - 0.5)
        x = d / (m + 1.0) + h * (m * 0.5)  # NaN where h is inf (inf * 0) or 0
    result: Array = np.where(np.isnan(x), d * (h == _INF), x)
    return result


def _step(dt: object) -> float:
    """A time step: a finite number > 0 (ValueError otherwise)."""
    if not (isinstance(dt, (int, float, np.floating)) and not isinstance(dt, bool)
            and math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt must be a finite number > 0, got {dt!r}")
    return float(dt)


class RateLimiter:
    """Bounds velocity and acceleration of a stream of position targets.

    Vectorised over the DOFs (numpy only, no Python loop over joints), for
    control loops at 1 kHz. Each step, with previous target ``q``, previous
    target velocity ``v`` (``(q - q_before) / dt``) and desired target ``g``
    (first clamped into the position limits):

    1. Approach velocity: the fastest velocity toward ``g`` from which the
       target can still stop exactly on ``g`` braking at the acceleration limit
       (discrete-time stopping distance, exact for a constant ``dt``); with
       unlimited acceleration that is ``(g - q) / dt``. This is what makes it
       converge without overshoot: a plain "velocity clamp, then acceleration
       clamp" of ``(g - q) / dt`` keeps accelerating until one step short of
       the goal and then oscillates around it.
    2. Velocity clamp into ``[v_lower, v_upper]``, then acceleration clamp into
       ``[v + a_lower dt, v + a_upper dt]``.
    3. ``q_next = q + v_next dt``, clamped into the position limits (or, when
       ``q`` is outside them after a :meth:`reset`, kept from moving further
       out), and ``v_next = (q_next - q) / dt``.

    For a constant ``dt`` and a start inside the position limits, every step
    satisfies all three limits at once: the goal lies inside the position
    limits and the motion can always stop at it, so the clamp of step 3 never
    acts. If ``dt`` grows between steps, the stopping distance grows and the
    clamp of step 3 may stop the target harder than the acceleration limit
    allows: position limits win (the velocity limit always holds). A reset
    outside the position limits is not jumped back: the target returns at the
    allowed velocity and acceleration.

    The goal is treated as fixed: a target moving at speed ``u`` is followed
    with a lag of about its stopping distance ``u**2 / (2 a)`` (none when the
    acceleration limits are infinite, as in most SKEL files).

    Infinite limits mean no limit. The velocity limits must contain 0 and the
    acceleration limits must have ``lower < 0 < upper`` (otherwise a joint could
    not be held still or stopped).

    Args:
        limits: The limit set to take position, velocity and acceleration limits from.
        names: DOFs to limit, in the order of the arrays passed in; default all,
            in the limit set's order.
        positions: Initial positions (as :meth:`reset`); without them, call
            :meth:`reset` before :meth:`step`.

    Raises:
        LimitError: Unknown names, or limits the scheme cannot work with.
    """

    def __init__(
        self,
        limits: LimitSet,
        names: Sequence[str] | None = None,
        positions: npt.ArrayLike | None = None,
    ) -> None:
        self._names = limits.names if names is None else tuple(names)
        source = limits.sources[-1] if limits.sources else ""
        unknown = [n for n in self._names if n not in limits]
        if unknown:
            raise LimitError(f"rate limiter: unknown DOF {_quoted(unknown)}", source)
        if len(set(self._names)) != len(self._names):
            raise LimitError("rate limiter: a DOF name is repeated", source)
        idx = np.array([limits.index(n) for n in self._names], dtype=np.intp)

        def pick(kind: LimitKind) -> tuple[Array, Array]:
            return limits.lower(kind)[idx].copy(), limits.upper(kind)[idx].copy()

        self._q_lo, self._q_hi = pick(LimitKind.POSITION)
        self._v_lo, self._v_hi = pick(LimitKind.VELOCITY)
        self._a_lo, self._a_hi = pick(LimitKind.ACCELERATION)
        for i, name in enumerate(self._names):
            if not self._v_lo[i] <= 0.0 <= self._v_hi[i]:
                raise LimitError(
                    f"rate limiter: DOF {name!r} velocity limits [{self._v_lo[i]:g},"
                    f" {self._v_hi[i]:g}] do not contain 0, so it could never stand still",
                    source,
                )
            if not self._a_lo[i] < 0.0 < self._a_hi[i]:
                raise LimitError(
                    f"rate limiter: DOF {name!r} acceleration limits [{self._a_lo[i]:g},"
                    f" {self._a_hi[i]:g}] must be < 0 and > 0, or it could not stop",
                    source,
                )
        n = len(self._names)
        # Braking deceleration (> 0): moving up, brake with a_lower; moving down, with a_upper.
        # Planned a hair below the limit, so that the rounding of q_next - q, which adds up
        # while braking at the limit, cannot leave the target short of room to stop.
        self._brake_up = -self._a_lo * _BRAKE_MARGIN
        self._brake_down = self._a_hi * _BRAKE_MARGIN
        self._n = n
        self._q: Array | None = None
        self._v = np.zeros(n)
        if positions is not None:
            self.reset(positions)

    @property
    def names(self) -> tuple[str, ...]:
        """The DOFs limited, in array order."""
        return self._names

    @property
    def position(self) -> Array | None:
        """The last position target (a copy), or None before :meth:`reset`."""
        if self._q is None:
            return None
        copy: Array = self._q.copy()
        return copy

    @property
    def velocity(self) -> Array:
        """The last target velocity (a copy); zeros after :meth:`reset`."""
        copy: Array = self._v.copy()
        return copy

    def reset(self, positions: npt.ArrayLike) -> None:
        """Restart from measured positions with zero velocity.

        Args:
            positions: One finite value per DOF.

        Raises:
            ValueError: Wrong shape or a non-finite value.
        """
        q = self._vector(positions, "positions")
        self._q = q
        self._v = np.zeros(self._n)

    def step(self, target: npt.ArrayLike, dt: float,
             velocity_scale: Array | None = None) -> Array:
        """Advance one step toward ``target`` and remember the result.

        Args:
            target: Desired positions, one per DOF.
            dt: Time since the previous step, in seconds (> 0).
            velocity_scale: Per DOF, the fraction of its velocity limits allowed in this
                step (in (0, 1]; None: all of them), as :meth:`advance`.

        Returns:
            The next position target (a new array).

        Raises:
            RuntimeError: Called before :meth:`reset`.
            ValueError: Bad ``dt``, wrong shape or a non-finite target.
        """
        if self._q is None:
            raise RuntimeError("RateLimiter.step() before reset(): give the measured positions")
        q, v = self.advance(self._q, self._v, self._vector(target, "target"), _step(dt),
                            velocity_scale=velocity_scale)
        self._q, self._v = q, v
        copy: Array = q.copy()
        return copy

    def limit(
        self,
        previous_position: npt.ArrayLike,
        previous_velocity: npt.ArrayLike,
        target: npt.ArrayLike,
        dt: float,
    ) -> tuple[Array, Array]:
        """One step of the scheme without touching the limiter's state.

        Args:
            previous_position: The previous position target.
            previous_velocity: The previous target velocity.
            target: Desired positions.
            dt: Time step in seconds (> 0).

        Returns:
            ``(next_position, next_velocity)``, new arrays.

        Raises:
            ValueError: Bad ``dt``, wrong shapes or non-finite values.
        """
        return self.advance(self._vector(previous_position, "previous_position"),
                            self._vector(previous_velocity, "previous_velocity"),
                            self._vector(target, "target"), _step(dt))

    def advance(self, q: Array, v: Array, target: Array, dt: float, *,
                velocity_scale: Array | None = None) -> tuple[Array, Array]:
        """:meth:`limit` for arguments already known to be right.

        For a caller that owns its arrays and checked them once (the simulation's
        position controllers, every step): float arrays of the limiter's length, finite,
        ``dt`` finite and > 0. Nothing is checked here; the arrays are not changed.
        ``velocity_scale`` (per DOF, in (0, 1]) narrows the velocity limits for this step
        (the hardware's bounded speed after an enable); a target moving faster than
        that is then approached at the narrowed speed.
        """
        goal = np.minimum(np.maximum(target, self._q_lo), self._q_hi)
        err = goal - q
        # Braking toward the goal: moving up brakes with a_lower, moving down with a_upper.
        brake = np.where(err >= 0.0, self._brake_up, self._brake_down)
        v_goal = np.copysign(_max_step(np.abs(err), brake * (dt * dt)), err) / dt
        v_lo, v_hi = self._v_lo, self._v_hi
        if velocity_scale is not None:
            v_lo, v_hi = v_lo * velocity_scale, v_hi * velocity_scale
        lo = np.maximum(v_lo, v + self._a_lo * dt)
        hi = np.minimum(v_hi, v + self._a_hi * dt)
        v_next = np.minimum(np.maximum(v_goal, lo), hi)
        q_next = q + v_next * dt
        q_next = np.minimum(
            np.maximum(q_next, np.minimum(self._q_lo, q)), np.maximum(self._q_hi, q)
        )
        v_out: Array = (q_next - q) / dt
        return q_next, v_out

    def _vector(self, values: npt.ArrayLike, what: str) -> Array:
        try:
            arr = np.array(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{what} must be numbers: {exc}") from None
        if arr.shape != (self._n,):
            raise ValueError(f"{what} must have shape ({self._n},), got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{what} holds a non-finite value: {arr}")
        return arr
