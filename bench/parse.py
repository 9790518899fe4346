"""Benchmark: our load_skel against DART's SkelParser.readWorld, same files, same run.

Prints, per file, the median wall time of each (best of N repeats after a warm-up)
and the ratio ours / DART. Goal (issue 2): ratio <= 1.0.

Usage: .venv/bin/python bench/parse.py [--repeats N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))


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


def _time(fn, repeats: int) -> float:
    fn()  # warm-up (imports, caches)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    import dartpy

    from skel_ros.model import load_skel

    with tempfile.TemporaryDirectory() as tmp:
        chain = Path(tmp) / "chain_1000.skel"
        chain.write_text(generated_chain(1000))
        files = [
            CORPUS / "data/skel/fullbody1.skel",
            CORPUS / "data/skel/test/serial_chain_ball_joint_40.skel",
            chain,
        ]
        print(f"{'file':<36} {'ours ms':>10} {'DART ms':>10} {'ours/DART':>10}")
        worst = 0.0
        for f in files:
            ours = _time(lambda: load_skel(f), args.repeats)
            theirs = _time(lambda: dartpy.utils.SkelParser.readWorld(str(f)), args.repeats)
            ratio = ours / theirs
            worst = max(worst, ratio)
            print(f"{f.name:<36} {ours * 1e3:>10.2f} {theirs * 1e3:>10.2f} {ratio:>10.2f}")
        print(f"worst ratio {worst:.2f} (goal <= 1.0: {'met' if worst <= 1.0 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
