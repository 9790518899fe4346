"""Never torque without a valid first read (issue 30, item 2).

Torque goes on only after every servo of the bus answered a full read in that same
``set_torque`` call; the first goals are the positions it measured; a failed or partial
read leaves torque off and names the servo. The emulated servos log every goal write they
take and every Sync Read they answer, so "0 goal writes before a valid read" is counted
on the servo's side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from feetech_arm import START

from skel_ros.hardware.base import ActuatorCommand
from skel_ros.hardware.errors import TransportTimeoutError

if TYPE_CHECKING:
    from collections.abc import Callable

    from skel_ros.emulation.feetech import FeetechEmulator
    from skel_ros.hardware.feetech.bus import FeetechBus


def _goals_before_first_read(emu: FeetechEmulator, servo_id: int) -> int:
    goals = 0
    for kind, _ in emu.events(servo_id):
        if kind == "read":
            return goals
        goals += kind == "goal"
    return goals


def test_a_servo_missing_its_first_replies_gets_no_goal_and_no_torque(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    bus = make_bus(dict(emu.transport))
    emu.mute(2, 100)                            # silent from the start
    with pytest.raises(TransportTimeoutError, match=r"id 2 did not answer"):
        bus.open()
    for i in START:
        assert emu.events(i) == []              # no goal was written to anyone
        assert not emu.state(i).torque_enabled
    emu.mute(2, 2)                              # now it misses only its next two replies
    bus.open()
    bus.write({i: ActuatorCommand(position=0.0) for i in START})
    bus.set_torque(True)
    for i in START:
        assert _goals_before_first_read(emu, i) == 0
        assert emu.state(i).torque_enabled


def test_torque_on_waits_for_a_full_read_and_says_who_did_not_answer(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    bus = make_bus(dict(emu.transport))
    bus.open()
    before = {i: len(emu.events(i)) for i in START}
    emu.mute(3, 100)
    with pytest.raises(TransportTimeoutError, match=r"id\(s\) \[3\].*torque left off"):
        bus.set_torque(True)
    for i in START:
        assert not emu.state(i).torque_enabled
        assert "goal" not in [k for k, _ in emu.events(i)[before[i]:]]
    bus.write({i: ActuatorCommand(position=0.1) for i in START})  # dropped: no full read
    assert all(k != "goal" for i in START for k, _ in emu.events(i))
    emu.mute(3, 0)
    bus.set_torque(True)
    for i in START:
        kinds = [k for k, _ in emu.events(i)[before[i]:]]
        assert kinds.index("read") < kinds.index("goal")  # read first, then the measured goal
        assert emu.register(i, "Torque_Enable") == 1


def test_the_first_goals_are_the_measured_positions(
        make_emulator: Callable[..., FeetechEmulator], make_bus: Callable[..., FeetechBus],
) -> None:
    emu = make_emulator()
    bus = make_bus(dict(emu.transport))
    bus.open()
    for i, q in {1: 0.7, 2: -0.6, 3: 0.0}.items():  # moved by hand while limp
        emu.set_position(i, q)
    bus.set_torque(True)
    for i, q in {1: 0.7, 2: -0.6, 3: 0.0}.items():
        assert emu.goal_position(i) == pytest.approx(q, abs=2e-3)
        assert emu.state(i).position == pytest.approx(q, abs=2e-3)  # no jump to a stale goal
