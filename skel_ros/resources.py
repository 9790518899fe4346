"""Finding files of ROS packages without ROS: ``package://`` URIs both ways.

``package://skel_ros/<path>`` and bare names of bundled examples resolve, in
order, to: the source tree (editable installs and checkouts), every prefix on
``AMENT_PREFIX_PATH`` (colcon installs), and ``sys.prefix`` (pip installs with
data files), each under ``share/skel_ros``.

``package://<other package>/<path>`` resolves through the ament index, as ROS
tools (RViz's resource retriever, ``ament_index_python``) do: the share
directory of a package is ``<prefix>/share/<package>`` of the first prefix on
``AMENT_PREFIX_PATH`` that has ``share/ament_index/resource_index/packages/<package>``.

:func:`package_uri` goes the other way: the ``package://`` URI under which the
ament index finds a given file, if there is one.
"""

from __future__ import annotations

import filecmp
import os
import sys
from pathlib import Path

PACKAGE = "skel_ros"
_SOURCE_ROOT = Path(__file__).resolve().parents[1]
_SCHEME = "package://"
_INDEX = Path("share", "ament_index", "resource_index", "packages")


def share_dirs() -> list[Path]:
    """Candidate directories holding ``examples/``, ``config/``, ``launch/``."""
    dirs = []
    if (_SOURCE_ROOT / "package.xml").is_file():
        dirs.append(_SOURCE_ROOT)
    dirs.extend(Path(prefix) / "share" / PACKAGE for prefix in _ament_prefixes())
    dirs.append(Path(sys.prefix) / "share" / PACKAGE)
    return [d for d in dirs if d.is_dir()]


def _ament_prefixes() -> list[Path]:
    return [Path(p) for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]


def package_share(name: str) -> Path | None:
    """The share directory the ament index gives for package ``name``, or None.

    As ``ament_index_python.get_package_share_directory``: the first prefix on
    ``AMENT_PREFIX_PATH`` whose resource index lists the package.
    """
    for prefix in _ament_prefixes():
        if (prefix / _INDEX / name).is_file():
            return prefix / "share" / name
    return None


def resolve(ref: str | os.PathLike[str]) -> Path:
    """Resolve a path, ``package://<package>/...`` URI, or ``file://`` URI to a file path.

    Raises:
        FileNotFoundError: With the places searched, when nothing matches.
    """
    text = os.fspath(ref)
    if text.startswith("file://"):
        return Path(text[len("file://"):])
    if not text.startswith(_SCHEME):
        return Path(text)
    package, _, rel = text[len(_SCHEME):].partition("/")
    if not package or not rel:
        raise FileNotFoundError(f"{text}: a package URI is package://<package>/<path>")
    if package == PACKAGE:
        dirs = share_dirs()
    else:
        share = package_share(package)
        if share is None:
            where = os.environ.get("AMENT_PREFIX_PATH", "") or "unset"
            raise FileNotFoundError(f"{text}: package {package!r} is not in the ament index"
                                    f" (AMENT_PREFIX_PATH: {where}; source its setup file)")
        dirs = [share]
    tried = []
    for d in dirs:
        candidate = d / rel
        tried.append(str(candidate))
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"{text} not found (looked in: {', '.join(tried) or 'nowhere'})")


def example(name: str) -> Path:
    """Path of a bundled example file, e.g. ``example("arm.skel")``."""
    return resolve(f"package://{PACKAGE}/examples/{name}")


def package_uri(path: str | os.PathLike[str]) -> str | None:
    """The ``package://`` URI that the ament index resolves to the file ``path``, or None.

    Two cases are found:

    * ``path`` is inside ``<prefix>/share/<package>/`` of a prefix on
      ``AMENT_PREFIX_PATH`` (an installed package), and that is the share
      directory the index gives for the package;
    * ``path`` is inside a package's source tree (a directory with a
      ``package.xml``), the package is in the index, and the installed file at the
      same relative path is this file or a copy of it (``colcon build`` copies,
      ``--symlink-install`` links).

    Anything else (a file outside every package, a package that is not built, an
    installed copy that differs) gives None: a ``package://`` URI would then name
    another file or none.
    """
    given = Path(path).absolute()
    for candidate in dict.fromkeys((given, given.resolve())):
        uri = _installed_uri(candidate) or _source_uri(candidate)
        if uri is not None:
            return uri
    return None


def _installed_uri(path: Path) -> str | None:
    for prefix in _ament_prefixes():
        share = prefix.absolute() / "share"
        try:
            package, *rest = path.relative_to(share).parts
        except ValueError:
            continue
        found = package_share(package)
        # Only the first prefix that has the package counts: it is the one ROS uses.
        if rest and found is not None and found.absolute() == share / package:
            return _SCHEME + "/".join([package, *rest])
    return None


def _source_uri(path: Path) -> str | None:
    for root in path.parents:
        manifest = root / "package.xml"
        if not manifest.is_file():
            continue
        name = _package_name(manifest)
        share = package_share(name) if name else None
        if name is None or share is None:
            return None
        rel = path.relative_to(root)
        installed = share / rel
        try:
            same = installed.is_file() and (installed.samefile(path)
                                            or filecmp.cmp(installed, path, shallow=False))
        except OSError:
            return None
        return _SCHEME + "/".join([name, *rel.parts]) if same else None
    return None


def _package_name(manifest: Path) -> str | None:
    """``<name>`` of a package.xml, or None when it cannot be read."""
    from lxml import etree

    try:
        root = etree.parse(str(manifest), etree.XMLParser(resolve_entities=False,
                                                          no_network=True)).getroot()
    except (OSError, etree.XMLSyntaxError):
        return None
    name = root.findtext("name")
    return name.strip() if name and name.strip() else None
