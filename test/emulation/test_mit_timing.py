"""When an emulated MIT motor takes a frame: when it went on the wire, as a motor does.

The emulator's receiving thread shares the interpreter with the rest of its process (the
hardware node's loop, its executor): it may get to a frame milliseconds after the frame
arrived. A real motor takes it within its current loop, so the emulator acts on each frame
at the frame's time on the wire. Two emulators get the same command at the same moment;
one of them is kept from its frame for 0.3 s (its lock held, as a busy process would):
both motors must still have started together.
"""

from __future__ import annotations

import time

import can
import pytest

from skel_ros.emulation.mit import MitEmulator
from skel_ros.hardware.base import ActuatorLimits, ActuatorSpec, ControlMode
from skel_ros.hardware.mit.codec import ENTER_MODE, MitCodec
from skel_ros.hardware.mit.models import resolve

SPEC = ActuatorSpec(1, ControlMode.IMPEDANCE, "AK80-9", {"kp": 0.0, "kd": 2.0}, name="j1",
                    limits=ActuatorLimits(position=(-12.0, 12.0)))
HELD = 0.3  # s the second emulator's thread is kept from its frame
SPEED = 2.0  # rad/s the command asks for


def _exchange(bus: can.BusABC, data: bytes) -> None:
    bus.send(can.Message(arbitration_id=SPEC.id, data=data, is_extended_id=False))


def _reply(bus: can.BusABC) -> None:
    assert bus.recv(timeout=5.0) is not None, "the emulated motor did not answer"


def test_a_frame_acts_when_it_arrived_not_when_the_thread_got_to_it() -> None:
    codec = MitCodec(*resolve(SPEC.model, SPEC.options))
    command = codec.encode(0.0, SPEED, 0.0, 2.0, 0.0)
    emulators = [MitEmulator({}, [SPEC]) for _ in range(2)]  # the default (host) clock
    buses = [can.Bus(interface="virtual", channel=e.transport["channel"],
                     receive_own_messages=False) for e in emulators]
    try:
        for bus in buses:
            _exchange(bus, ENTER_MODE)
            _reply(bus)
        prompt, late = emulators
        with late._lock:  # what a thread busy elsewhere does to its frames
            _exchange(buses[1], command)
            _exchange(buses[0], command)
            time.sleep(HELD)
        for bus in buses:
            _reply(bus)
        time.sleep(0.2)
        before = time.monotonic()
        moved = [prompt.state(1).position, late.state(1).position]
        between = time.monotonic() - before  # a busy machine may pause between the reads
    finally:
        for bus in buses:
            bus.shutdown()
        for e in emulators:
            e.stop()
    assert moved[0] > 0.2, moved  # it turns
    # Had the late one started when its thread took the frame: SPEED * HELD (0.6 rad) less.
    assert moved[1] == pytest.approx(moved[0], abs=0.2 * SPEED * HELD + SPEED * between), moved
