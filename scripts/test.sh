#!/usr/bin/env bash
# Set up (or check) the environment, then run the test suite from the repository root.
# Extra arguments go to pytest, e.g. scripts/test.sh -k tf2 -x (-n 0: in this process only).
# Two pytest-xdist workers, each file's tests on one of them (module-scoped node processes
# are started once): on 2 cores most of a serial run waits (node processes, DDS
# discovery, real-time emulators), so 2 workers halve the time (requirements/dev.txt).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "${SKEL_ROS_VENV:-$ROOT/.venv}/bin/python" -m pytest -q -n 2 --dist loadfile test "$@"
