"""``skel-ros simulate`` against DART's fixtures.

test_malformed_file_names_file_and_line runs the console script as a user runs it (a child
process: its exit status, stdout and stderr); the others run the same ``main(argv)`` in
this process, which spares each the second a new interpreter with DART costs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("dartpy")

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "model"))

from corpus_data import CORPUS, REFERENCE, requires_corpus  # noqa: E402
from skel_ros_in_process import skel_ros_main  # noqa: E402
from xacro_models import ONE_JOINT_XACRO  # noqa: E402

# Proof 1's tolerances (test_world_builder.py; the worst corpus file differs by
# 5.3e-15 / 1.8e-12). The JSON carries every double exactly (shortest repr).
POS_TOL, VEL_TOL = 1e-14, 1e-11


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    exe = Path(sys.executable).parent / "skel-ros"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "skel_ros.cli.main"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, check=False)


def _fixture(rel: str) -> dict:
    return json.loads((REFERENCE / f"{rel}.json").read_text())["after_steps"]


def _assert_matches(ours: dict, expected: dict) -> None:
    assert set(ours) == set(expected) == {"steps", "time", "positions", "velocities"}
    assert ours["steps"] == expected["steps"]
    assert ours["time"] == expected["time"]
    assert [len(q) for q in ours["positions"]] == [len(q) for q in expected["positions"]]
    assert [len(v) for v in ours["velocities"]] == [len(v) for v in expected["velocities"]]
    for key, tol in (("positions", POS_TOL), ("velocities", VEL_TOL)):
        for a, b in zip(ours[key], expected[key], strict=True):
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                       rtol=0, atol=tol)


@requires_corpus
def test_json_matches_fixture_with_limits_off(capsys: pytest.CaptureFixture[str]) -> None:
    """A humanoid with 21 position-limited DOFs and a ground skeleton without DOFs.

    (No corpus file reaches a position limit within 100 steps, so the fixtures hold
    with limits on too; --no-limits is the SkelParser-equivalent setting.)
    """
    rel = "data/skel/kima/kima_human_edited.skel"
    proc = skel_ros_main(capsys, "simulate", str(CORPUS / rel), "--steps", "100", "--json",
                    "--no-limits")
    assert proc.returncode == 0, proc.stderr
    _assert_matches(json.loads(proc.stdout), _fixture(rel))


@requires_corpus
def test_json_matches_fixture_by_default_when_no_limit_is_reached(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Limits are enforced by default; a file without position limits is unaffected."""
    rel = "data/skel/test/double_pendulum.skel"
    proc = skel_ros_main(capsys, "simulate", str(CORPUS / rel), "--json")  # --steps: 100
    assert proc.returncode == 0, proc.stderr
    _assert_matches(json.loads(proc.stdout), _fixture(rel))


@requires_corpus
def test_table_lists_every_dof(capsys: pytest.CaptureFixture[str]) -> None:
    rel = "data/skel/test/single_pendulum.skel"
    proc = skel_ros_main(capsys, "simulate", str(CORPUS / rel), "--steps", "100")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("single_pendulum.skel: 100 steps, t = 0.100000 s, limits enforced")
    assert lines[1].split() == ["joint", "position", "velocity"]
    name, q, v = lines[2].rsplit(None, 2)
    expected = _fixture(rel)
    assert name == "joint 1"
    assert float(q) == expected["positions"][0][0]  # printed with 17 significant digits
    assert float(v) == expected["velocities"][0][0]


def test_malformed_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.skel"
    bad.write_text('<skel version="1.0"><world name="w">\n<skeleton name="s">\n'
                   '<body name="b">\n</skeleton></world></skel>\n')
    proc = run("simulate", str(bad), "--steps", "10")  # the console script
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert f"error: {bad}:4: malformed XML" in proc.stderr


def test_missing_file_and_bad_steps(tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    proc = skel_ros_main(capsys, "simulate", str(tmp_path / "none.skel"))
    assert proc.returncode == 1
    assert "none.skel: cannot read file" in proc.stderr
    proc = skel_ros_main(capsys, "simulate", str(tmp_path / "none.skel"), "--steps", "-3")
    assert proc.returncode == 2  # argparse's usage error
    assert "must be >= 0" in proc.stderr


def test_xacro_arguments_and_fixed_base(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``NAME:=VALUE`` after the file and ``--fixed-base``, as for every model command."""
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text(ONE_JOINT_XACRO)
    proc = skel_ros_main(capsys, "simulate", str(xacro), "joint:=elbow", "--fixed-base",
                         "--steps", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    welded = json.loads(proc.stdout)
    assert [len(q) for q in welded["positions"]] == [1]  # the elbow only
    proc = skel_ros_main(capsys, "simulate", str(xacro), "--steps", "3")
    assert proc.returncode == 0, proc.stderr
    assert "hinge" in proc.stdout
    assert "floating_base" in proc.stdout
    proc = skel_ros_main(capsys, "simulate", str(xacro), "joint")
    assert proc.returncode != 0
    assert "'joint' is not a xacro argument NAME:=VALUE" in proc.stderr
