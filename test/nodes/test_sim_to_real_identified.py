"""End to end: issue 29's loop on the emulated arm; the gate fails the model, then passes it
once the simulation runs what ``skel-ros identify`` found.

The loop as a user runs it, each step the real console script:

1. a recording of the arm moving along an excitation, made on the physics bench with a
   truth 30-60 % off the model (``test/identify/data/arm_excite20_truth.mcap``, 20 s,
   truth ``arm_truth.yaml``; how it was made is in the truth file's comment);
2. ``skel-ros identify`` on it, which writes ``identified.yaml``;
3. ``skel-ros sim-to-real --truth`` (the same truth) on a short trajectory the fit never
   saw, with the model: the gate fails it, on the simulation-vs-robot checks;
4. the same with ``--sim-params identified.yaml``: the gate passes it.

The gate is :data:`CRITERIA`, ``config/criteria/arm_identified.yaml`` cut to what decides
(the simulation against the real arm, RMS per joint) for a 3 s run (that file asks 8 s),
its bound from the margins measured here on 2026-11-29 (DART, sim-vs-real RMS per joint
on :data:`HELD_OUT`, five runs at load averages 2.6-5, two of them beside another file's
sim-to-real runs, one beside two busy processes): with the model 0.0026-0.0027
(shoulder_yaw), 0.039-0.040 (shoulder_pitch), 0.016 (elbow), 0.005 (wrist); with the
identified values 0.0006-0.0011, 0.0023-0.0049, 0.0012-0.0017 and 0.0048-0.0055 (the
wrist, whose servo the fit leaves out). 0.015 leaves a factor of 2.6 on both sides. The
gap is the servos': with the truth's joint values left out of the real arm the model
fails as much, and the runs with ``--sim-params`` pass because the simulation then runs
the identified servo law. (A moving held-out motion, the first tried, was the wrong one
for a test: the same bound failed an identified run in the suite, 0.014-0.020 on every
joint, the machine's stalls showing as errors while the arm moved.)

A run whose nodes the machine starved cannot be judged and skips, as in
test_sim_to_real.py. The two runs go one after the other: at once, beside another file's
sim-to-real run on the other worker, the machine starved the identified one twice in two
tries, its RMS errors up to 0.016 by then.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_sim_to_real import _sim_to_real, _skip_if_gate_starved, _skip_if_the_hardware_starved

pytestmark = [pytest.mark.ros, pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
SKEL_ROS = REPO / ".venv" / "bin" / "skel-ros"
DATA = REPO / "test" / "identify" / "data"
ARM = REPO / "examples" / "arm.skel"
HARDWARE = REPO / "config" / "hardware" / "arm_dynamixel.yaml"

# Held out (neither the excitation's sums of sines nor the bundled motion): the arm
# raised in 1.5 s and held there. Held, the shoulder's pitch sags under gravity on the
# real arm (a Dynamixel's law has no gravity compensation) and not in the model's
# simulation, whose controller compensates it: an error no stall of a loaded machine
# makes (a stall only adds error while the arm moves).
HELD_OUT = """\
joint_names: [shoulder_yaw, shoulder_pitch, elbow, wrist]
points:
  - {positions: [0.0, 0.0, 0.3, 0.0], velocities: [0, 0, 0, 0], time_from_start: 0.0}
  - {positions: [0.2, 0.7, 0.5, 0.0], velocities: [0, 0, 0, 0], time_from_start: 1.5}
  - {positions: [0.2, 0.7, 0.5, 0.0], velocities: [0, 0, 0, 0], time_from_start: 3.0}
"""
CRITERIA = """\
min_duration: 2.5
min_rate: 40.0
all:
  sim_real: {rms: 0.015}
"""


def _judged(run: subprocess.CompletedProcess[str], verdict: Path) -> dict[str, Any]:
    """The run's JSON verdict, once it is known the machine did not starve the run (a gap
    in a stream, or a stream slower than the criteria's ``min_rate``)."""
    output = run.stdout + run.stderr
    _skip_if_gate_starved(run.returncode, output)
    _skip_if_the_hardware_starved(output, "arm")
    assert verdict.exists(), output
    (judged,) = json.loads(verdict.read_text(encoding="utf-8"))["runs"]
    slow = [c["message"] for c in judged["checks"] if c["outcome"] == "not judged"]
    if slow and all(c["metric"] == "rate" for c in judged["checks"]
                    if c["outcome"] == "not judged"):
        pytest.skip("the machine slowed a stream, the run cannot be judged: " + "; ".join(slow))
    return judged


@pytest.fixture(scope="module")
def loop(ros_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
         ) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    """Identify, then the held-out run twice: ``{"model" | "identified": (run, verdict)}``."""
    folder = tmp_path_factory.mktemp("identify_loop")
    identified = folder / "identified"
    fit = subprocess.run(
        [str(SKEL_ROS), "identify", str(DATA / "arm_excite20_truth.mcap"), "--skel", str(ARM),
         "--hardware-config", str(HARDWARE), "-o", str(identified)],
        capture_output=True, text=True, env=ros_env, timeout=120, check=False)
    assert fit.returncode == 0, fit.stdout + fit.stderr
    trajectory = folder / "held_out.yaml"
    trajectory.write_text(HELD_OUT, encoding="utf-8")
    criteria = folder / "criteria.yaml"
    criteria.write_text(CRITERIA, encoding="utf-8")
    # One after the other (the module docstring says why).
    runs = {}
    # The model's run records the goals as written too (--record-goals: identify's input).
    for name, extra in (("model", ("--record-goals",)),
                        ("identified", ("--sim-params", str(identified / "identified.yaml")))):
        out = folder / name
        runs[name] = (_sim_to_real(
            "--skel", str(ARM), "--truth", str(DATA / "arm_truth.yaml"), "--trajectory",
            str(trajectory), "--criteria", str(criteria), "--engines", "dart",
            "--json", str(out / "verdict.json"), "--out", str(out), *extra, env=ros_env),
            out / "verdict.json")
    print({name: _rms(run[1]) for name, run in runs.items()},  # noqa: T201 - in -s runs
          f"load {os.getloadavg()[0]:.2f}")
    return runs


def _rms(verdict: Path) -> dict[str, float]:
    """Per joint, the sim-vs-real RMS error of a run (for the failure messages)."""
    if not verdict.exists():
        return {}
    (run,) = json.loads(verdict.read_text(encoding="utf-8"))["runs"]
    return {c["joint"]: round(c["value"], 5) for c in run["checks"]
            if c["pair"] == ["sim", "real"] and c["metric"] == "rms"}


def test_the_gate_fails_the_model_on_the_simulation_against_the_robot(
        loop: dict[str, tuple[subprocess.CompletedProcess[str], Path]]) -> None:
    from skel_ros.cli import exit_codes

    run, verdict = loop["model"]
    judged = _judged(run, verdict)
    assert run.returncode == exit_codes.FAILED, run.stdout + run.stderr
    failed = {(c["joint"], tuple(c["pair"]), c["metric"]) for c in judged["checks"]
              if c["outcome"] == "failed"}
    # The shoulder's sag under gravity, which the model's simulation lacks:
    # at least the joint that carries the arm (measured 0.039 rad for a bound of 0.015).
    assert ("shoulder_pitch", ("sim", "real"), "rms") in failed, _rms(verdict)
    assert {pair for _, pair, _ in failed} == {("sim", "real")}


def test_the_gate_passes_the_simulation_with_the_identified_values(
        loop: dict[str, tuple[subprocess.CompletedProcess[str], Path]]) -> None:
    from skel_ros.cli import exit_codes

    run, verdict = loop["identified"]
    judged = _judged(run, verdict)
    assert run.returncode == exit_codes.OK, (_rms(verdict), run.stdout + run.stderr)
    assert judged["verdict"] == "passed"
    assert "joint dynamics from" in " ".join(judged["notes"])


def test_record_goals_keeps_the_goals_the_arm_was_sent(
        loop: dict[str, tuple[subprocess.CompletedProcess[str], Path]]) -> None:
    """``--record-goals``: ``/real/written_goals`` in the recording, each write's goals
    stamped on the recorder's clock, at the held-out motion's last goal once it was sent;
    not recorded without it."""
    import numpy as np

    from skel_ros.analysis.recording import read_recording

    for name in ("model", "identified"):
        _judged(*loop[name])  # a starved run skips
    recorded = read_recording(loop["model"][1].parent / "run.mcap", goals=True)
    written, command = recorded["written"], recorded["command"]
    assert written.held
    assert written.time_base == "stamp"
    assert set(written.joint_names) == {"shoulder_yaw", "shoulder_pitch", "elbow", "wrist"}
    assert len(written) > 100 * (command.times[-1] - command.times[0])  # the cycles' 200 Hz
    after = np.array([command.times[-1] + 0.05])  # a stream's last goal, a cycle or so on
    for joint in written.joint_names:
        assert written.held_at(joint, after)[0] == pytest.approx(command.column(joint)[-1],
                                                                 abs=2e-3), joint
    assert np.all(np.diff(written.times) > 0)
    plain = read_recording(loop["identified"][1].parent / "run.mcap", goals=True)
    assert "written" not in plain
