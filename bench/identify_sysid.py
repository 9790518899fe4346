"""Benchmark: skel-ros identify's fit against MuJoCo's ``mujoco.sysid`` on a known truth.

Both recover the armature, damping and Coulomb friction of the bundled arm's four joints
from one run of the arm in MuJoCo with a truth of our own (the tests' first truth),
driven along a 10 s excitation (``design_excitation``, seed 2) by a PD with gravity and
Coriolis feed-forward at 1 kHz, the torques recorded:

* **identify** (``skel_ros.identify.fit``): the run sampled at 50 Hz (the bench's
  joint_states rate), positions, velocities and torques; the torque balance, linear in
  the parameters, solved per joint.
* **mujoco.sysid**: output error. The recorded torques are replayed open loop from the
  recorded state at the start of each 1 s window, compared with the ``jointpos`` and
  ``jointvel`` sensors, and the 12 parameters fitted by its ``mujoco`` optimizer from the
  model's values (damping and friction from the model, armature 1e-4), within [1e-5, 1]:
  once with torques and sensors at every 1 kHz step, once with both taken at 50 Hz (what
  a robot's joint_states give).

Printed: each value against the truth (error in percent) and the wall time of each fit,
with the load average. With ``RUN.mcap TRUTH.yaml`` (a bench recording made with that truth,
e.g. by bench/identify.py), both fit the real arm's 50 Hz joint_states and torques instead:
sysid replays the measured torques open loop from the measured state of each 1 s window
of the fitted part. Asserts nothing. Usage: ``.venv/bin/python bench/identify_sysid.py
[RUN.mcap TRUTH.yaml]``.
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from skel_ros.analysis.series import JointSeries  # noqa: E402
from skel_ros.identify import design_excitation  # noqa: E402
from skel_ros.identify import fit as f  # noqa: E402
from skel_ros.model import load_model  # noqa: E402
from skel_ros.model.limits import LimitSet  # noqa: E402
from skel_ros.model.mjcf import world_to_mjcf  # noqa: E402
from skel_ros.model.truth import apply_truth, parse_truth  # noqa: E402
from skel_ros.sim.inverse_dynamics import RigidDynamics  # noqa: E402

ARM = REPO / "examples" / "arm.skel"
TRUTH = {"shoulder_yaw": (0.004, 0.08, 0.03), "shoulder_pitch": (0.006, 0.12, 0.05),
         "elbow": (0.003, 0.06, 0.04), "wrist": (0.001, 0.03, 0.015)}
NAMES = ("armature", "damping", "friction")
WINDOW = 1.0  # s, each sysid sequence


def spec_of(world: object, armature: dict[str, float]) -> object:
    """The world's MJCF as an MjSpec, with a motor and position/velocity sensors per joint."""
    import mujoco

    spec = mujoco.MjSpec.from_string(world_to_mjcf(world).xml)
    for name in TRUTH:
        joint = spec.joint(name)
        joint.armature = armature.get(name, 0.0)
        joint.range = [-math.inf, math.inf]
        joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
        motor = spec.add_actuator()
        motor.name = f"{name}_motor"
        motor.target = name
        motor.trntype = mujoco.mjtTrn.mjTRN_JOINT
        motor.ctrllimited = mujoco.mjtLimited.mjLIMITED_FALSE
        for kind, suffix in ((mujoco.mjtSensor.mjSENS_JOINTPOS, "pos"),
                             (mujoco.mjtSensor.mjSENS_JOINTVEL, "vel")):
            sensor = spec.add_sensor()
            sensor.name = f"{name}_{suffix}"
            sensor.type = kind
            sensor.objtype = mujoco.mjtObj.mjOBJ_JOINT
            sensor.objname = name
    return spec


def _set(joint: object, attribute: str, value: float) -> None:
    """Set a joint's scalar; MuJoCo 4 keeps damping as a polynomial (its first term)."""
    now = getattr(joint, attribute)
    if np.ndim(now):
        now = np.array(now, dtype=float)
        now[0] = value
        setattr(joint, attribute, now)
    else:
        setattr(joint, attribute, value)


def sysid_parameters(skel: object) -> object:
    """The 12 parameters for mujoco.sysid, from the model's values (armature 1e-4)."""
    from mujoco import sysid

    params = sysid.ParameterDict()
    for n in TRUTH:
        dof = skel.dof(n)
        for key, attribute, value in (("armature", "armature", 1e-4),
                                      ("damping", "damping", dof.damping),
                                      ("friction", "frictionloss", dof.coulomb_friction)):
            params.add(sysid.Parameter(
                f"{n}_{key}", nominal=value, min_value=1e-5, max_value=1.0,
                modifier=lambda s, p, n=n, a=attribute: _set(s.joint(n), a, p.value[0])))
    return params


def bench_recording(recording: Path, truth_file: Path) -> None:
    """Both fits on a bench recording: the real arm's 50 Hz joint_states and torques."""
    import yaml
    from mujoco import sysid

    from skel_ros.analysis.recording import read_recording
    from skel_ros.hardware.dynamixel.control_table import MODELS
    from skel_ros.physical.servo_law import MECHANICAL_TIME_CONSTANT

    world = load_model(ARM)
    skel = next(s for s in world.skeletons if s.num_dofs)
    names = list(TRUTH)
    streams = read_recording(recording)
    samples = f.prepare(str(recording), streams["real"], streams.get("command"), names)
    fitted, _ = f.split(samples)
    start = time.perf_counter()
    prior = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
             for d in skel.dofs}
    ours = {jf.joint: (jf.values, jf.fixed) for jf in f.fit_joints(
        [fitted], f.residual_torques([fitted], RigidDynamics(world, skel.name)), prior)}
    ours_time = time.perf_counter() - start
    nominal = spec_of(world, {})
    model = nominal.compile()
    per = round(WINDOW / samples.period)
    times = np.arange(per + 1) * samples.period
    states, controls, measured, labels = [], [], [], []
    qadr = [model.jnt_qposadr[model.joint(n).id] for n in names]
    for s0 in range(0, samples.t.size - per - 1, per):
        sensor = np.column_stack([c for k in range(len(names))
                                  for c in (samples.q[s0 + 1:s0 + per + 1, k],
                                            samples.qd[s0 + 1:s0 + per + 1, k])])
        # sysid scales each sensor's residual by its norm: a still joint's zero column
        # would divide by zero.
        if not fitted.valid[s0:s0 + per + 1].all() or not np.all(np.abs(sensor).sum(0) > 0):
            continue
        qpos = np.zeros(model.nq)
        qvel = np.zeros(model.nv)
        qpos[qadr] = samples.q[s0]
        qvel[qadr] = samples.qd[s0]
        states.append(sysid.create_initial_state(model, qpos, qvel, np.zeros(model.na)))
        controls.append(sysid.TimeSeries(times, samples.tau[s0:s0 + per + 1]))
        measured.append(sysid.TimeSeries.from_names(times[1:], sensor, model))
        labels.append(f"w{s0}")
    sequences = sysid.ModelSequences("arm", nominal, labels, states, controls, measured)
    start = time.perf_counter()
    found, _ = sysid.optimize(initial_params=sysid_parameters(skel),
                              residual_fn=sysid.build_residual_fn(models_sequences=[sequences]),
                              optimizer="mujoco", verbose=False)
    theirs_time = time.perf_counter() - start
    truth = yaml.safe_load(truth_file.read_text())["joints"]
    rotor = MECHANICAL_TIME_CONSTANT * MODELS["XM430-W350"].stall_torque / MODELS[
        "XM430-W350"].no_load_speed
    print(f"{recording}: {len(labels)} windows of {WINDOW:g} s for mujoco.sysid")
    print(f"{'joint':15} {'parameter':9} {'real':>8} {'identify':>9} {'err':>7} "
          f"{'sysid':>9} {'err':>7}")
    for n in names[:3]:  # the XM430 joints (the wrist's readings are chatter)
        real = {**truth[n], "armature": truth[n]["armature"] + rotor}
        for k in NAMES:
            a = ours[n][0][k]
            b = float(found[f"{n}_{k}"].value[0])
            print(f"{n:15} {k:9} {real[k]:8.4g} {a:9.4g} {100 * (a / real[k] - 1):+6.1f}% "
                  f"{b:9.4g} {100 * (b / real[k] - 1):+6.1f}%")
    print(f"identify: {ours_time:.2f} s; mujoco.sysid: {theirs_time:.1f} s")


def main() -> int:  # noqa: PLR0915 - one straight script
    import mujoco
    from mujoco import sysid

    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    world = load_model(ARM)
    skel = next(s for s in world.skeletons if s.num_dofs)
    text = "joints:\n" + "".join(f"  {j}: {{damping: {d}, friction: {c}}}\n"
                                 for j, (_, d, c) in TRUTH.items())
    real = apply_truth(world, parse_truth(text))
    real = replace(real, skeletons=tuple(replace(s, dofs=tuple(
        replace(d, force_lower=-math.inf, force_upper=math.inf) for d in s.dofs))
        for s in real.skeletons))
    true_spec = spec_of(real, {j: v[0] for j, v in TRUTH.items()})
    model = true_spec.compile()
    data = mujoco.MjData(model)
    names = list(TRUTH)
    qadr = [model.jnt_qposadr[model.joint(n).id] for n in names]
    dadr = [model.jnt_dofadr[model.joint(n).id] for n in names]
    for n, a in zip(names, qadr, strict=True):
        data.qpos[a] = skel.dof(n).initial_position
    mujoco.mj_forward(model, data)
    excitation = design_excitation(LimitSet.from_skeleton(skel), duration=10.0, harmonics=4,
                                   base_frequency=0.3, seed=2)
    dt = model.opt.timestep
    steps = round((excitation.lead_in + excitation.duration) / dt)
    t = np.arange(steps) * dt
    ref, ref_v, _ = excitation.sample(t)
    ctrl = np.zeros((steps, len(names)))
    qpos = np.zeros((steps + 1, model.nq))
    qvel = np.zeros((steps + 1, model.nv))
    sensors = np.zeros((steps + 1, model.nsensordata))
    qpos[0], qvel[0], sensors[0] = data.qpos, data.qvel, data.sensordata
    for k in range(steps):
        q, v = data.qpos[qadr], data.qvel[dadr]
        ctrl[k] = 30.0 * (ref[k] - q) + 1.0 * (ref_v[k] - v) + data.qfrc_bias[dadr]
        data.ctrl[:] = ctrl[k]
        mujoco.mj_step(model, data)
        qpos[k + 1], qvel[k + 1], sensors[k + 1] = data.qpos, data.qvel, data.sensordata

    # identify: 50 Hz samples of position, velocity and torque.
    every = round(0.02 / dt)
    series = JointSeries.from_samples("real", t[::every], names, qpos[:-1:every][:, qadr],
                                      qvel[:-1:every][:, dadr], ctrl[::every])
    start = time.perf_counter()
    samples = f.prepare("synthetic", series, None, names)
    fitted, _ = f.split(samples)
    prior = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
             for d in skel.dofs}
    ours = {jf.joint: jf.values for jf in f.fit_joints(
        [fitted], f.residual_torques([fitted], RigidDynamics(world, skel.name)), prior)}
    ours_time = time.perf_counter() - start

    # mujoco.sysid: open-loop replay of the torques in 1 s windows, output error.
    nominal = spec_of(world, {})
    params = sysid_parameters(skel)
    window = round(WINDOW / dt)
    starts = range(round(excitation.lead_in / dt), steps - window, window)

    def run_sysid(stride: int) -> tuple[dict[str, dict[str, float]], float]:
        """sysid on the torques and sensors taken every ``stride`` steps (1: all)."""
        states, controls, measured, labels = [], [], [], []
        for s0 in starts:
            states.append(sysid.create_initial_state(model, qpos[s0], qvel[s0], data.act))
            # Each window's clock starts at 0; the sensors are read after each step.
            times = np.arange(0, window + 1, stride) * dt
            controls.append(sysid.TimeSeries(times, ctrl[s0:s0 + window + 1:stride]))
            measured.append(sysid.TimeSeries.from_names(
                times[1:], sensors[s0 + stride:s0 + window + 1:stride], model))
            labels.append(f"w{s0}")
        sequences = sysid.ModelSequences("arm", nominal, labels, states, controls, measured)
        residual = sysid.build_residual_fn(models_sequences=[sequences])
        start = time.perf_counter()
        found, _ = sysid.optimize(initial_params=params, residual_fn=residual,
                                  optimizer="mujoco", verbose=False)
        return ({n: {k: float(found[f"{n}_{k}"].value[0]) for k in NAMES} for n in names},
                time.perf_counter() - start)

    theirs, theirs_time = run_sysid(1)
    coarse, coarse_time = run_sysid(every)

    print(f"{'joint':15} {'parameter':9} {'truth':>8} {'identify':>9} {'err':>7} "
          f"{'sysid 1k':>9} {'err':>7} {'sysid 50':>9} {'err':>7}")
    for n in names:
        for i, k in enumerate(NAMES):
            truth = TRUTH[n][i]
            row = f"{n:15} {k:9} {truth:8.4g}"
            for got in (ours[n][k], theirs[n][k], coarse[n][k]):
                row += f" {got:9.4g} {100 * (got / truth - 1):+6.1f}%"
            print(row)
    print(f"identify: {ours_time:.2f} s on 50 Hz samples; mujoco.sysid: {theirs_time:.1f} s on"
          f" {len(starts)} windows of {WINDOW:g} s at 1 kHz, {coarse_time:.1f} s with the"
          " torques and sensors at 50 Hz")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3:  # noqa: PLR2004 - RUN.mcap TRUTH.yaml
        bench_recording(Path(sys.argv[1]), Path(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
