"""The aggregated report of a sweep: ``report.html``, ``summary.json`` and ``junit.xml``.

From the results of the trials (:mod:`skel_ros.sweep.trial`): the pass rate, the worst
joints (the trials failing on each, the largest sim-vs-real error), how the error
depends on each swept parameter (one plot per axis with more than one value: each
trial's largest sim-vs-real error against the axis's value, coloured by verdict) and
the trials that failed or could not be judged, each linked to its own report. A trial
without a result (not run yet, or stopped) counts as *not judged* in the verdict, and
is listed as such. The page embeds its plots (``data:`` URIs), as
:mod:`skel_ros.analysis.report` does.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.analysis.report import VERDICT_COLOURS
from skel_ros.analysis.verdict import Outcome, combine
from skel_ros.sweep.trial import read_result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skel_ros.sweep.spec import Spec, Trial

__all__ = ["SweepResult", "collect", "write_reports"]

SUMMARY_FORMAT = 1  # bumped when a key changes meaning
ERROR_PAIR = ("sim", "real")  # the error the plots and the worst joints speak of
NOT_RUN = "not run"


@dataclass(frozen=True)
class TrialResult:
    """One trial and its result (None: it has none yet)."""

    trial: Trial
    result: dict[str, Any] | None

    @property
    def verdict(self) -> str:
        return self.result["verdict"] if self.result is not None else NOT_RUN

    def worst_error(self) -> float:
        """The largest sim-vs-real max error over the joints (NaN: none measured)."""
        return max((v for _, v in self.joint_errors()), default=math.nan)

    def joint_errors(self) -> list[tuple[str, float]]:
        """Joint -> its sim-vs-real max error, where measured."""
        return [(joint["joint"], float(e["max"]))
                for joint in (self.result or {}).get("joints", [])
                for e in joint.get("errors", [])
                if (e.get("a"), e.get("b")) == ERROR_PAIR
                and isinstance(e.get("max"), (int, float))]


@dataclass(frozen=True)
class SweepResult:
    """Every trial of a sweep with its result, and the verdict."""

    trials: tuple[TrialResult, ...]
    swept: tuple[str, ...]

    def count(self, verdict: str) -> int:
        """The trials with ``verdict`` (``"not run"``: those without a result)."""
        return sum(t.verdict == verdict for t in self.trials)

    @property
    def outcome(self) -> Outcome:
        """Not judged if a trial is (or has no result), else failed if one is, else passed."""
        return combine(Outcome(t.verdict) if t.verdict != NOT_RUN else Outcome.NOT_JUDGED
                       for t in self.trials)

    @property
    def pass_rate(self) -> float:
        """Passed trials over the trials with a result (NaN: none)."""
        judged = len(self.trials) - self.count(NOT_RUN)
        return self.count("passed") / judged if judged else math.nan


def collect(spec: Spec, out: Path) -> SweepResult:
    """The result of each trial of ``spec`` found in ``out``."""
    return SweepResult(tuple(TrialResult(t, read_result(out / "trials" / t.id))
                             for t in spec.trials), spec.swept)


def _worst_joints(sweep: SweepResult) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for t in sweep.trials:
        for joint, error in t.joint_errors():
            row = rows.setdefault(joint, {"joint": joint, "failing_trials": 0,
                                          "max_error": 0.0, "errors": []})
            row["max_error"] = max(row["max_error"], error)
            row["errors"].append(error)
        failing = {p.get("joint") for p in (t.result or {}).get("problems", [])
                   if p.get("outcome") == "failed" and p.get("joint")}
        for joint in failing:
            rows.setdefault(joint, {"joint": joint, "failing_trials": 0, "max_error": 0.0,
                                    "errors": []})["failing_trials"] += 1
    out = []
    for row in rows.values():
        errors = row.pop("errors")
        row["mean_error"] = sum(errors) / len(errors) if errors else None
        out.append(row)
    return sorted(out, key=lambda r: (-r["failing_trials"], -r["max_error"]))


def _by_axis(sweep: SweepResult) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for axis in sweep.swept:
        groups: dict[str, list[TrialResult]] = {}
        values: dict[str, Any] = {}
        for t in sweep.trials:
            value = t.trial.params().get(axis)
            groups.setdefault(json.dumps(value), []).append(t)
            values[json.dumps(value)] = value
        rows = []
        for key, members in groups.items():
            errors = [e for m in members if math.isfinite(e := m.worst_error())]
            rows.append({"value": values[key], "trials": len(members),
                         "passed": sum(m.verdict == "passed" for m in members),
                         "mean_error": sum(errors) / len(errors) if errors else None,
                         "max_error": max(errors) if errors else None})
        out[axis] = rows
    return out


def _summary(sweep: SweepResult, spec: Spec) -> dict[str, Any]:
    rate = sweep.pass_rate
    return {
        "format": SUMMARY_FORMAT, "spec": spec.source, "criteria": str(spec.criteria),
        "verdict": sweep.outcome.value, "trials": len(sweep.trials),
        "passed": sweep.count("passed"), "failed": sweep.count("failed"),
        "not_judged": sweep.count("not judged"), "not_run": sweep.count(NOT_RUN),
        "pass_rate": rate if math.isfinite(rate) else None,
        "swept": list(sweep.swept), "error": f"{ERROR_PAIR[0]}-{ERROR_PAIR[1]} max (rad or m)",
        "worst_joints": _worst_joints(sweep), "by_parameter": _by_axis(sweep),
        "results": [{"id": t.trial.id, "params": t.trial.params(), "verdict": t.verdict,
                     "reason": (t.result or {}).get("reason", ""),
                     "worst_error": t.worst_error() if math.isfinite(t.worst_error()) else None,
                     "seconds": (t.result or {}).get("seconds"),
                     "report": f"trials/{t.trial.id}/report.html"} for t in sweep.trials],
    }


def _junit(sweep: SweepResult, path: Path) -> None:
    root = ET.Element("testsuites", name="sweep")
    counts = {"tests": len(sweep.trials), "failures": sweep.count("failed"),
              "errors": sweep.count("not judged") + sweep.count(NOT_RUN), "skipped": 0}
    suite = ET.SubElement(root, "testsuite", {"name": "sweep",
                                              **{k: str(v) for k, v in counts.items()}})
    for t in sweep.trials:
        seconds = (t.result or {}).get("seconds", 0.0)
        case = ET.SubElement(suite, "testcase", classname=f"sweep.{t.trial.id}",
                             name=_label(t.trial), time=f"{seconds:.3f}")
        reason = (t.result or {}).get("reason", "") or t.verdict
        if t.verdict == "failed":
            ET.SubElement(case, "failure", message=reason, type="bound").text = reason
        elif t.verdict != "passed":
            ET.SubElement(case, "error", message=reason, type=t.verdict).text = reason
    for k, v in counts.items():
        root.set(k, str(v))
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _label(trial: Trial) -> str:
    """The trial's parameters, short: file names without folders."""
    parts = []
    for key, value in trial.params().items():
        if value is None or key == "physics":
            continue
        text = Path(value).name if isinstance(value, str) and key != "engines" else str(value)
        parts.append(f"{key.removeprefix('vary:')}={text}")
    return ", ".join(parts)


def _plot(sweep: SweepResult, axis: str) -> bytes:
    """Each trial's largest sim-vs-real error against ``axis``'s value, as PNG bytes."""
    import matplotlib as mpl

    mpl.use("Agg", force=False)
    from matplotlib.figure import Figure

    values = [t.trial.params().get(axis) for t in sweep.trials]
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    labels = sorted({json.dumps(v) for v in values}) if not numeric else []
    fig = Figure(figsize=(6.5, 3.2), dpi=100)
    axes = fig.subplots()
    colours = {o.value: c for o, c in VERDICT_COLOURS.items()}
    for verdict in ("passed", "failed", "not judged"):
        xs, ys = [], []
        for t, v in zip(sweep.trials, values, strict=True):
            error = t.worst_error()
            if t.verdict == verdict and math.isfinite(error):
                xs.append(float(v) if numeric else labels.index(json.dumps(v)))
                ys.append(error)
        if xs:
            axes.plot(xs, ys, "o", color=colours[verdict], label=verdict, alpha=0.8)
    if not numeric:
        axes.set_xticks(range(len(labels)),
                        [Path(json.loads(s)).name if json.loads(s) else "none" for s in labels])
    axes.set_xlabel(axis.removeprefix("vary:"))
    axes.set_ylabel("largest sim-real error")
    axes.grid(alpha=0.3)
    axes.legend(loc="best", fontsize=8)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _html(sweep: SweepResult, summary: dict[str, Any]) -> str:
    esc = html.escape
    outcome = sweep.outcome
    colour = VERDICT_COLOURS.get(outcome, "black")
    rate = summary["pass_rate"]
    css = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
           "td,th{border:1px solid #bbb;padding:3px 8px;text-align:left}img{max-width:100%}"
           ".verdict{border:3px solid;padding:0.5em 1em;margin-bottom:1.5em}")
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>sweep</title>",
             f"<style>{css}</style></head><body><h1>sim-to-real sweep</h1>",
             (f"<div class='verdict' style='border-color:{colour}'>"
              f"<h2 style='color:{colour}'>Verdict: {esc(outcome.value.upper())}</h2>"
              f"<p>{summary['trials']} trials: {summary['passed']} passed,"
              f" {summary['failed']} failed, {summary['not_judged']} not judged,"
              f" {summary['not_run']} without a result; pass rate"
              f" {'-' if rate is None else f'{100 * rate:.1f} %'}"
              " (of the trials with a result).</p>"),
             f"<p>spec {esc(summary['spec'])}; criteria {esc(summary['criteria'])}</p></div>"]
    parts.append("<h2>Worst joints</h2><table><tr><th>joint</th><th>trials failing on it</th>"
                 "<th>largest sim-real error</th><th>mean over the trials</th></tr>")
    for row in summary["worst_joints"]:
        mean = "-" if row["mean_error"] is None else f"{row['mean_error']:.4g}"
        parts.append(f"<tr><td>{esc(row['joint'])}</td><td>{row['failing_trials']}</td>"
                     f"<td>{row['max_error']:.4g}</td><td>{mean}</td></tr>")
    parts.append("</table>")
    if sweep.swept:
        parts.append("<h2>Error against each swept parameter</h2>")
    measured = any(math.isfinite(t.worst_error()) for t in sweep.trials)
    for axis in sweep.swept:
        parts.append(f"<h3>{esc(axis.removeprefix('vary:'))}</h3>")
        if not measured:
            parts.append("<p>No trial has a measured error yet.</p>")
            continue
        data = base64.b64encode(_plot(sweep, axis)).decode("ascii")
        parts.append(f"<img alt='{esc(axis)}' src='data:image/png;base64,{data}'>")
    bad = [t for t in sweep.trials if t.verdict != "passed"]
    parts.append(f"<h2>Trials not passed ({len(bad)})</h2>")
    if bad:
        parts.append("<table><tr><th>trial</th><th>verdict</th><th>parameters</th>"
                     "<th>why</th></tr>")
        for t in bad:
            link = f"trials/{t.trial.id}/report.html"
            name = (f"<a href='{link}'>{t.trial.id}</a>" if t.result is not None
                    else t.trial.id)
            reason = (t.result or {}).get("reason", "")
            parts.append(f"<tr><td>{name}</td><td>{esc(t.verdict)}</td>"
                         f"<td>{esc(_label(t.trial))}</td><td>{esc(reason)}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_reports(spec: Spec, out: Path) -> tuple[SweepResult, Sequence[Path]]:
    """Write ``report.html``, ``summary.json`` and ``junit.xml`` into ``out``."""
    sweep = collect(spec, out)
    summary = _summary(sweep, spec)
    out.mkdir(parents=True, exist_ok=True)
    paths = (out / "report.html", out / "summary.json", out / "junit.xml")
    paths[0].write_text(_html(sweep, summary), encoding="utf-8")
    paths[1].write_text(json.dumps(summary, indent=1, allow_nan=False) + "\n",
                        encoding="utf-8")
    _junit(sweep, paths[2])
    return sweep, paths
