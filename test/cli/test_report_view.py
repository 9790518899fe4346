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
