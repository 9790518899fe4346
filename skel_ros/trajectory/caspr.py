"""CASPR ``trajectories.xml``: joint trajectories, interpolated as CASPR does.

CASPR (the cable robot toolbox) describes joint trajectories as points ``q``
(plus ``q_dot``/``q_ddot`` for some kinds) and builds the trajectory by sampling
each segment at ``time_step`` (``JointTrajectory.m``, ``Spline.m``). This module
reproduces that:

* times: the first point is at 0; later points carry ``time`` — absolute, or
  relative to the previous point (``time_definition``);
* each segment ``p -> p+1`` is sampled at ``t_p, t_p + dt, ...`` up to
  ``t_{p+1}`` (MATLAB's ``t_p:dt:t_{p+1}``); the first sample of every segment
  but the first is dropped (it repeats the previous segment's last);
* the segment polynomial runs between the segment's *first and last sample
  times* (CASPR solves the boundary conditions at ``time_vector(1)`` and
  ``time_vector(end)``): when a segment is not a whole number of steps, its end
  point is reached at its last sample, before the point's time;
* per kind: ``linear_spline`` (straight line), ``cubic_spline`` (cubic matching
  ``q``, ``q_dot``), ``quintic_spline`` (quintic matching ``q``, ``q_dot``,
  ``q_ddot``), ``cubic_spline_average_velocity`` (cubic whose velocity at an
  inner point is the mean of the slopes of the two segments around it, at the
  first and last points the given ``q_dot``), ``parabolic_blend`` (constant
  acceleration for ``blend_time`` at both ends of each segment, constant velocity
  between; zero velocity at every point).

``file_trajectory`` reads a text file of samples exactly as CASPR's
``FileTrajectoryCreate`` does (``filename`` relative to the trajectories file's
folder, CASPR's model folder): a first line ``time_step,<seconds>``, then one row per
sample ``t,<time>,p,<q...>,v,<q_dot...>,a,<q_ddot...>`` (comma-separated), the row
times ``0, dt, 2 dt, ...`` within 1e-9 s. Those samples are the trajectory.

Only the requested trajectory is read (:func:`select_caspr`): another that cannot be
read does not block it; :func:`caspr_trajectory_ids` lists the ids without reading the
trajectories. A child of a trajectory element other than ``<points>`` that holds only
text (``<description>``) is ignored, as CASPR ignores it, with a note in
:attr:`CasprTrajectory.notes`; any other child is an error.

Operational-space trajectories (``y``) are not joint motions and are ignored.
Every problem raises :class:`TrajectoryFileError` with file, line and element path
(the ``.traj`` file's own line for its rows).
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
from lxml import etree

from skel_ros.model.errors import Location
from skel_ros.trajectory.errors import TrajectoryError, TrajectoryFileError
from skel_ros.trajectory.points import (
    MAX_TIME,
    MAX_TIME_REASON,
    PointTrajectory,
    TrajectoryPoint,
)
from skel_ros.trajectory.polynomials import FloatArray, cubic, evaluate_many, linear, quintic

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from skel_ros.trajectory.mapping import MappedColumn

__all__ = [
    "CasprKind",
    "CasprPoint",
    "CasprSamples",
    "CasprTrajectory",
    "TimeDefinition",
    "caspr_trajectory_ids",
    "parse_caspr",
    "read_caspr",
    "select_caspr",
]

Element: TypeAlias = etree._Element  # noqa: SLF001 - lxml's element type

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z", re.ASCII)
_SEPARATORS = re.compile(r"[\s,]+")
MAX_SAMPLES = 200_000  # a bigger trajectory is a typo in time_step or time
_STEP_TOLERANCE = 1e-9  # relative: t_p:dt:t_e keeps t_e when (t_e - t_p) / dt is this close
_FILE_TIME_TOLERANCE = 1e-9  # s: FileTrajectoryCreate's check of each row's time
_MAX_FILE_BYTES = 256 * 1024 * 1024
_TRAJ_HEADER = re.compile(r"time_step,(.*)\Z", re.DOTALL)
_TRAJ_ROW = re.compile(r"t,(?P<t>[^,]*),p,(?P<p>.*),v,(?P<v>.*),a,(?P<a>.*)\Z", re.DOTALL)
_TRAJ_ROW_FORM = "'t,<time>,p,<positions>,v,<velocities>,a,<accelerations>'"


class CasprKind(Enum):
    """The joint trajectory kinds of CASPR (the element names)."""

    LINEAR_SPLINE = "linear_spline_trajectory"
    CUBIC_SPLINE = "cubic_spline_trajectory"
    QUINTIC_SPLINE = "quintic_spline_trajectory"
    CUBIC_SPLINE_AVERAGE_VELOCITY = "cubic_spline_average_velocity_trajectory"
    PARABOLIC_BLEND = "parabolic_blend_trajectory"
    FILE = "file_trajectory"


class TimeDefinition(Enum):
    """How a point's ``time`` attribute counts."""

    ABSOLUTE = "absolute"
    RELATIVE = "relative"


@dataclass(frozen=True)
class CasprPoint:
    """One ``<point>``.

    Attributes:
        time: Seconds from the start (absolute, already resolved).
        q: Joint positions.
        q_dot: Joint velocities, if the point gives them.
        q_ddot: Joint accelerations, if the point gives them.
        blend_time: The ``blend_time`` attribute (parabolic blend: the segment ending here).
        location: Where the point is.
    """

    time: float
    q: tuple[float, ...]
    q_dot: tuple[float, ...] | None
    q_ddot: tuple[float, ...] | None
    blend_time: float | None
    location: Location


@dataclass(frozen=True)
class CasprSamples:
    """A trajectory sampled as CASPR samples it.

    Attributes:
        times: Sample times, shape ``(N,)``.
        q: Positions, shape ``(N, n)``.
        q_dot: Velocities, shape ``(N, n)``.
        q_ddot: Accelerations, shape ``(N, n)``.
    """

    times: FloatArray
    q: FloatArray
    q_dot: FloatArray
    q_ddot: FloatArray


@dataclass(frozen=True)
class CasprTrajectory:
    """One joint trajectory element of a ``trajectories.xml``.

    Attributes:
        id: The ``id`` attribute.
        kind: Which interpolation.
        time_definition: How the points' times were given (None for a file trajectory).
        time_step: Sampling step, seconds.
        blend_time_default: ``blend_time_default`` (parabolic blend), or None.
        points: The points, times resolved to absolute (none for a file trajectory).
        location: Where the element is.
        file_samples: A file trajectory's samples, as read; None for the other kinds.
        notes: What was ignored (``<description>``), one located message each.
    """

    id: str
    kind: CasprKind
    time_definition: TimeDefinition | None
    time_step: float
    blend_time_default: float | None
    points: tuple[CasprPoint, ...]
    location: Location
    file_samples: CasprSamples | None = None
    notes: tuple[str, ...] = ()

    @property
    def num_q(self) -> int:
        """Length of the ``q`` vectors."""
        if self.file_samples is not None:
            return int(self.file_samples.q.shape[1])
        return len(self.points[0].q)

    def sample(self) -> CasprSamples:
        """Sample at ``time_step`` exactly as CASPR builds the trajectory (module docstring)."""
        if self.file_samples is not None:
            return self.file_samples
        pts = self.points
        times: list[FloatArray] = []
        out: list[tuple[FloatArray, FloatArray, FloatArray]] = []
        velocities = self._knot_velocities()
        with np.errstate(all="ignore"):
            for p in range(len(pts) - 1):
                t_section = _colon(pts[p].time, self.time_step, pts[p + 1].time)
                q, qd, qdd = self._segment(p, t_section, velocities)
                if p > 0:
                    t_section, q, qd, qdd = t_section[1:], q[1:], qd[1:], qdd[1:]
                times.append(t_section)
                out.append((q, qd, qdd))
        return CasprSamples(np.concatenate(times), np.concatenate([o[0] for o in out]),
                            np.concatenate([o[1] for o in out]),
                            np.concatenate([o[2] for o in out]))

    def to_point_trajectory(self, columns: Sequence[MappedColumn]) -> PointTrajectory:
        """The sampled trajectory as timed points on the mapped DOFs.

        Args:
            columns: Which ``q`` column drives which DOF (:func:`resolve_columns`).

        Raises:
            TrajectoryFileError: A sample is not finite (overflow in the file's numbers).
        """
        samples = self.sample()
        idx = [c.column for c in columns]
        q, qd, qdd = samples.q[:, idx], samples.q_dot[:, idx], samples.q_ddot[:, idx]
        bad = ~(np.isfinite(q) & np.isfinite(qd) & np.isfinite(qdd))
        if bad.any():
            k = int(np.argwhere(bad)[0][0])
            raise TrajectoryFileError(f"the trajectory is not finite at t = {samples.times[k]:g}"
                                      f" s (numbers too large?)", self.location)
        points = [TrajectoryPoint(float(t), tuple(q[k].tolist()), tuple(qd[k].tolist()),
                                  tuple(qdd[k].tolist())) for k, t in enumerate(samples.times)]
        try:
            return PointTrajectory([c.dof for c in columns], points,
                                   source=f"{self.location.file} (joint trajectory {self.id!r})")
        except TrajectoryError as exc:
            raise TrajectoryFileError(exc.reason, self.location) from None

    # ------------------------------------------------------------------ interpolation

    def _knot_velocities(self) -> list[FloatArray]:
        """Velocity at each point: given, averaged (average-velocity kind) or zero."""
        pts = self.points
        if self.kind is CasprKind.CUBIC_SPLINE_AVERAGE_VELOCITY:
            vel = []
            for p, point in enumerate(pts):
                if 0 < p < len(pts) - 1:
                    before = (_arr(point.q) - _arr(pts[p - 1].q)) / (point.time - pts[p - 1].time)
                    after = (_arr(pts[p + 1].q) - _arr(point.q)) / (pts[p + 1].time - point.time)
                    vel.append((before + after) / 2.0)
                else:
                    vel.append(_arr(point.q_dot or ()))
            return vel
        if self.kind in (CasprKind.CUBIC_SPLINE, CasprKind.QUINTIC_SPLINE):
            return [_arr(p.q_dot or ()) for p in pts]
        return [np.zeros(len(p.q)) for p in pts]

    def _segment(self, p: int, t: FloatArray, velocities: list[FloatArray]
                 ) -> tuple[FloatArray, FloatArray, FloatArray]:
        a, b = self.points[p], self.points[p + 1]
        duration = float(t[-1] - t[0])  # between the first and last samples, as CASPR
        tau = t - t[0]
        if self.kind is CasprKind.PARABOLIC_BLEND:
            blend = self._blend(p + 1)
            return _parabolic_blend(_arr(a.q), _arr(b.q), tau, duration, blend)
        if self.kind is CasprKind.LINEAR_SPLINE:
            c = linear(_arr(a.q), _arr(b.q), duration)
        elif self.kind is CasprKind.QUINTIC_SPLINE:
            c = quintic(_arr(a.q), velocities[p], _arr(a.q_ddot or ()),
                        _arr(b.q), velocities[p + 1], _arr(b.q_ddot or ()), duration)
        else:
            c = cubic(_arr(a.q), velocities[p], _arr(b.q), velocities[p + 1], duration)
        return evaluate_many(c, tau)

    def _blend(self, p: int) -> float:
        """Blend time of the segment ending at point ``p``."""
        value = self.points[p].blend_time
        if value is None:
            value = self.blend_time_default
        if value is None:  # checked when parsing
            raise TrajectoryFileError("no blend time", self.points[p].location)
        return value


def _arr(values: Sequence[float]) -> FloatArray:
    return np.asarray(values, dtype=np.float64)


def _colon(start: float, step: float, stop: float) -> FloatArray:
    """MATLAB's ``start:step:stop`` (the last element snaps to ``stop`` when within rounding)."""
    ratio = (stop - start) / step
    n = math.floor(ratio + _STEP_TOLERANCE * max(1.0, ratio))
    t = start + step * np.arange(n + 1, dtype=np.float64)
    if abs(t[-1] - stop) <= _STEP_TOLERANCE * step * max(1.0, ratio):
        t[-1] = stop
    return t


def _parabolic_blend(q_s: FloatArray, q_e: FloatArray, tau: FloatArray, duration: float,
                     blend: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """CASPR's ``Spline.ParabolicBlend`` over ``[0, duration]`` at times ``tau``."""
    accel = (q_s - q_e) / (blend**2 - duration * blend)
    q_b = q_s + accel * blend**2 / 2.0
    v_lin = ((q_s + q_e) / 2.0 - q_b) / (duration / 2.0 - blend)
    q = np.empty((tau.size, q_s.size))
    qd = np.empty_like(q)
    qdd = np.empty_like(q)
    for k, t in enumerate(tau):
        if t < blend:
            q[k], qd[k], qdd[k] = q_s + accel * t**2 / 2.0, accel * t, accel
        elif t < duration - blend:
            q[k], qd[k], qdd[k] = q_b + v_lin * (t - blend), v_lin, 0.0
        else:
            q[k] = -accel * (t - duration) ** 2 / 2.0 + q_e
            qd[k], qdd[k] = -accel * (t - duration), -accel
    return q, qd, qdd


# ---------------------------------------------------------------------- parsing


def read_caspr(path: str | Path) -> tuple[CasprTrajectory, ...]:
    """Read every joint trajectory of a CASPR ``trajectories.xml``.

    Raises:
        TrajectoryFileError: The file cannot be read or is not a valid trajectories file.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TrajectoryFileError(f"cannot read trajectory file: {exc.strerror or exc}",
                                  Location(str(path))) from None
    return parse_caspr(data, str(path))


def parse_caspr(data: bytes | str, source: str = "<string>") -> tuple[CasprTrajectory, ...]:
    """Parse every joint trajectory of a CASPR ``trajectories.xml``.

    ``source`` names the file in errors; a ``file_trajectory``'s ``filename`` is
    relative to its folder.

    Raises:
        TrajectoryFileError: Not well-formed, not ``<trajectories>``, or any invalid
            trajectory (use :func:`select_caspr` to read one whatever the others hold).
    """
    root = _parse_xml(data, source)
    return _Reader(source).trajectories(root)


def select_caspr(data: bytes | str, source: str = "<string>",
                 trajectory_id: str | None = None) -> CasprTrajectory:
    """Parse one joint trajectory of a CASPR ``trajectories.xml``.

    ``trajectory_id`` picks it (default: the first element). The others are not read,
    so one that is invalid blocks nothing.

    Raises:
        TrajectoryFileError: Not well-formed, not ``<trajectories>``, no such id (the message
            lists the file's ids), the id used twice, or the trajectory is invalid.
    """
    root = _parse_xml(data, source)
    return _Reader(source).select(root, trajectory_id)


def caspr_trajectory_ids(data: bytes | str, source: str = "<string>") -> tuple[str, ...]:
    """The ``id`` of every joint trajectory element of a ``trajectories.xml``, in file order.

    The trajectories themselves are not read; an element without an id is skipped.

    Raises:
        TrajectoryFileError: Not well-formed or not a ``<trajectories>`` document.
    """
    root = _parse_xml(data, source)
    elements = _Reader(source).trajectory_elements(root)
    return tuple(str(el.get("id")) for el in elements if el.get("id") is not None)


def _parse_xml(data: bytes | str, source: str) -> Element:
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogateescape")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_blank_text=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise TrajectoryFileError(f"not well-formed XML: {exc.msg}",
                                  Location(source, int(exc.lineno or 0))) from None
    except (etree.LxmlError, ValueError) as exc:
        raise TrajectoryFileError(f"cannot parse XML: {exc}", Location(source)) from None
    if root is None:
        raise TrajectoryFileError("empty XML document", Location(source))
    return root


class _Reader:
    """One ``_parse_<tag>`` per element; every failure names file, line and path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def path(self, el: Element) -> str:
        parts: list[str] = []
        node: Element | None = el
        while node is not None:
            tag = node.tag if isinstance(node.tag, str) else "?"
            ident = node.get("id")
            if ident is not None:
                parts.append(f"{tag}[@id='{ident}']")
            elif tag == "point" and node.getparent() is not None:
                siblings = [c for c in _children(node.getparent()) if c.tag == "point"]
                parts.append(f"point[{siblings.index(node) + 1}]")
            else:
                parts.append(tag)
            node = node.getparent()
        return "/" + "/".join(reversed(parts))

    def loc(self, el: Element) -> Location:
        return Location(self.source, int(el.sourceline or 0), self.path(el))

    def error(self, reason: str, el: Element) -> TrajectoryFileError:
        return TrajectoryFileError(reason, self.loc(el))

    # ------------------------------------------------------------------ elements

    def trajectory_elements(self, root: Element) -> list[Element]:
        """The joint trajectory elements (not read), after checking the document's frame."""
        if root.tag == "joint_trajectories":
            # CASPR lists the children of the document's first <joint_trajectories>
            # (ModelConfigBase.getJointTrajectoriesList: getElementsByTagName on the whole
            # document), which may be the root itself.
            return self.container_elements(root)
        if root.tag != "trajectories":
            raise self.error(f"root element is <{root.tag}>; a CASPR trajectory file has"
                             f" <trajectories> (or <joint_trajectories>)", root)
        containers = [c for c in _children(root) if c.tag == "joint_trajectories"]
        for child in _children(root):
            if child.tag not in ("joint_trajectories", "operational_trajectories"):
                raise self.error(f"unknown element <{child.tag}> in <trajectories>", child)
        if not containers:
            raise self.error("<trajectories> needs a <joint_trajectories> element", root)
        elements = [el for container in containers for el in _children(container)]
        if not elements:
            return self.container_elements(containers[0])  # says it holds none
        return elements

    def container_elements(self, container: Element) -> list[Element]:
        elements = _children(container)
        if not elements:
            raise self.error("<joint_trajectories> holds no trajectory", container)
        return elements

    def trajectories(self, root: Element) -> tuple[CasprTrajectory, ...]:
        out: list[CasprTrajectory] = []
        ids: dict[str, Element] = {}
        for el in self.trajectory_elements(root):
            traj = self.trajectory(el)
            if traj.id in ids:
                raise self.error(f"trajectory id {traj.id!r} is used twice (also at line"
                                 f" {ids[traj.id].sourceline})", el)
            ids[traj.id] = el
            out.append(traj)
        return tuple(out)

    def select(self, root: Element, trajectory_id: str | None) -> CasprTrajectory:
        elements = self.trajectory_elements(root)
        if trajectory_id is None:
            return self.trajectory(elements[0])
        found = [el for el in elements if el.get("id") == trajectory_id]
        if not found:
            ids = [str(el.get("id")) for el in elements if el.get("id") is not None]
            raise TrajectoryFileError(
                f"no joint trajectory with id {trajectory_id!r}; the file has"
                f" {', '.join(map(repr, ids)) or 'no ids'}", Location(self.source))
        if len(found) > 1:
            raise self.error(f"trajectory id {trajectory_id!r} is used twice (also at line"
                             f" {found[0].sourceline})", found[1])
        return self.trajectory(found[0])

    def trajectory(self, el: Element) -> CasprTrajectory:
        try:
            kind = CasprKind(el.tag)
        except ValueError:
            known = ", ".join(k.value for k in CasprKind)
            raise self.error(f"unknown trajectory kind <{el.tag}> (supported: {known})",
                             el) from None
        ident = self.attribute(el, "id")
        if not ident.strip():
            raise self.error('"id" is empty', el)
        if kind is CasprKind.FILE:
            return self.file_trajectory(el, ident)
        definition_text = self.attribute(el, "time_definition").strip()
        try:
            definition = TimeDefinition(definition_text)
        except ValueError:
            raise self.error(f'time_definition "{definition_text[:40]}" must be "absolute" or'
                             f' "relative"', el) from None
        time_step = self.number(el, "time_step", positive=True)
        blend_default = None
        if kind is CasprKind.PARABOLIC_BLEND and el.get("blend_time_default") is not None:
            blend_default = self.number(el, "blend_time_default", positive=True)
        points_el = [c for c in _children(el) if c.tag == "points"]
        notes = self.descriptive_children(el, "the <points>", ("points",))
        if len(points_el) != 1:
            raise self.error(f"<{el.tag}> needs exactly one <points> element, found"
                             f" {len(points_el)}", el)
        points = self.points(points_el[0], kind, definition)
        traj = CasprTrajectory(ident, kind, definition, time_step, blend_default, points,
                               self.loc(el), notes=notes)
        self.check_segments(traj, el)
        return traj

    def descriptive_children(self, el: Element, what: str, read: tuple[str, ...]
                             ) -> tuple[str, ...]:
        """Notes for the text-only children CASPR ignores; other unknown children are errors."""
        notes = []
        for child in _children(el):
            if child.tag in read:
                continue
            if len(child) or child.attrib:
                raise self.error(f"unknown element <{child.tag}> in <{el.tag}>", child)
            notes.append(f"{self.loc(child)}: <{child.tag}> ignored (CASPR reads only {what}"
                         f" of a {el.tag})")
        return tuple(notes)

    def file_trajectory(self, el: Element, ident: str) -> CasprTrajectory:
        """``<file_trajectory filename>``: the rows of a text file (module docstring)."""
        filename = self.attribute(el, "filename")
        if not filename.strip():
            raise self.error('"filename" is empty', el)
        notes = self.descriptive_children(el, "the filename attribute", ())
        path = Path(self.source).parent / filename
        what = f"file_trajectory {ident!r} of {self.source}:{el.sourceline}"
        try:
            if path.stat().st_size > _MAX_FILE_BYTES:
                raise self.error(f"cannot read {path}: larger than {_MAX_FILE_BYTES} bytes", el)
            data = path.read_bytes()
        except OSError as exc:
            raise self.error(f"cannot read {path}: {exc.strerror or exc}", el) from None
        time_step, samples = _read_traj_rows(data, str(path), what)
        return CasprTrajectory(ident, CasprKind.FILE, None, time_step, None, (), self.loc(el),
                               file_samples=samples, notes=notes)

    def points(self, el: Element, kind: CasprKind, definition: TimeDefinition
               ) -> tuple[CasprPoint, ...]:
        point_els = list(_children(el))
        for child in point_els:
            if child.tag != "point":
                raise self.error(f"unknown element <{child.tag}> in <points>", child)
        if len(point_els) < 2:  # noqa: PLR2004 - a trajectory is at least one segment
            raise self.error(f"a trajectory needs at least two points, found {len(point_els)}"
                             f" (CASPR builds nothing from one)", el)
        out: list[CasprPoint] = []
        for p, child in enumerate(point_els):
            out.append(self.point(child, p, len(point_els), kind, definition,
                                  out[-1] if out else None))
        return tuple(out)

    def point(self, el: Element, p: int, count: int, kind: CasprKind,  # noqa: PLR0917
              definition: TimeDefinition, previous: CasprPoint | None) -> CasprPoint:
        for child in _children(el):
            if child.tag in ("y", "y_dot", "y_ddot"):
                raise self.error(f"<{child.tag}> is an operational-space value; joint"
                                 f" trajectories give <q>", child)
            if child.tag not in ("q", "q_dot", "q_ddot"):
                raise self.error(f"unknown element <{child.tag}> in <point>", child)
        q = self.vector(el, "q", None)
        if q is None:
            raise self.error("<point> needs a <q> element", el)
        n = previous and len(previous.q)
        if n and len(q) != n:
            raise self.error(f"<q> has {len(q)} values but the first point's has {n}", el)
        first_or_last = p in (0, count - 1)
        need_dot = kind in (CasprKind.CUBIC_SPLINE, CasprKind.QUINTIC_SPLINE) or (
            kind is CasprKind.CUBIC_SPLINE_AVERAGE_VELOCITY and first_or_last)
        q_dot = self.vector(el, "q_dot", len(q))
        q_ddot = self.vector(el, "q_ddot", len(q))
        self.check_derivatives(el, kind, need_dot=need_dot and q_dot is None,
                               need_ddot=kind is CasprKind.QUINTIC_SPLINE and q_ddot is None)
        time = self.time(el, p, definition, previous)
        blend = None
        if el.get("blend_time") is not None:
            if kind is not CasprKind.PARABOLIC_BLEND:
                raise self.error(f"blend_time is only read in a parabolic_blend_trajectory,"
                                 f" not in a {kind.value}", el)
            if p == 0:
                raise self.error("blend_time on the first point: it sets the blend of the"
                                 " segment ending at its point, and none ends here", el)
            blend = self.number(el, "blend_time", positive=True)
        return CasprPoint(time, q, q_dot, q_ddot, blend, self.loc(el))

    def check_derivatives(self, el: Element, kind: CasprKind, *, need_dot: bool,
                          need_ddot: bool) -> None:
        if need_dot:
            why = (" (the first and last points of a cubic_spline_average_velocity_trajectory"
                   " give their velocity)" if kind is CasprKind.CUBIC_SPLINE_AVERAGE_VELOCITY
                   else f" in a {kind.value}")
            raise self.error(f"<point> needs a <q_dot> element{why}", el)
        if need_ddot:
            raise self.error(f"<point> needs a <q_ddot> element in a {kind.value}", el)

    def time(self, el: Element, p: int, definition: TimeDefinition,
             previous: CasprPoint | None) -> float:
        if p == 0 or previous is None:
            if el.get("time") is not None and self.number(el, "time", nonneg=True) != 0.0:
                raise self.error("the first point is at time 0 in CASPR; remove its time"
                                 " attribute or set it to 0", el)
            return 0.0
        if el.get("time") is None:
            raise self.error('<point> needs a "time" attribute (only the first point is at 0'
                             ' by default)', el)
        value = self.number(el, "time", nonneg=True)
        if definition is TimeDefinition.RELATIVE:
            if not value > 0.0:
                raise self.error(f"relative time {value:g} must be positive", el)
            value = previous.time + value
            if not math.isfinite(value):
                raise self.error("time overflows", el)
        elif not value > previous.time:
            raise self.error(f"time {value:g} is not after the previous point's"
                             f" ({previous.time:g}); absolute times must increase", el)
        if value > MAX_TIME:
            raise self.error(f"time {value:g} s is {MAX_TIME_REASON}", el)
        return value

    def check_segments(self, traj: CasprTrajectory, el: Element) -> None:
        total = 1
        for a, b in itertools.pairwise(traj.points):
            span = b.time - a.time
            steps = span / traj.time_step
            if steps < 1.0 - _STEP_TOLERANCE:
                raise self.error(f"the segment from t = {a.time:g} s to {b.time:g} s is shorter"
                                 f" than time_step {traj.time_step:g} s (CASPR cannot"
                                 f" interpolate it)", self.element_at(el, b.location))
            total += int(min(steps, MAX_SAMPLES + 1.0))  # steps may overflow to inf
            if total > MAX_SAMPLES:
                raise self.error(f"the trajectory would have more than {MAX_SAMPLES} samples"
                                 f" (time_step {traj.time_step:g} s, duration up to"
                                 f" {b.time:g} s)", el)
            if traj.kind is CasprKind.PARABOLIC_BLEND:
                blend = b.blend_time if b.blend_time is not None else traj.blend_time_default
                if blend is None:
                    raise self.error("the parabolic_blend_trajectory needs a blend_time_default"
                                     " attribute (or a blend_time on every point after the"
                                     " first)", el)
                sampled = _colon(a.time, traj.time_step, b.time)
                sampled_span = float(sampled[-1] - sampled[0])
                if not 2.0 * blend < min(span, sampled_span):
                    raise self.error(
                        f"blend time {blend:g} s: the segment from t = {a.time:g} s to"
                        f" {b.time:g} s (sampled over {sampled_span:g} s) must be longer than"
                        f" twice the blend time", self.element_at(el, b.location))

    def element_at(self, trajectory_el: Element, location: Location) -> Element:
        """The point element at ``location`` (for an error's line), else the trajectory."""
        for point in trajectory_el.iter("point"):
            if self.path(point) == location.path:
                return point
        return trajectory_el

    # ------------------------------------------------------------------ values

    def attribute(self, el: Element, name: str) -> str:
        value = el.get(name)
        if value is None:
            raise self.error(f'<{el.tag}> needs a "{name}" attribute', el)
        return str(value)

    def number(self, el: Element, name: str, *, positive: bool = False,
               nonneg: bool = False) -> float:
        text = self.attribute(el, name).strip()
        if not _NUMBER.match(text):
            raise self.error(f'{name}="{text[:40]}" is not a number', el)
        value = float(text)
        if not math.isfinite(value):
            raise self.error(f"{name} {text[:40]} is not finite", el)
        if positive and not value > 0.0:
            raise self.error(f"{name} must be positive, got {value:g}", el)
        if nonneg and value < 0.0:
            raise self.error(f"{name} must not be negative, got {value:g}", el)
        return value

    def vector(self, el: Element, tag: str, size: int | None) -> tuple[float, ...] | None:
        found = [c for c in _children(el) if c.tag == tag]
        if not found:
            return None
        if len(found) > 1:
            raise self.error(f"<point> has {len(found)} <{tag}> elements", found[1])
        child = found[0]
        if len(child):
            raise self.error(f"<{tag}> holds elements; it holds numbers", child)
        tokens = [t for t in _SEPARATORS.split((child.text or "").strip()) if t]
        if not tokens:
            raise self.error(f"<{tag}> is empty", child)
        values = []
        for token in tokens:
            if not _NUMBER.match(token):
                raise self.error(f"<{tag}>: {token[:40]!r} is not a number", child)
            value = float(token)
            if not math.isfinite(value):
                raise self.error(f"<{tag}>: {token[:40]} is not finite", child)
            values.append(value)
        if size is not None and len(values) != size:
            raise self.error(f"<{tag}> has {len(values)} values; <q> has {size}", child)
        return tuple(values)


def _read_traj_rows(data: bytes, source: str, what: str) -> tuple[float, CasprSamples]:
    """CASPR's ``FileTrajectoryCreate``: ``time_step,<dt>`` then rows of t, p, v, a."""

    def fail(reason: str, line: int) -> TrajectoryFileError:
        return TrajectoryFileError(f"{reason} ({what})", Location(source, line))

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not a text file (bad UTF-8 at byte {exc.start})", 0) from None
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    while len(lines) > 1 and not lines[-1].strip():  # a newline after the last row
        lines.pop()
    time_step = _traj_time_step(lines[0], fail)
    rows = lines[1:]
    if len(rows) < 2:  # noqa: PLR2004 - a trajectory is at least one segment
        raise fail(f"a file trajectory needs at least two rows, found {len(rows)}", 1)
    if len(rows) > MAX_SAMPLES:
        raise fail(f"more than {MAX_SAMPLES} rows", MAX_SAMPLES + 2)
    total = (len(rows) - 1) * time_step
    if total > MAX_TIME:
        raise fail(f"the last row's time {total:g} s is {MAX_TIME_REASON}", len(rows) + 1)
    values: list[list[float]] = []
    expected = 0.0  # FileTrajectoryCreate adds time_step per row and compares
    for number, line in enumerate(rows, start=2):
        values.append(_traj_row(line, number, expected, time_step,
                                len(values[0]) // 3 if values else 0, fail))
        expected += time_step
    width = len(values[0]) // 3
    times = _colon(0.0, time_step, total)
    if times.size != len(rows):  # 0:dt:total has one sample per row
        times = time_step * np.arange(len(rows), dtype=np.float64)
    table = np.asarray(values, dtype=np.float64)
    return time_step, CasprSamples(times, table[:, :width], table[:, width:2 * width],
                                   table[:, 2 * width:])


def _traj_row(line: str, number: int, expected: float, time_step: float, width: int,  # noqa: PLR0917
              fail: Callable[[str, int], TrajectoryFileError]) -> list[float]:
    """One row's positions, velocities and accelerations (``width`` each; 0: any)."""
    row = _TRAJ_ROW.match(line.strip())
    if row is None:
        raise fail(f"a row is {_TRAJ_ROW_FORM}", number)
    t = _traj_numbers(row.group("t"), "time", number, fail)[0]
    if not abs(expected - t) <= _FILE_TIME_TOLERANCE:
        raise fail(f"time {t:.9g} s, expected {expected:.9g} s (rows are time_step"
                   f" {time_step:g} s apart from 0, within {_FILE_TIME_TOLERANCE:g} s)", number)
    out: list[float] = []
    for key, name in (("p", "position"), ("v", "velocity"), ("a", "acceleration")):
        vector = _traj_numbers(row.group(key), name, number, fail)
        width = width or len(vector)
        if len(vector) != width:
            raise fail(f"{len(vector)} {name}(s), the first row has {width}", number)
        out.extend(vector)
    return out


def _traj_time_step(line: str, fail: Callable[[str, int], TrajectoryFileError]) -> float:
    header = _TRAJ_HEADER.match(line.strip())
    if header is None:
        raise fail("the first line must be 'time_step,<seconds>'", 1)
    step_text = header.group(1).strip()
    if not _NUMBER.match(step_text) or not 0.0 < float(step_text) < math.inf:
        raise fail(f"time_step must be positive, got {step_text[:40]!r}", 1)
    return float(step_text)


def _traj_numbers(text: str, name: str, line: int,
                  fail: Callable[[str, int], TrajectoryFileError]) -> list[float]:
    out = []
    for token in text.split(","):
        token = token.strip()  # noqa: PLW2901
        if not _NUMBER.match(token) or not math.isfinite(float(token)):
            raise fail(f"{name} {token[:40]!r} is not a number", line)
        out.append(float(token))
    return out


def _children(el: Element) -> list[Element]:
    """Child elements (comments and processing instructions skipped)."""
    return [c for c in el if isinstance(c.tag, str)]

