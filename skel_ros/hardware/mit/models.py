"""Built-in MIT-mode motor models: fixed-point ranges and reply variant per model.

The ranges are what the motor's *firmware* uses to scale the fields; they differ
between firmware versions of the same motor, so any of them can be overridden per
actuator in the hardware YAML (``options: {p_max: 12.5, v_max: 50, t_max: 18, ...}``,
or ``p_min`` ... for asymmetric ranges). Sources:

* Mini Cheetah: Ben Katz's motor controller (bgkatz/motorcontrol ``Core/Src/can.c``,
  ``math_ops.c``: frame layout, truncating ``float_to_uint``) and his SPIne / HKC
  Mini Cheetah test firmware limits (P ±12.5 rad, V ±65 rad/s, Kp 0-500, Kd 0-5,
  T ±18 N·m).
* T-motor / CubeMars AK: neurobionics/TMotorCANControl ``src/TMotorCANControl/mit_can.py``
  (``MIT_Params``, "thresholds are in the datasheet for the motor on cubemars.com"),
  cross-checked with mini-cheetah-motor-driver-socketcan 0.4.3 ``canmotorlib.py``
  (AK80-6 V2, AK10-9 V1.1, AK70-10 V1.1: ±24 N·m there, firmware dependent) and the
  manufacturer's CubeMars AK Series Actuator Driver Manual V1.0.8 (p. 50, MIT-mode
  ranges per model), which wins where they differ: AK60-6 V ±45 rad/s (TMotorCANControl:
  ±50).
* Damiao DM-J: damiao-motor 1.0.6 ``core/motor.py`` (``_MOTOR_LIMIT_PARAM``: PMAX,
  VMAX, TMAX per type; Kp 0-500, Kd 0-5 for all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.mit.codec import MitRanges, Variant

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MODELS", "MitModel", "lookup", "resolve"]


@dataclass(frozen=True)
class MitModel:
    """One motor model: its ranges, reply variant and where the numbers come from."""

    name: str
    ranges: MitRanges
    variant: Variant
    source: str


_TMC = "neurobionics/TMotorCANControl mit_can.py MIT_Params"
_AK_MANUAL = "CubeMars AK Series Actuator Driver Manual V1.0.8 p. 50"
_DM = "damiao-motor 1.0.6 core/motor.py _MOTOR_LIMIT_PARAM"


def _m(name: str, p: float, v: float, t: float, variant: Variant, source: str,  # noqa: PLR0917
       ) -> MitModel:
    return MitModel(name, MitRanges.symmetric(p, v, t), variant, source)


#: Built-in models by canonical name.
MODELS: Mapping[str, MitModel] = MappingProxyType({m.name: m for m in (
    _m("MINI-CHEETAH", 12.5, 65.0, 18.0, Variant.CHEETAH,
       "bgkatz/motorcontrol can.c; Ben Katz SPIne/HKC_MiniCheetah limits"),
    _m("AK10-9", 12.5, 50.0, 65.0, Variant.CUBEMARS, _TMC),
    _m("AK60-6", 12.5, 45.0, 15.0, Variant.CUBEMARS,
       f"{_AK_MANUAL} (V ±45; {_TMC} says ±50)"),
    _m("AK70-10", 12.5, 50.0, 25.0, Variant.CUBEMARS, _TMC),
    _m("AK80-6", 12.5, 76.0, 12.0, Variant.CUBEMARS,
       f"{_TMC}; canmotorlib AK80_6_V2_PARAMS"),
    _m("AK80-9", 12.5, 50.0, 18.0, Variant.CUBEMARS, _TMC),
    _m("AK80-64", 12.5, 8.0, 144.0, Variant.CUBEMARS, _TMC),
    _m("DM3507", 12.566, 50.0, 5.0, Variant.DAMIAO, _DM),
    _m("DM4310", 12.5, 30.0, 10.0, Variant.DAMIAO, _DM),
    _m("DM4310P", 12.5, 50.0, 10.0, Variant.DAMIAO, _DM),
    _m("DM4340", 12.5, 10.0, 28.0, Variant.DAMIAO, _DM),
    _m("DM6006", 12.5, 45.0, 20.0, Variant.DAMIAO, _DM),
    _m("DM8006", 12.5, 45.0, 40.0, Variant.DAMIAO, _DM),
    _m("DM8009", 12.5, 45.0, 54.0, Variant.DAMIAO, _DM),
    _m("DM10010L", 12.5, 25.0, 200.0, Variant.DAMIAO, _DM),
)})


def _key(name: str) -> str:
    return "".join(c for c in name.upper() if c.isalnum())


_BY_KEY = {_key(n): m for n, m in MODELS.items()}
# Common spellings: "DM-J4310-2EC", "4310", "mini cheetah".
_BY_KEY.update({"MINICHEETAH": MODELS["MINI-CHEETAH"], "CHEETAH": MODELS["MINI-CHEETAH"]})


def lookup(name: str) -> MitModel | None:
    """The built-in model called ``name`` (case, dashes and ``DM-J``/``-2EC`` ignored)."""
    key = _key(name)
    if key in _BY_KEY:
        return _BY_KEY[key]
    for prefix in ("DMJ", "DM", ""):
        for suffix in ("2EC", "EC", ""):
            k = key.removeprefix(prefix).removesuffix(suffix) if prefix else key
            if f"DM{k}" in _BY_KEY and (prefix or k.isdigit()):
                return _BY_KEY[f"DM{k}"]
    return None


_RANGE_KEYS = ("p", "v", "t", "kp", "kd")
#: Keys :func:`resolve` reads from an actuator's options.
RANGE_OPTIONS = frozenset({f"{k}_{e}" for k in _RANGE_KEYS for e in ("min", "max")}
                          | {"variant"})


def _number(options: Mapping[str, Any], key: str, where: str) -> float | None:
    if key not in options:
        return None
    value = options[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value):
        raise ConfigError(f"{where}: option {key!r} must be a finite number, got {value!r}")
    return float(value)


def resolve(model: str, options: Mapping[str, Any], where: str = "MIT actuator",
            ) -> tuple[MitRanges, Variant]:
    """Ranges and variant of an actuator: the built-in model, then its options.

    ``x_max`` alone makes a symmetric range ``[-x_max, x_max]`` for p, v, t (gains start
    at 0); ``x_min`` sets the lower end explicitly.

    Raises:
        ConfigError: unknown model without explicit ranges, bad numbers, bad variant.
    """
    base = lookup(model) if model else None
    if model and base is None and not all(f"{k}_max" in options for k in ("p", "v", "t")):
        known = ", ".join(MODELS)
        raise ConfigError(f"{where}: unknown MIT motor model {model!r}; known: {known} "
                          "(or give p_max, v_max, t_max in options)")
    if base is None and not all(f"{k}_max" in options for k in ("p", "v", "t")):
        raise ConfigError(f"{where}: no model given: set model (one of {', '.join(MODELS)}) "
                          "or options p_max, v_max, t_max")
    ranges = base.ranges if base else MitRanges.symmetric(1.0, 1.0, 1.0)
    changes: dict[str, float] = {}
    for k in _RANGE_KEYS:
        hi = _number(options, f"{k}_max", where)
        lo = _number(options, f"{k}_min", where)
        if hi is not None:
            changes[f"{k}_max"] = hi
            if lo is None and k in ("p", "v", "t"):
                lo = -hi
        if lo is not None:
            changes[f"{k}_min"] = lo
    try:
        ranges = replace(ranges, **changes)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    variant = base.variant if base else Variant.CHEETAH
    if "variant" in options:
        try:
            variant = Variant(str(options["variant"]).lower())
        except ValueError:
            raise ConfigError(f"{where}: variant must be one of "
                              f"{', '.join(v.value for v in Variant)}, "
                              f"got {options['variant']!r}") from None
    return ranges, variant
