"""JUnit and JSON reports, parsed back; the HTML report's verdict and its sections."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.analysis import (
    JointSeries,
    RunSection,
    Verdict,
    compare,
    judge,
    parse_criteria,
    write_json,
    write_junit,
    write_report,
    write_runs_report,
)

if TYPE_CHECKING:
    from pathlib import Path

CRITERIA = parse_criteria("""\
min_duration: 1.0
all:
  sim_real: {max: 0.05}
  real_command: {rms: 0.05, lag: 0.5}  # the lag search goes to 0.5 s: never fails
""", "c.yaml")


def _comparison(real_offset: float, *, still_wrist: bool = False):
    t = np.arange(0, 3, 0.01)
    cmd = np.column_stack([np.sin(t), np.zeros_like(t) if still_wrist else np.cos(t)])
    return compare([JointSeries.from_samples(n, t, ["elbow", "wrist"], cmd + off)
                    for n, off in (("command", 0.0), ("sim", 0.0), ("real", real_offset))])


def _sections() -> list[RunSection]:
    good, bad = _comparison(0.01, still_wrist=True), _comparison(0.2)
    return [RunSection("good", good, judge(good, CRITERIA), ("recording: good.mcap",)),
            RunSection("bad", bad, judge(bad, CRITERIA)),
            RunSection("dead", None, Verdict.not_judged("the sim process exited with status 1"))]


def test_junit_one_case_per_joint_and_criterion(tmp_path: Path) -> None:
    root = ET.parse(write_junit(tmp_path / "junit.xml", _sections())).getroot()
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["good", "bad", "dead"]
    good = suites["good"]
    cases = {(c.get("classname"), c.get("name")): c for c in good.findall("testcase")}
    assert len(cases) == 1 + 2 + 2 * 3  # duration, gaps sim and real, 3 bounds per joint
    assert ("sim_to_real.good.elbow", "max error sim-real") in cases
    assert ("sim_to_real.good", "duration") in cases
    skipped = cases["sim_to_real.good.wrist", "lag real-command"].find("skipped")
    assert skipped is not None
    assert "does not move" in skipped.get("message", "")
    assert good.get("failures") == "0"
    assert good.get("skipped") == "1"
    bad = suites["bad"]
    failures = [c for c in bad.findall("testcase") if c.find("failure") is not None]
    assert {c.get("name") for c in failures} == {"max error sim-real", "RMS error real-command"}
    message = failures[0].find("failure").get("message")  # type: ignore[union-attr]
    assert "= 0.2 > bound 0.05" in message
    assert "c.yaml:" in message
    (dead,) = suites["dead"].findall("testcase")
    error = dead.find("error")
    assert error is not None
    assert "status 1" in error.get("message", "")
    assert root.get("failures") == "4"
    assert root.get("errors") == "1"
    assert int(root.get("tests", "0")) == sum(int(s.get("tests", "0")) for s in suites.values())


def test_json_holds_metrics_criteria_and_verdict(tmp_path: Path) -> None:
    data = json.loads(write_json(tmp_path / "r.json", _sections(), CRITERIA).read_text())
    assert data["verdict"] == "not judged"
    assert data["criteria"]["all"]["sim_real"] == {"max": 0.05}
    runs = {r["name"]: r for r in data["runs"]}
    assert [runs[n]["verdict"] for n in ("good", "bad", "dead")] == ["passed", "failed",
                                                                      "not judged"]
    elbow = runs["bad"]["metrics"]["joints"][0]
    assert elbow["joint"] == "elbow"
    sim_real = next(e for e in elbow["errors"] if (e["a"], e["b"]) == ("sim", "real"))
    assert math.isclose(sim_real["max"], 0.2, rel_tol=1e-9)
    assert runs["bad"]["metrics"]["rates"]["real"] > 90
    assert elbow["lower"] is None  # no limits given: -inf is not JSON
    failed = [c for c in runs["bad"]["checks"] if c["outcome"] == "failed"]
    assert {(c["joint"], c["check"]) for c in failed} == {
        ("elbow", "max error sim-real"), ("wrist", "max error sim-real"),
        ("elbow", "RMS error real-command"), ("wrist", "RMS error real-command")}
    assert all(c["excess"] > 0 and c["bound_is"] == "max" for c in failed)
    lag = next(c for c in runs["good"]["checks"] if c["outcome"] == "skipped")
    assert lag["value"] is None
    assert runs["dead"]["metrics"] is None


def test_html_opens_with_the_verdict_linking_the_plots(tmp_path: Path) -> None:
    page = write_runs_report(_sections(), tmp_path, fmt="html").page.read_text()
    verdict = page.index("Verdict: NOT JUDGED")
    assert verdict < page.index("<h2 id='run--good'>")
    assert "href='#bad--elbow'" in page
    assert "id='bad--elbow'" in page
    assert "the sim process exited with status 1" in page
    assert (tmp_path / "good" / "joint_elbow.png").exists()
    assert (tmp_path / "bad" / "joint_wrist.png").exists()


def test_single_run_markdown_with_a_verdict(tmp_path: Path) -> None:
    bad = _comparison(0.2)
    report = write_report(bad, tmp_path, fmt="md", verdict=judge(bad, CRITERIA))
    text = report.page.read_text()
    assert text.index("**Verdict: FAILED**") < text.index("| elbow |")
    assert "(#run--elbow)" in text
    assert "<a id='run--elbow'></a>" in text
    assert [p.name for p in report.plots] == ["joint_elbow.png", "joint_wrist.png"]


def test_plots_mark_the_crossings(tmp_path: Path) -> None:
    """Same data, with and without a crossed bound: the plot with it has red marks."""
    from PIL import Image

    bad = _comparison(0.2)
    plain = write_report(bad, tmp_path / "plain", fmt="md").plots[0]
    marked = write_report(bad, tmp_path / "marked", fmt="md",
                          verdict=judge(bad, CRITERIA)).plots[0]

    def red(path: Path) -> int:
        rgb = np.asarray(Image.open(path).convert("RGB")).astype(int)
        return int(np.count_nonzero((rgb[..., 0] > 200) & (rgb[..., 1] < 60) & (rgb[..., 2] < 60)))

    assert red(marked) > red(plain) + 200
