"""Pass/fail criteria of a sim-to-real run, read from a YAML file (``--criteria``).

Format (every key optional; a bound that is not given is not checked)::

    min_duration: 8.0        # s: the span where every stream has data
    min_rate: 20.0           # Hz: samples per second of each stream over that span
    max_gap: 0.2             # s: a measured stream without samples for longer starved
    all:                     # bounds for every joint
      sim_real:     {rms: 0.15, max: 0.4, lag: 0.35}   # rad (m), rad (m), s
      sim_command:  {rms: 0.15, max: 0.4, lag: 0.35}
      real_command: {rms: 0.06, max: 0.2, lag: 0.2, reversal: 0.01}
      limit_hits:   {command: 0, sim: 0, real: 0}     # grid samples at a position limit
      sim_mujoco:   {max: 0.05}      # a run in several engines: engine vs engine, and
      mujoco_real:  {max: 0.4}       # dart_/mujoco_ real, command (metrics.PAIRS)
    joints:                  # per joint: each bound named here replaces the one of `all`
      elbow:
        sim_command: {max: 0.5}

``rms`` and ``max`` bound the RMS and the largest absolute position error of the pair,
``lag`` the absolute lag, ``reversal`` the motion the first stream loses where the second
reverses (see :mod:`skel_ros.analysis.metrics`); ``limit_hits`` the
count per stream. ``min_duration``, ``min_rate`` and ``max_gap`` say whether the run can
be judged at all: a run below them is *not judged*, not failed. ``max_gap`` (default
:data:`DEFAULT_MAX_GAP`) applies to the measured streams (simulations, hardware), and
to each joint in them that some of their messages lack (as does ``min_rate``): a gap
longer than it and than :data:`~skel_ros.analysis.metrics.GAP_PERIODS` median sample
periods of the stream means its node was starved (a simulation that dropped time, a
hardware node that stalled), so the errors say nothing about the model.

Every mistake is a :class:`~skel_ros.analysis.errors.CriteriaError` ``"file:line: ..."``
(YAML read by :mod:`skel_ros.model.yamlread`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skel_ros.analysis.errors import CriteriaError
from skel_ros.analysis.metrics import ENGINE_STREAMS, PAIRS
from skel_ros.model.yamlread import YamlLineError, key_line, load_yaml_lines, node_line

__all__ = ["PAIR_KEYS", "Bound", "Criteria", "JointBounds", "load_criteria", "parse_criteria"]

# YAML key -> the pair of streams it bounds (metrics.PAIRS, spelt as keys).
PAIR_KEYS: dict[str, tuple[str, str]] = {f"{a}_{b}": (a, b) for a, b in PAIRS}
PAIR_METRICS = ("rms", "max", "lag", "reversal")
STREAMS = ("command", "sim", "real", *ENGINE_STREAMS)
_JOINT_KEYS = (*PAIR_KEYS, "limit_hits")
_TOP_KEYS = ("min_duration", "min_rate", "max_gap", "all", "joints")
# s: the max_gap of a criteria file that sets none. A simulation node (time_base wall)
# catches up to 0.25 s late keeping its stamps; beyond that, the stamps skip the lost time.
DEFAULT_MAX_GAP = 0.2


@dataclass(frozen=True)
class Bound:
    """One bound and where it was set."""

    value: float
    where: str  # "file:line"


@dataclass(frozen=True)
class JointBounds:
    """The bounds of one joint (or of every joint).

    Attributes:
        errors: ``(a, b, metric)`` -> bound, metric ``rms``, ``max`` or ``lag``.
        limit_hits: stream -> the most limit hits allowed.
    """

    errors: dict[tuple[str, str, str], Bound] = field(default_factory=dict)
    limit_hits: dict[str, Bound] = field(default_factory=dict)

    def over(self, base: JointBounds) -> JointBounds:
        """These bounds, and ``base``'s where these say nothing."""
        return JointBounds({**base.errors, **self.errors}, {**base.limit_hits, **self.limit_hits})

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The YAML layout, for the JSON report."""
        out: dict[str, dict[str, float]] = {}
        for key, (a, b) in PAIR_KEYS.items():
            bounds = {m: self.errors[a, b, m].value for m in PAIR_METRICS
                      if (a, b, m) in self.errors}
            if bounds:
                out[key] = bounds
        if self.limit_hits:
            out["limit_hits"] = {s: b.value for s, b in self.limit_hits.items()}
        return out


@dataclass(frozen=True)
class Criteria:
    """A whole criteria file."""

    source: str
    min_duration: Bound | None = None
    min_rate: Bound | None = None
    max_gap: Bound = field(default_factory=lambda: Bound(DEFAULT_MAX_GAP, "default max_gap"))
    all: JointBounds = field(default_factory=JointBounds)
    joints: dict[str, JointBounds] = field(default_factory=dict)
    joint_where: dict[str, str] = field(default_factory=dict)  # joint -> "file:line"

    def for_joint(self, joint: str) -> JointBounds:
        """The bounds that apply to ``joint``."""
        own = self.joints.get(joint)
        return self.all if own is None else own.over(self.all)

    def as_dict(self) -> dict[str, Any]:
        """The file's content (as read), for the JSON report."""
        out: dict[str, Any] = {"source": self.source}
        if self.min_duration is not None:
            out["min_duration"] = self.min_duration.value
        if self.min_rate is not None:
            out["min_rate"] = self.min_rate.value
        out["max_gap"] = self.max_gap.value
        out["all"] = self.all.as_dict()
        out["joints"] = {j: b.as_dict() for j, b in self.joints.items()}
        return out


def load_criteria(path: str | Path) -> Criteria:
    """Read a criteria file.

    Raises:
        CriteriaError: unreadable file, invalid YAML, or a malformed entry (``file:line``).
    """
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise CriteriaError(f"{source}: cannot read the criteria: {reason}") from None
    return parse_criteria(text, source)


def parse_criteria(text: str, source: str = "<string>") -> Criteria:
    """Parse the text of a criteria file; see :func:`load_criteria`."""
    try:
        data = load_yaml_lines(text, scalar_keys=True)
    except YamlLineError as exc:
        raise CriteriaError(_at(source, exc.line, exc.message)) from None
    return _Reader(source).document(data)


def _at(source: str, line: int, message: str) -> str:
    return f"{source}:{line}: {message}" if line else f"{source}: {message}"


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, line: int, message: str) -> CriteriaError:
        return CriteriaError(_at(self.source, line, message))

    def mapping(self, value: object, what: str, line: int) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise self.fail(line, f"{what} must be a mapping, got {value!r}")
        return value

    def keys(self, mapping: dict[Any, Any], allowed: tuple[str, ...], what: str) -> None:
        for key in mapping:
            if key not in allowed:
                raise self.fail(key_line(mapping, key), f"unknown key {key!r} in {what}; "
                                f"known: {', '.join(allowed)}")

    def bound(self, mapping: dict[Any, Any], key: str, what: str, *,
              integer: bool = False) -> Bound:
        value = mapping[key]
        line = key_line(mapping, key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0:
            kind = "a whole number" if integer else "a finite number"
            raise self.fail(line, f"{what} must be {kind} >= 0, got {value!r}")
        if integer and value != int(value):
            raise self.fail(line, f"{what} must be a whole number >= 0, got {value!r}")
        return Bound(float(value), f"{self.source}:{line}")

    def joint(self, raw: object, what: str, line: int) -> JointBounds:
        entry = self.mapping(raw, what, line)
        self.keys(entry, _JOINT_KEYS, what)
        errors: dict[tuple[str, str, str], Bound] = {}
        hits: dict[str, Bound] = {}
        for key, (a, b) in PAIR_KEYS.items():
            if key in entry:
                pair = self.mapping(entry[key], f"{what} {key}", key_line(entry, key))
                self.keys(pair, PAIR_METRICS, f"{what} {key}")
                for metric in pair:
                    errors[a, b, metric] = self.bound(pair, metric, f"{what} {key} {metric}")
        if "limit_hits" in entry:
            counts = self.mapping(entry["limit_hits"], f"{what} limit_hits",
                                  key_line(entry, "limit_hits"))
            self.keys(counts, STREAMS, f"{what} limit_hits")
            for stream in counts:
                hits[stream] = self.bound(counts, stream, f"{what} limit_hits {stream}",
                                          integer=True)
        return JointBounds(errors, hits)

    def document(self, data: object) -> Criteria:
        if data is None:
            data = {}
        top = self.mapping(data, "the criteria file", node_line(data) or 1)
        self.keys(top, _TOP_KEYS, "the criteria file")
        min_duration = self.bound(top, "min_duration", "min_duration") \
            if "min_duration" in top else None
        min_rate = self.bound(top, "min_rate", "min_rate") if "min_rate" in top else None
        max_gap = (self.bound(top, "max_gap", "max_gap") if "max_gap" in top
                   else Bound(DEFAULT_MAX_GAP, "default max_gap"))
        every = (self.joint(top["all"], "all", key_line(top, "all")) if "all" in top
                 else JointBounds())
        joints: dict[str, JointBounds] = {}
        where: dict[str, str] = {}
        if "joints" in top:
            raw = self.mapping(top["joints"], "joints", key_line(top, "joints"))
            for name, entry in raw.items():
                line = key_line(raw, name)
                if not isinstance(name, str) or not name:
                    raise self.fail(line, f"a joint name must be a non-empty string, got {name!r}")
                joints[name] = self.joint(entry, f"joint {name!r}", line)
                where[name] = f"{self.source}:{line}"
        return Criteria(self.source, min_duration, min_rate, max_gap, every, joints, where)
