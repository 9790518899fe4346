"""``skel-ros simulate``: step a model's world with zero commands and print every DOF's state."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

from skel_ros.model import SkelError, load_model
from skel_ros.model.report import number
from skel_ros.sim import ENGINES
from skel_ros.sim.errors import SimError

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from skel_ros.sim.engine import SimEngine

__all__ = ["after_steps", "simulate"]


def after_steps(engine: SimEngine, steps: int) -> dict[str, Any]:
    """The state in the layout of the corpus fixtures' ``after_steps``.

    ``{"steps", "time", "positions": [[per skeleton]], "velocities": [[...]]}``,
    one list per skeleton in world order (empty for a skeleton without DOFs);
    non-finite numbers as the strings ``"nan"``, ``"inf"``, ``"-inf"``.
    """
    positions, velocities = [], []
    q, v = engine.positions(), engine.velocities()
    start = 0
    for skel in engine.model.skeletons:
        end = start + skel.num_dofs
        positions.append([number(x) for x in q[start:end]])
        velocities.append([number(x) for x in v[start:end]])
        start = end
    return {"steps": steps, "time": engine.time, "positions": positions,
            "velocities": velocities}


def simulate(
    file: str | Path,
    steps: int,
    as_json: bool,  # noqa: FBT001 - mirrors the command line
    *,
    enforce_limits: bool = True,
    engine_name: str = "dart",
    xacro_args: Mapping[str, str] | None = None,
    fixed_base: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Load ``file``, take ``steps`` steps with zero commands, print every DOF's state.

    Args:
        file: A model file (any format :func:`skel_ros.model.load_model` reads).
        steps: Number of world steps (>= 0).
        as_json: Print the fixtures' ``after_steps`` layout as JSON instead of a table.
        enforce_limits: Enforce joint position limits (the simulator's default);
            False reproduces DART's SkelParser world, which never enforces them.
        engine_name: The engine (:data:`skel_ros.sim.ENGINES`): ``dart`` or ``mujoco``.
        xacro_args: A ``.xacro`` model's arguments (:func:`skel_ros.model.load_model`).
        fixed_base: URDF/SMURF: weld the root link to the world.
        out: Where to print (standard output by default).
        err: Where errors go (standard error by default).

    Returns:
        The exit status: 0, or 1 when the file cannot be loaded or simulated.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if steps < 0:
        err.write(f"error: steps must be >= 0, got {steps}\n")
        return 1
    try:
        world = load_model(file, xacro_args=xacro_args or None, fixed_base=fixed_base)
        for warning in world.warnings:
            err.write(f"{warning}\n")
        engine = ENGINES[engine_name](world, enforce_limits=enforce_limits)
        engine.step(steps)
    except (SkelError, SimError) as exc:
        err.write(f"error: {exc}\n")
        return 1
    state = after_steps(engine, steps)
    if as_json:
        out.write(json.dumps(state, indent=1) + "\n")
        return 0
    in_engine = "" if engine_name == "dart" else f" in {engine_name}"
    out.write(f"{file}: {steps} steps{in_engine}, t = {engine.time:.6f} s, limits "
              f"{'enforced' if enforce_limits else 'not enforced'}\n")
    rows = [("joint", "position", "velocity")]
    q, v = engine.positions(), engine.velocities()
    rows.extend((name, f"{q[i]: .17g}", f"{v[i]: .17g}")
                for i, name in enumerate(engine.dof_names))
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    for r in rows:
        out.write("  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip() + "\n")
    if len(rows) == 1:
        out.write("(no degrees of freedom)\n")
    return 0
