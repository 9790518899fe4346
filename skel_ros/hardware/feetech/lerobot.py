"""LeRobot motor calibration files, read into and written from a hardware YAML's joints.

LeRobot keeps one JSON file per robot (``~/.cache/huggingface/lerobot/calibration/robots/
so101_follower/NAME.json``): per motor name, in its bus's order, ``id``, ``drive_mode``,
``homing_offset``, ``range_min`` and ``range_max``, written by ``json.dump`` with an indent
of 4 and no newline at the end. On a Feetech STS/SMS servo it writes ``homing_offset`` to
Homing_Offset (Present_Position = actual - offset) and the range to Min/Max_Angle_Limit;
on an SCS servo (no Homing_Offset) only the range, and it reads the offset as 0. Its
``degrees`` reading of a position is ``(present - mid) * 360 / (ticks - 1)`` with
``mid = (range_min + range_max) / 2``.

In a hardware YAML one motor is (docs/feetech.md, "Calibration from LeRobot"):

* ``id`` -> the joint's ``id``; ``drive_mode`` 1 -> ``direction: -1`` (0 -> 1);
* ``homing_offset`` -> ``options.homing_offset`` (STS/SMS; 0 on SCS, nothing in the
  YAML), the range -> ``options.angle_limits`` (the driver writes both to the servo at
  open, as LeRobot does);
* ``zero_offset``: the middle of the range, in radians at the servo, so the joint is 0
  where LeRobot's degrees are 0; ``limits.position``: the range as joint positions.

So both read the same Present_Position and agree within one encoder tick (LeRobot
divides a turn into 4095 steps, the servo and we into 4096). On an SCS0009 they agree
tick for tick, not in degrees: LeRobot counts its 1024 ticks as a turn, the servo's
span (and ours) is 300 degrees (docs/feetech.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech.protocol import MAX_ID

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from skel_ros.hardware.config import JointMapping

__all__ = ["FIELDS", "JointCalibration", "MotorCalibration", "dumps_calibration",
           "joint_calibration", "load_calibration", "model_for", "motor_calibration",
           "parse_calibration"]

FIELDS: Final = ("id", "drive_mode", "homing_offset", "range_min", "range_max")
"""A motor's keys, in the order LeRobot writes them (its ``MotorCalibration`` fields)."""
JSON_INDENT: Final = 4  # LeRobot's json.dump(..., indent=4)
_FOURTH: Final = 0.25  # of a tick: how far a YAML's zero_offset may sit from the range's middle


@dataclass(frozen=True)
class MotorCalibration:
    """One motor of a LeRobot calibration file (its ``MotorCalibration``, plus its name).

    Attributes:
        motor: LeRobot's name for it (``shoulder_pan``).
        id: its id on the bus.
        drive_mode: 0, or 1 for an inverted motor.
        homing_offset: Homing_Offset as written on the servo, ticks.
        range_min: the lowest Present_Position of its range (Min_Angle_Limit), ticks.
        range_max: the highest (Max_Angle_Limit), ticks.
    """

    motor: str
    id: int
    drive_mode: int
    homing_offset: int
    range_min: int
    range_max: int

    @property
    def middle(self) -> float:
        """The tick LeRobot's degrees count from (may be a half tick)."""
        return (self.range_min + self.range_max) / 2


@dataclass(frozen=True)
class JointCalibration:
    """What one motor's calibration sets in a hardware YAML's joint.

    Attributes:
        id: the joint's ``id``.
        direction: 1, or -1 for ``drive_mode`` 1.
        zero_offset: rad at the servo when the joint is at 0: the middle of the range.
        homing_offset: ``options.homing_offset``, ticks; None on an SCS servo (it has none).
        angle_limits: ``options.angle_limits``, ticks.
        position: the range as joint positions (lower, upper), rad.
    """

    id: int
    direction: int
    zero_offset: float
    homing_offset: int | None
    angle_limits: tuple[int, int]
    position: tuple[float, float]


# --------------------------------------------------------------------------- the file


def load_calibration(path: str | Path) -> tuple[MotorCalibration, ...]:
    """Read a LeRobot calibration file.

    Raises:
        ConfigError: it cannot be read, is not JSON, or a motor is malformed (the message
            names the file, the motor and the key).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read LeRobot calibration {path}: {exc}") from None
    return parse_calibration(text, str(path))


def _no_duplicates(source: str) -> Any:  # noqa: ANN401 - json's object_pairs_hook
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise ConfigError(f"{source}: key {key!r} appears twice")
            out[key] = value
        return out
    return hook


def parse_calibration(text: str, source: str = "<string>") -> tuple[MotorCalibration, ...]:
    """A LeRobot calibration file's motors, in the file's order.

    Checks what holds for any servo: every motor has the five integer keys and no other,
    ``id`` in 0..253 and used once, ``drive_mode`` 0 or 1, ``range_min`` below
    ``range_max``. What depends on the model is checked by :func:`joint_calibration`.

    Raises:
        ConfigError: not JSON (with line and column), or a malformed motor.
    """
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(source))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{source}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or not data:
        got = "an empty object" if data == {} else f"a JSON {type(data).__name__}"
        raise ConfigError(f"{source}: a LeRobot calibration is a JSON object of motors"
                          f' ({{"shoulder_pan": {{"id": 1, ...}}, ...}}), got {got}')
    motors = tuple(_motor(name, value, source) for name, value in data.items())
    seen: dict[int, str] = {}
    for m in motors:
        if m.id in seen:
            raise ConfigError(f"{source}: motor {m.motor!r}: id {m.id} is also the id of"
                              f" motor {seen[m.id]!r}")
        seen[m.id] = m.motor
    return motors


def _motor(name: str, value: object, source: str) -> MotorCalibration:
    where = f"{source}: motor {name!r}"
    if not name:
        raise ConfigError(f"{source}: a motor has an empty name")
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected an object with {', '.join(FIELDS)}, got"
                          f" {value!r}")
    unknown = [k for k in value if k not in FIELDS]
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (a LeRobot motor calibration"
                          f" has {', '.join(FIELDS)})")
    numbers: dict[str, int] = {}
    for key in FIELDS:
        if key not in value:
            raise ConfigError(f"{where}: no {key!r}")
        number = value[key]
        if isinstance(number, bool) or not isinstance(number, int):
            raise ConfigError(f"{where}: {key} must be an integer, got {number!r}")
        numbers[key] = number
    return _checked(MotorCalibration(name, **numbers), where)


def _checked(motor: MotorCalibration, where: str) -> MotorCalibration:
    if not 0 <= motor.id <= MAX_ID:
        raise ConfigError(f"{where}: id must be in 0..{MAX_ID}, got {motor.id}")
    if motor.drive_mode not in (0, 1):
        raise ConfigError(f"{where}: drive_mode must be 0 or 1, got {motor.drive_mode}")
    if motor.range_min < 0:
        raise ConfigError(f"{where}: range_min must be >= 0, got {motor.range_min}")
    if motor.range_min >= motor.range_max:
        raise ConfigError(f"{where}: range_min {motor.range_min} must be below range_max"
                          f" {motor.range_max}")
    return motor


def dumps_calibration(motors: Sequence[MotorCalibration]) -> str:
    """The file's text exactly as LeRobot writes it (``json.dump``, indent 4, no newline)."""
    data = {m.motor: {key: getattr(m, key) for key in FIELDS} for m in motors}
    return json.dumps(data, indent=JSON_INDENT)


# --------------------------------------------------------------------------- the mapping


def model_for(name: str, where: str) -> ct.ModelInfo:
    """The Feetech model ``name`` ("" is the default).

    Raises:
        ConfigError: an unknown model.
    """
    model = ct.model_by_name(name)
    if model is None:
        raise ConfigError(f"{where}: unknown Feetech model {name!r}; known:"
                          f" {', '.join(ct.MODELS)}")
    return model


def joint_calibration(motor: MotorCalibration, model: ct.ModelInfo,
                      source: str = "<string>") -> JointCalibration:
    """What ``motor``'s calibration sets in its joint, for a servo of ``model``.

    Raises:
        ConfigError: a value the servo cannot hold (homing offset beyond its 11 bits, or
            other than 0 on an SCS servo; a range beyond its ticks), naming the file,
            motor and key.
    """
    where = f"{source}: motor {motor.motor!r}"
    _check_ticks(motor, model, where)
    half = (motor.range_max - motor.range_min) / 2 * model.rad_per_tick
    return JointCalibration(
        id=motor.id,
        direction=-1 if motor.drive_mode else 1,
        zero_offset=(motor.middle - model.center) * model.rad_per_tick,
        homing_offset=motor.homing_offset if model.has(ct.HOMING_OFFSET) else None,
        angle_limits=(motor.range_min, motor.range_max),
        position=(-half, half),  # the middle is 0, whichever the direction
    )


def _check_ticks(motor: MotorCalibration, model: ct.ModelInfo, where: str) -> None:
    limit = ct.HOMING_OFFSET_MAX
    if not model.has(ct.HOMING_OFFSET):
        if motor.homing_offset:
            raise ConfigError(f"{where}: homing_offset must be 0 on {model.name}, got"
                              f" {motor.homing_offset}: an SCS servo has no Homing_Offset"
                              " (LeRobot writes none to it and reads 0)")
    elif not -limit <= motor.homing_offset <= limit:
        raise ConfigError(f"{where}: homing_offset must be in -{limit}..{limit} (11 bits and"
                          f" a sign on {model.name}), got {motor.homing_offset}")
    for key in ("range_min", "range_max"):
        value = getattr(motor, key)
        if not 0 <= value <= model.max_tick:
            raise ConfigError(f"{where}: {key} must be in 0..{model.max_tick} ticks"
                              f" ({model.name}), got {value}")


def motor_calibration(motor: str, joint: JointMapping, source: str) -> MotorCalibration:
    """The LeRobot calibration of the motor ``motor`` driving ``joint`` (a feetech joint).

    Raises:
        ConfigError: the joint lacks ``options.angle_limits`` or (STS/SMS)
            ``homing_offset``, has a gear ratio other than 1, or a ``zero_offset`` other
            than the middle of its range (LeRobot's zero), naming the file, line and joint.
    """
    where = f"{source}:{joint.line}: joint {joint.name!r}" if joint.line else (
        f"{source}: joint {joint.name!r}")
    model = model_for(joint.actuator.model, where)
    options: Mapping[str, Any] = joint.actuator.options
    has_offset = model.has(ct.HOMING_OFFSET)
    for key in ("homing_offset", "angle_limits") if has_offset else ("angle_limits",):
        if key not in options:
            need = "homing_offset and angle_limits" if has_offset else "angle_limits"
            raise ConfigError(f"{where}: no options.{key}; a LeRobot calibration of"
                              f" {model.name} needs {need} (ticks)")
    offset, limits = options.get("homing_offset", 0), options["angle_limits"]
    if not (isinstance(limits, (list, tuple)) and len(limits) == 2  # noqa: PLR2004
            and all(isinstance(v, int) and not isinstance(v, bool) for v in limits)):
        raise ConfigError(f"{where}: options.angle_limits must be [min, max] ticks, got"
                          f" {limits!r}")
    if isinstance(offset, bool) or not isinstance(offset, int):
        raise ConfigError(f"{where}: options.homing_offset must be an integer, got {offset!r}")
    if joint.gear_ratio != 1.0:
        raise ConfigError(f"{where}: gear_ratio {joint.gear_ratio:g}: LeRobot has no gear"
                          " ratio (it must be 1)")
    result = MotorCalibration(motor, joint.actuator.id, 1 if joint.direction < 0 else 0,
                              offset, int(limits[0]), int(limits[1]))
    if result.range_min >= result.range_max:
        raise ConfigError(f"{where}: options.angle_limits {list(limits)}: min must be below"
                          " max")
    _check_ticks(result, model, where)
    zero = (result.middle - model.center) * model.rad_per_tick
    if not math.isclose(joint.zero_offset, zero, rel_tol=0.0,
                        abs_tol=_FOURTH * model.rad_per_tick):
        raise ConfigError(f"{where}: zero_offset {joint.zero_offset!r} rad is not the middle"
                          f" of angle_limits {list(limits)} ({zero!r} rad): LeRobot counts"
                          " from the middle of the range, so its file cannot hold this zero")
    return result
