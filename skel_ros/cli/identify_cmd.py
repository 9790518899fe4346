"""``skel-ros excite`` and ``skel-ros identify``: fit the model to a robot's recordings.

``excite`` writes an excitation trajectory (:mod:`skel_ros.identify.excite`) for the
players (``play``, ``sim-to-real --trajectory``); ``identify`` reads the runs recorded
with it and fits the joints' delay, servo gains, armature, damping and friction
(:mod:`skel_ros.identify.fit`), writing ``identified.yaml``, the fitted model and a
report (docs/identify.md).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli.exit_codes import USAGE
from skel_ros.cli.model_args import add_model_arguments, load_model_from_args
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse
    from collections.abc import Collection, Mapping, Sequence

    from skel_ros.analysis.series import JointSeries
    from skel_ros.hardware.config import HardwareConfig
    from skel_ros.identify.fit import (
        HoldCorrection,
        JointFit,
        MotorLaw,
        Pulses,
        Samples,
        ServoFit,
    )
    from skel_ros.model.limits import LimitSet
    from skel_ros.model.types import Skeleton, World

DEFAULT_SKEL = "package://skel_ros/examples/arm.skel"
EXTRA_HINT = "skel-ros {} needs {}: pip install skel_ros[sysid]"


def _missing(command: str, modules: tuple[str, ...]) -> bool:
    """Say (one line) which extra ``command`` needs when one of ``modules`` is missing."""
    import importlib.util

    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent:
        print(f"error: {EXTRA_HINT.format(command, ' and '.join(absent))}", file=sys.stderr)
    return bool(absent)


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's private subparsers type
    """Add ``excite`` and ``identify`` to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "excite",
        help="write an excitation trajectory for identification (a sum of sines per joint)",
        description="Write a trajectory YAML that moves every joint (or those given) along a"
                    " finite Fourier series within the position, velocity and acceleration"
                    " limits, starting and ending at rest, with coefficients chosen for a"
                    " well-conditioned identification (docs/identify.md).",
    )
    _model_options(p, "the robot's model, any format",
                   "hardware YAML whose limits (tighter than the model's) to keep to")
    p.add_argument("-o", "--output", required=True, help="the trajectory YAML to write")
    p.add_argument("--duration", type=float, default=60.0,
                   help="seconds of excitation (a whole number of periods; default 60)")
    p.add_argument("--harmonics", type=int, default=5, help="harmonics per joint (default 5)")
    p.add_argument("--base-frequency", type=float, default=0.2,
                   help="Hz of the first harmonic (default 0.2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the starting coefficients")
    p.add_argument("--fraction", type=float, default=0.8,
                   help="share of each limit the motion may use (default 0.8)")
    p.add_argument("--joints", nargs="+", metavar="JOINT",
                   help="the joints to excite (default: all, or those the hardware YAML maps;"
                        " the others hold their centre)")
    p.add_argument("--pose", nargs="+", metavar="JOINT=VALUE", default=[],
                   help="centre of some joints (default: the middle of their limits)")
    p.set_defaults(func=_cmd_excite)

    q = sub.add_parser(
        "identify",
        help="fit delay, servo gains, armature, damping and friction to recorded runs",
        description="Fit each joint's command delay and servo gains, armature, viscous"
                    " damping and Coulomb friction to the real robot's joint_states of"
                    " recorded runs (MCAP), and write OUT/identified.yaml, OUT/model.<format>"
                    " and OUT/report.html (docs/identify.md).",
    )
    q.add_argument("recordings", nargs="+", type=input_file, metavar="RUN.mcap",
                   help="recordings (sim-to-real's run.mcap, or any with the joint_states)")
    _model_options(q, "the model the recordings were made with",
                   "hardware YAML: identify the joints it maps (default: every DOF)")
    q.add_argument("--payload", metavar="BODY",
                   help="also fit a point mass (mass and centre of mass) fixed to this body")
    q.add_argument("--law-step", type=float, default=0.0, metavar="S",
                   help="s between two evaluations of the MIT motors' law, for the correction"
                        " of their torque readings (default 0: a real motor's current loop;"
                        " the physics bench: the model's time step, 0.001 for the bundled"
                        " models)")
    q.add_argument("--reply-phase", choices=("end", "unknown"), default="end",
                   help="where in its command's hold an MIT motor's reply reads the torque:"
                        " 'end' (default: a motor that applies each command as it answers"
                        " it; the readings are corrected), 'unknown' (one that applies it"
                        " later, by a delay of its own: the readings are fitted as they are"
                        " and the damping, armature and friction bounded by the hold,"
                        " docs/identify.md)")
    q.add_argument("--no-hold-correction", action="store_true",
                   help="fit the MIT motors' torque readings as they are, neither corrected"
                        " nor bounded (a comparison)")
    q.add_argument("-o", "--out", required=True, help="output directory")
    q.set_defaults(func=_cmd_identify)


def _model_options(parser: argparse.ArgumentParser, model: str, hardware: str) -> None:
    """``--skel`` (and the model options), ``--hardware-config``, with these helps."""
    parser.add_argument("--skel", type=input_file, default=DEFAULT_SKEL,
                        help=f"{model} (default: the bundled arm)")
    add_model_arguments(parser, positional=False)
    parser.add_argument("--hardware-config", type=input_file, help=hardware)


def _pose(words: list[str]) -> dict[str, float]:
    out = {}
    for word in words:
        name, sep, value = word.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise ValueError(f"--pose {word!r}: expected JOINT=VALUE (a number)")
    return out


def _hardware(path: str | None) -> HardwareConfig | None:
    """The hardware YAML at ``path`` (None without one)."""
    from skel_ros.hardware.config import load_hardware_config

    return load_hardware_config(path) if path else None


def _skeleton(world: World, config: HardwareConfig | None,
              ) -> tuple[Skeleton, LimitSet, tuple[str, ...]]:
    """The skeleton, its limits (tightened by the hardware YAML) and the mapped joints."""
    from skel_ros.model.limits import LimitSet

    if config is not None:
        skel = config.select_skeleton(world)
        bound = config.bind(skel)
        mapped = tuple(j.name for j in config.joints)
        return skel, bound.limits, mapped
    skel = next((s for s in world.skeletons if s.num_dofs), None)
    if skel is None:
        raise ValueError(f"{world.source}: the model has no skeleton with DOFs")
    limits = LimitSet.from_skeleton(skel)
    return skel, limits, tuple(jl.name for jl in limits.values() if jl.leader is None)


def _cmd_excite(args: argparse.Namespace) -> int:
    if _missing("excite", ("scipy",)):
        return USAGE
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.identify.excite import ExcitationError, design_excitation, trajectory_yaml
    from skel_ros.model.errors import SkelError
    from skel_ros.model.limits import LimitError

    try:
        world = load_model_from_args(args.skel, args)
        config = _hardware(args.hardware_config)
        skel, limits, mapped = _skeleton(world, config)
        excitation = design_excitation(
            limits, duration=args.duration, harmonics=args.harmonics,
            base_frequency=args.base_frequency, seed=args.seed, fraction=args.fraction,
            joints=args.joints or (mapped if args.hardware_config else None),
            pose=_pose(args.pose),
            start={d.name: d.initial_position for d in skel.dofs})
    except (SkelError, ConfigError, LimitError, ExcitationError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    header = (f"Excitation for identification: skel-ros excite --skel {args.skel} --duration "
              f"{args.duration:g} --harmonics {args.harmonics} --seed {args.seed}\n"
              f"{excitation.harmonics} harmonics of {excitation.base_frequency:g} Hz for "
              f"{excitation.duration:g} s after a {excitation.lead_in:g} s lead-in; condition "
              f"number {excitation.condition:.3g}")
    try:
        Path(args.output).write_text(trajectory_yaml(excitation, header=header),
                                     encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for j in excitation.joints:
        print(f"  {j.name}: centre {j.centre:g}, condition number {j.condition:.3g}")
    print(f"condition number of the identification problem: {excitation.condition:.3g} "
          f"({len(excitation.joints)} joints x armature, damping, friction)")
    print(f"wrote {args.output} ({excitation.lead_in + excitation.duration:g} s)",
          file=sys.stderr)
    if config is not None:  # one read in four at joint_states' default 50 Hz
        print(f"record it at the control loop's rate: skel-ros sim-to-real ... --publish-rate"
              f" {config.control_rate:g} (docs/identify.md)")
    return 0


def _payload_body(skel: Skeleton, body: str) -> None:
    """Refuse a ``--payload`` body the skeleton does not have, naming close ones."""
    import difflib

    names = [b.name for b in skel.bodies]
    if body not in names:
        close = difflib.get_close_matches(body, names, n=3, cutoff=0.5)
        hint = (f"did you mean {', '.join(map(repr, close))}?" if close
                else f"its bodies: {', '.join(names)}")
        raise ValueError(f"--payload {body!r}: skeleton {skel.name!r} has no such body; {hint}")


def _cmd_identify(args: argparse.Namespace) -> int:  # noqa: PLR0915
    import time

    import numpy as np

    from skel_ros.analysis.errors import AnalysisError
    from skel_ros.analysis.recording import model_followers, read_recording
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.identify import fit as f
    from skel_ros.identify.output import (
        dump,
        identified_document,
        write_mjcf_model,
        write_model,
        write_report,
    )
    from skel_ros.model.errors import SkelError
    from skel_ros.model.limits import LimitError
    from skel_ros.sim.inverse_dynamics import DynamicsError, RigidDynamics

    if _missing("identify", ("scipy", "mujoco", "matplotlib")):
        return USAGE
    started = time.perf_counter()
    try:
        world = load_model_from_args(args.skel, args)
        config = _hardware(args.hardware_config)
        skel, _, joints = _skeleton(world, config)
        mit = ({} if config is None or args.no_hold_correction
               else hold_corrections(config, joints, args.law_step))
        # Replies at the hold's end are corrected; at a phase not known, bounded.
        holds, bounded = (mit, {}) if args.reply_phase == "end" else ({}, mit)
        duties = {} if config is None else duty_readings(config)
        if args.payload is not None:
            _payload_body(skel, args.payload)
        dynamics = RigidDynamics(world, skel.name)
        skipped = [j for j in joints if not dynamics.supports(j)]
        joints = tuple(j for j in joints if dynamics.supports(j))
        if not joints:
            print(f"error: {args.skel}: no hinge or slide joint to identify", file=sys.stderr)
            return 1
        if skipped:
            print(f"note: not identified (only hinge and slide joints are): "
                  f"{', '.join(skipped)}")
        _print_carried(skel, joints)
        _print_unmeasured(skel, joints, skipped)
        read_parts, spreads, drivens = [], [], []
        for path in args.recordings:
            streams = read_recording(path, followers=model_followers(world), goals=True)
            if "real" not in streams:
                raise f.IdentifyError(f"{path}: no /real/joint_states recorded (it has "  # noqa: TRY301 - reported below
                                      f"{', '.join(sorted(streams))})")
            _note_stamps(str(path), streams["real"], joints)
            command = sent_goals(streams.get("command"), config)
            spreads.append(0.0 if config is None else _spread(command, config))
            samples = f.prepare(path, streams["real"], command, joints,
                                written=sent_goals(streams.get("written"), config))
            driven = f.drive_torques(samples, duties)
            read_parts.append(f.split(driven)[0])
            drivens.append(driven)
        # What the loop held: the goals as written, where recorded (else its period).
        measured = {j: f.measured_hold(read_parts, j) for j in joints}
        # A servo's law is fitted to its readings as they are: each is the law's value at
        # its instant (an MIT reply, the hold's last); the hold's mean moves the joint.
        laws = {j: f.fit_law_delay(read_parts, law, measured[j] or 1.0 / config.control_rate,
                                   float(np.median(spreads)))
                for j, law in impedance_laws(config, joints).items()} if config else {}
        holds, bounded = _delayed_bounded(holds, bounded, f.delayed_motors(laws, measured))
        fits_parts, held_parts = _corrected(drivens, holds)
        holds, bounded = f.measured_holds(holds, measured), f.measured_holds(bounded, measured)
        servos = {j: f.fit_servo(read_parts, j) for j in joints if j not in laws}
        excess = f.residual_torques(fits_parts, dynamics)
        model = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
                 for d in skel.dofs}
        fits, payload, held_added = _fit(fits_parts, held_parts, excess, model, dynamics,
                                         args.payload)
        fits = bound_bus_servos(fits, servos, config,
                                sample_period=max(part.period for part in fits_parts),
                                holds=measured)
        fits = bound_mit_replies(fits, bounded)
        held_excess = f.residual_torques(held_parts, dynamics)
    except (SkelError, ConfigError, LimitError, DynamicsError, AnalysisError, f.IdentifyError,
            OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        model_path, note = write_model(world, fits, out, Path(args.skel).suffix.lower(),
                                       payload)
        mjcf_path, mjcf_why = write_mjcf_model(world, fits, out, skel.name, payload)
        held_rms = f.held_out_rms(fits, held_parts, held_excess, held_added)
        document = identified_document(fits, servos, sources=args.recordings,
                                       model_file=model_path, note=note, held_out=held_rms,
                                       mjcf=(mjcf_path, mjcf_why), payload=payload,
                                       holds=holds, laws=laws, slides=dynamics.slides)
        (out / "identified.yaml").write_text(dump(document), encoding="utf-8")
        write_report(out, fits, servos, laws, held=held_parts[0], excess=held_excess[0],
                     title=f"Identified: {Path(args.skel).name}",
                     added=None if held_added is None else held_added[0])
    except (SkelError, OSError) as exc:
        print(f"error: cannot write to {out}: {exc}", file=sys.stderr)
        return 1
    _print_holds(holds, bounded)
    _print_summary(fits, servos, laws, held_rms, dynamics.slides)
    if payload is not None:
        _print_payload(payload)
    written = _print_files(out, model_path, note, (mjcf_path, mjcf_why))
    print(f"wrote {written} ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return 0


def _print_carried(skel: Skeleton, joints: Sequence[str]) -> None:
    """Name the mimic followers whose load the fit gives their leader's motor."""
    from skel_ros.model.types import FollowerDrive

    carried = [f"{d.name} (with {d.mimic.leader})" for d in skel.dofs
               if d.mimic is not None and d.mimic.drive is FollowerDrive.COUPLED
               and d.name not in joints and d.mimic.leader in joints]
    if carried:
        print(f"note: {', '.join(carried)}: a mimic follower moved by its leader's motor; "
              "its links, damping and friction as the model has them are counted in the "
              "leader's torque, and its own values are not identified")


def _print_unmeasured(skel: Skeleton, joints: Sequence[str], skipped: Sequence[str]) -> None:
    """Name the DOFs the fit takes at rest where the model starts them: not measured."""
    still = [d.name for d in skel.dofs if d.mimic is None and d.name not in joints
             and d.name not in skipped]
    if still:
        print(f"note: {', '.join(still)}: not measured (no actuator of the hardware YAML), so "
              "taken at rest at the model's initial position in the model's torques; a "
              "floating base so taken is right only for a robot on a stand (record it with "
              "--fixed-base)")


def _note_stamps(source: str, measured: JointSeries, joints: Sequence[str]) -> None:
    """Say so when the measured stream's stamps do not follow its joints' motion."""
    from skel_ros.identify.stamps import stamp_agreement, stamps_note

    note = stamps_note(source, stamp_agreement(measured, joints))
    if note:
        print(f"note: {note}")


def _corrected(recordings: Sequence[Samples], holds: Mapping[str, HoldCorrection]
               ) -> tuple[list[Samples], list[Samples]]:
    """(fitted parts, held-out parts): each recording's torques corrected once, then split."""
    from skel_ros.identify import fit as f

    fitted, held = [], []
    for samples in recordings:
        fit_part, held_part = f.split(f.hold_corrected(samples, holds))
        fitted.append(fit_part)
        held.append(held_part)
    return fitted, held


def _delayed_bounded(holds: dict[str, HoldCorrection], bounded: dict[str, HoldCorrection],
                     delayed: Sequence[str]) -> tuple[dict[str, HoldCorrection],
                                                      dict[str, HoldCorrection]]:
    """(holds corrected, holds bounded), the ``delayed`` motors' moved to the bounded.

    A motor the goals as written show applying its commands late (``motor_delay``) is
    read anywhere in its holds: bounded as with ``--reply-phase unknown``, not corrected
    as if read at their ends (the physics bench's quadruped with its motors' 10 ms,
    2026-11-30 14:13: damping 36-45 % high corrected, none inside its interval; bounded,
    within 8 %, all inside). Says so.
    """
    moved = [j for j in delayed if j in holds]
    if moved:
        print(f"note: {', '.join(moved)}: the motor applies each command a delay after it"
              " came (motor_delay), so its readings fall anywhere in a hold: bounded as with"
              " --reply-phase unknown, not corrected")
    return ({j: h for j, h in holds.items() if j not in moved},
            {**bounded, **{j: holds[j] for j in moved}})


def sent_goals(command: JointSeries | None, config: HardwareConfig | None,
               ) -> JointSeries | None:
    """The recorded commands as the hardware YAML's servos get them (whole pulses)."""
    from skel_ros.identify.fit import on_pulses

    if command is None or config is None:
        return command
    return on_pulses(command, goal_pulses(config))


def goal_pulses(config: HardwareConfig) -> dict[str, Pulses]:
    """Each position servo's pulse (a Dynamixel's or a Feetech's), at its transmission.

    Their drivers write whole pulses of each goal (:func:`~skel_ros.identify.fit.on_pulses`);
    a Feetech joint whose YAML names no model is the driver's default model.
    """
    from skel_ros.hardware.base import ControlMode
    from skel_ros.hardware.dynamixel import control_table as dxl
    from skel_ros.hardware.feetech import control_table as sts
    from skel_ros.identify.fit import Pulses

    out = {}
    for jm in config.joints:
        if jm.actuator.mode is not ControlMode.POSITION:
            continue
        protocol = config.bus(jm.bus).protocol
        size = None
        if protocol == "dynamixel":
            size = dxl.RAD_PER_TICK
        elif protocol == "feetech":
            model = sts.model_by_name(jm.actuator.model)
            size = None if model is None else model.rad_per_tick
        if size is not None:
            out[jm.name] = Pulses(size, jm.zero_offset, jm.direction * jm.gear_ratio)
    return out


def duty_readings(config: HardwareConfig) -> dict[str, float]:
    """The joints whose effort is their drive's duty: each one's back-EMF damping at the joint.

    A Feetech servo's driver reads Present_Load, the drive's duty cycle times the stall
    torque (:func:`~skel_ros.identify.fit.drive_torques` makes it a torque): ``stall_torque
    / no_load_speed`` of its model (the driver's default where the YAML names none),
    times the gear ratio squared. Other buses are left out (a Dynamixel's driver reads
    Present Current, a torque; an MIT motor replies with its torque).
    """
    from skel_ros.hardware.feetech import control_table as sts

    out = {}
    for jm in config.joints:
        if config.bus(jm.bus).protocol != "feetech":
            continue
        model = sts.model_by_name(jm.actuator.model)
        if model is not None:
            out[jm.name] = model.stall_torque / model.no_load_speed * jm.gear_ratio ** 2
    return out


def hold_corrections(config: HardwareConfig, joints: Sequence[str], law_step: float,
                     ) -> dict[str, HoldCorrection]:
    """The joints among ``joints`` whose torque readings an MIT motor's hold biases.

    Those on an ``mit`` bus in a mode whose law depends on the motion (docs/identify.md,
    The method): impedance and position mode hold ``kp`` and ``kd``, velocity mode ``kd``
    alone (as :class:`~skel_ros.hardware.mit.bus.MitBus` frames them); effort mode and
    every other bus: none. The hold is the control loop's period; ``law_step`` the time
    between two evaluations of the law (``--law-step``).

    Raises:
        ConfigError: a gain the mode uses that is not a number >= 0 (``file:line``), or a
            ``law_step`` below 0 or longer than the period.
    """
    from skel_ros.hardware.base import ControlMode
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.identify.fit import HoldCorrection, IdentifyError

    uses = {ControlMode.IMPEDANCE: ("kp", "kd"), ControlMode.POSITION: ("kp", "kd"),
            ControlMode.VELOCITY: ("kd",)}
    period = 1.0 / config.control_rate
    holds = {}
    for jm in config.joints:
        used = uses.get(jm.actuator.mode, ())
        if jm.name not in joints or config.bus(jm.bus).protocol != "mit" or not used:
            continue
        gains = dict.fromkeys(("kp", "kd"), 0.0)
        for key in used:
            value = jm.actuator.options.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ConfigError(f"{config.source}:{jm.actuator_line or jm.line}: joint "
                                  f"{jm.name!r} ({jm.actuator.mode.value} mode on an MIT bus)"
                                  f": option {key!r} must be a number >= 0 (its motor's law: "
                                  f"its torque readings, its simulation), got {value!r}")
            gains[key] = float(value)
        try:
            holds[jm.name] = HoldCorrection(gains["kp"], gains["kd"], jm.gear_ratio, period,
                                            law_step)
        except IdentifyError as exc:
            raise ConfigError(f"--law-step {law_step:g} with {config.source} (control_rate "
                              f"{config.control_rate:g} Hz): {exc}") from None
    return holds


def bound_bus_servos(fits: Sequence[JointFit], servos: Mapping[str, ServoFit | None],
                     config: HardwareConfig | None, *, sample_period: float = 0.0,
                     holds: Mapping[str, float | None] | None = None) -> list[JointFit]:
    """``fits``, each joint of a bus servo in position mode bounded by its hold.

    A Dynamixel or a Feetech servo in position mode is read at a phase of its command's
    hold the recording does not show: its damping and armature are widened by that
    (:func:`~skel_ros.identify.hold_phase.widen_for_hold`, the servo's fitted gains, the
    control loop's period); one whose readings its own law explains less than
    :data:`~skel_ros.identify.fit.SERVO_R2` of gets no values
    (:func:`~skel_ros.identify.hold_phase.not_its_servos_torque`). Without a hardware
    YAML, or a servo fit (no commands recorded), a fit is kept as it is.
    A Dynamixel with ``profile_time`` ramps to each goal: its friction is widened more, and
    more again when ``sample_period`` (s between the recording's samples, its slowest for
    several) is longer than the loop's period by half (reads the recording does not hold).
    ``holds``: per joint, how long its goals were held on average as the recording's
    goals as written show (:func:`~skel_ros.identify.fit.measured_hold`; None or absent:
    the loop's period).
    """
    from skel_ros.hardware.base import ControlMode
    from skel_ros.identify.fit import SERVO_R2, HoldCorrection
    from skel_ros.identify.hold_phase import not_its_servos_torque, widen_for_hold

    if config is None:
        return list(fits)
    held = {jm.name for jm in config.joints if jm.actuator.mode is ControlMode.POSITION
            and config.bus(jm.bus).protocol in ("dynamixel", "feetech")}
    ramps = {jm.name for jm in config.joints if config.bus(jm.bus).protocol == "dynamixel"
             and "profile_time" in jm.actuator.options}  # a time-based profile
    out = []
    for fit in fits:
        servo = servos.get(fit.joint)
        if fit.joint not in held or servo is None:
            out.append(fit)
        elif servo.r2 < SERVO_R2:
            out.append(not_its_servos_torque(fit, servo.r2, SERVO_R2))
        else:
            period = (holds or {}).get(fit.joint) or 1.0 / config.control_rate
            hold = HoldCorrection(max(servo.kp, 0.0), max(servo.kd, 0.0), 1.0, period, 0.0)
            out.append(widen_for_hold(fit, hold, ramp=fit.joint in ramps,
                                      every_read=sample_period <= 1.5 * period))
    return out


def impedance_laws(config: HardwareConfig | None, joints: Sequence[str]) -> dict[str, MotorLaw]:
    """The motor's law of each joint among ``joints`` the hardware YAML puts in impedance mode.

    The hardware backend sends such a joint's MIT motor its gains and the velocity of its
    targets (``v_des``), so its torque follows ``kp (p* - p) + kd (v* - v)``: the servo
    fit's plain law (:func:`~skel_ros.identify.fit.fit_servo`) would find a delay and gains
    that trade off against the missing ``kd v*`` (the quadruped on the physics bench: 0 to
    69 ms with narrow intervals for a truth of 0 or 10), so it is not run for them. The law
    itself is known: the YAML's gains, at the joint (:attr:`HoldCorrection.gains`), which
    the simulation runs (:class:`~skel_ros.identify.fit.MotorLaw`).

    Raises:
        ConfigError: a gain of such a joint that is not a number >= 0 (``file:line``).
    """
    from skel_ros.hardware.base import ControlMode
    from skel_ros.identify.fit import MotorLaw

    if config is None:
        return {}
    impedance = {jm.name for jm in config.joints if jm.actuator.mode is ControlMode.IMPEDANCE}
    holds = hold_corrections(config, [j for j in joints if j in impedance], 0.0)
    return {joint: MotorLaw(joint, *hold.gains, f"{config.source} (impedance mode)")
            for joint, hold in holds.items()}


def _spread(command: JointSeries | None, config: HardwareConfig) -> float:
    """Seconds the hardware node spreads each target of a recorded stream over (0: none).

    The backend spreads a stream's position goals for its impedance-mode joints over the
    cycles between two of them, when they come at most ``STREAM_PERIODS`` control periods
    apart (:meth:`~skel_ros.hardware.backend.HardwareBackend._streamed`); a trajectory is
    evaluated at every cycle. The stream's period is its median.
    """
    import numpy as np

    from skel_ros.hardware.backend import STREAM_PERIODS

    if command is None or not command.held or command.times.size < 2:  # noqa: PLR2004
        return 0.0
    period = float(np.median(np.diff(command.times)))
    return period if period <= STREAM_PERIODS / config.control_rate else 0.0


def bound_mit_replies(fits: Sequence[JointFit], holds: Mapping[str, HoldCorrection],
                      ) -> list[JointFit]:
    """``fits``, each joint of ``holds`` bounded by the phase of its MIT motor's replies.

    A motor that applies each command some time after it answers it (a delay of its own,
    ``--reply-phase unknown``) reads its torque at a phase of the hold that delay modulo
    the period sets, which the recording does not show: as a bus servo's reads
    (:func:`~skel_ros.identify.hold_phase.widen_for_hold`, the motor's gains at the joint
    from the hardware YAML), not corrected as a reply at the hold's end.
    """
    from skel_ros.identify.hold_phase import widen_for_hold

    return [widen_for_hold(fit, holds[fit.joint]) if fit.joint in holds else fit
            for fit in fits]


def _print_holds(holds: Mapping[str, HoldCorrection],
                 bounded: Mapping[str, HoldCorrection]) -> None:
    """Say which joints' readings were corrected (or bounded) for their MIT motor's hold."""
    if bounded:
        print(f"note: the torque readings of {len(bounded)} joint(s) on MIT motors fitted as"
              " they are, their damping, armature and friction bounded by the unknown phase"
              " of each reply in its command's hold (--reply-phase unknown)")
    if not holds:
        return
    first = next(iter(holds.values()))
    damping = sorted({round(h.offsets()[0], 6) for h in holds.values()})
    armature = sorted({round(h.offsets()[1], 7) for h in holds.values()})
    print(f"note: the torque readings of {len(holds)} joint(s) on MIT motors corrected for the"
          f" motor's hold (period {first.period * 1e3:g} ms, law step {first.law_step * 1e3:g}"
          f" ms): it adds about {_span(damping)} N m s/rad to the damping and {_span(armature)}"
          " kg m^2 to the armature the readings alone give (identified.yaml: torque_correction)")


def _span(values: Sequence[float]) -> str:
    return f"{values[0]:.3g}" if len(values) == 1 else f"{values[0]:.3g} to {values[-1]:.3g}"


def _fit(parts: Any, held: Any, excess: Any, model: Any, dynamics: Any,  # noqa: ANN401, PLR0917
         body: str | None) -> tuple[Any, Any, Any]:
    """(joint fits, the payload's fit or None, its torque on the held-out parts or None)."""
    from skel_ros.identify import fit as f
    from skel_ros.identify.payload import PayloadRegressor, fit_with_payload, payload_torques

    if body is None:
        return f.fit_joints(parts, excess, model), None, None
    regressor = PayloadRegressor(dynamics, body)
    fits, payload = fit_with_payload(parts, excess, model, regressor)
    return fits, payload, payload_torques(held, regressor, payload)


def _print_files(out: Path, model_path: Path, note: str, mjcf: tuple[Path | None, str]) -> str:
    """Say what the model files carry and what was not written (and why); the files written."""
    mjcf_path, mjcf_why = mjcf
    if note:
        print(f"note: {note}")
    if mjcf_path is None:
        print(f"note: {out / 'model.xml'} not written ({mjcf_why}); the other files are")
    armature = (f"armature (in {mjcf_path.name}, MJCF), " if mjcf_path is not None
                else "armature, ")
    print(f"not in {model_path.name} (the format has no place for it): {armature}delay, servo"
          " gains: see identified.yaml")
    return ", ".join(str(p) for p in (out / "identified.yaml", model_path, mjcf_path,
                                      out / "report.html") if p is not None)


def _print_payload(payload: Any) -> None:  # noqa: ANN401 - a PayloadFit (imported lazily)
    if "mass" in payload.fixed:
        print(f"  payload on {payload.body}: not identified ({payload.fixed['mass']})")
        return
    mass = f"mass {payload.mass:.4g} +- {payload.mass_interval:.2g} kg"
    if not payload.added:
        print(f"  payload on {payload.body}: {mass}, not told apart from no payload: not added"
              " to the model")
        return
    parts = [mass]
    for axis, c, interval in zip("xyz", payload.com, payload.com_intervals, strict=True):
        parts.append(f"com {axis} not identified (0 kept)" if interval is None
                     else f"com {axis} {c:.4g} +- {interval:.2g} m")
    print(f"  payload on {payload.body} (centre of mass in its frame): {', '.join(parts)}")


def _print_summary(fits: list[Any], servos: dict[str, Any], laws: dict[str, Any],
                   held_rms: dict[str, tuple[float, float]], slides: Collection[str] = ()
                   ) -> None:
    from skel_ros.identify.regressor import PARAMETERS

    for jf in fits:
        parts = []
        loose = jf.loose
        for p in PARAMETERS:
            if p in loose:
                parts.append(f"{p} {jf.values[p]:.4g} +- {jf.intervals[p]:.2g} (loose: "
                             + (f"+-{100 * loose[p]:.0f} %)" if loose[p] < 1.0
                                else "its interval reaches 0)"))
            elif p in jf.intervals:
                parts.append(f"{p} {jf.values[p]:.4g} +- {jf.intervals[p]:.2g}")
            else:
                parts.append(f"{p} {jf.values[p]:.4g} (not identified: model's)")
        servo, law = servos.get(jf.joint), laws.get(jf.joint)
        if law is not None:
            parts.append(f"the motor's law kp {law.kp:.4g}, kd {law.kd:.4g} (impedance mode: "
                         f"the hardware YAML's gains), " + (
                             f"delay not identified ({law.problem})" if law.problem else
                             f"delay {law.delay * 1e3:.0f} ms [{law.delay_interval[0] * 1e3:.0f}"
                             f", {law.delay_interval[1] * 1e3:.0f}]"))
        elif servo is not None and servo.problem:
            parts.append(f"delay not identified ({servo.problem})")
        elif servo is not None:
            parts.append(f"delay {servo.delay * 1e3:.0f} ms "
                         f"[{servo.delay_interval[0] * 1e3:.0f}, "
                         f"{servo.delay_interval[1] * 1e3:.0f}]"
                         + (f" (with the goals' {servo.wait * 1e3:.1f} ms wait for their"
                            " write)" if servo.wait else ""))
        before, after = held_rms[jf.joint]
        parts.append(f"held-out {'force' if jf.joint in slides else 'torque'} RMS "
                     f"{before:.3g} -> {after:.3g} {'N' if jf.joint in slides else 'N m'}")
        print(f"  {jf.joint}: " + ", ".join(parts))
    print_loose(fits)


def print_loose(fits: Sequence[JointFit]) -> None:
    """Name the values the recording tells only loosely, and what would tell them closer.

    Apart: those loose from the noise (more excitation or a longer recording narrows them)
    and those loose from a bias bound their intervals hold (a servo's hold: its period).
    """
    from skel_ros.identify.fit import LOOSE
    from skel_ros.identify.regressor import PARAMETERS

    def named(*, noise: bool) -> str:
        which = {p: [jf.joint for jf in fits
                     if p in jf.loose and (p in jf.loose_from_noise) == noise]
                 for p in PARAMETERS}
        return "; ".join(f"{p} of {', '.join(joints)}" for p, joints in which.items() if joints)

    head = f"note: loose (a 95 % interval wider than +-{100 * LOOSE:.0f} % of the value),"
    if said := named(noise=True):
        print(f"{head} from the noise: {said}. Written all the same. A recording that "
              "excites them more tells them closer: an armature larger accelerations (bound "
              "them higher in the hardware YAML before excite: docs/identify.md), a damping "
              "or friction a wider range of speeds; a longer recording, every value")
    if said := named(noise=False):
        print(f"{head} from the phase of the servo's hold its intervals take in (notes in "
              f"identified.yaml): {said}. Written all the same; no recording narrows that "
              "bound, a shorter hold does (a faster control_rate)")
