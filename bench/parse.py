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

* ``fullbody1.skel`` and ``serial_chain_ball_joint_40.skel``: ours / DART <= 3 (a
  small file is read once: a few milliseconds matter to no one; the goal only keeps
  it from growing);
* the generated 1,000-body chain: ours / DART <= 0.2 (the parser grows linearly).

Files given on the command line are timed too, without a goal. The exit status is 0
whatever the verdicts (the machine's load moves the figures; read them).

Usage: .venv/bin/python bench/parse.py [--repeats N] [--loads K] [extra.skel ...]
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
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))
BIG_FILE = 1_000_000  # bytes; big files get fewer samples of one load each
CHAIN_BODIES = 1000
# The goal for ours / DART (median), by file name.
GOALS = {
    "fullbody1.skel": 3.0,
    "serial_chain_ball_joint_40.skel": 3.0,
    f"chain_{CHAIN_BODIES}.skel": 0.2,
}


def generated_chain(n: int) -> str:
    """A serial chain of ``n`` bodies with revolute joints, boxes and mass-only inertia."""
    bodies, joints = [], []
    for i in range(n):
        bodies.append(
            f'<body name="link{i}"><transformation>0 {-0.1 * i:.3f} 0 0 0 0</transformation>'
            "<inertia><mass>0.5</mass><offset>0 -0.05 0</offset></inertia>"
            "<visualization_shape><transformation>0 -0.05 0 0 0 0</transformation>"
            "<geometry><box><size>0.02 0.1 0.02</size></box></geometry></visualization_shape>"
            "<collision_shape><transformation>0 -0.05 0 0 0 0</transformation>"
            "<geometry><box><size>0.02 0.1 0.02</size></box></geometry></collision_shape></body>"
        )
        parent = "world" if i == 0 else f"link{i - 1}"
        joints.append(
            f'<joint type="revolute" name="j{i}"><parent>{parent}</parent><child>link{i}</child>'
            "<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit>"
            "<dynamics><damping>0.01</damping></dynamics></axis></joint>"
        )
    return (
        '<?xml version="1.0"?><skel version="1.0"><world name="w"><physics>'
        "<time_step>0.001</time_step><gravity>0 -9.81 0</gravity></physics>"
        f'<skeleton name="chain">{"".join(bodies)}{"".join(joints)}</skeleton></world></skel>'
    )


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


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25, help="samples per side and file")
    parser.add_argument("--loads", type=int, default=3, help="loads per sample")
    parser.add_argument("files", nargs="*", type=Path, help="more .skel files to compare")
    args = parser.parse_args()

    import dartpy

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
        chain = Path(tmp) / f"chain_{CHAIN_BODIES}.skel"
        chain.write_text(generated_chain(CHAIN_BODIES))
        files = [
            CORPUS / "data/skel/fullbody1.skel",
            CORPUS / "data/skel/test/serial_chain_ball_joint_40.skel",
            chain,
            *args.files,
        ]
        print(f"{'file':<34} {'ours ms':>17} {'DART ms':>17} {'ours/DART':>17}  goal")
        stats = f"{'median':>8} {'min':>8}"
        print(f"{'':<34} {stats} {stats} {stats}")
        missed = 0
        for f in files:
            big = f.stat().st_size > BIG_FILE or f == chain
            repeats, loads = (max(3, args.repeats // 5), 1) if big else (args.repeats, args.loads)
            mine, theirs = _compare(load_ours(f), load_dart(f), repeats, loads)
            med_ours, med_dart = statistics.median(mine), statistics.median(theirs)
            ratio = med_ours / med_dart
            goal = GOALS.get(f.name) if f in files[:3] else None
            verdict = "" if goal is None else f"<= {goal}: {'PASS' if ratio <= goal else 'MISS'}"
            missed += goal is not None and ratio > goal
            print(
                f"{f.name:<34} {med_ours * 1e3:>8.2f} {min(mine) * 1e3:>8.2f}"
                f" {med_dart * 1e3:>8.2f} {min(theirs) * 1e3:>8.2f}"
                f" {ratio:>8.2f} {min(mine) / min(theirs):>8.2f}  {verdict}"
            )
        print(f"goals: {len(GOALS) - missed} of {len(GOALS)} met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
