"""Request and answer on a half-duplex serial servo line, for every serial protocol's bus.

A bus (Dynamixel, Feetech) owns one :class:`PacketLink` over its transport and packet
reader: :meth:`PacketLink.send` writes a request, flushing the input first when an
earlier request left it in doubt; :meth:`PacketLink.receive` collects the status packets
of a set of ids until every one is complete or the request's one deadline passes;
:meth:`PacketLink.attempts` retries a request whose answer was lost or garbled. What
differs between protocols is given to the link: which packets count as answers, whether a
second answer from one id is refused, and the end of the message of a missing answer.

The goal helpers (:func:`round_goal`, :func:`clamp_goal`) and the checks every serial bus
makes (:func:`known`, :func:`positive`) are here too, so that each is written once.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Final, Generic, Protocol, TypeVar

from skel_ros.hardware.errors import (
    ConfigError,
    DeviceError,
    HardwareError,
    ProtocolError,
    TransportError,
    TransportTimeoutError,
)

if TYPE_CHECKING:
    import logging
    from collections.abc import Callable, Mapping, Sequence

    from skel_ros.hardware.base import ActuatorSpec, ActuatorState, BusSpec
    from skel_ros.hardware.transport import Transport

ATTEMPTS: Final = 3  # tries of a request open, set_torque and clear_faults depend on

_T = TypeVar("_T")


class Packet(Protocol):
    """What the link needs of a decoded packet: who sent it."""

    @property
    def id(self) -> int:  # noqa: D102
        ...


_P = TypeVar("_P", bound=Packet)
_P_co = TypeVar("_P_co", bound=Packet, covariant=True)


class PacketReader(Protocol[_P_co]):
    """A protocol's stream parser, as the link uses it."""

    buffer: bytearray
    discarded: int

    def feed(self, data: bytes) -> None:  # noqa: D102
        ...

    def clear(self) -> None:  # noqa: D102
        ...

    def next_packet(self) -> _P_co | None:  # noqa: D102
        ...


class GoalRange(Protocol):
    """What :func:`clamp_goal` needs of a servo."""

    spec: ActuatorSpec
    goal_lo: int
    goal_hi: int
    clamp_logged: bool


_S = TypeVar("_S")


class AnswerTime:
    """How long a request's answer may take on the line.

    The fixed ``timeout`` (bus option, else the transport's) when given; else the wire
    time of the request and of the reply at the baud rate (10 bits a byte), each
    answering servo's return delay, and ``BusSpec.timeout_margin`` (USB latency, a
    loaded host).

    Args:
        spec: the bus.
        where: the bus, for messages.
        reply_delay: s a servo may wait before answering, until the servos are configured.

    Raises:
        ConfigError: a ``timeout`` that is not a positive number.
    """

    def __init__(self, spec: BusSpec, where: str, reply_delay: float) -> None:
        fixed = spec.options.get("timeout", spec.transport.get("timeout"))
        self.fixed: float | None = None if fixed is None else positive(fixed, "timeout", where)
        baudrate = spec.transport.get("baudrate", 1_000_000)
        self.baudrate: int = (baudrate if isinstance(baudrate, int) and baudrate > 0
                              else 1_000_000)
        self.byte_time = 10.0 / self.baudrate  # start bit, 8 data bits, stop bit
        self.margin = max(0.0, float(spec.timeout_margin))
        self.reply_delay = reply_delay  # s a servo may wait before answering

    def timeout(self, request: int, reply: int, replies: int = 1) -> float:
        """Seconds to wait for ``replies`` answers of ``reply`` bytes to ``request`` bytes."""
        if self.fixed is not None:
            return self.fixed
        return self.wire(request, reply, replies)

    def wire(self, request: int, reply: int, replies: int) -> float:
        """The computed wait, whatever the fixed ``timeout``."""
        return (request + reply) * self.byte_time + replies * self.reply_delay + self.margin


class PacketLink(Generic[_P]):
    """One serial line's requests and their answers.

    Args:
        transport: the line.
        reader: the protocol's packet reader (garbage bytes it skips are counted in
            :attr:`stats` ``garbage_bytes``).
        where: the bus, for messages.
        log: the bus's logger (retries are logged there).
        answers: which packets are answers (None: every packet; an echo of a request
            or another device's packet is skipped otherwise).
        refuse_twice: a second answer from one id is a ProtocolError (else ignored).
        timeout_tail: the end of the message of a missing answer, from whether part of
            the answer came, the request's timeout and the timeout error.
        monotonic: the clock of the deadlines (s).

    Attributes:
        dirty: the input is in doubt (a request failed or left bytes): the next
            :meth:`send` flushes it first.
    """

    def __init__(self, transport: Transport, reader: PacketReader[_P], where: str,
                 log: logging.Logger, *, answers: Callable[[_P], bool] | None = None,
                 refuse_twice: bool = True,
                 timeout_tail: Callable[[bool, float, BaseException], str],
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.transport = transport
        self.reader = reader
        self.where = where
        self.log = log
        self.dirty = True
        self.stats = {"garbage_bytes": 0}
        self._answers = answers
        self._refuse_twice = refuse_twice
        self._timeout_tail = timeout_tail
        self._monotonic = monotonic

    def send(self, packet: bytes) -> None:
        """Write ``packet``; first drop the input if it is in doubt."""
        transport = self.transport
        try:
            if self.dirty:
                transport.reset_input()
                self.reader.clear()
                self.dirty = False
            transport.write(packet)
        except TransportError:
            self.dirty = True
            raise

    def receive(self, ids: Sequence[int], expected: int, what: str, timeout: float,
                first: bytes = b"", *, deadline: float | None = None) -> dict[int, _P]:
        """Status packets from ``ids``, returned as soon as every one is complete.

        Args:
            ids: who answers.
            expected: bytes of the complete answers, unstuffed and without noise.
            what: the request, for messages.
            timeout: s the request may take (for messages, and the deadline's default).
            first: bytes of the answer already read.
            deadline: ``monotonic()`` by which the answers are due; default: now +
                ``timeout``. A request has one deadline: a caller that already waited
                for part of the answer passes the one it started with.

        Raises:
            TransportTimeoutError: an answer is missing at the deadline (names the ids).
            ProtocolError: a bad packet, or (``refuse_twice``) an id answered twice.
        """
        reader, monotonic = self.reader, self._monotonic
        if deadline is None:
            deadline = monotonic() + timeout
        wanted = set(ids)
        got: dict[int, _P] = {}
        data = first
        received = 0  # bytes of this answer read so far (packets drained, noise included)
        try:
            while True:
                if data:
                    received += len(data)
                    reader.feed(data)
                    self._drain(wanted, got, what)
                    if len(got) == len(wanted):
                        break
                remaining = deadline - monotonic()
                if remaining <= 0:
                    missing = sorted(wanted - got.keys())
                    raise TransportTimeoutError(  # noqa: TRY301 - handled with the read's
                        f"{self.where}: {what}: no answer from id(s) {missing} within"
                        f" {timeout * 1e3:.0f} ms")
                # What is still missing: stuffing or noise make the answer longer than
                # ``expected``, then its last bytes are asked for as they come.
                data = self.transport.read(max(1, expected - received), remaining)
        except TransportTimeoutError as exc:
            self.dirty = True
            partial = bool(got or reader.buffer)
            missing = sorted(wanted - got.keys())
            raise TransportTimeoutError(
                f"{self.where}: {what}: no {'complete ' if partial else ''}answer from id(s)"
                f" {missing}{self._timeout_tail(partial, timeout, exc)}") from None
        except HardwareError:
            self.dirty = True
            raise
        self.stats["garbage_bytes"] += reader.discarded
        reader.discarded = 0
        if reader.buffer:
            self.dirty = True  # bytes after the answers: drop them before the next request
        return got

    def _drain(self, wanted: set[int], got: dict[int, _P], what: str) -> None:
        reader, answers = self.reader, self._answers
        while True:
            try:
                packet = reader.next_packet()
            except ProtocolError as exc:
                raise ProtocolError(f"{self.where}: {what}: {exc}") from None
            if packet is None:
                return
            if packet.id not in wanted or (answers is not None and not answers(packet)):
                continue  # an echo or another device's packet: not ours
            if packet.id in got:
                if self._refuse_twice:
                    raise ProtocolError(f"{self.where}: {what}: id {packet.id} answered twice")
                continue
            got[packet.id] = packet

    def attempts(self, request: Callable[..., _T], *args: Any) -> _T:  # noqa: ANN401
        """``request(*args)``, tried up to :data:`ATTEMPTS` times on a timeout or bad packet.

        A lost or garbled answer on a loaded host or a noisy line is retried; a port that
        failed (TransportError) or a servo's refusal (DeviceError) is not.
        """
        for attempt in range(ATTEMPTS):
            try:
                return request(*args)
            except (TransportTimeoutError, ProtocolError) as exc:  # noqa: PERF203 - retry loop
                if attempt == ATTEMPTS - 1:
                    raise
                self.log.debug("%s: %s; trying again", self.where, exc)
        raise AssertionError  # pragma: no cover - the loop returns or raises

    def switch_torque(self, packet: bytes, read: Callable[[], dict[int, ActuatorState]],
                      targets: Sequence[int], *, enabled: bool) -> None:
        """Send ``packet`` (the Torque Enable write) and check by ``read`` that it took.

        The write and its check are tried up to :data:`ATTEMPTS` times when the check's
        answer is lost.

        Raises:
            DeviceError: a servo of ``targets`` did not take the new state.
        """

        def switch() -> dict[int, ActuatorState]:
            self.send(packet)
            return read()

        states = self.attempts(switch)
        wrong = [i for i in targets if states[i].torque_enabled != enabled]
        if wrong:
            first = states[wrong[0]]
            why = f": {first.fault}" if first.fault else ""
            raise DeviceError(f"{self.where}: torque {'on' if enabled else 'off'} not taken by"
                              f" id(s) {wrong}{why}", wrong[0], first.error_code)


def known(servos: Mapping[int, _S], servo_id: int, where: str) -> _S:
    """The servo with ``servo_id``, else a ConfigError naming the bus."""
    servo = servos.get(servo_id)
    if servo is None:
        raise ConfigError(f"{where}: no actuator with id {servo_id} on this bus")
    return servo


def round_goal(value: float) -> int:
    """``value`` rounded to an integer goal, saturated to 32 bits (no OverflowError)."""
    if -2e9 < value < 2e9:  # noqa: PLR2004 - the common case, no OverflowError possible
        return round(value)
    return 2**31 - 1 if value > 0 else -(2**31)


def clamp_goal(servo: GoalRange, raw: int, where: str, log: logging.Logger) -> int:
    """``raw`` into the servo's goal range.

    A goal beyond the range (not just a goal at a limit rounded outward) is logged,
    once per servo.
    """
    lo, hi = servo.goal_lo, servo.goal_hi
    if not (lo - 1 <= raw <= hi + 1 or servo.clamp_logged):
        servo.clamp_logged = True
        log.warning("%s: id %d: goal %d outside the limits [%d, %d]; clamped"
                    " (logged once)", where, servo.spec.id, raw, lo, hi)
    return max(lo, min(hi, raw))


def positive(value: Any, name: str, where: str) -> float:  # noqa: ANN401 - YAML value
    """``value`` as a positive finite float, else a ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
            math.isfinite(value) and value > 0):
        raise ConfigError(f"{where}: {name} must be a positive number, got {value!r}")
    return float(value)
