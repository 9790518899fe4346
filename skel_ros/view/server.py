"""The viser server every view runs in: loopback by default, no browser opened.

The server prints nothing of its own (viser's banner and its stop message go to a
discarded stream); the command prints the URL. The ground grid, the up axis (+z, as
ROS) and the initial camera (aimed at the robots' bodies) are set here.
"""

from __future__ import annotations

import contextlib
import errno
import io
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable

    import viser

    from skel_ros.view.robot import RobotDrawing

__all__ = ["DEFAULT_HOST", "frame_scene", "start_server", "stop_server", "url"]

DEFAULT_HOST = "127.0.0.1"
"""Loopback: the view is not reachable from other machines unless ``--host`` says so."""


def start_server(host: str = DEFAULT_HOST, port: int = 0) -> viser.ViserServer:
    """A viser server on ``host``:``port`` (0: a free port), +z up, a ground grid.

    Raises:
        OSError: ``port`` (not 0) is taken: viser would move on to the next free one, and
            the address asked for would not be the one served.
    """
    import viser

    with contextlib.redirect_stdout(io.StringIO()):
        server = viser.ViserServer(host=host, port=port, verbose=False)
    if port and server.get_port() != port:
        stop_server(server)
        raise OSError(errno.EADDRINUSE, f"port {port} is in use")
    server.scene.set_up_direction("+z")
    return server


def stop_server(server: viser.ViserServer) -> None:
    """Stop ``server`` quietly."""
    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()


def url(server: viser.ViserServer) -> str:
    """The address a browser opens."""
    return f"http://{server.get_host()}:{server.get_port()}"


def frame_scene(server: viser.ViserServer, drawings: Iterable[RobotDrawing]) -> None:
    """A ground grid under the robots and the initial camera aimed at their bodies."""
    points = [d.body_transforms()[:, :3, 3] for d in drawings]
    origins = np.concatenate(points) if points else np.zeros((1, 3))
    lo, hi = origins.min(axis=0), origins.max(axis=0)
    centre = (lo + hi) / 2.0
    size = max(float(np.max(hi - lo)), 0.3)
    server.scene.add_grid("/ground", width=2 * size, height=2 * size, cell_size=size / 10,
                          section_size=size / 2, position=(centre[0], centre[1], 0.0))
    server.initial_camera.look_at = tuple(centre)
    server.initial_camera.position = tuple(centre + np.array([1.0, 0.8, 0.45]) * size)
    server.initial_camera.near = 0.01 * size
