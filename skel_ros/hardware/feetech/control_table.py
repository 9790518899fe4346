"""Feetech memory tables: fields, units, models (STS/SMS "protocol 0", SCS "protocol 1").

Written from Feetech's memory tables for the STS/SMS and SCS series (the fields, their
addresses and sizes, which are EEPROM) and the FT-SCS protocol document. Tables are data:
one :class:`Field` per entry, one :class:`ModelInfo` per supported model.

The two series share most addresses but differ in three ways that matter here:

* **byte order**: STS/SMS store 2-byte fields low byte first, SCS high byte first;
* **the Lock field**: 55 on STS/SMS, 48 on SCS (0: EEPROM writes are kept, 1: locked);
* **what exists**: STS/SMS have Homing_Offset (31), Operating_Mode (33), Present_Current
  (69) and a Sync Read instruction; SCS have none of these.

Signed values are **sign-magnitude**, not two's complement: bit ``n`` is the sign and the
bits below it the magnitude (Homing_Offset bit 11; velocities, Goal_Position and
Present_Position bit 15; Present_Load bit 10). :func:`decode_sm` / :func:`encode_sm`.

Units: position in ticks (4096 per turn on STS, tick 2048 = 0 rad; SCS0009: 1024 over
300 degrees, tick 512 = 0 rad); velocity in ticks/s; Present_Load in 0.1 % of the maximum
torque; voltage in 0.1 V; temperature in degrees C; Return_Delay_Time in 2 µs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping


@dataclass(frozen=True)
class Field:
    """One field of a memory table.

    Attributes:
        name: Feetech's name (``Goal_Position``).
        address: its first byte.
        size: bytes (1 or 2).
        eeprom: kept through power cycles; written only with Lock 0.
        sign_bit: the sign bit of a sign-magnitude value (None: unsigned).
        writable: whether a WRITE may change it.
    """

    name: str
    address: int
    size: int
    eeprom: bool = False
    sign_bit: int | None = None
    writable: bool = True


def _f(name: str, address: int, size: int, *, eeprom: bool = False, sign: int | None = None,
       ro: bool = False) -> Field:
    return Field(name, address, size, eeprom, sign, not ro)


# Shared by both series (same address, same meaning).
FIRMWARE_MAJOR = _f("Firmware_Major_Version", 0, 1, eeprom=True, ro=True)
FIRMWARE_MINOR = _f("Firmware_Minor_Version", 1, 1, eeprom=True, ro=True)
MODEL_NUMBER = _f("Model_Number", 3, 2, eeprom=True, ro=True)
ID = _f("ID", 5, 1, eeprom=True)
BAUD_RATE = _f("Baud_Rate", 6, 1, eeprom=True)
RETURN_DELAY_TIME = _f("Return_Delay_Time", 7, 1, eeprom=True)
RESPONSE_STATUS_LEVEL = _f("Response_Status_Level", 8, 1, eeprom=True)
MIN_ANGLE_LIMIT = _f("Min_Angle_Limit", 9, 2, eeprom=True)
MAX_ANGLE_LIMIT = _f("Max_Angle_Limit", 11, 2, eeprom=True)
MAX_TEMPERATURE_LIMIT = _f("Max_Temperature_Limit", 13, 1, eeprom=True)
MAX_VOLTAGE_LIMIT = _f("Max_Voltage_Limit", 14, 1, eeprom=True)
MIN_VOLTAGE_LIMIT = _f("Min_Voltage_Limit", 15, 1, eeprom=True)
MAX_TORQUE_LIMIT = _f("Max_Torque_Limit", 16, 2, eeprom=True)
UNLOADING_CONDITION = _f("Unloading_Condition", 19, 1, eeprom=True)
# The position loop's settings (the same addresses on STS/SMS and SCS; the driver leaves
# them as the servo keeps them; the physics-backed emulator runs its law by them).
P_COEFFICIENT = _f("P_Coefficient", 21, 1, eeprom=True)
D_COEFFICIENT = _f("D_Coefficient", 22, 1, eeprom=True)
I_COEFFICIENT = _f("I_Coefficient", 23, 1, eeprom=True)
MINIMUM_STARTUP_FORCE = _f("Minimum_Startup_Force", 24, 2, eeprom=True)
CW_DEAD_ZONE = _f("CW_Dead_Zone", 26, 1, eeprom=True)
CCW_DEAD_ZONE = _f("CCW_Dead_Zone", 27, 1, eeprom=True)
TORQUE_ENABLE = _f("Torque_Enable", 40, 1)
ACCELERATION = _f("Acceleration", 41, 1)
GOAL_POSITION = _f("Goal_Position", 42, 2, sign=15)
GOAL_TIME = _f("Goal_Time", 44, 2)
GOAL_VELOCITY = _f("Goal_Velocity", 46, 2, sign=15)
PRESENT_POSITION = _f("Present_Position", 56, 2, sign=15, ro=True)
PRESENT_VELOCITY = _f("Present_Velocity", 58, 2, sign=15, ro=True)
PRESENT_LOAD = _f("Present_Load", 60, 2, sign=10, ro=True)
PRESENT_VOLTAGE = _f("Present_Voltage", 62, 1, ro=True)
PRESENT_TEMPERATURE = _f("Present_Temperature", 63, 1, ro=True)
STATUS = _f("Status", 65, 1, ro=True)
MOVING = _f("Moving", 66, 1, ro=True)
# STS/SMS only.
HOMING_OFFSET = _f("Homing_Offset", 31, 2, eeprom=True, sign=11)
OPERATING_MODE = _f("Operating_Mode", 33, 1, eeprom=True)
PROTECTIVE_TORQUE = _f("Protective_Torque", 34, 1, eeprom=True)
PROTECTION_TIME = _f("Protection_Time", 35, 1, eeprom=True)
OVERLOAD_TORQUE = _f("Overload_Torque", 36, 1, eeprom=True)
TORQUE_LIMIT = _f("Torque_Limit", 48, 2)
STS_LOCK = _f("Lock", 55, 1)
PRESENT_CURRENT = _f("Present_Current", 69, 2, sign=15, ro=True)
# SCS only.
SCS_LOCK = _f("Lock", 48, 1)

STS_FIELDS: Final = (FIRMWARE_MAJOR, FIRMWARE_MINOR, MODEL_NUMBER, ID, BAUD_RATE,
                     RETURN_DELAY_TIME, RESPONSE_STATUS_LEVEL, MIN_ANGLE_LIMIT, MAX_ANGLE_LIMIT,
                     MAX_TEMPERATURE_LIMIT, MAX_VOLTAGE_LIMIT, MIN_VOLTAGE_LIMIT,
                     MAX_TORQUE_LIMIT, UNLOADING_CONDITION, HOMING_OFFSET, OPERATING_MODE,
                     PROTECTIVE_TORQUE, PROTECTION_TIME, OVERLOAD_TORQUE, TORQUE_ENABLE,
                     ACCELERATION, GOAL_POSITION, GOAL_TIME, GOAL_VELOCITY, TORQUE_LIMIT,
                     STS_LOCK, PRESENT_POSITION, PRESENT_VELOCITY, PRESENT_LOAD, PRESENT_VOLTAGE,
                     PRESENT_TEMPERATURE, STATUS, MOVING, PRESENT_CURRENT)
SCS_FIELDS: Final = (FIRMWARE_MAJOR, FIRMWARE_MINOR, MODEL_NUMBER, ID, BAUD_RATE,
                     RETURN_DELAY_TIME, RESPONSE_STATUS_LEVEL, MIN_ANGLE_LIMIT, MAX_ANGLE_LIMIT,
                     MAX_TEMPERATURE_LIMIT, MAX_VOLTAGE_LIMIT, MIN_VOLTAGE_LIMIT,
                     MAX_TORQUE_LIMIT, UNLOADING_CONDITION, TORQUE_ENABLE, ACCELERATION,
                     GOAL_POSITION, GOAL_TIME, GOAL_VELOCITY, SCS_LOCK, PRESENT_POSITION,
                     PRESENT_VELOCITY, PRESENT_LOAD, PRESENT_VOLTAGE, PRESENT_TEMPERATURE, STATUS,
                     MOVING)

# The block the driver reads every cycle: Torque_Enable (40) .. Moving (66), 27 bytes;
# Present_Current (69) on STS is not needed (Present_Load gives the effort).
READ_START: Final = TORQUE_ENABLE.address
READ_SIZE: Final = MOVING.address + MOVING.size - READ_START
TABLE_SIZE: Final = 87  # bytes of the emulated table (0..86)

# Operating_Mode (STS/SMS): 0 position, 1 constant speed, 2 PWM, 3 step (multi-turn).
MODE_POSITION: Final = 0
MODE_VELOCITY: Final = 1
MODE_PWM: Final = 2
MODE_STEP: Final = 3

LOCKED: Final = 1
UNLOCKED: Final = 0
RETURN_DELAY_UNIT: Final = 2e-6  # s per Return_Delay_Time unit
RETURN_DELAY_MAX: Final = 254
FACTORY_RETURN_DELAY: Final = 250  # 500 µs
LOAD_UNIT: Final = 0.001  # Present_Load: 0.1 % of the maximum torque
VOLTAGE_UNIT: Final = 0.1  # V per Present_Voltage unit
HOMING_OFFSET_MAX: Final = 2047  # sign-magnitude, 11 bits of magnitude

# Baud_Rate codes (STS/SMS and SCS alike).
BAUD_RATES: Final = MappingProxyType({1_000_000: 0, 500_000: 1, 250_000: 2, 128_000: 3,
                                      115_200: 4, 76_800: 5, 57_600: 6, 38_400: 7})

# Status byte / the Status field: which protection tripped.
ERROR_BITS: Final = MappingProxyType({0x01: "voltage", 0x02: "angle sensor",
                                      0x04: "overheating", 0x08: "overcurrent",
                                      0x20: "overload"})
POSITION_RANGE_FAULT: Final = 0x100  # driver bit: Present_Position outside the servo's range


def describe_error(code: int) -> str:
    """Words for a status byte, plus the driver's own bits (0: ``""``)."""
    words = [text for bit, text in ERROR_BITS.items() if code & bit]
    unknown = code & 0xFF & ~sum(ERROR_BITS)
    if unknown:
        words.append(f"unknown bits 0x{unknown:02x}")
    if code & POSITION_RANGE_FAULT:
        words.append("position outside the servo's range (multi-turn mode?)")
    return ", ".join(words) + (" error" if code & 0xFF else "")


def decode_sm(raw: int, sign_bit: int) -> int:
    """A sign-magnitude field's value: bit ``sign_bit`` is the sign."""
    sign = 1 << sign_bit
    return -(raw & (sign - 1)) if raw & sign else raw & (sign - 1)


def encode_sm(value: int, sign_bit: int) -> int:
    """``value`` as a sign-magnitude field (magnitude clipped to the bits below the sign)."""
    top = (1 << sign_bit) - 1
    return min(-value, top) | 1 << sign_bit if value < 0 else min(value, top)


@dataclass(frozen=True)
class ModelInfo:
    """One supported model.

    Attributes:
        name: as the hardware YAML writes it (``STS3215-C001``).
        model_number: Model_Number (3); voltage variants share one.
        series: ``"sts"`` (STS/SMS, protocol 0) or ``"scs"`` (protocol 1).
        ticks: position ticks of the encoder's span.
        span: radians those ticks cover (2 pi on STS; 300 degrees on SCS0009).
        stall_torque: N·m at the nominal voltage (Feetech's product data).
        no_load_speed: rad/s at the nominal voltage.
        voltage: nominal supply voltage.
    """

    name: str
    model_number: int
    series: str
    ticks: int
    span: float
    stall_torque: float
    no_load_speed: float
    voltage: float

    @property
    def protocol_end(self) -> int:
        """0: 2-byte fields low byte first (STS/SMS); 1: high byte first (SCS)."""
        return 0 if self.series == "sts" else 1

    @property
    def byte_order(self) -> Literal["little", "big"]:
        """How its 2-byte fields are stored."""
        return "big" if self.protocol_end else "little"

    @property
    def rad_per_tick(self) -> float:
        """Radians per position tick."""
        return self.span / self.ticks

    @property
    def center(self) -> int:
        """The tick of 0 rad."""
        return self.ticks // 2

    @property
    def max_tick(self) -> int:
        """The last position tick."""
        return self.ticks - 1

    @property
    def fields(self) -> tuple[Field, ...]:
        """The fields of its series' table."""
        return STS_FIELDS if self.series == "sts" else SCS_FIELDS

    @property
    def lock(self) -> Field:
        """Its Lock field (55 on STS/SMS, 48 on SCS)."""
        return STS_LOCK if self.series == "sts" else SCS_LOCK

    @property
    def has_sync_read(self) -> bool:
        """Whether the series has the Sync Read instruction (STS/SMS; SCS has not)."""
        return self.series == "sts"

    def has(self, fld: Field) -> bool:
        """Whether the model's table has ``fld``."""
        return fld in self.fields


_KGCM: Final = 0.0980665  # N·m per kgf·cm
_RPM: Final = 2 * math.pi / 60


def _sts(name: str, number: int, kgcm: float, rpm: float, volts: float) -> ModelInfo:
    return ModelInfo(name, number, "sts", 4096, 2 * math.pi, kgcm * _KGCM, rpm * _RPM, volts)


# Stall torque and no-load speed per Feetech's product pages (7.4 V and 12 V variants of
# the STS3215 share Model_Number 777: the YAML names which one; the driver checks the number).
_MODELS: Final = (
    _sts("STS3215-C001", 777, 19.5, 45.0, 7.4),
    _sts("STS3215-C044", 777, 19.5, 45.0, 7.4),
    _sts("STS3215-C018", 777, 30.0, 45.0, 12.0),
    _sts("STS3215-C047", 777, 30.0, 45.0, 12.0),
    _sts("STS3250", 2825, 50.0, 40.0, 12.0),
    ModelInfo("SCS0009", 1284, "scs", 1024, math.radians(300), 2.3 * _KGCM,
              math.radians(60) / 0.1, 6.0),  # 0.1 s per 60 degrees
)
MODELS: Final[Mapping[str, ModelInfo]] = MappingProxyType({m.name: m for m in _MODELS})
DEFAULT_MODEL: Final = "STS3215-C001"
ALIASES: Final = MappingProxyType({"STS3215": "STS3215-C001"})


def model_by_name(name: str | None) -> ModelInfo | None:
    """The model named ``name`` (case-insensitive; ``STS3215`` is the 7.4 V C001).

    None or "" (a YAML that names no model): :data:`DEFAULT_MODEL`, as the driver takes it.
    """
    key = (name or DEFAULT_MODEL).upper()
    key = ALIASES.get(key, key)
    return next((m for m in _MODELS if m.name == key), None)


def models_with_number(number: int) -> tuple[ModelInfo, ...]:
    """Every supported model whose Model_Number is ``number``."""
    return tuple(m for m in _MODELS if m.model_number == number)


def model_name(number: int) -> str:
    """The model names for a Model_Number, for messages (``""``: unknown)."""
    return " / ".join(m.name for m in models_with_number(number))
