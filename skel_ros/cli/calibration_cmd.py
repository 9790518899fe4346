"""``skel-ros export-calibration``: a hardware YAML's calibration in another tool's format.

``--to lerobot`` writes a LeRobot motor calibration file from the Feetech joints of a
hardware YAML: the motors ``lerobot_motors`` names, in its order (written by
``skel-ros init-hardware --from-lerobot``), else every joint of a ``feetech`` bus under its
own name, in file order. The file is written as LeRobot writes it, so a file read with
``init-hardware --from-lerobot`` comes back byte for byte (docs/feetech.md, "Calibration
from LeRobot").
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse

    from skel_ros.hardware.config import HardwareConfig
    from skel_ros.hardware.feetech.lerobot import MotorCalibration

FORMATS = ("lerobot",)


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's private subparsers type
    """Add ``export-calibration`` to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "export-calibration",
        help="write a hardware YAML's servo calibration as another tool's file (LeRobot)",
        description="Write the calibration of a hardware YAML's joints (ids, directions,"
                    " homing offsets, ranges) as a LeRobot motor calibration file.",
    )
    p.add_argument("hardware", type=input_file, help="hardware YAML (a feetech bus)")
    p.add_argument("--to", required=True, choices=FORMATS, help="the file's format")
    p.add_argument("-o", "--output", required=True, help="output file ('-' for stdout)")
    p.set_defaults(func=_cmd_export_calibration)


def lerobot_motors(config: HardwareConfig) -> tuple[MotorCalibration, ...]:
    """The LeRobot calibration of ``config``'s motors (see the module doc).

    Raises:
        ConfigError: no joint to export, or a joint LeRobot cannot describe (the message
            names the file, line and joint).
    """
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.hardware.feetech.lerobot import motor_calibration

    joints = {j.name: j for j in config.joints}
    pairs = config.lerobot_motors or tuple(
        (j.name, j.name) for j in config.joints if config.bus(j.bus).protocol == "feetech")
    if not pairs:
        raise ConfigError(f"{config.source}: no joint on a feetech bus to export")
    motors = []
    for motor, name in pairs:
        joint = joints[name]
        protocol = config.bus(joint.bus).protocol
        if protocol != "feetech":
            raise ConfigError(f"{config.source}:{joint.line}: joint {name!r} (LeRobot motor"
                              f" {motor!r}) is on bus {joint.bus!r} of protocol {protocol!r};"
                              " a LeRobot calibration maps feetech servos")
        motors.append(motor_calibration(motor, joint, config.source))
    return tuple(motors)


def _cmd_export_calibration(args: argparse.Namespace) -> int:
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.hardware.errors import ConfigError
    from skel_ros.hardware.feetech.lerobot import dumps_calibration

    try:
        motors = lerobot_motors(load_hardware_config(args.hardware))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    text = dumps_calibration(motors)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    try:
        # LeRobot's own bytes: no newline at the end, "\n" line ends on every system.
        Path(args.output).write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.output} ({len(motors)} motors)", file=sys.stderr)
    return 0
