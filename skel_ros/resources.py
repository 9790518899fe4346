"""Finding the package's shared files (examples, config, launch) without ROS.

``package://skel_ros/<path>`` and bare names of bundled examples resolve, in
order, to: the source tree (editable installs and checkouts), every prefix on
``AMENT_PREFIX_PATH`` (colcon installs), and ``sys.prefix`` (pip installs with
data files), each under ``share/skel_ros``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = "skel_ros"
_SOURCE_ROOT = Path(__file__).resolve().parents[1]


def share_dirs() -> list[Path]:
    """Candidate directories holding ``examples/``, ``config/``, ``launch/``."""
    dirs = []
    if (_SOURCE_ROOT / "package.xml").is_file():
        dirs.append(_SOURCE_ROOT)
    dirs.extend(Path(prefix) / "share" / PACKAGE
                for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if prefix)
    dirs.append(Path(sys.prefix) / "share" / PACKAGE)
    return [d for d in dirs if d.is_dir()]


def resolve(ref: str | os.PathLike[str]) -> Path:
    """Resolve a path, ``package://skel_ros/...`` URI, or ``file://`` URI to a file path.

    Raises:
        FileNotFoundError: With the places searched, when nothing matches.
    """
    text = os.fspath(ref)
    if text.startswith("file://"):
        return Path(text[len("file://"):])
    prefix = f"package://{PACKAGE}/"
    if text.startswith("package://"):
        if not text.startswith(prefix):
            raise FileNotFoundError(f"{text}: only package://{PACKAGE}/ URIs can be resolved")
        rel = text[len(prefix):]
        tried = []
        for d in share_dirs():
            candidate = d / rel
            tried.append(str(candidate))
            if candidate.exists():
                return candidate
        raise FileNotFoundError(f"{text} not found (looked in: {', '.join(tried) or 'nowhere'})")
    return Path(text)


def example(name: str) -> Path:
    """Path of a bundled example file, e.g. ``example("arm.skel")``."""
    return resolve(f"package://{PACKAGE}/examples/{name}")
