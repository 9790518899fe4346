"""``skel-ros view``: the robots in a browser (a model, a recording, the live robots).

* ``skel-ros view MODEL``: the model with a slider per DOF (:mod:`skel_ros.view.model_view`);
* ``skel-ros view RUN.mcap``: a recorded run replayed with a time slider, the simulated
  robot solid and the real one a ghost coloured by each joint's error
  (:mod:`skel_ros.view.replay`); ``--export view.html`` writes it as one HTML file that
  plays offline instead of serving it;
* ``skel-ros view --live [NAMESPACE ...]``: the robots' ``joint_states`` followed live
  (default ``sim real``; :mod:`skel_ros.view.live`, :mod:`skel_ros.nodes.view_live`).

The view is served on 127.0.0.1 (``--host`` to open it to others) at a free port
(``--port``) until Ctrl-C; the URL is printed and no browser is started. viser is the
optional extra ``view``: without it the command says how to install it (status 2).
"""

from __future__ import annotations

import math
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skel_ros.cli.exit_codes import ERROR, OK, USAGE
from skel_ros.cli.model_args import add_model_arguments, load_model_from_args
from skel_ros.cli.paths import input_file

if TYPE_CHECKING:
    import argparse

    import viser

MCAP_MAGIC = b"\x89MCAP"
EXTRA_HINT = "skel-ros view needs viser: pip install skel_ros[view]"
MAX_FPS = 240.0  # frames a second of a replay: beyond any screen's, and bounded in memory


def register(sub: Any) -> None:  # noqa: ANN401 - argparse's private subparsers type
    """Add ``view`` to the ``skel-ros`` parser."""
    p = sub.add_parser(
        "view", help="see a model, a recorded run or the live robots in a browser (viser)",
        description="Serve a 3-D view in the browser: a model with a slider per DOF, a"
                    " recorded run (RUN.mcap) with a time slider, or with --live the robots'"
                    " joint_states (the first namespace solid, the second a ghost coloured by"
                    " each joint's error). Prints the URL; Ctrl-C ends it.")
    p.add_argument("target", nargs="?", type=input_file, metavar="MODEL|RUN.mcap",
                   help="a model file (SKEL, URDF/xacro, SMURF, Phobos, CASPR) or a recording")
    add_model_arguments(p)
    p.add_argument("--live", nargs="*", metavar="NAMESPACE",
                   help="follow the robots' joint_states live (default namespaces: sim real)")
    p.add_argument("--export", metavar="FILE.html",
                   help="recording: write the replay as one self-contained HTML file (plays"
                        " offline) instead of serving it")
    p.add_argument("--model", type=input_file, metavar="MODEL",
                   help="recording: draw every robot with this model instead of the recorded"
                        " robot_description (recordings made before they were recorded)")
    p.add_argument("--from", dest="start", type=float, default=0.0, metavar="SECONDS",
                   help="recording: start the replay here (default 0)")
    p.add_argument("--to", dest="end", type=float, default=None, metavar="SECONDS",
                   help="recording: end the replay here (default: the end of the run)")
    p.add_argument("--fps", type=float, default=30.0,
                   help="recording: frames per second of the replay (default 30)")
    p.add_argument("--error-scale", type=float, default=0.05, metavar="RAD",
                   help="joint error drawn fully red on the ghost (default 0.05)")
    p.add_argument("--host", default=None,
                   help="address to serve on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=0,
                   help="port to serve on (default 0: a free port)")
    p.set_defaults(func=_cmd_view)


def is_recording(path: str) -> bool:
    """Whether ``path`` is meant as a recording: an ``.mcap`` name or MCAP's magic bytes.

    A damaged ``.mcap`` file is then reported as a recording that cannot be read.
    """
    if path.lower().endswith(".mcap"):
        return True
    try:
        with Path(path).open("rb") as f:
            return f.read(len(MCAP_MAGIC)) == MCAP_MAGIC
    except OSError:
        return False


def _usage(args: argparse.Namespace) -> str | None:  # noqa: PLR0911 - one rule per line
    """What is wrong with the combination of options, or None."""
    if args.live is not None:
        if args.target is not None:
            return "--live takes namespaces, not a model or a recording"
        if args.export:
            return "--export writes a recording's replay, not a live view"
        names = [ns.strip("/") for ns in args.live]
        if len(names) > 2 or len(set(names)) != len(names) or not all(names):  # noqa: PLR2004 - solid, ghost
            return "--live takes one or two different namespaces (solid, then ghost)"
        return None
    if args.target is None:
        return "give a model, a recording (RUN.mcap), or --live"
    recording = is_recording(args.target)
    if not recording and (args.export or args.model or args.end is not None or args.start):
        return "--export, --model, --from and --to are for a recording (RUN.mcap)"
    if not 0 < args.fps <= MAX_FPS or not 0 < args.error_scale < math.inf:
        return (f"--fps must be in (0, {MAX_FPS:g}] and --error-scale a positive number, got"
                f" {args.fps:g} and {args.error_scale:g}")
    if not 0 <= args.port <= 65535:  # noqa: PLR2004 - the largest port number
        return f"--port {args.port} is not a port number"
    return None


def _cmd_view(args: argparse.Namespace) -> int:
    problem = _usage(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return USAGE
    try:
        import viser  # noqa: F401 - only checks the extra is installed
    except ImportError:
        print(f"error: {EXTRA_HINT}", file=sys.stderr)
        return USAGE
    with tempfile.TemporaryDirectory(prefix="skel_ros_view_") as tmp:
        mesh_dir = Path(tmp)
        if args.live is not None:
            return _live(args, mesh_dir)
        if is_recording(args.target):
            return _recording(args, mesh_dir)
        return _model(args)


def _serve(args: argparse.Namespace) -> viser.ViserServer:
    from skel_ros.view.server import DEFAULT_HOST, start_server

    args.host = args.host or DEFAULT_HOST
    try:
        return start_server(args.host, args.port)
    except OSError as exc:
        raise OSError(f"cannot serve on {args.host}:{args.port}: {exc.strerror or exc}"
                      ) from None


def _announce(server: viser.ViserServer, what: str) -> None:
    from skel_ros.view.server import url

    print(f"{what}: {url(server)}  (open it in a browser; Ctrl-C ends)", flush=True)


def _wait_for_ctrl_c(server: viser.ViserServer, what: str) -> int:
    """Print the URL, serve until Ctrl-C (SIGINT) or SIGTERM, then stop the server."""
    from skel_ros.view.server import stop_server

    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda _sig, _frame: stop.set())
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _announce(server, what)
        while not stop.wait(0.5):  # a timeout: signals are handled between waits
            pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop_server(server)
    return OK


def _model(args: argparse.Namespace) -> int:
    from skel_ros.view.model_view import ModelView
    from skel_ros.view.server import frame_scene

    world = load_model_from_args(args.target, args)
    server = _serve(args)
    view = ModelView(server, world)
    frame_scene(server, [view.drawing])
    return _wait_for_ctrl_c(server, f"{args.target} ({len(view.specs)} DOFs)")


def _recording(args: argparse.Namespace, mesh_dir: Path) -> int:
    from skel_ros.view.errors import ViewError
    from skel_ros.view.replay import ReplayView, export_html, load_replay
    from skel_ros.view.server import frame_scene

    model = load_model_from_args(args.model, args) if args.model else None
    try:
        replay = load_replay(args.target, mesh_dir=mesh_dir, model=model, fps=args.fps,
                             start=args.start, end=args.end)
        if args.export:
            size = export_html(replay, Path(args.export), error_scale=args.error_scale)
            print(f"wrote {args.export} ({size / 1e6:.1f} MB, {replay.duration:.1f} s of"
                  f" {' and '.join(filter(None, replay.robots))})")
            return OK
    except ViewError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ERROR
    server = _serve(args)
    view = ReplayView(server, replay, error_scale=args.error_scale)
    frame_scene(server, view.pair.drawings.values())
    try:
        return _wait_for_ctrl_c(server, f"{args.target} ({replay.duration:.1f} s)")
    finally:
        view.close()


def _live(args: argparse.Namespace, mesh_dir: Path) -> int:
    from skel_ros.view.errors import ViewError
    from skel_ros.view.live import DEFAULT_NAMESPACES, LiveView
    from skel_ros.view.server import stop_server

    namespaces = [ns.strip("/") for ns in args.live] or list(DEFAULT_NAMESPACES)
    server = _serve(args)
    try:
        view = LiveView(server, namespaces, mesh_dir=mesh_dir, error_scale=args.error_scale)
    except ViewError as exc:
        stop_server(server)
        print(f"error: {exc}", file=sys.stderr)
        return USAGE
    from skel_ros.nodes.view_live import run_live_view

    try:
        run_live_view(view, lambda: _announce(server, f"live view of {' and '.join(namespaces)}"))
    finally:
        stop_server(server)
    return OK
