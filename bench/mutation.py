"""Mutation testing of the safety-critical modules (issue 35), with mutmut 3.

Mutation testing changes the code under test in small ways (``<`` to ``<=``, ``+`` to
``-``, a constant to another, ``and`` to ``or``, an argument dropped, a return value
replaced by ``None`` ...), one change per *mutant*, and runs the tests that guard that code
against each mutant. A mutant the tests notice (a test fails, errors or runs out of time)
is *killed*; one they do not notice *survived*: either the tests miss a behaviour, or the
change makes no observable difference (an *equivalent* mutant). The score is the share of
mutants killed. docs/testing.md explains the results and names every survivor.

How it runs here: each target below (a module, or the wire-encoding functions of one) is
staged in ``out/mutation/<target>/``: a copy of ``skel_ros/``, ``test/`` and the files the
tests read, with a ``pyproject.toml`` that configures mutmut for that target alone.
mutmut copies the package once more into ``out/mutation/<target>/mutants/`` and writes
every mutant there (behind a trampoline that picks the mutant by an environment variable);
nothing in the working tree is changed. The tests of the target's subset are first run
once to learn which test calls which function; each mutant is then run against only the
tests that call the mutated function, stopping at the first failure, in one forked
worker (``--max-children 1``), at the lowest CPU priority (``nice 19``, set here).

Counting: *killed* = a test failed (exit 1/3), or the mutant ran out of its CPU-time
budget (timeout; an infinite loop is a behaviour the tests noticed), or crashed the
worker (segfault). *Survived* = the tests passed. *No test* = no test of the subset calls
the function, so the mutant was never tried: it counts as not killed. Score =
killed / (killed + survived + no test + suspicious).

mutmut 3 mutates the bodies of functions and methods only: module-level constants,
class bodies and decorators are not mutated.

Usage (from the repository root; under ``nice -n 19`` on a shared machine):

    nice -n 19 .venv/bin/python bench/mutation.py                 # every target, every mutant
    nice -n 19 .venv/bin/python bench/mutation.py --target safety # one target
    nice -n 19 .venv/bin/python bench/mutation.py --sample 150 --seed 1   # <= 150 a target
    .venv/bin/python bench/mutation.py --list                     # targets and their tests
    .venv/bin/python bench/mutation.py --report                   # last results again

Results: a table on stdout (killed / total and score per target, then every survivor with
file:line and its diff) and ``out/mutation/report.json``. Exit status 0 when every target
ran, whatever the score (``--fail-under PERCENT`` to gate on it).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "out" / "mutation"
PYTHON = sys.executable


@dataclass(frozen=True)
class Target:
    """A set of source files to mutate and the tests that guard them."""

    files: tuple[str, ...]
    """Source files (repository-relative) whose mutants are run."""
    tests: tuple[str, ...]
    """The test subset (repository-relative files) that guards them."""
    functions: tuple[str, ...] = ()
    """If given, only mutants of these functions (``name`` or ``Class.name``) are run."""
    why: str = ""
    """What the target is, for the report."""
    sample: int | None = None
    """Run a seeded sample of at most this many of its mutants by default (a target whose
    every mutant would not run in the time this machine allows); ``--all`` runs them all."""


# The CiA 402 driver has no separate codec module: its wire encoding (statusword states,
# COB-IDs, unit scaling, the raw set-point, the PDO fill and decode) lives in bus.py
# beside the NMT/SDO state machine. Only those functions are mutated.
CIA402_WIRE_FUNCTIONS = (
    "state_of", "_mode_name", "predefined_cob_id", "Units.position", "Units.velocity",
    "Units.effort", "_positive", "_count", "units_for", "op_mode_for", "_cob_ids",
    "Cia402Bus._raw_target", "Cia402Bus._fill_rpdo", "Cia402Bus._tpdo_callback",
)

TARGETS: dict[str, Target] = {
    "limits": Target(
        files=("skel_ros/model/limits.py",),
        tests=("test/model/test_limits.py", "test/model/test_limits_edges.py",
               "test/model/test_limits_messages.py",
               "test/hardware/test_safety.py",
               "test/hardware/test_limiter_steps.py", "test/hardware/test_reenable_bound.py",
               "test/hardware/test_limiter_braking.py", "test/core/test_robot_core.py"),
        why="joint limits, the rate limiter and the limits gate every command passes",
        sample=250),
    "core": Target(
        files=tuple(sorted(p.relative_to(REPO).as_posix()
                           for p in (REPO / "skel_ros" / "core").glob("*.py"))),
        tests=("test/core/test_commanders.py", "test/core/test_robot_core.py",
               "test/core/test_runner.py", "test/core/test_pacers.py",
               "test/core/test_tolerances.py", "test/core/test_runner_batches.py",
               "test/core/test_commanders_window.py", "test/core/test_trajectory_outcomes.py",
               "test/core/test_goal_messages.py", "test/core/test_core_paths.py",
               "test/core/test_runner_timing.py"),
        why="the robot core: command arbitration, trajectory following, command timeout",
        sample=250),
    "safety": Target(
        files=("skel_ros/hardware/safety.py",),
        tests=("test/hardware/test_safety.py", "test/hardware/test_limiter_edges.py",
               "test/hardware/test_reenable_bound.py", "test/hardware/test_limiter_steps.py",
               "test/hardware/test_limiter_braking.py"),
        why="the motion limiter: braking at limits, the final guard"),
    "backend": Target(
        files=("skel_ros/hardware/backend.py",),
        tests=("test/hardware/test_manager.py", "test/hardware/test_config.py",
               "test/hardware/test_limiter_steps.py", "test/hardware/test_reenable_bound.py",
               "test/hardware/test_backend_paths.py", "test/hardware/test_mimic_hardware.py",
               "test/hardware/test_limits_on_wire.py", "test/hardware/can/test_manager_can.py",
               "test/hardware/test_backend_gaps.py", "test/hardware/test_backend_messages.py",
               "test/hardware/test_backend_more.py", "test/hardware/test_stream_feedforward.py",
               "test/hardware/test_backend_branches.py"),
        why="the hardware backend: enable / E-stop / faults / watchdog / reconnect",
        sample=120),
    "dynamixel": Target(
        files=("skel_ros/hardware/dynamixel/protocol.py",),
        tests=("test/hardware/dynamixel/test_protocol.py",
               "test/hardware/dynamixel/test_protocol_edges.py",
               "test/hardware/dynamixel/test_sdk_peer.py"),
        why="Dynamixel Protocol 2.0 packets: CRC, byte stuffing, instructions, parser"),
    "cia402": Target(
        files=("skel_ros/hardware/canopen402/bus.py",),
        tests=("test/hardware/can/test_cia402_encoding.py",
               "test/hardware/can/test_cia402_wire.py", "test/hardware/can/test_cia402.py",
               "test/hardware/can/test_velocity_scale.py"),
        functions=CIA402_WIRE_FUNCTIONS,
        why="CiA 402 wire encoding (the functions of CIA402_WIRE_FUNCTIONS)"),
    "mit": Target(
        files=("skel_ros/hardware/mit/codec.py",),
        tests=("test/hardware/can/test_mit_codec.py", "test/hardware/can/test_mit_codec_edges.py",
               "test/hardware/can/test_mit_peer.py", "test/hardware/can/test_mit_safety.py"),
        why="MIT-mode frame encoding and decoding"),
    "metrics": Target(
        files=("skel_ros/analysis/metrics.py",),
        tests=("test/analysis/test_metrics.py", "test/analysis/test_verdict.py",
               "test/analysis/test_engine_streams.py", "test/analysis/test_sample_times.py",
               "test/analysis/test_metrics_edges.py", "test/analysis/test_reversal_error.py"),
        why="sim-to-real metrics: RMS / max error, lag, limit hits"),
    "verdict": Target(
        files=("skel_ros/analysis/verdict.py",),
        tests=("test/analysis/test_verdict.py", "test/analysis/test_verdict_checks.py",
               "test/analysis/test_engine_streams.py", "test/analysis/test_ci_reports.py",
               "test/analysis/test_reversal_error.py"),
        why="the pass / fail verdict on a comparison"),
    "criteria": Target(
        files=("skel_ros/analysis/criteria.py",),
        tests=("test/analysis/test_criteria.py", "test/analysis/test_criteria_files.py",
               "test/analysis/test_verdict.py", "test/analysis/test_engine_streams.py"),
        why="the acceptance criteria a verdict applies"),
}

SAFETY_CRITICAL = (
    "skel_ros/model/limits.py", "skel_ros/core", "skel_ros/hardware/safety.py",
    "skel_ros/hardware/backend.py", "skel_ros/hardware/dynamixel/protocol.py",
    "skel_ros/hardware/canopen402/bus.py", "skel_ros/hardware/mit/codec.py",
    "skel_ros/analysis/metrics.py", "skel_ros/analysis/verdict.py",
    "skel_ros/analysis/criteria.py",
)
"""The modules issue 35 names; test/test_mutation_bench.py checks each is in a target."""

# What the staged copy holds besides skel_ros/ (the tests read some of these files).
STAGED = ("skel_ros", "test", "config", "examples", "resource", "launch", "package.xml",
          "setup.py", "setup.cfg")

KILLED = {"killed", "timeout", "segfault", "caught by type check"}
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests",
          34: "skipped", 36: "timeout", -24: "timeout", 24: "timeout", 152: "timeout",
          255: "timeout", -11: "segfault", -9: "segfault", 37: "caught by type check"}


def _status(code: int | None) -> str:
    if code is None:
        return "not checked"
    return STATUS.get(code, "suspicious")


@dataclass
class Result:
    """One target's outcome."""

    target: str
    generated: int
    tried: int
    counts: dict[str, int] = field(default_factory=dict)
    survivors: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def killed(self) -> int:
        return sum(n for s, n in self.counts.items() if s in KILLED)

    @property
    def score(self) -> float:
        return 100.0 * self.killed / self.tried if self.tried else float("nan")


# --- staging -------------------------------------------------------------------------------

def _toml_list(items: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def stage(name: str, target: Target) -> Path:
    """A fresh copy of the tree for ``target`` in out/mutation/<name>, configured for mutmut."""
    where = OUT / name
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.pyc")
    for item in STAGED:
        src = REPO / item
        if src.is_dir():
            shutil.copytree(src, where / item, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, where / item)
    config = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    config += "\n".join([
        "",
        "# Written by bench/mutation.py for this target only.",
        "[tool.mutmut]",
        'source_paths = ["skel_ros"]',
        f"only_mutate = {_toml_list(target.files)}",
        f"also_copy = {_toml_list([i for i in STAGED if i != 'skel_ros'])}",
        f"pytest_add_cli_args_test_selection = {_toml_list(target.tests)}",
        # The suite's own settings, but no cache, and one process (no xdist workers).
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-n", "0"]',
        "use_git_change_detection = false",
        "track_dependencies = false",
        "",
    ])
    (where / "pyproject.toml").write_text(config, encoding="utf-8")
    return where


def _in_stage(where: Path, *args: str, log: Path | None = None,
              ) -> subprocess.CompletedProcess[str]:
    """Run ``python *args`` in the staged copy at the lowest CPU priority."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MUTANT_UNDER_TEST")}
    command = [PYTHON, *args]
    if log is None:
        return subprocess.run(command, cwd=where, env=env, capture_output=True,  # noqa: S603
                              text=True, check=False, preexec_fn=lambda: os.nice(19))
    with log.open("a", encoding="utf-8") as out:
        return subprocess.run(command, cwd=where, env=env, stdout=out,  # noqa: S603
                              stderr=subprocess.STDOUT, text=True, check=False,
                              preexec_fn=lambda: os.nice(19))


# --- the parts that run inside a staged copy (mutmut reads its config from the cwd) ------

def _internal_generate() -> None:
    """Write every mutant of the target into mutants/ and print their names (JSON)."""
    from mutmut.__main__ import create_mutants
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, walk_mutatable_files

    Path("mutants").mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    create_mutants(1)
    names: list[str] = []
    for path in walk_mutatable_files():
        m = SourceFileMutationData(path=path)
        m.load()
        names.extend(m.exit_code_by_key)
    print("MUTANTS " + json.dumps(names))


def _internal_collect(wanted: list[str]) -> None:
    """Print each wanted mutant's path, exit code and diff (JSON)."""
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.utils.file_utils import walk_mutatable_files

    want = set(wanted)
    out = []
    for path in walk_mutatable_files():
        m = SourceFileMutationData(path=path)
        m.load()
        for key, code in m.exit_code_by_key.items():
            if key not in want:
                continue
            diff = ""
            if _status(code) not in KILLED:
                diff = get_diff_for_mutant(key, path=path)
            out.append({"name": key, "path": str(path), "code": code, "diff": diff})
    print("RESULTS " + json.dumps(out))


# --- selection and reporting --------------------------------------------------------------

def function_of(mutant: str) -> str:
    """``Class.method`` or ``function`` of a mutmut 3 mutant name."""
    mangled = mutant.partition("__mutmut_")[0].rpartition(".")[2]
    if "ǁ" in mangled:
        _, cls, func = mangled.split("ǁ", 2)
        return f"{cls}.{func}"
    return mangled[2:] if mangled.startswith("x_") else mangled


def select(names: list[str], target: Target, sample: int | None, seed: int) -> list[str]:
    """The mutants of ``names`` to run: the target's functions, then a seeded sample."""
    chosen = sorted(n for n in names if not target.functions or function_of(n) in target.functions)
    if sample is not None and len(chosen) > sample:
        chosen = sorted(random.Random(seed).sample(chosen, sample))  # noqa: S311
    return chosen


def _line_of(path: str, function: str, diff: str) -> int | None:
    """The line of ``path`` that the mutant changes (its first removed line), if found."""
    removed = [ln[1:].strip() for ln in diff.splitlines()
               if ln.startswith("-") and not ln.startswith("---")]
    if not removed:
        return None
    source = (REPO / path).read_text(encoding="utf-8")
    lines = source.splitlines()
    cls, _, func = function.rpartition(".")
    start, end = 1, len(lines)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and cls and node.name == cls:
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == func:
                    start, end = sub.lineno, sub.end_lineno or end
        elif (not cls and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and node.name == func and node.col_offset == 0):
            start, end = node.lineno, node.end_lineno or end
    for number in range(start, end + 1):
        if lines[number - 1].strip() == removed[0]:
            return number
    return start


def _short_diff(diff: str) -> str:
    changed = [ln for ln in diff.splitlines()
               if ln[:1] in "+-" and not ln.startswith(("---", "+++"))]
    return " / ".join(re.sub(r"\s+", " ", ln).strip() for ln in changed)


def run_target(name: str, target: Target, sample: int | None, seed: int) -> Result:
    """Stage, generate, run and collect one target."""
    began = time.monotonic()
    where = stage(name, target)
    log = where / "mutmut.log"
    gen = _in_stage(where, str(Path(__file__).resolve()), "_generate")
    match = re.search(r"^MUTANTS (.*)$", gen.stdout or "", re.MULTILINE)
    if gen.returncode or not match:
        sys.exit(f"[{name}] generating mutants failed:\n{gen.stdout}")
    names = json.loads(match.group(1))
    all_of_target = select(names, target, None, seed)
    chosen = select(names, target, sample, seed)
    print(f"[{name}] {len(names)} mutants generated, {len(all_of_target)} in the target's "
          f"functions, running {len(chosen)} (log: {log.relative_to(REPO)})", flush=True)
    for attempt in (1, 2):
        run = _in_stage(where, "-m", "mutmut", "run", "--max-children", "1", *chosen, log=log)
        if not run.returncode:
            break
        # The tests that drive emulators in real time can miss a deadline on a loaded
        # machine; mutmut stops when the unmutated code fails a test. Once more, then stop.
        print(f"[{name}] mutmut run failed (exit {run.returncode}), attempt {attempt}; "
              f"see {log}", flush=True)
    else:
        sys.exit(f"[{name}] mutmut run failed twice; see {log}")
    collected = _in_stage(where, str(Path(__file__).resolve()), "_collect",
                          json.dumps(chosen))
    match = re.search(r"^RESULTS (.*)$", collected.stdout or "", re.MULTILINE)
    if collected.returncode or not match:
        sys.exit(f"[{name}] reading the results failed:\n{collected.stdout}")
    result = Result(name, generated=len(all_of_target), tried=len(chosen))
    for item in json.loads(match.group(1)):
        status = _status(item["code"])
        result.counts[status] = result.counts.get(status, 0) + 1
        if status in KILLED:
            continue
        function = function_of(item["name"])
        line = _line_of(item["path"], function, item["diff"])
        result.survivors.append({
            "mutant": item["name"].rpartition(".")[2], "status": status,
            "where": f"{item['path']}:{line}", "function": function,
            "change": _short_diff(item["diff"]), "diff": item["diff"]})
    result.seconds = time.monotonic() - began
    return result


def print_report(results: list[Result], seed: int) -> None:
    """The per-target table, the total, then every survivor."""
    print()
    print("Mutation score (mutmut 3; killed = a test failed, or a timeout, or a crash;")
    print(f"tried < of: a random sample of the target's mutants, seed {seed}, was run)")
    print(f"{'target':<10} {'killed':>6} {'tried':>6} {'of':>6} {'score':>7} "
          f"{'survived':>8} {'no test':>7} {'time':>7}")
    for r in results:
        print(f"{r.target:<10} {r.killed:>6} {r.tried:>6} {r.generated:>6} {r.score:>6.1f}% "
              f"{r.counts.get('survived', 0):>8} {r.counts.get('no tests', 0):>7} "
              f"{r.seconds:>6.0f}s")
    killed = sum(r.killed for r in results)
    tried = sum(r.tried for r in results)
    generated = sum(r.generated for r in results)
    if tried:
        print(f"{'total':<10} {killed:>6} {tried:>6} {generated:>6} "
              f"{100.0 * killed / tried:>6.1f}%")
    survivors = [(r.target, s) for r in results for s in r.survivors]
    print(f"\n{len(survivors)} not killed:")
    for target, s in survivors:
        print(f"  [{target}] {s['where']} {s['function']} ({s['status']}, {s['mutant']}): "
              f"{s['change']}")


def print_markdown(results: list[Result]) -> None:
    """Per-target score rows, then one row per survivor (for docs/testing.md)."""
    print("| target | killed / tried | of | score | survived | no test |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r.target} | {r.killed} / {r.tried} | {r.generated} | {r.score:.1f} % | "
              f"{r.counts.get('survived', 0)} | {r.counts.get('no tests', 0)} |")
    print()
    print("| where | mutant | change | status |")
    print("|---|---|---|---|")
    for r in results:
        for s in r.survivors:
            change = s["change"].replace("|", "\\|").replace("`", "'")
            print(f"| `{s['where']}` {s['function']} | {s['mutant'].rpartition('__mutmut_')[2]} "
                  f"| `{change}` | {s['status']} |")


def _save(results: list[Result], sample: int | None, seed: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    report = OUT / "report.json"
    old = json.loads(report.read_text(encoding="utf-8")) if report.is_file() else {}
    targets = old.get("targets", {})
    for r in results:
        targets[r.target] = {
            "generated": r.generated, "tried": r.tried, "killed": r.killed,
            "score": r.score, "counts": r.counts, "survivors": r.survivors,
            "seconds": round(r.seconds, 1), "sample": sample, "seed": seed,
            "date": time.strftime("%Y-%m-%d")}
    report.write_text(json.dumps({"targets": targets}, indent=1), encoding="utf-8")


def _load() -> list[tuple[Result, int | None, int]]:
    report = OUT / "report.json"
    if not report.is_file():
        sys.exit("no results yet: run bench/mutation.py first")
    out = []
    for name, t in json.loads(report.read_text(encoding="utf-8"))["targets"].items():
        r = Result(name, t["generated"], t["tried"], t["counts"], t["survivors"], t["seconds"])
        out.append((r, t["sample"], t["seed"]))
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_generate"]:
        _internal_generate()
        return 0
    if argv[:1] == ["_collect"]:
        _internal_collect(json.loads(argv[1]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", "--module", action="append", choices=sorted(TARGETS),
                        help="run only this target (repeatable; default: all)")
    parser.add_argument("--sample", "--max-mutants", type=int, default=None,
                        help="run at most this many mutants a target, a seeded random sample")
    parser.add_argument("--all", action="store_true",
                        help="run every mutant, also of the targets sampled by default")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample (default 1)")
    parser.add_argument("--list", action="store_true", help="print the targets and exit")
    parser.add_argument("--report", action="store_true",
                        help="print the results of the last runs (out/mutation/report.json)")
    parser.add_argument("--markdown", action="store_true",
                        help="with --report: the survivors as Markdown table rows")
    parser.add_argument("--fail-under", type=float, default=None,
                        help="exit 1 if the total score is below this percentage")
    args = parser.parse_args(argv)
    if args.list:
        for name, t in TARGETS.items():
            only = f" (functions: {', '.join(t.functions)})" if t.functions else ""
            only += f"\n  sample: {t.sample} mutants (--all: every one)" if t.sample else ""
            print(f"{name}: {t.why}\n  mutate: {' '.join(t.files)}{only}\n"
                  f"  tests:  {' '.join(t.tests)}")
        return 0
    if args.report:
        loaded = _load()
        results = [r for r, _, _ in loaded if not args.target or r.target in args.target]
        if args.markdown:
            print_markdown(results)
        else:
            print_report(results, loaded[0][2] if loaded else 1)
    else:
        results = []
        for name in args.target or list(TARGETS):
            target = TARGETS[name]
            sample = None if args.all else args.sample or target.sample
            results.append(run_target(name, target, sample, args.seed))
            _save(results[-1:], sample, args.seed)
        print_report(results, args.seed)
    tried = sum(r.tried for r in results)
    score = 100.0 * sum(r.killed for r in results) / tried if tried else 0.0
    return 1 if args.fail_under is not None and score < args.fail_under else 0


if __name__ == "__main__":
    sys.exit(main())
