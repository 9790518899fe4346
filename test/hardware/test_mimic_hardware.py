"""Mimic joints on hardware: the YAML's two forms, the limits gate, and the wire.

The gripper arm (examples/gripper_arm.urdf): finger_right mimics finger_left with
multiplier -1. A follower left out of ``joints:`` is moved by its leader's mechanism and
its state is derived from the leader's measurement; a follower mapped to a servo of its
own gets ``multiplier * leader + offset`` as its goal. Checked on the wire: a tap on the
pty between the Dynamixel driver and the emulator (another process) decodes every Sync
Write with its own parser (test/sync_write_tap.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from polling import wait_until
from sync_write_tap import CENTER, TICK, SyncWriteTap

from skel_ros.hardware import (
    ConfigError,
    HardwareBackend,
    MotionState,
    hardware_runner,
    load_hardware_config,
    parse_hardware_config,
)
from skel_ros.model import load_model
from skel_ros.model.limits import CommandKind
from skel_ros.model.types import FollowerDrive

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.core import Runner
    from skel_ros.model.types import Skeleton

dynamixel = pytest.importorskip("skel_ros.emulation.dynamixel")

REPO = Path(__file__).resolve().parents[2]
GRIPPER = REPO / "examples" / "gripper_arm.urdf"
ONE_SERVO = REPO / "config" / "hardware" / "gripper_arm_dynamixel.yaml"
GEAR = 100.0  # rad of a finger's pinion per m
RIGHT_ZERO = 0.5  # finger_right's servo at 0.5 rad when the finger is at 0
RIGHT_UPPER = 0.01  # finger_right's YAML limit, tighter than the model's 0.015


def _skeleton() -> Skeleton:
    return load_model(GRIPPER).skeletons[0]


def _two_servos(port: str = "/dev/null", *, right: str | None = None,
                left: str = "finger_left: {bus: b, id: 3, gear_ratio: 100.0}") -> str:
    right = right if right is not None else (
        f"finger_right: {{bus: b, id: 4, gear_ratio: {GEAR}, zero_offset: {RIGHT_ZERO},"
        f" limits: {{position: {{upper: {RIGHT_UPPER}}}}}}}")
    return f"""\
control_rate: 100.0
command_timeout: 0.0
device_watchdog: 2.0
timeout_margin: 0.5
reenable_velocity: 1.0
buses:
  b:
    protocol: dynamixel
    transport: {{port: "{port}", baudrate: 4000000}}
joints:
  shoulder: {{bus: b, id: 1}}
  {left}
  {right}
"""


# ------------------------------------------------------------------ the YAML


def test_a_follower_left_out_is_coupled_and_derived() -> None:
    bound = load_hardware_config(ONE_SERVO).bind(_skeleton())
    assert bound.names == ("shoulder", "elbow", "finger_left")
    assert bound.derived == ("finger_right",)
    assert bound.unmapped == ()
    (name, mimic), = bound.couplings
    assert (name, mimic.leader, mimic.multiplier) == ("finger_right", "finger_left", -1.0)
    assert mimic.drive is FollowerDrive.COUPLED


def test_a_follower_with_a_servo_is_commanded_from_its_leader() -> None:
    bound = parse_hardware_config(_two_servos(), "two.yaml").bind(_skeleton())
    assert bound.names == ("shoulder", "finger_left", "finger_right")
    assert bound.derived == ()
    assert bound.unmapped == ("elbow",)
    assert dict(bound.couplings)["finger_right"].drive is FollowerDrive.FROM_LEADER


def test_a_follower_mapped_without_its_leader_is_an_error_at_its_line() -> None:
    text = _two_servos(left="elbow: {bus: b, id: 2}")
    with pytest.raises(ConfigError, match=r"two\.yaml:13: joint 'finger_right' is a mimic"
                                          r" joint of 'finger_left', which has no actuator"):
        parse_hardware_config(text, "two.yaml").bind(_skeleton())


def test_a_follower_in_another_kind_of_mode_is_an_error_at_its_mode() -> None:
    right = "finger_right:\n    bus: b\n    id: 4\n    mode: velocity"
    with pytest.raises(ConfigError, match=r"two\.yaml:16: joint 'finger_right' is a mimic"
                                          r" joint .* mode 'velocity' takes velocity commands"
                                          r" but its leader 'finger_left' \(line 12\) takes"
                                          r" position"):
        parse_hardware_config(_two_servos(right=right), "two.yaml").bind(_skeleton())


def test_a_followers_tighter_limit_narrows_its_leader_and_the_gate_judges_it() -> None:
    bound = parse_hardware_config(_two_servos(), "two.yaml").bind(_skeleton())
    left = bound.limits["finger_left"]
    assert (left.position_lower, left.position_upper) == (-RIGHT_UPPER, 0.025)
    check = bound.limits.check(CommandKind.POSITION, ["finger_left"], [-0.015])
    assert check.ok
    assert check.values[0] == -RIGHT_UPPER  # clamped: finger_right would be at 0.015
    # The follower is still a follower after the YAML tightened it: no command of its own.
    refused = bound.limits.check(CommandKind.POSITION, ["finger_right"], [0.0])
    assert not refused.ok
    assert "command 'finger_left' instead" in refused.reason


def test_a_followers_limits_that_leave_its_leader_nothing_are_an_error() -> None:
    # finger_left >= 0 (its own override) and finger_right >= 0.005 (finger_left <= -0.005).
    left = "finger_left: {bus: b, id: 3, limits: {position: {lower: 0.0}}}"
    right = "finger_right: {bus: b, id: 4, limits: {position: {lower: 0.005}}}"
    with pytest.raises(ConfigError, match=r"two\.yaml:13: joint 'finger_right' is a mimic"
                                          r" joint of 'finger_left', and its limits leave"):
        parse_hardware_config(_two_servos(left=left, right=right), "two.yaml").bind(
            _skeleton())


# ------------------------------------------------------------------ on the wire


class Rig:
    """The gripper's servos emulated on a pty, a tap on it, a backend, a runner."""

    def __init__(self, tmp: Path, text: str) -> None:
        skeleton = _skeleton()
        port = tmp / "ttyDXL"
        config = parse_hardware_config(text.replace("/dev/null", str(port)), "g.yaml")
        self.bound = config.bind(skeleton)
        self.maps = {m.name: m for m in config.joints}
        self.emulator = dynamixel.start_emulator(
            {"baudrate": 4_000_000}, [m.actuator for m in config.joints],
            {"initial_positions": {m.actuator.id: m.to_actuator(0.0) for m in config.joints}})
        self.tap = SyncWriteTap(self.emulator.transport["port"], port)
        self.t = 0.0
        self.backend = HardwareBackend(self.bound, clock=lambda: self.t)
        self.runner: Runner = hardware_runner(self.backend)

    def cycle(self, n: int = 1) -> None:
        for _ in range(n):
            self.t += self.backend.period
            self.runner.cycle()

    def enable(self) -> None:
        for _ in range(50):
            self.cycle()
            if self.backend.state is MotionState.DISABLED:
                break
        req = self.backend.enable()
        self.cycle()
        assert req.ok, req.message

    def settle(self, name: str, position: float) -> bool:
        """Run cycles until ``name`` measures ``position`` (the servos move in real time)."""
        i = self.backend.names.index(name)

        def there() -> bool:
            self.cycle()
            q = self.backend.read(self.t).positions[i]
            return bool(abs(q - position) < 2 * TICK / GEAR)

        return wait_until(there, 10.0)

    def ticks(self, name: str, position: float) -> float:
        """Where ``name`` at ``position`` is in ticks (unrounded)."""
        return CENTER + self.maps[name].to_actuator(position) / TICK

    def close(self) -> None:
        self.runner.cleanup()
        self.tap.close()
        self.emulator.stop()


@pytest.fixture
def two(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path, _two_servos())
    yield rig
    rig.close()


def test_a_leader_command_moves_the_followers_servo_by_the_rule(two: Rig) -> None:
    two.enable()
    assert two.runner.core.command(CommandKind.POSITION, ["finger_left"], [0.02]).ok
    assert two.settle("finger_left", 0.02)  # 0.1 m/s: 0.2 s to get there
    goals = [g for g in two.tap.goals if 3 in g and 4 in g]
    left, right = goals[-1][3], goals[-1][4]
    assert abs(left - two.ticks("finger_left", 0.02)) <= 0.5
    assert abs(right - two.ticks("finger_right", -0.02)) <= 0.5
    # Every write on the way: the follower's goal is the rule of the leader's, to a tick.
    for g in goals:
        leader = (g[3] - CENTER) * TICK / GEAR
        assert abs(g[4] - two.ticks("finger_right", -leader)) <= 1.0
    assert two.backend.status().guard_corrections == 0


def test_a_leader_command_past_the_followers_tighter_limit_is_clamped_on_the_wire(
        two: Rig) -> None:
    two.enable()
    start = len(two.tap.goals)
    # The model lets finger_left go to -0.015; finger_right's YAML limit (0.01) does not.
    assert two.runner.core.command(CommandKind.POSITION, ["finger_left"], [-0.015]).ok
    assert two.settle("finger_left", -RIGHT_UPPER)
    goals = [g for g in two.tap.goals[start:] if 4 in g]
    limit = two.ticks("finger_right", RIGHT_UPPER)
    assert max(g[4] for g in goals) <= limit
    assert goals[-1][4] == math.floor(limit)  # there, and not a tick past it
    assert min(g[3] for g in goals) >= two.ticks("finger_left", -RIGHT_UPPER)
    status = two.backend.status()
    i = status.names.index("finger_right")
    assert status.position[i] == pytest.approx(RIGHT_UPPER, abs=2 * TICK / GEAR)
    assert status.measured[i]  # its own servo's measurement


def test_a_follower_without_a_servo_is_derived_from_its_leaders_measurement(
        tmp_path: Path) -> None:
    rig = Rig(tmp_path, _two_servos(right=""))
    try:
        rig.enable()
        assert rig.runner.core.command(CommandKind.POSITION, ["finger_left"], [0.018]).ok
        assert rig.settle("finger_left", 0.018)
        reading = rig.backend.read(rig.t)
        names = rig.backend.names
        left, right = names.index("finger_left"), names.index("finger_right")
        assert reading.positions[left] == pytest.approx(0.018, abs=2 * TICK / GEAR)
        assert reading.positions[right] == -reading.positions[left]
        assert reading.velocities[right] == -reading.velocities[left]
        assert reading.fresh[left]
        assert reading.fresh[right]
        assert math.isnan(reading.efforts[right])
        status = rig.backend.status()
        assert status.derived == ("finger_right",)
        assert "finger_right" not in {a.name for a in status.actuators}  # no servo
        assert set(rig.tap.goals[-1]) == {1, 3}  # nothing is sent for it
        refused = rig.runner.core.command(CommandKind.POSITION, ["finger_right"], [0.0])
        assert not refused.ok
        # Its leader's servo silent: the follower is no more measured than its leader (a
        # derived value is never published fresh from a stale one).
        rig.emulator.vanish(5.0)  # unplugged: it answers nothing for 5 s
        rig.cycle(3)
        down = rig.backend.read(rig.t)
        assert not down.fresh[left]
        assert not down.fresh[right]
    finally:
        rig.close()
    assert np.isfinite(reading.positions).all()
