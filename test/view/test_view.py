"""``skel-ros view``: the model's scene, a recording's replay, its HTML export in Chromium.

One small recording of the arm (2 s, written without ROS: view_recording.py) serves
every test; the export is made once per module. The browser tests run the OS package's
headless Chromium with software WebGL (SwiftShader) on the exported file, with network
fetches sent to a closed port: what it draws comes from the one file.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
from view_recording import ARM, JOINTS, write_view_recording

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    import viser

    from skel_ros.view.chromium import Browser

pytest.importorskip("viser", reason="the view extra: pip install skel_ros[view]")

CHROMIUM = Path("/usr/bin/chromium")
BAR = 50  # the player's bar at the bottom of the page
ROBOT_PIXELS = 500  # the arm covers about 2,000 of the 640 x 400


@pytest.fixture(scope="module")
def arm() -> object:
    from skel_ros.model import load_model

    return load_model(ARM)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory, arm: object) -> Path:
    root = tmp_path_factory.mktemp("view")
    return write_view_recording(root / "run.mcap", arm, root / "generated")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def server() -> Iterator[viser.ViserServer]:
    from skel_ros.view.server import start_server, stop_server

    srv = start_server()
    yield srv
    stop_server(srv)


@pytest.fixture(scope="module")
def export(recording: Path) -> Path:
    """The whole run exported by the command."""
    from skel_ros.cli.main import main

    out = recording.with_name("view.html")
    assert main(["view", str(recording), "--export", str(out)]) == 0
    return out


def test_a_model_s_scene_has_its_bodies_and_a_slider_per_dof_within_its_limits(
        server: viser.ViserServer, arm: object) -> None:
    from skel_ros.model.kinematics import Kinematics
    from skel_ros.view.model_view import ModelView

    view = ModelView(server, arm)  # type: ignore[arg-type]
    skel = arm.skeletons[0]  # type: ignore[attr-defined]
    assert view.drawing.body_count == len(skel.bodies) == 5
    assert view.drawing.mesh_count() == 5  # one visual shape each
    assert [(s.dof, s.lower, s.upper, s.initial) for s in view.specs] == [
        (d.name, d.position_lower, d.position_upper, d.initial_position) for d in skel.dofs]
    assert [(s.min, s.max) for s in view.sliders] == [(d.position_lower, d.position_upper)
                                                     for d in skel.dofs]
    view.sliders[0].value = 0.5  # shoulder_yaw and shoulder_pitch: the bodies follow
    view.sliders[1].value = 0.7
    q = np.array([d.initial_position for d in skel.dofs])
    q[:2] = 0.5, 0.7
    expected = Kinematics(skel).body_transforms(q)
    positions, wxyz = view.drawing.frame_poses()
    np.testing.assert_allclose(positions, expected[:, :3, 3], atol=1e-6)
    np.testing.assert_allclose([_rotation(w) for w in wxyz], expected[:, :3, :3], atol=1e-6)
    assert not np.allclose(expected, Kinematics(skel).body_transforms())
    view.reset()
    np.testing.assert_allclose(view.drawing.frame_poses()[0],
                               Kinematics(skel).body_transforms()[:, :3, 3], atol=1e-6)


def _rotation(wxyz: np.ndarray) -> np.ndarray:
    """The rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = wxyz
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_an_unlimited_dof_s_slider_spans_a_turn_either_way() -> None:
    from skel_ros.model import load_skel
    from skel_ros.view.model_view import UNLIMITED_SPAN, slider_specs

    text = ARM.read_text().replace("<lower>-2.6</lower>", "").replace("<upper>2.6</upper>", "")
    assert text != ARM.read_text()
    spec = slider_specs(load_skel(text))[0]
    assert (spec.dof, spec.lower, spec.upper) == ("shoulder_yaw", -UNLIMITED_SPAN,
                                                  UNLIMITED_SPAN)


def test_a_replay_draws_both_robots_from_their_recorded_descriptions(
        server: viser.ViserServer, recording: Path, tmp_path: Path) -> None:
    from skel_ros.view.replay import draw_pair, load_replay, show_frame
    from skel_ros.view.robot import error_rgb

    replay = load_replay(recording, mesh_dir=tmp_path)
    assert replay.robots == ("sim", "real")
    assert replay.joints == {"sim": JOINTS, "real": JOINTS}
    assert math.isclose(replay.duration, 2.0, abs_tol=1e-6)
    pair = draw_pair(server.scene, replay)
    sim, real = pair.drawings["sim"], pair.drawings["real"]
    # The recorded URDF has the links the export adds between joints (no shapes).
    assert sim.mesh_count() == real.mesh_count() == 5
    assert tmp_path.glob("*.stl"), "the embedded meshes (capsule, ellipsoid) were written"
    show_frame(pair, replay, replay.times.size - 1)
    assert sim.positions.tolist() == pytest.approx([1.6, 1.0, 1.5, -0.8])
    assert real.positions.tolist() == pytest.approx([1.52, 0.95, 1.54, -0.76])
    # The ghost's bodies take their joint's error; the solid robot keeps its colours.
    colours = dict(zip([b.name for s in real.world.skeletons for b in s.bodies],
                       real.body_colors(), strict=True))
    assert colours["real/forearm"] == error_rgb(0.04, 0.05)  # the elbow
    assert colours["real/upper_arm"] == error_rgb(-0.05, 0.05)  # shoulder_pitch: red
    assert colours["real/upper_arm"] != colours["real/forearm"]
    shapes = [next((sh.color for sh in b.shapes if sh.color is not None), None)
              for b in sim.world.skeletons[0].bodies]
    assert sim.body_colors() == [None if c is None else tuple(round(255 * v) for v in c[:3])
                                 for c in shapes]


def test_a_recording_without_robots_is_a_clear_error(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from joint_state_mcap import joint_state, write_joint_states

    from skel_ros.cli.main import main

    path = write_joint_states(tmp_path / "old.mcap", [
        (10**9 * k, "sim", joint_state((k, 0), JOINTS, [0.0] * 4)) for k in range(1, 4)])
    assert main(["view", str(path), "--export", str(tmp_path / "v.html")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: no /sim/robot_description recorded")
    assert "--model MODEL" in err
    assert not (tmp_path / "v.html").exists()
    assert main(["view", str(path), "--model", str(ARM), "--export",
                 str(tmp_path / "v.html")]) == 0


def test_the_export_is_one_html_file_under_10_mb_with_nothing_to_fetch(export: Path) -> None:
    import re

    html = export.read_text(encoding="utf-8")
    assert export.stat().st_size < 10_000_000
    assert "window.__VISER_EMBED_DATA__=" in html
    # Nothing loaded from elsewhere: no script, style sheet or image by URL.
    assert not re.findall(r"""<(?:script|link|img)\b[^>]*\b(?:src|href)=["'](?!data:)""", html)


def test_without_viser_the_command_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from skel_ros.cli.main import main

    monkeypatch.setitem(sys.modules, "viser", None)
    assert main(["view", str(ARM)]) == 2
    assert capsys.readouterr().err == ("error: skel-ros view needs viser:"
                                       " pip install skel_ros[view]\n")


def test_the_model_view_is_served_on_loopback_until_ctrl_c(ros_env: dict[str, str]) -> None:
    import re
    import signal
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "skel_ros.cli.main", "view", str(ARM)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ros_env)
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"http://127\.0\.0\.1:\d+", line)
        if url is None:
            proc.kill()
            pytest.fail(f"no loopback URL in {line!r}; stderr: {proc.communicate()[1]}")
        with urllib.request.urlopen(url.group(0), timeout=30) as page:  # noqa: S310 - loopback
            assert b"<html" in page.read(2000)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_replay_window_is_the_part_of_the_run_asked_for(recording: Path,
                                                        tmp_path: Path) -> None:
    from skel_ros.view.errors import ViewError
    from skel_ros.view.replay import load_replay

    replay = load_replay(recording, mesh_dir=tmp_path, start=1.5, end=1.9, fps=10)
    np.testing.assert_allclose(replay.times, [1.5, 1.6, 1.7, 1.8, 1.9])
    with pytest.raises(ViewError, match=r"from 2\.5 s to 3 s is not within the run"):
        load_replay(recording, mesh_dir=tmp_path, start=2.5, end=3.0)


# --------------------------------------------------------------------------- Chromium

# The player's time box (the first input of its bar), in seconds.
PLAYER_TIME = "parseFloat(document.querySelector('input').value)"
NEAR_START, NEAR_END = 0.5, 1.6  # s, of the 2 s run


def _robot_pixels(png: bytes) -> np.ndarray:
    """The strongly coloured pixels above the player's bar (the arm's orange, blues,
    yellow; the grid and the background are grey and white)."""
    import io

    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    coloured = (rgb.max(axis=-1) - rgb.min(axis=-1)) > 60
    coloured[-BAR:] = False
    return coloured


def _pause_at(browser: Browser, wanted: Callable[[float], bool], *, play: bool) -> float:
    """Play (space, when ``play``) until the player's time is ``wanted``, pause (space)
    there; returns its time then.

    The player runs on between reading its time and the key's arrival (0.3 s once, in a
    loaded full run, with the page drawn by software WebGL): a pause that lands past the
    wanted time plays on (space) and tries again on the next loop of the run.
    """
    import time

    if play:
        browser.press_space()
    deadline = time.monotonic() + 60
    while True:
        while not wanted(t := browser.evaluate(PLAYER_TIME)):
            assert time.monotonic() < deadline, f"the player never got there (at {t} s)"
            time.sleep(0.02)
        browser.press_space()
        paused: float = browser.evaluate(PLAYER_TIME)
        if wanted(paused):
            return paused
        assert time.monotonic() < deadline, f"every pause landed too late (at {paused} s)"
        browser.press_space()  # play on


@pytest.mark.skipif(not CHROMIUM.is_file(),
                    reason="no /usr/bin/chromium: install the OS package (apt install chromium)")
def test_chromium_draws_the_exported_arm_offline_and_it_moves(export: Path) -> None:
    """The player is paused (space) near the start, then near the end of the 2 s run."""
    from skel_ros.view.chromium import headless_chromium

    with headless_chromium() as browser:
        browser.call("Network.enable")
        browser.open(export.as_uri())
        browser.screenshot_when(lambda png: _robot_pixels(png).sum() > ROBOT_PIXELS)
        browser.close_notifications()  # the "software WebGL" notice
        first = _pause_at(browser, lambda t: t < NEAR_START, play=False)  # it loops
        start = _robot_pixels(browser.screenshot_when(
            lambda png: _robot_pixels(png).sum() > ROBOT_PIXELS))
        last = _pause_at(browser, lambda t: t >= NEAR_END, play=True)
        end = _robot_pixels(browser.screenshot_when(
            lambda png: _robot_pixels(png).sum() > ROBOT_PIXELS))
        fetched = [e["params"]["request"]["url"] for e in browser.events
                   if e.get("method") == "Network.requestWillBeSent"]
    assert first < NEAR_START
    assert last >= NEAR_END
    assert start.sum() > ROBOT_PIXELS
    assert end.sum() > ROBOT_PIXELS
    assert np.logical_xor(start, end).sum() > 0.3 * min(start.sum(), end.sum()), "no motion"
    assert all(url.startswith(("file:", "data:", "blob:")) for url in fetched), fetched


@pytest.mark.parametrize("fps", ["inf", "nan", "0", "1e7"])
def test_a_replay_rate_beyond_reason_is_a_usage_error(
        recording: Path, fps: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--fps inf ended in a traceback and 1e7 built hundreds of millions of frames."""
    from skel_ros.cli.main import main

    assert main(["view", str(recording), "--fps", fps, "--export", "x.html"]) == 2
    assert "--fps must be in (0, 240]" in capsys.readouterr().err


def test_a_port_in_use_is_an_error_not_another_port() -> None:
    """viser moves on to the next free port; the view must serve where it was asked to."""
    from skel_ros.view.server import start_server, stop_server

    first = start_server(port=0)
    try:
        taken = first.get_port()
        with pytest.raises(OSError, match=f"port {taken} is in use"):
            start_server(port=taken)
    finally:
        stop_server(first)
