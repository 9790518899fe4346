"""The hardware backend: the buses of a hardware manager behind the robot core's seam.

:class:`HardwareBackend` is how the :class:`~skel_ros.core.RobotCore` of a
:class:`~skel_ros.hardware.manager.HardwareManager` sees the hardware: the manager keeps
the buses, the safety states (enable, e-stop, faults, reconnects) and the control loop;
the core (commands, trajectories, the command timeout) runs in that loop, once per read
cycle while motion is enabled, on the manager's clock. As ros2_control's lifecycle:
configured = buses open with torque off (:meth:`HardwareBackend.configure` starts the
loop), active = torque on (:meth:`HardwareBackend.activate` = enable).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.core import Capabilities, RobotBackend, RobotState
from skel_ros.hardware.safety import MODE_COMMANDS, MotionState

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt

    from skel_ros.hardware.manager import HardwareManager
    from skel_ros.model.limits import CheckResult, CommandKind
    from skel_ros.model.types import Array

__all__ = ["HardwareBackend"]

_EMPTY_INDEX = np.zeros(0, dtype=np.intp)
_LIFECYCLE_WAIT = 2.0  # s to wait for the loop to answer enable / disable


class HardwareBackend(RobotBackend):
    """The mapped DOFs of a :class:`HardwareManager` (its ``names``, model order).

    Args:
        manager: The manager whose buses it drives (the manager builds its backend).
    """

    def __init__(self, manager: HardwareManager) -> None:
        self.manager = manager
        self.names = manager.names
        self.capabilities = Capabilities(
            has_faults=True,
            command_modes=tuple(frozenset({MODE_COMMANDS[m]}) for m in manager.modes))

    # ---------------------------------------------------------------- lifecycle

    def configure(self) -> None:
        """Start the control loop: it opens the buses, torque off."""
        self.manager.start()

    def activate(self) -> None:
        """Enable: torque on, holding the measured positions (waits for the loop)."""
        self.manager.enable(wait=_LIFECYCLE_WAIT)

    def deactivate(self) -> None:
        """Disable: torque off (waits for the loop)."""
        self.manager.disable(wait=_LIFECYCLE_WAIT)

    def close(self) -> None:
        """Stop the loop, torque off, close every bus."""
        self.manager.stop()

    # ---------------------------------------------------------------- time and state

    def now(self) -> float:
        """The manager's clock."""
        return self.manager.now()

    def read(self, now: float) -> RobotState:  # noqa: ARG002 - the measurement has its stamp
        """The latest read cycle's measurement (inside the loop: this cycle's)."""
        m = self.manager
        if m.in_cycle:
            return m.measurement()
        status = m.status()
        return RobotState(status.read_stamp, status.position, status.velocity, status.effort,
                          status.measured.astype(bool))

    # ---------------------------------------------------------------- commands

    def check(self, kind: CommandKind, names: Sequence[str],
              values: npt.ArrayLike) -> CheckResult:
        """The limits gate of the hardware.

        The limit set (the model's, tightened by the YAML); DOFs without an actuator left
        out (said once per name); then each actuator's control mode.
        """
        m = self.manager
        check = m.limits.check(kind, names, values)
        if not check.ok:
            return check
        index = m.index
        if any(n not in index for n in check.names):
            m.report_unmapped([n for n in check.names if n not in index])
            keep = [i for i, n in enumerate(check.names) if n in index]
            check = replace(check, names=tuple(check.names[i] for i in keep),
                            indices=check.indices[keep], values=check.values[keep],
                            requested=check.requested[keep],
                            clamped=tuple(c for c in check.clamped if c.name in index))
        modes = m.modes
        for name in check.names:
            if MODE_COMMANDS[modes[index[name]]] is not kind:
                return replace(check, ok=False, indices=_EMPTY_INDEX, values=np.zeros(0),
                               requested=np.zeros(0), clamped=(),
                               reason=f"DOF {name!r} runs in {modes[index[name]].value} mode")
        return check

    def refusal(self) -> str:
        """Commands are taken only while motion is enabled."""
        state = self.manager.state
        if state is MotionState.ENABLED:
            return ""
        return f"motion is not enabled (state {state.value})"

    def write(self, now: float, kind: CommandKind, index: npt.NDArray[np.intp],
              values: Array) -> None:
        """Goals for the motion limiter: at once inside the loop, else handed in."""
        self.manager.set_goals(now, kind, index, values)

    def hold(self, now: float, index: npt.NDArray[np.intp]) -> None:  # noqa: ARG002
        """The DOFs at ``index`` stop at their current targets."""
        self.manager.hold_targets(index)

    def start_positions(self, index: npt.NDArray[np.intp]) -> Array:
        """The last targets sent (NaN where none)."""
        target = np.asarray(self.manager.status().target, dtype=float)
        return target[index] if target.size else np.full(len(index), math.nan)

    def on_timeout(self, now: float, timeout: float) -> str:  # noqa: ARG002 - the manager's
        """The configured safe state: hold, or torque off (the manager logs it)."""
        self.manager.apply_safe_state(now)
        return ""
