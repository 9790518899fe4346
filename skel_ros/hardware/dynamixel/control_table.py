"""The X-series control table (Protocol 2.0) and the supported models.

Addresses follow the ROBOTIS e-Manual's X-series control tables (XM430-W350, XL430-W250,
XM540-W270, XL330-M288 ...): every X-series servo shares the field addresses below;
models differ in whether they sense current (XM/XH/XW/XL330: *Present Current*, *Current
Limit* and *Goal Current*; XL430/XC430/2XL430: *Present Load* in 0.1 % of the stall
torque, no Current Limit or Goal Current), in their current unit and in where their
Indirect Address / Data entries lie (:attr:`ModelInfo.indirect`). *Bus Watchdog* exists
from firmware v38 on. :meth:`ModelInfo.fields` and :meth:`ModelInfo.defined` say which
fields and addresses a servo has: the e-Manual's Protocol 2.0 answers a READ or WRITE
that covers any other address with an Access Error (0x07), so every request must cover
defined addresses only. The fields below are the ones this package uses or emulates, a
subset of the e-Manual's tables (Startup Configuration, PWM Slope, the XM540's external
ports ... are left out, so they count as undefined here: stricter than a servo, never
looser).

Unit conversions (SI at the output shaft):

* position: ``rad = (ticks - 2048) * 2π / 4096`` (tick 2048, the horn's centre, is 0 rad);
* velocity: ``rad/s = units * 0.229 rev/min * 2π / 60``;
* current: ``A = units * current_unit`` (2.69 mA for XM/XH/XW, 1 mA for XL330);
  ``N·m = A * torque_constant`` (``torque_constant`` from the YAML's actuator
  ``options``, else the model's stall torque / stall current at 12 V below);
* load (XL430 ...): ``N·m = units * 0.001 * stall_torque``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping


class Access(enum.Enum):
    """Who may write a field."""

    R = "R"  # read only
    RW = "RW"  # read/write, RAM
    EEPROM = "EEPROM"  # read/write only while Torque Enable is 0


@dataclass(frozen=True)
class Field:
    """One control-table item.

    Attributes:
        name: as the e-Manual names it.
        address: byte address.
        size: bytes (1, 2 or 4; little endian).
        access: who may write it.
        signed: whether the value is two's complement.
    """

    name: str
    address: int
    size: int
    access: Access
    signed: bool = False


def _f(name: str, address: int, size: int, access: Access, *, signed: bool = False) -> Field:
    return Field(name, address, size, access, signed)


_E, _RW, _R = Access.EEPROM, Access.RW, Access.R

MODEL_NUMBER: Final = _f("Model Number", 0, 2, _R)
MODEL_INFORMATION: Final = _f("Model Information", 2, 4, _R)
FIRMWARE_VERSION: Final = _f("Firmware Version", 6, 1, _R)
ID: Final = _f("ID", 7, 1, _E)
BAUD_RATE: Final = _f("Baud Rate", 8, 1, _E)
RETURN_DELAY_TIME: Final = _f("Return Delay Time", 9, 1, _E)  # RETURN_DELAY_UNIT
DRIVE_MODE: Final = _f("Drive Mode", 10, 1, _E)
DRIVE_MODE_TIME_BASED: Final = 0x04
"""Drive Mode bit 2: Profile Velocity and Acceleration are times (ms), not rates."""
OPERATING_MODE: Final = _f("Operating Mode", 11, 1, _E)
SECONDARY_ID: Final = _f("Secondary ID", 12, 1, _E)
PROTOCOL_TYPE: Final = _f("Protocol Type", 13, 1, _E)
HOMING_OFFSET: Final = _f("Homing Offset", 20, 4, _E, signed=True)
MOVING_THRESHOLD: Final = _f("Moving Threshold", 24, 4, _E)
TEMPERATURE_LIMIT: Final = _f("Temperature Limit", 31, 1, _E)
MAX_VOLTAGE_LIMIT: Final = _f("Max Voltage Limit", 32, 2, _E)
MIN_VOLTAGE_LIMIT: Final = _f("Min Voltage Limit", 34, 2, _E)
PWM_LIMIT: Final = _f("PWM Limit", 36, 2, _E)
CURRENT_LIMIT: Final = _f("Current Limit", 38, 2, _E)  # current-sensing models only
VELOCITY_LIMIT: Final = _f("Velocity Limit", 44, 4, _E)
MAX_POSITION_LIMIT: Final = _f("Max Position Limit", 48, 4, _E)
MIN_POSITION_LIMIT: Final = _f("Min Position Limit", 52, 4, _E)
SHUTDOWN: Final = _f("Shutdown", 63, 1, _E)
TORQUE_ENABLE: Final = _f("Torque Enable", 64, 1, _RW)
LED: Final = _f("LED", 65, 1, _RW)
STATUS_RETURN_LEVEL: Final = _f("Status Return Level", 68, 1, _RW)
REGISTERED_INSTRUCTION: Final = _f("Registered Instruction", 69, 1, _R)
HARDWARE_ERROR_STATUS: Final = _f("Hardware Error Status", 70, 1, _R)
VELOCITY_I_GAIN: Final = _f("Velocity I Gain", 76, 2, _RW)
VELOCITY_P_GAIN: Final = _f("Velocity P Gain", 78, 2, _RW)
POSITION_D_GAIN: Final = _f("Position D Gain", 80, 2, _RW)
POSITION_I_GAIN: Final = _f("Position I Gain", 82, 2, _RW)
POSITION_P_GAIN: Final = _f("Position P Gain", 84, 2, _RW)
FEEDFORWARD_2ND_GAIN: Final = _f("Feedforward 2nd Gain", 88, 2, _RW)
FEEDFORWARD_1ST_GAIN: Final = _f("Feedforward 1st Gain", 90, 2, _RW)
BUS_WATCHDOG: Final = _f("Bus Watchdog", 98, 1, _RW)
GOAL_PWM: Final = _f("Goal PWM", 100, 2, _RW, signed=True)
GOAL_CURRENT: Final = _f("Goal Current", 102, 2, _RW, signed=True)
GOAL_VELOCITY: Final = _f("Goal Velocity", 104, 4, _RW, signed=True)
PROFILE_ACCELERATION: Final = _f("Profile Acceleration", 108, 4, _RW)
PROFILE_VELOCITY: Final = _f("Profile Velocity", 112, 4, _RW)
GOAL_POSITION: Final = _f("Goal Position", 116, 4, _RW, signed=True)
REALTIME_TICK: Final = _f("Realtime Tick", 120, 2, _R)
MOVING: Final = _f("Moving", 122, 1, _R)
MOVING_STATUS: Final = _f("Moving Status", 123, 1, _R)
PRESENT_PWM: Final = _f("Present PWM", 124, 2, _R, signed=True)
PRESENT_CURRENT: Final = _f("Present Current", 126, 2, _R, signed=True)  # Present Load on XL430
PRESENT_VELOCITY: Final = _f("Present Velocity", 128, 4, _R, signed=True)
PRESENT_POSITION: Final = _f("Present Position", 132, 4, _R, signed=True)
VELOCITY_TRAJECTORY: Final = _f("Velocity Trajectory", 136, 4, _R, signed=True)
POSITION_TRAJECTORY: Final = _f("Position Trajectory", 140, 4, _R, signed=True)
PRESENT_INPUT_VOLTAGE: Final = _f("Present Input Voltage", 144, 2, _R)  # 0.1 V
PRESENT_TEMPERATURE: Final = _f("Present Temperature", 146, 1, _R)  # °C
BACKUP_READY: Final = _f("Backup Ready", 147, 1, _R)


@dataclass(frozen=True)
class IndirectArea:
    """One run of Indirect Address / Indirect Data entries in a model's control table.

    Indirect Address n (2 bytes, at ``address + 2 k``) holds the address whose byte
    appears at Indirect Data n (1 byte, at ``data + k``), ``k = 0 .. count - 1``. Where
    they lie differs between models: see :attr:`ModelInfo.indirect`.

    Attributes:
        address: the first entry's Indirect Address.
        data: the first entry's Indirect Data.
        count: entries in this run.
    """

    address: int
    data: int
    count: int

    @property
    def end(self) -> int:
        """The address after the run's last Indirect Data byte."""
        return self.data + self.count


# The e-Manual's control tables: X430 / X540 series (XL430-W250, XM430-W350, XM540-W270 ...)
# Indirect Address 1..28 at 168..222 -> Indirect Data 1..28 at 224..251, 29..56 at
# 578..632 -> 634..661; XL330 (XL330-M077, XL330-M288) Indirect Address 1..20 at
# 168..206 -> Indirect Data 1..20 at 208..227, the end of its table.
X_INDIRECT: Final = (IndirectArea(168, 224, 28), IndirectArea(578, 634, 28))
XL330_INDIRECT: Final = (IndirectArea(168, 208, 20),)

FIELDS: Final[tuple[Field, ...]] = tuple(
    value for value in list(globals().values()) if isinstance(value, Field))
FIELDS_BY_NAME: Final[Mapping[str, Field]] = MappingProxyType({f.name: f for f in FIELDS})
# Fields only the current-sensing models have (ModelInfo.senses_current): the e-Manual's
# XL430-W250, 2XL430-W250 and XC430 tables have neither.
CURRENT_FIELDS: Final = frozenset({CURRENT_LIMIT, GOAL_CURRENT})
BUS_WATCHDOG_FIRMWARE: Final = 38  # Bus Watchdog (98) exists from this firmware on

# Operating Mode values.
MODE_CURRENT: Final = 0
MODE_VELOCITY: Final = 1
MODE_POSITION: Final = 3
MODE_EXTENDED_POSITION: Final = 4
MODE_CURRENT_BASED_POSITION: Final = 5
MODE_PWM: Final = 16
OPERATING_MODES: Final = frozenset({MODE_CURRENT, MODE_VELOCITY, MODE_POSITION,
                                    MODE_EXTENDED_POSITION, MODE_CURRENT_BASED_POSITION,
                                    MODE_PWM})

# Hardware Error Status bits.
HARDWARE_ERRORS: Final[Mapping[int, str]] = MappingProxyType({
    0: "input voltage error",
    2: "overheating error",
    3: "motor encoder error",
    4: "electrical shock error",
    5: "overload error",
})


# Bus Watchdog (98): 0 off (and clears its error), 1..127 armed in 20 ms units, 0xFF (-1)
# after it expired. The driver reports an expired watchdog in ActuatorState.error_code
# with a bit above the 8 bits of Hardware Error Status.
BUS_WATCHDOG_UNIT: Final = 0.02  # s
BUS_WATCHDOG_MAX: Final = 127
BUS_WATCHDOG_EXPIRED: Final = 0xFF
BUS_WATCHDOG_FAULT: Final = 0x100
BUS_WATCHDOG_TEXT: Final = "bus watchdog expired"


def describe_error_code(code: int) -> str:
    """The readable text of a driver error code: Hardware Error Status and the watchdog."""
    names = [describe_hardware_error(code & 0xFF)] if code & 0xFF else []
    if code & BUS_WATCHDOG_FAULT:
        names.append(BUS_WATCHDOG_TEXT)
    return ", ".join(names)


def describe_hardware_error(bits: int) -> str:
    """The readable names of the set bits of Hardware Error Status, ``""`` for 0."""
    names = [text for bit, text in HARDWARE_ERRORS.items() if bits >> bit & 1]
    unknown = bits & ~sum(1 << b for b in HARDWARE_ERRORS)
    if unknown:
        names.append(f"unknown bits 0x{unknown:02X}")
    return ", ".join(names)


TICKS_PER_REV: Final = 4096
CENTER_TICK: Final = 2048
RAD_PER_TICK: Final = 2.0 * math.pi / TICKS_PER_REV
VELOCITY_UNIT_RPM: Final = 0.229
RAD_S_PER_VELOCITY_UNIT: Final = VELOCITY_UNIT_RPM * 2.0 * math.pi / 60.0
LOAD_UNIT: Final = 0.001  # Present Load: 0.1 % of the stall torque
VOLTAGE_UNIT: Final = 0.1
RETURN_DELAY_UNIT: Final = 2e-6  # s: Return Delay Time counts 2 µs units
RETURN_DELAY_TIME_MAX: Final = 254  # its largest value (508 µs)
FAST_SYNC_READ_FIRMWARE: Final = 45  # X-series firmware that answers Fast Sync Read


@dataclass(frozen=True)
class ModelInfo:
    """One supported model.

    Attributes:
        name: e.g. ``"XM430-W350"``.
        model_number: what *Model Number* (address 0) reads.
        current_unit: A per *Present/Goal Current* unit, or None when the model senses
            load only (no current-control mode).
        stall_torque: N·m at 12 V (5 V for XL330), the e-Manual's specification.
        stall_current: A at the same voltage.
        no_load_speed: rad/s at the same voltage.
        velocity_limit: *Velocity Limit*'s factory value (0.229 rev/min units).
        current_limit: *Current Limit*'s factory value (current units), 0 if none.
        indirect: where its Indirect Address / Data entries lie, in entry order (the
            first run holds entry 1); its control table ends with the last run.
    """

    name: str
    model_number: int
    current_unit: float | None
    stall_torque: float
    stall_current: float
    no_load_speed: float
    velocity_limit: int
    current_limit: int = 0
    indirect: tuple[IndirectArea, ...] = X_INDIRECT

    @property
    def table_size(self) -> int:
        """Bytes of its control table (through its last Indirect Data)."""
        return max(area.end for area in self.indirect)

    @property
    def senses_current(self) -> bool:
        """Whether the model has Present/Goal Current (else Present Load)."""
        return self.current_unit is not None

    def has(self, fld: Field, firmware: int) -> bool:
        """Whether this model, with ``firmware``, has ``fld`` (one of :data:`FIELDS`).

        Current Limit and Goal Current: current-sensing models only; Bus Watchdog: from
        firmware :data:`BUS_WATCHDOG_FIRMWARE` on; every other field: every model.
        """
        if fld in CURRENT_FIELDS and not self.senses_current:
            return False
        return fld is not BUS_WATCHDOG or firmware >= BUS_WATCHDOG_FIRMWARE

    def fields(self, firmware: int) -> tuple[Field, ...]:
        """The fields of :data:`FIELDS` this model has with ``firmware``."""
        return tuple(f for f in FIELDS if self.has(f, firmware))

    def defined(self, firmware: int) -> frozenset[int]:
        """Every address a READ or WRITE may cover with ``firmware``.

        Its fields' bytes and its Indirect Address / Data entries; a request covering any
        other address is an Access Error (0x07).
        """
        addresses = {a for f in self.fields(firmware)
                     for a in range(f.address, f.address + f.size)}
        for area in self.indirect:
            addresses.update(range(area.address, area.address + 2 * area.count))
            addresses.update(range(area.data, area.end))
        return frozenset(addresses)

    @property
    def torque_constant(self) -> float:
        """N·m/A from the stall specification (an estimate; the YAML may override it)."""
        return self.stall_torque / self.stall_current



def _rpm(value: float) -> float:
    return value * 2.0 * math.pi / 60.0


_XM_CURRENT = 2.69e-3

MODELS: Final[Mapping[str, ModelInfo]] = MappingProxyType({m.name: m for m in (
    ModelInfo("XL430-W250", 1060, None, 1.5, 1.4, _rpm(61), 265),
    ModelInfo("2XL430-W250", 1090, None, 1.5, 1.4, _rpm(61), 265),
    ModelInfo("XC430-W150", 1070, None, 1.6, 1.4, _rpm(106), 460),
    ModelInfo("XC430-W240", 1080, None, 1.9, 1.4, _rpm(70), 306),
    ModelInfo("XM430-W210", 1030, _XM_CURRENT, 3.0, 2.3, _rpm(77), 330, 1193),
    ModelInfo("XM430-W350", 1020, _XM_CURRENT, 4.1, 2.3, _rpm(46), 200, 1193),
    ModelInfo("XH430-W210", 1010, _XM_CURRENT, 2.8, 1.3, _rpm(50), 210, 648),
    ModelInfo("XH430-W350", 1000, _XM_CURRENT, 3.4, 1.3, _rpm(30), 128, 648),
    ModelInfo("XM540-W150", 1130, _XM_CURRENT, 7.3, 4.4, _rpm(53), 230, 2047),
    ModelInfo("XM540-W270", 1120, _XM_CURRENT, 10.6, 4.4, _rpm(30), 128, 2047),
    ModelInfo("XW540-T140", 1180, _XM_CURRENT, 6.9, 4.9, _rpm(72), 310, 2047),
    ModelInfo("XW540-T260", 1170, _XM_CURRENT, 9.5, 4.9, _rpm(40), 167, 2047),
    ModelInfo("XL330-M077", 1190, 1e-3, 0.228, 1.47, _rpm(383), 1023, 1750, XL330_INDIRECT),
    ModelInfo("XL330-M288", 1200, 1e-3, 0.52, 1.47, _rpm(104), 445, 1750, XL330_INDIRECT),
)})
MODELS_BY_NUMBER: Final[Mapping[int, ModelInfo]] = MappingProxyType(
    {m.model_number: m for m in MODELS.values()})
DEFAULT_MODEL: Final = "XM430-W350"


def model_by_name(name: str) -> ModelInfo | None:
    """The model called ``name`` (case-insensitive, ``-T``/``-R`` suffixes ignored)."""
    key = name.strip().upper()
    for suffix in ("-T/R", "-T", "-R"):
        if key.endswith(suffix) and key[: -len(suffix)] in MODELS:
            key = key[: -len(suffix)]
    return MODELS.get(key)


def model_name(model_number: int) -> str:
    """The model's name, or ``"unknown model <number>"``."""
    info = MODELS_BY_NUMBER.get(model_number)
    return info.name if info else f"unknown model {model_number}"
