"""Trajectory YAML in the layout of ``trajectory_msgs/JointTrajectory``.

::

    joint_names: [shoulder_yaw, elbow]
    points:
      - positions: [0.0, 0.3]
        time_from_start: 0.0             # seconds, or {sec: 0, nanosec: 0}
      - positions: [0.5, 0.8]
        velocities: [0.0, 0.0]           # optional
        accelerations: [0.0, 0.0]        # optional (needs velocities)
        time_from_start: {sec: 2, nanosec: 500000000}

The output of ``ros2 topic echo --once /joint_trajectory`` is accepted too: a
``header`` is ignored, empty ``velocities``/``accelerations``/``effort`` lists
mean "not given". Points are interpolated as :class:`PointTrajectory` does. Every
problem raises :class:`TrajectoryFileError` with file and line.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import yaml

from skel_ros.model.errors import Location
from skel_ros.model.yamlread import compose_yaml
from skel_ros.trajectory.errors import TrajectoryError, TrajectoryFileError
from skel_ros.trajectory.points import (
    MAX_TIME,
    MAX_TIME_REASON,
    PointTrajectory,
    TrajectoryPoint,
    duration_parts,
)

__all__ = ["parse_trajectory_yaml", "read_trajectory_yaml"]

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z", re.ASCII)
_INTEGER = re.compile(r"[+-]?\d{1,12}\Z", re.ASCII)
_STR = "tag:yaml.org,2002:str"
_TOP_KEYS = frozenset({"header", "joint_names", "points"})
_POINT_KEYS = frozenset({"positions", "velocities", "accelerations", "effort",
                         "time_from_start"})
_NANOSEC = 1_000_000_000
_NOT_FINITE = frozenset({".nan", ".inf", "nan", "inf", "infinity"})
_YAML_TAG = "tag:yaml.org,2002:"
_NUMBER_TAGS = frozenset({_YAML_TAG + "int", _YAML_TAG + "float"})
# The tags a safe YAML reader knows (null, bool, int, float, str, seq, map, ...); any
# other (``!!python/object:...``, ``!custom``) is refused, never silently read.
_KNOWN_TAGS = frozenset(t for t in yaml.SafeLoader.yaml_constructors if t is not None)
_RESOLVER = yaml.resolver.Resolver()


def read_trajectory_yaml(path: str | Path) -> PointTrajectory:
    """Read a trajectory YAML file (module docstring).

    Raises:
        TrajectoryFileError: The file cannot be read or is not a valid trajectory.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TrajectoryFileError(f"cannot read trajectory file: {exc.strerror or exc}",
                                  Location(str(path))) from None
    return parse_trajectory_yaml(data, str(path))


def parse_trajectory_yaml(text: bytes | str, source: str = "<string>") -> PointTrajectory:
    """Parse trajectory YAML ``text``; ``source`` names it in errors.

    Raises:
        TrajectoryFileError: Malformed YAML or not a valid trajectory.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")  # a UTF-8 BOM stays: YAML skips it
        except UnicodeDecodeError as exc:  # the model readers' words for it
            raise TrajectoryFileError(f"not a text document (bad UTF-8 at byte {exc.start})",
                                      Location(source)) from None
    try:
        root = compose_yaml(text)
    except yaml.YAMLError as exc:
        reason, line = _yaml_problem(exc, text)
        raise TrajectoryFileError(f"not valid YAML: {reason}", Location(source, line)) from None
    except (ValueError, RecursionError) as exc:
        raise TrajectoryFileError(f"not valid YAML: {_one_line(str(exc))}",
                                  Location(source)) from None
    reader = _Reader(source)
    reader.check_tags(root)
    return reader.trajectory(root)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _yaml_problem(exc: yaml.YAMLError, text: str) -> tuple[str, int]:
    """One line saying what is wrong (with the column), and the line (0: unknown)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML refuses; no mark
        position = max(0, min(int(exc.position), len(text)))
        before = text[:position]
        column = position - (before.rfind("\n") + 1) + 1
        reason = (f"unacceptable character #x{exc.character:04x} ({exc.reason}) at column"
                  f" {column}" if isinstance(exc.character, int) else _one_line(str(exc)))
        return reason, before.count("\n") + 1
    if mark is None or not problem:
        return _one_line(str(exc).split("\n  in ", 1)[0]), 0
    reason = f"{_one_line(problem)} (column {mark.column + 1})"
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None and context_mark.line != mark.line:
        reason += f"; {_one_line(context)} that starts at line {context_mark.line + 1}"
    return reason, mark.line + 1


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def loc(self, node: yaml.Node, path: str) -> Location:
        return Location(self.source, node.start_mark.line + 1, path)

    def error(self, reason: str, node: yaml.Node, path: str) -> TrajectoryFileError:
        return TrajectoryFileError(reason, self.loc(node, path))

    def mapping(self, node: yaml.Node, path: str, keys: frozenset[str]
                ) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.error("expected a map", node, path)
        out: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if not isinstance(name, str) or name not in keys:
                raise self.error(f"unknown key {name!r} (expected: {', '.join(sorted(keys))})",
                                 key, path)
            if name in out:
                raise self.error(f"key {name!r} appears twice", key, path)
            out[name] = value
        return out

    def check_tags(self, root: yaml.Node | None) -> None:
        """Refuse a tag a safe YAML reader does not know, anywhere in the document."""
        seen: set[int] = set()
        stack = [(root, "/")] if root is not None else []
        while stack:
            node, path = stack.pop()
            if id(node) in seen:  # an alias: checked where its anchor is
                continue
            seen.add(id(node))
            if node.tag not in _KNOWN_TAGS:
                shown = node.tag.replace(_YAML_TAG, "!!", 1)
                raise self.error(f"unknown tag {shown[:60]!r} (a trajectory holds plain"
                                 f" numbers, names, lists and maps)", node, path)
            if isinstance(node, yaml.SequenceNode):
                stack.extend((item, f"{path.rstrip('/')}[{k}]")
                             for k, item in enumerate(node.value))
            elif isinstance(node, yaml.MappingNode):
                for key, value in node.value:
                    name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                    stack.append((key, path))
                    stack.append((value, f"{path.rstrip('/')}/{str(name)[:40]}"))

    def trajectory(self, root: yaml.Node | None) -> PointTrajectory:
        if root is None:
            raise TrajectoryFileError("the file is empty", Location(self.source))
        top = self.mapping(root, "/", _TOP_KEYS)
        for key in ("joint_names", "points"):
            if key not in top:
                raise self.error(f"missing key {key!r}", root, "/")
        names = self.names(top["joint_names"])
        points_node = top["points"]
        if not isinstance(points_node, yaml.SequenceNode) or not points_node.value:
            raise self.error("points must be a non-empty list", points_node, "/points")
        points = []
        previous = -math.inf
        for i, node in enumerate(points_node.value):
            point = self.point(node, i, len(names))
            if points and not duration_parts(point.time_from_start) > duration_parts(previous):
                raise self.error(f"time_from_start {point.time_from_start:.12g} s is not after the"
                                 f" previous point's ({previous:.12g} s) by at least 1 ns (a ROS"
                                 f" Duration counts whole nanoseconds)", node, f"/points[{i}]")
            previous = point.time_from_start
            points.append(point)
        try:
            return PointTrajectory(names, points, source=self.source)
        except TrajectoryError as exc:  # checked above; kept for a located message
            raise self.error(exc.reason, points_node, "/points") from None

    def names(self, node: yaml.Node) -> list[str]:
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise self.error("joint_names must be a non-empty list of names", node,
                             "/joint_names")
        names: list[str] = []
        for i, item in enumerate(node.value):
            if not (isinstance(item, yaml.ScalarNode) and item.tag == _STR
                    and item.value.strip()):
                raise self.error(f"joint_names[{i}] is not a name", item, f"/joint_names[{i}]")
            if item.value in names:
                raise self.error(f"joint {item.value!r} is listed twice", item,
                                 f"/joint_names[{i}]")
            names.append(item.value)
        return names

    def point(self, node: yaml.Node, i: int, n: int) -> TrajectoryPoint:
        path = f"/points[{i}]"
        fields = self.mapping(node, path, _POINT_KEYS)
        if "positions" not in fields:
            raise self.error("the point has no positions", node, path)
        if "time_from_start" not in fields:
            raise self.error("the point has no time_from_start", node, path)
        positions = self.vector(fields["positions"], f"{path}/positions", n)
        if positions is None:
            raise self.error("positions is empty", fields["positions"], f"{path}/positions")
        velocities = self.optional(fields, "velocities", path, n)
        accelerations = self.optional(fields, "accelerations", path, n)
        if accelerations is not None and velocities is None:
            raise self.error("accelerations need velocities (quintic interpolation)", node, path)
        effort = fields.get("effort")
        if effort is not None and self.vector(effort, f"{path}/effort", n) is not None:
            raise self.error("effort is not played (position trajectories only); remove it",
                             effort, f"{path}/effort")
        time = self.time(fields["time_from_start"], f"{path}/time_from_start")
        return TrajectoryPoint(time, positions, velocities, accelerations)

    def optional(self, fields: dict[str, yaml.Node], key: str, path: str, n: int
                 ) -> tuple[float, ...] | None:
        node = fields.get(key)
        if node is None or (isinstance(node, yaml.ScalarNode)
                            and node.tag == "tag:yaml.org,2002:null"):
            return None
        return self.vector(node, f"{path}/{key}", n)

    def vector(self, node: yaml.Node, path: str, n: int) -> tuple[float, ...] | None:
        """``n`` finite numbers, or None for an empty list."""
        if not isinstance(node, yaml.SequenceNode):
            raise self.error("expected a list of numbers", node, path)
        if not node.value:
            return None
        if len(node.value) != n:
            raise self.error(f"{len(node.value)} values for {n} joints", node, path)
        return tuple(self.number(item, f"{path}[{k}]") for k, item in enumerate(node.value))

    def plain(self, node: yaml.Node, path: str) -> str | None:
        """The text of a scalar written as a YAML number would be, else None.

        Quoted (``"0.5"``) or tagged other than ``!!int``/``!!float`` (``!!str 0.5``) is a
        string, not a number, whatever it reads like.
        """
        if not isinstance(node, yaml.ScalarNode):
            return None
        if node.style:  # quoted or a block scalar: a string (plain: None or "")
            raise self.error(f"{node.value[:40]!r} is quoted: a string, not a number", node,
                             path)
        implicit = _RESOLVER.resolve(yaml.ScalarNode, node.value, (True, False))
        if node.tag != implicit and node.tag not in _NUMBER_TAGS:
            shown = node.tag.replace(_YAML_TAG, "!!", 1)
            raise self.error(f"{node.value[:40]!r} is tagged {shown}, not a number", node, path)
        return str(node.value).strip()

    def number(self, node: yaml.Node, path: str) -> float:
        text = self.plain(node, path)
        if isinstance(text, str) and text.lower().lstrip("+-") in _NOT_FINITE:
            raise self.error(f"{text} is not finite", node, path)
        if not isinstance(text, str) or not _NUMBER.match(text):
            shown = repr(text[:40]) if isinstance(text, str) else "a list or map"
            raise self.error(f"{shown} is not a number", node, path)
        value = float(text)
        if not math.isfinite(value):
            raise self.error(f"{text[:40]} is not finite", node, path)
        return value

    def time(self, node: yaml.Node, path: str) -> float:
        if isinstance(node, yaml.MappingNode):
            parts = self.mapping(node, path, frozenset({"sec", "nanosec"}))
            sec = self.integer(parts.get("sec"), f"{path}/sec")
            nanosec = self.integer(parts.get("nanosec"), f"{path}/nanosec")
            if not 0 <= nanosec < _NANOSEC:
                raise self.error(f"nanosec {nanosec} must be in [0, 1e9)", node, path)
            value = sec + nanosec * 1e-9
        else:
            value = self.number(node, path)
        if value < 0.0:
            raise self.error(f"time_from_start {value:g} s is negative", node, path)
        if value > MAX_TIME:
            raise self.error(f"time_from_start {value:g} s is {MAX_TIME_REASON}", node, path)
        return value

    def integer(self, node: yaml.Node | None, path: str) -> int:
        if node is None:
            return 0
        text = self.plain(node, path)
        if not isinstance(text, str) or not _INTEGER.match(text):
            raise self.error("expected a whole number", node, path)
        return int(text)
