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
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from lxml import etree

from skel_ros.model.urdf import default_mesh_dir
from skel_ros.resources import package_uri

if TYPE_CHECKING:
    import os
    from collections.abc import Sequence

__all__ = ["generated_mesh_dirs", "portable_mesh_uris"]

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
