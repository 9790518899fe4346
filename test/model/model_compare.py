"""Field-by-field comparison of two models (``World`` objects), for the round-trip tests.

Every dataclass field is compared recursively: names, enums, flags and counts
exactly, numbers (and numpy arrays) within ``tol`` (NaN equals NaN, infinities
must match). ``SKIP`` fields are provenance, not model: where an element was in
its file, the source name, the loader's warnings; a mesh's ``file_name`` is the
text as written (the resolved ``path`` is compared instead), and its ``bounds``
come from reading that same file.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from pathlib import Path
from typing import Any

import numpy as np

SKIP = {"location", "source", "warnings", "_by_name", "file_name", "bounds"}


def diff_models(a: Any, b: Any, *, tol: float = 1e-9, skip: frozenset[str] | set[str] = frozenset(),
                path: str = "world") -> list[str]:
    """Every difference between ``a`` and ``b`` (empty when equal)."""
    out: list[str] = []
    _diff(a, b, tol, SKIP | set(skip), path, out)
    return out


def _diff(  # noqa: C901, PLR0912, PLR0917 - one branch per kind of value
    a: Any, b: Any, tol: float, skip: set[str], path: str, out: list[str]
) -> None:
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(a) is not type(b):
            out.append(f"{path}: {type(a).__name__} != {type(b).__name__}")
            return
        for f in dataclasses.fields(a):
            if f.name in skip:
                continue
            _diff(getattr(a, f.name), getattr(b, f.name), tol, skip, f"{path}.{f.name}", out)
    elif isinstance(a, (tuple, list)):
        if not isinstance(b, (tuple, list)) or len(a) != len(b):
            other = len(b) if isinstance(b, (tuple, list)) else repr(b)
            out.append(f"{path}: length {len(a)} != {other}")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            name = getattr(x, "name", None)
            _diff(x, y, tol, skip, f"{path}[{i}{':' + name if isinstance(name, str) else ''}]", out)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if x.shape != y.shape:
            out.append(f"{path}: shape {x.shape} != {y.shape}")
            return
        same = (x == y) | (np.isnan(x) & np.isnan(y)) | (np.abs(x - y) <= tol)
        if not same.all():
            out.append(f"{path}: max difference {float(np.nanmax(np.abs(x - y))):.3g}")
    elif isinstance(a, (bool, enum.Enum)) or a is None or isinstance(a, str):
        if a != b:
            out.append(f"{path}: {a!r} != {b!r}")
    elif isinstance(a, (int, float)):
        if not isinstance(b, (int, float)) or isinstance(b, bool):
            out.append(f"{path}: {a!r} != {b!r}")
            return
        x, y = float(a), float(b)
        if not ((math.isnan(x) and math.isnan(y)) or x == y or abs(x - y) <= tol):
            out.append(f"{path}: {x!r} != {y!r}")
    elif isinstance(a, Path) or isinstance(b, Path):
        if (a is None) != (b is None) or (a is not None and Path(a).resolve() != Path(b).resolve()):
            out.append(f"{path}: {a!r} != {b!r}")
    elif a != b:
        out.append(f"{path}: {a!r} != {b!r}")
