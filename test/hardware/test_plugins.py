"""Protocols as plugins: the built-in ones, and one the test suite registers by entry point.

``loopback_protocol.py`` (next to this file) is a small protocol with its own emulator.
The ``loopback`` fixture registers it the way an installed distribution would: a
``*.dist-info`` directory whose ``entry_points.txt`` names it in the group
``skel_ros.protocols`` and its emulator in the group ``skel_ros.emulators``, put on
``sys.path`` here and on ``PYTHONPATH`` for child processes.
Nothing in ``skel_ros`` names it; the hardware node, ``skel-ros scan`` and ``skel-ros
emulate`` drive it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from polling import spin_until
from service_call import spin_call

from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.config import parse_hardware_config
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.plugins import (
    BUILTIN,
    TransportKind,
    bus_class,
    protocol,
    protocol_names,
)

if TYPE_CHECKING:
    from collections.abc import Callable

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ARM = REPO / "examples" / "arm.skel"
ARM_YAML = REPO / "config" / "hardware" / "arm_dynamixel.yaml"


def _dist_info(site: Path, name: str, entry_points: str) -> None:
    """A minimal installed distribution: METADATA and entry_points.txt."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


@pytest.fixture
def loopback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Register ``loopback`` by entry point here; return the environment for children."""
    site = tmp_path / "site"
    _dist_info(site, "skel_ros_loopback",
               "[skel_ros.protocols]\nloopback = loopback_protocol:PLUGIN\n"
               "[skel_ros.emulators]\nloopback = loopback_protocol:start_emulator\n")
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.syspath_prepend(str(site))
    path = os.pathsep.join(p for p in (str(site), str(HERE), os.environ.get("PYTHONPATH"))
                           if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


# --------------------------------------------------------------------------- the registry


def test_builtin_protocols_are_plugins_with_their_facts() -> None:
    """What the three registries held before is now each plugin's (the same values)."""
    assert set(BUILTIN) <= set(protocol_names())
    facts = {name: (p.bus_class.__name__, p.transport, p.id_range, p.scan_ids, p.scan_timeout,
                    p.modes[0])
             for name in BUILTIN for p in [protocol(name)]}
    assert facts == {
        "dynamixel": ("DynamixelBus", TransportKind.SERIAL, (0, 252), "0-252", 0.01,
                      ControlMode.POSITION),
        "canopen": ("Cia402Bus", TransportKind.CAN, (1, 127), "1-127", 0.05,
                    ControlMode.POSITION),
        "mit": ("MitBus", TransportKind.CAN, (1, 0x7FE), "1-32", 0.05, ControlMode.IMPEDANCE),
        "feetech": ("FeetechBus", TransportKind.SERIAL, (0, 253), "0-253", 0.01,
                    ControlMode.POSITION),
    }
    # The X series' Baud Rate (8) values 0..7 (ROBOTIS e-Manual); CAN bitrates are the
    # interface's setting (python-can's argument), no protocol fact: any positive one.
    assert protocol("dynamixel").rates == (9600, 57600, 115200, 1_000_000, 2_000_000,
                                           3_000_000, 4_000_000, 4_500_000)
    assert protocol("canopen").rates == protocol("mit").rates == ()
    assert ControlMode.IMPEDANCE not in protocol("dynamixel").modes
    assert ControlMode.IMPEDANCE not in protocol("canopen").modes
    for name in BUILTIN:
        assert bus_class(name).protocol == name


def test_the_dynamixel_driver_refuses_exactly_the_ids_its_plugin_refuses() -> None:
    """One id range: the plugin's (what the YAML reader checks) is the driver's."""
    from skel_ros.hardware.base import ActuatorSpec, BusSpec

    plugin = protocol("dynamixel")
    lowest, highest = plugin.id_range
    spec = BusSpec("b", "dynamixel", {"port": "/dev/null"})

    def actuator(dxl_id: int) -> list[ActuatorSpec]:
        return [ActuatorSpec(id=dxl_id, mode=ControlMode.POSITION)]

    for dxl_id in (lowest, highest):
        plugin.bus_class(spec, actuator(dxl_id))
    for dxl_id in (lowest - 1, highest + 1):
        with pytest.raises(ConfigError, match=rf"Dynamixel ids are {lowest}\.\.{highest}"):
            plugin.bus_class(spec, actuator(dxl_id))


def test_transport_kinds_name_their_rate_and_their_device() -> None:
    serial, can = TransportKind.SERIAL, TransportKind.CAN
    assert (serial.rate_key, can.rate_key) == ("baudrate", "bitrate")
    assert serial.device({"port": "/dev//ttyUSB0/", "baudrate": 57600}) == "port '/dev/ttyUSB0'"
    assert serial.device({"port": "rfc2217://host:7"}) == "port 'rfc2217://host:7'"
    assert serial.device({"port": "loop://"}) is None  # a new loopback at each open
    assert serial.device({}) is None
    assert can.device({"interface": "pcan", "channel": 0}) == "CAN interface 'pcan' channel '0'"
    assert can.device({}) == "CAN interface (default) channel (default)"


def test_listing_imports_no_protocol_and_a_missing_can_library_spares_dynamixel() -> None:
    """Names come without imports; a Dynamixel robot loads and binds with python-can and
    canopen missing, and no CAN protocol's module is imported on the way."""
    code = textwrap.dedent(f"""
        import sys
        sys.modules["can"] = None
        sys.modules["canopen"] = None
        from skel_ros.hardware.plugins import protocol_names
        assert {{"dynamixel", "canopen", "mit"}} <= set(protocol_names())
        loaded = [m for m in sys.modules if m.startswith(("skel_ros.hardware.dynamixel",
                  "skel_ros.hardware.mit", "skel_ros.hardware.canopen402"))]
        assert not loaded, loaded
        from skel_ros.hardware import HardwareBackend, load_hardware_config
        from skel_ros.model import load_skel
        config = load_hardware_config({str(ARM_YAML)!r})
        backend = HardwareBackend(config.bind(config.select_skeleton(load_skel({str(ARM)!r}))))
        assert backend.names
        can = [m for m in sys.modules if m.startswith(("skel_ros.hardware.mit",
               "skel_ros.hardware.canopen402", "skel_ros.hardware.can_transport"))]
        assert not can, can
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "ok"


def test_registry_errors_are_clear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   loopback: dict[str, str]) -> None:
    assert "loopback" in protocol_names()
    with pytest.raises(ConfigError, match="unknown protocol 'nope'; known: canopen, dynamixel,"
                                          " feetech, loopback, mit"):
        protocol("nope")
    other = tmp_path / "other"
    _dist_info(other, "clash", "[skel_ros.protocols]\nloopback = elsewhere:PLUGIN\n"
                               "broken = loopback_protocol:scan\n"
                               "absent = no_such_module_here:PLUGIN\n")
    monkeypatch.syspath_prepend(str(other))
    with pytest.raises(ConfigError, match=r"protocol 'loopback' is registered more than once"
                                          r" \(entry-point group skel_ros.protocols\): "):
        protocol("loopback")
    with pytest.raises(ConfigError, match="loopback_protocol:scan is <function scan"):
        protocol("broken")
    with pytest.raises(ConfigError, match="protocol 'absent' is not available: No module"):
        protocol("absent")


# --------------------------------------------------------------------------- the YAML


DXL = """\
buses:
  b:
    protocol: dynamixel
    transport: {port: /dev/null}
    options:
      fast_sync_read: true
      fast_sync_red: true
joints:
  shoulder_yaw: {bus: b, id: 1}
"""

MIT = """\
buses:
  legs:
    protocol: mit
    transport: {interface: virtual}
joints:
  shoulder_yaw:
    bus: legs
    id: 1
    model: AK80-9
    mode: impedance
    options:
      kp: 20.0
      kdd: 1.0
"""


@pytest.mark.parametrize(("text", "message"), [
    (DXL, ("hw.yaml:7: bus 'b' options: unknown dynamixel option 'fast_sync_red'; did you"
           " mean 'fast_sync_read'?")),
    (MIT, ("hw.yaml:13: joint 'shoulder_yaw' options: unknown mit option 'kdd'; did you mean"
           " 'kd'?")),
    (MIT.replace("kdd", "zz"), ("hw.yaml:13: joint 'shoulder_yaw' options: unknown mit option"
                                " 'zz'; it knows kd, kd_max, kd_min, kp,")),
])
def test_unknown_options_are_reported_with_their_line(text: str, message: str) -> None:
    """Before the option schemas, the MIT motor's misspelt 'kdd' was accepted in silence
    (and its kd left at 0), the Dynamixel one was found only when the driver was built,
    without a line."""
    with pytest.raises(ConfigError) as info:
        parse_hardware_config(text, "hw.yaml")
    assert str(info.value).startswith(message), str(info.value)


def test_modes_come_from_the_plugin(loopback: dict[str, str]) -> None:
    text = ("buses:\n  line:\n    protocol: loopback\n    transport: {port: /dev/null}\n"
            "joints:\n  elbow:\n    bus: line\n    id: 3\n    mode: velocity\n")
    with pytest.raises(ConfigError, match=r"hw.yaml:9: joint 'elbow': mode 'velocity' is not"
                                          r" one of protocol 'loopback''s modes \(position\)"):
        parse_hardware_config(text, "hw.yaml")
    config = parse_hardware_config(text.replace("velocity", "position"), "hw.yaml")
    assert config.joints[0].actuator.mode is ControlMode.POSITION
    # A serial plugin's buses take the launch file's port override, as Dynamixel's do.
    assert config.with_overrides(port="/dev/ttyX").buses[0].transport == {"port": "/dev/ttyX"}


def test_ids_and_rates_come_from_the_plugin(loopback: dict[str, str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A third-party protocol's id range is checked at load, at the line of ``id:`` (before:
    only its driver could refuse an id); its rates only when it declares them."""
    text = ("buses:\n  line:\n    protocol: loopback\n"
            "    transport: {port: /dev/null, baudrate: 1234}\n"
            "joints:\n  elbow:\n    bus: line\n    id: 100\n")
    with pytest.raises(ConfigError) as info:
        parse_hardware_config(text, "hw.yaml")
    assert str(info.value) == ("hw.yaml:8: joint 'elbow' id must be an integer in 1..99 (the"
                               " ids protocol 'loopback' can address), got 100")
    text = text.replace("id: 100", "id: 99")
    assert parse_hardware_config(text, "hw.yaml").buses[0].transport["baudrate"] == 1234
    import skel_ros.hardware.config as config_module

    rated = replace(protocol("loopback"), rates=(1200, 2400))
    monkeypatch.setattr(config_module, "protocol",
                        lambda name: rated if name == "loopback" else protocol(name))
    with pytest.raises(ConfigError) as info:
        parse_hardware_config(text, "hw.yaml")
    assert str(info.value) == ("hw.yaml:4: bus 'line' transport baudrate 1234 is not one"
                               " loopback devices can be set to; valid: 1200, 2400")


# --------------------------------------------------------------------------- the commands


def _skel_ros(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skel_ros.cli.main", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120, check=False)


def test_emulate_and_scan_commands_drive_a_registered_protocol(
        loopback: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    from skel_ros_in_process import skel_ros_main

    proc = subprocess.Popen([sys.executable, "-m", "skel_ros.cli.main", "emulate", "loopback",
                             "--ids", "2-4"], cwd=REPO, env=loopback,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        assert lines[0].startswith("emulated loopback ids 2-4: transport {'port': "), lines
        assert lines[1].startswith("port: "), lines
        port = lines[1].split()[-1]
        run = _skel_ros(loopback, "scan", "--protocol", "loopback", "--port", port)
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == [f"id {i}: loopback-1" for i in (2, 3, 4)]
        # The same main(argv) in this process (the registration is on sys.path here too):
        # a child process more would only start Python again.
        bad = skel_ros_main(capsys, "scan", "--protocol", "loopback", "--port", port,
                            "--ids", "1-100")
        assert bad.returncode == 2
        assert "loopback ids are 1..99; '1-100' is outside" in bad.stderr
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Without the registration the name is not offered.
    plain = {**loopback, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    run = _skel_ros(plain, "scan", "--protocol", "loopback", "--port", port)
    assert run.returncode == 2
    assert "invalid choice: 'loopback'" in run.stderr


# --------------------------------------------------------------------------- the node


LOOPBACK_YAML = """\
control_rate: 50.0
command_timeout: 30.0
buses:
  line:
    protocol: loopback
    transport: {port: /dev/null}
    options: {reply_timeout: 1.0}
joints:
  shoulder_yaw: {bus: line, id: 1}
  shoulder_pitch: {bus: line, id: 2}
  elbow: {bus: line, id: 3, direction: -1}
  wrist: {bus: line, id: 4}
"""


@pytest.mark.ros
def test_the_hardware_node_drives_a_registered_protocol(
        loopback: dict[str, str], ros_env: dict[str, str], tmp_path: Path) -> None:
    rclpy = pytest.importorskip("rclpy")
    from hardware_in_process import emulated_hardware
    from sensor_msgs.msg import JointState
    from std_srvs.srv import SetBool

    config = tmp_path / "loopback.yaml"
    config.write_text(LOOPBACK_YAML, encoding="utf-8")
    context = rclpy.Context()
    rclpy.init(context=context)
    hw = emulated_hardware(context, "loop_hw", ARM, config)
    node, executor, states, enable = hw.node, hw.executor, hw.states, hw.enable

    def spin(done: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
        spin_until(executor, done, what, timeout)

    def position(name: str) -> float:
        return float(dict(zip(states[-1].name, states[-1].position, strict=True))[name])

    try:
        emulator = node._emulators[0]
        assert type(emulator).__name__ == "LoopbackEmulator"
        spin(lambda: bool(states), "joint_states")
        reply = spin_call(executor, enable, SetBool.Request(data=True), idempotent=True)
        assert reply.success, reply.message
        assert all(torque for _, torque in emulator.devices.values())
        node.shell.intake.on_joint_command(JointState(name=["elbow"], position=[0.4]))
        # direction -1: the device goes to -0.4; /joint_states reads +0.4 back from it.
        spin(lambda: abs(emulator.devices[3][0] + 0.4) < 1e-6, "the device at -0.4")
        spin(lambda: abs(position("elbow") - 0.4) < 1e-6, "elbow at 0.4 in joint_states")
    finally:
        hw.close()
        rclpy.try_shutdown(context=context)
