"""The engine backend: a :class:`~skel_ros.sim.engine.SimEngine` behind the robot core's seam.

The simulator is one more :class:`~skel_ros.core.RobotBackend`, as in gz_ros2_control:
whatever drives the robot (:class:`~skel_ros.core.RobotCore`, and the nodes over it)
cannot tell it from hardware. Its time base is simulated time; it is passive: the
:class:`~skel_ros.core.Runner` steps it (:meth:`EngineBackend.actuate`) and runs the
core's :meth:`~skel_ros.core.RobotCore.cycle` before every step, for the time the step
ends at. Commands reach it through the core's gate, and are applied without a second
check (:meth:`~skel_ros.sim.engine.SimEngine.apply_checked`). It has no power to
switch (``activate`` holds every actuated DOF at its initial position, ``deactivate``
drops every command), and every DOF is measured every step.

Its safe state is that of a DOF without a command (the command timeout, ``deactivate``,
``hold_initial`` false, a reset without it), per actuator type: ``force`` and
``passive`` joints limp, ``servo`` and ``velocity`` joints held at velocity 0,
``acceleration`` joints braked to rest within their acceleration limits (the backend
turns the engine's braking on: DART alone would let a moving one coast for ever),
``locked`` joints locked (:mod:`skel_ros.sim.actuation`).

The engine may be DART's (:class:`~skel_ros.sim.engine.SimEngine`) or MuJoCo's
(:class:`~skel_ros.sim.mujoco_engine.MujocoEngine` offers the same calls).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skel_ros.core import Capabilities, RobotBackend, RobotState
from skel_ros.model.limits import CommandKind
from skel_ros.sim.errors import CommandError

if TYPE_CHECKING:
    import numpy.typing as npt

    from skel_ros.model.types import Array
    from skel_ros.sim.engine import SimEngine

__all__ = ["EngineBackend"]

class EngineBackend(RobotBackend):
    """A simulated robot: the DOFs of every skeleton of a :class:`SimEngine` (public names).

    Args:
        engine: The engine (built; the runner steps it).
        hold_initial: :meth:`activate` holds every actuated DOF at its initial position
            (a powered robot before its first command); False: every DOF stays in its
            safe state (module docstring) until commanded.

    The engine's braking (:meth:`SimEngine.set_braking`) is turned on.
    """

    def __init__(self, engine: SimEngine, *, hold_initial: bool = True) -> None:
        self.engine = engine
        engine.set_braking(True)
        self.names = engine.dof_names
        self.limits = engine.limits
        self.period = engine.time_step
        self.hold_initial = hold_initial
        self.held: tuple[str, ...] = ()
        """The DOFs the last :meth:`activate` held at their initial positions."""
        self._fresh = np.ones(len(self.names), dtype=bool)
        self._fresh.setflags(write=False)
        self.capabilities = Capabilities(has_clock=True, can_pause=True, can_reset=True,
                                         command_modes=self._modes())

    def _modes(self) -> tuple[frozenset[CommandKind], ...]:
        """The kinds each DOF takes, as the engine's actuation decides (asked, not copied)."""
        out = []
        for name in self.names:
            kinds = set()
            for kind in CommandKind:
                try:
                    self.engine.check_commands(kind.value, [name], [0.0])
                except CommandError:
                    continue
                kinds.add(kind)
            out.append(frozenset(kinds))
        return tuple(out)

    # ---------------------------------------------------------------- lifecycle

    def activate(self) -> None:
        """Hold every actuated DOF at its initial position (with ``hold_initial``)."""
        self.held = self.engine.hold_initial_positions() if self.hold_initial else ()

    def deactivate(self) -> None:
        """Drop every command: every DOF goes to its safe state (module docstring)."""
        self.engine.clear_commands()

    def reset(self) -> None:
        """Back to the initial state (time 0, no commands), then :meth:`activate`."""
        self.engine.reset()
        self.activate()

    # ---------------------------------------------------------------- the loop's calls

    def actuate(self, now: float, count: int = 1) -> None:  # noqa: ARG002 - its own time
        """Step the world ``count`` times (the commands held are applied before each)."""
        self.engine.step(count)

    # ---------------------------------------------------------------- time and state

    def now(self) -> float:
        """Simulated time."""
        return self.engine.time

    def read(self, now: float) -> RobotState:  # noqa: ARG002 - the engine's time is the stamp
        """The engine's state now; every DOF is fresh."""
        positions, velocities, efforts = self.engine.state()
        return RobotState(self.engine.time, positions, velocities, efforts, self._fresh)

    # ---------------------------------------------------------------- commands

    def write(self, now: float, kind: CommandKind,  # noqa: ARG002 - held until replaced
              index: npt.NDArray[np.intp], values: Array) -> None:
        """Hold the command in the engine (applied before every step); the core checked it."""
        self.engine.apply_checked(kind.value, index, values)

    def hold(self, now: float, index: npt.NDArray[np.intp]) -> None:  # noqa: ARG002
        """Hold the position-commanded DOFs among ``index`` where they are now."""
        index = np.asarray(index, dtype=np.intp)
        held = index[~np.isnan(self.engine.position_targets()[index])]
        if held.size:
            self.engine.set_commands("position", [self.names[i] for i in held],
                                     self.engine.positions()[held])

    def start_positions(self, index: npt.NDArray[np.intp]) -> Array:
        """The held position target, else the position."""
        index = np.asarray(index, dtype=np.intp)
        targets = self.engine.position_targets()[index]
        out: Array = np.where(np.isnan(targets), self.engine.positions()[index], targets)
        return out

    def on_timeout(self, now: float, timeout: float) -> str:  # noqa: ARG002
        """Drop every command: every DOF goes to its safe state (module docstring)."""
        if not self.engine.commands():
            return ""
        self.engine.clear_commands()
        return f"no command for {timeout:g} s of simulated time: every command dropped"
