"""The MIT hold correction: an MIT motor's torque readings are put back before the fit.

An MIT motor holds each command for a control period and replies with the torque at the
end of the hold, which falls short of the hold's mean (what moved the joint) by
``(kp qd + kd qdd)(T - dt) / 2`` at the joint, half a period late
(:func:`skel_ros.identify.fit.hold_corrected`). The physics bench's MIT motor, driven
through its CAN frames once per 5 ms control period (five 1 ms world steps, on the test's
clock) on a pendulum through a 2:1 transmission turned the other way, with a truth of its
own: the fit of its readings as they are finds the damping short by the derivation's
``g^2 kp (T - dt) / 2`` (80 % of the truth here); corrected, every value comes back.
Which joints are corrected, from the hardware YAML (``skel-ros identify
--hardware-config``), and what identified.yaml says of it. A motor that applies each
command 7 ms after answering it: bounded (``--reply-phase unknown``), not corrected; in
position mode its servo law fitted to the replies as read; in impedance mode no servo fit.
"""

from __future__ import annotations

import math
from pathlib import Path

import can
import numpy as np
import pytest

pytest.importorskip("mujoco")
pytest.importorskip("scipy")

from skel_ros.analysis.series import JointSeries
from skel_ros.cli.identify_cmd import bound_mit_replies, hold_corrections
from skel_ros.hardware.base import ActuatorSpec, ControlMode
from skel_ros.hardware.config import load_hardware_config
from skel_ros.hardware.errors import ConfigError
from skel_ros.hardware.mit.codec import ENTER_MODE, MitCodec
from skel_ros.hardware.mit.models import resolve
from skel_ros.identify import fit as f
from skel_ros.identify.output import identified_document
from skel_ros.model import load_model
from skel_ros.physical.mit import PhysicalMitEmulator
from skel_ros.sim.inverse_dynamics import RigidDynamics

REPO = Path(__file__).resolve().parents[2]
PENDULUM = REPO / "test" / "physical" / "data" / "pendulum.skel"
TRUTH = {"armature": 0.002, "damping": 0.05, "friction": 0.01}  # at the joint
DIRECTION, GEAR = -1, 2.0
KP, KD = 5.0, 0.05  # at the motor: 20 N m/rad and 0.2 N m s/rad at the joint
PERIOD, STEP = 0.005, 0.001  # s: the control period, the pendulum's world step
DURATION = 8.0
EVERY = 4  # replies per recorded sample: joint_states at 50 Hz
MODEL = {"hinge": {"armature": 0.0, "damping": 0.01, "friction": 0.0}}


def _excitation(t: float) -> tuple[float, float]:
    """The joint's wanted position and velocity at ``t``: two sines, few reversals."""
    w1, w2 = 2 * math.pi * 0.25, 2 * math.pi * 0.6
    q = 0.6 * math.sin(w1 * t) + 0.15 * math.sin(w2 * t)
    return q, 0.6 * w1 * math.cos(w1 * t) + 0.15 * w2 * math.cos(w2 * t)


def _record(truth_file: Path) -> f.Samples:
    """The motor's readings at the joint, one command per control period."""
    return f.prepare("pendulum", _readings(truth_file), None, ["hinge"])


def _readings(truth_file: Path, *, feed_forward: bool = True) -> JointSeries:
    """The motor's readings at the joint (position, velocity, torque), as a stream.

    ``feed_forward``: each frame carries the target's velocity (impedance mode), else 0
    (position mode: the plain law ``kp (p* - p) - kd v``).
    """
    clock = [10.0]
    spec = ActuatorSpec(1, ControlMode.IMPEDANCE, "AK80-9", {}, name="hinge")
    codec = MitCodec(*resolve("AK80-9", {}))
    emulator = PhysicalMitEmulator({}, [spec], {
        "clock": lambda: clock[0], "initial_positions": {1: 0.0},
        "physics": {"model": str(PENDULUM), "truth": str(truth_file), "joints": {
            1: {"joint": "hinge", "direction": DIRECTION, "gear_ratio": GEAR}}}})
    # Each frame handed to the emulator as its receiving thread would (it steps the world
    # to the frame's time, replies, queues the command): on the bus, waking that thread
    # 1600 times costs seconds of wall time on a loaded machine.
    bus = can.Bus(interface="virtual", channel=emulator.transport["channel"],
                  receive_own_messages=False)

    def send(data: bytes) -> None:
        emulator._handle(1, data)  # its receiving thread's handling: see above
        assert bus.recv(timeout=10.0) is not None, "no reply"

    rows = []
    try:
        send(ENTER_MODE)
        start = clock[0]
        for k in range(round(DURATION / PERIOD)):
            clock[0] = start + k * PERIOD
            q, v = _excitation(k * PERIOD)
            send(codec.encode(DIRECTION * GEAR * q, DIRECTION * GEAR * v * feed_forward, KP, KD,
                              0.0))
            if k % EVERY == 0:
                # What the reply carries (within half a step of the wire:
                # test/physical/test_mit_torque_balance.py), at the joint.
                s = emulator.state(1)
                rows.append((clock[0], DIRECTION * s.position / GEAR,
                             DIRECTION * s.velocity / GEAR, DIRECTION * GEAR * s.effort))
    finally:
        bus.shutdown()
        emulator.stop()
    t, q, v, tau = (np.array(c) for c in zip(*rows, strict=True))
    return JointSeries.from_samples("real", t, ["hinge"], q[:, None], v[:, None],
                                    tau[:, None])


HOLD = f.HoldCorrection(KP, KD, GEAR, PERIOD, STEP)


@pytest.fixture(scope="module")
def fits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, f.JointFit]:
    """The joint's fit of the readings as they are (``raw``) and corrected."""
    truth = tmp_path_factory.mktemp("truth") / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + "}\n")
    samples = _record(truth)
    world = load_model(PENDULUM)
    dynamics = RigidDynamics(world, next(s for s in world.skeletons if s.num_dofs).name)
    out = {}
    for name, part in (("raw", samples), ("corrected",
                                          f.hold_corrected(samples, {"hinge": HOLD}))):
        (out[name],) = f.fit_joints([part], f.residual_torques([part], dynamics), MODEL)
    return out


def test_the_corrected_readings_give_back_the_truth(fits: dict[str, f.JointFit]) -> None:
    fit = fits["corrected"]
    assert fit.fixed == {}, fit.fixed
    for name, truth in TRUTH.items():
        # The armature within 2.5 %: without the half-period advance it is 4 % short.
        assert fit.values[name] == pytest.approx(truth, rel=0.025), (name, fit.values)
        assert abs(fit.values[name] - truth) <= 3.0 * fit.intervals[name], (name, fit)


def test_the_readings_as_they_are_miss_what_the_derivation_says(
        fits: dict[str, f.JointFit]) -> None:
    damping, armature = HOLD.offsets()
    assert (damping, armature) == pytest.approx((20.0 * 0.002, 0.2 * 0.002))  # g^2 k (T-dt)/2
    raw = fits["raw"].values
    assert raw["damping"] == pytest.approx(TRUTH["damping"] - damping, abs=0.002)
    # The armature: short by kd's part; the reading is half a period late, which takes
    # the damping (the pendulum's own 0.01 too) times T/2 off and, the kp part being
    # late too, adds kp (T/2) (T - dt)/2.
    lag = (TRUTH["damping"] + 0.01) * PERIOD / 2 - damping * PERIOD / 2
    assert raw["armature"] == pytest.approx(TRUTH["armature"] - armature - lag, abs=5e-5)


DELAY = 0.007  # s: the motor applies each command 7 ms after answering it


@pytest.fixture(scope="module")
def delayed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, f.JointFit]:
    """A motor with a command delay of its own, not a whole number of periods: each
    reply reads the torque ``T - (DELAY mod T)`` = 3 ms into its hold, not at its end.
    The fit corrected as for a reply at the end, and bounded for an unknown phase
    (``identify --reply-phase unknown``: the readings as they are, widened)."""
    truth = tmp_path_factory.mktemp("delayed") / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + f", delay: {DELAY}}}\n")
    samples = _record(truth)
    world = load_model(PENDULUM)
    dynamics = RigidDynamics(world, next(s for s in world.skeletons if s.num_dofs).name)
    corrected = f.hold_corrected(samples, {"hinge": HOLD})
    (end,) = f.fit_joints([corrected], f.residual_torques([corrected], dynamics), MODEL)
    raw = f.fit_joints([samples], f.residual_torques([samples], dynamics), MODEL)
    (unknown,) = bound_mit_replies(raw, {"hinge": HOLD})
    return {"end": end, "unknown": unknown}


def test_a_motor_that_applies_commands_late_is_bounded_not_corrected(
        delayed: dict[str, f.JointFit]) -> None:
    """Corrected as a reply at the hold's end, the delayed motor's damping comes out far
    over the truth, well outside its interval (a confident wrong value); bounded for the
    unknown phase, every truth is inside its interval and the note says why."""
    end = delayed["end"]
    assert end.values["damping"] - TRUTH["damping"] > 3.0 * end.intervals["damping"], end
    bounded = delayed["unknown"]
    for name, truth in TRUTH.items():
        if name in bounded.intervals:
            assert abs(bounded.values[name] - truth) <= bounded.intervals[name], (name, bounded)
        else:
            assert "not told" in bounded.fixed[name], bounded
    assert "damping" in bounded.intervals, bounded  # the damping is still told, widely
    assert any("hold" in note for note in bounded.notes), bounded.notes


PENDULUM_MIT = f"""\
control_rate: {1.0 / PERIOD:g}
buses:
  can: {{protocol: mit, transport: {{interface: virtual, channel: x}}}}
joints:
  hinge: {{bus: can, id: 1, model: AK80-9, mode: impedance, gear_ratio: {GEAR:g},
          direction: {DIRECTION}, options: {{kp: {KP:g}, kd: {KD:g}}}}}
"""


def _recording(path: Path, series: JointSeries) -> Path:
    """An MCAP of the motor's readings on /real/joint_states and of the commands sent to
    it, one a period, on /joint_commands (what sim-to-real records)."""
    from joint_state_mcap import write_run

    return write_run(path, series, [(series.times[0] + k * PERIOD, ["hinge"],
                                     [_excitation(k * PERIOD)[0]])
                                    for k in range(round(DURATION / PERIOD))])


def test_a_position_mode_motors_servo_is_fitted_to_its_replies_as_they_are(
        tmp_path: Path) -> None:
    """An MIT motor in position mode (no velocity fed forward) with a delay of its own:
    ``identify`` fits its servo law to the replies as read, each the law's value at its
    instant, not to the hold-corrected torques (the hold's mean, half a period earlier),
    which gave a delay of 1-5 ms for the truth's 7 and kp 4.5 % short."""
    import yaml

    from skel_ros.cli.main import main

    truth = tmp_path / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + f", delay: {DELAY}}}\n")
    run = _recording(tmp_path / "run.mcap", _readings(truth, feed_forward=False))
    hardware = tmp_path / "pendulum_mit.yaml"
    hardware.write_text(PENDULUM_MIT.replace("mode: impedance", "mode: position"))
    assert main(["identify", str(run), "--skel", str(PENDULUM), "--hardware-config",
                 str(hardware), "--law-step", str(STEP), "-o", str(tmp_path / "out")]) == 0
    joint = yaml.safe_load((tmp_path / "out" / "identified.yaml").read_text())["joints"]["hinge"]
    servo = joint["servo"]
    assert "not_identified" not in servo, servo
    # The replies meet the commands once a period: any delay in the same period fits.
    low, high = servo["delay_interval"]
    assert low - 0.001 <= DELAY <= high + 0.001, servo
    assert servo["kp"] == pytest.approx(GEAR * GEAR * KP, rel=0.03), servo
    assert "torque_correction" in joint  # the joint balance still corrected


def test_identify_reply_phase_unknown_bounds_what_end_would_correct(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``skel-ros identify --reply-phase unknown`` on the delayed motor's recording: no
    torque correction, the truth inside every interval, the command says so; by default
    (each reply at its hold's end) the readings are corrected and the damping is off.
    Either way the impedance-mode motor's servo is its law with the hardware YAML's gains
    at the joint, the velocity fed forward, and the simulation reads it so."""
    import yaml

    from skel_ros.cli.main import main
    from skel_ros.identify.output import IdentifiedServo, load_sim_params

    truth = tmp_path / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + f", delay: {DELAY}}}\n")
    run = _recording(tmp_path / "run.mcap", _readings(truth))
    hardware = tmp_path / "pendulum_mit.yaml"
    hardware.write_text(PENDULUM_MIT)
    found = {}
    for phase in ("unknown", "end"):
        out = tmp_path / phase
        assert main(["identify", str(run), "--skel", str(PENDULUM), "--hardware-config",
                     str(hardware), "--law-step", str(STEP), "--reply-phase", phase,
                     "-o", str(out)]) == 0
        found[phase] = yaml.safe_load((out / "identified.yaml").read_text())["joints"]["hinge"]
        printed = capsys.readouterr().out
        assert ("bounded by the unknown phase" in printed) == (phase == "unknown"), printed
    bounded, end = found["unknown"], found["end"]
    assert "torque_correction" not in bounded
    assert any("hold" in note for note in bounded["notes"]), bounded
    for name, value in TRUTH.items():
        item = bounded[name]
        assert "interval" in item, bounded
        assert abs(item["value"] - value) <= item["interval"], (name, bounded)
    assert end["torque_correction"]["kind"] == "mit_hold"
    # Impedance mode: the motor's own law, not a fit of the plain one. (Its delay is not
    # checked here: the commands reach this motor each period without a hardware node,
    # whose spreading of a stream the delay's fit takes off: test_fit.py checks that.)
    law = {"kp": GEAR * GEAR * KP, "kd": GEAR * GEAR * KD, "velocity_feedforward": True,
           "gains_from": f"{hardware} (impedance mode)"}
    for servo in (bounded["servo"], end["servo"]):
        assert {k: servo[k] for k in law} == law, servo
        assert "delay" in servo, servo
    delay = end["servo"]["delay"]
    assert load_sim_params(tmp_path / "end" / "identified.yaml").servos == {
        "hinge": IdentifiedServo(GEAR * GEAR * KP, GEAR * GEAR * KD, delay,
                                 velocity_feedforward=True)}
    assert end["damping"]["value"] - TRUTH["damping"] > end["damping"]["interval"], end


def test_a_joint_without_a_hold_keeps_its_readings() -> None:
    t = np.arange(50) * 0.02
    series = JointSeries.from_samples("real", t, ["a", "b"], np.column_stack([t, -t]),
                                      np.ones((50, 2)), np.column_stack([np.sin(t), np.cos(t)]))
    samples = f.prepare("two", series, None, ["a", "b"])
    corrected = f.hold_corrected(samples, {"a": HOLD})
    np.testing.assert_array_equal(corrected.tau[:, 1], samples.tau[:, 1])
    assert not np.allclose(corrected.tau[:, 0], samples.tau[:, 0])
    np.testing.assert_array_equal(f.hold_corrected(samples, {}).tau, samples.tau)


def test_the_quadrupeds_mit_joints_are_corrected_with_their_yamls_gains() -> None:
    config = load_hardware_config(REPO / "config" / "hardware" / "quadruped_mit.yaml")
    holds = hold_corrections(config, tuple(j.name for j in config.joints), 0.001)
    assert len(holds) == 12
    assert holds["fl_hip_abd"] == f.HoldCorrection(30.0, 0.8, 1.0, 0.005, 0.001)
    assert holds["hr_knee"] == f.HoldCorrection(30.0, 0.6, 1.0, 0.005, 0.001)
    # Only the joints identified.
    assert set(hold_corrections(config, ("fl_knee",), 0.0)) == {"fl_knee"}


def test_an_impedance_joints_law_is_the_yamls() -> None:
    """The quadruped's MIT motors in impedance mode are sent the targets' velocity: no
    servo fit of the plain law is made for them (it finds delays of 0-69 ms for a truth of
    0 or 10); their law is the hardware YAML's, at the joint. A Dynamixel arm has none."""
    from skel_ros.cli.identify_cmd import impedance_laws

    config = load_hardware_config(REPO / "config" / "hardware" / "quadruped_mit.yaml")
    laws = impedance_laws(config, tuple(j.name for j in config.joints))
    assert len(laws) == 12
    assert laws["fl_knee"] == f.MotorLaw("fl_knee", 30.0, 0.6,
                                         f"{config.source} (impedance mode)")
    assert (laws["hr_hip_pitch"].kp, laws["hr_hip_pitch"].kd) == (30.0, 0.8)
    assert set(impedance_laws(config, ("fl_knee", "nope"))) == {"fl_knee"}
    arm = load_hardware_config(REPO / "config" / "hardware" / "arm_dynamixel.yaml")
    assert impedance_laws(arm, tuple(j.name for j in arm.joints)) == {}
    assert impedance_laws(None, ("fl_knee",)) == {}


def test_a_dynamixel_arm_gets_no_correction() -> None:
    config = load_hardware_config(REPO / "config" / "hardware" / "arm_dynamixel.yaml")
    assert hold_corrections(config, tuple(j.name for j in config.joints), 0.001) == {}


MIXED = """\
control_rate: 250.0
buses:
  serial: {protocol: dynamixel, transport: {port: /dev/null, baudrate: 1000000}}
  can: {protocol: mit, transport: {interface: virtual, channel: x}}
joints:
  shoulder_yaw: {bus: serial, id: 1, model: XM430-W350, mode: position}
  shoulder_pitch:
    bus: can
    id: 2
    model: AK80-9
    mode: impedance
    gear_ratio: 2.0
    options: {kp: 10.0, kd: 0.5}
  elbow: {bus: can, id: 3, model: AK80-9, mode: effort}
  wrist: {bus: can, id: 4, model: AK80-9, mode: velocity, options: {kp: 10.0, kd: 0.4}}
"""


def test_only_an_mit_motor_whose_law_follows_the_motion_is_corrected(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(MIXED)
    config = load_hardware_config(path)
    holds = hold_corrections(config, ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist"), 0.0)
    assert set(holds) == {"shoulder_pitch", "wrist"}  # not the Dynamixel, not effort mode
    assert holds["shoulder_pitch"].gains == pytest.approx((40.0, 2.0))  # at the joint: g^2
    assert holds["shoulder_pitch"].offsets() == pytest.approx((40.0 * 0.002, 2.0 * 0.002))
    assert holds["wrist"] == f.HoldCorrection(0.0, 0.4, 1.0, 0.004, 0.0)  # kd alone


def test_bad_gains_and_law_steps_are_named(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(MIXED.replace("{kp: 10.0, kd: 0.5}", "{kp: 10.0, kd: fast}"))
    config = load_hardware_config(path)
    with pytest.raises(ConfigError, match=r"bad\.yaml:\d+: joint 'shoulder_pitch'.*'kd'"):
        hold_corrections(config, ("shoulder_pitch",), 0.0)
    config = load_hardware_config(REPO / "config" / "hardware" / "quadruped_mit.yaml")
    for step in (0.006, -0.001):
        with pytest.raises(ConfigError, match="--law-step"):
            hold_corrections(config, ("fl_knee",), step)


def test_identified_yaml_says_which_joints_were_corrected(fits: dict[str, f.JointFit]) -> None:
    fit = fits["corrected"]
    document = identified_document([fit], {}, sources=["run.mcap"], model_file=Path("m.skel"),
                                   note="", held_out={}, holds={"hinge": HOLD})
    assert document["joints"]["hinge"]["torque_correction"] == {
        "kind": "mit_hold", "kp": KP, "kd": KD, "gear_ratio": GEAR, "period": PERIOD,
        "law_step": STEP, "adds": {"damping": pytest.approx(0.04),
                                   "armature": pytest.approx(0.0004)}}
    plain = identified_document([fit], {}, sources=["run.mcap"], model_file=Path("m.skel"),
                                note="", held_out={})
    assert "torque_correction" not in plain["joints"]["hinge"]


def _held_by_the_motor(truth_file: Path, target: float, seconds: float) -> float:
    """Where the physics bench's MIT motor (impedance mode, the test's gains) holds the
    pendulum after ``seconds`` of one command a period to stay at ``target`` (joint)."""
    clock = [10.0]
    spec = ActuatorSpec(1, ControlMode.IMPEDANCE, "AK80-9", {}, name="hinge")
    codec = MitCodec(*resolve("AK80-9", {}))
    emulator = PhysicalMitEmulator({}, [spec], {
        "clock": lambda: clock[0], "initial_positions": {1: DIRECTION * GEAR * target},
        "physics": {"model": str(PENDULUM), "truth": str(truth_file), "joints": {
            1: {"joint": "hinge", "direction": DIRECTION, "gear_ratio": GEAR}}}})
    bus = can.Bus(interface="virtual", channel=emulator.transport["channel"],
                  receive_own_messages=False)
    try:
        for data in [ENTER_MODE] + [codec.encode(DIRECTION * GEAR * target, 0.0, KP, KD, 0.0)
                                    ] * round(seconds / PERIOD):
            clock[0] += PERIOD
            emulator._handle(1, data)  # as its receiving thread would (see _readings)
            assert bus.recv(timeout=10.0) is not None, "no reply"
        return DIRECTION * emulator.state(1).position / GEAR
    finally:
        bus.shutdown()
        emulator.stop()


@pytest.mark.parametrize("engine", ["dart", "mujoco"])
def test_the_simulation_runs_the_motors_law_and_sags_as_it_does(
        tmp_path: Path, engine: str) -> None:
    """The gap an impedance-mode motor's law leaves when the simulation runs its own
    controller: the motor sends no gravity torque, so the pendulum held level sags by
    ``m g l / kp`` (0.196 / 20 = 0.0098 rad); the simulation's default controller
    (gravity compensation, an integral) holds it level. Run with identified.yaml's law
    (the YAML's gains, the velocity fed forward, no integral or gravity compensation), the
    simulation sags as the motor does."""
    from skel_ros.cli.identify_cmd import impedance_laws
    from skel_ros.identify.output import IdentifiedServo, SimParams
    from skel_ros.sim import ENGINES
    from skel_ros.sim.joint_dynamics import JointDynamics

    if engine == "mujoco":
        pytest.importorskip("mujoco")
    truth = tmp_path / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + "}\n")
    real = _held_by_the_motor(truth, 0.0, 2.0)
    hardware = tmp_path / "pendulum_mit.yaml"
    hardware.write_text(PENDULUM_MIT)
    law = impedance_laws(load_hardware_config(hardware), ["hinge"])["hinge"]
    params = SimParams({"hinge": JointDynamics(**TRUTH)}, {"hinge": 1}, "identified.yaml",
                       {"hinge": IdentifiedServo(law.kp, law.kd, 0.0,
                                                 velocity_feedforward=True)})
    world = load_model(PENDULUM)
    held = {}
    for name, gains in (("own", None), ("law", params.gains())):
        sim = ENGINES[engine](world, gains=gains, joint_dynamics=params.joints)
        sim.set_commands("position", ["hinge"], [0.0])
        sim.step(2000)
        held[name] = float(sim.positions()[sim.dof_names.index("hinge")])
    sag = 0.2 * 9.81 * 0.1 / (GEAR * GEAR * KP)
    assert abs(real) == pytest.approx(sag, rel=0.1)
    # Within the engines' friction (the truth's 0.01 N m holds 5 % of the load on the
    # bench; DART's joint friction less of it: 0.0102 rad against the bench's 0.0092).
    assert held["law"] == pytest.approx(real, rel=0.15)
    assert abs(held["own"]) < 0.1 * sag


def test_recorded_with_the_goals_as_written_a_late_motor_is_bounded_unasked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The delayed motor's recording with the goals as written (``sim-to-real
    --record-goals``): ``identify``, not asked, measures the motor's own delay against
    what it was sent (``motor_delay``, within a period of the truth's 7 ms, inside its
    interval) and bounds the joint as ``--reply-phase unknown`` does, saying so: no
    torque correction, the truth inside every interval (planted: corrected as if read at
    the hold's end, as the test above shows the default does without the goals)."""
    import yaml
    from joint_state_mcap import write_run

    from skel_ros.cli.main import main

    truth = tmp_path / "truth.yaml"
    truth.write_text("joints:\n  hinge: {" + ", ".join(f"{k}: {v}" for k, v in TRUTH.items())
                     + f", delay: {DELAY}}}\n")
    series = _readings(truth)
    frames = [(series.times[0] + k * PERIOD, ["hinge"], [_excitation(k * PERIOD)[0]])
              for k in range(round(DURATION / PERIOD))]
    run = write_run(tmp_path / "run.mcap", series, frames, written=frames)
    hardware = tmp_path / "pendulum_mit.yaml"
    hardware.write_text(PENDULUM_MIT)
    assert main(["identify", str(run), "--skel", str(PENDULUM), "--hardware-config",
                 str(hardware), "--law-step", str(STEP), "-o", str(tmp_path / "out")]) == 0
    joint = yaml.safe_load((tmp_path / "out" / "identified.yaml").read_text())["joints"][
        "hinge"]
    assert abs(joint["damping"]["value"] - TRUTH["damping"]) <= joint["damping"]["interval"]
    assert "torque_correction" not in joint, joint
    assert "hinge: the motor applies each command a delay after it came" in \
        capsys.readouterr().out
    servo = joint["servo"]
    assert servo["motor_delay"] == pytest.approx(DELAY, abs=PERIOD), servo
    low, high = servo["motor_delay_interval"]
    assert low <= DELAY <= high, servo
    for name, value in TRUTH.items():
        item = joint[name]
        assert abs(item["value"] - value) <= item["interval"], (name, joint)
