"""Joint time series: what one stream (command, simulation, hardware) did over a run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from skel_ros.analysis.errors import AnalysisError

if TYPE_CHECKING:
    from collections.abc import Sequence

Array = npt.NDArray[np.float64]


def _frozen(a: npt.ArrayLike, shape: tuple[int, ...], what: str) -> Array:
    out = np.array(a, dtype=np.float64)
    if out.shape != shape:
        raise AnalysisError(f"{what}: shape {out.shape}, expected {shape}")
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class JointSeries:
    """Samples of some joints over time; NaN where a sample lacks a value.

    Attributes:
        name: the stream's name (``"command"``, ``"sim"``, ``"real"``).
        times: seconds, shape (N,), non-decreasing.
        joint_names: the joints, shape (J,).
        positions, velocities, efforts: shape (N, J).
        time_base: ``"stamp"`` when ``times`` are the messages' header stamps, ``"log"``
            when they are when the recorder received them (or a synthetic series).
        time_base_note: why a stream with stamps is not placed at them ("" otherwise).
        held: each sample is a target the robot holds until the next one (a stream of
            JointState commands: :meth:`held_at` is what the robot was sent), not a
            sample of a continuous signal.
    """

    name: str
    times: Array
    joint_names: tuple[str, ...]
    positions: Array
    velocities: Array
    efforts: Array
    time_base: str = "log"
    time_base_note: str = ""
    held: bool = False

    @classmethod
    def from_samples(  # noqa: PLR0917 - mirrors the JointState fields
        cls,
        name: str,
        times: Sequence[float] | npt.ArrayLike,
        joint_names: Sequence[str],
        positions: npt.ArrayLike,
        velocities: npt.ArrayLike | None = None,
        efforts: npt.ArrayLike | None = None,
        *,
        time_base: str = "log",
        time_base_note: str = "",
        held: bool = False,
    ) -> JointSeries:
        """Build a series, sorting the samples by time.

        Raises:
            AnalysisError: inconsistent shapes or duplicated joint names.
        """
        names = tuple(joint_names)
        if len(set(names)) != len(names):
            raise AnalysisError(f"{name}: duplicated joint names in {names}")
        t = np.asarray(times, dtype=np.float64)
        if t.ndim != 1 or not np.all(np.isfinite(t)):
            raise AnalysisError(f"{name}: times must be a finite 1-D sequence")
        shape = (t.size, len(names))
        nan = np.full(shape, np.nan)
        order = np.argsort(t, kind="stable")
        pos = _frozen(positions, shape, f"{name} positions")[order]
        vel = nan if velocities is None else _frozen(velocities, shape, f"{name} velocities")[order]
        eff = nan if efforts is None else _frozen(efforts, shape, f"{name} efforts")[order]
        fields = [np.array(a) for a in (t[order], pos, vel, eff)]
        for a in fields:
            a.setflags(write=False)
        return cls(name, fields[0], names, fields[1], fields[2], fields[3], time_base,
                   time_base_note, held)

    def __len__(self) -> int:
        return int(self.times.size)

    def column(self, joint: str, field: str = "positions") -> Array:
        """One joint's samples of ``positions``, ``velocities`` or ``efforts``."""
        data: Array = getattr(self, field)
        return data[:, self.joint_names.index(joint)]

    def resample(self, joint: str, grid: Array, field: str = "positions") -> Array:
        """Linear interpolation of one joint onto ``grid`` (NaN outside the samples).

        Samples with NaN are skipped, so a stream that publishes only some joints per
        message still interpolates between the messages that carried the joint.
        """
        values = self.column(joint, field)
        ok = np.isfinite(values)
        if ok.sum() < 2:  # noqa: PLR2004 - interpolation needs two samples
            return np.full(grid.shape, np.nan)
        t, v = self.times[ok], values[ok]
        out = np.interp(grid, t, v)
        out[(grid < t[0]) | (grid > t[-1])] = np.nan
        return out

    def target_at(self, joint: str, times: Array) -> Array:
        """A command stream's position target of one joint at ``times``, as the robot had it.

        Held from each sample to the next (:meth:`held_at`) for a :attr:`held` series,
        else linear between the samples (:meth:`resample`); NaN outside their span.
        """
        return (self.held_at if self.held else self.resample)(joint, times)

    def held_at(self, joint: str, times: Array, field: str = "positions") -> Array:
        """One joint's last sample at or before each of ``times``.

        What a robot that holds each target until the next one was sent (:attr:`held`).
        NaN outside the samples' span, as in :meth:`resample` (after the last target the
        robot may stop holding it: a command timeout); samples with NaN are skipped.
        """
        values = self.column(joint, field)
        ok = np.isfinite(values)
        if not ok.any():
            return np.full(np.shape(times), np.nan)
        t, v = self.times[ok], values[ok]
        at = np.searchsorted(t, times, side="right") - 1
        out = v[np.clip(at, 0, None)]
        return np.where((at >= 0) & (times <= t[-1]), out, np.nan)
