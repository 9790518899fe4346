"""The report: one PNG per joint, a table of the metrics, HTML that stands alone."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skel_ros.analysis import JointSeries, compare, write_report

if TYPE_CHECKING:
    from pathlib import Path


def _comparison():
    t = np.arange(0, 2, 0.01)
    names = ["shoulder", "elbow"]
    cmd = np.column_stack([np.sin(t), np.cos(t)])
    return compare([
        JointSeries.from_samples("command", t, names, cmd),
        JointSeries.from_samples("sim", t, names, cmd + 0.01),
        JointSeries.from_samples("real", t, names, cmd - 0.02),
    ], limits={"shoulder": (-1.0, 1.0)})


def test_html_report_embeds_every_plot(tmp_path: Path) -> None:
    report = write_report(_comparison(), tmp_path, fmt="html", notes=("a note",))
    page = report.page.read_text()
    assert report.page.name == "report.html"
    assert [p.name for p in report.plots] == ["joint_shoulder.png", "joint_elbow.png"]
    for plot in report.plots:
        data = plot.read_bytes()
        assert data.startswith(b"\x89PNG")
        assert base64.b64encode(data).decode() in page  # no file next to it is needed
    assert "0.03" in page  # sim - real RMS
    assert "a note" in page


def test_markdown_report_links_plots(tmp_path: Path) -> None:
    report = write_report(_comparison(), tmp_path, fmt="md")
    text = report.page.read_text()
    assert "![shoulder](joint_shoulder.png)" in text
    assert "| shoulder |" in text
    assert text.count("\n|") >= 3


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="format"):
        write_report(_comparison(), tmp_path, fmt="pdf")


def test_an_html_report_shows_a_given_view_beside_the_verdict(tmp_path: Path) -> None:
    """``view``: a page beside the report (skel-ros view's exported replay), shown at the
    top of the HTML page after the verdict box; a Markdown report has no place for it."""
    page = write_report(_comparison(), tmp_path, fmt="html", view="view.html").page
    text = page.read_text(encoding="utf-8")
    assert "<iframe src='view.html'" in text
    assert text.index("<div class='top'>") < text.index("<iframe") < text.index("<img")
    md = write_report(_comparison(), tmp_path / "md", fmt="md", view="view.html").page
    assert "view.html" not in md.read_text(encoding="utf-8")
    assert "<iframe" not in write_report(_comparison(), tmp_path / "plain").page.read_text(
        encoding="utf-8")
