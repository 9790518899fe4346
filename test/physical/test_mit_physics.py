"""Physics-backed MIT motors (skel_ros.physical.mit): the kp/kd/t_ff law, its torque limit.

Each test builds the motors in this process on a clock it sets, talks to them as the bus
does (MIT frames on a python-can ``virtual`` channel: enter, command; each reply awaited)
and checks what the physics and the firmware's law predict: a link held by ``kp`` alone
sags by ``m g l / kp``, ``t_ff`` holds it where it is told, the torque limit lets it sag
to where gravity's torque is the limit.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import can
import pytest

from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.mit.codec import ENTER_MODE, EXIT_MODE, MitCodec
from skel_ros.hardware.mit.models import resolve
from skel_ros.physical.mit import PhysicalMitEmulator

if TYPE_CHECKING:
    from collections.abc import Iterator

    from skel_ros.hardware.mit.codec import MitReply

PENDULUM = Path(__file__).resolve().parent / "data" / "pendulum.skel"  # 0.196 N m at q = 0
GRAVITY_TORQUE = 0.2 * 9.81 * 0.1
STEP = 25 / 65535  # the position's resolution on the wire (+-12.5 rad in 16 bits)


class Bench:
    """One MIT motor at the pendulum's hinge, on a clock of the test's."""

    def __init__(self, options: dict[str, Any] | None = None, model: str = "AK80-9") -> None:
        self.t = 10.0
        spec = ActuatorSpec(1, ControlMode.IMPEDANCE, model, options or {}, name="hinge")
        self.codec = MitCodec(*resolve(model, spec.options))
        self.emulator = PhysicalMitEmulator({}, [spec], {
            "clock": lambda: self.t, "initial_positions": {1: 0.0},
            "physics": {"model": str(PENDULUM), "joints": {1: {"joint": "hinge"}}}})
        self.bus = can.Bus(interface="virtual", channel=self.emulator.transport["channel"],
                           receive_own_messages=False)

    def close(self) -> None:
        self.bus.shutdown()
        self.emulator.stop()

    def send(self, data: bytes) -> MitReply:
        """One frame to the motor, and its reply."""
        self.bus.send(can.Message(arbitration_id=1, data=data, is_extended_id=False))
        reply = self.bus.recv(timeout=5.0)
        assert reply is not None, "no reply"
        return self.codec.decode_reply(bytes(reply.data))

    def command(self, p: float, v: float, kp: float, kd: float, t_ff: float) -> MitReply:
        return self.send(self.codec.encode(p, v, kp, kd, t_ff))

    def run(self, seconds: float) -> None:
        """Time passes; the motor is looked at every 5 ms (its world steps meanwhile)."""
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t = min(end, self.t + 0.005)
            self.emulator.state(1)

    def hold(self, kp: float, t_ff: float = 0.0, kd: float = 0.3) -> MitReply:
        """Told to hold 0 with ``kp``, ``kd`` and ``t_ff`` for 2 s: the motor's reply then."""
        self.command(0.0, 0.0, kp, kd, t_ff)
        self.run(2.0)
        return self.command(0.0, 0.0, kp, kd, t_ff)


@pytest.fixture
def bench() -> Iterator[Bench]:
    made = Bench()
    yield made
    made.close()


def test_a_joint_held_by_kp_sags_by_its_load_over_kp(bench: Bench) -> None:
    bench.send(ENTER_MODE)
    reply = bench.hold(kp=20.0)
    assert abs(reply.position) == pytest.approx(GRAVITY_TORQUE / 20.0, abs=2 * STEP)
    # The reply's torque is the law's: what holds the link (AK80-9: 36 N m in 12 bits).
    assert abs(reply.torque) == pytest.approx(GRAVITY_TORQUE, abs=36 / 4095)
    assert reply.velocity == pytest.approx(0.0, abs=100 / 4095)
    # Twice the stiffness: half the sag.
    reply = bench.hold(kp=40.0)
    assert abs(reply.position) == pytest.approx(GRAVITY_TORQUE / 40.0, abs=2 * STEP)


def test_t_ff_feeds_the_load_forward(bench: Bench) -> None:
    bench.send(ENTER_MODE)
    sag = bench.hold(kp=20.0).position
    # The sag's sign says which way gravity pulls: the feed-forward pushes back as much.
    reply = bench.hold(kp=20.0, t_ff=-math.copysign(GRAVITY_TORQUE, sag))
    assert reply.position == pytest.approx(0.0, abs=2 * STEP)
    # Feed-forward alone (no gains) holds it too, and twice of it lifts it.
    reply = bench.hold(kp=0.0, kd=0.3, t_ff=-math.copysign(GRAVITY_TORQUE, sag))
    assert abs(reply.position) < 0.05
    assert reply.torque == pytest.approx(-math.copysign(GRAVITY_TORQUE, sag), abs=36 / 4095)


def test_the_torque_limit_caps_the_torque() -> None:
    # A motor whose T range is 0.1 N m: it cannot hold 0.196 N m; the link sags until
    # gravity's torque is the limit, m g l cos(q) = 0.1, and the law's torque is the limit.
    bench = Bench({"p_max": 12.5, "v_max": 50.0, "t_max": 0.1}, model="")
    try:
        bench.send(ENTER_MODE)
        reply = bench.hold(kp=20.0, kd=0.1)
        assert abs(reply.position) == pytest.approx(math.acos(0.1 / GRAVITY_TORQUE), abs=0.01)
        assert abs(bench.emulator.state(1).effort) == pytest.approx(0.1, abs=1e-9)
    finally:
        bench.close()


def test_rest_mode_lets_the_load_fall_and_the_robot_stands_until_enter(bench: Bench) -> None:
    bench.run(0.5)  # never entered: the world is held at its initial pose
    assert bench.emulator.state(1).position == 0.0
    bench.send(ENTER_MODE)
    held = bench.hold(kp=20.0).position
    bench.send(EXIT_MODE)
    bench.run(0.3)
    reply = bench.command(0.0, 0.0, 20.0, 0.3, 0.0)  # ignored in rest mode
    assert abs(reply.position - held) > 0.2
    assert reply.torque == 0.0 or abs(reply.torque) < 36 / 4095
