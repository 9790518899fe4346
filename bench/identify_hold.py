"""Benchmark: how the phase of a bus servo's reads within its held goal biases identification.

Issue 29's measurement behind :mod:`skel_ros.identify.hold_phase`. The bundled arm's four
physics-backed Dynamixels (``examples/arm.skel`` on ``config/hardware/arm_dynamixel.yaml``,
the truth of ``bench/identify.py``) in this process, on a clock of the bench's (no ROS, no
timing jitter: every run is the same), driven as the hardware loop drives them
(:func:`skel_ros.physical.rehearsal.drive`): every control period (5 ms) each servo's
Goal Position from ``skel-ros excite``'s excitation, then one read of its Present
Current, Velocity and Position. The truth's
command delay sets when, within a period, each goal takes effect, and so the phase at
which every read samples the servo's hold: a delay of whole periods makes each read the
hold's last moment. Per delay, the recording is fitted as ``identify`` fits it, with
every read (the loop's 200 Hz) and with one in four (joint_states' default 50 Hz).

Printed per delay and rate: each XM430 joint's armature, damping and friction error
against the real arm (an asterisk: the truth outside the 95 % interval), the friction's
error as a share of the hold's slide ``S = kp (T - dt) / 2 * mean |qd|``
(:mod:`skel_ros.identify.hold_phase`: ``identify`` widens a bus servo's friction interval
by 0.3 ``S``, 0.7 ``S`` for one on a ramp) and the delay found. ``--profile``: the
servos' time-based profile ramps each goal over the period instead of stepping it (the
Dynamixel backend's ``profile_time`` of one period); ``--exact-pulses``, an experiment,
lets the servos' PID err in fractions of an encoder pulse. ``--fraction`` sets the
excitation's share of the limits (its speed), ``--period`` the loop's period, ``--only``
moves some joints and holds the others (the friction's bias comes from the joints'
coupling: one joint alone shows little of it).

Asserts nothing. Usage: ``.venv/bin/python bench/identify_hold.py [--duration S]
[--seed K] [--delays MS,MS,...] [--profile] [--exact-pulses] [--fraction F] [--period S]
[--only J,J]``
(default 60 s, seed 0, delays 10, 11, 12, 13 and 14 ms, fraction 0.8, the hardware
YAML's period, every joint).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from skel_ros.analysis.series import JointSeries
from skel_ros.hardware.config import load_hardware_config
from skel_ros.identify import fit as f
from skel_ros.identify.excite import design_excitation
from skel_ros.model import load_model
from skel_ros.physical.rehearsal import drive
from skel_ros.sim.inverse_dynamics import RigidDynamics

# The bench beside this one (the script's folder is first on the path): its arm and truth.
from identify import ARM, HARDWARE, TRUTH, rotors  # isort: skip


class Arm:
    """The arm's model, hardware config, servos and excitation."""

    def __init__(self, duration: float, seed: int, *, fraction: float = 0.8,
                 period: float | None = None, only: tuple[str, ...] = ()) -> None:
        self.world = load_model(ARM)
        self.config = load_hardware_config(HARDWARE)
        self.skel = self.config.select_skeleton(self.world)
        bound = self.config.bind(self.skel)
        self.joints = tuple(j.name for j in self.config.joints)
        self.period = period or 1.0 / self.config.control_rate
        self.only = only
        self.excitation = design_excitation(
            bound.limits, duration=duration, seed=seed, joints=self.joints, fraction=fraction,
            start={d.name: d.initial_position for d in self.skel.dofs})

    def record(self, truth: Path, *, profile: bool) -> tuple[JointSeries, JointSeries]:
        """(readings, goals) of one run of the excitation on ``truth``'s arm."""
        names = [j.name for j in self.config.joints]
        column = [list(self.excitation.joint_names).index(n) for n in names]
        count = round((self.excitation.lead_in + self.excitation.duration + 1.0) / self.period)
        times = np.arange(count) * self.period
        goals = self.excitation.sample(times)[0][:, column]
        for i, name in enumerate(names):
            if self.only and name not in self.only:
                goals[:, i] = goals[0, i]  # held where it starts
        run = drive(ARM, HARDWARE, goals, truth=truth, period=self.period, profile=profile)
        return (JointSeries.from_samples("real", run.times + self.period, names, run.real,
                                         run.velocity, run.effort),
                JointSeries.from_samples("command", run.times, names, run.command))

    def fit(self, real: JointSeries, command: JointSeries, every: int
            ) -> tuple[list[f.JointFit], dict[str, f.ServoFit | None]]:
        """Fit one read in ``every`` as ``identify`` does."""
        if every > 1:
            pick = slice(None, None, every)
            real = JointSeries.from_samples("real", real.times[pick], list(real.joint_names),
                                            real.positions[pick], real.velocities[pick],
                                            real.efforts[pick])
        part, _ = f.split(f.prepare("bench", real, command, self.joints))
        dynamics = RigidDynamics(self.world, self.skel.name)
        model = {d.name: {"armature": 0.0, "damping": d.damping,
                          "friction": d.coulomb_friction} for d in self.skel.dofs}
        servos = {j: f.fit_servo([part], j) for j in self.joints}
        return f.fit_joints([part], f.residual_torques([part], dynamics), model), servos


def errors(fits: list[f.JointFit], servos: dict[str, f.ServoFit | None], truth: dict,
           rotor: dict[str, float], period: float = 0.005) -> list[str]:
    """One line per XM430 joint: each parameter's error against the real arm, the
    friction's error over the hold's slide, the delay."""
    lines = []
    for jf in fits:
        if jf.joint not in rotor or not jf.intervals:
            continue
        real = {"damping": truth[jf.joint]["damping"], "friction": truth[jf.joint]["friction"],
                "armature": truth[jf.joint]["armature"] + rotor[jf.joint]}
        parts = []
        for name in ("armature", "damping", "friction"):
            if name not in jf.intervals:
                parts.append(f"{name} n.i.")
                continue
            error = 100.0 * (jf.values[name] - real[name]) / real[name]
            outside = "*" if abs(jf.values[name] - real[name]) > jf.intervals[name] else " "
            parts.append(f"{name} {error:+6.1f}%{outside}")
        servo = servos.get(jf.joint)
        delay = ("none" if servo is None or servo.problem else f"{servo.delay * 1e3:.0f} ms")
        if servo is not None and not math.isnan(servo.kp) and "friction" in jf.intervals:
            # As identify computes it (a servo's own control step taken as fine: 0).
            slide = f.HoldCorrection(max(servo.kp, 0.0), max(servo.kd, 0.0), 1.0, period,
                                     0.0).offsets()[0] * jf.speed
            if slide > 0.0:  # a servo fit with no gain (a profile's ramp): no slide
                parts.append(f"friction/S "
                             f"{(jf.values['friction'] - real['friction']) / slide:+.2f}")
        lines.append(f"  {jf.joint:15} " + "  ".join(parts) + f"  delay {delay}")
    return lines


def exact_pulses() -> None:
    """Every X-series servo law of this process errs in fractions of a pulse (--exact-pulses).

    A real servo counts its encoder's whole pulses (4096 a turn), and so does the law
    (:class:`~skel_ros.physical.servo_law.XServoLaw`); this experiment gives its position
    PID the exact error instead (its :meth:`~skel_ros.physical.servo_law.XServoLaw.
    pulse_error`), to show how much of a bias the whole pulses make (one pulse is ``kp``
    times 1.5e-3 rad of torque: 0.029 N m on the XM430s).
    """
    from skel_ros.hardware.dynamixel import control_table as ct
    from skel_ros.physical import servo_law

    def exact(law: servo_law.XServoLaw, position: float) -> float:
        return (law.desired - position) / ct.RAD_PER_TICK  # not rounded: the experiment

    servo_law.XServoLaw.pulse_error = exact  # type: ignore[method-assign] - this process only


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--delays", default="10,11,12,13,14",
                        help="the truth's command delays, ms, comma-separated")
    parser.add_argument("--profile", action="store_true",
                        help="ramp to each goal over the period (a time-based profile)")
    parser.add_argument("--exact-pulses", action="store_true",
                        help="an experiment no real servo allows: the servos' position"
                             " PID errs in fractions of an encoder pulse, not whole ones")
    parser.add_argument("--fraction", type=float, default=0.8,
                        help="the excitation's share of the limits (its speed)")
    parser.add_argument("--period", type=float, default=None,
                        help="s, the loop's period (default: the hardware YAML's)")
    parser.add_argument("--only", default="",
                        help="joints to move, comma-separated (the others held)")
    args = parser.parse_args()
    if args.exact_pulses:
        exact_pulses()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    arm = Arm(args.duration, args.seed, fraction=args.fraction, period=args.period,
              only=tuple(w for w in args.only.split(",") if w))
    base = yaml.safe_load(TRUTH)["joints"]
    rotor = {k: v for k, v in rotors().items() if k != "wrist"}  # the XL430 reads noise
    folder = Path(tempfile.mkdtemp(prefix="bench_identify_hold_"))
    for ms in (float(word) for word in args.delays.split(",")):
        truth = {name: {**values, "delay": ms / 1e3} for name, values in base.items()}
        path = folder / f"truth_{ms:g}ms.yaml"
        path.write_text(yaml.safe_dump({"joints": truth}), encoding="utf-8")
        start = time.perf_counter()
        real, command = arm.record(path, profile=args.profile)
        took = time.perf_counter() - start
        for every in (1, 4):
            fits, servos = arm.fit(real, command, every)
            print(f"delay {ms:g} ms, {1.0 / (every * arm.period):g} Hz"
                  f"{', profile' if args.profile else ''}"
                  f"{', exact pulses' if args.exact_pulses else ''} (run {took:.0f} s):")
            print("\n".join(errors(fits, servos, truth, rotor, arm.period)))
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
