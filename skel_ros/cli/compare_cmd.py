"""``skel-ros compare`` and ``skel-ros sim-to-real``: the sim-to-real workflow, and its gate.

Both take ``--criteria`` (pass/fail bounds), ``--junit`` and ``--json``; the exit status
says pass, fail or not judged (:mod:`skel_ros.cli.exit_codes`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli import exit_codes, gate
from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse

    from skel_ros.analysis.report import RunSection
    from skel_ros.model.types import World

MAX_DURATION = 1e6  # s: a --duration beyond this (or inf, nan) is a mistake
TRAJECTORY_SUFFIXES = (".xml", ".yaml", ".yml")
DEFAULT_TRAJECTORY = "package://skel_ros/examples/arm_trajectory.xml"


def _model(args: argparse.Namespace) -> World | None:
    if not args.skel:
        return None
    from skel_ros.cli.model_args import load_model_from_args

    return load_model_from_args(args.skel, args)


def _limits(world: World | None) -> dict[str, tuple[float, float]] | None:
    if world is None:
        return None
    return {d.name: (d.position_lower, d.position_upper) for s in world.skeletons for d in s.dofs}


def _report_dir(out: str | None, recordings: list[Path]) -> Path:
    """``--out``, else next to the recording (or the first of several)."""
    if out:
        return Path(out)
    if len(recordings) == 1:
        return recordings[0].with_suffix("")
    return recordings[0].parent / "compare_report"


def _cmd_compare(args: argparse.Namespace) -> int:
    from skel_ros.analysis import (
        AnalysisError,
        StreamTopics,
        compare,
        model_followers,
        read_recording,
    )
    from skel_ros.analysis.errors import CriteriaError, RecordingError
    from skel_ros.analysis.report import RunSection
    from skel_ros.analysis.verdict import Verdict, judge
    from skel_ros.model import SkelError

    recordings = [Path(r) for r in args.recording]
    if args.record and len(recordings) != 1:
        gate.error("--record writes one recording; give one file")
    if not gate.arguments_agree(args) or (args.record and len(recordings) != 1):
        return exit_codes.USAGE
    try:
        world = _model(args)
        limits = _limits(world)
        followers = model_followers(world) if world is not None else {}
        criteria = gate.load(args)
    except (SkelError, CriteriaError, ValueError) as exc:
        gate.error(exc)
        return exit_codes.ERROR
    commands = tuple(dict.fromkeys(args.command_topic or StreamTopics.command))
    topics = StreamTopics(command=commands, sim=args.sim_topic, real=args.real_topic)
    if args.record:
        from skel_ros.nodes.recorder import record_live

        if args.duration is not None and not 0 < args.duration < MAX_DURATION:
            gate.error(f"--duration must be a positive number of seconds, got {args.duration}")
            return exit_codes.USAGE
        # A further engine's simulation (sim_to_real.launch.py second_engine:=) too.
        states = (args.sim_topic, args.real_topic, *(t for _, t in topics.engines))
        counts = record_live(recordings[0], commands, states, duration=args.duration)
        print("recorded " + ", ".join(f"{t}: {n}" for t, n in counts.items()))
    missing = [r for r in recordings if not r.is_file()]
    if missing:
        gate.error(f"{missing[0]}: no such recording")
        return exit_codes.ERROR
    sections: list[RunSection] = []
    for name, recording in zip(gate.run_names(recordings), recordings, strict=True):
        notes = (f"recording: {recording}",)
        try:
            streams = read_recording(recording, topics, followers=followers)
            comparison = compare(list(streams.values()), limits, rate=args.rate)
        except RecordingError as exc:  # bad input: no report, whatever the other runs
            gate.error(exc)
            return exit_codes.ERROR
        except AnalysisError as exc:
            gate.error(exc)
            sections.append(RunSection(name, None, Verdict.not_judged(str(exc)), notes))
            continue
        verdict = judge(comparison, criteria) if criteria is not None else None
        sections.append(RunSection(name, comparison, verdict, notes))
    return gate.finish(sections, _report_dir(args.out, recordings), criteria,
                       title="sim-to-real comparison", fmt=args.format, junit=args.junit,
                       json=args.json)


def _trajectories(values: list[str] | None) -> list[Path]:
    """The trajectory files: each ``--trajectory``, a folder's files sorted by name."""
    from skel_ros.resources import resolve

    out: list[Path] = []
    for value in values or [DEFAULT_TRAJECTORY]:
        path = resolve(value)
        if path.is_dir():
            found = sorted(p for p in path.iterdir()
                           if p.is_file() and p.suffix.lower() in TRAJECTORY_SUFFIXES)
            if not found:
                raise ValueError(f"{path}: no trajectory file (*.xml, *.yaml) in this folder")
            out += found
        else:
            out.append(path)
    return out


def _check_inputs(args: argparse.Namespace, trajectories: list[Path]) -> None:
    """Read the model, hardware config and every trajectory before starting anything.

    Raises:
        SkelError, ConfigError, TrajectoryError, SimParamsError, SimError: a bad file,
            ``file:line``.
    """
    from skel_ros.hardware import load_hardware_config
    from skel_ros.model.urdf_reader import parse_xacro_args
    from skel_ros.resources import resolve
    from skel_ros.trajectory import check_limits, load_trajectory, load_trajectory_model

    model = load_trajectory_model(resolve(args.skel),
                                  xacro_args=parse_xacro_args(args.xacro_args),
                                  fixed_base=args.fixed_base)
    load_hardware_config(resolve(args.hardware_config))
    if args.truth:  # its mistakes at their line, before anything starts
        from skel_ros.model import load_model
        from skel_ros.model.truth import apply_truth, load_truth

        truth = load_truth(resolve(args.truth))
        apply_truth(load_model(truth.model) if truth.model is not None else load_model(
            resolve(args.skel), xacro_args=parse_xacro_args(args.xacro_args) or None,
            fixed_base=args.fixed_base), truth)
    if args.sim_params:  # a joint the model lacks, at its line, before anything starts
        from skel_ros.identify.output import load_sim_params
        from skel_ros.model import load_model
        from skel_ros.sim import public_names

        load_sim_params(resolve(args.sim_params)).check_joints(public_names(load_model(
            resolve(args.skel), xacro_args=parse_xacro_args(args.xacro_args) or None,
            fixed_base=args.fixed_base))[0])
    mapping = resolve(args.mapping) if args.mapping else None
    for path in trajectories:
        check_limits(load_trajectory(path, model, mapping), model.limits)


def _cmd_sim_to_real(args: argparse.Namespace) -> int:
    from skel_ros.analysis.errors import AnalysisError, CriteriaError
    from skel_ros.analysis.report import RunSection
    from skel_ros.analysis.verdict import Verdict, judge
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.identify.output import SimParamsError
    from skel_ros.model import SkelError
    from skel_ros.nodes.sim_to_real import RECORDING, RunConfig, RunError, run_sim_to_real
    from skel_ros.resources import resolve
    from skel_ros.sim import SimError
    from skel_ros.trajectory import TrajectoryError

    if not gate.arguments_agree(args):
        return exit_codes.USAGE
    if args.ideal_actuators and args.truth:
        gate.error("--truth needs the physics emulation, not --ideal-actuators")
        return exit_codes.USAGE
    try:
        criteria = gate.load(args)
        trajectories = _trajectories(args.trajectory)
        _check_inputs(args, trajectories)
    except (SkelError, ConfigError, TrajectoryError, CriteriaError, SimParamsError, SimError,
            OSError, ValueError) as exc:
        gate.error(exc)
        return exit_codes.ERROR
    out = Path(args.out)
    names = gate.run_names(trajectories)
    sections: list[RunSection] = []
    view: str | None = None
    for i, (name, trajectory) in enumerate(zip(names, trajectories, strict=True)):
        if len(trajectories) > 1:
            print(f"[{i + 1}/{len(trajectories)}] {name}")
        config = RunConfig(
            skel_file=resolve(args.skel), hardware_config=resolve(args.hardware_config),
            trajectory=trajectory, out_dir=out if len(trajectories) == 1 else out / name,
            mapping_file=resolve(args.mapping) if args.mapping else None,
            emulate=not args.hardware, report_format=args.format, write_report=False,
            physics=True if args.physics else False if args.ideal_actuators else None,
            truth=resolve(args.truth) if args.truth else None,
            sim_params=resolve(args.sim_params) if args.sim_params else None,
            publish_rate=args.publish_rate, record_goals=args.record_goals, port=args.port,
            can_interface=args.can_interface, can_channel=args.can_channel,
            engines=args.engines, model_args=" ".join(args.xacro_args),
            fixed_base=args.fixed_base)
        replay = len(trajectories) == 1 and args.format == "html"
        try:
            result = run_sim_to_real(config)
        except (RunError, AnalysisError) as exc:
            gate.error(exc)
            sections.append(RunSection(name, None, Verdict.not_judged(str(exc)),
                                       (f"trajectory: {trajectory}",)))
            # What was recorded up to the stop shows what went wrong.
            if replay and (recording := config.out_dir / RECORDING).is_file():
                view = _export_view(recording, out / VIEW_PAGE)
            continue
        print(f"recording: {result.recording.resolve()}  (MCAP: Foxglove, ros2 bag)")
        verdict = judge(result.comparison, criteria) if criteria is not None else None
        sections.append(RunSection(name, result.comparison, verdict, result.notes))
        if replay:
            view = _export_view(result.recording, out / VIEW_PAGE)
    return gate.finish(sections, out, criteria, title="sim-to-real comparison", fmt=args.format,
                       junit=args.junit, json=args.json, view=view)


VIEW_PAGE = "view.html"
"""The 3-D replay a one-run HTML report shows beside its verdict (``skel-ros view``)."""


def _export_view(recording: Path, page: Path) -> str | None:
    """Export ``recording``'s 3-D replay to ``page``; its name, or None (said why).

    Needs the ``view`` extra (viser): without it the report has no replay, and one line
    says how to get it. A recording the view cannot replay is said and left out too: the
    report and the verdict do not depend on it.
    """
    import tempfile

    try:
        from skel_ros.view.replay import export_html, load_replay
    except ImportError:
        print("report: no 3-D replay (pip install skel_ros[view] adds one)")
        return None
    try:
        with tempfile.TemporaryDirectory(prefix="skel_ros_view_") as tmp:
            export_html(load_replay(recording, mesh_dir=Path(tmp)), page)
    except Exception as exc:  # noqa: BLE001 - the replay is a nicety: the run's report and
        # verdict are written whatever the viewer library does
        print(f"report: no 3-D replay: {exc}")
        return None
    print(f"3-D replay: {page.resolve()}")
    return page.name


def _engines(text: str) -> tuple[str, ...]:
    """``--engines``: distinct engine names, comma-separated."""
    import argparse  # at run time here only (the module imports it for types)

    from skel_ros.sim import ENGINES

    names = tuple(n.strip() for n in text.split(","))
    if not names or len(set(names)) != len(names) or any(n not in ENGINES for n in names):
        raise argparse.ArgumentTypeError(
            f"expected distinct engines among {', '.join(ENGINES)}, comma-separated; got {text!r}")
    return names


def _positive(text: str) -> float:
    """A finite number > 0 (``--rate``): anything else is a bad command line."""
    import argparse  # at run time here only (the module imports it for types)

    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {text!r}")
    return value


def register(sub: Any) -> None:  # noqa: ANN401 - argparse subparsers action
    """Add ``compare`` and ``sim-to-real`` to the ``skel-ros`` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "compare", help="compare command, simulation and hardware in recorded runs (MCAP)")
    p.add_argument("recording", nargs="+", type=input_file,
                   help="MCAP file(s) (skel-ros sim-to-real or ros2 bag -s mcap), one verdict"
                        " for all; with --record, the one file to write")
    p.add_argument("--record", action="store_true",
                   help="first record the running graph's commands and joint states into"
                        " RECORDING (until Ctrl-C or --duration), then compare")
    p.add_argument("--duration", type=float, help="with --record: seconds to record")
    p.add_argument("--skel", type=input_file,
                   help="model file (path or package://), for the joint limits (limit hits)")
    add_model_arguments(p, positional=False)
    p.add_argument("--out", help="report directory (default: next to the recording)")
    p.add_argument("--format", choices=("html", "md"), default="html")
    p.add_argument("--rate", type=_positive, default=100.0, help="comparison grid rate, Hz")
    p.add_argument("--sim-topic", default="/sim/joint_states")
    p.add_argument("--real-topic", default="/real/joint_states")
    p.add_argument("--command-topic", action="append",
                   help="topic of the commands (JointState or JointTrajectory); repeat for"
                        " several (default: /joint_commands and /joint_trajectory)")
    gate.add_arguments(p)
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "sim-to-real",
        help="run sim and hardware (emulated by default) on trajectories, record, compare")
    p.add_argument("--skel", default="package://skel_ros/examples/arm.skel", type=input_file,
                   help="the robot's model, any format (SKEL, URDF/xacro, SMURF, CASPR bodies,"
                        " Phobos; default: %(default)s)")
    add_model_arguments(p, positional=False)
    p.add_argument("--hardware-config",
                   default="package://skel_ros/config/hardware/arm_dynamixel.yaml",
                   type=input_file, help="joint -> actuator YAML (default: %(default)s)")
    p.add_argument("--trajectory", action="append", type=input_file,
                   help="CASPR trajectories.xml or trajectory YAML played to both robots, or a"
                        " folder of them; repeat for several, each run and judged in turn"
                        f" (default: {DEFAULT_TRAJECTORY})")
    p.add_argument("--mapping", type=input_file,
                   help="CASPR q -> DOF name mapping file (default: the"
                   " MODEL.q_mapping.yaml beside the model when it exists, as convert"
                   " writes it)")
    p.add_argument("--out", default="out/sim_to_real",
                   help="output directory: recording, node logs, report; one sub-folder per"
                        " trajectory when there are several (default: %(default)s)")
    p.add_argument("--format", choices=("html", "md"), default="html", help="report format")
    p.add_argument("--hardware", action="store_true",
                   help="use the real actuators of the hardware config (default: emulate them)")
    actuation = p.add_mutually_exclusive_group()
    actuation.add_argument(
        "--physics", action="store_true",
        help="the emulated actuators move one physics model of the robot, each with its own"
             " control law (docs/sim_to_real.md, 'Rehearsing before the robot arrives'): the"
             " default where every bus's protocol has such an emulator (Dynamixel, Feetech,"
             " MIT, CiA 402); with this option, an error where one has none")
    actuation.add_argument(
        "--ideal-actuators", action="store_true",
        help="emulate ideal actuators instead: each joint a first-order tracker of its"
             " commands (no physics, no control law)")
    p.add_argument("--truth", type=input_file,
                   help="a truth file: how the real robot differs from the model (friction,"
                        " payloads, delays ...); implies --physics")
    p.add_argument("--sim-params", type=input_file, metavar="IDENTIFIED.yaml",
                   help="run the simulation with every value skel-ros identify wrote into"
                        " this identified.yaml: each joint's armature, damping and friction"
                        " (replacing the model's) (docs/identify.md)")
    p.add_argument("--publish-rate", type=_positive, metavar="HZ",
                   help="rate of the hardware's /real/joint_states (default: the hardware"
                        " node's, 50 Hz); record an identification run at the control loop's"
                        " rate (docs/identify.md)")
    p.add_argument("--record-goals", action="store_true",
                   help="record the goals as the hardware wrote them (/real/written_goals):"
                        " skel-ros identify fits a servo's delay to them (docs/identify.md)")
    p.add_argument("--port", default="",
                   help="serial port for every serial bus (Dynamixel, Feetech)")
    p.add_argument("--can-interface", default="",
                   help="python-can interface for every CAN bus (e.g. socketcan, pcan)")
    p.add_argument("--can-channel", default="", help="CAN channel for every CAN bus")
    p.add_argument("--engines", type=_engines, default=("dart",), metavar="ENGINE[,ENGINE]",
                   help="simulation engines, each its own simulation node on the one command"
                        " stream: dart, mujoco or dart,mujoco (the first is the report's"
                        " 'sim', the other its engine's name; default: dart)")
    gate.add_arguments(p)
    p.set_defaults(func=_cmd_sim_to_real)
