"""``skel-ros view --live``: the robots' ``joint_states`` followed as they come.

ROS-free: the node (:mod:`skel_ros.nodes.view_live`) hands each message over to
:class:`LiveView` from its executor thread. The first namespace's robot is drawn solid,
the second's as a ghost coloured by the error of each joint
(:mod:`skel_ros.view.pair`); each is drawn once its ``robot_description`` has come (a
description received again replaces the drawing). Positions that come before the
description are kept and shown when it does. A panel lists the latest error per joint
(refreshed at most :data:`PANEL_PERIOD` apart, so a 100 Hz stream does not flood the
browser with text).
"""

from __future__ import annotations

import math
import threading
import time
from typing import TYPE_CHECKING

from skel_ros.view.description import world_from_description
from skel_ros.view.errors import ViewError
from skel_ros.view.pair import DEFAULT_ERROR_SCALE, RobotPair
from skel_ros.view.server import frame_scene

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    import viser

__all__ = ["DEFAULT_NAMESPACES", "PANEL_PERIOD", "LiveView"]

DEFAULT_NAMESPACES = ("sim", "real")
"""The sim-to-real layout: the simulation solid, the hardware as the ghost."""

PANEL_PERIOD = 0.2
"""Seconds between two refreshes of the error panel."""


class LiveView:
    """The live scene of one or two robots.

    Args:
        server: The viser server.
        namespaces: One or two robot namespaces (solid first).
        mesh_dir: Where embedded meshes of the descriptions are written.
        error_scale: See :data:`skel_ros.view.pair.DEFAULT_ERROR_SCALE`.
        clock: Monotonic seconds (for the panel's refresh).
    """

    def __init__(self, server: viser.ViserServer, namespaces: Sequence[str], *,
                 mesh_dir: Path, error_scale: float = DEFAULT_ERROR_SCALE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 1 <= len(namespaces) <= 2 or len(set(namespaces)) != len(namespaces):  # noqa: PLR2004 - a solid and a ghost
            raise ViewError(f"give one or two different namespaces, not {list(namespaces)}")
        self._server = server
        self.namespaces = tuple(namespaces)
        ghost = self.namespaces[1] if len(self.namespaces) > 1 else "_ghost"
        self.pair = RobotPair(server.scene, self.namespaces[0], ghost, error_scale=error_scale)
        self._mesh_dir = mesh_dir
        self._clock = clock
        self._lock = threading.Lock()
        self._framed = False
        self._panel_at = -math.inf
        self._status = server.gui.add_markdown(self._panel_text())
        self.messages = dict.fromkeys(self.namespaces, 0)

    def on_description(self, namespace: str, urdf: str) -> None:
        """Draw robot ``namespace`` from its URDF.

        Raises:
            ViewError: a description the model reader refuses (the robot is not drawn;
                the message names the topic).
        """
        world = world_from_description(urdf, label=f"/{namespace}/robot_description",
                                       mesh_dir=self._mesh_dir)
        with self._lock:
            drawing = self.pair.add_robot(namespace, world)
            if not self._framed:
                frame_scene(self._server, [drawing])
                self._framed = True

    def on_joint_state(self, namespace: str, names: Sequence[str],
                       positions: Sequence[float]) -> None:
        """Pose robot ``namespace`` (one scene update, sent at once)."""
        values = dict(zip(names, (float(p) for p in positions), strict=False))
        with self._lock, self._server.atomic():
            self.pair.update(namespace, values)
        self.messages[namespace] += 1
        now = self._clock()
        if now - self._panel_at >= PANEL_PERIOD:
            self._panel_at = now
            self._status.content = self._panel_text()

    def _panel_text(self) -> str:
        solid, ghost = self.pair.names
        heard = ", ".join(f"`{ns}`: " + ("drawn" if ns in self.pair.drawings else
                                         "waiting for its robot_description")
                          for ns in self.namespaces)
        lines = [f"**{solid}** solid" + (f", **{ghost}** ghost" if len(self.namespaces) > 1
                                         else ""), "", heard]
        errors = self.pair.errors()
        if errors:
            lines += ["", "| joint | error |", "|---|---|"]
            lines += [f"| {name} | {value:+.4f} |" for name, value in errors.items()]
        return "\n".join(lines)
