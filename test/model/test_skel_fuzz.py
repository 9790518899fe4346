"""Property: any mutation of a corpus file loads (a World) or raises SkelError, quickly.

Hypothesis picks a file from a representative sample of the corpus (meshes, soft
bodies, many joint types, a file DART rejects, a legacy file, and a synthetic file
with the elements the corpus lacks) and a list of mutation steps; the mutators work
at the XML level (drop / duplicate / reorder / move elements, garbage, NaN, inf and
1e308 numbers, wrong token counts, tag renames, attribute changes, inserted snippets)
and at the byte level (truncation, byte flips, inserted / deleted / duplicated
bytes). Any other exception, a SkelError that only wraps an internal error, or a
load slower than ``BOUND`` seconds fails.

The mutators and the check live in ``bench/fuzz_skel.py``, the standalone fuzzer
that runs the same thing at scale; it is imported here by path.

Reproducible: ``derandomize=True`` and no example database, so CI runs the same
examples every time.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from corpus_data import CORPUS, requires_corpus
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from skel_ros.model import World, load_skel

if TYPE_CHECKING:
    from types import ModuleType

BOUND = 2.0  # seconds per load: a bound against hangs and runaway work, not a benchmark
FUZZ_SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "fuzz_skel.py"


def _import_fuzz_script() -> ModuleType:
    name = "skel_fuzz_script"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, FUZZ_SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


fuzz = _import_fuzz_script()
SEEDS = fuzz.sample_seeds(CORPUS) if fuzz.corpus_available(CORPUS) else []
MUTATOR_NAMES = sorted(fuzz.MUTATORS)

COMMON = settings(
    deadline=None,  # the time bound is checked per load, below
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

seed_indexes = st.integers(min_value=0, max_value=max(len(SEEDS) - 1, 0))
step_seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _check(seed_index: int, steps: list[tuple[str, int]]) -> None:
    seed = SEEDS[seed_index]
    text = fuzz.apply_steps(seed.text, steps)
    start = time.monotonic()
    outcome = fuzz.check_input(text, seed.name, via_file=fuzz.has_byte_steps(steps), bound=BOUND)
    elapsed = time.monotonic() - start
    event(f"outcome: {outcome.kind} {outcome.error_class}".strip())  # --hypothesis-show-statistics
    where = f"{Path(seed.name).name} with steps {steps}"
    assert outcome.kind in ("loaded", "skel_error"), f"{where}:\n{outcome.detail}"
    assert outcome.seconds <= BOUND, f"{where}: one load took {outcome.seconds:.2f} s"
    loads = 2 if fuzz.has_byte_steps(steps) or not text.lstrip().startswith("<") else 1
    assert elapsed <= loads * BOUND, f"{where}: took {elapsed:.2f} s"


# --------------------------------------------------------------------------- the sample


@requires_corpus
def test_sample_is_representative() -> None:
    texts = {Path(s.name).name: s.text for s in SEEDS}
    assert len(SEEDS) >= 10
    assert any("<mesh>" in t and ".dae" in t for t in texts.values())  # COLLADA meshes
    assert any("<mesh>" in t and ".obj" in t for t in texts.values())  # OBJ meshes
    assert any("<soft_shape>" in t for t in texts.values())
    assert any(t.lstrip().startswith("dofs") for t in texts.values())  # legacy
    joint_types = {name: {jt for jt in ("weld", "revolute", "prismatic", "universal", "ball",
                                        "euler", "translational", "planar", "free", "screw")
                          if f'type="{jt}"' in t} for name, t in texts.items()}
    assert max(len(v) for v in joint_types.values()) >= 8  # the synthetic file
    assert sum(len(v) >= 4 for v in joint_types.values()) >= 2


@requires_corpus
@pytest.mark.parametrize("seed_index", range(len(SEEDS)), ids=lambda i: Path(SEEDS[i].name).name)
def test_unmutated_sample_loads_from_string_as_from_file(seed_index: int) -> None:
    # Loading the text with name=<path> must resolve meshes as loading the path does.
    seed = SEEDS[seed_index]
    outcome = fuzz.check_input(seed.text, seed.name, bound=BOUND)
    assert outcome.kind in ("loaded", "skel_error"), outcome.detail
    if Path(seed.name).is_file() and outcome.kind == "loaded":
        from_string = load_skel(seed.text, name=seed.name)
        from_file = load_skel(seed.name)
        assert isinstance(from_string, World)
        assert [len(s.bodies) for s in from_string.skeletons] == [
            len(s.bodies) for s in from_file.skeletons]
        assert [sh.name for s in from_string.skeletons for b in s.bodies for sh in b.shapes] == [
            sh.name for s in from_file.skeletons for b in s.bodies for sh in b.shapes]


@requires_corpus
def test_synthetic_seed_loads() -> None:
    # It exists to reach the parser's less used branches, so it must get past them.
    seed = fuzz.synthetic_seed(CORPUS)
    world = load_skel(seed.text, name=seed.name)
    assert [len(s.joints) for s in world.skeletons] == [8, 2]


@requires_corpus
@pytest.mark.parametrize("name", MUTATOR_NAMES)
def test_mutator_changes_input_and_is_deterministic(name: str) -> None:
    mutate = fuzz.MUTATORS[name]
    changed = 0
    for seed in SEEDS:
        for step_seed in range(3):
            first = mutate(seed.text, random.Random(step_seed))  # noqa: S311
            assert first == mutate(seed.text, random.Random(step_seed))  # noqa: S311
            changed += first != seed.text
    assert changed >= len(SEEDS)  # not a no-op


# --------------------------------------------------------------------------- the property


@requires_corpus
@pytest.mark.parametrize("name", MUTATOR_NAMES)
@settings(COMMON, max_examples=80)
@given(seed_index=seed_indexes, step_seed=step_seeds)
def test_single_mutation_loads_or_raises_skel_error(name: str, seed_index: int,
                                                    step_seed: int) -> None:
    _check(seed_index, [(name, step_seed)])


# 900 examples (was 1,500; ~8 ms each, most of this file's time): every one of the 12
# seeds is drawn 31+ times, each of the 16 mutators 120+ times, and each stack depth
# (2-5 steps) 119+ times. The single-mutation test above runs each mutator alone 80
# times, and bench/fuzz_skel.py runs the same check at scale.
@requires_corpus
@settings(COMMON, max_examples=900)
@given(
    seed_index=seed_indexes,
    steps=st.lists(st.tuples(st.sampled_from(MUTATOR_NAMES), step_seeds), min_size=2,
                   max_size=5),
)
def test_stacked_mutations_load_or_raise_skel_error(seed_index: int,
                                                    steps: list[tuple[str, int]]) -> None:
    _check(seed_index, steps)


@requires_corpus
@settings(COMMON, max_examples=150)
@given(
    seed_index=seed_indexes,
    cut=st.floats(min_value=0.0, max_value=1.0),
)
def test_truncation_anywhere_loads_or_raises_skel_error(seed_index: int, cut: float) -> None:
    # Truncation at every relative position, including inside the first bytes.
    seed = SEEDS[seed_index]
    data = seed.text.encode("utf-8", "surrogateescape")
    text = data[: int(cut * len(data))].decode("utf-8", "surrogateescape")
    outcome = fuzz.check_input(text, seed.name, via_file=True, bound=BOUND)
    assert outcome.kind in ("loaded", "skel_error"), outcome.detail
    assert outcome.seconds <= BOUND
