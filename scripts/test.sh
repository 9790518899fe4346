#!/usr/bin/env bash
# Set up (or check) the environment, then run the test suite from the repository root.
# Extra arguments go to pytest, e.g. scripts/test.sh -k tf2 -x
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "${SKEL_ROS_VENV:-$ROOT/.venv}/bin/python" -m pytest -q test "$@"
