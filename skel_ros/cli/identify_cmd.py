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


def _skeleton(world: World, hardware: str | None) -> tuple[Skeleton, LimitSet, tuple[str, ...]]:
    """The skeleton, its limits (tightened by the hardware YAML) and the mapped joints."""
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.model.limits import LimitSet

    if hardware:
        config = load_hardware_config(hardware)
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
        skel, limits, mapped = _skeleton(world, args.hardware_config)
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
    return 0


def _cmd_identify(args: argparse.Namespace) -> int:
    import time

    from skel_ros.analysis.errors import AnalysisError
    from skel_ros.analysis.recording import model_followers, read_recording
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.identify import fit as f
    from skel_ros.identify.output import (
        dump,
        identified_document,
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
        skel, _, joints = _skeleton(world, args.hardware_config)
        dynamics = RigidDynamics(world, skel.name)
        skipped = [j for j in joints if not dynamics.supports(j)]
        joints = tuple(j for j in joints if dynamics.supports(j))
        if not joints:
            print(f"error: {args.skel}: no hinge or slide joint to identify", file=sys.stderr)
            return 1
        if skipped:
            print(f"note: not identified (only hinge and slide joints are): "
                  f"{', '.join(skipped)}")
        fits_parts, held_parts = [], []
        for path in args.recordings:
            streams = read_recording(path, followers=model_followers(world))
            if "real" not in streams:
                raise f.IdentifyError(f"{path}: no /real/joint_states recorded (it has "  # noqa: TRY301 - reported below
                                      f"{', '.join(sorted(streams))})")
            fit_part, held = f.split(f.prepare(path, streams["real"], streams.get("command"),
                                               joints))
            fits_parts.append(fit_part)
            held_parts.append(held)
        servos = {j: f.fit_servo(fits_parts, j) for j in joints}
        excess = f.residual_torques(fits_parts, dynamics)
        model = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
                 for d in skel.dofs}
        fits = f.fit_joints(fits_parts, excess, model)
        held_excess = f.residual_torques(held_parts, dynamics)
    except (SkelError, ConfigError, LimitError, DynamicsError, AnalysisError, f.IdentifyError,
            OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        model_path, note = write_model(world, fits, out, Path(args.skel).suffix.lower())
        held_rms = f.held_out_rms(fits, held_parts, held_excess)
        document = identified_document(fits, servos, sources=args.recordings,
                                       model_file=model_path, note=note, held_out=held_rms)
        (out / "identified.yaml").write_text(dump(document), encoding="utf-8")
        write_report(out, fits, servos, held=held_parts[0], excess=held_excess[0],
                     title=f"Identified: {Path(args.skel).name}")
    except (SkelError, OSError) as exc:
        print(f"error: cannot write to {out}: {exc}", file=sys.stderr)
        return 1
    _print_summary(fits, servos, held_rms)
    if note:
        print(f"note: {note}")
    print(f"not in {model_path.name} (the format has no place for it): armature, delay, servo"
          " gains: see identified.yaml")
    print(f"wrote {out / 'identified.yaml'}, {model_path}, {out / 'report.html'} "
          f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return 0


def _print_summary(fits: list[Any], servos: dict[str, Any],
                   held_rms: dict[str, tuple[float, float]]) -> None:
    from skel_ros.identify.regressor import PARAMETERS

    for jf in fits:
        parts = []
        for p in PARAMETERS:
            if p in jf.intervals:
                parts.append(f"{p} {jf.values[p]:.4g} +- {jf.intervals[p]:.2g}")
            else:
                parts.append(f"{p} {jf.values[p]:.4g} (not identified: model's)")
        servo = servos.get(jf.joint)
        if servo is not None and servo.problem:
            parts.append(f"delay not identified ({servo.problem})")
        elif servo is not None:
            parts.append(f"delay {servo.delay * 1e3:.0f} ms "
                         f"[{servo.delay_interval[0] * 1e3:.0f}, "
                         f"{servo.delay_interval[1] * 1e3:.0f}]")
        before, after = held_rms[jf.joint]
        parts.append(f"held-out torque RMS {before:.3g} -> {after:.3g} N m")
        print(f"  {jf.joint}: " + ", ".join(parts))
