"""Robots the benchmarks generate, so that they run from a fresh clone.

The benchmarks measure on DART's SKEL corpus when one is given (``SKEL_CORPUS`` or their
``--corpus`` option): fullbody1, the serial chains. Without it they use what the
repository has, the bundled robots in ``examples/``, and these generated models:

* :func:`serial_chain`: ``n`` box links in a row, on revolute or ball joints (the shape of
  the corpus's ``serial_chain_ball_joint_40.skel`` and of a long chain for growth);
* :func:`humanoid`: a 20-body humanoid on a ground box, joint for joint the tree of the
  corpus's ``fullbody1.skel`` (a free pelvis; euler hips and shoulders, universal ankles,
  wrists and abdomen, revolute knees, toes, elbows, spine and neck), boxes for every
  shape, which falls when simulated. Its own dimensions and masses, not fullbody1's:
  a stand-in of the same kind, never reported under fullbody1's name.

Each function returns the document as text; :func:`write` puts one in a directory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["HUMANOID_NAME", "humanoid", "serial_chain", "write"]

HUMANOID_NAME = "humanoid_generated.skel"

_WORLD = ('<?xml version="1.0"?>\n<skel version="1.0"><world name="w"><physics>'
          "<time_step>0.001</time_step><gravity>0 -9.81 0</gravity></physics>{}</world></skel>\n")


def _box_body(name: str, at: tuple[float, float, float], size: tuple[float, float, float],
              mass: float, shape_at: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> str:
    """A body at ``at`` (in the skeleton's frame) with one box, seen and colliding."""
    frame = " ".join(f"{x:g}" for x in at) + " 0 0 0"
    centre = " ".join(f"{x:g}" for x in shape_at)
    box = (f"<transformation>{centre} 0 0 0</transformation><geometry><box><size>"
           f"{' '.join(f'{x:g}' for x in size)}</size></box></geometry>")
    return (f'<body name="{name}"><transformation>{frame}</transformation>'
            f"<inertia><mass>{mass:g}</mass><offset>{centre}</offset></inertia>"
            f"<visualization_shape>{box}</visualization_shape>"
            f"<collision_shape>{box}</collision_shape></body>")


def serial_chain(n: int, joint: str = "revolute") -> str:
    """A chain of ``n`` links hanging from the world, each 0.1 m long.

    Args:
        n: Number of links (>= 1).
        joint: ``"revolute"`` (about z, limits +-1, a little damping) or ``"ball"``.
    """
    bodies, joints = [], []
    for i in range(n):
        bodies.append(_box_body(f"link{i}", (0.0, -0.1 * i, 0.0), (0.02, 0.1, 0.02), 0.5,
                                (0.0, -0.05, 0.0)))
        parent = "world" if i == 0 else f"link{i - 1}"
        if joint == "ball":
            detail = ""
        else:
            detail = ("<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit>"
                      "<dynamics><damping>0.01</damping></dynamics></axis>")
        joints.append(f'<joint type="{joint}" name="j{i}"><parent>{parent}</parent>'
                      f"<child>link{i}</child>{detail}</joint>")
    return _WORLD.format(f'<skeleton name="chain">{"".join(bodies)}{"".join(joints)}</skeleton>')


# (body, parent, joint type, body origin, box size, mass, box centre offset)
_LIMBS: tuple[tuple[str, str, str, tuple[float, float, float], tuple[float, float, float],
                    float, tuple[float, float, float]], ...] = (
    ("pelvis", "world", "free", (0.0, 1.0, 0.0), (0.25, 0.12, 0.15), 8.0, (0.0, 0.0, 0.0)),
    ("abdomen", "pelvis", "universal", (0.0, 1.06, 0.0), (0.22, 0.15, 0.13), 5.0,
     (0.0, 0.075, 0.0)),
    ("spine", "abdomen", "revolute", (0.0, 1.21, 0.0), (0.3, 0.25, 0.15), 12.0,
     (0.0, 0.125, 0.0)),
    ("neck", "spine", "revolute", (0.0, 1.46, 0.0), (0.06, 0.08, 0.06), 0.8, (0.0, 0.04, 0.0)),
    ("head", "neck", "universal", (0.0, 1.54, 0.0), (0.16, 0.2, 0.18), 4.0, (0.0, 0.1, 0.0)),
)
_SIDE: tuple[tuple[str, str, str, tuple[float, float, float], tuple[float, float, float],
                   float, tuple[float, float, float]], ...] = (
    ("thigh", "pelvis", "euler", (0.09, 0.94, 0.0), (0.1, 0.42, 0.1), 7.0, (0.0, -0.21, 0.0)),
    ("shin", "thigh", "revolute", (0.09, 0.52, 0.0), (0.08, 0.42, 0.08), 3.5, (0.0, -0.21, 0.0)),
    ("heel", "shin", "universal", (0.09, 0.1, 0.0), (0.09, 0.06, 0.18), 1.0, (0.0, -0.03, 0.04)),
    ("toe", "heel", "revolute", (0.09, 0.04, 0.13), (0.09, 0.04, 0.07), 0.3, (0.0, -0.02, 0.03)),
    ("scapula", "spine", "revolute", (0.08, 1.42, 0.0), (0.12, 0.06, 0.08), 1.0, (0.06, 0.0, 0.0)),
    ("bicep", "scapula", "euler", (0.2, 1.42, 0.0), (0.28, 0.07, 0.07), 2.0, (0.14, 0.0, 0.0)),
    ("forearm", "bicep", "revolute", (0.48, 1.42, 0.0), (0.25, 0.06, 0.06), 1.2, (0.125, 0.0, 0.0)),
    ("hand", "forearm", "universal", (0.73, 1.42, 0.0), (0.1, 0.03, 0.08), 0.4, (0.05, 0.0, 0.0)),
)
_AXES = {"revolute": "<axis><xyz>0 0 1</xyz></axis>",
         "universal": "<axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 0 1</xyz></axis2>",
         "euler": "<axis_order>zyx</axis_order>", "free": ""}


def humanoid() -> str:
    """The generated humanoid (see the module docstring) standing on a ground box."""
    limbs = list(_LIMBS)
    for side, sign in (("left", 1.0), ("right", -1.0)):
        for name, parent, kind, at, size, mass, centre in _SIDE:
            limbs.append((f"{name}_{side}", parent if parent in {"pelvis", "spine"}
                          else f"{parent}_{side}", kind, (sign * at[0], at[1], at[2]), size,
                          mass, (sign * centre[0], centre[1], centre[2])))
    bodies = "".join(_box_body(name, at, size, mass, centre)
                     for name, _, _, at, size, mass, centre in limbs)
    joints = "".join(
        f'<joint type="{kind}" name="j_{name}"><transformation>0 0 0 0 0 0</transformation>'
        f"<parent>{parent}</parent><child>{name}</child>{_AXES[kind]}</joint>"
        for name, parent, kind, *_ in limbs)
    ground = ('<skeleton name="ground"><mobile>false</mobile>'
              + _box_body("ground", (0.0, -0.05, 0.0), (5.0, 0.1, 5.0), 1.0)
              + '<joint type="weld" name="j_ground"><parent>world</parent>'
              "<child>ground</child></joint></skeleton>")
    return _WORLD.format(f'{ground}<skeleton name="humanoid">{bodies}{joints}</skeleton>')


def write(directory: Path, name: str, text: str) -> Path:
    """Write ``text`` to ``directory / name``; returns the path."""
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path
