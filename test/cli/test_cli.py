"""The ``skel-ros`` console script: inspect, validate, urdf, demo."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "model"))

from corpus_data import CORPUS, compare, load_fixture, requires_corpus  # noqa: E402
from skel_ros_in_process import skel_ros_main  # noqa: E402

from skel_ros.cli.main import main  # noqa: E402

ARM = REPO / "examples" / "arm.skel"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    exe = Path(sys.executable).parent / "skel-ros"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "skel_ros.cli.main"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=120, check=False)


def test_inspect_shows_tree_limits_and_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(ARM)]) == 0
    out = capsys.readouterr().out
    assert "skeleton 'arm': 5 bodies, 5 joints, 4 DOFs" in out
    assert "elbow (revolute, force): upper_arm -> forearm" in out
    assert "[-2.2, 2.2]" in out and "[-0.5, 0.5]" in out
    assert "no warnings" in out


def test_inspect_lists_warnings_with_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "w.skel"
    f.write_text(ARM.read_text().replace('actuator="force"', 'actuator="torque"'))
    assert main(["inspect", str(f)]) == 0
    out = capsys.readouterr().out
    line = next(i + 1 for i, t in enumerate(f.read_text().splitlines()) if "torque" in t)
    assert f"{f}:{line}" in out and "torque" in out


@requires_corpus
def test_inspect_json_has_the_fixture_layout(capsys: pytest.CaptureFixture[str]) -> None:
    fixture = load_fixture(CORPUS / "reference/data/skel/fullbody1.skel.json")
    result = skel_ros_main(capsys, "inspect", "--json", str(CORPUS / "data/skel/fullbody1.skel"))
    assert result.returncode == 0, result.stderr
    errors: list[str] = []
    compare(json.loads(result.stdout), fixture, "", errors)
    assert not errors, errors[:10]


def test_validate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = skel_ros_main(capsys, "validate", str(ARM))
    assert ok.returncode == 0 and "OK" in ok.stdout
    bad = tmp_path / "bad.skel"
    bad.write_text("<skel><world><skeleton name='s'>\n<body name='b'>\n<inertia></inertia>"
                   "</body></skeleton></world></skel>")
    result = run("validate", str(ARM), str(bad))  # the console script
    assert result.returncode == 1
    assert f"{bad}:3" in result.stderr and "mass" in result.stderr


def test_validate_strict_fails_on_warnings(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "w.skel"
    f.write_text(ARM.read_text().replace("<dynamics>", "<dynamics><sprint_stiffness>1</sprint_stiffness>", 1))
    assert skel_ros_main(capsys, "validate", str(f)).returncode == 0
    strict = skel_ros_main(capsys, "validate", "--strict", str(f))
    assert strict.returncode == 1 and "sprint_stiffness" in strict.stderr


def test_urdf_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "arm.urdf"
    result = skel_ros_main(capsys, "urdf", str(ARM), "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "<robot" in text and 'name="elbow"' in text


def test_missing_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = skel_ros_main(capsys, "inspect", "/nonexistent/robot.skel")
    assert result.returncode == 1
    assert "/nonexistent/robot.skel" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(("protocol", "valid"), [
    ("dynamixel", "0..252"), ("canopen", "1..127"), ("mit", "1..2046")])
def test_bad_ids_are_a_usage_error_with_the_valid_range(
        protocol: str, valid: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``--ids abc`` or ``--ids 1-300`` of ``scan`` and ``emulate``: exit 2 as argparse's
    own errors, a message naming the protocol's id range, no traceback."""
    where = ["--port", "/dev/null"] if protocol == "dynamixel" else ["--can-interface", "virtual"]
    for command in (["scan", "--protocol", protocol, *where], ["emulate", protocol]):
        for ids, message in (("abc", "not a list of ids: 'abc'"),
                             ("1-3000", f"{protocol} ids are {valid}; '1-3000' is outside"),
                             ("5-2", "'5-2' is an empty range")):
            assert main([*command, "--ids", ids]) == 2, (command, ids)
            err = capsys.readouterr().err
            assert f"skel-ros {command[0]}: error: argument --ids: {message}" in err, err
    if protocol != "dynamixel":
        return  # the console script once: the same parser for every protocol
    result = run("scan", "--protocol", "dynamixel", "--port", "/dev/null", "--ids", "1-300")
    assert result.returncode == 2
    assert "dynamixel ids are 0..252; '1-300' is outside" in result.stderr
    assert "Traceback" not in result.stderr
