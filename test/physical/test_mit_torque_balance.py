"""What an MIT motor of the physics bench reports is the torque that moved its joint.

Identification (:mod:`skel_ros.identify`) reads a motor's torque as what acts on the
joint beyond the links' own dynamics: ``armature qdd + damping qd + friction sign(qd)``.
That holds only if the torque the emulated motor reports is, through its transmission,
the torque the world applied to the joint at that step: the same sign, the law's whole
torque (its ``kd`` part counted once), on the joint side of the gears.

One MIT motor on the pendulum's hinge through a 2:1 transmission turned the other way
(``direction -1``), with a truth of its own (damping, friction, armature), driven through
its CAN frames once per world step (1 ms, the emulator on the test's clock) along two
sines: the reply's torque is the motor's within the wire's quantisation, and the joint's
armature, damping and friction fitted from the motor's readings (the identification's
own fit) are the truth's.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import can
import numpy as np
import pytest

pytest.importorskip("mujoco")

from skel_ros.analysis.series import JointSeries
from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.mit.codec import ENTER_MODE, MitCodec
from skel_ros.hardware.mit.models import resolve
from skel_ros.identify import fit as f
from skel_ros.model import load_model
from skel_ros.physical.mit import PhysicalMitEmulator
from skel_ros.sim.inverse_dynamics import RigidDynamics

if TYPE_CHECKING:
    from skel_ros.hardware.mit.codec import MitReply

PENDULUM = Path(__file__).resolve().parent / "data" / "pendulum.skel"
TRUTH = {"armature": 0.002, "damping": 0.05, "friction": 0.01}  # at the joint
DIRECTION, GEAR = -1, 2.0
KP, KD = 5.0, 0.05  # at the motor: 20 N m/rad and 0.2 N m s/rad at the joint
STEP = 0.001  # s, the pendulum's world step: one command per step
DURATION = 6.0
T_LSB = 36.0 / 4095  # N m, the AK80-9's torque on the wire (12 bits over +-18 N m)


def _excitation(t: float) -> tuple[float, float]:
    """The joint's wanted position and velocity at ``t``: two sines, few reversals.

    (The fit leaves out the samples near a reversal of the velocity.)
    """
    w1, w2 = 2 * math.pi * 0.25, 2 * math.pi * 0.6
    q = 0.6 * math.sin(w1 * t) + 0.15 * math.sin(w2 * t)
    return q, 0.6 * w1 * math.cos(w1 * t) + 0.15 * w2 * math.cos(w2 * t)


class Run:
    """The motor's readings (joint side) at every step, and its replies' torques."""

    def __init__(self, truth_file: Path) -> None:
        self.t = 10.0
        spec = ActuatorSpec(1, ControlMode.IMPEDANCE, "AK80-9", {}, name="hinge")
        codec = MitCodec(*resolve("AK80-9", {}))
        emulator = PhysicalMitEmulator({}, [spec], {
            "clock": lambda: self.t, "initial_positions": {1: 0.0},
            "physics": {"model": str(PENDULUM), "truth": str(truth_file), "joints": {
                1: {"joint": "hinge", "direction": DIRECTION, "gear_ratio": GEAR}}}})
        bus = can.Bus(interface="virtual", channel=emulator.transport["channel"],
                      receive_own_messages=False)

        def send(data: bytes) -> MitReply:
            bus.send(can.Message(arbitration_id=1, data=data, is_extended_id=False))
            reply = bus.recv(timeout=10.0)
            assert reply is not None, "no reply"
            return codec.decode_reply(bytes(reply.data))

        rows, self.reply_errors = [], []
        try:
            send(ENTER_MODE)
            start = self.t
            for k in range(round(DURATION / STEP)):
                self.t = start + k * STEP
                q, v = _excitation(k * STEP)
                reply = send(codec.encode(DIRECTION * GEAR * q, DIRECTION * GEAR * v,
                                          KP, KD, 0.0))
                state = emulator.state(1)
                self.reply_errors.append(reply.torque - state.effort)
                rows.append((self.t, DIRECTION * state.position / GEAR,
                             DIRECTION * state.velocity / GEAR,
                             DIRECTION * GEAR * state.effort))
        finally:
            bus.shutdown()
            emulator.stop()
        t, q, v, tau = (np.array(c) for c in zip(*rows, strict=True))
        self.series = JointSeries.from_samples("real", t, ["hinge"], q[:, None], v[:, None],
                                               tau[:, None])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    truth = tmp_path_factory.mktemp("truth") / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + "}\n")
    return Run(truth)


def test_the_reply_carries_the_motors_torque_within_one_step_of_the_wire(run: Run) -> None:
    assert max(abs(e) for e in run.reply_errors) <= T_LSB / 2 + 1e-9
    # It moved: the torque is not the trivial zero.
    assert np.ptp(run.series.efforts) > 0.5


def test_the_reported_torque_gives_back_the_joints_truth(run: Run) -> None:
    world = load_model(PENDULUM)
    skel = next(s for s in world.skeletons if s.num_dofs)
    samples = f.prepare("pendulum", run.series, None, ["hinge"])
    dynamics = RigidDynamics(world, skel.name)
    model = {"hinge": {"armature": 0.0, "damping": 0.01, "friction": 0.0}}
    (fit,) = f.fit_joints([samples], f.residual_torques([samples], dynamics), model)
    assert fit.fixed == {}, fit.fixed
    for name, truth in TRUTH.items():
        assert fit.values[name] == pytest.approx(truth, rel=0.05), (name, fit.values)
