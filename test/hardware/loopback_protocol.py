"""A small protocol defined by the test suite, registered as a plugin like a third party's.

``test_plugins.py`` declares it in a temporary ``*.dist-info/entry_points.txt`` (group
``skel_ros.protocols``, ``loopback = loopback_protocol:PLUGIN``, and its emulator in the
group ``skel_ros.emulators``, ``loopback = loopback_protocol:start_emulator``), so the
package finds it the way it would find a protocol an installed distribution brings;
nothing in ``skel_ros`` names it.

The wire: text lines on a serial line (a pseudo-terminal here), one request, at most one
answer::

    PING 3            -> PONG 3 loopback-1      (no answer: no device 3)
    TORQUE 1 1 2 3    -> OK                     (torque on for 1, 2, 3; 0 for off)
    GOAL 1:0.5 2:-1   (no answer: the devices take the goals, like a Sync Write)
    READ 1 2          -> STATE 1:0.5:1 2:-1:1   (id:position:torque of those present)

An emulated device with torque on is at its last goal (rad); with torque off it stays.
"""

from __future__ import annotations

import math
import os
import select
import threading
import tty
from typing import TYPE_CHECKING, Any, ClassVar

import serial

from skel_ros.hardware.base import ActuatorBus, ActuatorState, ControlMode, ScanResult
from skel_ros.hardware.errors import ConfigError, TransportError, TransportTimeoutError
from skel_ros.hardware.plugins import ProtocolPlugin, TransportKind

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.hardware.base import ActuatorCommand, ActuatorSpec, BusSpec

MODEL = "loopback-1"


class _Line:
    """The host's side of the line: a request, then one answer line or a timeout."""

    def __init__(self, port: str, timeout: float) -> None:
        try:
            self.port = serial.serial_for_url(port, baudrate=115200, timeout=timeout)
        except (OSError, serial.SerialException) as exc:
            raise TransportError(f"{port}: cannot open: {exc}") from None
        self.name = port

    def send(self, text: str) -> None:
        try:
            self.port.write(text.encode() + b"\n")
        except (OSError, serial.SerialException) as exc:
            raise TransportError(f"{self.name}: write failed: {exc}") from None

    def ask(self, text: str) -> str | None:
        self.send(text)
        try:
            answer = self.port.readline()
        except (OSError, serial.SerialException) as exc:
            raise TransportError(f"{self.name}: read failed: {exc}") from None
        return answer.decode().strip() if answer.endswith(b"\n") else None

    def close(self) -> None:
        self.port.close()


class LoopbackBus(ActuatorBus):
    """Every loopback device on one line (position mode only)."""

    protocol: ClassVar[str] = "loopback"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],
                 clock: Callable[[], float]) -> None:
        super().__init__(spec, actuators, clock)
        unknown = set(spec.options) - PLUGIN.bus_options
        if unknown:
            raise ConfigError(f"bus {spec.name!r}: unknown loopback option(s) {sorted(unknown)}")
        self.reply_timeout = float(spec.options.get("reply_timeout", 0.5))
        self._line: _Line | None = None

    @property
    def is_open(self) -> bool:
        return self._line is not None

    def _ask(self, text: str) -> str:
        if self._line is None:
            raise TransportError(f"bus {self.spec.name!r} is not open")
        answer = self._line.ask(text)
        if answer is None:
            raise TransportTimeoutError(f"bus {self.spec.name!r}: no answer to {text!r}")
        return answer

    def open(self, *, keep_torque: bool = False) -> None:
        line = _Line(str(self.spec.transport["port"]), self.reply_timeout)
        try:
            missing = [a.id for a in self.actuators
                       if line.ask(f"PING {a.id}") != f"PONG {a.id} {MODEL}"]
        except TransportError:
            line.close()
            raise
        if missing:
            line.close()
            raise TransportTimeoutError(f"bus {self.spec.name!r}: ids {missing} do not answer")
        self._line = line
        if not keep_torque:
            self.set_torque(False)

    def close(self, *, torque_off: bool = True) -> None:
        if self._line is None:
            return
        try:
            if torque_off:
                self.set_torque(False)
        except TransportError:
            pass
        finally:
            self._line.close()
            self._line = None

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:
        which = ids if ids is not None else [a.id for a in self.actuators]
        self._ask(" ".join(["TORQUE", str(int(enabled)), *map(str, which)]))

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        goals = [f"{i}:{c.position!r}" for i, c in commands.items() if math.isfinite(c.position)]
        if goals and self._line is not None:
            self._line.send(" ".join(["GOAL", *goals]))

    def read(self) -> dict[int, ActuatorState]:
        answer = self._ask(" ".join(["READ", *(str(a.id) for a in self.actuators)]))
        out = {}
        for item in answer.split()[1:]:
            i, position, torque = item.split(":")
            out[int(i)] = ActuatorState(position=float(position), velocity=0.0, effort=0.0,
                                        torque_enabled=torque == "1", stamp=self.clock())
        return out


class LoopbackEmulator:
    """Emulated loopback devices on a pseudo-terminal, served by a thread of this process."""

    def __init__(self, ids: Sequence[int], initial: Mapping[int, float]) -> None:
        self.devices = {i: [float(initial.get(i, 0.0)), False] for i in ids}
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no line editing: bytes as written
        self.transport: Mapping[str, Any] = {"port": os.ttyname(self._slave)}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="loopback", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        pending = b""
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.05)
            if not ready:
                continue
            try:
                pending += os.read(self._master, 4096)
            except OSError:  # the host side closed for now; it may open again
                continue
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                answer = self._answer(line.decode().split())
                if answer is not None:
                    os.write(self._master, answer.encode() + b"\n")

    def _answer(self, words: list[str]) -> str | None:
        if not words:
            return None
        kind, args = words[0], words[1:]
        if kind == "PING":
            return f"PONG {args[0]} {MODEL}" if int(args[0]) in self.devices else None
        if kind == "TORQUE":
            for i in map(int, args[1:]):
                if i in self.devices:
                    self.devices[i][1] = args[0] == "1"
            return "OK"
        if kind == "GOAL":
            for item in args:
                i, goal = item.split(":")
                device = self.devices.get(int(i))
                if device is not None and device[1]:
                    device[0] = float(goal)
            return None
        if kind == "READ":
            return " ".join(["STATE", *(f"{i}:{self.devices[i][0]!r}:{int(self.devices[i][1])}"
                                        for i in map(int, args) if i in self.devices)])
        return None

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        os.close(self._master)
        os.close(self._slave)


def scan(transport: Mapping[str, Any], ids: Sequence[int], timeout: float,
         ) -> list[ScanResult]:
    """PING each id; the devices that answered."""
    line = _Line(str(transport["port"]), timeout)
    try:
        return [ScanResult(i, model=MODEL) for i in ids
                if line.ask(f"PING {i}") == f"PONG {i} {MODEL}"]
    finally:
        line.close()


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> LoopbackEmulator:
    """Emulated devices for ``actuators`` (``options``: ``initial_positions`` {id: rad})."""
    initial = {int(k): float(v) for k, v in dict(options.get("initial_positions", {})).items()}
    return LoopbackEmulator([a.id for a in actuators], initial)


PLUGIN = ProtocolPlugin(
    name="loopback",
    bus_class=LoopbackBus,
    transport=TransportKind.SERIAL,
    id_range=(1, 99),
    scan_ids="1-9",
    scan_timeout=0.2,
    modes=(ControlMode.POSITION,),
    bus_options=frozenset({"reply_timeout"}),
    actuator_options=frozenset(),
    scan=scan,
)
