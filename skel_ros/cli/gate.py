"""What ``compare``, ``sim-to-real`` and ``demo`` share as a gate.

Criteria in; the report, JUnit, JSON and an exit status (:mod:`skel_ros.cli.exit_codes`) out.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from skel_ros.cli import exit_codes
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence

    from skel_ros.analysis.criteria import Criteria
    from skel_ros.analysis.report import RunSection

MAX_LISTED = 20  # failed checks printed; the reports hold them all


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``--criteria``, ``--junit``, ``--json``."""
    p.add_argument("--criteria", metavar="YAML", type=input_file,
                   help="pass/fail criteria (see docs/sim_to_real.md): exit 0 when all hold,"
                        f" {exit_codes.FAILED} when one fails, {exit_codes.NOT_JUDGED} when the"
                        " run cannot be judged")
    p.add_argument("--junit", metavar="FILE",
                   help="also write the checks as JUnit XML (one test case per joint and"
                        " criterion)")
    p.add_argument("--json", metavar="FILE",
                   help="also write every metric, the criteria and the verdict as JSON")


def arguments_agree(args: argparse.Namespace) -> bool:
    """False (and says why) when ``--junit`` comes without ``--criteria``: nothing to test."""
    if args.junit and not args.criteria:
        error("--junit needs --criteria: its test cases are the criteria")
        return False
    return True


def load(args: argparse.Namespace) -> Criteria | None:
    """The criteria named by ``--criteria`` (None without it).

    Raises:
        CriteriaError: the file cannot be read or is malformed (``file:line``).
    """
    if not args.criteria:
        return None
    from skel_ros.analysis.criteria import load_criteria
    from skel_ros.resources import resolve

    return load_criteria(resolve(args.criteria))


def run_names(paths: Sequence[Path]) -> list[str]:
    """A distinct name per run: the file's stem.

    With its folder's name when stems repeat (``a/run.mcap``, ``b/run.mcap``), then numbered.
    """
    stems = [p.stem or "run" for p in paths]
    names: list[str] = []
    for path, stem in zip(paths, stems, strict=True):
        base = f"{path.parent.name}_{stem}" if stems.count(stem) > 1 and path.parent.name \
            else stem
        name, k = base, 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.append(name)
    return names


def finish(sections: Sequence[RunSection], out: Path, criteria: Criteria | None, *,
           title: str, fmt: str, junit: str | None = None, json: str | None = None,
           write: Callable[[str], object] = print, view: str | None = None) -> int:
    """Write the report (and the JUnit/JSON files), say the verdict; the exit status.

    One run: the report as before (plots next to the page; ``view``, a page in ``out``,
    shown beside the verdict, also when the run was not compared); several: one section
    each.
    Without criteria the status is OK, or NOT_JUDGED when a run could not be compared.
    """
    from skel_ros.analysis.ci_reports import gate_outcome, write_json, write_junit
    from skel_ros.analysis.report import write_report, write_runs_report
    from skel_ros.analysis.verdict import Outcome

    single = sections[0] if len(sections) == 1 else None
    if single is not None and single.comparison is not None:
        s = single
        report = write_report(single.comparison, out, title=title, fmt=fmt, notes=s.notes,
                              verdict=s.verdict, view=view)
    else:
        report = write_runs_report(sections, out, title=title, fmt=fmt,
                                   view=view if single is not None else None)
    write(f"report: {report.page.resolve()}")
    if junit:
        write(f"JUnit: {write_junit(Path(junit), sections).resolve()}")
    if json:
        write(f"JSON: {write_json(Path(json), sections, criteria).resolve()}")
    if criteria is None:
        missing = [s.name for s in sections if s.comparison is None]
        return exit_codes.NOT_JUDGED if missing else exit_codes.OK
    outcome = gate_outcome(sections)
    checks = [(s, c) for s in sections if s.verdict is not None for c in s.verdict.checks]
    bad = [(s, c) for s, c in checks if c.outcome in {Outcome.FAILED, Outcome.NOT_JUDGED}]
    write(f"verdict: {outcome.value.upper()} ({len(checks) - len(bad)} of {len(checks)} checks"
          f" held; criteria {criteria.source})")
    for s, c in bad[:MAX_LISTED]:
        write(f"  {s.name}: {c.message}" if len(sections) > 1 else f"  {c.message}")
    if len(bad) > MAX_LISTED:
        write(f"  ... and {len(bad) - MAX_LISTED} more (see the report)")
    return exit_codes.for_outcome(outcome)


def error(message: object) -> None:
    """Say an error the way every ``skel-ros`` command does."""
    print(f"error: {message}", file=sys.stderr)
