"""The backend seam: what the robot core asks of a simulator or of hardware.

A :class:`RobotBackend` is one robot's joints, wherever they are: a simulated world,
DART's or MuJoCo's (:class:`skel_ros.sim.backend.EngineBackend`), the buses of a
hardware configuration (:class:`skel_ros.hardware.backend.HardwareBackend`), or a few
lines of numpy in the test suite. The :class:`~skel_ros.core.RobotCore` above it
decides what is commanded (which command wins, the limits, the trajectory, the
timeout); the backend applies it and measures. As in ros2_control's
``SystemInterface``, the lifecycle calls mean hardware states: configured =
communicating with power off, active = power on.

A backend holds its commands until they are replaced (a servo holds its goal, the
simulation's position controllers hold theirs); :meth:`RobotBackend.write` is called
when the core changes some of them, not necessarily every cycle.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import numpy.typing as npt

    from skel_ros.model.limits import CheckResult
    from skel_ros.model.types import Array

__all__ = ["ALL_KINDS", "Capabilities", "RobotBackend", "RobotState"]

ALL_KINDS: frozenset[CommandKind] = frozenset(CommandKind)
"""Every command kind (a DOF that takes any)."""


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do, so that a shell offers only what applies.

    Attributes:
        has_clock: It keeps its own time (an engine's simulated time, advanced by
            stepping); False: its time is a wall clock.
        can_pause: Its time can be stopped and stepped by hand (``~/pause``, ``~/step``).
        can_reset: It can go back to its initial state (``~/reset``).
        has_faults: Its devices report faults, and :meth:`RobotBackend.refusal` may
            refuse commands (power off, e-stop, fault): enable / e-stop apply.
        command_modes: Per DOF (in :attr:`RobotBackend.names` order), the command
            kinds it takes; empty: any kind for every DOF.
    """

    has_clock: bool = False
    can_pause: bool = False
    can_reset: bool = False
    has_faults: bool = False
    command_modes: tuple[frozenset[CommandKind], ...] = field(default=())


@dataclass(frozen=True, eq=False)
class RobotState:
    """What a backend measured, per DOF in :attr:`RobotBackend.names` order.

    Attributes:
        stamp: When it was measured, in the backend's time base (NaN: never).
        positions, velocities, efforts: The values; the last known one where a DOF is
            not fresh, NaN where never known (or not measured: efforts of some devices).
        fresh: Per DOF, whether the value was measured at ``stamp`` (bool array); a
            stale value is never published as fresh.
    """

    stamp: float
    positions: Array
    velocities: Array
    efforts: Array
    fresh: npt.NDArray[np.bool_]


class RobotBackend(abc.ABC):
    """One robot's joints behind the core; subclasses fill in the abstract methods.

    Attributes:
        names: DOF names, in the order of every array (the model's DOF order).
        capabilities: What it can do.
    """

    names: tuple[str, ...]
    capabilities: Capabilities = Capabilities()

    # ---------------------------------------------------------------- lifecycle

    def configure(self) -> None:  # noqa: B027 - optional step
        """Connect or build; nothing moves (power stays off)."""

    def activate(self) -> None:  # noqa: B027 - optional step
        """Power on, holding the measured positions (nothing jumps)."""

    def deactivate(self) -> None:  # noqa: B027 - optional step
        """Power off (no motion until the next :meth:`activate`)."""

    def close(self) -> None:  # noqa: B027 - optional step
        """Release everything (power off first where there is power)."""

    # ---------------------------------------------------------------- time and state

    @abc.abstractmethod
    def now(self) -> float:
        """The backend's time base in seconds (simulated time, or a monotonic clock)."""

    @abc.abstractmethod
    def read(self, now: float) -> RobotState:
        """The latest measurement (does not wait for the devices)."""

    # ---------------------------------------------------------------- commands

    @abc.abstractmethod
    def check(self, kind: CommandKind, names: Sequence[str],
              values: npt.ArrayLike) -> CheckResult:
        """The limits gate of these joints: validate a command and clamp it.

        Returns:
            The model's limits module's result (``ok`` False: refused whole, with
            ``reason``). ``names`` and ``values`` of the result are what to write:
            a backend may leave out DOFs it does not drive (and say so itself).
        """

    def refusal(self) -> str:
        """Why commands are not taken now (power off, e-stop, fault), or ``""``."""
        return ""

    @abc.abstractmethod
    def write(self, now: float, kind: CommandKind, index: npt.NDArray[np.intp],
              values: Array) -> None:
        """Hold ``values`` (already through :meth:`check`) for the DOFs at ``index``.

        Called from any thread that hands in a command, and from the control loop for
        trajectory samples; the backend applies it at its next cycle at the latest.
        """

    @abc.abstractmethod
    def hold(self, now: float, index: npt.NDArray[np.intp]) -> None:
        """Stop the DOFs at ``index`` where they are now (trajectory cancelled or aborted)."""

    @abc.abstractmethod
    def start_positions(self, index: npt.NDArray[np.intp]) -> Array:
        """Where a new trajectory for the DOFs at ``index`` starts (their targets now)."""

    @abc.abstractmethod
    def on_timeout(self, now: float, timeout: float) -> str:
        """Apply the safe state: no command for ``timeout`` seconds.

        Returns:
            A line for the log, or ``""`` when nothing changed (or it logged itself).
        """


class _Checks(Protocol):
    def check(self, kind: CommandKind, names: Sequence[str],
              values: npt.ArrayLike) -> CheckResult: ...


def gate(limits: _Checks, kind: CommandKind, names: Sequence[str], values: npt.ArrayLike, *,
         modes: Sequence[frozenset[CommandKind]] = (),
         index: Mapping[str, int] | None = None) -> CheckResult:
    """The usual gate: the limit set's check, then each DOF's command modes.

    Args:
        limits: A :class:`~skel_ros.model.limits.LimitSet` (or anything with its ``check``).
        kind: What the values are.
        names: DOF names, one per value.
        values: The requested values.
        modes: Per DOF, the kinds it takes (empty: any kind for every DOF).
        index: DOF name -> index in ``modes`` (needed with ``modes``).
    """
    result = limits.check(kind, names, values)
    if not result.ok or not modes or index is None:
        return result
    for name in result.names:
        i = index.get(name)
        if i is not None and kind not in modes[i]:
            taken = ", ".join(sorted(k.value for k in modes[i])) or "no"
            return replace(result, ok=False, reason=f"DOF {name!r} takes {taken} commands,"
                                                    f" not {kind.value}",
                           indices=np.zeros(0, dtype=np.intp), values=np.zeros(0),
                           requested=np.zeros(0), clamped=())
    return result
