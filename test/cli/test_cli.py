"""The ``skel-ros`` console script: inspect, validate, urdf, demo."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "model"))

from corpus_data import CORPUS, compare, load_fixture, requires_corpus  # noqa: E402
from skel_ros_in_process import skel_ros_main  # noqa: E402
from xacro_models import ONE_JOINT_XACRO  # noqa: E402

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
    assert "[-2.2, 2.2]" in out
    assert "[-0.5, 0.5]" in out
    assert "no warnings" in out


def test_inspect_lists_warnings_with_line(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "w.skel"
    f.write_text(ARM.read_text().replace('actuator="force"', 'actuator="torque"'))
    assert main(["inspect", str(f)]) == 0
    out = capsys.readouterr().out
    line = next(i + 1 for i, t in enumerate(f.read_text().splitlines()) if "torque" in t)
    assert f"{f}:{line}" in out
    assert "torque" in out


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
    assert ok.returncode == 0
    assert "OK" in ok.stdout
    bad = tmp_path / "bad.skel"
    bad.write_text("<skel><world><skeleton name='s'>\n<body name='b'>\n<inertia></inertia>"
                   "</body></skeleton></world></skel>")
    result = run("validate", str(ARM), str(bad))  # the console script
    assert result.returncode == 1
    assert f"{bad}:3" in result.stderr
    assert "mass" in result.stderr


def test_validate_strict_fails_on_warnings(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "w.skel"
    f.write_text(ARM.read_text().replace(
        "<dynamics>", "<dynamics><sprint_stiffness>1</sprint_stiffness>", 1))
    assert skel_ros_main(capsys, "validate", str(f)).returncode == 0
    strict = skel_ros_main(capsys, "validate", "--strict", str(f))
    assert strict.returncode == 1
    assert "sprint_stiffness" in strict.stderr


def test_urdf_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "arm.urdf"
    result = skel_ros_main(capsys, "urdf", str(ARM), "-o", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "<robot" in text
    assert 'name="elbow"' in text


def test_missing_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    result = skel_ros_main(capsys, "inspect", "/nonexistent/robot.skel")
    assert result.returncode == 1
    assert "/nonexistent/robot.skel" in result.stderr
    assert "Traceback" not in result.stderr


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


def test_inspect_prints_a_chain_of_any_length(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The tree printer walks without recursion: a 3000-body chain printed (a
    RecursionError before)."""
    n = 3000
    links = "".join(
        f'<body name="b{k}"><inertia><mass>1</mass></inertia></body>'
        f'<joint type="revolute" name="j{k}"><parent>{"world" if k == 0 else f"b{k - 1}"}'
        f"</parent><child>b{k}</child><axis><xyz>0 1 0</xyz></axis></joint>"
        for k in range(n))
    chain = tmp_path / "chain.skel"
    chain.write_text(f'<skel version="1.0"><world name="w"><skeleton name="s">{links}'
                     "</skeleton></world></skel>")
    assert main(["inspect", str(chain)]) == 0
    out = capsys.readouterr().out
    assert f"skeleton 's': {n} bodies, {n} joints, {n} DOFs" in out
    last = next(line for line in out.splitlines() if f"j{n - 1} (revolute" in line)
    assert last.index("└──") == 2 + 4 * (n - 1)  # one level deeper per body


def test_ros2_control_takes_the_model_arguments(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """``--fixed-base`` and ``NAME:=VALUE`` as for every command that reads a model."""
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text(ONE_JOINT_XACRO)
    assert main(["ros2-control", str(xacro), "joint:=elbow", "--fixed-base"]) == 0
    out = capsys.readouterr().out
    assert '<joint name="elbow">' in out
    assert "floating" not in out.split("<ros2_control")[1]
    assert main(["ros2-control", str(xacro)]) == 0
    floating = capsys.readouterr().out
    assert '<joint name="hinge">' in floating
    assert "floating" in floating.split("<ros2_control")[1]


def test_validate_takes_model_args_as_well_as_words(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``--model-args`` and ``NAME:=VALUE`` among the files both reach the xacro (before,
    ``--model-args`` was accepted and dropped: the xacro's defaults were checked)."""
    xacro = tmp_path / "robot.urdf.xacro"
    xacro.write_text(
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="extra" default="false"/>'
        '<link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1"'
        ' ixy="0" ixz="0" iyz="0"/></inertial></link><xacro:if value="$(arg extra)">'
        '<link name="b2"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"'
        ' ixz="0" iyz="0"/></inertial></link><joint name="j" type="revolute"><parent'
        ' link="base"/><child link="b2"/><axis xyz="0 0 1"/><limit lower="-1" upper="1"'
        ' effort="1" velocity="1"/></joint></xacro:if></robot>')
    for args in (["--model-args", "extra:=true"], ["extra:=true"]):
        assert main(["validate", str(xacro), *args, "--fixed-base"]) == 0
        assert "OK (1 skeleton(s), 1 DOFs" in capsys.readouterr().out, args


# Every argument that names a file to read, by its dest, and where it is: each must be
# read through skel_ros.cli.paths.input_file (package:// and file:// URIs resolved). A new
# file argument with one of these names is checked too; one named otherwise goes here.
INPUT_FILE_DESTS = {"file", "files", "input", "model", "config", "recording", "skel",
                    "mapping", "hardware", "hardware_config", "criteria", "trajectory"}
NOT_INPUT_FILES = {("sim-to-real", "hardware"),  # a flag: the real actuators
                   ("emulate", "model")}  # an actuator model name (XM430-W350)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from skel_ros.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_file_argument_of_every_command_takes_package_uris() -> None:
    """Issue 34: ``skel-ros compare run.mcap --skel package://skel_ros/examples/arm.skel``
    (docs/sim_to_real.md) said "cannot read file": ``compare`` read ``--skel`` as a path."""
    from skel_ros.cli.paths import input_file

    checked, wrong = [], []
    for name, sub in _subcommands().items():
        for action in sub._actions:
            if action.dest not in INPUT_FILE_DESTS or (name, action.dest) in NOT_INPUT_FILES:
                continue
            checked.append((name, action.dest))
            if action.type is not input_file:
                wrong.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not wrong, f"file arguments read as plain paths: {wrong}"
    assert ("compare", "skel") in checked  # the table still finds them
    assert ("sim-to-real", "trajectory") in checked


def test_compare_reads_a_model_given_as_a_package_uri(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from joint_state_mcap import joint_state, write_joint_states

    def messages():
        for k in range(150):
            stamp = (0, 0)
            for stream in ("command", "sim", "real"):
                yield int(1e9 * (1000 + k / 50)) + len(stream), stream, joint_state(
                    stamp, ["elbow", "wrist"], [0.01 * k, 1.9])  # the wrist at its limit

    recording = tmp_path / "run.mcap"
    write_joint_states(recording, messages())
    status = main(["compare", f"file://{recording}", "--skel",
                   "package://skel_ros/examples/arm.skel", "--format", "md",
                   "--out", str(tmp_path / "report")])
    output = capsys.readouterr()
    assert status == 0, output
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    # The model's limits were read: the wrist sits at its upper limit (1.9), the elbow not.
    hits = {line.split("|")[1].strip(): line.split("|")[-2].strip()
            for line in report.splitlines() if line.startswith(("| elbow", "| wrist"))}
    assert hits["elbow"] == "0 / 0 / 0", report
    assert hits["wrist"] != "0 / 0 / 0", report
