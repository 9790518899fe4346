"""A LeRobot calibration file of three SCS0009 servos, byte for byte as LeRobot writes it.

Motors of a hand like LeRobot's HOPE-Jr (its SCS0009s, protocol 1), with the values its
Feetech bus leaves for SCS servos: ``homing_offset`` 0 (an SCS servo has no
Homing_Offset: LeRobot reads 0 and writes none), ranges in the SCS0009's ticks 0..1023
(Min/Max_Angle_Limit), ``drive_mode`` 1 where the robot marks a motor inverted.
"""

from __future__ import annotations

SCS_CALIBRATION = (
    '{\n'
    '    "thumb_cmc": {\n'
    '        "id": 1,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": 0,\n'
    '        "range_min": 310,\n'
    '        "range_max": 702\n'
    '    },\n'
    '    "thumb_mcp": {\n'
    '        "id": 2,\n'
    '        "drive_mode": 1,\n'
    '        "homing_offset": 0,\n'
    '        "range_min": 402,\n'
    '        "range_max": 611\n'
    '    },\n'
    '    "thumb_pip": {\n'
    '        "id": 3,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": 0,\n'
    '        "range_min": 95,\n'
    '        "range_max": 930\n'
    '    }\n'
    '}'
)
SCS_MOTORS = ("thumb_cmc", "thumb_mcp", "thumb_pip")
