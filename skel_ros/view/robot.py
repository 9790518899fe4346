"""One robot drawn in a viser scene, posed by the model's own kinematics.

Each body is a frame node (``/<root>/<body>``, its pose set from
:class:`~skel_ros.model.kinematics.Kinematics`), its visual shapes meshes under it
(:mod:`skel_ros.view.shapes`). A ghost is the same robot drawn semi-transparent; its
bodies can be coloured by a per-joint error (:func:`error_rgb`): each body takes the
largest error of the DOFs of the joint that moves it, a welded body its parent's.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.kinematics import Kinematics
from skel_ros.model.transforms import matrix_to_quaternions
from skel_ros.view.shapes import body_meshes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import viser

    from skel_ros.model.types import Array, World

__all__ = ["GHOST_OPACITY", "RobotDrawing", "error_rgb"]

GHOST_OPACITY = 0.4
"""Opacity of a ghost robot (the measured one, drawn over the simulated one)."""

_ERROR_LEVELS = 16  # colour steps: a colour is re-sent only when its step changes
_GREEN = np.array([40, 180, 60])
_YELLOW = np.array([240, 200, 30])
_RED = np.array([220, 30, 30])


def error_rgb(error: float, scale: float) -> tuple[int, int, int]:
    """Green at 0, yellow at ``scale`` / 2, red from ``scale`` on (grey for NaN).

    The ramp has :data:`_ERROR_LEVELS` steps, so a colour changes only when the error
    moves by a visible amount.
    """
    if not math.isfinite(error):
        return 150, 150, 150
    level = min(abs(error) / scale, 1.0) if scale > 0 else 1.0
    level = round(level * _ERROR_LEVELS) / _ERROR_LEVELS
    rgb = (_GREEN + (_YELLOW - _GREEN) * 2 * level if level <= 0.5  # noqa: PLR2004 - half way
           else _YELLOW + (_RED - _YELLOW) * (2 * level - 1))
    r, g, b = (round(float(c)) for c in rgb)
    return r, g, b


def _node_name(text: str) -> str:
    """A scene-tree name part: viser nests at '/', and link names may hold one."""
    return text.replace("/", ":") or "_"


class RobotDrawing:
    """Every skeleton of ``world`` in ``scene`` under ``/<root>``.

    Attributes:
        world: The model.
        dof_names: Every DOF of the world, skeleton by skeleton (the order of
            :meth:`set_positions`).
        positions: The positions drawn now (initial positions at first).

    Args:
        scene: The viser scene (``server.scene``).
        world: The model.
        root: Name of the robot's node (``"sim"``, ``"real"``, ``"model"``).
        opacity: None for a solid robot; below 1 for a ghost.
    """

    def __init__(self, scene: viser.SceneApi, world: World, root: str, *,
                 opacity: float | None = None) -> None:
        self.world = world
        self._kinematics = [Kinematics(s) for s in world.skeletons]
        self.dof_names = tuple(d.name for s in world.skeletons for d in s.dofs)
        self.positions = np.array([d.initial_position for s in world.skeletons for d in s.dofs],
                                  dtype=float)
        self._index = {name: i for i, name in enumerate(self.dof_names)}
        self._frames: list[viser.FrameHandle] = []
        self._meshes: list[list[viser.MeshHandle]] = []
        self._rgb: list[tuple[int, int, int] | None] = []
        # Per body: the world DOF indices of the joint moving it, and its parent body's
        # index in self._frames (-1 for none): a welded body shows its parent's error.
        self._body_dofs: list[tuple[int, ...]] = []
        self._body_parent: list[int] = []
        first_dof = 0
        for skel in world.skeletons:
            start = len(self._frames)
            names = [b.name for b in skel.bodies]
            for joint, body in zip(skel.joints, skel.bodies, strict=True):
                node = f"/{root}/{_node_name(body.name)}"
                self._frames.append(scene.add_frame(node, show_axes=False))
                handles = []
                for k, mesh in enumerate(body_meshes(body)):
                    handles.append(scene.add_mesh_simple(
                        f"{node}/{k}", mesh.vertices, mesh.faces, color=mesh.rgb,
                        opacity=opacity, cast_shadow=opacity is None))
                self._meshes.append(handles)
                self._rgb.append(None)
                self._body_dofs.append(tuple(first_dof + joint.first_dof + d
                                             for d in range(joint.num_dofs)))
                self._body_parent.append(-1 if joint.parent is None
                                         else start + names.index(joint.parent))
            first_dof += len(skel.dofs)
        self.set_positions(self.positions)

    def body_transforms(self, q: Array | None = None) -> Array:
        """World transforms (nbody, 4, 4) of every body, skeleton by skeleton, at ``q``."""
        q = self.positions if q is None else np.asarray(q, dtype=float)
        out, start = [], 0
        for kin in self._kinematics:
            n = kin.skeleton.num_dofs
            out.append(kin.body_transforms(q[start:start + n]))
            start += n
        return np.concatenate(out) if out else np.zeros((0, 4, 4))

    def set_positions(self, q: Sequence[float] | Array) -> None:
        """Pose every body for DOF positions ``q`` (:attr:`dof_names` order)."""
        q = np.asarray(q, dtype=float)
        if q.shape != self.positions.shape:
            raise ValueError(f"expected {self.positions.size} positions, got {q.shape}")
        self.positions = q.copy()
        transforms = self.body_transforms(q)
        quats = np.roll(matrix_to_quaternions(transforms[:, :3, :3]), 1, axis=-1)  # w first
        for frame, t, wxyz in zip(self._frames, transforms, quats, strict=True):
            frame.wxyz = wxyz
            frame.position = t[:3, 3]

    def update(self, names: Sequence[str], values: Sequence[float]) -> int:
        """Set the named DOFs (others keep their positions) and pose the robot.

        Names the model does not have, and non-finite values, are skipped.

        Returns:
            How many positions were taken.
        """
        q = self.positions.copy()
        taken = 0
        for name, value in zip(names, values, strict=False):
            i = self._index.get(name)
            if i is not None and math.isfinite(value):
                q[i] = value
                taken += 1
        if taken:
            self.set_positions(q)
        return taken

    def color_by_error(self, errors: Mapping[str, float], scale: float) -> None:
        """Colour each body by the error of its joint's DOFs (:func:`error_rgb`)."""
        by_body: list[float] = []
        for dofs, parent in zip(self._body_dofs, self._body_parent, strict=True):
            values = [abs(errors.get(self.dof_names[i], math.nan)) for i in dofs]
            values = [v for v in values if math.isfinite(v)]
            if values:
                by_body.append(max(values))
            else:
                by_body.append(by_body[parent] if parent >= 0 else math.nan)
        for k, error in enumerate(by_body):
            rgb = error_rgb(error, scale)
            if rgb != self._rgb[k]:
                self._rgb[k] = rgb
                for mesh in self._meshes[k]:
                    mesh.color = rgb

    def body_colors(self) -> list[tuple[int, ...] | None]:
        """The colour of each body's first mesh in the scene (None: a body without shapes)."""
        return [tuple(int(c) for c in meshes[0].color) if meshes else None
                for meshes in self._meshes]

    def frame_poses(self) -> tuple[Array, Array]:
        """(nbody, 3) positions and (nbody, 4) ``wxyz`` of the body frames in the scene."""
        positions = np.array([f.position for f in self._frames], dtype=float).reshape(-1, 3)
        wxyz = np.array([f.wxyz for f in self._frames], dtype=float).reshape(-1, 4)
        return positions, wxyz

    @property
    def body_count(self) -> int:
        """Bodies drawn (every skeleton's)."""
        return len(self._frames)

    def mesh_count(self) -> int:
        """Meshes drawn (visual shapes and soft rest shapes)."""
        return sum(len(m) for m in self._meshes)
