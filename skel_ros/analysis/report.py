"""The comparison report: one PNG per joint and a Markdown or HTML page.

The HTML page embeds its plots (``data:`` URIs), so the single file opens anywhere; the
Markdown page links the PNG files next to it.
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pathlib import Path

    from skel_ros.analysis.metrics import Comparison, JointComparison

STYLE = {  # stream -> (colour, line style, label)
    "command": ("black", "--", "command"),
    "sim": ("tab:blue", "-", "simulation"),
    "real": ("tab:orange", "-", "hardware"),
}


@dataclass(frozen=True)
class Report:
    """Where a written report is."""

    page: Path
    plots: tuple[Path, ...]


def _fmt(x: float, scale: float = 1.0, digits: int = 4) -> str:
    return "-" if not math.isfinite(x) else f"{x * scale:.{digits}g}"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "joint"


def plot_joint(comparison: Comparison, joint: JointComparison, path: Path) -> Path:
    """Write one joint's plot: positions against time, and the errors below."""
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
    top.set_ylabel("position")
    top.set_title(joint.joint)
    top.legend(loc="best", fontsize=8)
    top.grid(alpha=0.3)
    for e in joint.errors:
        d = comparison.positions[e.a][joint.joint] - comparison.positions[e.b][joint.joint]
        bottom.plot(t, d, linewidth=1.0, label=f"{e.a} - {e.b}")
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


def write_report(comparison: Comparison, out_dir: Path, *, title: str = "sim-to-real comparison",
                 fmt: str = "html", notes: tuple[str, ...] = ()) -> Report:
    """Write the plots and the page (``fmt`` ``"html"`` or ``"md"``) into ``out_dir``."""
    if fmt not in {"html", "md"}:
        raise ValueError(f"report format must be 'html' or 'md', got {fmt!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = tuple(plot_joint(comparison, j, out_dir / f"joint_{_slug(j.joint)}.png")
                  for j in comparison.joints)
    header, rows = _table(comparison)
    summary = (f"{len(comparison.joints)} joints, {comparison.duration:.2f} s compared at "
               f"{1.0 / float(np.median(np.diff(comparison.grid))):.0f} Hz; streams: "
               f"{', '.join(comparison.streams)}. Errors in rad (or m); lag: shift of the second "
               "stream that best matches the first, positive = the first follows.")
    if fmt == "md":
        lines = [f"# {title}", "", summary, "", *[f"- {n}" for n in notes], "",
                 "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
        for j, p in zip(comparison.joints, plots, strict=True):
            lines += [f"## {j.joint}", "", f"![{j.joint}]({p.name})", ""]
        page = out_dir / "report.md"
        page.write_text("\n".join(lines), encoding="utf-8")
    else:
        esc = html.escape
        css = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
               "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}"
               "td:first-child{text-align:left}img{max-width:100%}")
        parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title>",
                 f"<style>{css}</style></head><body>",
                 f"<h1>{esc(title)}</h1><p>{esc(summary)}</p>"]
        if notes:
            parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
        parts.append("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows]
        parts.append("</table>")
        for j, p in zip(comparison.joints, plots, strict=True):
            data = base64.b64encode(p.read_bytes()).decode("ascii")
            parts.append(f"<h2>{esc(j.joint)}</h2><img alt='{esc(j.joint)}' "
                         f"src='data:image/png;base64,{data}'>")
        parts.append("</body></html>")
        page = out_dir / "report.html"
        page.write_text("\n".join(parts), encoding="utf-8")
    return Report(page, plots)
