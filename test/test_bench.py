"""The benchmarks run from a fresh clone: no SKEL corpus, a tiny budget, exit status 0.

Issue 34: ``bench/parse.py``, ``bench/sim.py`` and ``bench/fuzz_skel.py``, run as the
README says, ended in a traceback or "SKEL corpus not found" where DART's SKEL corpus is
not beside the checkout (it is not shipped). Each now runs on the bundled and generated
robots without it, and says which goals it could not measure. The scripts run in a copy
of the checkout's files (tracked, and new ones not ignored) in a temporary folder, with
``SKEL_CORPUS`` unset: a fresh clone, wherever a corpus may lie. Nothing here is timed:
``--quick`` / ``--seconds 1`` only keep the runs short, and only exit status and wording
are checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout's files (tracked, and untracked ones git does not ignore), copied."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], cwd=REPO, capture_output=True,
                                check=False)
    except FileNotFoundError:
        pytest.skip("no git: the checkout's files cannot be listed")
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.decode(errors='replace').strip()}")
    files = listed.stdout.decode().split("\0")
    root = tmp_path_factory.mktemp("fresh") / "skel_ros"
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():  # a file deleted in the work tree is still listed
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    return root


def _fresh_clone_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a fresh clone: no SKEL corpus named anywhere."""
    env = dict(base if base is not None else os.environ)
    env.pop("SKEL_CORPUS", None)
    return env


def _bench(clone: Path, script: str, *args: str, cwd: Path, env: dict[str, str],
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(clone / "bench" / script), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def test_parse_runs_without_the_corpus(clone: Path, tmp_path: Path) -> None:
    pytest.importorskip("dartpy")
    done = _bench(clone, "parse.py", "--quick", cwd=tmp_path, env=_fresh_clone_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "no SKEL corpus (--corpus or SKEL_CORPUS): fullbody1.skel," in out
    for name in ("arm.skel", "quadruped.skel", "humanoid_generated.skel",
                 "chain_ball_40_generated.skel", "chain_100.skel"):
        assert f"\n{name} " in out, out
    assert "fullbody1.skel " not in out.split("goal\n", 1)[1]  # never a stand-in's name
    assert "goals: not judged (--quick)" in out


def test_parse_refuses_a_corpus_folder_that_is_not_one(clone: Path, tmp_path: Path) -> None:
    done = _bench(clone, "parse.py", "--quick", "--corpus", str(tmp_path), cwd=tmp_path,
                  env=_fresh_clone_env())
    assert done.returncode == 2
    assert done.stderr == f"bench/parse.py: {tmp_path}: not a SKEL corpus (no data/skel in it)\n"


def test_fuzz_runs_without_the_corpus(clone: Path, tmp_path: Path) -> None:
    done = _bench(clone, "fuzz_skel.py", "--seconds", "1", "--jobs", "1", "--out",
                  str(tmp_path / "failures"), cwd=tmp_path, env=_fresh_clone_env())
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "no SKEL corpus (--corpus or SKEL_CORPUS): fuzzing 6 seeds" in out, out
    assert "FAILURES     : 0" in out
    assert "inputs tried : 0 " not in out


@pytest.mark.ros
def test_sim_runs_without_the_corpus(clone: Path, ros_env: dict[str, str],
                                      tmp_path: Path) -> None:
    pytest.importorskip("dartpy")
    pytest.importorskip("mujoco")
    done = _bench(clone, "sim.py", "--quick", cwd=tmp_path, env=_fresh_clone_env(ros_env))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    out = done.stdout
    assert "no SKEL corpus (--corpus or SKEL_CORPUS): fullbody1's goal not measured" in out
    for engine in ("dart", "mujoco"):
        assert f"{engine}, humanoid (step 1 ms)" in out, out
        assert f"{engine}, quadruped (step 1 ms)" in out, out
    assert "PASS" not in out  # --quick judges nothing
    assert "MISS" not in out
    assert "report: joint_states at 100 Hz" in out
    assert not list(tmp_path.iterdir())  # nothing written where it was not asked to


def test_sim_without_the_corpus_refuses_fullbody1_clearly(clone: Path, tmp_path: Path) -> None:
    done = _bench(clone, "sim.py", "--worlds", "fullbody1", "--no-arm", cwd=tmp_path,
                  env=_fresh_clone_env())
    assert done.returncode == 2
    assert done.stderr.startswith("bench/sim.py: fullbody1 is in DART's SKEL corpus:")
    assert "Traceback" not in done.stderr


@pytest.mark.ros
def test_hardware_node_bench_prints_its_four_goals(clone: Path, tmp_path: Path,
                                                   ros_env: dict[str, str]) -> None:
    """``bench/hardware_node.py`` (docs/hardware.md, "CPU"): three processes on this
    machine's DDS, each goal judged on its line (met or missed is the run's, not checked)."""
    run = _bench(clone, "hardware_node.py", "--seconds", "1", cwd=tmp_path,
                 env=_fresh_clone_env(ros_env))
    assert run.returncode == 0, run.stderr[-2000:]
    for goal in ("holding, node CPU-s/s", "200 Hz stream, node CPU-s/s",
                 "per command, node / bare subscriber",
                 "loop cycles kept beside 1 busy process",
                 "context: per command, one node with the node's ROS entities"):
        assert goal in run.stdout, run.stdout
    assert "did not come up" not in run.stdout


@pytest.mark.ros
def test_physics_bench_prints_its_goal_lines(clone: Path, tmp_path: Path,
                                             ros_env: dict[str, str]) -> None:
    """``bench/physics.py`` (issue 28 item 5, docs/sim_to_real.md "Rehearsing before the
    robot arrives"): the arm's physics-backed emulation beside the simulation node, its
    real-time factor judged on its line (met or missed is the run's, not checked); the
    quadruped measured too, or said not measured."""
    pytest.importorskip("mujoco")
    run = _bench(clone, "physics.py", "--seconds", "1", cwd=tmp_path,
                 env=_fresh_clone_env(ros_env))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    out = run.stdout
    assert "did not come up" not in out, out
    arm, _, quadruped = out.partition("\nquadruped")
    assert arm.startswith("arm (4 Dynamixel servos)"), out
    assert "real-time factor of the emulated robot" in arm, out
    assert "(goal >= 0.99: " in arm, out
    assert "CPU-s/s: emulator " in arm, out
    assert "longest gap in joint_states stamps: real " in arm, out
    assert ("quadruped: not measured (MIT physics not available)" in out
            or "(goal >= 0.99: " in quadruped), out
    assert not list(tmp_path.iterdir())  # nothing written where it was not asked to


@pytest.mark.skip(reason="bench/sweep.py --quick still runs 6 sim-to-real runs (2 trials, each"
                         " sequentially, on the local pool and on Ray): about 100 s, beyond"
                         " this file's budget; test/sweep/ runs the sweep itself")
@pytest.mark.ros
def test_sweep_bench_prints_its_goal_lines(clone: Path, tmp_path: Path,
                                           ros_env: dict[str, str]) -> None:
    """``bench/sweep.py`` (issue 32, docs/sweep.md "Figures"): the three modes' times and
    the goal lines, not judged with --quick."""
    run = _bench(clone, "sweep.py", "--quick", cwd=tmp_path, env=_fresh_clone_env(ros_env))
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    for line in ("sequential 1 worker(s):", "local      2 worker(s):",
                 "speed-up sequential / local: ", "(not judged: --quick)"):
        assert line in run.stdout, run.stdout
    assert not list(tmp_path.iterdir())  # nothing written where it was not asked to
