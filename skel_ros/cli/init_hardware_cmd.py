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

    from skel_ros.hardware.plugins import ProtocolPlugin
    from skel_ros.model.types import Dof, Skeleton

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
    p.add_argument("--protocol", required=True,
                   help="actuator protocol: dynamixel, mit, canopen (or a plugin's name)")
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
            followers_mapped: bool = False) -> str:
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
    if unmapped:
        lines.append("# Not mapped (DOFs of multi-DOF joints; a motor drives one DOF): "
                     + ", ".join(unmapped))
    coupled = [f"{d.name} (follows {d.mimic.leader})" for d in skel.dofs if d.mimic is not None]
    if coupled and not followers_mapped:
        lines.append("# Not mapped, followers (mimic joints) a gear or linkage moves with"
                     " their leader: " + ", ".join(coupled))
        lines.append("# (--include-followers maps them, for a follower with its own actuator)")
    return "\n".join(lines) + "\n"


def _cmd_init_hardware(args: argparse.Namespace) -> int:
    from skel_ros.cli.model_args import load_model_from_args
    from skel_ros.model.yamlread import dump_yaml

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
    doc, unmapped = hardware_document(
        skel, args.protocol, actuator_model=args.actuator_model, first_id=args.first_id,
        skeleton_name=skel.name if several or args.skeleton else "",
        include_followers=args.include_followers)
    text = _header(args.model, skel, args.protocol, unmapped,
                   followers_mapped=args.include_followers) + "\n" + dump_yaml(
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
          + (f", {len(unmapped)} DOFs not mapped" if unmapped else "") + ")", file=sys.stderr)
    return 0
