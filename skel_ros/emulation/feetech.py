"""Emulated Feetech STS/SMS and SCS servos on a pseudo-terminal, served by a thread.

Written from Feetech's memory tables and FT-SCS protocol document, as the driver is:
PING, READ, WRITE, SYNC WRITE for every series; SYNC READ for STS/SMS only (an SCS servo
ignores it; nor does an SCS servo answer a broadcast PING); the status byte (the
protections: voltage, angle sensor, overheating, overcurrent, overload; injectable, the
servo unloads its torque); Response_Status_Level (0: only PING and READ answer);
Return_Delay_Time (a real pause before answering; factory value 250, 500 µs); the Lock
field (an EEPROM write made while Lock is 1 is lost at the next power cycle:
:meth:`FeetechEmulator.power_cycle`); 2-byte fields in each series' byte order
(little-endian STS/SMS, big-endian SCS); sign-magnitude values; Homing_Offset (Present
Position = actual - offset); Min/Max_Angle_Limit clamping goals; the multi-turn setting
(Operating_Mode 3, or position mode with both angle limits 0: positions are not wrapped);
constant-speed mode. Shafts move with :class:`~skel_ros.emulation.motor.MotorModel`.
Not emulated: Acceleration and Goal_Time profiles (stored, not followed), PWM mode, gains,
baud-rate changes (``wire_time`` sleeps as long as the bytes take at ``baudrate``).

For the tests: :meth:`FeetechEmulator.mute` makes a servo miss its next replies,
:meth:`FeetechEmulator.events` lists the goal writes and complete reads it saw,
:meth:`FeetechEmulator.vanish` unplugs the port (a symlink to the pty) for a while.
``python -m skel_ros.emulation.feetech --ids 1-6`` serves in the foreground.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skel_ros.emulation import serial_pty
from skel_ros.emulation.motor import MotorModel, MotorParams, MotorState
from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.feetech import control_table as ct
from skel_ros.hardware.feetech import protocol as proto
from skel_ros.hardware.feetech.bus import return_delay_units

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

__all__ = ["EmulatedServo", "FeetechEmulator", "ServoBus", "main", "start_emulator"]

Instruction = proto.Instruction
_RAM: ct.Field = ct.TORQUE_ENABLE  # EEPROM below its address, RAM from it


@dataclass
class EmulatedServo:
    """One servo: its memory table, its motor, its instruction handling."""

    id: int
    model: ct.ModelInfo
    motor: MotorModel
    table: bytearray
    saved: bytearray  # the EEPROM as kept through a power cycle
    persistent_fault: int = 0
    mute: int = 0  # replies still to drop
    events: list[tuple[str, float]] = field(default_factory=list)

    @classmethod
    def create(cls, servo_id: int, model: ct.ModelInfo, position: float, now: float, *,
               return_delay: int = ct.FACTORY_RETURN_DELAY) -> EmulatedServo:
        """A servo with its factory settings, its shaft at ``position`` (rad)."""
        params = MotorParams(max_velocity=model.no_load_speed, max_effort=model.stall_torque)
        servo = cls(servo_id, model, MotorModel(params, position, now),
                    bytearray(ct.TABLE_SIZE), bytearray())
        t = servo.table
        t[ct.FIRMWARE_MAJOR.address], t[ct.FIRMWARE_MINOR.address] = 3, 10
        servo.put(ct.MODEL_NUMBER, model.model_number)
        t[ct.ID.address] = servo_id
        t[ct.RETURN_DELAY_TIME.address] = return_delay
        t[ct.RESPONSE_STATUS_LEVEL.address] = 1
        servo.put(ct.MAX_ANGLE_LIMIT, model.max_tick)
        t[ct.MAX_TEMPERATURE_LIMIT.address] = 70
        t[ct.MAX_VOLTAGE_LIMIT.address] = round(model.voltage * 1.3 * 10)
        t[ct.MIN_VOLTAGE_LIMIT.address] = round(model.voltage * 0.6 * 10)
        servo.put(ct.MAX_TORQUE_LIMIT, 1000)
        t[ct.UNLOADING_CONDITION.address] = 0x2C  # overheating, overcurrent, overload
        servo.saved = bytearray(t[:_RAM.address])
        servo.power_on(now)
        return servo

    # ---------------------------------------------------------------- fields

    def get(self, fld: ct.Field) -> int:
        """A field's raw value (sign-magnitude fields undecoded)."""
        data = self.table[fld.address:fld.address + fld.size]
        return int.from_bytes(data, self.model.byte_order)

    def put(self, fld: ct.Field, raw: int) -> None:
        """Store a field's raw value."""
        order = self.model.byte_order
        self.table[fld.address:fld.address + fld.size] = raw.to_bytes(fld.size, order)

    def value(self, name: str) -> int:
        """A field's value by name, sign-magnitude decoded."""
        fld = next((f for f in self.model.fields if f.name == name), None)
        if fld is None:
            raise KeyError(f"{self.model.name} has no field {name!r}")
        raw = self.get(fld)
        return raw if fld.sign_bit is None else ct.decode_sm(raw, fld.sign_bit)

    @property
    def return_delay(self) -> float:
        """Seconds before answering."""
        return self.table[ct.RETURN_DELAY_TIME.address] * ct.RETURN_DELAY_UNIT

    @property
    def multi_turn(self) -> bool:
        """Step mode, or position mode with both angle limits 0 (STS/SMS)."""
        if self.model.series != "sts":
            return False
        mode = self.table[ct.OPERATING_MODE.address]
        return mode == ct.MODE_STEP or (mode == ct.MODE_POSITION and self.get(
            ct.MIN_ANGLE_LIMIT) == 0 and self.get(ct.MAX_ANGLE_LIMIT) == 0)

    @property
    def _offset(self) -> int:
        return ct.decode_sm(self.get(ct.HOMING_OFFSET), 11) if self.model.series == "sts" else 0

    # ---------------------------------------------------------------- state

    def power_on(self, now: float) -> None:
        """RAM at its power-on values, EEPROM as kept; torque off, goal where it is."""
        self.table[:_RAM.address] = self.saved
        self.table[_RAM.address:] = bytes(len(self.table) - _RAM.address)
        self.motor.set_torque(enabled=False, t=now)
        if self.model.series == "sts":
            self.put(ct.TORQUE_LIMIT, 1000)
            self.table[ct.STS_LOCK.address] = ct.LOCKED
        else:
            self.table[ct.SCS_LOCK.address] = ct.LOCKED
        self.table[ct.PRESENT_VOLTAGE.address] = round(self.model.voltage * 10)
        self.table[ct.PRESENT_TEMPERATURE.address] = 30
        self.table[ct.STATUS.address] = self.persistent_fault
        self.sync(now)
        self.put(ct.GOAL_POSITION, self.get(ct.PRESENT_POSITION))

    def _present(self, position: float) -> int:
        model = self.model
        actual = round(position / model.rad_per_tick) + model.center
        present = actual - self._offset
        if not self.multi_turn and model.series == "sts":
            present %= model.ticks
        return present

    def sync(self, now: float) -> None:
        """Advance the motor; refresh the Present fields."""
        position, velocity, effort, torque = self.motor.step(now)
        model = self.model
        self.put(ct.PRESENT_POSITION, ct.encode_sm(self._present(position), 15))
        self.put(ct.PRESENT_VELOCITY, ct.encode_sm(round(velocity / model.rad_per_tick), 15))
        load = round(effort / model.stall_torque / ct.LOAD_UNIT)
        self.put(ct.PRESENT_LOAD, ct.encode_sm(max(-1000, min(1000, load)), 10))
        self.table[ct.MOVING.address] = abs(velocity) > 2 * model.rad_per_tick
        self.table[ct.TORQUE_ENABLE.address] = int(torque)

    def inject_fault(self, bits: int, now: float, *, persistent: bool = False) -> None:
        """A protection trips: the status shows ``bits``, torque is unloaded."""
        self.sync(now)
        self.table[ct.STATUS.address] = bits & 0xFF
        self.persistent_fault = bits & 0xFF if persistent else 0
        if bits:
            self.motor.set_torque(enabled=False, t=now)
            self.table[ct.TORQUE_ENABLE.address] = 0

    def set_position(self, position: float, now: float) -> None:
        """The shaft at ``position`` (rad), at rest."""
        self.motor.step(now)
        self.motor.set_position(position)
        self.sync(now)

    def read(self, address: int, size: int, now: float) -> bytes:
        """``size`` bytes of the table at ``address`` (zeros past its end)."""
        self.sync(now)
        data = bytes(self.table[address:address + size])
        return data + bytes(size - len(data))

    def write(self, address: int, data: bytes, now: float) -> None:
        """A WRITE (or this servo's part of a SYNC WRITE)."""
        self.sync(now)
        end = min(address + len(data), len(self.table))
        writable = {a for f in self.model.fields if f.writable
                    for a in range(f.address, f.address + f.size)}
        for k, a in enumerate(range(address, end)):
            if a in writable:  # read-only and undefined bytes are left as they are
                self.table[a] = data[k]
        lock = self.model.lock.address
        if address < _RAM.address and self.table[lock] == ct.UNLOCKED:
            self.saved[:] = self.table[:_RAM.address]
        touched = range(address, end)
        if ct.TORQUE_ENABLE.address in touched:
            self._torque(self.table[ct.TORQUE_ENABLE.address], now)
        goal = (ct.GOAL_VELOCITY if self.model.series == "sts" and self.table[
            ct.OPERATING_MODE.address] == ct.MODE_VELOCITY else ct.GOAL_POSITION)
        if goal.address in touched:
            self.events.append(("goal", now))
        self._apply_goal()

    def _torque(self, value: int, now: float) -> None:
        if value == 0 and not self.persistent_fault:
            self.table[ct.STATUS.address] = 0  # acknowledged, and the cause is gone
        if value and self.table[ct.STATUS.address]:
            value = 0  # a protection holds it unloaded
        self.table[ct.TORQUE_ENABLE.address] = int(bool(value))
        self.motor.set_torque(enabled=bool(value), t=now)

    def _apply_goal(self) -> None:
        model, motor = self.model, self.motor
        velocity_mode = (model.series == "sts"
                         and self.table[ct.OPERATING_MODE.address] == ct.MODE_VELOCITY)
        motor.mode = ControlMode.VELOCITY if velocity_mode else ControlMode.POSITION
        if velocity_mode:
            speed = ct.decode_sm(self.get(ct.GOAL_VELOCITY), 15)
            motor.set_velocity_target(speed * model.rad_per_tick)
            return
        goal = ct.decode_sm(self.get(ct.GOAL_POSITION), 15)
        if not self.multi_turn:
            goal = max(self.get(ct.MIN_ANGLE_LIMIT), min(self.get(ct.MAX_ANGLE_LIMIT), goal))
        base = (goal + self._offset - model.center) * model.rad_per_tick
        if model.series == "sts" and not self.multi_turn:  # the nearest turn of that angle
            base += 2 * math.pi * round((motor.state.position - base) / (2 * math.pi))
        motor.set_position_target(base)


class ServoBus:
    """The servos on one line: packets in, replies (with their delays) out."""

    def __init__(self, servos: Mapping[int, EmulatedServo], clock: Callable[[], float]) -> None:
        self.servos = dict(servos)
        self.clock = clock
        self.counts = {"packets": 0, "bad_checksums": 0}

    def handle(self, packet: proto.Packet, now: float,  # noqa: PLR0911 - one per instruction
               ) -> list[tuple[float, bytes]]:
        """The replies to one instruction packet: ``(delay, bytes)`` in order."""
        self.counts["packets"] += 1
        inst, params = packet.code, packet.params
        if packet.id == proto.BROADCAST_ID:
            if inst == Instruction.SYNC_WRITE and len(params) >= 2:  # noqa: PLR2004
                self._sync_write(params, now)
            elif inst == Instruction.SYNC_READ and len(params) >= 2:  # noqa: PLR2004
                return self._sync_read(params, now)
            elif inst == Instruction.PING:
                return [r for s in sorted(self.servos.values(), key=lambda s: s.id)
                        if s.model.has_sync_read for r in self._reply(s, b"", status=True)]
            return []
        servo = self.servos.get(packet.id)
        if servo is None:
            return []
        if inst == Instruction.PING:
            return self._reply(servo, b"", status=True)
        if inst == Instruction.READ and len(params) == 2:  # noqa: PLR2004
            data = servo.read(params[0], params[1], now)
            return self._reply(servo, data, status=True)
        if inst == Instruction.WRITE and params:
            servo.write(params[0], params[1:], now)
            return self._reply(servo, b"", status=False)
        return []

    def _reply(self, servo: EmulatedServo, data: bytes, *, status: bool,
               ) -> list[tuple[float, bytes]]:
        """Its status packet unless muted or (a write) Response_Status_Level is 0."""
        if not status and servo.table[ct.RESPONSE_STATUS_LEVEL.address] == 0:
            return []
        if servo.mute:
            servo.mute -= 1
            return []
        return [(servo.return_delay,
                 proto.build_status(servo.id, servo.table[ct.STATUS.address], data))]

    def _sync_read(self, params: bytes, now: float) -> list[tuple[float, bytes]]:
        address, size = params[0], params[1]
        out = []
        answered = []
        for servo_id in params[2:]:
            servo = self.servos.get(servo_id)
            if servo is None or not servo.model.has_sync_read:
                continue  # SCS has no Sync Read
            reply = self._reply(servo, servo.read(address, size, now), status=True)
            out += reply
            if reply:
                answered.append(servo)
        for servo in answered:
            servo.events.append(("read", now))
        return out

    def _sync_write(self, params: bytes, now: float) -> None:
        address, size = params[0], params[1]
        body = params[2:]
        for k in range(0, len(body) - size, size + 1):
            servo = self.servos.get(body[k])
            if servo is not None:
                servo.write(address, body[k + 1:k + 1 + size], now)


class FeetechEmulator:
    """Emulated servos served by a thread on a pty (what :func:`start_emulator` returns).

    Attributes:
        transport: ``{"port": ..., "baudrate": ...}`` for ``BusSpec.transport``.
    """

    def __init__(self, bus: ServoBus, baudrate: int = 1_000_000, *,
                 wire_time: bool = False, lock: AbstractContextManager[Any] | None = None,
                 ) -> None:
        self.bus = bus
        self.baudrate = baudrate
        self.wire_time = wire_time
        # Held while a packet or a call acts on the servos; physics-backed servos give
        # their world's, which the emulators of other buses moving it hold too.
        self._lock = threading.Lock() if lock is None else lock
        self._pty = serial_pty.PtyPort("skel-ft-")
        self.port = self._pty.path
        self.transport: Mapping[str, Any] = {"port": self.port, "baudrate": baudrate}
        self._back_at = math.inf
        self._reader = proto.PacketReader()
        self._wake_r, self._wake_w = os.pipe()
        self._running = True
        self._open_pty()
        self._thread = threading.Thread(target=self._serve, name="feetech-emulator", daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- the pty

    def _open_pty(self) -> None:
        self._pty.open()
        self._reader.clear()
        self._back_at = math.inf

    def _serve(self) -> None:
        while self._running:
            with self._lock:
                if self._pty.master < 0 and time.monotonic() >= self._back_at:
                    self._open_pty()
                master = self._pty.master
            fds = [self._wake_r] + ([master] if master >= 0 else [])
            wait = min(0.5, max(0.0, self._back_at - time.monotonic()))
            try:
                ready, _, _ = select.select(fds, [], [], wait)
            except (OSError, ValueError):
                continue
            if self._wake_r in ready:
                with contextlib.suppress(OSError):
                    os.read(self._wake_r, 64)
            if master >= 0 and master in ready:
                try:
                    data = os.read(master, 65536)
                except OSError:
                    continue
                self._on_bytes(master, data)

    def _on_bytes(self, master: int, data: bytes) -> None:
        arrived = time.monotonic()
        out: list[tuple[float, bytes]] = []
        with self._lock:
            reader = self._reader
            reader.feed(data)
            while (packet := reader.next_packet()) is not None:
                out += self.bus.handle(packet, arrived)
            self.bus.counts["bad_checksums"] = reader.bad_checksums
        t = arrived + (10.0 * len(data) / self.baudrate if self.wire_time else 0.0)
        with contextlib.suppress(OSError):
            if not self.wire_time and all(delay == 0.0 for delay, _ in out):
                if out:
                    os.write(master, b"".join(reply for _, reply in out))
                return
            for delay, reply in out:
                t += delay + (10.0 * len(reply) / self.baudrate if self.wire_time else 0.0)
                serial_pty.pause_until(t)
                os.write(master, reply)

    # ---------------------------------------------------------------- control

    def _servo(self, servo_id: int) -> EmulatedServo:
        servo = self.bus.servos.get(servo_id)
        if servo is None:
            raise ValueError(f"no emulated servo with id {servo_id}")
        return servo

    def state(self, servo_id: int) -> MotorState:
        """The true shaft state."""
        with self._lock:
            servo = self._servo(servo_id)
            servo.sync(time.monotonic())
            return servo.motor.state

    def register(self, servo_id: int, name: str) -> int:
        """A field's value by Feetech's name (``"Goal_Position"``), sign-magnitude decoded."""
        with self._lock:
            servo = self._servo(servo_id)
            servo.sync(time.monotonic())
            return servo.value(name)

    def set_register(self, servo_id: int, name: str, value: int) -> None:
        """Set a field (EEPROM kept) as a tool on the servo would, e.g. multi-turn."""
        with self._lock:
            servo = self._servo(servo_id)
            fld = next(f for f in servo.model.fields if f.name == name)
            servo.put(fld, value if fld.sign_bit is None else ct.encode_sm(value, fld.sign_bit))
            servo.saved[:] = servo.table[:_RAM.address]
            servo.sync(time.monotonic())

    def goal_position(self, servo_id: int) -> float:
        """The goal the servo decoded (rad in its Present_Position frame)."""
        with self._lock:
            servo = self._servo(servo_id)
            goal = ct.decode_sm(servo.get(ct.GOAL_POSITION), 15)
            return (goal - servo.model.center) * servo.model.rad_per_tick

    def inject_fault(self, servo_id: int, bits: int, *, persistent: bool = False) -> None:
        """A protection trips (0x20 overload ...); ``persistent``: its cause stays."""
        with self._lock:
            self._servo(servo_id).inject_fault(bits, time.monotonic(), persistent=persistent)

    def set_position(self, servo_id: int, position: float) -> None:
        """The shaft at ``position`` (rad), at rest."""
        with self._lock:
            self._servo(servo_id).set_position(position, time.monotonic())

    def mute(self, servo_id: int, replies: int) -> None:
        """The servo misses its next ``replies`` replies."""
        with self._lock:
            self._servo(servo_id).mute = replies

    def events(self, servo_id: int) -> list[tuple[str, float]]:
        """``("goal", t)`` per goal write taken, ``("read", t)`` per Sync Read answered."""
        with self._lock:
            return list(self._servo(servo_id).events)

    def power_cycle(self, servo_id: int) -> None:
        """Power off and on: EEPROM as kept (writes made under Lock 1 lost), RAM reset."""
        with self._lock:
            self._servo(servo_id).power_on(time.monotonic())

    def vanish(self, seconds: float) -> None:
        """Unplug the port for ``seconds`` (the servos keep power and state)."""
        with self._lock:
            self._pty.close()
            self._back_at = time.monotonic() + max(0.0, seconds)
        os.write(self._wake_w, b"x")

    def counts(self) -> dict[str, int]:
        """Packets handled, checksum errors."""
        with self._lock:
            return dict(self.bus.counts)

    def stop(self) -> None:
        """Stop serving, close the pty (idempotent, never raises)."""
        if not self._running:
            return
        self._running = False
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        self._thread.join(2.0)
        with self._lock:
            self._pty.remove()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)


_EMULATOR_OPTIONS = frozenset({"initial_positions", "return_delay_us", "wire_time", "model"})


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> FeetechEmulator:
    """Start emulated servos for ``actuators`` on a new pty.

    Args:
        transport: only ``baudrate`` is used (the port is the new pty).
        actuators: one servo per actuator (id; model, default STS3215-C001).
        options: ``initial_positions`` ({id: rad}), ``return_delay_us`` (factory 500;
            even, 0..508), ``wire_time`` (sleep as long as the bytes take), ``model``
            (for actuators without one).

    Raises:
        ConfigError: unknown options, models or ids.
    """
    starts = serial_pty.servo_starts("Feetech emulator", actuators, options, _EMULATOR_OPTIONS,
                                     default_model=ct.DEFAULT_MODEL, max_id=proto.MAX_ID,
                                     model_by_name=ct.model_by_name)
    delay = return_delay_units(options.get("return_delay_us", 2 * ct.FACTORY_RETURN_DELAY),
                               "Feetech emulator")
    now = time.monotonic()
    servos = {act.id: EmulatedServo.create(act.id, model, position, now, return_delay=delay)
              for act, _, model, position in starts}
    baudrate = int(transport.get("baudrate", 1_000_000))
    return FeetechEmulator(ServoBus(servos, time.monotonic), baudrate,
                           wire_time=bool(options.get("wire_time", False)))


def main(argv: Sequence[str] | None = None) -> int:
    """Serve emulated servos in the foreground until Ctrl-C (prints ``port: PATH``)."""
    parser = serial_pty.servo_parser("skel_ros.emulation.feetech", "Feetech", ct.DEFAULT_MODEL,
                                     "1-6")
    parser.add_argument("--return-delay-us", type=int, default=0)
    parser.add_argument("--wire-time", action="store_true")
    args = parser.parse_args(argv)
    ids = serial_pty.servo_ids(parser, args.ids, proto.MAX_ID, "Feetech")
    emulator = start_emulator({"baudrate": args.baud},
                              [ActuatorSpec(i, ControlMode.POSITION, args.model) for i in ids],
                              {"return_delay_us": args.return_delay_us,
                               "wire_time": args.wire_time})
    print(f"port: {emulator.port}", flush=True)  # noqa: T201
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        emulator.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
