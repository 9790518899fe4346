"""``skel-ros compare`` and ``skel-ros sim-to-real``: the sim-to-real workflow."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse

MAX_DURATION = 1e6  # s: a --duration beyond this (or inf, nan) is a mistake


def _cmd_compare(args: argparse.Namespace) -> int:
    from skel_ros.analysis import AnalysisError, StreamTopics, compare, read_recording, write_report

    limits = None
    if args.skel:
        from skel_ros.model import SkelError, load_model

        try:
            world = load_model(args.skel)
        except SkelError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        limits = {d.name: (d.position_lower, d.position_upper)
                  for s in world.skeletons for d in s.dofs}
    commands = tuple(dict.fromkeys(args.command_topic or StreamTopics.command))
    topics = StreamTopics(command=commands, sim=args.sim_topic, real=args.real_topic)
    if args.record:
        from skel_ros.nodes.recorder import record_live

        if args.duration is not None and not 0 < args.duration < MAX_DURATION:
            print(f"error: --duration must be a positive number of seconds, got {args.duration}",
                  file=sys.stderr)
            return 2
        counts = record_live(args.recording, commands, (args.sim_topic, args.real_topic),
                             duration=args.duration)
        print("recorded " + ", ".join(f"{t}: {n}" for t, n in counts.items()))
    try:
        streams = read_recording(args.recording, topics)
        comparison = compare(list(streams.values()), limits, rate=args.rate)
    except AnalysisError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else Path(args.recording).with_suffix("")
    report = write_report(comparison, out, fmt=args.format,
                          notes=(f"recording: {args.recording}",))
    print(f"report: {report.page.resolve()}")
    return 0


def _cmd_sim_to_real(args: argparse.Namespace) -> int:
    from skel_ros.nodes.sim_to_real import RunConfig, RunError, run_sim_to_real
    from skel_ros.resources import resolve

    config = RunConfig(
        skel_file=resolve(args.skel), hardware_config=resolve(args.hardware_config),
        trajectory=resolve(args.trajectory), out_dir=Path(args.out),
        mapping_file=resolve(args.mapping) if args.mapping else None,
        emulate=not args.hardware, report_format=args.format, port=args.port,
        can_interface=args.can_interface, can_channel=args.can_channel)
    try:
        result = run_sim_to_real(config)
    except RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"report: {result.report.resolve()}")
    print(f"recording: {result.recording.resolve()}  (MCAP: Foxglove, ros2 bag)")
    return 0


def register(sub: Any) -> None:  # noqa: ANN401 - argparse subparsers action
    """Add ``compare`` and ``sim-to-real`` to the ``skel-ros`` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "compare", help="compare command, simulation and hardware in a recorded run (MCAP)")
    p.add_argument("recording", help="MCAP file (skel-ros sim-to-real or ros2 bag -s mcap);"
                                     " with --record, the file to write")
    p.add_argument("--record", action="store_true",
                   help="first record the running graph's commands and joint states into"
                        " RECORDING (until Ctrl-C or --duration), then compare")
    p.add_argument("--duration", type=float, help="with --record: seconds to record")
    p.add_argument("--skel", type=input_file, help="model file, for the joint limits (limit hits)")
    p.add_argument("--out", help="report directory (default: next to the recording)")
    p.add_argument("--format", choices=("html", "md"), default="html")
    p.add_argument("--rate", type=float, default=100.0, help="comparison grid rate, Hz")
    p.add_argument("--sim-topic", default="/sim/joint_states")
    p.add_argument("--real-topic", default="/real/joint_states")
    p.add_argument("--command-topic", action="append",
                   help="topic of the commands (JointState or JointTrajectory); repeat for"
                        " several (default: /joint_commands and /joint_trajectory)")
    p.set_defaults(func=_cmd_compare)

    p = sub.add_parser(
        "sim-to-real",
        help="run sim and hardware (emulated by default) on one trajectory, record, compare")
    p.add_argument("--skel", default="package://skel_ros/examples/arm.skel",
                   help="the robot's model (SKEL, CASPR bodies or Phobos; default: %(default)s)")
    p.add_argument("--hardware-config",
                   default="package://skel_ros/config/hardware/arm_dynamixel.yaml",
                   help="joint -> actuator YAML (default: %(default)s)")
    p.add_argument("--trajectory", default="package://skel_ros/examples/arm_trajectory.xml",
                   help="CASPR trajectories.xml or trajectory YAML played to both robots"
                        " (default: %(default)s)")
    p.add_argument("--mapping", help="CASPR q -> DOF name mapping file")
    p.add_argument("--out", default="out/sim_to_real",
                   help="output directory: recording, node logs, report (default: %(default)s)")
    p.add_argument("--format", choices=("html", "md"), default="html", help="report format")
    p.add_argument("--hardware", action="store_true",
                   help="use the real actuators of the hardware config (default: emulate them)")
    p.add_argument("--port", default="", help="serial port for every Dynamixel bus")
    p.add_argument("--can-interface", default="",
                   help="python-can interface for every CAN bus (e.g. socketcan, pcan)")
    p.add_argument("--can-channel", default="", help="CAN channel for every CAN bus")
    p.set_defaults(func=_cmd_sim_to_real)
