"""The fit: known parameters come back from an engine run; what the data cannot tell apart
is said so; the command end to end on a run recorded by the physics bench.

The synthetic runs: the arm in MuJoCo with armature, damping and friction of our own
choosing, driven by a PD with gravity compensation along an excitation, its state and
torques sampled at 50 Hz (the bench's joint_states rate) into a :class:`JointSeries`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("mujoco")

from skel_ros.analysis.series import JointSeries
from skel_ros.cli.identify_cmd import print_loose
from skel_ros.cli.main import main
from skel_ros.hardware.dynamixel.control_table import MODELS
from skel_ros.identify import design_excitation
from skel_ros.identify import fit as f
from skel_ros.identify.hold_phase import widen_for_hold
from skel_ros.identify.output import identified_document
from skel_ros.identify.payload import PayloadFit
from skel_ros.identify.regressor import PARAMETERS
from skel_ros.model import load_model
from skel_ros.model.limits import LimitSet
from skel_ros.model.truth import apply_truth, parse_truth
from skel_ros.physical.servo_law import MECHANICAL_TIME_CONSTANT
from skel_ros.sim import MujocoEngine
from skel_ros.sim.inverse_dynamics import RigidDynamics

REPO = Path(__file__).resolve().parents[2]
ARM = REPO / "examples" / "arm.skel"
DATA = Path(__file__).resolve().parent / "data"
HARDWARE = REPO / "config" / "hardware" / "arm_dynamixel.yaml"
XM430 = MODELS["XM430-W350"]
# Two truths of our own (armature kg m^2, damping N m s/rad, friction N m), with the seed
# of the excitation each is run on.
TRUTHS = {
    "a": (2, {"shoulder_yaw": (0.004, 0.08, 0.03), "shoulder_pitch": (0.006, 0.12, 0.05),
              "elbow": (0.003, 0.06, 0.04), "wrist": (0.001, 0.03, 0.015)}),
    "b": (7, {"shoulder_yaw": (0.002, 0.03, 0.02), "shoulder_pitch": (0.01, 0.2, 0.03),
              "elbow": (0.005, 0.1, 0.06), "wrist": (0.0015, 0.015, 0.01)}),
}


def _world() -> tuple[object, object]:
    world = load_model(ARM)
    return world, next(s for s in world.skeletons if s.num_dofs)


def engine_run(truth: dict[str, tuple[float, float, float]], seed: int,
               duration: float = 10.0, *, bodies: str = "",
               joints: tuple[str, ...] | None = None) -> JointSeries:
    """The arm with ``truth`` in MuJoCo along an excitation, sampled at 50 Hz.

    ``bodies``: a truth file's ``bodies`` section (masses added to the real arm);
    ``joints``: the joints excited (default all; the others hold their centre).
    """
    world, skel = _world()
    text = "joints:\n" + "".join(f"  {j}: {{armature: {a}, damping: {d}, friction: {c}}}\n"
                                 for j, (a, d, c) in truth.items()) + bodies
    real = apply_truth(world, parse_truth(text))
    # The real motors bound their own torque: no force limits in the engine.
    real = replace(real, skeletons=tuple(replace(s, dofs=tuple(
        replace(d, force_lower=-math.inf, force_upper=math.inf) for d in s.dofs))
        for s in real.skeletons))
    engine = MujocoEngine(real, enforce_limits=False)
    for name, (armature, _, _) in truth.items():
        engine.set_armature(name, armature)
    excitation = design_excitation(LimitSet.from_skeleton(skel), duration=duration,
                                   harmonics=4, base_frequency=0.3, seed=seed, joints=joints)
    dynamics = RigidDynamics(world, skel.name)
    names = engine.dof_names
    index = np.arange(len(names))
    dt = engine.time_step
    every = round(0.02 / dt)
    times, q_rows, qd_rows, tau_rows = [], [], [], []
    t_all = np.arange(round((excitation.lead_in + excitation.duration) / dt)) * dt
    order = [excitation.joint_names.index(n) for n in names]  # the engine's DOF order
    ref, ref_v = (r[:, order] for r in excitation.sample(t_all)[:2])
    for k, t in enumerate(t_all):
        q, qd = engine.positions(), engine.velocities()
        gravity = dynamics.torques(names, q[None], np.zeros((1, q.size)),
                                   np.zeros((1, q.size)))[0]
        tau = 30.0 * (ref[k] - q) + 1.0 * (ref_v[k] - qd) + gravity
        engine.apply_checked("effort", index, tau)
        engine.step(1)
        if k % every == 0:
            times.append(t)
            q_rows.append(q)
            qd_rows.append(qd)
            tau_rows.append(tau)
    return JointSeries.from_samples("real", times, names, q_rows, qd_rows, tau_rows)


def fit_run(series: JointSeries) -> dict[str, f.JointFit]:
    world, skel = _world()
    samples = f.prepare("synthetic", series, None, series.joint_names)
    fitted, _ = f.split(samples)
    dynamics = RigidDynamics(world, skel.name)
    model = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
             for d in skel.dofs}
    fits = f.fit_joints([fitted], f.residual_torques([fitted], dynamics), model)
    return {jf.joint: jf for jf in fits}


@pytest.mark.parametrize("case", sorted(TRUTHS))
def test_known_parameters_come_back_from_an_engine_run(case: str) -> None:
    seed, truth = TRUTHS[case]
    fits = fit_run(engine_run(truth, seed))
    for joint, values in truth.items():
        jf = fits[joint]
        assert jf.fixed == {}, jf.fixed
        for name, expected in zip(PARAMETERS, values, strict=True):
            got = jf.values[name]
            assert abs(got - expected) <= 0.1 * expected, (joint, name, got, expected)
            assert 0.0 < jf.intervals[name] < 0.1 * expected


def _samples(qd: np.ndarray, qdd: np.ndarray, tau: np.ndarray) -> f.Samples:
    n = qd.size
    t = np.arange(n) * 0.02
    column = lambda v: np.asarray(v, dtype=float).reshape(n, 1)  # noqa: E731
    return f.Samples("constructed", ("j",), t, column(np.zeros(n)), column(qd), column(qdd),
                     column(tau), column(np.full(n, np.nan)), np.ones(n, dtype=bool), 5)


def test_what_the_data_cannot_tell_apart_is_named_and_keeps_the_models_value() -> None:
    # Constant speed one way: no acceleration (armature unseen) and qd, sign(qd) collinear.
    n = 400
    qd = np.full(n, 0.5)
    tau = 0.1 * qd + 0.02 + np.random.default_rng(0).normal(0.0, 1e-3, n)
    part = _samples(qd, np.zeros(n), tau)
    model = {"j": {"armature": 0.0, "damping": 0.05, "friction": 0.01}}
    (jf,) = f.fit_joints([part], [tau.reshape(n, 1)], model)
    assert set(jf.fixed) == {"armature", "damping", "friction"}
    assert all("not identifiable" in why for why in jf.fixed.values())
    assert jf.values == model["j"]
    assert jf.intervals == {}


def test_readings_that_are_mostly_noise_give_no_values() -> None:
    n = 2000
    rng = np.random.default_rng(1)
    t = np.arange(n) * 0.02
    qd, qdd = np.sin(t), np.cos(t)
    tau = 0.01 * qdd + 0.05 * qd + 0.01 * np.sign(qd) + rng.normal(0.0, 0.5, n)
    model = {"j": {"armature": 0.0, "damping": 0.05, "friction": 0.01}}
    (jf,) = f.fit_joints([_samples(qd, qdd, tau)], [tau.reshape(n, 1)], model)
    assert set(jf.fixed) == set(PARAMETERS)
    assert "mostly noise" in jf.fixed["damping"]
    assert jf.values == model["j"]


def _swing(rate: float, seed: int) -> f.JointFit:
    """A joint swung at ``rate`` rad/s (0.8 rad/s peak), its torque with 5 mN m noise."""
    n = 3000
    t = np.arange(n) * 0.02
    qd, qdd = 0.8 * np.sin(rate * t), 0.8 * rate * np.cos(rate * t)
    tau = (0.004 * qdd + 0.1 * qd + 0.02 * np.sign(qd)
           + np.random.default_rng(seed).normal(0.0, 0.005, n))
    part = _samples(qd, qdd, tau)
    model = {"j": {"armature": 0.0, "damping": 0.05, "friction": 0.01}}
    (jf,) = f.fit_joints([part], [part.lowpass(tau.reshape(n, 1))], model)
    return jf


@pytest.mark.parametrize("seed", range(3))
def test_a_value_the_recording_tells_only_loosely_is_said_to_be(seed: int) -> None:
    # Swung slowly (0.24 rad/s^2 at most) the armature's torque is a fraction of the
    # noise: its value is given with an interval as wide as itself, and called loose.
    slow = _swing(0.3, seed)
    assert set(slow.loose) == slow.loose_from_noise == {"armature"}, slow.intervals
    assert slow.loose["armature"] > f.LOOSE
    assert slow.fixed == {}  # given all the same (the model files carry it)
    entry = identified_document([slow], {}, sources=["r.mcap"], model_file=Path("m.skel"),
                                note="", held_out={})["joints"]["j"]
    assert entry["loose"] == {"armature": pytest.approx(slow.loose["armature"], rel=1e-5)}
    # Swung fast (4.8 rad/s^2), the same joint is told to a few percent: nothing loose.
    fast = _swing(6.0, seed)
    assert fast.loose == {}, fast.intervals
    assert all(abs(fast.values[p] - v) <= 0.1 * v
               for p, v in zip(PARAMETERS, (0.004, 0.1, 0.02), strict=True))


def test_a_value_loose_from_a_servos_hold_is_told_from_one_loose_from_the_noise(
        capsys: pytest.CaptureFixture[str]) -> None:
    fast = _swing(6.0, 0)
    # A bus servo's hold of 5 ms at kp 20: +-0.05 on the damping's interval, a bias bound.
    bounded = widen_for_hold(fast, f.HoldCorrection(20.0, 0.0, 1.0, 0.005, 0.0))
    assert "damping" in bounded.loose
    assert "damping" not in bounded.loose_from_noise
    assert bounded.bounds["damping"] == pytest.approx(20.0 * 0.005 / 2)
    slow = replace(_swing(0.3, 0), joint="k")
    print_loose([bounded, slow])
    noise, hold = capsys.readouterr().out.splitlines()
    assert "from the noise: armature of k." in noise
    assert "bound them higher in the hardware YAML" in noise
    assert "from the phase of the servo's hold" in hold
    assert "damping of j;" in hold
    assert "control_rate" in hold


@pytest.mark.parametrize("seed", range(3))
def test_a_value_told_from_neither_zero_nor_the_models_keeps_the_models(seed: int) -> None:
    # No friction at all, and torque noise that leaves the friction +-0.01 N m open.
    n = 3000
    t = np.arange(n) * 0.02
    qd, qdd = 0.8 * np.sin(6.0 * t), 4.8 * np.cos(6.0 * t)
    tau = 0.004 * qdd + 0.1 * qd + np.random.default_rng(seed).normal(0.0, 0.05, n)
    part = _samples(qd, qdd, tau)

    def fitted(friction: float) -> f.JointFit:
        model = {"j": {"armature": 0.0, "damping": 0.05, "friction": friction}}
        (jf,) = f.fit_joints([part], [part.lowpass(tau.reshape(n, 1))], model)
        return jf

    near, far = fitted(0.005), fitted(0.5)
    # The model's 0.005 N m is inside the interval, which reaches 0: kept, said why.
    assert near.values["friction"] == 0.005
    assert "friction" not in near.intervals
    assert "not told apart from 0 nor from the model's 0.005" in near.fixed["friction"]
    # The model's 0.5 N m is far outside it: the fitted value says the model is wrong.
    assert far.values["friction"] < 0.02
    assert far.intervals["friction"] > far.values["friction"]
    assert "friction" not in far.fixed
    # The others as fitted beside a free friction either way: the same values, intervals
    # that hold the truth (not narrowed as if the friction were known).
    assert near.values["damping"] == far.values["damping"]
    assert near.intervals["damping"] == far.intervals["damping"]
    assert abs(near.values["damping"] - 0.1) <= near.intervals["damping"]


def test_a_dof_no_actuator_measures_is_said_to_be_taken_at_rest(
        capsys: pytest.CaptureFixture[str]) -> None:
    # A floating base (the Go1 of example-robot-data on its hardware YAML), or a joint left
    # out: the inverse dynamics holds it where the model starts it, and the command says so.
    from skel_ros.cli.identify_cmd import _print_unmeasured

    _, skel = _world()
    _print_unmeasured(skel, ("shoulder_yaw", "shoulder_pitch", "elbow"), ())
    out = capsys.readouterr().out
    assert out.startswith("note: wrist: not measured (no actuator of the hardware YAML)")
    assert "--fixed-base" in out
    _print_unmeasured(skel, ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist"), ())
    assert capsys.readouterr().out == ""


def test_a_loose_value_whose_interval_reaches_zero_is_said_so_not_as_a_share(
        capsys: pytest.CaptureFixture[str]) -> None:
    from skel_ros.cli.identify_cmd import _print_summary

    fit = replace(_swing(6.0, 0), values={"armature": 0.004, "damping": 1.45e-15,
                                          "friction": 0.02})
    fit = replace(fit, intervals={**fit.intervals, "damping": 41.0})
    _print_summary([fit], {}, {}, {"j": (1.0, 0.5)})
    out = capsys.readouterr().out
    assert "damping 1.45e-15 +- 41 (loose: its interval reaches 0)" in out
    assert "%" not in out.split("damping")[1].split(",")[0]  # no share of a zero value


def test_a_slide_joints_values_are_written_in_its_own_units(
        capsys: pytest.CaptureFixture[str]) -> None:
    from skel_ros.cli.identify_cmd import _print_summary

    world = load_model(REPO / "examples" / "gripper_arm.urdf")
    dynamics = RigidDynamics(world, next(s for s in world.skeletons if s.num_dofs).name)
    assert dynamics.slides == {"finger_left", "finger_right"}
    fit = _swing(6.0, 0)
    units = {name: identified_document(
        [fit], {}, sources=["r.mcap"], model_file=Path("m.urdf"), note="", held_out={},
        slides=slides)["joints"]["j"] for name, slides in (("hinge", ()), ("slide", {"j"}))}
    assert [units["slide"][p]["unit"] for p in PARAMETERS] == ["kg", "N s/m", "N"]
    assert [units["hinge"][p]["unit"] for p in PARAMETERS] == ["kg m^2", "N m s/rad", "N m"]
    _print_summary([fit], {}, {}, {"j": (1.0, 0.5)}, {"j"})
    assert "held-out force RMS 1 -> 0.5 N" in capsys.readouterr().out


def test_the_command_names_the_loose_values_and_what_tells_them_closer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The bundled 20 s recording of the emulated arm: too short to tell its values to
    # +-10 %, and its XM430s' 5 ms hold leaves the dampings +-0.05 open besides.
    assert main(["identify", str(DATA / "arm_excite20_truth.mcap"), "--skel", str(ARM),
                 "--hardware-config", str(HARDWARE), "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    doc = yaml.safe_load((tmp_path / "identified.yaml").read_text())["joints"]
    share = doc["shoulder_yaw"]["loose"]["damping"]
    interval = doc["shoulder_yaw"]["damping"]["interval"]
    assert share == pytest.approx(interval / doc["shoulder_yaw"]["damping"]["value"], rel=1e-4)
    assert f"(loose: +-{100 * share:.0f} %)" in out
    notes = "\n".join(ln for ln in out.splitlines() if ln.startswith("note: loose"))
    assert "damping of shoulder_yaw" in notes
    assert "armature of shoulder_yaw, shoulder_pitch, elbow" in notes
    assert "wrist" not in notes  # not identified (its readings are noise): not loose
    assert "(loose)" in (tmp_path / "report.html").read_text()


@pytest.fixture(scope="module")
def bench_output(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    out = tmp_path_factory.mktemp("identify")
    status = main(["identify", str(DATA / "arm_excite20_truth.mcap"), "--skel", str(ARM),
                   "--hardware-config", str(HARDWARE), "-o", str(out)])
    return status, out


def test_a_bench_run_gives_the_truth_within_the_intervals(bench_output: tuple[int, Path]
                                                           ) -> None:
    status, out = bench_output
    assert status == 0
    doc = yaml.safe_load((out / "identified.yaml").read_text())
    truth = yaml.safe_load((DATA / "arm_truth.yaml").read_text())["joints"]
    # The armature the joint really has: the truth's plus the XM430's rotor, which the
    # bench adds (physical/servo_law.py) and the model does not have.
    rotor = MECHANICAL_TIME_CONSTANT * XM430.stall_torque / XM430.no_load_speed
    for joint in ("shoulder_yaw", "shoulder_pitch", "elbow"):
        entry = doc["joints"][joint]
        expected = {**truth[joint], "armature": truth[joint]["armature"] + rotor}
        for name in PARAMETERS:
            if name in entry["not_identified"]:  # 20 s: a friction may not be told
                assert "not told apart from 0 nor from the model's" in (
                    entry["not_identified"][name])
                assert entry[name]["value"] == entry[name]["model"]
                continue
            value, interval = entry[name]["value"], entry[name]["interval"]
            assert abs(value - expected[name]) <= interval, (joint, name, value, interval)
        assert set(entry["not_identified"]) <= {"friction"}, entry["not_identified"]
    # The wrist's XL430 reports a load that its derivative gain's chatter dominates:
    # nothing is claimed for it.
    wrist = doc["joints"]["wrist"]
    assert set(wrist["not_identified"]) == set(PARAMETERS)
    assert "interval" not in wrist["damping"]


def test_a_bus_servos_intervals_hold_the_phase_of_its_reads(bench_output: tuple[int, Path]
                                                            ) -> None:
    """An XM430 in position mode is read at a phase of its 5 ms hold the recording does not
    show: its damping and armature intervals include ``kp T / 2`` and ``kd T / 2`` with its
    fitted gains, and identified.yaml says so (hold_phase.widen_for_hold)."""
    _, out = bench_output
    doc = yaml.safe_load((out / "identified.yaml").read_text())
    for joint in ("shoulder_yaw", "shoulder_pitch", "elbow"):
        entry = doc["joints"][joint]
        kp, kd = entry["servo"]["kp"], entry["servo"]["kd"]
        assert entry["damping"]["interval"] >= kp * 0.005 / 2, joint
        assert entry["armature"]["interval"] >= kd * 0.005 / 2, joint
        assert any("5 ms hold" in note for note in entry["notes"]), entry.get("notes")


def test_readings_a_position_servos_law_does_not_explain_give_no_values() -> None:
    """The servo fit's R^2 below SERVO_R2: a position servo's torque is its law's, so
    readings the law does not explain are not the torque that moved the joint."""
    from skel_ros.cli.identify_cmd import bound_bus_servos
    from skel_ros.hardware.config import load_hardware_config
    from skel_ros.identify.fit import SERVO_R2, JointFit, ServoFit

    fit = JointFit("wrist", {"armature": 0.01, "damping": 0.05, "friction": 0.04},
                   {"armature": 0.001, "damping": 0.01, "friction": 0.005}, {},
                   {"armature": 0.0, "damping": 0.02, "friction": 0.005}, 3.0, (1.0,), 500,
                   0.01)
    config = load_hardware_config(HARDWARE)
    low = ServoFit("wrist", 0.01, (0.005, 0.015), 5.0, 0.2, SERVO_R2 - 0.05, "r2")
    (got,) = bound_bus_servos([fit], {"wrist": low}, config)
    assert got.values == fit.model
    assert got.intervals == {}
    assert all("do not follow the servo's own law" in why for why in got.fixed.values())
    (kept,) = bound_bus_servos([fit], {"wrist": low}, None)  # no hardware YAML: as fitted
    assert kept == fit


def test_a_ramping_servos_friction_is_widened_more_and_more_with_fewer_reads() -> None:
    """A Dynamixel with profile_time ramps to each goal: away from the ramp's kinks its
    friction came out biased by up to 0.67 of the hold's slide (0.91 from a recording with
    one read in four), against 0.25 for a servo that steps (bench/identify_hold.py)."""
    from skel_ros.cli.identify_cmd import bound_bus_servos
    from skel_ros.hardware.config import parse_hardware_config
    from skel_ros.identify.fit import SERVO_R2, JointFit, ServoFit
    from skel_ros.identify.hold_phase import (
        FRICTION_SHARE,
        FRICTION_SHARE_RAMP,
        FRICTION_SHARE_RAMP_SPARSE,
    )

    fit = JointFit("elbow", {"armature": 0.01, "damping": 0.07, "friction": 0.05},
                   {"armature": 0.001, "damping": 0.01, "friction": 0.002}, {},
                   {"armature": 0.0, "damping": 0.02, "friction": 0.005}, 3.0, (1.0,), 500,
                   0.01, speed=0.5)
    servo = ServoFit("elbow", 0.01, (0.005, 0.015), 18.0, 0.8, SERVO_R2 + 0.02, "")
    slide = 18.0 * 0.005 / 2 * 0.5  # kp T / 2 * mean |qd|
    text = HARDWARE.read_text(encoding="utf-8")
    ramped = text.replace("  elbow:\n    bus: arm_bus\n",
                          "  elbow:\n    bus: arm_bus\n    options: {profile_time: 0.005}\n")
    assert ramped != text
    for yaml_text, period, share in ((text, 0.005, FRICTION_SHARE),
                                     (text, 0.02, FRICTION_SHARE),
                                     (ramped, 0.005, FRICTION_SHARE_RAMP),
                                     (ramped, 0.02, FRICTION_SHARE_RAMP_SPARSE)):
        config = parse_hardware_config(yaml_text, "arm.yaml")
        (got,) = bound_bus_servos([fit], {"elbow": servo}, config, sample_period=period)
        assert got.intervals["friction"] == pytest.approx(0.002 + share * slide), (
            share, period)


def test_the_goals_a_servo_gets_are_whole_pulses_through_its_transmission() -> None:
    """on_pulses: each mapped joint's command at the nearest whole pulse of its actuator
    (zero offset, direction and gear ratio as the driver maps them); others untouched."""
    from skel_ros.identify.fit import Pulses, on_pulses

    rng = np.random.default_rng(3)
    q = rng.uniform(-1.0, 1.0, size=(50, 2))
    q[5, 0] = np.nan
    command = JointSeries.from_samples("command", np.arange(50) * 0.005, ["a", "b"], q)
    size = 2 * math.pi / 4096
    pulse = Pulses(size, zero_offset=0.1, scale=-2.0)
    got = on_pulses(command, {"a": pulse})
    actuator = 0.1 - 2.0 * got.positions[:, 0]
    ok = np.isfinite(q[:, 0])
    assert np.allclose(actuator[ok] / size, np.round((0.1 - 2.0 * q[ok, 0]) / size))
    assert np.all(np.abs(got.positions[ok, 0] - q[ok, 0]) <= size / 4 + 1e-12)  # half a pulse / 2
    assert np.isnan(got.positions[5, 0])
    assert np.array_equal(got.positions[:, 1], q[:, 1])
    assert on_pulses(command, {}) is command


def _servo_run(delay: float, *, held: bool) -> tuple[JointSeries, JointSeries]:
    """A position servo's joint driven by a 100 Hz stream of targets, read at 200 Hz.

    The stream and the reads keep clocks of their own (as a player and a control loop
    do: 10.03 ms against 5 ms), so the reads meet the targets at every phase. The servo
    holds each target until the next and answers it ``delay`` after it was sent:
    ``tau = kp (q_cmd(t - delay) - q) - kd qd`` on an inertia with damping,
    integrated every 0.1 ms. Returns (measured, command), the command marked ``held``.
    """
    dt, kp, kd, inertia, damping = 1e-4, 18.0, 0.8, 0.02, 0.07
    sent_t = np.arange(0.0, 12.0, 0.01003)
    rng = np.random.default_rng(5)
    phases = rng.uniform(0.0, 2 * math.pi, 3)
    targets = sum(0.3 * np.sin(2 * math.pi * f0 * sent_t + ph)
                  for f0, ph in zip((0.4, 0.9, 1.7), phases, strict=True))
    q = qd = 0.0
    rows = []
    for i in range(round(12.0 / dt)):
        t = i * dt
        at = np.searchsorted(sent_t, t - delay + 1e-12, side="right") - 1
        goal = targets[at] if at >= 0 else 0.0
        tau = kp * (goal - q) - kd * qd
        if i % 50 == 0:  # 200 Hz reads
            rows.append((t, q, qd, tau))
        qd += dt * (tau - damping * qd) / inertia
        q += dt * qd
    t, q_, qd_, tau_ = (np.array(c) for c in zip(*rows, strict=True))
    measured = JointSeries.from_samples("real", t, ["j"], q_[:, None], qd_[:, None], tau_[:, None])
    command = JointSeries.from_samples("command", sent_t, ["j"], targets[:, None], held=held)
    return measured, command


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.015])
def test_a_stream_of_targets_is_fitted_as_held_and_gives_the_servos_own_delay(
        delay: float) -> None:
    """A servo holds each streamed target until the next: fitted as held (the recording
    marks a JointState stream so), the delay found is the servo's own, within a
    millisecond, not that plus half the stream's period (what straight lines between the
    targets gave: 5 ms more at 100 Hz)."""
    measured, command = _servo_run(delay, held=True)
    part, _ = f.split(f.prepare("constructed", measured, command, ["j"]))
    servo = f.fit_servo([part], "j")
    assert servo is not None
    assert not servo.problem, servo
    assert abs(servo.delay - delay) <= 0.001, servo
    assert servo.kp == pytest.approx(18.0, rel=0.05), servo
    # The same targets read as samples of a continuous signal: half a period later.
    linear, _ = f.split(f.prepare("constructed", measured, replace(command, held=False), ["j"]))
    assert f.fit_servo([linear], "j").delay >= delay + 0.004


def test_a_delay_a_stream_period_away_that_fits_as_well_gives_no_delay() -> None:
    """Targets that alternate every 10 ms period (a step pattern that repeats every 20 ms)
    and a joint that barely moves: delays 20 ms apart fit the torque alike, so the servo
    fit names both and gives no delay (on the physics bench's SO-101, three lightly loaded
    joints came out 2-3 ms for the truth's 10, their rival 11-12 ms within 3.5 %)."""
    rng = np.random.default_rng(2)
    sent_t = np.arange(0.0, 20.0, 0.01)
    targets = 0.02 * (-1.0) ** np.arange(sent_t.size) + 1e-4 * rng.normal(size=sent_t.size)
    command = JointSeries.from_samples("command", sent_t, ["j"], targets[:, None], held=True)
    t = np.arange(0.0, 20.0, 0.005) + 0.0025
    q = 0.01 * np.sin(2 * np.pi * 0.3 * t) + 1e-3 * rng.normal(size=t.size)
    qd = 0.01 * 2 * np.pi * 0.3 * np.cos(2 * np.pi * 0.3 * t)
    tau = (18.0 * (command.held_at("j", t - 0.012) - q) - 0.8 * qd
           + 0.01 * rng.normal(size=t.size))
    measured = JointSeries.from_samples("real", t, ["j"], q[:, None], qd[:, None],
                                        tau[:, None])
    part, _ = f.split(f.prepare("constructed", measured, command, ["j"]))
    servo = f.fit_servo([part], "j")
    assert servo is not None
    assert servo.r2 > 0.99, servo  # the law itself fits: only the delay is in doubt
    assert "explain the torque about as well" in servo.problem, servo
    rival = round(servo.delay * 1e3) + 20
    assert f"and {rival} ms" in servo.problem, servo


def test_a_servo_whose_torque_never_changes_is_reported_not_a_crash() -> None:
    """A joint that read one torque all along (torque off, a drive that reports 0): its
    servo fit says so, instead of failing on an empty set of delays (it did)."""
    n = 400
    t = np.arange(n) * 0.005
    q = 0.3 * np.sin(t)
    samples = f.Samples("constructed", ("j",), t, q.reshape(n, 1), (0.3 * np.cos(t)).reshape(n, 1),
                        np.zeros((n, 1)), np.zeros((n, 1)), (q + 0.01).reshape(n, 1),
                        np.ones(n, dtype=bool), 5)
    servo = f.fit_servo([samples], "j")
    assert servo is not None
    assert "does not change" in servo.problem


def test_the_fitted_model_carries_damping_and_friction_and_loads_again(
        bench_output: tuple[int, Path]) -> None:
    _, out = bench_output
    doc = yaml.safe_load((out / "identified.yaml").read_text())
    assert doc["model_file"]["not_carried"] == ["armature"]
    reloaded = load_model(out / "model.skel")
    dofs = {d.name: d for s in reloaded.skeletons for d in s.dofs}
    for joint, entry in doc["joints"].items():
        assert dofs[joint].damping == pytest.approx(entry["damping"]["value"], rel=1e-5)
        assert dofs[joint].coulomb_friction == pytest.approx(entry["friction"]["value"],
                                                             rel=1e-5)
    report = (out / "report.html").read_text()
    assert report.count("<img") == 4
    assert "held-out" in report


def test_the_simulation_takes_every_identified_value_from_the_file(
        bench_output: tuple[int, Path]) -> None:
    """identified.yaml read back (``sim-to-real --sim-params``): the armature the model file
    cannot carry reaches the engine, with the damping and friction."""
    from skel_ros.identify.output import load_sim_params
    from skel_ros.sim.joint_dynamics import JointDynamics

    _, out = bench_output
    doc = yaml.safe_load((out / "identified.yaml").read_text())
    params = load_sim_params(out / "identified.yaml")
    assert params.joints == {joint: JointDynamics(*(entry[p]["value"] for p in PARAMETERS))
                             for joint, entry in doc["joints"].items()}
    engine = MujocoEngine(load_model(ARM), joint_dynamics=params.joints)
    for joint, entry in doc["joints"].items():
        k = engine.dof_names.index(joint)
        assert engine.world.dof_armature[k] == pytest.approx(entry["armature"]["value"])
        assert engine.world.dof_damping[k] == pytest.approx(entry["damping"]["value"])
        assert engine.world.dof_frictionloss[k] == pytest.approx(entry["friction"]["value"])


def test_a_recording_without_the_robots_torques_is_refused(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    bad = tmp_path / "bad.mcap"
    bad.write_bytes(b"not an mcap")
    assert main(["identify", str(bad), "-o", str(tmp_path / "out")]) == 1
    assert "bad.mcap" in capsys.readouterr().err


def test_without_the_sysid_extra_the_command_says_what_to_install(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
        ) -> None:
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mujoco" else real_find_spec(name, *a))
    assert main(["identify", str(DATA / "arm_excite20_truth.mcap"), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: skel-ros identify needs mujoco: pip install skel_ros[sysid]"]


def _fitted_arm() -> tuple[object, object, list[f.JointFit], PayloadFit]:
    """The arm, values of our own for its joints, and a payload in its hand."""
    world, skel = _world()
    fits = [f.JointFit(d.name, {"armature": 0.01 + 0.002 * i, "damping": 0.1 + 0.01 * i,
                                "friction": 0.02 + 0.001 * i}, {}, {}, {}, 1.0, (), 0, 0.0)
            for i, d in enumerate(skel.dofs)]
    payload = PayloadFit("hand", 0.2, (0.01, 0.0, 0.04), 0.01, (0.001, None, 0.001),
                         {"com_y": "not identifiable"})
    return world, skel, fits, payload


@pytest.mark.parametrize("suffix", [".skel", ".urdf"])
def test_the_fitted_values_survive_export_and_reimport(tmp_path: Path, suffix: str) -> None:
    from skel_ros.identify.output import write_model

    world, _, fits, payload = _fitted_arm()
    path, note = write_model(world, fits, tmp_path, suffix, payload)
    assert path.suffix == suffix
    assert note == ""
    reloaded = load_model(path, fixed_base=True)
    dofs = {d.name: d for s in reloaded.skeletons for d in s.dofs}
    for jf in fits:
        assert dofs[jf.joint].damping == pytest.approx(jf.values["damping"])
        assert dofs[jf.joint].coulomb_friction == pytest.approx(jf.values["friction"])
    # The payload is in the hand: 0.1 kg of its own at its origin, 0.2 kg at the payload's.
    hand = next(b for s in reloaded.skeletons for b in s.bodies if b.name == "hand")
    assert hand.inertia.mass == pytest.approx(0.3)
    assert np.asarray(hand.inertia.com) == pytest.approx(np.array([0.01, 0.0, 0.04]) * 2 / 3,
                                                         abs=1e-12)


def test_the_mjcf_model_carries_armature_damping_friction_and_the_payload(tmp_path: Path
                                                                           ) -> None:
    """model.xml as MuJoCo loads it: every joint's three values, the hand's added mass."""
    import mujoco

    from skel_ros.identify.output import write_mjcf_model

    world, skel, fits, payload = _fitted_arm()
    path, why = write_mjcf_model(world, fits, tmp_path, skel.name, payload)
    assert (path, why) == (tmp_path / "model.xml", "")
    model = mujoco.MjModel.from_xml_path(str(path))
    for jf in fits:
        dof = model.jnt_dofadr[model.joint(jf.joint).id]
        assert model.dof_armature[dof] == pytest.approx(jf.values["armature"])
        assert model.dof_damping[dof] == pytest.approx(jf.values["damping"])
        assert model.dof_frictionloss[dof] == pytest.approx(jf.values["friction"])
    assert model.body("hand").mass[0] == pytest.approx(0.3)


def test_a_model_mjcf_cannot_hold_costs_the_mjcf_file_only(tmp_path: Path) -> None:
    from skel_ros.identify.output import write_mjcf_model

    world, skel, fits, _ = _fitted_arm()
    stale = tmp_path / "model.xml"
    stale.write_text("an earlier run's")
    one_sided = replace(world, skeletons=tuple(replace(s, dofs=tuple(
        replace(d, position_upper=math.inf) if d.name == "wrist" else d for d in s.dofs))
        for s in world.skeletons))
    path, why = write_mjcf_model(one_sided, fits, tmp_path, skel.name)
    assert path is None
    assert "MJCF cannot hold this model" in why
    assert "one-sided position limit" in why
    assert not stale.exists()


def _impedance_run(delay: float, *, load: float = 0.0, lead_in: float = 0.0,
                   jitter: float = 0.0, limiter: float = 0.0
                   ) -> tuple[JointSeries, JointSeries, JointSeries]:
    """An MIT motor in impedance mode (kp 30, kd 0.8) on a 200 Hz loop, read every cycle,
    sent a 100 Hz stream of targets that its hardware node spreads over the cycles between
    two of them (each target reached one stream period after it came, straight lines,
    their velocity sent too). The motor takes each cycle's frame ``delay`` after it was
    sent and answers each frame before taking it: a reading (stamped when its frame was
    sent) carries the law under the latest frame sent more than ``delay`` before. The
    cycles keep time to ``jitter`` (s, the standard deviation of each one's start). The
    joint lags its target and sags under ``load``; the readings are the law's torque at
    each read. For ``lead_in`` s the node holds the joint elsewhere (at 0.8 rad: a run's
    first move, which its motion limiter takes slowly), whatever the stream says.
    ``limiter``: s the node's targets trail the stream by besides (a motion limiter whose
    acceleration bound the stream reaches). Returns the readings, the stream and the
    goals as written (each cycle's target, stamped when its frame was sent)."""
    kp, kd, period, stream = 30.0, 0.8, 0.005, 0.01
    sent_t = np.arange(0.0, 12.0, stream)
    goals = 0.5 * np.sin(2 * np.pi * 0.4 * sent_t) + 0.2 * np.sin(2 * np.pi * 1.1 * sent_t)
    reads = np.arange(0.2, 11.8, period)
    reads += np.clip(np.random.default_rng(7).normal(0.0, jitter, reads.size), -0.002, 0.002)
    # The target of the cycle at c: the stream's straight line one stream period late.
    target = lambda c: np.interp(c - stream - limiter, sent_t, goals)  # noqa: E731
    speed = lambda c: (target(c + 1e-4) - target(c - 1e-4)) / 2e-4  # noqa: E731
    # The frame in effect at each read: the latest one in the law by then (one sent at
    # the read itself is answered first).
    taken = np.searchsorted(reads + delay, reads - 1e-9) - 1
    cycle = np.where(taken >= 0, reads[np.maximum(taken, 0)], reads[0] - period)
    q_star, v_star = target(cycle), speed(cycle)
    q = np.interp(reads - 0.02, sent_t, goals) - load / kp  # a joint that trails and sags
    held = reads < reads[0] + lead_in
    q_star[held], v_star[held] = 0.8, 0.0
    q[held] = 0.8 - load / kp + 0.01 * np.sin(2 * np.pi * 2.0 * reads[held])
    v = np.gradient(q, reads)
    tau = kp * (q_star - q) + kd * (v_star - v)
    measured = JointSeries.from_samples("real", reads, ["j"], q[:, None], v[:, None],
                                        tau[:, None])
    command = JointSeries.from_samples("command", sent_t, ["j"], goals[:, None], held=True)
    written_q = target(reads)
    written_q[held] = 0.8
    nan = np.full((reads.size, 1), np.nan)
    written = JointSeries.from_samples("written", reads, ["j"], written_q[:, None], nan, nan,
                                       held=True)
    return measured, command, written


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.015])
def test_an_impedance_motors_delay_is_read_from_its_known_law(delay: float) -> None:
    """The law known (the hardware YAML's gains), the readings give the held target; its
    lag behind the stream, less the node's own cycle and spreading, is the motor's delay:
    within a control period of the truth, the truth inside its interval, under a load, and
    with a first second where the node held the joint away from the stream (left out:
    the joint is far from its command; in it, the bench's quadruped knees were not
    identified, 2026-11-30 04:40)."""
    measured, command, _ = _impedance_run(delay, load=0.4, lead_in=1.0)
    read, _ = f.split(f.prepare("constructed", measured, command, ["j"]))
    law = f.fit_law_delay([read], f.MotorLaw("j", 30.0, 0.8, "yaml"), 0.005, 0.01)
    assert not law.problem, law
    assert law.delay == pytest.approx(delay, abs=0.005), law
    assert law.delay_interval[0] <= delay <= law.delay_interval[1], law
    # Not told when the node's spreading is not taken off (a trajectory has none): the
    # delay found is a stream period longer.
    plain = f.fit_law_delay([read], f.MotorLaw("j", 30.0, 0.8, "yaml"), 0.005, 0.0)
    assert plain.delay == pytest.approx(delay + 0.01, abs=0.005), plain


def test_a_motor_on_a_loop_that_keeps_time_to_a_fraction_of_a_millisecond() -> None:
    """A 10 ms motor whose loop's cycles start within 0.6 ms of their time (as the
    hardware node's on the physics bench): each reading, stamped when the motor measured
    it, carries the law under the latest frame that reached the motor by then, sent on
    average half a period before the instant 10 ms back. The delay comes back within
    1.5 ms, inside its interval (planted: a whole period taken off, as for readings
    stamped a cycle late: 8 ms; the bench's quadruped gave 6-8 ms for 10 that way,
    2026-11-30 05:33)."""
    measured, command, _ = _impedance_run(0.01, load=0.4, jitter=0.0006)
    read, _ = f.split(f.prepare("constructed", measured, command, ["j"]))
    law = f.fit_law_delay([read], f.MotorLaw("j", 30.0, 0.8, "yaml"), 0.005, 0.01)
    assert not law.problem, law
    assert law.delay == pytest.approx(0.01, abs=0.0015), law
    assert law.delay_interval[0] <= 0.01 <= law.delay_interval[1], law


@pytest.mark.parametrize("delay", [0.0, 0.01])
def test_with_the_goals_as_written_the_motors_delay_is_told_from_the_nodes(delay: float
                                                                           ) -> None:
    """The node's motion limiter trailing the stream by 20 ms (a stream whose
    accelerations reach the hardware YAML's bound: the bench's quadruped excited at 16
    rad/s^2 under a 20 rad/s^2 limit, 2026-11-30 14:05, trailed by 12-37 ms). Against the
    goals as written, what the motor was sent, the motor's own delay, within a control
    period and inside its interval (planted: against the stream, 20 ms more: the bench's
    7-22 ms for 0, every interval without 0); against the stream, the delay from a
    command's arrival at the node, the limiter's lag included (what a simulation that
    takes the stream as it comes is to run)."""
    measured, command, written = _impedance_run(delay, load=0.4, lead_in=1.0, limiter=0.02)
    read, _ = f.split(f.prepare("constructed", measured, command, ["j"], written=written))
    law = f.fit_law_delay([read], f.MotorLaw("j", 30.0, 0.8, "yaml"), 0.005, 0.01)
    assert not law.problem, law
    assert law.motor_delay == pytest.approx(delay, abs=0.005), law
    assert law.motor_delay_interval[0] <= delay <= law.motor_delay_interval[1], law
    assert law.delay == pytest.approx(delay + 0.02, abs=0.005), law
    # Without the goals as written: the delay from the node's arrival only.
    read, _ = f.split(f.prepare("constructed", measured, command, ["j"]))
    law = f.fit_law_delay([read], f.MotorLaw("j", 30.0, 0.8, "yaml"), 0.005, 0.01)
    assert law.motor_delay is None, law


def test_commands_the_readings_do_not_follow_give_no_delay() -> None:
    """Readings of a moving motor against commands that stay put: no lag explains them."""
    measured, command, _ = _impedance_run(0.0)
    still = JointSeries.from_samples("command", command.times, ["j"],
                                     np.zeros((command.times.size, 1)), held=True)
    read, _ = f.split(f.prepare("constructed", measured, still, ["j"]))
    law = f.fit_law_delay([read], f.MotorLaw("j", 30.0, 0.8, "yaml"), 0.005, 0.01)
    assert law.problem.startswith("delays from 0 to "), law  # no delay below 0 (said -15)
    assert law.delay == 0.0, law


def test_a_motor_the_goals_as_written_show_late_is_bounded_not_corrected() -> None:
    """A motor whose own delay (against the goals as written) is told apart from none,
    its interval starting beyond half a hold, applies each command late, so its readings
    fall anywhere in a hold: ``identify`` bounds it as ``--reply-phase unknown`` does
    (planted: corrected as if read at the hold's end, as before: the bench's quadruped
    with its motors' 10 ms, 2026-11-30 14:13, damping 36-45 % high, none inside its
    interval). One whose interval reaches below half a hold reads as a motor without a
    delay would (half a hold: it answers each frame before taking it)."""
    law = f.MotorLaw("late", 30.0, 0.8, "yaml", motor_delay=0.011,
                     motor_delay_interval=(0.007, 0.014))
    prompt = f.MotorLaw("prompt", 30.0, 0.8, "yaml", motor_delay=0.003,
                        motor_delay_interval=(0.0, 0.006))
    unwritten = f.MotorLaw("unwritten", 30.0, 0.8, "yaml", delay=0.02)
    laws = {m.joint: m for m in (law, prompt, unwritten)}
    holds = dict.fromkeys(laws, 0.0065)
    assert f.delayed_motors(laws, holds) == ["late"]
    assert f.delayed_motors(laws, {**holds, "late": None}) == []
