"""The browser view's pictures in docs/visualization.md, made by this package.

Serves the bundled arm (``skel-ros view MODEL``, a slider moved) and a sim-to-real
recording (``skel-ros view RUN.mcap``, the time slider moved), exports the recording
(``--export``), and takes each picture with headless Chromium (software WebGL).
The live view's picture is taken by ``bench/view_latency.py --screenshot``.

Usage: .venv/bin/python scripts/view_screenshots.py RUN.mcap [--out docs/img]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

WINDOW = (720, 420)


def _shot(url: str, out: Path, *, settle: float = 3.0) -> None:
    from skel_ros.view.chromium import headless_chromium

    with headless_chromium(WINDOW) as browser:
        browser.open(url, viewport=WINDOW)
        browser.drain(settle)
        browser.close_notifications()
        browser.drain(1.0)
        out.write_bytes(browser.screenshot())
    sys.stdout.write(f"wrote {out}\n")


def main() -> int:
    """Take the three pictures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    args = parser.parse_args()

    from skel_ros.model import load_model
    from skel_ros.view.chromium import headless_chromium
    from skel_ros.view.model_view import ModelView
    from skel_ros.view.replay import ReplayView, export_html, load_replay
    from skel_ros.view.server import frame_scene, start_server, stop_server, url

    server = start_server()
    view = ModelView(server, load_model(REPO / "examples" / "arm.skel"))
    frame_scene(server, [view.drawing])
    for slider, value in zip(view.sliders, (0.6, 0.7, 0.9, -0.5), strict=True):
        slider.value = value
    _shot(url(server), args.out / "view_model.png")
    stop_server(server)

    with tempfile.TemporaryDirectory() as tmp:
        replay = load_replay(args.recording, mesh_dir=Path(tmp))
        server = start_server()
        view = ReplayView(server, replay)
        frame_scene(server, view.pair.drawings.values())
        view.time.value = 0.6 * replay.duration
        _shot(url(server), args.out / "view_replay.png")
        view.close()
        stop_server(server)

        html = Path(tmp) / "view.html"
        sys.stdout.write(f"export: {export_html(replay, html) / 1e6:.2f} MB\n")
        with headless_chromium(WINDOW) as browser:
            browser.open(html.as_uri(), viewport=WINDOW)
            browser.drain(3.0)
            browser.close_notifications()
            browser.drain(0.4 * replay.duration)
            browser.press_space()  # pause
            browser.drain(1.0)
            (args.out / "view_export.png").write_bytes(browser.screenshot())
        sys.stdout.write(f"wrote {args.out / 'view_export.png'}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
