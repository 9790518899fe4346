"""A test-double robot backend: a few lines of numpy, no DART, no bus.

Its joints go where they are told within one :meth:`NumpyBackend.step` (positions,
velocities integrated), so the core's behaviour can be checked exactly. It is also the
proof that a third backend plugs in without touching the core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from skel_ros.core import ALL_KINDS, Capabilities, RobotBackend, RobotState
from skel_ros.model.limits import CommandKind, JointLimits, LimitSet

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy.typing as npt


class NumpyBackend(RobotBackend):
    """Joints ``a``, ``b``, ``c`` (positions in [-1, 1]); ``c`` takes velocity commands only."""

    def __init__(self, names: Sequence[str] = ("a", "b", "c"),
                 modes: Sequence[frozenset[CommandKind]] | None = None) -> None:
        self.names = tuple(names)
        n = len(self.names)
        if modes is None:
            modes = [ALL_KINDS] * (n - 1) + [frozenset({CommandKind.VELOCITY})]
        self.capabilities = Capabilities(has_clock=True, can_reset=True,
                                         command_modes=tuple(modes))
        self.limits = LimitSet([JointLimits(x, position_lower=-1.0, position_upper=1.0,
                                            velocity_lower=-2.0, velocity_upper=2.0)
                                for x in self.names])
        self._index = {x: i for i, x in enumerate(self.names)}
        self.time = 0.0
        self.q = np.zeros(n)
        self.v = np.zeros(n)
        self.mode: list[CommandKind | None] = [None] * n
        self.target = np.zeros(n)
        self.refused = ""
        self.velocity_known = True
        self.writes: list[tuple[float, CommandKind, tuple[str, ...], tuple[float, ...]]] = []
        self.holds: list[tuple[str, ...]] = []
        self.timeouts: list[float] = []

    def now(self) -> float:
        return self.time

    def read(self, now: float) -> RobotState:
        v = self.v.copy() if self.velocity_known else np.full(len(self.names), np.nan)
        return RobotState(now, self.q.copy(), v, np.zeros(len(self.names)),
                          np.ones(len(self.names), dtype=bool))

    def refusal(self) -> str:
        return self.refused

    def write(self, now: float, kind: CommandKind, index: npt.NDArray[np.intp],
              values: npt.NDArray[np.float64]) -> None:
        self.writes.append((now, kind, tuple(self.names[i] for i in index),
                            tuple(float(x) for x in values)))
        for i, x in zip(index, values, strict=True):
            self.mode[i] = kind
            self.target[i] = x

    def hold(self, now: float, index: npt.NDArray[np.intp]) -> None:  # noqa: ARG002
        self.holds.append(tuple(self.names[i] for i in index))
        for i in index:
            self.mode[i] = CommandKind.POSITION
            self.target[i] = self.q[i]

    def start_positions(self, index: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        return np.array([self.target[i] if self.mode[i] is CommandKind.POSITION else self.q[i]
                         for i in index])

    def on_timeout(self, now: float, timeout: float) -> str:
        self.timeouts.append(now)
        if not any(m is not None for m in self.mode):
            return ""
        self.mode = [None] * len(self.names)
        return f"no command for {timeout:g} s: every command dropped"

    def actuate(self, now: float, count: int = 1) -> None:  # noqa: ARG002 - its own time
        for _ in range(count):
            self.step(self.period)

    def step(self, dt: float) -> None:
        """Move every commanded joint as told, and advance the time."""
        for i, mode in enumerate(self.mode):
            if mode is CommandKind.POSITION:
                self.v[i] = (self.target[i] - self.q[i]) / dt
                self.q[i] = self.target[i]
            elif mode is CommandKind.VELOCITY:
                self.v[i] = self.target[i]
                self.q[i] += self.target[i] * dt
            else:
                self.v[i] = 0.0
        self.time += dt
