"""The shell commands of README.md and docs/*.md, run as a reader runs them.

Every fenced block of shell (untagged, ``bash``, ``sh``) is read; each command in it
(continuation lines joined, comments dropped) is either run here (:data:`RUN`: exit
status, and the output where the doc shows some) or listed in :data:`SKIPPED` with the
reason: it needs a ROS 2 distro's ``ros2`` CLI, hardware, a display, the network, or
runs for minutes with no option to shorten it. A block that holds no command (a
diagram, an error tree, a file's text, output) is listed in :data:`NOT_COMMANDS`. A
command of the docs in none of the tables fails the test, as does a table entry no doc
holds any more: a doc change is a test change.

Each command runs in a workspace of its own (a temporary folder): ``examples/``,
``config/``, ``bench/``, ``test/`` and ``.venv`` of this checkout linked in, the placeholder
files the docs name (``robot.skel``, ``robot.urdf``, ``robots/*.skel`` ...) made from the
bundled arm, ``.venv/bin`` first on ``PATH`` (``skel-ros`` as after ``source
install/setup.bash``), the user cache and ROS logs in the temporary folder, ROS
confined to this test session (``ros_env``) for the nodes. Nodes and emulators that run
until Ctrl-C are stopped with SIGINT once they say they are up, and must then exit with
status 0.

Besides the commands: the error message docs/model.md shows is the one printed, the
log line the sim-to-real docs quote is the one a sim-to-real simulation prints,
docs/dynamixel.md's Python example runs and gives the port its comment shows, no
command runs whatever ``python`` is first on ``PATH``, and every documented launch of
``hardware.launch.py`` says whether its servos are emulated.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[1]
DOCS = (REPO / "README.md", *sorted((REPO / "docs").glob("*.md")))
SHELL_LANGUAGES = ("", "bash", "sh", "shell")
TIMEOUT = 120.0  # s, a generous bound per command on a loaded machine (never asserted)

# --------------------------------------------------------------------------- extraction

_FENCE = re.compile(r"^\s*```(\S*)\s*$")


@dataclass(frozen=True)
class DocCommand:
    """One command of a doc: where, its text (one line), the output lines shown after it."""

    where: str  # "docs/x.md:12"
    text: str
    shown: tuple[str, ...]


def _blocks(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line of the opening fence, the block's lines) of every shell block of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        if fence.group(1) in SHELL_LANGUAGES:
            yield i + 1, lines[i + 1:end]
        i = end + 1


def _without_comment(line: str) -> str:
    """``line`` up to a ``#`` that starts a comment (outside quotes)."""
    quote = ""
    for k, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k].rstrip()
    return line.rstrip()


_PROGRAMS = ("skel-ros", "ros2", "source", "cd", "rosdep", "pip", "colcon", "sim_node",
             "python", "sudo")


def _is_command(line: str) -> bool:
    word = line.split(maxsplit=1)[0] if line.split() else ""
    return word in _PROGRAMS or word.startswith((".venv/bin/", "./scripts/"))


def doc_commands(path: Path) -> tuple[list[DocCommand], list[tuple[str, str]]]:
    """The commands of ``path``'s shell blocks, and (where, first line) of blocks without."""
    name = str(path.relative_to(REPO))
    found: list[DocCommand] = []
    others: list[tuple[str, str]] = []
    for start, block in _blocks(path):
        logical: list[tuple[int, str]] = []  # (line, text): continuation lines joined
        pending = ""
        for k, raw in enumerate(block):
            joined = f"{pending} {_without_comment(raw.strip())}".strip()
            if joined.endswith("\\"):
                pending = joined[:-1].rstrip()
                continue
            pending = ""
            if joined:
                logical.append((start + 1 + k, " ".join(joined.split())))
        if not any(_is_command(text) for _, text in logical):
            others.append((f"{name}:{start}", block[0].strip() if block else ""))
            continue
        mine: list[DocCommand] = []
        for n, text in logical:
            if _is_command(text):
                mine.append(DocCommand(f"{name}:{n}", text, ()))
            elif mine:  # a line the doc shows after a command: its output
                mine[-1] = DocCommand(mine[-1].where, mine[-1].text, (*mine[-1].shown, text))
        found += mine
    return found, others


def all_doc_commands() -> tuple[list[DocCommand], list[tuple[str, str]]]:
    """:func:`doc_commands` of every doc."""
    commands: list[DocCommand] = []
    others: list[tuple[str, str]] = []
    for path in DOCS:
        found, without = doc_commands(path)
        commands += found
        others += without
    return commands, others


# --------------------------------------------------------------------------- the tables

ROS2_CLI = "needs a ROS 2 distro's ros2 CLI (none here: rclpy comes from PyPI wheels)"
DISTRO = "sets up a ROS 2 distro workspace (/opt/ros, rosdep, colcon; network)"
HARDWARE = "needs the real actuators (a serial adapter or CAN bus)"
SIM_TO_REAL = ("a run of three nodes, ~20 s, with no option to shorten it (too long for"
               " this test); test/nodes/test_sim_to_real.py runs sim-to-real end to end")
REAL_SIM_TO_REAL = "drives the actuators of the hardware YAML (--hardware): hardware"
BENCH = "a benchmark, a minute or more; test/test_bench.py runs each script with --quick"
SYNOPSIS = "a usage synopsis (placeholders FILE, MODEL, [options]), not a command"
PLACEHOLDER = "names a placeholder path (/path/to/robot.skel)"
SETUP = "builds .venv, or runs the whole test suite (minutes; network for the wheels)"
RECORD = ("records a running ROS graph (a launched sim_to_real) until Ctrl-C;"
          " test/cli/test_compare_cmd.py::test_record_then_compare records one, and"
          " test/cli/test_cli.py checks that --skel takes package://")
CORPUS = "needs DART's SKEL corpus (not shipped); test/test_bench.py runs it without"
LEROBOT = ("needs your arm's LeRobot calibration file; test/cli/test_calibration_cli.py"
           " runs init-hardware --from-lerobot (and --map) and export-calibration on an"
           " SO-101's")

SKIPPED: dict[str, str] = {
    "./scripts/setup.sh && .venv/bin/skel-ros demo": SETUP,
    "./scripts/test.sh": SETUP,
    "source /opt/ros/$ROS_DISTRO/setup.bash": DISTRO,
    "cd ~/ros2_ws/src && git clone <this repository> skel_ros && cd ..": DISTRO,
    "rosdep install --from-paths src --ignore-src -y": DISTRO,
    'pip install "dartpy>=6.20,<7" mcap mcap-ros2-support "canopen>=2.3,<3"': DISTRO,
    "colcon build --packages-select skel_ros": DISTRO,
    "source install/setup.bash": DISTRO,
    "skel-ros scan --protocol dynamixel --port /dev/ttyUSB0": HARDWARE,
    "skel-ros scan --port /dev/ttyUSB0 --protocol dynamixel --baud 1000000 [--ids 1-20]":
        HARDWARE + "; its output line is checked on the emulator (docs/dynamixel.md:295)",
    "skel-ros scan --port /dev/ttyUSB0 --protocol feetech --baud 1000000": HARDWARE,
    ".venv/bin/python bench/hardware.py --feetech-only": BENCH,
    "skel-ros init-hardware so101.urdf --from-lerobot"
    " ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/my_arm.json -o hw.yaml":
        LEROBOT,
    "skel-ros init-hardware arm.urdf --from-lerobot my_arm.json --map shoulder_pan=joint1"
    " --map gripper=jaw -o hw.yaml": LEROBOT,
    "skel-ros export-calibration hw.yaml --to lerobot -o my_arm.json": LEROBOT,
    "skel-ros clear-faults config/hardware/arm_dynamixel.yaml":
        HARDWARE + " (the YAML's /dev/ttyUSB0)",
    "skel-ros sim-to-real": SIM_TO_REAL,
    "skel-ros sim-to-real --criteria config/criteria/arm.yaml --junit junit.xml": SIM_TO_REAL,
    "skel-ros sim-to-real --engines dart,mujoco": SIM_TO_REAL,
    "skel-ros demo": SIM_TO_REAL + " (the demo is one, after the model and URDF)",
    ".venv/bin/skel-ros sim-to-real --skel examples/arm.skel --hardware-config"
    " config/hardware/arm_dynamixel.yaml --trajectory examples/arm_trajectory.xml":
        SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real --skel examples/quadruped.skel --hardware-config"
    " config/hardware/quadruped_mit.yaml --trajectory examples/quadruped_trajectory.yaml"
    " --out out/quadruped": SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real": SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real --ideal-actuators": SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real --truth payload.yaml --criteria config/criteria/arm.yaml":
        SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real --truth truth.yaml --trajectory excite.yaml"
    " --publish-rate 200 --record-goals --out out/excite":
        SIM_TO_REAL + " (60 s of excitation; test/identify/data holds a recording made so,"
                      " which the identify command there fits)",
    ".venv/bin/skel-ros sim-to-real --truth truth.yaml --skel out/identified/model.skel"
    " --sim-params out/identified/identified.yaml --out out/identified_run": SIM_TO_REAL
    + " (test/identify/test_sim_params.py checks --sim-params up to the nodes; bench/"
      "identify_gap.py runs it)",
    ".venv/bin/skel-ros sim-to-real --skel examples/quadruped.skel --hardware-config"
    " config/hardware/quadruped_mit.yaml --trajectory examples/quadruped_trajectory.yaml":
        SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real --hardware": REAL_SIM_TO_REAL,
    "skel-ros sim-to-real --skel package://skel_ros/examples/so101_arm.urdf --hardware-config"
    " package://skel_ros/config/hardware/so101_feetech.yaml --trajectory"
    " package://skel_ros/examples/so101_trajectory.yaml --criteria"
    " package://skel_ros/config/criteria/so101.yaml":
        SIM_TO_REAL + " (test/nodes/test_sim_to_real_so101.py runs this one and its criteria)",
    ".venv/bin/skel-ros sim-to-real --engines dart,mujoco": SIM_TO_REAL,
    ".venv/bin/skel-ros sim-to-real --engines mujoco": SIM_TO_REAL,
    "skel-ros sweep examples/sweep.yaml -o out/sweep": SIM_TO_REAL + " (4 of them;"
        " test/sweep/test_sweep_real.py runs a sweep of 2 through skel-ros sweep)",
    ".venv/bin/skel-ros sweep examples/sweep.yaml -o out/sweep": SIM_TO_REAL + " (4 of them;"
        " test/sweep/test_sweep_real.py runs a sweep of 2 through skel-ros sweep)",
    ".venv/bin/skel-ros sweep examples/sweep.yaml -o out/sweep --backend ray": SIM_TO_REAL
        + " (4 of them, as Ray tasks; test/sweep/test_sweep_trials.py runs the Ray backend)",
    ".venv/bin/ray start --head --node-ip-address=10.0.0.1 --port=6379 --num-cpus=2":
        "starts a Ray head for other machines to join (a network, several machines)",
    ".venv/bin/ray start --address=10.0.0.1:6379 --num-cpus=2":
        "joins a Ray cluster on another machine (a network, several machines)",
    ".venv/bin/skel-ros sweep spec.yaml -o /shared/sweep --backend ray --address"
    " 10.0.0.1:6379": "needs a Ray cluster of several machines and a shared file system",
    ".venv/bin/python bench/sweep.py --trials 100": BENCH
        + " (300 sim-to-real runs, about an hour on 2 cores)",
    ".venv/bin/python bench/sweep.py --trials 6": BENCH + " (18 sim-to-real runs, about 6 min;"
        " even --quick runs 6, so test_bench.py skips it)",
    ".venv/bin/python bench/sweep.py --trials 100 --modes local,ray": BENCH
        + " (200 sim-to-real runs, about an hour)",
    ".venv/bin/python bench/sweep.py --trials 10 --modes ray,local": BENCH
        + " (20 sim-to-real runs, about 4 min)",
    "skel-ros compare run.mcap --record": RECORD,
    "skel-ros compare run.mcap --record --skel package://skel_ros/examples/arm.skel": RECORD,
    ".venv/bin/python bench/fuzz_skel.py --max-inputs 20000 --jobs 2": BENCH,
    ".venv/bin/python bench/truth_cases.py": BENCH + " (six sim-to-real runs)",
    ".venv/bin/python bench/truth_cases.py --in-process": BENCH + " (seven in-process runs;"
        " test/physical/test_fault_gate.py plays two of them through the same function)",
    ".venv/bin/python bench/parse.py --corpus ~/skel-corpus": CORPUS,
    ".venv/bin/python bench/hardware_node.py": BENCH + " (test_bench.py runs it with --seconds 1)",
    ".venv/bin/python bench/parse.py": BENCH + " (DART reads the 1,000-body chain ~10 s a time)",
    ".venv/bin/python bench/sim.py --corpus ~/skel-corpus": CORPUS,
    ".venv/bin/python bench/sim.py": BENCH,
    ".venv/bin/python bench/sim.py --rounds 1 --steps 500 --seconds 3": BENCH,
    ".venv/bin/python bench/sim.py --quick": BENCH + " (--quick itself takes ~30 s)",
    ".venv/bin/python bench/sim.py --engines mujoco --worlds quadruped --no-arm": BENCH,
    ".venv/bin/python bench/sim.py --worlds examples/arm.skel --steps 20000 --no-arm": BENCH,
    ".venv/bin/python bench/sim.py --joint-states-rate 1000 --tf-rate 100 --no-arm": BENCH,
    ".venv/bin/python bench/sim.py --held": BENCH,
    ".venv/bin/python bench/sim.py --compare-engines": BENCH,
    "skel-ros inspect FILE": SYNOPSIS,
    "skel-ros inspect FILE --json": SYNOPSIS,
    "skel-ros validate FILE...": SYNOPSIS,
    "skel-ros urdf FILE [-o OUT]": SYNOPSIS,
    "skel-ros simulate FILE [--steps N] [--json] [--no-limits] [--engine dart|mujoco]": SYNOPSIS,
    "skel-ros play FILE --skel MODEL [--mapping M] [--trajectory-id ID] [--print] [--rate HZ]":
        SYNOPSIS,
    ".venv/bin/sim_node --ros-args -p skel_file:=/path/to/robot.skel -p real_time_factor:=2.0":
        PLACEHOLDER,
    # docs/visualization.md: test/view/ replays and exports a 2 s recording of its own.
    "skel-ros view out/sim_to_real/run.mcap": SIM_TO_REAL + " (the recording it replays)",
    "skel-ros view out/sim_to_real/run.mcap --export view.html":
        SIM_TO_REAL + " (the recording it exports)",
    ".venv/bin/python bench/view_latency.py --seconds 10":
        "a benchmark with headless Chromium, ~30 s",
    ".venv/bin/python bench/view_latency.py --screenshot docs/img/view_live.png":
        "a benchmark with headless Chromium, ~30 s (writes the doc's picture)",
    ".venv/bin/python scripts/view_screenshots.py out/sim_to_real/run.mcap":
        SIM_TO_REAL + "; then headless Chromium, ~40 s (writes the doc's pictures)",
}
# Every ros2 command (launch, run, service, topic, param, lifecycle, action) of the docs
# is skipped for ROS2_CLI, without a row each.
ROS2_PREFIX = "ros2 "


def skip_reason(command: str) -> str:
    """Why a documented command is not run here ("" = it is run: :data:`RUN`)."""
    if command.startswith(ROS2_PREFIX):
        return ROS2_CLI
    return SKIPPED.get(command, "")


@dataclass(frozen=True)
class Run:
    """How a documented command is run here, and what it must do.

    Attributes:
        status: Its exit status (for a command stopped with Ctrl-C: after the SIGINT).
        output: Text its output (stdout and stderr) must hold.
        creates: Files it must write (in the workspace).
        until: It runs until Ctrl-C: it is stopped with SIGINT once its output matches
            this pattern (it says it is up).
        beside: A documented command started first (its own :attr:`until`) and stopped
            after this one; the first group of its ``until`` match replaces
            :attr:`placeholder` in this command.
        placeholder: See :attr:`beside`.
        doc_rows: (doc, pattern): the lines of that doc matching the pattern, backticks
            removed, must be in the output (a table the doc shows).
        ros: It starts a ROS node (runs in the session's isolated ROS domain).
    """

    status: int = 0
    output: tuple[str, ...] = ()
    creates: tuple[str, ...] = ()
    until: str = ""
    beside: str = ""
    placeholder: str = ""
    doc_rows: tuple[str, str] = ("", "")
    ros: bool = False


EMULATE_12 = "skel-ros emulate dynamixel --ids 1-12 --model XM430-W350"
PORT = r"port: (/tmp/skel-dxl-\w+/tty)"  # as docs/dynamixel.md says it prints
SIM_NODE_UP = r"simulating \S+ in (dart|mujoco)"

RUN: dict[str, Run] = {
    "skel-ros inspect package://skel_ros/examples/arm.skel": Run(output=("shoulder_yaw",)),
    "skel-ros inspect examples/arm.skel": Run(output=("shoulder_yaw",)),
    "skel-ros inspect package://skel_ros/examples/so101_arm.urdf": Run(
        output=("wrist_roll", "no warnings")),
    "skel-ros validate robots/*.skel": Run(output=("robots/arm.skel: OK (",
                                                   "robots/quadruped.skel: OK (")),
    "skel-ros urdf examples/arm.skel -o arm.urdf": Run(creates=("arm.urdf",)),
    "skel-ros ros2-control examples/arm.skel --namespace robot": Run(output=("<ros2_control",)),
    "skel-ros convert robot.skel -o robot.yaml --to phobos-yaml": Run(creates=("robot.yaml",)),
    "skel-ros convert robot.skel -o robot.mjcf": Run(creates=("robot.mjcf",)),
    "skel-ros convert robot.urdf.xacro arm:=ur5 -o robot.skel": Run(creates=("robot.skel",)),
    "skel-ros init-hardware robot.urdf --protocol dynamixel -o hw.yaml": Run(
        creates=("hw.yaml",)),
    "skel-ros simulate examples/arm.skel --steps 1000 --json": Run(output=('"time"',)),
    "skel-ros simulate examples/arm.skel --engine mujoco": Run(),
    "skel-ros sweep examples/sweep.yaml -o out/sweep --report-only": Run(
        status=4, output=("4 without a result",), creates=("out/sweep/report.html",
                                                            "out/sweep/summary.json")),
    "skel-ros play examples/arm_trajectory.xml --skel examples/arm.skel --print": Run(
        output=("# t shoulder_yaw shoulder_pitch elbow wrist",)),
    "skel-ros emulate dynamixel --ids 1-4": Run(until=PORT),
    "skel-ros emulate feetech --ids 1-6": Run(until=r"port: (/tmp/skel-ft-\w+/tty)"),
    "skel-ros emulate dynamixel --physics --skel examples/arm.skel --config"
    " config/hardware/arm_dynamixel.yaml --truth test/nodes/data/truth/elbow_friction.yaml":
        Run(until=PORT),
    "skel-ros init-hardware robot.urdf --protocol feetech -o hw.yaml": Run(creates=("hw.yaml",)),
    EMULATE_12: Run(until=PORT),
    "skel-ros scan --port /tmp/skel-dxl-XXXX/tty --protocol dynamixel": Run(
        beside=EMULATE_12, placeholder="/tmp/skel-dxl-XXXX/tty",  # noqa: S108 - the doc's
        # the output docs/dynamixel.md shows for a scan
        output=("id 1: model number 1020, XM430-W350, firmware v48",
                "id 12: model number 1020, XM430-W350, firmware v48")),
    "skel-ros convert robot_bodies.xml -o robot.skel": Run(creates=("robot.skel",)),
    "skel-ros convert robot.skel -o robot.yml --hardware config/hardware/arm_dynamixel.yaml":
        Run(creates=("robot.yml",)),
    "skel-ros convert robot.yml -o robot.urdf": Run(creates=("robot.urdf",)),
    "skel-ros convert anything -o - --to phobos-json": Run(output=('"links"',)),
    "skel-ros inspect robot.smurf": Run(output=("shoulder_yaw",)),
    ".venv/bin/python bench/fuzz_skel.py --seconds 1 --jobs 1": Run(
        output=("FAILURES     : 0",)),
    ".venv/bin/python bench/parse.py --quick": Run(output=("goals: not judged (--quick)",)),
    ".venv/bin/python -m skel_ros.sim.agreement examples/arm.skel examples/quadruped.skel":
        Run(doc_rows=("docs/mujoco.md", r"^\| `examples/")),
    # The folded robots' rows are rounding (1e-15), which may differ in the last digit on
    # another machine: their heads are checked, and the bounded robot's whole row.
    ".venv/bin/python -m skel_ros.sim.agreement test/model/data/massless/hopper.skel"
    " test/model/data/massless/crane.skel test/model/data/massless/gantry.skel"
    " test/model/data/massless/bounded.skel": Run(output=(
        "| test/model/data/massless/hopper.skel | prismatic, revolute | - | 0.002 | ",
        "| test/model/data/massless/crane.skel | prismatic, revolute, universal | - | 0.001 | ",
        "| test/model/data/massless/gantry.skel | ball, revolute, translational | - | 0.001 | ",
        ("| test/model/data/massless/bounded.skel | ball, prismatic, revolute | - | 0.001 |"
         " 1.70e-05 | 1.70e-05 | 1.0 | 0, 0 |"))),
    "skel-ros ros2-control package://skel_ros/examples/arm.skel --namespace robot -o"
    " arm_control.urdf": Run(creates=("arm_control.urdf",)),
    ".venv/bin/skel-ros excite --skel examples/arm.skel --hardware-config"
    " config/hardware/arm_dynamixel.yaml -o excite.yaml": Run(
        output=("condition number of the identification problem",), creates=("excite.yaml",)),
    ".venv/bin/skel-ros identify test/identify/data/arm_excite20_truth.mcap --skel"
    " examples/arm.skel --hardware-config config/hardware/arm_dynamixel.yaml -o"
    " out/identified": Run(output=("not identified",), creates=(
        "out/identified/identified.yaml", "out/identified/model.skel",
        "out/identified/model.xml", "out/identified/report.html")),
    ".venv/bin/sim_node --ros-args --params-file config/sim.yaml -r __ns:=/sim -p"
    " skel_file:=examples/quadruped.skel -p frame_prefix:=sim/": Run(until=SIM_NODE_UP,
                                                                    ros=True),
    ".venv/bin/sim_node --ros-args -p skel_file:=examples/arm.skel -p engine:=mujoco": Run(
        until=SIM_NODE_UP, ros=True),
    'sim_node --ros-args -p trajectory_controller.constraints.goal:="[0.01]" -p'
    " trajectory_controller.constraints.goal_time:=1.0": Run(until=SIM_NODE_UP, ros=True),
    "skel-ros compare bench_run.mcap --skel examples/arm.skel --criteria"
    " config/criteria/arm.yaml --junit junit.xml --json report.json": Run(
        output=("verdict: PASSED",), creates=("junit.xml", "report.json")),
    "skel-ros view examples/arm.skel": Run(until=r"http://127\.0\.0\.1:\d+"),
    "skel-ros view --live sim real": Run(until=r"http://127\.0\.0\.1:\d+", ros=True),
}

# Fenced blocks without a command: (doc, how the block's first line starts) -> what it is.
NOT_COMMANDS: dict[tuple[str, str], str] = {
    ("docs/architecture.md", "floor 8  skel_ros/cli/"): "a diagram of the layers",
    ("docs/architecture.md", "ROS (topics, services, actions)"): "a diagram of the loop",
    ("docs/dynamixel.md", '{1: "no fault; nothing done",'):
        "a Python value (clear_faults' answer)",
    ("docs/hardware.md", "joint_commands / joint_trajectory ──> hardware_node"): "a diagram",
    ("docs/hardware.md", "actuator_position = zero_offset"): "formulas",
    ("docs/interchange.md", "SkelError"): "an exception tree",
    ("docs/model.md", "robot.skel:1: /skel/world[@name='w']"):
        "an error message: test_the_documented_error_message_is_the_one_printed",
    ("docs/packaging.md", "[develop]"): "setup.cfg's text",
    ("docs/simulation.md", "kp = m w^2"): "formulas",
    ("docs/simulation.md", "SimError"): "an exception tree",
    ("docs/trajectories.md", "time_step,0.010000"): "a CASPR trajectory file's text",
    ("docs/visualization.md", "/usr/bin/chromium --headless"):
        "Chromium's flags for software WebGL; test/view/test_view.py runs Chromium with them",
}


# --------------------------------------------------------------------------- the workspace

XACRO = ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
         '<xacro:arg name="arm" default="ur5"/>'
         '<link name="base_$(arg arm)"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0"'
         ' ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
         '<joint name="shoulder" type="revolute"><parent link="base_$(arg arm)"/>'
         '<child link="upper"/><axis xyz="0 0 1"/>'
         '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
         '<link name="upper"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0"'
         ' iyy="0.1" iyz="0" izz="0.1"/></inertial></link></robot>')
ARM_JOINTS = ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")


def _bench_run(path: Path) -> None:
    """A recording "made elsewhere" of the arm, 10 s, every stream on the command."""
    import math

    from joint_state_mcap import joint_state, write_joint_states

    def messages() -> Iterator[tuple[int, str, dict[str, object]]]:
        for k in range(1000):  # 100 Hz
            t = k / 100
            ns = int(1e9 * (1000 + t))
            positions = [0.3 * math.sin(0.5 * t + j) for j in range(len(ARM_JOINTS))]
            for stream in ("command", "sim", "real"):
                stamp = divmod(ns, 10**9) if stream != "command" else (0, 0)
                yield ns + len(stream), stream, joint_state(stamp, ARM_JOINTS, positions)

    write_joint_states(path, messages())


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files every workspace starts from: links into the checkout, placeholders."""
    from skel_ros.cli.main import main

    root = tmp_path_factory.mktemp("doc_workspace")
    for name in ("examples", "config", "bench", "test"):
        (root / name).symlink_to(REPO / name)
    (root / ".venv").symlink_to(Path(sys.executable).parent.parent)
    arm = REPO / "examples" / "arm.skel"
    for name in ("robot.skel", "anything"):
        shutil.copy(arm, root / name)
    (root / "robots").mkdir()
    for name in ("arm.skel", "quadruped.skel"):
        shutil.copy(REPO / "examples" / name, root / "robots" / name)
    shutil.copy(REPO / "test" / "model" / "data" / "caspr" / "arm_bodies.xml",
                root / "robot_bodies.xml")
    (root / "robot.urdf.xacro").write_text(XACRO, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(root / ".cache"))
        assert main(["urdf", str(arm), "-o", str(root / "robot.urdf")]) == 0
        assert main(["convert", str(arm), "-o", str(root / "robot.yml"), "--hardware",
                     str(REPO / "config" / "hardware" / "arm_dynamixel.yaml")]) == 0
    (root / "robot.smurf").write_text("SMURF version: 1.0.0\nmodelname: robot\nfiles:\n"
                                      "- robot.urdf\n", encoding="utf-8")
    _bench_run(root / "bench_run.mcap")
    return root


def _workspace(template: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(template, work, symlinks=True)
    return work


def _env(work: Path, ros_env: dict[str, str] | None) -> dict[str, str]:
    env = dict(ros_env if ros_env is not None else os.environ)
    env.pop("SKEL_CORPUS", None)  # as on a fresh clone
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_CACHE_HOME"] = str(work / ".cache")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _Started:
    """A command that runs until Ctrl-C, started in the background; its output so far."""

    def __init__(self, command: str, work: Path, env: dict[str, str]) -> None:
        self.log = work / f".started-{abs(hash(command))}.log"
        self._out = self.log.open("wb")
        self.proc = subprocess.Popen(["bash", "-c", f"exec {command}"], cwd=work, env=env,
                                     stdout=self._out, stderr=subprocess.STDOUT)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str) -> re.Match[str]:
        """Until the output matches (the process polled, bounded by TIMEOUT)."""
        deadline = time.monotonic() + TIMEOUT
        while (match := re.search(pattern, self.output())) is None:
            assert self.proc.poll() is None, f"it ended ({self.proc.returncode}):\n{self.output()}"
            assert time.monotonic() < deadline, f"no {pattern!r} in:\n{self.output()}"
            time.sleep(0.05)  # polling a log file: no event to wait on
        return match

    def stop(self) -> int:
        """Ctrl-C; its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._out.close()


def _check(run: Run, output: str, work: Path, what: str) -> None:
    for text in run.output:
        assert text in output, f"{what}: no {text!r} in its output:\n{output}"
    for name in run.creates:
        assert (work / name).is_file(), f"{what}: did not write {name}:\n{output}"
    if run.doc_rows[0]:
        doc = (REPO / run.doc_rows[0]).read_text(encoding="utf-8").splitlines()
        rows = [line.replace("`", "") for line in doc if re.search(run.doc_rows[1], line)]
        assert rows, f"{run.doc_rows[0]} has no row matching {run.doc_rows[1]!r}"
        for row in rows:
            assert row in output, f"{what}: {run.doc_rows[0]} shows {row!r}; it printed:\n{output}"


def run_documented(command: str, work: Path, env: dict[str, str]) -> None:
    """Run one command of :data:`RUN` in ``work`` and check it."""
    run = RUN[command]
    beside = None
    try:
        if run.beside:
            beside = _Started(run.beside, work, env)
            found = beside.wait_for(RUN[run.beside].until).group(1)
            command = command.replace(run.placeholder, found)
        if run.until:
            started = _Started(command, work, env)
            started.wait_for(run.until)
            status, output = started.stop(), started.output()
        else:
            done = subprocess.run(["bash", "-c", command], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=TIMEOUT, check=False)
            status, output = done.returncode, done.stdout + done.stderr
    finally:
        if beside is not None:
            assert beside.stop() == 0, beside.output()
    assert status == run.status, f"{command}: status {status}, not {run.status}:\n{output}"
    assert "Traceback" not in output, output
    _check(run, output, work, command)


# --------------------------------------------------------------------------- the tests


def _short(command: str) -> str:
    """A test id: the command, cut (ids of 200 characters help no one)."""
    return command if len(command) <= 60 else command[:57] + "..."


def test_every_documented_command_is_run_or_skipped_with_a_reason() -> None:
    commands, others = all_doc_commands()
    texts = {c.text for c in commands}
    unlisted = [f"{c.where}: {c.text}" for c in commands
                if c.text not in RUN and not skip_reason(c.text)]
    assert not unlisted, ("documented commands this test neither runs (RUN) nor skips with a"
                          " reason (SKIPPED): " + "; ".join(unlisted))
    assert not [c for c in RUN if skip_reason(c)], "run and skipped at once"
    unchecked = [f"{c.where}: {line}" for c in commands if c.text in RUN
                 for line in c.shown if line not in RUN[c.text].output]
    assert not unchecked, f"output the docs show that RUN does not check: {unchecked}"
    stale = sorted((set(RUN) | set(SKIPPED)) - texts)
    assert not stale, f"commands no doc holds any more: {stale}"
    known = {key: [f"{where}: {first}" for where, first in others
                   if where.split(":")[0] == key[0] and first.startswith(key[1])]
             for key in NOT_COMMANDS}
    unknown = [f"{where}: {first}" for where, first in others
               if not any(f"{where}: {first}" in found for found in known.values())]
    assert not unknown, f"fenced shell blocks without a command this test does not know: {unknown}"
    assert all(known.values()), f"NOT_COMMANDS lists blocks no doc holds: {known}"


@pytest.mark.parametrize("command", [c for c in RUN if not RUN[c].ros], ids=_short)
def test_documented_command(command: str, template: Path, tmp_path: Path) -> None:
    work = _workspace(template, tmp_path)
    run_documented(command, work, _env(work, None))


@pytest.mark.ros
@pytest.mark.parametrize("command", [c for c in RUN if RUN[c].ros], ids=_short)
def test_documented_node_command(command: str, template: Path, tmp_path: Path,
                                 ros_env: dict[str, str]) -> None:
    work = _workspace(template, tmp_path)
    run_documented(command, work, _env(work, ros_env))


def test_the_documented_error_message_is_the_one_printed(tmp_path: Path) -> None:
    """docs/model.md's example error: a ``<cylinder>`` given a ``<length>``."""
    doc = (REPO / "docs" / "model.md").read_text(encoding="utf-8")
    block = next(lines for _, lines in _blocks(REPO / "docs" / "model.md")
                 if lines and lines[0].startswith("robot.skel:1:"))
    assert "\n".join(block) in doc
    (tmp_path / "robot.skel").write_text(
        '<skel><world name="w"><skeleton name="arm"><body name="b1"><visualization_shape>'
        "<geometry><cylinder><radius>0.1</radius><length>0.5</length></cylinder></geometry>"
        '</visualization_shape></body><joint type="free" name="j1"><parent>world</parent>'
        "<child>b1</child></joint></skeleton></world></skel>", encoding="utf-8")
    done = subprocess.run([str(Path(sys.executable).parent / "skel-ros"), "validate",
                           "robot.skel"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=TIMEOUT, check=False)
    assert done.returncode == 1
    assert done.stderr == "error: " + "\n".join(block) + "\n"


def test_no_documented_command_runs_whatever_python_is_first_on_path() -> None:
    """``python -m ...`` (docs/mujoco.md) ran the first python on PATH, which need not be
    the venv's: the docs say ``.venv/bin/python`` or a console script."""
    commands, _ = all_doc_commands()
    bare = [f"{c.where}: {c.text}" for c in commands if c.text.split()[0] == "python"]
    assert not bare, f"commands run by whatever python is first on PATH: {bare}"


_INLINE = re.compile(r"`([^`]+)`")


def inline_code(path: Path) -> list[str]:
    """The inline code spans of a doc (fenced blocks left out), whitespace collapsed."""
    text = re.sub(r"^\s*```.*?^\s*```", "", path.read_text(encoding="utf-8"),
                  flags=re.DOTALL | re.MULTILINE)
    return [" ".join(span.split()) for span in _INLINE.findall(text)]


def test_every_hardware_launch_says_whether_the_servos_are_emulated() -> None:
    """``hardware.launch.py`` with arguments but no ``emulate:=`` (the README's several
    robots recipe) errors every 10 s on a machine without servos: every documented launch
    of it says ``emulate:=true`` (no hardware needed) or ``emulate:=false`` (real)."""
    launches = [f"{c.where}: {c.text}" for c in all_doc_commands()[0]
                if "hardware.launch.py" in c.text]
    for path in DOCS:
        launches += [f"{path.relative_to(REPO)}: {span}" for span in inline_code(path)
                     if "hardware.launch.py" in span and ":=" in span]
    assert launches
    silent = [launch for launch in launches
              if ":=" in launch.split("hardware.launch.py", 1)[1]
              and "emulate:=" not in launch]
    assert not silent, f"hardware launches that do not say emulate:=true/false: {silent}"


def test_the_emulator_snippet_of_dynamixel_md_runs(tmp_path: Path) -> None:
    """docs/dynamixel.md's Python example: it used ``actuators`` without defining it, and
    its comment showed a ``/dev/pts/N`` port where the emulator gives a link to it."""
    import ast

    doc = (REPO / "docs" / "dynamixel.md").read_text(encoding="utf-8")
    snippet = doc.split("In Python:\n\n```python\n", 1)[1].split("```", 1)[0]
    shown = {}  # expression -> the value its comment shows (a dict), where it shows one
    lines = []
    for line in snippet.splitlines():
        code, _, comment = line.partition("#")
        expression = code.strip()
        if expression.startswith("emu.") and "=" not in expression:
            lines.append(f"print({expression!r} + '\\t' + repr({expression}))")
            if comment.strip().startswith("{"):
                shown[expression] = comment.strip().split("}", 1)[0] + "}"
        else:
            lines.append(line)
    script = tmp_path / "snippet.py"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    printed = dict(line.split("\t", 1) for line in done.stdout.splitlines())
    assert shown == {"emu.transport": '{"port": "/tmp/skel-dxl-XXXX/tty", "baudrate": 4000000}'}
    expected = ast.literal_eval(shown["emu.transport"])
    got = ast.literal_eval(printed["emu.transport"])
    assert set(got) == set(expected), got
    assert re.fullmatch(expected["port"].replace("XXXX", r"\w+"), got["port"]), got
    assert got["baudrate"] == expected["baudrate"]


def test_the_lag_warning_quoted_for_sim_to_real_runs_is_the_one_printed() -> None:
    """docs/can.md quoted ``cannot keep real_time_factor 1``, which a simulation in a
    sim-to-real run (``time_base: wall``) never prints: it says ``cannot keep up with the
    wall clock (time_base wall) ...``. Every quote of the warning in the sim-to-real docs
    (``...`` standing for the figures) is in the message the node builds."""
    from types import SimpleNamespace

    pytest.importorskip("rclpy")
    from skel_ros.nodes.sim_node import SimNode

    wall = SimNode._lagging_message(SimpleNamespace(
        _wall=True, _pacer=SimpleNamespace(lost=1.234), _rtf=1.0))
    quotes = []
    for name in ("can.md", "sim_to_real.md"):
        quotes += [(name, span) for span in inline_code(REPO / "docs" / name)
                   if span.startswith("cannot keep")]
    assert len(quotes) >= 4, quotes
    for name, quote in quotes:
        for part in filter(None, (p.strip() for p in quote.split("..."))):
            assert part in wall, f"docs/{name} quotes {quote!r}; the node says {wall!r}"
