"""The sweep spec: the axes of a sweep and its criteria, read from YAML.

Format (every key but ``criteria`` optional; each list may be a single value)::

    criteria: arm_criteria.yaml          # pass/fail bounds of every trial (required)
    models: [package://skel_ros/examples/arm.skel]            # default: the bundled arm
    trajectories: [package://skel_ros/examples/arm_trajectory.xml]    # default: its 10 s one
    hardware: [package://skel_ros/config/hardware/arm_dynamixel.yaml] # default: its servos
    engines: [dart, mujoco, "dart,mujoco"]   # one trial each (default: dart)
    truths: [~, elbow_friction.yaml]     # base truth files; ~ is the model itself
    vary:                                # truth parameters set on every base truth
      joints.elbow.friction: [0.0, 0.1, 0.3]          # a list of values
      bodies.hand.mass: {from: 0.0, to: 0.4, steps: 3} # or a range, both ends included
    seeds: {count: 3}                    # the truth's noise seed: 0, 1, 2 (or a list)
    physics: true                        # true: physics, false: ideal actuators (default:
                                         # sim-to-real's choice; a truth implies true)

Relative paths are taken from the spec's folder; ``package://`` URIs are resolved. The
trials are every combination of the axes (:attr:`Spec.trials`). When ``truths``,
``vary`` or ``seeds`` is given, each trial gets a truth file of its own
(:meth:`Spec.truth_text`): its base truth (or the empty one) with the trial's parameter
values and seed, read back by :func:`skel_ros.model.truth.parse_truth` before anything
runs. Every mistake is a :class:`~skel_ros.sweep.errors.SpecError` ``"spec.yaml:7: ..."``
(a mistake in a base truth file or in the criteria at its own file and line).

No ROS, no engine.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.model.truth import JOINT_KEYS, TruthError, load_truth, parse_truth
from skel_ros.model.yamlread import LineDict, YamlLineError, dump_yaml, key_line, load_yaml_lines
from skel_ros.sweep.errors import SpecError

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["AXES", "Spec", "Trial", "load_spec", "parse_spec"]

DEFAULTS = {
    "models": "package://skel_ros/examples/arm.skel",
    "trajectories": "package://skel_ros/examples/arm_trajectory.xml",
    "hardware": "package://skel_ros/config/hardware/arm_dynamixel.yaml",
}
_TOP_KEYS = ("criteria", "models", "trajectories", "hardware", "engines", "truths", "vary",
             "seeds", "physics")
_BODY_KEYS = ("mass",)
MAX_STEPS = 10_000  # values of one range: beyond, a typo
ID_LENGTH = 12  # hex digits of a trial id

AXES = ("model", "trajectory", "hardware", "engines", "truth", "seed")
"""The axes of a trial besides the ``vary`` parameters (named ``vary:<key>``)."""


@dataclass(frozen=True)
class Trial:
    """One sim-to-real run of a sweep: one value of each axis, as the spec writes them.

    Attributes:
        model, trajectory, hardware: the files as written in the spec.
        engines: ``"dart"``, ``"mujoco"`` or ``"dart,mujoco"``.
        truth: the base truth file as written, None for the model itself.
        values: ``vary`` key -> value of this trial.
        seed: the truth's noise seed; None when the spec has no ``seeds``.
        physics: ``True``: the emulated actuators move a physics model (``--physics``);
            ``False``: ideal ones (``--ideal-actuators``); ``None``: ``sim-to-real``'s own
            choice (physics where every bus has it). A truth implies ``True``.
        criteria: the criteria file as the spec names it (part of the id: a trial judged
            by other bounds is another trial).
    """

    model: str
    trajectory: str
    hardware: str
    engines: str
    truth: str | None = None
    values: tuple[tuple[str, float], ...] = ()
    seed: int | None = None
    physics: bool | None = None
    criteria: str = ""

    @property
    def has_truth(self) -> bool:
        """Whether this trial runs with a truth file of its own."""
        return self.truth is not None or bool(self.values) or self.seed is not None

    def params(self) -> dict[str, Any]:
        """The trial's parameters: axis (``vary:<key>`` for a truth parameter) -> value."""
        return {"model": self.model, "trajectory": self.trajectory, "hardware": self.hardware,
                "engines": self.engines, "truth": self.truth, "seed": self.seed,
                "physics": True if self.has_truth else self.physics,
                "criteria": self.criteria, **{f"vary:{k}": v for k, v in self.values}}

    @property
    def id(self) -> str:
        """A stable name: the same parameters give the same id, in any spec, any run."""
        text = json.dumps(self.params(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:ID_LENGTH]


@dataclass(frozen=True)
class Spec:
    """A sweep spec (:func:`parse_spec`).

    Attributes:
        source: the spec file.
        criteria: the criteria file, resolved.
        trials: every combination of the axes, in a stable order.
        files: each file as written in the spec -> its resolved path.
        swept: the axes with more than one value (``vary:<key>`` for truth parameters).
    """

    source: str
    criteria: Path
    trials: tuple[Trial, ...]
    files: Mapping[str, Path] = field(default_factory=dict)
    swept: tuple[str, ...] = ()
    _bases: Mapping[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    def path(self, written: str) -> Path:
        """The resolved path of a file named in the spec."""
        return self.files[written]

    def truth_text(self, trial: Trial) -> str | None:
        """The YAML of ``trial``'s truth file (None: it runs without one).

        Its base truth (a whole ``model`` made absolute), each ``vary`` value set and
        the seed.
        """
        if not trial.has_truth:
            return None
        data = json.loads(json.dumps(self._bases.get(trial.truth or "", {})))  # a deep copy
        for key, value in trial.values:
            section, name, item = key.split(".", 2)
            entry = data.setdefault(section, {}) or {}
            data[section] = entry
            entry.setdefault(name, {})
            if entry[name] is None:
                entry[name] = {}
            entry[name][item] = value
        if trial.seed is not None:
            data["seed"] = trial.seed
        return dump_yaml(data, sort_keys=False)


def load_spec(path: str | Path) -> Spec:
    """Read a sweep spec (module docstring).

    Raises:
        SpecError: it cannot be read, or says something wrong (with its line).
        TruthError, CriteriaError: a base truth file or the criteria is wrong (their line).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SpecError(f"cannot read the sweep spec: {reason}", str(path)) from None
    return parse_spec(text, str(path), base=Path(path).parent)


def parse_spec(text: str, source: str = "<spec>", base: Path | None = None) -> Spec:
    """Parse a sweep spec's text; see :func:`load_spec`.

    Args:
        text: the YAML.
        source: its name in messages.
        base: the folder relative paths are taken from (default: the current one).
    """
    try:
        top = load_yaml_lines(text, scalar_keys=True)
    except YamlLineError as exc:
        raise SpecError(exc.message, source, exc.line) from None
    return _Reader(source, base or Path()).spec(top)


def _plain(value: Any) -> Any:  # noqa: ANN401 - any YAML value
    """A YAML value without its line bookkeeping (dict for LineDict), for dumping."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _Reader:
    """The checks of one spec, each error at its line."""

    def __init__(self, source: str, base: Path) -> None:
        self.source = source
        self.base = base
        self.files: dict[str, Path] = {}

    def fail(self, line: int, message: str) -> SpecError:
        return SpecError(message, self.source, line)

    def spec(self, top: Any) -> Spec:  # noqa: ANN401 - the parsed YAML
        if not isinstance(top, LineDict):
            raise self.fail(1, "a sweep spec is a mapping (criteria:, models:, vary: ...), "
                               f"got {type(top).__name__ if top is not None else 'nothing'}")
        for key in top:
            if key not in _TOP_KEYS:
                raise self.fail(key_line(top, key),
                                f"unknown key {key!r}; known: {', '.join(_TOP_KEYS)}")
        if "criteria" not in top:
            raise self.fail(1, "missing 'criteria': the file of bounds every trial is judged by")
        criteria = self.file(top, "criteria", top["criteria"])
        from skel_ros.analysis.criteria import load_criteria

        load_criteria(criteria)  # its mistakes at their line, before anything runs
        models = self.files_of(top, "models")
        trajectories = self.files_of(top, "trajectories")
        hardware = self.files_of(top, "hardware")
        engines = self.engines(top)
        truths = self.truths(top)
        vary = self.vary(top)
        seeds = self.seeds(top)
        physics = top.get("physics")
        if physics is not None and not isinstance(physics, bool):
            raise self.fail(key_line(top, "physics"), f"physics must be true or false, got "
                                                      f"{physics!r}")
        bases = self.bases(truths)
        self.check_names(top, models, truths, vary)
        values = [[(k, v) for v in vs] for k, vs in vary.items()]
        trials = tuple(
            Trial(m, t, h, e, truth, tuple(combo), seed, physics, str(top["criteria"]))
            for m, t, h, e, truth, seed, *combo in itertools.product(
                models, trajectories, hardware, engines, truths, seeds, *values))
        counts = {"model": len(models), "trajectory": len(trajectories),
                  "hardware": len(hardware), "engines": len(engines), "truth": len(truths),
                  "seed": len(seeds), **{f"vary:{k}": len(v) for k, v in vary.items()}}
        spec = Spec(self.source, criteria, trials, dict(self.files),
                    tuple(a for a, n in counts.items() if n > 1), bases)
        for trial in trials[:1]:  # the generated text reads back (values checked one by one)
            text = spec.truth_text(trial)
            if text is not None:
                try:
                    parse_truth(text, f"{self.source}: the truth of trial {trial.id}")
                except TruthError as exc:
                    raise self.fail(key_line(top, "vary"), str(exc)) from None
        return spec

    # -- files

    def path(self, written: str) -> Path:
        return self.files[written]

    def file(self, raw: LineDict, key: str, value: Any) -> Path:  # noqa: ANN401
        line = key_line(raw, key)
        if not isinstance(value, str) or not value:
            raise self.fail(line, f"{key}: expected a file name, got {value!r}")
        from skel_ros.resources import resolve

        try:
            path = resolve(value)
        except FileNotFoundError as exc:
            raise self.fail(line, f"{key}: {exc}") from None
        if not path.is_absolute():
            path = self.base / path
        if not path.is_file():
            raise self.fail(line, f"{key}: {value}: no such file (relative paths are taken"
                                  f" from the spec's folder, {self.base})")
        self.files[value] = path
        return path

    def items(self, raw: LineDict, key: str, default: Any = None) -> list[Any]:  # noqa: ANN401
        value = raw.get(key, default)
        items = value if isinstance(value, list) else [value]
        if not items:
            raise self.fail(key_line(raw, key), f"{key}: an empty list gives no trial")
        seen: list[Any] = []
        for item in items:
            if item in seen:
                raise self.fail(key_line(raw, key), f"{key}: {item!r} is listed twice")
            seen.append(item)
        return items

    def files_of(self, raw: LineDict, key: str) -> list[str]:
        items = self.items(raw, key, DEFAULTS[key])
        for item in items:
            self.file(raw, key, item)
        return items

    def engines(self, raw: LineDict) -> list[str]:
        from skel_ros.sim import ENGINES

        items = self.items(raw, "engines", "dart")
        for item in items:
            names = [n.strip() for n in item.split(",")] if isinstance(item, str) else []
            if not names or len(set(names)) != len(names) or any(n not in ENGINES for n in names):
                raise self.fail(key_line(raw, "engines"),
                                f"engines: expected distinct engines among {', '.join(ENGINES)},"
                                f" comma-separated, got {item!r}")
        return [",".join(n.strip() for n in item.split(",")) for item in items]

    def truths(self, raw: LineDict) -> list[str | None]:
        if "truths" not in raw:
            return [None]
        items = self.items(raw, "truths")
        for item in items:
            if item is not None:
                load_truth(self.file(raw, "truths", item))  # its mistakes at its line
        return items

    def bases(self, truths: list[str | None]) -> dict[str, dict[str, Any]]:
        """Each base truth's content (read and checked already), its ``model`` absolute."""
        bases = {written: _plain(load_yaml_lines(self.path(written).read_text("utf-8")) or {})
                 for written in truths if written is not None}
        for written, data in bases.items():
            if isinstance(data.get("model"), str):  # the trial's truth is elsewhere
                data["model"] = str(self.path(written).parent / data["model"])
        return bases

    # -- truth parameters

    def vary(self, raw: LineDict) -> dict[str, list[float]]:
        vary = raw.get("vary")
        if vary is None:
            return {}
        if not isinstance(vary, LineDict):
            raise self.fail(key_line(raw, "vary"),
                            f"vary must be a mapping (joints.NAME.KEY: values), got {vary!r}")
        out = {}
        for key, value in vary.items():
            line = key_line(vary, key)
            self.vary_key(key, line)
            values = self.values(key, value, line)
            for v in values:
                section, name, item = str(key).split(".", 2)
                try:
                    parse_truth(dump_yaml({section: {name: {item: v}}}), "")
                except TruthError as exc:
                    raise self.fail(line, f"vary: {key}: {exc.message}") from None
            out[str(key)] = values
        return out

    def vary_key(self, key: Any, line: int) -> None:  # noqa: ANN401 - a YAML key
        parts = str(key).split(".")
        joint_ok = len(parts) == 3 and parts[0] == "joints" and parts[2] in JOINT_KEYS  # noqa: PLR2004
        body_ok = len(parts) == 3 and parts[0] == "bodies" and parts[2] in _BODY_KEYS  # noqa: PLR2004
        if not isinstance(key, str) or not (joint_ok or body_ok) or not parts[1]:
            raise self.fail(line, f"vary: {key!r} is no truth parameter; expected"
                                  f" joints.NAME.({'|'.join(JOINT_KEYS)}) or bodies.NAME.mass")

    def values(self, key: str, value: Any, line: int) -> list[float]:  # noqa: ANN401
        if isinstance(value, LineDict):
            return self.range(key, value, line)
        items = value if isinstance(value, list) else [value]
        if not items:
            raise self.fail(line, f"vary: {key}: an empty list gives no trial")
        for v in items:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise self.fail(line, f"vary: {key}: expected finite numbers, got {v!r}")
        if len(set(items)) != len(items):
            raise self.fail(line, f"vary: {key}: a value is listed twice")
        return [float(v) for v in items]

    def range(self, key: str, raw: LineDict, line: int) -> list[float]:
        if set(raw) != {"from", "to", "steps"}:
            raise self.fail(line, f"vary: {key}: a range is {{from: A, to: B, steps: N}}, got"
                                  f" keys {', '.join(map(str, raw)) or 'none'}")
        lo, hi, steps = raw["from"], raw["to"], raw["steps"]
        for name, v in (("from", lo), ("to", hi)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise self.fail(key_line(raw, name), f"vary: {key}: {name} must be a finite"
                                                     f" number, got {v!r}")
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
            raise self.fail(key_line(raw, "steps"), f"vary: {key}: steps must be an integer in"
                                                    f" 1..{MAX_STEPS}, got {steps!r}")
        if steps == 1:
            return [float(lo)]
        if lo == hi:
            raise self.fail(line, f"vary: {key}: from and to are equal: one value, steps: 1")
        return [float(lo + (hi - lo) * i / (steps - 1)) for i in range(steps)]

    def seeds(self, raw: LineDict) -> list[int | None]:
        if "seeds" not in raw:
            return [None]
        value = raw["seeds"]
        line = key_line(raw, "seeds")
        if isinstance(value, LineDict):
            count = value.get("count")
            if set(value) != {"count"} or isinstance(count, bool) or not isinstance(count, int) \
                    or not 1 <= count <= MAX_STEPS:
                raise self.fail(line, f"seeds: expected a list of integers >= 0 or {{count: N}}"
                                      f" with N in 1..{MAX_STEPS}, got {_plain(value)!r}")
            return list(range(count))
        items = self.items(raw, "seeds")
        for s in items:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise self.fail(line, f"seeds: expected integers >= 0, got {s!r}")
        return items

    def check_names(self, top: LineDict, models: list[str], truths: list[str | None],
                    vary: dict[str, list[float]]) -> None:
        """Every base truth and ``vary`` parameter names joints and bodies of the robot."""
        from skel_ros.model import SkelError, load_model
        from skel_ros.model.truth import apply_truth

        for model in models:
            try:
                world = load_model(self.path(model))
            except SkelError as exc:
                raise self.fail(key_line(top, "models"), f"models: {exc}") from None
            for written in truths:
                truth = load_truth(self.path(written)) if written is not None else None
                real = world
                if truth is not None:
                    real = load_model(truth.model) if truth.model is not None else world
                    apply_truth(real, truth)  # TruthError at the truth file's line
                dofs = {d.name for s in real.skeletons for d in s.dofs}
                bodies = {b.name for s in real.skeletons for b in s.bodies}
                vary_map = top.get("vary") or {}
                for key in vary:
                    section, name, _ = key.split(".", 2)
                    known = dofs if section == "joints" else bodies
                    if name not in known:
                        what = "DOF" if section == "joints" else "body"
                        raise self.fail(key_line(vary_map, key),
                                        f"vary: {key}: {name!r} is no {what} of {model}; known:"
                                        f" {', '.join(sorted(known))}")
