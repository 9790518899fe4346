"""DART objects that dartpy 6.20's Python API cannot construct, made by DART's own factories.

The world builder creates everything through dartpy's API
(``create<X>JointAndBodyNodePair``, shape constructors, aspects, setters). dartpy
6.20 leaves a few holes, found by inspecting the wheel:

=========================  =========================================================
What                        Why dartpy cannot build it
=========================  =========================================================
mesh shapes                 ``MeshShape`` needs an ``aiScene``; nothing in dartpy
                            loads one (``MeshShape.loadMesh`` is not bound)
pyramid shapes              ``PyramidShape`` is not bound
euler joints in ZYX order   the ``AxisOrder`` enum is not registered, so neither
                            ``EulerJointProperties.mAxisOrder`` nor
                            ``EulerJoint.setAxisOrder`` can be called
planar joints' planes       the ``PlaneType`` enum is not registered, so
                            ``PlanarJointProperties.mPlaneType`` cannot be set;
                            ``set<X>Plane`` after creation is too late (the joint
                            was created in the XY plane and has named its DOFs)
soft bodies                 no ``SoftBodyNode`` class, no ``SoftBodyNodeHelper``
                            (``makeBoxProperties`` & co.) in dartpy
markers                     no ``Marker`` class, no ``createMarker``
=========================  =========================================================

Each is filled here with a DART factory fed a *tiny document generated from our
model* (never the user's file): meshes come from DART's URDF loader (one link with
the resolved mesh path and scale: the same ``MeshShape::loadMesh`` SkelParser uses),
the rest from ``SkelParser.readWorldXML`` on a one-body SKEL snippet, from which
only the missing object is taken (a shape, an ``EulerJointProperties`` carrying the
ZYX order, a ``PlanarJointProperties`` carrying the plane type, or a whole body
that the builder then moves into its skeleton and re-configures through the API).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET  # writing, never parsing, XML here
from typing import TYPE_CHECKING, Any

import numpy as np

from skel_ros.model.transforms import matrix_to_euler_xyz, skel_transform
from skel_ros.sim.errors import SimBuildError, SimUnsupportedError

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy.typing as npt

    from skel_ros.model.types import Body, Joint, PlaneType, Pyramid, SoftShape
    from skel_ros.sim._typing import Dart

def _num(x: float) -> str:
    """``x`` as text that std::stod reads back to the same double."""
    return repr(float(x))


def _vec(values: npt.ArrayLike) -> str:
    return " ".join(_num(v) for v in np.asarray(values, dtype=float).ravel())


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrib: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrib)
    if text is not None:
        el.text = text
    return el


_NEAR = 1e-9


def _shortest_near(x: float) -> float:
    """The shortest decimal within 1e-9 of ``x`` (a file's ``1`` comes back as 1.0)."""
    for digits in range(1, 18):
        y = float(f"{x:.{digits}g}")
        if abs(y - x) <= _NEAR:
            return y
    return x


def _transformation_text(t: npt.ArrayLike) -> str:
    """SKEL's 6 numbers for the 4x4 ``t``.

    The model keeps only the matrix. Re-deriving the angles with ``atan2`` gives
    values an ulp or two off the file's, and DART would turn them into a matrix
    that differs in the last bits. So the shortest decimals near the angles (what
    a file holds) are used when they reproduce ``t`` exactly with the model's own
    formula, which makes DART see the numbers the file gave it.
    """
    t = np.asarray(t, dtype=float)
    a, b, c = matrix_to_euler_xyz(t[:3, :3])
    pi = math.pi
    # Both Euler solutions (b and pi - b), each angle also shifted by a turn.
    for base in ((a, b, c), (a + pi, pi - b, c + pi)):
        for shifts in np.ndindex(3, 3, 3):
            angles = [_shortest_near(x + (k - 1) * 2 * pi)
                      for x, k in zip(base, shifts, strict=True)]
            if np.array_equal(skel_transform(np.array([*t[:3, 3], *angles])), t):
                return _vec([*t[:3, 3], *angles])
    return _vec([*t[:3, 3], a, b, c])


def _plane_element(joint: ET.Element, plane: str, axes: Sequence[npt.ArrayLike]) -> None:
    """``<plane type=...>`` (with its translation axes when arbitrary) under ``joint``."""
    el = _sub(joint, "plane", type=plane)
    if plane == "arbitrary":
        for tag, axis in zip(("translation_axis1", "translation_axis2"), axes, strict=True):
            _sub(_sub(el, tag), "xyz", _vec(axis))


class DartFactories:
    """Makes the objects of the table above; keeps its scratch worlds alive while in use.

    One instance per world build. Nothing here reads the SKEL file the model came
    from.
    """

    def __init__(self) -> None:
        import dartpy

        self._dart = dartpy
        self._scratch: list[Any] = []  # template worlds/skeletons: keep them alive
        self._zyx_joint: Any = None
        self._planar_joints: dict[PlaneType, Any] = {}

    # ----------------------------------------------------------------- skel snippets

    def _read_snippet(self, skeleton: ET.Element, what: str) -> Dart:
        root = ET.Element("skel", version="1.0")
        world = _sub(root, "world", name="template")
        world.append(skeleton)
        text = ET.tostring(root, encoding="unicode")
        dart_world = self._dart.utils.SkelParser.readWorldXML(text)
        if dart_world is None or dart_world.getNumSkeletons() != 1:
            raise SimBuildError(f"DART could not build the template for {what}")
        self._scratch.append(dart_world)
        return dart_world.getSkeleton(0)

    @staticmethod
    def _skeleton(body_name: str, joint_type: str) -> tuple[ET.Element, ET.Element, ET.Element]:
        skel = ET.Element("skeleton", name="template")
        body = _sub(skel, "body", name=body_name)
        joint = _sub(skel, "joint", type=joint_type, name="template joint")
        _sub(joint, "parent", "world")
        _sub(joint, "child", body_name)
        return skel, body, joint

    def euler_zyx_properties(self) -> Dart:
        """A fresh ``EulerJointProperties`` whose axis order is ZYX (everything else default)."""
        if self._zyx_joint is None:
            skel, _, joint = self._skeleton("b", "euler")
            _sub(joint, "axis_order", "zyx")
            self._zyx_joint = self._read_snippet(skel, "a ZYX euler joint").getJoint(0)
        return self._zyx_joint.getEulerJointProperties()

    def planar_properties(self, plane: PlaneType) -> Dart:
        """A fresh ``PlanarJointProperties`` whose plane type is ``plane``.

        For the arbitrary plane the caller sets ``mTransAxis1`` / ``mTransAxis2``;
        the joint's constructor derives the rotation axis from them, as it does
        for SkelParser.
        """
        joint = self._planar_joints.get(plane)
        if joint is None:
            skel, _, jel = self._skeleton("b", "planar")
            _plane_element(jel, plane.value, ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)))
            joint = self._read_snippet(skel, f"a planar joint in the {plane.value} plane")
            joint = self._planar_joints[plane] = joint.getJoint(0)
        return joint.getPlanarJointProperties()

    def pyramid_shape(self, geometry: Pyramid) -> Dart:
        """A DART ``PyramidShape`` with the model's dimensions."""
        skel, body, _ = self._skeleton("b", "weld")
        shape = _sub(body, "visualization_shape")
        pyr = _sub(_sub(shape, "geometry"), "pyramid")
        _sub(pyr, "base_width", _num(geometry.base_width))
        _sub(pyr, "base_depth", _num(geometry.base_depth))
        _sub(pyr, "height", _num(geometry.height))
        template = self._read_snippet(skel, "a pyramid shape")
        return template.getBodyNode(0).getShapeNode(0).getShape()

    def template_body(self, body: Body, joint: Joint) -> Dart:
        """A body carrying what only SkelParser can create: its soft shape and its markers.

        The body hangs from the world by a joint of ``joint``'s type (and euler
        axis order); the caller moves it into its skeleton with ``moveTo`` and
        then sets the joint's and the body's properties through the API. Mass,
        gravity mode and shapes are *not* in the template.

        Raises:
            SimUnsupportedError: The joint type is one SkelParser cannot build
                (screw, translational2d).
        """
        jtype = joint.type.value
        if not joint.type.spec.dart_builds:  # SkelParser cannot build it: no template
            raise SimUnsupportedError(
                f"{body.location}: body {body.name!r} needs a DART template (soft shape or "
                f"markers) but hangs from a {jtype} joint, which SkelParser cannot build "
                "and dartpy cannot give a soft body or markers"
            )
        skel, bel, jel = self._skeleton(body.name, jtype)
        if joint.euler_order is not None:
            _sub(jel, "axis_order", joint.euler_order.value)
        for tag, axis in zip(("axis", "axis2"), joint.axes, strict=False):
            _sub(_sub(jel, tag), "xyz", _vec(axis))  # else SkelParser logs a missing axis
        if joint.plane is not None:  # planar: created in its own plane
            _plane_element(jel, joint.plane.value, joint.plane_axes)
        if body.soft is not None:
            self._soft_shape(bel, body, body.soft)
        for marker in body.markers:
            mel = _sub(bel, "marker", name=marker.name)
            _sub(mel, "offset", _vec(marker.offset))
        return self._read_snippet(skel, f"body {body.name!r}").getBodyNode(0)

    @staticmethod
    def _soft_shape(parent: ET.Element, body: Body, soft: SoftShape) -> None:
        el = _sub(parent, "soft_shape")
        _sub(el, "total_mass", _num(soft.total_mass))
        if not np.array_equal(np.asarray(soft.transform), np.eye(4)):
            _sub(el, "transformation", _transformation_text(soft.transform))
        geom = _sub(el, "geometry")
        kind = _sub(geom, soft.kind)
        if soft.kind == "box":
            _sub(kind, "size", _vec(soft.size))
            _sub(kind, "frags", " ".join(str(int(f)) for f in soft.frags))
        elif soft.kind in ("sphere", "ellipsoid", "cylinder"):
            if soft.kind == "ellipsoid":
                _sub(kind, "size", _vec(soft.size))
            else:
                _sub(kind, "radius", _num(soft.radius))
            if soft.kind == "cylinder":
                _sub(kind, "height", _num(soft.height))
            _sub(kind, "num_slices", str(int(soft.num_slices)))
            _sub(kind, "num_stacks", str(int(soft.num_stacks)))
            if soft.kind == "cylinder":
                _sub(kind, "num_rings", str(int(soft.num_rings)))
        else:
            raise SimUnsupportedError(
                f"{body.location}: unknown soft shape kind {soft.kind!r} of body {body.name!r}"
            )
        for tag, value in (("kv", soft.kv), ("ke", soft.ke), ("damp", soft.damp)):
            if value is not None:
                _sub(el, tag, _num(value))

    # ----------------------------------------------------------------- meshes

    def mesh_shape(self, path: Path, scale: npt.ArrayLike) -> Dart:
        """A DART ``MeshShape`` of the file ``path`` scaled by ``scale``.

        Raises:
            SimBuildError: The file cannot be loaded (DART's SkelParser would crash).
        """
        uri = path.resolve().as_uri()
        robot = ET.Element("robot", name="mesh")
        link = _sub(robot, "link", name="mesh")
        geometry = _sub(_sub(link, "visual"), "geometry")
        _sub(geometry, "mesh", filename=uri, scale=_vec(scale))
        text = ET.tostring(robot, encoding="unicode")
        loader = self._dart.utils.DartLoader()
        skel = loader.parseSkeletonString(text, self._dart.common.Uri(uri))
        shape = None
        if skel is not None and skel.getNumBodyNodes() == 1:
            nodes = skel.getBodyNode(0).getShapeNodes()
            if nodes:
                shape = nodes[0].getShape()
        if shape is None or not all(math.isfinite(v) for v in shape.getBoundingBox().getMin()):
            raise SimBuildError(f"DART could not load the mesh {path}")
        shape.setScale(np.asarray(scale, dtype=float))
        self._scratch.append(skel)
        return shape
