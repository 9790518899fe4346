"""Emulated MIT-mode motors on a python-can bus (a thread in the caller's process).

Each motor answers every frame addressed to its CAN id the way Ben Katz's mbed firmware
(the one CubeMars AK MIT mode derives from) does:

* a command sets ``u = kp (p - q) + kd (v - q') + t_ff`` on a
  :class:`~skel_ros.emulation.motor.MotorModel` (the dynamics every emulator
  shares; :mod:`skel_ros.physical.mit` puts a physics world's joint there instead,
  :meth:`MitEmulator._motion`), but only in motor mode: in rest mode it is answered and
  ignored;
* the firmware keeps the last command it unpacked across *exit* and *enter*: *enter*
  (``..fc``) switches torque on and applies that retained command at once (zero gains
  only if the motor never got one since power-up); *exit* (``..fd``) switches torque off
  and clears nothing;
* *zero* (``..fe``) makes the present position 0 in any state and keeps the retained
  ``p_des`` as a number, so a motor in motor mode is pulled to ``p_des`` in the new zero
  (a jump by the old position); ``zero_silence`` (an emulator option) makes a Cheetah /
  CubeMars motor stay silent that long after it, as AK firmware does for up to a second
  (each *zero* restarts it; frames are still processed, not answered);
* *clear error* (``..fb``) clears an injected error (Damiao);
* a reply packs the position without clamping and keeps the low 16 bits, so a motor
  past ``p_max`` reports a position near ``p_min`` (it wraps by the span), as the
  firmware's ``float_to_uint`` and ``pack_reply`` do. Velocity and torque cannot leave
  their ranges here: the motor model is as fast and strong as those ranges (a physics
  world's joint may be driven faster: its velocity saturates in the reply).

Replies go out on ``master_id`` (default 0) in the motor's variant. Damiao
motors also answer register reads (``0x7FF``: ``id_l id_h 0x33 rid``) for a few
registers (7 MST_ID, 8 ESC_ID, 9 TIMEOUT (writable, ``0x55``), 10 CTRL_MODE = 1 (MIT),
14 sw_ver, 21-23 PMAX/VMAX/TMAX) and feedback requests (``id_l id_h 0xCC``: the state
reply, changing nothing).

A frame acts at the moment it arrived, as on a motor, which takes it within its current
loop: the receiving thread may get to it later (the scheduler, another thread of the
process holding the interpreter, for up to its switch interval of 5 ms), so with the
default clock each frame is handled at its time on the wire (python-can's stamp, on the
wall clock, made an age on the emulator's clock); its reply reports the motor at that
time. With another ``clock`` (a manual one), frames act when they are handled.

CAN timeouts, checked on the emulator's clock by the receiving thread: a Damiao motor
with TIMEOUT (register 9, units of 50 µs) > 0 that is enabled and gets no frame for that
long disables itself and reports status 0xD "lost communication" (until *clear error*);
a Mini Cheetah / CubeMars motor with ``can_timeout`` (an emulator option: on the real
motors it is set in the serial setup menu, not over CAN) zeroes kp, kd and t_ff as Ben
Katz's firmware does, and stays in motor mode, producing no torque.

For tests: :meth:`MitEmulator.inject_error` (the motor reports an error code and drops
torque), :meth:`MitEmulator.set_silent` (stops answering), :meth:`MitEmulator.state`,
:meth:`MitEmulator.command` (the last command as the firmware decoded it, in motor
mode), :meth:`MitEmulator.entered` (the command applied at each *enter*),
:meth:`MitEmulator.specials` (the enter / exit / zero / clear frames received),
:meth:`MitEmulator.drop_torque` (a motor that lost torque by itself, e.g. a brown-out),
:meth:`MitEmulator.drop_frames`, :meth:`MitEmulator.watchdog_events`,
:meth:`MitEmulator.move_to` (the joint moved by hand).

Options of :func:`start_emulator`: ``initial_positions`` ``{id: rad}``, ``motor``
(:class:`~skel_ros.emulation.motor.MotorParams` fields for every motor; by
default each motor's speed and stall torque are its model's V and T ranges),
``clock`` (callable, default ``time.monotonic``), ``master_id`` (default 0),
``temperature`` (deg C, default 30), ``can_timeout`` ``{id: s}`` (Cheetah / CubeMars
firmware setting), ``zero_silence`` (s on the emulator clock, default 0). An actuator
without model or ranges is emulated as a Mini Cheetah motor.
"""

from __future__ import annotations

import logging
import math
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from skel_ros.emulation.motor import Motion, MotorModel, MotorParams, MotorState
from skel_ros.emulation.virtual_can import can_arguments
from skel_ros.hardware import can_transport
from skel_ros.hardware.base import ControlMode
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.mit.codec import (
    CLEAR_ERROR,
    ENTER_MODE,
    EXIT_MODE,
    ZERO_POSITION,
    MitCodec,
    MitRanges,
    Variant,
    is_special,
)
from skel_ros.hardware.mit.models import resolve

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager

    import can

    from skel_ros.hardware.base import ActuatorSpec

__all__ = ["DAMIAO_REGISTER_ID", "MitEmulator", "MitMotion", "start_emulator"]

_LOG = logging.getLogger(__name__)
DAMIAO_REGISTER_ID = 0x7FF
_REG_READ, _REG_WRITE, _REG_STORE, _REG_FEEDBACK = 0x33, 0x55, 0xAA, 0xCC
_TIMEOUT_RID = 9
_TIMEOUT_UNIT = 50e-6
_LOST_COMMUNICATION = 0xD


class MitMotion(Motion, Protocol):
    """What moves an MIT motor's shaft: a Motion that takes the firmware's command.

    :class:`~skel_ros.emulation.motor.MotorModel`, or a joint of a physics world
    (:mod:`skel_ros.physical.mit`).
    """

    def set_impedance(self, position: float, velocity: float, kp: float, kd: float,
                      effort: float) -> None:
        """``u = kp (position - p) + kd (velocity - v) + effort`` from now on."""
        ...


@dataclass
class _Motor:
    spec: ActuatorSpec
    codec: MitCodec
    model: MitMotion
    offset: float = 0.0   # true position of the reported zero
    error: int = 0
    silent: bool = False
    frames: int = 0
    last_rx: float | None = None          # emulator time of the last frame addressed to it
    timeout: float = 0.0                  # s (Damiao register 9, or the firmware setting)
    timed_out: bool = False
    command: tuple[float, float, float, float, float] | None = None
    specials: list[bytes] = field(default_factory=list)
    watchdog_events: list[float] = field(default_factory=list)
    drop: int = 0
    silent_until: float = -math.inf       # emulator time: no replies before (after zero)
    entered: list[tuple[float, float, float, float, float] | None] = field(
        default_factory=list)             # the command applied at each enter


def _motor_params(ranges: MitRanges, given: Mapping[str, Any], motor_id: int) -> MotorParams:
    """The dynamics of one emulated motor: its speed and torque from its model's ranges.

    The motor turns as fast and pushes as hard as its firmware's V and T ranges say (an
    AK10-9 up to 65 N·m, a Mini Cheetah up to 18 N·m), as the Dynamixel emulator takes
    each servo's own no-load speed and stall torque. ``options["motor"]`` fields win.
    """
    fields = {
        "max_velocity": max(-ranges.v_min, ranges.v_max),
        "max_effort": max(-ranges.t_min, ranges.t_max),
        **given,
    }
    try:
        return MotorParams(**fields)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"MIT emulator: bad motor parameters for id {motor_id}: {exc}"
                          ) from None


class MitEmulator:
    """MIT-mode motors answering on a python-can bus from a background thread.

    Args:
        transport: python-can mapping; default (``{}``) a fresh ``virtual`` channel.
        actuators: the motors (their model / options give ranges and variant).
        options: see the module docstring.

    Attributes:
        transport: what the driver's ``BusSpec.transport`` needs to reach it.
    """

    def __init__(self, transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                 options: Mapping[str, Any] | None = None) -> None:
        opts = dict(options or {})
        tr = can_arguments(transport, "mit")
        self.transport: Mapping[str, Any] = dict(tr)
        self.clock: Callable[[], float] = opts.get("clock", time.monotonic)
        self._last_frame_time = -math.inf
        self.master_id = int(opts.get("master_id", 0))
        self.temperature = float(opts.get("temperature", 30.0))
        initial = dict(opts.get("initial_positions") or {})
        given = dict(opts.get("motor") or {})
        can_timeout = dict(opts.get("can_timeout") or {})
        self.zero_silence = float(opts.get("zero_silence", 0.0))
        now = self.clock()
        self._motors: dict[int, _Motor] = {}
        for act in actuators:
            explicit = act.model or all(f"{k}_max" in act.options for k in ("p", "v", "t"))
            ranges, variant = resolve(act.model if explicit else "MINI-CHEETAH", act.options,
                                      f"emulated MIT id {act.id}")
            model = self._motion(act, ranges, _motor_params(ranges, given, act.id),
                                 float(initial.get(act.id, 0.0)), now)
            model.mode = ControlMode.IMPEDANCE
            self._motors[act.id] = _Motor(act, MitCodec(ranges, variant), model)
            if act.id in can_timeout:
                if variant is Variant.DAMIAO:
                    raise ConfigError(f"MIT emulator id {act.id}: a Damiao motor's CAN "
                                      "timeout is its register 9, written over CAN")
                self._motors[act.id].timeout = float(can_timeout[act.id])
        self._lock = self._motion_lock()
        self._stop = threading.Event()
        self._bus: can.BusABC = can_transport.open_bus(tr)
        self._thread = threading.Thread(target=self._run, name="mit-emulator", daemon=True)
        self._thread.start()

    def _motion(self, actuator: ActuatorSpec, ranges: MitRanges,  # noqa: ARG002
                params: MotorParams, position: float, now: float) -> MitMotion:
        """What moves one motor's shaft, at ``position`` (rad, at the shaft) at ``now``.

        A motor model of its own here; :mod:`skel_ros.physical.mit` gives a physics world's
        joint. Called from ``__init__`` for each actuator, before the thread starts.
        """
        return MotorModel(params, position, now)

    def _motion_lock(self) -> AbstractContextManager[Any]:
        """The lock held while a frame or a call acts on the motors: this emulator's own.

        :mod:`skel_ros.physical.mit` gives its physics world's, which the emulators of
        other buses moving that world hold too.
        """
        return threading.Lock()

    # ------------------------------------------------------------------ control

    def stop(self) -> None:
        """Stop answering and release the bus; idempotent, never raises."""
        self._stop.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=2.0)
        try:
            self._bus.shutdown()
        except Exception as exc:  # noqa: BLE001 - stop never raises
            _LOG.warning("MIT emulator: shutdown failed: %s", exc)

    def state(self, actuator_id: int) -> MotorState:
        """The true state of one motor (advanced to now; position in its own zero)."""
        with self._lock:
            m = self._motors[actuator_id]
            m.model.step(self.clock())
            s = m.model.state
            return MotorState(s.position - m.offset, s.velocity, s.effort, s.torque_enabled)

    def inject_error(self, actuator_id: int, code: int) -> None:
        """Report error ``code`` from now on (torque drops); 0 clears it.

        Codes are the variant's: CubeMars error byte (1..6), Damiao status (8..14);
        the Mini Cheetah reply has no error field.
        """
        with self._lock:
            m = self._motors[actuator_id]
            m.error = code
            if code:
                m.model.set_torque(False, self.clock())  # noqa: FBT003

    def set_silent(self, actuator_id: int, silent: bool = True) -> None:  # noqa: FBT001, FBT002
        """Stop (or resume) answering, as an unplugged motor."""
        with self._lock:
            self._motors[actuator_id].silent = silent

    def frames_received(self, actuator_id: int) -> int:
        """How many frames addressed to the motor it received."""
        with self._lock:
            return self._motors[actuator_id].frames

    def command(self, actuator_id: int) -> tuple[float, float, float, float, float] | None:
        """The last command ``(p, v, kp, kd, t_ff)`` as the firmware decoded it."""
        with self._lock:
            return self._motors[actuator_id].command

    def entered(self, actuator_id: int) -> list[tuple[float, float, float, float, float] | None]:
        """The command ``(p, v, kp, kd, t_ff)`` the motor applied at each *enter*, in order.

        None: none retained since power-up (zero gains).
        """
        with self._lock:
            return list(self._motors[actuator_id].entered)

    def specials(self, actuator_id: int) -> list[bytes]:
        """Every enter / exit / zero / clear-error frame the motor received, in order."""
        with self._lock:
            return list(self._motors[actuator_id].specials)

    def drop_torque(self, actuator_id: int) -> None:
        """The motor falls back to rest mode by itself (a brown-out, its own protection)."""
        with self._lock:
            self._motors[actuator_id].model.set_torque(False, self.clock())  # noqa: FBT003

    def move_to(self, actuator_id: int, position: float) -> None:
        """Put the motor at ``position`` (in its own zero) at rest, as a hand moving it."""
        with self._lock:
            m = self._motors[actuator_id]
            m.model.step(self.clock())
            m.model.set_position(position + m.offset)

    def drop_frames(self, actuator_id: int, count: int) -> None:
        """The motor ignores the next ``count`` frames addressed to it (lost on the wire)."""
        with self._lock:
            self._motors[actuator_id].drop = count

    def can_timeout(self, actuator_id: int) -> float:
        """The motor's CAN timeout in seconds (0: none)."""
        with self._lock:
            return self._motors[actuator_id].timeout

    def watchdog_events(self, actuator_id: int) -> list[float]:
        """The emulator times at which the motor's CAN timeout fired."""
        with self._lock:
            return list(self._motors[actuator_id].watchdog_events)

    # ------------------------------------------------------------------ thread

    def _run(self) -> None:
        while not self._stop.is_set():
            self._check_timeouts()
            try:
                msg = self._bus.recv(timeout=0.002 if self._any_timeout() else 0.05)
            except Exception as exc:  # noqa: BLE001 - a dead bus ends the emulator
                if not self._stop.is_set():
                    _LOG.warning("MIT emulator: receive failed, stopping: %s", exc)
                return
            if msg is None or msg.is_error_frame or msg.is_remote_frame:
                continue
            try:
                self._handle(msg.arbitration_id, bytes(msg.data), self._frame_time(msg))
            except Exception:  # noqa: BLE001 - one bad frame never stops the emulator
                _LOG.exception("MIT emulator: frame 0x%03X %s not handled",
                               msg.arbitration_id, bytes(msg.data).hex())

    def _frame_time(self, msg: can.Message) -> float | None:
        """When ``msg`` arrived, on the emulator's clock (None: now).

        A motor takes a frame the moment it arrives; this thread may take it later
        (:func:`~skel_ros.hardware.can_transport.arrived_at`). Never before an earlier
        frame's time.
        """
        at = can_transport.arrived_at(self.clock, msg.timestamp)
        if at is None:
            return None
        at = max(at, self._last_frame_time)
        self._last_frame_time = at
        return at

    def _any_timeout(self) -> bool:
        with self._lock:
            return any(m.timeout for m in self._motors.values())

    def _check_timeouts(self) -> None:
        """The motors' CAN timeouts, on the emulator's clock."""
        with self._lock:
            now = self.clock()
            for m in self._motors.values():
                if not m.timeout or m.timed_out or m.last_rx is None:
                    continue
                if now - m.last_rx <= m.timeout or not m.model.state.torque_enabled:
                    continue
                m.timed_out = True
                m.watchdog_events.append(now)
                m.model.step(now)
                if m.codec.variant is Variant.DAMIAO:
                    m.error = _LOST_COMMUNICATION
                    m.model.set_torque(False, now)  # noqa: FBT003
                else:   # Ben Katz's firmware: kp = kd = t_ff = 0, still in motor mode
                    m.model.set_impedance(m.model.state.position, 0.0, 0.0, 0.0, 0.0)
                    if m.command is not None:
                        p, v = m.command[:2]
                        m.command = (p, v, 0.0, 0.0, 0.0)

    def _handle(self, arbitration_id: int, data: bytes, at: float | None = None) -> None:
        """One frame, acting at emulator time ``at`` (None: now)."""
        if arbitration_id == DAMIAO_REGISTER_ID:
            self._register(data, at)
            return
        with self._lock:
            m = self._motors.get(arbitration_id)
            if m is None:
                return
            if m.drop > 0:
                m.drop -= 1
                return
            m.frames += 1
            now = self.clock() if at is None else at
            m.last_rx, m.timed_out = now, False
            model = m.model
            model.step(now)
            if is_special(data):
                m.specials.append(bytes(data))
                self._special(m, data, now)
            elif len(data) == 8:  # noqa: PLR2004
                if model.state.torque_enabled:   # in rest mode the firmware ignores it
                    m.command = m.codec.decode_command(data)
                    self._apply(m)
            else:
                return  # malformed: the firmware ignores it
            if m.silent or now < m.silent_until:
                return
            reply = self._reply(m)
        can_transport.send(self._bus, self.master_id, reply, what="MIT reply")

    def _special(self, m: _Motor, data: bytes, now: float) -> None:
        model = m.model
        if data == ENTER_MODE:
            if not m.error:
                if m.command is None:   # nothing retained since power-up: zero gains
                    model.set_impedance(model.state.position, 0.0, 0.0, 0.0, 0.0)
                else:                   # the retained command, at once
                    self._apply(m)
                m.entered.append(m.command)
                model.set_torque(True, now)  # noqa: FBT003
        elif data == EXIT_MODE:
            model.set_torque(False, now)  # noqa: FBT003
        elif data == ZERO_POSITION:   # in any state; p_des stays the same number
            m.offset = model.state.position
            if m.command is not None:
                self._apply(m)
            if m.codec.variant is not Variant.DAMIAO and self.zero_silence:
                m.silent_until = now + self.zero_silence
        elif data == CLEAR_ERROR and m.codec.variant is Variant.DAMIAO:
            m.error = 0

    @staticmethod
    def _apply(m: _Motor) -> None:
        """The retained command on the motor model (``p_des`` in the motor's own zero)."""
        assert m.command is not None  # noqa: S101 - callers check
        p, v, kp, kd, t = m.command
        m.model.set_impedance(p + m.offset, v, kp, kd, t)

    def _reply(self, m: _Motor) -> bytes:
        s = m.model.state
        r = m.codec.ranges
        # pack_reply: float_to_uint without clamping, low 16 bits kept (wraps by the span).
        top = 0xFFFF
        u = int((s.position - m.offset - r.p_min) * top / (r.p_max - r.p_min)) & top
        position = u * (r.p_max - r.p_min) / top + r.p_min
        return m.codec.encode_reply(m.spec.id, position, s.velocity, s.effort,
                                    temperature=self.temperature, error_code=m.error,
                                    enabled=s.torque_enabled)

    def _register(self, data: bytes, at: float | None = None) -> None:
        if len(data) < 4:  # noqa: PLR2004
            return
        motor_id = data[0] | (data[1] << 8)
        with self._lock:
            m = self._motors.get(motor_id)
            if m is None or m.codec.variant is not Variant.DAMIAO or m.silent:
                return
            m.frames += 1
            now = self.clock() if at is None else at
            m.last_rx, m.timed_out = now, False
            if data[2] == _REG_FEEDBACK:
                m.model.step(now)
                reply = self._reply(m)
            elif data[2] == _REG_WRITE and data[3] == _TIMEOUT_RID and len(data) == 8:  # noqa: PLR2004
                m.timeout = int.from_bytes(data[4:8], "little") * _TIMEOUT_UNIT
                reply = bytes((data[0], data[1], _REG_READ, data[3])) + data[4:8]
            elif data[2] in (_REG_READ, _REG_WRITE):
                value = self._register_value(m, data[3])
                if value is None:
                    return
                reply = bytes((data[0], data[1], _REG_READ, data[3])) + value
            else:
                return
        can_transport.send(self._bus, self.master_id, reply, what="Damiao register reply")

    def _register_value(self, m: _Motor, rid: int) -> bytes | None:
        r = m.codec.ranges
        ints = {7: self.master_id, 8: m.spec.id, 10: 1, 14: 5013,
                _TIMEOUT_RID: round(m.timeout / _TIMEOUT_UNIT)}
        floats = {21: r.p_max, 22: r.v_max, 23: r.t_max}
        if rid in ints:
            return struct.pack("<I", ints[rid])
        if rid in floats:
            return struct.pack("<f", floats[rid])
        return None


def start_emulator(transport: Mapping[str, Any], actuators: Sequence[ActuatorSpec],
                   options: Mapping[str, Any]) -> MitEmulator:
    """Start emulated MIT motors (a thread of this process).

    The protocol ``mit``'s emulator (:mod:`skel_ros.emulation`). ``transport`` may be
    ``{}``: a fresh python-can ``virtual`` channel is used; the emulator's ``transport``
    attribute says how to reach it.
    """
    return MitEmulator(transport, actuators, options)
