"""The 3-D replay beside a sim-to-real report: never a reason for the run to fail.

``skel-ros sim-to-real`` exports the run's replay (``skel-ros view``) for its HTML report;
without the ``view`` extra, or when the viewer fails on a recording, one line says so and
the report is written without it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from skel_ros.cli import compare_cmd

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def test_without_the_view_extra_the_report_has_no_replay_and_says_how_to_get_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        ) -> None:
    monkeypatch.setitem(sys.modules, "skel_ros.view.replay", None)  # import fails
    assert compare_cmd._export_view(tmp_path / "run.mcap", tmp_path / "view.html") is None
    assert "pip install skel_ros[view]" in capsys.readouterr().out
    assert not (tmp_path / "view.html").exists()


def test_a_viewer_that_fails_leaves_the_report_without_a_replay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        ) -> None:
    from skel_ros.view import replay

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the viewer's server could not start")

    monkeypatch.setattr(replay, "load_replay", broken)
    assert compare_cmd._export_view(tmp_path / "run.mcap", tmp_path / "view.html") is None
    assert "no 3-D replay: the viewer's server could not start" in capsys.readouterr().out


def _failing_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, recorded: bool,
                 ) -> tuple[int, str]:
    """``skel-ros sim-to-real`` whose run stops half-way (``RunError``): status, stdout."""
    import contextlib
    import io

    from view_recording import ARM, write_view_recording

    from skel_ros.cli.main import main
    from skel_ros.model import load_model
    from skel_ros.nodes import sim_to_real

    def stopped(config: sim_to_real.RunConfig) -> None:
        if recorded:  # what the recorder had written when the run stopped
            config.out_dir.mkdir(parents=True, exist_ok=True)
            write_view_recording(config.out_dir / sim_to_real.RECORDING, load_model(ARM),
                                 tmp_path / "meshes")
        raise sim_to_real.RunError("the hardware stopped during the run: /real reports"
                                   " fault (watchdog)")

    monkeypatch.setattr(sim_to_real, "run_sim_to_real", stopped)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["sim-to-real", "--out", str(tmp_path / "out")])
    return code, out.getvalue()


def test_a_run_that_stopped_half_way_still_shows_its_recording_in_3d(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not judged, but what was recorded up to the stop is what the user needs to see."""
    from skel_ros.cli import exit_codes

    code, said = _failing_run(tmp_path, monkeypatch, recorded=True)
    assert code == exit_codes.NOT_JUDGED
    out = tmp_path / "out"
    assert (out / "view.html").is_file(), said
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "the hardware stopped during the run" in page
    assert page.index("the hardware stopped") < page.index("<iframe src='view.html'")


def test_a_run_that_recorded_nothing_has_a_report_without_a_replay(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skel_ros.cli import exit_codes

    code, said = _failing_run(tmp_path, monkeypatch, recorded=False)
    assert code == exit_codes.NOT_JUDGED
    assert not (tmp_path / "out" / "view.html").exists()
    assert "<iframe" not in (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "3-D replay" not in said
