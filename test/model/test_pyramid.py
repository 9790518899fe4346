"""Pyramids in mass-only bodies: the moment of inertia DART 6.20 really builds.

DART 6.20's ``PyramidShape::computeInertia`` is not implemented: it logs
"Moment of inertia computation is not implemented. Returning identity." and
returns the 3x3 identity, whatever the pyramid's size and the mass. A body with
``<inertia><mass>`` but no ``<moment_of_inertia>`` sums its shapes' inertias
(each shape's share of the mass by volume, rotated into the body frame, plus the
parallel-axis terms), so a pyramid adds ``R I R^T = I`` to the sum. The model
builds exactly that (and warns); these tests load the same files with dartpy's
``SkelParser`` and compare.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.model import load_skel

if TYPE_CHECKING:
    from pathlib import Path

dartpy = pytest.importorskip("dartpy")

TOL = 1e-9


def _pyramid(width: float, depth: float, height: float, pose: str = "0 0 0 0 0 0",
             tag: str = "visualization_shape") -> str:
    return (f"<{tag}><transformation>{pose}</transformation><geometry><pyramid>"
            f"<base_width>{width}</base_width><base_depth>{depth}</base_depth>"
            f"<height>{height}</height></pyramid></geometry></{tag}>")


BOX = ("<collision_shape><transformation>0.1 0.2 0 0.3 0 0</transformation><geometry><box>"
       "<size>0.1 0.2 0.3</size></box></geometry></collision_shape>")


def _skel(shapes: str, inertia: str) -> str:
    return f"""<skel><world name="w"><skeleton name="s"><body name="b">
      <inertia>{inertia}</inertia>{shapes}</body>
      <joint type="free" name="j"><parent>world</parent><child>b</child></joint>
      </skeleton></world></skel>"""


MASS_ONLY = "<mass>0.2</mass>"
CASES = {
    # The case of test/sim/test_world_builder.py's xfail: DART gives exactly the identity.
    "alone": _skel(_pyramid(0.1, 0.08, 0.12), MASS_ONLY),
    "large and heavy": _skel(_pyramid(3.0, 2.0, 5.0), "<mass>40</mass>"),
    "posed": _skel(_pyramid(0.1, 0.08, 0.12, "0.1 0 0.2 0.3 0.2 0.1"), MASS_ONLY),
    "collision": _skel(_pyramid(0.1, 0.08, 0.12, tag="collision_shape"), MASS_ONLY),
    "with a box": _skel(_pyramid(0.1, 0.08, 0.12) + BOX, MASS_ONLY),
    "with a box, offset com": _skel(_pyramid(0.4, 0.3, 0.5, "0 0 0.1 0 0.5 0") + BOX,
                                    "<mass>0.2</mass><offset>0.05 0 0.02</offset>"),
    "two pyramids": _skel(_pyramid(0.1, 0.1, 0.1) + _pyramid(0.2, 0.1, 0.3, "0 0.3 0 1 0 0"),
                          MASS_ONLY),
    "explicit moment": _skel(_pyramid(0.1, 0.08, 0.12), MASS_ONLY + "<moment_of_inertia>"
                             "<ixx>0.1</ixx><iyy>0.2</iyy><izz>0.3</izz><ixy>0</ixy><ixz>0</ixz>"
                             "<iyz>0</iyz></moment_of_inertia>"),
}


def _dart_inertia(path: Path) -> tuple[float, np.ndarray, np.ndarray]:
    world = dartpy.utils.SkelParser.readWorld(str(path))
    inertia = world.getSkeleton(0).getBodyNode(0).getInertia()
    return inertia.getMass(), np.asarray(inertia.getLocalCOM()), np.asarray(inertia.getMoment())


@pytest.mark.parametrize("name", CASES)
def test_moment_equals_dart(name: str, tmp_path: Path) -> None:
    path = tmp_path / "pyramid.skel"
    path.write_text(CASES[name])
    mass, com, moment = _dart_inertia(path)
    ours = load_skel(path).skeletons[0].bodies[0].inertia
    assert ours.mass == mass
    np.testing.assert_allclose(ours.com, com, rtol=0, atol=TOL)
    np.testing.assert_allclose(ours.moment, moment, rtol=0, atol=TOL)


def test_lone_pyramid_is_exactly_the_identity(tmp_path: Path) -> None:
    path = tmp_path / "pyramid.skel"
    path.write_text(CASES["alone"])
    assert np.array_equal(_dart_inertia(path)[2], np.eye(3))
    body = load_skel(path).skeletons[0].bodies[0]
    assert np.array_equal(body.inertia.moment, np.eye(3))
    assert body.inertia.moment_from_shapes


def test_mass_only_pyramid_is_warned_about() -> None:
    world = load_skel(CASES["with a box"], name="pyramid.skel")
    messages = [w.message for w in world.warnings]
    assert any("pyramid" in m and "identity" in m for m in messages), messages
    explicit = load_skel(CASES["explicit moment"], name="pyramid.skel")
    assert not any("pyramid" in w.message for w in explicit.warnings)
