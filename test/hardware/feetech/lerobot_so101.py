"""An SO-101 follower's LeRobot calibration file, byte for byte as LeRobot writes it.

``json.dump`` with ``indent=4`` of its ``MotorCalibration``s (id, drive_mode,
homing_offset, range_min, range_max): four spaces, ``": "`` and ``","`` separators, no
newline at the end. Values as LeRobot's calibration leaves them: drive_mode 0 (its Feetech
bus writes no other), homing offsets = the tick at mid-travel - 2047, ranges recorded by
moving each joint, wrist_roll's set to the whole turn 0..4095.
"""

from __future__ import annotations

SO101_CALIBRATION = (
    '{\n'
    '    "shoulder_pan": {\n'
    '        "id": 1,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": -1470,\n'
    '        "range_min": 758,\n'
    '        "range_max": 3292\n'
    '    },\n'
    '    "shoulder_lift": {\n'
    '        "id": 2,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": 157,\n'
    '        "range_min": 612,\n'
    '        "range_max": 3401\n'
    '    },\n'
    '    "elbow_flex": {\n'
    '        "id": 3,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": 1105,\n'
    '        "range_min": 851,\n'
    '        "range_max": 3100\n'
    '    },\n'
    '    "wrist_flex": {\n'
    '        "id": 4,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": -1345,\n'
    '        "range_min": 883,\n'
    '        "range_max": 3158\n'
    '    },\n'
    '    "wrist_roll": {\n'
    '        "id": 5,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": -1231,\n'
    '        "range_min": 0,\n'
    '        "range_max": 4095\n'
    '    },\n'
    '    "gripper": {\n'
    '        "id": 6,\n'
    '        "drive_mode": 0,\n'
    '        "homing_offset": 1378,\n'
    '        "range_min": 2031,\n'
    '        "range_max": 3509\n'
    '    }\n'
    '}'
)
MOTORS = ("shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper")

# A URDF of the SO-101's six revolute joints under LeRobot's motor names (limits as the
# arm's), and one under other names, for --map.
_JOINT = ('  <joint name="{name}" type="revolute"><parent link="l{k}"/><child link="l{n}"/>'
          '<axis xyz="0 0 1"/><limit lower="{lo}" upper="{hi}" effort="2.9" velocity="4.7"/>'
          '</joint>\n  <link name="l{n}"><inertial><mass value="0.1"/><inertia ixx="1e-4"'
          ' iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>\n')
LIMITS = {"shoulder_pan": (-1.92, 1.92), "shoulder_lift": (-1.75, 1.75),
          "elbow_flex": (-1.69, 1.69), "wrist_flex": (-1.66, 1.66),
          "wrist_roll": (-2.74, 2.84), "gripper": (-0.17, 1.75)}


def so101_urdf(names: tuple[str, ...] = MOTORS) -> str:
    """The URDF, with joints called ``names`` (in the order of :data:`MOTORS`)."""
    joints = "".join(_JOINT.format(name=name, k=k, n=k + 1, lo=LIMITS[motor][0],
                                   hi=LIMITS[motor][1])
                     for k, (name, motor) in enumerate(zip(names, MOTORS, strict=True)))
    return ('<?xml version="1.0"?>\n<robot name="so101">\n  <link name="world"/>\n'
            '  <joint name="mount" type="fixed"><parent link="world"/><child link="l0"/>'
            '</joint>\n  <link name="l0"><inertial>'
            '<mass value="1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0"'
            f' iyz="0"/></inertial></link>\n{joints}</robot>\n')
