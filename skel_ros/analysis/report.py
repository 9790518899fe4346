"""The comparison report: one PNG per joint and a Markdown or HTML page.

The HTML page embeds its plots (``data:`` URIs), so the single file opens anywhere; the
Markdown page links the PNG files next to it.

With criteria (:mod:`skel_ros.analysis.verdict`), the page opens with the verdict: the
checks that failed or could not be judged, by how much, each linked to its joint's plot;
the plots draw the ``max`` error bounds and mark in red the samples beyond them (and the
samples at a position limit when a ``limit_hits`` bound failed). Several runs (one per
trajectory) make one page with a section each under one overall verdict
(:func:`write_runs_report`).
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from skel_ros.analysis.verdict import Outcome, combine

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    import numpy.typing as npt
    from matplotlib.axes import Axes

    from skel_ros.analysis.metrics import Comparison, JointComparison
    from skel_ros.analysis.series import Array
    from skel_ros.analysis.verdict import Check, Verdict

STYLE = {  # stream -> (colour, line style, label)
    "command": ("black", "--", "command"),
    "sim": ("tab:blue", "-", "simulation"),
    "real": ("tab:orange", "-", "hardware"),
    # Further engines of a run in several (``sim-to-real --engines``).
    "dart": ("tab:purple", "-.", "simulation (DART)"),
    "mujoco": ("tab:cyan", "-.", "simulation (MuJoCo)"),
}


PAIR_COLOURS = {("sim", "real"): "tab:green", ("sim", "command"): "tab:blue",
                ("real", "command"): "tab:orange",
                ("dart", "real"): "tab:olive", ("mujoco", "real"): "tab:olive",
                ("sim", "dart"): "tab:purple", ("sim", "mujoco"): "tab:cyan",
                ("dart", "command"): "tab:pink", ("mujoco", "command"): "tab:pink"}
CROSSING = "red"
VERDICT_COLOURS = {Outcome.PASSED: "#1a7f37", Outcome.FAILED: "#cf222e",
                   Outcome.NOT_JUDGED: "#9a6700"}


@dataclass(frozen=True)
class Report:
    """Where a written report is."""

    page: Path
    plots: tuple[Path, ...]


@dataclass(frozen=True)
class RunSection:
    """One run (one trajectory) of a report.

    Attributes:
        name: the run's name (the trajectory's), its section's title.
        comparison: what was measured; None when the run did not get that far.
        verdict: the checks against the criteria (None: no criteria given).
        notes: lines said under the title (files, recording ...).
    """

    name: str
    comparison: Comparison | None
    verdict: Verdict | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


def _fmt(x: float, scale: float = 1.0, digits: int = 4) -> str:
    return "-" if not math.isfinite(x) else f"{x * scale:.{digits}g}"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "joint"


def _mark_crossings(axes: Axes, t: Array, values: Array, beyond: npt.NDArray[np.bool_],
                    label: str) -> None:
    if np.any(beyond):
        axes.plot(t[beyond], values[beyond], "o", color=CROSSING, markersize=2.5,
                  label=label or "_nolegend_")


def plot_joint(comparison: Comparison, joint: JointComparison, path: Path,
               checks: Sequence[Check] = ()) -> Path:
    """Write one joint's plot: positions against time, and the errors below.

    ``checks`` (this joint's): the ``max`` bounds are drawn on the error plot, with the
    samples beyond them in red; a failed ``limit_hits`` check marks its stream's samples
    at a limit in red.
    """
    import matplotlib as mpl

    mpl.use("Agg", force=False)
    from matplotlib.figure import Figure

    t = comparison.grid - comparison.grid[0]
    fig = Figure(figsize=(8, 4.5), dpi=100)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1.4]})
    for stream in comparison.streams:
        colour, style, label = STYLE.get(stream, ("gray", ":", stream))
        top.plot(t, comparison.positions[stream][joint.joint], style, color=colour, label=label,
                 linewidth=1.4)
    for bound in (joint.lower, joint.upper):
        if math.isfinite(bound):
            top.axhline(bound, color="red", linewidth=0.8, alpha=0.5)
    for check in checks:
        if check.metric == "limit_hits" and check.outcome is Outcome.FAILED and check.stream:
            p = comparison.positions[check.stream][joint.joint]
            with np.errstate(invalid="ignore"):
                at_limit = (p <= joint.lower + 1e-3) | (p >= joint.upper - 1e-3)
            _mark_crossings(top, t, p, at_limit, f"{check.stream} at a limit")
    top.set_ylabel("position")
    top.set_title(joint.joint)
    top.legend(loc="best", fontsize=8)
    top.grid(alpha=0.3)
    crossed = False  # one legend entry for the red marks
    for e in joint.errors:
        d = comparison.positions[e.a][joint.joint] - comparison.positions[e.b][joint.joint]
        colour = PAIR_COLOURS.get((e.a, e.b), "gray")
        bottom.plot(t, d, linewidth=1.0, color=colour, label=f"{e.a} - {e.b}")
        for check in checks:
            if check.metric == "max" and check.pair == (e.a, e.b) and math.isfinite(check.bound):
                for sign in (1.0, -1.0):
                    bottom.axhline(sign * check.bound, color=colour, linewidth=0.8,
                                   linestyle=":")
                with np.errstate(invalid="ignore"):
                    beyond = np.abs(d) > check.bound
                _mark_crossings(bottom, t, d, beyond, "" if crossed else "beyond its max bound")
                crossed = crossed or bool(np.any(beyond))
    bottom.set_ylabel("error")
    bottom.set_xlabel("time (s)")
    bottom.legend(loc="best", fontsize=7)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    return path


def _table(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    pairs = [(e.a, e.b) for e in comparison.joints[0].errors] if comparison.joints else []
    header = ["joint"]
    for a, b in pairs:
        header += [f"RMS {a}-{b}", f"max {a}-{b}", f"lag {a} vs {b} (ms)"]
    header += [f"limit hits ({', '.join(comparison.streams)})"]
    rows = []
    for j in comparison.joints:
        row = [j.joint]
        for a, b in pairs:
            e = j.error(a, b)
            row += ([_fmt(e.rms), _fmt(e.max_abs), _fmt(e.lag, 1000.0, 3)] if e else ["-"] * 3)
        row.append(" / ".join(str(j.limit_hits[s]) for s in comparison.streams))
        rows.append(row)
    return header, rows


def _time_bases(comparison: Comparison) -> str:
    """Which streams are placed at their header stamps, which at their receive times."""
    parts = []
    for base, what in (("stamp", "at their header stamps"), ("log", "at their receive times")):
        names = [s for s in comparison.streams if comparison.time_bases.get(s, "log") == base]
        if names:
            parts.append(f"{', '.join(names)} {what}")
    notes = "".join(f" {s}: {note}." for s, note in comparison.time_base_notes.items())
    return "Samples placed: " + "; ".join(parts) + "." + notes


def _left_out(comparison: Comparison) -> str:
    """The joints not compared, and why."""
    if not comparison.left_out:
        return ""
    return " Left out: " + "; ".join(
        f"{lo.joint} ({lo.reason}{', named by the command or the model' if lo.expected else ''})"
        for lo in comparison.left_out) + "."


def _summary(comparison: Comparison) -> str:
    return (f"{len(comparison.joints)} joints, {comparison.duration:.2f} s compared at "
            f"{1.0 / float(np.median(np.diff(comparison.grid))):.0f} Hz; streams: "
            f"{', '.join(comparison.streams)}.{_left_out(comparison)} {_time_bases(comparison)}"
            " Errors in rad "
            "(or m); lag: shift of the second stream that best matches the first (offset "
            "removed), positive = the first follows.")


def _anchor(section: str, joint: str | None) -> str:
    return f"{_slug(section)}--{_slug(joint)}" if joint else f"run--{_slug(section)}"


def _verdict_rows(sections: Sequence[RunSection]) -> list[tuple[RunSection, Check]]:
    """The checks that did not pass, in section order."""
    return [(s, c) for s in sections if s.verdict is not None for c in s.verdict.checks
            if c.outcome in {Outcome.FAILED, Outcome.NOT_JUDGED}]


def _overall(sections: Sequence[RunSection]) -> Outcome | None:
    judged = [s.verdict.outcome for s in sections if s.verdict is not None]
    return combine(judged) if judged else None


def _counts(sections: Sequence[RunSection]) -> str:
    checks = [c for s in sections if s.verdict is not None for c in s.verdict.checks]
    parts = [f"{sum(c.outcome is o for c in checks)} {o.value}" for o in Outcome]
    return f"{len(checks)} checks: " + ", ".join(parts)


def _plots(sections: Sequence[RunSection], plot_dirs: Sequence[Path]) -> list[tuple[Path, ...]]:
    out: list[tuple[Path, ...]] = []
    for section, plot_dir in zip(sections, plot_dirs, strict=True):
        if section.comparison is None:
            out.append(())
            continue
        plot_dir.mkdir(parents=True, exist_ok=True)
        checks = section.verdict.checks if section.verdict is not None else ()
        out.append(tuple(
            plot_joint(section.comparison, j, plot_dir / f"joint_{_slug(j.joint)}.png",
                       [c for c in checks if c.joint == j.joint])
            for j in section.comparison.joints))
    return out


def _markdown(sections: Sequence[RunSection], title: str, out_dir: Path,
              plots: Sequence[tuple[Path, ...]], *, titled: bool) -> str:
    lines = [f"# {title}", ""]
    overall = _overall(sections)
    if overall is not None:
        lines += [f"**Verdict: {overall.value.upper()}** ({_counts(sections)})", ""]
        for s, c in _verdict_rows(sections):
            where = f"#{_anchor(s.name, c.joint if c.joint else None)}"
            prefix = f"{s.name}: " if titled else ""
            lines.append(f"- [{prefix}{c.message}]({where})")
        lines.append("")
    for section, section_plots in zip(sections, plots, strict=True):
        if titled:
            outcome = f": {section.verdict.outcome.value}" if section.verdict else ""
            lines += [f"<a id='{_anchor(section.name, None)}'></a>", "",
                      f"## {section.name}{outcome}", ""]
        if section.comparison is not None:
            lines += [_summary(section.comparison), ""]
        lines += [*[f"- {n}" for n in section.notes], ""]
        if section.comparison is None:
            continue
        header, rows = _table(section.comparison)
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
        level = "###" if titled else "##"
        for j, p in zip(section.comparison.joints, section_plots, strict=True):
            link = p.relative_to(out_dir).as_posix()
            lines += [f"<a id='{_anchor(section.name, j.joint)}'></a>", "",
                      f"{level} {j.joint}", "", f"![{j.joint}]({link})", ""]
    return "\n".join(lines)


def _html_verdict(sections: Sequence[RunSection], *, titled: bool) -> list[str]:
    """The verdict box of the HTML page, with a row per check not passed (or nothing)."""
    esc = html.escape
    out: list[str] = []
    overall = _overall(sections)
    if overall is not None:
        colour = VERDICT_COLOURS.get(overall, "black")
        out.append(f"<div class='verdict' id='verdict' style='border-color:{colour}'>"
                   f"<h2 style='color:{colour}'>Verdict: {esc(overall.value.upper())}</h2>"
                   f"<p>{esc(_counts(sections))}</p>")
        rows = _verdict_rows(sections)
        if rows:
            out.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in (
                *(["run"] if titled else []), "joint", "check", "outcome", "value", "bound",
                "beyond the bound by", "criterion")) + "</tr>")
            for s, c in rows:
                target = _anchor(s.name, c.joint)
                cells = [*([f"<a href='#{_anchor(s.name, None)}'>{esc(s.name)}</a>"]
                           if titled else []),
                         f"<a href='#{target}'>{esc(c.joint)}</a>" if c.joint else "(run)",
                         esc(c.name), esc(c.outcome.value) + (f": {esc(c.reason)}"
                                                             if c.reason else ""),
                         _fmt(c.value), _fmt(c.bound),
                         _fmt(c.excess) if c.outcome is Outcome.FAILED else "-", esc(c.where)]
                out.append("<tr>" + "".join(f"<td>{x}</td>" for x in cells) + "</tr>")
            out.append("</table>")
        out.append("</div>")
    return out


def _html(sections: Sequence[RunSection], title: str,
          plots: Sequence[tuple[Path, ...]], *, titled: bool, view: str | None = None) -> str:
    esc = html.escape
    css = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
           "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}"
           "td:first-child{text-align:left}img{max-width:100%}"
           ".verdict{border:3px solid;padding:0.5em 1em;margin-bottom:1.5em}"
           ".verdict td{text-align:left}.top{display:flex;flex-wrap:wrap;gap:1.5em}"
           ".top>*{flex:1 1 30em}.view iframe{width:100%;height:26em;border:1px solid #bbb}")
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
             f"<style>{css}</style></head><body>", f"<h1>{esc(title)}</h1>"]
    if view is not None:  # the 3-D replay beside the verdict (which closes the row)
        parts.append("<div class='top'><div>")
    parts += _html_verdict(sections, titled=titled)
    if view is not None:
        parts.append(f"</div><div class='view'><iframe src='{esc(view)}' title='3-D replay'>"
                     f"</iframe><p><a href='{esc(view)}'>3-D replay</a>: the simulation solid,"
                     " the real robot a ghost coloured by each joint's error (skel-ros view)"
                     "</p></div></div>")
    for section, section_plots in zip(sections, plots, strict=True):
        if titled:
            outcome = f": {section.verdict.outcome.value}" if section.verdict else ""
            parts.append(f"<h2 id='{_anchor(section.name, None)}'>"
                         f"{esc(section.name)}{esc(outcome)}</h2>")
        if section.comparison is not None:
            parts.append(f"<p>{esc(_summary(section.comparison))}</p>")
        if section.notes:
            parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in section.notes) + "</ul>")
        if section.comparison is None:
            continue
        header, table = _table(section.comparison)
        parts.append("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in table]
        parts.append("</table>")
        level = "h3" if titled else "h2"
        for j, p in zip(section.comparison.joints, section_plots, strict=True):
            data = base64.b64encode(p.read_bytes()).decode("ascii")
            parts.append(f"<{level} id='{_anchor(section.name, j.joint)}'>{esc(j.joint)}"
                         f"</{level}><img alt='{esc(j.joint)}' "
                         f"src='data:image/png;base64,{data}'>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _write(sections: Sequence[RunSection], out_dir: Path, plot_dirs: Sequence[Path], *,
           title: str, fmt: str, titled: bool, view: str | None = None) -> Report:
    if fmt not in {"html", "md"}:
        raise ValueError(f"report format must be 'html' or 'md', got {fmt!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = _plots(sections, plot_dirs)
    if fmt == "md":
        page = out_dir / "report.md"
        page.write_text(_markdown(sections, title, out_dir, plots, titled=titled),
                        encoding="utf-8")
    else:
        page = out_dir / "report.html"
        page.write_text(_html(sections, title, plots, titled=titled, view=view),
                        encoding="utf-8")
    return Report(page, tuple(p for section_plots in plots for p in section_plots))


def write_report(comparison: Comparison, out_dir: Path, *,
                 title: str = "sim-to-real comparison", fmt: str = "html",
                 notes: tuple[str, ...] = (), verdict: Verdict | None = None,
                 view: str | None = None) -> Report:
    """Write the plots and the page (``fmt`` ``"html"`` or ``"md"``) into ``out_dir``.

    ``verdict``: the run's checks against criteria; the page then opens with it.
    ``view``: a page beside it (relative to ``out_dir``: ``skel-ros view``'s exported
    replay) that the HTML page shows at the top, beside the verdict.
    """
    section = RunSection("run", comparison, verdict, notes)
    return _write([section], out_dir, [out_dir], title=title, fmt=fmt, titled=False,
                  view=view if fmt == "html" else None)


def write_runs_report(sections: Sequence[RunSection], out_dir: Path, *,
                      title: str = "sim-to-real comparison", fmt: str = "html",
                      view: str | None = None) -> Report:
    """One page for several runs: the overall verdict, then a section per run.

    Each run's plots go to ``out_dir / <run name>/``. Run names must differ. ``view``: as
    :func:`write_report`'s (one run that stopped half-way: its recording's replay).
    """
    names = [_slug(s.name) for s in sections]
    if len(set(names)) != len(names):
        raise ValueError(f"run names must differ: {[s.name for s in sections]}")
    return _write(sections, out_dir, [out_dir / n for n in names], title=title, fmt=fmt,
                  titled=True, view=view if fmt == "html" else None)
