"""MitBus: MIT-mode CAN motors (Mini Cheetah, T-motor/CubeMars AK, Damiao) on one bus.

The protocol is request/reply: a motor answers every frame it receives (command,
enter, exit, zero) with one state reply, and sends nothing on its own. So:

* :meth:`MitBus.write` sends one command frame per actuator and does not wait;
* :meth:`MitBus.read` makes sure every actuator got a frame since the last read (it
  resends the last command to an enabled actuator that got none, *exit motor mode* to
  a disabled one, a feedback request to a Damiao motor; none changes anything), then
  collects one reply per actuator, the latest winning, before
  ``reply_timeout``.

Replies to :meth:`write` are thus read one control cycle later: the measured values
are at most one cycle older than on a bus that waits after every command, and writing
never blocks the control loop. Each reading carries the time its values were measured
(``ActuatorState.stamp``): when the frame it answers was sent, not when it was read; a
motor answers its frames in order, so a reply answers the oldest frame still awaiting one
(a late reply is as old as its own frame, :meth:`MitBus._answered`). A
motor reporting an error is reported by :meth:`read`
(``error_code``, ``fault``), not raised.

What the firmware keeps (Ben Katz's mbed firmware, which CubeMars AK MIT mode derives
from): it unpacks commands only in motor mode and keeps the last one across *exit* and
*enter*, so *enter* applies the previous session's goal and gains at once. So every
*exit motor mode* this driver sends is preceded by a **limp command** (kp = kd = t_ff =
0: no torque whatever is retained), and :meth:`set_torque` ``(True)`` sends each motor
its hold command (the last one written since torque went off, else a limp one) the
moment that motor's *enter* reply arrives. *Set zero* takes effect in any state on that
firmware (keeping ``p_des``, so a motor in motor mode jumps) and is ignored outside its
menu by ``bgkatz/motorcontrol``: :meth:`zero` refuses a motor with torque on.

Positions past ``±p_max`` wrap: the firmware packs the reply without clamping and keeps
16 bits, so a joint 0.5 rad past ``p_max`` reads about ``p_min + 0.5``. The driver
refuses position limits that are not inside the motor's range, and :meth:`read` reports
a jump of more than half the span between two consecutive readings of a motor as a fault
(``error_code`` bit :data:`WRAP_FAULT`); the fault stays while the readings are off by a
span (it clears when they wrap back), and is never unwrapped silently.

Reading a motor's state without changing it: a Damiao motor answers a *feedback request*
(register frame on 0x7FF, ``id_l id_h 0xCC``) with its state, whose status says enabled,
disabled or the error. Mini Cheetah and CubeMars AK firmware answer only command and
special frames, and their replies carry no torque state; *enter* / *exit motor mode*
switch torque. So :meth:`open` with ``keep_torque``: a Damiao motor found enabled without
error is kept (nothing else sent); a Cheetah / CubeMars motor this driver had enabled
before the bus went down gets its last command frame again (a motor still in motor mode
keeps holding the same goal, one in rest mode ignores it) and is reported as holding,
which the driver cannot verify; every other motor gets *exit motor mode* (torque off).

Device watchdog (``BusSpec.device_watchdog``): Damiao motors get their CAN timeout
register (9, ``TIMEOUT``, units of 50 µs, RAM only) written at open and cleared by
:meth:`close` with ``torque_off``; without frames for that long a Damiao motor disables
itself and reports "lost communication". Mini Cheetah (Ben Katz) and CubeMars AK firmware
have a CAN timeout too ("CAN Timeout (cycles)" of the current loop, zeroing kp, kd and
t_ff), but only in their serial setup menu, not over CAN: it must be set there, and
the driver says so once at open when a watchdog is asked for.

Bus options (``buses.<name>.options``):

    reply_timeout: 0.05      # s to wait for the replies of one read / torque switch;
                             # default: the frames' wire time at the bitrate + 5 ms +
                             # the YAML's timeout_margin
    retries: 2               # re-sends to silent motors while opening / switching torque
    rounding: nearest        # nearest | truncate (see skel_ros.hardware.mit.codec)
    clear_errors: false      # Damiao: send "clear error" when opening finds an error
                             # (else clear_faults does, on request)

Actuator options: ranges (``p_max``, ``v_max``, ``t_max``, ``kp_max``, ``kd_max`` and
``*_min``; default the model's, see :mod:`skel_ros.hardware.mit.models`), ``variant``
(``cheetah``/``cubemars``/``damiao``), gains ``kp`` (needed in position and impedance mode)
and ``kd``, each inside the model's gain range. Per mode the frame is: position -> (p,
v_ff, kp, kd, 0); velocity -> (0, v, 0, kd, 0) (needs ``kd`` > 0); effort -> (0, 0, 0,
0, t); impedance -> all five, NaN gains replaced by ``kp``/``kd``.
"""

from __future__ import annotations

import logging
import math
import struct
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from skel_ros.hardware import can_transport
from skel_ros.hardware.base import (
    NO_LIMITS,
    ActuatorBus,
    ActuatorCommand,
    ActuatorSpec,
    ActuatorState,
    BusSpec,
    ControlMode,
)
from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)
from skel_ros.hardware.mit.codec import (
    CLEAR_ERROR,
    ENTER_MODE,
    EXIT_MODE,
    ZERO_POSITION,
    CommandError,
    MitCodec,
    MitReply,
    Variant,
)
from skel_ros.hardware.mit.models import resolve

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    import can

__all__ = ["WRAP_FAULT", "ZERO_WAIT", "MitBus"]

_LOG = logging.getLogger(__name__)
_MAX_STD_ID = 0x7FF
_MOTOR_TURNAROUND = 0.005        # s a motor may take to answer a frame
# s (or four reply timeouts if longer) of reads ending with a frame unanswered before one
# frame is no longer awaited (MitBus._give_up_lost): far beyond a motor's turnaround and
# a loaded host's stall.
_LOST_AFTER = 0.5
_IN_FLIGHT = 64                  # frames kept awaiting their replies, per motor
_DAMIAO_REGISTER_ID = 0x7FF
_REG_READ, _REG_WRITE, _REG_FEEDBACK = 0x33, 0x55, 0xCC
_DAMIAO_TIMEOUT_RID = 9          # CAN timeout, units of 50 us (damiao-motor register table)
_DAMIAO_TIMEOUT_UNIT = 50e-6
_REGISTERS_USED = frozenset({_DAMIAO_TIMEOUT_RID, 21, 22, 23})   # TIMEOUT, PMAX, VMAX, TMAX
_BUS_OPTIONS = ("reply_timeout", "retries", "rounding", "clear_errors")
_MAX_BYTE_ID = 0xFF              # Cheetah / CubeMars replies carry the id in one byte
#: s :meth:`MitBus.zero` waits for a motor to answer again after *set zero* (AK firmware
#: stays silent for up to about a second after it).
ZERO_WAIT = 1.5
#: ``error_code`` bit (above every MIT firmware's own codes) of a wrapped position reading.
WRAP_FAULT = 0x100
_WRAP_TEXT = ("position reading wrapped: the joint is outside the motor's ±P_MAX range")


@dataclass
class _Motor:
    spec: ActuatorSpec
    codec: MitCodec
    kp: float
    kd: float
    enabled: bool = False
    last_frame: bytes | None = None
    reply: MitReply | None = None
    stamp: float = math.nan       # when the latest reply's values were measured
    # when each frame the motor has not answered yet was sent, oldest first
    sent: deque[float] = field(default_factory=lambda: deque(maxlen=_IN_FLIGHT))
    behind_since: float = math.nan  # reads have ended with a frame unanswered since then
    timeout_armed: bool = False
    limp: bytes = b""             # kp = kd = t_ff = 0: sent before every exit
    position: float = math.nan    # the last position read (any reply)
    wraps: int = 0                # net wraps seen (+1: up past p_max); fault while != 0


@dataclass
class _Heard:
    """What a collection saw besides the awaited replies (for timeout messages)."""

    other_ids: set[int] = field(default_factory=set)   # reply id bytes of no motor here
    on_motor_ids: int = 0    # frames on a configured id: another controller, our echo,
    #                          or motors answering on their own id (not read as replies)


def _gain(options: Mapping[str, Any], key: str, where: str, lo: float, hi: float) -> float:
    """The gain option ``key`` (NaN when absent); it must lie in the model's ``[lo, hi]``."""
    value = options.get(key, math.nan)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: option {key!r} must be a number, got {value!r}")
    value = float(value)
    if not math.isnan(value) and not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{where}: option {key!r} must be >= 0, got {value!r}")
    if not math.isnan(value) and not lo <= value <= hi:
        raise ConfigError(f"{where}: option {key!r} = {value:g} is outside the motor's "
                          f"{key} range [{lo:g}, {hi:g}] (the frame cannot carry it)")
    return value


def _check_position_limits(limits: tuple[float, float], lo: float, hi: float, where: str,
                           ) -> None:
    """Position limits must lie inside the motor's range: past it the readings wrap."""
    a, b = limits
    if not (lo <= a <= b <= hi):
        raise ConfigError(
            f"{where}: position limits [{a:g}, {b:g}] at the motor are not inside its "
            f"range [{lo:g}, {hi:g}] (p_min/p_max): past it the motor's position reading "
            "wraps to the other end. Give the joint finite limits inside the range (mind "
            "gear_ratio and zero_offset), or set p_min/p_max to the firmware's")


class MitBus(ActuatorBus):
    """Every MIT-mode motor on one CAN bus (see the module docstring).

    Args:
        spec: the bus; ``transport`` is a python-can mapping
            (:func:`skel_ros.hardware.can_transport.open_bus`).
        actuators: the motors (CAN ids 1..0x7FF, Cheetah / CubeMars 1..0xFF: their replies
            carry the id in one byte; Damiao ids must differ in their low 4 bits, the
            only part its replies carry); position limits inside the motor's range
            (none given, :data:`~skel_ros.hardware.base.NO_LIMITS`: a tool that moves
            nothing, such as ``skel-ros clear-faults``, which has no model).
        clock: monotonic seconds.

    Raises:
        ConfigError: unknown model / bad ranges / gains missing or outside the model's
            range / bad ids or options / position limits not inside the range.
    """

    protocol: ClassVar[str] = "mit"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],  # noqa: C901, PLR0912, PLR0915
                 clock: Callable[[], float]) -> None:
        super().__init__(spec, actuators, clock)
        opts = spec.options
        unknown = set(opts) - set(_BUS_OPTIONS)
        if unknown:
            raise ConfigError(f"bus {spec.name!r}: unknown MIT bus option(s) "
                              f"{sorted(unknown)}; known: {', '.join(_BUS_OPTIONS)}")
        n = len(self.actuators)
        # One round: a frame to each motor and a reply from each (8 bytes).
        computed = (can_transport.wire_time(spec.transport, [8] * (2 * n))
                    + _MOTOR_TURNAROUND + spec.timeout_margin)
        timeout = opts.get("reply_timeout", computed)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
                0 < timeout <= 10):  # noqa: PLR2004
            raise ConfigError(f"bus {spec.name!r}: reply_timeout must be in (0, 10] s, "
                              f"got {timeout!r}")
        self.reply_timeout = float(timeout)
        retries = opts.get("retries", 2)
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 10:  # noqa: PLR2004
            raise ConfigError(f"bus {spec.name!r}: retries must be an integer in 0..10, "
                              f"got {retries!r}")
        self.retries = retries
        rounding = str(opts.get("rounding", "nearest"))
        if rounding not in ("nearest", "truncate"):
            raise ConfigError(f"bus {spec.name!r}: rounding must be nearest or truncate, "
                              f"got {rounding!r}")
        self.clear_errors = bool(opts.get("clear_errors", False))
        watchdog = float(spec.device_watchdog)
        if not (math.isfinite(watchdog) and watchdog >= 0):
            raise ConfigError(f"bus {spec.name!r}: device_watchdog must be >= 0 s, "
                              f"got {watchdog!r}")
        self.timeout_units = (max(1, round(watchdog / _DAMIAO_TIMEOUT_UNIT)) if watchdog
                              else 0)
        self._told_no_timeout = False
        self._motors: dict[int, _Motor] = {}
        nibbles: dict[int, int] = {}
        for act in self.actuators:
            where = f"bus {spec.name!r} MIT actuator {act.name or act.id!r} (id {act.id})"
            if not 1 <= act.id <= _MAX_STD_ID:
                raise ConfigError(f"{where}: CAN id must be in 1..0x7FF")
            ranges, variant = resolve(act.model, act.options, where)
            if variant is not Variant.DAMIAO and act.id > _MAX_BYTE_ID:
                raise ConfigError(f"{where}: {variant.value} replies carry the id in one "
                                  f"byte, so CAN id must be in 1..{_MAX_BYTE_ID}")
            kp = _gain(act.options, "kp", where, ranges.kp_min, ranges.kp_max)
            kd = _gain(act.options, "kd", where, ranges.kd_min, ranges.kd_max)
            if act.mode in (ControlMode.POSITION, ControlMode.IMPEDANCE) and not kp > 0:
                raise ConfigError(f"{where}: mode {act.mode.value} needs option kp > 0 "
                                  "(position gain, N·m/rad)")
            if act.mode is ControlMode.VELOCITY and not kd > 0:
                raise ConfigError(f"{where}: mode velocity needs option kd > 0 "
                                  "(velocity gain, N·m·s/rad)")
            if act.limits is not NO_LIMITS:  # the backend always gives the DOF's limits
                _check_position_limits(act.limits.position, ranges.p_min, ranges.p_max, where)
            if variant is Variant.DAMIAO:
                other = nibbles.setdefault(act.id & 0x0F, act.id)
                if other != act.id:
                    raise ConfigError(f"{where}: Damiao replies carry only the low 4 bits "
                                      f"of the id; id {other} has the same")
            try:
                codec = MitCodec(ranges, variant, rounding, act.limits)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
            if ranges.kp_min != 0 or ranges.kd_min != 0:
                raise ConfigError(f"{where}: kp_min and kd_min must be 0 (the limp command "
                                  "sent before every exit needs zero gains)")
            # Without the limits: t_ff is 0 (to half a step) even when they exclude 0.
            limp = MitCodec(ranges, variant, rounding).encode(0.0, 0.0, 0.0, 0.0, 0.0)
            self._motors[act.id] = _Motor(act, codec, kp if kp > 0 else 0.0,
                                          kd if kd > 0 else 0.0, limp=limp)
        others = [i for i, m in self._motors.items()
                  if m.codec.variant is not Variant.DAMIAO and i < 0x100 and (i & 0x0F) in nibbles]  # noqa: PLR2004
        if others:
            raise ConfigError(f"bus {spec.name!r}: MIT id(s) {others} would be mistaken for "
                              "Damiao replies (same low 4 bits as a Damiao id on the bus)")
        self._bus: can.BusABC | None = None
        self._where = can_transport.describe(spec.transport)
        self._fresh: set[int] = set()   # got a frame since the last read

    # ------------------------------------------------------------------ lifecycle

    @property
    def is_open(self) -> bool:
        """Whether :meth:`open` succeeded and :meth:`close` was not called since."""
        return self._bus is not None

    def open(self, *, keep_torque: bool = False) -> None:
        """Open the bus, read each motor as far as it can be read, configure it.

        See the module docstring for what reading means per motor family and what
        ``keep_torque`` keeps. Every other motor gets *exit motor mode* (torque off) and
        must answer. A motor reporting an error is reported by :meth:`read` (Damiao:
        *clear error* first when ``clear_errors``). Damiao motors get the device
        watchdog's CAN timeout.

        Raises:
            TransportError: the bus cannot be opened.
            TransportTimeoutError: a motor did not answer (names it, the motors that
                answered, other ids heard and the bitrate).
            DeviceError: a Damiao motor maps other ranges than configured (registers
                21-23), or did not take its CAN timeout.
        """
        if self._bus is not None:
            self.close(torque_off=not keep_torque)
        self._bus = can_transport.open_bus(self.spec.transport)
        for m in self._motors.values():  # a new connection: no frame awaits its reply
            m.sent.clear()
        try:
            self._drain()
            keep = self._keep(keep_torque)
            ids = [i for i in self._motors if i not in keep]
            self._exchange(ids, EXIT_MODE, "exit motor mode")
            self._torque_off(ids)
            faulty = [i for i in ids if self._motors[i].reply.error_code]  # type: ignore[union-attr]
            damiao = [i for i in faulty if self._motors[i].codec.variant is Variant.DAMIAO]
            if damiao and self.clear_errors:
                _LOG.warning("%s: clearing errors of Damiao motor(s) %s", self._where, damiao)
                self._exchange(damiao, CLEAR_ERROR, "clear error")
                self._exchange(damiao, EXIT_MODE, "exit motor mode")
            self._check_damiao_ranges()
            self._arm_timeouts()
        except BaseException:
            self.close(torque_off=not keep_torque)
            raise
        self._fresh.clear()

    def _keep(self, keep_torque: bool) -> list[int]:  # noqa: FBT001
        """The motors kept holding (module docstring); the others still need *exit*."""
        if not keep_torque:
            return []
        damiao = [i for i, m in self._motors.items() if m.codec.variant is Variant.DAMIAO]
        kept = []
        if damiao:
            self._exchange(damiao, None, "feedback request")
            for i in damiao:
                r = self._motors[i].reply
                assert r is not None  # noqa: S101 - _exchange guarantees it
                if r.enabled and not r.error_code:
                    self._motors[i].enabled = True
                    kept.append(i)
        blind = [i for i, m in self._motors.items() if m.codec.variant is not Variant.DAMIAO
                 and m.enabled and m.last_frame is not None]
        for i in blind:
            frame = self._motors[i].last_frame
            assert frame is not None  # noqa: S101 - selected above
            self._exchange([i], frame, "command (repeated)")
            if self._motors[i].reply.error_code:  # type: ignore[union-attr]
                continue
            kept.append(i)
        if blind:
            _LOG.warning("%s: MIT id(s) %s kept holding their last command; their replies "
                         "carry no torque state, so a motor that lost torque during the "
                         "outage is not seen", self._where, blind)
        return kept

    def _arm_timeouts(self) -> None:
        """Write the Damiao CAN timeout (register 9); say once that the others cannot."""
        others = [i for i, m in self._motors.items() if m.codec.variant is not Variant.DAMIAO]
        if self.timeout_units and others and not self._told_no_timeout:
            self._told_no_timeout = True
            _LOG.warning("%s: MIT id(s) %s (Mini Cheetah / CubeMars firmware) cannot get the "
                         "device watchdog over CAN: set 'CAN Timeout' in the motor's serial "
                         "setup menu, else a motor keeps its last command when the host "
                         "stops", self._where, others)
        for i, m in self._motors.items():
            if m.codec.variant is Variant.DAMIAO and (self.timeout_units or m.timeout_armed):
                self._write_register(i, _DAMIAO_TIMEOUT_RID, self.timeout_units,
                                     "CAN timeout")
                m.timeout_armed = bool(self.timeout_units)

    def close(self, *, torque_off: bool = True) -> None:
        """Release the bus; never raises.

        With ``torque_off``: a limp command and *exit motor mode* (replies awaited) and
        the Damiao CAN timeouts cleared. Without: nothing is sent; motors keep their last
        command and their timeouts.
        """
        bus = self._bus
        if bus is None:
            return
        if torque_off:
            try:
                self._exchange(list(self._motors), EXIT_MODE, "exit motor mode", retries=0)
            except HardwareError as exc:
                _LOG.warning("%s: torque off on close not confirmed: %s", self._where, exc)
            self._torque_off(list(self._motors))
            for i, m in self._motors.items():
                if m.timeout_armed:
                    try:
                        self._write_register(i, _DAMIAO_TIMEOUT_RID, 0, "CAN timeout off")
                        m.timeout_armed = False
                    except HardwareError as exc:
                        _LOG.warning("%s: clearing the CAN timeout of id %d failed: %s",
                                     self._where, i, exc)
        self._bus = None
        try:
            bus.shutdown()
        except Exception as exc:  # noqa: BLE001 - close never raises
            _LOG.warning("%s: shutdown failed: %s", self._where, exc)

    # ------------------------------------------------------------------ contract

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """*Enter* (torque on) or *exit* (torque off) motor mode and wait for the replies.

        Torque off: a limp command, then *exit* (module docstring). Torque on: *enter*,
        and the moment a motor's reply to it arrives, its hold command: the last command
        written since its torque went off, else a limp one. The firmware applies what it
        kept from before on *enter*; this bounds that to the time between the reply and
        the next frame.

        Raises:
            TransportTimeoutError: a motor did not answer.
            DeviceError: a motor reports an error or a wrapped position (enabling only).
        """
        targets = self._ids(ids)
        if not enabled:
            self._exchange(targets, EXIT_MODE, "exit motor mode")
            self._torque_off(targets)
            return
        faulty = [i for i in targets if self._motors[i].wraps
                  or ((r := self._motors[i].reply) is not None and r.error_code)]
        if faulty:
            raise self._device_error(faulty, "refusing to enable")

        def hold(motor_id: int) -> None:
            m = self._motors[motor_id]
            self._send(motor_id, m.last_frame if m.last_frame is not None else m.limp,
                       "hold command")

        self._exchange(targets, ENTER_MODE, "enter motor mode", then=hold)
        for i in targets:
            self._motors[i].enabled = True
        faulty = [i for i in targets if self._motors[i].reply.error_code]  # type: ignore[union-attr]
        if faulty:
            raise self._device_error(faulty, "after enter motor mode")

    def _torque_off(self, ids: Iterable[int]) -> None:
        """Record torque off: the last command is forgotten (never re-sent on enable)."""
        for i in ids:
            m = self._motors[i]
            m.enabled = False
            m.last_frame = None

    def clear_faults(self, ids: Sequence[int] | None = None) -> dict[int, str]:
        """Each motor's own recovery where its firmware has one, for the motors in error.

        Damiao motors are read first (feedback request); the others by their last reply.
        Damiao in error: *clear error* (``..fb``), *exit motor mode*, re-read. CubeMars AK
        (MIT mode) has no clear-error command over CAN: *exit motor mode* (torque off)
        and the answer says what the motor reports. The Mini Cheetah reply has no error
        field. A motor whose position reading wrapped gets a limp command and *exit
        motor mode* (torque off); the fault stays until the readings wrap back (the
        joint moved back inside the range) or :meth:`zero`. Motors not in error are left
        alone.

        Raises:
            TransportError: the bus is not open, or failed.
        """
        self._require_open()
        targets = self._ids(ids)
        damiao = [i for i in targets if self._motors[i].codec.variant is Variant.DAMIAO]
        if damiao:
            self._exchange(damiao, None, "feedback request")
        out: dict[int, str] = {}
        for i in targets:
            m = self._motors[i]
            r = m.reply
            if m.wraps:
                self._exchange([i], EXIT_MODE, "exit motor mode")
                self._torque_off([i])
                out[i] = (f"limp command and exit motor mode sent (torque off); still: "
                          f"{_WRAP_TEXT}: move it back inside with torque off (the fault "
                          "clears when the reading wraps back), or set a new zero")
            elif m.codec.variant is Variant.CHEETAH:
                out[i] = "no error field in the Mini Cheetah reply; nothing to clear"
            elif r is None or not r.error_code:
                out[i] = "no error"
            elif m.codec.variant is Variant.DAMIAO:
                before = f"{r.fault} (status {r.error_code})"
                self._exchange([i], CLEAR_ERROR, "clear error")
                self._exchange([i], EXIT_MODE, "exit motor mode")
                self._torque_off([i])
                now = m.reply
                assert now is not None  # noqa: S101 - _exchange guarantees it
                out[i] = (f"clear error sent (was {before}); "
                          + (f"still: {now.fault} (status {now.error_code})" if now.error_code
                             else "no error, torque off"))
            else:
                self._exchange([i], EXIT_MODE, "exit motor mode")
                self._torque_off([i])
                now = m.reply
                assert now is not None  # noqa: S101
                out[i] = ("exit motor mode sent (the CubeMars MIT protocol has no "
                          "clear-error command; the code clears when its cause is gone, or "
                          "power-cycle the motor); "
                          + (f"still: {now.fault} (code {now.error_code})" if now.error_code
                             else "no error now, torque off"))
        return out

    def zero(self, ids: Sequence[int] | None = None) -> None:
        """Make the present position each motor's zero (*set zero* frame), torque off only.

        Changes the motor's calibration (stored in flash on most firmware): only on
        request, never on open. Refused for a motor with torque on: Ben Katz's mbed
        firmware (CubeMars AK) zeroes in any state and keeps ``p_des``, so the motor
        would jump by its old position; ``bgkatz/motorcontrol`` ignores it outside its
        menu. *Set zero* is sent once, never repeated; AK firmware may stay silent for up
        to a second after it, so each motor gets up to :data:`ZERO_WAIT` s to answer,
        polled every ``reply_timeout`` with a frame that changes nothing (*exit motor
        mode* to a motor already off; a feedback request to a Damiao motor). Clears a
        wrapped-position fault (the new zero is inside the range).

        Raises:
            DeviceError: a motor has torque on (nothing is sent).
            TransportTimeoutError: a motor did not answer in :data:`ZERO_WAIT` s.
        """
        targets = self._ids(ids)
        self._require_open()
        on = [i for i in targets if self._motors[i].enabled]
        if on:
            raise DeviceError(f"bus {self.spec.name!r}: refusing set zero for MIT id(s) {on}"
                              ": torque is on (the motor would jump, or the firmware ignore "
                              "it); switch torque off first", on[0])
        self._drain()
        for i in targets:
            self._send(i, ZERO_POSITION, "set zero")
        deadline = self.clock() + ZERO_WAIT
        pending = dict.fromkeys(targets, 1)
        heard = _Heard()
        while pending := self._collect(pending, heard):
            if self.clock() >= deadline:
                raise self._timeout(sorted(pending), targets, "set zero",
                                    f"{ZERO_WAIT:g} s (the zeroing wait)", heard)
            pending = {i: self._poll(i, "poll after set zero") for i in pending}
        for i in targets:
            m = self._motors[i]
            m.wraps = 0
            m.position = m.reply.position  # type: ignore[union-attr] - answered above

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """Send one command frame per actuator in ``commands`` (does not wait).

        ``p``, ``v`` and ``t_ff`` are encoded inside the actuator's limits.

        Raises:
            ConfigError: an id not on this bus.
            CommandError: a value needed by the actuator's mode is NaN or infinite.
            TransportError: the bus failed.
        """
        bus = self._require_open()
        for motor_id, cmd in commands.items():
            m = self._motors.get(motor_id)
            if m is None:
                raise ConfigError(f"bus {self.spec.name!r}: no MIT actuator with id {motor_id}")
            frame = self._frame(m, cmd)
            m.sent.append(self.clock())
            can_transport.send(bus, motor_id, frame, what=f"command to id {motor_id}")
            m.last_frame = frame
            self._fresh.add(motor_id)

    def read(self) -> dict[int, ActuatorState]:
        """One reply per actuator (see the module docstring); errors reported, not raised.

        A motor whose position reading jumped by more than half its span since the
        previous reading (it wrapped past ``±p_max``) is reported in fault
        (:data:`WRAP_FAULT`, module docstring) until the readings wrap back.

        Raises:
            TransportTimeoutError: a motor did not answer in ``reply_timeout``.
            TransportError: the bus failed.
        """
        self._require_open()
        expected: dict[int, int] = {}
        for motor_id, m in self._motors.items():
            if motor_id in self._fresh:
                expected[motor_id] = 1
            elif m.enabled and m.last_frame is not None:
                self._send(motor_id, m.last_frame, "command (repeated)")
                expected[motor_id] = 1
            else:   # changes nothing: a Damiao feedback request, or exit (torque off)
                expected[motor_id] = self._poll(motor_id, "poll")
        missing = self._collect(expected)
        self._fresh.clear()
        self._give_up_lost(self.clock())
        if missing:
            raise TransportTimeoutError(
                f"bus {self.spec.name!r} ({self._where}, "
                f"{can_transport.bitrate_text(self.spec.transport)}): no reply from MIT "
                f"id(s) {sorted(missing)} in {self.reply_timeout:.3g} s")
        out: dict[int, ActuatorState] = {}
        for motor_id, m in self._motors.items():
            r = m.reply
            assert r is not None  # noqa: S101 - _collect guarantees it
            torque = m.enabled if r.enabled is None else r.enabled
            code, fault = self._fault(m)
            out[motor_id] = ActuatorState(
                position=r.position, velocity=r.velocity, effort=r.torque,
                torque_enabled=torque and not code, error_code=code, fault=fault,
                temperature=r.temperature, stamp=m.stamp)
        return out

    # ------------------------------------------------------------------ internals

    def _frame(self, m: _Motor, cmd: ActuatorCommand) -> bytes:
        mode = m.spec.mode
        try:
            if mode is ControlMode.IMPEDANCE:
                kp = m.kp if math.isnan(cmd.kp) else cmd.kp
                kd = m.kd if math.isnan(cmd.kd) else cmd.kd
                return m.codec.encode(cmd.position, _or0(cmd.velocity), kp, kd,
                                      _or0(cmd.effort))
            if mode is ControlMode.POSITION:
                return m.codec.encode(cmd.position, _or0(cmd.velocity), m.kp, m.kd, 0.0)
            if mode is ControlMode.VELOCITY:
                return m.codec.encode(0.0, cmd.velocity, 0.0, m.kd, 0.0)
            return m.codec.encode(0.0, 0.0, 0.0, 0.0, cmd.effort)
        except CommandError as exc:
            raise CommandError(f"bus {self.spec.name!r} id {m.spec.id} "
                               f"({mode.value} mode): {exc}") from None

    def _ids(self, ids: Iterable[int] | None) -> list[int]:
        if ids is None:
            return list(self._motors)
        out = list(ids)
        unknown = [i for i in out if i not in self._motors]
        if unknown:
            raise ConfigError(f"bus {self.spec.name!r}: no MIT actuator with id(s) {unknown}")
        return out

    def _require_open(self) -> can.BusABC:
        if self._bus is None:
            raise TransportError(f"bus {self.spec.name!r} ({self._where}) is not open")
        return self._bus

    def _send(self, motor_id: int, frame: bytes, what: str) -> None:
        self._motors[motor_id].sent.append(self.clock())
        can_transport.send(self._require_open(), motor_id, frame,
                           what=f"{what} to id {motor_id}")

    def _send_frame(self, motor_id: int, frame: bytes | None, what: str) -> int:
        """Send ``frame`` (None: a Damiao feedback request); the replies to expect.

        *Exit motor mode* (torque off) goes after the motor's limp command (module
        docstring). One reply is awaited: a firmware answers every frame it takes, but
        need not answer a command outside motor mode; a second reply, if any, is taken
        as the latest.
        """
        m = self._motors[motor_id]
        if frame is None:
            m.sent.append(self.clock())
            can_transport.send(self._require_open(), _DAMIAO_REGISTER_ID,
                               bytes((motor_id & 0xFF, motor_id >> 8, _REG_FEEDBACK,
                                      0, 0, 0, 0, 0)),
                               what=f"feedback request to id {motor_id}")
            return 1
        if frame == EXIT_MODE:
            self._send(motor_id, m.limp, f"limp command before {what}")
        self._send(motor_id, frame, what)
        return 1

    def _poll(self, motor_id: int, what: str) -> int:
        """A frame that changes nothing for a motor with torque off; the replies to expect.

        Plain *exit motor mode* (a Damiao feedback request): the command the firmware
        keeps was made limp when torque went off, and a poll does not change it.
        """
        if self._motors[motor_id].codec.variant is Variant.DAMIAO:
            return self._send_frame(motor_id, None, f"feedback request ({what})")
        self._send(motor_id, EXIT_MODE, f"exit motor mode ({what})")
        return 1

    def _exchange(self, ids: Sequence[int], frame: bytes | None, what: str,
                  retries: int | None = None,
                  then: Callable[[int], None] | None = None) -> None:
        """Send ``frame`` to each id and wait until each answered; re-send to the silent.

        ``frame`` None: a Damiao feedback request. Every frame sent here is idempotent
        (exit, enter, clear error, a repeated command, a read), so a motor whose reply
        was lost may get it twice. ``then(id)`` runs the moment a motor has answered.
        """
        self._drain()
        pending = list(ids)
        tries = 1 + (self.retries if retries is None else retries)
        heard = _Heard()
        for _ in range(tries):
            expected = {i: self._send_frame(i, frame, what) for i in pending}
            missing = self._collect(expected, heard, then)
            if not missing:
                return
            pending = [i for i in pending if i in missing]
        raise self._timeout(pending, ids, what, f"{tries} x {self.reply_timeout:.3g} s", heard)

    def _timeout(self, missing: Sequence[int], ids: Sequence[int], what: str, waited: str,
                 heard: _Heard) -> TransportTimeoutError:
        answered = sorted(set(ids) - set(missing))
        others = sorted(heard.other_ids)
        return TransportTimeoutError(
            f"bus {self.spec.name!r} ({self._where}, "
            f"{can_transport.bitrate_text(self.spec.transport)}): no reply to {what} from "
            f"MIT id(s) {list(missing)} in {waited}; ids that answered: {answered or 'none'}"
            f"; replies from other ids: {others or 'none'}; frames on motor ids: "
            f"{heard.on_motor_ids} (another controller, or motors answering on their own "
            "id, are not read as replies)")

    def _collect(self, expected: Mapping[int, int], heard: _Heard | None = None,
                 then: Callable[[int], None] | None = None) -> dict[int, int]:
        """Receive until each motor in ``expected`` replied that often (keeping the latest).

        Returns:
            The motors still waiting after ``reply_timeout``, with the replies missing.
        """
        bus = self._require_open()
        waiting = {i: n for i, n in expected.items() if n > 0}
        for i in waiting:
            self._motors[i].reply = None
        heard = heard if heard is not None else _Heard()
        deadline = self.clock() + self.reply_timeout
        while waiting:
            msg = can_transport.recv(bus, deadline, self.clock)
            if msg is None:
                break
            done = self._take(msg, waiting, heard)
            if done is not None and then is not None:
                then(done)
        # Replies already queued behind the last awaited one: take them too (latest wins).
        while (msg := can_transport.recv(bus, 0.0, lambda: 1.0)) is not None:
            self._take(msg, {}, heard)
        return waiting

    def _answered(self, m: _Motor) -> float:
        """When the frame a reply of ``m`` answers was sent: when the motor measured it.

        A motor answers its frames in the order they came (one CAN id, one queue), so a
        reply answers the oldest frame not answered yet: a reply that came late (read a
        cycle later, after the next frame went out) is as old as its own frame, not the
        latest one. No frame awaiting a reply (one the motor sent on its own, or after
        :meth:`open`): now. A frame whose reply never comes: :meth:`_give_up_lost`.
        """
        return m.sent.popleft() if m.sent else self.clock()

    def _give_up_lost(self, now: float) -> None:
        """Stop awaiting a reply that is overdue (at the end of each read).

        A read ends with every frame answered unless a reply is late or lost: the host
        cannot tell which (replies carry no frame number), but a late one comes within a
        few cycles, while after a lost one every later reply would answer the frame
        before its own and the motor's readings would stay a frame older than stamped.
        A motor still awaiting a reply at the end of every read for :data:`_LOST_AFTER`
        (or four ``reply_timeout``) has one frame less awaiting it.
        """
        patience = max(_LOST_AFTER, 4.0 * self.reply_timeout)
        for m in self._motors.values():
            if not m.sent:
                m.behind_since = math.nan
            elif math.isnan(m.behind_since):
                m.behind_since = now
            elif now - m.behind_since > patience:
                m.sent.popleft()
                m.behind_since = now

    def _write_register(self, motor_id: int, rid: int, value: int, what: str) -> None:
        """Write a Damiao register (RAM) and read it back.

        Raises:
            TransportTimeoutError: no answer to the read-back.
            DeviceError: the motor holds another value afterwards.
        """
        bus = self._require_open()
        lo, hi = motor_id & 0xFF, motor_id >> 8
        can_transport.send(bus, _DAMIAO_REGISTER_ID,
                           bytes((lo, hi, _REG_WRITE, rid)) + value.to_bytes(4, "little"),
                           what=f"register {rid} write to id {motor_id}")
        self._drain_for(0.0)
        got = int.from_bytes(self._read_register(motor_id, rid, what), "little")
        if got != value:
            raise DeviceError(f"bus {self.spec.name!r} Damiao id {motor_id}: {what} register "
                              f"{rid} reads {got} after writing {value}", motor_id)

    def _read_register(self, motor_id: int, rid: int, what: str) -> bytes:
        """The 4 value bytes of a Damiao register (a read: changes nothing).

        Raises:
            TransportTimeoutError: no answer.
        """
        bus = self._require_open()
        lo, hi = motor_id & 0xFF, motor_id >> 8
        deadline = self.clock() + self.reply_timeout * (1 + self.retries)
        can_transport.send(bus, _DAMIAO_REGISTER_ID, bytes((lo, hi, _REG_READ, rid, 0, 0, 0, 0)),
                           what=f"register {rid} read of id {motor_id}")
        while (msg := can_transport.recv(bus, deadline, self.clock)) is not None:
            d = bytes(msg.data)
            if len(d) == 8 and d[:4] == bytes((lo, hi, _REG_READ, rid)):  # noqa: PLR2004
                return d[4:]
        raise TransportTimeoutError(
            f"bus {self.spec.name!r} ({self._where}): Damiao id {motor_id} did not answer "
            f"the read of register {rid} ({what})")

    def _check_damiao_ranges(self) -> None:
        """A Damiao motor's mapping ranges (registers 21-23) must be the configured ones.

        The firmware scales p, v and t with its PMAX, VMAX, TMAX; other values than the
        codec's (another model, or changed ranges) would scale every command wrongly.

        Raises:
            DeviceError: the ranges differ (the message gives both).
        """
        for i, m in self._motors.items():
            if m.codec.variant is not Variant.DAMIAO:
                continue
            r = m.codec.ranges
            found = [struct.unpack("<f", self._read_register(i, rid, name))[0]
                     for rid, name in ((21, "PMAX"), (22, "VMAX"), (23, "TMAX"))]
            wanted = [r.p_max, r.v_max, r.t_max]
            if any(abs(f - w) > 1e-6 * max(1.0, abs(w)) for f, w in zip(found, wanted,
                                                                     strict=True)):
                raise DeviceError(
                    f"bus {self.spec.name!r} MIT actuator {m.spec.name or i!r} (id {i}): "
                    f"expected {m.spec.model or 'the configured ranges'} with PMAX/VMAX/TMAX "
                    f"{wanted[0]:g}/{wanted[1]:g}/{wanted[2]:g}, the motor maps "
                    f"{found[0]:.6g}/{found[1]:.6g}/{found[2]:.6g} (registers 21-23): another "
                    "model, or set p_max/v_max/t_max in its options", i)

    def _register_answer(self, data: bytes) -> bool:
        """A Damiao answer to a register frame this driver sent (not a state reply).

        ``id_l id_h 33|55 rid ...`` for a Damiao id and a register this driver uses: a state
        reply would need a position within 1/256 of p_min and a velocity high byte equal
        to one of those register numbers to look the same.
        """
        if len(data) != 8 or data[2] not in (_REG_READ, _REG_WRITE) or (  # noqa: PLR2004
                data[3] not in _REGISTERS_USED):
            return False
        m = self._motors.get(data[0] | (data[1] << 8))
        return m is not None and m.codec.variant is Variant.DAMIAO

    def _drain_for(self, seconds: float) -> None:
        bus = self._require_open()
        deadline = self.clock() + seconds
        while (msg := can_transport.recv(bus, deadline, self.clock)) is not None:
            self._dropped(msg)

    def _take(self, msg: can.Message, waiting: dict[int, int], heard: _Heard) -> int | None:
        """Take one frame; the motor whose awaited replies are now complete, if any."""
        if msg.arbitration_id in self._motors and not (msg.is_error_frame
                                                        or msg.is_remote_frame):
            heard.on_motor_ids += 1  # another node's command (or our own echo)
        data = self._reply_data(msg)
        if data is None:
            return None
        for motor_id in self._candidates(data):
            m = self._motors[motor_id]
            try:
                reply = m.codec.decode_reply(data)
            except ProtocolError as exc:
                raise ProtocolError(f"bus {self.spec.name!r} id {motor_id}: {exc}") from None
            self._track_wraps(m, reply.position)
            m.reply = reply
            m.stamp = self._answered(m)
            if motor_id in waiting:
                waiting[motor_id] -= 1
                if waiting[motor_id] <= 0:
                    del waiting[motor_id]
                    return motor_id
            return None
        heard.other_ids.add(data[0])
        return None

    @staticmethod
    def _track_wraps(m: _Motor, position: float) -> None:
        """Count a jump of more than half the span since the last reading as a wrap.

        A motor cannot move that far between two readings; the firmware's 16-bit position
        wraps by the span past ``p_max`` / ``p_min``. Up past ``p_max`` reads as a big
        drop: +1; back: -1. Never unwrapped: the readings are reported as a fault.
        """
        r = m.codec.ranges
        if math.isfinite(m.position) and abs(position - m.position) > (r.p_max - r.p_min) / 2:
            m.wraps += 1 if position < m.position else -1
        m.position = position

    def _fault(self, m: _Motor) -> tuple[int, str]:
        """``(error_code, fault)`` of a motor: its reply's, plus a wrapped reading."""
        r = m.reply
        code, fault = (r.error_code, r.fault) if r is not None else (0, "")
        if m.wraps:
            code |= WRAP_FAULT
            fault = f"{fault}; {_WRAP_TEXT}" if fault else _WRAP_TEXT
        return code, fault

    def _candidates(self, data: bytes) -> list[int]:
        first = data[0]
        out = []
        if first in self._motors and self._motors[first].codec.variant is not Variant.DAMIAO:
            out.append(first)
        out.extend(i for i, m in self._motors.items()
                   if m.codec.variant is Variant.DAMIAO and (i & 0x0F) == (first & 0x0F))
        return out

    def _drain(self) -> None:
        """Drop the frames waiting to be received; the next read awaits none of them."""
        bus = self._require_open()
        while (msg := can_transport.recv(bus, 0.0, lambda: 1.0)) is not None:
            self._dropped(msg)
        # The replies a write left for the next read are gone (or are taken as the answers
        # of what follows): a write, then torque off (an e-stop), then a read, timed out.
        self._fresh.clear()

    def _dropped(self, msg: can.Message) -> None:
        """A frame received and dropped: if a motor's state reply, it answered its frame."""
        data = self._reply_data(msg)
        candidates = self._candidates(data) if data is not None else []
        if candidates:
            self._answered(self._motors[candidates[0]])

    def _reply_data(self, msg: can.Message) -> bytes | None:
        """``msg``'s data if it may be a motor's state reply, else None.

        Not: an error or remote frame, a frame on a motor's id (another node's command,
        our own echo), a short frame, a Damiao register answer.
        """
        if msg.is_error_frame or msg.is_remote_frame or msg.arbitration_id in self._motors:
            return None
        data = bytes(msg.data)
        if len(data) < 6 or self._register_answer(data):  # noqa: PLR2004
            return None
        return data

    def _device_error(self, ids: Sequence[int], context: str) -> DeviceError:
        faults = [(i, *self._fault(self._motors[i])) for i in ids]
        text = "; ".join(f"id {i}: {fault} (code {code})" for i, code, fault in faults)
        return DeviceError(f"bus {self.spec.name!r}: MIT motor error, {context}: {text}; "
                           "clear_faults runs the motor's recovery", ids[0], faults[0][1])


def _or0(x: float) -> float:
    return 0.0 if math.isnan(x) else x

