"""``identify --payload BODY``: a mass added to the arm's hand comes back from an engine run,
with its centre of mass; what the recording cannot see of it is said so; the command
refuses a body the model lacks before anything runs, and writes the payload section.

The engine runs are test_fit's (the arm in MuJoCo, a PD along an excitation, 50 Hz), with
a truth file's ``bodies`` adding the payload to the real arm only: the fit is given the
model without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pytest
import yaml

pytest.importorskip("mujoco")

from test_fit import ARM, DATA, TRUTHS, _world, engine_run

from skel_ros.cli.main import main
from skel_ros.identify import fit as f
from skel_ros.identify.payload import PayloadRegressor, fit_with_payload
from skel_ros.identify.regressor import PARAMETERS
from skel_ros.sim.inverse_dynamics import RigidDynamics

if TYPE_CHECKING:
    from pathlib import Path

    from skel_ros.analysis.series import JointSeries
    from skel_ros.identify.payload import PayloadFit

# Per truth of test_fit: the payload's mass (kg) and where it is in the hand's frame (m).
PAYLOADS = {"a": (0.3, (0.03, 0.02, 0.05)), "b": (0.15, (-0.02, 0.015, 0.07))}


def _bodies(mass: float, at: tuple[float, float, float]) -> str:
    return f"bodies:\n  hand: {{mass: {mass}, at: [{at[0]}, {at[1]}, {at[2]}]}}\n"


def _fit(series: JointSeries) -> tuple[dict[str, f.JointFit], PayloadFit]:
    world, skel = _world()
    fitted, _ = f.split(f.prepare("synthetic", series, None, series.joint_names))
    dynamics = RigidDynamics(world, skel.name)
    model = {d.name: {"armature": 0.0, "damping": d.damping, "friction": d.coulomb_friction}
             for d in skel.dofs}
    fits, payload = fit_with_payload([fitted], f.residual_torques([fitted], dynamics), model,
                                     PayloadRegressor(dynamics, "hand"))
    return {jf.joint: jf for jf in fits}, payload


@pytest.mark.parametrize("case", sorted(PAYLOADS))
def test_a_mass_added_to_the_hand_comes_back_with_its_centre_of_mass(case: str) -> None:
    seed, truth = TRUTHS[case]
    mass, at = PAYLOADS[case]
    fits, payload = _fit(engine_run(truth, seed, bodies=_bodies(mass, at)))
    assert payload.fixed == {}
    assert payload.added
    assert abs(payload.mass - mass) <= 0.05 * mass, payload
    # Within a millimetre: the point mass's inertia about the hand's origin (which the
    # first, linear round leaves out) is put back by the later rounds.
    assert np.abs(np.asarray(payload.com) - at).max() <= 1e-3, payload
    assert 0.0 < payload.mass_interval < 0.05 * mass
    assert all(0.0 < i < 0.005 for i in payload.com_intervals)  # type: ignore[operator]
    # The joints' own values come back as without a payload (test_fit).
    for joint, values in truth.items():
        for name, expected in zip(PARAMETERS, values, strict=True):
            got = fits[joint].values[name]
            assert abs(got - expected) <= 0.1 * expected, (joint, name, got, expected)


def test_an_offset_the_recording_cannot_see_is_reported_and_kept_at_zero() -> None:
    """The yaw holds still: the pitch joints, all about y, feel no offset along y."""
    seed, truth = TRUTHS["b"]
    mass, at = PAYLOADS["b"]
    fits, payload = _fit(engine_run(truth, seed, bodies=_bodies(mass, at),
                                    joints=("shoulder_pitch", "elbow", "wrist")))
    assert set(payload.fixed) == {"com_y"}
    assert "not identifiable" in payload.fixed["com_y"]
    assert payload.com[1] == 0.0
    assert payload.com_intervals[1] is None
    assert abs(payload.mass - mass) <= 0.05 * mass
    assert abs(payload.com[0] - at[0]) <= 1e-3
    assert abs(payload.com[2] - at[2]) <= 1e-3
    assert set(fits["shoulder_yaw"].fixed) == set(PARAMETERS)


def test_a_body_the_model_lacks_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["identify", str(DATA / "arm_excite20_truth.mcap"), "--skel", str(ARM),
                 "--payload", "hnad", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "--payload 'hnad': skeleton 'arm' has no such body; did you mean 'hand'?" in err
    assert not out.exists()


def test_the_command_writes_the_payload_and_survives_a_model_mjcf_refuses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bench recording has no payload: its mass is told apart from none by nothing,
    so no mass reaches the model. The wrist's one-sided limit, which MJCF cannot hold,
    costs model.xml only, with a line saying why."""
    skel = tmp_path / "one_sided.skel"
    limit = "<limit><lower>-1.9</lower><upper>1.9</upper></limit>"
    text = ARM.read_text()
    assert text.count(limit) == 1
    skel.write_text(text.replace(limit, "<limit><lower>-1.9</lower></limit>"))
    out = tmp_path / "out"
    assert main(["identify", str(DATA / "arm_excite20_truth.mcap"), "--skel", str(skel),
                 "--payload", "hand", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"note: {out / 'model.xml'} not written (MJCF cannot hold this model: " in printed
    assert "one-sided position limit" in printed
    assert "payload on hand: mass" in printed
    assert sorted(p.name for p in out.iterdir()) == ["identified.yaml", "model.skel",
                                                     "report.html"]
    doc = yaml.safe_load((out / "identified.yaml").read_text())
    assert "one-sided position limit" in doc["model_file"]["mjcf"]["not_written"]
    assert doc["model_file"]["carries"] == ["damping", "friction"]
    entry = doc["payload"]
    assert entry["body"] == "hand"
    assert abs(entry["mass"]["value"]) <= entry["mass"]["interval"]
    assert entry["in_model_file"] is False
    assert set(entry["not_identified"]) == {"com_x", "com_y", "com_z"}
