"""Benchmark: our load_skel against DART's SkelParser.readWorld, same files, same run.

What each side's time holds (file on disk -> complete model, teardown excluded):

* ours: ``load_skel(path)``: reading the file, lxml parsing, and building the
  whole immutable model (skeletons, joints, DOFs, bodies, shapes, inertias,
  locations, warnings). The mesh-bounds cache is cleared before every load, so
  meshes are read every time, as DART reads them.
* DART: ``dartpy.utils.SkelParser.readWorld(path)``: reading and parsing with
  tinyxml2 and building the dart World (skeletons, body and shape nodes, and
  the collision objects of the world's detector).

Samples of the two alternate (ours, DART, ours, ...) so that drift in machine
load hits both alike; the returned objects are freed outside the timed region.
Printed per file: the median and the minimum of each, ours / DART for both
statistics, and the goal for the median ratio with PASS or MISS:

* ``fullbody1.skel`` and ``serial_chain_ball_joint_40.skel`` of DART's SKEL corpus: ours /
  DART <= 3 (a small file is read once: a few milliseconds matter to no one; the goal only
  keeps it from growing);
* the generated 1,000-body chain: ours / DART <= 0.2 (the parser grows linearly; DART
  takes about 10 s per load of it here).

The corpus is optional: ``--corpus DIR`` or ``SKEL_CORPUS``. Without it the two corpus
goals are not measured (the script says so) and it times, without a goal, what the
repository has: the bundled ``examples/arm.skel`` and ``examples/quadruped.skel``, and a
generated humanoid and 40-link ball-joint chain of the same kind as the corpus files
(``bench/generated_models.py``), named as what they are. Files given on the command line
are timed too, without a goal. ``--quick`` is a smoke run (3 samples of one load, a
100-body chain instead of the 1,000-body one, so no goal is judged). The exit status is
0 whatever the verdicts (the machine's load moves the figures; read them), 2 for a
missing dartpy or corpus folder.

Usage: .venv/bin/python bench/parse.py [--repeats N] [--loads K] [--corpus DIR] [--quick]
                                       [extra.skel ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import generated_models  # noqa: E402 - bench/, after the path setup

BIG_FILE = 1_000_000  # bytes; big files get fewer samples of one load each
CHAIN_BODIES = 1000
QUICK_CHAIN_BODIES = 100
# The corpus files with a goal for ours / DART (median): name -> (path in the corpus, goal).
CORPUS_GOALS = {
    "fullbody1.skel": ("data/skel/fullbody1.skel", 3.0),
    "serial_chain_ball_joint_40.skel": ("data/skel/test/serial_chain_ball_joint_40.skel", 3.0),
}
CHAIN_GOAL = (f"chain_{CHAIN_BODIES}.skel", 0.2)
BUNDLED = (REPO / "examples" / "arm.skel", REPO / "examples" / "quadruped.skel")


def generated_chain(n: int) -> str:
    """A serial chain of ``n`` bodies with revolute joints, boxes and mass-only inertia."""
    return generated_models.serial_chain(n)


def corpus_folder(option: str | None) -> Path | None:
    """The SKEL corpus: ``--corpus``, else ``SKEL_CORPUS``, else none."""
    text = option or os.environ.get("SKEL_CORPUS", "")
    return Path(text) if text else None


def sample_seconds(fn: Callable[[], object], loads: int) -> float:
    """Seconds per call of ``fn``, over ``loads`` calls; results freed after the clock stops."""
    t0 = time.perf_counter()
    kept = [fn() for _ in range(loads)]
    elapsed = time.perf_counter() - t0
    del kept
    return elapsed / loads


def _compare(
    ours: Callable[[], object], dart: Callable[[], object], repeats: int, loads: int
) -> tuple[list[float], list[float]]:
    ours(), dart()  # warm-up (imports, caches of the interpreter)
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(repeats):
        mine.append(sample_seconds(ours, loads))
        theirs.append(sample_seconds(dart, loads))
    return mine, theirs


def _files(args: argparse.Namespace, corpus: Path | None, tmp: Path,
           ) -> tuple[list[Path], dict[str, float]]:
    """The files to time and the goals that apply to them (by file name)."""
    goals: dict[str, float] = {}
    files: list[Path] = []
    if corpus is not None:
        for name, (rel, goal) in CORPUS_GOALS.items():
            files.append(corpus / rel)
            goals[name] = goal
    else:
        files += [*BUNDLED,
                  generated_models.write(tmp, generated_models.HUMANOID_NAME,
                                         generated_models.humanoid()),
                  generated_models.write(tmp, "chain_ball_40_generated.skel",
                                         generated_models.serial_chain(40, "ball"))]
    bodies = QUICK_CHAIN_BODIES if args.quick else CHAIN_BODIES
    files.append(generated_models.write(tmp, f"chain_{bodies}.skel", generated_chain(bodies)))
    goals[CHAIN_GOAL[0]] = CHAIN_GOAL[1]
    return [*files, *args.files], {} if args.quick else goals


def _samples(path: Path, args: argparse.Namespace) -> tuple[int, int]:
    """(samples, loads per sample) for one file: big files get fewer samples of one load."""
    if args.quick:
        return args.repeats, args.loads
    if path.stat().st_size > BIG_FILE or path.name.startswith("chain_"):
        return max(3, args.repeats // 5), 1
    return args.repeats, args.loads


def _table(files: list[tuple[Path, tuple[int, int], float | None]],
           ours: Callable[[Path], Callable[[], object]],
           dart: Callable[[Path], Callable[[], object]]) -> int:
    """Time and print each (file, (samples, loads), goal); returns how many goals missed."""
    print(f"{'file':<34} {'ours ms':>17} {'DART ms':>17} {'ours/DART':>17}  goal")
    stats = f"{'median':>8} {'min':>8}"
    print(f"{'':<34} {stats} {stats} {stats}")
    missed = 0
    for f, (repeats, loads), goal in files:
        mine, theirs = _compare(ours(f), dart(f), repeats, loads)
        med_ours, med_dart = statistics.median(mine), statistics.median(theirs)
        ratio = med_ours / med_dart
        verdict = "" if goal is None else f"<= {goal}: {'PASS' if ratio <= goal else 'MISS'}"
        missed += goal is not None and ratio > goal
        print(
            f"{f.name:<34} {med_ours * 1e3:>8.2f} {min(mine) * 1e3:>8.2f}"
            f" {med_dart * 1e3:>8.2f} {min(theirs) * 1e3:>8.2f}"
            f" {ratio:>8.2f} {min(mine) / min(theirs):>8.2f}  {verdict}"
        )
    return missed


def _input_problem(corpus: Path | None, files: list[Path]) -> str:
    """What is wrong with the corpus folder or the files given ("" = nothing)."""
    if corpus is not None and not (corpus / "data" / "skel").is_dir():
        return f"{corpus}: not a SKEL corpus (no data/skel in it)"
    missing = [f for f in files if not f.is_file()]
    return f"{missing[0]}: no such file" if missing else ""


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25, help="samples per side and file")
    parser.add_argument("--loads", type=int, default=3, help="loads per sample")
    parser.add_argument("--corpus", metavar="DIR",
                        help="DART's SKEL corpus (default: SKEL_CORPUS; none: bundled and"
                             " generated robots, the corpus goals not measured)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 3 samples of one load, a 100-body chain, no goal")
    parser.add_argument("files", nargs="*", type=Path, help="more .skel files to compare")
    args = parser.parse_args()
    if args.quick:
        args.repeats, args.loads = 3, 1
    corpus = corpus_folder(args.corpus)
    problem = _input_problem(corpus, args.files)
    if problem:
        print(f"bench/parse.py: {problem}", file=sys.stderr)
        return 2
    try:
        import dartpy
    except ImportError:
        print("bench/parse.py: needs dartpy, the reference (pip install -e .[sim])",
              file=sys.stderr)
        return 2

    from skel_ros.model import load_skel
    from skel_ros.model.meshes import clear_mesh_cache

    def load_ours(path: Path) -> Callable[[], object]:
        def run() -> object:
            clear_mesh_cache()
            return load_skel(path)
        return run

    def load_dart(path: Path) -> Callable[[], object]:
        return lambda: dartpy.utils.SkelParser.readWorld(str(path))

    with tempfile.TemporaryDirectory() as tmp:
        files, goals = _files(args, corpus, Path(tmp))
        if corpus is None:
            print(f"no SKEL corpus (--corpus or SKEL_CORPUS): {', '.join(CORPUS_GOALS)} and"
                  " their goals not measured; timing the bundled and generated robots"
                  " instead, without a goal")
        if args.quick:
            print(f"--quick: {args.repeats} samples of {args.loads} load, a"
                  f" {QUICK_CHAIN_BODIES}-body chain: a smoke run, no goal judged")
        samples = [(f, _samples(f, args), goals.get(f.name) if k < len(files) - len(args.files)
                    else None) for k, f in enumerate(files)]
        missed = _table(samples, load_ours, load_dart)
        if args.quick:
            print("goals: not judged (--quick)")
        else:
            unmeasured = 0 if corpus is not None else len(CORPUS_GOALS)
            print(f"goals: {len(goals) - missed} of {len(goals)} met"
                  + (f"; {unmeasured} not measured (no corpus)" if unmeasured else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
