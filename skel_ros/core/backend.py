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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from skel_ros.model.limits import CommandKind

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    import numpy.typing as npt

    from skel_ros.model.limits import LimitSet
    from skel_ros.model.types import Array

__all__ = ["ALL_KINDS", "Capabilities", "CoreLink", "RobotBackend", "RobotState"]

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


class CoreLink(Protocol):
    """What a backend may tell the core above it: motion stopped or started by itself."""

    def stop_trajectory(self, message: str, now: float | None = None) -> bool:
        """End the trajectory being followed (an e-stop, a fault, a disable)."""
        ...

    def restart_timeout(self, now: float) -> None:
        """Count the command timeout from ``now`` (motion starts: an enable)."""
        ...

    def disarm_timeout(self) -> None:
        """Stop counting the command timeout (power off: nothing to guard)."""
        ...


class _NoCore:
    """The link of a backend no core drives (tools, tests): nothing to tell."""

    def stop_trajectory(self, message: str, now: float | None = None) -> bool:  # noqa: ARG002
        return False

    def restart_timeout(self, now: float) -> None:
        pass

    def disarm_timeout(self) -> None:
        pass


_NO_CORE = _NoCore()


class RobotBackend(abc.ABC):
    """One robot's joints behind the core; subclasses fill in the abstract methods.

    A backend declares what it takes and the core checks it, once per command: the
    backend never checks again (its :meth:`write` gets values through the core's
    gate, :meth:`RobotCore.gate <skel_ros.core.RobotCore.gate>`).

    Attributes:
        names: DOF names, in the order of every array (the model's DOF order).
        limits: The limits of every DOF a command may name (the model's, tightened
            where the configuration says so): at least :attr:`names`; a DOF of the
            model that the backend does not drive (hardware without an actuator for
            it) may be in it, and commands for it are left out and said once.
        capabilities: What it can do, with the command kinds each DOF takes.
    """

    names: tuple[str, ...]
    limits: LimitSet
    capabilities: Capabilities = Capabilities()
    period: float = 0.01
    """Seconds between two cycles (an engine's time step; the hardware's control period)."""

    _core: CoreLink = _NO_CORE
    _wake_loop: Callable[[], None] = staticmethod(lambda: None)

    # ---------------------------------------------------------------- links

    def bind_core(self, core: CoreLink) -> None:
        """The core this backend serves (the core calls it once, when it is made)."""
        self._core = core

    def bind_wake(self, wake: Callable[[], None]) -> None:
        """How to wake the loop that runs this backend (the runner calls it once)."""
        self._wake_loop = wake

    # ---------------------------------------------------------------- lifecycle

    def configure(self) -> None:  # noqa: B027 - optional step
        """Connect or build; nothing moves (power stays off)."""

    def activate(self) -> None:  # noqa: B027 - optional step
        """Power on, holding the measured positions (nothing jumps)."""

    def deactivate(self) -> None:  # noqa: B027 - optional step
        """Power off (no motion until the next :meth:`activate`)."""

    def close(self) -> None:  # noqa: B027 - optional step
        """Release everything (power off first where there is power)."""

    # ---------------------------------------------------------------- the loop's calls

    def cycle_time(self, count: int = 1) -> float:
        """The backend time the next ``count`` cycles end at (hardware: the clock now)."""
        return self.now() + count * self.period

    def sense(self, now: float) -> None:  # noqa: B027 - optional step
        """The read half of a cycle at ``now``: read the devices (an engine: nothing)."""

    @abc.abstractmethod
    def actuate(self, now: float, count: int = 1) -> None:
        """The write half: write the targets (hardware), or step the world ``count`` times.

        ``count`` > 1 only for a backend with its own clock (an engine), for cycles in
        which the core had nothing to do.
        """

    def serve(self, now: float) -> bool:  # noqa: ARG002 - optional step
        """Work between cycles, when the backend woke the loop (an e-stop, a request).

        Returns:
            Whether something changed that the loop's listener should hear of.
        """
        return False

    # ---------------------------------------------------------------- time and state

    @abc.abstractmethod
    def now(self) -> float:
        """The backend's time base in seconds (simulated time, or a monotonic clock)."""

    @abc.abstractmethod
    def read(self, now: float) -> RobotState:
        """The latest measurement (does not wait for the devices)."""

    # ---------------------------------------------------------------- commands

    def refusal(self) -> str:
        """Why commands are not taken now (power off, e-stop, fault), or ``""``."""
        return ""

    @abc.abstractmethod
    def write(self, now: float, kind: CommandKind, index: npt.NDArray[np.intp],
              values: Array) -> None:
        """Hold ``values`` (already through the core's gate) for the DOFs at ``index``.

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
