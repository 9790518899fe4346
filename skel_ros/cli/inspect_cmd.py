"""``skel-ros inspect``: a readable tree of a SKEL world, or its JSON dump."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skel_ros.model.types import Joint, Skeleton, World


def _fmt(x: float) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.6g}"


def _joint_line(joint: Joint) -> str:
    parent = joint.parent or "world"
    extra = ""
    if joint.axes:
        extra = " axis " + " ".join(
            "(" + " ".join(f"{v:.3g}" for v in axis) + ")" for axis in joint.axes
        )
    if joint.euler_order is not None:
        extra += f" order {joint.euler_order.value}"
    if joint.plane is not None:
        extra += f" plane {joint.plane.value}"
    implicit = " [added by DART]" if joint.implicit else ""
    return (
        f"{joint.name} ({joint.type.value}, {joint.actuator.value}){implicit}: "
        f"{parent} -> {joint.child}{extra}"
    )


def _tree(skel: Skeleton) -> list[str]:
    """The joint tree, depth first; iterative, for chains of any length."""
    children: dict[str | None, list[Joint]] = {}
    for joint in skel.joints:
        children.setdefault(joint.parent, []).append(joint)
    lines: list[str] = []
    # (joint, the prefix of its line, whether it is its parent's last child), to print
    pending = [(joint, "  ", i == 0)
               for i, joint in enumerate(reversed(children.get(None, [])))]
    while pending:
        joint, prefix, last = pending.pop()
        body = skel.body(joint.child)
        lines.append(f"{prefix}{'└── ' if last else '├── '}{_joint_line(joint)}")
        sub = prefix + ("    " if last else "│   ")
        shapes = ", ".join(
            f"{s.role.value} {s.geometry.kind}" for s in body.shapes
        ) or "no shapes"
        soft = f", soft {body.soft.kind}" if body.soft else ""
        lines.append(
            f"{sub}   body {body.name}: mass {_fmt(body.inertia.mass)} kg, {shapes}{soft}"
            + (f", {len(body.markers)} marker(s)" if body.markers else "")
        )
        kids = children.get(joint.child, [])
        pending.extend((kid, sub, i == 0) for i, kid in enumerate(reversed(kids)))
    return lines


def _limits_table(skel: Skeleton) -> list[str]:
    if not skel.dofs:
        return ["  (no DOFs)"]
    width = max(len(d.name) for d in skel.dofs)
    head = (
        f"  {'dof':<{width}}  {'position':>22}  {'velocity':>22}  {'force':>22}  "
        f"{'init':>8}  {'damping':>8}"
    )
    rows = [head, "  " + "-" * (len(head) - 2)]
    for d in skel.dofs:
        rows.append(  # noqa: PERF401 - one formatted row per DOF
            f"  {d.name:<{width}}  "
            f"{'[' + _fmt(d.position_lower) + ', ' + _fmt(d.position_upper) + ']':>22}  "
            f"{'[' + _fmt(d.velocity_lower) + ', ' + _fmt(d.velocity_upper) + ']':>22}  "
            f"{'[' + _fmt(d.force_lower) + ', ' + _fmt(d.force_upper) + ']':>22}  "
            f"{_fmt(d.initial_position):>8}  {_fmt(d.damping):>8}"
        )
    return rows


def render(world: World) -> str:
    """The human-readable report of ``world``."""
    g = " ".join(_fmt(v) for v in world.gravity)
    lines = [
        f"{world.source}",
        (f"world: time step {_fmt(world.time_step)} s, gravity ({g}), "
        f"collision detector {world.collision_detector.value}, "
        f"{len(world.skeletons)} skeleton(s)"),
    ]
    for skel in world.skeletons:
        lines.append("")
        lines.append(
            f"skeleton {skel.name!r}: {len(skel.bodies)} bodies, {len(skel.joints)} joints, "
            f"{skel.num_dofs} DOFs{'' if skel.mobile else ', immobile'}"
        )
        lines.extend(_tree(skel))
        lines.append("")
        lines.extend(_limits_table(skel))
    lines.append("")
    if world.warnings:
        lines.append(f"{len(world.warnings)} warning(s):")
        lines.extend(f"  {w}" for w in world.warnings)
    else:
        lines.append("no warnings")
    return "\n".join(lines)
