"""``skel-ros sweep``: many judged sim-to-real runs from one spec (docs/sweep.md).

Exit status (:mod:`skel_ros.cli.exit_codes`): 0 every trial passed, 3 one failed, 4 one
could not be judged or has no result, 1 a bad spec (``spec.yaml:7: ...``), 2 a bad
command line or a missing extra, 130 Ctrl-C (the trials that ended keep their result:
the same command runs the others).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli import exit_codes, gate
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    from skel_ros.sweep import Spec


def _cmd_sweep(args: argparse.Namespace) -> int:
    from skel_ros.analysis.errors import CriteriaError
    from skel_ros.model.truth import TruthError
    from skel_ros.sweep import MissingExtraError, SpecError, SweepError, load_spec, run_sweep
    from skel_ros.sweep.report import write_reports

    if args.address and args.backend != "ray":
        gate.error("--address is the address of a Ray cluster: give --backend ray too")
        return exit_codes.USAGE
    try:
        spec = load_spec(args.spec)
    except (SpecError, TruthError, CriteriaError) as exc:
        gate.error(exc)
        return exit_codes.ERROR
    out = Path(args.out)
    if not args.report_only:
        status = _run(args, spec, out, run_sweep, (MissingExtraError, SweepError))
        if status is not None:
            return status
    try:
        sweep, paths = write_reports(spec, out)
    except OSError as exc:
        gate.error(f"{out}: {exc}")
        return exit_codes.ERROR
    rate = sweep.pass_rate
    print(f"report: {paths[0].resolve()}  (summary.json, junit.xml beside it)")
    print(f"verdict: {sweep.outcome.value.upper()} ({sweep.count('passed')} of"
          f" {len(sweep.trials)} trials passed, {sweep.count('failed')} failed,"
          f" {sweep.count('not judged')} not judged, {sweep.count('not run')} without a"
          " result" + (f"; pass rate {100 * rate:.1f} %" if math.isfinite(rate) else "")
          + ")")
    return exit_codes.for_outcome(sweep.outcome)


def _run(args: argparse.Namespace, spec: Spec, out: Path, run_sweep: Callable[..., object],
         errors: tuple[type[Exception], type[Exception]]) -> int | None:
    """Run the sweep's trials; an exit status when it could not end (None: it did)."""
    missing_extra, sweep_error = errors
    try:
        run_sweep(spec, out, backend=args.backend, workers=args.workers, address=args.address,
                  timeout=args.trial_timeout)
    except missing_extra as exc:
        gate.error(exc)
        return exit_codes.USAGE
    except sweep_error as exc:
        gate.error(exc)
        return exit_codes.ERROR
    except KeyboardInterrupt:
        print("stopped: the trials that ended keep their result; run the same command to"
              " run the others")
        return exit_codes.INTERRUPTED
    except OSError as exc:
        gate.error(f"{out}: {exc}")
        return exit_codes.ERROR
    return None


def _count(text: str) -> int:
    """``--workers``: an integer >= 1."""
    import argparse  # at run time here only (the module imports it for types)

    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _seconds(text: str) -> float:
    """``--trial-timeout``: a finite number of seconds > 0."""
    import argparse  # at run time here only (the module imports it for types)

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text!r}")
    return value


def register(sub: Any) -> None:  # noqa: ANN401 - argparse subparsers action
    """Add ``sweep`` to the ``skel-ros`` parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "sweep", help="run many judged sim-to-real trials from a spec (axes: models,"
                      " trajectories, truths, engines, seeds), here or on a Ray cluster")
    p.add_argument("spec", type=input_file, help="the sweep spec YAML (docs/sweep.md)")
    p.add_argument("-o", "--out", default="out/sweep",
                   help="output folder: trials/<id>/ each, report.html, summary.json,"
                        " junit.xml (default: %(default)s); run again to resume")
    # skel_ros.sweep.BACKENDS, not imported here (no import of the sweep before its use)
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local: a pool of trial processes on this machine; ray: Ray tasks"
                        " (pip install skel_ros[ray]) (default: %(default)s)")
    p.add_argument("--workers", type=_count,
                   help="trials at once (default: one per CPU); with --backend ray and no"
                        " --address, the CPUs of the local Ray cluster started")
    p.add_argument("--address",
                   help="--backend ray: an existing cluster's address (HOST:PORT or auto);"
                        " default: start one on this machine, bound to 127.0.0.1")
    p.add_argument("--trial-timeout", type=_seconds, default=600.0, metavar="SECONDS",
                   help="a trial still running after this is stopped and not judged"
                        " (default: %(default)g)")
    p.add_argument("--report-only", action="store_true",
                   help="run nothing: write the report of the results there are")
    p.set_defaults(func=_cmd_sweep)
