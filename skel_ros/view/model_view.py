"""``skel-ros view MODEL``: the model drawn by its kinematics, a slider per DOF.

Each DOF's slider spans its position limits (a leader's: the positions that keep its
followers in theirs too, :func:`skel_ros.model.mimic.leader_bounds`); an unlimited DOF
spans one turn either way (+-pi). A follower's slider is disabled and shows the
position its leader gives it. A "reset" button puts every DOF back to its initial
position.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.model.mimic import leader_bounds, with_followers
from skel_ros.view.robot import RobotDrawing

if TYPE_CHECKING:
    import viser

    from skel_ros.model.types import Dof, Skeleton, World

__all__ = ["ModelView", "SliderSpec", "slider_specs"]

UNLIMITED_SPAN = math.pi
"""Half the slider range of a DOF without position limits."""

_SLIDER_STEPS = 1000


@dataclass(frozen=True)
class SliderSpec:
    """The slider of one DOF.

    Attributes:
        dof: The DOF's name (the slider's label).
        lower, upper: The slider's range.
        initial: Where it starts (the DOF's initial position, within the range).
        follower: The DOF follows a leader: the slider only shows its position.
    """

    dof: str
    lower: float
    upper: float
    initial: float
    follower: bool


def _range(skel: Skeleton, dof: Dof) -> tuple[float, float]:
    lower, upper = (leader_bounds(skel, dof.name) if dof.mimic is None
                    else (dof.position_lower, dof.position_upper))
    if not math.isfinite(lower):
        lower = min(dof.initial_position, 0.0) - UNLIMITED_SPAN
    if not math.isfinite(upper):
        upper = max(dof.initial_position, 0.0) + UNLIMITED_SPAN
    return lower, upper


def slider_specs(world: World) -> list[SliderSpec]:
    """One :class:`SliderSpec` per DOF of ``world``, skeleton by skeleton."""
    out = []
    for skel in world.skeletons:
        for dof in skel.dofs:
            lower, upper = _range(skel, dof)
            initial = min(max(dof.initial_position, lower), upper)
            out.append(SliderSpec(dof.name, lower, upper, initial, dof.mimic is not None))
    return out


class ModelView:
    """The model and its sliders in ``server``.

    Attributes:
        drawing: The robot drawn.
        specs: The sliders' ranges (:func:`slider_specs`).
        sliders: The slider handles, in :attr:`specs` order.

    Args:
        server: The viser server.
        world: The model.
    """

    def __init__(self, server: viser.ViserServer, world: World) -> None:
        self.drawing = RobotDrawing(server.scene, world, "model")
        self.specs = slider_specs(world)
        self.sliders: list[viser.GuiSliderHandle[float]] = []
        self._world = world
        self._updating = False
        with server.gui.add_folder("Joints"):
            for spec in self.specs:
                span = spec.upper - spec.lower
                step = span / _SLIDER_STEPS if span > 0 else 1e-3
                slider = server.gui.add_slider(spec.dof, min=spec.lower, max=spec.upper,
                                               step=step, initial_value=spec.initial,
                                               disabled=spec.follower)
                slider.on_update(lambda _event: self._moved())
                self.sliders.append(slider)
        reset = server.gui.add_button("Reset")
        reset.on_click(lambda _event: self.reset())
        self._moved()

    def positions(self) -> np.ndarray:
        """Every DOF's position from the sliders, followers set from their leaders."""
        q = np.array([float(s.value) for s in self.sliders], dtype=float)
        start = 0
        for skel in self._world.skeletons:
            n = len(skel.dofs)
            q[start:start + n] = with_followers(skel, q[start:start + n])
            start += n
        return q

    def _moved(self) -> None:
        if self._updating:
            return
        q = self.positions()
        self._updating = True  # the followers' sliders are set below: no recursion
        try:
            for spec, slider, value in zip(self.specs, self.sliders, q, strict=True):
                if spec.follower:
                    slider.value = float(min(max(value, spec.lower), spec.upper))
        finally:
            self._updating = False
        self.drawing.set_positions(q)

    def reset(self) -> None:
        """Every slider back to its DOF's initial position."""
        self._updating = True
        try:
            for spec, slider in zip(self.specs, self.sliders, strict=True):
                slider.value = spec.initial
        finally:
            self._updating = False
        self._moved()
