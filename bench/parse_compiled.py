"""Benchmark: would compiling the parser meet issue 2's goal? ``load_skel`` built with mypyc.

bench/parse.py compares our pure-Python ``load_skel`` with DART's ``readWorld``. This
script answers the question that comparison leaves open: how close does the same
parser come when its hot modules are compiled to C? It

1. copies ``skel_ros/`` to a temporary directory and compiles the parser's modules
   there with mypyc (the mypy of ``requirements/dev.txt``); nothing in the repository
   is touched, and no compiled module is left behind;
2. checks that the compiled ``load_skel`` builds the same model as the pure one
   (``world_to_dict``, the corpus fixture layout, compared as JSON) on every ``.skel``
   file of the corpus, or raises the same error;
3. runs bench/parse.py once on the pure package and once on the compiled copy (each
   against DART in its own run), and prints both tables.

One source change is made in the copy, and only there: mypyc's native classes have no
``__dict__``, which ``_build_skeleton`` reads from the DOF drafts, so ``_DofDraft`` is
marked ``@mypyc_attr(native_class=False)``.

Usage: .venv/bin/python bench/parse_compiled.py [--repeats N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("SKEL_CORPUS", REPO.parent / "shared" / "skel-corpus"))
COMPILED = ("skel_parser", "xmlread", "transforms", "inertia")  # skel_ros/model/<name>.py
_DRAFT_CLASS = "\nclass _DofDraft:\n"
_DRAFT_PATCH = "\n@_mypyc_attr(native_class=False)\nclass _DofDraft:\n"
_NUMPY_IMPORT = "\nimport numpy as np\n"
_IMPORT_PATCH = "from mypy_extensions import mypyc_attr as _mypyc_attr\n"

# Run in a child process whose sys.path starts with the package root to test: prints the
# model of each file given on stdin (one path per line) as one JSON line, or its error.
_DUMP = """
import json, sys
sys.path.insert(0, sys.argv[1])
from skel_ros.model import SkelError, load_skel
from skel_ros.model import skel_parser
from skel_ros.model.report import world_to_dict
print(json.dumps({"module": skel_parser.__file__}))
for line in sys.stdin:
    path = line.strip()
    try:
        out = {"model": world_to_dict(load_skel(path))}
    except SkelError as exc:
        out = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(out, sort_keys=True, default=repr))
"""


def build(root: Path) -> None:
    """Copy skel_ros/ under ``root`` and compile :data:`COMPILED` there with mypyc."""
    shutil.copytree(REPO / "skel_ros", root / "skel_ros",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy2(REPO / "pyproject.toml", root)  # the project's mypy settings
    parser = root / "skel_ros" / "model" / "skel_parser.py"
    text = parser.read_text(encoding="utf-8")
    if text.count(_DRAFT_CLASS) != 1 or text.count(_NUMPY_IMPORT) != 1:
        msg = (f"{parser}: expected one 'class _DofDraft:' (to mark as a non-native class)"
               " and one 'import numpy as np' (to import the marker after)")
        raise SystemExit(msg)
    text = text.replace(_DRAFT_CLASS, _DRAFT_PATCH).replace(
        _NUMPY_IMPORT, _NUMPY_IMPORT + _IMPORT_PATCH
    )
    parser.write_text(text, encoding="utf-8")
    sources = [f"skel_ros/model/{name}.py" for name in COMPILED]
    print(f"compiling {', '.join(sources)} with mypyc in {root} ...", flush=True)
    done = subprocess.run(  # noqa: S603 - our interpreter, our files
        [sys.executable, "-m", "mypyc", *sources],
        cwd=root, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        msg = "mypyc failed (output above)"
        raise SystemExit(msg)


def dump(root: Path, files: list[Path]) -> tuple[str, list[str]]:
    """The module ``load_skel`` came from, and one JSON line per file, with ``root`` first."""
    done = subprocess.run(  # noqa: S603 - our interpreter, our script
        [sys.executable, "-c", _DUMP, str(root)],
        input="".join(f"{f}\n" for f in files), capture_output=True, text=True, check=True,
    )
    first, *lines = done.stdout.splitlines()
    return json.loads(first)["module"], lines


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25, help="passed to bench/parse.py")
    parser.add_argument("--keep", type=Path, help="build in this (new) directory and keep it")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        build(root)
        files = sorted(CORPUS.rglob("*.skel"))
        pure_module, pure = dump(REPO, files)
        compiled_module, compiled = dump(root, files)
        if not compiled_module.endswith(".so"):
            msg = f"the compiled copy imported {compiled_module}, not a compiled module"
            raise SystemExit(msg)
        differ = [f for f, a, b in zip(files, pure, compiled, strict=True) if a != b]
        print(f"same model or error from both builds: {len(files) - len(differ)} of"
              f" {len(files)} corpus files")
        for f in differ:
            print(f"  DIFFERENT: {f}")
        for label, module, import_root in (
            ("pure Python", pure_module, REPO), ("compiled with mypyc", compiled_module, root)
        ):
            print(f"\n== {label}: {module}", flush=True)
            subprocess.run(  # noqa: S603 - our interpreter, our script
                [sys.executable, str(REPO / "bench" / "parse.py"), "--repeats", str(args.repeats)],
                env={**os.environ, "SKEL_ROS_IMPORT_ROOT": str(import_root)}, check=True,
            )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
