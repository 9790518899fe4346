"""Read a Phobos SMURF model: the URDF it names, plus the motor annotations.

A ``.smurf`` file is a YAML index written by Phobos::

    modelname: robot
    SMURF version: 1.0.0
    files:
      - ../urdf/robot.urdf        # exactly one URDF (read by load_urdf)
      - robot_motors.yml          # annotation files, relative to the .smurf file
      - robot_sensors.yml

:func:`load_smurf` reads the URDF (:func:`skel_ros.model.urdf_reader.load_urdf`)
and, from the annotation files, the ``motors`` list: each motor names its
``joint`` and may give ``maxEffort`` (force limit), ``maxSpeed`` (velocity
limit), ``minValue`` / ``maxValue`` (position limits). The tighter of the URDF's
and the motor's limit applies; a motor that gives a limit different from the
URDF's is a warning, so neither value is dropped silently. A motor of a joint
that is not a one-DOF joint of the model is an error. Every other annotation
(sensors, materials, poses, submechanisms, lights, ...) is ignored with one
warning per key and file.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.model.errors import Location, SkelWarning
from skel_ros.model.interchange_errors import UrdfError
from skel_ros.model.urdf_reader import load_urdf
from skel_ros.model.yamlread import YamlLineError, key_line, load_yaml_lines, node_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.model.types import Dof, World

__all__ = ["SmurfMotor", "is_smurf", "load_smurf", "smurf_to_world"]


@dataclasses.dataclass(frozen=True)
class SmurfMotor:
    """One motor of a SMURF ``motors`` annotation (limits are +-inf / None when not given)."""

    name: str
    joint: str
    type: str
    max_effort: float
    max_speed: float
    min_value: float | None
    max_value: float | None
    location: Location


def is_smurf(value: object) -> bool:
    """True for a parsed YAML mapping that is a SMURF index (``SMURF version`` or ``files``)."""
    return isinstance(value, Mapping) and (
        "SMURF version" in value or ("modelname" in value and "files" in value))


def load_smurf(source: str | os.PathLike[str], *, fixed_base: bool = False) -> World:
    """Read a ``.smurf`` file into the model.

    Raises:
        UrdfError: The index, an annotation file or the URDF cannot be read
            (file:line and key).
    """
    label = os.fspath(source)
    path = Path(label)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UrdfError(f"cannot read file: {exc}", Location(label)) from None
    value = _yaml(text, label)
    return smurf_to_world(value, label=label, base_dir=path.resolve().parent,
                          fixed_base=fixed_base)


def _yaml(text: str, label: str) -> Any:  # noqa: ANN401 - parsed YAML
    try:
        return load_yaml_lines(text)
    except YamlLineError as exc:
        raise UrdfError(exc.message, Location(label, exc.line)) from None


def smurf_to_world(index: Any, *, label: str, base_dir: Path,  # noqa: ANN401 - parsed YAML
                   fixed_base: bool = False) -> World:
    """The model of a parsed SMURF index (see :func:`load_smurf`)."""
    if not is_smurf(index):
        raise UrdfError("not a SMURF index ('SMURF version' or 'modelname' and 'files')",
                        Location(label, 1))
    files = index.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise UrdfError("'files' must be a list of file names",
                        Location(label, key_line(index, "files", 1), "/files"))
    urdfs = [f for f in files if f.endswith((".urdf", ".xacro"))]
    if len(urdfs) != 1:
        raise UrdfError(f"'files' names {len(urdfs)} URDF files; a SMURF model has one",
                        Location(label, key_line(index, "files", 1), "/files"))
    urdf_path = base_dir / urdfs[0]
    if not urdf_path.is_file():
        raise UrdfError(f"the URDF {urdfs[0]!r} does not exist ({urdf_path})",
                        Location(label, key_line(index, "files", 1), "/files"))
    world = load_urdf(urdf_path, fixed_base=fixed_base)
    warnings: list[SkelWarning] = list(world.warnings)
    motors: list[SmurfMotor] = []
    for name in files:
        if name in urdfs:
            continue
        where = Location(label, key_line(index, "files", 1), "/files")
        file = base_dir / name
        if not file.is_file():
            raise UrdfError(f"the annotation file {name!r} does not exist ({file})", where)
        if file.suffix not in (".yml", ".yaml"):
            warnings.append(SkelWarning(f"{name}: not a YAML annotation file; ignored", where))
            continue
        motors.extend(_annotations(file, warnings))
    return _apply_motors(world, motors, warnings)


def _annotations(file: Path, warnings: list[SkelWarning]) -> list[SmurfMotor]:
    label = str(file)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UrdfError(f"cannot read file: {exc}", Location(label)) from None
    doc = _yaml(text, label)
    if doc is None:
        return []
    if not isinstance(doc, Mapping):
        raise UrdfError("an annotation file is a mapping (e.g. 'motors: [...]')",
                        Location(label, 1))
    motors: list[SmurfMotor] = []
    for key, value in doc.items():
        line = key_line(doc, key, 1)
        if key == "motors":
            items = value.values() if isinstance(value, Mapping) else value
            if not isinstance(items, (list, type({}.values()))):
                raise UrdfError("'motors' must be a list", Location(label, line, "/motors"))
            motors.extend(_motor(m, label, line, i) for i, m in enumerate(items))
        elif key not in ("modelname", "date", "SMURF version", "version"):
            warnings.append(SkelWarning(
                f"SMURF annotation {key!r} is not used by the model; ignored",
                Location(label, line, f"/{key}")))
    return motors


def _motor(raw: object, label: str, line: int, i: int) -> SmurfMotor:
    path = f"/motors[{i}]"
    if not isinstance(raw, Mapping):
        raise UrdfError("a motor is a mapping with 'name' and 'joint'", Location(label, line, path))
    where = Location(label, node_line(raw) or line, path)

    def number(key: str) -> float | None:
        value = raw.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise UrdfError(f"{key} must be a number, not {value!r}",
                            Location(label, key_line(raw, key, line), f"{path}/{key}"))
        return float(value)

    joint = raw.get("joint")
    if not isinstance(joint, str) or not joint:
        raise UrdfError("a motor needs 'joint' (the joint it drives)", where)
    # Phobos writes 0 for "no limit" (a joint without <limit>).
    effort, speed = number("maxEffort") or math.inf, number("maxSpeed") or math.inf
    return SmurfMotor(
        name=str(raw.get("name", joint)), joint=joint, type=str(raw.get("type", "")),
        max_effort=abs(effort), max_speed=abs(speed),
        min_value=number("minValue"), max_value=number("maxValue"), location=where)


def _tighter(dof: Dof, motor: SmurfMotor, warnings: list[SkelWarning]) -> Dof:
    changes: dict[str, Any] = {}

    def limit(what: str, lower_field: str, upper_field: str, lower: float, upper: float) -> None:
        old = (getattr(dof, lower_field), getattr(dof, upper_field))
        new = (max(old[0], lower), min(old[1], upper))
        urdf_gives = math.isfinite(old[0]) or math.isfinite(old[1])
        motor_gives = math.isfinite(lower) or math.isfinite(upper)
        if urdf_gives and motor_gives and (lower, upper) != old:
            warnings.append(SkelWarning(
                f"motor {motor.name!r} gives {what} limits [{lower:g}, {upper:g}] for"
                f" {dof.name!r}, the URDF [{old[0]:g}, {old[1]:g}]; the tighter"
                f" [{new[0]:g}, {new[1]:g}] applies", motor.location))
        changes[lower_field], changes[upper_field] = new

    limit("force", "force_lower", "force_upper", -motor.max_effort, motor.max_effort)
    limit("velocity", "velocity_lower", "velocity_upper", -motor.max_speed, motor.max_speed)
    limit("position", "position_lower", "position_upper",
          -math.inf if motor.min_value is None else motor.min_value,
          math.inf if motor.max_value is None else motor.max_value)
    if changes["position_lower"] > changes["position_upper"]:
        raise UrdfError(f"motor {motor.name!r}: its position limits and the URDF's for"
                        f" {dof.name!r} do not overlap", motor.location)
    return dataclasses.replace(dof, **changes)


def _apply_motors(world: World, motors: Sequence[SmurfMotor],
                  warnings: list[SkelWarning]) -> World:
    skel = world.skeletons[0]
    dofs = list(skel.dofs)
    seen: dict[str, SmurfMotor] = {}
    for motor in motors:
        try:
            joint = skel.joint(motor.joint)
        except KeyError:
            raise UrdfError(f"motor {motor.name!r} drives joint {motor.joint!r}, which is not"
                            " a joint of the URDF", motor.location) from None
        if joint.num_dofs != 1:
            raise UrdfError(f"motor {motor.name!r} drives the {joint.type.value} joint"
                            f" {joint.name!r}; a motor drives one DOF", motor.location)
        if motor.joint in seen:
            raise UrdfError(f"joint {motor.joint!r} has two motors ({seen[motor.joint].name!r}"
                            f" and {motor.name!r})", motor.location)
        seen[motor.joint] = motor
        index = joint.first_dof
        dofs[index] = _tighter(dofs[index], motor, warnings)
    skel = dataclasses.replace(skel, dofs=tuple(dofs))
    return dataclasses.replace(world, skeletons=(skel, *world.skeletons[1:]),
                               warnings=tuple(warnings))
