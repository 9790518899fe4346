"""Subcommands of the hardware layer: ``skel-ros scan``, ``emulate`` and ``clear-faults``.

``scan`` and ``emulate`` ask the named protocol's plugin (its ``scan``, id range, default
ids and timeout, transport kind and modes; :mod:`skel_ros.hardware.plugins`), ``emulate``
also its emulator (:mod:`skel_ros.emulation`), each imported only when run; ``emulate
--physics --skel MODEL --config HARDWARE.yaml`` emulates the protocol's buses of a hardware
YAML instead, all moving one physics world of the model (:mod:`skel_ros.physical.host`);
``clear-faults`` opens the buses of a hardware YAML with their drivers and runs each
protocol's fault recovery, as the hardware node's ``~/clear_faults`` does.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.hardware.plugins import ProtocolPlugin

USAGE_ERROR = 2  # the exit code of argparse's errors


def _plugin(args: argparse.Namespace) -> ProtocolPlugin | None:
    """The plugin of ``args.protocol``, or None after an error message (not available)."""
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.hardware.plugins import protocol

    try:
        return protocol(args.protocol)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def _usage_error(args: argparse.Namespace, message: str) -> None:
    """Print a command-line error as argparse does (usage, then ``prog: error: ...``)."""
    usage = getattr(args, "usage", None)
    if usage is not None:
        print(usage().rstrip(), file=sys.stderr)
    print(f"skel-ros {args.command}: error: {message}", file=sys.stderr)


def _parse_ids(args: argparse.Namespace, proto: ProtocolPlugin, text: str) -> list[int] | None:
    """The ids of ``--ids`` for ``proto``, or None after an argparse-style error message."""
    from skel_ros.hardware.ids import parse_ids

    lo, hi = proto.id_range
    try:
        return parse_ids(text, lo, hi, f"{args.protocol} ids")
    except ValueError as exc:
        _usage_error(args, f"argument --ids: {exc}")
        return None


def _transport(args: argparse.Namespace, proto: ProtocolPlugin) -> dict[str, Any] | None:
    """The ``transport`` of the command line, or None after an argparse-style error."""
    from skel_ros.hardware.plugins import TransportKind

    if proto.transport is TransportKind.SERIAL:
        if not args.port:
            _usage_error(args, f"the following arguments are required for {args.protocol}:"
                               " --port")
            return None
        return {"port": args.port, "baudrate": args.baud}
    if not args.can_interface:
        _usage_error(args, f"the following arguments are required for {args.protocol}:"
                           " --can-interface (and --channel)")
        return None
    transport: dict[str, Any] = {"interface": args.can_interface}
    if args.channel:
        transport["channel"] = args.channel
    if args.bitrate:
        transport["bitrate"] = args.bitrate
    return transport


def _cmd_scan(args: argparse.Namespace) -> int:
    from skel_ros.hardware.errors import HardwareError

    proto = _plugin(args)
    if proto is None:
        return 1
    ids = _parse_ids(args, proto, args.ids or proto.scan_ids)
    if ids is None:
        return USAGE_ERROR
    transport = _transport(args, proto)
    if transport is None:
        return USAGE_ERROR
    timeout = proto.scan_timeout if args.timeout is None else args.timeout
    where = transport.get("port") or f"{transport['interface']}:{transport.get('channel', '')}"
    try:
        results = proto.scan(transport, ids, timeout)
    except HardwareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not results:
        print(f"error: no {args.protocol} device answered on {where} (ids"
              f" {args.ids or proto.scan_ids}, {timeout * 1e3:g} ms each)", file=sys.stderr)
        return 1
    for r in results:
        number = "" if r.model_number is None else f"model number {r.model_number}, "
        firmware = f", firmware {r.firmware}" if r.firmware else ""
        details = f" ({r.details})" if r.details else ""
        print(f"id {r.id}: {number}{r.model or 'unknown model'}{firmware}{details}")
    print(f"{len(results)} device(s) on {where}", file=sys.stderr)
    return 0


def _cmd_emulate(args: argparse.Namespace) -> int:
    from skel_ros.emulation import emulator_for
    from skel_ros.hardware.base import ActuatorSpec
    from skel_ros.hardware.errors import ConfigError, HardwareError

    proto = _plugin(args)
    if proto is None:
        return 1
    if args.physics or args.truth or args.skel or args.config:
        return _emulate_physics(args, proto)
    try:
        start = emulator_for(args.protocol)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    ids = _parse_ids(args, proto, args.ids or "1")
    if ids is None:
        return USAGE_ERROR
    # The protocol's usual mode (MIT motors: impedance; the others: position).
    actuators = [ActuatorSpec(i, proto.modes[0], args.model or "") for i in ids]
    transport, options = _emulated_transport(args, proto)
    try:
        emulator = start(transport, actuators, options)
    except HardwareError as exc:
        print(f"error: cannot start the {args.protocol} emulator: {exc}", file=sys.stderr)
        return 1
    return _serve([(f"emulated {args.protocol} ids {args.ids or '1'}", emulator)])


def _emulated_transport(args: argparse.Namespace, proto: ProtocolPlugin,
                        ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(transport, options)`` of an emulator from the command line.

    Serial: its baud rate (the emulator opens a pseudo-terminal), ``wire_time``; CAN:
    ``--can-interface`` (default a python-can virtual channel), ``--channel``.
    """
    from skel_ros.hardware.plugins import TransportKind

    if proto.transport is TransportKind.SERIAL:
        return {"baudrate": args.baud}, ({"wire_time": True} if args.wire_time else {})
    transport = {"interface": args.can_interface or "virtual"}
    if args.channel:
        transport["channel"] = args.channel
    return transport, {}


def _serve(emulators: list[tuple[str, Any]]) -> int:
    """Print how to reach each ``(what, emulator)``, run them until Ctrl-C, stop them."""
    import threading

    try:
        for what, emulator in emulators:
            reach = dict(emulator.transport)
            print(f"{what}: transport {reach}")
            if "port" in reach:
                print(f"port: {reach['port']}")
        print("Ctrl-C to stop", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        for _, emulator in emulators:
            emulator.stop()
    return 0


def _emulate_physics(args: argparse.Namespace, proto: ProtocolPlugin) -> int:
    """``emulate --physics``: the protocol's buses of ``--config``, moving one physics world."""
    from skel_ros.model.urdf_reader import parse_xacro_args
    from skel_ros.physical.host import BusEmulation, EmulatorStartError, start_emulators
    from skel_ros.physical.option import emulator_options

    if not (args.skel and args.config):
        _usage_error(args, "--physics (and --truth) need --skel MODEL and --config"
                           " HARDWARE.yaml: the devices are the YAML's, moving the model")
        return USAGE_ERROR
    if args.ids or args.model:
        _usage_error(args, "--ids and --model come from --config's YAML with --physics")
        return USAGE_ERROR
    loaded = _physics_bench(args)
    if loaded is None:
        return 1
    config, initial = loaded
    physics = {"model": str(args.skel), "model_args": parse_xacro_args(args.xacro_args),
               "fixed_base": args.fixed_base, "truth": str(args.truth) if args.truth else None}
    truth = f", truth {args.truth}" if args.truth else ""
    requests = []
    for spec in config.buses:
        maps = config.joints_on(spec.name)
        if spec.protocol != args.protocol or not maps:
            continue
        # The command line's transport, never the YAML's: emulated devices stay off a
        # real bus.
        transport, options = _emulated_transport(args, proto)
        options.update(emulator_options(maps, initial, physics))
        requests.append((BusEmulation(spec.name, spec.protocol, transport,
                                      [m.actuator for m in maps], options), maps))
    if not requests:
        print(f"error: {args.config}: no {args.protocol} bus with joints", file=sys.stderr)
        return 1
    try:
        started = start_emulators([r for r, _ in requests])
    except EmulatorStartError as exc:
        print(f"error: bus {exc.bus!r}: cannot start the physics-backed {args.protocol}"
              f" emulator: {exc}", file=sys.stderr)
        return 1
    one = "one physics world" if len(requests) > 1 else "physics"
    emulators = []
    for (request, maps), emulator in zip(requests, started, strict=True):
        joints = ", ".join(f"{m.name} (id {m.actuator.id})" for m in maps)
        what = f"emulated bus {request.name!r} ({args.protocol}, {one}{truth}): {joints}"
        emulators.append((what, emulator))
    return _serve(emulators)


def _physics_bench(args: argparse.Namespace) -> tuple[Any, dict[str, float]] | None:
    """``(hardware config, DOF -> initial position)``, or None after an error.

    The model, the YAML bound to it and the truth file are read and checked here, so their
    mistakes are said (with their line) before any device starts.
    """
    from skel_ros.cli.model_args import load_model_from_args
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.hardware.errors import HardwareError
    from skel_ros.model.errors import SkelError
    from skel_ros.model.limits import LimitError
    from skel_ros.model.truth import TruthError, apply_truth, load_truth
    from skel_ros.physical import physical_emulator_for
    from skel_ros.physical.host import world_names
    from skel_ros.physical.option import coupled_buses

    try:
        physical_emulator_for(args.protocol)  # one of this protocol exists
        world = load_model_from_args(args.skel, args)
        config = load_hardware_config(args.config)
        bound = config.bind(config.select_skeleton(world))
        if args.truth:
            truth = load_truth(args.truth)
            apply_truth(world if truth.model is None else
                        load_model_from_args(str(truth.model), args), truth)
    except (HardwareError, SkelError, TruthError, LimitError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
    # The buses of this protocol move one world; the others' joints have no device here.
    worlds = world_names({b.name: b.protocol for b in config.buses
                          if b.protocol == args.protocol})
    worlds.update({b.name: f"not emulated by this command (a {b.protocol} bus)"
                   for b in config.buses if b.protocol != args.protocol})
    coupled = coupled_buses(bound.skeleton, {b.name: [m.name for m in config.joints_on(b.name)]
                                             for b in config.buses}, worlds)
    if coupled:
        print(f"error: physics emulation: {coupled}", file=sys.stderr)
        return None
    return config, bound.emulated_start()


def _cmd_clear_faults(args: argparse.Namespace) -> int:
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.hardware.errors import HardwareError
    from skel_ros.hardware.plugins import bus_class

    try:
        config = load_hardware_config(args.config).with_overrides(
            port=args.port or "", can_interface=args.can_interface or "",
            can_channel=args.channel or "")
        buses = [b for b in config.buses if not args.bus or b.name in args.bus]
        unknown = sorted(set(args.bus or ()) - {b.name for b in config.buses})
        if unknown:
            print(f"error: {args.config}: no bus {', '.join(map(repr, unknown))}",
                  file=sys.stderr)
            return USAGE_ERROR
        drivers = [(b, bus_class(b.protocol)(b, [j.actuator for j in config.joints_on(b.name)],
                                             time.monotonic)) for b in buses]
    except HardwareError as exc:  # ConfigError: the file, with its line
        print(f"error: {exc}", file=sys.stderr)
        return 1
    failed = False
    for spec, driver in drivers:
        names = {j.actuator.id: j.name for j in config.joints_on(spec.name)}
        try:
            # Opened keeping torque: the devices that hold go on holding (a bench tool
            # changes nothing it need not); the recovery leaves torque off where it acts.
            driver.open(keep_torque=True)
            answers = driver.clear_faults()
            remaining = {i: st for i, st in driver.read().items() if st.error_code}
        except HardwareError as exc:
            print(f"bus {spec.name!r}: error: {exc}", file=sys.stderr)
            failed = True
            continue
        finally:
            driver.close(torque_off=False)
        for act_id, what in sorted(answers.items()):
            print(f"{spec.name} id {act_id} ({names.get(act_id, '?')}): {what}")
        for act_id, st in sorted(remaining.items()):
            print(f"{spec.name} id {act_id}: still in fault: {st.fault or st.error_code}",
                  file=sys.stderr)
        failed = failed or bool(remaining)
    return 1 if failed else 0


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's subparsers action is private
    """Add this layer's subcommands to the ``skel-ros`` parser."""
    from skel_ros.cli.model_args import add_model_arguments
    from skel_ros.emulation import emulator_names
    from skel_ros.hardware.plugins import protocol_names

    names = list(protocol_names())  # names only: no protocol is imported here
    p = sub.add_parser(
        "scan", help="list the actuators that answer on a serial port or CAN bus",
        description="Ask each id on the bus (Dynamixel PING; CANopen SDO read; MIT "
        "register read / exit motor mode) and print id, model number, model and "
        "firmware. Exits 1 when the port cannot be opened or nothing answers.")
    p.add_argument("--protocol", choices=names, required=True)
    p.add_argument("--port", help="serial port or pyserial URL (dynamixel)")
    p.add_argument("--baud", type=int, default=1_000_000, help="serial baud rate (default 1M)")
    p.add_argument("--can-interface", help="python-can interface (socketcan, virtual ...)")
    p.add_argument("--channel", help="CAN channel (can0 ...)")
    p.add_argument("--bitrate", type=int, help="CAN bit rate")
    p.add_argument("--ids", help="ids to ask, e.g. 1-20 (default: the protocol's whole range)")
    p.add_argument("--timeout", type=float, help="seconds to wait per id")
    p.set_defaults(func=_cmd_scan, usage=p.format_usage)

    e = sub.add_parser(
        "emulate", help="run emulated actuators until Ctrl-C (no hardware needed)",
        description="Start a protocol's emulator and print how to reach it (Dynamixel: "
        "a pseudo-terminal, in its own process; CAN: a python-can virtual channel "
        "of this process).")
    e.add_argument("protocol", choices=list(emulator_names()))
    e.add_argument("--ids", help="ids, e.g. 1-12 (default 1)")
    e.add_argument("--model", help="actuator model (Dynamixel default XM430-W350)")
    e.add_argument("--baud", type=int, default=1_000_000, help="serial baud rate")
    e.add_argument("--wire-time", action="store_true",
                   help="sleep as long as the bytes take at --baud (serial)")
    e.add_argument("--can-interface", help="python-can interface (default virtual)")
    e.add_argument("--channel", help="CAN channel")
    e.add_argument("--physics", action="store_true",
                   help="the devices of --config's buses of this protocol move one physics"
                        " model of the robot (--skel), each with its own control law"
                        " (docs/sim_to_real.md, 'Rehearsing before the robot arrives')")
    e.add_argument("--skel", type=input_file, help="with --physics: the robot's model")
    add_model_arguments(e, positional=False)
    e.add_argument("--config", type=input_file,
                   help="with --physics: the hardware YAML (its ids, models, options and"
                        " transmissions)")
    e.add_argument("--truth", type=input_file,
                   help="a truth file: how the real robot differs from the model; implies"
                        " --physics")
    e.set_defaults(func=_cmd_emulate, usage=e.format_usage)

    c = sub.add_parser(
        "clear-faults", help="run each protocol's fault recovery on a hardware YAML's buses",
        description="Open the buses of a hardware YAML (devices that hold torque keep it), run"
        " the protocols' own recovery on the actuators in fault (Dynamixel Reboot, CiA 402"
        " fault reset, an MIT motor's clear-error where its model has one; torque stays off"
        " there) and print what was done per actuator. Exits 1 when a fault remains or a bus"
        " cannot be opened. Stop the hardware node first (or use its ~/clear_faults).")
    c.add_argument("config", type=input_file, help="the hardware YAML")
    c.add_argument("--bus", action="append", help="only this bus (repeatable)")
    c.add_argument("--port", help="serial port for every serial bus (default: the YAML's)")
    c.add_argument("--can-interface", help="python-can interface for every CAN bus")
    c.add_argument("--channel", help="CAN channel for every CAN bus")
    c.set_defaults(func=_cmd_clear_faults)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``scan`` / ``emulate`` alone (``python -m skel_ros.cli.hardware_cmd``)."""
    parser = argparse.ArgumentParser(prog="skel-ros")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
