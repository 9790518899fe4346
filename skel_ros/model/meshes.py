"""Mesh bounding boxes, read the way DART (through Assimp) sees the vertices.

Only what the model needs: the axis-aligned bounds of a mesh file, which DART
uses for a mesh's volume and inertia. Wavefront OBJ, STL (ASCII and binary) and
COLLADA are read without Assimp. For COLLADA, DART resets the root node's
transform (dropping Assimp's up-axis rotation) and then pre-transforms the
vertices by the remaining node transforms; the ``<unit meter=..>`` scale is
kept (checked against DART on the corpus's kima meshes, to 1e-13).
"""

from __future__ import annotations

import functools
import stat
import struct
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from lxml import etree

if TYPE_CHECKING:
    from skel_ros.model.types import Array

_STL_VERTEX_FIELDS = 4  # "vertex x y z"
_STL_HEADER = 84  # 80-byte header + triangle count
_STL_TRIANGLE = 50  # normal, 3 vertices (float32), attribute (uint16)
_MATRIX_VALUES = 16
_VECTOR_VALUES = 3
_ROTATE_VALUES = 4  # axis x y z, angle in degrees


class MeshReadError(Exception):
    """A mesh file could not be read."""


def mesh_bounds(path: Path) -> tuple[Array, Array]:
    """Bounds (min, max) of all vertices of the mesh at ``path``, unscaled.

    Files are read once per (path, device, inode, modification time, size): a
    model that uses one large mesh in many shapes would otherwise parse it again
    for each.

    Raises:
        MeshReadError: The file is missing, unreadable or of an unknown kind.
    """
    try:
        st = path.stat()
    except (OSError, ValueError):
        return _read_bounds(path)  # raises the right MeshReadError
    if not stat.S_ISREG(st.st_mode):
        return _read_bounds(path)
    # The file's identity is in the key too: a relative path may name another file
    # after a chdir.
    identity = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
    lo, hi = _cached_bounds(str(path), identity)
    return lo.copy(), hi.copy()


def clear_mesh_cache() -> None:
    """Forget the bounds read so far: the next load reads every mesh file again."""
    _cached_bounds.cache_clear()


@functools.lru_cache(maxsize=64)
def _cached_bounds(path: str, identity: tuple[int, ...]) -> tuple[Array, Array]:  # noqa: ARG001
    return _read_bounds(Path(path))


def _read_bounds(path: Path) -> tuple[Array, Array]:
    try:
        if path.exists() and not path.is_file():
            # A directory, FIFO or device (/dev/zero) would fail, block or never end.
            raise MeshReadError(f"mesh {path} is not a regular file")
        data = path.read_bytes()
    except OSError as exc:
        raise MeshReadError(f"cannot read mesh {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # "embedded null byte"
        raise MeshReadError(f"cannot read mesh {path!r}: {exc}") from None
    suffix = path.suffix.lower()
    if suffix == ".obj":
        points = _obj_vertices(data)
    elif suffix == ".stl":
        points = _stl_vertices(data)
    elif suffix == ".dae":
        points = _dae_vertices(data)
    else:
        raise MeshReadError(f"unsupported mesh format {path.suffix!r} (obj, stl, dae are read)")
    if points.size == 0:
        raise MeshReadError(f"mesh {path} has no vertices")
    if not np.all(np.isfinite(points)):
        raise MeshReadError(f"mesh {path} has non-finite vertices")
    return points.min(axis=0), points.max(axis=0)


def _obj_vertices(data: bytes) -> Array:
    rows = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("v "):
            parts = line.split()
            try:
                rows.append([float(parts[1]), float(parts[2]), float(parts[3])])
            except (IndexError, ValueError):
                raise MeshReadError(f"bad OBJ vertex line {line[:60]!r}") from None
    return np.array(rows, dtype=float).reshape(-1, 3)


def _stl_vertices(data: bytes) -> Array:
    if len(data) >= _STL_HEADER:
        (count,) = struct.unpack_from("<I", data, 80)
        if _STL_HEADER + _STL_TRIANGLE * count == len(data):
            arr = np.frombuffer(data, dtype=np.uint8, offset=_STL_HEADER).reshape(
                count, _STL_TRIANGLE
            )
            floats = np.frombuffer(arr[:, 12:48].tobytes(), dtype="<f4").reshape(-1, 3)
            return floats.astype(float)
    rows = []
    for line in data.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if parts[:1] == ["vertex"]:
            if len(parts) < _STL_VERTEX_FIELDS:
                raise MeshReadError(f"bad STL vertex line {line[:60]!r}")
            try:
                rows.append([float(p) for p in parts[1:4]])
            except ValueError:
                raise MeshReadError(f"bad STL vertex line {line[:60]!r}") from None
    return np.array(rows, dtype=float).reshape(-1, 3)


def _local(tag: object) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def _dae_node_matrix(node: etree._Element) -> Array:
    mat = np.eye(4)
    for child in node:
        name = _local(child.tag)
        try:
            vals = [float(v) for v in (child.text or "").split()]
        except ValueError:
            raise MeshReadError("bad COLLADA transform values") from None
        if name == "matrix" and len(vals) == _MATRIX_VALUES:
            mat = mat @ np.array(vals).reshape(4, 4)
        elif name == "translate" and len(vals) == _VECTOR_VALUES:
            t = np.eye(4)
            t[:3, 3] = vals
            mat = mat @ t
        elif name == "scale" and len(vals) == _VECTOR_VALUES:
            mat = mat @ np.diag([*vals, 1.0])
        elif name == "rotate" and len(vals) == _ROTATE_VALUES:
            axis = np.array(vals[:3])
            norm = float(np.linalg.norm(axis))
            if norm > 0:
                from skel_ros.model.transforms import axis_angle

                t = np.eye(4)
                t[:3, :3] = axis_angle(axis / norm, np.radians(vals[3]))
                mat = mat @ t
    return mat


def _dae_vertices(data: bytes) -> Array:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise MeshReadError(f"COLLADA is not well-formed XML: {exc}") from None
    geometries = {geom.get("id", ""): pts for geom in root.iter("{*}geometry")
                  if (pts := _dae_positions(geom)) is not None}
    unit = 1.0
    unit_el = root.find("{*}asset/{*}unit")
    if unit_el is not None:
        try:
            unit = float(unit_el.get("meter", "1"))
        except ValueError:
            raise MeshReadError("bad COLLADA <unit meter=...>") from None
    scenes = list(root.iter("{*}visual_scene"))
    if not scenes:
        return np.concatenate(list(geometries.values())) if geometries else np.zeros((0, 3))
    points = [
        pts for top in scenes[0].findall("{*}node") for pts in _dae_scene_points(top, geometries)
    ]
    return np.concatenate(points) * unit if points else np.zeros((0, 3))


def _dae_positions(geom: etree._Element) -> Array | None:
    """Vertex positions (n, 3) of a ``<geometry>`` (the source its POSITION input names)."""
    sources: dict[str, Array] = {}
    for src in geom.iter("{*}source"):
        arr = src.find("{*}float_array")
        if arr is None:
            continue
        try:
            vals = np.array((arr.text or "").split(), dtype=float)
        except ValueError:
            raise MeshReadError("bad COLLADA float_array") from None
        sources[src.get("id", "")] = vals
    positions = None
    for verts in geom.iter("{*}vertices"):
        for inp in verts.iter("{*}input"):
            if inp.get("semantic") == "POSITION":
                positions = sources.get(inp.get("source", "").lstrip("#"))
    if positions is not None and positions.size % 3 == 0:
        return positions.reshape(-1, 3)
    return None


def _dae_scene_points(top: etree._Element, geometries: dict[str, Array]) -> list[Array]:
    """Transformed vertices of every geometry instance under the scene node ``top``."""
    # An explicit stack, not recursion: node nesting deeper than Python's recursion
    # limit is valid XML. Only the bounds matter, so the order does not.
    points: list[Array] = []
    stack = [(top, np.eye(4))]
    while stack:
        node, outer = stack.pop()
        mat = outer @ _dae_node_matrix(node)
        for inst in node.findall("{*}instance_geometry"):
            pts = geometries.get(inst.get("url", "").lstrip("#"))
            if pts is not None:
                points.append(pts @ mat[:3, :3].T + mat[:3, 3])
        stack.extend((child, mat) for child in node.findall("{*}node"))
    return points
