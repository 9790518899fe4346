"""``skel-ros convert``: a model from any supported format to SKEL, Phobos, URDF or MJCF.

The input format is chosen by content (:func:`skel_ros.model.load_model`); the
output format by ``--to``, or else by the output's extension (``.skel``,
``.yml``/``.yaml``, ``.json``, ``.urdf``, ``.mjcf``; MuJoCo's usual ``.xml`` means SKEL here,
so give ``--to mjcf`` for it). ``--hardware`` adds the motors of a
hardware YAML to a Phobos output.

A CASPR ``bodies.xml`` orders each joint's ``q`` entries as CASPR does, which is not
always the order of the DOFs in the written model (a ``PLANAR_XZ`` joint's q is
(x, z, theta)): next to a converted file, ``convert`` writes ``<output>.q_mapping.yaml``,
the list of DOF names one per ``q`` column (the mapping file format of
:mod:`skel_ros.trajectory.mapping`, at its ``q_mapping_path``), which ``play``,
``sim-to-real`` and the trajectory_player find there by themselves.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli.model_args import add_model_arguments
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse

TARGETS = ("skel", "phobos-yaml", "phobos-json", "urdf", "mjcf")
_BY_SUFFIX = {".skel": "skel", ".xml": "skel", ".yml": "phobos-yaml", ".yaml": "phobos-yaml",
              ".json": "phobos-json", ".urdf": "urdf", ".mjcf": "mjcf"}


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's private subparsers type
    """Add ``convert`` to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "convert",
        help="convert a model (SKEL, URDF/xacro, SMURF, CASPR, Phobos) to"
             " SKEL/Phobos/URDF/MJCF",
        description="Read a model in any supported format (chosen by content) and write it as"
                    " SKEL, a Phobos dictionary (YAML or JSON), URDF or MJCF (MuJoCo). See"
                    " docs/interchange.md for what each direction carries.",
    )
    p.add_argument("input", type=input_file,
                   help="model file: SKEL, URDF/xacro, SMURF, CASPR bodies.xml or Phobos"
                        " YAML/JSON")
    add_model_arguments(p)
    p.add_argument("-o", "--output", required=True, help="output file ('-' for stdout)")
    p.add_argument("--to", choices=TARGETS,
                   help="output format (default: from the output file's extension)")
    p.add_argument("--hardware", metavar="YAML", type=input_file,
                   help="hardware YAML whose joint mapping becomes the Phobos 'motors'")
    p.set_defaults(func=_cmd_convert)


def _target(args: argparse.Namespace) -> str:
    if args.to:
        return str(args.to)
    suffix = Path(args.output).suffix.lower()
    if suffix in _BY_SUFFIX:
        return _BY_SUFFIX[suffix]
    raise SystemExit(f"error: cannot tell the output format from {args.output!r}; give --to")


def _motors(path: str, world: Any) -> list[Any]:  # noqa: ANN401 - a model World
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.model.phobos import PhobosMotor

    config = load_hardware_config(path)
    protocol = {bus.name: bus.protocol for bus in config.buses}
    dofs = {d.name for s in world.skeletons for d in s.dofs}
    out = []
    for j in config.joints:
        if j.name not in dofs:
            raise SystemExit(f"error: {path}: joint {j.name!r} is not a DOF of the model")
        out.append(PhobosMotor(
            name=f"{j.name}_motor", dof=j.name, type=str(protocol.get(j.bus, "")),
            model=j.actuator.model, bus=j.bus, id=j.actuator.id, mode=j.actuator.mode.value,
            gear_ratio=j.gear_ratio, direction=j.direction, zero_offset=j.zero_offset,
        ))
    return out


def _cmd_convert(args: argparse.Namespace) -> int:
    from skel_ros.cli.model_args import load_model_from_args
    from skel_ros.model.errors import SkelError

    target = _target(args)
    try:
        world = load_model_from_args(args.input, args)
    except SkelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for warning in world.warnings:
        print(str(warning), file=sys.stderr)
    to_stdout = args.output == "-"
    out_dir = Path.cwd() if to_stdout else Path(args.output).resolve().parent
    try:
        text = _render(world, target, out_dir, args)
    except SkelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if to_stdout:
        sys.stdout.write(text)
    else:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"wrote {args.output} ({target})", file=sys.stderr)
        mapping = _write_q_mapping(args.input, Path(args.output))
        if mapping is not None:
            print(f"wrote {mapping} (CASPR q column -> DOF; play and sim-to-real use it with"
                  f" {Path(args.output).name})", file=sys.stderr)
    return 0


def _write_q_mapping(model: str, output: Path) -> Path | None:
    """For a CASPR input, write which DOF each q column moves next to ``output``."""
    from skel_ros.model.formats import ModelFormat, detect_format

    try:
        if detect_format(Path(model).read_bytes()) is not ModelFormat.CASPR_BODIES:
            return None
    except OSError:
        return None
    from skel_ros.model.caspr_model import load_caspr_bodies
    from skel_ros.trajectory.mapping import q_mapping_path

    bodies = load_caspr_bodies(model)
    path = q_mapping_path(output)
    lines = [f"# CASPR q column -> DOF of {output.name} (converted from {Path(model).name});",
             "# one entry per q column, in CASPR's order. Keep it beside the model: play,",
             "# sim-to-real and the trajectory_player use it for CASPR trajectories.",
             *(f"- {name}" for name in bodies.q_dofs)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _render(world: Any, target: str, out_dir: Path, args: argparse.Namespace) -> str:  # noqa: ANN401
    if target == "skel":
        from skel_ros.model.skel_writer import world_to_skel

        return world_to_skel(world, base_dir=out_dir)
    if target == "urdf":
        from skel_ros.model.urdf import world_to_urdf

        moved = [(d.name, d.initial_position) for s in world.skeletons for d in s.dofs
                 if d.initial_position != 0.0 or d.initial_velocity != 0.0]
        if moved:  # URDF has no element for them: say what is left out, as for MJCF
            name, q = moved[0]
            print(f"warning: {world.source}: URDF holds no initial positions or velocities:"
                  f" {len(moved)} DOF(s) start away from 0 here (e.g. {name!r} at {q:g}) and"
                  " at 0 where the URDF is read", file=sys.stderr)
        return str(world_to_urdf(world))
    if target == "mjcf":
        from skel_ros.model.mjcf import world_to_mjcf

        export = world_to_mjcf(world, base_dir=out_dir)
        for warning in export.warnings:  # what MJCF cannot hold and was left out
            print(str(warning), file=sys.stderr)
        return export.xml
    from skel_ros.model.phobos import dump_phobos, world_to_phobos

    motors = _motors(args.hardware, world) if args.hardware else []
    doc = world_to_phobos(world, motors=motors, base_dir=out_dir)
    return dump_phobos(doc, "json" if target == "phobos-json" else "yaml")
