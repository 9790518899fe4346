"""What ``skel-ros identify`` writes: identified.yaml, the fitted model, report.html.

``identified.yaml`` holds every identified value with its 95 % interval, the model's value
it replaces, the parameters that could not be identified (and why), those the recording
tells only loosely (:attr:`~skel_ros.identify.fit.JointFit.loose`; written all the same),
the delay and servo gains, and which values the written model file carries::

    joints:
      elbow:
        armature: {value: 0.0112, interval: 0.0009, model: 0.0, unit: kg m^2}
        damping:  {value: 0.071, interval: 0.004, model: 0.04, unit: N m s/rad}
        friction: {value: 0.041, interval: 0.002, model: 0.01, unit: N m}
        not_identified: {}
        loose: {}              # a value told loosely: its interval's half-width over it,
                               # where beyond 0.1 (fit.LOOSE): {armature: 0.38}
        notes: [...]           # a bus servo's joint: its hold's bound, in the intervals
        servo: {delay: 0.012, delay_interval: [0.009, 0.015], kp: 19.1, kd: 0.33}
        # fitted to the goals as written (sim-to-real --record-goals): write_wait, the
        # share of the delay that a stream's goals waited for the loop's write
        # an MIT motor in impedance mode: its law, the hardware YAML's gains, its delay
        # servo: {kp: 30.0, kd: 0.8, velocity_feedforward: true, gains_from: ...,
        #         delay: 0.009, delay_interval: [0.006, 0.012]}
        torque_correction:     # an MIT motor's joint, with --hardware-config (identify_cmd)
          # period: the loop's, or the mean hold of the goals as written where recorded
          {kind: mit_hold, kp: 30.0, kd: 0.8, gear_ratio: 1.0, period: 0.005, law_step: 0.0,
           adds: {damping: 0.075, armature: 0.002}}
    payload:                   # with --payload hand (identify_cmd)
      body: hand
      mass: {value: 0.251, unit: kg, interval: 0.004}
      com: {value: [0.02, 0.0, 0.06], unit: m, frame: body 'hand', interval: [0.001, null, 0.002]}
      not_identified: {com_y: not identifiable from this recording (...)}
      in_model_file: true
    model_file: {path: model.skel, carries: [damping, friction, payload],
                 not_carried: [armature],
                 mjcf: {path: model.xml, carries: [armature, damping, friction, payload]}}

:func:`load_sim_params` reads it back for the simulation (``sim-to-real --sim-params``,
the simulation node's ``sim_params``): each joint's armature, damping and friction
``value`` (the model's where not identified), as
:class:`~skel_ros.sim.joint_dynamics.JointDynamics`, and each joint's servo
(:class:`IdentifiedServo`: ``kp``, ``kd``, ``delay``, ``velocity_feedforward``) where one
was identified or its law is known (an MIT motor in impedance mode), which the
simulation's position controller of that joint then runs instead of its own law
(:meth:`SimParams.gains`). An identified payload is not read back: it is in the model
files' body (:func:`fitted_world`), which the simulation loads as its model.

No ROS, no engine.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from skel_ros.identify.fit import LOOSE, predicted
from skel_ros.identify.regressor import PARAMETERS, SLIDE_UNITS, UNITS
from skel_ros.model.errors import FileLineError
from skel_ros.model.yamlread import YamlLineError, key_line, load_yaml_lines
from skel_ros.sim.gains import SimGains
from skel_ros.sim.joint_dynamics import JointDynamics, with_joint_dynamics

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping, Sequence

    from skel_ros.identify.fit import HoldCorrection, JointFit, MotorLaw, Samples, ServoFit
    from skel_ros.identify.payload import PayloadFit
    from skel_ros.model.types import Body, World

__all__ = ["CARRIED", "IDENTIFIED", "MJCF_FILE", "IdentifiedServo", "SimParams",
           "SimParamsError", "fitted_world", "identified_document", "load_sim_params",
           "parse_sim_params", "write_mjcf_model", "write_model", "write_report"]

IDENTIFIED = "identified.yaml"
"""The name of the file ``skel-ros identify`` writes its values into."""

CARRIED = ("damping", "friction")
"""The parameters the SKEL and URDF formats carry (a DOF's ``<dynamics>``)."""
MJCF_FILE = "model.xml"
"""The fitted model as MJCF, which carries the armature too (:func:`write_mjcf_model`)."""


def fitted_world(world: World, fits: Sequence[JointFit], payload: PayloadFit | None = None
                 ) -> World:
    """``world`` with each fitted joint's damping and friction set, and the payload added.

    The payload (when identified: :attr:`PayloadFit.added`) is a point mass at its centre
    of mass in its body's frame (:func:`skel_ros.model.truth.with_point_mass`).
    """
    by_name = {f.joint: JointDynamics(**{p: f.values[p] for p in CARRIED}) for f in fits}
    fitted = with_joint_dynamics(world, {(s.name, d.name): by_name[d.name]
                                         for s in world.skeletons for d in s.dofs
                                         if d.name in by_name})
    if payload is None or not payload.added:
        return fitted
    from skel_ros.model.truth import with_point_mass

    def loaded(body: Body) -> Body:
        if body.name != payload.body:
            return body
        return replace(body, inertia=with_point_mass(body.inertia, payload.mass, payload.com))

    return replace(fitted, skeletons=tuple(
        replace(s, bodies=tuple(loaded(b) for b in s.bodies)) for s in fitted.skeletons))


def write_model(world: World, fits: Sequence[JointFit], out_dir: Path, suffix: str,
                payload: PayloadFit | None = None) -> tuple[Path, str]:
    """Write the fitted model in the format of ``suffix`` (``.skel`` or ``.urdf``).

    Other formats are written as SKEL (said in the returned note). ``payload``: added to
    its body (:func:`fitted_world`).

    Returns:
        (the file, a note: "" or why the format differs from the model's).
    """
    from skel_ros.model.skel_writer import write_skel
    from skel_ros.model.urdf import world_to_urdf

    fitted = fitted_world(world, fits, payload)
    if suffix == ".urdf":
        path = out_dir / "model.urdf"
        path.write_text(world_to_urdf(fitted), encoding="utf-8")
        return path, ""
    path = out_dir / "model.skel"
    write_skel(fitted, path)
    note = "" if suffix == ".skel" else (f"the model's format ({suffix}) has no writer here: "
                                         "written as SKEL")
    return path, note


def write_mjcf_model(world: World, fits: Sequence[JointFit], out_dir: Path, skeleton: str,
                     payload: PayloadFit | None = None) -> tuple[Path | None, str]:
    """Write ``model.xml``: the fitted model as MJCF, with each joint's armature too.

    MJCF carries all three joint values (``armature``, ``damping``, ``frictionloss``); the
    fits are ``skeleton``'s joints. A model the MJCF writer refuses costs this file only
    (one an earlier run left in ``out_dir`` is removed).

    Returns:
        (the file, "") or (None, why it was not written).
    """
    from skel_ros.model.interchange_errors import ExportError
    from skel_ros.model.mjcf import write_mjcf

    path = out_dir / MJCF_FILE
    armature = {(skeleton, f.joint): f.values["armature"] for f in fits}
    try:
        write_mjcf(fitted_world(world, fits, payload), path, armature=armature)
    except (ExportError, ValueError) as exc:
        path.unlink(missing_ok=True)  # not one of an earlier run, mistaken for this one's
        return None, f"MJCF cannot hold this model: {exc}"
    return path, ""


def identified_document(fits: Sequence[JointFit], servos: Mapping[str, ServoFit | None], *,
                        sources: Sequence[str], model_file: Path, note: str,
                        held_out: Mapping[str, tuple[float, float]],
                        mjcf: tuple[Path | None, str] | None = None,
                        payload: PayloadFit | None = None,
                        holds: Mapping[str, HoldCorrection] | None = None,
                        laws: Mapping[str, MotorLaw] | None = None,
                        slides: Collection[str] = ()) -> dict[str, Any]:
    """The content of identified.yaml (module docstring).

    ``slides``: the joints that slide, whose values are in kg, N s/m and N
    (:data:`~skel_ros.identify.regressor.SLIDE_UNITS`).

    ``mjcf``: :func:`write_mjcf_model`'s result; ``payload``: the identified payload;
    ``holds``: the joints whose torque readings were corrected for their MIT motor's hold
    (:func:`~skel_ros.identify.fit.hold_corrected`), each said in its ``torque_correction``;
    ``laws``: the joints whose motor's law the hardware YAML gives, each its ``servo``
    (its gains the YAML's, the targets' velocity fed forward, its delay as fitted or why
    not: :class:`MotorLaw`).
    """
    joints: dict[str, Any] = {}
    for f in fits:
        entry: dict[str, Any] = {}
        for p in PARAMETERS:
            item: dict[str, Any] = {"value": _round(f.values[p]), "model": _round(f.model[p]),
                                    "unit": (SLIDE_UNITS if f.joint in slides else UNITS)[p]}
            if p in f.intervals:
                item["interval"] = _round(f.intervals[p])
            entry[p] = item
        entry["not_identified"] = dict(f.fixed)
        entry["loose"] = {p: _round(share) for p, share in f.loose.items()}
        if f.notes:  # what widened the intervals beyond the noise (hold_phase)
            entry["notes"] = list(f.notes)
        entry["condition_number"] = _round(f.condition)
        entry["samples"] = f.samples
        servo, law = servos.get(f.joint), (laws or {}).get(f.joint)
        if law is not None:
            entry["servo"] = {"kp": _round(law.kp), "kd": _round(law.kd),
                              "velocity_feedforward": True, "gains_from": law.source,
                              "delay": _round(law.delay),
                              **({"delay_not_identified": law.problem} if law.problem else
                                 {"delay_interval": [_round(v) for v in law.delay_interval]}),
                              **({} if law.motor_delay is None else
                                 {"motor_delay": _round(law.motor_delay),
                                  "motor_delay_interval": [
                                      _round(v) for v in law.motor_delay_interval]})}
        elif servo is not None:
            entry["servo"] = {"delay": _round(servo.delay),
                              "delay_interval": [_round(v) for v in servo.delay_interval],
                              "kp": _round(servo.kp), "kd": _round(servo.kd),
                              "r2": _round(servo.r2),
                              **({"write_wait": _round(servo.wait)} if servo.wait else {}),
                              **({"not_identified": servo.problem} if servo.problem else {})}
        hold = (holds or {}).get(f.joint)
        if hold is not None:
            damping, armature = hold.offsets()
            entry["torque_correction"] = {
                "kind": "mit_hold", "kp": _round(hold.kp), "kd": _round(hold.kd),
                "gear_ratio": _round(hold.gear_ratio), "period": _round(hold.period),
                "law_step": _round(hold.law_step),
                "adds": {"damping": _round(damping), "armature": _round(armature)}}
        before, after = held_out.get(f.joint, (math.nan, math.nan))
        entry["held_out_torque_rms"] = {"model": _round(before), "identified": _round(after)}
        joints[f.joint] = entry
    document: dict[str, Any] = {"recordings": list(sources), "joints": joints}
    if payload is not None:
        document["payload"] = _payload_entry(payload)
    carries = [*CARRIED, *(["payload"] if payload is not None and payload.added else [])]
    document["model_file"] = {"path": model_file.name, "carries": carries,
                              "not_carried": [p for p in PARAMETERS if p not in CARRIED],
                              **({"note": note} if note else {})}
    if mjcf is not None:
        path, why = mjcf
        document["model_file"]["mjcf"] = (
            {"path": path.name, "carries": [*PARAMETERS, *carries[len(CARRIED):]]}
            if path is not None else {"not_written": why})
    return document


def _payload_entry(payload: PayloadFit) -> dict[str, Any]:
    """identified.yaml's ``payload``: the mass and centre of mass with their intervals."""
    entry: dict[str, Any] = {"body": payload.body,
                             "mass": {"value": _round(payload.mass), "unit": UNITS["mass"]}}
    if payload.mass_interval is not None:
        entry["mass"]["interval"] = _round(payload.mass_interval)
    com: dict[str, Any] = {"value": [_round(c) for c in payload.com], "unit": "m",
                           "frame": f"body {payload.body!r}"}
    if any(i is not None for i in payload.com_intervals):
        com["interval"] = [None if i is None else _round(i) for i in payload.com_intervals]
    entry["com"] = com
    entry["not_identified"] = dict(payload.fixed)
    entry["in_model_file"] = payload.added
    return entry


class SimParamsError(FileLineError):
    """An identified.yaml the simulation cannot use (``identified.yaml:12: message``)."""


@dataclass(frozen=True)
class IdentifiedServo:
    """A joint's servo as ``identify`` found it: ``tau = kp (q_cmd(t - delay) - q) - kd qd``.

    Or, with ``velocity_feedforward``, an MIT motor's impedance law ``kp (q_cmd(t - delay)
    - q) + kd (v_cmd(t - delay) - qd)``, its gains the hardware YAML's
    (:class:`~skel_ros.identify.fit.MotorLaw`).

    Attributes:
        kp: N m/rad.
        kd: N m s/rad (the servo's derivative gain and its motor's back-EMF).
        delay: s from the command to the servo's torque.
        velocity_feedforward: the command's velocity is fed forward (``kd v_cmd``).
    """

    kp: float
    kd: float
    delay: float
    velocity_feedforward: bool = False

    def gains(self) -> dict[str, float | bool]:
        """The simulation's per-DOF gains that run this law (:mod:`skel_ros.sim.gains`).

        No integral, no gravity compensation: neither a servo in position mode nor an MIT
        motor has them (the hardware node sends no gravity torque), which is why both sag
        under a load. A servo in position mode feeds no velocity forward either (a
        Dynamixel's feed-forward gains are 0 unless set): it trails a moving command.
        """
        return {"kp": self.kp, "kd": self.kd, "ki": 0.0, "gravity_compensation": False,
                "velocity_feedforward": self.velocity_feedforward, "delay": self.delay}


@dataclass(frozen=True)
class SimParams:
    """The values of an identified.yaml the simulation runs with (:func:`load_sim_params`).

    Attributes:
        joints: joint name -> its armature, damping and friction.
        lines: joint name -> the line of its entry.
        source: the file.
        servos: joint name -> its identified servo (joints whose servo was identified).
        unused_servos: joint name -> why the servo found for it is not run (the file's
            ``not_identified``, or gains no servo law has).
    """

    joints: Mapping[str, JointDynamics]
    lines: Mapping[str, int]
    source: str
    servos: Mapping[str, IdentifiedServo] = field(default_factory=dict)
    unused_servos: Mapping[str, str] = field(default_factory=dict)

    def gains(self, base: SimGains | None = None) -> SimGains:
        """``base`` (the built-in defaults if None) with each identified servo's law.

        A joint with an identified servo gets :meth:`IdentifiedServo.gains` over whatever
        ``base`` gives it under its name; the other joints keep ``base``'s.
        """
        base = base if base is not None else SimGains()
        if not self.servos:
            return base
        dofs = dict(base.dofs)
        for name, servo in self.servos.items():
            dofs[name] = {**dofs.get(name, {}), **servo.gains()}
        return SimGains(defaults=base.defaults, dofs=MappingProxyType(dofs),
                        source=f"{base.source}, servos of {self.source}")

    def check_joints(self, names: Collection[str]) -> None:
        """Refuse a joint the simulated world does not have (``names``: its DOFs).

        Raises:
            SimParamsError: at the joint's line, with the names it may have meant.
        """
        import difflib

        for joint in self.joints:
            if joint not in names:
                close = difflib.get_close_matches(joint, sorted(names), n=3, cutoff=0.6)
                hint = (f"did you mean {', '.join(map(repr, close))}?" if close
                        else f"its joints: {', '.join(map(repr, names)) or 'none'}")
                raise SimParamsError(f"unknown joint {joint!r}: the model has no such DOF; "
                                     f"{hint} (was the file identified on another model?)",
                                     self.source, self.lines[joint])


def load_sim_params(path: str | Path) -> SimParams:
    """Read an identified.yaml (:func:`parse_sim_params`).

    Raises:
        SimParamsError: it cannot be read, or is not what ``skel-ros identify`` writes.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SimParamsError(f"cannot read it: {getattr(exc, 'strerror', None) or exc}",
                             str(path)) from None
    return parse_sim_params(text, str(path))


def parse_sim_params(text: str, source: str = IDENTIFIED) -> SimParams:
    """The armature, damping, friction and servo of every joint of identified.yaml's text.

    Each parameter's ``value`` (the model's where it was not identified); a parameter
    the file does not give stays the model's (armature: none). A joint's ``servo`` is
    run unless the file says it was not identified (its ``not_identified``) or its gains
    are no servo's (``kp`` <= 0, a negative ``kd`` or delay): those are in
    :attr:`SimParams.unused_servos`, with why.

    Raises:
        SimParamsError: invalid YAML, a file that is not an identify output, a value
            that is not a finite number >= 0; at its line.
    """
    try:
        top = load_yaml_lines(text, scalar_keys=True)
    except YamlLineError as exc:
        raise SimParamsError(exc.message, source, exc.line) from None
    if not isinstance(top, dict) or not isinstance(top.get("joints"), dict) \
            or "model_file" not in top:
        raise SimParamsError(f"not an output of skel-ros identify (its {IDENTIFIED} has "
                             "'joints' and 'model_file' at the top)", source, 1)
    raw_joints = top["joints"]
    joints, lines = {}, {}
    servos: dict[str, IdentifiedServo] = {}
    unused: dict[str, str] = {}
    for name, entry in raw_joints.items():
        line = key_line(raw_joints, name)
        if not isinstance(entry, dict):
            raise SimParamsError(f"joint {name!r}: expected a mapping of parameters, got "
                                 f"{type(entry).__name__}", source, line)
        joints[str(name)] = _dynamics(entry, name, line, source)
        lines[str(name)] = line
        if "servo" in entry:
            servo, why = _servo(entry, name, line, source)
            if servo is not None:
                servos[str(name)] = servo
            else:
                unused[str(name)] = why
    return SimParams(MappingProxyType(joints), MappingProxyType(lines), source,
                     MappingProxyType(servos), MappingProxyType(unused))


def _dynamics(entry: Mapping[str, Any], name: str, line: int, source: str) -> JointDynamics:
    """A joint entry's armature, damping and friction ``value`` (those it gives).

    Raises:
        SimParamsError: one that is not a mapping with a finite ``value`` >= 0.
    """
    values: dict[str, float] = {}
    for p in PARAMETERS:
        if p not in entry:
            continue
        item = entry[p]
        at = key_line(entry, p, line)
        if not isinstance(item, dict) or "value" not in item:
            raise SimParamsError(
                f"joint {name!r}: {p} must be a mapping with a 'value' (as skel-ros "
                f"identify writes it), got {item!r}: is this an {IDENTIFIED}?", source, at)
        value = item["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or value < 0:
            raise SimParamsError(f"joint {name!r}: {p} value must be a finite number "
                                 f">= 0 ({UNITS[p]}), got {value!r}", source,
                                 key_line(item, "value", at))
        values[p] = float(value)
    return JointDynamics(**values)


def _servo(entry: Mapping[str, Any], name: str, line: int, source: str
           ) -> tuple[IdentifiedServo | None, str]:
    """A joint entry's ``servo``, or None and why it is not one to run.

    Raises:
        SimParamsError: not a mapping, a gain or delay missing or not a number.
    """
    item = entry["servo"]
    at = key_line(entry, "servo", line)
    if not isinstance(item, dict):
        raise SimParamsError(f"joint {name!r}: servo must be a mapping with kp, kd and delay"
                             f" (as skel-ros identify writes it), got {item!r}", source, at)
    values = {}
    for key in ("kp", "kd", "delay"):
        value = item.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise SimParamsError(f"joint {name!r}: servo {key} must be a finite number, got "
                                 f"{value!r}", source, key_line(item, key, at))
        values[key] = float(value)
    if item.get("not_identified"):
        return None, f"not identified: {item['not_identified']}"
    feed = item.get("velocity_feedforward", False)
    if not isinstance(feed, bool):
        raise SimParamsError(f"joint {name!r}: servo velocity_feedforward must be true or "
                             f"false, got {feed!r}", source,
                             key_line(item, "velocity_feedforward", at))
    bad = [f"{k} {values[k]:g}" for k in ("kp", "kd", "delay")
           if values[k] < 0.0 or (k == "kp" and values[k] == 0.0)]
    if bad:
        return None, f"{', '.join(bad)}: not a servo's position law (kp > 0, kd and delay >= 0)"
    return IdentifiedServo(**values, velocity_feedforward=feed), ""


def dump(document: dict[str, Any]) -> str:
    """identified.yaml's text."""
    header = ("# skel-ros identify: values with 95 % intervals (half-widths); 'model' is the\n"
              "# model's value; not_identified: parameters kept at the model's value.\n")
    return header + yaml.safe_dump(document, sort_keys=False, default_flow_style=None)


def _round(v: float) -> float | str:
    if not math.isfinite(v):
        return str(v)
    return float(f"{v:.6g}")


def write_report(out_dir: Path, fits: Sequence[JointFit], servos: Mapping[str, ServoFit | None],
                 laws: Mapping[str, MotorLaw] | None = None,
                 *, held: Samples, excess: np.ndarray, title: str,
                 added: np.ndarray | None = None) -> Path:
    """Write report.html: per joint, the held-out torque beyond the links' own.

    As measured, as the model's damping and friction give it, and as the identified
    values give it (with ``added``, the identified payload's torque, when there is one).
    """
    import matplotlib as mpl

    mpl.use("Agg", force=False)
    from matplotlib.figure import Figure

    rows, images = [], []
    for k, f in enumerate(fits):
        ok = held.valid
        t = held.t[ok] - held.t[0]
        measured = excess[ok, k]
        before = predicted(held, k, f.model)[ok]
        after = predicted(held, k, f.values)[ok] + (0.0 if added is None else added[ok, k])
        fig = Figure(figsize=(8, 3.2), dpi=100)
        ax = fig.subplots()
        ax.plot(t, measured, color="black", linewidth=1.0, label="measured")
        ax.plot(t, before, "--", color="tab:red", linewidth=1.0, label="model")
        ax.plot(t, after, color="tab:blue", linewidth=1.0, label="identified")
        ax.set_title(f"{f.joint}: torque beyond the links' own (held out)")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("N m")
        ax.legend(loc="best", fontsize=8)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out_dir / f"identify_{k}.png"
        fig.savefig(path)
        images.append((f.joint, base64.b64encode(path.read_bytes()).decode("ascii")))
        path.unlink()
        servo = servos.get(f.joint)
        loose = f.loose
        cells = [f.joint] + [
            (f"{f.values[p]:.4g} &plusmn; {f.intervals[p]:.2g}" + (" (loose)" if p in loose
                                                                  else "")
             if p in f.intervals
             else f"{f.values[p]:.4g} (model's: {html.escape(f.fixed.get(p, ''))})")
            for p in PARAMETERS]
        law = (laws or {}).get(f.joint)
        if law is not None:  # the motor's law: the hardware YAML's gains
            cells.append(("not identified" if law.problem else f"{law.delay * 1e3:.0f}")
                         + ("" if law.motor_delay is None else
                            f" (the motor's own {law.motor_delay * 1e3:.0f})"))
        else:
            cells.append("&ndash;" if servo is None else f"{servo.delay * 1e3:.0f}"
                         + (" (not identified)" if servo.problem else ""))
        cells.append(f"{_rms(measured - before):.3g} &rarr; {_rms(measured - after):.3g}")
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{h}</th>" for h in ("joint", *(f"{p} ({UNITS[p]}; a slide: "
                                                         f"{SLIDE_UNITS[p]})" for p in PARAMETERS),
                                             "delay (ms)", "held-out RMS, N m (a slide: N)"))
    body = "\n".join(rows)
    plots = "\n".join(f"<h2>{html.escape(j)}</h2><img alt='{html.escape(j)}' "
                      f"src='data:image/png;base64,{d}'>" for j, d in images)
    text = (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            "</title><style>body{font-family:sans-serif;max-width:60em;margin:auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
            "img{max-width:100%}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>Values with 95 % intervals (loose: an interval "
            f"wider than {100 * LOOSE:.0f} % of the value); the held-out part of "
            "each recording was not fitted.</p>"
            f"<table><tr>{head}</tr>{body}</table>{plots}</body></html>\n")
    path = out_dir / "report.html"
    path.write_text(text, encoding="utf-8")
    return path


def _rms(values: np.ndarray) -> float:
    return float(np.sqrt(np.mean(values ** 2))) if values.size else math.nan
