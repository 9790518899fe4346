"""Two robots in one scene: the simulated one solid, the measured one a ghost over it.

The ghost's bodies are coloured by the error of their joints (measured minus
simulated, by joint name: :func:`skel_ros.view.robot.error_rgb`), so where the real
arm drifts from the simulated one shows at a glance. Either robot may be missing (a
recording of one robot, a live view that has heard one so far).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from skel_ros.view.robot import GHOST_OPACITY, RobotDrawing

if TYPE_CHECKING:
    from collections.abc import Mapping

    import viser

    from skel_ros.model.types import World

__all__ = ["DEFAULT_ERROR_SCALE", "RobotPair", "joint_errors"]

DEFAULT_ERROR_SCALE = 0.05
"""Error (rad, or m for a prismatic joint) from which a ghost body is drawn red."""


def joint_errors(solid: Mapping[str, float], ghost: Mapping[str, float]) -> dict[str, float]:
    """``ghost - solid`` for every joint both give (finite values only)."""
    out = {}
    for name, value in ghost.items():
        ref = solid.get(name)
        if ref is not None and math.isfinite(value) and math.isfinite(ref):
            out[name] = value - ref
    return out


class RobotPair:
    """A solid robot and a ghost robot, each drawn once its model is known.

    Args:
        scene: The viser scene.
        solid: Name of the solid robot's node (its namespace: ``"sim"``).
        ghost: Name of the ghost's node (``"real"``).
        error_scale: See :data:`DEFAULT_ERROR_SCALE`.
    """

    def __init__(self, scene: viser.SceneApi, solid: str, ghost: str, *,
                 error_scale: float = DEFAULT_ERROR_SCALE) -> None:
        self._scene = scene
        self.names = (solid, ghost)
        self.error_scale = error_scale
        self.drawings: dict[str, RobotDrawing] = {}
        self.latest: dict[str, dict[str, float]] = {solid: {}, ghost: {}}

    def add_robot(self, name: str, world: World) -> RobotDrawing:
        """Draw robot ``name`` (one of :attr:`names`) from ``world`` (again: replaced)."""
        if name not in self.names:
            raise ValueError(f"robot {name!r} is neither of {self.names}")
        old = self.drawings.pop(name, None)
        if old is not None:
            self._scene.remove_by_name(f"/{name}")
        opacity = GHOST_OPACITY if name == self.names[1] else None
        drawing = RobotDrawing(self._scene, world, name, opacity=opacity)
        self.drawings[name] = drawing
        if self.latest[name]:
            drawing.update(list(self.latest[name]), list(self.latest[name].values()))
        return drawing

    def update(self, name: str, positions: Mapping[str, float]) -> None:
        """New positions of robot ``name``: pose it, and re-colour the ghost."""
        self.latest[name].update(positions)
        drawing = self.drawings.get(name)
        if drawing is not None:
            drawing.update(list(positions), list(positions.values()))
        ghost = self.drawings.get(self.names[1])
        if ghost is not None and self.latest[self.names[0]]:
            ghost.color_by_error(self.errors(), self.error_scale)

    def errors(self) -> dict[str, float]:
        """The latest error of every joint both robots gave (:func:`joint_errors`)."""
        return joint_errors(self.latest[self.names[0]], self.latest[self.names[1]])
