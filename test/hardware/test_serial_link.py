"""PacketLink: the request/answer machinery the Dynamixel and Feetech buses share.

On a scripted line (chunks the transport hands out, a clock the test moves): the input is
flushed only after a request left it in doubt, answers complete as soon as every id's
packet is in, a missing answer names the ids, and what each protocol gives the link
(which packets answer, a second answer, the message's end) is what it does.
"""

from __future__ import annotations

import logging

import pytest

from skel_ros.hardware.dynamixel import protocol as dxl
from skel_ros.hardware.errors import ProtocolError, TransportError, TransportTimeoutError
from skel_ros.hardware.feetech import protocol as ft
from skel_ros.hardware.serial_link import ATTEMPTS, PacketLink, round_goal
from skel_ros.hardware.transport import Transport

LOG = logging.getLogger(__name__)
WHERE = "bus 'b' (line)"


class _Line(Transport):
    """Hands out scripted chunks; nothing left: a timeout after the wait asked for."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = list(chunks)
        self.written: list[bytes] = []
        self.resets = 0
        self.now = 0.0
        self.fail_write = False

    def open(self) -> None:
        return

    def close(self) -> None:
        return

    @property
    def is_open(self) -> bool:
        return True

    def write(self, data: bytes) -> None:
        if self.fail_write:
            raise TransportError("line: gone")
        self.written.append(data)

    def read(self, size: int, timeout: float) -> bytes:
        if not self.chunks:
            self.now += timeout
            raise TransportTimeoutError(f"line: no answer within {timeout * 1e3:.1f} ms")
        chunk = self.chunks[0][:size]
        self.chunks[0] = self.chunks[0][size:]
        if not self.chunks[0]:
            self.chunks.pop(0)
        return chunk

    def reset_input(self) -> None:
        self.resets += 1

    def monotonic(self) -> float:
        return self.now


def _dxl_link(line: _Line) -> PacketLink[dxl.Packet]:
    return PacketLink(line, dxl.PacketReader(), WHERE, LOG, answers=lambda p: p.is_status,
                      timeout_tail=lambda partial, _t, exc: "" if partial else f": {exc}",
                      monotonic=line.monotonic)


def _ft_link(line: _Line) -> PacketLink[ft.Packet]:
    return PacketLink(line, ft.PacketReader(), WHERE, LOG, refuse_twice=False,
                      timeout_tail=lambda _p, timeout, _e: f" within {timeout * 1e3:.0f} ms",
                      monotonic=line.monotonic)


def test_the_input_is_flushed_once_after_a_doubt() -> None:
    line = _Line()
    link = _dxl_link(line)
    link.send(b"a")
    link.send(b"b")
    assert (line.resets, line.written) == (1, [b"a", b"b"])
    line.fail_write = True
    with pytest.raises(TransportError):
        link.send(b"c")
    assert link.dirty
    line.fail_write = False
    link.send(b"d")
    assert line.resets == 2


def test_split_answers_with_noise_and_an_echo_complete_and_count_the_noise() -> None:
    echo = dxl.ping(2)
    answers = dxl.build_status(1, 0, b"\x01") + dxl.build_status(2, 0, b"\x02")
    line = _Line(echo + b"\x00\x13" + answers[:7], answers[7:])
    link = _dxl_link(line)
    link.send(dxl.ping(2))
    got = link.receive([1, 2], len(answers), "READ", 0.01)
    assert {i: p.data for i, p in got.items()} == {1: b"\x01", 2: b"\x02"}
    assert link.stats["garbage_bytes"] == 2
    assert not link.dirty


def test_a_second_answer_is_refused_or_ignored_as_the_protocol_says() -> None:
    twice = dxl.build_status(1, 0) * 2
    with pytest.raises(ProtocolError, match=r"^bus 'b' \(line\): WRITE: id 1 answered twice$"):
        _dxl_link(_Line(twice)).receive([1], len(twice), "WRITE", 0.01)
    twice = ft.build_status(1, 0) * 2
    link = _ft_link(_Line(twice))
    assert list(link.receive([1], len(twice), "WRITE", 0.01)) == [1]


@pytest.mark.parametrize(("make", "silent", "partial"), [
    (_dxl_link, ("bus 'b' (line): PING: no answer from id(s) [3]: line: no answer within"
                 " 20.0 ms"), "bus 'b' (line): PING: no complete answer from id(s) [3]"),
    (_ft_link, "bus 'b' (line): PING: no answer from id(s) [3] within 20 ms",
     "bus 'b' (line): PING: no complete answer from id(s) [3] within 20 ms"),
])
def test_a_missing_answer_says_who_in_the_protocols_words(make: type, silent: str,
                                                          partial: str) -> None:
    line = _Line()
    link = make(line)
    with pytest.raises(TransportTimeoutError) as info:
        link.receive([3], 10, "PING", 0.02)
    assert str(info.value) == silent
    assert link.dirty
    line.chunks = [b"\xff\xff"]  # the start of a packet, then nothing
    with pytest.raises(TransportTimeoutError) as info:
        link.receive([3], 10, "PING", 0.02)
    assert str(info.value) == partial


def test_a_bad_packet_names_the_request_and_is_retried() -> None:
    bad = bytearray(dxl.build_status(1, 0, b"\x05"))
    bad[-1] ^= 0xFF
    good = dxl.build_status(1, 0, b"\x05")
    line = _Line(bytes(bad), good)
    link = _dxl_link(line)
    calls = []

    def request() -> bytes:
        calls.append(1)
        link.send(b"r")
        return link.receive([1], len(good), "READ 7", 0.01)[1].data

    assert link.attempts(request) == b"\x05"
    assert len(calls) == 2
    line.chunks = [bytes(bad)] * ATTEMPTS
    with pytest.raises(ProtocolError, match=r"^bus 'b' \(line\): READ 7: CRC"):
        link.attempts(request)


def test_goals_saturate_instead_of_overflowing() -> None:
    assert round_goal(2.5) == 2  # half to even, like round()
    assert round_goal(1e300) == 2**31 - 1
    assert round_goal(-1e300) == -(2**31)
