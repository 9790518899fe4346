"""Reports a CI job reads: JUnit XML and JSON, next to the HTML report.

* JUnit (:func:`write_junit`): one ``<testsuite>`` per run (trajectory), one
  ``<testcase>`` per joint and criterion (``classname`` ``sim_to_real.<run>.<joint>``,
  ``name`` the check, e.g. ``max error sim-real``); a failed check is a ``<failure>``,
  one that could not be judged an ``<error>``, a skipped one ``<skipped>``; the message
  holds the measured value and the bound. Written with :mod:`xml.etree.ElementTree`.
* JSON (:func:`write_json`): the overall verdict, the criteria as read, and per run every
  metric (per joint and pair: RMS, max, lag; limit hits; duration, stream rates) and
  every check. Numbers that could not be measured are ``null``.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

from skel_ros.analysis.verdict import Check, Outcome, combine

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from skel_ros.analysis.criteria import Criteria
    from skel_ros.analysis.metrics import Comparison
    from skel_ros.analysis.report import RunSection

__all__ = ["gate_outcome", "write_json", "write_junit"]

JSON_FORMAT = 1  # bumped when a key changes meaning


def gate_outcome(sections: Sequence[RunSection]) -> Outcome:
    """The overall outcome of the runs; a run without a verdict is not judged."""
    return combine(s.verdict.outcome if s.verdict is not None else Outcome.NOT_JUDGED
                   for s in sections)


def _number(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _testcase(suite: ET.Element, run: str, check: Check) -> None:
    classname = f"sim_to_real.{run}" + (f".{check.joint}" if check.joint else "")
    case = ET.SubElement(suite, "testcase", classname=classname, name=check.name, time="0")
    message = check.message
    if check.outcome is Outcome.FAILED:
        ET.SubElement(case, "failure", message=message, type="bound").text = message
    elif check.outcome is Outcome.NOT_JUDGED:
        ET.SubElement(case, "error", message=message, type="not judged").text = message
    elif check.outcome is Outcome.SKIPPED:
        ET.SubElement(case, "skipped", message=message)
    else:
        ET.SubElement(case, "system-out").text = message


def write_junit(path: Path, sections: Sequence[RunSection]) -> Path:
    """Write the checks of every run as JUnit XML; returns ``path``."""
    root = ET.Element("testsuites", name="sim-to-real")
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for section in sections:
        checks = (section.verdict.checks if section.verdict is not None else
                  (Check("criteria", None, math.nan, math.nan, upper=True,
                         outcome=Outcome.NOT_JUDGED, reason="no criteria given"),))
        counts = {"tests": len(checks),
                  "failures": sum(c.outcome is Outcome.FAILED for c in checks),
                  "errors": sum(c.outcome is Outcome.NOT_JUDGED for c in checks),
                  "skipped": sum(c.outcome is Outcome.SKIPPED for c in checks)}
        suite = ET.SubElement(root, "testsuite", {"name": section.name,
                                                  **{k: str(v) for k, v in counts.items()}})
        for check in checks:
            _testcase(suite, section.name, check)
        for k, v in counts.items():
            totals[k] += v
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def _check_dict(check: Check) -> dict[str, Any]:
    return {"joint": check.joint, "check": check.name, "metric": check.metric,
            "pair": list(check.pair) if check.pair else None, "stream": check.stream,
            "value": _number(check.value), "bound": _number(check.bound),
            "bound_is": "max" if check.upper else "min", "outcome": check.outcome.value,
            "excess": _number(check.excess) if check.outcome is Outcome.FAILED else None,
            "reason": check.reason, "criterion": check.where, "message": check.message}


def _comparison_dict(comparison: Comparison) -> dict[str, Any]:
    return {
        "duration": comparison.duration, "streams": list(comparison.streams),
        "rates": {k: _number(v) for k, v in comparison.rates.items()},
        # stream -> "stamp" (placed at its header stamps) or "log" (at its receive times)
        "time_bases": dict(comparison.time_bases),
        # stream -> why it is not at its stamps (only streams whose stamps were refused)
        "time_base_notes": dict(comparison.time_base_notes),
        # joints not compared: the measured streams without them, and whether the command
        # or the model names them
        "left_out": [{"joint": lo.joint, "streams": list(lo.streams), "expected": lo.expected}
                     for lo in comparison.left_out],
        "joints": [{
            "joint": j.joint, "lower": _number(j.lower), "upper": _number(j.upper),
            "limit_hits": dict(j.limit_hits),
            "errors": [{"a": e.a, "b": e.b, "rms": _number(e.rms), "max": _number(e.max_abs),
                        "lag": _number(e.lag)} for e in j.errors],
        } for j in comparison.joints],
    }


def write_json(path: Path, sections: Sequence[RunSection], criteria: Criteria | None) -> Path:
    """Write every metric, the criteria and the verdict as JSON; returns ``path``."""
    data = {
        "format": JSON_FORMAT,
        "verdict": gate_outcome(sections).value if criteria is not None else None,
        "criteria": criteria.as_dict() if criteria is not None else None,
        "runs": [{
            "name": s.name,
            "verdict": s.verdict.outcome.value if s.verdict is not None else None,
            "notes": list(s.notes),
            "metrics": _comparison_dict(s.comparison) if s.comparison is not None else None,
            "checks": [_check_dict(c) for c in s.verdict.checks] if s.verdict else [],
        } for s in sections],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return path
