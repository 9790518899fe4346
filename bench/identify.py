"""Benchmark: does ``skel-ros identify`` recover a known truth from the physics bench?

Issue 29's verification. The bundled arm (``examples/arm.skel`` on
``config/hardware/arm_dynamixel.yaml``), the steps a user takes:

1. ``skel-ros excite`` writes an excitation of ``--duration`` seconds (``--seed``);
2. ``skel-ros sim-to-real --truth T.yaml --trajectory excite.yaml`` plays it to the
   simulation and to the physics-backed emulated arm, whose joints have the truth's
   damping, friction, armature and delay (the truth below, or ``--truth``);
3. ``skel-ros identify`` fits the recording.

Printed per joint and parameter: the identified value with its 95 % interval, what the
real arm has (the truth's damping and friction; its armature plus the Dynamixel's rotor,
which the bench adds to every joint: :mod:`skel_ros.physical.servo_law`), the error in
percent, whether the truth is inside the interval, and "(loose)" where ``identify``
says the recording tells the value only loosely (its interval beyond +-10 % of it:
:data:`skel_ros.identify.fit.LOOSE`); the delay found against the
truth's, plus half a ``profile_time`` (a ramped goal's middle), plus the wait of the
goals for the loop's cycle that wrote them (the player's 100 Hz stream is written by the
loop's cycles, and with ``write_on_command: false`` any goal is): as ``identify``
measured it from the goals written, which the run records (``sim-to-real
--record-goals``), else half the loop's period (the ROS path adds about a millisecond
more). Then
the time of the fit against the time of one MuJoCo rollout of the same length (the arm,
1 kHz, no ROS: what an output-error fit would pay per evaluation), and the load average.

With ``--payload BODY`` (a truth whose ``bodies`` adds a mass to BODY), the fit is
``identify --payload BODY`` and the payload's mass and centre of mass are printed against
the truth's.

With ``--robot so101``: the bundled SO-101 (``examples/so101_arm.urdf`` on
``config/hardware/so101_feetech.yaml``, six Feetech STS3215 servos, each with its rotor
as the bench adds it) and its truth below.

With ``--robot quadruped``: the bundled quadruped (``examples/quadruped.skel`` on
``config/hardware/quadruped_mit.yaml``, twelve MIT motors in impedance mode, no rotor of
their own: the real armature is the truth's) and its truth below, fitted twice: the motors'
torque readings as they are (``identify --no-hold-correction``), as they are but bounded by
the replies' unknown phase in the hold (``--reply-phase unknown``), and corrected for the
motors' hold, each reply at its end (``--law-step`` the model's time step, the bench's world
step; docs/identify.md, The method). ``--no-delay`` writes the truth (the one below)
without its command delay.

Asserts nothing. Usage: ``.venv/bin/python bench/identify.py [--robot arm|quadruped]
[--no-delay] [--duration S] [--seed K] [--truth FILE] [--out DIR] [--recording RUN.mcap]
[--payload BODY] [--publish-rate HZ]`` (default the arm, 60 s, seed 0, the truth below, a
temporary folder, joint_states at the loop's 200 Hz; ``--recording``: fit a run already
recorded with that truth).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

if TYPE_CHECKING:
    from skel_ros.hardware.config import HardwareConfig

REPO = Path(__file__).resolve().parent.parent
SKEL_ROS = str(REPO / ".venv" / "bin" / "skel-ros")
ARM = REPO / "examples" / "arm.skel"
HARDWARE = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
QUADRUPED = REPO / "examples" / "quadruped.skel"
QUADRUPED_HARDWARE = REPO / "config" / "hardware" / "quadruped_mit.yaml"
SO101 = REPO / "examples" / "so101_arm.urdf"
SO101_HARDWARE = REPO / "config" / "hardware" / "so101_feetech.yaml"
# Damping and friction 40-60 % above the model's (0.05/0.01, 0.05/0.01, 0.04/0.01,
# 0.02/0.005), armature of its own, 10 ms of command delay (two 5 ms control periods).
TRUTH = """\
joints:
  shoulder_yaw: {damping: 0.075, friction: 0.015, armature: 0.003, delay: 0.01}
  shoulder_pitch: {damping: 0.07, friction: 0.016, armature: 0.004, delay: 0.01}
  elbow: {damping: 0.06, friction: 0.015, armature: 0.002, delay: 0.01}
  wrist: {damping: 0.03, friction: 0.0075, armature: 0.001, delay: 0.01}
"""


# The quadruped: damping and friction 50 % above the model's (0.1, 0.02), an armature of
# its own, 10 ms of command delay, on every joint.
QUADRUPED_TRUTH = "joints:\n" + "".join(
    f"  {side}_{joint}: {{damping: 0.15, friction: 0.03, armature: "
    f"{0.003 if joint == 'knee' else 0.004}, delay: 0.01}}\n"
    for side in ("fl", "fr", "hl", "hr") for joint in ("hip_abd", "hip_pitch", "knee"))


# The SO-101: damping and friction 40-50 % above the model's (0.05/0.01, 0.05/0.01,
# 0.04/0.01, 0.02/0.005 x3), an armature of its own, 10 ms of command delay.
SO101_TRUTH = """\
joints:
  shoulder_pan: {damping: 0.07, friction: 0.015, armature: 0.003, delay: 0.01}
  shoulder_lift: {damping: 0.075, friction: 0.014, armature: 0.004, delay: 0.01}
  elbow_flex: {damping: 0.06, friction: 0.015, armature: 0.003, delay: 0.01}
  wrist_flex: {damping: 0.03, friction: 0.008, armature: 0.001, delay: 0.01}
  wrist_roll: {damping: 0.03, friction: 0.007, armature: 0.001, delay: 0.01}
  gripper: {damping: 0.03, friction: 0.007, armature: 0.001, delay: 0.01}
"""
ROBOTS = {"arm": (ARM, HARDWARE, TRUTH), "quadruped": (QUADRUPED, QUADRUPED_HARDWARE,
                                                        QUADRUPED_TRUTH),
          "so101": (SO101, SO101_HARDWARE, SO101_TRUTH)}


def run(*words: str) -> str:
    """Run a skel-ros command; its output (stops the bench with it on a failure)."""
    done = subprocess.run([SKEL_ROS, *words], capture_output=True, text=True, check=False,  # noqa: S603
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if done.returncode not in (0, 3):  # 3: the gate failed, which the truth makes it do
        sys.exit(f"skel-ros {words[0]} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


def rotors(hardware: Path = HARDWARE) -> dict[str, float]:
    """Each bus servo's rotor inertia at the joint (what the bench adds; MIT: none)."""
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.hardware.dynamixel.control_table import MODELS
    from skel_ros.hardware.feetech.control_table import model_by_name
    from skel_ros.physical.servo_law import rotor_inertia

    config = load_hardware_config(hardware)
    out = {}
    for joint in config.joints:
        protocol = config.bus(joint.bus).protocol
        model = (MODELS[joint.actuator.model] if protocol == "dynamixel"
                 else model_by_name(joint.actuator.model) if protocol == "feetech" else None)
        if model is not None:
            out[joint.name] = (rotor_inertia(model.stall_torque, model.no_load_speed)
                               * joint.gear_ratio ** 2)
    return out


def profile_times(config: HardwareConfig) -> dict[str, float]:
    """Each joint's ``profile_time`` in ``config`` (s; joints without one: absent)."""
    return {j.name: float(j.actuator.options["profile_time"]) for j in config.joints
            if "profile_time" in j.actuator.options}


def with_options(hardware: Path, copy: Path, profile_time: float | None, *,
                 write_on_command: bool, acceleration: float | None = None) -> Path:
    """``copy``: ``hardware`` with ``profile_time`` (s, unless None) on every Dynamixel
    joint, ``write_on_command``, and every joint's acceleration limit ``acceleration``
    (rad/s^2, unless None)."""
    document = yaml.safe_load(hardware.read_text(encoding="utf-8"))
    document["write_on_command"] = write_on_command
    buses = {name for name, bus in document["buses"].items()
             if bus.get("protocol") == "dynamixel"}
    for joint in document["joints"].values():
        if profile_time is not None and joint.get("bus") in buses:
            joint.setdefault("options", {})["profile_time"] = profile_time
        if acceleration is not None:
            joint.setdefault("limits", {})["acceleration"] = acceleration
    copy.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return copy


def rollout_seconds(duration: float, skel: Path = ARM) -> float:
    """Wall time of one MuJoCo rollout of the robot for ``duration`` s, torques held."""
    from skel_ros.model import load_model
    from skel_ros.sim import MujocoEngine

    engine = MujocoEngine(load_model(skel), enforce_limits=False)
    index = np.arange(engine.num_dofs)
    torques = np.zeros(engine.num_dofs)
    start = time.perf_counter()
    for _ in range(round(duration / engine.time_step)):
        engine.apply_checked("effort", index, torques)
        engine.step(1)
        engine.positions()
    return time.perf_counter() - start


def print_payload(found: dict, truth: dict | None) -> None:
    """The identified payload against the truth's added mass."""
    real_mass = 0.0 if truth is None else truth["mass"]
    real_at = [0.0, 0.0, 0.0] if truth is None else truth.get("at", [0.0, 0.0, 0.0])
    mass = found["mass"]
    print(f"payload on {found['body']}: mass {mass['value']:.4g} +- {mass.get('interval', 0):.2g}"
          f" kg, truth {real_mass:g} kg ({100.0 * (mass['value'] - real_mass) / real_mass:+.1f}"
          f" %)" if real_mass else f"payload: mass {mass['value']:.4g} kg, truth none")
    intervals = found["com"].get("interval", [None] * 3)
    for axis, value, interval, real in zip("xyz", found["com"]["value"], intervals, real_at,
                                           strict=True):
        why = found["not_identified"].get(f"com_{axis}")
        shown = f"not identified ({why})" if why else f"{value:.4f} +- {interval:.2g} m"
        print(f"  com {axis}: {shown}, truth {real:g} m")
    print(f"  in the model file: {found['in_model_file']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--truth", type=Path, help="truth file (default: the one above)")
    parser.add_argument("--out", type=Path, help="folder (default: a temporary one)")
    parser.add_argument("--recording", type=Path,
                        help="fit this recording (made with --truth) instead of recording one")
    parser.add_argument("--payload", metavar="BODY", help="fit a payload on this body too")
    parser.add_argument("--publish-rate", type=float, default=200.0, metavar="HZ",
                        help="Hz of the recorded /real/joint_states (default 200: the arm's"
                             " control loop, as docs/identify.md's workflow records)")
    parser.add_argument("--robot", choices=tuple(ROBOTS), default="arm")
    parser.add_argument("--no-delay", action="store_true",
                        help="the truth (the one above) without its command delay")
    parser.add_argument("--profile-time", type=float, metavar="S",
                        help="every Dynamixel servo with this profile_time (a time-based"
                             " profile: each goal ramped to over S s; the loop's period"
                             " ramps every goal over the whole period)")
    parser.add_argument("--no-write-on-command", action="store_true",
                        help="the hardware YAML's write_on_command false: every goal is"
                             " written by the loop's cycle, right after its read (a"
                             " stream's are either way: the player's first is not)")
    parser.add_argument("--acceleration", type=float, metavar="RAD_S2",
                        help="every joint's acceleration limited to this in the hardware"
                             " YAML (a copy): the excitation moves within it, the hardware"
                             " node lets it through (an armature is told by the"
                             " accelerations)")
    args = parser.parse_args()
    skel, hardware, robot_truth = ROBOTS[args.robot]
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_identify_"))
    out.mkdir(parents=True, exist_ok=True)
    if args.profile_time is not None or args.no_write_on_command or args.acceleration:
        hardware = with_options(hardware, out / "hardware.yaml", args.profile_time,
                                write_on_command=not args.no_write_on_command,
                                acceleration=args.acceleration)
    truth_file = args.truth or out / "truth.yaml"
    if args.truth is None:
        truth_file.write_text(robot_truth.replace(", delay: 0.01", "") if args.no_delay
                              else robot_truth,
                              encoding="utf-8")
    print(f"load average at start: {os.getloadavg()[0]:.2f}  (folder {out})")
    recording = args.recording or out / "run" / "run.mcap"
    if args.recording is None:
        excite = out / "excite.yaml"
        print(run("excite", "--skel", str(skel), "--hardware-config", str(hardware), "-o",
                  str(excite), "--duration", f"{args.duration:g}", "--seed", str(args.seed))
              .strip().splitlines()[-2])
        start = time.perf_counter()
        run("sim-to-real", "--skel", str(skel), "--hardware-config", str(hardware), "--truth",
            str(truth_file), "--trajectory", str(excite), "--out", str(out / "run"),
            "--publish-rate", f"{args.publish_rate:g}", "--record-goals")
        print(f"recorded in {time.perf_counter() - start:.0f} s")
    truth = yaml.safe_load(truth_file.read_text())["joints"]
    law_step = []
    if args.robot == "quadruped":
        law_step = mit_variants(recording, skel, hardware, truth, out)
    start = time.perf_counter()
    run("identify", str(recording), "--skel", str(skel), "--hardware-config",
        str(hardware), "-o", str(out / "identified"),
        *(["--payload", args.payload] if args.payload else []), *law_step)
    fit_time = time.perf_counter() - start
    document = yaml.safe_load((out / "identified" / "identified.yaml").read_text())
    found = document["joints"]
    if args.payload:
        print_payload(document["payload"],
                      (yaml.safe_load(truth_file.read_text()).get("bodies") or {})
                      .get(args.payload))
    print_joints(found, truth, hardware)
    rollout = rollout_seconds(args.duration, skel)
    print(f"fit: {fit_time:.1f} s (the command, reading the MCAP included); one MuJoCo "
          f"rollout of {args.duration:g} s: {rollout:.1f} s")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


def mit_variants(recording: Path, skel: Path, hardware: Path, truth: dict, out: Path,
                 ) -> list[str]:
    """Fit and print the MIT motors' readings as they are, and bounded by the replies'
    unknown phase; return the ``--law-step`` option for the corrected fit (the world's step).
    """
    from skel_ros.model import load_model

    law_step = ["--law-step", f"{load_model(skel).time_step:g}"]
    for folder, options, title in (
            ("as_read", ["--no-hold-correction"],
             "the motors' torque readings as they are (--no-hold-correction):"),
            ("bounded", ["--reply-phase", "unknown", *law_step],
             ("as read, bounded by the replies' unknown phase in the hold"
              " (--reply-phase unknown):"))):
        run("identify", str(recording), "--skel", str(skel), "--hardware-config",
            str(hardware), *options, "-o", str(out / folder))
        print(title)
        print_joints(yaml.safe_load((out / folder / "identified.yaml").read_text())["joints"],
                     truth, hardware)
    print(f"corrected for the motors' hold, each reply at its end ({' '.join(law_step)}):")
    return law_step


def print_joints(found: dict, truth: dict, hardware: Path = HARDWARE) -> None:
    """Per joint and parameter, the identified value against the real robot's."""
    rotor = rotors(hardware)
    from skel_ros.hardware.config import load_hardware_config

    config = load_hardware_config(hardware)
    ramps = profile_times(config)
    # The player's stream (sim-to-real's command rate) is written by the loop's cycles when
    # its goals come at most STREAM_PERIODS control periods apart, whatever the YAML says;
    # else only with write_on_command false.
    from skel_ros.hardware.backend import STREAM_PERIODS
    from skel_ros.nodes.sim_to_real import RunConfig

    stream = RunConfig.command_rate * STREAM_PERIODS >= config.control_rate
    wait = 0.5 / config.control_rate if stream or not config.write_on_command else 0.0
    print(f"{'joint':15} {'parameter':9} {'identified':>20} {'real':>9} {'error':>7}  in interval")
    for joint, entry in found.items():
        real = {"damping": truth.get(joint, {}).get("damping", entry["damping"]["model"]),
                "friction": truth.get(joint, {}).get("friction",
                                                     entry["friction"]["model"]),
                "armature": truth.get(joint, {}).get("armature", 0.0) + rotor.get(joint, 0.0)}
        for name in ("armature", "damping", "friction"):
            item = entry[name]
            if "interval" not in item:
                why = entry["not_identified"].get(name, "")
                print(f"{joint:15} {name:9} {'not identified':>20} {real[name]:9.4g}"
                      f"          ({why})")
                continue
            value, interval = item["value"], item["interval"]
            error = 100.0 * (value - real[name]) / real[name]
            inside = "yes" if abs(value - real[name]) <= interval else "NO"
            loose = "  (loose)" if name in entry.get("loose", {}) else ""
            print(f"{joint:15} {name:9} {value:9.4g} +- {interval:<8.2g} {real[name]:9.4g} "
                  f"{error:+6.1f}%  {inside}{loose}")
        servo = entry.get("servo", {})
        delay = truth.get(joint, {}).get("delay", 0.0)
        # Against goals held from one to the next (as identify fits a stream): a
        # time-based profile of T ramps to each goal, its middle T / 2 after the write;
        # a goal left to the loop waits for its next cycle, half a period on average.
        added = {"half the profile": 0.5 * ramps.get(joint, 0.0),
                 **({"the wait for the write": servo["write_wait"]} if "write_wait" in servo
                    else {"half a loop period": wait})}
        expected = delay + sum(added.values())
        if "not_identified" in servo:
            print(f"{joint:15} delay     not identified ({servo['not_identified']})")
        elif "gains_from" in servo:  # an MIT motor's impedance law: the YAML's gains
            print(f"{joint:15} servo     the motor's law (the YAML's kp {servo['kp']:g}, kd "
                  f"{servo['kd']:g}, velocity fed forward); delay "
                  + (f"not identified ({servo['delay_not_identified']})"
                     if "delay_not_identified" in servo else
                     f"{servo['delay'] * 1e3:.0f} ms [{servo['delay_interval'][0] * 1e3:.0f}, "
                     f"{servo['delay_interval'][1] * 1e3:.0f}]")
                  + ("" if "motor_delay" not in servo else
                     f", the motor's own {servo['motor_delay'] * 1e3:.0f} ms "
                     f"[{servo['motor_delay_interval'][0] * 1e3:.0f}, "
                     f"{servo['motor_delay_interval'][1] * 1e3:.0f}]")
                  + f"   truth {delay * 1e3:.0f} ms")
        elif servo:
            print(f"{joint:15} delay     {servo['delay'] * 1e3:6.0f} ms "
                  f"[{servo['delay_interval'][0] * 1e3:.0f}, "
                  f"{servo['delay_interval'][1] * 1e3:.0f}]   truth {delay * 1e3:.0f} ms"
                  + "".join(f" + {what} {v * 1e3:g}" for what, v in added.items() if v)
                  + (f" = {expected * 1e3:g} ms" if expected != delay else ""))
        rms = entry["held_out_torque_rms"]
        print(f"{joint:15} held-out torque RMS {rms['model']:.3g} -> {rms['identified']:.3g} N m")


if __name__ == "__main__":
    sys.exit(main())
