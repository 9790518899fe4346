"""Shared fixtures for the model tests: the SKEL corpus and DART's fixtures of it."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))
REFERENCE = CORPUS / "reference"


def fixture_files() -> list[Path]:
    """Every DART fixture (one per loadable corpus file), sorted."""
    if not REFERENCE.is_dir():
        return []
    return sorted(p for p in REFERENCE.rglob("*.skel.json"))


def fixture_id(path: Path) -> str:
    return str(path.relative_to(REFERENCE)).removesuffix(".json")


def load_fixture(path: Path) -> dict:
    return json.loads(path.read_text())


def corpus_file(fixture: dict) -> Path:
    return CORPUS / fixture["source"]


requires_corpus = pytest.mark.skipif(
    not REFERENCE.is_dir(),
    reason=f"SKEL corpus not found at {CORPUS} (set SKEL_CORPUS to its path)",
)


TOL = 1e-9

# Keys of the fixtures that are not part of the model:
# - after_steps: simulation results (checked by the simulation tests);
# - loader_messages: DART's console output (our warnings are checked elsewhere);
# - dartpy_version, source: provenance;
# - meshpath: the absolute path on the machine that wrote the fixtures.
NOT_MODEL = {"after_steps", "loader_messages", "dartpy_version", "source", "meshpath"}


def _as_float(v: Any) -> float:
    return float(v) if not isinstance(v, str) else float(v)  # "inf", "-inf", "nan"


def compare(ours: Any, dart: Any, path: str, errors: list[str]) -> None:
    """Collect every difference between ``ours`` and ``dart`` (fixture layout)."""
    if isinstance(dart, dict):
        for key, value in dart.items():
            if key in NOT_MODEL:
                continue
            if key not in ours:
                errors.append(f"{path}.{key}: missing")
                continue
            compare(ours[key], value, f"{path}.{key}", errors)
    elif isinstance(dart, list):
        if not isinstance(ours, list) or len(ours) != len(dart):
            errors.append(f"{path}: {ours!r:.80} has another length than {dart!r:.80}")
            return
        for i, (a, b) in enumerate(zip(ours, dart)):
            compare(a, b, f"{path}[{i}]", errors)
    elif isinstance(dart, bool) or dart is None:
        if ours != dart:
            errors.append(f"{path}: {ours!r} != {dart!r}")
    elif isinstance(dart, (int, float)) or dart in ("inf", "-inf", "nan"):
        a, b = _as_float(ours), _as_float(dart)
        same = (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= TOL
        if not same:
            errors.append(f"{path}: {a!r} != {b!r}")
    elif ours != dart:
        errors.append(f"{path}: {ours!r} != {dart!r}")
