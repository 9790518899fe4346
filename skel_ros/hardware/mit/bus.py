"""MitBus: MIT-mode CAN motors (Mini Cheetah, T-motor/CubeMars AK, Damiao) on one bus.

The protocol is request/reply: a motor answers every frame it receives (command,
enter, exit, zero) with one state reply, and sends nothing on its own. So:

* :meth:`MitBus.write` sends one command frame per actuator and does not wait;
* :meth:`MitBus.read` makes sure every actuator got a frame since the last read (it
  resends the last command to an enabled actuator that got none, and an *exit motor
  mode* frame to a disabled one; both change nothing), then collects one reply per
  actuator, the latest winning, before ``reply_timeout``.

Replies to :meth:`write` are thus read one control cycle later: the measured values
are at most one cycle older than on a bus that waits after every command, and writing
never blocks the control loop.

Bus options (``buses.<name>.options``):

    reply_timeout: 0.02      # s to wait for the replies of one read / torque switch
    rounding: nearest        # nearest | truncate (see skel_ros.hardware.mit.codec)
    clear_errors: true       # Damiao: send "clear error" when opening finds an error

Actuator options: ranges (``p_max``, ``v_max``, ``t_max``, ``kp_max``, ``kd_max`` and
``*_min``; default the model's, see :mod:`skel_ros.hardware.mit.models`), ``variant``
(``cheetah``/``cubemars``/``damiao``), gains ``kp`` (needed in position and mit mode)
and ``kd``. Per mode the frame is: position -> (p, v_ff, kp, kd, 0); velocity -> (0, v,
0, kd, 0) (needs ``kd`` > 0); effort -> (0, 0, 0, 0, t); mit -> all five, NaN gains
replaced by ``kp``/``kd``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from skel_ros.hardware import can_transport
from skel_ros.hardware.base import (
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

__all__ = ["MitBus"]

_LOG = logging.getLogger(__name__)
_DEFAULT_TIMEOUT = 0.02
_MAX_STD_ID = 0x7FF


@dataclass
class _Motor:
    spec: ActuatorSpec
    codec: MitCodec
    kp: float
    kd: float
    enabled: bool = False
    last_frame: bytes | None = None
    reply: MitReply | None = None
    stamp: float = math.nan


def _gain(options: Mapping[str, Any], key: str, where: str) -> float:
    value = options.get(key, math.nan)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: option {key!r} must be a number, got {value!r}")
    value = float(value)
    if not math.isnan(value) and not (math.isfinite(value) and value >= 0):
        raise ConfigError(f"{where}: option {key!r} must be >= 0, got {value!r}")
    return value


class MitBus(ActuatorBus):
    """Every MIT-mode motor on one CAN bus (see the module docstring).

    Args:
        spec: the bus; ``transport`` is a python-can mapping
            (:func:`skel_ros.hardware.can_transport.open_bus`).
        actuators: the motors (CAN ids 1..0x7FF; Damiao ids must differ in their low
            4 bits, the only part its replies carry).
        clock: monotonic seconds.

    Raises:
        ConfigError: unknown model / bad ranges / missing gains / bad ids or options.
    """

    protocol: ClassVar[str] = "mit"

    def __init__(self, spec: BusSpec, actuators: Sequence[ActuatorSpec],  # noqa: C901
                 clock: Callable[[], float]) -> None:
        super().__init__(spec, actuators, clock)
        opts = spec.options
        unknown = set(opts) - {"reply_timeout", "rounding", "clear_errors"}
        if unknown:
            raise ConfigError(f"bus {spec.name!r}: unknown MIT bus option(s) "
                              f"{sorted(unknown)}; known: reply_timeout, rounding, "
                              "clear_errors")
        timeout = opts.get("reply_timeout", _DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
                0 < timeout <= 10):  # noqa: PLR2004
            raise ConfigError(f"bus {spec.name!r}: reply_timeout must be in (0, 10] s, "
                              f"got {timeout!r}")
        self.reply_timeout = float(timeout)
        rounding = str(opts.get("rounding", "nearest"))
        if rounding not in ("nearest", "truncate"):
            raise ConfigError(f"bus {spec.name!r}: rounding must be nearest or truncate, "
                              f"got {rounding!r}")
        self.clear_errors = bool(opts.get("clear_errors", True))
        self._motors: dict[int, _Motor] = {}
        nibbles: dict[int, int] = {}
        for act in self.actuators:
            where = f"bus {spec.name!r} MIT actuator {act.name or act.id!r} (id {act.id})"
            if not 1 <= act.id <= _MAX_STD_ID:
                raise ConfigError(f"{where}: CAN id must be in 1..0x7FF")
            ranges, variant = resolve(act.model, act.options, where)
            kp = _gain(act.options, "kp", where)
            kd = _gain(act.options, "kd", where)
            if act.mode in (ControlMode.POSITION, ControlMode.MIT) and not kp > 0:
                raise ConfigError(f"{where}: mode {act.mode.value} needs option kp > 0 "
                                  "(position gain, N·m/rad)")
            if act.mode is ControlMode.VELOCITY and not kd > 0:
                raise ConfigError(f"{where}: mode velocity needs option kd > 0 "
                                  "(velocity gain, N·m·s/rad)")
            if variant is Variant.DAMIAO:
                other = nibbles.setdefault(act.id & 0x0F, act.id)
                if other != act.id:
                    raise ConfigError(f"{where}: Damiao replies carry only the low 4 bits "
                                      f"of the id; id {other} has the same")
            self._motors[act.id] = _Motor(act, MitCodec(ranges, variant, rounding),
                                          kp if kp > 0 else 0.0, kd if kd > 0 else 0.0)
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

    def open(self) -> None:
        """Open the bus; every motor must answer an *exit motor mode* frame (torque off).

        A Damiao motor reporting an error gets a *clear error* frame (``clear_errors``)
        and is asked again.

        Raises:
            TransportError: the bus cannot be opened.
            TransportTimeoutError: a motor did not answer (names the ids).
            DeviceError: a motor reports an error.
        """
        self.close()
        self._bus = can_transport.open_bus(self.spec.transport)
        try:
            self._drain()
            ids = list(self._motors)
            for m in self._motors.values():
                m.enabled, m.last_frame, m.reply = False, None, None
            self._exchange(ids, EXIT_MODE, "exit motor mode")
            faulty = [i for i in ids if self._motors[i].reply.error_code]  # type: ignore[union-attr]
            damiao = [i for i in faulty if self._motors[i].codec.variant is Variant.DAMIAO]
            if damiao and self.clear_errors:
                _LOG.warning("%s: clearing errors of Damiao motor(s) %s", self._where, damiao)
                self._exchange(damiao, CLEAR_ERROR, "clear error")
                self._exchange(damiao, EXIT_MODE, "exit motor mode")
            self._raise_faults(ids)
        except BaseException:
            self.close()
            raise
        self._fresh.clear()

    def close(self) -> None:
        """Torque off (*exit motor mode*, replies awaited), release the bus; never raises."""
        bus = self._bus
        if bus is None:
            return
        try:
            self._exchange(list(self._motors), EXIT_MODE, "exit motor mode")
        except HardwareError as exc:
            _LOG.warning("%s: torque off on close not confirmed: %s", self._where, exc)
        self._bus = None
        for m in self._motors.values():
            m.enabled = False
        try:
            bus.shutdown()
        except Exception as exc:  # noqa: BLE001 - close never raises
            _LOG.warning("%s: shutdown failed: %s", self._where, exc)

    # ------------------------------------------------------------------ contract

    def set_torque(self, enabled: bool, ids: Sequence[int] | None = None) -> None:  # noqa: FBT001
        """*Enter* (torque on) or *exit* (torque off) motor mode and wait for the replies.

        After entering, the last command written (if any) is sent again at once, so the
        motor holds it instead of whatever its firmware kept from before.

        Raises:
            TransportTimeoutError: a motor did not answer.
            DeviceError: a motor reports an error.
        """
        targets = self._ids(ids)
        frame, what = (ENTER_MODE, "enter motor mode") if enabled else (EXIT_MODE,
                                                                         "exit motor mode")
        self._exchange(targets, frame, what)
        for i in targets:
            self._motors[i].enabled = enabled
        self._raise_faults(targets)
        if enabled:
            for i in targets:
                m = self._motors[i]
                if m.last_frame is not None:
                    self._send(i, m.last_frame, "command")

    def zero(self, ids: Sequence[int] | None = None) -> None:
        """Make the present position each motor's zero (*set zero* frame).

        Changes the motor's calibration (stored in flash on most firmware): only on
        request, never on open. Some firmware stays silent for up to a second after it.

        Raises:
            TransportTimeoutError: a motor did not answer.
        """
        self._exchange(self._ids(ids), ZERO_POSITION, "set zero")

    def write(self, commands: Mapping[int, ActuatorCommand]) -> None:
        """Send one command frame per actuator in ``commands`` (does not wait).

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
            can_transport.send(bus, motor_id, frame, what=f"command to id {motor_id}")
            m.last_frame = frame
            self._fresh.add(motor_id)

    def read(self) -> dict[int, ActuatorState]:
        """One reply per actuator (see the module docstring).

        Raises:
            TransportTimeoutError: a motor did not answer in ``reply_timeout``.
            DeviceError: a motor reports an error.
            TransportError: the bus failed.
        """
        self._require_open()
        for motor_id, m in self._motors.items():
            if motor_id in self._fresh:
                continue
            if m.enabled and m.last_frame is not None:
                self._send(motor_id, m.last_frame, "command (repeated)")
            else:
                self._send(motor_id, EXIT_MODE, "exit motor mode (poll)")
        ids = list(self._motors)
        self._collect(ids)
        self._fresh.clear()
        self._raise_faults(ids)
        out: dict[int, ActuatorState] = {}
        for motor_id, m in self._motors.items():
            r = m.reply
            assert r is not None  # noqa: S101 - _collect guarantees it
            out[motor_id] = ActuatorState(
                position=r.position, velocity=r.velocity, effort=r.torque,
                torque_enabled=m.enabled if r.enabled is None else r.enabled,
                error_code=r.error_code, fault=r.fault, temperature=r.temperature,
                stamp=m.stamp)
        return out

    # ------------------------------------------------------------------ internals

    def _frame(self, m: _Motor, cmd: ActuatorCommand) -> bytes:
        mode = m.spec.mode
        try:
            if mode is ControlMode.MIT:
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
        can_transport.send(self._require_open(), motor_id, frame,
                           what=f"{what} to id {motor_id}")

    def _exchange(self, ids: Sequence[int], frame: bytes, what: str) -> None:
        """Send ``frame`` to each id and wait until each answered."""
        self._drain()
        for i in ids:
            self._send(i, frame, what)
        self._collect(ids, what)

    def _collect(self, ids: Sequence[int], what: str = "") -> None:
        """Receive until each of ``ids`` replied once (keeping the latest), or time out."""
        bus = self._require_open()
        waiting = set(ids)
        for i in waiting:
            self._motors[i].reply = None
        deadline = self.clock() + self.reply_timeout
        while waiting:
            msg = can_transport.recv(bus, deadline, self.clock)
            if msg is None:
                break
            self._take(msg, waiting)
        # Replies already queued behind the last awaited one: take them too (latest wins).
        while (msg := can_transport.recv(bus, 0.0, lambda: 1.0)) is not None:
            self._take(msg, set())
        if waiting:
            missing = sorted(waiting)
            raise TransportTimeoutError(
                f"bus {self.spec.name!r} ({self._where}): no reply"
                f"{' to ' + what if what else ''} from MIT id(s) {missing} in "
                f"{self.reply_timeout:g} s")

    def _take(self, msg: can.Message, waiting: set[int]) -> None:
        if msg.is_error_frame or msg.is_remote_frame or msg.arbitration_id in self._motors:
            return  # another node's command (or our own echo), not a reply
        data = bytes(msg.data)
        if len(data) < 6:  # noqa: PLR2004
            return
        for motor_id in self._candidates(data):
            m = self._motors[motor_id]
            try:
                reply = m.codec.decode_reply(data)
            except ProtocolError as exc:
                raise ProtocolError(f"bus {self.spec.name!r} id {motor_id}: {exc}") from None
            m.reply = reply
            m.stamp = self.clock()
            waiting.discard(motor_id)
            return

    def _candidates(self, data: bytes) -> list[int]:
        first = data[0]
        out = []
        if first in self._motors and self._motors[first].codec.variant is not Variant.DAMIAO:
            out.append(first)
        out.extend(i for i, m in self._motors.items()
                   if m.codec.variant is Variant.DAMIAO and (i & 0x0F) == (first & 0x0F))
        return out

    def _drain(self) -> None:
        bus = self._require_open()
        while can_transport.recv(bus, 0.0, lambda: 1.0) is not None:
            pass

    def _raise_faults(self, ids: Iterable[int]) -> None:
        faulty = [(i, self._motors[i].reply) for i in ids
                  if (r := self._motors[i].reply) is not None and r.error_code]
        if not faulty:
            return
        text = "; ".join(f"id {i}: {r.fault} (code {r.error_code})" for i, r in faulty  # type: ignore[union-attr]
                         )
        first_id, first = faulty[0]
        raise DeviceError(f"bus {self.spec.name!r}: MIT motor error: {text}", first_id,
                          first.error_code)  # type: ignore[union-attr]


def _or0(x: float) -> float:
    return 0.0 if math.isnan(x) else x

