"""canopen's own CiA 402 master (``BaseNode402``, code nobody here wrote) drives our emulator.

The master reads the PDO configuration from the emulated drive by SDO, runs a SYNC
producer and a periodic RPDO, and walks the state machine with the library's own
State402 logic; the shaft moves on the emulator's manual clock.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import canopen
import pytest
from canopen.profiles.p402 import BaseNode402

from skel_ros.emulation.canopen402 import Cia402Emulator
from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.canopen402 import DEFAULT_EDS

if TYPE_CHECKING:
    from collections.abc import Iterator

CPR = 65536 / (2 * math.pi)
PERIOD = 0.01


class Clock:
    def __init__(self) -> None:
        self.t = 10.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def master() -> Iterator[tuple[BaseNode402, Cia402Emulator, Clock]]:
    clock = Clock()
    emu = Cia402Emulator({}, [ActuatorSpec(4, ControlMode.POSITION)],
                         {"clock": clock, "initial_positions": {4: 0.25}})
    network = canopen.Network()
    network.connect(**emu.transport)
    node = BaseNode402(4, str(DEFAULT_EDS))
    for name in ("TIMEOUT_SWITCH_STATE_FINAL", "TIMEOUT_SWITCH_STATE_SINGLE",
                 "TIMEOUT_SWITCH_OP_MODE", "TIMEOUT_CHECK_TPDO"):
        setattr(node, name, 5.0)  # generous: two busy cores, real threads
    # (TIMEOUT_RESET_FAULT stays: reset_from_fault always waits it out, see its FIXME.)
    network.add_node(node)
    node.nmt.state = "PRE-OPERATIONAL"
    node.setup_402_state_machine(read_pdos=True)  # PDO mapping read from the drive by SDO
    node.nmt.state = "OPERATIONAL"
    network.sync.start(PERIOD)
    node.rpdo[1].start(PERIOD)
    yield node, emu, clock
    network.sync.stop()
    node.rpdo[1].stop()
    network.disconnect()
    emu.stop()


def test_base_node_402_enables_moves_and_resets_a_fault(
        master: tuple[BaseNode402, Cia402Emulator, Clock]) -> None:
    node, emu, clock = master
    assert sorted(node.tpdo_values) == [0x6041, 0x6061, 0x6064, 0x606C, 0x6077]
    assert node.op_mode == "CYCLIC SYNCHRONOUS POSITION"
    node.op_mode = "PROFILED VELOCITY"           # by SDO, confirmed in TPDO2's 0x6061
    assert node.op_mode == "PROFILED VELOCITY"
    node.op_mode = "CYCLIC SYNCHRONOUS POSITION"
    node.check_statusword()
    assert node.state == "SWITCH ON DISABLED"
    start = node.tpdo_values[0x6064]
    assert start == round(0.25 * CPR)
    node.rpdo[1][0x607A].raw = start            # hold where it is
    node.state = "OPERATION ENABLED"            # the library's State402 walk
    assert emu.drive_state(4) == "OPERATION ENABLED"
    node.rpdo[1][0x607A].raw = round(0.75 * CPR)
    node.check_statusword()
    node.check_statusword()                      # the target went out and was applied
    clock.t += 2.0
    node.check_statusword()
    node.check_statusword()
    assert node.tpdo_values[0x6064] == pytest.approx(0.75 * CPR, abs=5)
    assert emu.state(4).position == pytest.approx(0.75, abs=1e-3)

    emu.inject_fault(4, 0x3210)  # DC link over-voltage
    emcy = node.emcy.wait(0x3210, timeout=5.0)
    assert emcy is not None
    assert emcy.get_desc() == "Voltage"
    node.check_statusword()
    node.check_statusword()
    assert node.is_faulted()
    assert not emu.state(4).torque_enabled
    node.reset_from_fault()                       # fault reset edge, back to OPERATION ENABLED
    assert node.state == "OPERATION ENABLED"
    assert emu.drive_state(4) == "OPERATION ENABLED"
    assert node.emcy.active == []                 # the drive sent the EMCY reset
    node.state = "SWITCH ON DISABLED"
    assert not emu.state(4).torque_enabled
