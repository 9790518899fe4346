"""A joint trajectory given as timed points, sampled as joint_trajectory_controller does.

``PointTrajectory`` is the ROS-free twin of ``trajectory_msgs/JointTrajectory``:
named joints and points with ``time_from_start``. :meth:`PointTrajectory.sample`
interpolates each segment the way ros2_control's joint_trajectory_controller does:

* quintic if both ends have positions, velocities and accelerations;
* cubic Hermite if both ends have positions and velocities;
* linear otherwise (velocity is the slope, acceleration zero).

Before the first point the trajectory runs from ``start_positions`` at ``t = 0``
(at rest: zero velocity and acceleration, so that segment takes the first point's
kind). Without ``start_positions``, or when the first point is at ``t = 0``, it
holds the first point until its time. Before ``t = 0`` it holds the start; after
the last point it holds the last positions with zero velocity and acceleration.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.trajectory.errors import TrajectoryError
from skel_ros.trajectory.polynomials import FloatArray, cubic, evaluate, linear, quintic

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MAX_PLAY_RATE", "MAX_TIME", "MAX_TIME_REASON", "PointTrajectory", "TrajectoryPoint",
           "duration_parts"]

#: The latest ``time_from_start`` (s): 2**31, the longest ``builtin_interfaces/Duration``
#: (``sec`` is an int32; 2**31 - 1 s + 999999999 ns rounds to it), 68 years. Far beyond it a
#: segment's polynomial cannot be computed in doubles, and no ROS message could carry
#: the time anyway.
MAX_TIME = float(2**31)
#: What every reader says of a later time.
MAX_TIME_REASON = f"beyond {MAX_TIME:.0f} s (the longest ROS Duration, 68 years)"
#: The highest rate (Hz) a trajectory is played at: the trajectory_player's stream
#: commands and ``skel-ros play --print`` lines; the rate is in ``(0, MAX_PLAY_RATE]``.
MAX_PLAY_RATE = 1_000.0
_NANOSEC = 1_000_000_000


def duration_parts(seconds: float) -> tuple[int, int]:
    """``(sec, nanosec)`` of a ``builtin_interfaces/Duration`` for ``seconds`` >= 0.

    Rounded to the nearest nanosecond (the message's resolution): points whose times
    round to the same ``(sec, nanosec)`` would reach a receiver at the same time, so
    :class:`PointTrajectory` and the file readers refuse them.
    """
    sec = math.floor(seconds)
    nanosec = round((seconds - sec) * 1e9)
    if nanosec >= _NANOSEC:
        sec, nanosec = sec + 1, nanosec - _NANOSEC
    return int(sec), int(nanosec)


@dataclass(frozen=True)
class TrajectoryPoint:
    """One point: where the joints are ``time_from_start`` seconds after the start.

    Attributes:
        time_from_start: Seconds from the trajectory start (>= 0).
        positions: One position per joint (rad or m).
        velocities: One velocity per joint, or None (an empty tuple counts as None).
        accelerations: One acceleration per joint, or None (needs velocities).
    """

    time_from_start: float
    positions: tuple[float, ...]
    velocities: tuple[float, ...] | None = None
    accelerations: tuple[float, ...] | None = None


@dataclass(frozen=True)
class _Knot:
    time: float
    pos: FloatArray
    vel: FloatArray | None
    acc: FloatArray | None


class PointTrajectory:
    """Named joints moved through timed points.

    Args:
        joint_names: The joints, in the order of each point's values (unique, non-empty).
        points: At least one point; times >= 0, increasing by at least 1 ns.
        start_positions: Where the joints are at ``t = 0`` when the first point is later.
        source: Where the trajectory comes from (e.g. ``"traj.xml (joint trajectory 'a')"``),
            for messages; None when it was built in code.

    Raises:
        TrajectoryError: the names, a point or the start positions are invalid; the
            message names the point index and the joint.
    """

    def __init__(self, joint_names: Sequence[str], points: Sequence[TrajectoryPoint],
                 start_positions: Sequence[float] | None = None, *,
                 source: str | None = None) -> None:
        self._names = _check_names(joint_names)
        self._source = source
        n = len(self._names)
        if len(points) == 0:
            raise TrajectoryError("a trajectory needs at least one point")
        knots = [_check_point(i, p, self._names) for i, p in enumerate(points)]
        for i in range(1, len(knots)):
            if not duration_parts(knots[i].time) > duration_parts(knots[i - 1].time):
                raise TrajectoryError(
                    f"point {i}: time_from_start {knots[i].time:.12g} s is not after point"
                    f" {i - 1} ({knots[i - 1].time:.12g} s); times must be strictly increasing,"
                    f" at least 1 ns apart (a ROS Duration counts whole nanoseconds)")
        self._points = tuple(points)
        self._start: tuple[float, ...] | None = None
        if start_positions is not None:
            start = _vector(start_positions, n, "start_positions", self._names)
            self._start = tuple(float(x) for x in start)
            if knots[0].time > 0.0:
                zero = np.zeros(n)
                knots.insert(0, _Knot(0.0, start, zero, zero))
        if knots[0].time > 0.0:
            knots.insert(0, _Knot(0.0, knots[0].pos, None, None))  # hold the first point
        self._times = [k.time for k in knots]
        self._first = knots[0].pos
        self._last = knots[-1].pos
        with np.errstate(all="ignore"):
            self._coeffs = [_segment(a, b) for a, b in itertools.pairwise(knots)]
        for i, c in enumerate(self._coeffs):
            if not np.isfinite(c).all():
                raise TrajectoryError(
                    f"the segment from t = {knots[i].time:g} s to {knots[i + 1].time:g} s"
                    f" overflows (values too large for its duration)")
        # A single point at t = 0 has no segment: sample() holds it.

    @property
    def joint_names(self) -> tuple[str, ...]:
        """The joints, in the order of the sampled arrays."""
        return self._names

    @property
    def duration(self) -> float:
        """Seconds from the start to the last point."""
        return self._times[-1]

    @property
    def points(self) -> tuple[TrajectoryPoint, ...]:
        """The points as given."""
        return self._points

    @property
    def source(self) -> str | None:
        """Where the trajectory comes from (file and trajectory id), or None."""
        return self._source

    @property
    def start_positions(self) -> tuple[float, ...] | None:
        """The positions at ``t = 0`` given to the constructor, if any."""
        return self._start

    def sample(self, t: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Positions, velocities and accelerations ``t`` seconds after the start.

        Raises:
            TrajectoryError: ``t`` is not a finite number.
        """
        try:
            t = float(t)
        except (TypeError, ValueError):
            raise TrajectoryError(f"sample time {t!r} is not a number") from None
        if not math.isfinite(t):
            raise TrajectoryError(f"sample time {t} is not finite")
        n = len(self._names)
        if t < 0.0 or not self._coeffs:
            return self._first.copy(), np.zeros(n), np.zeros(n)
        if t > self.duration:
            return self._last.copy(), np.zeros(n), np.zeros(n)
        i = min(bisect.bisect_right(self._times, t) - 1, len(self._coeffs) - 1)
        with np.errstate(all="ignore"):
            return evaluate(self._coeffs[i], t - self._times[i])

    def __repr__(self) -> str:
        return (f"PointTrajectory(joints={list(self._names)}, points={len(self._points)},"
                f" duration={self.duration:g})")


def _check_names(joint_names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(joint_names, str):
        raise TrajectoryError(f"joint_names must be a list of names, not the string"
                              f" {joint_names!r}")
    names = tuple(joint_names)
    if not names:
        raise TrajectoryError("joint_names is empty")
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        value: object = name  # callers may hand in anything
        if not isinstance(value, str) or not value:
            raise TrajectoryError(f"joint_names[{i}] is {name!r}, not a non-empty string")
        if name in seen:
            raise TrajectoryError(f"joint name {name!r} appears twice (joint_names[{seen[name]}]"
                                  f" and joint_names[{i}])")
        seen[name] = i
    return names


def _vector(values: object, n: int, what: str, names: tuple[str, ...]) -> FloatArray:
    if isinstance(values, (str, bytes)):
        raise TrajectoryError(f"{what} is a string, not a list of numbers")
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TrajectoryError(f"{what} is not a list of numbers: {exc}") from None
    if arr.ndim != 1 or arr.size != n:
        raise TrajectoryError(f"{what} has {arr.size if arr.ndim == 1 else arr.shape} values,"
                              f" expected {n} (one per joint)")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        j = int(bad[0])
        raise TrajectoryError(f"{what}: joint {names[j]!r} is {arr[j]}, not a finite number")
    return arr


def _check_point(i: int, point: TrajectoryPoint, names: tuple[str, ...]) -> _Knot:
    if not isinstance(point, TrajectoryPoint):
        raise TrajectoryError(f"point {i} is a {type(point).__name__}, not a TrajectoryPoint")
    try:
        time = float(point.time_from_start)
    except (TypeError, ValueError):
        raise TrajectoryError(f"point {i}: time_from_start {point.time_from_start!r} is not"
                              f" a number") from None
    if not math.isfinite(time) or time < 0.0:
        raise TrajectoryError(f"point {i}: time_from_start {time} must be finite and >= 0")
    if time > MAX_TIME:
        raise TrajectoryError(f"point {i}: time_from_start {time:g} s is {MAX_TIME_REASON}")
    n = len(names)
    pos = _vector(point.positions, n, f"point {i} positions", names)
    vel = None if _absent(point.velocities) else _vector(
        point.velocities, n, f"point {i} velocities", names)
    acc = None if _absent(point.accelerations) else _vector(
        point.accelerations, n, f"point {i} accelerations", names)
    if acc is not None and vel is None:
        raise TrajectoryError(f"point {i} has accelerations but no velocities"
                              f" (quintic interpolation needs both)")
    return _Knot(time, pos, vel, acc)


def _absent(values: object) -> bool:
    """None or an empty container (ROS messages carry empty arrays for absent fields)."""
    if values is None:
        return True
    if isinstance(values, (str, bytes)):
        return False
    try:
        return len(values) == 0  # type: ignore[arg-type]
    except TypeError:
        return False


def _segment(a: _Knot, b: _Knot) -> FloatArray:
    duration = b.time - a.time
    if a.vel is not None and b.vel is not None:
        if a.acc is not None and b.acc is not None:
            return quintic(a.pos, a.vel, a.acc, b.pos, b.vel, b.acc, duration)
        return cubic(a.pos, a.vel, b.pos, b.vel, duration)
    return linear(a.pos, b.pos, duration)
