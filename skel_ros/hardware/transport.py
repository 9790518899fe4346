"""Byte transports for serial protocols: one small interface, serial ports behind it.

:class:`SerialTransport` opens anything ``serial.serial_for_url`` understands: device
paths (``/dev/ttyUSB0``), pseudo-terminals (the emulators), ``socket://host:port``,
``loop://``. Every failure becomes a :class:`~skel_ros.hardware.errors.TransportError`
naming the port (a port that vanishes mid-run, ``EIO`` from an unplugged USB adapter,
included); no answer in time is a :class:`~skel_ros.hardware.errors.TransportTimeoutError`.
Local ports (device paths, ptys) are read and written through their file descriptor
directly: one ``os.write`` per write, ``select`` + ``os.read`` per read, where pyserial
adds a ``select`` and clock reads to every call.
"""

from __future__ import annotations

import abc
import math
import os
import select
import time
from typing import TYPE_CHECKING, Any

from skel_ros.hardware.errors import ConfigError, TransportError, TransportTimeoutError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import serial

__all__ = ["SerialTransport", "Transport", "serial_transport"]

try:  # termios.error is not an OSError: a vanished tty raises it from tcflush/tcsetattr
    import termios

    _OS_ERRORS: tuple[type[Exception], ...] = (OSError, termios.error)
except ImportError:  # pragma: no cover - not posix
    _OS_ERRORS = (OSError,)
_FD_ERRORS: tuple[type[Exception], ...] = (*_OS_ERRORS, ValueError)
_WRITE_TIMEOUT = 1.0  # s for a write to leave (a blocked output buffer)


class Transport(abc.ABC):
    """A byte stream to devices (serial port, socket, ...). Not thread-safe."""

    name: str = ""

    @abc.abstractmethod
    def open(self) -> None:
        """Open it. Raises TransportError when it cannot be opened."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close it; idempotent, never raises."""

    @property
    @abc.abstractmethod
    def is_open(self) -> bool:
        """Whether it is open."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Send all of ``data``. Raises TransportError."""

    @abc.abstractmethod
    def read(self, size: int, timeout: float) -> bytes:
        """Return ``size`` bytes as soon as they arrived, or what came within ``timeout``.

        At least one byte is returned.

        Raises:
            TransportTimeoutError: nothing arrived within ``timeout``.
            TransportError: the port failed or vanished.
        """

    @abc.abstractmethod
    def reset_input(self) -> None:
        """Drop received bytes not read yet."""


class SerialTransport(Transport):
    """A pyserial port opened through ``serial.serial_for_url``.

    Args:
        port: device path or pyserial URL.
        baudrate: bits per second (meaningless on a pty, used on real adapters).
        options: further ``serial_for_url`` keyword arguments (``rtscts``, ...).
    """

    def __init__(self, port: str, baudrate: int = 1_000_000,
                 options: Mapping[str, Any] | None = None) -> None:
        self.name = str(port)
        self.baudrate = int(baudrate)
        self._options = dict(options or {})
        self._serial: serial.Serial | None = None
        self._fd = -1  # the OS file descriptor of local ports: no pyserial loops
        self._timeout = math.nan

    def __repr__(self) -> str:
        return f"SerialTransport({self.name!r}, {self.baudrate})"

    def open(self) -> None:
        """Open the port (exclusively where the OS allows it)."""
        import serial

        if self._serial is not None:
            return
        try:
            self._serial = serial.serial_for_url(self.name, baudrate=self.baudrate,
                                                 timeout=0.0, write_timeout=_WRITE_TIMEOUT,
                                                 **self._options)
        except (serial.SerialException, *_OS_ERRORS, ValueError) as exc:
            if "://" not in self.name and not os.path.lexists(self.name):
                raise TransportError(f"{self.name}: cannot open: no such port (adapter not"
                                     " plugged in, or another name?)") from None
            raise TransportError(f"{self.name}: cannot open: {exc}") from None
        self._timeout = 0.0
        fd = getattr(self._serial, "fd", None)
        self._fd = fd if isinstance(fd, int) and os.name == "posix" else -1

    def close(self) -> None:
        """Close the port; never raises."""
        port, self._serial, self._fd = self._serial, None, -1
        if port is not None:
            try:
                port.close()
            except Exception:  # noqa: BLE001 - a vanished device may fail in any way here
                return

    @property
    def is_open(self) -> bool:
        """Whether the port is open."""
        return self._serial is not None

    def _port(self) -> serial.Serial:
        if self._serial is None:
            raise TransportError(f"{self.name}: not open")
        return self._serial

    def write(self, data: bytes) -> None:
        """Send ``data``."""
        import serial

        port = self._port()
        if self._fd >= 0:
            self._write_fd(data)
            return
        try:
            written = port.write(data)
        except serial.SerialTimeoutException:
            raise TransportTimeoutError(f"{self.name}: write timed out") from None
        except (serial.SerialException, *_OS_ERRORS, TypeError, AttributeError) as exc:
            # pyserial raises TypeError/AttributeError when the fd vanished under it.
            raise TransportError(f"{self.name}: write failed: {exc}") from None
        if written is not None and written != len(data):
            raise TransportError(f"{self.name}: wrote {written} of {len(data)} bytes")

    def read(self, size: int, timeout: float) -> bytes:
        """Read up to ``size`` bytes within ``timeout`` seconds."""
        import serial

        port = self._port()
        if self._fd >= 0:
            return self._read_fd(size, timeout)
        try:
            if timeout != self._timeout:
                port.timeout = timeout
                self._timeout = timeout
            data = port.read(size)
        except (serial.SerialException, *_OS_ERRORS, TypeError, AttributeError) as exc:
            raise TransportError(f"{self.name}: read failed: {exc}") from None
        if not data:
            raise TransportTimeoutError(f"{self.name}: no answer within {timeout * 1e3:.1f} ms")
        return bytes(data)

    def _write_fd(self, data: bytes) -> None:
        # One os.write where pyserial's write adds a select() and two clock reads per call.
        fd = self._fd
        try:
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
            if written == len(data):
                return
            # The output buffer is full: wait for room, at most the write timeout in all.
            deadline = time.monotonic() + _WRITE_TIMEOUT
            rest = memoryview(data)[written:]
            while rest:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                _, ready, _ = select.select([], [fd], [], remaining)
                if ready:
                    try:
                        rest = rest[os.write(fd, rest):]
                    except BlockingIOError:
                        continue
        except _FD_ERRORS as exc:
            raise TransportError(f"{self.name}: write failed: {exc}") from None
        if rest:
            raise TransportTimeoutError(f"{self.name}: write timed out ({len(rest)} of"
                                        f" {len(data)} bytes not sent)")

    def _read_fd(self, size: int, timeout: float) -> bytes:
        fd = self._fd
        deadline = time.monotonic() + timeout
        data = b""
        try:
            while True:
                ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    break
                chunk = os.read(fd, size - len(data))
                if not chunk:
                    raise TransportError(f"{self.name}: device disconnected (end of file)")
                data += chunk
                if len(data) >= size:
                    break
        except _FD_ERRORS as exc:
            raise TransportError(f"{self.name}: read failed: {exc}") from None
        if not data:
            raise TransportTimeoutError(f"{self.name}: no answer within {timeout * 1e3:.1f} ms")
        return data

    def reset_input(self) -> None:
        """Drop unread input."""
        import serial

        port = self._port()
        try:
            port.reset_input_buffer()
        except (serial.SerialException, *_OS_ERRORS, TypeError, AttributeError) as exc:
            raise TransportError(f"{self.name}: cannot flush input: {exc}") from None

    def in_waiting(self) -> int:
        """Bytes received and not read yet (0 when unknown)."""
        import serial

        port = self._port()
        try:
            return int(port.in_waiting)
        except (serial.SerialException, *_OS_ERRORS, TypeError, AttributeError) as exc:
            raise TransportError(f"{self.name}: read failed: {exc}") from None


_SERIAL_KEYS = frozenset({"port", "baudrate", "timeout"})


def serial_transport(transport: Mapping[str, Any], where: str = "") -> SerialTransport:
    """A :class:`SerialTransport` from a ``BusSpec.transport`` mapping.

    Keys: ``port`` (required), ``baudrate`` (default 1,000,000), ``timeout`` (read by
    the driver, not here); any other key goes to ``serial_for_url``.

    Raises:
        ConfigError: no port, or a baud rate that is not a positive integer.
    """
    prefix = f"{where}: " if where else ""
    port = transport.get("port")
    if not isinstance(port, str) or not port:
        raise ConfigError(f"{prefix}serial transport needs a 'port' (device path or URL)")
    baudrate = transport.get("baudrate", 1_000_000)
    if isinstance(baudrate, bool) or not isinstance(baudrate, int) or baudrate <= 0:
        raise ConfigError(f"{prefix}baudrate must be a positive integer, got {baudrate!r}")
    extra = {k: v for k, v in transport.items() if k not in _SERIAL_KEYS}
    return SerialTransport(port, baudrate, extra)
