"""The hardware YAML: form, file:line errors, binding to the model, limit overrides."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.config import (
    ReconnectPolicy,
    SafeState,
    load_hardware_config,
    parse_hardware_config,
)
from skel_ros.hardware.errors import ConfigError
from skel_ros.model import load_skel

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"

BASE = """\
buses:
  b:
    protocol: dynamixel
    transport: {port: /dev/null, baudrate: 57600}
joints:
  shoulder_yaw:
    bus: b
    id: 1
"""


@pytest.fixture(scope="module")
def arm():
    return load_skel(ARM).skeletons[0]


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_hardware_config(text, "hw.yaml")
    return str(info.value)


def test_bundled_arm_config_binds_to_the_arm(arm) -> None:
    cfg = load_hardware_config(ARM_YAML)
    bound = cfg.bind(cfg.select_skeleton(load_skel(ARM)))
    assert bound.names == ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
    assert bound.unmapped == ()
    assert [j.actuator.id for j in bound.mappings()] == [1, 2, 3, 4]
    assert cfg.buses[0].protocol == "dynamixel"
    assert cfg.safe_state is SafeState.HOLD
    # Inline overrides tighten the model's limits; untouched DOFs keep the model's.
    assert bound.limits["shoulder_pitch"].position_lower == -1.5
    assert bound.limits["wrist"].velocity_upper == 4.0
    assert bound.limits["elbow"].position_upper == arm.dof("elbow").position_upper


def test_defaults_and_fields() -> None:
    cfg = parse_hardware_config(BASE, "hw.yaml")
    assert cfg.control_rate == 200.0
    assert cfg.command_timeout == 0.5
    assert cfg.safe_state is SafeState.HOLD
    assert cfg.auto_resume is False
    assert cfg.reenable_velocity == 0.2
    assert parse_hardware_config("reenable_velocity: 1\n" + BASE).reenable_velocity == 1.0
    assert cfg.write_on_command is True
    assert parse_hardware_config("write_on_command: false\n" + BASE).write_on_command is False
    assert cfg.reconnect == ReconnectPolicy()
    j = cfg.joints[0]
    assert (j.name, j.bus, j.actuator.id, j.actuator.mode) == (
        "shoulder_yaw", "b", 1, ControlMode.POSITION)
    assert j.line == 6
    assert cfg.buses[0].transport["baudrate"] == 57600


def test_mapping_math_round_trips() -> None:
    text = BASE + "    direction: -1\n    gear_ratio: 2.5\n    zero_offset: 0.3\n"
    j = parse_hardware_config(text).joints[0]
    assert j.to_actuator(0.0) == pytest.approx(0.3)
    assert j.to_actuator(1.0) == pytest.approx(0.3 - 2.5)
    assert j.from_actuator(j.to_actuator(0.7)) == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "hw.yaml:1: empty document"),
        ("buses: [\n", "hw.yaml:2: invalid YAML"),
        (BASE + "    idd: 3\n", "hw.yaml:9: unknown key 'idd' in joint 'shoulder_yaw'"),
        (BASE + "    id: 2\n", "hw.yaml:9: duplicate key 'id' (first on line 8)"),
        (BASE + "    direction: 2\n", "hw.yaml:9: joint 'shoulder_yaw' direction must be 1 or -1"),
        (BASE + "    gear_ratio: 0\n", "hw.yaml:9: joint 'shoulder_yaw' gear_ratio must be > 0"),
        (BASE + "    zero_offset: .nan\n", ("hw.yaml:9: joint 'shoulder_yaw' zero_offset must be"
                                          " finite")),
        (BASE + "    mode: torque\n", "hw.yaml:9: joint 'shoulder_yaw' mode must be one of"),
        (BASE + "    mode: impedance\n", ("hw.yaml:9: joint 'shoulder_yaw': mode 'impedance' is"
                                            " not one of protocol 'dynamixel''s modes"
                                            " (position, velocity, effort)")),
        (BASE + "    protocol: mit\n", "hw.yaml:9: joint 'shoulder_yaw': protocol 'mit' but bus"),
        (BASE.replace("bus: b", "bus: c"), "hw.yaml:7: joint 'shoulder_yaw': unknown bus 'c'"),
        (BASE.replace("    id: 1\n", "    id: -1\n"), ("hw.yaml:8: joint 'shoulder_yaw' id must"
                                                     " be an integer in 0..252")),
        (BASE.replace("    id: 1\n", ""), "hw.yaml:7: joint 'shoulder_yaw' has no 'id'"),
        (BASE.replace("dynamixel", "ethercat"), ("hw.yaml:3: bus 'b': unknown protocol"
                                                " 'ethercat'")),
        (BASE.replace("    transport: {port: /dev/null, baudrate: 57600}\n", ""),
         "hw.yaml:2: bus 'b' has no 'transport'"),
        (BASE + "  elbow:\n    bus: b\n    id: 1\n",
         "hw.yaml:9: joint 'elbow': bus 'b' id 1 is already used by 'shoulder_yaw' (line 6)"),
        ("control_rate: -5\n" + BASE, "hw.yaml:1: configuration control_rate must be > 0"),
        ("control_rate: 1.0e+9\n" + BASE, "hw.yaml:1: control_rate 1e+09 Hz is above"),
        ("safe_state: limp\n" + BASE, ("hw.yaml:1: configuration safe_state must be one of"
                                      " hold | torque_off")),
        ("auto_resume: 1\n" + BASE, ("hw.yaml:1: configuration auto_resume must be true or"
                                    " false")),
        ("write_on_command: later\n" + BASE, ("hw.yaml:1: configuration write_on_command must"
                                             " be true or false")),
        ("reenable_velocity: 0\n" + BASE, ("hw.yaml:1: configuration reenable_velocity must"
                                          " be > 0")),
        ("reenable_velocity: 1.5\n" + BASE, ("hw.yaml:1: configuration reenable_velocity must"
                                            " be in (0, 1] (a fraction of the velocity"
                                            " limits), got 1.5")),
        ("reconnect: {initial_delay: 1, max_delay: 0.5}\n" + BASE,
         "hw.yaml:1: reconnect max_delay 0.5 is below initial_delay 1"),
        ("control_rat: 100\n" + BASE, ("hw.yaml:1: unknown key 'control_rat' in the top level;"
                                      " did you mean 'control_rate'?")),
        (BASE + "    limits: {position: 3}\n", ("hw.yaml:9: joint 'shoulder_yaw' limits:"
                                              " DOF 'shoulder_yaw': position must be a mapping")),
        (BASE + "    limits: {force: 3}\n", "hw.yaml:9: joint 'shoulder_yaw' limits:"),
        ("buses: {}\njoints: {}\n", "hw.yaml:1: 'buses' is empty"),
    ],
)
def test_errors_name_the_line(text: str, expected: str) -> None:
    assert expected in _error(text)


def test_the_old_spelling_of_impedance_mode_is_read_with_a_warning() -> None:
    """``mode: mit`` (a protocol's name, before the mode was named for what it is) still
    works where ``impedance`` does, and says at its line what to write instead."""
    text = BASE.replace("protocol: dynamixel", "protocol: mit").replace(
        "{port: /dev/null, baudrate: 57600}", "{interface: virtual}") + (
        "    model: AK80-9\n    mode: mit\n    options: {kp: 10.0}\n")
    with pytest.warns(FutureWarning, match=r"hw.yaml:10: joint 'shoulder_yaw': mode 'mit' is"
                                           r" deprecated; write 'impedance'"):
        joint = parse_hardware_config(text, "hw.yaml").joints[0]
    assert joint.actuator.mode is ControlMode.IMPEDANCE


def test_unknown_dof_names_the_line_and_suggests(arm) -> None:
    cfg = parse_hardware_config(BASE + "  elbw:\n    bus: b\n    id: 2\n", "hw.yaml")
    with pytest.raises(ConfigError, match=r"hw.yaml:9: 'elbw' is not a DOF of skeleton 'arm';"
                                          r" did you mean 'elbow'\?"):
        cfg.bind(arm)


def test_multi_dof_joint_name_asks_for_dof_names() -> None:
    world = load_skel(REPO / "test" / "hardware" / "data" / "ball_arm.skel")
    skel = world.skeletons[0]
    text = BASE.replace("shoulder_yaw", "ball")
    cfg = parse_hardware_config(text, "hw.yaml")
    with pytest.raises(ConfigError, match=r"hw.yaml:6: 'ball' is not a DOF.*joint 'ball' has 3"
                                          r" DOFs, map each by name: 'ball_x'"):
        cfg.bind(skel)
    ok = parse_hardware_config(text.replace("  ball:", "  ball_y:"), "hw.yaml").bind(skel)
    assert ok.names == ("ball_y",)
    assert ok.unmapped == ("ball_x", "ball_z", "tip")


def test_unmapped_dofs_are_listed(arm) -> None:
    bound = parse_hardware_config(BASE).bind(arm)
    assert bound.unmapped == ("shoulder_pitch", "elbow", "wrist")


def test_limit_overrides_only_tighten(arm) -> None:
    wider = BASE + "    limits:\n      position: {lower: -1.0, upper: 9.0}\n"
    cfg = parse_hardware_config(wider, "hw.yaml")
    with pytest.raises(ConfigError, match=r"hw.yaml:10: DOF 'shoulder_yaw': position upper 9 is"
                                          r" wider than the current limit 2.6"):
        cfg.bind(arm)
    tighter = BASE + "    limits:\n      velocity: 1.0\n      effort: {upper: 0.5}\n"
    limits = parse_hardware_config(tighter, "hw.yaml").bind(arm).limits
    assert limits["shoulder_yaw"].velocity_lower == -1.0
    assert limits["shoulder_yaw"].effort_upper == 0.5
    assert limits["shoulder_yaw"].effort_lower == -1.5


def test_limits_file_is_applied_relative_to_the_config(tmp_path: Path, arm) -> None:
    (tmp_path / "lim.yaml").write_text("joints:\n  elbow:\n    position: {upper: 1.0}\n")
    (tmp_path / "hw.yaml").write_text("limits_file: lim.yaml\n" + BASE)
    limits = load_hardware_config(tmp_path / "hw.yaml").bind(arm).limits
    assert limits["elbow"].position_upper == 1.0
    (tmp_path / "lim.yaml").write_text("joints:\n  elbow:\n    position: {upper: 5.0}\n")
    with pytest.raises(ConfigError, match=r"lim.yaml:3: DOF 'elbow': position upper 5"):
        load_hardware_config(tmp_path / "hw.yaml").bind(arm)
    (tmp_path / "lim.yaml").write_text("joints: [\n")
    with pytest.raises(ConfigError, match=r"hw.yaml:1: limits_file: .*lim.yaml:2: invalid YAML"):
        load_hardware_config(tmp_path / "hw.yaml")


def test_unreadable_file() -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read hardware configuration"):
        load_hardware_config("nope.yaml")


def test_transport_overrides() -> None:
    text = BASE.replace("joints:", "  legs:\n    protocol: mit\n    transport: {interface:"
                        " socketcan, channel: can0}\njoints:")
    cfg = parse_hardware_config(text)
    moved = cfg.with_overrides(port="/dev/ttyACM3", can_interface="virtual", can_channel="v1")
    assert moved.bus("b").transport["port"] == "/dev/ttyACM3"
    assert moved.bus("b").transport["baudrate"] == 57600
    assert dict(moved.bus("legs").transport) == {"interface": "virtual", "channel": "v1"}
    assert cfg.with_overrides() == cfg
    emulated = cfg.with_transport("b", {"port": "/dev/pts/9"})
    assert dict(emulated.bus("b").transport) == {"port": "/dev/pts/9"}
    with pytest.raises(KeyError):
        cfg.with_transport("nope", {})


def test_reconnect_backoff_grows_to_its_maximum() -> None:
    policy = ReconnectPolicy(initial_delay=0.1, max_delay=1.0, factor=2.0)
    delays = [policy.delay(i) for i in range(6)]
    assert delays[:4] == pytest.approx([0.1, 0.2, 0.4, 0.8])
    assert delays[4:] == [1.0, 1.0]
    assert math.isfinite(policy.delay(10_000))


BUS_TEXT = """\
buses:
  b:
    protocol: {protocol}
    transport: {transport}
    options: {options}
joints:
  elbow: {{bus: b, id: 1}}
"""


@pytest.mark.parametrize(("protocol", "transport"), [
    ("dynamixel", "{port: /dev/null, baudrate: fast}"),
    ("dynamixel", "{port: /dev/null, baudrate: -9600}"),
    ("mit", "{interface: virtual, channel: x, bitrate: 1.5}"),
])
def test_rates_in_the_yaml_are_checked_with_their_line(protocol: str, transport: str) -> None:
    text = BUS_TEXT.format(protocol=protocol, transport=transport, options="{}")
    with pytest.raises(ConfigError, match=r"^hw\.yaml:4: bus 'b' transport (baud|bit)rate must"):
        parse_hardware_config(text, "hw.yaml")


def test_driver_settings_errors_name_the_bus_line(arm) -> None:
    from skel_ros.hardware.backend import HardwareBackend

    text = BUS_TEXT.format(protocol="dynamixel", transport="{port: /dev/null}",
                           options="{fast_sync_read: sometimes}")
    bound = parse_hardware_config(text, "hw.yaml").bind(arm)
    with pytest.raises(ConfigError, match=r"^hw\.yaml:2: .*fast_sync_read"):
        HardwareBackend(bound)


def test_actuator_limits_follow_the_mapping(arm) -> None:
    text = """\
buses:
  b: {protocol: dynamixel, transport: {port: /dev/null}}
joints:
  elbow: {bus: b, id: 1, direction: -1, gear_ratio: 2.0, zero_offset: 0.5}
"""
    bound = parse_hardware_config(text, "hw.yaml").bind(arm)
    act = bound.actuators()[0]
    lim = bound.limits["elbow"]
    lo, hi = lim.position_lower, lim.position_upper
    assert act.limits.position == (0.5 - 2.0 * hi, 0.5 - 2.0 * lo)
    assert act.limits.velocity == (-2.0 * lim.velocity_upper, -2.0 * lim.velocity_lower)
    assert act.limits.effort == (-lim.effort_upper / 2.0, -lim.effort_lower / 2.0)


def test_device_watchdog_defaults_to_control_periods() -> None:
    text = BUS_TEXT.format(protocol="dynamixel", transport="{port: /dev/null}", options="{}")
    assert parse_hardware_config(text).buses[0].device_watchdog == 0.25
    slow = "control_rate: 20.0\n" + text
    assert parse_hardware_config(slow).buses[0].device_watchdog == 0.5
    off = "device_watchdog: 0\ntimeout_margin: 0.2\n" + text
    spec = parse_hardware_config(off).buses[0]
    assert (spec.device_watchdog, spec.timeout_margin) == (0.0, 0.2)


TWO_BUSES = """\
buses:
  a:
    protocol: {protocol}
    transport: {first}
  b:
    protocol: {protocol}
    transport:
      {second}
joints:
  shoulder_yaw: {{bus: a, id: 1}}
  elbow: {{bus: b, id: 2}}
"""


@pytest.mark.parametrize(("protocol", "first", "second", "device"), [
    ("dynamixel", "{port: /dev/ttyUSB0}", "port: /dev/ttyUSB0", "port '/dev/ttyUSB0'"),
    ("dynamixel", "{port: /dev/ttyUSB0, baudrate: 57600}", "port: /dev//ttyUSB0",
     "port '/dev/ttyUSB0'"),
    ("dynamixel", "{port: 'socket://host:7'}", "port: 'socket://host:7'",
     "port 'socket://host:7'"),
])
def test_two_buses_on_one_serial_port_are_refused(protocol: str, first: str, second: str,
                                                  device: str) -> None:
    """Before: accepted in silence, and the two drivers fought over one port."""
    text = TWO_BUSES.format(protocol=protocol, first=first, second=second)
    assert _error(text) == (f"hw.yaml:8: bus 'b' is on {device}, as bus 'a' (line 4) is: two"
                            " buses cannot share one device; map their actuators to one bus")


@pytest.mark.parametrize(("protocol", "transport", "device"), [
    ("mit", "{interface: socketcan, channel: can0}", "CAN interface 'socketcan' channel 'can0'"),
    ("canopen", "{interface: virtual}", "CAN interface 'virtual' channel (default)"),
])
def test_buses_on_one_can_wire_share_it_with_distinct_ids(protocol: str, transport: str,
                                                          device: str) -> None:
    """A CAN channel is one wire: two buses on it are fine, one id twice on it is not."""
    text = TWO_BUSES.format(protocol=protocol, first=transport, second=transport)
    assert [b.name for b in parse_hardware_config(text, "hw.yaml").buses] == ["a", "b"]
    assert _error(text.replace("{bus: b, id: 2}", "{bus: b, id: 1}")) == (
        f"hw.yaml:11: joint 'elbow': {device} id 1 is already used by 'shoulder_yaw'"
        " (line 10)")


@pytest.mark.parametrize(("protocol", "first", "second"), [
    ("dynamixel", "{port: /dev/ttyUSB0}", "port: /dev/ttyUSB1"),
    ("dynamixel", "{port: 'loop://'}", "port: 'loop://'"),  # a new loopback at each open
    ("mit", "{interface: socketcan, channel: can0}", "{interface: socketcan, channel: can1}"),
    ("mit", "{interface: socketcan, channel: can0}", "{interface: virtual, channel: can0}"),
])
def test_buses_on_different_devices_are_accepted(protocol: str, first: str,
                                                 second: str) -> None:
    text = TWO_BUSES.format(protocol=protocol, first=first, second=second)
    assert [b.name for b in parse_hardware_config(text, "hw.yaml").buses] == ["a", "b"]


@pytest.mark.parametrize(("protocol", "transport", "bad", "good", "valid"), [
    ("dynamixel", "{port: /dev/null}", 253, 252, "0..252"),  # 253 reserved, 254 broadcast
    ("dynamixel", "{port: /dev/null}", 300, 0, "0..252"),
    ("canopen", "{interface: virtual}", 0, 1, "1..127"),
    ("canopen", "{interface: virtual}", 128, 127, "1..127"),
    ("mit", "{interface: virtual}", 0x7FF, 0x7FE, "1..2046"),
])
def test_ids_outside_the_protocols_range_are_refused_at_their_line(
        protocol: str, transport: str, bad: int, good: int, valid: str) -> None:
    """Before: id 300 on a Dynamixel bus passed loading and binding; only the driver refused
    it, at the bus's line."""
    text = (f"buses:\n  b:\n    protocol: {protocol}\n    transport: {transport}\n"
            "joints:\n  elbow:\n    bus: b\n    id: ID\n")
    assert _error(text.replace("ID", str(bad))) == (
        f"hw.yaml:8: joint 'elbow' id must be an integer in {valid} (the ids protocol"
        f" {protocol!r} can address), got {bad}")
    assert parse_hardware_config(text.replace("ID", str(good))).joints[0].actuator.id == good


DXL_RATES = (9600, 57600, 115200, 1_000_000, 2_000_000, 3_000_000, 4_000_000, 4_500_000)


@pytest.mark.parametrize("baudrate", [1234, 1_000_001, 19200, 10_500_000])
def test_a_baud_rate_the_servos_cannot_run_at_is_refused_at_its_line(baudrate: int) -> None:
    """Before: accepted at load and by the manager; the servos would never answer."""
    text = BASE.replace("    transport: {port: /dev/null, baudrate: 57600}\n",
                        f"    transport:\n      port: /dev/null\n      baudrate: {baudrate}\n")
    assert _error(text) == (
        f"hw.yaml:6: bus 'b' transport baudrate {baudrate} is not one dynamixel devices can"
        " be set to; valid: 9600, 57600, 115200, 1000000, 2000000, 3000000, 4000000, 4500000")


@pytest.mark.parametrize("baudrate", DXL_RATES)
def test_the_x_series_baud_rates_are_accepted(baudrate: int) -> None:
    text = BASE.replace("57600", str(baudrate))
    assert parse_hardware_config(text).buses[0].transport["baudrate"] == baudrate
