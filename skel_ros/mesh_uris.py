"""Mesh URIs another machine can load: ``package://`` wherever the ament index allows.

The URDF export (:mod:`skel_ros.model.urdf`) names every mesh by an absolute
``file://`` URI: the model's own mesh files where they are, and the meshes it
generates for shapes URDF has no element for (ellipsoid, capsule, cone, ...) in a
cache directory. Neither loads on another machine (RViz on an operator's
laptop). :func:`portable_mesh_uris` rewrites them:

* A generated mesh that is also present in a ``meshes/`` directory beside the
  model file (same name: generated meshes are named by a hash of their content)
  is taken from there. The bundled examples ship theirs in ``examples/meshes/``,
  installed with the package; ``skel-ros urdf MODEL --mesh-dir DIR/meshes``
  writes them for any model.
* A mesh file inside a ROS package becomes ``package://<package>/<path>`` when
  the ament index resolves that URI to this very file
  (:func:`skel_ros.resources.package_uri`).
* Anything else keeps its ``file://`` URI: it loads where the same path exists.

A recording goes further (:func:`embedded_mesh_uris`): the viewer that opens it
(Foxglove, Lichtblick) may have neither the path nor the package, so each mesh it
can read here is put into the URDF as a ``data:`` URI (base64, with the mesh's
media type, which is how those viewers pick the mesh loader).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from lxml import etree

from skel_ros.model.urdf import default_mesh_dir
from skel_ros.resources import package_uri, resolve

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

__all__ = ["embedded_mesh_uris", "generated_mesh_dirs", "portable_mesh_uris"]

MESH_MEDIA_TYPES = {".stl": "model/stl", ".dae": "model/vnd.collada+xml", ".obj": "model/obj",
                    ".glb": "model/gltf-binary", ".gltf": "model/gltf+json"}
"""Media type of a ``data:`` mesh URI by file suffix (the viewers' loaders go by it)."""

GENERATED_MESHES = "meshes"
"""Directory beside a model file where its generated meshes may be shipped."""


def generated_mesh_dirs(model_file: str | os.PathLike[str]) -> list[Path]:
    """Where the shipped generated meshes of the model at ``model_file`` would be.

    None for a model that was not read from a file (``World.source`` is then a name).
    """
    path = Path(model_file)
    return [path.parent / GENERATED_MESHES] if path.is_file() else []


def portable_mesh_uris(urdf: str, generated_dirs: Sequence[Path] = (),
                       mesh_dir: str | os.PathLike[str] | None = None) -> str:
    """``urdf`` with each ``<mesh filename>`` as portable as it can be (module docstring).

    Args:
        urdf: A URDF document as :func:`skel_ros.model.urdf.world_to_urdf` writes it.
        generated_dirs: Directories searched for a generated mesh of the same name.
        mesh_dir: Where the export wrote its generated meshes (the export's
            ``mesh_dir``; default :func:`~skel_ros.model.urdf.default_mesh_dir`). Only
            meshes there are looked up in ``generated_dirs``.

    Returns:
        The document, unchanged when no URI changes.
    """
    root = etree.fromstring(urdf.encode(), etree.XMLParser(resolve_entities=False,
                                                            no_network=True))
    cache = Path(mesh_dir if mesh_dir is not None else default_mesh_dir()).expanduser().resolve()
    changed = False
    for mesh in root.iter("mesh"):
        uri = mesh.get("filename", "")
        if not uri.startswith("file://"):
            continue
        path = Path(url2pathname(unquote(urlparse(uri).path)))
        for directory in generated_dirs if path.parent == cache else ():
            shipped = directory / path.name
            if shipped.is_file():
                path = shipped
                break
        portable = package_uri(path)
        if portable is not None and portable != uri:
            mesh.set("filename", portable)
            changed = True
    if not changed:
        return urdf
    body: str = etree.tostring(root, pretty_print=True, encoding="unicode")
    return '<?xml version="1.0"?>\n' + body


def _local_mesh(uri: str) -> Path | None:
    """The file a ``file://`` or ``package://`` mesh URI names on this machine, if any."""
    if uri.startswith("file://"):
        path = Path(url2pathname(unquote(urlparse(uri).path)))
    elif uri.startswith("package://"):
        try:
            path = resolve(uri)
        except FileNotFoundError:
            return None
    else:
        return None
    return path if path.is_file() else None


def embedded_mesh_uris(urdf: str) -> str:
    """``urdf`` with each mesh this machine has as a ``data:`` URI (the file, base64).

    A ``file://`` or ``package://`` mesh that resolves here to a file whose suffix has a
    media type (:data:`MESH_MEDIA_TYPES`: STL, COLLADA, OBJ, glTF) becomes
    ``data:<media type>;base64,<the file>``; any other URI is left as it is. A COLLADA or
    glTF file's own references (textures, buffers) are not embedded: they are looked up
    relative to a ``data:`` URI, which fails, and the viewer draws the mesh without them.

    Returns:
        The document, unchanged when no URI changes.
    """
    root = etree.fromstring(urdf.encode(), etree.XMLParser(resolve_entities=False,
                                                            no_network=True))
    changed = False
    for mesh in root.iter("mesh"):
        path = _local_mesh(mesh.get("filename", ""))
        media = MESH_MEDIA_TYPES.get(path.suffix.lower()) if path is not None else None
        if path is None or media is None:
            continue
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        mesh.set("filename", f"data:{media};base64,{data}")
        changed = True
    if not changed:
        return urdf
    body: str = etree.tostring(root, pretty_print=True, encoding="unicode")
    return '<?xml version="1.0"?>\n' + body
