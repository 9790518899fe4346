"""``skel-ros init-hardware``: a starting hardware YAML for any model.

Reads a model in any format (URDF/xacro, SMURF, SKEL, Phobos, CASPR) and writes the
hardware YAML the hardware node reads (docs/hardware.md) with every actuated DOF
mapped: one bus of the chosen protocol, ids counted up from the protocol's lowest
(or ``--first-id``), the protocol's usual control mode, actuator model and options, and a
transport of its kind to edit (all asked of its plugin), direction 1, zero offset 0,
gear ratio 1, and under ``limits`` the model's finite position, velocity and effort
limits, written out so the user sees them and can tighten them (a hardware YAML can
only tighten the model's limits). The user edits ids, directions, offsets and
models before running it on a real robot.

A motor drives one DOF, so only the DOFs of one-DOF joints (revolute, prismatic,
screw) are mapped; the DOFs of multi-DOF joints (a URDF's floating base, a planar
joint, a ball joint) are listed in the header comment as not mapped. So are followers
(mimic joints: docs/model.md), which a gear or a linkage moves with their leader;
``--include-followers`` maps them too, for a follower with an actuator of its own.

``--from-lerobot CALIB.json`` maps the motors of a LeRobot calibration file instead (on
Feetech STS/SMS or SCS servos): each motor to the joint of its name (or ``--map MOTOR=JOINT``),
with the file's id, direction, zero and range (docs/feetech.md, "Calibration from
LeRobot"); ``skel-ros export-calibration`` writes the file back.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse

    from skel_ros.hardware.feetech.lerobot import MotorCalibration
    from skel_ros.hardware.plugins import ProtocolPlugin
    from skel_ros.model.types import Dof, Skeleton

LEROBOT_PROTOCOL = "feetech"  # the servos a LeRobot calibration file maps to


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's private subparsers type
    """Add ``init-hardware`` to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "init-hardware",
        help="write a starting hardware YAML for a model (every DOF mapped, its limits)",
        description="Read a model in any supported format and write a hardware YAML with"
                    " every actuated DOF mapped to an actuator of one bus, with the model's"
                    " limits, for you to edit ids, directions and zero offsets.",
    )
    p.add_argument("model", type=input_file, help="model file (URDF/xacro, SMURF, SKEL, ...)")
    add_model_arguments(p)
    p.add_argument("--protocol",
                   help="actuator protocol: dynamixel, mit, canopen, feetech (or a plugin's"
                        " name); required unless --from-lerobot (feetech)")
    p.add_argument("-o", "--output", required=True, help="output YAML ('-' for stdout)")
    p.add_argument("--skeleton", help="the skeleton to map (default: the first with DOFs)")
    p.add_argument("--model", dest="actuator_model", metavar="NAME",
                   help="actuator model for every joint (default: the protocol's usual one)")
    p.add_argument("--first-id", type=int, help="id of the first actuator (default: the"
                                                " protocol's lowest usable id)")
    p.add_argument("--include-followers", action="store_true",
                   help="also map followers (mimic joints), for a follower with an actuator"
                        " of its own (default: only independent joints; a gear or linkage"
                        " moves a follower with its leader)")
    p.add_argument("--from-lerobot", metavar="CALIB.json", type=input_file,
                   help="map the motors of a LeRobot calibration file (Feetech): ids,"
                        " directions, zeros and ranges from the file, each motor to the joint"
                        " of its name")
    p.add_argument("--map", action="append", default=[], metavar="MOTOR=JOINT",
                   help="with --from-lerobot: the joint of a motor whose name is not a"
                        " joint's (repeatable)")
    p.set_defaults(func=_cmd_init_hardware)


def _skeleton(world: Any, name: str | None) -> Skeleton:  # noqa: ANN401 - a model World
    if name:
        return world.skeleton(name)  # type: ignore[no-any-return]
    for skel in world.skeletons:
        if skel.num_dofs:
            return skel  # type: ignore[no-any-return]
    raise SystemExit("error: the model has no skeleton with DOFs")


def _limits(dof: Dof) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if math.isfinite(dof.position_lower) and math.isfinite(dof.position_upper):
        out["position"] = {"lower": dof.position_lower, "upper": dof.position_upper}
    for kind, lo, hi in (("velocity", dof.velocity_lower, dof.velocity_upper),
                         ("effort", dof.force_lower, dof.force_upper)):
        if math.isfinite(lo) and math.isfinite(hi):
            out[kind] = {"lower": lo, "upper": hi}
    return out


def hardware_document(skel: Skeleton, protocol_name: str, *, actuator_model: str | None = None,
                      first_id: int | None = None, skeleton_name: str = "",
                      include_followers: bool = False,
                      ) -> tuple[dict[str, Any], list[str]]:
    """The hardware YAML's content for ``skel`` and the names of the DOFs left unmapped.

    Followers (mimic joints) are left out, and not listed as unmapped (the header says
    why), unless ``include_followers``.

    Raises:
        SystemExit: An unknown protocol, or more DOFs than the protocol has ids.
    """
    plugin = _plugin(protocol_name)
    lowest, highest = plugin.id_range
    next_id = max(lowest, 1) if first_id is None else first_id
    model = actuator_model or plugin.default_model
    bus = _bus_name(plugin)
    joints: dict[str, Any] = {}
    unmapped: list[str] = []
    for joint in skel.joints:
        names = [skel.dofs[joint.first_dof + k].name for k in range(joint.num_dofs)]
        if joint.num_dofs != 1:
            unmapped.extend(names)
            continue
        if not lowest <= next_id <= highest:
            raise SystemExit(f"error: id {next_id} is outside {plugin.name}'s ids"
                             f" {lowest}..{highest} ({len(joints)} DOFs mapped so far)")
        dof = skel.dofs[joint.first_dof]
        if dof.mimic is not None and not include_followers:
            continue
        joints[dof.name] = _entry(plugin, bus, next_id, model, dof)
        next_id += 1
    if not joints:
        raise SystemExit(f"error: skeleton {skel.name!r} has no one-DOF joint to map")
    transport = plugin.transport.example  # emulate:=true replaces it
    doc: dict[str, Any] = {}
    if skeleton_name:
        doc["skeleton"] = skeleton_name
    doc.update({
        "control_rate": 200.0,
        "command_timeout": 0.5,
        "safe_state": "hold",
        "auto_resume": False,
    })
    if not plugin.device_watchdog:  # its devices have none; its driver refuses another value
        doc["device_watchdog"] = 0.0
    doc.update({
        "buses": {bus: {"protocol": plugin.name, "transport": transport}},
        "joints": joints,
    })
    return doc, unmapped


def _entry(plugin: ProtocolPlugin, bus: str, actuator_id: int, model: str | None,
           dof: Dof) -> dict[str, Any]:
    """One joint's actuator: the protocol's usual mode, model and options; the model's limits."""
    entry: dict[str, Any] = {"bus": bus, "id": actuator_id}
    if model:
        entry["model"] = model
    entry.update(mode=plugin.modes[0].value, direction=1, zero_offset=0.0, gear_ratio=1.0)
    if plugin.default_options:
        entry["options"] = dict(plugin.default_options)
    limits = _limits(dof)
    if limits:
        entry["limits"] = limits
    return entry


def lerobot_document(skel: Skeleton, motors: tuple[MotorCalibration, ...], source: str, *,
                     joint_of: dict[str, str] | None = None, actuator_model: str | None = None,
                     skeleton_name: str = "",
                     ) -> tuple[dict[str, Any], list[str], list[str]]:
    """The hardware YAML's content for a LeRobot calibration file's ``motors`` on ``skel``.

    Each motor drives the one-DOF joint of its name, or ``joint_of[motor]``; its joint
    gets the file's id, direction (``drive_mode``), zero (the middle of the range),
    ``options.homing_offset`` (STS/SMS) and ``angle_limits``, and the range as position limits
    (within the model's). The joints come in the model's order; ``lerobot_motors`` keeps
    the file's names and order. Returns the content, the DOFs of multi-DOF joints and the
    one-DOF joints no motor drives.

    Raises:
        SystemExit: a motor naming no one-DOF joint, two motors for one joint, a
            ``joint_of`` entry naming no motor, a value the servo cannot hold.
    """
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.hardware.feetech.lerobot import joint_calibration, model_for

    try:
        model = model_for(actuator_model or "", "--model")
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    joint_of = dict(joint_of or {})
    names = {m.motor for m in motors}
    for name, joint in joint_of.items():
        if name not in names:
            raise SystemExit(f"error: --map {name}={joint}: {source} has no motor {name!r}"
                             f" (motors: {', '.join(m.motor for m in motors)})")
    dofs = {skel.dofs[j.first_dof].name: skel.dofs[j.first_dof]
            for j in skel.joints if j.num_dofs == 1}
    by_joint: dict[str, MotorCalibration] = {}
    for motor in motors:
        joint = joint_of.get(motor.motor, motor.motor)
        if joint not in dofs:
            how = (f"--map {motor.motor}={joint}: no one-DOF joint {joint!r}"
                   if motor.motor in joint_of else
                   f"no one-DOF joint {joint!r}; name its joint with --map {motor.motor}=JOINT")
            raise SystemExit(f"error: {source}: motor {motor.motor!r} (id {motor.id}): {how}"
                             f" in skeleton {skel.name!r} (joints: {', '.join(dofs)})")
        if joint in by_joint:
            raise SystemExit(f"error: {source}: motors {by_joint[joint].motor!r} and"
                             f" {motor.motor!r} both map to joint {joint!r}")
        by_joint[joint] = motor
    doc, unmapped = hardware_document(skel, LEROBOT_PROTOCOL, actuator_model=model.name,
                                      skeleton_name=skeleton_name, include_followers=True)
    joints: dict[str, Any] = {}
    left_out: list[str] = []
    for name, entry in doc["joints"].items():
        if name not in by_joint:
            left_out.append(name)
            continue
        try:
            cal = joint_calibration(by_joint[name], model, source)
        except ConfigError as exc:
            raise SystemExit(f"error: {exc}") from None
        entry.update(id=cal.id, direction=cal.direction, zero_offset=cal.zero_offset)
        limits = entry.pop("limits", {})  # put back after the options
        limits["position"] = _within(cal.position, dofs[name],
                                     f"{source}: motor {by_joint[name].motor!r}")
        offset = {} if cal.homing_offset is None else {"homing_offset": cal.homing_offset}
        entry["options"] = {**entry.get("options", {}), **offset,
                            "angle_limits": list(cal.angle_limits)}
        entry["limits"] = limits
        joints[name] = entry
    doc["joints"] = joints
    doc["lerobot_motors"] = {m.motor: joint_of.get(m.motor, m.motor) for m in motors}
    return doc, unmapped, left_out


def _within(span: tuple[float, float], dof: Dof, where: str) -> dict[str, float]:
    """The calibrated range as position limits, inside the model's (a YAML only tightens)."""
    lower, upper = max(span[0], dof.position_lower), min(span[1], dof.position_upper)
    if lower > upper:
        raise SystemExit(f"error: {where}: its range [{span[0]:.4g}, {span[1]:.4g}] rad lies"
                         f" outside joint {dof.name!r}'s limits [{dof.position_lower:g},"
                         f" {dof.position_upper:g}]")
    return {"lower": lower, "upper": upper}


def _joint_map(words: list[str]) -> dict[str, str]:
    """``--map MOTOR=JOINT`` words as {motor: joint}."""
    out: dict[str, str] = {}
    for word in words:
        motor, sep, joint = word.partition("=")
        if not sep or not motor or not joint:
            raise SystemExit(f"error: --map {word}: expected MOTOR=JOINT")
        if motor in out:
            raise SystemExit(f"error: --map {word}: motor {motor!r} is mapped twice")
        out[motor] = joint
    return out


def _plugin(protocol_name: str) -> ProtocolPlugin:
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.hardware.plugins import protocol

    try:
        return protocol(protocol_name)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None


def _bus_name(plugin: ProtocolPlugin) -> str:
    return f"{plugin.name}_bus"


def check_actuator_model(protocol_name: str, model: str) -> None:
    """Refuse an actuator model the protocol's driver does not know.

    The driver is the one place that knows its models (and their spellings): it is built,
    not opened, for one actuator of that model, as the hardware node would build it. A
    protocol whose driver has no model list (CANopen: it compares the drive's name when
    it opens) accepts any name.

    Raises:
        SystemExit: An unknown protocol, or the driver refuses the model (its message
            names the known ones).
    """
    from skel_ros.hardware.base import ActuatorSpec, BusSpec
    from skel_ros.hardware.errors import ConfigError

    plugin = _plugin(protocol_name)
    lowest, _ = plugin.id_range
    actuator = ActuatorSpec(max(lowest, 1), plugin.modes[0], model, plugin.default_options,
                            name="--model")
    spec = BusSpec(_bus_name(plugin), plugin.name, plugin.transport.example)
    try:
        plugin.bus_class(spec, [actuator], time.monotonic)
    except ConfigError as exc:
        raise SystemExit(f"error: --model {model}: {exc}") from None


def _header(model: str, skel: Skeleton, protocol_name: str, unmapped: list[str], *,
            followers_mapped: bool = False, lerobot: str = "",
            left_out: list[str] | None = None) -> str:
    lines = [
        f"# Hardware of skeleton {skel.name!r} of {model}, written by skel-ros init-hardware.",
        f"# Every one-DOF joint is mapped to a {protocol_name} actuator on one bus. Before",
        "# connecting a real robot, edit: ids, directions (1 or -1), zero_offset (actuator",
        "# position when the joint is at 0), gear_ratio, models, the transport; and tighten",
        "# the limits (they are the model's; a hardware YAML may only tighten them) and tune",
        "# any gains in 'options' (starting values).",
        "#   actuator = zero_offset + direction * gear_ratio * joint",
        "# Try it on emulated actuators first:",
        f"#   ros2 run skel_ros hardware_node --ros-args -p skel_file:={model} \\",
        "#       -p hardware_config:=THIS_FILE -p emulate:=true",
    ]
    if lerobot:
        lines[1:6] = [
            f"# The motors of LeRobot calibration {lerobot}, each on the joint lerobot_motors",
            "# names: id, direction (drive_mode), zero_offset (the middle of the range: LeRobot's",
            "# 0 degrees), options homing_offset (STS/SMS) and angle_limits (ticks, written to",
            "# the servos at open) and limits.position (the range, within the model's limits)",
            "# are the file's. Write it back (byte for byte) with",
            "#   skel-ros export-calibration THIS_FILE --to lerobot -o CALIB.json",
        ]
    if unmapped:
        lines.append("# Not mapped (DOFs of multi-DOF joints; a motor drives one DOF): "
                     + ", ".join(unmapped))
    if left_out:
        lines.append("# Not mapped, no motor of the calibration: " + ", ".join(left_out))
    coupled = [f"{d.name} (follows {d.mimic.leader})" for d in skel.dofs if d.mimic is not None]
    if coupled and not followers_mapped and not lerobot:
        lines.append("# Not mapped, followers (mimic joints) a gear or linkage moves with"
                     " their leader: " + ", ".join(coupled))
        lines.append("# (--include-followers maps them, for a follower with its own actuator)")
    return "\n".join(lines) + "\n"


def _lerobot_arguments(args: argparse.Namespace) -> tuple[MotorCalibration, ...]:
    """Check the protocol arguments; the motors of ``--from-lerobot`` (none without it)."""
    if not args.from_lerobot:
        if args.map:
            raise SystemExit("error: --map names the joints of --from-lerobot's motors")
        if not args.protocol:
            raise SystemExit("error: --protocol is required (or --from-lerobot CALIB.json)")
        return ()
    if args.protocol not in (None, LEROBOT_PROTOCOL):
        raise SystemExit(f"error: --from-lerobot maps Feetech servos (protocol"
                         f" {LEROBOT_PROTOCOL}), not {args.protocol}")
    if args.first_id is not None:
        raise SystemExit("error: --first-id: the ids come from --from-lerobot's file")
    args.protocol = LEROBOT_PROTOCOL
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.hardware.feetech.lerobot import load_calibration

    try:
        return load_calibration(args.from_lerobot)
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None


def _cmd_init_hardware(args: argparse.Namespace) -> int:
    from skel_ros.cli.model_args import load_model_from_args
    from skel_ros.model.yamlread import dump_yaml

    motors = _lerobot_arguments(args)
    if args.actuator_model:  # before reading the model: nothing is written with it
        check_actuator_model(args.protocol, args.actuator_model)
    world = load_model_from_args(args.model, args)
    for warning in world.warnings:
        print(str(warning), file=sys.stderr)
    try:
        skel = _skeleton(world, args.skeleton)
    except KeyError:
        names = ", ".join(repr(s.name) for s in world.skeletons)
        print(f"error: no skeleton {args.skeleton!r} (skeletons: {names})", file=sys.stderr)
        return 1
    several = sum(1 for s in world.skeletons if s.num_dofs) > 1
    skeleton_name = skel.name if several or args.skeleton else ""
    left_out: list[str] = []
    if motors:
        doc, unmapped, left_out = lerobot_document(
            skel, motors, args.from_lerobot, joint_of=_joint_map(args.map),
            actuator_model=args.actuator_model, skeleton_name=skeleton_name)
    else:
        doc, unmapped = hardware_document(
            skel, args.protocol, actuator_model=args.actuator_model, first_id=args.first_id,
            skeleton_name=skeleton_name, include_followers=args.include_followers)
    text = _header(args.model, skel, args.protocol, unmapped,
                   followers_mapped=args.include_followers,
                   lerobot=args.from_lerobot or "", left_out=left_out) + "\n" + dump_yaml(
        doc, sort_keys=False, default_flow_style=False)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({len(doc['joints'])} joints mapped"
          + (f", {len(unmapped) + len(left_out)} DOFs not mapped"
             if unmapped or left_out else "") + ")", file=sys.stderr)
    return 0
