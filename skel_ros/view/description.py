"""A robot's model from its ``robot_description`` (URDF text), embedded meshes included.

A recording's descriptions carry their meshes as ``data:`` URIs
(:func:`skel_ros.mesh_uris.embedded_mesh_uris`), which the URDF reader does not open:
each is written once to a directory (named by a hash of its bytes, with the suffix of
its media type) and the URDF names that file instead. The root link is welded to the
world, as the nodes publish a robot on its ``world`` link.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import TYPE_CHECKING

from lxml import etree

from skel_ros.mesh_uris import MESH_MEDIA_TYPES
from skel_ros.model.interchange_errors import UrdfError
from skel_ros.model.urdf_reader import load_urdf
from skel_ros.view.errors import ViewError

if TYPE_CHECKING:
    from pathlib import Path

    from skel_ros.model.types import World

__all__ = ["world_from_description"]

_SUFFIX = {media: suffix for suffix, media in MESH_MEDIA_TYPES.items()}


def world_from_description(urdf: str, *, label: str, mesh_dir: Path) -> World:
    """The model of the URDF text ``urdf``, its ``data:`` meshes written to ``mesh_dir``.

    Args:
        urdf: The ``robot_description`` text.
        label: Where it comes from, for messages (``run.mcap: /sim/robot_description``).
        mesh_dir: Where embedded meshes are written (created when one is).

    Raises:
        ViewError: not URDF, a ``data:`` URI that is not base64 mesh data, or a model the
            reader refuses (its message, with the line).
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(urdf.encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:
        raise ViewError(f"{label}: not well-formed XML: {exc.msg}") from None
    changed = False
    for mesh in root.iter("mesh"):
        uri = mesh.get("filename", "")
        if uri.startswith("data:"):
            mesh.set("filename", str(_write_data_uri(uri, label, mesh.sourceline, mesh_dir)))
            changed = True
    text = etree.tostring(root, encoding="unicode") if changed else urdf
    try:
        return load_urdf(text, name=label, fixed_base=True)
    except UrdfError as exc:
        raise ViewError(str(exc)) from None


def _write_data_uri(uri: str, label: str, line: int | None, mesh_dir: Path) -> Path:
    head, sep, payload = uri.partition(",")
    media, _, encoding = head.removeprefix("data:").partition(";")
    suffix = _SUFFIX.get(media)
    if not sep or encoding != "base64" or suffix is None:
        raise ViewError(f"{label}:{line}: a data: mesh URI must be"
                        f" data:<{'|'.join(_SUFFIX)}>;base64,..., not {head[:60]!r}")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ViewError(f"{label}:{line}: the data: mesh URI is not valid base64") from None
    path = mesh_dir / f"{hashlib.sha256(data).hexdigest()[:24]}{suffix}"
    if not path.is_file():
        try:
            mesh_dir.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as exc:
            raise ViewError(f"cannot write mesh {path}: {exc.strerror or exc}") from None
    return path.resolve()
