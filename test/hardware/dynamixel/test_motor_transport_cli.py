"""The shared motor model, the serial transport, and the scan / emulate commands."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import tty
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from skel_ros_in_process import skel_ros_main

from skel_ros.emulation.motor import MotorModel, MotorParams
from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.errors import ConfigError, TransportError, TransportTimeoutError
from skel_ros.hardware.transport import SerialTransport, serial_transport

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.emulation.dynamixel import DynamixelEmulator

REPO = Path(__file__).resolve().parents[3]
PARAMS = MotorParams(time_constant=0.05, max_velocity=2.0, max_effort=1.0, inertia=0.01,
                     damping=0.1)


def test_position_mode_tracks_with_speed_limit_then_first_order() -> None:
    m = MotorModel(PARAMS, position=0.0, t0=0.0)
    m.set_position_target(1.0)
    assert m.advance(0.5).position == 0.0  # torque off: nothing moves
    m.set_torque(True)
    s = m.advance(0.6)  # saturated: 2 rad/s for 0.1 s
    assert s.position == pytest.approx(0.2)
    assert s.velocity == pytest.approx(2.0)
    # Saturated until |error| = vmax * tau = 0.1, i.e. t = 0.5 + 0.45; then exponential.
    s = m.advance(0.95 + 0.05)
    assert s.position == pytest.approx(1.0 - 0.1 * math.exp(-1.0))
    same = MotorModel(PARAMS, 0.0, 0.0)
    same.set_torque(True)
    same.set_position_target(1.0)
    for k in range(1, 101):  # many small steps = one big step (closed form)
        same.advance(0.5 * k / 100)
    m2 = MotorModel(PARAMS, 0.0, 0.0)
    m2.set_torque(True)
    m2.set_position_target(1.0)
    assert m2.advance(0.5).position == pytest.approx(same.state.position)


def test_velocity_effort_and_mit_modes() -> None:
    m = MotorModel(PARAMS, 0.0, 0.0)
    m.set_torque(True)
    m.mode = ControlMode.VELOCITY
    m.set_velocity_target(5.0)  # clamped to 2
    assert m.advance(1.0).velocity == pytest.approx(2.0, rel=1e-6)
    m.mode = ControlMode.EFFORT
    m.set_effort_target(0.05)  # terminal speed 0.05 / 0.1 = 0.5 rad/s
    assert m.advance(10.0).velocity == pytest.approx(0.5, rel=1e-3)
    assert m.state.effort == 0.05
    m.mode = ControlMode.IMPEDANCE
    m.set_impedance(1.0, 0.0, 5.0, 0.5, 0.0)
    s = m.advance(14.0)
    assert s.position == pytest.approx(1.0, abs=1e-3)
    m.set_impedance(math.nan, 0.0, 5.0, 0.5, 0.0)  # ignored
    m.set_torque(False)
    assert m.advance(20.0).velocity == pytest.approx(0.0, abs=1e-6)
    assert m.advance(10.0) == m.state  # time never runs backwards
    with pytest.raises(ValueError, match="inertia"):
        MotorParams(inertia=0.0)


def test_serial_transport_loop_and_errors() -> None:
    t = SerialTransport("loop://", 115200)
    t.open()
    t.write(b"abc")
    assert t.read(3, 0.1) == b"abc"
    with pytest.raises(TransportTimeoutError, match="loop://"):
        t.read(1, 0.01)
    t.close()
    t.close()
    with pytest.raises(TransportError, match="not open"):
        t.write(b"x")
    with pytest.raises(TransportError, match=r"socket://127\.0\.0\.1:9"):
        SerialTransport("socket://127.0.0.1:9").open()
    with pytest.raises(ConfigError, match="port"):
        serial_transport({"baudrate": 1})
    with pytest.raises(ConfigError, match="baudrate"):
        serial_transport({"port": "/dev/ttyUSB0", "baudrate": "fast"})


def test_serial_transport_on_a_pty_and_eio() -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    t = serial_transport({"port": os.ttyname(slave), "baudrate": 4_000_000})
    t.open()
    os.write(master, b"\x01\x02")
    assert t.read(2, 0.5) == b"\x01\x02"
    t.write(b"xyz")
    assert os.read(master, 10) == b"xyz"
    os.close(master)
    os.close(slave)
    with pytest.raises(TransportError):
        t.read(1, 0.05)
    with pytest.raises(TransportError):
        t.reset_input()
    t.close()


def test_serial_transport_writes_more_than_the_pty_buffer_holds(
        monkeypatch: pytest.MonkeyPatch) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    t = serial_transport({"port": os.ttyname(slave), "baudrate": 4_000_000})
    t.open()
    data = bytes(range(256)) * 256  # 64 KiB: more than the pty takes at once
    received = bytearray()

    def drain() -> None:
        while len(received) < len(data):
            received.extend(os.read(master, 65536))

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        t.write(data)
        reader.join(10.0)
        assert bytes(received) == data
        # Nobody reads: the write gives up after the write timeout.
        monkeypatch.setattr("skel_ros.hardware.transport._WRITE_TIMEOUT", 0.05)
        with pytest.raises(TransportTimeoutError, match="write timed out"):
            t.write(data * 4)
    finally:
        t.close()
        os.close(master)
        os.close(slave)


def _skel_ros(*args: str) -> subprocess.CompletedProcess[str]:
    """``skel-ros`` in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "skel_ros.cli.main", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture(scope="module")
def scanned() -> Iterator[DynamixelEmulator]:
    """Four XM430-W350 at ids 1..4 (as conftest's ``emulator``), one process for the
    module: a scan only reads (PING), so the scan tests share it."""
    from skel_ros.emulation.dynamixel import start_emulator
    from skel_ros.hardware.base import ActuatorSpec

    servos = [ActuatorSpec(i, ControlMode.POSITION, "XM430-W350") for i in (1, 2, 3, 4)]
    emu = start_emulator({"baudrate": 1_000_000}, servos, {})
    yield emu
    emu.stop()
    assert not emu.running


def test_scan_cli_lists_the_emulated_servos(scanned: DynamixelEmulator) -> None:
    run = _skel_ros("scan", "--port", scanned.transport["port"], "--protocol", "dynamixel",
                    "--ids", "0-6")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"id {i}: model number 1020, XM430-W350, firmware v48" for i in (1, 2, 3, 4)]


def test_scan_cli_exits_1(scanned: DynamixelEmulator, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _skel_ros("scan", "--port", "/dev/no-such-port", "--protocol", "dynamixel")
    assert bad.returncode == 1
    assert "/dev/no-such-port" in bad.stderr
    assert "cannot open" in bad.stderr
    # The same main(argv) in this process from here on.
    empty = skel_ros_main(capsys, "scan", "--port", scanned.transport["port"], "--protocol",
                           "dynamixel", "--ids", "10-12")
    assert empty.returncode == 1
    assert "no dynamixel device answered" in empty.stderr
    missing = skel_ros_main(capsys, "scan", "--protocol", "dynamixel")
    assert missing.returncode != 0
    assert "--port" in missing.stderr


def test_emulate_cli_runs_until_interrupted(capsys: pytest.CaptureFixture[str]) -> None:
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "skel_ros.cli.main", "emulate", "dynamixel",
                             "--ids", "1-3", "--model", "XL430-W250"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(2)]
        port = lines[1].split()[-1]
        assert lines[1].startswith("port: ")
        assert Path(port).resolve().name.isdigit()  # a link to the pty (/dev/pts/N)
        # The emulate command's process is the subject; the scan runs in this one.
        run = skel_ros_main(capsys, "scan", "--port", port, "--protocol", "dynamixel",
                             "--ids", "1-4")
        assert run.returncode == 0, run.stderr
        assert "XL430-W250" in run.stdout
        assert len(run.stdout.splitlines()) == 3
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
