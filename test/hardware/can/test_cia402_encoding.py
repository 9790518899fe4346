"""The CiA 402 driver's encoding, without a bus: statusword states, modes of operation,
COB-IDs, unit conversion and the actuator options that set them, with their messages.

Beside test_cia402_wire.py and test_cia402.py (the same through python-can's virtual bus
and the emulator): these pin what mutation testing (issue 35, docs/testing.md) showed
the bus tests did not tell apart.
"""

from __future__ import annotations

import math
import re
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from skel_ros.hardware.base import (
    NO_LIMITS,
    ActuatorCommand,
    ActuatorLimits,
    ActuatorSpec,
    ControlMode,
)
from skel_ros.hardware.canopen402.bus import (
    STATUS_STATES,
    Cia402Bus,
    Units,
    _cob_ids,
    _count,
    _Drive,
    _mode_name,
    op_mode_for,
    predefined_cob_id,
    state_of,
    units_for,
)
from skel_ros.hardware.errors import ConfigError, ProtocolError

W = "bus can0 drive 3"


@pytest.mark.parametrize(("statusword", "state"), [
    (0x0000, "NOT READY TO SWITCH ON"),
    (0x0040, "SWITCH ON DISABLED"),
    (0x0021, "READY TO SWITCH ON"),
    (0x0023, "SWITCHED ON"),
    (0x0027, "OPERATION ENABLED"),
    (0x0008, "FAULT"),
    (0x000F, "FAULT REACTION ACTIVE"),
    (0x0007, "QUICK STOP ACTIVE"),
    # Bits outside the masks (voltage enabled, warning, remote, target reached ...)
    (0xFF90 | 0x0027, "OPERATION ENABLED"),
    (0xFF90 | 0x0040, "SWITCH ON DISABLED"),
    (0xFFB0 | 0x0008, "FAULT"),
    (0x0001, "UNKNOWN"),
    (0x0067, "UNKNOWN"),
])
def test_each_statusword_names_its_state(statusword: int, state: str) -> None:
    assert state_of(statusword) == state


def test_the_state_table_is_the_standards() -> None:
    assert len({name for _, _, name in STATUS_STATES}) == 8


@pytest.mark.parametrize(("code", "name"), [(8, "8 (csp)"), (1, "1 (pp)"), (10, "10 (cst)"),
                                            (-1, "-1"), (7, "7")])
def test_a_mode_code_is_named(code: int, name: str) -> None:
    assert _mode_name(code) == name


@pytest.mark.parametrize(("kind", "number", "node", "cob"), [
    ("tpdo", 1, 3, 0x183), ("tpdo", 2, 3, 0x283), ("tpdo", 4, 127, 0x4FF),
    ("rpdo", 1, 3, 0x203), ("rpdo", 2, 1, 0x301), ("rpdo", 4, 127, 0x57F),
])
def test_predefined_cob_ids(kind: str, number: int, node: int, cob: int) -> None:
    assert predefined_cob_id(kind, number, node) == cob


def test_units_convert_to_si() -> None:
    u = Units(counts_per_rad=1000.0, velocity_per_rad_s=50.0, rated_torque=2.0)
    assert u.position(1500) == 1.5
    assert u.velocity(-25) == -0.5
    assert u.effort(250) == 0.5
    assert math.isnan(Units(1.0, 1.0).effort(1000))


def test_default_units_are_65536_counts_a_revolution() -> None:
    u = units_for({})
    assert u.counts_per_rad == pytest.approx(65536 / (2 * math.pi))
    assert u.velocity_per_rad_s == u.counts_per_rad
    assert math.isnan(u.rated_torque)


def test_units_from_options() -> None:
    u = units_for({"counts_per_rev": 4096, "velocity_per_rad_s": 10, "rated_torque": 1.5})
    assert u == Units(4096 / (2 * math.pi), 10.0, 1.5)
    assert units_for({"counts_per_rad": 1000}).counts_per_rad == 1000.0
    assert units_for({"counts_per_rad": 1000}).velocity_per_rad_s == 1000.0


@pytest.mark.parametrize(("options", "message"), [
    ({"counts_per_rev": 1, "counts_per_rad": 1},
     f"{W}: give counts_per_rev or counts_per_rad, not both"),
    ({"counts_per_rev": 0}, f"{W}: option 'counts_per_rev' must be a positive number, got 0"),
    ({"counts_per_rad": -1.0}, "option 'counts_per_rad' must be a positive number, got -1.0"),
    ({"velocity_per_rad_s": True}, "option 'velocity_per_rad_s' must be a positive number"),
    ({"rated_torque": "2"}, "option 'rated_torque' must be a positive number, got '2'"),
    ({"rated_torque": math.inf}, "option 'rated_torque' must be a positive number, got inf"),
])
def test_bad_unit_options_are_named(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        units_for(options, W)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{W}: ")


def test_the_default_place_of_a_unit_message() -> None:
    with pytest.raises(ConfigError, match=r"^CiA 402 actuator: option 'counts_per_rev'"):
        units_for({"counts_per_rev": -5})


@pytest.mark.parametrize(("value", "ok"), [(0, True), (10, True), (3, True), (-1, False),
                                           (11, False), (True, False), (2.0, False)])
def test_a_count_option_is_an_integer_in_0_to_10(value: object, ok: bool) -> None:
    if ok:
        assert _count({"sdo_retries": value}, "sdo_retries", W, 2) == value
    else:
        with pytest.raises(ConfigError, match=rf"^{re.escape(W)}: option 'sdo_retries' must be an "
                                              r"integer in 0\.\.10, got "):
            _count({"sdo_retries": value}, "sdo_retries", W, 2)
    assert _count({}, "sdo_retries", W, 2) == 2


def _spec(mode: ControlMode, **options: object) -> ActuatorSpec:
    return ActuatorSpec(id=3, mode=mode, options=options)


@pytest.mark.parametrize(("mode", "options", "code"), [
    (ControlMode.POSITION, {}, 8), (ControlMode.VELOCITY, {}, 9), (ControlMode.EFFORT, {}, 10),
    (ControlMode.POSITION, {"op_mode": "PP"}, 1), (ControlMode.VELOCITY, {"op_mode": "pv"}, 3),
    (ControlMode.EFFORT, {"op_mode": "pt"}, 4),
])
def test_the_mode_of_operation_follows_the_control_mode(
        mode: ControlMode, options: dict[str, object], code: int) -> None:
    assert op_mode_for(_spec(mode, **options), W) == code


def test_a_control_mode_a_drive_does_not_have_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        op_mode_for(_spec(ControlMode.IMPEDANCE), W)
    assert str(info.value) == (f"{W}: mode 'impedance' is not available on CiA 402 drives "
                               "(position, velocity or effort)")


def test_a_mode_of_operation_that_does_not_fit_is_refused() -> None:
    with pytest.raises(ConfigError, match=f"^{W}: op_mode 'csv' does not fit mode 'position'$"):
        op_mode_for(_spec(ControlMode.POSITION, op_mode="csv"), W)
    with pytest.raises(ConfigError, match=rf"^{W}: op_mode must be one of pp, pv, pt, csp, csv, "
                                          r"cst, got 'hm'$"):
        op_mode_for(_spec(ControlMode.POSITION, op_mode="hm"), W)


def test_cob_ids_are_predefined_unless_given() -> None:
    assert _cob_ids(_spec(ControlMode.POSITION), W) == {"rpdo1": 0x203, "tpdo1": 0x183,
                                                         "tpdo2": 0x283}
    given = _cob_ids(_spec(ControlMode.POSITION, cob_ids={"tpdo2": 0x381, "rpdo1": 0x081}), W)
    assert given == {"rpdo1": 0x081, "tpdo1": 0x183, "tpdo2": 0x381}
    assert _cob_ids(_spec(ControlMode.POSITION, cob_ids={"tpdo1": 0x7FF}), W)["tpdo1"] == 0x7FF


@pytest.mark.parametrize(("cob_ids", "message"), [
    ([0x181], r"option 'cob_ids' must be a mapping like \{rpdo1: 0x203\}, got \[385\]"),
    ({"tpdo3": 0x381}, "cob_ids key 'tpdo3' unknown; known: rpdo1, tpdo1, tpdo2"),
    ({"tpdo1": 0x80}, r"cob_ids tpdo1 must be an 11-bit COB-ID in 0x081\.\.0x7FF, got 128"),
    ({"tpdo1": 0x800}, "got 2048"),
    ({"tpdo1": True}, "got True"),
    ({"rpdo1": "0x203"}, "got '0x203'"),
])
def test_bad_cob_ids_are_named(cob_ids: object, message: str) -> None:
    with pytest.raises(ConfigError, match=f"^{W}: .*{message}"):
        _cob_ids(_spec(ControlMode.POSITION, cob_ids=cob_ids), W)


# --- the set-point and the PDOs, on a drive record without a bus ---------------------------

def _drive(kind: ControlMode, units: Units, limits: ActuatorLimits = NO_LIMITS,
           op_mode: int = 8, node: object = None) -> _Drive:
    spec = ActuatorSpec(id=3, mode=kind, limits=limits)
    return _Drive(spec, W, op_mode, kind, units, Path("drive.eds"), {}, node=node)


def _raw_target(d: _Drive, cmd: ActuatorCommand) -> int:
    return Cia402Bus._raw_target(cast("Cia402Bus", None), d, cmd)


# Bounds that sit on a tick as the drive's own arithmetic (counts / counts_per_rad) puts
# them a last bit above (upper) or below (lower) where the step arithmetic (counts * step)
# puts them: the nearest tick passes the bound by that bit, and the next tick inward is
# the one that keeps the decoded value inside.
UPPER_CASE = (7317.394029536203, 777197)
LOWER_CASE = (16842.140432378084, 878157)


def test_a_position_on_a_bound_is_sent_as_the_drive_decodes_it_inside() -> None:
    cpr, n = UPPER_CASE
    hi = n * (1.0 / cpr)
    units = Units(cpr, cpr)
    assert units.position(n) > hi  # the case: the tick itself decodes past the bound
    d = _drive(ControlMode.POSITION, units, ActuatorLimits(position=(-1e3, hi)))
    raw = _raw_target(d, ActuatorCommand(position=hi))
    assert raw == n - 1
    assert units.position(raw) <= hi
    cpr, n = LOWER_CASE
    lo = n * (1.0 / cpr)
    units = Units(cpr, cpr)
    assert units.position(n) < lo
    d = _drive(ControlMode.POSITION, units, ActuatorLimits(position=(lo, 1e3)))
    raw = _raw_target(d, ActuatorCommand(position=lo))
    assert raw == n + 1
    assert units.position(raw) >= lo


def test_targets_are_scaled_saturated_and_clamped_to_the_field() -> None:
    units = Units(counts_per_rad=1000.0, velocity_per_rad_s=100.0, rated_torque=2.0)
    d = _drive(ControlMode.POSITION, units, ActuatorLimits(position=(-1.0, 1.0)))
    assert _raw_target(d, ActuatorCommand(position=0.5)) == 500
    assert _raw_target(d, ActuatorCommand(position=5.0)) == 1000
    assert _raw_target(d, ActuatorCommand(position=-5.0)) == -1000
    v = _drive(ControlMode.VELOCITY, units, ActuatorLimits(velocity=(-2.0, 3.0)))
    assert _raw_target(v, ActuatorCommand(velocity=-2.5)) == -200
    assert _raw_target(v, ActuatorCommand(velocity=2.0)) == 200
    e = _drive(ControlMode.EFFORT, units, ActuatorLimits(effort=(-1.0, 1.95)))
    assert _raw_target(e, ActuatorCommand(effort=0.5)) == 250  # per mille of 2 N m
    assert _raw_target(e, ActuatorCommand(effort=1.9)) == 950
    assert _raw_target(e, ActuatorCommand(effort=9.0)) == 975
    # Without limits: the field's own range (a 16-bit torque, a 32-bit position).
    free = _drive(ControlMode.EFFORT, Units(1.0, 1.0, 0.001))
    assert _raw_target(free, ActuatorCommand(effort=1e9)) == 2**15 - 1
    free = _drive(ControlMode.POSITION, Units(1.0, 1.0))
    assert _raw_target(free, ActuatorCommand(position=-1e12)) == -(2**31)


@pytest.mark.parametrize(("kind", "cmd", "name"), [
    (ControlMode.POSITION, ActuatorCommand(position=math.nan), "position nan"),
    (ControlMode.VELOCITY, ActuatorCommand(velocity=math.inf), "velocity inf"),
    (ControlMode.EFFORT, ActuatorCommand(effort=-math.inf), "effort -inf"),
])
def test_a_target_that_is_not_a_number_is_refused(kind: ControlMode, cmd: ActuatorCommand,
                                                  name: str) -> None:
    d = _drive(kind, Units(1.0, 1.0, 1.0))
    with pytest.raises(ProtocolError, match=f"^{re.escape(W)}: {name} is not a finite number$"):
        _raw_target(d, cmd)


class _Var:
    def __init__(self, index: int = 0, raw: int = 0) -> None:
        self.index = index
        self.raw = raw


class _Node:
    def __init__(self) -> None:
        self.rpdo = {1: {0x6040: _Var(), 0x607A: _Var(), 0x60FF: _Var(), 0x6071: _Var()}}


def _owner(clock: float = 12.5, waiting: set[int] | None = None) -> Any:
    return SimpleNamespace(_cond=threading.Condition(), clock=lambda: clock,
                           _waiting=set() if waiting is None else waiting)


class _Pdo(list):
    """A received TPDO's variables, as canopen's PdoMap iterates them (no stamp here)."""

    timestamp = None


def _fill(d: _Drive) -> tuple[int, int]:
    Cia402Bus._fill_rpdo(_owner(), d)
    pdo = d.node.rpdo[1]
    return pdo[0x6040].raw, pdo[{ControlMode.POSITION: 0x607A, ControlMode.VELOCITY: 0x60FF,
                                 ControlMode.EFFORT: 0x6071}[d.kind]].raw


def test_rpdo1_carries_the_controlword_and_the_target() -> None:
    d = _drive(ControlMode.VELOCITY, Units(1.0, 1.0), op_mode=9, node=_Node())
    d.controlword, d.target = 0x0F, -40
    assert _fill(d) == (0x0F, -40)
    assert d.sent_enable
    d.controlword, d.target = 0x06, None  # shut down, no target yet: 0
    assert _fill(d) == (0x06, 0)
    assert not d.sent_enable
    d.controlword, d.target = 0x07, 5  # switched on, not enabled
    assert _fill(d)[0] == 0x07
    assert not d.sent_enable


def test_rpdo1_never_enables_after_a_quick_stop() -> None:
    d = _drive(ControlMode.POSITION, Units(1.0, 1.0), node=_Node())
    d.controlword, d.target, d.quick_stop = 0x0F, 7, True
    assert _fill(d) == (0x02, 7)
    assert not d.sent_enable


def test_profile_position_sets_change_immediately_and_the_new_set_point_bit() -> None:
    d = _drive(ControlMode.POSITION, Units(1.0, 1.0), op_mode=1, node=_Node())
    d.controlword, d.target = 0x0F, 100
    assert _fill(d)[0] == 0x0F | 0x20
    d.setpoint_bit = True
    assert _fill(d)[0] == 0x0F | 0x20 | 0x10
    assert d.sent_enable
    d.controlword = 0x06  # not enabled: no set-point bits
    assert _fill(d)[0] == 0x06
    cyclic = _drive(ControlMode.POSITION, Units(1.0, 1.0), op_mode=8, node=_Node())
    cyclic.controlword, cyclic.target, cyclic.setpoint_bit = 0x0F, 100, True
    assert _fill(cyclic)[0] == 0x0F


def test_a_tpdo_stores_its_values_and_stamps_the_drive() -> None:
    d = _drive(ControlMode.POSITION, Units(1.0, 1.0))
    owner = _owner(clock=3.25, waiting={3, 4})
    on_tpdo = Cia402Bus._tpdo_callback(owner, d, 1)
    on_tpdo(_Pdo([_Var(0x6041, 0x27), _Var(0x6064, 1234)]))
    assert d.values == {0x6041: 0x27, 0x6064: 1234}
    assert d.received == {1}
    assert d.stamp == 3.25
    assert not d.quick_stop
    assert owner._waiting == {3, 4}  # TPDO1 alone: still waited for
    Cia402Bus._tpdo_callback(owner, d, 2)(_Pdo([_Var(0x606C, -5)]))
    assert d.received == {1, 2}
    assert owner._waiting == {4}


def test_only_tpdo2_does_not_complete_a_round() -> None:
    d = _drive(ControlMode.POSITION, Units(1.0, 1.0))
    owner = _owner(waiting={3})
    Cia402Bus._tpdo_callback(owner, d, 2)(_Pdo([_Var(0x606C, -5)]))
    assert owner._waiting == {3}


def test_a_quick_stop_statusword_is_latched_unless_enabling() -> None:
    d = _drive(ControlMode.POSITION, Units(1.0, 1.0))
    Cia402Bus._tpdo_callback(_owner(), d, 1)(_Pdo([_Var(0x6041, 0x07)]))
    assert d.quick_stop
    e = _drive(ControlMode.POSITION, Units(1.0, 1.0))
    e.enabling = True
    Cia402Bus._tpdo_callback(_owner(), e, 1)(_Pdo([_Var(0x6041, 0x07)]))
    assert not e.quick_stop


def test_a_failing_tpdo_is_logged_and_does_not_raise(caplog: pytest.LogCaptureFixture) -> None:
    d = _drive(ControlMode.POSITION, Units(1.0, 1.0))

    class _Bad:
        index = 0x6041

        @property
        def raw(self) -> int:
            raise RuntimeError("no value")

    Cia402Bus._tpdo_callback(_owner(), d, 1)(_Pdo([_Bad()]))
    assert [r.getMessage() for r in caplog.records] == ["TPDO handling failed"]
    assert d.received == set()
