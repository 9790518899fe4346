"""A run in two engines and on hardware: engine-vs-engine columns, criteria and plot lines.

``sim-to-real --engines dart,mujoco`` records the first engine as ``sim`` and the other
under its engine's name; the comparison, the criteria and the report take them as
streams like any other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from skel_ros.analysis import JointSeries, Outcome, compare, judge, parse_criteria, write_report
from skel_ros.analysis.criteria import PAIR_KEYS

if TYPE_CHECKING:
    from pathlib import Path

NAMES = ["shoulder", "elbow"]


def _comparison() -> Any:
    t = np.arange(0, 2, 0.01)
    cmd = np.column_stack([np.sin(t), np.cos(t)])
    return compare([
        JointSeries.from_samples("command", t, NAMES, cmd),
        JointSeries.from_samples("sim", t, NAMES, cmd + 0.01),
        JointSeries.from_samples("mujoco", t, NAMES, cmd + 0.015),
        JointSeries.from_samples("real", t, NAMES, cmd - 0.02),
    ], limits={"shoulder": (-1.0, 1.0)})


def test_every_engine_is_compared_with_the_hardware_the_command_and_the_other_engine() -> None:
    comparison = _comparison()
    assert set(comparison.streams) == {"command", "sim", "mujoco", "real"}
    for joint in comparison.joints:
        assert [(e.a, e.b) for e in joint.errors] == [
            ("sim", "real"), ("mujoco", "real"), ("sim", "mujoco"),
            ("sim", "command"), ("mujoco", "command"), ("real", "command")]
        assert joint.error("sim", "mujoco").max_abs == pytest.approx(0.005)
        assert joint.error("mujoco", "real").max_abs == pytest.approx(0.035)
        assert set(joint.limit_hits) == {"command", "sim", "mujoco", "real"}


def test_criteria_bound_engine_pairs() -> None:
    assert PAIR_KEYS["sim_mujoco"] == ("sim", "mujoco")
    criteria = parse_criteria("all:\n  sim_mujoco: {max: 0.004}\n  mujoco_real: {max: 0.1}\n"
                              "  limit_hits: {mujoco: 1000}\n", "c.yaml")
    verdict = judge(_comparison(), criteria)
    failed = [c for c in verdict.checks if c.outcome is Outcome.FAILED]
    assert verdict.outcome is Outcome.FAILED
    assert {(c.pair, c.joint) for c in failed} == {(("sim", "mujoco"), j) for j in NAMES}
    assert sum(c.pair == ("mujoco", "real") for c in verdict.checks) == len(NAMES)


def test_the_report_has_engine_columns_and_a_line_per_engine(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    from matplotlib.figure import Figure

    figures: list[Figure] = []
    save = Figure.savefig

    def keep(self: Figure, *args: Any, **kwargs: Any) -> None:
        figures.append(self)
        save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    report = write_report(_comparison(), tmp_path, fmt="md")
    page = report.page.read_text()
    for column in ("RMS sim-mujoco", "max mujoco-real", "lag mujoco vs command (ms)"):
        assert column in page
    assert len(figures) == len(NAMES)
    for fig in figures:
        top, bottom = fig.axes
        assert top.get_legend_handles_labels()[1] == [
            "command", "simulation", "simulation (MuJoCo)", "hardware"]
        assert "sim - mujoco" in bottom.get_legend_handles_labels()[1]
