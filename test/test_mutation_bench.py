"""bench/mutation.py's targets: every safety-critical module is mutated, against test files
that exist and import it (no mutation run here; that is `bench/mutation.py` itself)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_bench", REPO / "bench" / "mutation.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def test_every_safety_critical_module_is_a_target() -> None:
    mutated = {f for t in BENCH.TARGETS.values() for f in t.files}
    for module in BENCH.SAFETY_CRITICAL:
        path = REPO / module
        assert path.exists(), module
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for f in files:
            assert f.relative_to(REPO).as_posix() in mutated, f"{f} is not mutated"


@pytest.mark.parametrize("name", sorted(BENCH.TARGETS))
def test_a_targets_files_and_tests_exist(name: str) -> None:
    target = BENCH.TARGETS[name]
    assert target.files
    assert target.tests
    for f in (*target.files, *target.tests):
        assert (REPO / f).is_file(), f
        assert f.endswith(".py"), f
    for t in target.tests:
        assert Path(t).name.startswith("test_"), t
    assert len(set(target.tests)) == len(target.tests)


@pytest.mark.parametrize("name", sorted(BENCH.TARGETS))
def test_a_targets_tests_import_what_it_mutates(name: str) -> None:
    """At least one test of the subset imports each mutated package or module."""
    target = BENCH.TARGETS[name]
    imported: set[str] = set()
    for t in target.tests:
        for node in ast.walk(ast.parse((REPO / t).read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported.update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names)
    for f in target.files:
        dotted = f.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        parents = {dotted.rsplit(".", k)[0] for k in range(dotted.count("."))}
        assert imported & ({dotted} | parents - {"skel_ros"}), (f, sorted(imported))


def test_the_wire_functions_of_the_cia402_target_exist() -> None:
    source = (REPO / BENCH.TARGETS["cia402"].files[0]).read_text(encoding="utf-8")
    defined: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.ClassDef):
            defined.update(f"{node.name}.{f.name}" for f in node.body
                           if isinstance(f, ast.FunctionDef))
    assert set(BENCH.TARGETS["cia402"].functions) <= defined


@pytest.mark.parametrize(("mutant", "function"), [
    ("skel_ros.hardware.mit.codec.x_float_to_uint__mutmut_3", "float_to_uint"),
    ("skel_ros.hardware.safety.xǁMotionLimiterǁstep__mutmut_12", "MotionLimiter.step"),
    ("skel_ros.hardware.safety.xǁMotionLimiterǁ_velocity_step__mutmut_1",
     "MotionLimiter._velocity_step"),
])
def test_mutant_names_map_to_functions(mutant: str, function: str) -> None:
    assert BENCH.function_of(mutant) == function


def test_a_sample_is_seeded_and_limited_to_the_targets_functions() -> None:
    target = BENCH.Target(files=("x.py",), tests=("test_x.py",), functions=("f",))
    names = [f"m.x_f__mutmut_{i}" for i in range(50)] + ["m.x_g__mutmut_1"]
    first = BENCH.select(names, target, 10, seed=3)
    assert len(first) == 10
    assert first == BENCH.select(names, target, 10, seed=3)
    assert all(BENCH.function_of(n) == "f" for n in first)
    assert len(BENCH.select(names, target, None, seed=3)) == 50
